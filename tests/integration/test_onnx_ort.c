/* test_onnx_ort.c: ONNX both ways, checked against outside truth (issue 16,
 * part 4; the tools: tests/lib/onnxtools.h).
 *
 * Export: `nnnkit convert M.nnn M.onnx` for the real files
 * (../shared/corpus/real, or $NNN_REAL_CORPUS), the example classifier
 * (mkexample, MNIST-shaped), every valid case of the conformance corpus
 * ($NNN_BUILD/conformance) and seeded random models (Dense and Conv 1-3D
 * chains, every activation, both padding types, Dense with and without
 * flatten); the real files and the example also with --input-shape (and
 * ONNX Runtime on 2 threads). Each exported file must pass onnx.checker
 * with full shape inference, run in ONNX Runtime, and give what `nnnkit
 * run` gives within the conformance runner's rule (|ort - nnnkit| <= 1e-5 *
 * (1 + |nnnkit|); a NaN matches a NaN, an infinity the same infinity). As the conformance
 * runner does, outputs are compared only for models whose parameters are
 * ordinary (finite, |v| <= 1e4): beyond that, overflow depends on the order
 * of the sums. Then `nnnkit convert M.onnx M2.nnn` must give back M.nnn
 * byte for byte. What ONNX cannot express (plugin IDs, a Conv of more than 3
 * spatial dims) must be refused with NNN_E_ONNX_EXPORT: counted, not run.
 * What a grown schema adds (tests/drills: a new layer, activation or
 * padding type) may be refused the same way, or exported and then checked
 * like the rest.
 *
 * Every conversion, either way, prints convert --verify's line (on by
 * default for ONNX: the source and the output read back run on seeded
 * inputs) with max abs error 0 and max rel error 0.
 *
 * Import: every graph tests/tools/torch_export.py writes with
 * torch.onnx.export (opsets 11, 13 and 17; NCHW and NHWC) is converted with
 * `nnnkit convert CASE.onnx CASE.nnn` (an NCHW graph with the one-line
 * channels-first note on stderr, any other with nothing else there than
 * the verify line, run on the input the graph declares), has one
 * layer per Conv or Linear module, and `nnnkit run` on the channels-last
 * input gives PyTorch's own output within the same rule.
 *
 * The tools themselves are checked first on a graph built with onnx.helper
 * whose outputs are worked out by hand (tools_agree_with_a_graph_worked_by_hand):
 * a failure there is in the tools or the installed ONNX Runtime.
 *
 * Each test skips, saying what is missing, when a tool it needs is not
 * installed (node and onnxruntime-node, python3-onnx, python3-torch). A test
 * over many cases checks them all and then fails listing every case that
 * failed. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nnn/file.h>
#include <nnn/model.h>
#include <nnn/npy.h>
#include <nnn/validate.h>

#include "blackbox.h"
#include "clirun.h"
#include "ctx.h"
#include "manifest.h"
#include "onnxtools.h"
#include "shell.h"
#include "tmpdir.h"
#include "verifyline.h"

#define TMP "nnn-onnxort-"
/* The conformance runner's rule, at the tolerance the issue sets. */
#define TOL 1e-5
/* Parameters beyond this (or not finite) make overflow legitimate
 * (runtime/cli/conformance_run.c, ORDINARY_MAX). */
#define ORDINARY_MAX 1e4f
#define BATCH 3

TestSuite(onnx_ort, .fini = t_tmpdir_remove);

/* ---- what is missing ---- */

enum { NEED_ORT = 1, NEED_CHECKER = 2, NEED_TORCH = 4 };

/* Skips the test, saying why, unless every tool in `need` can run. Called
 * before the temp folder exists: Criterion runs no fini after a skip. */
static void need(unsigned what)
{
	char why[2048];
	if ((what & NEED_ORT) && !ort_ready(why, sizeof why))
		cr_skip_test("%s", why);
	if ((what & NEED_CHECKER) && !onnx_checker_ready(why, sizeof why))
		cr_skip_test("onnx.checker cannot run: %s", why);
	if ((what & NEED_TORCH) && !torch_ready(why, sizeof why))
		cr_skip_test("torch.onnx.export cannot run: %s", why);
}

/* ---- failures of a test over many cases: all listed at the end ---- */

typedef struct tally {
	int cases, bad, refused, compared, not_compared;
	int verified;   /* conversions whose convert --verify line reports 0 and 0 */
	char last[128]; /* the last case that failed: a case with several failures counts once */
	char log[16384];
	size_t len;
} tally_t;

static void bad(tally_t *t, const char *name, const char *fmt, ...) NNN_PRINTF(3, 4);
static void bad(tally_t *t, const char *name, const char *fmt, ...)
{
	char msg[4096];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (strcmp(t->last, name)) {
		t->bad++;
		snprintf(t->last, sizeof t->last, "%s", name);
	}
	if (t->len + 64 < sizeof t->log) {
		int n = snprintf(t->log + t->len, sizeof t->log - t->len, "  %s: %s\n", name, msg);
		t->len = n > 0 && t->len + (size_t)n < sizeof t->log ? t->len + (size_t)n : sizeof t->log - 1;
	}
}

static void tally_end(const tally_t *t, const char *what)
{
	cr_log_info("%s: %d cases, %d refused as ONNX cannot express them, %d outputs compared, %d not compared "
	            "(parameters not ordinary), %d conversions verified (max abs and rel error 0), %d failed", what,
	            t->cases, t->refused, t->compared, t->not_compared, t->verified, t->bad);
	cr_assert_gt(t->cases, 0, "%s: no case ran", what);
	cr_assert_eq(t->bad, 0, "%s: %d of %d cases failed:\n%s", what, t->bad, t->cases, t->log);
}

/* convert's --verify line (on by default for ONNX) for OUT against IN in
 * its stderr: there, on 4 rows, and 0 and 0, as a round trip that gives
 * back the same model computes the same outputs (issue 33). */
static void verified(tally_t *t, const char *name, const char *err, const char *out, const char *in)
{
	t_verify_t v;
	if (!t_verify_line(err, out, in, &v))
		bad(t, name, "nnnkit convert %s %s printed no verify line: \"%s\"", in, out, err);
	else if (v.rows != 4 || v.abs != 0 || v.rel != 0)
		bad(t, name, "nnnkit convert %s %s: verify found max abs error %g, max rel error %g on %lld inputs %s: "
		    "expected 0 and 0 on 4", in, out, v.abs, v.rel, v.rows, v.input);
	else
		t->verified++;
}

/* ---- files ---- */

static unsigned char *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	unsigned char *b = NULL;
	size_t n = 0, cap = 0, k;
	if (!f)
		return NULL;
	do {
		if (n == cap) {
			cap = cap ? 2 * cap : 65536;
			unsigned char *nb = realloc(b, cap);
			cr_assert_not_null(nb);
			b = nb;
		}
		k = fread(b + n, 1, cap - n, f);
		n += k;
	} while (k > 0);
	fclose(f);
	*len = n;
	return b;
}

/* Whether two files hold the same bytes; else why. */
static bool same_bytes(const char *a, const char *b, char *why, size_t n)
{
	size_t la = 0, lb = 0;
	unsigned char *x = read_all(a, &la), *y = read_all(b, &lb);
	bool ok = x && y && la == lb && memcmp(x, y, la) == 0;
	if (!x || !y) {
		snprintf(why, n, "cannot read %s", x ? b : a);
	} else if (!ok) {
		size_t i = 0;
		while (i < la && i < lb && x[i] == y[i])
			i++;
		snprintf(why, n, "%s (%zu bytes) and %s (%zu bytes) differ first at byte %zu", a, la, b, lb, i);
	}
	free(x);
	free(y);
	return ok;
}

/* Compares two .npy files by the conformance runner's rule; else why. */
static bool same_outputs(const char *got_path, const char *want_path, const char *got_name, const char *want_name,
                         char *why, size_t n)
{
	nnn_npy_t got = { 0 }, want = { 0 };
	nnn_diags_t d;
	char s1[256], s2[256], buf[NNN_PATH_MAX + NNN_MSG_MAX + 64];
	bool ok = false;
	nnn_diags_init(&d);
	if (nnn_npy_read_file(got_path, &got, &d) != NNN_OK || nnn_npy_read_file(want_path, &want, &d) != NNN_OK) {
		snprintf(why, n, "cannot read an output: %s", d.n ? nnn_diag_format(&d.v[0], buf, sizeof buf) : "?");
	} else if (got.shape.rank != want.shape.rank ||
	           memcmp(got.shape.dims, want.shape.dims, sizeof got.shape.dims[0] * (size_t)got.shape.rank)) {
		snprintf(why, n, "%s gives shape %s, %s %s", got_name, nnn_shape_format(&got.shape, s1, sizeof s1),
		         want_name, nnn_shape_format(&want.shape, s2, sizeof s2));
	} else {
		double max_err = 0;
		int64_t first = -1;
		for (size_t i = 0; i < got.count; i++) {
			double g = got.data[i], w = want.data[i], e = fabs(g - w);
			bool same = (isnan(g) && isnan(w)) || (isinf(g) && g == w);
			if (isfinite(g) && isfinite(w) && e > max_err)
				max_err = e;
			if (!same && !(e <= TOL * (1 + fabs(w))) && first < 0)
				first = (int64_t)i;
		}
		ok = first < 0;
		if (!ok)
			snprintf(why, n, "%s and %s differ: first at flat index %lld: %.9g vs %.9g (max abs error %.3g, "
			         "tolerance %g * (1 + |%s|))", got_name, want_name, (long long)first, (double)got.data[first],
			         (double)want.data[first], max_err, TOL, want_name);
	}
	nnn_npy_free(&got);
	nnn_npy_free(&want);
	nnn_diags_free(&d);
	return ok;
}

/* Seeded inputs in [-1, 1). */
static uint32_t lcg(uint32_t *s)
{
	return *s = *s * 1664525u + 1013904223u;
}

static void write_input(const char *path, const nnn_shape_t *shape, uint32_t seed)
{
	int64_t count = 1;
	for (int32_t i = 0; i < shape->rank; i++)
		count *= shape->dims[i];
	float *x = malloc((size_t)(count ? count : 1) * sizeof *x);
	cr_assert_not_null(x);
	for (int64_t i = 0; i < count; i++)
		x[i] = 2.0f * ((float)(lcg(&seed) >> 8) / (float)(1u << 24)) - 1.0f;
	nnn_diags_t d;
	nnn_diags_init(&d);
	cr_assert_eq(nnn_npy_write_file(path, shape, x, &d), NNN_OK, "%s: cannot write the input", path);
	nnn_diags_free(&d);
	free(x);
}

/* ---- what a model holds ---- */

typedef struct traits {
	bool expressible; /* every layer and activation core, every Conv of 1 to 3 spatial dims */
	bool ordinary;    /* every parameter finite and at most ORDINARY_MAX in magnitude */
	char why[256];    /* when not expressible: what */
} traits_t;

static bool ordinary_f32(float v)
{
	return isfinite(v) && fabsf(v) <= ORDINARY_MAX;
}

static bool ordinary_tensor(const nnn_tensor_t *t)
{
	int64_t n = nnn_tensor_numel(t);
	bool ok = true;
	float *v = malloc((size_t)(n ? n : 1) * sizeof *v);
	cr_assert_not_null(v);
	nnn_tensor_copy(t, v);
	for (int64_t i = 0; i < n && ok; i++)
		ok = ordinary_f32(v[i]);
	free(v);
	return ok;
}

static bool core_activation(uint8_t id)
{
	return id == NNN_ACTIVATION_ID_LINEAR || id == NNN_ACTIVATION_ID_SIGMOID || id == NNN_ACTIVATION_ID_TANH ||
	       id == NNN_ACTIVATION_ID_RELU || id == NNN_ACTIVATION_ID_LEAKY_RELU || id == NNN_ACTIVATION_ID_SOFTMAX;
}

static void model_traits(const nnn_model_t *m, traits_t *t)
{
	memset(t, 0, sizeof *t);
	t->expressible = t->ordinary = true;
	for (int32_t i = 0; i < m->layer_count; i++) {
		const nnn_layer_t *L = &m->layers[i];
		if (L->id != NNN_LAYER_ID_DENSE && L->id != NNN_LAYER_ID_CONV) {
			t->expressible = false;
			snprintf(t->why, sizeof t->why, "layers[%d]: layer ID %d is not one of the format's own", (int)i, L->id);
			return;
		}
		if (!core_activation(L->activation.id)) {
			t->expressible = false;
			snprintf(t->why, sizeof t->why, "layers[%d]: activation ID %d is not one of the format's own", (int)i,
			         L->activation.id);
			return;
		}
		if (L->id == NNN_LAYER_ID_CONV && L->body.conv.kernels.dims.n - 2 > 3) {
			t->expressible = false;
			snprintf(t->why, sizeof t->why, "layers[%d]: a Conv of %d spatial dims", (int)i,
			         (int)L->body.conv.kernels.dims.n - 2);
			return;
		}
		/* A padding type a grown schema adds (tests/drills): the export may or may not know it. */
		if (L->id == NNN_LAYER_ID_CONV && L->body.conv.padding_type != NNN_PADDING_TYPE_VALID &&
		    L->body.conv.padding_type != NNN_PADDING_TYPE_SAME) {
			t->expressible = false;
			snprintf(t->why, sizeof t->why, "layers[%d]: padding type %d is neither Valid nor Same", (int)i,
			         (int)L->body.conv.padding_type);
			return;
		}
		if (L->activation.id == NNN_ACTIVATION_ID_LEAKY_RELU && !ordinary_f32(L->activation.params.leaky_relu.tau))
			t->ordinary = false;
		const nnn_tensor_t *w = L->id == NNN_LAYER_ID_DENSE ? &L->body.dense.weights : &L->body.conv.kernels;
		if (!ordinary_tensor(&L->bias) || !ordinary_tensor(w))
			t->ordinary = false;
	}
}

/* ---- export -> onnx.checker, ONNX Runtime, nnnkit run, and back ---- */

/* One model through export: `name` for messages, `model` the .nnn file,
 * `input` its input shape (batch included), `threads` ONNX Runtime's;
 * `fixed`: export with --input-shape (the graph declares every dim), else
 * with what the layers fix and symbolic names for the rest. */
static void export_case(tally_t *t, const char *name, const char *model, const nnn_shape_t *input, uint32_t seed,
                        int threads, bool fixed)
{
	char dims[256] = "";
	for (int32_t i = 0, k = 0; fixed && i < input->rank && k < (int)sizeof dims - 24; i++)
		k += snprintf(dims + k, sizeof dims - (size_t)k, "%s%lld", i ? "," : "--input-shape ",
		              (long long)input->dims[i]);
	char onnx[512], back[512], x[512], y_ort[512], y_nnn[512], out[8192], why[2048];
	nnn_file_t *f;
	nnn_diags_t d;
	traits_t tr;
	run_t *r = malloc(sizeof *r);
	cr_assert_not_null(r);
	t->cases++;
	snprintf(onnx, sizeof onnx, "%s/%s.onnx", t_tmpdir(TMP), name);
	snprintf(back, sizeof back, "%s/%s.back.nnn", t_tmpdir(TMP), name);
	snprintf(x, sizeof x, "%s/%s.in.npy", t_tmpdir(TMP), name);
	snprintf(y_ort, sizeof y_ort, "%s/%s.ort.npy", t_tmpdir(TMP), name);
	snprintf(y_nnn, sizeof y_nnn, "%s/%s.nnnkit.npy", t_tmpdir(TMP), name);

	nnn_diags_init(&d);
	if (nnn_file_open(model, NULL, &f, &d) != NNN_OK) {
		/* An ID the core schema lacks: a plugin's, which export refuses without its hook. */
		memset(&tr, 0, sizeof tr);
		snprintf(tr.why, sizeof tr.why, "an ID no loaded type provides");
	} else {
		model_traits(nnn_file_model(f), &tr);
		nnn_file_close(f);
	}
	nnn_diags_free(&d);

	nnnkitf(r, "convert %s %s %s", dims, model, onnx);
	if (!tr.expressible) {
		/* Refused, saying so; a hook that does export it makes it an ordinary case. */
		if (r->code == 0) {
			tr.expressible = true;
			tr.ordinary = false;
		} else if (!strstr(r->err, nnn_status_str(NNN_E_ONNX_EXPORT)) && !strstr(r->err, "E_ONNX_EXPORT")) {
			bad(t, name, "%s: export should refuse it with E_ONNX_EXPORT (\"%s\"); it exited %d: %s", tr.why,
			    nnn_status_str(NNN_E_ONNX_EXPORT), r->code, r->err);
			goto done;
		} else {
			t->refused++;
			cr_log_info("%s: not exported, as ONNX cannot express it (%s)", name, tr.why);
			goto done;
		}
	} else if (r->code != 0) {
		bad(t, name, "nnnkit convert %s %s exited %d: %s", model, onnx, r->code, r->err);
		goto done;
	}
	verified(t, name, r->err, onnx, model);
	/* Past here each check runs even when one before failed: every failure of the case is listed. */
	if (onnx_check(onnx, out, sizeof out) != 0)
		bad(t, name, "onnx.checker refuses the export: %s", out);
	write_input(x, input, seed);
	nnnkitf(r, "run %s --input %s -o %s", model, x, y_nnn);
	if (r->code != 0) {
		bad(t, name, "nnnkit run exited %d: %s", r->code, r->err);
	} else if (ort_run(onnx, x, y_ort, threads, out, sizeof out) != 0) {
		bad(t, name, "ONNX Runtime cannot run the export: %s", out);
	} else if (tr.ordinary) {
		t->compared++;
		if (!same_outputs(y_ort, y_nnn, "ONNX Runtime", "nnnkit", why, sizeof why))
			bad(t, name, "%s", why);
	} else {
		t->not_compared++;
	}
	nnnkitf(r, "convert %s %s", onnx, back);
	if (r->code != 0) {
		bad(t, name, "the export does not import back: nnnkit convert %s %s exited %d: %s", onnx, back, r->code,
		    r->err);
		goto done;
	}
	verified(t, name, r->err, back, onnx);
	if (!same_bytes(model, back, why, sizeof why))
		bad(t, name, ".nnn -> .onnx -> .nnn is not byte-exact: %s", why);
done:
	free(r);
}

/* ---- the tools themselves, on a graph built by hand ---- */

/* y = relu(x W + b), W = [[1, -2], [0.5, 1], [-1, 3]], b = [0.25, -1], and a
 * graph whose Relu reads a tensor nothing makes. */
static const char HAND_GRAPH_PY[] =
	"import sys, numpy as np, onnx\n"
	"from onnx import helper as h, TensorProto as T, numpy_helper as nh\n"
	"W = np.array([[1, -2], [0.5, 1], [-1, 3]], np.float32)\n"
	"b = np.array([0.25, -1], np.float32)\n"
	"g = h.make_graph([h.make_node('Gemm', ['x', 'W', 'b'], ['g']), h.make_node('Relu', ['g'], ['y'])], 'dense',\n"
	"    [h.make_tensor_value_info('x', T.FLOAT, ['N', 3])], [h.make_tensor_value_info('y', T.FLOAT, ['N', 2])],\n"
	"    [nh.from_array(W, 'W'), nh.from_array(b, 'b')])\n"
	"m = h.make_model(g, opset_imports=[h.make_opsetid('', 13)])\n"
	"m.ir_version = 7\n"
	"onnx.save(m, sys.argv[1])\n"
	"bad = h.make_graph([h.make_node('Relu', ['nothing'], ['y'])], 'bad',\n"
	"    [h.make_tensor_value_info('x', T.FLOAT, ['N', 3])], [h.make_tensor_value_info('y', T.FLOAT, ['N', 3])])\n"
	"onnx.save(h.make_model(bad, opset_imports=[h.make_opsetid('', 13)]), sys.argv[2])\n";

/* ort_run.js and onnx_check.py against values worked out by hand: row 1:
 * relu(1 + 1 - 3 + 0.25, -2 + 2 + 9 - 1) = (0, 8); row 2: relu(-1 + 0 - 1 +
 * 0.25, 2 + 0 + 3 - 1) = (0, 4). A failure here is in the tools or the
 * installed ONNX Runtime, not in nnnkit. */
Test(onnx_ort, tools_agree_with_a_graph_worked_by_hand, .timeout = 120)
{
	char out[8192];
	nnn_npy_t y = { 0 };
	nnn_diags_t d;
	need(NEED_ORT | NEED_CHECKER);
	const char *py = t_tmppath(TMP, "hand.py"), *good = t_tmppath(TMP, "hand.onnx"),
		   *broken = t_tmppath(TMP, "broken.onnx"), *x = t_tmppath(TMP, "x.npy"), *yp = t_tmppath(TMP, "y.npy");
	FILE *f = fopen(py, "w");
	cr_assert_not_null(f);
	cr_assert_eq(fputs(HAND_GRAPH_PY, f) >= 0 && fclose(f) == 0, 1);
	cr_assert_eq(t_sh(out, sizeof out, "/usr/bin/python3 %s %s %s", py, good, broken), 0, "%s", out);

	cr_assert_eq(onnx_check(good, out, sizeof out), 0, "%s", out);
	cr_assert(strstr(out, "ir_version 7 opset ai.onnx:13"), "%s", out);
	cr_assert_eq(onnx_check(broken, out, sizeof out), 1, "the checker passes a Relu of nothing: %s", out);
	cr_assert(strstr(out, "nothing"), "the checker's message names the tensor: %s", out);

	const float xs[] = { 1, 2, 3, -1, 0, 1 }, want[] = { 0, 8, 0, 4 };
	nnn_shape_t shape = { .rank = 2, .dims = { 2, 3 } };
	nnn_diags_init(&d);
	cr_assert_eq(nnn_npy_write_file(x, &shape, xs, &d), NNN_OK);
	for (int threads = 1; threads <= 2; threads++) {
		cr_assert_eq(ort_run(good, x, yp, threads, out, sizeof out), 0, "%s", out);
		cr_assert_eq(nnn_npy_read_file(yp, &y, &d), NNN_OK, "ort_run.js wrote a .npy nnnkit cannot read");
		cr_assert_eq(y.shape.rank, 2);
		cr_assert_eq(y.shape.dims[0], 2);
		cr_assert_eq(y.shape.dims[1], 2);
		for (int i = 0; i < 4; i++)
			cr_assert_eq(y.data[i], want[i], "y[%d] = %.9g, by hand %g", i, (double)y.data[i], (double)want[i]);
		nnn_npy_free(&y);
	}
	/* Errors are a message and status 1: a missing model, an input of the wrong rank. */
	cr_assert_eq(ort_run(t_tmppath(TMP, "none.onnx"), x, yp, 1, out, sizeof out), 1, "%s", out);
	cr_assert(strstr(out, "none.onnx"), "%s", out);
	shape.rank = 1;
	shape.dims[0] = 6;
	cr_assert_eq(nnn_npy_write_file(x, &shape, xs, &d), NNN_OK);
	cr_assert_eq(ort_run(good, x, yp, 1, out, sizeof out), 1, "%s", out);
	cr_assert(strstr(out, "rank"), "%s", out);
	nnn_diags_free(&d);
}

/* ---- the real files ---- */

static const char *real_path(const char *name, char *buf, size_t size)
{
	const char *dir = getenv("NNN_REAL_CORPUS");
	snprintf(buf, size, "%s/%s", dir ? dir : "../shared/corpus/real", name);
	return buf;
}

Test(onnx_ort, export_real_files, .timeout = 600)
{
	static const char *const files[] = { "tictactoedemo.nnn", "2dmovedemo.nnn" };
	char path[512];
	if (access(real_path(files[0], path, sizeof path), R_OK) != 0)
		cr_skip_test("real corpus not found at %s: skipped (set NNN_REAL_CORPUS to run it)", path);
	need(NEED_ORT | NEED_CHECKER);
	tally_t *t = calloc(1, sizeof *t);
	cr_assert_not_null(t);
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		nnn_file_t *f;
		nnn_diags_t d;
		char name[64];
		real_path(files[i], path, sizeof path);
		nnn_diags_init(&d);
		cr_assert_eq(nnn_file_open(path, NULL, &f, &d), NNN_OK, "%s: %s", path, d.n ? d.v[0].msg : "");
		/* Dense first layers: the input is [batch, inputs]. */
		const nnn_layer_t *L0 = &nnn_file_model(f)->layers[0];
		cr_assert_eq(L0->id, NNN_LAYER_ID_DENSE);
		nnn_shape_t in = { .rank = 2, .dims = { BATCH, L0->body.dense.weights.dims.v[0] } };
		nnn_file_close(f);
		nnn_diags_free(&d);
		for (int threads = 1; threads <= 2; threads++) {
			snprintf(name, sizeof name, "%.*s-%dthreads%s", (int)strcspn(files[i], "."), files[i], threads,
			         threads == 2 ? "-fixed" : "");
			export_case(t, name, path, &in, 1000u + (uint32_t)i, threads, threads == 2);
		}
	}
	tally_end(t, "the real files");
	cr_assert_eq(t->compared, 4);
	free(t);
}

/* The MNIST-shaped example classifier mkexample writes (Conv 5x5 1->8, Conv
 * 5x5 8->16, Dense 6400->128 with flatten, Dense 128->10 softmax): the
 * issue's "mnistdemo-like" model. */
Test(onnx_ort, export_example_classifier, .timeout = 600)
{
	need(NEED_ORT | NEED_CHECKER);
	tally_t *t = calloc(1, sizeof *t);
	cr_assert_not_null(t);
	const char *model = t_tmppath(TMP, "example.nnn");
	cr_assert_eq(t_sh(NULL, 0, "%s/mkexample %s", t_build_dir(), model), 0, "%s/mkexample did not write %s",
	             t_build_dir(), model);
	nnn_shape_t in = { .rank = 4, .dims = { BATCH, 28, 28, 1 } };
	export_case(t, "example-1thread", model, &in, 7u, 1, false);
	export_case(t, "example-2threads-fixed", model, &in, 8u, 2, true);
	tally_end(t, "the example classifier");
	cr_assert_eq(t->compared, 2);
	free(t);
}

/* ---- the conformance corpus ---- */

/* Every valid case of the manifest ($NNN_BUILD/conformance), numbered in
 * the manifest's order: the number seeds the input and picks the half. */
static void export_conformance(int part)
{
	char dir[512], manifest[600];
	need(NEED_ORT | NEED_CHECKER);
	snprintf(dir, sizeof dir, "%s/conformance", t_build_dir());
	snprintf(manifest, sizeof manifest, "%s/manifest.json", dir);
	cr_assert_eq(access(manifest, R_OK), 0, "no conformance manifest at %s (make builds it)", manifest);
	t_manifest_t m = t_manifest_load(dir);
	const t_mcase_t **cs = malloc((m.n ? m.n : 1) * sizeof *cs);
	size_t n = 0;
	cr_assert_not_null(cs);
	for (size_t i = 0; i < m.n; i++) {
		if (!m.cases[i].valid)
			continue;
		cr_assert(m.cases[i].has_input, "a valid case without an input shape: %s", m.cases[i].file);
		cs[n++] = &m.cases[i];
	}
	tally_t *t = calloc(1, sizeof *t);
	cr_assert_not_null(t);
	cr_assert_gt(n, 0, "no valid case in %s", manifest);
	/* Under make valgrind every nnnkit is traced: one case in 12 there. */
	size_t step = t_under_valgrind() ? 12 : 2;
	for (size_t i = (size_t)part; i < n; i += step) {
		char path[1024], name[256];
		snprintf(path, sizeof path, "%s/%s", dir, cs[i]->file);
		/* "valid/dense-relu.nnn" -> "dense-relu" */
		const char *base = strrchr(cs[i]->file, '/') ? strrchr(cs[i]->file, '/') + 1 : cs[i]->file;
		snprintf(name, sizeof name, "%.*s", (int)strcspn(base, "."), base);
		nnn_shape_t in = cs[i]->input;
		/* The manifest's batch is 1: a batch of 3 shows rows mixed up. */
		if (in.rank > 0)
			in.dims[0] = BATCH;
		export_case(t, name, path, &in, 100u + (uint32_t)i, 1, false);
	}
	tally_end(t, part ? "conformance valid cases (odd)" : "conformance valid cases (even)");
	free(cs);
	t_manifest_free(&m);
	free(t);
}

/* Every valid case, in two halves that run in parallel. */
Test(onnx_ort, export_conformance_even, .timeout = 900)
{
	export_conformance(0);
}

Test(onnx_ort, export_conformance_odd, .timeout = 900)
{
	export_conformance(1);
}

/* ---- random models ---- */

#define RL 6 /* layers at most */

typedef struct rnet {
	nnn_model_t m;
	nnn_layer_t L[RL];
	int32_t dims[RL][2][6]; /* bias dims, weight or kernel dims */
	int32_t pads[RL][6];
	float *data[2 * RL];
	int ndata;
	char desc[64];
	nnn_shape_t in;
} rnet_t;

static int32_t pick(uint32_t *s, int32_t lo, int32_t hi)
{
	return lo + (int32_t)((lcg(s) >> 8) % (uint32_t)(hi - lo + 1));
}

static nnn_tensor_t rtensor(rnet_t *net, int32_t *dims, int32_t rank, float scale, uint32_t *s)
{
	nnn_tensor_t t = { 0 };
	int32_t n = 1;
	for (int32_t i = 0; i < rank; i++)
		n *= dims[i];
	float *v = malloc((size_t)n * sizeof *v);
	cr_assert_not_null(v);
	for (int32_t i = 0; i < n; i++)
		v[i] = scale * (2.0f * ((float)(lcg(s) >> 8) / (float)(1u << 24)) - 1.0f);
	net->data[net->ndata++] = v;
	t.dims.v = dims;
	t.dims.n = rank;
	t.requires_grad = (lcg(s) >> 16) & 1;
	t.data = nnn_f32s_view(v, n);
	return t;
}

static void rlayer_common(nnn_layer_t *L, int k, uint32_t seed, uint32_t *s)
{
	static const uint8_t acts[] = { NNN_ACTIVATION_ID_LINEAR, NNN_ACTIVATION_ID_SIGMOID, NNN_ACTIVATION_ID_TANH,
		                        NNN_ACTIVATION_ID_RELU, NNN_ACTIVATION_ID_LEAKY_RELU, NNN_ACTIVATION_ID_SOFTMAX };
	/* The seeds of one rank are 4 apart: seed / 4 walks every activation at every place. */
	L->activation.id = acts[(seed / 4 + (uint32_t)k) % 6];
	if (L->activation.id == NNN_ACTIVATION_ID_LEAKY_RELU)
		L->activation.params.leaky_relu.tau = (float)pick(s, 1, 50) / 100.0f;
	L->dropout = (float)pick(s, 0, 4) / 10.0f;
}

/* Seed s: s % 4 == 0 a Dense chain on [N, w]; else Convs of s % 4 spatial
 * dims (kernels 1 to 3 per axis, Valid or Same, 1 to 3 of them), then
 * maybe a Dense with flatten, or one on the last axis without (MatMul + Add
 * in ONNX), and maybe another Dense. */
static void random_net(rnet_t *net, uint32_t seed)
{
	uint32_t s = seed * 2654435761u + 1u;
	int32_t rank = (int32_t)(seed % 4), sp[3] = { 0 }, ch, k = 0;
	memset(net, 0, sizeof *net);
	if (rank == 0) {
		ch = pick(&s, 1, 8);
		net->in.rank = 2;
		net->in.dims[1] = ch;
	} else {
		net->in.rank = rank + 2;
		for (int32_t a = 0; a < rank; a++)
			net->in.dims[1 + a] = sp[a] = pick(&s, 2, 6);
		net->in.dims[rank + 1] = ch = pick(&s, 1, 3);
		int32_t convs = pick(&s, 1, 3);
		for (int32_t c = 0; c < convs; c++, k++) {
			nnn_layer_t *L = &net->L[k];
			int32_t f = pick(&s, 1, 4), same = (int32_t)((lcg(&s) >> 12) & 1);
			L->id = NNN_LAYER_ID_CONV;
			rlayer_common(L, k, seed, &s);
			net->dims[k][1][0] = f;
			for (int32_t a = 0; a < rank; a++) {
				/* a Valid kernel never larger than its axis */
				int32_t kk = pick(&s, 1, 3);
				if (!same && kk > sp[a])
					kk = sp[a];
				net->dims[k][1][1 + a] = kk;
				int32_t before = same ? (kk - 1) / 2 : 0, after = same ? (kk - 1) - before : 0;
				net->pads[k][2 * a] = before;
				net->pads[k][2 * a + 1] = after;
				sp[a] = same ? sp[a] : sp[a] - kk + 1;
			}
			net->dims[k][1][rank + 1] = ch;
			net->dims[k][0][0] = f;
			L->bias = rtensor(net, net->dims[k][0], 1, 0.5f, &s);
			L->body.conv.filters = f;
			L->body.conv.kernels = rtensor(net, net->dims[k][1], rank + 2, 0.5f, &s);
			L->body.conv.padding_type = same ? NNN_PADDING_TYPE_SAME : NNN_PADDING_TYPE_VALID;
			L->body.conv.padding_dims.v = net->pads[k];
			L->body.conv.padding_dims.n = 2 * rank;
			ch = f;
		}
	}
	/* Dense layers: 1 to 3 after nothing, 0 to 2 after Convs. */
	int32_t denses = rank == 0 ? pick(&s, 1, 3) : pick(&s, 0, 2);
	bool flat = rank == 0;
	for (int32_t j = 0; j < denses; j++, k++) {
		nnn_layer_t *L = &net->L[k];
		/* After Convs: flatten (all of [d.., C]) or not (the last axis only). */
		bool flatten = (lcg(&s) >> 12) & 1;
		int32_t inputs = ch;
		if (!flat && flatten) {
			for (int32_t a = 0; a < rank; a++)
				inputs *= sp[a];
			flat = true;
		}
		int32_t neurons = pick(&s, 1, 6);
		L->id = NNN_LAYER_ID_DENSE;
		rlayer_common(L, k, seed, &s);
		net->dims[k][0][0] = neurons;
		net->dims[k][1][0] = inputs;
		net->dims[k][1][1] = neurons;
		L->bias = rtensor(net, net->dims[k][0], 1, 0.5f, &s);
		L->body.dense.neurons = neurons;
		L->body.dense.weights = rtensor(net, net->dims[k][1], 2, 0.5f, &s);
		L->body.dense.flatten = flatten;
		ch = neurons;
	}
	snprintf(net->desc, sizeof net->desc, "random model, seed %u", (unsigned)seed);
	net->m.description.ptr = net->desc;
	net->m.description.len = (int32_t)strlen(net->desc);
	net->m.layer_count = k;
	net->m.layers = net->L;
	net->m.param_count = nnn_model_param_total(&net->m);
	net->in.dims[0] = BATCH;
}

static void rnet_free(rnet_t *net)
{
	for (int i = 0; i < net->ndata; i++)
		free(net->data[i]);
}

static void export_random(uint32_t first, uint32_t count)
{
	need(NEED_ORT | NEED_CHECKER);
	tally_t *t = calloc(1, sizeof *t);
	rnet_t *net = malloc(sizeof *net);
	cr_assert(t && net);
	/* Under make valgrind every nnnkit is traced: one seed in 8 there. */
	uint32_t step = t_under_valgrind() ? 8 : 1, ran = 0;
	for (uint32_t seed = first; seed < first + count; seed += step, ran++) {
		nnn_diags_t d;
		nnn_shape_t shapes[RL];
		char name[64], why[NNN_PATH_MAX + NNN_MSG_MAX + 64];
		random_net(net, seed);
		snprintf(name, sizeof name, "random-%u", (unsigned)seed);
		const char *path = t_tmppath(TMP, t_fmt("%s.nnn", name));
		nnn_diags_init(&d);
		/* The generator's own check: a model the format accepts, whole chain. */
		cr_assert_eq(nnn_model_validate(&net->m, &net->in, shapes, &d), NNN_OK, "%s: the generator made an invalid "
		             "model: %s", name, d.n ? nnn_diag_format(&d.v[0], why, sizeof why) : "");
		cr_assert_eq(nnn_model_write_file(&net->m, path, &d), NNN_OK, "%s: cannot write it", name);
		nnn_diags_free(&d);
		export_case(t, name, path, &net->in, seed, 1 + (int)(seed % 2), false);
		rnet_free(net);
	}
	tally_end(t, "random models");
	/* Random parameters are ordinary: every output compared. */
	cr_assert_eq(t->compared, (int)ran);
	free(net);
	free(t);
}

/* 48 seeds: each rank (Dense only, Conv 1-D, 2-D, 3-D) 12 times, each
 * activation at each layer place over the seeds; two tests that run in
 * parallel. */
Test(onnx_ort, export_random_models_a, .timeout = 900)
{
	export_random(1, 24);
}

Test(onnx_ort, export_random_models_b, .timeout = 900)
{
	export_random(25, 24);
}

/* A Conv of 4 spatial dims: valid .nnn, no ONNX runtime runs it; refused by
 * name, nothing written. Needs no outside tool. */
Test(onnx_ort, export_refuses_conv_of_4_spatial_dims)
{
	static int32_t bias_dims[] = { 2 }, k_dims[] = { 2, 1, 1, 1, 1, 3 }, pads[8] = { 0 };
	float bias[2] = { 0.5f, -0.5f }, k[6] = { 1, 2, 3, 4, 5, 6 };
	nnn_layer_t L = { 0 };
	nnn_model_t m = { 0 };
	nnn_diags_t d;
	run_t *r = malloc(sizeof *r);
	cr_assert_not_null(r);
	L.id = NNN_LAYER_ID_CONV;
	L.activation.id = NNN_ACTIVATION_ID_RELU;
	L.bias.dims.v = bias_dims;
	L.bias.dims.n = 1;
	L.bias.data = nnn_f32s_view(bias, 2);
	L.body.conv.filters = 2;
	L.body.conv.kernels.dims.v = k_dims;
	L.body.conv.kernels.dims.n = 6;
	L.body.conv.kernels.data = nnn_f32s_view(k, 6);
	L.body.conv.padding_type = NNN_PADDING_TYPE_VALID;
	L.body.conv.padding_dims.v = pads;
	L.body.conv.padding_dims.n = 8;
	m.layer_count = 1;
	m.layers = &L;
	m.param_count = nnn_model_param_total(&m);
	nnn_shape_t in = { .rank = 6, .dims = { 1, 2, 2, 2, 2, 3 } };
	const char *model = t_tmppath(TMP, "conv4d.nnn"), *onnx = t_tmppath(TMP, "conv4d.onnx");
	nnn_diags_init(&d);
	cr_assert_eq(nnn_model_validate(&m, &in, NULL, &d), NNN_OK, "a 4-D Conv is a valid .nnn model");
	cr_assert_eq(nnn_model_write_file(&m, model, &d), NNN_OK);
	nnn_diags_free(&d);
	nnnkitf(r, "convert %s %s", model, onnx);
	cr_assert_eq(r->code, 1, "exit %d: %s", r->code, r->err);
	cr_assert(strstr(r->err, nnn_status_str(NNN_E_ONNX_EXPORT)), "stderr: %s", r->err);
	cr_assert(strstr(r->err, "layers[0]"), "the layer's path is named: %s", r->err);
	cr_assert_neq(access(onnx, F_OK), 0, "nothing is written");
	free(r);
}

/* ---- torch.onnx.export -> import ---- */

typedef struct tcase {
	char name[128], onnx[160], in[160], out[160], layers[256];
	bool channels_first;
	int opset;
} tcase_t;

/* A string value of one manifest line (torch_export.py writes json.dumps
 * lines: no escapes in these values). */
static bool tfield(const char *line, const char *key, char *out, size_t n)
{
	char pat[64];
	snprintf(pat, sizeof pat, "\"%s\": \"", key);
	const char *p = strstr(line, pat);
	if (!p)
		return false;
	p += strlen(pat);
	snprintf(out, n, "%.*s", (int)strcspn(p, "\""), p);
	return true;
}

static size_t torch_cases(const char *dir, tcase_t **out)
{
	char path[512], line[4096];
	size_t n = 0, cap = 0;
	tcase_t *cs = NULL;
	snprintf(path, sizeof path, "%s/manifest.json", dir);
	FILE *f = fopen(path, "r");
	cr_assert_not_null(f, "torch_export.py wrote no %s", path);
	while (fgets(line, sizeof line, f)) {
		if (!strstr(line, "{\"case\": "))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			tcase_t *ncs = realloc(cs, cap * sizeof *cs);
			cr_assert_not_null(ncs);
			cs = ncs;
		}
		tcase_t *c = &cs[n++];
		memset(c, 0, sizeof *c);
		cr_assert(tfield(line, "case", c->name, sizeof c->name) && tfield(line, "onnx", c->onnx, sizeof c->onnx) &&
		          tfield(line, "input", c->in, sizeof c->in) && tfield(line, "output", c->out, sizeof c->out) &&
		          tfield(line, "layers", c->layers, sizeof c->layers), "bad manifest line: %s", line);
		c->channels_first = strstr(line, "\"channels_first\": true") != NULL;
		const char *op = strstr(line, "\"opset\": ");
		c->opset = op ? atoi(op + strlen("\"opset\": ")) : 0;
	}
	fclose(f);
	*out = cs;
	return n;
}

/* Layers the imported model must have: one per Conv or Linear module. */
static int32_t layers_expected(const char *modules)
{
	int32_t n = 0;
	for (const char *p = modules; *p; p += strcspn(p, " "), p += strspn(p, " "))
		if (!strncmp(p, "Conv", 4) || !strncmp(p, "Linear ", 7) || !strcmp(p, "Linear"))
			n++;
	return n;
}

static int lines_of(const char *text)
{
	int n = 0;
	for (const char *p = text; *p; p++)
		if (*p == '\n')
			n++;
	return n + (text[0] && text[strlen(text) - 1] != '\n');
}

static void import_case(tally_t *t, const char *dir, const tcase_t *c)
{
	char onnx[512], in[512], want[512], model[512], got[512], why[2048];
	nnn_file_t *f;
	nnn_diags_t d;
	run_t *r = malloc(sizeof *r);
	cr_assert_not_null(r);
	t->cases++;
	snprintf(onnx, sizeof onnx, "%s/%s", dir, c->onnx);
	snprintf(in, sizeof in, "%s/%s", dir, c->in);
	snprintf(want, sizeof want, "%s/%s", dir, c->out);
	snprintf(model, sizeof model, "%s/%s.nnn", dir, c->name);
	snprintf(got, sizeof got, "%s/%s.got.npy", dir, c->name);
	nnnkitf(r, "convert %s %s", onnx, model);
	if (r->code != 0) {
		bad(t, c->name, "nnnkit convert %s %s exited %d: %s", onnx, model, r->code, r->err);
		goto done;
	}
	/* The verify line (on by default for ONNX) is one line in either case. */
	if (c->channels_first && (lines_of(r->err) != 2 || !strstr(r->err, "channels-first"))) {
		bad(t, c->name, "a channels-first graph: stderr should have the one-line channels-first note "
		    "(docs/onnx.md) and the verify line, it has %d lines: \"%s\"", lines_of(r->err), r->err);
		goto done;
	}
	if (!c->channels_first && lines_of(r->err) != 1) {
		bad(t, c->name, "a channels-last graph: stderr should have the verify line alone, it has \"%s\"", r->err);
		goto done;
	}
	if (!strstr(r->err, "(the ONNX graph's input)"))
		bad(t, c->name, "verify should run on the input the graph declares: \"%s\"", r->err);
	verified(t, c->name, r->err, model, onnx);
	nnn_diags_init(&d);
	if (nnn_file_open(model, NULL, &f, &d) != NNN_OK) {
		bad(t, c->name, "the imported model does not decode: %s",
		    d.n ? nnn_diag_format(&d.v[0], why, sizeof why) : "?");
		nnn_diags_free(&d);
		goto done;
	}
	const nnn_model_t *m = nnn_file_model(f);
	int32_t layers = m->layer_count, expected = layers_expected(c->layers);
	bool dropout = false;
	for (int32_t i = 0; i < m->layer_count; i++)
		dropout |= m->layers[i].dropout == 0.25f;
	nnn_file_close(f);
	nnn_diags_free(&d);
	if (layers != expected) {
		bad(t, c->name, "%d layers imported from %s: expected %d (one per Conv and Linear)", (int)layers, c->layers,
		    (int)expected);
		goto done;
	}
	/* torch_export.py adds a Dropout node of ratio 0.25 to these: kept as the layer's dropout. */
	if (strstr(c->name, "_dropout_node_") && !dropout) {
		bad(t, c->name, "the graph's Dropout (ratio 0.25) is not kept as a layer's dropout");
		goto done;
	}
	nnnkitf(r, "run %s --input %s -o %s", model, in, got);
	if (r->code != 0) {
		bad(t, c->name, "nnnkit run exited %d: %s", r->code, r->err);
		goto done;
	}
	t->compared++;
	if (!same_outputs(got, want, "nnnkit", "PyTorch", why, sizeof why))
		bad(t, c->name, "%s", why);
done:
	free(r);
}

/* The cases of the nets whose names start with `nets` (space-separated). */
static void import_torch(const char *nets, size_t min_cases)
{
	char out[8192];
	tcase_t *cs;
	need(NEED_TORCH);
	const char *dir = t_tmppath(TMP, "torch");
	int st = torch_export_cases(dir, nets, out, sizeof out);
	cr_assert_eq(st, 0, "torch_export.py %s %s exited %d: %s", dir, nets, st, out);
	size_t n = torch_cases(dir, &cs);
	cr_assert_geq(n, min_cases, "torch_export.py wrote %zu cases for %s: expected at least %zu", n, nets, min_cases);
	tally_t *t = calloc(1, sizeof *t);
	cr_assert_not_null(t);
	/* Under make valgrind every nnnkit is traced (25 s for an MNIST case):
	 * one opset of three there (the graphs of the others differ only in
	 * Softmax's axis and Dropout's ratio), and of those one in 3. */
	if (t_under_valgrind())
		cr_log_info("under valgrind: one opset 13 graph in 3");
	for (size_t i = 0, k = 0; i < n; i++)
		if (!t_under_valgrind() || (cs[i].opset == 13 && k++ % 3 == 0))
			import_case(t, dir, &cs[i]);
	tally_end(t, t_fmt("torch.onnx.export graphs of %s", nets));
	free(cs);
	free(t);
}

/* Case counts written: nets x forms (NCHW, NHWC; one for flat nets) x 3 opsets. */
Test(onnx_ort, import_torch_conv1d, .timeout = 900)
{
	import_torch("conv1d", 5 * 2 * 3);
}

Test(onnx_ort, import_torch_conv2d, .timeout = 900)
{
	import_torch("conv2d", 11 * 2 * 3);
}

Test(onnx_ort, import_torch_conv3d, .timeout = 900)
{
	import_torch("conv3d", 5 * 2 * 3);
}

Test(onnx_ort, import_torch_linear, .timeout = 900)
{
	import_torch("linear mlp", (8 + 1 + 2) * 3);
}

/* The issue's own: a PyTorch CNN gives PyTorch's outputs from channels-last inputs. */
Test(onnx_ort, import_torch_mnist_cnn, .timeout = 900)
{
	import_torch("mnist", 2 * 3);
}
