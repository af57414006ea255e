/* kern_isa.h: the micro-kernels each instruction set's files define
 * (kern_avx2.c, kern_avx512.c: the entry points of kern_tmpl.h, and
 * AVX-512's grouped kernel; kern_line.c: the line kernels), for
 * kern.c to choose among. Only
 * kern.c calls them, after checking the CPU has the instruction set. */
#ifndef BI_KERN_ISA_H
#define BI_KERN_ISA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kern.h"

#if BI_X86
/* P (2..BI_PANELS) panels of J vectors of one row; cols valid columns. */
void bi_ukr_panels_avx2(int p, int j, const float *x, int64_t len, const float *w, ptrdiff_t pw, const float *bias,
                        float *y, int cols);
void bi_ukr_panels_avx512(int p, int j, const float *x, int64_t len, const float *w, ptrdiff_t pw,
                          const float *bias, float *y, int cols);
/* The split order for r rows (bi_split_order). */
void bi_ukr_split_avx2(int r, int j, const float *x, ptrdiff_t xs, int64_t len, const float *w, ptrdiff_t ws,
                       const float *bias, bool first, bool last, float *part, float *y, ptrdiff_t ys, int cols);
void bi_ukr_split_avx512(int r, int j, const float *x, ptrdiff_t xs, int64_t len, const float *w, ptrdiff_t ws,
                         const float *bias, bool first, bool last, float *part, float *y, ptrdiff_t ys, int cols);
/* R rows x J vectors of sums over nq runs of len taps (bi_ukr). */
void bi_ukr_avx2(int r, int j, const float *x, ptrdiff_t xs, const ptrdiff_t *off, int64_t nq, int64_t len,
                 const float *w, const float *init, ptrdiff_t ins, float *y, ptrdiff_t ys, int cols,
                 const bi_pf_t *pf);
void bi_ukr_avx512(int r, int j, const float *x, ptrdiff_t xs, const ptrdiff_t *off, int64_t nq, int64_t len,
                   const float *w, const float *init, ptrdiff_t ins, float *y, ptrdiff_t ys, int cols,
                   const bi_pf_t *pf);
/* The grouped kernel (bi_pack_group) and the line kernel (bi_line). */
void bi_ukr_group_avx512(int r, const float *x, ptrdiff_t xs, const ptrdiff_t *off, int64_t nq, int64_t len,
                         const float *w, const uint16_t *mask, const float *bias, float *y, ptrdiff_t ys, int cols);
void bi_ukr_line_avx512(const float *x, ptrdiff_t xs, const ptrdiff_t *off, int64_t nq, int64_t len, const float *w,
                        ptrdiff_t ws, const float *bias, const int *cnt, float *y, ptrdiff_t ys, ptrdiff_t yb,
                        int cols, const bi_act_t *act);
/* The line kernel in 256-bit vectors (bi_pack_t.line256): cnt positions
 * of each of nl lines, line l at x + l * xb into rows y + l * yb + p * ys,
 * cols (1..8) filters. cnt is 1..16 on AVX-512; on AVX2, whose 16
 * registers hold cnt sums and the taps' weights, 1..BI_LINE256_AVX2_P3
 * when len is 3, 1..BI_LINE256_AVX2_P5 when 5, else 1..BI_LINE256_AVX2_P. */
#define BI_LINE256_AVX2_P3 12
#define BI_LINE256_AVX2_P5 10
#define BI_LINE256_AVX2_P 14
void bi_ukr_line256_avx2(const float *x, ptrdiff_t xb, int nl, const ptrdiff_t *off, int64_t nq, int64_t len,
                         const float *w, ptrdiff_t ws, const float *bias, int cnt, float *y, ptrdiff_t ys,
                         ptrdiff_t yb, int cols, const bi_act_t *act);
void bi_ukr_line256_avx512(const float *x, ptrdiff_t xb, int nl, const ptrdiff_t *off, int64_t nq, int64_t len,
                           const float *w, ptrdiff_t ws, const float *bias, int cnt, float *y, ptrdiff_t ys,
                           ptrdiff_t yb, int cols, const bi_act_t *act);
#endif

#endif
