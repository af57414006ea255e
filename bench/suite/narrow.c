/* narrow.c: nnnbench's "narrow" section: batch-1 inference of the example
 * classifier's Dense layers (6400 -> 128 relu -> 10 softmax: 3.3 MB of
 * float32 weights, streamed from cache at every call) with float32 weights
 * (Dense), float16 ones (DenseF16) and int8 ones with a float32 scale per
 * neuron (DenseI8), on 1 and 2 threads: what reading fewer bytes gains.
 *
 * DenseF16 and DenseI8 are growths (tests/drills/dense-f16, dense-i8), not
 * in the real schema: make bench builds a tree grown by them (bench/grow.sh)
 * and passes its build folder as --grown. Its nnnbench is the worker
 * (--worker: nnn_plan_run on the grown builtin plugin), its nnnkit writes
 * the three models (bench/narrow_models.py). Each model has a worker of each
 * thread count; every round times each worker once, in an order that
 * rotates from round to round, as infer.c does. The figure is calls per
 * second, the reference the float32 model's: the ratio is the speedup. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

enum { V_F32, V_F16, V_I8, V_COUNT };
static const char *const vname[V_COUNT] = { "f32", "f16", "i8" };
static const char *const vfigure[V_COUNT] = { "Dense, float32 weights", "DenseF16, float16 weights",
	                                      "DenseI8, int8 weights + float32 scales" };
static const int vwidth[V_COUNT] = { 4, 2, 1 };
#define I8_TARGET 1.5 /* DenseI8 over Dense at batch 1 on 1 thread (issue 30) */

typedef struct narrow {
	char nnnkit[BN_PATH], nnnbench[BN_PATH], plugin[BN_PATH];
	char model[V_COUNT][BN_PATH], shape[32], why[512];
	long weights, neurons;
	worker_t w[V_COUNT][2];
	long calls[V_COUNT][2];
	series_t s[V_COUNT][2];
} narrow_t;

/* The three models, written again when older than the grown nnnkit or
 * mkexample (the example's weights are the same at every run); false, with
 * n->why, when they cannot be. */
static bool narrow_models(const config_t *c, narrow_t *n)
{
	char out[BN_PATH + 16], line[512];
	long features = 0;
	bool fresh = true;
	snprintf(out, sizeof out, "%s/narrow.txt", c->dir);
	for (int v = 0; v < V_COUNT; v++) {
		snprintf(n->model[v], sizeof n->model[v], "%s/dense-%s.nnn", c->dir, vname[v]);
		fresh &= !bn_stale(n->model[v], n->nnnkit) && !bn_stale(n->model[v], c->mkexample);
	}
	if (!fresh || bn_stale(out, n->nnnkit)) {
		char *argv[] = { (char *)c->python, (char *)c->narrow_py, n->nnnkit, (char *)c->example, (char *)c->dir, NULL };
		char **env = bn_env(c, 1);
		double sec, mem;
		fprintf(stderr, "nnnbench: narrow: writing the models (%s)\n", c->narrow_py);
		bool ran = env && bn_spawn(argv, env, out, &sec, &mem);
		bn_env_free(env);
		if (!ran) {
			bn_first_line(out, line, sizeof line);
			snprintf(n->why, sizeof n->why, "%s %s failed: %.300s", c->python, c->narrow_py,
			         line[0] ? line : "no output");
			unlink(out);
			return false;
		}
	}
	bn_first_line(out, line, sizeof line);
	if (sscanf(line, "features=%ld weights=%ld neurons=%ld", &features, &n->weights, &n->neurons) != 3 ||
	    features < 1) {
		snprintf(n->why, sizeof n->why, "%.150s said '%.300s', not features=F weights=W neurons=N", out, line);
		return false;
	}
	snprintf(n->shape, sizeof n->shape, "%ld", features);
	return true;
}

static void stop_workers(narrow_t *n)
{
	for (int v = 0; v < V_COUNT; v++)
		for (int t = 0; t < 2; t++)
			bn_w_quit(&n->w[v][t]);
	for (int v = 0; v < V_COUNT; v++)
		for (int t = 0; t < 2; t++)
			bn_w_reap(&n->w[v][t]);
}

/* The workers started, ready and calibrated; false, with n->why, when one is not. */
static bool start_workers(const config_t *c, narrow_t *n, double run_s)
{
	for (int t = 1; t <= 2; t++) {
		char threads[12], name[48];
		char **env = bn_env(c, t);
		snprintf(threads, sizeof threads, "%d", t);
		for (int v = 0; v < V_COUNT && env; v++) {
			char *argv[] = { n->nnnbench, (char *)"--worker", (char *)"--threads", threads, (char *)"--model",
				         n->model[v], (char *)"--plugin", n->plugin, (char *)"--shape", n->shape, NULL };
			snprintf(name, sizeof name, "narrow %s worker (%d thread%s)", vname[v], t, t > 1 ? "s" : "");
			bn_w_spawn(&n->w[v][t - 1], name, argv, env);
		}
		bn_env_free(env);
	}
	for (int v = 0; v < V_COUNT; v++)
		for (int t = 0; t < 2; t++)
			if (!bn_w_ready(&n->w[v][t]) || !(n->calls[v][t] = bn_calibrate(&n->w[v][t], "net 1", run_s, NULL))) {
				snprintf(n->why, sizeof n->why, "%s did not start or failed: %.200s", n->w[v][t].name,
				         n->w[v][t].hello);
				return false;
			}
	return true;
}

static bool narrow_measure(const config_t *c, narrow_t *n)
{
	double run_s = c->quick ? 0.05 : 0.1;
	int rounds = c->quick ? 3 : 7;
	bool good = start_workers(c, n, run_s);
	for (int round = 0; round < rounds && good; round++) {
		fprintf(stderr, "nnnbench: narrow: round %d of %d\n", round + 1, rounds);
		for (int t = 0; t < 2 && good; t++)
			for (int j = 0; j < V_COUNT && good; j++) {
				int v = (round + t + j) % V_COUNT; /* no model always follows the same one */
				double s = bn_w_time(&n->w[v][t], "net 1 %ld", n->calls[v][t]);
				if ((good = s >= 0))
					bn_add(&n->s[v][t], s / (double)n->calls[v][t], 0);
				else
					snprintf(n->why, sizeof n->why, "%s failed", n->w[v][t].name);
			}
	}
	stop_workers(n);
	return good;
}

/* Bytes of parameters one call reads: weights, bias, and DenseI8's scales. */
static double call_bytes(const narrow_t *n, int v)
{
	return (double)n->weights * vwidth[v] + (double)n->neurons * 4 * (v == V_I8 ? 2 : 1);
}

static void narrow_rows(table_t *t, const narrow_t *n)
{
	static const char section[] = "inference, narrow weights: the example's Dense layers, batch 1";
	char what[32], ref[64], speeds[256] = "";
	for (int th = 1; th <= 2; th++) {
		stats_t f32 = bn_stats(&n->s[V_F32][th - 1], U_IMGS, 1);
		snprintf(what, sizeof what, "%d thread%s", th, th > 1 ? "s" : "");
		snprintf(ref, sizeof ref, "Dense float32, %d thread%s", th, th > 1 ? "s" : "");
		for (int v = 0; v < V_COUNT; v++) {
			row_t *r = bn_row(t, section, vfigure[v], what, U_IMGS);
			if (!r)
				return;
			r->fig = bn_stats(&n->s[v][th - 1], U_IMGS, 1);
			if (v != V_F32)
				bn_ref(r, ref, f32);
			if (v == V_I8 && th == 1)
				bn_target(r, T_RATIO_MIN, I8_TARGET);
		}
	}
	for (int v = 0, k = 0; v < V_COUNT; v++) {
		stats_t one = bn_stats(&n->s[v][0], U_IMGS, 1);
		k += snprintf(speeds + k, sizeof speeds - (size_t)k, "%s%s %.2f MB a call, %.1f GB/s", v ? "; " : "",
		              vname[v], call_bytes(n, v) / 1e6, call_bytes(n, v) * one.med / 1e9);
	}
	bn_note(t, "narrow weights: DenseF16 and DenseI8 are growths (tests/drills/dense-f16, dense-i8) that "
	           "bench/grow.sh applies to a copy of the tree; its nnnbench --worker runs the models "
	           "bench/narrow_models.py writes from the example's Dense layers (int8: scale = largest |w| of the "
	           "neuron / 127); calls per second, ratio = speedup over float32; parameters read on 1 thread: %s",
	        speeds);
}

bool bn_narrow(const config_t *c, table_t *t)
{
	static narrow_t n; /* large: the series */
	memset(&n, 0, sizeof n);
	if (!c->grown) {
		bn_note(t, "narrow weights: no grown tree (--grown DIR; make bench gives it): no DenseF16/DenseI8 rows");
		return true;
	}
	snprintf(n.nnnkit, sizeof n.nnnkit, "%s/nnnkit", c->grown);
	snprintf(n.nnnbench, sizeof n.nnnbench, "%s/nnnbench", c->grown);
	snprintf(n.plugin, sizeof n.plugin, "%s/plugins/builtin.so", c->grown);
	for (const char *p = n.nnnkit; p; p = p == n.nnnkit ? n.nnnbench : p == n.nnnbench ? n.plugin : NULL)
		if (access(p, R_OK) != 0) {
			bn_note(t, "narrow weights: %s is missing (bench/grow.sh builds it): no DenseF16/DenseI8 rows", p);
			return true;
		}
	fprintf(stderr, "nnnbench: narrow: the example's Dense layers, float32, float16, int8\n");
	if (!narrow_models(c, &n) || !narrow_measure(c, &n)) {
		bn_note(t, "narrow weights: %s: no DenseF16/DenseI8 rows", n.why);
		return true;
	}
	narrow_rows(t, &n);
	return true;
}
