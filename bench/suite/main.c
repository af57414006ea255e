/* main.c: nnnbench: options, the machine, the sections in order, the table.
 *
 *   nnnbench [--json | --markdown] [--quick] [--only SECTIONS] [--keep-env]
 *            [--build DIR] [--torch FILE] [--python FILE] [--pybench FILE] [--ort FILE] [--node FILE]
 *            [--real DIR] [--grown DIR] [--narrow FILE]
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "bench.h"

/* Removed from the contenders' environment unless --keep-env: they hold
 * OpenBLAS to an older kernel set. The thread variables are set instead. */
static const char *const dropped[] = { "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE" };
static const char *const threads_vars[] = { "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS" };

static bool named(const char *entry, const char *name)
{
	size_t n = strlen(name);
	return !strncmp(entry, name, n) && entry[n] == '=';
}

/* OpenMP threads that wait for work sleep instead of spinning: when the
 * machine is shared, spinning threads wait for a sibling that is not
 * running, and a 2-thread PyTorch run became 16 times slower than a
 * 1-thread one. (nnnkit's own threads spin 0.1 ms, then sleep.) */
static const char passive[] = "OMP_WAIT_POLICY=PASSIVE";

/* The three thread variables come first: they are the array's own. */
char **bn_env(const config_t *c, int threads)
{
	size_t n = 0, k = 3;
	while (environ[n])
		n++;
	char **env = calloc(n + 5, sizeof *env);
	if (!env)
		return NULL;
	for (size_t j = 0; j < 3; j++)
		if (!(env[j] = malloc(64)) || snprintf(env[j], 64, "%s=%d", threads_vars[j], threads) >= 64) {
			bn_env_free(env);
			return NULL;
		}
	if (!c->keep_env)
		env[k++] = (char *)passive;
	for (size_t i = 0; i < n; i++) {
		bool drop = false;
		for (size_t j = 0; j < 2; j++)
			drop |= !c->keep_env && named(environ[i], dropped[j]);
		for (size_t j = 0; j < 3; j++)
			drop |= named(environ[i], threads_vars[j]);
		drop |= !c->keep_env && named(environ[i], "OMP_WAIT_POLICY");
		if (!drop)
			env[k++] = environ[i];
	}
	return env;
}

void bn_env_free(char **env)
{
	if (!env)
		return;
	for (size_t j = 0; j < 3; j++)
		free(env[j]);
	free(env);
}

/* ---- the machine ---- */

static void first_line_with(const char *file, const char *key, char *out, size_t size)
{
	char line[4096];
	FILE *f = fopen(file, "r");
	out[0] = '\0';
	while (f && fgets(line, sizeof line, f))
		if (!strncmp(line, key, strlen(key))) {
			char *v = strchr(line, ':');
			snprintf(out, size, "%s", v ? v + 1 + strspn(v + 1, " \t") : line);
			out[strcspn(out, "\n")] = '\0';
			break;
		}
	if (f)
		fclose(f);
}

static void machine(table_t *t, const config_t *c)
{
	char model[256], flags[8192], mem[64], load[128] = "", picked[256] = "";
	struct utsname u;
	first_line_with("/proc/cpuinfo", "model name", model, sizeof model);
	first_line_with("/proc/cpuinfo", "flags", flags, sizeof flags);
	first_line_with("/proc/meminfo", "MemTotal", mem, sizeof mem);
	FILE *f = fopen("/proc/loadavg", "r");
	if (f) {
		if (fgets(load, sizeof load, f))
			load[strcspn(load, "\n")] = '\0';
		fclose(f);
	}
	static const char *want[] = { "sse4_2", "avx", "avx2", "fma", "avx512f", "avx512bw", "avx512vl", "avx512_bf16" };
	for (size_t i = 0, k = 0; i < sizeof want / sizeof want[0]; i++) {
		char pad[64];
		snprintf(pad, sizeof pad, " %s ", want[i]);
		char spaced[8200];
		snprintf(spaced, sizeof spaced, " %s ", flags);
		if (strstr(spaced, pad))
			k += (size_t)snprintf(picked + k, sizeof picked - k, "%s%s", k ? " " : "", want[i]);
	}
	uname(&u);
	bn_note(t, "machine: %s, %ld CPUs online, %s RAM, flags %s; Linux %s", model, sysconf(_SC_NPROCESSORS_ONLN),
	        mem, picked, u.release);
	bn_note(t, "load average at the start: %s", load);
	const char *ct = getenv("OPENBLAS_CORETYPE"), *l2 = getenv("OPENBLAS_L2_SIZE");
	bn_note(t, "contenders run with OPENBLAS_CORETYPE (here %s) and OPENBLAS_L2_SIZE (here %s) %s, "
	           "OPENBLAS_NUM_THREADS = OMP_NUM_THREADS = MKL_NUM_THREADS = their thread count%s",
	        ct ? ct : "unset", l2 ? l2 : "unset", c->keep_env ? "kept (--keep-env)" : "unset",
	        c->keep_env ? "" : ", OMP_WAIT_POLICY=PASSIVE");
	bn_note(t, "median of the runs, min .. max, (runs); contender and reference runs interleaved; GB = 1e9 bytes; "
	           "faults = minor page faults per run (median)");
}

/* ---- options ---- */

static int usage(FILE *to)
{
	fprintf(to,
	        "usage: nnnbench [--json | --markdown] [--quick] [--only SECTIONS] [--keep-env]\n"
	        "                [--build DIR] [--torch FILE] [--python FILE] [--pybench FILE] [--ort FILE] [--node FILE]\n"
	        "                [--real DIR] [--grown DIR] [--narrow FILE]\n"
	        "Measures libnnn and nnnkit against the machine's own limits, PyTorch and ONNX Runtime, and prints\n"
	        "one table.\n"
	        "  --json, --markdown  the table for machines, or for docs/performance.md\n"
	        "  --quick             fewer runs, no 1 GiB model (the figures are rougher)\n"
	        "  --only SECTIONS     some of: codec,procs,infer,run,tiny,python,narrow (comma-separated)\n"
	        "  --keep-env          keep OPENBLAS_CORETYPE, OPENBLAS_L2_SIZE and OMP_WAIT_POLICY as they are\n"
	        "  --build DIR         where nnnkit, plugins/ and mkexample are (default: this program's folder);\n"
	        "                      the models go to DIR/bench (the inference section runs every network\n"
	        "                      of mkexample --list)\n"
	        "  --torch FILE        the PyTorch contender (default bench/torch_bench.py)\n"
	        "  --python FILE       its interpreter (default /usr/bin/python3, Debian's python3-torch)\n"
	        "  --pybench FILE      the Python package's worker (default bench/py_bench.py): Plan.run\n"
	        "                      against nnn_plan_run, with DIR/libnnn.so.1\n"
	        "  --ort FILE          the ONNX Runtime contender (default bench/ort_bench.js), run on each\n"
	        "                      model as nnnkit convert exports it, with DIR/ort/node_modules\n"
	        "                      (make ort) as NODE_PATH\n"
	        "  --node FILE         its interpreter (default: node on PATH)\n"
	        "  --real DIR          the real corpus, for the tiny models' rows (default: $NNN_REAL_CORPUS, else\n"
	        "                      ../shared/corpus/real); without it those rows say so and are skipped\n"
	        "  --grown DIR         the build folder of a tree grown with DenseF16 and DenseI8 (make bench:\n"
	        "                      bench/grow.sh): the narrow section runs its nnnbench, nnnkit and plugin\n"
	        "                      on the example's Dense layers with float32, float16 and int8 weights;\n"
	        "                      without it that section says so and is skipped\n"
	        "  --narrow FILE       the narrow section's model writer (default bench/narrow_models.py)\n");
	return to == stdout ? 0 : 2;
}

static bool want(const char *only, const char *section)
{
	if (!only)
		return true;
	size_t n = strlen(section);
	for (const char *p = only; (p = strstr(p, section)) != NULL; p += n)
		if ((p == only || p[-1] == ',') && (p[n] == ',' || p[n] == '\0'))
			return true;
	return false;
}

/* The first executable NAME on PATH into buf; false when there is none. */
static bool on_path(const char *name, char *buf, size_t size)
{
	const char *path = getenv("PATH");
	while (path && *path) {
		size_t n = strcspn(path, ":");
		if (n > 0 && (size_t)snprintf(buf, size, "%.*s/%s", (int)n, path, name) < size && access(buf, X_OK) == 0)
			return true;
		path += n + (path[n] == ':');
	}
	return false;
}

static bool setup(config_t *c, char *build_buf, size_t size)
{
	if (!c->build) {
		ssize_t n = readlink("/proc/self/exe", build_buf, size - 1);
		if (n <= 0)
			return false;
		build_buf[n] = '\0';
		*strrchr(build_buf, '/') = '\0';
		c->build = build_buf;
	}
	snprintf(c->nnnkit, sizeof c->nnnkit, "%s/nnnkit", c->build);
	snprintf(c->plugin, sizeof c->plugin, "%s/plugins/builtin.so", c->build);
	snprintf(c->mkexample, sizeof c->mkexample, "%s/mkexample", c->build);
	static char dir[4096];
	snprintf(dir, sizeof dir, "%s/bench", c->build);
	c->dir = dir;
	snprintf(c->example, sizeof c->example, "%s/example.nnn", c->dir);
	snprintf(c->inputs, sizeof c->inputs, "%s/x10k.npy", c->dir);
	snprintf(c->onnx, sizeof c->onnx, "%s/example.onnx", c->dir);
	snprintf(c->ort_dir, sizeof c->ort_dir, "%s/ort", c->build);
	static char node[4096];
	if (!c->node)
		c->node = on_path("node", node, sizeof node) ? node : "node";
	if (mkdir(c->dir, 0755) != 0 && access(c->dir, W_OK) != 0) {
		fprintf(stderr, "nnnbench: cannot use %s\n", c->dir);
		return false;
	}
	for (const char *p = c->nnnkit; p; p = p == c->nnnkit ? c->plugin : p == c->plugin ? c->mkexample : NULL)
		if (access(p, R_OK) != 0) {
			fprintf(stderr, "nnnbench: %s is missing: run make first (make bench builds everything)\n", p);
			return false;
		}
	/* The example, as mkexample writes it, and the images for whole runs. */
	char ex[4200];
	snprintf(ex, sizeof ex, "%s/example-input.npy", c->dir);
	char *argv[] = { c->mkexample, c->example, ex, NULL };
	double sec, mem;
	char **env = bn_env(c, 1);
	bool good = env && bn_spawn(argv, env, NULL, &sec, &mem) && bn_write_inputs(c);
	bn_env_free(env);
	if (!good)
		fprintf(stderr, "nnnbench: cannot write the example model and its inputs into %s\n", c->dir);
	return good;
}

int main(int argc, char **argv)
{
	static char build[4096];
	config_t c = { .torch = "bench/torch_bench.py", .python = "/usr/bin/python3",
	              .pybench = "bench/py_bench.py", .ort = "bench/ort_bench.js",
	              .narrow_py = "bench/narrow_models.py" };
	format_t fmt = F_TEXT;
	const char *only = NULL;
	table_t t = { 0 };

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--worker"))
			return bn_worker_main(argc, argv);
		else if (!strcmp(a, "--json"))
			fmt = F_JSON;
		else if (!strcmp(a, "--markdown"))
			fmt = F_MARKDOWN;
		else if (!strcmp(a, "--quick"))
			c.quick = true;
		else if (!strcmp(a, "--keep-env"))
			c.keep_env = true;
		else if (!strcmp(a, "--only") && v)
			only = argv[++i];
		else if (!strcmp(a, "--build") && v)
			c.build = argv[++i];
		else if (!strcmp(a, "--torch") && v)
			c.torch = argv[++i];
		else if (!strcmp(a, "--python") && v)
			c.python = argv[++i];
		else if (!strcmp(a, "--pybench") && v)
			c.pybench = argv[++i];
		else if (!strcmp(a, "--ort") && v)
			c.ort = argv[++i];
		else if (!strcmp(a, "--node") && v)
			c.node = argv[++i];
		else if (!strcmp(a, "--real") && v)
			c.real = argv[++i];
		else if (!strcmp(a, "--grown") && v)
			c.grown = argv[++i];
		else if (!strcmp(a, "--narrow") && v)
			c.narrow_py = argv[++i];
		else if (!strcmp(a, "--help") || !strcmp(a, "-h"))
			return usage(stdout);
		else
			return usage(stderr);
	}
	if (!c.real)
		c.real = getenv("NNN_REAL_CORPUS") ? getenv("NNN_REAL_CORPUS") : "../shared/corpus/real";
	double t0 = bn_now();
	if (!setup(&c, build, sizeof build))
		return 1;
	machine(&t, &c);
	bool good = (!want(only, "codec") || bn_codec(&c, &t)) && (!want(only, "procs") || bn_procs(&c, &t)) &&
	            (!want(only, "infer") || bn_infer(&c, &t)) && (!want(only, "run") || bn_runs(&c, &t)) &&
	            (!want(only, "tiny") || bn_tiny(&c, &t)) && (!want(only, "python") || bn_python(&c, &t)) &&
	            (!want(only, "narrow") || bn_narrow(&c, &t));
	if (good) {
		char load[128] = "";
		FILE *f = fopen("/proc/loadavg", "r");
		if (f) {
			if (fgets(load, sizeof load, f))
				load[strcspn(load, "\n")] = '\0';
			fclose(f);
		}
		bn_note(&t, "load average at the end: %s; the whole benchmark took %.0f s", load, bn_now() - t0);
		bn_print(&t, fmt, stdout);
	}
	bn_table_free(&t);
	return good ? 0 : 1;
}
