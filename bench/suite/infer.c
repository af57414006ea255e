/* infer.c: inference of the example classifier, nnnkit against PyTorch
 * and ONNX Runtime.
 *
 * Each contender runs in a worker process of its own thread count, with
 * that count in every thread variable of its environment (OpenBLAS reads
 * its own once, at load): nnnbench itself with --worker (nnn_plan_run on
 * the builtin plugin, and OpenBLAS sgemm as the machine's GEMM figure),
 * bench/torch_bench.py --worker (the same weights in PyTorch) and
 * bench/ort_bench.js --worker (ONNX Runtime on the model as
 * `nnnkit convert` exports it). The driver asks them in turn,
 * "net BATCH CALLS", and each answers the seconds the calls took; so every
 * round times every contender under the same load, in an order that
 * rotates from case to case and round to round. After a contender ran
 * more than one thread, the next one waits until those threads have
 * stopped spinning (OpenBLAS spins for about 0.1 s).
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
		/* A worker given up may have exited: writing to it would raise
		 * SIGPIPE here. Closing its stdin stops it all the same. */
		if (w->up)
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

/* The contenders, in the order of a round's first case. */
enum { K_NNN, K_TORCH, K_ORT, K_COUNT };

typedef struct icase {
	int batch, threads;
	double target; /* nnnkit over PyTorch, images per second; 0: none */
	series_t s[K_COUNT];
	long calls[K_COUNT];
} icase_t;

typedef struct contenders {
	worker_t w[K_COUNT][2]; /* by contender, then threads - 1 */
} contenders_t;

static void stop_all(contenders_t *k)
{
	for (int i = 0; i < K_COUNT; i++)
		for (int t = 0; t < 2; t++)
			w_stop(&k->w[i][t]);
}

/* env with NODE_PATH=value in front (and no other NODE_PATH): a new array
 * of env's own strings; free the array alone. */
static char **with_node_path(char **env, char *entry)
{
	size_t n = 0, k = 0;
	while (env[n])
		n++;
	char **e = calloc(n + 2, sizeof *e);
	if (!e)
		return NULL;
	e[k++] = entry;
	for (size_t i = 0; i < n; i++)
		if (strncmp(env[i], "NODE_PATH=", 10))
			e[k++] = env[i];
	return e;
}

static bool start_all(const config_t *c, contenders_t *k, bool torch, bool ort)
{
	bool good = true;
	char node_path[BN_PATH + 32];
	snprintf(node_path, sizeof node_path, "NODE_PATH=%s/node_modules", c->ort_dir);
	for (int t = 1; t <= 2 && good; t++) {
		char threads[8], name[48];
		char **env = bn_env(c, t);
		snprintf(threads, sizeof threads, "%d", t);
		char *nargv[] = { (char *)"/proc/self/exe", (char *)"--worker", (char *)"--threads", threads, (char *)"--model",
			          (char *)c->example, (char *)"--plugin", (char *)c->plugin, NULL };
		char *targv[] = { (char *)c->python, (char *)c->torch, (char *)"--worker", (char *)"--threads", threads,
			          (char *)"--shape", (char *)"28,28,1", (char *)c->example, NULL };
		char *oargv[] = { (char *)c->node, (char *)c->ort, (char *)"--worker", (char *)"--threads", threads,
			          (char *)"--shape", (char *)"28,28,1", (char *)c->onnx, NULL };
		char exe[4096];
		ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
		if (n > 0) {
			exe[n] = '\0';
			nargv[0] = exe;
		}
		snprintf(name, sizeof name, "nnnkit worker (%d thread%s)", t, t > 1 ? "s" : "");
		good = env && w_start(&k->w[K_NNN][t - 1], name, nargv, env);
		snprintf(name, sizeof name, "PyTorch worker (%d thread%s)", t, t > 1 ? "s" : "");
		if (good && torch)
			w_start(&k->w[K_TORCH][t - 1], name, targv, env);
		snprintf(name, sizeof name, "ONNX Runtime worker (%d thread%s)", t, t > 1 ? "s" : "");
		char **oenv = good && ort ? with_node_path(env, node_path) : NULL;
		if (oenv)
			w_start(&k->w[K_ORT][t - 1], name, oargv, oenv);
		free(oenv);
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

/* One timed run of a case's contender `who`; false when it failed. */
static bool time_case(worker_t *w, icase_t *ic, int who)
{
	long calls = ic->calls[who];
	if (!w->up || calls == 0)
		return false;
	double t = w_time(w, "net %d %ld", ic->batch, calls);
	if (t < 0)
		return false;
	bn_add(&ic->s[who], t / (double)calls, 0);
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

#define AGREE 1e-4 /* largest difference from nnnkit run's outputs */
#define TEXT(x) #x
#define TEXT_OF(x) TEXT(x)

/* Asks a contender's 1-thread worker for its largest difference from y on
 * the 10,000 images; notes it; true when within AGREE. */
static bool check_one(worker_t *w, table_t *t, const char *who, const config_t *c, const char *y)
{
	char req[9000], reply[512];
	snprintf(req, sizeof req, "check %s %s", c->inputs, y);
	if (!w_ask(w, req, reply, sizeof reply)) {
		bn_note(t, "%s check: no answer: %s figures are left out", who, who);
		return false;
	}
	char *end;
	double diff = strtod(reply, &end);
	bool agree = end != reply && diff <= AGREE;
	if (end == reply)
		bn_note(t, "%s check: it could not classify the 10,000 images (%s): %s figures are left out", who, reply, who);
	else
		bn_note(t,
		        "%s check: on the 10,000 images, its outputs and nnnkit run's differ by at most %s "
		        "(limit " TEXT_OF(AGREE) ")%s",
		        who, reply, agree ? ": the same model" : ": NOT the same model, its figures are left out");
	return agree;
}

/* nnnkit's outputs on the 10,000 images (nnnkit run) against each
 * contender's; agree[who] says which may be shown. */
static void check_outputs(const config_t *c, contenders_t *k, table_t *t, bool agree[K_COUNT])
{
	char y[4200];
	double sec, mem;
	char **env = bn_env(c, 1);
	snprintf(y, sizeof y, "%s/y10k.npy", c->dir);
	char *argv[] = { (char *)c->nnnkit, (char *)"run", (char *)c->example, (char *)"--input", (char *)c->inputs,
		         (char *)"--output", y, NULL };
	if (env && bn_spawn(argv, env, NULL, &sec, &mem)) {
		if (k->w[K_TORCH][0].up)
			agree[K_TORCH] = check_one(&k->w[K_TORCH][0], t, "PyTorch", c, y);
		if (k->w[K_ORT][0].up)
			agree[K_ORT] = check_one(&k->w[K_ORT][0], t, "ONNX Runtime", c, y);
	}
	unlink(y);
	bn_env_free(env);
}

typedef struct names {
	char torch[64], ort[64]; /* "PyTorch 1.13.0a0 eager", "ONNX Runtime 1.30.0" */
} names_t;

static void case_row(table_t *t, const icase_t *ic, const names_t *nm)
{
	char what[32], ref[96];
	const char *th = ic->threads > 1 ? "s" : "";
	snprintf(what, sizeof what, "batch %d", ic->batch);
	row_t *r = bn_row(t, ic->threads > 1 ? "inference, 2 threads" : "inference, 1 thread",
	                  "nnnkit (nnn_plan_run, builtin plugin)", what, U_IMGS);
	if (!r)
		return;
	r->fig = bn_stats(&ic->s[K_NNN], U_IMGS, ic->batch);
	snprintf(ref, sizeof ref, "%s, %d thread%s", nm->torch, ic->threads, th);
	bn_ref(r, ref, bn_stats(&ic->s[K_TORCH], U_IMGS, ic->batch));
	snprintf(ref, sizeof ref, "%s, %d thread%s", nm->ort, ic->threads, th);
	bn_ref2(r, ref, bn_stats(&ic->s[K_ORT], U_IMGS, ic->batch));
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

static void rows(table_t *t, const icase_t *cs, int ncase, const series_t *gemm, double flop, const names_t *nm)
{
	const icase_t *one = find(cs, ncase, 64, 1), *two = find(cs, ncase, 64, 2), *big = find(cs, ncase, 1024, 1);
	row_t *r;
	for (int i = 0; i < ncase; i++)
		if (cs[i].threads == 1)
			case_row(t, &cs[i], nm);
	if (big && flop > 0 && (r = bn_row(t, "inference, 1 thread", "nnnkit GFLOP/s (conv + dense MACs x 2)",
	                                   "batch 1024", U_GFLOPS)) != NULL) {
		r->fig = bn_stats(&big->s[K_NNN], U_GFLOPS, flop * 1024);
		bn_ref(r, "OpenBLAS sgemm 1024^3, 1 thread", bn_stats(gemm, U_GFLOPS, 2.0 * GEMM_N * GEMM_N * GEMM_N));
	}
	for (int i = 0; i < ncase; i++)
		if (cs[i].threads > 1)
			case_row(t, &cs[i], nm);
	if (one && two && (r = bn_row(t, "inference, 2 threads", "nnnkit, 2 threads over 1", "batch 64", U_IMGS))) {
		r->fig = bn_stats(&two->s[K_NNN], U_IMGS, 64);
		bn_ref(r, "nnnkit, 1 thread", bn_stats(&one->s[K_NNN], U_IMGS, 64));
		bn_target(r, T_RATIO_MIN, 1.6);
	}
}

/* The first line of `file` into buf ("" when there is none). */
static void first_line(const char *file, char *buf, size_t size)
{
	FILE *f = fopen(file, "r");
	buf[0] = '\0';
	if (f) {
		if (fgets(buf, (int)size, f))
			buf[strcspn(buf, "\n")] = '\0';
		fclose(f);
	}
}

/* Whether ONNX Runtime can be tried: node, onnxruntime-node in
 * BUILD/ort/node_modules, and the example exported to ONNX (written
 * here, by nnnkit convert). When not, a note says why. */
static bool ort_ready(const config_t *c, table_t *t)
{
	char pkg[BN_PATH + 64], why[BN_PATH + 128];
	snprintf(pkg, sizeof pkg, "%s/node_modules/onnxruntime-node/package.json", c->ort_dir);
	if (access(pkg, R_OK) != 0) {
		snprintf(pkg, sizeof pkg, "%s/missing", c->ort_dir);
		first_line(pkg, why, sizeof why); /* make ort's reason, when it failed */
		if (!why[0])
			snprintf(why, sizeof why, "no onnxruntime-node in %s/node_modules: make ort installs it", c->ort_dir);
		bn_note(t, "ONNX Runtime: not installed (%s): no ONNX Runtime figures, its ratios \"-\"", why);
		return false;
	}
	if (access(c->node, X_OK) != 0) {
		bn_note(t, "ONNX Runtime: node not found (%s; apt-get install nodejs): no ONNX Runtime figures, its ratios \"-\"",
		        c->node);
		return false;
	}
	double sec, mem;
	char **env = bn_env(c, 1);
	char *argv[] = { (char *)c->nnnkit, (char *)"convert", (char *)c->example, (char *)c->onnx, NULL };
	bool good = env && bn_spawn(argv, env, NULL, &sec, &mem);
	bn_env_free(env);
	if (!good)
		bn_note(t, "ONNX Runtime: nnnkit convert %s %s failed (run it to see why): no ONNX Runtime figures, its "
		           "ratios \"-\"",
		        c->example, c->onnx);
	return good;
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
	bool torch = access(c->python, X_OK) == 0, ort = ort_ready(c, t), agree[K_COUNT] = { true, false, false };
	bool ok[K_COUNT];
	names_t nm = { "PyTorch", "ONNX Runtime" };

	memset(&k, 0, sizeof k);
	fprintf(stderr, "nnnbench: inference: starting the workers\n");
	if (!start_all(c, &k, torch, ort)) {
		stop_all(&k);
		return false;
	}
	torch = k.w[K_TORCH][0].up && k.w[K_TORCH][1].up;
	if (ort && !(k.w[K_ORT][0].up && k.w[K_ORT][1].up)) {
		const char *h = k.w[K_ORT][0].up ? k.w[K_ORT][1].hello : k.w[K_ORT][0].hello;
		bn_note(t, "ONNX Runtime: its worker did not start (%s %s: %s): no ONNX Runtime figures, its ratios \"-\"",
		        c->node, c->ort, h[0] ? h : "no answer");
	}
	ort = ort && k.w[K_ORT][0].up && k.w[K_ORT][1].up;
	if (torch) {
		char v[40] = "";
		sscanf(k.w[K_TORCH][0].hello, "ready torch %39s", v);
		snprintf(nm.torch, sizeof nm.torch, "PyTorch %s eager", v);
	} else {
		bn_note(t, "PyTorch: not installed (apt-get install python3-torch): no PyTorch figures, ratios \"-\"");
	}
	if (ort) {
		char v[40] = "";
		sscanf(k.w[K_ORT][0].hello, "ready ort %39s", v);
		snprintf(nm.ort, sizeof nm.ort, "ONNX Runtime %s", v);
	}
	/* A worker that is down is asked nothing (check_outputs skips it). */
	if (!torch)
		for (int i = 0; i < 2; i++)
			w_stop(&k.w[K_TORCH][i]);
	if (!ort)
		for (int i = 0; i < 2; i++)
			w_stop(&k.w[K_ORT][i]);
	check_outputs(c, &k, t, agree);
	c->torch_ok = ok[K_TORCH] = torch && agree[K_TORCH];
	c->ort_ok = ok[K_ORT] = ort && agree[K_ORT];
	ok[K_NNN] = true;
	bn_note(t, "nnnkit workers: %s (1 thread); %s (2 threads)", k.w[K_NNN][0].hello + 6, k.w[K_NNN][1].hello + 6);
	if (c->torch_ok)
		bn_note(t, "PyTorch workers: %s (/usr/bin/python3, bench/torch_bench.py): eager nn.Sequential, "
		           "channels-last, torch.inference_mode(), torch.set_num_threads(T)",
		        k.w[K_TORCH][0].hello + 6);
	if (c->ort_ok)
		bn_note(t, "ONNX Runtime workers: %s (%s %s, onnxruntime-node from %s/node_modules) on the example as "
		           "nnnkit convert exports it (opset 13, channels-last input): CPU execution provider, "
		           "intraOpNumThreads T, interOpNumThreads 1, graphOptimizationLevel all, executionMode sequential%s",
		        k.w[K_ORT][0].hello + 6, c->node, c->ort, c->ort_dir,
		        c->keep_env ? "" : ", session.intra_op.allow_spinning 0 (as OMP_WAIT_POLICY=PASSIVE)");

	fprintf(stderr, "nnnbench: inference: calibrating\n");
	for (int i = 0; i < ncase; i++) {
		for (int who = 0; who < K_COUNT; who++) {
			if (!ok[who])
				continue;
			cs[i].calls[who] = calibrate(&k.w[who][cs[i].threads - 1], cs[i].batch, run_s);
			if (cs[i].threads > 1)
				bn_sleep(SETTLE);
		}
	}
	int order[K_COUNT], norder = 0;
	for (int who = 0; who < K_COUNT; who++)
		if (ok[who])
			order[norder++] = who;
	gemm_calls = calibrate(&k.w[K_NNN][0], 0, run_s);
	bool good = gemm_calls > 0;
	for (int round = 0; round < rounds && good; round++) {
		fprintf(stderr, "nnnbench: inference: round %d of %d\n", round + 1, rounds);
		for (int i = 0; i < ncase && good; i++) {
			icase_t *ic = &cs[i];
			/* Who goes first rotates from case to case and round to
			 * round: no contender always follows the same one. */
			for (int j = 0; j < norder && good; j++) {
				int who = order[(round + i + j) % norder];
				if (who == K_NNN)
					good = time_case(&k.w[K_NNN][ic->threads - 1], ic, K_NNN);
				else
					time_case(&k.w[who][ic->threads - 1], ic, who);
			}
		}
		double g = good ? w_time(&k.w[K_NNN][0], "gemm %ld", gemm_calls) : -1;
		if ((good = g >= 0))
			bn_add(&gemm, g / (double)gemm_calls, 0);
	}
	stop_all(&k);
	if (!good)
		return false;
	rows(t, cs, ncase, &gemm, flop_per_image(c), &nm);
	return true;
}
