/* procs.c: nnnkit as a user runs it: whole processes, timed from fork to
 * wait4, their peak RSS from wait4's rusage.
 *
 *   info, validate   the 3 MiB example, against an empty process (/bin/true)
 *   run              10,000 images, against PyTorch doing the same job, and
 *                    against the same job in this process plus a process start
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nnn/context.h>
#include <nnn/file.h>
#include <nnn/npy.h>
#include <nnn/run.h>
#include <nnn/validate.h>

#include "bench.h"

bool bn_spawn(char *const argv[], char **env, const char *out, double *seconds, double *maxrss)
{
	struct rusage ru;
	int status;
	double t0 = bn_now();
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, "nnnbench: fork: %s\n", strerror(errno));
		return false;
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);
		int o = out ? open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644) : null;
		if (null < 0 || o < 0 || dup2(null, 0) < 0 || dup2(o, 1) < 0 || dup2(null, 2) < 0)
			_exit(126);
		execve(argv[0], argv, env);
		_exit(127);
	}
	while (wait4(pid, &status, 0, &ru) < 0)
		if (errno != EINTR) {
			fprintf(stderr, "nnnbench: wait4: %s\n", strerror(errno));
			return false;
		}
	*seconds = bn_now() - t0;
	*maxrss = (double)ru.ru_maxrss * 1024;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "nnnbench: %s ... %s %d\n", argv[0], WIFEXITED(status) ? "exited with" : "died of signal",
		        WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
		return false;
	}
	return true;
}

bool bn_write_inputs(const config_t *c)
{
	nnn_shape_t s = { .rank = 4, .dims = { BN_IMAGES, 28, 28, 1 } };
	struct stat sb;
	nnn_diags_t d;
	if (stat(c->inputs, &sb) == 0 && (size_t)sb.st_size > (size_t)BN_IMAGES * 28 * 28 * 4)
		return true;
	float *x = malloc((size_t)BN_IMAGES * 28 * 28 * sizeof *x);
	if (!x)
		return false;
	/* Not digits, but images with structure: rings whose centre and width
	 * change from image to image, values in [0, 1]. */
	for (size_t i = 0; i < BN_IMAGES; i++)
		for (int y = 0; y < 28; y++)
			for (int k = 0; k < 28; k++) {
				int cx = 8 + (int)(i % 13), cy = 8 + (int)(i / 13 % 11), r2 = (k - cx) * (k - cx) + (y - cy) * (y - cy);
				x[(i * 28 + (size_t)y) * 28 + (size_t)k] = (float)((r2 + (int)i) % (24 + (int)(i % 40))) / 64.0f;
			}
	nnn_diags_init(&d);
	nnn_status_t st = nnn_npy_write_file(c->inputs, &s, x, &d);
	nnn_diags_free(&d);
	free(x);
	return st == NNN_OK;
}

/* ---- info and validate ---- */

#define NPROC 5

bool bn_procs(config_t *c, table_t *t)
{
	char *argv[NPROC][6] = {
		{ (char *)"/bin/true", NULL },
		{ (char *)c->nnnkit, (char *)"info", (char *)c->example, NULL },
		{ (char *)c->nnnkit, (char *)"--no-default-plugins", (char *)"info", (char *)c->example, NULL },
		{ (char *)c->nnnkit, (char *)"validate", (char *)c->example, NULL },
		{ (char *)c->nnnkit, (char *)"validate", (char *)"--check-finite", (char *)c->example, NULL },
	};
	static const char *figures[NPROC] = { NULL, "nnnkit info", "nnnkit --no-default-plugins info",
		                              "nnnkit validate", "nnnkit validate --check-finite" };
	series_t s[NPROC], rss[NPROC];
	char **env = bn_env(c, 1);
	int runs = c->quick ? 7 : 21;
	bool good = env != NULL;

	memset(s, 0, sizeof s);
	memset(rss, 0, sizeof rss);
	fprintf(stderr, "nnnbench: whole processes: info, validate\n");
	for (int run = -1; run < runs && good; run++)
		for (int k = 0; k < NPROC && good; k++) {
			int i = (k + run + 1) % NPROC; /* each goes first in turn */
			double sec, mem;
			good = bn_spawn(argv[i], env, NULL, &sec, &mem);
			if (run >= 0) {
				bn_add(&s[i], sec, 0);
				bn_add(&rss[i], mem, 0);
			}
		}
	bn_env_free(env);
	if (!good)
		return false;
	for (int i = 1; i < NPROC; i++) {
		row_t *r = bn_row(t, "whole process, 3 MiB example (fork to wait4)", figures[i], "3 MiB", U_MS);
		if (!r)
			return false;
		r->fig = bn_stats(&s[i], U_MS, 0);
		bn_ref(r, "/bin/true (an empty process)", bn_stats(&s[0], U_MS, 0));
		if (i == 1 || i == 3)
			bn_target(r, T_BELOW, 2);
	}
	c->info_rss = bn_stats(&rss[1], U_S, 0).med; /* U_S: the bytes as they are */
	return true;
}

/* ---- run: 10,000 images ---- */

bool bn_example_layers(const config_t *c, int batch, bn_layer_fn each, void *ctx)
{
	nnn_shape_t in = { .rank = 4, .dims = { batch, 28, 28, 1 } };
	return bn_model_layers(c->example, &in, each, ctx);
}

bool bn_model_layers(const char *model, const nnn_shape_t *in, bn_layer_fn each, void *ctx)
{
	nnn_file_t *f;
	nnn_shape_t out[16];
	bool good = false;
	if (nnn_file_open(model, NULL, &f, NULL) != NNN_OK)
		return false;
	const nnn_model_t *m = nnn_file_model(f);
	if (m->layer_count <= 16 && nnn_model_validate(m, in, out, NULL) == NNN_OK) {
		for (int32_t i = 0; i < m->layer_count; i++)
			each(&m->layers[i], &out[i], ctx);
		good = true;
	}
	nnn_file_close(f);
	return good;
}

static void biggest(const nnn_layer_t *L, const nnn_shape_t *out, void *ctx)
{
	double *big = ctx, n = 4 * (double)nnn_shape_numel(out);
	(void)L;
	*big = n > *big ? n : *big;
}

/* Bytes of the largest intermediate tensor of the example at `batch`. */
static double largest_activation(const config_t *c, int batch)
{
	double big = 0;
	return bn_example_layers(c, batch, biggest, &big) ? big : 0;
}

static double file_size(const char *path)
{
	struct stat sb;
	return stat(path, &sb) == 0 ? (double)sb.st_size : 0;
}

#define RUN_BATCH 256 /* nnnkit run's default --batch */

/* nnnkit run's job in a process of ours, timed from the model's open to the
 * last output written: open the example, map the 10,000 images, plan for
 * batches of 256 (and again for the short last one, as the CLI does), run
 * them through nnn_plan_run on one thread, encode the outputs as .npy and
 * write them to /dev/null. The plugin is loaded before the clock starts
 * (ctx): a program pays that once, and nnnkit --version, the process start
 * it is added to, loads none. */
static bool in_process(const config_t *c, const nnn_ctx_t *ctx, double *sec)
{
	nnn_diags_t d;
	nnn_file_t *f = NULL;
	nnn_npy_view_t x = { 0 };
	nnn_plan_t *p = NULL;
	nnn_shape_t out = { 0 };
	nnn_run_opts_t o = { .size = sizeof o, .threads = 1 };
	nnn_decode_opts_t dopt = { .ctx = ctx };
	float *y = NULL;
	unsigned char *buf = NULL;
	size_t len = 0;
	int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	nnn_diags_init(&d);
	double t0 = bn_now();
	bool good = fd >= 0 && nnn_file_open(c->example, &dopt, &f, &d) == NNN_OK &&
	            nnn_npy_map(c->inputs, &x, &d) == NNN_OK && x.shape.rank >= 1 && x.shape.dims[0] > 0;
	const nnn_model_t *m = good ? nnn_file_model(f) : NULL;
	int64_t total = good ? x.shape.dims[0] : 0, per = good ? (int64_t)x.count / total : 0, out_per = 0, planned = 0;
	for (int64_t from = 0; good && from < total; from += planned) {
		int64_t n = total - from < RUN_BATCH ? total - from : RUN_BATCH;
		if (n != planned) {
			nnn_shape_t in = x.shape;
			in.dims[0] = n;
			nnn_plan_free(p);
			p = NULL;
			if (!(good = nnn_plan_new(ctx, m, &in, &o, &p, &d) == NNN_OK))
				break;
			out = *nnn_plan_shape(p, m->layer_count - 1);
			out_per = nnn_shape_numel(&out) / n;
			if (!y && !(good = (y = malloc((size_t)(total * out_per) * sizeof *y)) != NULL))
				break;
			planned = n;
		}
		good = nnn_plan_run(p, x.data + from * per, y + from * out_per, &d) == NNN_OK;
	}
	out.dims[0] = total;
	good = good && nnn_npy_encode(&out, y, &buf, &len, &d) == NNN_OK && nnn_write_all(fd, buf, len, &d) == NNN_OK;
	free(buf);
	free(y);
	nnn_plan_free(p);
	nnn_npy_unmap(&x);
	nnn_file_close(f);
	*sec = bn_now() - t0;
	if (!good) {
		char msg[1024];
		fprintf(stderr, "nnnbench: the in-process run of %s on %s failed: %s\n", c->example, c->inputs,
		        d.n ? nnn_diag_format(&d.v[0], msg, sizeof msg) : "no memory");
	}
	if (fd >= 0)
		close(fd);
	nnn_diags_free(&d);
	return good;
}

/* in_process in a child (fork, no exec), its seconds sent back: a fresh
 * process's memory, as nnnkit run has, and nothing left behind here (a
 * child's peak RSS, from wait4, counts the parent's pages it shared until
 * its exec: what this process holds would show in every RSS row). */
static bool in_child(const config_t *c, const nnn_ctx_t *ctx, double *sec)
{
	int p[2], status;
	double v = -1;
	if (pipe2(p, O_CLOEXEC) != 0)
		return false;
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		close(p[0]);
		if (!in_process(c, ctx, &v))
			v = -1;
		_exit(write(p[1], &v, sizeof v) == (ssize_t)sizeof v ? 0 : 1);
	}
	close(p[1]);
	bool good = pid > 0 && read(p[0], &v, sizeof v) == (ssize_t)sizeof v && v >= 0;
	close(p[0]);
	while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	*sec = v;
	return good;
}

bool bn_runs(const config_t *c, table_t *t)
{
	char *nnn1[] = { (char *)c->nnnkit, (char *)"run", (char *)c->example, (char *)"--input", (char *)c->inputs,
		         (char *)"--output", (char *)"-", (char *)"--threads", (char *)"1", NULL };
	char *nnn2[] = { (char *)c->nnnkit, (char *)"run", (char *)c->example, (char *)"--input", (char *)c->inputs,
		         (char *)"--output", (char *)"-", (char *)"--threads", (char *)"2", NULL };
	char *py[] = { (char *)c->python, (char *)c->torch, (char *)"--classify", (char *)"--threads", (char *)"1",
		       (char *)"--nnnkit", (char *)c->nnnkit, (char *)c->example, (char *)c->inputs, NULL };
	char *version[] = { (char *)c->nnnkit, (char *)"--version", NULL }, *empty[] = { (char *)"/bin/true", NULL };
	series_t s1 = { 0 }, s2 = { 0 }, st = { 0 }, rss1 = { 0 }, rsst = { 0 };
	series_t inproc = { 0 }, start = { 0 }, empty_s = { 0 }, sum = { 0 };
	char **env1 = bn_env(c, 1), **env2 = bn_env(c, 2);
	int runs = c->quick ? 3 : 5, truns = c->torch_ok ? (c->quick ? 1 : 3) : 0;
	nnn_ctx_t *ctx = NULL;
	nnn_diags_t d;
	nnn_diags_init(&d);
	bool good = env1 && env2 && nnn_ctx_new(&ctx, &d) == NNN_OK && nnn_plugin_load(ctx, c->plugin, &d) == NNN_OK;
	if (!good) {
		char msg[1024];
		fprintf(stderr, "nnnbench: cannot load %s: %s\n", c->plugin, d.n ? nnn_diag_format(&d.v[0], msg, sizeof msg) : "no memory");
	}
	nnn_diags_free(&d);

	fprintf(stderr, "nnnbench: whole processes: run, 10,000 images\n");
	for (int run = -1; run < runs && good; run++) {
		double sec, mem, in_sec, start_sec, empty_sec;
		if ((good = bn_spawn(nnn1, env1, NULL, &sec, &mem)) && run >= 0) {
			bn_add(&s1, sec, 0);
			bn_add(&rss1, mem, 0);
		}
		/* The same job in this process, and a process start, next to it:
		 * the reference of the ratio row is their sum, run by run. */
		if (good && (good = in_child(c, ctx, &in_sec) && bn_spawn(version, env1, NULL, &start_sec, &mem) &&
		                    bn_spawn(empty, env1, NULL, &empty_sec, &mem)) &&
		    run >= 0) {
			bn_add(&inproc, in_sec, 0);
			bn_add(&start, start_sec, 0);
			bn_add(&empty_s, empty_sec, 0);
			bn_add(&sum, in_sec + start_sec, 0);
		}
		if (good && (good = bn_spawn(nnn2, env2, NULL, &sec, &mem)) && run >= 0)
			bn_add(&s2, sec, 0);
		if (good && run >= 0 && run < truns && bn_spawn(py, env1, NULL, &sec, &mem)) {
			bn_add(&st, sec, 0);
			bn_add(&rsst, mem, 0);
		}
	}
	bn_env_free(env1);
	bn_env_free(env2);
	nnn_ctx_free(ctx);
	env1 = NULL;
	if (!good)
		return false;
	const char *section = "nnnkit run: 10,000 images, whole process";
	row_t *r = bn_row(t, section, "nnnkit run --threads 1 (batch 256)", "10k images", U_S);
	if (!r)
		return false;
	r->fig = bn_stats(&s1, U_S, 0);
	bn_ref(r, "PyTorch: start, load, classify; 1 thread", bn_stats(&st, U_S, 0));
	bn_target(r, T_BELOW, 0.4);
	if (!(r = bn_row(t, section, "nnnkit run --threads 2 (batch 256)", "10k images", U_S)))
		return false;
	r->fig = bn_stats(&s2, U_S, 0);
	bn_ref(r, "nnnkit run --threads 1", bn_stats(&s1, U_S, 0));
	bn_target(r, T_BELOW, 0.4);

	/* Issue 17, target 5: the whole process within 1.2x of the job done in
	 * a process plus that process's start. The start is nnnkit's own
	 * (nnnkit --version: exec, its shared libraries, exit; no plugin), not
	 * /bin/true's, which loads no library and would flatter nobody. */
	if (!(r = bn_row(t, section, "whole process over in-process + start", "10k images", U_S)))
		return false;
	r->fig = bn_stats(&s1, U_S, 0);
	bn_ref(r, "in-process job + nnnkit --version", bn_stats(&sum, U_S, 0));
	bn_target(r, T_RATIO_MAX, 1.2);
	if (!(r = bn_row(t, section, "in-process job, open to last output", "10k images", U_S)))
		return false;
	r->fig = bn_stats(&inproc, U_S, 0);
	bn_ref(r, "nnnkit run --threads 1", bn_stats(&s1, U_S, 0));
	if (!(r = bn_row(t, section, "process start: nnnkit --version", "-", U_MS)))
		return false;
	r->fig = bn_stats(&start, U_MS, 0);
	bn_ref(r, "/bin/true (an empty process)", bn_stats(&empty_s, U_MS, 0));
	bn_note(t, "whole process against in-process: the in-process job is nnnkit run's, in a child of nnnbench (fork, "
	           "no exec; the plugin loaded before the clock starts): nnn_file_open of the example, nnn_npy_map of the 10,000 images, nnn_plan_new for "
	           "batch 256 (and for the short last batch), nnn_plan_run on one thread, the outputs encoded as .npy "
	           "and written to /dev/null; the process start is nnnkit --version (fork to wait4), measured in the "
	           "same rounds");

	/* What the job has to hold: the model, the input and output arrays, and
	 * a few activations; plus what any nnnkit process with the plugin holds. */
	double act = largest_activation(c, 256), model = file_size(c->example), base = c->info_rss;
	char *info[] = { (char *)c->nnnkit, (char *)"info", (char *)c->example, NULL };
	double sec;
	if (base == 0 && (!(env1 = bn_env(c, 1)) || !bn_spawn(info, env1, NULL, &sec, &base)))
		base = 0; /* without the procs section: measured once here */
	bn_env_free(env1);
	double in = (double)BN_IMAGES * 28 * 28 * 4, out = (double)BN_IMAGES * 10 * 4;
	series_t budget = { 0 };
	bn_add(&budget, base + model + in + out + 4 * act, 0);
	if (!(r = bn_row(t, section, "peak RSS, nnnkit run --threads 1", "10k images", U_MIB)))
		return false;
	r->fig = bn_stats(&rss1, U_MIB, 0);
	bn_ref(r, "info's RSS + model + in + out + 4 activations", bn_stats(&budget, U_MIB, 0));
	bn_target(r, T_RATIO_MAX, 1.0);
	bn_note(t, "RSS budget: info's %.1f MiB + model %.1f MiB + input %.1f MiB + output %.2f MiB + 4 x the largest "
	           "activation at batch 256 (%.1f MiB)",
	        base / 1048576, model / 1048576, in / 1048576, out / 1048576, act / 1048576);
	if (rsst.n && (r = bn_row(t, section, "peak RSS, PyTorch (same job)", "10k images", U_MIB)) != NULL) {
		r->fig = bn_stats(&rsst, U_MIB, 0);
		bn_ref(r, "nnnkit run --threads 1", bn_stats(&rss1, U_MIB, 0));
	}
	return true;
}
