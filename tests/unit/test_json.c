/* test_json.c: the JSON form (nnn/json.h).
 *
 *   json/roundtrip_*   .nnn -> JSON -> .nnn byte for byte: every float bit
 *                      pattern class (NaN payloads, infinities, -0.0,
 *                      denormals, FLT_MAX, a sweep of 2^32), strings with
 *                      escapes, NUL and non-ASCII, every layer type and
 *                      activation, empty and rank-0 tensors; inline and with
 *                      tensors in .npy files. The real corpus is in
 *                      test_real.c, the conformance corpus in
 *                      test_conformance.c, the CLI in test_cli.c.
 *   json/forms         what the text looks like for those values
 *   json/errors        each mistake: its code, field path, line and column
 *   json/enum_*, u64_*, spec_*  numbers for enum names, unknown values kept,
 *                      u64 above 2^63, a build spec's defaults
 *   json/old_plugin    a plugin built for ABI 1.0 still loads; its layers
 *                      have no JSON form, and the error says so
 *   json/npy_*         a .npy file named many times (by any name) is read
 *                      once and shared; the cap on what references fill
 */
#define _XOPEN_SOURCE 700
#include <criterion/criterion.h>
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nnn/json.h>
#include <nnn/npy.h>

#include "blackbox.h"
#include "builder.h"
#include "peak.h"
#include "roundtrip.h"
#include "schemaq.h"
#include "tmpdir.h"

/* ---- a temp dir per test, removed by the suite's fini ---- */

#define TMP "nnn-json-"

static const char *tmp(void)
{
	return t_tmpdir(TMP);
}

TestSuite(json, .fini = t_tmpdir_remove);

static const char *tdir(const char *name)
{
	return t_tmppath(TMP, name);
}

/* Round trip inline, with every array in .npy files, and with the large
 * ones only; returns the inline JSON (free it). */
static char *roundtrips(const bb_t *b)
{
	char why[1024], *json;
	cr_assert(json_roundtrip(b->b, b->n, NULL, NULL, 0, &json, why, sizeof why), "inline: %s", why);
	cr_assert(json_roundtrip(b->b, b->n, NULL, tdir("all"), 0, NULL, why, sizeof why), "all .npy: %s", why);
	cr_assert(json_roundtrip(b->b, b->n, NULL, tdir("some"), 4, NULL, why, sizeof why), ".npy from 4: %s", why);
	return json;
}

/* ---- floats ---- */

static const uint32_t SPECIAL[] = {
	0x7fc00000, /* the quiet NaN: "nan" */
	0x7fc00001, /* quiet, payload 1 */
	0x7f800001, /* signalling, payload 1 */
	0x7fbfffff, /* signalling, all payload bits */
	0xffc00000, /* negative quiet (what x86 makes of 0/0) */
	0xff800001, /* negative signalling */
	0x7f800000, 0xff800000, /* +-inf */
	0x80000000, 0x00000000, /* -0.0, +0.0 */
	0x00000001, 0x80000001, 0x007fffff, 0x00400000, /* denormals */
	0x00800000, /* FLT_MIN */
	0x7f7fffff, 0xff7fffff, /* +-FLT_MAX */
	0x3dcccccd, /* 0.1f */
	0x3eaaaaab, /* 1/3 */
	0x4b800001, /* 16777218 */
	0x4effffff, /* 2147483520 */
	0x5f000000, /* 2^63 */
	0x3f800000, 0xbf800000,
};
#define NSPECIAL ((int32_t)(sizeof SPECIAL / sizeof SPECIAL[0]))

/* One Dense layer: Leaky ReLU with tau given by its bits, dropout -0.0,
 * bias and weights [1, n] holding `vals`. */
static void float_model(bb_t *b, uint32_t tau, const uint32_t *vals, int32_t n)
{
	int32_t bd[1] = { n }, wd[2] = { 1, n };
	bb_header(b, "floats", 2 * (uint64_t)n, 1);
	bb_u8(b, 0);
	bb_u8(b, 4);
	bb_f32_bits(b, tau);
	bb_f32_bits(b, 0x80000000);
	bb_i32s(b, 1, bd);
	bb_u8(b, 1);
	bb_i32(b, n);
	for (int32_t i = 0; i < n; i++)
		bb_f32_bits(b, vals[i]);
	bb_i32(b, n);
	bb_i32s(b, 2, wd);
	bb_u8(b, 0);
	bb_i32(b, n);
	for (int32_t i = 0; i < n; i++)
		bb_f32_bits(b, vals[n - 1 - i]);
	bb_u8(b, 1);
}

Test(json, roundtrip_special_floats)
{
	bb_t b = { 0 };
	float_model(&b, 0x7fa00000 /* signalling NaN */, SPECIAL, NSPECIAL);
	char *json = roundtrips(&b);
	free(json);
	bb_free(&b);
}

Test(json, forms)
{
	static const char *want[] = {
		"\"tau\": \"nan:0x7fa00000\"", "\"dropout\": -0.0", "\"nan\",", "\"nan:0x7fc00001\"",
		"\"nan:0x7f800001\"", "\"nan:0x7fbfffff\"", "\"nan:0xffc00000\"", "\"nan:0xff800001\"", "\"inf\"",
		"\"-inf\"", " -0.0,", " 1e-45,", " -1e-45,", " 1.1754942e-38,", " 5.877472e-39,", " 1.1754944e-38,",
		" 3.4028235e+38,", " -3.4028235e+38,", " 0.1,", " 0.33333334,", " 16777218.0,", " 2.1474835e+09,",
		" 9.223372e+18,", "\"requires_grad\": false", "\"flatten\": true", "\"id\": \"dense\"",
		"\"id\": \"leaky_relu\"", "\"param_count\": 48",
	};
	bb_t b = { 0 };
	float_model(&b, 0x7fa00000, SPECIAL, NSPECIAL);
	char *json = roundtrips(&b);
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
		cr_expect(strstr(json, want[i]), "no %s in:\n%s", want[i], json);
	cr_expect_null(strstr(json, "magic"), "the constant is implied");
	cr_expect_null(strstr(json, "layer_count"), "the count is implied");
	free(json);
	bb_free(&b);
}

/* Every exponent, and mantissas of many shapes: a stride through 2^32
 * (under valgrind, whose float formatting is slow, a ten times longer
 * stride: every exponent still). */
Test(json, roundtrip_float_sweep)
{
	const uint32_t n = t_under_valgrind() ? 7001 : 70001, stride = t_under_valgrind() ? 613471u : 61357u;
	uint32_t *v = malloc(n * sizeof *v);
	cr_assert_not_null(v);
	for (uint32_t i = 0; i < n; i++)
		v[i] = i * stride + (i & 7);
	bb_t b = { 0 };
	float_model(&b, 0x3dcccccd, v, (int32_t)n);
	char why[512];
	cr_assert(json_roundtrip(b.b, b.n, NULL, NULL, 0, NULL, why, sizeof why), "%s", why);
	free(v);
	bb_free(&b);
}

/* ---- strings and shapes ---- */

Test(json, roundtrip_strings)
{
	static const char desc[] = "q\"b\\s/ nl\n tab\t cr\r \x01\x1f\x7f caf\xc3\xa9 \xf0\x9f\x98\x80 "
	                           "\xe2\x80\xa8 nul\0end";
	bb_t b = { 0 };
	bb_header(&b, "", 0, 0);
	char *json = roundtrips(&b);
	cr_expect(strstr(json, "\"description\": \"\""), "%s", json);
	free(json);
	bb_free(&b);

	bb_header(&b, "", 0, 0);
	b.n = 4;
	bb_str(&b, desc, (int32_t)sizeof desc - 1);
	bb_u64(&b, 0);
	bb_i32(&b, 0);
	json = roundtrips(&b);
	/* U+2028, a line separator, escaped like the controls (docs/security.md) */
	cr_expect(strstr(json, "\"q\\\"b\\\\s/ nl\\n tab\\t cr\\r \\u0001\\u001f\\u007f caf\xc3\xa9 \xf0\x9f\x98\x80 "
	                       "\\u2028 nul\\u0000end\""), "%s", json);
	free(json);
	bb_free(&b);
}

/* Every layer type and activation, empty and rank-0 tensors. */
Test(json, roundtrip_all_types)
{
	static const int32_t k1[1] = { 3 }, k2[2] = { 3, 3 }, k3[3] = { 1, 2, 1 }, pads2[2] = { 0, 0 },
	                     pads4[4] = { 1, 1, 1, 1 }, pads6[6] = { 0 }, zero[2] = { 0, 0 };
	bb_t b = { 0 };
	bb_header(&b, "all", 0, 8);
	bb_conv(&b, 0, 2, 1, k1, 1, 0, 2, pads2);
	bb_conv(&b, 1, 2, 2, k2, 2, 1, 4, pads4);
	bb_conv(&b, 2, 1, 3, k3, 2, 0, 6, pads6);
	bb_dense(&b, 3, 12, 4, 1);
	bb_dense(&b, 4, 4, 3, 0);
	bb_dense(&b, 5, 3, 2, 0);
	/* Empty tensors: bias [0], weights [0, 0]. */
	bb_u8(&b, 0), bb_u8(&b, 0), bb_f32(&b, 0.5f);
	bb_tensor(&b, 1, zero);
	bb_i32(&b, 0);
	bb_tensor(&b, 2, zero);
	bb_u8(&b, 0);
	/* A rank-0 bias: no dims, one value. */
	bb_u8(&b, 0), bb_u8(&b, 0), bb_f32(&b, 0.0f);
	bb_tensor(&b, 0, NULL);
	bb_i32(&b, 1);
	bb_tensor(&b, 2, (const int32_t[]){ 2, 1 });
	bb_u8(&b, 0);
	char *json = roundtrips(&b);
	static const char *want[] = { "\"id\": \"conv\"", "\"padding_type\": \"same\"", "\"padding_type\": \"valid\"",
		                      "\"id\": \"linear\"", "\"id\": \"sigmoid\"", "\"id\": \"tanh\"", "\"id\": \"relu\"",
		                      "\"id\": \"softmax\"", "\"dims\": [0], \"requires_grad\": true, \"data\": []",
		                      "\"dims\": [], \"requires_grad\": true, \"data\": [-1.0]" };
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
		cr_expect(strstr(json, want[i]), "no %s in:\n%s", want[i], json);
	free(json);
	bb_free(&b);
}

/* .npy references name the file relative to the JSON, with shape and dtype. */
Test(json, tensors_as_npy)
{
	bb_t b = { 0 };
	bb_tiny(&b);
	nnn_model_t *m;
	cr_assert_eq(nnn_model_decode(b.b, b.n, NULL, &m, NULL), NNN_OK);
	char json[256], dir[256];
	snprintf(json, sizeof json, "%s/m.json", tmp());
	snprintf(dir, sizeof dir, "%s/t", tmp());
	nnn_json_write_opts_t o = { .tensors_dir = dir, .tensors_min = 6 };
	cr_assert_eq(nnn_json_write_file(m, json, &o, NULL), NNN_OK);
	FILE *f = fopen(json, "r");
	char text[8192] = "";
	cr_assert_eq(fread(text, 1, sizeof text - 1, f) > 0, 1);
	fclose(f);
	cr_expect(strstr(text, "\"data\": {\"npy\": \"t/layers.0.weights.npy\", \"shape\": [3, 2], \"dtype\": \"float32\"}"),
	          "%s", text);
	cr_expect(strstr(text, "\"data\": [-1.0, -0.5]"), "small arrays stay inline: %s", text);
	nnn_npy_t a;
	snprintf(dir, sizeof dir, "%s/t/layers.0.weights.npy", tmp());
	cr_assert_eq(nnn_npy_read_file(dir, &a, NULL), NNN_OK);
	cr_expect_eq(a.shape.rank, 2);
	cr_expect_eq(a.data[5], 1.5f);
	nnn_npy_free(&a);
	nnn_model_t *back;
	cr_assert_eq(nnn_json_read_file(json, NULL, &back, NULL), NNN_OK, "the references resolve from the JSON's folder");
	unsigned char *enc;
	size_t n;
	cr_assert_eq(nnn_model_encode(back, &enc, &n, NULL), NNN_OK);
	cr_expect(n == b.n && !memcmp(enc, b.b, n));
	free(enc);
	nnn_model_free(back);
	nnn_model_free(m);
	bb_free(&b);
}

/* ---- mistakes ---- */

static const char GOOD[] =
	"{\n"
	"  \"description\": \"t\",\n"
	"  \"param_count\": 7,\n"
	"  \"layers\": [\n"
	"    {\n"
	"      \"id\": \"dense\",\n"
	"      \"activation\": {\"id\": \"leaky_relu\", \"tau\": 0.1},\n"
	"      \"dropout\": 0.0,\n"
	"      \"bias\": {\"dims\": [1], \"requires_grad\": true, \"data\": [0.5]},\n"
	"      \"neurons\": 1,\n"
	"      \"weights\": {\"dims\": [4, 1], \"requires_grad\": false, \"data\": [1, 2, 3, 4]},\n"
	"      \"flatten\": false\n"
	"    },\n"
	"    {\n"
	"      \"id\": \"conv\",\n"
	"      \"activation\": {\"id\": \"relu\"},\n"
	"      \"dropout\": 0.0,\n"
	"      \"bias\": {\"dims\": [1], \"requires_grad\": true, \"data\": [0.0]},\n"
	"      \"filters\": 1,\n"
	"      \"kernels\": {\"dims\": [1, 1, 1], \"requires_grad\": true, \"data\": [2.0]},\n"
	"      \"padding_type\": \"valid\",\n"
	"      \"padding_dims\": [0, 0]\n"
	"    }\n"
	"  ]\n"
	"}\n";

/* GOOD with the first `from` replaced by `to`. */
static char *edit(const char *from, const char *to)
{
	const char *at = strstr(GOOD, from);
	cr_assert_not_null(at, "%s not in the text", from);
	char *s = malloc(sizeof GOOD + strlen(to));
	cr_assert_not_null(s);
	sprintf(s, "%.*s%s%s", (int)(at - GOOD), GOOD, to, at + strlen(from));
	return s;
}

typedef struct mistake {
	const char *from, *to;
	nnn_status_t code;
	const char *path;
	uint32_t line, column; /* column 0: not checked (jansson's choice) */
	const char *msg;
} mistake_t;

static const mistake_t MISTAKES[] = {
	{ "[0, 0]", "[0, 0],", NNN_E_JSON, "", 23, 5, "'}' expected" },
	{ "\"description\": \"t\",", "\"description\": \"t\", \"description\": \"u\",", NNN_E_JSON, "", 2, 0,
	  "duplicate object key" },
	{ ",\n      \"flatten\": false", "", NNN_E_JSON_MISSING, "layers[0].flatten", 5, 5,
	  "expected \"flatten\" in this object (Whether the input is reshaped" },
	{ "\"flatten\": false", "\"flatten\": false, \"flaten\": true", NNN_E_JSON_UNKNOWN, "layers[0].flaten", 12, 35,
	  "did you mean \"flatten\"? the fields are id, activation, dropout, bias, neurons, weights, flatten" },
	{ "{\"id\": \"relu\"}", "{\"id\": \"relu\", \"tau\": 1}", NNN_E_JSON_UNKNOWN, "layers[1].activation.tau", 16, 43,
	  "\"tau\" is not a field here: the fields are id" },
	{ "[4, 1]", "[4, \"x\"]", NNN_E_JSON_TYPE, "layers[0].weights.dims[1]", 11, 31,
	  "expected an integer in -2147483648..2147483647, found \"x\"" },
	{ "\"requires_grad\": false", "\"requires_grad\": 0", NNN_E_JSON_TYPE, "layers[0].weights.requires_grad", 11, 52,
	  "expected true or false, found 0" },
	{ "\"param_count\": 7", "\"param_count\": \"seven\"", NNN_E_JSON_TYPE, "param_count", 3, 18,
	  "expected an integer in 0..18446744073709551615" },
	{ "\"neurons\": 1", "\"neurons\": 3000000000", NNN_E_RANGE, "layers[0].neurons", 10, 18,
	  "expected an integer in -2147483648..2147483647, found 3000000000" },
	{ "\"dropout\": 0.0", "\"dropout\": 1e39", NNN_E_RANGE, "layers[0].dropout", 8, 18,
	  "1e+39 is outside float32's range" },
	{ "\"tau\": 0.1", "\"tau\": \"nan:0x3f800000\"", NNN_E_RANGE, "layers[0].activation.tau", 7, 49,
	  "0x3f800000 is not the bits of a NaN" },
	{ "\"tau\": 0.1", "\"tau\": \"NaN\"", NNN_E_JSON_TYPE, "layers[0].activation.tau", 7, 49,
	  "expected a number, or one of \"inf\", \"-inf\", \"nan\"" },
	{ "\"param_count\": 7,", "\"param_count\": 7, \"layer_count\": 3,", NNN_E_RANGE, "layer_count", 3, 36,
	  "3, but \"layers\" has 2 elements" },
	{ "\"param_count\": 7,", "\"param_count\": 7, \"magic\": 1,", NNN_E_RANGE, "magic", 3, 30,
	  "found 1, but it is always 776883790" },
	{ "[1, 2, 3, 4]", "[1, 2, 3]", NNN_E_DIM_MISMATCH, "layers[0].weights.data", 11, 67,
	  "dims [4, 1] multiply to 4, but data has 3 values" },
	{ "\"dims\": [1]", "\"dims\": [-1]", NNN_E_DIM_NEGATIVE, "layers[0].bias.dims[0]", 9, 25, "found -1" },
	{ "[0.5]", "{\"npy\": \"nope.npy\"}", NNN_E_IO, "layers[0].bias.data.npy", 9, 68,
	  "nope.npy: cannot open: No such file or directory" },
	{ "[0.5]", "{\"npy\": \"/dev/zero\"}", NNN_E_IO, "layers[0].bias.data.npy", 9, 68,
	  "/dev/zero: is a character device, not a regular file" },
	{ "[0.5]", "{\"npy\": \"x.npy\", \"order\": \"C\"}", NNN_E_JSON_UNKNOWN, "layers[0].bias.data.order", 9, 86,
	  "a .npy reference has the keys" },
	{ "\"layers\": [", "\"layers\": 5, \"x\": [", NNN_E_JSON_TYPE, "layers", 4, 13,
	  "expected an array of objects, found 5" },
};

/* Mistakes whose messages list what the schema defines: `msg` is followed
 * by every name of the enum, quoted, then `tail`. */
typedef struct enum_mistake {
	mistake_t m;
	const char *(*names)(int64_t);
	const char *tail;
} enum_mistake_t;

static const enum_mistake_t ENUM_MISTAKES[] = {
	{ { "\"valid\"", "\"nowhere\"", NNN_E_ENUM, "layers[1].padding_type", 21, 23,
	    "\"nowhere\" is no padding_type: expected one of " },
	  nnn_padding_type_name, "or a number" },
	{ { "\"id\": \"conv\"", "\"id\": \"no_such_layer\"", NNN_E_UNKNOWN_ID, "layers[1].id", 15, 13,
	    "\"no_such_layer\" is no layer_id: expected one of " },
	  nnn_layer_id_name, "or the name of a type a loaded plugin" },
};

/* GOOD edited as t says gives exactly one problem, t's, with msg in its message. */
static void expect_mistake(size_t i, const mistake_t *t, const char *msg)
{
	char buf[2048];
	char *text = edit(t->from, t->to);
	nnn_diags_t d;
	nnn_model_t *m = (nnn_model_t *)1;
	nnn_diags_init(&d);
	nnn_json_read_opts_t o = { .base_dir = tmp() };
	nnn_status_t st = nnn_json_decode(text, strlen(text), &o, &m, &d);
	cr_expect_eq(st, t->code, "case %zu: %s, expected %s", i, nnn_status_name(st), nnn_status_name(t->code));
	cr_expect_null(m, "case %zu: no model on failure", i);
	cr_assert_eq(d.n, 1, "case %zu: %zu problems", i, d.n);
	const nnn_diag_t *g = &d.v[0];
	nnn_diag_format(g, buf, sizeof buf);
	cr_expect_eq(g->code, t->code, "case %zu: %s", i, buf);
	cr_expect_str_eq(g->path, t->path, "case %zu: %s", i, buf);
	cr_expect_eq(g->line, t->line, "case %zu: line %u: %s", i, g->line, buf);
	if (t->column)
		cr_expect_eq(g->column, t->column, "case %zu: column %u: %s", i, g->column, buf);
	cr_expect(strstr(g->msg, msg), "case %zu: no '%s' in %s", i, msg, buf);
	nnn_diags_free(&d);
	free(text);
}

Test(json, errors)
{
	size_t n = sizeof MISTAKES / sizeof MISTAKES[0];
	for (size_t i = 0; i < n; i++)
		expect_mistake(i, &MISTAKES[i], MISTAKES[i].msg);
	for (size_t i = 0; i < sizeof ENUM_MISTAKES / sizeof ENUM_MISTAKES[0]; i++) {
		const enum_mistake_t *t = &ENUM_MISTAKES[i];
		char msg[1024];
		snprintf(msg, sizeof msg, "%s", t->m.msg);
		for (int64_t v = 0; v < 256; v++)
			if (t->names(v))
				snprintf(msg + strlen(msg), sizeof msg - strlen(msg), "\"%s\", ", t->names(v));
		snprintf(msg + strlen(msg), sizeof msg - strlen(msg), "%s", t->tail);
		expect_mistake(n + i, &t->m, msg);
	}
	{
		/* a layer ID the schema does not define */
		char to[64], msg[128];
		long long id = (long long)t_undefined(nnn_layer_id_name, 0);
		snprintf(to, sizeof to, "\"id\": %lld", id);
		snprintf(msg, sizeof msg, "layer ID %lld is not in the schema, and no loaded plugin provides it", id);
		mistake_t t = { "\"id\": \"conv\"", to, NNN_E_UNKNOWN_ID, "layers[1].id", 15, 13, msg };
		expect_mistake(n + 2, &t, msg);
	}
	nnn_model_t *m;
	cr_assert_eq(nnn_json_decode(GOOD, strlen(GOOD), NULL, &m, NULL), NNN_OK);
	nnn_model_free(m);
	nnn_diags_t d;
	nnn_diags_init(&d);
	cr_assert_eq(nnn_json_decode("[]", 2, NULL, &m, &d), NNN_E_JSON_TYPE);
	cr_expect_eq(d.v[0].line, 1);
	cr_expect_eq(d.v[0].column, 1);
	nnn_diags_free(&d);
}

/* ---- enums, big integers ---- */

static char *reencode(const char *text, nnn_model_t **out)
{
	nnn_model_t *m;
	char *json;
	size_t n;
	cr_assert_eq(nnn_json_decode(text, strlen(text), NULL, &m, NULL), NNN_OK, "%s", text);
	cr_assert_eq(nnn_json_encode(m, NULL, &json, &n, NULL), NNN_OK);
	if (out)
		*out = m;
	else
		nnn_model_free(m);
	return json;
}

Test(json, enum_numbers_and_unknown_values)
{
	char *a = edit("\"id\": \"conv\"", "\"id\": 1");
	char *b2 = strstr(a, "\"valid\"");
	cr_assert_not_null(b2);
	char text[sizeof GOOD + 64];
	snprintf(text, sizeof text, "%.*s7%s", (int)(b2 - a), a, b2 + strlen("\"valid\""));
	nnn_model_t *m;
	char *json = reencode(text, &m);
	cr_expect(strstr(json, "\"id\": \"conv\""), "numbers become names: %s", json);
	cr_expect(strstr(json, "\"padding_type\": 7"), "a value without a name stays a number: %s", json);
	cr_expect_eq(m->layers[1].body.conv.padding_type, 7);
	nnn_model_free(m);
	free(json);
	free(a);
}

/* GOOD with every type named by its title as `info` prints it ("Dense",
 * "Leaky ReLU"), in upper or lower case: the same model. A name one or two
 * letters off is refused with the name it is near. */
static void titled(char *text, size_t size, const char *(*title)(int64_t), const nnn_type_t *t, const char *name,
                   bool upper)
{
	int64_t v;
	cr_assert(t->value_of(name, &v), "%s is no %s", name, t->name);
	char from[64], to[64], shown[48], *at;
	snprintf(shown, sizeof shown, "%s", title(v));
	for (char *c = shown; upper && *c; c++)
		*c = (char)toupper((unsigned char)*c);
	snprintf(from, sizeof from, "\"id\": \"%s\"", name);
	snprintf(to, sizeof to, "\"id\": \"%s\"", shown);
	cr_assert_not_null(at = strstr(text, from), "%s not in the text", from);
	cr_assert_lt(strlen(text) + strlen(to), size);
	memmove(at + strlen(to), at + strlen(from), strlen(at + strlen(from)) + 1);
	memcpy(at, to, strlen(to));
}

Test(json, ids_by_title_and_near_misses)
{
	char *want = reencode(GOOD, NULL);
	for (int upper = 0; upper < 2; upper++) {
		char text[sizeof GOOD + 256];
		snprintf(text, sizeof text, "%s", GOOD);
		titled(text, sizeof text, nnn_layer_id_title, &nnn_type_layer_id, "dense", upper);
		titled(text, sizeof text, nnn_layer_id_title, &nnn_type_layer_id, "conv", upper);
		titled(text, sizeof text, nnn_activation_id_title, &nnn_type_activation_id, "leaky_relu", upper);
		titled(text, sizeof text, nnn_activation_id_title, &nnn_type_activation_id, "relu", upper);
		char *got = reencode(text, NULL);
		cr_expect_str_eq(got, want, "titles read as other types:\n%s", text);
		free(got);
	}
	free(want);
	mistake_t t = { "\"id\": \"conv\"", "\"id\": \"con\"", NNN_E_UNKNOWN_ID, "layers[1].id", 15, 13,
		        "\"con\" is no layer_id: did you mean \"conv\"? expected one of " };
	expect_mistake(0, &t, t.msg);
	mistake_t u = { "\"valid\"", "\"Vallid\"", NNN_E_ENUM, "layers[1].padding_type", 21, 23,
		        "\"Vallid\" is no padding_type: did you mean \"valid\"? expected one of " };
	expect_mistake(1, &u, u.msg);
}

Test(json, u64_above_int64)
{
	char *text = edit("\"param_count\": 7", "\"param_count\": \"18446744073709551615\"");
	nnn_model_t *m;
	char *json = reencode(text, &m);
	cr_expect_eq(m->param_count, UINT64_MAX);
	cr_expect(strstr(json, "\"param_count\": \"18446744073709551615\""), "%s", json);
	nnn_model_free(m);
	free(json);
	free(text);
	text = edit("\"param_count\": 7", "\"param_count\": \"18446744073709551616\"");
	cr_expect_eq(nnn_json_decode(text, strlen(text), NULL, &m, NULL), NNN_E_RANGE);
	free(text);
}

/* ---- build specs ---- */

static void npy(const char *name, int32_t rank, const int64_t *dims, const float *v)
{
	nnn_shape_t s = { .rank = rank };
	for (int32_t i = 0; i < rank; i++)
		s.dims[i] = dims[i];
	cr_assert_eq(nnn_npy_write_file(tdir(name), &s, v, NULL), NNN_OK);
}

Test(json, spec_defaults)
{
	static const float w[6] = { 1, 2, 3, 4, 5, 6 }, bias[3] = { 0.5f, 0, -0.5f };
	npy("w.npy", 2, (const int64_t[]){ 2, 3 }, w);
	npy("b.npy", 1, (const int64_t[]){ 3 }, bias);
	static const char spec[] = "{\"layers\": [{\"activation\": \"relu\", \"weights\": \"w.npy\", \"bias\": \"b.npy\"},\n"
	                           " {\"id\": \"dense\", \"activation\": {\"id\": \"leaky_relu\", \"tau\": 0.25},\n"
	                           "  \"weights\": {\"data\": [1, 2, 3]}, \"bias\": {\"data\": [1]}}]}";
	nnn_json_read_opts_t o = { .flags = NNN_JSON_SPEC, .base_dir = tmp() };
	nnn_model_t *m;
	nnn_diags_t d;
	nnn_diags_init(&d);
	cr_assert_eq(nnn_json_decode(spec, strlen(spec), &o, &m, &d), NNN_OK, "%s", d.n ? d.v[0].msg : "");
	cr_expect_eq(m->description.len, 0);
	cr_expect_eq(m->param_count, 6 + 3 + 3 + 1, "computed: %llu", (unsigned long long)m->param_count);
	cr_expect_eq(m->layer_count, 2);
	const nnn_layer_t *L = &m->layers[0];
	cr_expect_eq(L->id, NNN_LAYER_ID_DENSE, "the first layer type by default");
	cr_expect_eq(L->activation.id, NNN_ACTIVATION_ID_RELU);
	cr_expect_eq(L->body.dense.neurons, 3, "from weights.dims[1]");
	cr_expect_eq(L->body.dense.weights.dims.n, 2, "dims from the .npy file");
	cr_expect_eq(L->body.dense.weights.dims.v[0], 2);
	cr_expect_eq(L->body.dense.flatten, false);
	cr_expect_eq(L->bias.requires_grad, false);
	cr_expect_eq(nnn_f32s_get(L->body.dense.weights.data, 5), 6.0f);
	L = &m->layers[1];
	cr_expect_eq(L->activation.params.leaky_relu.tau, 0.25f);
	cr_expect_eq(L->body.dense.weights.dims.n, 1, "inline data without dims: [count]");
	cr_expect_eq(L->body.dense.neurons, 0, "weights [3] have no dim 1");
	nnn_model_free(m);

	/* A tensor cannot be left out, even in a spec. */
	static const char nobias[] = "{\"layers\": [\n {\"weights\": \"w.npy\"}]}";
	cr_assert_eq(nnn_json_decode(nobias, strlen(nobias), &o, &m, &d), NNN_E_JSON_MISSING);
	cr_expect_str_eq(d.v[d.n - 1].path, "layers[0].bias");
	cr_expect_eq(d.v[d.n - 1].line, 2);
	/* A strict reader takes no shorthand. */
	cr_assert_eq(nnn_json_decode(spec, strlen(spec), NULL, &m, &d), NNN_E_JSON_MISSING);
	nnn_diags_free(&d);
}

/* Dense layers of 512 x 512 weights (1 MiB) and 512 biases, one a line:
 *   {"weights": NAME, "bias": "b.npy"},
 * the NAMEs in turn. Free the text. */
static char *wide_spec(int n, const char *const *names, size_t nnames)
{
	static float w[512 * 512], bias[512];
	npy("w.npy", 2, (const int64_t[]){ 512, 512 }, w);
	npy("b.npy", 1, (const int64_t[]){ 512 }, bias);
	size_t cap = 64 + (size_t)n * 64, k = 0;
	char *s = malloc(cap);
	cr_assert_not_null(s);
	k += (size_t)snprintf(s + k, cap - k, "{\"layers\": [\n");
	for (int i = 0; i < n; i++)
		k += (size_t)snprintf(s + k, cap - k, "  {\"weights\": \"%s\", \"bias\": \"b.npy\"}%s\n", names[(size_t)i % nnames],
		                      i + 1 < n ? "," : "");
	snprintf(s + k, cap - k, "]}");
	return s;
}

typedef struct decode_job {
	const char *text;
	nnn_status_t st;
} decode_job_t;

static void decode_spec(void *arg)
{
	decode_job_t *j = arg;
	nnn_json_read_opts_t o = { .flags = NNN_JSON_SPEC, .base_dir = tmp() };
	nnn_model_t *m = NULL;
	j->st = nnn_json_decode(j->text, strlen(j->text), &o, &m, NULL);
	if (j->st != NNN_OK)
		_exit(1);
	nnn_model_free(m);
}

/* One .npy file named 40 times, as itself, through a hard link, a symbolic
 * link and "./": read once (files are known by device and inode), its data
 * shared by every tensor, and memory follows the file (1 MiB), not the
 * references (40 MiB). It used to read and copy the file for each: a 529 KB
 * spec naming a 4 MB file 100 times took 403 MB. */
Test(json, npy_named_again_is_read_once)
{
	static const char *const names[] = { "w.npy", "hard.npy", "soft.npy", "./w.npy" };
	char *spec = wide_spec(40, names, 4);
	cr_assert_eq(link(tdir("w.npy"), tdir("hard.npy")), 0);
	cr_assert_eq(symlink("w.npy", tdir("soft.npy")), 0);
	if (!T_ASAN && !t_under_valgrind()) { /* their memory figures mean nothing */
		decode_job_t j = { spec, NNN_OK };
		long kib = t_peak_fn_kib(decode_spec, &j);
		cr_log_info("decoding 40 references to a 1 MiB file added %ld KiB", kib);
		cr_expect_lt(kib, 12 * 1024, "%ld KiB for 40 references to one 1 MiB file: read more than once?", kib);
	}
	nnn_json_read_opts_t o = { .flags = NNN_JSON_SPEC, .base_dir = tmp() };
	nnn_model_t *m;
	nnn_diags_t d;
	nnn_diags_init(&d);
	cr_assert_eq(nnn_json_decode(spec, strlen(spec), &o, &m, &d), NNN_OK, "%s", d.n ? d.v[0].msg : "");
	cr_assert_eq(m->layer_count, 40);
	for (int32_t i = 0; i < m->layer_count; i++) {
		const nnn_layer_t *L = &m->layers[i];
		cr_assert_eq(L->body.dense.weights.data.n, 512 * 512);
		cr_assert_eq(L->body.dense.weights.data.bytes, m->layers[0].body.dense.weights.data.bytes,
		             "layer %d's weights are a copy of their own", (int)i);
		cr_assert_eq(L->bias.data.bytes, m->layers[0].bias.data.bytes, "layer %d's bias is a copy", (int)i);
		cr_assert_eq(L->body.dense.weights.dims.v[1], 512, "dims from the file, read once");
	}
	nnn_model_free(m);
	nnn_diags_free(&d);
	free(spec);
}

/* The references may fill at most 64 MiB plus 4 times the distinct files'
 * data: 1 MiB named 70 times is refused at the reference that passes it
 * (its path, line and column), with the total and the cap; 40 times is
 * within it. */
Test(json, npy_cap_names_the_reference_past_it)
{
	static const char *const names[] = { "w.npy" };
	const uint64_t W = 4 * 512 * 512, B = 4 * 512, cap = (64u << 20) + 4 * (W + B);
	uint64_t total = 0;
	int at = -1;
	const char *field = NULL;
	for (int i = 0; i < 70 && at < 0; i++) { /* a Dense layer's bias comes before its weights */
		if ((total += B) > cap)
			at = i, field = "bias";
		else if ((total += W) > cap)
			at = i, field = "weights";
	}
	cr_assert_eq(at, 67, "the test's own arithmetic");
	cr_assert_str_eq(field, "weights");
	char *spec = wide_spec(70, names, 1), path[64], want[256];
	nnn_json_read_opts_t o = { .flags = NNN_JSON_SPEC, .base_dir = tmp() };
	nnn_model_t *m = (nnn_model_t *)1;
	nnn_diags_t d;
	nnn_diags_init(&d);
	cr_assert_eq(nnn_json_decode(spec, strlen(spec), &o, &m, &d), NNN_E_LIMIT, "%s", d.n ? d.v[0].msg : "");
	cr_assert_null(m);
	cr_assert_eq(d.n, 1);
	snprintf(path, sizeof path, "layers[%d].%s.data.npy", at, field);
	cr_expect_str_eq(d.v[0].path, path);
	cr_expect_eq(d.v[0].line, (uint32_t)at + 2, "line %u", d.v[0].line);
	cr_expect_eq(d.v[0].column, (uint32_t)strlen("  {\"weights\": ") + 1, "column %u", d.v[0].column);
	snprintf(want, sizeof want, "w.npy: the .npy references up to here fill %" PRIu64 " bytes of tensors (each "
	         "reference counted), past this spec's cap of %" PRIu64 " bytes: 64 MiB plus 4 times the %" PRIu64
	         " bytes of the 2 distinct .npy files", total, cap, W + B);
	cr_expect(strstr(d.v[0].msg, want), "%s", d.v[0].msg);
	cr_expect(strstr(d.v[0].msg, "w.npy is named 68 times up to here. Give such tensors files of their own"), "%s",
	          d.v[0].msg);
	free(spec);

	spec = wide_spec(40, names, 1);
	cr_assert_eq(nnn_json_decode(spec, strlen(spec), &o, &m, &d), NNN_OK, "%s", d.v[d.n - 1].msg);
	nnn_model_free(m);
	nnn_diags_free(&d);
	free(spec);
}

/* nnn_json_locate: validator problems get the line of their path, or of its
 * deepest ancestor in the text. */
Test(json, locate)
{
	nnn_diags_t d;
	nnn_diags_init(&d);
	nnn_diags_add(&d, NNN_E_SHAPE, 100, "layers[1].kernels.dims", "x");
	nnn_diags_add(&d, NNN_E_SHAPE, 100, "layers[1].kernels.dims[7]", "x");
	nnn_diags_add(&d, NNN_E_SHAPE, 100, "layers[5].bias", "x");
	nnn_diags_add(&d, NNN_E_SHAPE, 100, "", "x");
	nnn_json_locate(GOOD, strlen(GOOD), &d, 0);
	cr_expect_eq(d.v[0].line, 20);
	cr_expect_eq(d.v[0].column, 27);
	cr_expect_eq(d.v[1].line, 20, "the array holds no element 7");
	cr_expect_eq(d.v[2].line, 4, "no layer 5: the array");
	cr_expect_eq(d.v[3].line, 0, "no path, no line");
	char buf[1024];
	cr_expect_str_eq(nnn_diag_format(&d.v[0], buf, sizeof buf),
	                 "20:27: layers[1].kernels.dims: tensor shape does not fit the layer: x (the tensor must have "
	                 "the shape the layer's fields imply)");
	nnn_diags_free(&d);
}
