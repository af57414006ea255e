/* kern_line.c: the line kernels of a Conv of one channel, which kern.c
 * chooses through bi_line(): positions in the lanes (AVX-512), or filters
 * in 256-bit lanes (AVX2, and AVX-512 on CPUs whose 512-bit multiply-adds
 * run at half rate).
 * A file of its own, as each instruction set's kernels are (kern_avx2.c):
 * fully unrolled for every filter and position count, it is the costliest
 * code of the plugin to compile. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "kern_isa.h"

#if BI_X86
#include <immintrin.h>

#pragma GCC push_options
#pragma GCC target("avx512f,avx2,fma")

/* Four vectors of sums a[f] (lane p: position p) as u[i], whose 128-bit
 * lane j holds the four filters' sums of position 4j + i. */
static inline __attribute__((always_inline)) void line_unpack(const __m512 *a, __m512 *u)
{
	const __m512 t0 = _mm512_unpacklo_ps(a[0], a[1]), t1 = _mm512_unpackhi_ps(a[0], a[1]);
	const __m512 t2 = _mm512_unpacklo_ps(a[2], a[3]), t3 = _mm512_unpackhi_ps(a[2], a[3]);
	u[0] = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(t0), _mm512_castps_pd(t2)));
	u[1] = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(t0), _mm512_castps_pd(t2)));
	u[2] = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(t1), _mm512_castps_pd(t3)));
	u[3] = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(t1), _mm512_castps_pd(t3)));
}

/* Stores 16 positions of 8 filters as 8 vectors of 2 positions each:
 * lo[i] and hi[i] (128-bit lane j: filters 0..3 and 4..7 of position
 * 4j + i) become [lo(p), hi(p), lo(p+1), hi(p+1)]; positions from n on
 * are not stored. */
static inline __attribute__((always_inline)) void line_store8(float *y, const __m512 *lo, const __m512 *hi, int n)
{
	__m512 a[4], b[4]; /* a[i]: lanes 0, 1 of lo[i] and hi[i]; b[i]: lanes 2, 3 */
BI_UNROLL(4)
	for (int i = 0; i < 4; i++) {
		a[i] = _mm512_shuffle_f32x4(lo[i], hi[i], _MM_SHUFFLE(1, 0, 1, 0));
		b[i] = _mm512_shuffle_f32x4(lo[i], hi[i], _MM_SHUFFLE(3, 2, 3, 2));
	}
BI_UNROLL(8)
	for (int k = 0; k < 8; k++) { /* positions 2k and 2k + 1: 4j + i and 4j + i + 1 */
		const int j = k >> 1, i = 2 * (k & 1);
		const __m512 *src = j < 2 ? a : b;
		const __m512 v = (j & 1) ? _mm512_shuffle_f32x4(src[i], src[i + 1], _MM_SHUFFLE(3, 1, 3, 1))
		                         : _mm512_shuffle_f32x4(src[i], src[i + 1], _MM_SHUFFLE(2, 0, 2, 0));
		if (2 * k + 1 < n)
			_mm512_storeu_ps(y + 16 * k, v);
		else if (2 * k < n)
			_mm512_mask_storeu_ps(y + 16 * k, 0x00ff, v);
	}
}

/* The line kernel (a Conv of one channel, bi_line): 16 neighbouring
 * positions of an output line in the lanes of a vector, one vector of sums
 * per filter. A tap is one load of 16 inputs (which, with one channel, are
 * contiguous) and a multiply-add per filter with that filter's weight
 * broadcast: no lane is spent on padding filters or masked taps, and each
 * lane does the operations of the plain kernel, in its order. NB blocks of
 * cnt[i] (<= 16) positions, block i at x + i * xs into y + i * yb (the
 * next 16 of the line, or the next line: a second block keeps 16 chains of
 * 8 filters in flight), 4 * G filters from a panel row of ws floats a
 * tap; ReLU or leaky ReLU in act applied to the sums. */
static inline __attribute__((always_inline)) void ukr_line_body(const int G, const int NB, const float *x,
                                                                ptrdiff_t xs, const ptrdiff_t *off, int64_t nq,
                                                                int64_t len, const float *w, ptrdiff_t ws,
                                                                const float *bias, const int *cnt, float *y,
                                                                ptrdiff_t ys, ptrdiff_t yb, int cols,
                                                                const bi_act_t *act)
{
	__m512 acc[2][16];
	const __mmask16 m[2] = { (__mmask16)(cnt[0] >= 16 ? 0xffffu : (1u << cnt[0]) - 1),
		                 (__mmask16)(NB < 2 ? 0u : cnt[1] >= 16 ? 0xffffu : (1u << cnt[1]) - 1) };
BI_UNROLL(16)
	for (int f = 0; f < 4 * G; f++) {
		const __m512 b = _mm512_set1_ps(bias[f]);
BI_UNROLL(2)
		for (int i = 0; i < NB; i++)
			acc[i][f] = b;
	}
	for (int64_t q = 0; q < nq; q++) {
		const float *xq = x + off[q];
		for (int64_t t = 0; t < len; t++, w += ws) {
			__m512 xv[2];
BI_UNROLL(2)
			for (int i = 0; i < NB; i++) /* masked lanes read nothing: no access past the line */
				xv[i] = _mm512_maskz_loadu_ps(m[i], xq + i * xs + t);
BI_UNROLL(16)
			for (int f = 0; f < 4 * G; f++) {
				const __m512 wb = _mm512_set1_ps(w[f]);
BI_UNROLL(2)
				for (int i = 0; i < NB; i++)
					acc[i][f] = _mm512_fmadd_ps(xv[i], wb, acc[i][f]);
			}
		}
	}
	if (act->kind == BI_ACT_RELU || act->kind == BI_ACT_LEAKY_RELU) { /* act.c's own operations, on the sums */
		const __m512 zero = _mm512_setzero_ps(), tau = _mm512_set1_ps(act->tau);
BI_UNROLL(2)
		for (int i = 0; i < NB; i++)
BI_UNROLL(16)
			for (int f = 0; f < 4 * G; f++)
				acc[i][f] = act->kind == BI_ACT_RELU
				                    ? _mm512_max_ps(acc[i][f], zero)
				                    : _mm512_mask_blend_ps(_mm512_cmp_ps_mask(acc[i][f], zero, _CMP_GT_OQ),
				                                           _mm512_mul_ps(acc[i][f], tau), acc[i][f]);
	}
	/* Out as rows of filters: per 4 filters, two rounds of unpacking give
	 * u[i], whose 128-bit lane j holds them for position 4j + i. */
BI_UNROLL(2)
	for (int i = 0; i < NB; i++) {
		const int n = cnt[i];
		float *yi = y + i * yb;
		__m512 u[4][4];
BI_UNROLL(4)
		for (int g = 0; g < G; g++)
			line_unpack(&acc[i][4 * g], u[g]);
		if (G == 2 && cols == 8 && ys == 8) { /* the rows are one run: whole vectors of 2 positions */
			line_store8(yi, u[0], u[1], n);
			continue;
		}
BI_UNROLL(4)
		for (int g = 0; g < G; g++) {
			const int part = cols - 4 * g; /* filters of these 4 to store */
BI_UNROLL(4)
			for (int j = 0; j < 4; j++)
BI_UNROLL(4)
				for (int k = 0; k < 4; k++) {
					const int p = 4 * j + k;
					__m128 v;
					if (p >= n)
						continue;
					v = j == 0 ? _mm512_castps512_ps128(u[g][k])
					  : j == 1 ? _mm512_extractf32x4_ps(u[g][k], 1)
					  : j == 2 ? _mm512_extractf32x4_ps(u[g][k], 2) : _mm512_extractf32x4_ps(u[g][k], 3);
					if (part >= 4)
						_mm_storeu_ps(yi + p * ys + 4 * g, v);
					else /* the first part lanes only (AVX-512F's masked store; the others are untouched) */
						_mm512_mask_storeu_ps(yi + p * ys + 4 * g, (__mmask16)((1u << part) - 1),
						                      _mm512_castps128_ps512(v));
				}
		}
	}
}

#define KL_CASE(G, NB)                                                                                       \
	case G:                                                                                                  \
		ukr_line_body(G, NB, x, xs, off, nq, len, w, ws, bias, cnt, y, ys, yb, cols, act);                   \
		break;

/* cnt[0] positions (1..16) at x into y, and when cnt[1] > 0 (cols <= 8),
 * cnt[1] at x + xs into y + yb. */
void bi_ukr_line_avx512(const float *x, ptrdiff_t xs, const ptrdiff_t *off, int64_t nq, int64_t len,
                        const float *w, ptrdiff_t ws, const float *bias, const int *cnt, float *y, ptrdiff_t ys,
                        ptrdiff_t yb, int cols, const bi_act_t *act)
{
	if (cnt[1] > 0) {
		switch ((cols + 3) / 4) {
		KL_CASE(1, 2) KL_CASE(2, 2)
		default:
			break;
		}
	} else {
		switch ((cols + 3) / 4) {
		KL_CASE(1, 1) KL_CASE(2, 1) KL_CASE(3, 1) KL_CASE(4, 1)
		default:
			break;
		}
	}
}
#undef KL_CASE
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx2,fma")

/* The line kernel in 256-bit vectors (bi_pack_t.line256), for AVX2 and for
 * CPUs whose 512-bit multiply-adds run at half the rate: P neighbouring
 * positions of a line, a vector of sums per position with its (up to 8)
 * filters in the lanes, the way the plain kernel lays them out. A tap is
 * one vector of weights and, per position, a multiply-add with its input
 * broadcast from memory (a load; with AVX-512VL, the multiply-add's own
 * operand): every lane works and the sums need no unpacking. Each lane
 * does the plain kernel's operations in its order. LEN > 0 is len, known
 * when compiled. AVX2 instructions only, so that both entries below inline
 * it: P + LEN + 1 registers (P + 2 in the loop) of AVX2's 16, AVX-512's 32. */
static inline __attribute__((always_inline)) void ukr_line256_body(const int P, const int LEN, const float *x,
                                                                   const ptrdiff_t *off, int64_t nq, int64_t len,
                                                                   const float *w, ptrdiff_t ws, const float *bias,
                                                                   float *y, ptrdiff_t ys, int cols,
                                                                   const bi_act_t *act)
{
	__m256 acc[16];
	const __m256 b = _mm256_loadu_ps(bias);
BI_UNROLL(16)
	for (int p = 0; p < P; p++)
		acc[p] = b;
	for (int64_t q = 0; q < nq; q++) {
		const float *xq = x + off[q];
		if (LEN) { /* unrolled, position after position: each input is loaded once for its LEN taps */
			__m256 wv[8]; /* LEN <= 8 */
BI_UNROLL(8)
			for (int t = 0; t < LEN; t++)
				wv[t] = _mm256_loadu_ps(w + t * ws);
BI_UNROLL(16)
			for (int p = 0; p < P; p++)
BI_UNROLL(8)
				for (int t = 0; t < LEN; t++)
					acc[p] = _mm256_fmadd_ps(_mm256_broadcast_ss(xq + p + t), wv[t], acc[p]);
			w += LEN * ws;
			continue;
		}
		for (int64_t t = 0; t < len; t++, w += ws) {
			const __m256 wv = _mm256_loadu_ps(w);
BI_UNROLL(16)
			for (int p = 0; p < P; p++)
				acc[p] = _mm256_fmadd_ps(_mm256_broadcast_ss(xq + p), wv, acc[p]);
			/* opaque, so that GCC keeps each broadcast a load rather than
			 * carrying the inputs to the next tap in registers, whose
			 * broadcasts take the multiply-adds' pipes */
			xq++;
			__asm__("" : "+r"(xq));
		}
	}
	const __m256 zero = _mm256_setzero_ps(), tau = _mm256_set1_ps(act->tau);
BI_UNROLL(16)
	for (int p = 0; p < P; p++) {
		__m256 v = acc[p];
		if (act->kind == BI_ACT_RELU) /* act.c's own operations, on the sums */
			v = _mm256_max_ps(v, zero);
		else if (act->kind == BI_ACT_LEAKY_RELU)
			v = _mm256_blendv_ps(_mm256_mul_ps(v, tau), v, _mm256_cmp_ps(v, zero, _CMP_GT_OQ));
		if (cols == 8) {
			_mm256_storeu_ps(y + p * ys, v);
		} else { /* the first cols lanes only: the next position's sums follow */
			float part[8];
			_mm256_storeu_ps(part, v);
			memcpy(y + p * ys, part, (size_t)cols * sizeof *part);
		}
	}
}

/* Runs of 3 and 5 taps (kernels 3 or 5 wide, as conv3d's and the example's
 * first Conv) get bodies of their own: in a loop, each of a tap's
 * multiply-adds loads its input, and the loads were the limit (conv3d: 69
 * against 91 % of the FMA peak unrolled, the kernel alone). */
#define KL_LINES(P, LEN)                                                                                     \
	for (int l = 0; l < nl; l++)                                                                             \
		ukr_line256_body(P, LEN, x + l * xb, off, nq, len, w, ws, bias, y + l * yb, ys, cols, act)
#define KL_CASE(P, P3, P5)                                                                                   \
	case P:                                                                                                  \
		if (len == 3 && P <= P3)                                                                             \
			KL_LINES(P, 3);                                                                                  \
		else if (len == 5 && P <= P5)                                                                        \
			KL_LINES(P, 5);                                                                                  \
		else                                                                                                 \
			KL_LINES(P, 0);                                                                                  \
		break;
#define KL_AVX2(P) KL_CASE(P, BI_LINE256_AVX2_P3, BI_LINE256_AVX2_P5)
#define KL_AVX512(P) KL_CASE(P, 16, 16)

void bi_ukr_line256_avx2(const float *x, ptrdiff_t xb, int nl, const ptrdiff_t *off, int64_t nq, int64_t len,
                         const float *w, ptrdiff_t ws, const float *bias, int cnt, float *y, ptrdiff_t ys,
                         ptrdiff_t yb, int cols, const bi_act_t *act)
{
	switch (cnt) {
	KL_AVX2(1) KL_AVX2(2) KL_AVX2(3) KL_AVX2(4) KL_AVX2(5) KL_AVX2(6) KL_AVX2(7)
	KL_AVX2(8) KL_AVX2(9) KL_AVX2(10) KL_AVX2(11) KL_AVX2(12) KL_AVX2(13) KL_AVX2(14)
	default:
		break;
	}
}
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx512f,avx512vl,avx2,fma")

void bi_ukr_line256_avx512(const float *x, ptrdiff_t xb, int nl, const ptrdiff_t *off, int64_t nq, int64_t len,
                           const float *w, ptrdiff_t ws, const float *bias, int cnt, float *y, ptrdiff_t ys,
                           ptrdiff_t yb, int cols, const bi_act_t *act)
{
	switch (cnt) {
	KL_AVX512(1) KL_AVX512(2) KL_AVX512(3) KL_AVX512(4) KL_AVX512(5) KL_AVX512(6) KL_AVX512(7) KL_AVX512(8)
	KL_AVX512(9) KL_AVX512(10) KL_AVX512(11) KL_AVX512(12) KL_AVX512(13) KL_AVX512(14) KL_AVX512(15)
	KL_AVX512(16)
	default:
		break;
	}
}
#undef KL_AVX512
#undef KL_AVX2
#undef KL_CASE
#undef KL_LINES
#pragma GCC pop_options

#endif /* BI_X86 */
