/* test_safetensors.c: nnn/safetensors.h. Every valid case of the
 * conformance corpus and the real files go .nnn -> safetensors -> .nnn byte
 * for byte; every refusal has its exact code, offset, path and words. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nnn/file.h>
#include <nnn/safetensors.h>

#include "ctx.h"
#include "st.h" /* st_dtype_name */
#include "manifest.h"

static unsigned char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	cr_assert_not_null(f, "cannot open %s", path);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	rewind(f);
	unsigned char *b = malloc((size_t)n + 1);
	cr_assert_eq(fread(b, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return b;
}

/* .nnn bytes -> safetensors -> .nnn bytes, both through the model and
 * without it; returns the safetensors bytes (free them). */
static unsigned char *roundtrip(const char *what, const unsigned char *b, size_t n, size_t *st_len)
{
	nnn_diags_t d;
	nnn_model_t *m, *back;
	unsigned char *st, *nnn, *again;
	size_t len, nlen, alen;
	nnn_diags_init(&d);
	cr_assert_eq(nnn_model_decode(b, n, NULL, &m, &d), NNN_OK, "%s: %s", what, d.n ? d.v[0].msg : "");
	cr_assert_eq(nnn_safetensors_encode(m, NULL, &st, &len, &d), NNN_OK, "%s: %s", what, d.n ? d.v[0].msg : "");
	nnn_model_free(m);
	uint64_t hn = 0;
	for (int i = 0; i < 8; i++)
		hn |= (uint64_t)st[i] << 8 * i;
	cr_assert(hn % 8 == 0 && st[8] == '{' && 8 + hn <= len, "%s: header of %llu bytes", what,
	          (unsigned long long)hn);
	cr_assert_eq(nnn_safetensors_to_nnn(st, len, &nnn, &nlen, &d), NNN_OK, "%s: %s", what,
	             d.n ? d.v[0].msg : "");
	cr_assert(nlen == n && !memcmp(nnn, b, n), "%s: the .nnn bytes differ after the round trip", what);
	free(nnn);
	cr_assert_eq(nnn_safetensors_decode(st, len, NULL, &back, &d), NNN_OK, "%s", what);
	cr_assert_eq(nnn_model_encode(back, &again, &alen, &d), NNN_OK);
	cr_assert(alen == n && !memcmp(again, b, n), "%s: the model differs after the round trip", what);
	free(again);
	nnn_model_free(back);
	nnn_diags_free(&d);
	*st_len = len;
	return st;
}

Test(safetensors, conformance_valid_cases_round_trip)
{
	char dir[512], path[1024];
	snprintf(dir, sizeof dir, "%s/conformance", t_build_dir());
	t_manifest_t m = t_manifest_load(dir);
	size_t done = 0;
	for (size_t i = 0; i < m.n; i++) {
		if (!m.cases[i].valid)
			continue;
		size_t n, len;
		snprintf(path, sizeof path, "%s/%s", dir, m.cases[i].file);
		unsigned char *b = slurp(path, &n);
		free(roundtrip(m.cases[i].file, b, n, &len));
		free(b);
		done++;
	}
	t_manifest_free(&m);
	cr_assert_gt(done, 20, "only %zu valid cases", done);
	cr_log_info("safetensors: %zu valid conformance cases round trip byte for byte", done);
}

/* The header of a safetensors file, parsed. */
static json_t *header_of(const unsigned char *st)
{
	uint64_t hn = 0;
	for (int i = 0; i < 8; i++)
		hn |= (uint64_t)st[i] << 8 * i;
	json_error_t e;
	json_t *h = json_loadb((const char *)st + 8, hn, 0, &e);
	cr_assert_not_null(h, "%s", e.text);
	return h;
}

Test(safetensors, real_files_round_trip_with_names_and_shapes)
{
	const char *files[] = { "tictactoedemo.nnn", "2dmovedemo.nnn" };
	const char *dir = getenv("NNN_REAL_CORPUS") ? getenv("NNN_REAL_CORPUS") : "../shared/corpus/real";
	for (size_t k = 0; k < 2; k++) {
		char path[512];
		size_t n, len;
		snprintf(path, sizeof path, "%s/%s", dir, files[k]);
		if (access(path, R_OK))
			cr_skip_test("real corpus not found at %s: skipped (set NNN_REAL_CORPUS to run it)", path);
		unsigned char *b = slurp(path, &n), *st = roundtrip(files[k], b, n, &len);
		nnn_model_t *m;
		cr_assert_eq(nnn_model_decode(b, n, NULL, &m, NULL), NNN_OK);
		json_t *h = header_of(st);
		/* Named as nnnkit export names .npy files, shaped by the dims. */
		for (int32_t i = 0; i < m->layer_count; i++) {
			char name[64];
			snprintf(name, sizeof name, "layers.%d.weights", (int)i);
			json_t *t = json_object_get(h, name), *sh = json_object_get(t, "shape");
			cr_assert_str_eq(json_string_value(json_object_get(t, "dtype")), "F32");
			cr_assert_eq(json_array_size(sh), 2);
			cr_assert_eq(json_integer_value(json_array_get(sh, 0)), m->layers[i].body.dense.weights.dims.v[0]);
			cr_assert_eq(json_integer_value(json_array_get(sh, 1)), m->layers[i].body.dense.weights.dims.v[1]);
			snprintf(name, sizeof name, "layers.%d.bias", (int)i);
			cr_assert_not_null(json_object_get(h, name), "%s", name);
		}
		json_t *meta = json_object_get(h, "__metadata__");
		cr_assert_str_eq(json_string_value(json_object_get(meta, "format")), "nnn");
		json_decref(h);
		nnn_model_free(m);
		free(st);
		free(b);
	}
}

/* A small valid file nnnkit wrote, for the refusals. */
static unsigned char *small(size_t *len)
{
	char path[512];
	size_t n;
	snprintf(path, sizeof path, "%s/conformance/valid/dense-leaky_relu.nnn", t_build_dir());
	unsigned char *b = slurp(path, &n), *st = roundtrip("dense-leaky_relu", b, n, len);
	free(b);
	return st;
}

Test(safetensors, every_prefix_is_truncated)
{
	size_t len;
	unsigned char *st = small(&len);
	for (size_t k = 0; k < len; k++) {
		nnn_model_t *m = (void *)1;
		nnn_diags_t d;
		nnn_diags_init(&d);
		cr_assert_eq(nnn_safetensors_decode(st, k, NULL, &m, &d), NNN_E_TRUNCATED, "prefix of %zu bytes: %s", k,
		             d.n ? d.v[0].msg : "");
		cr_assert_null(m);
		nnn_diags_free(&d);
	}
	free(st);
}

/* A file of `hdr` (its length written first) and `nbuf` buffer bytes. */
static unsigned char *mk(const char *hdr, size_t nbuf, size_t *len)
{
	size_t n = strlen(hdr);
	unsigned char *b = calloc(8 + n + nbuf + 1, 1);
	for (int i = 0; i < 8; i++)
		b[i] = (unsigned char)((uint64_t)n >> 8 * i);
	memcpy(b + 8, hdr, n);
	*len = 8 + n + nbuf;
	return b;
}

static void refused(const unsigned char *b, size_t len, nnn_status_t code, uint64_t at, const char *path,
                    const char *words)
{
	nnn_diags_t d;
	nnn_model_t *m;
	nnn_diags_init(&d);
	cr_assert_eq(nnn_safetensors_decode(b, len, NULL, &m, &d), code, "%s: %s", words, d.n ? d.v[0].msg : "");
	cr_assert_geq(d.n, 1);
	cr_assert_eq(d.v[0].code, code);
	cr_assert_eq(d.v[0].offset, at, "%s: offset %llu, expected %llu (%s)", words,
	             (unsigned long long)d.v[0].offset, (unsigned long long)at, d.v[0].msg);
	cr_assert_str_eq(d.v[0].path, path, "%s", d.v[0].msg);
	cr_assert(strstr(d.v[0].msg, words), "\"%s\" not in: %s", words, d.v[0].msg);
	nnn_diags_free(&d);
}

/* Refuses `hdr` with `nbuf` buffer bytes; `key` (when not NULL) is where
 * the offset points: its first quoted occurrence in the header. */
static void refuses(const char *hdr, size_t nbuf, nnn_status_t code, const char *key, const char *path,
                    const char *words)
{
	size_t len;
	unsigned char *b = mk(hdr, nbuf, &len);
	uint64_t at = 8;
	if (key) {
		char q[128];
		snprintf(q, sizeof q, "\"%s\"", key);
		cr_assert_not_null(strstr(hdr, q));
		at = 8 + (uint64_t)(strstr(hdr, q) - hdr);
	}
	refused(b, len, code, at, path, words);
	free(b);
}

#define T(name, dt, sh, b, e) "\"" name "\": {\"dtype\": \"" dt "\", \"shape\": " sh ", \"data_offsets\": [" #b ", " #e "]}"

Test(safetensors, header_refusals)
{
	unsigned char big[16] = { 0x01, 0xe1, 0xf5, 0x05, 0, 0, 0, 0, '{', '}' }; /* 100000001 */
	refused(big, 10, NNN_E_SAFETENSORS, 0, "header_len", "at most 100000000");
	big[0] = 0x00; /* exactly the cap: allowed, and the file is too short */
	refused(big, 10, NNN_E_TRUNCATED, 8, "header", "says 100000000 bytes");
	refuses("[]", 0, NNN_E_SAFETENSORS, NULL, "header", "expected the '{'");
	size_t len;
	unsigned char *b = mk("{\"a\": \xff}", 0, &len);
	refused(b, len, NNN_E_SAFETENSORS, 8 + 6, "header", "byte 0xff: the header is not valid UTF-8");
	free(b);
	b = mk("{\"a\": 1,", 0, &len); /* where jansson stopped: the header's end */
	refused(b, len, NNN_E_SAFETENSORS, len, "header", "not JSON");
	free(b);
	const char *dup = "{" T("a", "F32", "[1]", 0, 4) ", " T("a", "F32", "[1]", 4, 8) "}";
	b = mk(dup, 8, &len); /* just after the second "a" */
	refused(b, len, NNN_E_SAFETENSORS, 8 + (uint64_t)(strstr(strstr(dup, "\"a\"") + 1, "\"a\"") + 3 - dup), "header",
	        "duplicate object key");
	free(b);
	refuses("{\"a\": 3}", 0, NNN_E_SAFETENSORS, "a", "a", "expected {\"dtype\"");
	refuses("{\"__metadata__\": {\"k\": 1}}", 0, NNN_E_SAFETENSORS, "k", "__metadata__.k", "strings");
}

Test(safetensors, tensor_refusals)
{
	refuses("{" T("a", "F33", "[2]", 0, 8) "}", 8, NNN_E_SAFETENSORS, "a", "a.dtype", "found F33");
	refuses("{" T("a", "F32", "[-2]", 0, 8) "}", 8, NNN_E_SAFETENSORS, "a", "a.shape", "dimension 0");
	refuses("{" T("a", "F32", "[3]", 0, 8) "}", 8, NNN_E_SAFETENSORS, "a", "a.data_offsets",
	        "found 8 bytes; F32 x shape makes 12");
	refuses("{" T("a", "F32", "[2]", 8, 0) "}", 8, NNN_E_SAFETENSORS, "a", "a.data_offsets", "ends before it begins");
	/* overlap, hole, past the buffer, bytes after the last tensor */
	refuses("{" T("a", "F32", "[2]", 0, 8) ", " T("b", "F32", "[2]", 4, 12) "}", 12, NNN_E_SAFETENSORS, "b",
	        "b.data_offsets", "overlaps a");
	refuses("{" T("a", "F32", "[2]", 0, 8) ", " T("b", "F32", "[2]", 12, 20) "}", 20, NNN_E_SAFETENSORS, "b",
	        "b.data_offsets", "hole of 4 bytes");
	const char *past = "{" T("a", "F32", "[2]", 0, 8) "}";
	size_t len;
	unsigned char *b = mk(past, 4, &len);
	refused(b, len, NNN_E_TRUNCATED, len, "a.data_offsets", "ends past the buffer");
	free(b);
	b = mk(past, 12, &len);
	refused(b, len, NNN_E_SAFETENSORS, len - 4, "", "4 bytes after the last tensor");
	free(b);
}

#define META(skel, places) "\"__metadata__\": {\"format\": \"nnn\", \"nnn.skeleton\": \"" skel "\", " \
	"\"nnn.tensors\": \"" places "\"}"

Test(safetensors, metadata_refusals)
{
	/* A Hugging Face checkpoint: said so, its tensors listed. */
	refuses("{" T("w", "BF16", "[2, 3]", 0, 12) "}", 12, NNN_E_SAFETENSORS, NULL, "__metadata__",
	        "w (BF16, [2, 3])");
	refuses("{\"__metadata__\": {\"format\": \"pt\"}, " T("w", "F32", "[1]", 0, 4) "}", 4, NNN_E_SAFETENSORS, NULL,
	        "__metadata__", "no nnnkit metadata");
	refuses("{" META("", "[]") ", " T("w", "F8_E5M2", "[2]", 0, 2) "}", 2, NNN_E_SAFETENSORS, "w", "w.dtype",
	        ".nnn has no such element type");
	refuses("{" META("AB$=", "[]") "}", 0, NNN_E_SAFETENSORS, "nnn.skeleton", "__metadata__.nnn.skeleton",
	        "character 2");
	refuses("{" META("ABC", "[]") "}", 0, NNN_E_SAFETENSORS, "nnn.skeleton", "__metadata__.nnn.skeleton",
	        "multiple of 4");
	/* "AwAAAA==": a count of 3 */
	refuses("{" META("AwAAAA==", "[[\\\"w\\\", 4]]") ", " T("w", "F32", "[2]", 0, 8) "}", 8, NNN_E_SAFETENSORS,
	        "nnn.tensors", "__metadata__.nnn.tensors[0]", "count before offset 4 is 3");
	refuses("{" META("AgAAAA==", "[[\\\"v\\\", 4]]") ", " T("w", "F32", "[2]", 0, 8) "}", 8, NNN_E_SAFETENSORS,
	        "nnn.tensors", "__metadata__.nnn.tensors[0]", "tensor v is not in the file");
	refuses("{" META("AgAAAA==", "[[\\\"w\\\", 5]]") ", " T("w", "F32", "[2]", 0, 8) "}", 8, NNN_E_SAFETENSORS,
	        "nnn.tensors", "__metadata__.nnn.tensors[0]", "outside [4, 4]");
	refuses("{" META("AgAAAA==", "[[\\\"w\\\", 4]") ", " T("w", "F32", "[2]", 0, 8) "}", 8, NNN_E_SAFETENSORS,
	        "nnn.tensors", "__metadata__.nnn.tensors", "expected a JSON array");
	refuses("{" META("AgAAAA==", "[[\\\"w\\\", 4], [\\\"w\\\", 4]]") ", " T("w", "F32", "[2]", 0, 8) ", "
	        T("x", "F32", "[0]", 8, 8) "}", 8, NNN_E_SAFETENSORS, "nnn.tensors", "__metadata__.nnn.tensors[1]",
	        "placed twice");
	/* Spliced well, then the decoder's own checks, at offsets of the .nnn
	 * bytes: these 12 are no .nnn file. */
	size_t len;
	unsigned char *b = mk("{" META("AgAAAA==", "[[\\\"w\\\", 4]]") ", " T("w", "F32", "[2]", 0, 8) "}", 8, &len);
	refused(b, len, NNN_E_MAGIC, 0, "magic", "found 2");
	free(b);
}

/* The safetensors dtype of each element type the schema language declares
 * (the format's names), and none where it has none. */
Test(safetensors, dtype_of_each_element_type)
{
	static const struct {
		nnn_ekind_t kind;
		int width;
		const char *name;
	} want[] = { { NNN_EK_INT, 1, "I8" },    { NNN_EK_INT, 2, "I16" },   { NNN_EK_INT, 4, "I32" },
		     { NNN_EK_INT, 8, "I64" },   { NNN_EK_UINT, 1, "U8" },   { NNN_EK_UINT, 2, "U16" },
		     { NNN_EK_UINT, 4, "U32" },  { NNN_EK_UINT, 8, "U64" },  { NNN_EK_FLOAT, 2, "F16" },
		     { NNN_EK_FLOAT, 4, "F32" }, { NNN_EK_FLOAT, 8, "F64" }, { NNN_EK_BFLOAT, 2, "BF16" },
		     { NNN_EK_BOOL, 1, "BOOL" } };
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		const char *got = st_dtype_name(want[i].kind, want[i].width);
		nnn_ekind_t kind;
		cr_assert(got && !strcmp(got, want[i].name), "kind %d width %d: %s, expected %s", (int)want[i].kind,
		          want[i].width, got ? got : "none", want[i].name);
		cr_assert_eq(st_dtype_kind(got, &kind), (size_t)want[i].width);
		cr_assert_eq(kind, want[i].kind);
	}
	cr_assert_null(st_dtype_name(NNN_EK_BFLOAT, 4));
	cr_assert_null(st_dtype_name(NNN_EK_FLOAT, 1));
}

/* An F16 tensor (2 bytes an element) goes back into the skeleton after its
 * count of 2 as it is: every byte, whatever it means. */
Test(safetensors, typed_tensor_spliced_byte_exact)
{
	size_t len, n;
	unsigned char *out;
	nnn_diags_t d;
	nnn_diags_init(&d);
	unsigned char *b = mk("{" META("AgAAAA==", "[[\\\"w\\\", 4]]") ", " T("w", "F16", "[2]", 0, 4) "}", 4, &len);
	static const unsigned char half[4] = { 0x01, 0x7e, 0x00, 0x80 }; /* a NaN with payload 1, -0 */
	memcpy(b + len - 4, half, 4);
	cr_assert_eq(nnn_safetensors_to_nnn(b, len, &out, &n, &d), NNN_OK, "%s", d.n ? d.v[0].msg : "");
	cr_assert_eq(n, 8);
	cr_assert_eq(memcmp(out, "\x02\0\0\0", 4), 0);
	cr_assert_eq(memcmp(out + 4, half, 4), 0);
	free(out);
	free(b);
	nnn_diags_free(&d);
}

Test(safetensors, write_file_and_read_back)
{
	size_t len, n;
	unsigned char *st = small(&len);
	nnn_model_t *m, *back;
	nnn_diags_t d;
	char path[] = "/tmp/nnnst.XXXXXX";
	int fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	close(fd);
	nnn_diags_init(&d);
	cr_assert_eq(nnn_safetensors_decode(st, len, NULL, &m, &d), NNN_OK);
	cr_assert_eq(nnn_safetensors_write_file(m, NULL, path, &d), NNN_OK);
	unsigned char *w = slurp(path, &n);
	cr_assert(n == len && !memcmp(w, st, n), "the file differs from the encoded bytes");
	cr_assert_eq(nnn_safetensors_read_file(path, NULL, &back, &d), NNN_OK);
	cr_assert_eq(nnn_model_encoded_size(back), nnn_model_encoded_size(m));
	nnn_model_free(back);
	nnn_model_free(m);
	free(w);
	free(st);
	unlink(path);
	nnn_diags_free(&d);
}

/* Any byte changed to any of a few values: read or refused with a problem
 * that says so, never a crash (ASan runs this tier too). */
Test(safetensors, every_single_byte_corruption_is_read_or_refused)
{
	size_t len;
	unsigned char *st = small(&len);
	const int vals[] = { 0x00, 0xff, '"', '{', '9', ',', ' ', -1 };
	size_t refused_n = 0;
	for (size_t i = 0; i < len; i++) {
		for (size_t v = 0; v < sizeof vals / sizeof vals[0]; v++) {
			unsigned char keep = st[i];
			st[i] = vals[v] < 0 ? (unsigned char)(keep ^ 1) : (unsigned char)vals[v];
			nnn_diags_t d;
			nnn_model_t *m = NULL;
			nnn_diags_init(&d);
			nnn_status_t s = nnn_safetensors_decode(st, len, NULL, &m, &d);
			if (s != NNN_OK) {
				cr_assert(m == NULL && d.n >= 1 && d.v[0].code == s, "byte %zu = 0x%02x: status %d", i, st[i],
				          (int)s);
				refused_n++;
			}
			nnn_model_free(m);
			nnn_diags_free(&d);
			st[i] = keep;
		}
	}
	cr_assert_gt(refused_n, len, "only %zu of %zu corruptions refused", refused_n, 8 * len);
	free(st);
}
