/* kern.h: the builtin plugin's vector kernels as kern_*.c define them:
 * instruction sets, weight panels, micro-kernels and the activations they
 * fuse. Plain C types only, nothing from the schema: a growth of the format
 * (tests/drills) regenerates the records every file that includes
 * builtin.h sees, and would otherwise compile these, the plugin's slowest
 * files, again each time. builtin.h includes it. */
#ifndef NNN_BUILTIN_KERN_H
#define NNN_BUILTIN_KERN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Whether the AVX2 and AVX-512 code is compiled in (x86 with GCC or Clang:
 * each such function has its own target attribute, so the plugin still
 * runs on any x86-64, and picks at run time). */
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define BI_X86 1
#else
#define BI_X86 0
#endif

/* BI_UNROLL(n) before a loop of a vector kernel: `#pragma GCC unroll n`, so
 * its sums stay in registers (GCC and Clang honour it). BI_NO_UNROLL leaves
 * it out: the sanitizer tree (tests/tests.mk) defines it, since Clang 14
 * spends minutes inlining and simplifying the unrolled bodies once UBSan
 * has instrumented them (narrow.c: 125 s, against 6 s without), and speed
 * is not what that tree is for. */
#define BI_PRAGMA(text) _Pragma(#text)
#ifdef BI_NO_UNROLL
#define BI_UNROLL(n)
#else
#define BI_UNROLL(n) BI_PRAGMA(GCC unroll n)
#endif

/* ---- kern.c: micro-kernels, weight panels, instruction set ---- */

/* The instruction sets the kernels are built for, in order. */
typedef enum bi_isa { BI_ISA_GENERIC, BI_ISA_AVX2, BI_ISA_AVX512 } bi_isa_t;

/* The best instruction set of this CPU, capped by the environment variable
 * NNN_BUILTIN_ISA (generic, avx2; for tests and comparisons). GENERIC means
 * the layers' portable im2col + sgemm path. */
bi_isa_t bi_isa(void);
/* Whether this CPU runs a 512-bit multiply-add at half the rate of two
 * 256-bit ones (its AVX-512 units are 256 bits wide: AMD's Zen 4, family
 * 19h), so that kernels in 256-bit vectors lose nothing to the width; the
 * environment variable NNN_BUILTIN_ZMM (half, full) overrides it, for tests
 * and comparisons. Always false without AVX-512VL. */
bool bi_zmm_half(void);

/* A weight matrix of n columns (filters, neurons) by k taps in panels of j
 * vectors of v lanes: w is [np][k][j*v], b is the bias [np*j*v], columns
 * past n zero. 64-byte aligned (host->mem_big); free with bi_pack_free. */
typedef struct bi_pack {
	bi_isa_t isa; /* the kernels' instruction set */
	int v, j;
	int64_t n, k, np;
	float *w, *b;
	bool split; /* the split order (bi_split_order): a Dense layer's */
	bool line256; /* the line kernel in 256-bit vectors: AVX2, or AVX-512 at half rate (bi_zmm_half) */
	/* grouped (bi_pack_group), g > 1: g positions of c channels a row,
	 * runs of len taps, mask[len] the lanes each tap is for */
	int g;
	int64_t c, len;
	uint16_t *mask;
} bi_pack_t;

/* Packs column c, tap t from src[t * sk + c * sn] and the bias (n floats).
 * False when isa is GENERIC, or out of memory. */
bool bi_pack_init(bi_pack_t *pk, bi_isa_t isa, int64_t n, int64_t k, const float *src, int64_t sk, int64_t sn,
                  const float *bias);
void bi_pack_free(bi_pack_t *pk);
/* For a Conv of f <= 8 filters with AVX-512: the panel of g = 16 / f
 * neighbouring positions along the last axis at once, lane l being filter
 * l % f of position l / f; its runs are len + (g - 1) * c taps, position
 * i's weights shifted by i * c taps, each tap masked to the lanes it is
 * for. src is the kernels [f][nq * len]. False when it would not be
 * faster than the plain panel, when isa is not AVX-512, or out of memory. */
bool bi_pack_group(bi_pack_t *pk, bi_isa_t isa, int64_t f, int64_t c, int64_t nq, int64_t len, const float *src,
                   const float *bias);
/* The bytes bi_pack_init and bi_pack_group would allocate (0: none). */
double bi_pack_bytes(bi_isa_t isa, int64_t n, int64_t k);
double bi_group_bytes(bi_isa_t isa, int64_t f, int64_t c, int64_t nq, int64_t len);
/* The most panels bi_ukr_panels takes. */
#define BI_PANELS 4
/* One row x (all pk->k inputs) into panels p .. p + np - 1 (2 <= np <=
 * BI_PANELS, p + np <= pk->np), from their bias: y + p * j * v on. */
void bi_ukr_panels(const bi_pack_t *pk, const float *x, int64_t p, int np, float *y);
/* Whether a Dense layer of n neurons over k inputs sums in the split
 * order (kern_tmpl.h: four partial sums, interleaved): few neurons (one
 * chain of multiply-adds a row in the plain order) over 32 inputs or more.
 * A property of the layer's shape, so a row's bits do not depend on the
 * batch. */
bool bi_split_order(int64_t n, int64_t k);
/* The weights of a Dense layer in the split order: its [k, n] rows as they
 * are (n floats a tap: no panel padding to read), then the bias. src is
 * row-major [k][n]. False unless bi_split_order, or out of memory. */
bool bi_pack_split(bi_pack_t *pk, bi_isa_t isa, int64_t n, int64_t k, const float *src, const float *bias);
/* One call of the split order: r rows (1..bi_rmax) of the weights w, taps
 * k0..k0 + len of rows x + i * xs (k0 a multiple of 4); first: start from
 * the panel's bias, else from the partial sums in part; last: write rows
 * y + i * ys, else the partial sums to part (4 * j * v floats a row). */
void bi_ukr_split(const bi_pack_t *pk, int r, const float *x, ptrdiff_t xs, int64_t len, const float *w,
                  const float *bias, bool first, bool last, float *part, float *y, ptrdiff_t ys, int cols);

/* Cache lines a kernel call prefetches while it runs, spread over its
 * runs (conv.c: the next unit's output and a share of the next item's
 * input, when a batch outgrows the caches): n[0] lines from p[0], to be
 * written, n[1] from p[1], to be read. Hints only: no value depends on
 * them. */
typedef struct bi_pf {
	const float *p[2];
	int64_t n[2];
} bi_pf_t;

/* The most rows one kernel call takes for this packing. */
int bi_rmax(const bi_pack_t *pk);
/* One micro-kernel call: r rows (1..bi_rmax) of one panel w (cols valid
 * columns, 1..j*v), row i reading x + i*xs + off[q] + t for q < nq, t < len,
 * starting from init (ins == 0: the panel's bias) or from rows init + i*ins,
 * writing rows y + i*ys; prefetching pf's lines (NULL: none). */
void bi_ukr(const bi_pack_t *pk, int r, const float *x, ptrdiff_t xs, const ptrdiff_t *off, int64_t nq,
            int64_t len, const float *w, const float *init, ptrdiff_t ins, float *y, ptrdiff_t ys, int cols,
            const bi_pf_t *pf);

/* A grouped kernel call (pk from bi_pack_group): r rows (1..12) of pk->g
 * positions, row i reading x + i * g * c + off[q] + t, writing its
 * g * f floats at y + i * g * f. */
void bi_ukr_group(const bi_pack_t *pk, int r, const float *x, const ptrdiff_t *off, int64_t nq, float *y);

/* Whether a Conv of f filters and c channels runs on the line kernel. */
bool bi_line(bi_isa_t isa, int64_t f, int64_t c);
/* A line kernel call (pk the plain panels, from bi_pack_init): nl lines of
 * cnt neighbouring positions of an output line of a one-channel Conv, line
 * l's position i reading x + l * xb + i + off[q] + t for q < nq, t < len,
 * writing its pk->n filters at y + l * yb + i * pk->n. nl is at most
 * bi_line_run(pk, cnt). ReLU and leaky ReLU in act are applied to the sums
 * before they are stored, as act.c applies them; any other is not. */
struct bi_act;
void bi_ukr_line(const bi_pack_t *pk, const float *x, ptrdiff_t xb, int nl, const ptrdiff_t *off, int64_t nq,
                 int64_t len, int cnt, float *y, ptrdiff_t yb, const struct bi_act *act);
/* The most lines of cnt positions one bi_ukr_line call takes: on the
 * 512-bit kernel 2 when cnt <= 16 (two short lines keep more sums in
 * flight), on the 256-bit one (line256) BI_LINE_RUN (a call and its
 * dispatch cost about as much as a short line's taps), else 1. */
#define BI_LINE_RUN 16
int bi_line_run(const bi_pack_t *pk, int64_t cnt);

/* ---- act.c: the activations a kernel applies to its sums ---- */

/* A layer's activation applied in the layer's own chunks, while they are
 * in cache, instead of in a pass of its own over the whole output (ABI 1.1:
 * the host says which kernel it would run, in a->act). Only this plugin's
 * element-wise activations, whose results do not depend on how the output
 * is cut; softmax, whose rows a chunk may split, and other plugins'
 * kernels stay with the host. */
typedef enum bi_act_kind {
	BI_ACT_NONE, /* the host applies it */
	BI_ACT_LINEAR,
	BI_ACT_SIGMOID,
	BI_ACT_TANH,
	BI_ACT_RELU,
	BI_ACT_LEAKY_RELU
} bi_act_kind_t;
typedef struct bi_act {
	bi_act_kind_t kind;
	float tau;    /* leaky ReLU */
	bi_isa_t isa; /* for ReLU and leaky ReLU: the layer state's */
} bi_act_t;

#endif
