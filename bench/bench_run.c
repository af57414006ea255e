/* bench_run: inference speed of the example classifier (tools/mkexample.c:
 * Conv 5x5 1->8, Conv 5x5 8->16, Dense 6400->128 with flatten, Dense
 * 128->10; ReLU, softmax last) through the public run API with the builtin
 * plugin, set against cblas_sgemm measured in the same process.
 *
 * The model is built in memory with the same deterministic weights as
 * mkexample, encoded and decoded again (no file), and run with nnn_plan_run
 * at batch 1, 8, 64, 256 and 1024, with 1 and 2 threads. Every figure is the median
 * of several runs with its min..max; each run repeats the call until it has
 * lasted a while and counts the time per call. The reference, a
 * 1024x1024x1024 cblas_sgemm, is measured in the same process with the same
 * thread count, its runs interleaved with the network's so that drift hits
 * both alike; the ratio is network GFLOP/s over GEMM GFLOP/s.
 *
 * Threads: the builtin kernels share each layer's work among
 * nnn_run_opts_t.threads threads of their own and call no OpenBLAS on their
 * fast (AVX2, AVX-512) path; their portable path sets OpenBLAS to 1 thread
 * for the whole process. OpenBLAS reads OPENBLAS_NUM_THREADS once, when it
 * is loaded, and keeps one process-wide setting, so each thread count runs
 * in a child process (this program again, fork + exec of the file
 * /proc/self/exe names, with --child) whose environment has
 * OPENBLAS_NUM_THREADS=N, for the reference; nnn_run_opts_t.threads gets
 * the same N, and the network is timed only once the reference's OpenBLAS
 * threads have stopped spinning (blas_settle). OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE, which pin OpenBLAS to an
 * older kernel set, are removed from the children's environment (unless
 * --keep-env), for the network and the reference alike; the output says so.
 * The child hands its raw figures back as one binary record over a pipe (it
 * is the same executable, so the layout is the same).
 *
 *   bench_run [--json] [--plugin FILE] [--threads N] [--breakdown B] [--keep-env]
 */
#define _GNU_SOURCE
#include <cblas.h>
#ifdef __SSE2__
#include <immintrin.h> /* SSE2 everywhere on x86-64; AVX-512 in read_avx512 only */
#endif
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <nnn/context.h>
#include <nnn/model.h>
#include <nnn/run.h>

#define NLAYERS 4
#define NBATCH 5
#define NTHREADS 2
#define RUNS 9              /* odd: the median is one of the runs */
#define RUN_SECONDS 0.12    /* each run of a network or GEMM figure lasts about this long */
#define LAYER_SECONDS 0.04  /* each run of a per-layer figure */
#define GEMM_N 1024         /* the reference: [GEMM_N x GEMM_N] x [GEMM_N x GEMM_N] */
#define BREAK_BATCH 64      /* the default batch of the per-layer breakdown (1 thread) */
#define RESULT_MAGIC 0x6e6e6e62u

static const int batches[NBATCH] = { 1, 8, 64, 256, 1024 };
static const int thread_counts[NTHREADS] = { 1, 2 };
/* Removed from the children's environment (OPENBLAS_NUM_THREADS is then set). */
static const char *const blas_env[] = { "OPENBLAS_NUM_THREADS", "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE" };

/* ---- measurements ---- */

/* One figure: seconds per call of each run. */
typedef struct series {
	double t[RUNS];
	int n;
	long iters; /* calls per run */
} series_t;

/* What one child measures; sent to the parent as raw bytes. */
typedef struct child_result {
	uint32_t magic, size;
	int threads, blas_threads;
	char corename[64], config[192];
	double flop_per_image;     /* 2 x MACs of every conv and dense layer */
	double layer_flop[NLAYERS]; /* per image */
	char layer_name[NLAYERS][48];
	series_t net[NBATCH];      /* nnn_plan_run, seconds per batch */
	series_t gemm;             /* cblas_sgemm GEMM_N^3, seconds per call */
	/* The breakdown, at one batch (--breakdown), measured only when threads == 1. */
	bool have_layers;
	nnn_shape_t shape[NLAYERS + 1]; /* input, then each layer's output */
	series_t whole;                 /* nnn_plan_run */
	series_t fwd[NLAYERS], act[NLAYERS], sgemm[NLAYERS], read[NLAYERS];
	int gemm_m[NLAYERS], gemm_n[NLAYERS], gemm_k[NLAYERS], gemm_calls[NLAYERS];
	double max_diff; /* chained kernels against nnn_plan_run, largest |difference| */
} child_result_t;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void add(series_t *s, double seconds)
{
	if (s->n < RUNS)
		s->t[s->n++] = seconds > 0 ? seconds : 1e-12;
}

/* Prints what went wrong and reports failure. */
static bool ok(nnn_status_t st, const char *what, nnn_diags_t *d)
{
	char buf[1024];
	if (st == NNN_OK) {
		nnn_diags_clear(d);
		return true;
	}
	fprintf(stderr, "bench_run: %s: %s (%s)\n", what, nnn_status_str(st), nnn_status_name(st));
	for (size_t i = 0; i < d->n; i++)
		fprintf(stderr, "bench_run:   %s\n", nnn_diag_format(&d->v[i], buf, sizeof buf));
	nnn_diags_clear(d);
	return false;
}

/* 64-byte aligned, as the kernels' own weights are: a misaligned 64-byte
 * load touches two cache lines, and the plain read would measure that. */
static void *alloc_floats(int64_t n)
{
	void *p = n > 0 && (uint64_t)n <= (SIZE_MAX - 63) / sizeof(float)
	                  ? aligned_alloc(64, ((size_t)n * sizeof(float) + 63) / 64 * 64)
	                  : NULL;
	if (!p)
		fprintf(stderr, "bench_run: cannot allocate %lld floats\n", (long long)n);
	return p;
}

/* Cheap and deterministic values in [lo, lo + 1). */
static void sawtooth(float *v, int64_t n, unsigned salt, float lo)
{
	for (int64_t i = 0; i < n; i++)
		v[i] = (float)(((uint64_t)i * 2654435761u + salt) & 1023u) / 1024.0f + lo;
}

/* ---- the model: mkexample's, with its weights ---- */

static uint32_t rng = 12345u;

static float next_weight(float scale)
{
	rng = rng * 1664525u + 1013904223u; /* mkexample's LCG, same order: the same model */
	return scale * ((float)(rng >> 8) / (float)(1u << 24) - 0.5f);
}

/* The arrays a hand-built model points at; freed once it is encoded. */
typedef struct parts {
	float *data[2 * NLAYERS];
	int ndata;
} parts_t;

static bool tensor(nnn_tensor_t *t, parts_t *o, const int32_t *dims, int32_t rank, float scale)
{
	int64_t n = 1;
	float *v;
	memset(t, 0, sizeof *t);
	for (int32_t i = 0; i < rank; i++)
		n *= dims[i];
	if (!(v = alloc_floats(n)))
		return false;
	for (int64_t i = 0; i < n; i++)
		v[i] = next_weight(scale);
	o->data[o->ndata++] = v;
	t->dims.v = dims;
	t->dims.n = rank;
	t->requires_grad = true;
	t->data = nnn_f32s_view(v, (int32_t)n);
	return true;
}

/* Builds the classifier, encodes it and decodes a copy that owns its memory:
 * a model exactly as a reader of the file would get it. */
static bool build_model(nnn_model_t **out, nnn_diags_t *d)
{
	static const int32_t k1[] = { 8, 5, 5, 1 }, b1[] = { 8 }, k2[] = { 16, 5, 5, 8 }, b2[] = { 16 };
	static const int32_t w3[] = { 6400, 128 }, b3[] = { 128 }, w4[] = { 128, 10 }, b4[] = { 10 };
	static const int32_t pads[] = { 0, 0, 0, 0 };
	static const char desc[] = "bench_run: MNIST-shaped classifier (mkexample's weights)";
	const int32_t *kd[2] = { k1, k2 }, *cb[2] = { b1, b2 }, *wd[2] = { w3, w4 }, *db[2] = { b3, b4 };
	nnn_decode_opts_t copy = { .flags = NNN_DECODE_COPY, .visit = NULL, .ctx = NULL };
	nnn_layer_t layers[NLAYERS];
	nnn_model_t m;
	parts_t o = { .ndata = 0 };
	unsigned char *buf = NULL;
	size_t len = 0;
	bool good = true;

	*out = NULL;
	rng = 12345u;
	memset(layers, 0, sizeof layers);
	memset(&m, 0, sizeof m);
	for (int i = 0; i < 2 && good; i++) { /* mkexample's order: bias, then kernels */
		nnn_layer_t *L = &layers[i];
		L->id = NNN_LAYER_ID_CONV;
		L->activation.id = NNN_ACTIVATION_ID_RELU;
		L->body.conv.filters = kd[i][0];
		L->body.conv.padding_type = NNN_PADDING_TYPE_VALID;
		L->body.conv.padding_dims.v = pads;
		L->body.conv.padding_dims.n = 4;
		good = tensor(&L->bias, &o, cb[i], 1, 0.1f) && tensor(&L->body.conv.kernels, &o, kd[i], 4, 0.4f);
	}
	for (int i = 0; i < 2 && good; i++) {
		nnn_layer_t *L = &layers[2 + i];
		L->id = NNN_LAYER_ID_DENSE;
		L->activation.id = i ? NNN_ACTIVATION_ID_SOFTMAX : NNN_ACTIVATION_ID_RELU;
		L->body.dense.neurons = wd[i][1];
		L->body.dense.flatten = i == 0;
		good = tensor(&L->bias, &o, db[i], 1, 0.1f) && tensor(&L->body.dense.weights, &o, wd[i], 2, 0.05f);
	}
	if (good) {
		m.description.ptr = desc;
		m.description.len = (int32_t)strlen(desc);
		m.layer_count = NLAYERS;
		m.layers = layers;
		m.param_count = nnn_model_param_total(&m);
		good = ok(nnn_model_encode(&m, &buf, &len, d), "nnn_model_encode", d) &&
		       ok(nnn_model_decode(buf, len, &copy, out, d), "nnn_model_decode", d);
	}
	free(buf);
	for (int i = 0; i < o.ndata; i++)
		free(o.data[i]);
	return good;
}

/* Multiply-adds of layer L for one image, from its input and output shapes
 * (batch first): conv, out positions x filters x (k1*..*kn*channels); dense,
 * rows x inputs x neurons. Bias and activation work are not counted. */
static double layer_macs(const nnn_layer_t *L, const nnn_shape_t *in, const nnn_shape_t *out)
{
	double batch = (double)in->dims[0];
	if (L->id == NNN_LAYER_ID_CONV) {
		double kc = (double)L->body.conv.kernels.data.n / L->body.conv.filters;
		return (double)nnn_shape_numel(out) * kc / batch;
	}
	return (double)nnn_shape_numel(in) * L->body.dense.neurons / batch;
}

static void layer_name(const nnn_layer_t *L, char *buf, size_t size)
{
	const char *act = L->activation.id == NNN_ACTIVATION_ID_RELU      ? "relu"
	                  : L->activation.id == NNN_ACTIVATION_ID_SOFTMAX ? "softmax"
	                                                                  : "act";
	if (L->id == NNN_LAYER_ID_CONV) {
		const int32_t *k = L->body.conv.kernels.dims.v;
		snprintf(buf, size, "conv %dx%d %d->%d, %s", (int)k[1], (int)k[2], (int)k[3], (int)k[0], act);
	} else {
		snprintf(buf, size, "dense %d->%d, %s", (int)L->body.dense.weights.dims.v[0], (int)L->body.dense.neurons,
		         act);
	}
}

/* ---- timing loops ---- */

typedef bool (*work_fn)(void *arg);

/* Seconds per call over `iters` calls. */
static bool timed(work_fn f, void *arg, long iters, double *per_call)
{
	double t0 = now();
	for (long i = 0; i < iters; i++)
		if (!f(arg))
			return false;
	*per_call = (now() - t0) / (double)iters;
	return true;
}

/* Warms up (two calls, the second timed) and picks the calls per run that
 * make a run last about `seconds`. */
static bool calibrate(work_fn f, void *arg, double seconds, long *iters)
{
	double t;
	if (!f(arg) || !timed(f, arg, 1, &t))
		return false;
	if (t < seconds / 8) { /* a longer look for calls much shorter than a run */
		long k = (long)(seconds / 8 / (t > 1e-9 ? t : 1e-9));
		if (!timed(f, arg, k < 1 ? 1 : k, &t))
			return false;
	}
	t = t > 1e-9 ? t : 1e-9;
	*iters = seconds / t < 1 ? 1 : seconds / t > 1e8 ? 100000000L : (long)(seconds / t);
	return true;
}

typedef struct net_job {
	nnn_plan_t *plan;
	const float *x;
	float *y;
	nnn_diags_t *d;
} net_job_t;

static bool net_call(void *arg)
{
	net_job_t *j = arg;
	return ok(nnn_plan_run(j->plan, j->x, j->y, j->d), "nnn_plan_run", j->d);
}

/* A conv layer's bare GEMM is done in calls of at most this many floats of
 * A, all reading the same A rows: what an im2col + sgemm kernel with a
 * bounded scratch (as the builtin plugin's portable path has) costs at
 * best, its A hot in cache and the im2col itself not counted. */
#define CONV_CHUNK_FLOATS ((int64_t)1 << 20)

/* A layer's GEMM as sgemm alone would do it: C += A B (dense) or A B^T
 * (conv: A is im2col's [positions, k1*..*kn*channels], B the kernels
 * [filters, k1*..*kn*channels]); row-major, beta 1. M is done `chunk` rows
 * per call, all chunks reading the same A rows. */
typedef struct gemm_job {
	bool trans_b;
	int m, n, k, chunk;
	float *a, *b, *c;
	uint64_t sink; /* read_call's sum */
} gemm_job_t;

static bool gemm_call(void *arg)
{
	gemm_job_t *j = arg;
	for (int r0 = 0; r0 < j->m; r0 += j->chunk) {
		int m = j->m - r0 < j->chunk ? j->m - r0 : j->chunk;
		cblas_sgemm(CblasRowMajor, CblasNoTrans, j->trans_b ? CblasTrans : CblasNoTrans, m, j->n, j->k, 1.0f, j->a,
		            j->k, j->b, j->trans_b ? j->k : j->n, 1.0f, j->c + (int64_t)r0 * j->n, j->n);
	}
	return true;
}

/* chunk: rows per sgemm call (m or less). */
static bool gemm_new(gemm_job_t *j, bool trans_b, int m, int n, int k, int chunk)
{
	memset(j, 0, sizeof *j);
	j->trans_b = trans_b;
	j->m = m;
	j->n = n;
	j->k = k;
	j->chunk = chunk < 1 ? 1 : chunk > m ? m : chunk;
	if (!(j->a = alloc_floats((int64_t)j->chunk * k)) || !(j->b = alloc_floats((int64_t)k * n)) ||
	    !(j->c = alloc_floats((int64_t)m * n)))
		return false;
	sawtooth(j->a, (int64_t)j->chunk * k, 1, 0.0f);
	sawtooth(j->b, (int64_t)k * n, 2, -0.5f);
	memset(j->c, 0, (size_t)m * (size_t)n * sizeof *j->c); /* C grows by < 1e3 per call: never near overflow */
	return true;
}

#if defined(__SSE2__) && defined(__GNUC__)
/* The widest loads this CPU has (a kernel that streams weights uses them):
 * integer sums in 4 chains of 64-byte vectors. Compiled for AVX-512 on its
 * own, called only where the CPU has it. */
__attribute__((target("avx512f"))) static uint64_t read_avx512(const char *p, size_t bytes, size_t *done)
{
	__m512i s0 = _mm512_setzero_si512(), s1 = s0, s2 = s0, s3 = s0;
	size_t i = 0;
	for (; i + 256 <= bytes; i += 256) {
		s0 = _mm512_add_epi64(s0, _mm512_loadu_si512((const void *)(p + i)));
		s1 = _mm512_add_epi64(s1, _mm512_loadu_si512((const void *)(p + i + 64)));
		s2 = _mm512_add_epi64(s2, _mm512_loadu_si512((const void *)(p + i + 128)));
		s3 = _mm512_add_epi64(s3, _mm512_loadu_si512((const void *)(p + i + 192)));
	}
	*done = i;
	return (uint64_t)_mm512_reduce_add_epi64(_mm512_add_epi64(_mm512_add_epi64(s0, s1), _mm512_add_epi64(s2, s3)));
}
#endif

/* Reads B, as many bytes as the layer's weights, once: what a kernel that
 * must stream its weights (a Dense at batch 1) takes at least. Integer
 * sums in 4 chains of the widest vectors the CPU has (SSE2's 16 bytes on
 * any x86-64, AVX-512's 64 where there is AVX-512: with narrower loads
 * than the kernels', the loop would be bound by its own load count), so
 * the loop is bound by the memory, not by the adds or by spills. */
static bool read_call(void *arg)
{
	gemm_job_t *j = arg;
	const size_t bytes = (size_t)j->k * (size_t)j->n * sizeof(float);
	const char *p = (const char *)j->b;
	uint64_t sum = 0;
	size_t i = 0;
#if defined(__SSE2__) && defined(__GNUC__)
	if (__builtin_cpu_supports("avx512f")) {
		sum = read_avx512(p, bytes, &i);
	} else {
		__m128i s0 = _mm_setzero_si128(), s1 = s0, s2 = s0, s3 = s0;
		for (; i + 64 <= bytes; i += 64) {
			s0 = _mm_add_epi64(s0, _mm_loadu_si128((const __m128i *)(const void *)(p + i)));
			s1 = _mm_add_epi64(s1, _mm_loadu_si128((const __m128i *)(const void *)(p + i + 16)));
			s2 = _mm_add_epi64(s2, _mm_loadu_si128((const __m128i *)(const void *)(p + i + 32)));
			s3 = _mm_add_epi64(s3, _mm_loadu_si128((const __m128i *)(const void *)(p + i + 48)));
		}
		uint64_t v[2];
		_mm_storeu_si128((__m128i *)(void *)v, _mm_add_epi64(_mm_add_epi64(s0, s1), _mm_add_epi64(s2, s3)));
		sum = v[0] + v[1];
	}
#endif
	for (; i < bytes; i++)
		sum += (unsigned char)p[i];
	j->sink = sum; /* kept: j is the caller's */
	return true;
}

static void gemm_free(gemm_job_t *j)
{
	free(j->a);
	free(j->b);
	free(j->c);
}

/* One layer called as nnn_plan_run calls it: the type's forward with the
 * state of its own prepare, then the activation in place. Each call's two
 * parts are timed apart (two clock reads, ~50 ns, against >= microseconds). */
typedef struct layer_job {
	const nnn_layer_t *L;
	const nnn_layer_type_t *type;
	const nnn_activation_type_t *act;
	void *state;
	nnn_kernel_args_t args;
	double fwd_sum, act_sum;
} layer_job_t;

static bool layer_call(void *arg)
{
	layer_job_t *j = arg;
	char msg[NNN_MSG_MAX] = "";
	double t0 = now(), t1, t2;
	nnn_status_t st = j->type->forward(&j->args, msg, sizeof msg);
	t1 = now();
	if (st != NNN_OK) {
		fprintf(stderr, "bench_run: %s forward: %s: %s\n", j->type->name, nnn_status_str(st), msg);
		return false;
	}
	st = j->act->forward(&j->L->activation, &j->L->activation.params, j->args.out, j->args.y, j->args.threads);
	t2 = now();
	if (st != NNN_OK) {
		fprintf(stderr, "bench_run: activation %s: %s\n", j->act->name, nnn_status_str(st));
		return false;
	}
	j->fwd_sum += t1 - t0;
	j->act_sum += t2 - t1;
	return true;
}

/* ---- the child: one thread count ---- */

/* Everything the child holds; freed by child_free whatever happened. */
typedef struct child {
	nnn_ctx_t *ctx;
	nnn_model_t *model;
	nnn_plan_t *plan[NBATCH];
	float *x[NBATCH], *y[NBATCH];
	gemm_job_t ref;
	layer_job_t layer[NLAYERS];
	float *lout[NLAYERS]; /* each layer's output in the breakdown */
	gemm_job_t lgemm[NLAYERS];
} child_t;

static void child_free(child_t *c)
{
	for (int i = 0; i < NLAYERS; i++) {
		if (c->layer[i].state && c->layer[i].type->release)
			c->layer[i].type->release(c->layer[i].state);
		free(c->lout[i]);
		gemm_free(&c->lgemm[i]);
	}
	gemm_free(&c->ref);
	for (int b = 0; b < NBATCH; b++) {
		nnn_plan_free(c->plan[b]);
		free(c->x[b]);
		free(c->y[b]);
	}
	nnn_model_free(c->model);
	nnn_ctx_free(c->ctx);
}

/* Softmax rows: finite, in [0, 1], summing to 1. Checked off the clock. */
static bool check_output(const float *y, int64_t rows, int64_t n)
{
	for (int64_t r = 0; r < rows; r++) {
		double sum = 0;
		for (int64_t i = 0; i < n; i++) {
			float v = y[r * n + i];
			if (!isfinite(v) || v < 0 || v > 1) {
				fprintf(stderr, "bench_run: output [%lld, %lld] is %g, not a probability\n", (long long)r,
				        (long long)i, (double)v);
				return false;
			}
			sum += v;
		}
		if (fabs(sum - 1) > 1e-4) {
			fprintf(stderr, "bench_run: output row %lld sums to %g, not 1\n", (long long)r, sum);
			return false;
		}
	}
	return true;
}

/* Per-layer breakdown at one batch of batches[]. Method: each layer's kernel is
 * called directly, nnn_ctx_layer(ctx, id)->forward with nnn_kernel_args_t
 * built from nnn_plan_shape and with the state of the type's own prepare (as
 * the plan holds one; without it the kernel would copy its weights on every
 * call), then the activation's forward, on the real activations of the layer
 * before. The chain's result must equal nnn_plan_run's. Beside each layer,
 * the bare cblas_sgemm of the same M, N, K (for a conv, the GEMM of an
 * im2col + sgemm kernel at its best: in chunks of CONV_CHUNK_FLOATS of A
 * that stay in cache, the im2col not counted) shows what the kernel costs
 * beyond it ("rest": bias, im2col if any, argument checks; negative when
 * the kernel beats the bare sgemm). nnn_plan_run of the whole net is
 * measured in the same rounds; whole minus the sum is the plan's own cost. */
static bool breakdown(child_t *c, child_result_t *r, int bi, int threads)
{
	const nnn_plan_t *p = c->plan[bi];
	net_job_t whole = { c->plan[bi], c->x[bi], c->y[bi], NULL };
	long whole_iters, iters[NLAYERS], giters[NLAYERS], riters[NLAYERS];
	nnn_diags_t d;
	bool good = true;

	nnn_diags_init(&d);
	whole.d = &d;
	r->shape[0] = *nnn_plan_shape(p, -1);
	for (int i = 0; i < NLAYERS && good; i++) {
		const nnn_layer_t *L = &c->model->layers[i];
		layer_job_t *j = &c->layer[i];
		char msg[NNN_MSG_MAX] = "";
		const nnn_shape_t *in = nnn_plan_shape(p, i - 1), *out = nnn_plan_shape(p, i);
		int64_t rows;

		r->shape[i + 1] = *out;
		j->L = L;
		j->type = nnn_ctx_layer(c->ctx, L->id, NULL);
		j->act = nnn_ctx_activation(c->ctx, L->activation.id, NULL);
		if (!j->type || !j->act || !j->type->forward || !j->act->forward) {
			fprintf(stderr, "bench_run: no kernel for layer %d (ID %d) or its activation\n", i, (int)L->id);
			good = false;
			break;
		}
		if (j->type->prepare) {
			nnn_status_t st = j->type->prepare(L, &L->body, in, &j->state, msg, sizeof msg);
			if (st != NNN_OK) {
				fprintf(stderr, "bench_run: %s prepare: %s: %s\n", j->type->name, nnn_status_str(st), msg);
				good = false;
				break;
			}
		}
		if (!(c->lout[i] = alloc_floats(nnn_shape_numel(out)))) {
			good = false;
			break;
		}
		j->args = (nnn_kernel_args_t){
			.size = sizeof j->args,
			.layer = L,
			.body = &L->body,
			.state = j->state,
			.in = in,
			.out = out,
			.x = i == 0 ? c->x[bi] : c->lout[i - 1],
			.y = c->lout[i],
			.threads = threads,
		};
		/* The same GEMM as the kernel's: conv M = batch x positions, N = filters,
		 * K = k1*k2*channels, B transposed; dense M = rows, N = neurons, K = inputs. */
		if (L->id == NNN_LAYER_ID_CONV) {
			int64_t kc = L->body.conv.kernels.data.n / L->body.conv.filters;
			rows = nnn_shape_numel(out) / L->body.conv.filters;
			good = gemm_new(&c->lgemm[i], true, (int)rows, (int)L->body.conv.filters, (int)kc,
			                (int)(CONV_CHUNK_FLOATS / kc));
		} else {
			int64_t inputs = L->body.dense.weights.dims.v[0];
			rows = nnn_shape_numel(in) / inputs;
			good = gemm_new(&c->lgemm[i], false, (int)rows, (int)L->body.dense.neurons, (int)inputs, (int)rows);
		}
		r->gemm_m[i] = c->lgemm[i].m;
		r->gemm_n[i] = c->lgemm[i].n;
		r->gemm_k[i] = c->lgemm[i].k;
		r->gemm_calls[i] = c->lgemm[i].chunk ? (c->lgemm[i].m + c->lgemm[i].chunk - 1) / c->lgemm[i].chunk : 0;
		/* Runs layer i once, so layer i + 1 gets real input, and warms up. */
		good = good && calibrate(layer_call, j, LAYER_SECONDS, &iters[i]) &&
		       calibrate(gemm_call, &c->lgemm[i], LAYER_SECONDS, &giters[i]) &&
		       calibrate(read_call, &c->lgemm[i], LAYER_SECONDS, &riters[i]);
	}
	/* The chained kernels must give what nnn_plan_run gives. */
	if (good && (good = net_call(&whole))) {
		int64_t n = nnn_shape_numel(&r->shape[NLAYERS]);
		r->max_diff = 0;
		for (int64_t k = 0; k < n; k++) {
			double diff = fabs((double)c->lout[NLAYERS - 1][k] - (double)c->y[bi][k]);
			r->max_diff = diff > r->max_diff ? diff : r->max_diff;
		}
		if (r->max_diff > 1e-5) {
			fprintf(stderr, "bench_run: the layers called one by one differ from nnn_plan_run by %g\n",
			            r->max_diff);
			good = false;
		}
	}
	good = good && calibrate(net_call, &whole, RUN_SECONDS, &whole_iters);
	r->whole.iters = good ? whole_iters : 0;
	for (int run = 0; run < RUNS && good; run++) {
		double t;
		if (!(good = timed(net_call, &whole, whole_iters, &t)))
			break;
		add(&r->whole, t);
		for (int i = 0; i < NLAYERS && good; i++) {
			layer_job_t *j = &c->layer[i];
			j->fwd_sum = j->act_sum = 0;
			double tr = 0;
			good = timed(layer_call, j, iters[i], &t) && timed(read_call, &c->lgemm[i], riters[i], &tr) &&
			       timed(gemm_call, &c->lgemm[i], giters[i], &t);
			add(&r->fwd[i], j->fwd_sum / (double)iters[i]);
			add(&r->act[i], j->act_sum / (double)iters[i]);
			add(&r->sgemm[i], t);
			add(&r->read[i], tr);
			r->read[i].iters = riters[i];
			r->fwd[i].iters = r->act[i].iters = iters[i];
			r->sgemm[i].iters = giters[i];
		}
	}
	nnn_diags_free(&d);
	r->have_layers = good;
	return good;
}

static bool write_all(int fd, const void *p, size_t n)
{
	const unsigned char *b = p;
	while (n) {
		ssize_t k = write(fd, b, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			fprintf(stderr, "bench_run: cannot write the results: %s\n", k < 0 ? strerror(errno) : "short write");
			return false;
		}
		b += k;
		n -= (size_t)k;
	}
	return true;
}

/* After a call, OpenBLAS's own threads keep spinning for a while (about
 * 2^28 cycles: its THREAD_TIMEOUT) before they sleep. The builtin kernels
 * run threads of their own, which those would take cores from: so the
 * network is timed only once the reference's threads are asleep. */
#define BLAS_SETTLE_SECONDS 0.15

static void blas_settle(int blas_threads)
{
	struct timespec ts = { 0, (long)(BLAS_SETTLE_SECONDS * 1e9) };
	if (blas_threads > 1)
		while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
			;
}

static int child_main(const char *plugin, int threads, int break_batch)
{
	child_t c;
	child_result_t *r = calloc(1, sizeof *r);
	nnn_run_opts_t opts = { .size = sizeof opts, .threads = threads, .max_tensor_bytes = 0 };
	net_job_t job[NBATCH];
	long iters[NBATCH], gemm_iters = 0;
	nnn_diags_t d;
	bool good;

	if (!r) {
		fprintf(stderr, "bench_run: out of memory\n");
		return 1;
	}
	memset(&c, 0, sizeof c);
	nnn_diags_init(&d);
	r->magic = RESULT_MAGIC;
	r->size = sizeof *r;
	r->threads = threads;
	r->blas_threads = openblas_get_num_threads();
	snprintf(r->corename, sizeof r->corename, "%s", openblas_get_corename());
	snprintf(r->config, sizeof r->config, "%s", openblas_get_config());
	if (r->blas_threads != threads) /* OpenBLAS caps it at the CPUs it sees; the table shows both */
		fprintf(stderr, "bench_run: warning: OpenBLAS uses %d threads, not the %d of OPENBLAS_NUM_THREADS\n",
		        r->blas_threads, threads);
	good = ok(nnn_ctx_new(&c.ctx, &d), "nnn_ctx_new", &d) &&
	       ok(nnn_plugin_load(c.ctx, plugin, &d), "nnn_plugin_load", &d) && build_model(&c.model, &d);
	for (int b = 0; b < NBATCH && good; b++) {
		nnn_shape_t in = { .rank = 4, .dims = { batches[b], 28, 28, 1 } };
		good = ok(nnn_plan_new(c.ctx, c.model, &in, &opts, &c.plan[b], &d), "nnn_plan_new", &d) &&
		       (c.x[b] = alloc_floats(nnn_shape_numel(&in))) &&
		       (c.y[b] = alloc_floats(nnn_shape_numel(nnn_plan_shape(c.plan[b], NLAYERS - 1))));
		if (!good)
			break;
		sawtooth(c.x[b], nnn_shape_numel(&in), (unsigned)b, 0.0f); /* pixels in [0, 1) */
		job[b] = (net_job_t){ c.plan[b], c.x[b], c.y[b], &d };
	}
	if (good) { /* FLOPs from the plan's shapes at batch 1 */
		r->flop_per_image = 0;
		for (int i = 0; i < NLAYERS; i++) {
			const nnn_layer_t *L = &c.model->layers[i];
			r->layer_flop[i] = 2 * layer_macs(L, nnn_plan_shape(c.plan[0], i - 1), nnn_plan_shape(c.plan[0], i));
			r->flop_per_image += r->layer_flop[i];
			layer_name(L, r->layer_name[i], sizeof r->layer_name[i]);
		}
	}
	good = good && gemm_new(&c.ref, false, GEMM_N, GEMM_N, GEMM_N, GEMM_N);
	for (int b = 0; b < NBATCH && good; b++) {
		const nnn_shape_t *o = nnn_plan_shape(c.plan[b], NLAYERS - 1);
		good = calibrate(net_call, &job[b], RUN_SECONDS, &iters[b]) && check_output(c.y[b], o->dims[0], o->dims[1]);
		r->net[b].iters = iters[b];
	}
	good = good && calibrate(gemm_call, &c.ref, RUN_SECONDS, &gemm_iters);
	r->gemm.iters = gemm_iters;
	blas_settle(r->blas_threads);
	/* Rounds: every batch size, then the reference; drift hits them alike. */
	for (int run = 0; run < RUNS && good; run++) {
		double t;
		for (int b = 0; b < NBATCH && good; b++)
			if ((good = timed(net_call, &job[b], iters[b], &t)))
				add(&r->net[b], t);
		if (good && (good = timed(gemm_call, &c.ref, gemm_iters, &t)))
			add(&r->gemm, t);
		blas_settle(r->blas_threads);
	}
	for (int b = 0; b < NBATCH && good; b++)
		if (batches[b] == break_batch && threads == 1)
			good = breakdown(&c, r, b, threads);
	good = good && write_all(STDOUT_FILENO, r, sizeof *r);
	child_free(&c);
	nnn_diags_free(&d);
	free(r);
	return good ? 0 : 1;
}

/* ---- the parent: runs the children, then reports ---- */

/* environ (<unistd.h>, _GNU_SOURCE) without blas_env (all of it, or only OPENBLAS_NUM_THREADS when
 * keep_env), plus OPENBLAS_NUM_THREADS=threads. Owned: free the array. */
static char **child_env(char *num_threads, size_t size, int threads, bool keep_env)
{
	size_t n = 0, k = 0;
	char **env;
	while (environ[n])
		n++;
	if (!(env = calloc(n + 2, sizeof *env)))
		return NULL;
	for (size_t i = 0; i < n; i++) {
		bool drop = false;
		for (size_t j = 0; j < (keep_env ? 1 : sizeof blas_env / sizeof blas_env[0]); j++) {
			size_t len = strlen(blas_env[j]);
			drop = drop || (strncmp(environ[i], blas_env[j], len) == 0 && environ[i][len] == '=');
		}
		if (!drop)
			env[k++] = environ[i];
	}
	snprintf(num_threads, size, "OPENBLAS_NUM_THREADS=%d", threads);
	env[k++] = num_threads;
	env[k] = NULL;
	return env;
}

/* Runs this program with --child for one thread count; reads its record. */
static bool run_child(const char *exe, const char *self, const char *plugin, int threads, int break_batch,
                      bool keep_env, child_result_t *r)
{
	char num_threads[64], arg[16], brk[16], **env;
	int fds[2], status;
	size_t got = 0;
	pid_t pid;
	bool good = true;

	snprintf(arg, sizeof arg, "%d", threads);
	snprintf(brk, sizeof brk, "%d", break_batch);
	if (!(env = child_env(num_threads, sizeof num_threads, threads, keep_env))) {
		fprintf(stderr, "bench_run: out of memory\n");
		return false;
	}
	if (pipe(fds) != 0) {
		fprintf(stderr, "bench_run: pipe: %s\n", strerror(errno));
		free(env);
		return false;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "bench_run: fork: %s\n", strerror(errno));
		close(fds[0]);
		close(fds[1]);
		free(env);
		return false;
	}
	if (pid == 0) {
		char *argv[] = { (char *)self,           (char *)"--child",  (char *)"--threads", arg, (char *)"--breakdown",
		                 brk, (char *)"--plugin", (char *)plugin,       NULL };
		if (dup2(fds[1], STDOUT_FILENO) < 0)
			_exit(126);
		close(fds[0]);
		close(fds[1]);
		execve(exe, argv, env);
		fprintf(stderr, "bench_run: cannot run %s: %s\n", exe, strerror(errno));
		_exit(127);
	}
	close(fds[1]);
	free(env);
	memset(r, 0, sizeof *r);
	for (;;) {
		unsigned char extra;
		ssize_t k = got < sizeof *r ? read(fds[0], (unsigned char *)r + got, sizeof *r - got)
		                            : read(fds[0], &extra, 1);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			fprintf(stderr, "bench_run: reading from the child: %s\n", strerror(errno));
			good = false;
			break;
		}
		if (k == 0)
			break;
		got += (size_t)k;
	}
	close(fds[0]);
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			fprintf(stderr, "bench_run: waitpid: %s\n", strerror(errno));
			return false;
		}
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		if (WIFSIGNALED(status))
			fprintf(stderr, "bench_run: the %d-thread child died of signal %d\n", threads, WTERMSIG(status));
		else
			fprintf(stderr, "bench_run: the %d-thread child failed (exit status %d)\n", threads,
			        WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		return false;
	}
	if (good && (got != sizeof *r || r->magic != RESULT_MAGIC || r->size != sizeof *r || r->threads != threads)) {
		fprintf(stderr, "bench_run: the %d-thread child sent %zu bytes that are not its record\n", threads, got);
		good = false;
	}
	return good;
}

/* ---- reporting ---- */

typedef struct stats {
	double med, min, max;
	int n;
} stats_t;

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return (a > b) - (a < b);
}

/* scale / seconds run by run (a rate), or seconds * scale; then the median. */
static stats_t summarize(const series_t *s, bool rate, double scale)
{
	double v[RUNS];
	stats_t st = { 0, 0, 0, s->n };
	if (s->n == 0)
		return st;
	for (int i = 0; i < s->n; i++)
		v[i] = rate ? scale / s->t[i] : s->t[i] * scale;
	qsort(v, (size_t)s->n, sizeof *v, cmp_double);
	st.min = v[0];
	st.max = v[s->n - 1];
	st.med = s->n % 2 ? v[s->n / 2] : (v[s->n / 2 - 1] + v[s->n / 2]) / 2;
	return st;
}

static const char *shape_str(const nnn_shape_t *s, char *buf, size_t size)
{
	size_t n = (size_t)snprintf(buf, size, "[");
	for (int32_t i = 0; i < s->rank && n < size; i++)
		n += (size_t)snprintf(buf + n, size - n, "%s%lld", i ? "," : "", (long long)s->dims[i]);
	if (n < size)
		snprintf(buf + n, size - n, "]");
	return buf;
}

/* A number with 3 significant digits or more, compactly. */
static const char *num(char *buf, size_t size, double v)
{
	if (v >= 1e5)
		snprintf(buf, size, "%.0f", v);
	else if (v >= 100)
		snprintf(buf, size, "%.1f", v);
	else if (v >= 1)
		snprintf(buf, size, "%.2f", v);
	else
		snprintf(buf, size, "%.3g", v);
	return buf;
}

static const char *spread(char *buf, size_t size, const stats_t *s)
{
	char lo[32], hi[32];
	snprintf(buf, size, "[%s .. %s]", num(lo, sizeof lo, s->min), num(hi, sizeof hi, s->max));
	return buf;
}

/* max/min over this: the runs disagree, most likely because something else
 * ran on the machine; the figure gets a '*'. */
#define NOISY 1.25

static bool noisy(const stats_t *s)
{
	return s->min > 0 && s->max / s->min > NOISY;
}

static const char *env_value(const char *name)
{
	const char *v = getenv(name);
	return v ? v : NULL;
}

static void print_table(const child_result_t *res, int nres, bool keep_env)
{
	const double gemm_flop = 2.0 * GEMM_N * GEMM_N * GEMM_N;
	const child_result_t *r0 = &res[0];
	const char *coretype = env_value("OPENBLAS_CORETYPE"), *l2 = env_value("OPENBLAS_L2_SIZE");
	bool any_noisy = false;

	printf("nnnkit inference benchmark: the example classifier through nnn_plan_run, builtin plugin\n");
	printf("  layers: ");
	for (int i = 0; i < NLAYERS; i++)
		printf("%s%s", i ? "; " : "", r0->layer_name[i]);
	printf("\n  %.0f FLOP per image (%.2f MFLOP) = 2 x multiply-adds of conv and dense; bias and activations not counted\n",
	       r0->flop_per_image, r0->flop_per_image / 1e6);
	printf("  median of %d runs [min .. max]; a run repeats the call for ~%.2f s; GFLOP = 1e9 FLOP\n", RUNS,
	       RUN_SECONDS);
	printf("  reference: cblas_sgemm %dx%dx%d (%.3f GFLOP per call), same process and thread count, interleaved\n",
	       GEMM_N, GEMM_N, GEMM_N, gemm_flop / 1e9);
	printf("  each thread count runs in its own child process with OPENBLAS_NUM_THREADS=N and run opts threads=N\n");
	if (keep_env)
		printf("  OPENBLAS_CORETYPE (%s) and OPENBLAS_L2_SIZE (%s) left as they are (--keep-env)\n",
		       coretype ? coretype : "not set", l2 ? l2 : "not set");
	else
		printf("  OPENBLAS_CORETYPE (here: %s) and OPENBLAS_L2_SIZE (here: %s) were UNSET in the child processes,\n"
		       "  for the network and the reference alike, so OpenBLAS picks its kernels for this CPU itself\n",
		       coretype ? coretype : "not set", l2 ? l2 : "not set");
	for (int t = 0; t < nres; t++)
		printf("  %d thread%s: OpenBLAS core %s, %d thread%s; %s\n", res[t].threads, res[t].threads > 1 ? "s" : "",
		       res[t].corename, res[t].blas_threads, res[t].blas_threads > 1 ? "s" : "", res[t].config);
	printf("\n%-7s %5s %3s %10s %-21s %9s %8s  %-22s %9s %-17s %7s\n", "threads", "batch", "N", "images/s",
	       "[min .. max]", "ms/batch", "GFLOP/s", "reference", "GFLOP/s", "[min .. max]", "ratio");
	for (int t = 0; t < nres; t++) {
		const child_result_t *r = &res[t];
		stats_t g = summarize(&r->gemm, true, gemm_flop / 1e9);
		for (int b = 0; b < NBATCH; b++) {
			stats_t ips = summarize(&r->net[b], true, batches[b]);
			stats_t ms = summarize(&r->net[b], false, 1e3);
			double gf = ips.med * r->flop_per_image / 1e9;
			char a[96], c[32], e[96], f[32], ref[32];
			snprintf(ref, sizeof ref, "sgemm %d^3", GEMM_N);
			bool mark = noisy(&ips) || noisy(&g);
			any_noisy = any_noisy || mark;
			printf("%-7d %5d %3d %10s %-21s %9s %8.2f  %-22s %9.2f %-17s %6.1f%%%s\n", r->threads, batches[b], ips.n,
			       num(c, sizeof c, ips.med), spread(a, sizeof a, &ips), num(f, sizeof f, ms.med), gf,
			       ref, g.med, spread(e, sizeof e, &g), g.med > 0 ? 100 * gf / g.med : 0, mark ? " *" : "");
		}
	}
	for (int t = 0; t < nres; t++) {
		const child_result_t *r = &res[t];
		stats_t whole;
		double sum = 0;
		char a[96], b[64], c[32];
		if (!r->have_layers)
			continue;
		whole = summarize(&r->whole, false, 1e6);
		printf("\nwhere the time goes at batch %d, %d thread: each layer's kernel called on its own through\n"
		       "nnn_ctx_layer(ctx, id)->forward (state from its prepare, shapes from nnn_plan_shape), then its\n"
		       "activation; \"sgemm\" is cblas_sgemm alone with the same M,N,K (a conv's in \"/calls\" of 4 MiB of\n"
		       "A, hot in cache, im2col not counted), \"rest\" = forward - sgemm (< 0: the kernel beats sgemm);\n"
		       "\"read us\" is one plain read of as many bytes as the layer's weights (GB/s beside it): a kernel\n"
		       "that must stream its weights (a Dense at small batches) takes at least that.\n"
		       "us per batch, median of %d runs [min .. max]; the chained layers reproduce nnn_plan_run's\n"
		       "output (largest difference %.3g)\n",
		       (int)r->shape[0].dims[0], r->threads, RUNS, r->max_diff);
		printf("%-24s %-15s %7s %10s %-19s %7s %8s %-14s %10s %7s %8s %8s %6s %6s\n", "layer", "output", "MFLOP",
		       "forward us", "[min .. max]", "GFLOP/s", "act us", "M,N,K/calls", "sgemm us", "GFLOP/s", "rest us",
		       "read us", "GB/s", "share");
		for (int i = 0; i < NLAYERS; i++) {
			stats_t f = summarize(&r->fwd[i], false, 1e6), ac = summarize(&r->act[i], false, 1e6);
			stats_t g = summarize(&r->sgemm[i], false, 1e6), rd = summarize(&r->read[i], false, 1e6);
			double flop = r->layer_flop[i] * (double)r->shape[0].dims[0];
			double wbytes = 4.0 * r->gemm_n[i] * r->gemm_k[i];
			char mnk[48], o[64], gs[32], rest[32], rs[32];
			snprintf(mnk, sizeof mnk, "%d,%d,%d/%d", r->gemm_m[i], r->gemm_n[i], r->gemm_k[i], r->gemm_calls[i]);
			bool mark = noisy(&f) || noisy(&g);
			any_noisy = any_noisy || mark;
			snprintf(rest, sizeof rest, "%.1f", f.med - g.med);
			printf("%-24s %-15s %7.2f %10s %-19s %7.2f %8s %-14s %10s %7.2f %8s %8s %6.1f %5.1f%%%s\n",
			       r->layer_name[i], shape_str(&r->shape[i + 1], o, sizeof o), flop / 1e6, num(c, sizeof c, f.med),
			       spread(a, sizeof a, &f), flop / f.med / 1e3, num(b, sizeof b, ac.med), mnk,
			       num(gs, sizeof gs, g.med), flop / g.med / 1e3, rest, num(rs, sizeof rs, rd.med),
			       wbytes / rd.med / 1e3, 100 * (f.med + ac.med) / whole.med, mark ? " *" : "");
			sum += f.med + ac.med;
		}
		printf("%-24s %-15s %7.2f %10s %-19s %7.2f\n", "sum of layers (+ act)", "",
		       r->flop_per_image * (double)r->shape[0].dims[0] / 1e6, num(c, sizeof c, sum), "",
		       r->flop_per_image * (double)r->shape[0].dims[0] / sum / 1e3);
		printf("%-24s %-15s %7.2f %10s %-19s %7.2f%s\n", "nnn_plan_run, whole net", "",
		       r->flop_per_image * (double)r->shape[0].dims[0] / 1e6, num(c, sizeof c, whole.med),
		       spread(a, sizeof a, &whole), r->flop_per_image * (double)r->shape[0].dims[0] / whole.med / 1e3,
		       noisy(&whole) ? " *" : "");
		printf("%-24s %-15s %7s %10.1f\n", "whole - sum (plan)", "", "", whole.med - sum);
		any_noisy = any_noisy || noisy(&whole);
	}
	if (any_noisy)
		printf("\n* max/min over %.2f in the figure or its reference: other load disturbed some runs\n", NOISY);
}

static void print_stats_json(const char *unit, const stats_t *s, long iters)
{
	printf("\"unit\": \"%s\", \"runs\": %d, \"calls_per_run\": %ld, \"median\": %.6g, \"min\": %.6g, \"max\": %.6g",
	       unit, s->n, iters, s->med, s->min, s->max);
}

static void print_json_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", (unsigned)(unsigned char)*s);
		else
			putchar(*s);
	}
	putchar('"');
}

static void print_json(const child_result_t *res, int nres, bool keep_env)
{
	const double gemm_flop = 2.0 * GEMM_N * GEMM_N * GEMM_N;
	const char *coretype = env_value("OPENBLAS_CORETYPE"), *l2 = env_value("OPENBLAS_L2_SIZE");

	printf("{\n  \"benchmark\": \"nnnkit inference\",\n  \"model\": \"mkexample classifier\",\n  \"layers\": [");
	for (int i = 0; i < NLAYERS; i++) {
		printf("%s{ \"layer\": ", i ? ", " : "");
		print_json_string(res[0].layer_name[i]);
		printf(", \"flop_per_image\": %.0f }", res[0].layer_flop[i]);
	}
	printf("],\n  \"flop_per_image\": %.0f,\n  \"gflop\": 1e9,\n", res[0].flop_per_image);
	printf("  \"reference\": { \"what\": \"cblas_sgemm %dx%dx%d\", \"flop\": %.0f },\n", GEMM_N, GEMM_N, GEMM_N,
	       gemm_flop);
	printf("  \"environment\": { \"OPENBLAS_CORETYPE\": ");
	if (coretype)
		print_json_string(coretype);
	else
		printf("null");
	printf(", \"OPENBLAS_L2_SIZE\": ");
	if (l2)
		print_json_string(l2);
	else
		printf("null");
	printf(", \"unset_in_children\": %s, \"children_set\": \"OPENBLAS_NUM_THREADS=<threads>\" },\n",
	       keep_env ? "false" : "true");
	printf("  \"threads\": [\n");
	for (int t = 0; t < nres; t++) {
		const child_result_t *r = &res[t];
		stats_t g = summarize(&r->gemm, true, gemm_flop / 1e9);
		printf("    {\n      \"threads\": %d, \"openblas_threads\": %d, \"openblas_core\": ", r->threads,
		       r->blas_threads);
		print_json_string(r->corename);
		printf(", \"openblas_config\": ");
		print_json_string(r->config);
		printf(",\n      \"gemm\": { ");
		print_stats_json("GFLOP/s", &g, r->gemm.iters);
		printf(" },\n      \"batches\": [\n");
		for (int b = 0; b < NBATCH; b++) {
			stats_t ips = summarize(&r->net[b], true, batches[b]);
			stats_t ms = summarize(&r->net[b], false, 1e3);
			double gf = ips.med * r->flop_per_image / 1e9;
			printf("        { \"batch\": %d, \"images_per_second\": { ", batches[b]);
			print_stats_json("images/s", &ips, r->net[b].iters);
			printf(" }, \"ms_per_batch\": %.6g, \"gflops\": %.6g, \"ratio_to_gemm\": %.6g }%s\n", ms.med, gf,
			       g.med > 0 ? gf / g.med : 0, b + 1 < NBATCH ? "," : "");
		}
		printf("      ]");
		if (r->have_layers) {
			stats_t whole = summarize(&r->whole, false, 1e6);
			double batch = (double)r->shape[0].dims[0];
			printf(",\n      \"breakdown\": {\n        \"batch\": %.0f, \"max_diff_vs_plan\": %.3g,\n"
			       "        \"whole\": { ", batch, r->max_diff);
			print_stats_json("us", &whole, r->whole.iters);
			printf(" },\n        \"layers\": [\n");
			for (int i = 0; i < NLAYERS; i++) {
				stats_t f = summarize(&r->fwd[i], false, 1e6), ac = summarize(&r->act[i], false, 1e6);
				stats_t sg = summarize(&r->sgemm[i], false, 1e6), rd = summarize(&r->read[i], false, 1e6);
				double flop = r->layer_flop[i] * batch;
				char o[64];
				printf("          { \"layer\": ");
				print_json_string(r->layer_name[i]);
				printf(", \"output\": \"%s\", \"flop\": %.0f,\n            \"forward\": { ",
				       shape_str(&r->shape[i + 1], o, sizeof o), flop);
				print_stats_json("us", &f, r->fwd[i].iters);
				printf(" }, \"forward_gflops\": %.6g,\n            \"activation\": { ", flop / f.med / 1e3);
				print_stats_json("us", &ac, r->act[i].iters);
				printf(" },\n            \"sgemm_alone\": { \"m\": %d, \"n\": %d, \"k\": %d, \"calls\": %d, ",
				       r->gemm_m[i], r->gemm_n[i], r->gemm_k[i], r->gemm_calls[i]);
				print_stats_json("us", &sg, r->sgemm[i].iters);
				printf(", \"gflops\": %.6g },\n            \"read_weight_bytes\": { \"bytes\": %.0f, ",
				       flop / sg.med / 1e3, 4.0 * r->gemm_n[i] * r->gemm_k[i]);
				print_stats_json("us", &rd, r->read[i].iters);
				printf(" },\n            \"rest_us\": %.6g, \"share_of_whole\": %.6g }%s\n", f.med - sg.med,
				       (f.med + ac.med) / whole.med, i + 1 < NLAYERS ? "," : "");
			}
			printf("        ]\n      }");
		}
		printf("\n    }%s\n", t + 1 < nres ? "," : "");
	}
	printf("  ]\n}\n");
}

static int usage(FILE *to)
{
	fprintf(to, "usage: bench_run [--json] [--plugin FILE] [--threads N] [--breakdown B] [--keep-env]\n"
	            "  --json         print the figures as JSON instead of a table\n"
	            "  --plugin FILE  the builtin plugin (default $NNN_BUILD/plugins/builtin.so,\n"
	            "                 else build/plugins/builtin.so)\n"
	            "  --threads N    measure only N threads (default: 1 and 2)\n"
	            "  --breakdown B  the batch of the per-layer breakdown: 1, 8, 64, 256 or 1024 (default %d)\n"
	            "  --keep-env     keep OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE in the children\n",
	        BREAK_BATCH);
	return to == stdout ? 0 : 2;
}

int main(int argc, char **argv)
{
	char plugin[4096], exe[4096];
	ssize_t len;
	const char *plugin_arg = NULL, *build = getenv("NNN_BUILD");
	bool json = false, child = false, keep_env = false, good = true;
	int only = 0, nres = 0, break_batch = BREAK_BATCH;
	child_result_t *res;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			json = true;
		else if (strcmp(argv[i], "--child") == 0) /* internal: one thread count, raw record on stdout */
			child = true;
		else if (strcmp(argv[i], "--keep-env") == 0)
			keep_env = true;
		else if (strcmp(argv[i], "--plugin") == 0 && i + 1 < argc)
			plugin_arg = argv[++i];
		else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
			char *end;
			long v = strtol(argv[++i], &end, 10);
			if (*end || v < 1 || v > 256)
				return usage(stderr);
			only = (int)v;
		} else if (strcmp(argv[i], "--breakdown") == 0 && i + 1 < argc) {
			char *end;
			long v = strtol(argv[++i], &end, 10);
			int b = 0;
			while (b < NBATCH && batches[b] != v)
				b++;
			if (*end || b == NBATCH)
				return usage(stderr);
			break_batch = (int)v;
		} else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
			return usage(stdout);
		else
			return usage(stderr);
	}
	if (plugin_arg)
		snprintf(plugin, sizeof plugin, "%s", plugin_arg);
	else if (build && build[0])
		snprintf(plugin, sizeof plugin, "%s/plugins/builtin.so", build);
	else
		snprintf(plugin, sizeof plugin, "build/plugins/builtin.so");
	if (child)
		return child_main(plugin, only ? only : 1, break_batch);

	/* This program's file, for the children (the link itself when it cannot
	 * be read; under valgrind only the resolved path names the program). */
	len = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (len > 0 && (size_t)len < sizeof exe - 1)
		exe[len] = '\0';
	else
		snprintf(exe, sizeof exe, "/proc/self/exe");
	if (!(res = calloc(NTHREADS + 1, sizeof *res))) {
		fprintf(stderr, "bench_run: out of memory\n");
		return 1;
	}
	if (only)
		good = run_child(exe, argv[0], plugin, only, break_batch, keep_env, &res[nres++]);
	else
		for (int t = 0; t < NTHREADS && good; t++)
			good = run_child(exe, argv[0], plugin, thread_counts[t], break_batch, keep_env, &res[nres++]);
	if (good) {
		if (json)
			print_json(res, nres, keep_env);
		else
			print_table(res, nres, keep_env);
	}
	free(res);
	return good ? 0 : 1;
}
