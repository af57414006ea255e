/* kern_avx2.c: the micro-kernels of kern_tmpl.h for AVX2 with FMA (8 lanes).
 * Each instruction set's kernels are a file of their own (and AVX-512's
 * line kernel one more: kern_line.c) so that make builds them side by
 * side: in one file, the sanitizer tree spent minutes on it alone. kern.c
 * chooses among them at run time. */
#include <stddef.h>
#include <stdint.h>
#include <string.h> /* kern_tmpl.h */

#include "kern_isa.h"

#if BI_X86
#include <immintrin.h>

#pragma GCC push_options
#pragma GCC target("avx2,fma")
#define KT_SFX avx2
#define KT_ADD(a, b) _mm256_add_ps(a, b)
#define KT_SPLIT_RMAX1 3
#define KT_VEC __m256
#define KT_V 8
#define KT_LOAD(p) _mm256_loadu_ps(p)
#define KT_BCAST(p) _mm256_broadcast_ss(p)
#define KT_FMA(a, b, c) _mm256_fmadd_ps(a, b, c)
#define KT_STORE(p, v) _mm256_storeu_ps(p, v)
#define KT_ZERO() _mm256_setzero_ps()
/* 16 ymm registers: R x J sums, J weights and a broadcast */
#define KT_JMAX 2
#define KT_RMAX1 12
#define KT_RMAX2 6
#include "kern_tmpl.h"
#pragma GCC pop_options

#endif /* BI_X86 */
