/* test_kernels.c: the builtin compute plugin (build/plugins/builtin.so) as a
 * host sees it: loaded with dlopen, its entry point called with a fake host
 * table that records the descriptors, and every kernel checked against
 * values worked out by hand or by naive reference loops written here (a
 * direct N-D correlation over an explicitly zero-padded copy of the input).
 *
 * Most data are small multiples of 1/8 and 1/4, so every product and sum is
 * exact in float whatever the summation order: a mismatch is a bug, not
 * rounding. The plugin's folder is $NNN_PLUGIN_DIR_TEST, else
 * $NNN_BUILD/plugins, else build/plugins (from the project root, as make
 * test runs it). */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nnn/plugin.h>
#include <nnn/shape.h>
#include <nnn/schema_gen.h>

#include "blackbox.h" /* t_under_valgrind */
#include "ctx.h"
#include "mem.h"  /* libnnn's memory and threads, for the fake host table */
#include "pool.h"
#include "isa.h"

/* ---- the fake host ---- */

/* What the plugin declared, recorded by the fake host. */
typedef struct rec {
	int declared;
	nnn_plugin_info_t info;
	const nnn_layer_type_t *layer[256];
	const nnn_activation_type_t *act[256];
	int nlayers, nacts;
	char log[256];   /* "D L0 L1 A0 ..." in call order */
	char fail_at[8]; /* the call ("L1", "A3", "D") that fails, or "" */
	char why[256];   /* the last message given to fail() */
} rec_t;

static void rec_log(rec_t *r, const char *what)
{
	size_t n = strlen(r->log);
	snprintf(r->log + n, sizeof r->log - n, "%s%s", n ? " " : "", what);
}

static nnn_status_t fake_fail(nnn_decl_t *d, const char *fmt, ...) NNN_PRINTF(2, 3);

static nnn_status_t fake_fail(nnn_decl_t *d, const char *fmt, ...)
{
	rec_t *r = (rec_t *)(void *)d;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->why, sizeof r->why, fmt, ap);
	va_end(ap);
	return NNN_E_PLUGIN;
}

static nnn_status_t fake_declare(nnn_decl_t *d, const nnn_plugin_info_t *info)
{
	rec_t *r = (rec_t *)(void *)d;
	rec_log(r, "D");
	r->declared++;
	r->info = *info;
	return strcmp(r->fail_at, "D") ? NNN_OK : fake_fail(d, "declare refused");
}

static nnn_status_t fake_add_layer(nnn_decl_t *d, const nnn_layer_type_t *t)
{
	rec_t *r = (rec_t *)(void *)d;
	char what[8];
	snprintf(what, sizeof what, "L%d", (int)t->id);
	rec_log(r, what);
	if (!r->declared)
		return fake_fail(d, "add_layer before declare");
	r->layer[t->id] = t;
	r->nlayers++;
	return strcmp(r->fail_at, what) ? NNN_OK : fake_fail(d, "layer %d refused", (int)t->id);
}

static nnn_status_t fake_add_activation(nnn_decl_t *d, const nnn_activation_type_t *t)
{
	rec_t *r = (rec_t *)(void *)d;
	char what[8];
	snprintf(what, sizeof what, "A%d", (int)t->id);
	rec_log(r, what);
	if (!r->declared)
		return fake_fail(d, "add_activation before declare");
	r->act[t->id] = t;
	r->nacts++;
	return strcmp(r->fail_at, what) ? NNN_OK : fake_fail(d, "activation %d refused", (int)t->id);
}

/* Only the declaring functions, and libnnn's memory and threads (ABI
 * 1.6, which the kernels take from the host): the builtin types must need
 * no codec. */
static const nnn_host_t host = {
	.size = sizeof(nnn_host_t),
	.abi_major = NNN_ABI_MAJOR,
	.abi_minor = NNN_ABI_MINOR,
	.declare = fake_declare,
	.add_layer = fake_add_layer,
	.add_activation = fake_add_activation,
	.fail = fake_fail,
	.mem_big = nnn_mem_big,
	.mem_free = free,
	.pool_new = nnn_pool_new,
	.pool_free = nnn_pool_free,
	.pool_workers = nnn_pool_workers,
	.pool_run = nnn_pool_run,
	.cpus = nnn_pool_cpus,
};

/* ---- loading the plugin: once per test (Criterion runs each in its own process) ---- */

static void *so;
static nnn_plugin_entry_fn entry;
static rec_t R;

static const char *plugin_path(void)
{
	static char path[1024];
	const char *dir = getenv("NNN_PLUGIN_DIR_TEST");
	if (dir && *dir)
		snprintf(path, sizeof path, "%s/builtin.so", dir);
	else /* make test sets NNN_BUILD to its build folder (build/asan for test-asan) */
		snprintf(path, sizeof path, "%s/plugins/builtin.so", t_build_dir());
	return path;
}

static void load(void)
{
	void *sym;
	so = dlopen(plugin_path(), RTLD_NOW | RTLD_LOCAL);
	cr_assert(so, "dlopen %s: %s (run make first, from the project root)", plugin_path(), dlerror());
	sym = dlsym(so, NNN_PLUGIN_ENTRY_NAME);
	cr_assert(sym, "%s does not export %s", plugin_path(), NNN_PLUGIN_ENTRY_NAME);
	memcpy(&entry, &sym, sizeof entry); /* object to function pointer, as POSIX allows */
	memset(&R, 0, sizeof R);
	nnn_status_t st = entry(&host, (nnn_decl_t *)(void *)&R);
	cr_assert_eq(st, NNN_OK, "entry point: status %d (%s)", (int)st, R.why);
}

static void unload(void)
{
	if (so)
		dlclose(so);
	so = NULL;
}

TestSuite(kernels, .init = load, .fini = unload);

/* ---- helpers ---- */

static nnn_shape_t mkshape(int32_t rank, const int64_t *dims)
{
	nnn_shape_t s = { .rank = rank };
	memcpy(s.dims, dims, (size_t)rank * sizeof *dims);
	return s;
}

static int64_t numel(const nnn_shape_t *s)
{
	int64_t n = 1;
	for (int32_t i = 0; i < s->rank; i++)
		n *= s->dims[i];
	return n;
}

/* The output shape of one layer for an input, as a host gets it: from the
 * shape engine (the schema's io), since core layer types give no infer.
 * On failure, the first problem's message goes to msg. */
static nnn_status_t engine_shape(const nnn_layer_t *L, const nnn_shape_t *in, nnn_shape_t *out, char *msg,
                                 size_t size)
{
	nnn_model_t m = { .layer_count = 1, .layers = (nnn_layer_t *)L };
	nnn_layer_shapes_t sh;
	nnn_diags_t d;
	nnn_diags_init(&d);
	nnn_status_t st = nnn_model_shapes(&m, in, &sh, &d);
	if (st != NNN_OK && size)
		snprintf(msg, size, "%s", d.n ? d.v[0].msg : "");
	if (st == NNN_OK && !nnn_pshape_exact(&sh.out))
		st = NNN_E_SHAPE;
	out->rank = st == NNN_OK ? sh.out.rank : 0;
	for (int32_t i = 0; i < out->rank; i++)
		out->dims[i] = sh.out.dims[i];
	nnn_diags_free(&d);
	return st;
}

static void expect_shape(const nnn_shape_t *got, int32_t rank, const int64_t *dims)
{
	cr_assert_eq(got->rank, rank, "rank %d, expected %d", (int)got->rank, (int)rank);
	for (int32_t i = 0; i < rank; i++)
		cr_assert_eq(got->dims[i], dims[i], "dim %d is %lld, expected %lld", (int)i, (long long)got->dims[i],
		             (long long)dims[i]);
}

/* Deterministic values k*scale with k uniform in [-range, range]. */
static void fill(float *v, int64_t n, uint32_t *seed, int range, float scale)
{
	for (int64_t i = 0; i < n; i++) {
		*seed = *seed * 1664525u + 1013904223u;
		v[i] = (float)((int)((*seed >> 8) % (uint32_t)(2 * range + 1)) - range) * scale;
	}
}

/* Relative 1e-5, absolute near zero. */
static bool close_to(double got, double want)
{
	return fabs(got - want) <= 1e-5 * fmax(1.0, fabs(want));
}

static void expect_close(const float *got, const double *want, int64_t n, const char *what)
{
	for (int64_t i = 0; i < n; i++)
		cr_assert(close_to(got[i], want[i]), "%s: element %lld is %.9g, expected %.9g", what, (long long)i,
		          (double)got[i], want[i]);
}

static nnn_tensor_t tensor(int32_t ndims, const int32_t *dims, const float *data, int32_t n)
{
	nnn_tensor_t t = { 0 };
	t.dims.v = dims;
	t.dims.n = ndims;
	t.data = nnn_f32s_view(data, n);
	return t;
}

static float *nan_buffer(int64_t n)
{
	float *y = malloc((size_t)(n + 1) * sizeof *y);
	cr_assert(y);
	for (int64_t i = 0; i <= n; i++)
		y[i] = NAN; /* a kernel that skips an element leaves NaN behind */
	return y;
}

/* Runs a layer as a host would: infer, prepare, forward, release. Also runs
 * forward without state (the plugin then copies the weights itself) and
 * expects the same bits. Returns y (free it); *out is the inferred shape. */
static float *run_layer(const nnn_layer_t *L, const nnn_shape_t *in, const float *x, nnn_shape_t *out)
{
	const nnn_layer_type_t *t = R.layer[L->id];
	char msg[512] = "";
	void *state = NULL;
	cr_assert(t && t->forward);
	nnn_status_t st = engine_shape(L, in, out, msg, sizeof msg);
	cr_assert_eq(st, NNN_OK, "shape: status %d: %s", (int)st, msg);
	int64_t n = numel(out);
	float *y = nan_buffer(n), *y2 = nan_buffer(n);
	if (t->prepare) {
		st = t->prepare(L, &L->body, in, &state, msg, sizeof msg);
		cr_assert_eq(st, NNN_OK, "prepare: status %d: %s", (int)st, msg);
	}
	nnn_kernel_args_t a = { .size = sizeof a, .layer = L, .body = &L->body, .state = state, .in = in, .out = out,
		                .x = x, .y = y, .threads = 1 };
	st = t->forward(&a, msg, sizeof msg);
	cr_assert_eq(st, NNN_OK, "forward: status %d: %s", (int)st, msg);
	a.state = NULL;
	a.y = y2;
	st = t->forward(&a, msg, sizeof msg);
	cr_assert_eq(st, NNN_OK, "forward without state: status %d: %s", (int)st, msg);
	cr_assert(memcmp(y, y2, (size_t)n * sizeof *y) == 0, "forward with and without prepare differ");
	cr_assert(isnan(y[n]), "forward wrote past the output");
	if (t->release)
		t->release(state);
	free(y2);
	return y;
}

/* The plugin's paths this CPU runs (t_paths: both AVX-512 ones where it
 * has AVX-512, whichever of them the CPU prefers being the native one),
 * into v; how many. */
static size_t paths_here(const char *v[T_NPATHS])
{
	size_t n = 0;
	for (size_t i = 0; i < T_NPATHS; i++) {
		char why[400];
		if (t_path_here(t_paths[i], why, sizeof why))
			v[n++] = t_paths[i];
	}
	return n;
}

/* Runs the layer under every instruction set, checks each one's output
 * shape and values (want), and expects the fast ones to agree bit for bit.
 * Returns y of the first (free it). */
static float *run_layer_every_isa(const nnn_layer_t *L, const nnn_shape_t *in, const float *x, int32_t out_rank,
                                  const int64_t *out_dims, const double *want, const char *what)
{
	float *first = NULL, *fast = NULL;
	const char *paths[T_NPATHS];
	const size_t npaths = paths_here(paths);
	for (size_t i = 0; i < npaths; i++) {
		nnn_shape_t out;
		t_use_isa(paths[i]);
		float *y = run_layer(L, in, x, &out);
		expect_shape(&out, out_rank, out_dims);
		int64_t n = numel(&out);
		char buf[128];
		snprintf(buf, sizeof buf, "%s (%s)", what, paths[i]);
		expect_close(y, want, n, buf);
		if (t_isa_is_fast(paths[i])) {
			if (fast)
				cr_assert(memcmp(y, fast, (size_t)n * sizeof *y) == 0, "%s: not the bits of the native kernels", buf);
			else
				fast = y;
		}
		if (!first)
			first = y;
		else if (y != fast)
			free(y);
	}
	t_use_isa(NULL);
	if (fast && fast != first)
		free(fast);
	return first;
}

/* ---- references ---- */

/* y[rows, neurons] = x[rows, inputs] @ w[inputs, neurons] + b, naively. */
static void ref_dense(const float *x, int64_t rows, int64_t inputs, int64_t neurons, const float *w, const float *b,
                      double *y)
{
	for (int64_t r = 0; r < rows; r++)
		for (int64_t j = 0; j < neurons; j++) {
			double s = b[j];
			for (int64_t i = 0; i < inputs; i++)
				s += (double)x[r * inputs + i] * w[i * neurons + j];
			y[r * neurons + j] = s;
		}
}

#define MAXN 6

/* Row-major offset of a+b (b may be NULL) in an array of `dims`. */
static int64_t flat(const int64_t *a, const int64_t *b, const int64_t *dims, int n)
{
	int64_t off = 0;
	for (int j = 0; j < n; j++)
		off = off * dims[j] + a[j] + (b ? b[j] : 0);
	return off;
}

/* Steps a multi-index over `lim`; false once it wraps back to all zeros. */
static bool next_index(int64_t *idx, const int64_t *lim, int n)
{
	for (int j = n - 1; j >= 0; j--) {
		if (++idx[j] < lim[j])
			return true;
		idx[j] = 0;
	}
	return false;
}

/* N-D cross-correlation, stride 1: copies x into a zero-filled padded array,
 * then for every output position sums kernel * patch. Dims all >= 1. */
static void ref_conv(int n, int64_t batch, const int64_t *d, int64_t c, const int64_t *k, int64_t f,
                     const int32_t *pads, const float *x, const float *w, const float *b, double *y)
{
	int64_t pd[MAXN], o[MAXN], idx[MAXN] = { 0 }, oi[MAXN] = { 0 }, t[MAXN] = { 0 };
	int64_t dsz = 1, psz = 1, osz = 1, ksz = 1;
	for (int j = 0; j < n; j++) {
		pd[j] = d[j] + pads[2 * j] + pads[2 * j + 1];
		o[j] = pd[j] - k[j] + 1;
		dsz *= d[j];
		psz *= pd[j];
		osz *= o[j];
		ksz *= k[j];
	}
	double *xp = calloc((size_t)(batch * psz * c), sizeof *xp);
	cr_assert(xp);
	int64_t before[MAXN];
	for (int j = 0; j < n; j++)
		before[j] = pads[2 * j];
	for (int64_t bi = 0; bi < batch; bi++)
		do {
			for (int64_t ch = 0; ch < c; ch++)
				xp[(bi * psz + flat(idx, before, pd, n)) * c + ch] = x[(bi * dsz + flat(idx, NULL, d, n)) * c + ch];
		} while (next_index(idx, d, n));
	for (int64_t bi = 0; bi < batch; bi++)
		do {
			for (int64_t fi = 0; fi < f; fi++) {
				double s = b[fi];
				do {
					for (int64_t ch = 0; ch < c; ch++)
						s += xp[(bi * psz + flat(oi, t, pd, n)) * c + ch] *
						     w[(fi * ksz + flat(t, NULL, k, n)) * c + ch];
				} while (next_index(t, k, n));
				y[(bi * osz + flat(oi, NULL, o, n)) * f + fi] = s;
			}
		} while (next_index(oi, o, n));
	free(xp);
}

/* ---- the entry point and the descriptors ---- */

/* The plugin declares itself first, then each type once; every type is a
 * core ID of the schema, named as the schema names it, with no codec of its
 * own (the host decodes core IDs). Today's Dense, Conv and six activations
 * are among them; a type the schema gains later may or may not be. */
Test(kernels, declares_everything_once)
{
	char seen[sizeof R.log + 2] = " ";
	int nlog = 0;
	cr_assert_eq(R.declared, 1);
	cr_assert(!strncmp(R.log, "D ", 2), "%s", R.log);
	for (const char *p = R.log; *p; p += strcspn(p, " "), p += *p == ' ') {
		char tok[16];
		snprintf(tok, sizeof tok, " %.*s ", (int)strcspn(p, " "), p);
		cr_assert(!strstr(seen, tok), "%s declared twice: %s", tok, R.log);
		strcat(seen, tok + 1);
		nlog++;
	}
	cr_assert_eq(nlog, 1 + R.nlayers + R.nacts, "%s", R.log);
	cr_assert_eq(R.info.size, sizeof(nnn_plugin_info_t));
	cr_assert_eq(R.info.abi_major, NNN_ABI_MAJOR);
	cr_assert_eq(R.info.abi_minor, NNN_ABI_MINOR);
	cr_assert_eq(R.info.schema_layout, NNN_SCHEMA_LAYOUT);
	cr_assert_str_eq(R.info.name, "builtin");
	cr_assert_str_eq(R.info.version, "1.0");
	for (int id = 0; id < 256; id++) {
		const nnn_layer_type_t *t = R.layer[id];
		if (!t)
			continue;
		cr_assert_eq(t->size, sizeof *t);
		cr_assert_eq(t->id, id);
		cr_assert(nnn_layer_id_name(id), "layer %d is no core ID", id);
		cr_assert_str_eq(t->name, nnn_layer_id_name(id));
		/* core IDs: the host decodes them, so no codec */
		cr_assert(!t->decode && !t->encode && !t->encoded_size && !t->validate && !t->tensors && !t->format);
		cr_assert_eq(t->body_size, 0);
		/* shapes come from the schema's io: no infer */
		cr_assert(!t->infer && t->forward);
	}
	for (int id = 0; id < 256; id++) {
		const nnn_activation_type_t *t = R.act[id];
		if (!t)
			continue;
		cr_assert_eq(t->size, sizeof *t);
		cr_assert_eq(t->id, id);
		cr_assert(nnn_activation_id_name(id), "activation %d is no core ID", id);
		cr_assert_str_eq(t->name, nnn_activation_id_name(id));
		cr_assert(!t->decode && !t->encode && !t->encoded_size && !t->validate && !t->format);
		cr_assert_eq(t->params_size, 0);
		cr_assert(t->forward);
	}
	static const int layers[] = { NNN_LAYER_ID_DENSE, NNN_LAYER_ID_CONV };
	for (size_t i = 0; i < sizeof layers / sizeof layers[0]; i++)
		cr_assert(R.layer[layers[i]] && R.layer[layers[i]]->forward, "layer %d", layers[i]);
	static const int acts[] = { NNN_ACTIVATION_ID_LINEAR, NNN_ACTIVATION_ID_SIGMOID, NNN_ACTIVATION_ID_TANH,
		                    NNN_ACTIVATION_ID_RELU,   NNN_ACTIVATION_ID_LEAKY_RELU, NNN_ACTIVATION_ID_SOFTMAX };
	for (size_t i = 0; i < sizeof acts / sizeof acts[0]; i++)
		cr_assert(R.act[acts[i]], "activation %d", acts[i]);
}

/* Failing at each declaration in turn, the entry point stops there and
 * returns the failure: the log is the full one cut after that call. */
Test(kernels, entry_returns_first_failure)
{
	for (const char *p = R.log; *p; p += strcspn(p, " "), p += *p == ' ') {
		size_t n = strcspn(p, " ");
		rec_t *r = calloc(1, sizeof *r);
		cr_assert(r);
		snprintf(r->fail_at, sizeof r->fail_at, "%.*s", (int)n, p);
		nnn_status_t st = entry(&host, (nnn_decl_t *)(void *)r);
		cr_assert_eq(st, NNN_E_PLUGIN, "failing %s: status %d", r->fail_at, (int)st);
		cr_assert(!strncmp(r->log, R.log, (size_t)(p - R.log) + n) && strlen(r->log) == (size_t)(p - R.log) + n,
		          "failing %s: %s (all: %s)", r->fail_at, r->log, R.log);
		free(r);
	}
}

/* The kernels take memory and threads from the host table (ABI 1.6): a
 * table that does not reach them, or leaves one NULL, is refused at init,
 * saying what it lacks, before anything is added. */
Test(kernels, entry_refuses_a_host_without_memory_and_threads)
{
	nnn_host_t short_table = host, holed = host;
	short_table.size = (uint32_t)offsetof(nnn_host_t, mem_big);
	holed.pool_run = NULL;
	const nnn_host_t *tables[] = { &short_table, &holed };
	for (size_t i = 0; i < 2; i++) {
		rec_t *r = calloc(1, sizeof *r);
		cr_assert(r);
		cr_assert_eq(entry(tables[i], (nnn_decl_t *)(void *)r), NNN_E_PLUGIN, "table %zu", i);
		cr_assert(strstr(r->why, "ABI 1.6's memory and threads"), "table %zu: %s", i, r->why);
		cr_assert_str_eq(r->log, "D", "table %zu: nothing added after declare", i);
		free(r);
	}
}

/* Runs `cmd` and returns its whole stdout (free it); *status is pclose's. */
static char *capture(const char *cmd, int *status)
{
	size_t cap = 1 << 16, n = 0, k;
	char *buf = malloc(cap);
	FILE *p = popen(cmd, "r");
	cr_assert(buf && p, "popen %s", cmd);
	while ((k = fread(buf + n, 1, cap - 1 - n, p)) > 0)
		n += k;
	buf[n] = '\0';
	*status = pclose(p);
	return buf;
}

Test(kernels, exports_only_the_entry_point)
{
	char cmd[1200];
	int status, text = 0, entries = 0;
	snprintf(cmd, sizeof cmd, "nm -D --defined-only '%s'", plugin_path());
	char *out = capture(cmd, &status);
	cr_assert_eq(status, 0, "%s failed", cmd);
	for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
		char addr[64], type[4], name[256];
		if (sscanf(line, "%63s %3s %255s", addr, type, name) != 3)
			continue;
		bool is_text = strchr("TtWwi", type[0]) != NULL;
		text += is_text;
		entries += is_text && !strcmp(name, NNN_PLUGIN_ENTRY_NAME);
		/* nothing else of the plugin's own may be visible, code or data;
		 * the linker's own names stay (section bounds: the sanitizer
		 * tree's coverage counters) */
		cr_assert(!strcmp(name, NNN_PLUGIN_ENTRY_NAME) || !strcmp(name, "_init") || !strcmp(name, "_fini") ||
		                  !strcmp(name, "_edata") || !strcmp(name, "_end") || !strcmp(name, "__bss_start") ||
		                  !strncmp(name, "__start___sancov", 16) || !strncmp(name, "__stop___sancov", 15),
		          "the plugin exports %s (%s)", name, type);
	}
	cr_assert_eq(entries, 1, "%s is not exported as code", NNN_PLUGIN_ENTRY_NAME);
	cr_assert_eq(text, 1, "%d code symbols exported, expected only %s", text, NNN_PLUGIN_ENTRY_NAME);
	free(out);

	/* no libnnn function is even referenced, */
	snprintf(cmd, sizeof cmd, "nm -D --undefined-only '%s'", plugin_path());
	out = capture(cmd, &status);
	cr_assert_eq(status, 0, "%s failed", cmd);
	cr_assert(!strstr(out, " nnn_"), "the plugin needs libnnn symbols:\n%s", out);
	free(out);

	/* and neither libnnn nor OpenBLAS (loaded when the portable path
	 * first needs it) is a dependency. */
	snprintf(cmd, sizeof cmd, "ldd '%s'", plugin_path());
	out = capture(cmd, &status);
	cr_assert_eq(status, 0, "%s failed", cmd);
	cr_assert(!strstr(out, "libnnn"), "the plugin depends on libnnn:\n%s", out);
	cr_assert(!strstr(out, "not found"), "a dependency is missing:\n%s", out);
	cr_assert(!strstr(out, "openblas"), "the plugin links OpenBLAS:\n%s", out);
	free(out);
}

/* ---- activations ---- */

static void act_run(uint8_t id, float tau, int32_t rank, const int64_t *dims, float *x)
{
	nnn_activation_t act = { .id = id };
	nnn_shape_t s = mkshape(rank, dims);
	act.params.leaky_relu.tau = tau;
	nnn_status_t st = R.act[id]->forward(&act, &act.params, &s, x, 1);
	cr_assert_eq(st, NNN_OK, "activation %d: status %d", (int)id, (int)st);
}

Test(kernels, linear_is_identity)
{
	float x[] = { -3.5f, 0.0f, -0.0f, 1e30f, INFINITY, -INFINITY, 2.25f, NAN };
	float y[8];
	memcpy(y, x, sizeof x);
	act_run(NNN_ACTIVATION_ID_LINEAR, 0, 2, (int64_t[]){ 2, 4 }, y);
	cr_assert(memcmp(x, y, sizeof x) == 0);
}

Test(kernels, sigmoid)
{
	static const float in[] = { -80, -20, -5, -1, -0.5f, -1e-3f, 0, 1e-3f, 0.5f, 1, 5, 20, 80 };
	enum { N = sizeof in / sizeof in[0] };
	float x[N];
	memcpy(x, in, sizeof in);
	act_run(NNN_ACTIVATION_ID_SIGMOID, 0, 2, (int64_t[]){ 1, N }, x);
	for (int i = 0; i < N; i++) {
		double want = 1.0 / (1.0 + exp(-(double)in[i]));
		cr_assert(fabs(x[i] - want) <= 1e-5 * want, "sigmoid(%g) = %.9g, expected %.9g", (double)in[i],
		          (double)x[i], want);
	}
	cr_assert_eq(x[6], 0.5f);
}

Test(kernels, sigmoid_does_not_overflow)
{
	float x[] = { -100, 100, -1000, 1000, -FLT_MAX, FLT_MAX, -INFINITY, INFINITY };
	act_run(NNN_ACTIVATION_ID_SIGMOID, 0, 2, (int64_t[]){ 4, 2 }, x);
	/* exp(-100) ~ 3.7e-44 is subnormal in float: finite, tiny, never NaN */
	cr_assert(isfinite(x[0]) && x[0] >= 0 && x[0] < 1e-40f, "sigmoid(-100) = %g", (double)x[0]);
	cr_assert_eq(x[1], 1.0f, "sigmoid(100) = %.9g", (double)x[1]);
	cr_assert_eq(x[2], 0.0f, "sigmoid(-1000) = %g", (double)x[2]);
	cr_assert_eq(x[3], 1.0f);
	cr_assert_eq(x[4], 0.0f);
	cr_assert_eq(x[5], 1.0f);
	cr_assert_eq(x[6], 0.0f);
	cr_assert_eq(x[7], 1.0f);
}

Test(kernels, tanh)
{
	static const float in[] = { -1000, -20, -3, -0.5f, -1e-3f, 0, 1e-3f, 0.5f, 3, 20, 1000 };
	enum { N = sizeof in / sizeof in[0] };
	float x[N];
	memcpy(x, in, sizeof in);
	act_run(NNN_ACTIVATION_ID_TANH, 0, 3, (int64_t[]){ 1, 1, N }, x);
	for (int i = 0; i < N; i++)
		cr_assert(fabs(x[i] - tanh((double)in[i])) <= 1e-5 * fabs(tanh((double)in[i])),
		          "tanh(%g) = %.9g", (double)in[i], (double)x[i]);
	cr_assert_eq(x[0], -1.0f);
	cr_assert_eq(x[N - 1], 1.0f);
}

Test(kernels, relu)
{
	float x[] = { -2, -1e-30f, -0.0f, 0, 0.5f, 3, -INFINITY, INFINITY };
	const float want[] = { 0, 0, 0, 0, 0.5f, 3, 0, INFINITY };
	act_run(NNN_ACTIVATION_ID_RELU, 0, 2, (int64_t[]){ 2, 4 }, x);
	for (int i = 0; i < 8; i++)
		cr_assert_eq(x[i], want[i], "relu element %d: %g", i, (double)x[i]);
}

Test(kernels, leaky_relu_several_taus)
{
	static const float in[] = { -4, -1, -0.5f, 0, 0.25f, 2, 100 };
	/* by hand, one row per tau */
	static const struct {
		float tau;
		float want[7];
	} cases[] = {
		{ 0.0f, { 0, 0, 0, 0, 0.25f, 2, 100 } },
		{ 1.0f, { -4, -1, -0.5f, 0, 0.25f, 2, 100 } },
		{ 0.25f, { -1, -0.25f, -0.125f, 0, 0.25f, 2, 100 } },
		{ 0.01f, { -0.04f, -0.01f, -0.005f, 0, 0.25f, 2, 100 } },
		{ 3.0f, { -12, -3, -1.5f, 0, 0.25f, 2, 100 } },
	};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		float x[7];
		memcpy(x, in, sizeof in);
		act_run(NNN_ACTIVATION_ID_LEAKY_RELU, cases[c].tau, 2, (int64_t[]){ 1, 7 }, x);
		for (int i = 0; i < 7; i++)
			cr_assert(close_to(x[i], cases[c].want[i]), "tau %g: leaky_relu(%g) = %g, expected %g",
			          (double)cases[c].tau, (double)in[i], (double)x[i], (double)cases[c].want[i]);
	}
}

Test(kernels, softmax_large_logits)
{
	float x[] = {
		1000, 999, 998,    /* same as [2, 1, 0] */
		-1000, -1000, -1000, /* uniform */
		1000, -1000, 0,    /* one-hot */
		-998, -999, -1000, /* same as [2, 1, 0] again */
	};
	act_run(NNN_ACTIVATION_ID_SOFTMAX, 0, 3, (int64_t[]){ 2, 2, 3 }, x);
	double s = exp(2.0) + exp(1.0) + 1.0;
	double want[] = { exp(2.0) / s, exp(1.0) / s, 1 / s, 1 / 3.0, 1 / 3.0, 1 / 3.0, 1, 0, 0,
		          exp(2.0) / s, exp(1.0) / s, 1 / s };
	for (int i = 0; i < 12; i++)
		cr_assert(isfinite(x[i]), "element %d is %g", i, (double)x[i]);
	expect_close(x, want, 12, "softmax");
	cr_assert_eq(x[7], 0.0f);
}

Test(kernels, softmax_over_last_axis_only)
{
	enum { B = 3, M = 4, L = 5, N = B * M * L };
	float x[N], in[N];
	double want[N];
	uint32_t seed = 7;
	fill(in, N, &seed, 40, 0.25f);
	memcpy(x, in, sizeof in);
	act_run(NNN_ACTIVATION_ID_SOFTMAX, 0, 3, (int64_t[]){ B, M, L }, x);
	for (int r = 0; r < B * M; r++) {
		double max = in[r * L], sum = 0;
		for (int i = 1; i < L; i++)
			max = fmax(max, in[r * L + i]);
		for (int i = 0; i < L; i++)
			sum += exp(in[r * L + i] - max);
		for (int i = 0; i < L; i++)
			want[r * L + i] = exp(in[r * L + i] - max) / sum;
	}
	expect_close(x, want, N, "softmax");

	/* a last axis of one: every element is 1 */
	float one[] = { -5, 0, 7, 1e30f };
	act_run(NNN_ACTIVATION_ID_SOFTMAX, 0, 2, (int64_t[]){ 4, 1 }, one);
	for (int i = 0; i < 4; i++)
		cr_assert_eq(one[i], 1.0f);
}

/* Every activation the plugin declares, today's and any a growth adds. */
Test(kernels, activations_accept_empty_tensors)
{
	for (int id = 0; id < 256; id++)
		if (R.act[id])
			act_run((uint8_t)id, 0.5f, 2, (int64_t[]){ 0, 3 }, NULL);
}

/* ---- Dense ---- */

typedef struct dense {
	nnn_layer_t L;
	int32_t wdims[2], bdims[1];
	float *w, *b;
} dense_t;

/* A Dense layer with weights [inputs, neurons] of dyadic values. */
static void dense_make(dense_t *d, int32_t inputs, int32_t neurons, bool flatten, uint32_t seed)
{
	memset(d, 0, sizeof *d);
	d->w = malloc((size_t)inputs * (size_t)neurons * sizeof *d->w);
	d->b = malloc((size_t)neurons * sizeof *d->b);
	cr_assert(d->w && d->b);
	fill(d->w, (int64_t)inputs * neurons, &seed, 8, 0.125f);
	fill(d->b, neurons, &seed, 8, 0.5f);
	d->wdims[0] = inputs;
	d->wdims[1] = neurons;
	d->bdims[0] = neurons;
	d->L.id = NNN_LAYER_ID_DENSE;
	d->L.activation.id = NNN_ACTIVATION_ID_RELU; /* applied by the host, not by forward */
	d->L.dropout = 0.5f;                         /* ignored at inference */
	d->L.bias = tensor(1, d->bdims, d->b, neurons);
	d->L.body.dense.neurons = neurons;
	d->L.body.dense.weights = tensor(2, d->wdims, d->w, inputs * neurons);
	d->L.body.dense.flatten = flatten;
}

static void dense_free(dense_t *d)
{
	free(d->w);
	free(d->b);
}

/* Checks Dense on input `dims` against the reference; `out` the expected shape. */
static void dense_check(int32_t rank, const int64_t *dims, int32_t inputs, int32_t neurons, bool flatten,
                        int32_t out_rank, const int64_t *out_dims)
{
	dense_t d;
	nnn_shape_t in = mkshape(rank, dims);
	int64_t n = numel(&in);
	uint32_t seed = (uint32_t)(rank * 131 + inputs * 7 + neurons);
	float *x = malloc((size_t)n * sizeof *x);
	cr_assert(x);
	fill(x, n, &seed, 8, 0.25f);
	dense_make(&d, inputs, neurons, flatten, seed);
	int64_t rows = n / inputs;
	double *want = malloc((size_t)(rows * neurons) * sizeof *want);
	cr_assert(want);
	ref_dense(x, rows, inputs, neurons, d.w, d.b, want);
	float *y = run_layer_every_isa(&d.L, &in, x, out_rank, out_dims, want, "dense");
	free(want);
	free(y);
	free(x);
	dense_free(&d);
}

Test(kernels, dense_by_hand)
{
	static const float w[] = { 1, 0, 0, 1, 1, 1 }, b[] = { 0.5f, -1 }, x[] = { 1, 2, 3, 4, 5, 6 };
	static const int32_t wd[] = { 3, 2 }, bd[] = { 2 };
	nnn_layer_t L = { .id = NNN_LAYER_ID_DENSE };
	L.bias = tensor(1, bd, b, 2);
	L.body.dense.neurons = 2;
	L.body.dense.weights = tensor(2, wd, w, 6);
	nnn_shape_t in = mkshape(2, (int64_t[]){ 2, 3 }), out;
	float *y = run_layer(&L, &in, x, &out);
	expect_shape(&out, 2, (int64_t[]){ 2, 2 });
	const double want[] = { 4.5, 4, 10.5, 10 };
	expect_close(y, want, 4, "dense");
	free(y);
}

Test(kernels, dense_rank2)
{
	dense_check(2, (int64_t[]){ 4, 5 }, 5, 3, false, 2, (int64_t[]){ 4, 3 });
	dense_check(2, (int64_t[]){ 4, 5 }, 5, 3, true, 2, (int64_t[]){ 4, 3 });
	dense_check(2, (int64_t[]){ 1, 1 }, 1, 1, false, 2, (int64_t[]){ 1, 1 });
	dense_check(2, (int64_t[]){ 7, 33 }, 33, 17, false, 2, (int64_t[]){ 7, 17 });
}

Test(kernels, dense_flatten)
{
	dense_check(4, (int64_t[]){ 2, 3, 2, 2 }, 12, 4, true, 2, (int64_t[]){ 2, 4 });
	dense_check(3, (int64_t[]){ 3, 4, 5 }, 20, 6, true, 2, (int64_t[]){ 3, 6 });
	dense_check(5, (int64_t[]){ 2, 1, 3, 1, 2 }, 6, 2, true, 2, (int64_t[]){ 2, 2 });
}

Test(kernels, dense_contracts_last_axis_without_flatten)
{
	dense_check(3, (int64_t[]){ 2, 3, 5 }, 5, 4, false, 3, (int64_t[]){ 2, 3, 4 });
	dense_check(4, (int64_t[]){ 2, 2, 3, 5 }, 5, 3, false, 4, (int64_t[]){ 2, 2, 3, 3 });

	/* by hand: each row of the middle axis is its own product */
	static const float w[] = { 1, 2 }, b[] = { 10 }, x[] = { 1, 1, 2, 0, 0, 3, -1, -1 };
	static const int32_t wd[] = { 2, 1 }, bd[] = { 1 };
	nnn_layer_t L = { .id = NNN_LAYER_ID_DENSE };
	L.bias = tensor(1, bd, b, 1);
	L.body.dense.neurons = 1;
	L.body.dense.weights = tensor(2, wd, w, 2);
	nnn_shape_t in = mkshape(3, (int64_t[]){ 2, 2, 2 }), out;
	float *y = run_layer(&L, &in, x, &out);
	expect_shape(&out, 3, (int64_t[]){ 2, 2, 1 });
	const double want[] = { 13, 12, 16, 7 };
	expect_close(y, want, 4, "dense rank 3");
	free(y);
}

Test(kernels, dense_empty_batch)
{
	dense_t d;
	float x[1] = { 0 };
	nnn_shape_t in = mkshape(2, (int64_t[]){ 0, 5 }), out;
	dense_make(&d, 5, 3, false, 1);
	float *y = run_layer(&d.L, &in, x, &out);
	expect_shape(&out, 2, (int64_t[]){ 0, 3 });
	free(y);
	dense_free(&d);
}

Test(kernels, unaligned_weights)
{
	/* file data is little-endian bytes at any offset: shift them by 1 and 3 */
	dense_t d;
	nnn_shape_t in = mkshape(2, (int64_t[]){ 3, 4 }), out;
	float x[12];
	uint32_t seed = 99;
	fill(x, 12, &seed, 8, 0.25f);
	dense_make(&d, 4, 5, false, 3);
	float *ref = run_layer(&d.L, &in, x, &out);
	unsigned char *wb = malloc(20 * 4 + 8), *bb = malloc(5 * 4 + 8);
	cr_assert(wb && bb);
	memcpy(wb + 1, d.w, 20 * 4);
	memcpy(bb + 3, d.b, 5 * 4);
	d.L.body.dense.weights.data.bytes = wb + 1;
	d.L.bias.data.bytes = bb + 3;
	float *y = run_layer(&d.L, &in, x, &out);
	cr_assert(memcmp(y, ref, 15 * sizeof *y) == 0, "unaligned weights give other results");
	free(y);
	free(ref);
	free(wb);
	free(bb);
	dense_free(&d);
}

/* ---- Conv ---- */

typedef struct conv_case {
	int n;                /* spatial rank */
	int64_t batch, c, f;  /* batch, channels, filters */
	int64_t d[MAXN];      /* input spatial dims */
	int64_t k[MAXN];      /* kernel sizes */
	int same;             /* NNN_PADDING_TYPE_SAME, else VALID */
} conv_case_t;

typedef struct conv {
	nnn_layer_t L;
	int32_t kdims[MAXN + 2], bdims[1], pads[2 * MAXN];
	float *w, *b;
} conv_t;

/* A Conv layer for the case, padding dims by the schema's rule: Valid all
 * zero; Same before = (k-1)/2, after = (k-1) - before. */
static void conv_make(conv_t *cv, const conv_case_t *cc, uint32_t *seed)
{
	int64_t kn = cc->f * cc->c;
	memset(cv, 0, sizeof *cv);
	cv->kdims[0] = (int32_t)cc->f;
	for (int j = 0; j < cc->n; j++) {
		cv->kdims[1 + j] = (int32_t)cc->k[j];
		kn *= cc->k[j];
		int32_t total = cc->same ? (int32_t)cc->k[j] - 1 : 0;
		cv->pads[2 * j] = total / 2;
		cv->pads[2 * j + 1] = total - total / 2;
	}
	cv->kdims[cc->n + 1] = (int32_t)cc->c;
	cv->bdims[0] = (int32_t)cc->f;
	cv->w = malloc((size_t)kn * sizeof *cv->w);
	cv->b = malloc((size_t)cc->f * sizeof *cv->b);
	cr_assert(cv->w && cv->b);
	fill(cv->w, kn, seed, 8, 0.125f);
	fill(cv->b, cc->f, seed, 8, 0.5f);
	cv->L.id = NNN_LAYER_ID_CONV;
	cv->L.activation.id = NNN_ACTIVATION_ID_SIGMOID; /* applied by the host, not by forward */
	cv->L.bias = tensor(1, cv->bdims, cv->b, (int32_t)cc->f);
	cv->L.body.conv.filters = (int32_t)cc->f;
	cv->L.body.conv.kernels = tensor(cc->n + 2, cv->kdims, cv->w, (int32_t)kn);
	cv->L.body.conv.padding_type = cc->same ? NNN_PADDING_TYPE_SAME : NNN_PADDING_TYPE_VALID;
	cv->L.body.conv.padding_dims.v = cv->pads;
	cv->L.body.conv.padding_dims.n = 2 * cc->n;
}

static void conv_free(conv_t *cv)
{
	free(cv->w);
	free(cv->b);
}

static nnn_shape_t conv_in(const conv_case_t *cc)
{
	nnn_shape_t s = { .rank = cc->n + 2 };
	s.dims[0] = cc->batch;
	for (int j = 0; j < cc->n; j++)
		s.dims[1 + j] = cc->d[j];
	s.dims[cc->n + 1] = cc->c;
	return s;
}

/* Runs the case through the plugin and the reference, and checks the shape
 * and every value. */
static void conv_check(const conv_case_t *cc, uint32_t seed)
{
	conv_t cv;
	nnn_shape_t in = conv_in(cc);
	int64_t nx = numel(&in), want_dims[MAXN + 2];
	conv_make(&cv, cc, &seed);
	float *x = malloc((size_t)nx * sizeof *x);
	cr_assert(x);
	fill(x, nx, &seed, 8, 0.25f);

	want_dims[0] = cc->batch;
	for (int j = 0; j < cc->n; j++) {
		want_dims[1 + j] = cc->d[j] + cv.pads[2 * j] + cv.pads[2 * j + 1] - cc->k[j] + 1;
		if (cc->same)
			cr_assert_eq(want_dims[1 + j], cc->d[j], "Same keeps the size");
	}
	want_dims[cc->n + 1] = cc->f;
	nnn_shape_t want_shape = mkshape(cc->n + 2, want_dims);

	int64_t ny = numel(&want_shape);
	double *want = malloc((size_t)ny * sizeof *want);
	cr_assert(want);
	ref_conv(cc->n, cc->batch, cc->d, cc->c, cc->k, cc->f, cv.pads, x, cv.w, cv.b, want);
	char what[64];
	snprintf(what, sizeof what, "%d-D conv, %s", cc->n, cc->same ? "same" : "valid");
	float *y = run_layer_every_isa(&cv.L, &in, x, cc->n + 2, want_dims, want, what);
	free(want);
	free(y);
	free(x);
	conv_free(&cv);
}

Test(kernels, conv1d_by_hand)
{
	/* x = [1, 2, 3, 4], one channel; cross-correlation, so no kernel flip */
	static const float x[] = { 1, 2, 3, 4 }, k3[] = { 1, 2, 3 }, k2[] = { 1, 10 }, b[] = { 0.5f };
	static const int32_t kd3[] = { 1, 3, 1 }, kd2[] = { 1, 2, 1 }, bd[] = { 1 };
	static const int32_t valid[] = { 0, 0 }, same3[] = { 1, 1 }, same2[] = { 0, 1 };
	static const struct {
		const float *k;
		const int32_t *kd, *pads;
		int32_t ptype;
		int64_t o;
		double want[4];
	} cases[] = {
		{ k3, kd3, valid, NNN_PADDING_TYPE_VALID, 2, { 14.5, 20.5 } },                 /* 1+4+9, 2+6+12 */
		{ k3, kd3, same3, NNN_PADDING_TYPE_SAME, 4, { 8.5, 14.5, 20.5, 11.5 } },     /* [0 1 2 3 4 0] */
		{ k2, kd2, same2, NNN_PADDING_TYPE_SAME, 4, { 21.5, 32.5, 43.5, 4.5 } },     /* [1 2 3 4 0] */
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		nnn_layer_t L = { .id = NNN_LAYER_ID_CONV };
		L.bias = tensor(1, bd, b, 1);
		L.body.conv.filters = 1;
		L.body.conv.kernels = tensor(3, cases[i].kd, cases[i].k, cases[i].kd[1]);
		L.body.conv.padding_type = cases[i].ptype;
		L.body.conv.padding_dims.v = cases[i].pads;
		L.body.conv.padding_dims.n = 2;
		nnn_shape_t in = mkshape(3, (int64_t[]){ 1, 4, 1 }), out;
		float *y = run_layer(&L, &in, x, &out);
		expect_shape(&out, 3, (int64_t[]){ 1, cases[i].o, 1 });
		expect_close(y, cases[i].want, cases[i].o, "conv 1-D by hand");
		free(y);
	}
}

/* ABI 1.6: the kernel runs the padding the host's shape engine gives
 * (a->pad), not its own reading of the layer, and refuses an output its
 * loops cannot produce from that input and padding. */
Test(kernels, conv_runs_the_engines_padding)
{
	static const float x[] = { 1, 2, 3, 4 }, k3[] = { 1, 2, 3 }, b[] = { 0.5f };
	static const int32_t kd3[] = { 1, 3, 1 }, bd[] = { 1 }, valid[] = { 0, 0 };
	static const int64_t same[] = { 1, 1 };
	static const double want[] = { 8.5, 14.5, 20.5, 11.5 }; /* [0 1 2 3 4 0], as conv1d_by_hand */
	char msg[256] = "";
	float y[4];
	nnn_layer_t L = { .id = NNN_LAYER_ID_CONV };
	L.bias = tensor(1, bd, b, 1);
	L.body.conv.filters = 1;
	L.body.conv.kernels = tensor(3, kd3, k3, 3);
	L.body.conv.padding_dims.v = valid; /* the layer says none: the host's padding wins */
	L.body.conv.padding_dims.n = 2;
	nnn_shape_t in = mkshape(3, (int64_t[]){ 1, 4, 1 }), out = mkshape(3, (int64_t[]){ 1, 4, 1 });
	nnn_kernel_args_t a = { .size = sizeof a, .layer = &L, .body = &L.body, .in = &in, .out = &out, .x = x, .y = y,
		                .threads = 1, .pad = same };
	nnn_status_t st = R.layer[NNN_LAYER_ID_CONV]->forward(&a, msg, sizeof msg);
	cr_assert_eq(st, NNN_OK, "forward with the host's padding: %s", msg);
	expect_close(y, want, 4, "conv 1-D padded by the host");

	/* an older host's arguments: the layer's own padding, and then 4 outputs do not fit */
	a.size = offsetof(nnn_kernel_args_t, pad);
	st = R.layer[NNN_LAYER_ID_CONV]->forward(&a, msg, sizeof msg);
	cr_assert_eq(st, NNN_E_KERNEL, "4 outputs of a 3-window over 4 unpadded: status %d", (int)st);
	cr_assert(strstr(msg, "do not fit"), "message: %s", msg);
	/* more outputs than the padded input holds windows */
	a.size = sizeof a;
	out.dims[1] = 5;
	st = R.layer[NNN_LAYER_ID_CONV]->forward(&a, msg, sizeof msg);
	cr_assert_eq(st, NNN_E_KERNEL, "5 outputs: status %d", (int)st);
	cr_assert(strstr(msg, "axis 1, 5 windows of 3 do not fit in 4 padded by 1 and 1"), "message: %s", msg);
}

Test(kernels, conv2d_by_hand)
{
	/* x 3x3 = 1..9, kernel 2x2 [[1,2],[3,4]], two filters (the second is -1x) */
	static const float x[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 }, k[] = { 1, 2, 3, 4, -1, -2, -3, -4 }, b[] = { 0, 1 };
	static const int32_t kd[] = { 2, 2, 2, 1 }, bd[] = { 2 }, pads[] = { 0, 0, 0, 0 };
	nnn_layer_t L = { .id = NNN_LAYER_ID_CONV };
	L.bias = tensor(1, bd, b, 2);
	L.body.conv.filters = 2;
	L.body.conv.kernels = tensor(4, kd, k, 8);
	L.body.conv.padding_dims.v = pads;
	L.body.conv.padding_dims.n = 4;
	nnn_shape_t in = mkshape(4, (int64_t[]){ 1, 3, 3, 1 }), out;
	float *y = run_layer(&L, &in, x, &out);
	expect_shape(&out, 4, (int64_t[]){ 1, 2, 2, 2 });
	const double want[] = { 37, -36, 47, -46, 67, -66, 77, -76 };
	expect_close(y, want, 8, "conv 2-D by hand");
	free(y);
}

Test(kernels, conv1d)
{
	static const conv_case_t cases[] = {
		{ .n = 1, .batch = 2, .c = 3, .f = 2, .d = { 7 }, .k = { 3 }, .same = 0 },
		{ .n = 1, .batch = 2, .c = 3, .f = 2, .d = { 7 }, .k = { 3 }, .same = 1 },
		{ .n = 1, .batch = 3, .c = 2, .f = 4, .d = { 9 }, .k = { 4 }, .same = 1 },
		{ .n = 1, .batch = 3, .c = 2, .f = 4, .d = { 9 }, .k = { 4 }, .same = 0 },
		{ .n = 1, .batch = 2, .c = 1, .f = 1, .d = { 5 }, .k = { 5 }, .same = 0 },
		{ .n = 1, .batch = 2, .c = 5, .f = 3, .d = { 3 }, .k = { 6 }, .same = 1 }, /* kernel wider than input */
		{ .n = 1, .batch = 4, .c = 3, .f = 2, .d = { 6 }, .k = { 1 }, .same = 1 }, /* pointwise */
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		conv_check(&cases[i], (uint32_t)i + 1);
}

Test(kernels, conv2d)
{
	static const conv_case_t cases[] = {
		{ .n = 2, .batch = 2, .c = 3, .f = 4, .d = { 5, 6 }, .k = { 3, 2 }, .same = 0 },
		{ .n = 2, .batch = 2, .c = 3, .f = 4, .d = { 5, 6 }, .k = { 3, 3 }, .same = 1 },
		{ .n = 2, .batch = 2, .c = 2, .f = 3, .d = { 5, 6 }, .k = { 2, 4 }, .same = 1 },
		{ .n = 2, .batch = 3, .c = 1, .f = 2, .d = { 4, 4 }, .k = { 4, 4 }, .same = 0 },
		{ .n = 2, .batch = 2, .c = 3, .f = 2, .d = { 3, 4 }, .k = { 5, 5 }, .same = 1 },
		{ .n = 2, .batch = 2, .c = 3, .f = 5, .d = { 4, 3 }, .k = { 1, 1 }, .same = 0 }, /* pointwise */
		{ .n = 2, .batch = 1, .c = 4, .f = 1, .d = { 1, 7 }, .k = { 1, 3 }, .same = 1 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		conv_check(&cases[i], (uint32_t)i + 11);
}

Test(kernels, conv3d)
{
	static const conv_case_t cases[] = {
		{ .n = 3, .batch = 2, .c = 2, .f = 3, .d = { 4, 5, 3 }, .k = { 3, 2, 3 }, .same = 0 },
		{ .n = 3, .batch = 2, .c = 2, .f = 3, .d = { 4, 5, 3 }, .k = { 3, 3, 3 }, .same = 1 },
		{ .n = 3, .batch = 2, .c = 3, .f = 2, .d = { 3, 4, 5 }, .k = { 2, 2, 4 }, .same = 1 },
		{ .n = 3, .batch = 3, .c = 1, .f = 2, .d = { 2, 3, 4 }, .k = { 1, 3, 2 }, .same = 0 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		conv_check(&cases[i], (uint32_t)i + 21);
}

Test(kernels, conv_higher_ranks)
{
	static const conv_case_t cases[] = {
		{ .n = 4, .batch = 2, .c = 2, .f = 2, .d = { 3, 3, 2, 3 }, .k = { 2, 3, 2, 2 }, .same = 1 },
		{ .n = 4, .batch = 2, .c = 2, .f = 2, .d = { 3, 3, 2, 3 }, .k = { 2, 3, 2, 2 }, .same = 0 },
		{ .n = 5, .batch = 2, .c = 3, .f = 2, .d = { 2, 3, 2, 2, 3 }, .k = { 2, 1, 2, 1, 2 }, .same = 1 },
		{ .n = 6, .batch = 1, .c = 2, .f = 1, .d = { 2, 2, 2, 2, 2, 2 }, .k = { 2, 1, 2, 1, 2, 1 }, .same = 0 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		conv_check(&cases[i], (uint32_t)i + 31);
}

Test(kernels, conv_large_input_is_chunked)
{
	/* 3 x 64 x 64 rows of 5*5*4 = 100 floats: 1.2M floats of im2col, more
	 * than one chunk, with a chunk boundary inside a batch item */
	const conv_case_t cc = { .n = 2, .batch = 3, .c = 4, .f = 3, .d = { 64, 64 }, .k = { 5, 5 }, .same = 1 };
	conv_check(&cc, 41);
}

/* ---- threads, on data whose sums round ---- */

/* Uniform floats in [-1, 1) with 24 significant bits: the sums round, so
 * their order shows in the bits of the result. */
static void fill_real(float *v, int64_t n, uint32_t *seed)
{
	for (int64_t i = 0; i < n; i++) {
		*seed = *seed * 1664525u + 1013904223u;
		v[i] = (float)(*seed >> 8) / (float)(1u << 23) - 1.0f;
	}
}

/* n whole numbers from -h to h. */
static void fill_whole(float *v, int64_t n, int h, uint32_t *seed)
{
	for (int64_t i = 0; i < n; i++) {
		*seed = *seed * 1664525u + 1013904223u;
		v[i] = (float)((int)((*seed >> 8) % (uint32_t)(2 * h + 1)) - h);
	}
}

/* One forward of L at `threads`, with `state` (NULL: none). */
static float *forward_at(const nnn_layer_t *L, const nnn_shape_t *in, const nnn_shape_t *out, const float *x,
                         void *state, int threads)
{
	char msg[512] = "";
	int64_t n = numel(out);
	float *y = nan_buffer(n);
	nnn_kernel_args_t a = { .size = sizeof a, .layer = L, .body = &L->body, .state = state, .in = in, .out = out,
		                .x = x, .y = y, .threads = threads };
	nnn_status_t st = R.layer[L->id]->forward(&a, msg, sizeof msg);
	cr_assert_eq(st, NNN_OK, "forward at %d threads: status %d: %s", threads, (int)st, msg);
	cr_assert(isnan(y[n]), "forward at %d threads wrote past the output", threads);
	return y;
}

/* Runs L under every instruction set at 1, 2, 3, 0 and 2 threads, with
 * state (the later calls reuse the state's threads) and without, and
 * expects every run of a fast instruction set to give the bits of its
 * first, and all fast ones the same bits; checks each first run against
 * want, to within the rounding of a sum of `terms` products whose absolute
 * values sum to at most `mag` (and the portable path's runs against each
 * other to within twice that). */
static void expect_same_at_any_threads(const nnn_layer_t *L, const nnn_shape_t *in, const float *x, int64_t terms,
                                       double mag, const double *want, const char *what)
{
	/* Under valgrind, which looks at memory, not at sums, 3 threads alone
	 * (chunks that do not divide evenly): every split runs the same code,
	 * and all four made these the slowest tests of `make valgrind`. */
	static const int counts[] = { 3, 2, 0, 2 };
	const size_t ncounts = t_under_valgrind() ? 1 : sizeof counts / sizeof counts[0];
	float *fast = NULL;
	const char *paths[T_NPATHS];
	const size_t npaths = paths_here(paths);
	for (size_t i = 0; i < npaths; i++) {
		const nnn_layer_type_t *t = R.layer[L->id];
		char msg[512] = "";
		void *state = NULL;
		nnn_shape_t out;
		t_use_isa(paths[i]);
		const char *isa = paths[i];
		cr_assert_eq(engine_shape(L, in, &out, msg, sizeof msg), NNN_OK, "%s", msg);
		cr_assert_eq(t->prepare(L, &L->body, in, &state, msg, sizeof msg), NNN_OK, "%s", msg);
		int64_t n = numel(&out);
		float *y1 = forward_at(L, in, &out, x, state, 1);
		for (int64_t e = 0; e < n; e++)
			cr_assert(fabs(y1[e] - want[e]) <= (double)(terms + 1) * FLT_EPSILON * mag + 1e-30,
			          "%s (%s): element %lld is %.9g, expected %.9g", what, isa, (long long)e, (double)y1[e], want[e]);
		for (size_t c = 0; c < ncounts; c++)
			for (int with_state = 0; with_state < 2; with_state++) {
				float *y = forward_at(L, in, &out, x, with_state ? state : NULL, counts[c]);
				if (t_isa_is_fast(paths[i])) {
					cr_assert(memcmp(y, y1, (size_t)n * sizeof *y) == 0,
					          "%s (%s): %d threads%s do not give the bits of 1 thread", what, isa, counts[c],
					          with_state ? "" : " without state");
				} else { /* sgemm's order may depend on how many rows it gets: two roundings apart at most */
					for (int64_t e = 0; e < n; e++)
						cr_assert(fabs(y[e] - y1[e]) <= 2 * (double)(terms + 1) * FLT_EPSILON * mag + 1e-30,
						          "%s (%s): %d threads: element %lld is %.9g, at 1 thread %.9g", what, isa,
						          counts[c], (long long)e, (double)y[e], (double)y1[e]);
				}
				free(y);
			}
		t->release(state);
		if (t_isa_is_fast(paths[i])) {
			if (fast) {
				cr_assert(memcmp(y1, fast, (size_t)n * sizeof *y1) == 0, "%s: %s differs from %s", what, isa, paths[0]);
				free(y1);
			} else {
				fast = y1;
			}
		} else {
			free(y1);
		}
	}
	t_use_isa(NULL);
	free(fast);
}

/* A conv case on real data: the reference and the bound of its rounding. */
static void conv_threads_check(const conv_case_t *cc, uint32_t seed)
{
	conv_t cv;
	nnn_shape_t in = conv_in(cc);
	int64_t nx = numel(&in), ny = cc->batch * cc->f, kn = cc->c;
	conv_make(&cv, cc, &seed);
	fill_real(cv.w, cc->f * cc->c * (int64_t)(cv.L.body.conv.kernels.data.n / (cc->f * cc->c)), &seed);
	fill_real(cv.b, cc->f, &seed);
	for (int j = 0; j < cc->n; j++) {
		ny *= cc->d[j] + cv.pads[2 * j] + cv.pads[2 * j + 1] - cc->k[j] + 1;
		kn *= cc->k[j];
	}
	float *x = malloc((size_t)nx * sizeof *x);
	double *want = malloc((size_t)ny * sizeof *want);
	cr_assert(x && want);
	fill_real(x, nx, &seed);
	ref_conv(cc->n, cc->batch, cc->d, cc->c, cc->k, cc->f, cv.pads, x, cv.w, cv.b, want);
	char what[96];
	snprintf(what, sizeof what, "%d-D conv, batch %lld, %lld->%lld, %s", cc->n, (long long)cc->batch,
	         (long long)cc->c, (long long)cc->f, cc->same ? "same" : "valid");
	/* every |x|, |w| and |b| is below 1 */
	expect_same_at_any_threads(&cv.L, &in, x, kn, (double)kn + 1, want, what);
	free(want);
	free(x);
	conv_free(&cv);
}

Test(kernels, conv_threads_give_the_same_bits)
{
	static const conv_case_t cases[] = {
		/* the example classifier's two layers: 1 channel (batch 5 is the
		 * smallest it splits over threads), then 8 -> 16 */
		{ .n = 2, .batch = 1, .c = 1, .f = 8, .d = { 28, 28 }, .k = { 5, 5 }, .same = 0 },
		{ .n = 2, .batch = 5, .c = 1, .f = 8, .d = { 28, 28 }, .k = { 5, 5 }, .same = 0 },
		{ .n = 2, .batch = 1, .c = 8, .f = 16, .d = { 24, 24 }, .k = { 5, 5 }, .same = 0 },
		{ .n = 2, .batch = 3, .c = 8, .f = 16, .d = { 24, 24 }, .k = { 5, 5 }, .same = 0 },
		/* padded: items cross chunks; 20 filters: a full vector and a part */
		{ .n = 2, .batch = 3, .c = 4, .f = 20, .d = { 17, 19 }, .k = { 3, 4 }, .same = 1 },
		/* lines longer than a segment (256), three panels */
		{ .n = 1, .batch = 2, .c = 2, .f = 40, .d = { 700 }, .k = { 7 }, .same = 1 },
		{ .n = 3, .batch = 3, .c = 3, .f = 9, .d = { 6, 7, 8 }, .k = { 3, 3, 3 }, .same = 1 },
		/* pointwise, 1 filter */
		{ .n = 2, .batch = 7, .c = 64, .f = 1, .d = { 30, 31 }, .k = { 1, 1 }, .same = 0 },
		/* few filters (AVX-512: several positions a vector), tails of
		 * positions, segments */
		{ .n = 1, .batch = 16, .c = 1, .f = 3, .d = { 1000 }, .k = { 9 }, .same = 1 },
		{ .n = 2, .batch = 13, .c = 2, .f = 5, .d = { 13, 29 }, .k = { 3, 3 }, .same = 1 },
		{ .n = 2, .batch = 4, .c = 1, .f = 1, .d = { 40, 45 }, .k = { 3, 3 }, .same = 0 },
		/* one channel: the line kernels. AVX-512, 16 positions a vector:
		 * lines of 1 to 16 positions go two at a time (pairs across rows,
		 * not across items; an odd row left over), longer ones in blocks of
		 * 16 and 32; 1 to 8 filters, a part of 4 stored alone. 256-bit
		 * (AVX2, half-width AVX-512): up to 16 lines a call, lines longer
		 * than a call takes (AVX2: 12 positions in runs of 3 taps, 10 in
		 * runs of 5, 14 else) in even blocks; part vectors. Padded and not */
		{ .n = 3, .batch = 3, .c = 1, .f = 8, .d = { 6, 7, 15 }, .k = { 3, 3, 3 }, .same = 0 },
		{ .n = 3, .batch = 2, .c = 1, .f = 7, .d = { 5, 5, 5 }, .k = { 3, 2, 3 }, .same = 1 },
		{ .n = 2, .batch = 3, .c = 1, .f = 6, .d = { 9, 17 }, .k = { 2, 2 }, .same = 0 },
		{ .n = 2, .batch = 2, .c = 1, .f = 5, .d = { 4, 33 }, .k = { 1, 1 }, .same = 0 },
		{ .n = 2, .batch = 2, .c = 1, .f = 2, .d = { 3, 1 }, .k = { 2, 1 }, .same = 1 },
		{ .n = 1, .batch = 5, .c = 1, .f = 4, .d = { 47 }, .k = { 5 }, .same = 1 },
		{ .n = 1, .batch = 2, .c = 1, .f = 8, .d = { 600 }, .k = { 9 }, .same = 0 },
		{ .n = 2, .batch = 2, .c = 1, .f = 5, .d = { 7, 30 }, .k = { 3, 5 }, .same = 0 },
		/* the benchmark's conv3d: lines of 14 positions, runs of 3 taps (on
		 * the 256-bit line kernels an unrolled body of its own; AVX2 takes
		 * a line in two calls of 7) */
		{ .n = 3, .batch = 2, .c = 1, .f = 8, .d = { 16, 16, 16 }, .k = { 3, 3, 3 }, .same = 0 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		conv_threads_check(&cases[i], (uint32_t)i + 51);
}

Test(kernels, dense_threads_give_the_same_bits)
{
	static const struct {
		int32_t rank;
		int64_t dims[4];
		int32_t inputs, neurons;
		bool flatten;
	} cases[] = {
		{ 2, { 7, 1100 }, 1100, 130, false }, /* odd rows, inputs past a block, a part panel */
		{ 2, { 1, 3000 }, 3000, 150, false }, /* batch 1: 3 panels at once, the last a part */
		{ 2, { 1, 700 }, 700, 70, false },    /* 2 panels of 3 vectors */
		{ 2, { 1, 300 }, 300, 250, false },   /* 4 panels at once (1 thread), 2 a chunk (2 threads) */
		{ 4, { 3, 20, 20, 16 }, 6400, 128, true }, /* the example classifier's */
		{ 4, { 1, 20, 20, 16 }, 6400, 128, true },
		{ 3, { 3, 5, 700 }, 700, 70, false },
		{ 2, { 64, 128 }, 128, 10, false },
		{ 2, { 33, 2000 }, 2000, 9, false }, /* 9 neurons: an AVX-512 vector, mostly empty */
		/* few neurons, many inputs: the split order (four partial sums), in
		 * one block of inputs and in several with a tail of 1 to 3; 1, 2 or
		 * 4 AVX2 vectors a row; rows past a chunk */
		{ 2, { 1, 2048 }, 2048, 10, false },
		{ 2, { 40, 4099 }, 4099, 16, false },
		{ 2, { 3, 5002 }, 5002, 5, false },
		{ 2, { 9, 6145 }, 6145, 12, false },
		{ 4, { 2, 32, 32, 3 }, 3072, 1, true },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		dense_t d;
		uint32_t seed = (uint32_t)i + 61;
		nnn_shape_t in = mkshape(cases[i].rank, cases[i].dims);
		int64_t n = numel(&in), rows = n / cases[i].inputs;
		dense_make(&d, cases[i].inputs, cases[i].neurons, cases[i].flatten, seed);
		fill_real(d.w, (int64_t)cases[i].inputs * cases[i].neurons, &seed);
		fill_real(d.b, cases[i].neurons, &seed);
		float *x = malloc((size_t)n * sizeof *x);
		double *want = malloc((size_t)(rows * cases[i].neurons) * sizeof *want);
		cr_assert(x && want);
		fill_real(x, n, &seed);
		ref_dense(x, rows, cases[i].inputs, cases[i].neurons, d.w, d.b, want);
		char what[96];
		snprintf(what, sizeof what, "dense %lld rows, %d->%d", (long long)rows, (int)cases[i].inputs,
		         (int)cases[i].neurons);
		expect_same_at_any_threads(&d.L, &in, x, cases[i].inputs, (double)cases[i].inputs + 1, want, what);
		free(want);
		free(x);
		dense_free(&d);
	}
}

/* Small whole numbers sum exactly in float in any order (every partial sum
 * stays far below 2^24), so every instruction set must give the exact sum:
 * a tap lost or counted twice, in any block, tail or partial sum, shows. */
Test(kernels, dense_sums_whole_numbers_exactly)
{
	static const struct {
		int32_t rows, inputs, neurons;
	} cases[] = { { 1, 2048, 10 }, { 5, 4099, 16 }, { 40, 6145, 12 }, { 3, 5002, 5 }, { 2, 3001, 150 },
		      { 13, 97, 33 }, { 7, 37, 9 } };
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const int32_t m = cases[i].rows, k = cases[i].inputs, nn = cases[i].neurons;
		const int64_t dims[2] = { m, k };
		uint32_t seed = (uint32_t)i + 81;
		dense_t d;
		dense_make(&d, k, nn, false, seed);
		float *x = malloc((size_t)m * (size_t)k * sizeof *x);
		int64_t *want = malloc((size_t)m * (size_t)nn * sizeof *want);
		cr_assert(x && want);
		fill_whole(d.w, (int64_t)k * nn, 2, &seed);
		fill_whole(d.b, nn, 100, &seed);
		fill_whole(x, (int64_t)m * k, 3, &seed);
		for (int32_t r = 0; r < m; r++)
			for (int32_t c = 0; c < nn; c++) {
				int64_t sum = (int64_t)d.b[c];
				for (int32_t t = 0; t < k; t++)
					sum += (int64_t)x[(int64_t)r * k + t] * (int64_t)d.w[(int64_t)t * nn + c];
				want[(int64_t)r * nn + c] = sum;
			}
		for (size_t t = 0; t < T_NISAS; t++) {
			nnn_shape_t in = mkshape(2, dims), out;
			char msg[512] = "";
			t_use_isa(t_isas[t]);
			cr_assert_eq(engine_shape(&d.L, &in, &out, msg, sizeof msg), NNN_OK, "%s", msg);
			for (int threads = 1; threads <= 2; threads++) {
				float *y = forward_at(&d.L, &in, &out, x, NULL, threads);
				for (int64_t e = 0; e < (int64_t)m * nn; e++)
					cr_assert_eq((double)y[e], (double)want[e],
					             "dense %d rows, %d->%d (%s, %d threads): element %lld is %.9g, expected %lld", (int)m,
					             (int)k, (int)nn, t_isas[t] ? t_isas[t] : "native", threads, (long long)e,
					             (double)y[e], (long long)want[e]);
				free(y);
			}
		}
		t_use_isa(NULL);
		free(want);
		free(x);
		dense_free(&d);
	}
}

/* A row's outputs have the same bits whatever the batch it comes in
 * (every fast instruction set sums each row in one order of its own,
 * bi_split_order included): batch 37 against each of its rows alone. */
Test(kernels, dense_rows_give_their_bits_at_any_batch)
{
	static const int32_t shapes[][2] = { { 4099, 10 }, { 3000, 150 }, { 2048, 16 }, { 700, 5 } };
	for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
		const int32_t k = shapes[i][0], nn = shapes[i][1];
		const int64_t many[2] = { 37, k }, one[2] = { 1, k };
		uint32_t seed = (uint32_t)i + 71;
		dense_t d;
		dense_make(&d, k, nn, false, seed);
		fill_real(d.w, (int64_t)k * nn, &seed);
		fill_real(d.b, nn, &seed);
		float *x = malloc((size_t)(37 * k) * sizeof *x);
		cr_assert(x);
		fill_real(x, 37 * k, &seed);
		for (size_t t = 0; t < T_NISAS; t++) {
			if (!t_isa_is_fast(t_isas[t]))
				continue;
			t_use_isa(t_isas[t]);
			nnn_shape_t in37 = mkshape(2, many), in1 = mkshape(2, one), out37, out1;
			char msg[512] = "";
			cr_assert_eq(engine_shape(&d.L, &in37, &out37, msg, sizeof msg), NNN_OK, "%s", msg);
			cr_assert_eq(engine_shape(&d.L, &in1, &out1, msg, sizeof msg), NNN_OK, "%s", msg);
			float *y37 = forward_at(&d.L, &in37, &out37, x, NULL, 1);
			for (int64_t r = 0; r < 37; r += 4) {
				float *y1 = forward_at(&d.L, &in1, &out1, x + r * k, NULL, 1);
				cr_assert(memcmp(y1, y37 + r * nn, (size_t)nn * sizeof *y1) == 0,
				          "dense %d->%d (%s): row %lld alone differs from the same row in a batch of 37", (int)k,
				          (int)nn, t_isas[t] ? t_isas[t] : "native", (long long)r);
				free(y1);
			}
			free(y37);
		}
		t_use_isa(NULL);
		free(x);
		dense_free(&d);
	}
}

Test(kernels, relu_and_leaky_relu_long)
{
	/* every vector width and a tail; signed zeros, NaN and infinities */
	enum { N = 1000 + 13 };
	static const float special[] = { -0.0f, 0.0f, NAN, -NAN, INFINITY, -INFINITY, FLT_MIN, -FLT_MIN, 1e-40f, -1e-40f };
	float *in = malloc(N * sizeof *in), *x = malloc(N * sizeof *x);
	uint32_t seed = 71;
	cr_assert(in && x);
	fill_real(in, N, &seed);
	for (int i = 0; i < N; i += 37)
		in[i] = special[(i / 37) % (sizeof special / sizeof special[0])];
	for (size_t k = 0; k < T_NISAS; k++) {
		t_use_isa(t_isas[k]);
		for (int tau_i = 0; tau_i < 3; tau_i++) {
			static const float taus[] = { 0.0f, 0.01f, -2.5f };
			memcpy(x, in, N * sizeof *x);
			act_run(NNN_ACTIVATION_ID_LEAKY_RELU, taus[tau_i], 2, (int64_t[]){ 1, N }, x);
			for (int i = 0; i < N; i++) {
				float want = in[i] > 0 ? in[i] : taus[tau_i] * in[i];
				cr_assert(memcmp(&x[i], &want, sizeof want) == 0 || (isnan(x[i]) && isnan(want)),
				          "leaky_relu tau %g of %g is %g, expected %g", (double)taus[tau_i], (double)in[i], (double)x[i],
				          (double)want);
			}
		}
		memcpy(x, in, N * sizeof *x);
		act_run(NNN_ACTIVATION_ID_RELU, 0, 2, (int64_t[]){ N, 1 }, x);
		for (int i = 0; i < N; i++) {
			float want = in[i] > 0 ? in[i] : 0.0f;
			cr_assert(memcmp(&x[i], &want, sizeof want) == 0, "relu of %g is %g, expected %g", (double)in[i],
			          (double)x[i], (double)want);
		}
	}
	t_use_isa(NULL);
	free(in);
	free(x);
}

/* ---- infer: shapes and errors ---- */

/* Expects an input shape to be refused with `code` and a message
 * mentioning `word`: a shape that does not fit by the shape engine, a
 * layer whose own tensors disagree by prepare (which also refuses every
 * input the engine refuses, so a host that skips the engine is safe). */
static void expect_infer_error(const nnn_layer_t *L, const nnn_shape_t *in, nnn_status_t code, const char *word)
{
	char msg[512] = "";
	nnn_shape_t out;
	nnn_status_t st;
	if (code != NNN_E_SHAPE) {
		st = engine_shape(L, in, &out, msg, sizeof msg);
		cr_log_info("shape engine: %s", msg);
		cr_assert_eq(st, code, "status %d, expected %d (%s)", (int)st, (int)code, msg);
		cr_assert(strstr(msg, word), "message \"%s\" does not mention \"%s\"", msg, word);
	}

	/* prepare refuses and keeps no state; without room for a message, and
	 * with a tiny one, nothing overflows */
	void *state = NULL;
	msg[0] = '\0';
	st = R.layer[L->id]->prepare(L, &L->body, in, &state, msg, sizeof msg);
	cr_assert_neq(st, NNN_OK);
	cr_assert_null(state);
	if (code == NNN_E_SHAPE) {
		cr_assert_eq(st, code, "prepare: status %d, expected %d (%s)", (int)st, (int)code, msg);
		cr_assert(strstr(msg, word), "message \"%s\" does not mention \"%s\"", msg, word);
	}
	cr_assert_eq(R.layer[L->id]->prepare(L, &L->body, in, &state, NULL, 0), st);
	char tiny[9];
	memset(tiny, 'x', sizeof tiny);
	cr_assert_eq(R.layer[L->id]->prepare(L, &L->body, in, &state, tiny, 8), st);
	cr_assert_eq(tiny[7], '\0');
	cr_assert_eq(tiny[8], 'x');
	cr_assert_null(state);
}

Test(kernels, dense_infer_errors)
{
	dense_t d;
	dense_make(&d, 12, 4, false, 5);
	nnn_shape_t in = mkshape(2, (int64_t[]){ 2, 11 });
	expect_infer_error(&d.L, &in, NNN_E_INPUT_SHAPE, "last axis");
	in = mkshape(3, (int64_t[]){ 2, 3, 4 }); /* 12 only when flattened */
	expect_infer_error(&d.L, &in, NNN_E_INPUT_SHAPE, "last axis");
	in = mkshape(1, (int64_t[]){ 12 }); /* no batch axis */
	expect_infer_error(&d.L, &in, NNN_E_INPUT_SHAPE, "rank");
	in = mkshape(2, (int64_t[]){ -1, 12 });
	expect_infer_error(&d.L, &in, NNN_E_INPUT_SHAPE, "negative");

	d.L.body.dense.flatten = true;
	in = mkshape(3, (int64_t[]){ 2, 3, 3 });
	expect_infer_error(&d.L, &in, NNN_E_INPUT_SHAPE, "flattens to 9");

	/* the layer's own tensors disagree */
	d.L.body.dense.neurons = 5;
	in = mkshape(2, (int64_t[]){ 2, 12 });
	expect_infer_error(&d.L, &in, NNN_E_SHAPE, "weights");
	d.L.body.dense.neurons = 4;
	d.L.bias.data.n = 3;
	expect_infer_error(&d.L, &in, NNN_E_SHAPE, "bias");
	d.L.bias.data.n = 4;
	d.L.body.dense.weights.data.n = 47;
	expect_infer_error(&d.L, &in, NNN_E_SHAPE, "weights");
	dense_free(&d);
}

Test(kernels, conv_infer_shapes)
{
	static const struct {
		conv_case_t cc;
		int64_t out[MAXN + 2];
	} cases[] = {
		{ { .n = 1, .batch = 5, .c = 3, .f = 7, .d = { 10 }, .k = { 4 }, .same = 0 }, { 5, 7, 7 } },
		{ { .n = 1, .batch = 5, .c = 3, .f = 7, .d = { 10 }, .k = { 4 }, .same = 1 }, { 5, 10, 7 } },
		{ { .n = 2, .batch = 1, .c = 1, .f = 32, .d = { 28, 28 }, .k = { 5, 3 }, .same = 0 }, { 1, 24, 26, 32 } },
		{ { .n = 2, .batch = 1, .c = 1, .f = 32, .d = { 28, 28 }, .k = { 5, 2 }, .same = 1 }, { 1, 28, 28, 32 } },
		{ { .n = 3, .batch = 2, .c = 4, .f = 8, .d = { 9, 8, 7 }, .k = { 3, 2, 7 }, .same = 0 }, { 2, 7, 7, 1, 8 } },
		{ { .n = 3, .batch = 2, .c = 4, .f = 8, .d = { 1, 1, 1 }, .k = { 3, 2, 7 }, .same = 1 }, { 2, 1, 1, 1, 8 } },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		conv_t cv;
		uint32_t seed = 1;
		char msg[256] = "";
		nnn_shape_t in = conv_in(&cases[i].cc), out;
		conv_make(&cv, &cases[i].cc, &seed);
		nnn_status_t st = engine_shape(&cv.L, &in, &out, msg, sizeof msg);
		cr_assert_eq(st, NNN_OK, "case %zu: %s", i, msg);
		expect_shape(&out, cases[i].cc.n + 2, cases[i].out);
		conv_free(&cv);
	}
}

Test(kernels, conv_infer_errors)
{
	const conv_case_t cc = { .n = 2, .batch = 2, .c = 3, .f = 4, .d = { 5, 6 }, .k = { 3, 2 }, .same = 0 };
	conv_t cv;
	uint32_t seed = 3;
	conv_make(&cv, &cc, &seed);
	nnn_shape_t in = mkshape(4, (int64_t[]){ 2, 5, 6, 2 });
	expect_infer_error(&cv.L, &in, NNN_E_INPUT_SHAPE, "channels");
	in = mkshape(3, (int64_t[]){ 2, 5, 3 });
	expect_infer_error(&cv.L, &in, NNN_E_INPUT_SHAPE, "rank 4");
	in = mkshape(5, (int64_t[]){ 2, 5, 6, 1, 3 });
	expect_infer_error(&cv.L, &in, NNN_E_INPUT_SHAPE, "rank 4");
	in = mkshape(4, (int64_t[]){ 2, 2, 6, 3 });
	expect_infer_error(&cv.L, &in, NNN_E_INPUT_SHAPE, "smaller than window size 3");
	in = mkshape(4, (int64_t[]){ 2, 5, 1, 3 });
	expect_infer_error(&cv.L, &in, NNN_E_INPUT_SHAPE, "axis 2");

	/* the layer's own fields disagree */
	in = mkshape(4, (int64_t[]){ 2, 5, 6, 3 });
	cv.L.body.conv.padding_dims.n = 2;
	expect_infer_error(&cv.L, &in, NNN_E_SHAPE, "padding");
	cv.L.body.conv.padding_dims.n = 4;
	cv.L.body.conv.filters = 3;
	expect_infer_error(&cv.L, &in, NNN_E_SHAPE, "filters");
	cv.L.body.conv.filters = 4;
	cv.L.bias.data.n = 1;
	expect_infer_error(&cv.L, &in, NNN_E_SHAPE, "bias");
	conv_free(&cv);
}

Test(kernels, forward_checks_its_arguments)
{
	dense_t d;
	char msg[256] = "";
	float x[10] = { 0 }, y[16];
	dense_make(&d, 5, 3, false, 8);
	nnn_shape_t in = mkshape(2, (int64_t[]){ 2, 5 }), bad = mkshape(2, (int64_t[]){ 2, 4 });
	nnn_kernel_args_t a = { .size = sizeof a, .layer = &d.L, .body = &d.L.body, .in = &in, .out = &bad,
		                .x = x, .y = y, .threads = 1 };
	nnn_status_t st = R.layer[0]->forward(&a, msg, sizeof msg);
	cr_assert_eq(st, NNN_E_KERNEL, "a wrong output shape: status %d", (int)st);
	cr_assert(strstr(msg, "output shape"), "%s", msg);

	/* state prepared for another layer is refused, not read out of bounds */
	dense_t other;
	void *state = NULL;
	dense_make(&other, 2, 3, false, 9);
	nnn_shape_t oin = mkshape(2, (int64_t[]){ 2, 2 });
	cr_assert_eq(R.layer[0]->prepare(&other.L, &other.L.body, &oin, &state, msg, sizeof msg), NNN_OK);
	nnn_shape_t out = mkshape(2, (int64_t[]){ 2, 3 });
	a.out = &out;
	a.state = state;
	st = R.layer[0]->forward(&a, msg, sizeof msg);
	cr_assert_eq(st, NNN_E_KERNEL, "foreign state: status %d", (int)st);
	R.layer[0]->release(state);
	dense_free(&other);
	dense_free(&d);
}

/* With the state prepare made for these very shapes, forward trusts the
 * shapes it checked then (a tiny model's call is mostly such checks); any
 * other shape, layer or a missing buffer is still checked and refused. */
Test(kernels, prepared_shapes_are_still_checked)
{
	dense_t d, twin;
	char msg[256] = "";
	void *state = NULL;
	float x[15] = { 0 }, y[12];
	dense_make(&d, 5, 3, false, 8);
	dense_make(&twin, 5, 3, false, 8);
	twin.L.body.dense.neurons = 4; /* the same counts, another layer, and one it does not compute */
	nnn_shape_t in = mkshape(2, (int64_t[]){ 2, 5 }), out = mkshape(2, (int64_t[]){ 2, 3 });
	nnn_shape_t in3 = mkshape(2, (int64_t[]){ 3, 5 }), out3 = mkshape(2, (int64_t[]){ 3, 3 });
	nnn_shape_t bad = mkshape(2, (int64_t[]){ 2, 4 });
	cr_assert_eq(R.layer[0]->prepare(&d.L, &d.L.body, &in, &state, msg, sizeof msg), NNN_OK, "%s", msg);
	nnn_kernel_args_t a = { .size = sizeof a, .layer = &d.L, .body = &d.L.body, .state = state, .in = &in,
		                .out = &out, .x = x, .y = y, .threads = 1 };
	cr_assert_eq(R.layer[0]->forward(&a, msg, sizeof msg), NNN_OK, "%s", msg);
	a.x = NULL;
	cr_assert_eq(R.layer[0]->forward(&a, msg, sizeof msg), NNN_E_KERNEL, "no input buffer");
	cr_assert(strstr(msg, "NULL"), "%s", msg);
	a.x = x;
	a.y = NULL;
	cr_assert_eq(R.layer[0]->forward(&a, msg, sizeof msg), NNN_E_KERNEL, "no output buffer");
	a.y = y;
	a.out = &bad;
	cr_assert_eq(R.layer[0]->forward(&a, msg, sizeof msg), NNN_E_KERNEL, "a wrong output shape");
	cr_assert(strstr(msg, "output shape"), "%s", msg);
	a.in = &in3; /* another batch than prepare's: derived again, and right */
	a.out = &out3;
	cr_assert_eq(R.layer[0]->forward(&a, msg, sizeof msg), NNN_OK, "%s", msg);
	a.layer = &twin.L; /* another layer with the same counts: checked as any call is */
	a.body = &twin.L.body;
	a.in = &in;
	a.out = &out;
	nnn_status_t st = R.layer[0]->forward(&a, msg, sizeof msg);
	cr_assert_eq(st, NNN_E_SHAPE, "another layer's io: status %d: %s", (int)st, msg);
	cr_assert(strstr(msg, "weights are [5, 3]"), "%s", msg);
	R.layer[0]->release(state);
	dense_free(&twin);
	dense_free(&d);
}

/* ---- ABI 1.1: the host's threads, the fused activation ---- */

/* A host pool that runs a call's chunks last to first, slot c % threads for
 * chunk c, on the calling thread: results must not depend on either. */
typedef struct fake_pool {
	int calls, most_threads;
} fake_pool_t;

static void fake_parallel_for(nnn_pool_t *pool, int threads, int64_t n, nnn_task_fn fn, void *ctx)
{
	fake_pool_t *fp = (fake_pool_t *)(void *)pool;
	cr_assert(threads >= 2, "parallel_for asked for %d threads: one thread needs no pool", threads);
	fp->calls++;
	fp->most_threads = threads > fp->most_threads ? threads : fp->most_threads;
	for (int64_t c = n - 1; c >= 0; c--)
		fn(ctx, c, (int)(c % threads));
}

/* Threads of this process. */
static int thread_count(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	int n = -1;
	cr_assert(f);
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "Threads: %d", &n) == 1)
			break;
	fclose(f);
	return n;
}

/* forward of L with prepared state, into a new buffer: args as given
 * (their size included), x, y and state filled in here. */
static float *forward_args(nnn_kernel_args_t a, const nnn_layer_t *L, const nnn_shape_t *in, const nnn_shape_t *out,
                           const float *x, void *state)
{
	char msg[512] = "";
	int64_t n = numel(out);
	float *y = nan_buffer(n);
	a.layer = L, a.body = &L->body, a.state = state, a.in = in, a.out = out, a.x = x, a.y = y;
	nnn_status_t st = R.layer[L->id]->forward(&a, msg, sizeof msg);
	cr_assert_eq(st, NNN_OK, "forward: status %d: %s", (int)st, msg);
	cr_assert(isnan(y[n]), "forward wrote past the output");
	return y;
}

/* Runs check on a layer of each of the fast paths: a Conv on the plain
 * panels (8 -> 16), two Convs of one channel on the line kernels (lines of
 * 12 positions, two a call, an odd number of rows, 8 filters; lines of 26
 * in runs of 5 taps, more than AVX2's 256-bit kernel takes a call, 5
 * filters: a part of a vector stored), a Dense layer on the panels, and a
 * narrow one in the split order: each large enough to be shared among
 * threads. */
static void on_layers(void (*check)(nnn_layer_t *L, const nnn_shape_t *in, const float *x, const char *what))
{
	static const conv_case_t cc = { .n = 2, .batch = 4, .c = 8, .f = 16, .d = { 24, 24 }, .k = { 5, 5 }, .same = 0 },
		                 c1 = { .n = 2, .batch = 16, .c = 1, .f = 8, .d = { 31, 14 }, .k = { 3, 3 }, .same = 0 },
		                 c5 = { .n = 2, .batch = 16, .c = 1, .f = 5, .d = { 40, 30 }, .k = { 5, 5 }, .same = 0 };
	uint32_t seed = 91;
	conv_t cv, cv1, cv5;
	dense_t d, dn;
	nnn_shape_t cin = conv_in(&cc), c1in = conv_in(&c1), c5in = conv_in(&c5),
		    din = mkshape(4, (int64_t[]){ 4, 20, 20, 16 }), dnin = mkshape(2, (int64_t[]){ 200, 300 });
	float *cx = malloc((size_t)numel(&cin) * sizeof *cx), *c1x = malloc((size_t)numel(&c1in) * sizeof *c1x);
	float *c5x = malloc((size_t)numel(&c5in) * sizeof *c5x);
	float *dx = malloc((size_t)numel(&din) * sizeof *dx), *dnx = malloc((size_t)numel(&dnin) * sizeof *dnx);
	cr_assert(cx && c1x && c5x && dx && dnx);
	conv_make(&cv, &cc, &seed);
	conv_make(&cv1, &c1, &seed);
	conv_make(&cv5, &c5, &seed);
	dense_make(&d, 6400, 128, true, 92);
	dense_make(&dn, 300, 10, false, 93);
	fill(cx, numel(&cin), &seed, 8, 0.25f);
	fill(c1x, numel(&c1in), &seed, 8, 0.25f);
	fill(c5x, numel(&c5in), &seed, 8, 0.25f);
	fill(dx, numel(&din), &seed, 8, 0.25f);
	fill(dnx, numel(&dnin), &seed, 8, 0.25f);
	check(&cv.L, &cin, cx, "conv");
	check(&cv1.L, &c1in, c1x, "conv of one channel");
	check(&cv5.L, &c5in, c5x, "conv of one channel, 5 filters");
	check(&d.L, &din, dx, "dense");
	check(&dn.L, &dnin, dnx, "narrow dense");
	free(cx);
	free(c1x);
	free(c5x);
	free(dx);
	free(dnx);
	conv_free(&cv);
	conv_free(&cv1);
	conv_free(&cv5);
	dense_free(&d);
	dense_free(&dn);
}

/* Offered a pool (ABI 1.1), forward shares its chunks through it and makes
 * no threads of its own; from a host of ABI 1.0 (a smaller size), it never
 * reads the pool, and uses its own. Same bits either way. */
static void check_host_threads(nnn_layer_t *L, const nnn_shape_t *in, const float *x, const char *what)
{
	const nnn_layer_type_t *t = R.layer[L->id];
	char msg[512] = "";
	nnn_shape_t out;
	cr_assert_eq(engine_shape(L, in, &out, msg, sizeof msg), NNN_OK, "%s", msg);
	const char *paths[T_NPATHS];
	const size_t npaths = paths_here(paths);
	for (size_t i = 0; i < npaths; i++) {
		fake_pool_t fp = { 0 };
		void *state = NULL;
		int64_t n = numel(&out);
		t_use_isa(paths[i]);
		cr_assert_eq(t->prepare(L, &L->body, in, &state, msg, sizeof msg), NNN_OK, "%s", msg);
		nnn_kernel_args_t a = { .size = sizeof a, .threads = 1 };
		float *y1 = forward_args(a, L, in, &out, x, state);
		a.threads = 2;
		a.pool = (nnn_pool_t *)(void *)&fp;
		a.parallel_for = fake_parallel_for;
		int before = thread_count();
		float *y2 = forward_args(a, L, in, &out, x, state);
		cr_assert_gt(fp.calls, 0, "%s (%s): the host's threads were not used", what, paths[i]);
		cr_assert_eq(fp.most_threads, 2, "%s: asked for %d threads, 2 allowed", what, fp.most_threads);
		cr_assert_eq(thread_count(), before, "%s: threads of its own besides the host's", what);
		cr_assert(memcmp(y1, y2, (size_t)n * sizeof *y1) == 0, "%s (%s): not the bits of 1 thread", what,
		          paths[i]);
		free(y2);
		a.size = offsetof(nnn_kernel_args_t, pool); /* an ABI 1.0 host's arguments */
		fp.calls = 0;
		y2 = forward_args(a, L, in, &out, x, state);
		cr_assert_eq(fp.calls, 0, "%s: read past the arguments' size", what);
		cr_assert(memcmp(y1, y2, (size_t)n * sizeof *y1) == 0, "%s: own threads, other bits", what);
		free(y2);
		free(y1);
		t->release(state);
	}
	t_use_isa(NULL);
}

Test(kernels, forward_uses_the_host_threads)
{
	on_layers(check_host_threads);
}

static nnn_status_t foreign_relu(const nnn_activation_t *act, const void *params, const nnn_shape_t *shape, float *x,
                                 int threads)
{
	(void)act, (void)params, (void)shape, (void)x, (void)threads;
	return NNN_OK;
}

/* With every activation id: forward given the activation gives the bits of
 * forward, then the activation's own kernel; it applies the plugin's own
 * element-wise ones itself (and says so), not softmax, nor another
 * plugin's kernel for a core ID. */
static void check_fused(nnn_layer_t *L, const nnn_shape_t *in, const float *x, const char *what)
{
	char msg[512] = "";
	nnn_shape_t out;
	cr_assert_eq(engine_shape(L, in, &out, msg, sizeof msg), NNN_OK, "%s", msg);
	int64_t n = numel(&out);
	const char *paths[T_NPATHS];
	const size_t npaths = paths_here(paths);
	for (size_t i = 0; i < npaths; i++) {
		void *state = NULL;
		t_use_isa(paths[i]);
		const char *isa = paths[i];
		cr_assert_eq(R.layer[L->id]->prepare(L, &L->body, in, &state, msg, sizeof msg), NNN_OK, "%s", msg);
		static const uint8_t acts[] = { NNN_ACTIVATION_ID_LINEAR, NNN_ACTIVATION_ID_SIGMOID,
			                                NNN_ACTIVATION_ID_TANH,   NNN_ACTIVATION_ID_RELU,
			                                NNN_ACTIVATION_ID_LEAKY_RELU, NNN_ACTIVATION_ID_SOFTMAX };
		for (size_t k = 0; k < sizeof acts / sizeof acts[0]; k++) {
			uint8_t id = acts[k];
			bool done = false;
			L->activation.id = id;
			L->activation.params.leaky_relu.tau = 0.25f;
			nnn_kernel_args_t a = { .size = sizeof a, .threads = 2 };
			float *want = forward_args(a, L, in, &out, x, state);
			cr_assert_eq(R.act[id]->forward(&L->activation, &L->activation.params, &out, want, 1), NNN_OK);
			a.act = R.act[id];
			a.act_params = &L->activation.params;
			a.act_done = &done;
			float *y = forward_args(a, L, in, &out, x, state);
			cr_assert_eq(done, id != NNN_ACTIVATION_ID_SOFTMAX, "%s (%s): activation %d done: %d", what, isa, id,
			             done);
			if (!done)
				cr_assert_eq(R.act[id]->forward(&L->activation, &L->activation.params, &out, y, 1), NNN_OK);
			cr_assert(memcmp(y, want, (size_t)n * sizeof *y) == 0, "%s (%s): activation %d fused, other bits",
			          what, isa, id);
			free(y);
			free(want);
		}
		nnn_activation_type_t other = *R.act[NNN_ACTIVATION_ID_RELU];
		bool done = false;
		other.forward = foreign_relu;
		L->activation.id = NNN_ACTIVATION_ID_RELU;
		nnn_kernel_args_t a = { .size = sizeof a, .threads = 1, .act = &other, .act_done = &done };
		free(forward_args(a, L, in, &out, x, state));
		cr_assert(!done, "%s (%s): applied ReLU though another plugin's kernel runs it", what, isa);
		R.layer[L->id]->release(state);
	}
	t_use_isa(NULL);
}

Test(kernels, fuses_its_own_elementwise_activations)
{
	on_layers(check_fused);
}

/* ---- OpenBLAS: loaded only by the portable path ---- */

static bool mapped(const char *name)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[1024];
	bool found = false;
	cr_assert(f);
	while (!found && fgets(line, sizeof line, f))
		found = strstr(line, name) != NULL;
	fclose(f);
	return found;
}

/* Prepares a Dense layer of 40 inputs under isa; returns its status. */
static nnn_status_t prepare_dense(dense_t *d, const char *isa, void **state, char *msg, size_t size)
{
	nnn_shape_t in = mkshape(2, (int64_t[]){ 3, 40 });
	t_use_isa(isa);
	*state = NULL;
	nnn_status_t st = R.layer[0]->prepare(&d->L, &d->L.body, &in, state, msg, size);
	t_use_isa(NULL);
	return st;
}

Test(kernels, openblas_is_loaded_only_by_the_portable_path)
{
	char msg[512] = "";
	void *state;
	dense_t d;
	dense_make(&d, 40, 20, false, 93);
	cr_assert(!mapped("libopenblas"), "OpenBLAS is mapped before any layer needs it");
	if (t_isa_is_fast(NULL)) {
		cr_assert_eq(prepare_dense(&d, NULL, &state, msg, sizeof msg), NNN_OK, "%s", msg);
		R.layer[0]->release(state);
		cr_assert(!mapped("libopenblas"), "the AVX2/AVX-512 path loaded OpenBLAS");
	}
	cr_assert_eq(prepare_dense(&d, "generic", &state, msg, sizeof msg), NNN_OK, "%s", msg);
	cr_assert(mapped("libopenblas"), "the portable path runs without OpenBLAS?");
	R.layer[0]->release(state);
	dense_free(&d);
}

Test(kernels, portable_path_without_blas_says_what_to_do)
{
	char msg[512] = "";
	void *state;
	dense_t d;
	dense_make(&d, 40, 20, false, 94);
	setenv("NNN_BUILTIN_BLAS", "/nonexistent/libnoblas.so.0", 1);
	cr_assert_eq(prepare_dense(&d, "generic", &state, msg, sizeof msg), NNN_E_KERNEL);
	cr_assert_null(state);
	cr_log_info("%s", msg);
	static const char *const pieces[] = { "cannot load /nonexistent/libnoblas.so.0", "No such file",
		                              "apt-get install libopenblas0", "NNN_BUILTIN_ISA unset" };
	for (size_t i = 0; i < sizeof pieces / sizeof pieces[0]; i++)
		cr_assert(strstr(msg, pieces[i]), "no '%s' in: %s", pieces[i], msg);
	setenv("NNN_BUILTIN_BLAS", "libm.so.6", 1); /* a library, but no CBLAS */
	cr_assert_eq(prepare_dense(&d, "generic", &state, msg, sizeof msg), NNN_E_KERNEL);
	cr_assert(strstr(msg, "libm.so.6 has no cblas_sgemm"), "%s", msg);
	unsetenv("NNN_BUILTIN_BLAS");
	cr_assert_eq(prepare_dense(&d, "generic", &state, msg, sizeof msg), NNN_OK, "%s", msg);
	R.layer[0]->release(state);
	dense_free(&d);
}
