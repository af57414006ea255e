/* test_conformance.c: libnnn over the conformance corpus generated from the
 * schema (lua5.4 gen/nnngen.lua SCHEMA --conformance DIR; see
 * gen/corpus/cases.lua), every case of it:
 *
 *   every case  nnn_file_open (structure read with pread) and nnn_model_decode
 *               (from memory) agree: status, problems, re-encoded bytes;
 *   valid       nnn_validate_bytes finds nothing, neither without an input
 *               shape nor with the one the manifest records for the case
 *               (every layer's output inferred: with the plugin loaded, its
 *               infer agrees), and decode -> encode gives the same bytes, as
 *               does .nnn -> JSON -> .nnn (inline, and with every float
 *               array in a .npy file);
 *   structural  nnn_model_decode fails with exactly the manifest's code, and
 *               its first problem has the manifest's code, path and offset;
 *               nnn_validate_bytes agrees: it fails, with the same first
 *               problem (its status is that of the first fatal problem, which
 *               comes later when it kept going past a soft one: counted);
 *   semantic    the file decodes, and nnn_validate_bytes reports the
 *               manifest's code, path and offset among its problems.
 *
 * conformance/kit_* run `nnnkit conformance` (the kit) over the core corpus:
 * every valid case validated with its input shape and run on the builtin
 * kernels; wrong kernels (tests/plugins/fixture.c) and wrong reference
 * commands failing it.
 *
 * conformance/core runs the core schema's corpus; conformance/plugin builds
 * the example plugin (examples/plugin-pool-swish) against this tree, loads
 * it, and runs the corpus of the schema its fragment extends.
 * Tests run from the project root (make test); NNN_BUILD names the build
 * folder (for the generated headers). Each test works in its own mkdtemp
 * folder, removed at the end.
 */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <nnn/context.h>
#include <nnn/file.h>
#include <nnn/validate.h>

#include "ctx.h"
#include "kit.h"
#include "manifest.h"
#include "shell.h"
#include "roundtrip.h"

#define GEN_LUA "lua5.4 gen/nnngen.lua"
#define PLUGIN_DIR "examples/plugin-pool-swish"

static char g_tmp[64];

static void cleanup(void)
{
	char cmd[128];
	if (g_tmp[0]) {
		snprintf(cmd, sizeof cmd, "rm -rf %s", g_tmp);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", g_tmp);
		g_tmp[0] = '\0';
	}
}

static const char *tmp(void)
{
	if (!g_tmp[0]) {
		strcpy(g_tmp, "/tmp/nnn-conf-XXXXXX");
		cr_assert_not_null(mkdtemp(g_tmp));
	}
	return g_tmp;
}

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static unsigned char *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	unsigned char *b = NULL;
	size_t n = 0, cap = 0, k;
	cr_assert_not_null(f, "cannot open %s", path);
	do {
		if (n == cap) {
			cap = cap ? 2 * cap : 4096;
			b = realloc(b, cap);
			cr_assert_not_null(b);
		}
		k = fread(b + n, 1, cap - n, f);
		n += k;
	} while (k > 0);
	fclose(f);
	*len = n;
	return b;
}

/* ---- one case ---- */

static bool same(const nnn_diag_t *d, const t_mcase_t *c)
{
	return strcmp(nnn_status_name(d->code), c->code) == 0 && strcmp(d->path, c->path) == 0 &&
	       (long long)d->offset == c->offset;
}

/* nnn_file_open (which reads the structure with pread, not through the
 * mapping) ends as nnn_model_decode of the bytes did: the same status and
 * problems, and a model that encodes to the same bytes. */
static bool file_agrees(const char *path, const unsigned char *buf, size_t len, const nnn_decode_opts_t *opts,
                        nnn_status_t sd, const nnn_diags_t *d, char *why, size_t size)
{
	nnn_diags_t fd;
	nnn_file_t *f;
	bool ok = true;
	nnn_diags_init(&fd);
	nnn_status_t sf = nnn_file_open(path, opts, &f, &fd);
	if (sf != sd || fd.n != d->n) {
		snprintf(why, size, "nnn_file_open: %s with %zu problems, from memory %s with %zu", nnn_status_name(sf),
		         fd.n, nnn_status_name(sd), d->n);
		ok = false;
	}
	for (size_t i = 0; ok && i < fd.n; i++)
		if (strcmp(fd.v[i].path, d->v[i].path) != 0 || fd.v[i].offset != d->v[i].offset ||
		    strcmp(fd.v[i].msg, d->v[i].msg) != 0) {
			snprintf(why, size, "nnn_file_open's problem %zu differs: %s @%llu: %s", i, fd.v[i].path,
			         (unsigned long long)fd.v[i].offset, fd.v[i].msg);
			ok = false;
		}
	if (ok && sf == NNN_OK) {
		unsigned char *enc = NULL;
		size_t elen = 0;
		if (nnn_model_encode(nnn_file_model(f), &enc, &elen, NULL) != NNN_OK || elen != len ||
		    memcmp(enc, buf, len) != 0) {
			snprintf(why, size, "the model nnn_file_open decoded does not encode to the file's bytes");
			ok = false;
		}
		free(enc);
	}
	nnn_file_close(f);
	nnn_diags_free(&fd);
	return ok;
}

/* Checks one case; on failure writes why into `why` and returns false. */
static bool run_case(const char *dir, const t_mcase_t *c, const nnn_ctx_t *ctx, char *why, size_t size,
                     size_t *status_differs)
{
	char path[600];
	size_t len;
	nnn_diags_t d, v;
	nnn_model_t *m = NULL;
	nnn_decode_opts_t opts = { .ctx = ctx };
	bool ok = true;

	snprintf(path, sizeof path, "%s/%s", dir, c->file);
	unsigned char *buf = read_all(path, &len);
	nnn_diags_init(&d);
	nnn_diags_init(&v);
	if (strcmp(nnn_status_name((nnn_status_t)c->number), c->code) != 0) {
		snprintf(why, size, "number %ld is %s, not %s", c->number, nnn_status_name((nnn_status_t)c->number),
		         c->code);
		ok = false;
	} else if (c->valid) {
		nnn_status_t sv = nnn_validate_bytes(buf, len, ctx, NULL, &v);
		nnn_status_t sd = nnn_model_decode(buf, len, &opts, &m, &d);
		unsigned char *enc = NULL;
		size_t elen = 0;
		if (sv != NNN_OK || v.n) {
			snprintf(why, size, "validate: %s, first %s at %s @%llu", nnn_status_name(sv),
			         v.n ? nnn_status_name(v.v[0].code) : "-", v.n ? v.v[0].path : "-",
			         v.n ? (unsigned long long)v.v[0].offset : 0ULL);
			ok = false;
		} else if (!c->has_input) {
			snprintf(why, size, "the manifest records no input shape for a valid case: %s", c->input_text);
			ok = false;
		} else if ((sv = nnn_validate_bytes(buf, len, ctx, &c->input, &v)) != NNN_OK || v.n) {
			snprintf(why, size, "validate --input-shape %s: %s, first %s at %s: %s", c->input_text,
			         nnn_status_name(sv), v.n ? nnn_status_name(v.v[0].code) : "-", v.n ? v.v[0].path : "-",
			         v.n ? v.v[0].msg : "-");
			ok = false;
		} else if (sd != NNN_OK) {
			snprintf(why, size, "decode: %s", nnn_status_name(sd));
			ok = false;
		} else if (!file_agrees(path, buf, len, &opts, sd, &d, why, size)) {
			ok = false;
		} else if (nnn_model_encode(m, &enc, &elen, &d) != NNN_OK) {
			snprintf(why, size, "encode failed");
			ok = false;
		} else if (elen != len || memcmp(enc, buf, len) != 0) {
			snprintf(why, size, "re-encoded to %zu bytes that differ from the %zu read", elen, len);
			ok = false;
		} else {
			char npy[128];
			snprintf(npy, sizeof npy, "%s/npy", tmp());
			ok = json_roundtrip(buf, len, ctx, NULL, 0, NULL, why, size) &&
			     json_roundtrip(buf, len, ctx, npy, 0, NULL, why, size);
		}
		free(enc);
	} else if (strcmp(c->kind, "structural") == 0) {
		nnn_status_t sd = nnn_model_decode(buf, len, &opts, &m, &d);
		nnn_status_t sv = nnn_validate_bytes(buf, len, ctx, NULL, &v);
		if (strcmp(nnn_status_name(sd), c->code) != 0 || d.n == 0 || !same(&d.v[0], c)) {
			snprintf(why, size, "decode: %s, first problem %s at \"%s\" @%llu; expected %s at \"%s\" @%lld",
			         nnn_status_name(sd), d.n ? nnn_status_name(d.v[0].code) : "-", d.n ? d.v[0].path : "-",
			         d.n ? (unsigned long long)d.v[0].offset : 0ULL, c->code, c->path, c->offset);
			ok = false;
		} else if (!file_agrees(path, buf, len, &opts, sd, &d, why, size)) {
			ok = false;
		} else if (sv == NNN_OK || v.n == 0 || !same(&v.v[0], c)) {
			snprintf(why, size, "decoder and validator disagree: validate %s, first problem %s at \"%s\" @%llu",
			         nnn_status_name(sv), v.n ? nnn_status_name(v.v[0].code) : "-", v.n ? v.v[0].path : "-",
			         v.n ? (unsigned long long)v.v[0].offset : 0ULL);
			ok = false;
		} else if (sv != sd) {
			/* Same first problem; the validator went on past it (it keeps going
			 * past problems that leave the framing intact) and returns the
			 * fatal problem it met later. Counted, not a failure. */
			(*status_differs)++;
		}
	} else {
		nnn_status_t sd = nnn_model_decode(buf, len, &opts, &m, &d);
		nnn_status_t sv = nnn_validate_bytes(buf, len, ctx, NULL, &v);
		bool found = false;
		for (size_t i = 0; i < v.n; i++)
			found |= same(&v.v[i], c);
		if (sd != NNN_OK) {
			snprintf(why, size, "decode: %s (first %s at \"%s\" @%llu), expected to decode", nnn_status_name(sd),
			         d.n ? nnn_status_name(d.v[0].code) : "-", d.n ? d.v[0].path : "-",
			         d.n ? (unsigned long long)d.v[0].offset : 0ULL);
			ok = false;
		} else if (!file_agrees(path, buf, len, &opts, sd, &d, why, size)) {
			ok = false;
		} else if (sv == NNN_OK || !found) {
			snprintf(why, size, "validate: %s with %zu problems (first %s at \"%s\" @%llu), none %s at \"%s\" @%lld",
			         nnn_status_name(sv), v.n, v.n ? nnn_status_name(v.v[0].code) : "-", v.n ? v.v[0].path : "-",
			         v.n ? (unsigned long long)v.v[0].offset : 0ULL, c->code, c->path, c->offset);
			ok = false;
		}
	}
	nnn_model_free(m);
	nnn_diags_free(&d);
	nnn_diags_free(&v);
	free(buf);
	return ok;
}

/* ---- a whole corpus ---- */

typedef struct tally {
	char klass[32];
	int pass, fail;
} tally_t;

static void run_corpus(const char *dir, const nnn_ctx_t *ctx, const char *label)
{
	t_manifest_t m = t_manifest_load(dir);
	const t_mcase_t *cs = m.cases;
	size_t n = m.n;
	tally_t t[32] = { 0 };
	size_t nt = 0, fails = 0, differs = 0;
	char why[1024];
	double t0 = now();

	cr_assert_gt(n, 100, "only %zu cases in %s", n, dir);
	for (size_t i = 0; i < n; i++) {
		size_t k = 0;
		while (k < nt && strcmp(t[k].klass, cs[i].klass) != 0)
			k++;
		if (k == nt) {
			cr_assert_lt(nt, 32);
			snprintf(t[nt++].klass, sizeof t[0].klass, "%s", cs[i].klass);
		}
		if (run_case(dir, &cs[i], ctx, why, sizeof why, &differs)) {
			t[k].pass++;
		} else {
			t[k].fail++;
			if (fails++ < 60)
				cr_log_error("%s: %s (%s): %s", label, cs[i].file, cs[i].tests, why);
		}
	}
	char line[2048];
	size_t k = 0;
	for (size_t i = 0; i < nt && k < sizeof line; i++)
		k += (size_t)snprintf(line + k, sizeof line - k, "%s%s %d", i ? ", " : "", t[i].klass, t[i].pass + t[i].fail);
	cr_log_info("%s: %zu cases (%s), %zu failed, run in %.2f s", label, n, line, fails, now() - t0);
	cr_log_info("%s: %zu structural cases where nnn_validate_bytes, past the same first problem, returns "
	            "the code of a later fatal one", label, differs);
	t_manifest_free(&m);
	cr_assert_eq(fails, 0, "%s: %zu of %zu conformance cases failed (listed above)", label, fails, n);
}

static void generate(const char *args, const char *dir)
{
	char cmd[1024], out[4096];
	double t0 = now();
	snprintf(cmd, sizeof cmd, GEN_LUA " %s --conformance %s", args, dir);
	cr_assert_eq(t_sh(out, sizeof out, "%s", cmd), 0, "%s: %s", cmd, out);
	cr_log_info("generated %s in %.2f s", dir, now() - t0);
}

Test(conformance, core, .fini = cleanup, .timeout = 600)
{
	char dir[128], dir2[128], a[512], b[512];
	snprintf(dir, sizeof dir, "%s/core", tmp());
	generate("schema/nnn.lua", dir);
	/* Deterministic: a second run gives the same bytes, file for file
	 * (compared here: no child process to trace under valgrind). */
	snprintf(dir2, sizeof dir2, "%s/again", tmp());
	generate("schema/nnn.lua", dir2);
	t_manifest_t m = t_manifest_load(dir);
	for (size_t i = 0; i <= m.n; i++) {
		const char *rel = i < m.n ? m.cases[i].file : "manifest.json";
		size_t la, lb;
		snprintf(a, sizeof a, "%s/%s", dir, rel);
		snprintf(b, sizeof b, "%s/%s", dir2, rel);
		unsigned char *x = read_all(a, &la), *y = read_all(b, &lb);
		cr_assert(la == lb && memcmp(x, y, la) == 0, "two generations differ in %s", rel);
		free(x);
		free(y);
	}
	t_manifest_free(&m);
	run_corpus(dir, NULL, "core");
}

Test(conformance, plugin, .fini = cleanup, .timeout = 600)
{
	char dir[128], cmd[2048], out[8192], so[160];
	const char *build = t_build_dir();
	const char *cc = getenv("CC") ? getenv("CC") : "cc";
	nnn_ctx_t *ctx;
	nnn_diags_t d;

	/* The plugin, built against this tree's headers and generator. */
	snprintf(cmd, sizeof cmd,
	         GEN_LUA " --plugin " PLUGIN_DIR "/schema.lua --c %s/poolswish_gen.c --h %s/poolswish_gen.h && "
	         "%s -std=c11 -O1 -fPIC -shared -fvisibility=hidden -Iruntime/include -I%s/gen -I%s -o %s/poolswish.so "
	         PLUGIN_DIR "/poolswish.c %s/poolswish_gen.c -lm",
	         tmp(), tmp(), cc, build, tmp(), tmp(), tmp());
	cr_assert_eq(t_sh(out, sizeof out, "%s", cmd), 0, "%s: %s", cmd, out);
	snprintf(so, sizeof so, "%s/poolswish.so", tmp());
	cr_assert_eq(nnn_ctx_new(&ctx, NULL), NNN_OK);
	nnn_diags_init(&d);
	cr_assert_eq(nnn_plugin_load(ctx, so, &d), NNN_OK, "%s", d.n ? d.v[0].msg : "");
	nnn_diags_free(&d);

	snprintf(dir, sizeof dir, "%s/plugin", tmp());
	generate("schema/nnn.lua --plugin " PLUGIN_DIR "/schema.lua", dir);
	/* The plugin's IDs bring their own cases. */
	snprintf(cmd, sizeof cmd, "grep -c 'maxpool' %s/manifest.json && grep -c 'swish' %s/manifest.json", dir, dir);
	cr_assert_eq(t_sh(out, sizeof out, "%s", cmd), 0, "no cases for the plugin's IDs");
	run_corpus(dir, ctx, "plugin");
	nnn_ctx_free(ctx);
}

/* ---- the kit: `nnnkit conformance` runs what it validates ---- */

static const char *fixture(const char *name)
{
	return t_fmt("%s/fixtures/%s.so", t_build_dir(), name);
}

/* The core corpus, generated into the test's folder. */
static const char *core_corpus(void)
{
	static char dir[128];
	snprintf(dir, sizeof dir, "%s/core", tmp());
	generate("schema/nnn.lua", dir);
	return dir;
}

/* Every valid case of the core corpus validates with its recorded input
 * shape and runs on the builtin kernels; no file is left in TMPDIR. */
Test(conformance, kit_runs_every_valid_core_case, .fini = cleanup, .timeout = 600)
{
	const char *dir = core_corpus();
	json_t *r;
	char out[256];
	long valid = t_kit_valid_cases(dir);
	cr_assert_eq(t_kit(&r, "TMPDIR=%s %s conformance --corpus %s", tmp(), nnnkit_bin(), dir), 0, "%s",
	             json_dumps(json_object_get(r, "failures"), 0));
	cr_assert_gt(valid, 40);
	cr_assert_eq(t_kit_count(r, "cases"), valid);
	cr_assert_eq(t_kit_count(r, "validated_with_input_shape"), valid);
	cr_assert_eq(t_kit_count(r, "run"), valid, "only %ld of %ld valid cases run", t_kit_count(r, "run"), valid);
	cr_assert_eq(t_kit_count(r, "not_run"), 0);
	/* the data-edge cases (NaN and infinities in tensors, extreme parameters) are run but not checked finite */
	cr_assert(t_kit_count(r, "checked_finite") > valid / 2 && t_kit_count(r, "checked_finite") < valid);
	json_decref(r);
	cr_assert_eq(t_sh(out, sizeof out, "ls %s | grep nnnconf", tmp()), 1, "left behind: %s", out);
}

/* Kernels that compute garbage, fill half their output or crash fail the
 * kit, case by case: the run goes on, and the invalid cases still pass.
 * The fixtures give Dense and Linear only: the other cases are not run. */
Test(conformance, kit_fails_wrong_kernels, .fini = cleanup, .timeout = 600)
{
	static const struct {
		const char *fixture, *result, *why;
	} wrong[] = {
		{ "nanfwd", "failed", "output [0, 0] is -nan, from finite inputs and parameters" },
		{ "shortfwd", "failed", "batch 1 (first sample) left 1 of the 2 values of its output [1, 2] unwritten, the first at [0, 1]" },
		/* killed by SIGSEGV, or (under AddressSanitizer, which catches it) exited with status 1 */
		{ "crashfwd", "crashed", " while running batch 1 (first sample)" },
	};
	const char *dir = core_corpus();
	for (size_t i = 0; i < sizeof wrong / sizeof wrong[0]; i++) {
		json_t *r;
		int st = t_kit(&r, "%s --no-default-plugins --plugin %s conformance --corpus %s", nnnkit_bin(),
		               fixture(wrong[i].fixture), dir);
		const char *why = t_kit_why(r, "valid/dense-linear.nnn");
		cr_assert_eq(st, 1, "%s: the kit passed a wrong kernel", wrong[i].fixture);
		cr_assert_not_null(why, "%s: valid/dense-linear.nnn passed", wrong[i].fixture);
		cr_assert(strstr(why, wrong[i].why), "%s: %s", wrong[i].fixture, why);
		cr_assert_gt(t_kit_count(r, "not_run"), 0, "conv cases have no kernel here");
		long bad = (long)json_integer_value(json_object_get(r, "failed")) +
		           (long)json_integer_value(json_object_get(r, "crashed"));
		cr_assert_eq(bad, (long)json_array_size(json_object_get(r, "failures")));
		cr_assert_leq(bad, t_kit_count(r, "run"), "%s: only run cases may fail", wrong[i].fixture);
		if (!strcmp(wrong[i].result, "crashed"))
			cr_assert_eq(json_integer_value(json_object_get(r, "crashed")), bad);
		json_decref(r);
	}
}

/* A reference command that fails, writes nothing, or another shape fails
 * every case it is asked about, saying why. */
Test(conformance, kit_reference_failures, .fini = cleanup, .timeout = 600)
{
	const char *dir = core_corpus();
	json_t *r;
	cr_assert_eq(t_kit(&r, "%s conformance --corpus %s --reference 'echo boom >&2; exit 3; : {model} {input} {output}'",
	                   nnnkit_bin(), dir), 1);
	cr_assert_str_eq(t_kit_why(r, "valid/dense-linear.nnn"),
	                 "the reference command exited with status 3; its stderr ends: boom");
	cr_assert_eq(t_kit_count(r, "compared"), 0);
	json_decref(r);
	cr_assert_eq(t_kit(&r, "%s conformance --corpus %s --reference 'true {model} {input} {output}'", nnnkit_bin(), dir), 1);
	cr_assert(strstr(t_kit_why(r, "valid/dense-linear.nnn"),
	                 "the reference command exited 0 but its output is missing or unreadable"));
	json_decref(r);
	/* The input for the output: right only where the model keeps the shape and values. */
	cr_assert_eq(t_kit(&r, "%s conformance --corpus %s --reference 'cp {input} {output} #{json}'", nnnkit_bin(), dir), 1);
	cr_assert_str_eq(t_kit_why(r, "valid/dense-linear.nnn"), "the reference's output has shape [2, 3], nnnkit's [2, 2]");
	cr_assert_null(t_kit_why(r, "valid/empty-layers.nnn"), "a model of no layers is its input");
	/* compared: the cases whose output has the input's shape */
	cr_assert(t_kit_count(r, "compared") >= 1 && t_kit_count(r, "compared") < t_kit_count(r, "checked_finite"));
	json_decref(r);
	/* Exit 77: the reference declines the case (a type it does not know): counted, neither compared nor failed. */
	cr_assert_eq(t_kit(&r, "%s conformance --corpus %s --reference 'echo no softmax here >&2; exit 77; : {model} "
	                   "{input} {output}'", nnnkit_bin(), dir), 0);
	cr_assert_eq(t_kit_count(r, "compared"), 0);
	cr_assert_eq(t_kit_count(r, "reference_declined"), t_kit_count(r, "checked_finite"));
	cr_assert_gt(t_kit_count(r, "reference_declined"), 0);
	json_decref(r);
}
