/* kern_avx512.c: the micro-kernels for AVX-512 (16 lanes): those of
 * kern_tmpl.h, and the grouped kernel of a Conv of few filters (the line
 * kernel, AVX-512 too, is kern_line.c). kern.c chooses them at run time
 * (kern_avx2.c says why they are files of their own). */
#include <stddef.h>
#include <stdint.h>
#include <string.h> /* kern_tmpl.h */

#include "kern_isa.h"

#if BI_X86
#include <immintrin.h>

#pragma GCC push_options
#pragma GCC target("avx512f,avx2,fma")
#define KT_SFX avx512
#define KT_ADD(a, b) _mm512_add_ps(a, b)
#define KT_SPLIT_RMAX1 6
#define KT_VEC __m512
#define KT_V 16
#define KT_LOAD(p) _mm512_loadu_ps(p)
#define KT_BCAST(p) _mm512_set1_ps(*(p))
#define KT_FMA(a, b, c) _mm512_fmadd_ps(a, b, c)
#define KT_STORE(p, v) _mm512_storeu_ps(p, v)
#define KT_ZERO() _mm512_setzero_ps()
/* 32 zmm registers: R x J sums and J weights (broadcasts are memory operands) */
#define KT_JMAX 4
#define KT_RMAX1 12
#define KT_RMAX2 12
#define KT_RMAX3 8
#define KT_RMAX4 6
#include "kern_tmpl.h"

/* The grouped kernel (bi_pack_group): R rows of g positions each, lane
 * l of a row is filter l % f of its position l / f. Tap t' of a run is a
 * fused multiply-add in the lanes of mask[t'] only (the positions whose
 * patch has it), so every lane does the very operations, in the same
 * order, as with the plain kernel. */
static inline __attribute__((always_inline)) void ukr_group_body(const int R, const float *x, const ptrdiff_t xs,
                                                                 const ptrdiff_t *off, int64_t nq, int64_t len,
                                                                 const float *w, const uint16_t *mask,
                                                                 const float *bias, float *y, ptrdiff_t ys,
                                                                 __mmask16 store)
{
	__m512 acc[12];
	const __m512 b0 = _mm512_loadu_ps(bias);
BI_UNROLL(16)
	for (int r = 0; r < R; r++)
		acc[r] = b0;
	for (int64_t q = 0; q < nq; q++) {
		const float *xq = x + off[q];
		for (int64_t t = 0; t < len; t++, w += 16) {
			const __m512 wv = _mm512_loadu_ps(w);
			const __mmask16 m = mask[t];
BI_UNROLL(16)
			for (int r = 0; r < R; r++) {
				const __m512 b = _mm512_broadcastss_ps(_mm_load_ss(xq + r * xs + t));
				acc[r] = _mm512_mask3_fmadd_ps(wv, b, acc[r], m);
			}
		}
	}
BI_UNROLL(16)
	for (int r = 0; r < R; r++)
		_mm512_mask_storeu_ps(y + r * ys, store, acc[r]);
}

#define KG_CASE(R)                                                                                           \
	case R:                                                                                                  \
		ukr_group_body(R, x, xs, off, nq, len, w, mask, bias, y, ys, store);                                 \
		break;

void bi_ukr_group_avx512(int r, const float *x, ptrdiff_t xs, const ptrdiff_t *off, int64_t nq, int64_t len,
                         const float *w, const uint16_t *mask, const float *bias, float *y, ptrdiff_t ys,
                         int cols)
{
	const __mmask16 store = (__mmask16)((1u << cols) - 1);
	switch (r) {
	KG_CASE(1) KG_CASE(2) KG_CASE(3) KG_CASE(4) KG_CASE(5) KG_CASE(6)
	KG_CASE(7) KG_CASE(8) KG_CASE(9) KG_CASE(10) KG_CASE(11) KG_CASE(12)
	default:
		break;
	}
}
#undef KG_CASE

#pragma GCC pop_options

#endif /* BI_X86 */
