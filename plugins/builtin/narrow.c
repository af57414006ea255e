/* narrow.c: Dense products whose weights are narrower than float32: int8
 * or float16 elements of [inputs, neurons], as a grown layer's tensor holds
 * them in the file (an nnn_elems_t view, little-endian):
 *
 *   y[r, c] = (sum over i of x[r, i] * float(W[i, c])) * scale[c] + bias[c]
 *
 * At batch 1 a Dense layer is memory-bound: every call streams all its
 * weights from cache or memory, so reading int8 (a quarter of float32's
 * bytes) or float16 (half) is the gain, and the widening must not cost
 * more than it saves. The weights are read in place (no float copy, which
 * would give the gain back): a block of neurons keeps its sums in
 * registers over every input, widening J vectors of weights once per
 * input for R rows (vpmovsxbd + vcvtdq2ps, or vcvtph2ps), and the scale
 * is applied once per neuron at the end, to the sum, not to each weight.
 * AVX-512 and AVX2 (which every CPU with it pairs with F16C) are compiled
 * in `#pragma GCC target` regions and picked at run time (bi_isa); the
 * plain C path (NNN_BUILTIN_ISA=generic, other CPUs, and the columns past
 * the last full vector) sums in the same order, input after input. Blocks
 * of rows x neurons are the chunks threads share (bi_run). int8 weights
 * packed at prepare take the integer path of narrow_vnni.c instead, where
 * the CPU has AVX-512 VNNI. */
#include "builtin.h"

#if BI_X86
#include <immintrin.h>
#endif

typedef struct narrow_job narrow_job_t;
/* Rows r0 .. r0 + rr - 1, columns c .. end - 1 of y. */
typedef void (*narrow_block_fn)(const narrow_job_t *j, int64_t r0, int rr, int64_t c, int64_t end);

struct narrow_job {
	const bi_narrow_t *w;
	const float *x;
	float *y;
	int64_t rg, bw, nblocks; /* rows a chunk, neurons a chunk, chunks of neurons */
	narrow_block_fn block;
};

static float narrow_weight(const bi_narrow_t *w, int64_t at)
{
	if (w->type == BI_NARROW_I8)
		return (float)(int8_t)w->data[at];
	return nnn_f16_to_f32((uint16_t)nnn_le_bits(w->data + 2 * at, 2));
}

/* The portable path, and the columns a vector does not fill: 64 sums at a
 * time, input after input. */
static void narrow_plain(const narrow_job_t *j, int64_t r0, int rr, int64_t c, int64_t end)
{
	const bi_narrow_t *w = j->w;
	for (int64_t r = r0; r < r0 + rr; r++)
		for (int64_t c0 = c; c0 < end; c0 += 64) {
			float acc[64] = { 0 };
			const int64_t m = end - c0 < 64 ? end - c0 : 64;
			const float *x = j->x + r * w->k;
			for (int64_t i = 0; i < w->k; i++)
				for (int64_t q = 0; q < m; q++)
					acc[q] += x[i] * narrow_weight(w, i * w->n + c0 + q);
			for (int64_t q = 0; q < m; q++) {
				float s = w->scale.n ? nnn_f32s_get(w->scale, c0 + q) : 1.0f;
				j->y[r * w->n + c0 + q] = acc[q] * s + nnn_f32s_get(w->bias, c0 + q);
			}
		}
}

#if BI_X86
#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")
#define NT_SFX avx2
#define NT_VEC __m256
#define NT_V 8
#define NT_ZERO() _mm256_setzero_ps()
#define NT_BCAST(f) _mm256_set1_ps(f)
#define NT_FMA(a, b, c) _mm256_fmadd_ps(a, b, c)
#define NT_ADD(a, b) _mm256_add_ps(a, b)
#define NT_STORE(p, v) _mm256_storeu_ps(p, v)
#define NT_LOADF(p) _mm256_loadu_ps((const float *)(const void *)(p))
#define NT_I8(p) _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)(p))))
#define NT_F16(p) _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)(p)))
/* 16 ymm registers: 3 x 4 sums, a weight and a broadcast (one row: 8 sums) */
#define NT_RMAX 3
#include "narrow_tmpl.h"
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx512f,avx2,fma,f16c")
#define NT_SFX avx512
#define NT_VEC __m512
#define NT_V 16
#define NT_ZERO() _mm512_setzero_ps()
#define NT_BCAST(f) _mm512_set1_ps(f)
#define NT_FMA(a, b, c) _mm512_fmadd_ps(a, b, c)
#define NT_ADD(a, b) _mm512_add_ps(a, b)
#define NT_STORE(p, v) _mm512_storeu_ps(p, v)
#define NT_LOADF(p) _mm512_loadu_ps((const void *)(p))
#define NT_I8(p) _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)(const void *)(p))))
#define NT_F16(p) _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(const void *)(p)))
/* 32 zmm registers: 4 x 4 sums */
#define NT_RMAX 4
#include "narrow_tmpl.h"
#pragma GCC pop_options
#endif /* BI_X86 */

static void narrow_chunk(void *ctx, int64_t ch, int slot)
{
	const narrow_job_t *j = ctx;
	const int64_t rows = j->w->rows, n = j->w->n;
	const int64_t r0 = ch / j->nblocks * j->rg, c = ch % j->nblocks * j->bw;
	(void)slot;
	j->block(j, r0, (int)(rows - r0 < j->rg ? rows - r0 : j->rg), c, n - c < j->bw ? n : c + j->bw);
}

void bi_dense_narrow(const nnn_kernel_args_t *a, const bi_narrow_t *w)
{
	narrow_job_t j = { .w = w, .x = a->x, .y = a->y, .rg = 4, .bw = 64, .block = narrow_plain };
	int64_t v = 0; /* lanes of a vector; 0: the plain path */
	double flop = 2.0 * (double)w->rows * (double)w->k * (double)w->n;
	int threads = flop < 2 * BI_PAR_FLOP ? 1 : a->threads;
	if (w->rows < 1 || w->n < 1 || (w->pack && bi_dense_narrow_vnni(a, w, threads)))
		return;
#if BI_X86
	switch (bi_isa()) {
	case BI_ISA_AVX512:
		v = 16, j.rg = 4, j.block = narrow_block_avx512;
		break;
	case BI_ISA_AVX2:
		v = 8, j.rg = 3, j.block = narrow_block_avx2;
		break;
	case BI_ISA_GENERIC:
		break;
	}
#endif
	if (v) { /* one row: 8 vectors of sums a block, else 4 */
		j.rg = w->rows == 1 ? 1 : j.rg;
		j.bw = v * (w->rows == 1 ? 8 : 4);
	}
	const int64_t groups = (w->rows + j.rg - 1) / j.rg;
	/* not capped by host->cpus(), a sysconf that costs a batch-1 call
	 * microseconds: the pool has the threads it has */
	threads = bi_threads(threads, 0, INT64_MAX);
	/* narrower blocks until every thread has one (no narrower than a vector) */
	while (groups * ((w->n + j.bw - 1) / j.bw) < threads && j.bw > (v ? v : 16))
		j.bw /= 2;
	j.nblocks = (w->n + j.bw - 1) / j.bw;
	bi_run(a, NULL, threads, groups * j.nblocks, narrow_chunk, &j);
}
