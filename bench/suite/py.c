/* py.c: the Python package's per-call cost (issue 18): nnnkit.Plan.run at
 * batch 1, 1 thread, against nnn_plan_run on the same file, for the
 * identity-like model (mkexample --net identity: a call's fixed cost) and the
 * example classifier. Target: Plan.run less than 5 us above the C call.
 *
 * nnn_plan_run is timed here, in the driver; Plan.run in a worker process,
 * bench/py_bench.py under /usr/bin/python3, with this build's libnnn
 * (NNN_LIBRARY) and the package of this tree. The worker first checks that
 * Plan.run gives nnn_plan_run's outputs on the same input, bit for bit (the
 * same library and kernels); then the two take turns, round after round, and
 * each round gives one difference of per-call times. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nnn/context.h>
#include <nnn/file.h>
#include <nnn/npy.h>
#include <nnn/run.h>

#include "bench.h"

#define TARGET_US 5.0
#define PAIRS 9 /* turns of each contender in a round */

/* nnn_plan_run here; in the worker Plan.run(x), Plan.run(x, out=y), and
 * nnn_plan_run called through ctypes with every argument made beforehand:
 * what the worker's process itself costs (a Python loop between calls, its
 * cache, the shared library), apart from Plan.run's own work. */
enum { P_C, P_PY, P_PY_OUT, P_RAW, P_COUNT };
static const char *const req[P_COUNT] = { NULL, "plan", "plan-out", "raw" };

typedef struct pcase {
	const char *what, *about, *shape; /* the row's case, the model, one input's shape */
	char path[BN_PATH];
	nnn_file_t *file;
	nnn_plan_t *plan;
	float *x, *y;
	worker_t w;
	long calls[P_COUNT];
	series_t s[P_COUNT], diff[P_COUNT]; /* per call; Plan.run minus nnn_plan_run, round by round */
	bool up;
} pcase_t;

static double time_who(pcase_t *k, int who, long n)
{
	return who == P_C ? bn_time_plan(k->plan, k->x, k->y, n) : bn_w_time(&k->w, "%s %ld", req[who], n);
}

/* Plans the model at batch 1, runs it once on a fixed input, writes both as
 * .npy files and starts the worker on the model; false (a note says why)
 * when any of it fails. */
static bool start(const config_t *c, table_t *t, const nnn_ctx_t *ctx, pcase_t *k, char **env)
{
	nnn_diags_t d;
	nnn_shape_t in;
	char buf[600], xp[BN_PATH + 32], yp[BN_PATH + 32], lib[BN_PATH + 32], reply[512] = "";
	nnn_run_opts_t ro = { .size = sizeof ro, .threads = 1 };
	bool good = false;

	nnn_diags_init(&d);
	if (!bn_parse_shape(k->shape, &in) || nnn_file_open(k->path, NULL, &k->file, &d) != NNN_OK ||
	    nnn_plan_new(ctx, nnn_file_model(k->file), &in, &ro, &k->plan, &d) != NNN_OK) {
		bn_note(t, "python: nnnkit cannot plan %s: %s", k->path, d.n ? nnn_diag_format(&d.v[0], buf, sizeof buf) : "?");
		goto out;
	}
	const nnn_model_t *m = nnn_file_model(k->file);
	int64_t nin = nnn_shape_numel(&in), nout = nnn_shape_numel(nnn_plan_shape(k->plan, m->layer_count - 1));
	if (!(k->x = malloc((size_t)nin * sizeof *k->x)) || !(k->y = malloc((size_t)nout * sizeof *k->y)))
		goto out;
	for (int64_t j = 0; j < nin; j++)
		k->x[j] = (float)(0.5 - 0.25 * (double)(j % 97) / 97.0);
	if (nnn_plan_run(k->plan, k->x, k->y, &d) != NNN_OK) {
		bn_note(t, "python: nnn_plan_run on %s: %s", k->path, d.n ? nnn_diag_format(&d.v[0], buf, sizeof buf) : "?");
		goto out;
	}
	snprintf(xp, sizeof xp, "%s/py-%s-x.npy", c->dir, k->what);
	snprintf(yp, sizeof yp, "%s/py-%s-y.npy", c->dir, k->what);
	if (nnn_npy_write_file(xp, &in, k->x, &d) != NNN_OK ||
	    nnn_npy_write_file(yp, nnn_plan_shape(k->plan, m->layer_count - 1), k->y, &d) != NNN_OK) {
		bn_note(t, "python: cannot write %s or %s", xp, yp);
		goto out;
	}
	snprintf(lib, sizeof lib, "%s/libnnn.so.1", c->build);
	char *argv[] = { (char *)c->python, (char *)c->pybench, (char *)"--worker", (char *)"--library", lib,
		         (char *)"--shape", (char *)k->shape, k->path, NULL };
	char name[64];
	snprintf(name, sizeof name, "%s: Python worker", k->what);
	if (!bn_w_spawn(&k->w, name, argv, env) || !bn_w_ready(&k->w)) {
		bn_note(t, "python: %s %s on %s did not start (%s): no Python figures", c->python, c->pybench, k->path,
		        k->w.hello[0] ? k->w.hello : "no answer");
	} else {
		char ask[2 * BN_PATH + 80];
		snprintf(ask, sizeof ask, "check %s %s", xp, yp);
		double w = bn_w_ask(&k->w, ask, reply, sizeof reply);
		good = w == 0;
		bn_note(t, "python: %s: Plan.run and nnn_plan_run differ by %s%s", k->what, w < 0 ? reply : w == 0 ? "0" : "",
		        w == 0 ? " (bit for bit the same)" : w < 0 ? ": not timed" : "more than 0: NOT the same computation, not timed");
	}
	unlink(xp);
	unlink(yp);
out:
	nnn_diags_free(&d);
	return good;
}

/* Calls so that a run lasts about `seconds`, from the time of one call. */
static long calls_for(double t, double seconds)
{
	long n = (long)(seconds / (t > 1e-8 ? t : 1e-8));
	return n < 10 ? 10 : n > 2000000 ? 2000000 : n;
}

bool bn_python(const config_t *c, table_t *t)
{
	pcase_t ks[] = {
		{ .what = "identity", .about = "Dense 1->1", .shape = "1" },
		{ .what = "example", .about = "example classifier", .shape = "28,28,1" },
	};
	enum { NK = sizeof ks / sizeof ks[0] };
	const char *section = "python, batch 1, 1 thread (time per call)";
	double run_s = c->quick ? 0.01 : 0.05, sec, mem;
	int rounds = c->quick ? 5 : 11;
	nnn_ctx_t *ctx = NULL;
	nnn_diags_t d;
	char buf[600];
	char **env = bn_env(c, 1);
	bool good = env != NULL;

	fprintf(stderr, "nnnbench: python\n");
	nnn_diags_init(&d);
	if (access(c->python, X_OK) != 0 || access(c->pybench, R_OK) != 0) {
		bn_note(t, "python: no %s or no %s: no Python rows", c->python, c->pybench);
		goto done;
	}
	if (good && (nnn_ctx_new(&ctx, &d) != NNN_OK || nnn_plugin_load(ctx, c->plugin, &d) != NNN_OK)) {
		fprintf(stderr, "nnnbench: python: %s\n", d.n ? nnn_diag_format(&d.v[0], buf, sizeof buf) : "no memory");
		good = false;
	}
	snprintf(ks[0].path, sizeof ks[0].path, "%s/py-identity.nnn", c->dir);
	snprintf(ks[1].path, sizeof ks[1].path, "%s", c->example);
	char *mk[] = { (char *)c->mkexample, (char *)"--net", (char *)"identity", ks[0].path, NULL };
	if (good && !bn_spawn(mk, env, NULL, &sec, &mem)) {
		fprintf(stderr, "nnnbench: %s --net identity %s failed\n", c->mkexample, ks[0].path);
		good = false;
	}
	for (int i = 0; i < NK && good; i++)
		ks[i].up = start(c, t, ctx, &ks[i], env);

	/* Calibrate (the second of two runs: the first warms up), then rounds. */
	for (int i = 0; i < NK && good; i++)
		for (int who = 0; who < P_COUNT && ks[i].up; who++) {
			double t1 = 0;
			for (int rep = 0; rep < 2 && t1 >= 0; rep++)
				t1 = time_who(&ks[i], who, 200) / 200;
			ks[i].up = t1 >= 0;
			ks[i].calls[who] = calls_for(t1, run_s);
		}
	for (int round = 0; round < rounds && good; round++) {
		fprintf(stderr, "nnnbench: python: round %d of %d\n", round + 1, rounds);
		for (int i = 0; i < NK; i++) {
			pcase_t *k = &ks[i];
			/* PAIRS short turns each; a round's figures are the medians of
			 * its turns, so that a burst of load on the shared machine moves
			 * one turn, not the round. */
			series_t per[P_COUNT] = { 0 }, diff[P_COUNT] = { 0 };
			for (int pair = 0; pair < PAIRS && k->up; pair++) {
				double s[P_COUNT];
				for (int j = 0; j < P_COUNT && k->up; j++) {
					int who = (round + pair + i + j) % P_COUNT;
					long n = k->calls[who] / PAIRS > 10 ? k->calls[who] / PAIRS : 10;
					s[who] = time_who(k, who, n) / (double)n;
					if (s[who] < 0) {
						bn_note(t, "python: %s: a timed run failed: its later rounds are left out", k->what);
						k->up = false;
					}
				}
				for (int who = 0; who < P_COUNT && k->up; who++) {
					bn_add(&per[who], s[who], 0);
					bn_add(&diff[who], s[who] - s[P_C], 0);
				}
			}
			for (int who = 0; who < P_COUNT && k->up; who++) {
				bn_add(&k->s[who], bn_stats(&per[who], U_S, 0).med, 0);
				if (who != P_C)
					bn_add(&k->diff[who], bn_stats(&diff[who], U_S, 0).med, 0);
			}
		}
	}
	if (good && ks[0].w.hello[0])
		bn_note(t, "python: workers: %s (%s %s, NNN_LIBRARY=%s/libnnn.so.1); Plan.run(x) allocates its output, "
		           "Plan.run(x, out=y) writes into y; each round takes %d turns of each, a difference per turn, "
		           "and its figures are the medians of its turns",
		        ks[0].w.hello + 6, c->python, c->pybench, c->build, PAIRS);
	for (int i = 0; i < NK && good; i++) {
		pcase_t *k = &ks[i];
		static const char *const above[P_COUNT] = { NULL, "Plan.run(x) above nnn_plan_run",
			                                    "Plan.run(x, out=y) above nnn_plan_run", NULL };
		for (int who = P_PY; who < P_COUNT; who++) {
			static const char *const fig[P_COUNT] = { NULL, "Plan.run(x)", "Plan.run(x, out=y)",
				                                  "ctypes nnn_plan_run (worker)" };
			char f[96];
			snprintf(f, sizeof f, "%s, %s", fig[who], k->about);
			row_t *r = bn_row(t, section, f, k->what, U_US);
			if (!r)
				break;
			r->fig = bn_stats(&k->s[who], U_US, 0);
			bn_ref(r, "nnn_plan_run (C)", bn_stats(&k->s[P_C], U_US, 0));
		}
		for (int who = P_PY; who <= P_PY_OUT; who++) {
			row_t *r = bn_row(t, section, above[who], k->what, U_US);
			if (!r)
				break;
			r->fig = bn_stats(&k->diff[who], U_US, 0);
			/* Issue 18: a Plan's per-call overhead at batch 1 under 5 us. */
			bn_target(r, T_BELOW, TARGET_US);
		}
	}
done:
	for (int i = 0; i < NK; i++) {
		bn_w_reap(&ks[i].w);
		nnn_plan_free(ks[i].plan);
		nnn_file_close(ks[i].file);
		free(ks[i].x);
		free(ks[i].y);
	}
	unlink(ks[0].path);
	nnn_ctx_free(ctx);
	nnn_diags_free(&d);
	bn_env_free(env);
	return good;
}
