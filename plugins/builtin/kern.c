/* kern.c: the register-blocked micro-kernels Dense and Conv run on, their
 * weight packing, and the choice of instruction set at run time.
 *
 * Both layers are a product of rows (Dense: input rows; Conv: output
 * positions, each reading its input patch in place) with a weight matrix
 * packed into panels of J vectors of V columns (filters or neurons). A
 * micro-kernel keeps R rows x J vectors of sums in registers, starts them
 * from the bias, and for every tap loads J vectors of weights once for all
 * R rows: kern_tmpl.h. It is compiled twice, for AVX-512 (V = 16,
 * kern_avx512.c) and for AVX2 with FMA (V = 8, kern_avx2.c), each in a
 * `#pragma GCC target` region, so the plugin runs on any x86-64 and picks
 * the best its CPU has when a layer is prepared (here: kern_isa.h declares
 * what each file defines). Elsewhere, or when NNN_BUILTIN_ISA=generic, the layers use
 * their portable im2col + sgemm path (bi_isa() says BI_ISA_GENERIC).
 *
 * Three shapes get kernels of their own: a Conv of one channel the line
 * kernel (AVX-512: positions in the lanes, a vector of sums per filter;
 * AVX2, and AVX-512 on CPUs whose 512-bit multiply-adds run at half rate,
 * bi_zmm_half: 256-bit vectors of filters; kern_line.c), a Conv of a few
 * filters the grouped one, and a narrow Dense layer over many inputs sums in
 * the split order (kern_tmpl.h).
 *
 * Every output is a sum in one fixed order, the layer's (tap after tap, or
 * the split order's, chosen by the layer's shape alone), whatever the row
 * block, the panel width, the batch or the thread: results do not depend
 * on the thread count, nor on the instruction set (all use fused
 * multiply-adds).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "builtin.h"
#include "kern_isa.h"

#if BI_X86
#include <cpuid.h>
#endif

/* KT_RMAX<J> of each instruction set, by J */
static const int rmax8[3] = { 0, 12, 6 }, rmax16[5] = { 0, 12, 12, 8, 6 };

bi_isa_t bi_isa(void)
{
	bi_isa_t best = BI_ISA_GENERIC;
	const char *cap = getenv("NNN_BUILTIN_ISA");
#if BI_X86
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
		best = __builtin_cpu_supports("avx512f") ? BI_ISA_AVX512 : BI_ISA_AVX2;
#endif
	if (cap && strcmp(cap, "generic") == 0)
		return BI_ISA_GENERIC;
	if (cap && strcmp(cap, "avx2") == 0 && best > BI_ISA_AVX2)
		return BI_ISA_AVX2;
	return best;
}

bool bi_zmm_half(void)
{
#if BI_X86
	const char *force = getenv("NNN_BUILTIN_ZMM");
	unsigned a, b, c, d, family;
	__builtin_cpu_init();
	if (!__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("avx512vl"))
		return false;
	if (force && strcmp(force, "half") == 0)
		return true;
	if (force && strcmp(force, "full") == 0)
		return false;
	if (!__get_cpuid(0, &a, &b, &c, &d) || b != 0x68747541u || d != 0x69746e65u || c != 0x444d4163u ||
	    !__get_cpuid(1, &a, &b, &c, &d)) /* "AuthenticAMD" */
		return false;
	family = (a >> 8) & 0xf;
	if (family == 0xf)
		family += (a >> 20) & 0xff;
	return family == 0x19; /* Zen 4; Zen 5 (1Ah) has 512-bit units in its server and desktop parts */
#else
	return false;
#endif
}

int bi_rmax(const bi_pack_t *pk)
{
	if (pk->split) /* KT_SPLIT_RMAX1 of each, and 1 row with 2 vectors */
		return pk->j > 1 ? 1 : pk->v == 16 ? 6 : 3;
	return pk->v == 16 ? rmax16[pk->j] : rmax8[pk->j];
}

void bi_ukr_panels(const bi_pack_t *pk, const float *x, int64_t p, int np, float *y)
{
#if BI_X86
	const int64_t jv = (int64_t)pk->j * pk->v;
	const int cols = (int)(pk->n - p * jv < np * jv ? pk->n - p * jv : np * jv);
	const float *w = pk->w + p * jv * pk->k;
	if (pk->v == 16)
		bi_ukr_panels_avx512(np, pk->j, x, pk->k, w, (ptrdiff_t)(jv * pk->k), pk->b + p * jv, y + p * jv, cols);
	else
		bi_ukr_panels_avx2(np, pk->j, x, pk->k, w, (ptrdiff_t)(jv * pk->k), pk->b + p * jv, y + p * jv, cols);
#else
	(void)pk, (void)x, (void)p, (void)np, (void)y;
#endif
}

bool bi_split_order(int64_t n, int64_t k)
{
	/* 16 neurons fill one AVX-512 vector (or two AVX2 ones: the split
	 * kernels take up to 2), one chain a row; from 32 inputs on, each of
	 * the four chains has 8 steps or more */
	return n >= 1 && n <= 16 && k >= 32;
}

void bi_ukr_split(const bi_pack_t *pk, int r, const float *x, ptrdiff_t xs, int64_t len, const float *w,
                  const float *bias, bool first, bool last, float *part, float *y, ptrdiff_t ys, int cols)
{
#if BI_X86
	if (pk->v == 16)
		bi_ukr_split_avx512(r, pk->j, x, xs, len, w, (ptrdiff_t)pk->n, bias, first, last, part, y, ys, cols);
	else
		bi_ukr_split_avx2(r, pk->j, x, xs, len, w, (ptrdiff_t)pk->n, bias, first, last, part, y, ys, cols);
#else
	(void)pk, (void)r, (void)x, (void)xs, (void)len, (void)w, (void)bias, (void)first, (void)last, (void)part;
	(void)y, (void)ys, (void)cols;
#endif
}

void bi_ukr(const bi_pack_t *pk, int r, const float *x, ptrdiff_t xs, const ptrdiff_t *off, int64_t nq,
            int64_t len, const float *w, const float *init, ptrdiff_t ins, float *y, ptrdiff_t ys, int cols,
            const bi_pf_t *pf)
{
#if BI_X86
	if (pk->v == 16)
		bi_ukr_avx512(r, pk->j, x, xs, off, nq, len, w, init, ins, y, ys, cols, pf);
	else
		bi_ukr_avx2(r, pk->j, x, xs, off, nq, len, w, init, ins, y, ys, cols, pf);
#else
	(void)pk, (void)r, (void)x, (void)xs, (void)off, (void)nq, (void)len, (void)w, (void)init, (void)ins;
	(void)y, (void)ys, (void)cols, (void)pf;
#endif
}

void bi_ukr_group(const bi_pack_t *pk, int r, const float *x, const ptrdiff_t *off, int64_t nq, float *y)
{
#if BI_X86
	bi_ukr_group_avx512(r, x, (ptrdiff_t)pk->g * pk->c, off, nq, pk->len, pk->w, pk->mask, pk->b, y,
	                 (ptrdiff_t)pk->n, (int)pk->n);
#else
	(void)pk, (void)r, (void)x, (void)off, (void)nq, (void)y;
#endif
}

/* The most filters the line kernel takes: with more, the plain kernel's
 * panels fill whole vectors of filters already. */
#define LINE_FMAX 8

bool bi_line(bi_isa_t isa, int64_t f, int64_t c)
{
	return isa != BI_ISA_GENERIC && c == 1 && f >= 1 && f <= LINE_FMAX;
}

int bi_line_run(const bi_pack_t *pk, int64_t cnt)
{
	return pk->line256 ? BI_LINE_RUN : cnt <= 16 ? 2 : 1;
}

void bi_ukr_line(const bi_pack_t *pk, const float *x, ptrdiff_t xb, int nl, const ptrdiff_t *off, int64_t nq,
                 int64_t len, int cnt, float *y, ptrdiff_t yb, const bi_act_t *act)
{
#if BI_X86
	const int64_t jv = (int64_t)pk->j * pk->v;
	if (pk->line256) { /* bi_line: 8 filters or fewer, one panel; each line in even blocks of pmax positions or fewer */
		const bool avx2 = pk->isa == BI_ISA_AVX2;
		const int pmax = !avx2 ? 16 : len == 3 ? BI_LINE256_AVX2_P3 : len == 5 ? BI_LINE256_AVX2_P5 : BI_LINE256_AVX2_P;
		const int blocks = (cnt + pmax - 1) / pmax, per = (cnt + blocks - 1) / blocks;
		for (int i = 0; i < cnt; i += per)
			(avx2 ? bi_ukr_line256_avx2 : bi_ukr_line256_avx512)(x + i, xb, nl, off, nq, len, pk->w, (ptrdiff_t)jv,
			                                                     pk->b, cnt - i < per ? cnt - i : per, y + i * pk->n,
			                                                     (ptrdiff_t)pk->n, yb, (int)pk->n, act);
		return;
	}
	for (int64_t p = 0; p < pk->np; p++)
		for (int64_t c0 = p * jv; c0 < pk->n && c0 < (p + 1) * jv; c0 += 16) {
			const int cols = (int)(pk->n - c0 < 16 ? pk->n - c0 : 16);
			const float *w = pk->w + p * jv * pk->k + (c0 - p * jv), *b = pk->b + c0;
			if (nl == 2 && cols <= 8) { /* the two lines at once */
				const int n[2] = { cnt, cnt };
				bi_ukr_line_avx512(x, xb, off, nq, len, w, (ptrdiff_t)jv, b, n, y + c0, (ptrdiff_t)pk->n, yb, cols,
				                   act);
				continue;
			}
			for (int l = 0; l < nl; l++) {
				const float *xl = x + l * xb;
				float *yl = y + l * yb;
				const int nb = cols <= 8 ? 32 : 16;
				for (int i = 0; i < cnt; i += nb) { /* blocks of 16 positions, two at a time when 8 filters or fewer */
					const int n[2] = { cnt - i < 16 ? cnt - i : 16,
						           nb > 16 && cnt - i > 16 ? (cnt - i < 32 ? cnt - i - 16 : 16) : 0 };
					bi_ukr_line_avx512(xl + i, 16, off, nq, len, w, (ptrdiff_t)jv, b, n, yl + i * pk->n + c0,
					                   (ptrdiff_t)pk->n, 16 * pk->n, cols, act);
				}
			}
		}
#else
	(void)pk, (void)x, (void)xb, (void)nl, (void)off, (void)nq, (void)len, (void)cnt, (void)y, (void)yb, (void)act;
#endif
}

/* Whether bi_pack_group groups this Conv, and its group width and run. */
static bool groups(bi_isa_t isa, int64_t f, int64_t c, int64_t nq, int64_t len, int64_t *g, int64_t *glen)
{
	if (isa != BI_ISA_AVX512 || f < 1 || f > 8 || c < 1 || len < 1 || nq < 1 || bi_line(isa, f, c))
		return false;
	*g = 16 / f;
	*glen = len + (*g - 1) * c;
	/* the plain kernel does one 8-lane multiply-add per tap and position;
	 * this one a 16-lane one per glen / len taps and g positions */
	return *glen * 4 <= len * *g * 3 && (uint64_t)nq <= (SIZE_MAX / sizeof(float) / 2 - 64) / 16 / (uint64_t)*glen;
}

double bi_group_bytes(bi_isa_t isa, int64_t f, int64_t c, int64_t nq, int64_t len)
{
	int64_t g, glen;
	if (!groups(isa, f, c, nq, len, &g, &glen))
		return 0;
	return ((double)nq * (double)glen * 16 + 16) * sizeof(float) + (double)glen * sizeof(uint16_t) + 63;
}

bool bi_pack_group(bi_pack_t *pk, bi_isa_t isa, int64_t f, int64_t c, int64_t nq, int64_t len, const float *src,
                   const float *bias)
{
	int64_t g, glen, taps = nq * len;
	size_t bytes;
	memset(pk, 0, sizeof *pk);
	if (!groups(isa, f, c, nq, len, &g, &glen))
		return false;
	pk->v = 16;
	pk->j = 1;
	pk->np = 1;
	pk->g = (int)g;
	pk->c = c;
	pk->len = glen;
	pk->n = g * f;
	pk->k = nq * glen;
	bytes = ((size_t)(pk->k * 16 + 16) * sizeof(float) + (size_t)glen * sizeof(uint16_t) + 63) & ~(size_t)63;
	if (!(pk->w = bi_host()->mem_big(bytes)))
		return false;
	pk->b = pk->w + pk->k * 16;
	pk->mask = (uint16_t *)(void *)(pk->b + 16);
	for (int64_t t = 0; t < glen; t++) {
		unsigned m = 0;
		for (int64_t l = 0; l < g * f; l++)
			m |= (t - l / f * c >= 0 && t - l / f * c < len ? 1u : 0u) << l;
		pk->mask[t] = (uint16_t)m;
	}
	for (int64_t q = 0; q < nq; q++)
		for (int64_t t = 0; t < glen; t++)
			for (int64_t l = 0; l < 16; l++) {
				int64_t tt = t - l / f * c; /* the tap of position l / f */
				pk->w[(q * glen + t) * 16 + l] =
					l < g * f && tt >= 0 && tt < len ? src[l % f * taps + q * len + tt] : 0.0f;
			}
	for (int64_t l = 0; l < 16; l++)
		pk->b[l] = l < g * f ? bias[l % f] : 0.0f;
	return true;
}

/* The panel of n columns: v lanes a vector, j vectors; returns j * v. */
static int64_t panel(bi_isa_t isa, int64_t n, int *v, int *j)
{
	/* AVX-512 for 9 columns and more; 8 or fewer fill an AVX2 vector
	 * (every AVX-512 CPU has AVX2 and FMA) */
	*v = isa == BI_ISA_AVX512 && n > 8 ? 16 : 8;
	int64_t nvec = (n + *v - 1) / *v;
	/* the widest panel (AVX-512: up to 4 vectors, AVX2: 2) whose padding
	 * wastes at most a quarter of the vectors */
	for (*j = *v == 16 ? 4 : 2; *j > 1; --*j) {
		int64_t padded = (nvec + *j - 1) / *j * *j;
		if (*j <= nvec && (padded - nvec) * 4 <= nvec)
			break;
	}
	return (int64_t)*j * *v;
}

double bi_pack_bytes(bi_isa_t isa, int64_t n, int64_t k)
{
	int v, j;
	if (isa == BI_ISA_GENERIC || n < 1 || k < 1)
		return 0;
	int64_t jv = panel(isa, n, &v, &j);
	return (double)((n + jv - 1) / jv) * (double)jv * ((double)k + 1) * sizeof(float) + 63;
}

bool bi_pack_init(bi_pack_t *pk, bi_isa_t isa, int64_t n, int64_t k, const float *src, int64_t sk, int64_t sn,
                  const float *bias)
{
	int64_t jv;
	size_t bytes;
	memset(pk, 0, sizeof *pk);
	if (isa == BI_ISA_GENERIC || n < 1 || k < 1)
		return false;
	jv = panel(isa, n, &pk->v, &pk->j);
	pk->n = n;
	pk->k = k;
	pk->np = (n + jv - 1) / jv;
	pk->isa = isa;
	pk->line256 = isa == BI_ISA_AVX2 || (isa == BI_ISA_AVX512 && bi_zmm_half());
	if ((uint64_t)pk->np > (SIZE_MAX / sizeof(float) - 64) / (uint64_t)jv / (uint64_t)(k + 1))
		return false;
	bytes = ((size_t)(pk->np * jv * (k + 1)) * sizeof(float) + 63) & ~(size_t)63;
	if (!(pk->w = bi_host()->mem_big(bytes)))
		return false;
	pk->b = pk->w + pk->np * jv * k;
	for (int64_t p = 0; p < pk->np; p++) {
		float *wp = pk->w + p * jv * k;
		for (int64_t t = 0; t < k; t++)
			for (int64_t l = 0; l < jv; l++) {
				int64_t c = p * jv + l;
				wp[t * jv + l] = c < n ? src[t * sk + c * sn] : 0.0f;
			}
		for (int64_t l = 0; l < jv; l++)
			pk->b[p * jv + l] = p * jv + l < n ? bias[p * jv + l] : 0.0f;
	}
	return true;
}

bool bi_pack_split(bi_pack_t *pk, bi_isa_t isa, int64_t n, int64_t k, const float *src, const float *bias)
{
	int64_t jv;
	size_t floats;
	memset(pk, 0, sizeof *pk);
	if (isa == BI_ISA_GENERIC || !bi_split_order(n, k))
		return false;
	jv = panel(isa, n, &pk->v, &pk->j);
	pk->n = n;
	pk->k = k;
	pk->np = 1;
	pk->split = true;
	/* the rows as they are, then 16 floats (a row's vectors reach up to 16
	 * floats from its start), then the bias, padded to the panel */
	floats = (size_t)(k * n) + 16 + (size_t)jv;
	if ((uint64_t)(k * n) > SIZE_MAX / sizeof(float) / 2 ||
	    !(pk->w = bi_host()->mem_big((floats * sizeof(float) + 63) & ~(size_t)63)))
		return false;
	memcpy(pk->w, src, (size_t)(k * n) * sizeof *src);
	memset(pk->w + k * n, 0, 16 * sizeof *pk->w);
	pk->b = pk->w + k * n + 16;
	for (int64_t l = 0; l < jv; l++)
		pk->b[l] = l < n ? bias[l] : 0.0f;
	return true;
}

void bi_pack_free(bi_pack_t *pk)
{
	bi_host()->mem_free(pk->w);
	memset(pk, 0, sizeof *pk);
}
