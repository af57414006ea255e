/* test_kit.c: the conformance kit's content (lua5.4 gen/nnngen.lua SCHEMA
 * --conformance DIR: docs/conformance.md, "What is in the kit") as a black
 * box, and its Lua parts through tests/gen/kit_eval.lua:
 *
 *   kit/sha256_*          gen/schema/sha256.lua on the FIPS 180-4 vectors and, at
 *                         the padding's boundaries, against coreutils' sha256sum
 *   kit/eval_*            gen/corpus/evaluate.lua, the kit's reference, on small
 *                         models (tests/lib/builder.h: tensors hold 0.5 * i - 1)
 *                         against values computed by hand here
 *   kit/manifest_*        the manifest's kit, schema and per-case fields
 *   kit/npy_*             every .npy file under io/ loads with NumPy, as np.save writes it
 *   kit/deterministic     two generations are byte-identical, file for file
 *   kit/schema_hash       the same data hashes the same, an edit or a fragment not
 *   kit/catches_*         the cases that catch a swapped Same padding and a softmax
 *                         that does not subtract the maximum
 *   kit/nnnkit_run_agrees `nnnkit run` on every run case within its tolerance
 *   kit/reference_*       --reference for the cases the kit's reference declines
 *
 * IDs and names come from the schema (tests/lib/schemaq.h). Each test works
 * in its own temp folder, removed by the suite's fini.
 */
#define _XOPEN_SOURCE 700
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <jansson.h>

#include "blackbox.h"
#include "builder.h"
#include "schemaq.h"
#include "shell.h"
#include "tmpdir.h"

#define GEN_LUA "lua5.4 gen/nnngen.lua"
#define EVAL_LUA "lua5.4 tests/gen/kit_eval.lua"
#define PY "/usr/bin/python3"
#define TMP "nnn-kit-"

static const char *tmp(void)
{
	return t_tmpdir(TMP);
}

static const char *tpath(const char *name)
{
	return t_tmppath(TMP, name);
}

TestSuite(kit, .fini = t_tmpdir_remove);

#define sh(...) t_run_in(tmp(), __VA_ARGS__)

/* Generates the core kit into tmp()/name with `args` added; returns its path. */
static const char *gen_kit(const char *name, const char *args)
{
	const char *dir = tpath(name);
	t_run_t r = sh(GEN_LUA " schema/nnn.lua --conformance '%s' %s", dir, args);
	cr_assert_eq(r.status, 0, "generating %s failed:\n%s%s", name, r.out, r.err);
	t_run_free(&r);
	return dir;
}

static json_t *load_manifest(const char *dir)
{
	json_error_t e;
	json_t *m = json_load_file(t_fmt("%s/manifest.json", dir), 0, &e);
	cr_assert_not_null(m, "%s/manifest.json: %s (line %d)", dir, e.text, e.line);
	return m;
}

/* ---- SHA-256 ---- */

static void expect_sha(const char *file, const char *want)
{
	t_run_t r = sh(EVAL_LUA " sha256 '%s'", file);
	cr_assert_eq(r.status, 0, "%s", r.err);
	r.out[strcspn(r.out, "\n")] = '\0';
	cr_expect_str_eq(r.out, want, "sha256 of %s", file);
	t_run_free(&r);
}

Test(kit, sha256_vectors)
{
	static const struct {
		const char *msg, *hex;
	} v[] = {
		{ "", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" },
		{ "abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" },
		{ "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
		  "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1" },
		{ "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrst"
		  "nopqrstu",
		  "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1" },
	};
	t_require_root();
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
		const char *f = tpath(t_fmt("v%zu", i));
		t_spit_str(f, v[i].msg);
		expect_sha(f, v[i].hex);
	}
	/* a million 'a' */
	char *a = malloc(1000000);
	cr_assert_not_null(a);
	memset(a, 'a', 1000000);
	t_spit(tpath("million"), a, 1000000);
	free(a);
	expect_sha(tpath("million"), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

/* Lengths around the padding's boundaries (55, 56, 63, 64 bytes: one block
 * or two), against an independent implementation. */
Test(kit, sha256_padding_boundaries)
{
	static const int lens[] = { 1, 55, 56, 57, 63, 64, 65, 119, 120, 128 };
	char buf[256], want[80];
	t_require_root();
	for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
		const char *f = tpath(t_fmt("b%d", lens[i]));
		for (int k = 0; k < lens[i]; k++)
			buf[k] = (char)('0' + k % 43);
		t_spit(f, buf, (size_t)lens[i]);
		t_run_t r = sh("sha256sum '%s'", f);
		cr_assert_eq(r.status, 0, "sha256sum: %s", r.err);
		snprintf(want, sizeof want, "%.64s", r.out);
		t_run_free(&r);
		expect_sha(f, want);
	}
}

/* ---- the reference's forward pass, against values computed by hand ---- */

/* The reference's output of the model file on input xs of shape `dims`
 * ("2,1,2"): its shape into shape, its values into y (up to n), the largest
 * value before an activation into *peak; returns the number of values. */
static size_t eval_model(const char *file, const char *dims, const char *xs, char *shape, size_t ssize, double *peak,
                         double *y, size_t n)
{
	t_run_t r = sh(EVAL_LUA " eval schema/nnn.lua '%s' %s %s", file, dims, xs);
	cr_assert_eq(r.status, 0, "the reference did not run %s:\n%s%s", file, r.out, r.err);
	char *line = strtok(r.out, "\n");
	cr_assert(line && !strncmp(line, "shape ", 6), "%s", r.out);
	snprintf(shape, ssize, "%s", line + 6);
	line = strtok(NULL, "\n");
	cr_assert(line && !strncmp(line, "peak ", 5), "no peak");
	*peak = strtod(line + 5, NULL);
	size_t k = 0;
	while ((line = strtok(NULL, "\n")) && k < n)
		y[k++] = strtod(line, NULL);
	t_run_free(&r);
	return k;
}

static void expect_values(const double *y, size_t got, const double *want, size_t n, const char *what)
{
	cr_assert_eq(got, n, "%s: %zu values, expected %zu", what, got, n);
	for (size_t i = 0; i < n; i++)
		cr_expect(fabs(y[i] - want[i]) <= 1e-12 * (1 + fabs(want[i])), "%s: y[%zu] = %.17g, expected %.17g", what,
		          i, y[i], want[i]);
}

static int act(const char *name)
{
	return (int)sq_int("value('activation_id', '%s')", name);
}

/* A file holding one Dense layer, bias [2] = {-1, -0.5}, W [2, 2] =
 * {{-1, -0.5}, {0, 0.5}}. */
static const char *dense_2x2(const char *name, int activation, int flatten)
{
	bb_t b = { 0 };
	bb_header(&b, "kit", 6, 1);
	bb_dense(&b, (uint8_t)activation, 2, 2, flatten);
	t_spit(tpath(name), b.b, b.n);
	bb_free(&b);
	return tpath(name);
}

Test(kit, eval_dense_flatten)
{
	double y[8], peak;
	char shape[64];
	t_require_root();
	const char *f = dense_2x2("dense.nnn", act("linear"), 1);
	/* [2, 1, 2] flattens to [2, 2]: y = b + x @ W */
	size_t n = eval_model(f, "2,1,2", "0.5 -2 1 3", shape, sizeof shape, &peak, y, 8);
	static const double want[] = { -1 + 0.5 * -1 + -2 * 0.0, -0.5 + 0.5 * -0.5 + -2 * 0.5, -1 + 1 * -1 + 3 * 0.0,
		                       -0.5 + 1 * -0.5 + 3 * 0.5 };
	cr_expect_str_eq(shape, "2,2");
	expect_values(y, n, want, 4, "dense with flatten");
}

Test(kit, eval_leaky_relu)
{
	double y[8], peak;
	char shape[64];
	const double tau = (double)0.1f; /* the builder's tau, a float32 */
	t_require_root();
	const char *f = dense_2x2("leaky.nnn", act("leaky_relu"), 0);
	size_t n = eval_model(f, "2,2", "-3 1 2 -3", shape, sizeof shape, &peak, y, 8);
	/* pre-activation: (2, 1.5) and (-3, -3) */
	const double want[] = { 2, 1.5, -3 * tau, -3 * tau };
	cr_expect_str_eq(shape, "2,2");
	expect_values(y, n, want, 4, "leaky relu");
}

/* Logits 1000 and 1001: softmax (1 / (1 + e), e / (1 + e)), where exp() of
 * either overflows even in float64. */
Test(kit, eval_softmax_large_logits)
{
	double y[8], peak;
	char shape[64];
	t_require_root();
	const char *f = dense_2x2("softmax.nnn", act("softmax"), 0);
	size_t n = eval_model(f, "1,2", "-1001 1002", shape, sizeof shape, &peak, y, 8);
	const double e = exp(1.0), want[] = { 1 / (1 + e), e / (1 + e) };
	expect_values(y, n, want, 2, "softmax of 1000, 1001");
	cr_expect_eq(peak, 1001.0, "the largest logit: %.17g", peak);
}

/* A 1-D Conv, kernel 2 (even), Same padding: before 0, after 1 (total
 * k - 1 = 1, before = total / 2, docs/format.md). Kernels [1, 2, 1] = {-1, -0.5}, bias
 * {-1}; input (1, 2, 3). */
static const char *conv_k2(const char *name, int before, int after)
{
	bb_t b = { 0 };
	int32_t k[1] = { 2 }, pads[2] = { before, after };
	bb_header(&b, "kit", 3, 1);
	bb_conv(&b, (uint8_t)act("linear"), 1, 1, k, 1, (int32_t)sq_int("value('padding_type', 'same')"), 2, pads);
	t_spit(tpath(name), b.b, b.n);
	bb_free(&b);
	return tpath(name);
}

Test(kit, eval_conv_same_even_kernel)
{
	double y[8], peak;
	char shape[64];
	t_require_root();
	size_t n = eval_model(conv_k2("same.nnn", 0, 1), "1,3,1", "1 2 3", shape, sizeof shape, &peak, y, 8);
	const double want[] = { -1 + 1 * -1 + 2 * -0.5, -1 + 2 * -1 + 3 * -0.5, -1 + 3 * -1 + 0 * -0.5 };
	cr_expect_str_eq(shape, "1,3,1");
	expect_values(y, n, want, 3, "conv, Same, k = 2");
	/* before and after swapped: another output, which the kit tells apart */
	n = eval_model(conv_k2("swapped.nnn", 1, 0), "1,3,1", "1 2 3", shape, sizeof shape, &peak, y, 8);
	const double swapped[] = { -1 + 0 * -1 + 1 * -0.5, -1 + 1 * -1 + 2 * -0.5, -1 + 2 * -1 + 3 * -0.5 };
	expect_values(y, n, swapped, 3, "conv, padding swapped");
}

/* ---- the kit ---- */

static const char *jstr(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

Test(kit, manifest_top_level)
{
	t_require_root();
	const char *dir = gen_kit("k", "--kit-version 9.8.7");
	json_t *m = load_manifest(dir), *kit = json_object_get(m, "kit"), *s = json_object_get(m, "schema");
	cr_expect_eq(json_integer_value(json_object_get(kit, "format")), 1);
	cr_expect_str_eq(jstr(kit, "version"), "9.8.7");
	cr_expect_eq(json_integer_value(json_object_get(kit, "protocol")), 1);
	cr_expect_str_eq(jstr(s, "name"), strtok((char *)sq("s.name"), "\n"));
	cr_expect_eq(json_integer_value(json_object_get(s, "version")), sq_int("s.version"));
	cr_expect_str_eq(jstr(s, "generator"), "nnngen 9.8.7");
	const char *h = jstr(s, "hash");
	cr_assert(h && strlen(h) == 71 && !strncmp(h, "sha256:", 7) && strspn(h + 7, "0123456789abcdef") == 64, "hash %s", h);
	cr_expect_null(json_object_get(m, "plugin"));
	json_decref(m);
	/* the default version, and a version that is not one */
	dir = gen_kit("k0", "");
	m = load_manifest(dir);
	cr_expect_str_eq(jstr(json_object_get(m, "kit"), "version"), "0.0.0");
	json_decref(m);
	t_run_t r = sh(GEN_LUA " schema/nnn.lua --conformance '%s' --kit-version 'a b'", tpath("bad"));
	cr_expect_eq(r.status, 2, "--kit-version 'a b' was taken");
	cr_expect(strstr(r.err, "--kit-version takes a version") != NULL, "%s", r.err);
	t_run_free(&r);
}

/* One case's new fields: id, family, expect, run or run_why. */
static void check_case(const char *dir, json_t *c, long *runs)
{
	const char *file = jstr(c, "file"), *id = jstr(c, "id");
	int valid = json_is_true(json_object_get(c, "valid"));
	cr_assert(file && id, "a case without file or id");
	cr_expect(strlen(file) == strlen(id) + 4 && !strncmp(file, id, strlen(id)) && !strcmp(file + strlen(id), ".nnn"),
	          "id %s of file %s", id, file);
	cr_expect_str_eq(jstr(c, "family"), jstr(c, "class"), "%s", id);
	cr_expect_str_eq(jstr(c, "expect"), valid ? "accept" : "reject", "%s", id);
	json_t *run = json_object_get(c, "run");
	cr_assert_not_null(run, "%s has no run", id);
	if (json_is_null(run)) {
		const char *why = jstr(c, "run_why");
		cr_expect(why && *why, "%s: run is null without run_why", id);
		return;
	}
	cr_expect(valid, "invalid case %s has a run", id);
	cr_expect_null(json_object_get(c, "run_why"), "%s", id);
	const char *name = strrchr(id, '/') + 1;
	cr_expect_str_eq(jstr(run, "input"), t_fmt("io/%s.in.npy", name));
	cr_expect_str_eq(jstr(run, "output"), t_fmt("io/%s.out.npy", name));
	cr_expect(access(t_fmt("%s/%s", dir, jstr(run, "input")), R_OK) == 0, "%s: no input file", id);
	cr_expect(access(t_fmt("%s/%s", dir, jstr(run, "output")), R_OK) == 0, "%s: no output file", id);
	double tol = json_number_value(json_object_get(run, "tolerance"));
	cr_expect(tol >= 1e-5 && tol <= 1e-3, "%s: tolerance %g", id, tol);
	(*runs)++;
}

Test(kit, manifest_cases)
{
	size_t i;
	json_t *c;
	long runs = 0, valid = 0, large = 0, large_run = 0, same_even = 0;
	t_require_root();
	const char *dir = gen_kit("k", "");
	json_t *m = load_manifest(dir);
	json_array_foreach(json_object_get(m, "cases"), i, c) {
		check_case(dir, c, &runs);
		const char *id = jstr(c, "id");
		int has_run = !json_is_null(json_object_get(c, "run"));
		/* a type the reference does not know (a growth's, a plugin's) runs
		 * in no case; every other valid case runs unless its parameters
		 * are not ordinary */
		const char *why = has_run ? "" : jstr(c, "run_why");
		int known = !why || !strstr(why, "the kit's reference does not compute");
		valid += json_is_true(json_object_get(c, "valid")) && known;
		large += !strncmp(id, "valid/large-logits-", 19);
		large_run += !strncmp(id, "valid/large-logits-", 19) && (has_run || !known);
		/* the Same, even-kernel cases of every rank run */
		if (strstr(id, "-same-") && strstr(id, "d-even")) {
			cr_expect(has_run, "%s does not run: %s", id, jstr(c, "run_why"));
			same_even++;
		}
	}
	cr_expect(runs > valid * 9 / 10 && runs < valid, "%ld of %ld valid cases of known types run", runs, valid);
	/* a large-logit case per layer type and activation, every one of known types run */
	cr_expect_eq(large, sq_int("defined('layer_id') * defined('activation_id')"));
	cr_expect_eq(large_run, large);
	cr_expect_eq(same_even, 3, "Same, even kernel, ranks 1-3: %ld cases", same_even);
	/* the cases with extreme parameters say why they do not run */
	c = NULL;
	json_array_foreach(json_object_get(m, "cases"), i, c) {
		if (!strcmp(jstr(c, "id"), "valid/float-leaky_relu-tau-max"))
			break;
	}
	cr_assert(c && json_is_null(json_object_get(c, "run")));
	cr_expect(strstr(jstr(c, "run_why"), "not ordinary") && strstr(jstr(c, "run_why"), "tau is 3.40282347e+38"), "%s",
	          jstr(c, "run_why"));
	json_decref(m);
}

Test(kit, npy_load_with_numpy)
{
	t_require_root();
	const char *dir = gen_kit("k", "");
	t_run_t r = sh(PY " tests/tools/kit_check.py '%s'", dir);
	cr_expect_eq(r.status, 0, "%s%s", r.out, r.err);
	t_run_free(&r);
}

Test(kit, deterministic)
{
	t_require_root();
	const char *a = gen_kit("a", "--kit-version 1.2.3"), *b = gen_kit("b", "--kit-version 1.2.3");
	t_run_t r = sh("diff -r '%s' '%s' && ls '%s/io' | wc -l", a, b, a);
	cr_expect_eq(r.status, 0, "two generations differ:\n%s", r.out);
	cr_expect(atoi(r.out) > 100, "%s io files", r.out);
	t_run_free(&r);
}

static const char *hash_of(const char *dir)
{
	json_t *m = load_manifest(dir);
	const char *h = t_fmt("%s", jstr(json_object_get(m, "schema"), "hash"));
	json_decref(m);
	return h;
}

/* The hash is of the schema's data: the same data written another way
 * (through an import) hashes the same; a doc changed, or a fragment merged
 * in, gives another hash. */
Test(kit, schema_hash)
{
	t_require_root();
	t_copy_schema(tmp());
	t_spit_str(tpath("same.lua"), "return import(\"nnn.lua\")\n");
	t_spit_str(tpath("doc.lua"), "local s = import(\"nnn.lua\")\ns.doc = s.doc .. \" Changed.\"\nreturn s\n");
	const char *core = hash_of(gen_kit("core", ""));
	t_run_t r = sh(GEN_LUA " '%s' --conformance '%s' && " GEN_LUA " '%s' --conformance '%s' && " GEN_LUA
	               " schema/nnn.lua --plugin examples/plugin-pool-swish/schema.lua --conformance '%s'",
	               tpath("same.lua"), tpath("same"), tpath("doc.lua"), tpath("doc"), tpath("plugin"));
	cr_assert_eq(r.status, 0, "%s", r.err);
	t_run_free(&r);
	cr_expect_str_eq(hash_of(tpath("same")), core, "the same schema through an import");
	cr_expect_str_neq(hash_of(tpath("doc")), core, "a doc changed");
	cr_expect_str_neq(hash_of(tpath("plugin")), core, "a fragment merged in");
	json_t *m = load_manifest(tpath("plugin"));
	cr_expect_str_eq(jstr(m, "plugin"), "poolswish");
	json_decref(m);
}

/* The kit catches a Conv whose Same padding puts before and after the wrong
 * way round: on every even-kernel case, the reference with the padding
 * swapped misses the expected output by far more than the tolerance. */
Test(kit, catches_swapped_same_padding)
{
	int n = 0;
	t_require_root();
	const char *dir = gen_kit("k", "");
	t_run_t r = sh(EVAL_LUA " swapped schema/nnn.lua '%s'", dir);
	cr_assert_eq(r.status, 0, "%s", r.err);
	for (char *line = strtok(r.out, "\n"); line; line = strtok(NULL, "\n")) {
		char id[256];
		double off;
		cr_assert_eq(sscanf(line, "%255s %lf", id, &off), 2, "%s", line);
		if (strstr(id, "-same-") && strstr(id, "d-even")) {
			cr_expect(off > 0.01, "%s: swapped padding off by %g only", id, off);
			n++;
		}
	}
	cr_expect_eq(n, 3, "even-kernel Same cases checked: %d", n);
	t_run_free(&r);
}

/* The large-logit cases hold values above log(FLT_MAX) = 88.72 before the
 * activation: exp() of them overflows in float32. */
Test(kit, catches_naive_softmax)
{
	long n = 0;
	t_require_root();
	const char *dir = gen_kit("k", "");
	t_run_t r = sh(EVAL_LUA " peaks schema/nnn.lua '%s'", dir);
	cr_assert_eq(r.status, 0, "%s", r.err);
	for (char *line = strtok(r.out, "\n"); line; line = strtok(NULL, "\n")) {
		char id[256];
		double peak;
		cr_assert_eq(sscanf(line, "%255s %lf", id, &peak), 2, "%s", line);
		if (!strncmp(id, "valid/large-logits-", 19)) {
			cr_expect(peak > log(3.4028234663852886e38), "%s: largest logit %g", id, peak);
			cr_expect(peak < 1e3, "%s: largest logit %g", id, peak);
			n++;
		}
	}
	/* every large-logit case that runs (on a grown schema, those of the
	 * types the reference knows) */
	size_t i;
	json_t *c, *m = load_manifest(dir);
	long runs = 0;
	json_array_foreach(json_object_get(m, "cases"), i, c)
		runs += !strncmp(jstr(c, "id"), "valid/large-logits-", 19) && !json_is_null(json_object_get(c, "run"));
	json_decref(m);
	cr_expect(n == runs && n >= 2 * sq_int("defined('activation_id')"), "%ld of %ld", n, runs);
	t_run_free(&r);
}

/* Every run case's expected output agrees with `nnnkit run` within the
 * case's tolerance (the figure is in gen/corpus/evaluate.lua's header). */
Test(kit, nnnkit_run_agrees, .timeout = 120)
{
	t_require_root();
	cr_assert(access(nnnkit_bin(), X_OK) == 0, "%s is not built (run make)", nnnkit_bin());
	const char *dir = gen_kit("k", "");
	t_run_t r = sh(PY " tests/tools/kit_check.py '%s' --nnnkit '%s'", dir, nnnkit_bin());
	cr_expect_eq(r.status, 0, "%s%s", r.out, r.err);
	cr_log_info("%s", r.out);
	t_run_free(&r);
}

/* --reference: the plugin's cases the kit's reference does not compute go
 * to the command; exit 77 declines one, another failure stops nnngen. */
Test(kit, reference_command)
{
	size_t i;
	json_t *c;
	long declined = 0, referenced = 0;
	t_require_root();
	/* declines models with the plugin's activation (the file's bytes hold
	 * its ID after the layer ID), copies the input as the output otherwise */
	t_spit_str(tpath("ref.sh"), "#!/bin/sh\ncase \"$1\" in *swish*) exit 77;; esac\ncp \"$2\" \"$3\"\n");
	t_run_t r = sh("chmod +x '%s' && " GEN_LUA " schema/nnn.lua --plugin examples/plugin-pool-swish/schema.lua "
	               "--conformance '%s' --reference '%s {model} {input} {output}'",
	               tpath("ref.sh"), tpath("p"), tpath("ref.sh"));
	cr_assert_eq(r.status, 0, "%s", r.err);
	t_run_free(&r);
	json_t *m = load_manifest(tpath("p"));
	json_array_foreach(json_object_get(m, "cases"), i, c) {
		const char *why = jstr(c, "run_why");
		if (why && strstr(why, "declined it (exit 77)")) {
			cr_expect(strstr(jstr(c, "id"), "swish") != NULL, "%s declined", jstr(c, "id"));
			cr_expect(access(t_fmt("%s/io/%s.in.npy", tpath("p"), strrchr(jstr(c, "id"), '/') + 1), F_OK) != 0,
			          "the input of a declined case is left");
			declined++;
		}
		if (strstr(jstr(c, "id"), "maxpool") && !json_is_null(json_object_get(c, "run")))
			referenced++;
	}
	json_decref(m);
	cr_expect_gt(declined, 0);
	cr_expect_gt(referenced, 0);
	r = sh(GEN_LUA " schema/nnn.lua --plugin examples/plugin-pool-swish/schema.lua --conformance '%s' "
	       "--reference 'false {model}'", tpath("q"));
	cr_expect_eq(r.status, 1, "a failing reference command was taken");
	cr_expect(strstr(r.err, "--reference: for valid/") && strstr(r.err, "ended with exit 1"), "%s", r.err);
	t_run_free(&r);
}
