/* test_origconv.c: files from the original Neural Network Notions framework
 * (docs/original-framework.md): its Conv's wrong kernel strides, reproduced
 * by `run`/`eval --conv-compat original` and noted by `validate` and `info`.
 *
 *   origconv/taps_*            nnn_conv_original_taps against tap counts
 *                              worked out by hand from the original's loop
 *   origconv/run_2d_by_hand    a 2x3 kernel through `nnnkit run`, against the
 *   origconv/run_3d_by_hand    sums written out by hand (and the spec's); 3x2x1
 *   origconv/run_*_reference   several filters and channels, against
 *                              tests/tools/orig_conv.py, which walks the
 *                              original's loop term by term in NumPy
 *   origconv/unaffected_*      equal sizes, 1-D and 1 x k: both modes agree
 *   origconv/note_*            validate and info note a kernel the original
 *                              computes differently, and only such a kernel
 *   origconv/bad_value         a bad --conv-compat is a usage error naming
 *                              the allowed values, for run and eval
 *   origconv/old_caller        an nnn_run_opts_t of a caller built before
 *                              `compat` runs the spec, whatever follows it
 *   origconv/relu_nan_and_dropout_as_the_original
 *                              what nnnkit already shares with the original:
 *                              ReLU(NaN) = 0 on every instruction set, dropout
 *                              ignored (docs/original-framework.md's table)
 *
 * The kernel weights are powers of ten, so a hand-computed output shows how
 * many times each tap was summed: digit d of the output is tap d's count
 * times its input value. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nnn/compat.h>
#include <nnn/npy.h>
#include <nnn/run.h>

#include "clirun.h"
#include "ctx.h"
#include "shell.h"

/* A one-Conv model: kernels [f, k0..k(n-1), c] holding w, bias b, no
 * padding, a linear activation. */
typedef struct conv {
	int32_t kd[NNN_MAX_RANK], pads[2 * NNN_MAX_RANK];
	int32_t n, f, c;
	const float *w, *b;
	nnn_layer_t L;
	nnn_model_t m;
} conv_t;

static int64_t numel(const int32_t *d, int32_t n)
{
	int64_t e = 1;
	for (int32_t i = 0; i < n; i++)
		e *= d[i];
	return e;
}

static void conv_make(conv_t *cv, int32_t f, int32_t n, const int32_t *k, int32_t c, const float *w, const float *b)
{
	memset(cv, 0, sizeof *cv);
	cv->n = n, cv->f = f, cv->c = c, cv->w = w, cv->b = b;
	cv->kd[0] = f;
	memcpy(cv->kd + 1, k, (size_t)n * sizeof *k);
	cv->kd[n + 1] = c;
	cv->L.id = NNN_LAYER_ID_CONV;
	cv->L.activation.id = NNN_ACTIVATION_ID_LINEAR;
	cv->L.bias.dims.v = cv->kd;
	cv->L.bias.dims.n = 1;
	cv->L.bias.data = nnn_f32s_view(b, f);
	cv->L.body.conv.filters = f;
	cv->L.body.conv.kernels.dims.v = cv->kd;
	cv->L.body.conv.kernels.dims.n = n + 2;
	cv->L.body.conv.kernels.data = nnn_f32s_view(w, (int32_t)numel(cv->kd, n + 2));
	cv->L.body.conv.padding_type = NNN_PADDING_TYPE_VALID;
	cv->L.body.conv.padding_dims.v = cv->pads;
	cv->L.body.conv.padding_dims.n = 2 * n;
	cv->m.magic = 776883790;
	cv->m.layer_count = 1;
	cv->m.layers = &cv->L;
	cv->m.param_count = nnn_model_param_total(&cv->m);
}

/* A fresh folder for one test. */
static const char *tmpdir(char *dir, size_t size)
{
	snprintf(dir, size, "/tmp/nnnorig.XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	return dir;
}

static void rmdir_all(const char *dir)
{
	cr_assert_eq(t_sh(NULL, 0, "rm -rf %s", dir), 0);
}

static void write_model(const conv_t *cv, const char *path)
{
	nnn_diags_t d;
	nnn_diags_init(&d);
	cr_assert_eq(nnn_model_write_file(&cv->m, path, &d), NNN_OK, "%s", d.n ? d.v[0].msg : "");
	nnn_diags_free(&d);
}

static void write_npy(const char *path, int32_t rank, const int64_t *dims, const float *v)
{
	nnn_shape_t s = { .rank = rank };
	memcpy(s.dims, dims, (size_t)rank * sizeof *dims);
	cr_assert_eq(nnn_npy_write_file(path, &s, v, NULL), NNN_OK, "%s", path);
}

/* `nnnkit run MODEL --input X --conv-compat MODE --output Y`, Y read back. */
static nnn_npy_t run_mode(const char *dir, const char *mode)
{
	run_t r;
	nnn_npy_t y;
	char args[1024], out[512];
	snprintf(out, sizeof out, "%s/y-%s.npy", dir, mode);
	snprintf(args, sizeof args, "run %s/m.nnn --input %s/x.npy --conv-compat %s --output %s", dir, dir, mode, out);
	nnnkit(&r, args);
	cr_assert_eq(r.code, 0, "%s: exit %d: %s", args, r.code, r.err);
	cr_assert_eq(nnn_npy_read_file(out, &y, NULL), NNN_OK);
	return y;
}

/* ---- the tap counts ---- */

Test(origconv, taps_2x3)
{
	/* strides (2, 1) where (3, 1) is right: q = 0..5 gives rows
	 * (q / 2) % 2 = 0 0 1 1 0 0 and columns q % 3 = 0 1 2 0 1 2 */
	const int32_t k[] = { 2, 3 };
	const uint32_t want[] = { 1, 2, 1, 1, 0, 1 };
	uint32_t mult[6];
	cr_assert_eq(nnn_conv_original_taps(2, k, mult), 1);
	for (int t = 0; t < 6; t++)
		cr_assert_eq(mult[t], want[t], "tap %d: %u, expected %u", t, mult[t], want[t]);
}

Test(origconv, taps_3x2x1)
{
	/* strides (6, 2, 1) where (2, 1, 1) is right: q = 0..5 gives
	 * (q / 6) % 3 = 0, (q / 2) % 2 = 0 0 1 1 0 0, q % 1 = 0 */
	const int32_t k[] = { 3, 2, 1 };
	const uint32_t want[] = { 4, 2, 0, 0, 0, 0 };
	uint32_t mult[6];
	cr_assert_eq(nnn_conv_original_taps(3, k, mult), 4);
	for (int t = 0; t < 6; t++)
		cr_assert_eq(mult[t], want[t], "tap %d: %u, expected %u", t, mult[t], want[t]);
}

Test(origconv, taps_unaffected)
{
	/* the claim: equal sizes, 1-D and 1 x k count every tap once */
	static const struct {
		int32_t n, k[3];
	} c[] = { { 1, { 5 } }, { 1, { 2 } }, { 2, { 3, 3 } }, { 2, { 1, 4 } }, { 2, { 1, 1 } }, { 3, { 2, 2, 2 } } };
	uint32_t mult[64];
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		cr_assert_eq(nnn_conv_original_taps(c[i].n, c[i].k, mult), 0, "case %zu", i);
		for (int64_t t = 0; t < numel(c[i].k, c[i].n); t++)
			cr_assert_eq(mult[t], 1, "case %zu, tap %lld", i, (long long)t);
	}
	/* and unequal ones do not: 3 x 1 (all on the first tap), 2 x 4, 5 x 2 */
	const int32_t k31[] = { 3, 1 }, k24[] = { 2, 4 }, k52[] = { 5, 2 };
	cr_assert_eq(nnn_conv_original_taps(2, k31, mult), 2);
	cr_assert_eq(mult[0], 3);
	cr_assert_gt(nnn_conv_original_taps(2, k24, mult), 0);
	cr_assert_gt(nnn_conv_original_taps(2, k52, mult), 0);
}

/* ---- run, by hand ---- */

static const float pow10s[] = { 1, 10, 100, 1000, 10000, 100000 };
static const float one_to_six[] = { 1, 2, 3, 4, 5, 6 };

/* One output value of a 6-tap kernel on an input of its own size, bias
 * 0.5: original and spec. */
static void by_hand(int32_t n, const int32_t *k, float want_original, float want_spec)
{
	char dir[64], p[128];
	const float bias[] = { 0.5f };
	int64_t xd[NNN_MAX_RANK] = { 1 };
	conv_t cv;
	tmpdir(dir, sizeof dir);
	conv_make(&cv, 1, n, k, 1, pow10s, bias);
	snprintf(p, sizeof p, "%s/m.nnn", dir);
	write_model(&cv, p);
	for (int32_t j = 0; j < n; j++)
		xd[1 + j] = k[j];
	xd[n + 1] = 1;
	snprintf(p, sizeof p, "%s/x.npy", dir);
	write_npy(p, n + 2, xd, one_to_six);
	nnn_npy_t yo = run_mode(dir, "original"), ys = run_mode(dir, "spec");
	cr_assert_eq(yo.count, 1);
	cr_assert_eq(ys.count, 1);
	cr_assert_eq(yo.data[0], want_original, "original: %.9g, expected %.9g", (double)yo.data[0],
	             (double)want_original);
	cr_assert_eq(ys.data[0], want_spec, "spec: %.9g, expected %.9g", (double)ys.data[0], (double)want_spec);
	nnn_npy_free(&yo);
	nnn_npy_free(&ys);
	rmdir_all(dir);
}

Test(origconv, run_2d_by_hand, .timeout = 60)
{
	/* kernel 2x3 [[1, 10, 100], [1000, 10000, 100000]] on [[1, 2, 3], [4, 5, 6]];
	 * the original sums tap (0,1) twice and tap (1,1) never:
	 * 1*1 + 2*2*10 + 3*100 + 4*1000 + 0*5*10000 + 6*100000 = 604341 */
	const int32_t k[] = { 2, 3 };
	by_hand(2, k, 604341.5f, 654321.5f);
}

Test(origconv, run_3d_by_hand, .timeout = 60)
{
	/* kernel 3x2x1 holding 1, 10, ..., 100000 on 1..6: the original sums tap
	 * 0 four times and tap 1 twice: 4*1*1 + 2*2*10 = 44 */
	const int32_t k[] = { 3, 2, 1 };
	by_hand(3, k, 44.5f, 654321.5f);
}

/* ---- run, against the NumPy walk of the original's loop ---- */

static uint32_t lcg(uint32_t *s)
{
	return *s = *s * 1664525u + 1013904223u;
}

static float *randoms(int64_t n, uint32_t seed)
{
	float *v = malloc((size_t)n * sizeof *v);
	cr_assert(v);
	for (int64_t i = 0; i < n; i++)
		v[i] = (float)(lcg(&seed) >> 8) / (float)(1u << 24) - 0.5f;
	return v;
}

/* One run's files: a fresh folder holding m.nnn, a one-Conv model of f
 * filters, kernel k and c channels, and x.npy, a batch of 2 inputs of
 * spatial size d; bias, inputs and weights are randoms() of seed[0],
 * seed[1] and seed[2]. */
typedef struct run_files {
	char dir[64];
	conv_t cv;
	float *w, *b, *x;
} run_files_t;

static void files_make(run_files_t *t, int32_t f, int32_t n, const int32_t *k, int32_t c, const int32_t *d,
                       const int32_t *same, const uint32_t seed[3])
{
	char p[128];
	int64_t xd[NNN_MAX_RANK] = { 2 };
	tmpdir(t->dir, sizeof t->dir);
	for (int32_t j = 0; j < n; j++)
		xd[1 + j] = d[j];
	xd[n + 1] = c;
	t->b = randoms(f, seed[0]);
	t->x = randoms(2 * c * numel(d, n), seed[1]);
	conv_make(&t->cv, f, n, k, c, NULL, t->b);
	t->w = randoms(numel(t->cv.kd, n + 2), seed[2]);
	conv_make(&t->cv, f, n, k, c, t->w, t->b);
	if (same) {
		t->cv.L.body.conv.padding_type = NNN_PADDING_TYPE_SAME;
		memcpy(t->cv.pads, same, 2 * (size_t)n * sizeof *same);
	}
	snprintf(p, sizeof p, "%s/m.nnn", t->dir);
	write_model(&t->cv, p);
	snprintf(p, sizeof p, "%s/x.npy", t->dir);
	write_npy(p, n + 2, xd, t->x);
}

static void files_free(run_files_t *t)
{
	free(t->w), free(t->b), free(t->x);
	rmdir_all(t->dir);
}

/* f filters, kernel k, c channels, on a batch of 2 inputs of spatial size
 * d, with padding type Valid, or Same with the padding dims `same`:
 * nnnkit --conv-compat original against orig_conv.py, and the spec against
 * it too (they must differ for the kernel to test anything). */
static void against_reference(int32_t f, int32_t n, const int32_t *k, int32_t c, const int32_t *d, const int32_t *same)
{
	if (t_sh(NULL, 0, "/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") != 0)
		cr_skip_test("numpy is not installed for /usr/bin/python3 (Debian: apt-get install python3-numpy): skipped");
	char p[128], log[4096], pads[128] = "";
	run_files_t t;
	int64_t kd[NNN_MAX_RANK], bd[1] = { f };
	files_make(&t, f, n, k, c, d, same, (const uint32_t[]){ 7, 11, 5 });
	for (int32_t j = 0; j < 2 * n; j++)
		snprintf(pads + strlen(pads), sizeof pads - strlen(pads), "%s%d", j ? "," : "", same ? (int)same[j] : 0);
	const char *dir = t.dir;
	for (int32_t j = 0; j < n + 2; j++)
		kd[j] = t.cv.kd[j];
	snprintf(p, sizeof p, "%s/k.npy", dir);
	write_npy(p, n + 2, kd, t.w);
	snprintf(p, sizeof p, "%s/b.npy", dir);
	write_npy(p, 1, bd, t.b);
	cr_assert_eq(t_sh(log, sizeof log, "/usr/bin/python3 tests/tools/orig_conv.py %s/k.npy %s/b.npy %s/x.npy %s %s/want.npy",
	                  dir, dir, dir, pads, dir),
	             0, "%s", log);
	nnn_npy_t want, yo = run_mode(dir, "original"), ys = run_mode(dir, "spec");
	snprintf(p, sizeof p, "%s/want.npy", dir);
	cr_assert_eq(nnn_npy_read_file(p, &want, NULL), NNN_OK);
	cr_assert_eq(yo.count, want.count);
	cr_assert_eq(ys.count, want.count);
	double worst = 0;
	for (size_t i = 0; i < want.count; i++) {
		cr_assert(fabsf(yo.data[i] - want.data[i]) <= 1e-5f * (1 + fabsf(want.data[i])),
		          "output %zu: nnnkit %.9g, the original's loop %.9g", i, (double)yo.data[i], (double)want.data[i]);
		worst = fmax(worst, fabs((double)ys.data[i] - want.data[i]));
	}
	cr_assert_gt(worst, 0.01, "the spec's convolution agrees with the original's: the kernel tests nothing");
	nnn_npy_free(&want);
	nnn_npy_free(&yo);
	nnn_npy_free(&ys);
	files_free(&t);
}

Test(origconv, run_2d_reference, .timeout = 120)
{
	const int32_t k[] = { 2, 4 }, d[] = { 5, 7 };
	against_reference(3, 2, k, 2, d, NULL);
}

Test(origconv, run_2d_5x2_reference, .timeout = 120)
{
	const int32_t k[] = { 5, 2 }, d[] = { 6, 4 };
	against_reference(2, 2, k, 3, d, NULL);
}

Test(origconv, run_3d_reference, .timeout = 120)
{
	const int32_t k[] = { 3, 2, 1 }, d[] = { 4, 3, 2 };
	against_reference(2, 3, k, 2, d, NULL);
}

/* Same padding: the original pads by the stored padding dims, which for a
 * valid file are Same's (total k - 1, before total / 2, after the rest):
 * [0, 1] for 2, [1, 2] for 4, [1, 1] for 3, [0, 0] for 1. */
Test(origconv, run_2d_same_reference, .timeout = 120)
{
	const int32_t k[] = { 2, 4 }, d[] = { 5, 7 }, same[] = { 0, 1, 1, 2 };
	against_reference(3, 2, k, 2, d, same);
}

Test(origconv, run_3d_same_reference, .timeout = 120)
{
	const int32_t k[] = { 3, 2, 1 }, d[] = { 4, 3, 2 }, same[] = { 1, 1, 0, 1, 0, 0 };
	against_reference(2, 3, k, 2, d, same);
}

/* ---- kernels the original computes as the spec does ---- */

static void unaffected(int32_t n, const int32_t *k, const int32_t *d)
{
	run_files_t t;
	files_make(&t, 3, n, k, 2, d, NULL, (const uint32_t[]){ 3, 4, 2 });
	nnn_npy_t yo = run_mode(t.dir, "original"), ys = run_mode(t.dir, "spec");
	cr_assert_eq(yo.count, ys.count);
	cr_assert_eq(memcmp(yo.data, ys.data, yo.count * sizeof *yo.data), 0, "the modes differ");
	nnn_npy_free(&yo);
	nnn_npy_free(&ys);
	files_free(&t);
}

Test(origconv, unaffected_equal, .timeout = 60)
{
	const int32_t k[] = { 3, 3 }, d[] = { 6, 5 };
	unaffected(2, k, d);
}

Test(origconv, unaffected_1d, .timeout = 60)
{
	const int32_t k[] = { 4 }, d[] = { 9 };
	unaffected(1, k, d);
}

Test(origconv, unaffected_1xk, .timeout = 60)
{
	const int32_t k[] = { 1, 3 }, d[] = { 4, 6 };
	unaffected(2, k, d);
}

Test(origconv, unaffected_3d_equal, .timeout = 60)
{
	const int32_t k[] = { 2, 2, 2 }, d[] = { 3, 4, 3 };
	unaffected(3, k, d);
}

/* ---- the note ---- */

/* validate and info on a model of kernel k: exit 0 both, and the note in
 * stderr exactly when `noted`. */
static void note(int32_t n, const int32_t *k, bool noted, const char *sizes)
{
	char dir[64], p[128], args[256];
	const float bias[] = { 0 };
	float w[64] = { 0 };
	conv_t cv;
	run_t r;
	tmpdir(dir, sizeof dir);
	conv_make(&cv, 1, n, k, 1, w, bias);
	snprintf(p, sizeof p, "%s/m.nnn", dir);
	write_model(&cv, p);
	static const char *cmds[] = { "validate", "validate --json", "info", "info --json" };
	for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
		bool json = strstr(cmds[i], "--json") != NULL;
		snprintf(args, sizeof args, "%s %s", cmds[i], p);
		nnnkit(&r, args);
		cr_assert_eq(r.code, 0, "%s: exit %d: %s", args, r.code, r.err);
		if (!noted) {
			cr_assert_null(strstr(r.err, "note:"), "%s: %s", args, r.err);
			cr_assert(!json || strstr(r.out, "\"notes\": []"), "%s: %s", args, r.out);
			continue;
		}
		if (json) {
			/* The note in the report too: "2x3" is "kernel": [2, 3]. */
			char kernel[64] = "";
			for (const char *c = sizes; *c; c++)
				strncat(kernel, *c == 'x' ? ", " : (char[]){ *c, 0 }, sizeof kernel - strlen(kernel) - 1);
			cr_assert_not_null(strstr(r.out, t_fmt("\"notes\": [\n  {\"path\": \"layers[0].kernels.dims\", "
			                                       "\"offset\": ")), "%s: %s", args, r.out);
			cr_assert_not_null(strstr(r.out, t_fmt("\"kernel\": [%s], \"taps\": ", kernel)), "%s: %s", args, r.out);
		}
		cr_assert_not_null(strstr(r.err, t_fmt("%s: note: layers[0].kernels.dims", p)), "%s: %s", args, r.err);
		cr_assert_not_null(strstr(r.err, t_fmt("spatial size %s", sizes)), "%s: %s", args, r.err);
		cr_assert_not_null(strstr(r.err, "--conv-compat original"), "%s: %s", args, r.err);
		cr_assert_null(strstr(r.out, "note:"), "%s: the note is on stdout: %s", args, r.out);
	}
	rmdir_all(dir);
}

Test(origconv, note_2x3, .timeout = 60)
{
	const int32_t k[] = { 2, 3 };
	note(2, k, true, "2x3");
}

Test(origconv, note_3x2x1, .timeout = 60)
{
	const int32_t k[] = { 3, 2, 1 };
	note(3, k, true, "3x2x1");
}

Test(origconv, note_absent_for_unaffected, .timeout = 60)
{
	const int32_t k33[] = { 3, 3 }, k1x4[] = { 1, 4 }, k5[] = { 5 };
	note(2, k33, false, NULL);
	note(2, k1x4, false, NULL);
	note(1, k5, false, NULL);
}

/* ---- the option ---- */

Test(origconv, bad_value, .timeout = 60)
{
	static const char *cmds[] = { "run m.nnn --input x.npy", "eval m.nnn --inputs x.npy --labels y.npy" };
	run_t r;
	char args[256];
	for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
		snprintf(args, sizeof args, "%s --conv-compat bogus", cmds[i]);
		nnnkit(&r, args);
		cr_assert_eq(r.code, 2, "%s: exit %d", args, r.code);
		cr_assert_not_null(strstr(r.err, "--conv-compat needs one of: original spec, not 'bogus'"), "%s: %s", args,
		                   r.err);
	}
	nnnkit(&r, "run --help");
	cr_assert_not_null(strstr(r.out, "--conv-compat original|spec"), "%s", r.out);
	nnnkit(&r, "eval --help");
	cr_assert_not_null(strstr(r.out, "--conv-compat original|spec"), "%s", r.out);
}

/* A caller built before `compat` existed passes a smaller size: whatever
 * memory follows its struct, it gets the spec. */
Test(origconv, old_caller)
{
	const int32_t k[] = { 2, 3 };
	const float bias[] = { 0 };
	nnn_shape_t in = { .rank = 4, .dims = { 1, 2, 3, 1 } };
	nnn_run_opts_t o = { .size = offsetof(nnn_run_opts_t, compat), .compat = NNN_COMPAT_CONV_ORIGINAL };
	nnn_ctx_t *ctx = t_ctx_with("plugins/builtin.so");
	nnn_diags_t d;
	conv_t cv;
	float y = 0;
	nnn_diags_init(&d);
	conv_make(&cv, 1, 2, k, 1, pow10s, bias);
	cr_assert_eq(nnn_model_run(ctx, &cv.m, &in, one_to_six, &y, NULL, &o, &d), NNN_OK, "%s", d.n ? d.v[0].msg : "");
	cr_assert_eq(y, 654321.0f, "%.9g", (double)y);
	o.size = sizeof o; /* and a caller of today that asks for it */
	cr_assert_eq(nnn_model_run(ctx, &cv.m, &in, one_to_six, &y, NULL, &o, &d), NNN_OK, "%s", d.n ? d.v[0].msg : "");
	cr_assert_eq(y, 604341.0f, "%.9g", (double)y);
	nnn_diags_free(&d);
	nnn_ctx_free(ctx);
}

/* ---- the original's other differences, which nnnkit shares ---- */

/* A Dense 1 -> 1 of weight 1, activation act, dropout p, run on NaN and
 * 3 (20 rows of each, so the vector paths see them too) on every
 * instruction set of the builtin plugin: ReLU gives 0 for NaN, as the
 * original's; dropout changes nothing. */
static void dense_1(const char *dir, uint8_t act, float p, const char *isa, float *nan_out, float *three_out)
{
	static const int32_t wd[] = { 1, 1 }, bd[] = { 1 };
	static const float one[] = { 1 }, zero[] = { 0 };
	float x[40];
	int64_t xd[2] = { 40, 1 };
	nnn_layer_t L = { .id = NNN_LAYER_ID_DENSE, .dropout = p };
	nnn_model_t m = { .magic = 776883790, .layer_count = 1, .layers = &L };
	char path[128], args[512], out[128], pre[64];
	nnn_npy_t y;
	run_t r;
	L.activation.id = act;
	L.bias.dims.v = bd, L.bias.dims.n = 1, L.bias.data = nnn_f32s_view(zero, 1);
	L.body.dense.neurons = 1;
	L.body.dense.weights.dims.v = wd, L.body.dense.weights.dims.n = 2;
	L.body.dense.weights.data = nnn_f32s_view(one, 1);
	m.param_count = nnn_model_param_total(&m);
	for (int i = 0; i < 40; i++)
		x[i] = i < 20 ? NAN : 3.0f;
	snprintf(path, sizeof path, "%s/d.nnn", dir);
	cr_assert_eq(nnn_model_write_file(&m, path, NULL), NNN_OK);
	snprintf(path, sizeof path, "%s/dx.npy", dir);
	write_npy(path, 2, xd, x);
	snprintf(out, sizeof out, "%s/dy.npy", dir);
	snprintf(pre, sizeof pre, "%s%s", isa[0] ? "NNN_BUILTIN_ISA=" : "", isa);
	snprintf(args, sizeof args, "run %s/d.nnn --input %s --output %s", dir, path, out);
	nnnkit_env(&r, pre, args);
	cr_assert_eq(r.code, 0, "%s: %s", args, r.err);
	cr_assert_eq(nnn_npy_read_file(out, &y, NULL), NNN_OK);
	for (int i = 1; i < 40; i++)
		cr_assert(memcmp(&y.data[i], &y.data[i < 20 ? 0 : 20], sizeof(float)) == 0, "%s %s: row %d", pre, args, i);
	*nan_out = y.data[0];
	*three_out = y.data[20];
	nnn_npy_free(&y);
}

Test(origconv, relu_nan_and_dropout_as_the_original, .timeout = 60)
{
	static const char *isas[] = { "generic", "avx2", "" };
	char dir[64];
	float n, t, n2, t2;
	tmpdir(dir, sizeof dir);
	for (size_t i = 0; i < sizeof isas / sizeof isas[0]; i++) {
		dense_1(dir, NNN_ACTIVATION_ID_RELU, 0, isas[i], &n, &t);
		cr_assert_eq(n, 0.0f, "%s: ReLU(NaN) is %g, the original's is 0", isas[i], (double)n);
		cr_assert_eq(t, 3.0f);
		dense_1(dir, NNN_ACTIVATION_ID_LINEAR, 0.5f, isas[i], &n2, &t2);
		cr_assert(isnan(n2));
		cr_assert_eq(t2, 3.0f, "%s: dropout 0.5 changed the output to %g", isas[i], (double)t2);
	}
	rmdir_all(dir);
}
