/* tiny.c: tiny models at batch 1, one thread: the time of one
 * nnn_plan_run call against one ONNX Runtime Run of the same model
 * (issue 17, target 3).
 *
 * The models: the two demo files of the original framework (the real
 * corpus, --real DIR; never copied: read where they lie) and an
 * identity-like one (mkexample --net identity: Dense 1->1, linear), whose
 * time is the fixed cost of a call. Each is exported with nnnkit convert.
 *
 * The fair contender is ONNX Runtime's own Run, not node's promise around
 * it: onnxruntime-node's libonnxruntime.so.1 (make ort) is opened with
 * dlopen and driven through its C API. The C API is a struct of function
 * pointers whose order is fixed and only ever appended to
 * (onnxruntime_c_api.h, struct OrtApi); the few entries used here are
 * declared below by their index, so nothing links against ONNX Runtime and
 * nnnbench runs without it. node's session.run (bench/ort_bench.js) is the
 * second reference, for comparison.
 *
 * All of it runs in a child process (fork, no exec): ONNX Runtime is never
 * loaded into the driver, and a crash there costs these rows only. The
 * child times nnnkit, the C API and node in turn, in an order that rotates
 * from model to model and round to round, and sends the samples back.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nnn/context.h>
#include <nnn/file.h>
#include <nnn/npy.h>
#include <nnn/run.h>

#include "bench.h"

#define NMODEL 3
#define MAXF 64 /* largest input or output width of a tiny model here */
#define AGREE 1e-4 /* largest |difference| from nnnkit, relative to max(1, |y|) */
#define EXPECTED_REL 1e-5 /* nnnkit against expected.json, as the corpus README says */

enum { C_NNN, C_ORT, C_NODE, C_COUNT };

typedef struct tmodel {
	const char *file, *what; /* file name (in --real DIR, or BUILD/bench), the row's case */
	bool real;               /* from the real corpus: checked against expected.json */
	char path[BN_PATH], onnx[BN_PATH];
	bool present;
} tmodel_t;

/* What the child sends back. */
typedef struct tiny_out {
	int done; /* 1: measured; 0: nnnkit itself failed (notes say why) */
	bool have[NMODEL][C_COUNT];
	double bytes[NMODEL]; /* weights and biases a call reads */
	series_t s[NMODEL][C_COUNT];
	char ort_name[64], node_name[96];
	int nnotes;
	char notes[12][1000];
} tiny_out_t;

static void out_note(tiny_out_t *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void out_note(tiny_out_t *o, const char *fmt, ...)
{
	va_list ap;
	if (o->nnotes == 12)
		return;
	va_start(ap, fmt);
	vsnprintf(o->notes[o->nnotes++], sizeof o->notes[0], fmt, ap);
	va_end(ap);
}

/* ---- ONNX Runtime's C API, by index into struct OrtApi ----
 *
 * Indices counted in onnxruntime_c_api.h (microsoft/onnxruntime), the
 * struct OrtApi of ORT_API_VERSION 13, whose entries later versions keep in
 * place. Every entry that can fail returns an OrtStatus* (NULL: success). */
#define ORT_API_VERSION_USED 13
enum {
	ORT_GetErrorMessage = 2,
	ORT_CreateEnv = 3,
	ORT_CreateSession = 7,
	ORT_Run = 9,
	ORT_CreateSessionOptions = 10,
	ORT_SetSessionExecutionMode = 13,
	ORT_SetSessionGraphOptimizationLevel = 23,
	ORT_SetIntraOpNumThreads = 24,
	ORT_SetInterOpNumThreads = 25,
	ORT_SessionGetInputName = 36,
	ORT_SessionGetOutputName = 37,
	ORT_CreateTensorWithDataAsOrtValue = 49,
	ORT_GetTensorMutableData = 51,
	ORT_GetTensorShapeElementCount = 64,
	ORT_GetTensorTypeAndShape = 65,
	ORT_CreateCpuMemoryInfo = 69,
	ORT_AllocatorFree = 76,
	ORT_GetAllocatorWithDefaultOptions = 78,
	ORT_ReleaseEnv = 92,
	ORT_ReleaseStatus = 93,
	ORT_ReleaseMemoryInfo = 94,
	ORT_ReleaseSession = 95,
	ORT_ReleaseValue = 96,
	ORT_ReleaseTensorTypeAndShapeInfo = 99,
	ORT_ReleaseSessionOptions = 100,
	ORT_AddSessionConfigEntry = 130,
};
/* Values of the header's enums. */
#define ORT_LOGGING_LEVEL_ERROR 3
#define ORT_SEQUENTIAL 0
#define ORT_ENABLE_ALL 99
#define ORT_ARENA_ALLOCATOR 1
#define ORT_MEM_TYPE_DEFAULT 0
#define ONNX_FLOAT 1

typedef void ort_obj; /* every ONNX Runtime object is opaque here */
typedef struct ort_api_base {
	const void *const *(*get_api)(uint32_t version);
	const char *(*get_version)(void);
} ort_api_base_t;

typedef ort_obj *(*f_env)(int level, const char *logid, ort_obj **out);
typedef ort_obj *(*f_session)(const ort_obj *env, const char *path, const ort_obj *opts, ort_obj **out);
typedef ort_obj *(*f_run)(ort_obj *sess, const ort_obj *run_opts, const char *const *in_names,
                          const ort_obj *const *inputs, size_t nin, const char *const *out_names, size_t nout,
                          ort_obj **outputs);
typedef ort_obj *(*f_out)(ort_obj **out);
typedef ort_obj *(*f_int)(ort_obj *opts, int v);
typedef ort_obj *(*f_name)(const ort_obj *sess, size_t i, ort_obj *alloc, char **out);
typedef ort_obj *(*f_tensor)(const ort_obj *info, void *data, size_t len, const int64_t *shape, size_t rank,
                             int type, ort_obj **out);
typedef ort_obj *(*f_data)(ort_obj *value, void **out);
typedef ort_obj *(*f_count)(const ort_obj *info, size_t *out);
typedef ort_obj *(*f_shape)(const ort_obj *value, ort_obj **out);
typedef ort_obj *(*f_cpu)(int alloc_type, int mem_type, ort_obj **out);
typedef ort_obj *(*f_free)(ort_obj *alloc, void *p);
typedef ort_obj *(*f_entry)(ort_obj *opts, const char *key, const char *value);
typedef const char *(*f_msg)(const ort_obj *status);
typedef void (*f_release)(ort_obj *obj);

typedef struct ort {
	void *lib;
	const void *const *api;
	ort_obj *env, *mem;
	char version[32];
} ort_t;

/* The entry at `index`, as the function type the caller names. */
#define API(o, type, index) ((type)(o)->api[index])

/* Whether status is a success; otherwise its message into why (and freed). */
static bool ort_ok(const ort_t *o, ort_obj *status, const char *what, char *why, size_t size)
{
	if (!status)
		return true;
	snprintf(why, size, "%s: %s", what, API(o, f_msg, ORT_GetErrorMessage)(status));
	API(o, f_release, ORT_ReleaseStatus)(status);
	return false;
}

static bool ort_open(ort_t *o, const char *lib, char *why, size_t size)
{
	memset(o, 0, sizeof *o);
	if (!(o->lib = dlopen(lib, RTLD_NOW | RTLD_LOCAL))) {
		snprintf(why, size, "dlopen: %s", dlerror());
		return false;
	}
	const ort_api_base_t *(*base_of)(void);
	*(void **)&base_of = dlsym(o->lib, "OrtGetApiBase");
	const ort_api_base_t *base = base_of ? base_of() : NULL;
	if (!base || !(o->api = base->get_api(ORT_API_VERSION_USED))) {
		snprintf(why, size, "%.300s: no OrtGetApiBase, or no C API of version %d", lib, ORT_API_VERSION_USED);
		return false;
	}
	snprintf(o->version, sizeof o->version, "%s", base->get_version());
	return ort_ok(o, API(o, f_env, ORT_CreateEnv)(ORT_LOGGING_LEVEL_ERROR, "nnnbench", &o->env), "CreateEnv", why,
	              size) &&
	       ort_ok(o, API(o, f_cpu, ORT_CreateCpuMemoryInfo)(ORT_ARENA_ALLOCATOR, ORT_MEM_TYPE_DEFAULT, &o->mem),
	              "CreateCpuMemoryInfo", why, size);
}

/* The library stays loaded: unloading a C++ runtime with threads and
 * static objects is not worth the risk in a child about to exit. */
static void ort_close(ort_t *o)
{
	if (o->mem)
		API(o, f_release, ORT_ReleaseMemoryInfo)(o->mem);
	if (o->env)
		API(o, f_release, ORT_ReleaseEnv)(o->env);
}

/* One session on a model: 1 intra-op thread, all graph optimizations,
 * sequential, no spinning; its input an OrtValue over x, made once. */
typedef struct osess {
	ort_obj *sess, *input;
	char *in_name, *out_name;
} osess_t;

static bool sess_open(const ort_t *o, osess_t *s, const char *path, float *x, int64_t nin, char *why, size_t size)
{
	ort_obj *opts = NULL, *alloc = NULL;
	int64_t shape[2] = { 1, nin };
	memset(s, 0, sizeof *s);
	bool good =
		ort_ok(o, API(o, f_out, ORT_CreateSessionOptions)(&opts), "CreateSessionOptions", why, size) &&
		ort_ok(o, API(o, f_int, ORT_SetIntraOpNumThreads)(opts, 1), "SetIntraOpNumThreads", why, size) &&
		ort_ok(o, API(o, f_int, ORT_SetInterOpNumThreads)(opts, 1), "SetInterOpNumThreads", why, size) &&
		ort_ok(o, API(o, f_int, ORT_SetSessionGraphOptimizationLevel)(opts, ORT_ENABLE_ALL),
		       "SetSessionGraphOptimizationLevel", why, size) &&
		ort_ok(o, API(o, f_int, ORT_SetSessionExecutionMode)(opts, ORT_SEQUENTIAL), "SetSessionExecutionMode", why,
		       size) &&
		ort_ok(o, API(o, f_entry, ORT_AddSessionConfigEntry)(opts, "session.intra_op.allow_spinning", "0"),
		       "AddSessionConfigEntry", why, size) &&
		ort_ok(o, API(o, f_session, ORT_CreateSession)(o->env, path, opts, &s->sess), "CreateSession", why, size) &&
		ort_ok(o, API(o, f_out, ORT_GetAllocatorWithDefaultOptions)(&alloc), "GetAllocatorWithDefaultOptions", why,
		       size) &&
		ort_ok(o, API(o, f_name, ORT_SessionGetInputName)(s->sess, 0, alloc, &s->in_name), "SessionGetInputName", why,
		       size) &&
		ort_ok(o, API(o, f_name, ORT_SessionGetOutputName)(s->sess, 0, alloc, &s->out_name), "SessionGetOutputName",
		       why, size) &&
		ort_ok(o,
		       API(o, f_tensor, ORT_CreateTensorWithDataAsOrtValue)(o->mem, x, (size_t)nin * sizeof *x, shape, 2,
		                                                            ONNX_FLOAT, &s->input),
		       "CreateTensorWithDataAsOrtValue", why, size);
	if (opts)
		API(o, f_release, ORT_ReleaseSessionOptions)(opts);
	/* The names are copied out of the allocator's memory: it frees them. */
	for (char **n = &s->in_name; alloc && n <= &s->out_name; n++)
		if (*n) {
			char *copy = strdup(*n);
			(void)API(o, f_free, ORT_AllocatorFree)(alloc, *n); /* returns NULL: it cannot fail */
			*n = copy;
			good = good && copy;
		}
	return good;
}

static void sess_close(const ort_t *o, osess_t *s)
{
	if (s->input)
		API(o, f_release, ORT_ReleaseValue)(s->input);
	if (s->sess)
		API(o, f_release, ORT_ReleaseSession)(s->sess);
	free(s->in_name);
	free(s->out_name);
	memset(s, 0, sizeof *s);
}

/* One Run as a caller makes it by default: the output allocated by ONNX
 * Runtime (a NULL OrtValue*) and released after. With y non-NULL, the
 * output is copied there (ny floats expected). */
static bool sess_run(const ort_t *o, osess_t *s, float *y, int64_t ny, char *why, size_t size)
{
	ort_obj *out = NULL, *info = NULL;
	const char *in = s->in_name, *outn = s->out_name;
	const ort_obj *input = s->input;
	if (!ort_ok(o, API(o, f_run, ORT_Run)(s->sess, NULL, &in, &input, 1, &outn, 1, &out), "Run", why, size))
		return false;
	bool good = true;
	if (y) {
		size_t n = 0;
		void *data = NULL;
		good = ort_ok(o, API(o, f_shape, ORT_GetTensorTypeAndShape)(out, &info), "GetTensorTypeAndShape", why, size) &&
		       ort_ok(o, API(o, f_count, ORT_GetTensorShapeElementCount)(info, &n), "GetTensorShapeElementCount", why,
		              size) &&
		       ort_ok(o, API(o, f_data, ORT_GetTensorMutableData)(out, &data), "GetTensorMutableData", why, size);
		if (good && n != (size_t)ny) {
			snprintf(why, size, "Run gave %zu values, nnnkit %lld", n, (long long)ny);
			good = false;
		}
		if (good)
			memcpy(y, data, n * sizeof *y);
		if (info)
			API(o, f_release, ORT_ReleaseTensorTypeAndShapeInfo)(info);
	}
	API(o, f_release, ORT_ReleaseValue)(out);
	return good;
}

/* ---- the child ---- */

typedef struct tcase {
	nnn_file_t *file;
	nnn_plan_t *plan;
	int64_t nin, nout;
	float x[MAXF], y[MAXF], oy[MAXF];
	osess_t os;
	worker_t node; /* node's session.run: bench/ort_bench.js --worker */
	long calls[C_COUNT];
} tcase_t;

/* Batch 1 input width of a model whose first layer is Dense (all three
 * here): its weights hold inputs x neurons values. 0 when not. */
static int64_t dense_inputs(const nnn_model_t *m)
{
	if (m->layer_count < 1 || m->layers[0].id != NNN_LAYER_ID_DENSE || m->layers[0].body.dense.neurons < 1)
		return 0;
	return (int64_t)m->layers[0].body.dense.weights.data.n / m->layers[0].body.dense.neurons;
}

/* The first sample of expected.json's batch for `file` into x, and its
 * expected output into want; false (why says so) when there is none. */
static bool expected(const char *dir, const char *file, int64_t nin, float *x, float *want, int64_t nout, char *why,
                     size_t size)
{
	char path[BN_PATH];
	json_error_t err;
	snprintf(path, sizeof path, "%s/expected.json", dir);
	json_t *root = json_load_file(path, 0, &err);
	json_t *in = json_array_get(json_object_get(json_object_get(root, file), "input"), 0);
	json_t *out = json_array_get(json_object_get(json_object_get(root, file), "output"), 0);
	bool good = (int64_t)json_array_size(in) == nin && (int64_t)json_array_size(out) == nout;
	for (int64_t k = 0; good && k < nin; k++)
		x[k] = (float)json_number_value(json_array_get(in, (size_t)k));
	for (int64_t k = 0; good && k < nout; k++)
		want[k] = (float)json_number_value(json_array_get(out, (size_t)k));
	if (!good)
		snprintf(why, size, "%.300s: %.300s", path,
		         !root ? err.text : "no input and output of the model's widths for this file");
	json_decref(root);
	return good;
}

static double worst_diff(const float *a, const float *b, int64_t n, bool relative)
{
	double worst = 0;
	for (int64_t k = 0; k < n; k++) {
		double d = fabs((double)a[k] - (double)b[k]) / (relative ? fmax(1e-30, fabs((double)b[k])) : fmax(1, fabs((double)b[k])));
		worst = isnan(d) ? INFINITY : fmax(worst, d);
	}
	return worst;
}

/* Calls so that a run lasts about `seconds`, from the second of two
 * single calls (the first warms up). */
static long calls_for(double t, double seconds)
{
	long n = (long)(seconds / (t > 1e-8 ? t : 1e-8));
	return n < 10 ? 10 : n > 2000000 ? 2000000 : n;
}

static double time_ort(const ort_t *o, tcase_t *k, long n, char *why, size_t size)
{
	double t0 = bn_now();
	for (long i = 0; i < n; i++)
		if (!sess_run(o, &k->os, NULL, 0, why, size))
			return -1;
	return bn_now() - t0;
}

static double time_node(tcase_t *k, long n, char *reply, size_t size)
{
	char req[64];
	snprintf(req, sizeof req, "net 1 %ld", n);
	return bn_w_ask(&k->node, req, reply, size);
}

/* Writes x (1 x nin) and y (1 x nout) as .npy files for node's check. */
static bool write_pair(const char *xp, const char *yp, const tcase_t *k)
{
	nnn_shape_t sx = { .rank = 2, .dims = { 1, k->nin } }, sy = { .rank = 2, .dims = { 1, k->nout } };
	nnn_diags_t d;
	nnn_diags_init(&d);
	bool good = nnn_npy_write_file(xp, &sx, k->x, &d) == NNN_OK && nnn_npy_write_file(yp, &sy, k->y, &d) == NNN_OK;
	nnn_diags_free(&d);
	return good;
}

static void child(const config_t *c, tmodel_t *ms, bool ort_wanted, bool node_wanted, tiny_out_t *o)
{
	tcase_t *ks = calloc(NMODEL, sizeof *ks);
	nnn_ctx_t *ctx = NULL;
	nnn_diags_t d;
	char why[900], buf[600];
	ort_t ort = { 0 };
	bool ort_up = false;
	double run_s = c->quick ? 0.01 : 0.05;
	int rounds = c->quick ? 5 : 11;

	nnn_diags_init(&d);
	if (!ks || nnn_ctx_new(&ctx, &d) != NNN_OK || nnn_plugin_load(ctx, c->plugin, &d) != NNN_OK) {
		out_note(o, "tiny models: nnnkit cannot start: %s", d.n ? nnn_diag_format(&d.v[0], buf, sizeof buf) : "no memory");
		goto done;
	}
	/* nnnkit: a plan at batch 1 for every model, checked against
	 * expected.json where there is one. */
	for (int i = 0; i < NMODEL; i++) {
		tcase_t *k = &ks[i];
		nnn_run_opts_t ro = { .size = sizeof ro, .threads = 1 };
		if (!ms[i].present)
			continue;
		nnn_diags_clear(&d);
		if (nnn_file_open(ms[i].path, NULL, &k->file, &d) != NNN_OK)
			goto nnn_failed;
		const nnn_model_t *m = nnn_file_model(k->file);
		nnn_shape_t in = { .rank = 2, .dims = { 1, k->nin = dense_inputs(m) } };
		if (k->nin < 1 || k->nin > MAXF) {
			out_note(o, "tiny models: %s: not a Dense model of at most %d inputs", ms[i].path, MAXF);
			goto done;
		}
		if (nnn_plan_new(ctx, m, &in, &ro, &k->plan, &d) != NNN_OK)
			goto nnn_failed;
		k->nout = nnn_shape_numel(nnn_plan_shape(k->plan, m->layer_count - 1));
		if (k->nout < 1 || k->nout > MAXF) {
			out_note(o, "tiny models: %s: %lld outputs, at most %d here", ms[i].path, (long long)k->nout, MAXF);
			goto done;
		}
		float want[MAXF];
		bool have_want = false;
		for (int64_t j = 0; j < k->nin; j++)
			k->x[j] = (float)(0.5 - 0.25 * (double)j / (double)k->nin);
		if (ms[i].real && !(have_want = expected(c->real, ms[i].file, k->nin, k->x, want, k->nout, why, sizeof why)))
			out_note(o, "tiny models: %s: cannot check against expected.json (%s): checked against ONNX Runtime alone",
			         ms[i].file, why);
		if (nnn_plan_run(k->plan, k->x, k->y, &d) != NNN_OK)
			goto nnn_failed;
		if (have_want) {
			double w = worst_diff(k->y, want, k->nout, true);
			out_note(o, "tiny models: %s, first sample of expected.json: nnnkit's %lld outputs differ from the "
			            "reference implementation's by at most %.3g relative (limit %g)%s",
			         ms[i].file, (long long)k->nout, w, EXPECTED_REL, w <= EXPECTED_REL ? "" : ": WRONG, not timed");
			if (!(w <= EXPECTED_REL)) {
				nnn_plan_free(k->plan);
				k->plan = NULL;
				continue;
			}
		}
		for (int32_t l = 0; l < m->layer_count; l++)
			o->bytes[i] += 4.0 * (double)(m->layers[l].bias.data.n +
			                              (m->layers[l].id == NNN_LAYER_ID_DENSE ? m->layers[l].body.dense.weights.data.n : 0));
		o->have[i][C_NNN] = true;
		continue;
	nnn_failed:
		out_note(o, "tiny models: nnnkit cannot run %s: %s", ms[i].path,
		         d.n ? nnn_diag_format(&d.v[0], buf, sizeof buf) : "?");
		goto done;
	}

	/* ONNX Runtime through its C API, checked against nnnkit. */
	char lib[BN_PATH + 128];
	snprintf(lib, sizeof lib, "%s/node_modules/onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime.so.1", c->ort_dir);
	if (ort_wanted && !(ort_up = ort_open(&ort, lib, why, sizeof why)))
		out_note(o, "tiny models: ONNX Runtime's C API not usable (%s): no C API figures", why);
	for (int i = 0; i < NMODEL && ort_up; i++) {
		tcase_t *k = &ks[i];
		if (!o->have[i][C_NNN])
			continue;
		if (!sess_open(&ort, &k->os, ms[i].onnx, k->x, k->nin, why, sizeof why) ||
		    !sess_run(&ort, &k->os, k->oy, k->nout, why, sizeof why)) {
			out_note(o, "tiny models: ONNX Runtime C API on %s: %s: no C API figure", ms[i].onnx, why);
			continue;
		}
		double w = worst_diff(k->oy, k->y, k->nout, false);
		o->have[i][C_ORT] = w <= AGREE;
		out_note(o, "tiny models: %s: ONNX Runtime's C API Run and nnnkit differ by at most %.3g (limit %g)%s",
		         ms[i].what, w, AGREE, o->have[i][C_ORT] ? "" : ": NOT the same model, not timed");
	}
	if (ort_up)
		snprintf(o->ort_name, sizeof o->ort_name, "ONNX Runtime %s C API Run", ort.version);

	/* node's session.run (bench/ort_bench.js), on the same .onnx files,
	 * checked against nnnkit by the script itself. */
	char node_path[BN_PATH + 32], xp[BN_PATH + 32], yp[BN_PATH + 32];
	snprintf(node_path, sizeof node_path, "NODE_PATH=%s/node_modules", c->ort_dir);
	snprintf(xp, sizeof xp, "%s/tiny-x.npy", c->dir);
	snprintf(yp, sizeof yp, "%s/tiny-y.npy", c->dir);
	char **env = node_wanted ? bn_env(c, 1) : NULL;
	size_t ne = 0;
	while (env && env[ne])
		ne++;
	char **nenv = env ? calloc(ne + 2, sizeof *nenv) : NULL;
	if (nenv) {
		size_t j = 0;
		nenv[j++] = node_path;
		for (size_t i = 0; i < ne; i++)
			if (strncmp(env[i], "NODE_PATH=", 10))
				nenv[j++] = env[i];
	}
	for (int i = 0; i < NMODEL && nenv; i++) {
		tcase_t *k = &ks[i];
		char shape[24], req[2 * BN_PATH + 80], reply[512];
		if (!o->have[i][C_NNN])
			continue;
		snprintf(shape, sizeof shape, "%lld", (long long)k->nin);
		char *argv[] = { (char *)c->node, (char *)c->ort, (char *)"--worker", (char *)"--threads", (char *)"1",
			         (char *)"--shape", shape, ms[i].onnx, NULL };
		if (!bn_w_spawn(&k->node, "node", argv, nenv) || !bn_w_ready(&k->node)) {
			out_note(o, "tiny models: node %s on %s did not start (%s): no node figure", c->ort, ms[i].onnx,
			         k->node.hello[0] ? k->node.hello : "no answer");
			bn_w_reap(&k->node);
			continue;
		}
		snprintf(o->node_name, sizeof o->node_name, "onnxruntime-node session.run (%.40s)", k->node.hello + 6);
		snprintf(req, sizeof req, "check %s %s", xp, yp);
		double w = write_pair(xp, yp, k) ? bn_w_ask(&k->node, req, reply, sizeof reply) : -1;
		o->have[i][C_NODE] = w >= 0 && w <= AGREE;
		if (!o->have[i][C_NODE]) {
			out_note(o, "tiny models: %s: node's session.run check: %s: no node figure", ms[i].what,
			         w < 0 ? reply : "NOT the same model");
			bn_w_reap(&k->node);
		}
	}
	unlink(xp);
	unlink(yp);
	free(nenv);
	bn_env_free(env);

	/* Calibrate, then time in rounds. */
	for (int i = 0; i < NMODEL; i++) {
		tcase_t *k = &ks[i];
		for (int who = 0; who < C_COUNT; who++) {
			double t = 0;
			char reply[512] = "";
			/* node's calls take tens of thousands to warm up (its JIT): 60 us
			 * a call over the first thousand, 20 us after 50,000 (identity). */
			if (who == C_NODE && o->have[i][who])
				t = time_node(k, c->quick ? 10000 : 30000, reply, sizeof reply);
			for (int rep = 0; rep < 2 && o->have[i][who] && t >= 0; rep++)
				t = who == C_NNN ? bn_time_plan(k->plan, k->x, k->y, 1) : who == C_ORT ? time_ort(&ort, k, 1, why, sizeof why)
				                                                 : time_node(k, 1, reply, sizeof reply);
			if (o->have[i][who] && t < 0) {
				out_note(o, "tiny models: %s: a timed call failed (%s)", ms[i].what,
				         who == C_ORT ? why : who == C_NODE ? reply : "nnn_plan_run");
				o->have[i][who] = false;
			}
			k->calls[who] = calls_for(t, run_s);
		}
	}
	for (int round = 0; round < rounds; round++) {
		fprintf(stderr, "nnnbench: tiny models: round %d of %d\n", round + 1, rounds);
		for (int i = 0; i < NMODEL; i++)
			for (int j = 0; j < C_COUNT; j++) {
				int who = (round + i + j) % C_COUNT;
				tcase_t *k = &ks[i];
				char reply[512] = "";
				if (!o->have[i][who])
					continue;
				double t = who == C_NNN ? bn_time_plan(k->plan, k->x, k->y, k->calls[who])
				           : who == C_ORT ? time_ort(&ort, k, k->calls[who], why, sizeof why)
				                          : time_node(k, k->calls[who], reply, sizeof reply);
				if (t < 0) {
					out_note(o, "tiny models: %s: a timed run failed (%s): its figures are left out", ms[i].what,
					         who == C_ORT ? why : who == C_NODE ? reply : "nnn_plan_run");
					o->have[i][who] = false;
				} else {
					bn_add(&o->s[i][who], t / (double)k->calls[who], 0);
				}
			}
	}
	o->done = 1;
done:
	for (int i = 0; ks && i < NMODEL; i++) {
		bn_w_reap(&ks[i].node);
		if (ort_up)
			sess_close(&ort, &ks[i].os);
		nnn_plan_free(ks[i].plan);
		nnn_file_close(ks[i].file);
	}
	if (ort_up)
		ort_close(&ort);
	free(ks);
	nnn_ctx_free(ctx);
	nnn_diags_free(&d);
}

/* ---- the driver's side ---- */

/* Runs the child and reads its answer into *o; false when it died. */
static bool run_child(const config_t *c, tmodel_t *ms, bool ort, bool node, tiny_out_t *o, char *why, size_t size)
{
	int p[2], status;
	if (pipe2(p, O_CLOEXEC) != 0) {
		snprintf(why, size, "pipe: %s", strerror(errno));
		return false;
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		snprintf(why, size, "fork: %s", strerror(errno));
		close(p[0]);
		close(p[1]);
		return false;
	}
	if (pid == 0) {
		close(p[0]);
		tiny_out_t *mine = calloc(1, sizeof *mine);
		if (mine) {
			child(c, ms, ort, node, mine);
			for (size_t at = 0; at < sizeof *mine;) {
				ssize_t n = write(p[1], (char *)mine + at, sizeof *mine - at);
				if (n <= 0 && errno != EINTR)
					break;
				at += n > 0 ? (size_t)n : 0;
			}
		}
		/* _exit: the parent's stdio buffers and atexit work are not ours. */
		_exit(mine ? 0 : 1);
	}
	close(p[1]);
	size_t at = 0;
	while (at < sizeof *o) {
		ssize_t n = read(p[0], (char *)o + at, sizeof *o - at);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		at += (size_t)n;
	}
	close(p[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (at == sizeof *o)
		return true;
	if (WIFSIGNALED(status))
		snprintf(why, size, "it died of signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
	else
		snprintf(why, size, "it exited with %d before answering", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	return false;
}

bool bn_tiny(const config_t *c, table_t *t)
{
	tmodel_t ms[NMODEL] = {
		{ .file = "tictactoedemo.nnn", .what = "tictactoe", .real = true },
		{ .file = "2dmovedemo.nnn", .what = "2dmove", .real = true },
		{ .file = "tiny-identity.nnn", .what = "identity" },
	};
	static const char *const about[NMODEL] = { "Dense 10-256-256-128-9", "Dense 4-64-64-32-4", "Dense 1->1" };
	const char *section = "tiny models, batch 1, 1 thread (time per call)";
	char why[1024];
	double sec, mem;
	char **env = bn_env(c, 1);
	tiny_out_t *o = calloc(1, sizeof *o);
	bool good = env && o;

	fprintf(stderr, "nnnbench: tiny models\n");
	bool real = access(c->real, R_OK | X_OK) == 0;
	if (!real)
		bn_note(t, "tiny models: the real corpus is not at %s (--real DIR, or NNN_REAL_CORPUS): its two rows are "
		           "skipped",
		        c->real);
	/* Every model exported to ONNX; ONNX Runtime (C API and node) when
	 * make ort installed it. */
	char lib[BN_PATH + 128];
	snprintf(lib, sizeof lib, "%s/node_modules/onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime.so.1", c->ort_dir);
	bool ort = access(lib, R_OK) == 0, node = ort && access(c->node, X_OK) == 0;
	if (!ort)
		bn_note(t, "tiny models: no %s (make ort): no ONNX Runtime figures", lib);
	for (int i = 0; i < NMODEL && good; i++) {
		tmodel_t *m = &ms[i];
		snprintf(m->path, sizeof m->path, "%s/%s", m->real ? c->real : c->dir, m->file);
		snprintf(m->onnx, sizeof m->onnx, "%s/tiny-%s.onnx", c->dir, m->what);
		if (!m->real) {
			char *argv[] = { (char *)c->mkexample, (char *)"--net", (char *)"identity", m->path, NULL };
			if (!bn_spawn(argv, env, NULL, &sec, &mem)) {
				fprintf(stderr, "nnnbench: %s --net identity %s failed\n", c->mkexample, m->path);
				good = false;
				break;
			}
		}
		m->present = !m->real || (real && access(m->path, R_OK) == 0);
		char *conv[] = { (char *)c->nnnkit, (char *)"convert", m->path, m->onnx, NULL };
		if (m->present && ort && !bn_spawn(conv, env, NULL, &sec, &mem))
			bn_note(t, "tiny models: nnnkit convert %s %s failed: no ONNX Runtime figure for it", m->path, m->onnx);
	}
	bn_env_free(env);
	if (good && !run_child(c, ms, ort, node, o, why, sizeof why)) {
		bn_note(t, "tiny models: the measuring process failed: %s: no tiny-model figures", why);
		memset(o, 0, sizeof *o);
		o->done = 1;
	}
	for (int i = 0; i < NMODEL; i++)
		unlink(ms[i].onnx);
	if (!good || !o->done) {
		for (int i = 0; o && i < o->nnotes; i++)
			fprintf(stderr, "nnnbench: %s\n", o->notes[i]);
		free(o);
		return false;
	}
	for (int i = 0; i < o->nnotes; i++)
		bn_note(t, "%s", o->notes[i]);
	if (o->ort_name[0])
		bn_note(t, "tiny models: %s: libonnxruntime.so.1 of onnxruntime-node in %s, opened with dlopen; a session "
		           "per model (intra-op threads 1, inter-op 1, graph optimizations all, sequential, "
		           "session.intra_op.allow_spinning 0), its input an OrtValue over a buffer made once, its output "
		           "allocated by ONNX Runtime on every Run (as by default) and released after",
		        o->ort_name, c->ort_dir);
	if (o->node_name[0])
		bn_note(t, "tiny models: 2nd reference %s: awaited session.run calls in node (bench/ort_bench.js), the "
		           "same .onnx files: the C API Run plus node's promise, setImmediate and output tensor",
		        o->node_name);
	/* At batch 1 a call reads every weight once and does 2 FLOPs with it:
	 * the rate at which each reads them says how close to the cache's
	 * bandwidth (both demo files fit in L2) a call comes. Not said of the
	 * identity model, which has 8 bytes. */
	for (int i = 0; i < NMODEL; i++) {
		stats_t sn = bn_stats(&o->s[i][C_NNN], U_S, 0), so = bn_stats(&o->s[i][C_ORT], U_S, 0);
		if (sn.n && o->bytes[i] >= 1000)
			bn_note(t, "tiny models: %s: %.1f KB of weights and biases a call: nnnkit reads them at %.1f GB/s%s%.1f%s",
			        ms[i].what, o->bytes[i] / 1e3, o->bytes[i] / sn.med / 1e9,
			        so.n ? ", ONNX Runtime's Run at " : "", so.n ? o->bytes[i] / so.med / 1e9 : 0.0,
			        so.n ? " GB/s (medians)" : " (median)");
	}
	for (int i = 0; i < NMODEL; i++) {
		char figure[96], what[32];
		snprintf(figure, sizeof figure, "nnn_plan_run, %s", about[i]);
		snprintf(what, sizeof what, "%s", ms[i].present ? ms[i].what : "skipped");
		row_t *r = bn_row(t, section, figure, what, U_US);
		if (!r) {
			free(o);
			return false;
		}
		r->fig = bn_stats(&o->s[i][C_NNN], U_US, 0);
		bn_ref(r, o->ort_name[0] ? o->ort_name : "ONNX Runtime C API Run", bn_stats(&o->s[i][C_ORT], U_US, 0));
		bn_ref2(r, o->node_name[0] ? "onnxruntime-node session.run" : "onnxruntime-node",
		        bn_stats(&o->s[i][C_NODE], U_US, 0));
		/* Issue 17: the demo files >= 3x faster than ONNX Runtime's Run
		 * (time <= 1/3 of its); a call's fixed cost under 1 us. */
		if (ms[i].real)
			bn_target(r, T_RATIO_MAX, 1.0 / 3.0);
		else
			bn_target(r, T_BELOW, 1.0);
	}
	free(o);
	return true;
}
