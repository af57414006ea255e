/* act.c: the core activations, in place over a whole tensor. ReLU and
 * leaky ReLU, which cost a pass over memory and nothing else, have AVX-512
 * and AVX versions picked at run time (same results: max(x, 0) and
 * x > 0 ? x : tau * x, element by element). */
#include <math.h>

#include "builtin.h"

#if BI_X86
#include <immintrin.h>
#endif

#if BI_X86
#pragma GCC push_options
#pragma GCC target("avx512f")
/* Returns how many leading elements it did (a multiple of 16). */
static int64_t relu_avx512(float *x, int64_t n)
{
	const __m512 zero = _mm512_setzero_ps();
	int64_t i = 0;
	/* max(x, 0) is x > 0 ? x : 0, NaN included */
	for (; i + 16 <= n; i += 16)
		_mm512_storeu_ps(x + i, _mm512_max_ps(_mm512_loadu_ps(x + i), zero));
	return i;
}

static int64_t leaky_avx512(float *x, int64_t n, float tau)
{
	const __m512 zero = _mm512_setzero_ps(), t = _mm512_set1_ps(tau);
	int64_t i = 0;
	for (; i + 16 <= n; i += 16) {
		__m512 v = _mm512_loadu_ps(x + i);
		__mmask16 pos = _mm512_cmp_ps_mask(v, zero, _CMP_GT_OQ);
		_mm512_storeu_ps(x + i, _mm512_mask_blend_ps(pos, _mm512_mul_ps(v, t), v));
	}
	return i;
}
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx")
static int64_t relu_avx(float *x, int64_t n)
{
	const __m256 zero = _mm256_setzero_ps();
	int64_t i = 0;
	for (; i + 8 <= n; i += 8)
		_mm256_storeu_ps(x + i, _mm256_max_ps(_mm256_loadu_ps(x + i), zero));
	return i;
}

static int64_t leaky_avx(float *x, int64_t n, float tau)
{
	const __m256 zero = _mm256_setzero_ps(), t = _mm256_set1_ps(tau);
	int64_t i = 0;
	for (; i + 8 <= n; i += 8) {
		__m256 v = _mm256_loadu_ps(x + i);
		_mm256_storeu_ps(x + i, _mm256_blendv_ps(_mm256_mul_ps(v, t), v, _mm256_cmp_ps(v, zero, _CMP_GT_OQ)));
	}
	return i;
}
#pragma GCC pop_options
#endif

/* The element-wise activations over x[0..n): the kernels below and the
 * layers' fused path (bi_act_apply) share these, so both give the same
 * bits. */

static void sigmoid_span(float *x, int64_t n)
{
	/* exp of a non-positive number only: no overflow for any x. */
	for (int64_t i = 0; i < n; i++) {
		if (x[i] >= 0) {
			x[i] = 1.0f / (1.0f + expf(-x[i]));
		} else {
			float e = expf(x[i]);
			x[i] = e / (1.0f + e);
		}
	}
}

static void tanh_span(float *x, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		x[i] = tanhf(x[i]);
}

static void relu_span(float *x, int64_t n, bi_isa_t isa)
{
	int64_t i = 0;
#if BI_X86
	if (n >= 8)
		i = isa == BI_ISA_AVX512 ? relu_avx512(x, n) : isa == BI_ISA_AVX2 ? relu_avx(x, n) : 0;
#else
	(void)isa;
#endif
	for (; i < n; i++)
		x[i] = x[i] > 0 ? x[i] : 0.0f;
}

static void leaky_span(float *x, int64_t n, float tau, bi_isa_t isa)
{
	int64_t i = 0;
#if BI_X86
	if (n >= 8)
		i = isa == BI_ISA_AVX512 ? leaky_avx512(x, n, tau) : isa == BI_ISA_AVX2 ? leaky_avx(x, n, tau) : 0;
#else
	(void)isa;
#endif
	for (; i < n; i++)
		x[i] = x[i] > 0 ? x[i] : tau * x[i];
}

/* Element count of an activation's tensor, or -1 when the shape is bad. */
static int64_t act_numel(const nnn_shape_t *shape, const float *x)
{
	int64_t n = shape ? bi_numel(shape) : -1;
	return n > 0 && !x ? -1 : n;
}

nnn_status_t bi_linear(const nnn_activation_t *act, const void *params, const nnn_shape_t *shape, float *x,
                       int threads)
{
	(void)act, (void)params, (void)threads;
	return act_numel(shape, x) < 0 ? NNN_E_KERNEL : NNN_OK;
}

nnn_status_t bi_sigmoid(const nnn_activation_t *act, const void *params, const nnn_shape_t *shape, float *x,
                        int threads)
{
	int64_t n = act_numel(shape, x);
	(void)act, (void)params, (void)threads;
	if (n < 0)
		return NNN_E_KERNEL;
	sigmoid_span(x, n);
	return NNN_OK;
}

nnn_status_t bi_tanh(const nnn_activation_t *act, const void *params, const nnn_shape_t *shape, float *x,
                     int threads)
{
	int64_t n = act_numel(shape, x);
	(void)act, (void)params, (void)threads;
	if (n < 0)
		return NNN_E_KERNEL;
	tanh_span(x, n);
	return NNN_OK;
}

nnn_status_t bi_relu(const nnn_activation_t *act, const void *params, const nnn_shape_t *shape, float *x,
                     int threads)
{
	int64_t n = act_numel(shape, x);
	(void)act, (void)params, (void)threads;
	if (n < 0)
		return NNN_E_KERNEL;
	relu_span(x, n, n >= 8 ? bi_isa() : BI_ISA_GENERIC);
	return NNN_OK;
}

/* tau of a leaky ReLU: a core ID, so the host decoded it into act, and
 * params is the same struct. NaN when there is neither. */
static float leaky_tau(const nnn_activation_t *act, const void *params)
{
	return act ? act->params.leaky_relu.tau : params ? ((const nnn_leaky_relu_t *)params)->tau : NAN;
}

nnn_status_t bi_leaky_relu(const nnn_activation_t *act, const void *params, const nnn_shape_t *shape, float *x,
                           int threads)
{
	int64_t n = act_numel(shape, x);
	(void)threads;
	if (!act && !params)
		return NNN_E_KERNEL;
	if (n < 0)
		return NNN_E_KERNEL;
	leaky_span(x, n, leaky_tau(act, params), n >= 8 ? bi_isa() : BI_ISA_GENERIC);
	return NNN_OK;
}

bi_act_t bi_act_fuse(const nnn_kernel_args_t *a, bi_isa_t isa)
{
	bi_act_t f = { BI_ACT_NONE, 0.0f, BI_ISA_GENERIC };
	nnn_status_t (*fn)(const nnn_activation_t *, const void *, const nnn_shape_t *, float *, int);
	if (a->size < offsetof(nnn_kernel_args_t, act_done) + sizeof a->act_done || !a->act || !a->act_done)
		return f;
	/* only this plugin's own kernels: another plugin's ReLU must run as
	 * the host would run it */
	fn = a->act->forward;
	f.kind = fn == bi_linear ? BI_ACT_LINEAR
	         : fn == bi_sigmoid ? BI_ACT_SIGMOID
	         : fn == bi_tanh ? BI_ACT_TANH
	         : fn == bi_relu ? BI_ACT_RELU
	         : fn == bi_leaky_relu ? BI_ACT_LEAKY_RELU
	                               : BI_ACT_NONE;
	if (f.kind == BI_ACT_LEAKY_RELU)
		f.tau = leaky_tau(&a->layer->activation, a->act_params);
	f.isa = f.kind == BI_ACT_RELU || f.kind == BI_ACT_LEAKY_RELU ? isa : BI_ISA_GENERIC;
	return f;
}

void bi_act_apply(const bi_act_t *f, float *x, int64_t n)
{
	switch (f->kind) {
	case BI_ACT_SIGMOID:
		sigmoid_span(x, n);
		break;
	case BI_ACT_TANH:
		tanh_span(x, n);
		break;
	case BI_ACT_RELU:
		relu_span(x, n, n >= 8 ? f->isa : BI_ISA_GENERIC);
		break;
	case BI_ACT_LEAKY_RELU:
		leaky_span(x, n, f->tau, n >= 8 ? f->isa : BI_ISA_GENERIC);
		break;
	default: /* none, linear */
		break;
	}
}

void bi_act_done(const nnn_kernel_args_t *a, const bi_act_t *f)
{
	if (f->kind != BI_ACT_NONE)
		*a->act_done = true;
}

nnn_status_t bi_softmax(const nnn_activation_t *act, const void *params, const nnn_shape_t *shape, float *x,
                        int threads)
{
	int64_t n = act_numel(shape, x), len;
	(void)act, (void)params, (void)threads;
	if (n < 0)
		return NNN_E_KERNEL;
	len = shape->rank > 0 ? shape->dims[shape->rank - 1] : 1; /* a scalar is one row of one */
	if (n == 0)
		return NNN_OK;
	for (float *row = x; row < x + n; row += len) {
		float max = row[0];
		double sum = 0;
		for (int64_t i = 1; i < len; i++)
			max = row[i] > max ? row[i] : max;
		/* exp(x - max) <= 1: no overflow, and the largest term is exactly 1. */
		for (int64_t i = 0; i < len; i++) {
			row[i] = expf(row[i] - max);
			sum += row[i];
		}
		for (int64_t i = 0; i < len; i++)
			row[i] = (float)(row[i] / sum);
	}
	return NNN_OK;
}
