/* act.c: the six core activations, in place over a whole tensor. ReLU and
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
	/* exp of a non-positive number only: no overflow for any x. */
	for (int64_t i = 0; i < n; i++) {
		if (x[i] >= 0) {
			x[i] = 1.0f / (1.0f + expf(-x[i]));
		} else {
			float e = expf(x[i]);
			x[i] = e / (1.0f + e);
		}
	}
	return NNN_OK;
}

nnn_status_t bi_tanh(const nnn_activation_t *act, const void *params, const nnn_shape_t *shape, float *x,
                     int threads)
{
	int64_t n = act_numel(shape, x);
	(void)act, (void)params, (void)threads;
	if (n < 0)
		return NNN_E_KERNEL;
	for (int64_t i = 0; i < n; i++)
		x[i] = tanhf(x[i]);
	return NNN_OK;
}

nnn_status_t bi_relu(const nnn_activation_t *act, const void *params, const nnn_shape_t *shape, float *x,
                     int threads)
{
	int64_t n = act_numel(shape, x);
	(void)act, (void)params, (void)threads;
	int64_t i = 0;
	if (n < 0)
		return NNN_E_KERNEL;
#if BI_X86
	if (n >= 8) {
		bi_isa_t isa = bi_isa();
		i = isa == BI_ISA_AVX512 ? relu_avx512(x, n) : isa == BI_ISA_AVX2 ? relu_avx(x, n) : 0;
	}
#endif
	for (; i < n; i++)
		x[i] = x[i] > 0 ? x[i] : 0.0f;
	return NNN_OK;
}

nnn_status_t bi_leaky_relu(const nnn_activation_t *act, const void *params, const nnn_shape_t *shape, float *x,
                           int threads)
{
	int64_t n = act_numel(shape, x);
	float tau;
	(void)threads;
	/* core ID: the host decoded tau into act; params is the same struct */
	if (act)
		tau = act->params.leaky_relu.tau;
	else if (params)
		tau = ((const nnn_leaky_relu_t *)params)->tau;
	else
		return NNN_E_KERNEL;
	int64_t i = 0;
	if (n < 0)
		return NNN_E_KERNEL;
#if BI_X86
	if (n >= 8) {
		bi_isa_t isa = bi_isa();
		i = isa == BI_ISA_AVX512 ? leaky_avx512(x, n, tau) : isa == BI_ISA_AVX2 ? leaky_avx(x, n, tau) : 0;
	}
#endif
	for (; i < n; i++)
		x[i] = x[i] > 0 ? x[i] : tau * x[i];
	return NNN_OK;
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
