/* narrow_vnni.c: int8 Dense products in integers, on AVX-512 VNNI
 * (vpdpbusd: 16 lanes of 4 u8 x s8 products a instruction).
 *
 * Widening each int8 weight to a float costs two vector instructions per
 * 16 weights besides the multiply-add, so the float path of narrow.c
 * computes more than float32 weights stream from cache: at batch 1 it
 * gained little. Here the weights stay int8 and each row of x becomes
 * integers instead, as finely as float32 resolves the largest: x[i] *
 * 2^(BITS - e) (e: the exponent of the row's largest |x|, so the scaling is
 * exact) rounded to an int q[i] with |q| < 2^BITS, an error of 2^-BITS of
 * the largest |x| at most (float32 rounds each product by 2^-24 of
 * itself). u[i] = q[i] + 2^BITS is PIECES bytes; each byte p of u against
 * the weights is a vpdpbusd chain A_p, exact in int32 for up to 65535
 * inputs; sum(u w) = sum over p of A_p << 8p, exact in int64, and
 * sum(q w) = sum(u w) - 2^BITS * sum(w) (the column sums, kept). Then
 * y = (float)(sum(q w) * scale * 2^(e - BITS)) + bias. Every sum is exact,
 * so the result does not depend on the threads or the blocking.
 *
 * The weights are repacked once, at prepare (bi_narrow_pack), into the
 * order vpdpbusd reads: groups of 64 neurons, then 4 inputs at a time,
 * then 16 lanes x 4 inputs per block of 16 neurons; still one byte a
 * weight, the bytes a call reads. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "builtin.h"

#if BI_X86
#include <immintrin.h>
#endif

#define GROUP 64        /* neurons of one chunk: 4 blocks of 16 */
#define PIECES 4        /* bytes of u: a vpdpbusd chain each */
#define BITS 30         /* |q| < 2^BITS, u = q + 2^BITS < 2^(8 * PIECES) */
#define MAX_K 65535     /* inputs: 255 * 128 * MAX_K < 2^31, so each chain is exact in int32 */

struct bi_narrow_pack {
	int64_t k, n, kq, ng; /* inputs, neurons, groups of 4 inputs, groups of GROUP neurons */
	int32_t *colsum;      /* n sums of each neuron's weights */
	int8_t *w;            /* [ng][kq][GROUP][4] */
};

void bi_narrow_pack_free(void *p)
{
	bi_narrow_pack_t *pk = p;
	if (!pk)
		return;
	free(pk->colsum);
	bi_host()->mem_free(pk->w);
	free(pk);
}

static bool vnni_cpu(void)
{
#if BI_X86
	__builtin_cpu_init();
	return bi_isa() == BI_ISA_AVX512 && __builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512bw");
#else
	return false;
#endif
}

bi_narrow_pack_t *bi_narrow_pack(const unsigned char *data, int64_t k, int64_t n)
{
	if (k < 1 || n < 1 || k > MAX_K || !vnni_cpu())
		return NULL;
	bi_narrow_pack_t *pk = calloc(1, sizeof *pk);
	if (!pk)
		return NULL;
	pk->k = k, pk->n = n, pk->kq = (k + 3) / 4, pk->ng = (n + GROUP - 1) / GROUP;
	size_t bytes = (size_t)(pk->ng * pk->kq * GROUP * 4);
	pk->colsum = calloc((size_t)n, sizeof *pk->colsum);
	pk->w = bi_host()->mem_big(bytes);
	if (!pk->colsum || !pk->w) {
		bi_narrow_pack_free(pk);
		return NULL;
	}
	memset(pk->w, 0, bytes);
	for (int64_t i = 0; i < k; i++)
		for (int64_t c = 0; c < n; c++) {
			int8_t v = (int8_t)data[i * n + c];
			pk->w[((c / GROUP * pk->kq + i / 4) * GROUP + c % GROUP) * 4 + i % 4] = v;
			pk->colsum[c] += v;
		}
	return pk;
}

#if BI_X86
#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512vnni,avx2,fma")

/* One row's bytes for vpdpbusd: qb[g * 4 + p] holds byte p of u[4g .. 4g+3]
 * (byte 3, always 0, unused);
 * *e the exponent of its largest |x|. False when x is not all finite. */
static bool vnni_row(const float *x, int64_t k, uint32_t *qb, int *e)
{
	__m512 most = _mm512_setzero_ps();
	const __m512 big = _mm512_set1_ps(FLT_MAX);
	__mmask16 bad = 0;
	int64_t i = 0;
	for (; i + 16 <= k; i += 16) {
		__m512 v = _mm512_abs_ps(_mm512_loadu_ps(x + i));
		bad |= _mm512_cmp_ps_mask(v, big, _CMP_NLE_UQ); /* infinite, or NaN */
		most = _mm512_max_ps(most, v);
	}
	float m = _mm512_reduce_max_ps(most);
	for (; i < k; i++) {
		bad |= !isfinite(x[i]);
		m = fabsf(x[i]) > m ? fabsf(x[i]) : m;
	}
	if (bad) /* the float path gives what IEEE arithmetic gives */
		return false;
	frexpf(m, e); /* m < 2^e */
	const __m512 sc = _mm512_set1_ps((float)(BITS - *e));
	const __m512i half = _mm512_set1_epi32(1 << BITS);
	/* within each 16-byte lane: byte p of the 4 ints to dword p */
	const __m512i tr = _mm512_broadcast_i32x4(_mm_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15));
	for (i = 0; i < (k + 3) / 4 * 4; i += 16) {
		__mmask16 live = i + 16 <= k ? 0xffff : (__mmask16)((1u << (k - i < 16 ? k - i : 16)) - 1);
		__m512 v = _mm512_maskz_loadu_ps(live, x + i);
		__m512i u = _mm512_maskz_add_epi32(live, _mm512_cvtps_epi32(_mm512_scalef_ps(v, sc)), half);
		__m512i q = _mm512_shuffle_epi8(u, tr);
		int64_t groups = (k + 3) / 4 - i / 4;
		_mm512_mask_storeu_epi32(qb + i, (__mmask16)(groups >= 4 ? 0xffff : (1u << (4 * groups)) - 1), q);
	}
	return true;
}

/* Neurons g * GROUP .. of one row: 4 blocks x PIECES byte chains. */
static void vnni_group(const bi_narrow_pack_t *pk, const bi_narrow_t *w, const uint32_t *qb, int e, int64_t g,
                       float *y)
{
	__m512i acc[4][PIECES];
	for (int b = 0; b < 4; b++)
		for (int p = 0; p < PIECES; p++)
			acc[b][p] = _mm512_setzero_si512();
	const int8_t *wg = pk->w + g * pk->kq * GROUP * 4;
	for (int64_t q = 0; q < pk->kq; q++, wg += GROUP * 4) {
		__m512i u[PIECES];
BI_UNROLL(4)
		for (int p = 0; p < PIECES; p++)
			u[p] = _mm512_set1_epi32((int)qb[4 * q + p]);
BI_UNROLL(4)
		for (int b = 0; b < 4; b++) {
			const __m512i wv = _mm512_loadu_si512(wg + 64 * b);
BI_UNROLL(4)
			for (int p = 0; p < PIECES; p++)
				acc[b][p] = _mm512_dpbusd_epi32(acc[b][p], u[p], wv);
		}
	}
	int32_t s[4][PIECES][16];
	for (int b = 0; b < 4; b++)
		for (int p = 0; p < PIECES; p++)
			_mm512_storeu_si512(s[b][p], acc[b][p]);
	const double unit = ldexp(1.0, e - BITS);
	for (int64_t c = g * GROUP, l = 0; c < pk->n && l < GROUP; c++, l++) {
		int64_t t = -((int64_t)pk->colsum[c] << BITS);
		for (int p = 0; p < PIECES; p++)
			t += (int64_t)s[l / 16][p][l % 16] << 8 * p;
		double sc = w->scale.n ? unit * nnn_f32s_get(w->scale, c) : unit;
		y[c] = (float)((double)t * sc) + nnn_f32s_get(w->bias, c);
	}
}
#pragma GCC pop_options
#endif

typedef struct vnni_job {
	const bi_narrow_pack_t *pk;
	const bi_narrow_t *w;
	const uint32_t *qb; /* [rows][kq * 4] */
	const int *e;       /* [rows] */
	float *y;
} vnni_job_t;

static void vnni_chunk(void *ctx, int64_t ch, int slot)
{
	const vnni_job_t *j = ctx;
	const int64_t r = ch / j->pk->ng;
	(void)slot;
#if BI_X86
	vnni_group(j->pk, j->w, j->qb + r * j->pk->kq * 4, j->e[r], ch % j->pk->ng, j->y + r * j->pk->n);
#else
	(void)j, (void)r;
#endif
}

bool bi_dense_narrow_vnni(const nnn_kernel_args_t *a, const bi_narrow_t *w, int threads)
{
	const bi_narrow_pack_t *pk = w->pack;
	bool done = false;
	if (!pk || w->type != BI_NARROW_I8 || pk->k != w->k || pk->n != w->n || w->rows < 1)
		return false;
	uint32_t *qb = malloc((size_t)(w->rows * pk->kq * 4) * sizeof *qb);
	int *e = malloc((size_t)w->rows * sizeof *e);
#if BI_X86
	done = qb && e;
	for (int64_t r = 0; r < w->rows && done; r++)
		done = vnni_row(a->x + r * w->k, w->k, qb + r * pk->kq * 4, &e[r]);
	if (done) {
		vnni_job_t j = { pk, w, qb, e, a->y };
		bi_run(a, NULL, bi_threads(threads, 0, w->rows * pk->ng), w->rows * pk->ng, vnni_chunk, &j);
	}
#endif
	free(qb);
	free(e);
	return done;
}
