/* infer.c: inference of the example classifier, nnnkit against PyTorch.
 *
 * Each contender runs in a worker process of its own thread count, with
 * that count in every thread variable of its environment (OpenBLAS reads
 * its own once, at load): nnnbench itself with --worker (nnn_plan_run on
 * the builtin plugin, and OpenBLAS sgemm as the machine's GEMM figure) and
 * bench/torch_bench.py --worker (the same weights in PyTorch). The driver
 * asks them in turn, "net BATCH CALLS", and each answers the seconds the
 * calls took; so every round times every contender under the same load.
 * After a contender ran more than one thread, the next one waits until
 * those threads have stopped spinning (OpenBLAS spins for about 0.1 s).
 */
#define _GNU_SOURCE
#include <cblas.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nnn/context.h>
#include <nnn/file.h>
#include <nnn/run.h>
#include <nnn/validate.h>

#include "bench.h"

#define GEMM_N 1024
#define SETTLE 0.15 /* seconds for idle threads to stop spinning */

/* ---- the worker: nnnbench --worker --threads T --model M --plugin P ---- */

typedef struct wplan {
	int batch;
	nnn_plan_t *plan;
	float *x, *y;
} wplan_t;

typedef struct wstate {
	nnn_ctx_t *ctx;
	nnn_file_t *file;
	int threads;
	wplan_t plans[8];
	int nplans;
	float *a, *b, *c; /* the GEMM's */
} wstate_t;

static wplan_t *plan_for(wstate_t *w, int batch)
{
	for (int i = 0; i < w->nplans; i++)
		if (w->plans[i].batch == batch)
			return &w->plans[i];
	if (w->nplans == 8 || batch < 1)
		return NULL;
	wplan_t *p = &w->plans[w->nplans];
	nnn_shape_t in = { .rank = 4, .dims = { batch, 28, 28, 1 } };
	nnn_run_opts_t o = { .size = sizeof o, .threads = w->threads };
	const nnn_model_t *m = nnn_file_model(w->file);
	if (nnn_plan_new(w->ctx, m, &in, &o, &p->plan, NULL) != NNN_OK)
		return NULL;
	size_t nx = (size_t)batch * 28 * 28, ny = (size_t)nnn_shape_numel(nnn_plan_shape(p->plan, m->layer_count - 1));
	p->x = malloc(nx * sizeof *p->x);
	p->y = malloc(ny * sizeof *p->y);
	if (!p->x || !p->y) {
		free(p->x);
		free(p->y);
		nnn_plan_free(p->plan);
		return NULL;
	}
	for (size_t i = 0; i < nx; i++)
		p->x[i] = (float)((i * 2654435761u) & 1023u) / 1024.0f; /* pixels in [0, 1) */
	p->batch = batch;
	w->nplans++;
	return p;
}

static double w_net(wstate_t *w, int batch, long calls)
{
	wplan_t *p = plan_for(w, batch);
	if (!p)
		return -1;
	double t0 = bn_now();
	for (long i = 0; i < calls; i++)
		if (nnn_plan_run(p->plan, p->x, p->y, NULL) != NNN_OK)
			return -1;
	return bn_now() - t0;
}

static double w_gemm(wstate_t *w, long calls)
{
	size_t n = (size_t)GEMM_N * GEMM_N;
	if (!w->a && (!(w->a = calloc(n, sizeof(float))) || !(w->b = calloc(n, sizeof(float))) ||
	              !(w->c = calloc(n, sizeof(float)))))
		return -1;
	double t0 = bn_now();
	for (long i = 0; i < calls; i++)
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, GEMM_N, GEMM_N, GEMM_N, 1.0f, w->a, GEMM_N, w->b,
		            GEMM_N, 0.0f, w->c, GEMM_N);
	return bn_now() - t0;
}

static void w_free(wstate_t *w)
{
	for (int i = 0; i < w->nplans; i++) {
		nnn_plan_free(w->plans[i].plan);
		free(w->plans[i].x);
		free(w->plans[i].y);
	}
	free(w->a);
	free(w->b);
	free(w->c);
	nnn_file_close(w->file);
	nnn_ctx_free(w->ctx);
}

int bn_worker_main(int argc, char **argv)
{
	const char *model = NULL, *plugin = NULL;
	wstate_t w = { .threads = 1 };
	char line[256];
	for (int i = 1; i + 1 < argc; i++) {
		if (!strcmp(argv[i], "--threads"))
			w.threads = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--model"))
			model = argv[++i];
		else if (!strcmp(argv[i], "--plugin"))
			plugin = argv[++i];
	}
	nnn_diags_t d;
	nnn_diags_init(&d);
	if (!model || !plugin || nnn_ctx_new(&w.ctx, &d) != NNN_OK || nnn_plugin_load(w.ctx, plugin, &d) != NNN_OK ||
	    nnn_file_open(model, NULL, &w.file, &d) != NNN_OK) {
		char buf[1024];
		printf("err cannot start: %s\n", d.n ? nnn_diag_format(&d.v[0], buf, sizeof buf) : "usage");
		nnn_diags_free(&d);
		w_free(&w);
		return 1;
	}
	nnn_diags_free(&d);
	printf("ready OpenBLAS %s, %d thread%s\n", openblas_get_corename(), openblas_get_num_threads(),
	       openblas_get_num_threads() > 1 ? "s" : "");
	fflush(stdout);
	while (fgets(line, sizeof line, stdin)) {
		int batch;
		long calls;
		double t = -1;
		if (sscanf(line, "net %d %ld", &batch, &calls) == 2)
			t = w_net(&w, batch, calls);
		else if (sscanf(line, "gemm %ld", &calls) == 1)
			t = w_gemm(&w, calls);
		else if (!strncmp(line, "quit", 4))
			break;
		if (t < 0)
			printf("err cannot do: %s", line);
		else
			printf("%.9f\n", t);
		fflush(stdout);
	}
	w_free(&w);
	return 0;
}

/* ---- the driver's side ---- */

typedef struct worker {
	char name[48];
	pid_t pid;
	FILE *to, *from;
	char hello[256];
	bool up;
} worker_t;

/* Starts argv with env; waits for its "ready" line. */
static bool w_start(worker_t *w, const char *name, char *const argv[], char **env)
{
	int in[2], out[2];
	memset(w, 0, sizeof *w);
	snprintf(w->name, sizeof w->name, "%s", name);
	/* Close-on-exec: no other child keeps this worker's pipes open. */
	if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0)
		return false;
	fflush(NULL);
	w->pid = fork();
	if (w->pid < 0)
		return false;
	if (w->pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[0]);
		close(in[1]);
		close(out[0]);
		close(out[1]);
		execve(argv[0], argv, env);
		printf("err cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	w->to = fdopen(in[1], "w");
	w->from = fdopen(out[0], "r");
	if (!w->to || !w->from)
		return false;
	w->up = fgets(w->hello, sizeof w->hello, w->from) && !strncmp(w->hello, "ready", 5);
	w->hello[strcspn(w->hello, "\n")] = '\0';
	if (!w->up)
		fprintf(stderr, "nnnbench: %s did not start: %s\n", name, w->hello[0] ? w->hello : "no answer");
	return w->up;
}

/* Seconds the request took, or -1 (and the worker is given up). */
static double w_time(worker_t *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static double w_time(worker_t *w, const char *fmt, ...)
{
	char reply[512];
	char *end;
	va_list ap;
	if (!w->up)
		return -1;
	va_start(ap, fmt);
	vfprintf(w->to, fmt, ap);
	va_end(ap);
	fputc('\n', w->to);
	fflush(w->to);
	if (!fgets(reply, sizeof reply, w->from)) {
		fprintf(stderr, "nnnbench: %s stopped answering\n", w->name);
		w->up = false;
		return -1;
	}
	double t = strtod(reply, &end);
	if (end == reply || t < 0) {
		fprintf(stderr, "nnnbench: %s: %s", w->name, reply);
		w->up = false;
		return -1;
	}
	return t;
}

/* The answer line of a request that is not timed. */
static bool w_ask(worker_t *w, const char *req, char *reply, size_t size)
{
	if (!w->up)
		return false;
	fprintf(w->to, "%s\n", req);
	fflush(w->to);
	if (!fgets(reply, (int)size, w->from))
		return false;
	reply[strcspn(reply, "\n")] = '\0';
	return true;
}

static void w_stop(worker_t *w)
{
	if (w->to) {
		fprintf(w->to, "quit\n");
		fclose(w->to);
	}
	if (w->from)
		fclose(w->from);
	if (w->pid > 0)
		while (waitpid(w->pid, NULL, 0) < 0 && errno == EINTR)
			;
	memset(w, 0, sizeof *w);
}

/* ---- the figures ---- */

typedef struct icase {
	int batch, threads;
	double target; /* nnnkit over PyTorch, images per second; 0: none */
	series_t nnn, torch;
	long calls_nnn, calls_torch;
} icase_t;

typedef struct contenders {
	worker_t nnn[2], torch[2]; /* by threads - 1 */
} contenders_t;

static void stop_all(contenders_t *k)
{
	for (int i = 0; i < 2; i++) {
		w_stop(&k->nnn[i]);
		w_stop(&k->torch[i]);
	}
}

static bool start_all(const config_t *c, contenders_t *k, bool torch)
{
	bool good = true;
	for (int t = 1; t <= 2 && good; t++) {
		char threads[8], name[48];
		char **env = bn_env(c, t);
		snprintf(threads, sizeof threads, "%d", t);
		char *nargv[] = { (char *)"/proc/self/exe", (char *)"--worker", (char *)"--threads", threads, (char *)"--model",
			          (char *)c->example, (char *)"--plugin", (char *)c->plugin, NULL };
		char *targv[] = { (char *)c->python, (char *)c->torch, (char *)"--worker", (char *)"--threads", threads,
			          (char *)"--shape", (char *)"28,28,1", (char *)c->example, NULL };
		char exe[4096];
		ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
		if (n > 0) {
			exe[n] = '\0';
			nargv[0] = exe;
		}
		snprintf(name, sizeof name, "nnnkit worker (%d thread%s)", t, t > 1 ? "s" : "");
		good = env && w_start(&k->nnn[t - 1], name, nargv, env);
		snprintf(name, sizeof name, "PyTorch worker (%d thread%s)", t, t > 1 ? "s" : "");
		if (good && torch)
			w_start(&k->torch[t - 1], name, targv, env);
		bn_env_free(env);
	}
	return good;
}

/* Calls per run of `batch` (0: the GEMM) so that a run lasts about
 * `seconds`; after a warm-up. 0 when the worker failed. */
static long calibrate(worker_t *w, int batch, double seconds)
{
	double t = 0;
	for (int i = 0; i < 2; i++)
		if ((t = batch ? w_time(w, "net %d 1", batch) : w_time(w, "gemm 1")) < 0)
			return 0;
	long n = (long)(seconds / (t > 1e-7 ? t : 1e-7));
	return n < 1 ? 1 : n > 1000000 ? 1000000 : n;
}

/* One timed run of a case's contender; false when it failed. */
static bool time_case(worker_t *w, icase_t *ic, bool torch)
{
	long calls = torch ? ic->calls_torch : ic->calls_nnn;
	if (!w->up || calls == 0)
		return false;
	double t = w_time(w, "net %d %ld", ic->batch, calls);
	if (t < 0)
		return false;
	bn_add(torch ? &ic->torch : &ic->nnn, t / (double)calls, 0);
	if (ic->threads > 1)
		bn_sleep(SETTLE);
	return true;
}

/* FLOPs of one image through the example: 2 x the multiply-adds of each
 * Conv (output positions x filters x taps) and Dense (inputs x neurons). */
static void add_flop(const nnn_layer_t *L, const nnn_shape_t *out, void *ctx)
{
	double *flop = ctx;
	if (L->id == NNN_LAYER_ID_CONV)
		*flop += 2.0 * (double)nnn_shape_numel(out) * L->body.conv.kernels.data.n / L->body.conv.filters;
	else if (L->id == NNN_LAYER_ID_DENSE)
		*flop += 2.0 * L->body.dense.weights.data.n;
}

static double flop_per_image(const config_t *c)
{
	double flop = 0;
	return bn_example_layers(c, 1, add_flop, &flop) ? flop : 0;
}

/* nnnkit's outputs on the 10,000 images (nnnkit run) against PyTorch's. */
static void check_torch(const config_t *c, contenders_t *k, table_t *t, bool *agree)
{
	char y[4200], req[9000], reply[512];
	double sec, mem;
	char **env = bn_env(c, 1);
	snprintf(y, sizeof y, "%s/y10k.npy", c->dir);
	char *argv[] = { (char *)c->nnnkit, (char *)"run", (char *)c->example, (char *)"--input", (char *)c->inputs,
		         (char *)"--output", y, NULL };
	*agree = false;
	if (env && bn_spawn(argv, env, NULL, &sec, &mem)) {
		snprintf(req, sizeof req, "check %s %s", c->inputs, y);
		if (w_ask(&k->torch[0], req, reply, sizeof reply)) {
			char *end;
			double diff = strtod(reply, &end);
			*agree = end != reply && diff <= 1e-4;
			bn_note(t, "PyTorch check: on the 10,000 images, its outputs and nnnkit run's differ by at most %s "
			           "(limit 1e-4)%s",
			        reply, *agree ? ": the same model" : ": NOT the same model, PyTorch ratios are left out");
		}
	}
	unlink(y);
	bn_env_free(env);
}

static void case_row(table_t *t, const icase_t *ic, const char *torch_name)
{
	char what[32], ref[96];
	snprintf(what, sizeof what, "batch %d", ic->batch);
	snprintf(ref, sizeof ref, "%s, %d thread%s", torch_name, ic->threads, ic->threads > 1 ? "s" : "");
	row_t *r = bn_row(t, ic->threads > 1 ? "inference, 2 threads" : "inference, 1 thread",
	                  "nnnkit (nnn_plan_run, builtin plugin)", what, U_IMGS);
	if (!r)
		return;
	r->fig = bn_stats(&ic->nnn, U_IMGS, ic->batch);
	bn_ref(r, ref, bn_stats(&ic->torch, U_IMGS, ic->batch));
	if (ic->target > 0)
		bn_target(r, T_RATIO_MIN, ic->target);
}

static const icase_t *find(const icase_t *cs, int ncase, int batch, int threads)
{
	for (int i = 0; i < ncase; i++)
		if (cs[i].batch == batch && cs[i].threads == threads)
			return &cs[i];
	return NULL;
}

static void rows(table_t *t, const icase_t *cs, int ncase, const series_t *gemm, double flop, const char *torch_name)
{
	const icase_t *one = find(cs, ncase, 64, 1), *two = find(cs, ncase, 64, 2), *big = find(cs, ncase, 1024, 1);
	row_t *r;
	for (int i = 0; i < ncase; i++)
		if (cs[i].threads == 1)
			case_row(t, &cs[i], torch_name);
	if (big && flop > 0 && (r = bn_row(t, "inference, 1 thread", "nnnkit GFLOP/s (conv + dense MACs x 2)",
	                                   "batch 1024", U_GFLOPS)) != NULL) {
		r->fig = bn_stats(&big->nnn, U_GFLOPS, flop * 1024);
		bn_ref(r, "OpenBLAS sgemm 1024^3, 1 thread", bn_stats(gemm, U_GFLOPS, 2.0 * GEMM_N * GEMM_N * GEMM_N));
	}
	for (int i = 0; i < ncase; i++)
		if (cs[i].threads > 1)
			case_row(t, &cs[i], torch_name);
	if (one && two && (r = bn_row(t, "inference, 2 threads", "nnnkit, 2 threads over 1", "batch 64", U_IMGS))) {
		r->fig = bn_stats(&two->nnn, U_IMGS, 64);
		bn_ref(r, "nnnkit, 1 thread", bn_stats(&one->nnn, U_IMGS, 64));
		bn_target(r, T_RATIO_MIN, 1.6);
	}
}

bool bn_infer(config_t *c, table_t *t)
{
	icase_t cs[] = {
		{ .batch = 1, .threads = 1, .target = 2.0 },   { .batch = 8, .threads = 1 },
		{ .batch = 64, .threads = 1, .target = 1.2 },  { .batch = 256, .threads = 1 },
		{ .batch = 1024, .threads = 1, .target = 1.2 }, { .batch = 64, .threads = 2, .target = 1.0 },
	};
	const int ncase = (int)(sizeof cs / sizeof cs[0]);
	contenders_t k;
	series_t gemm = { 0 };
	long gemm_calls;
	double run_s = c->quick ? 0.05 : 0.1;
	int rounds = c->quick ? 3 : 7;
	bool torch = access(c->python, X_OK) == 0, agree = false;
	char torch_name[96] = "PyTorch";

	memset(&k, 0, sizeof k);
	fprintf(stderr, "nnnbench: inference: starting the workers\n");
	if (!start_all(c, &k, torch)) {
		stop_all(&k);
		return false;
	}
	torch = k.torch[0].up && k.torch[1].up;
	if (torch) {
		char v[64] = "";
		sscanf(k.torch[0].hello, "ready torch %63s", v);
		snprintf(torch_name, sizeof torch_name, "PyTorch %s eager", v);
		check_torch(c, &k, t, &agree);
	} else {
		bn_note(t, "PyTorch: not installed (apt-get install python3-torch): no PyTorch figures, ratios \"-\"");
	}
	c->torch_ok = torch && agree;
	bn_note(t, "nnnkit workers: %s (1 thread); %s (2 threads)", k.nnn[0].hello + 6, k.nnn[1].hello + 6);
	if (c->torch_ok)
		bn_note(t, "PyTorch workers: %s (/usr/bin/python3, bench/torch_bench.py): eager nn.Sequential, "
		           "channels-last, torch.inference_mode(), torch.set_num_threads(T)",
		        k.torch[0].hello + 6);

	fprintf(stderr, "nnnbench: inference: calibrating\n");
	for (int i = 0; i < ncase; i++) {
		cs[i].calls_nnn = calibrate(&k.nnn[cs[i].threads - 1], cs[i].batch, run_s);
		if (c->torch_ok)
			cs[i].calls_torch = calibrate(&k.torch[cs[i].threads - 1], cs[i].batch, run_s);
		if (cs[i].threads > 1)
			bn_sleep(SETTLE);
	}
	gemm_calls = calibrate(&k.nnn[0], 0, run_s);
	bool good = gemm_calls > 0;
	for (int round = 0; round < rounds && good; round++) {
		fprintf(stderr, "nnnbench: inference: round %d of %d\n", round + 1, rounds);
		for (int i = 0; i < ncase && good; i++) {
			icase_t *ic = &cs[i];
			bool torch_first = (round + i) % 2;
			worker_t *wn = &k.nnn[ic->threads - 1], *wt = &k.torch[ic->threads - 1];
			if (c->torch_ok && torch_first)
				time_case(wt, ic, true);
			good = time_case(wn, ic, false);
			if (c->torch_ok && !torch_first)
				time_case(wt, ic, true);
		}
		double g = good ? w_time(&k.nnn[0], "gemm %ld", gemm_calls) : -1;
		if ((good = g >= 0))
			bn_add(&gemm, g / (double)gemm_calls, 0);
	}
	stop_all(&k);
	if (!good)
		return false;
	rows(t, cs, ncase, &gemm, flop_per_image(c), torch_name);
	return true;
}
