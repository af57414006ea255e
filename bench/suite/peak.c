/* peak.c: the core's fp32 FMA peak, measured: what "% of peak" is of.
 *
 * A loop of independent FMAs: 16 accumulators (12 with AVX2), each
 * x = x * a + b, so that every FMA of an iteration is free of the others
 * and the chains cover the latency of the FMA units times their number
 * (4 cycles x 2 pipes on the machines this was written on: 8; 5 x 2 on
 * some AVX2 cores: 10). AVX-512 when the CPU has it, else AVX2 with FMA;
 * each built for its own instruction set with __attribute__((target)), so
 * the benchmark builds for, and runs on, any x86-64 (and without a peak
 * elsewhere). With T threads, T such loops run at once, one per thread.
 *
 * The AVX2 loop is also measured on its own (BN_FMA_AVX2), on a CPU that
 * has AVX-512 too: the plugin's AVX2 path (NNN_BUILTIN_ISA=avx2) is set
 * against it, not against the AVX-512 peak, for what a CPU without AVX-512
 * can do is that loop's rate (half the AVX-512 one where 512-bit FMAs run
 * at full width, the same where they are split in two 256-bit halves).
 * The chain count is set by latency x pipes, not by the vector width, but
 * AVX2 has 16 vector registers, not AVX-512's 32: 16 accumulators and a
 * and b are 18, and the compiler kept 3 accumulators on the stack, a
 * store and a load in each of their chains, every iteration. That loop
 * measured 57 % of what the 12-chain one does here (65 against 115
 * GFLOP/s, the same minute): below the plugin's own AVX2 kernels, which
 * then showed 115-121 % "of the peak". 12 accumulators and a and b fit.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

/* Iterations per call: 16 FMAs each (12 with AVX2); 33.6 MFLOP with
 * AVX-512, about 0.1 ms at 300 GFLOP/s, long beside starting a thread. */
#define FMA_ITERS 65536L
#define CHAINS 16
#define CHAINS_AVX2 12

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

/* The accumulators written out: the compiler keeps them in registers,
 * with no loop over them to unroll or vectorise. */
#define FMA12(fma)                                                                                                     \
	do {                                                                                                           \
		x0 = fma(x0, a, b);                                                                                    \
		x1 = fma(x1, a, b);                                                                                    \
		x2 = fma(x2, a, b);                                                                                    \
		x3 = fma(x3, a, b);                                                                                    \
		x4 = fma(x4, a, b);                                                                                    \
		x5 = fma(x5, a, b);                                                                                    \
		x6 = fma(x6, a, b);                                                                                    \
		x7 = fma(x7, a, b);                                                                                    \
		x8 = fma(x8, a, b);                                                                                    \
		x9 = fma(x9, a, b);                                                                                    \
		x10 = fma(x10, a, b);                                                                                  \
		x11 = fma(x11, a, b);                                                                                  \
	} while (0)
#define FMA16(fma)                                                                                                     \
	do {                                                                                                           \
		FMA12(fma);                                                                                            \
		x12 = fma(x12, a, b);                                                                                  \
		x13 = fma(x13, a, b);                                                                                  \
		x14 = fma(x14, a, b);                                                                                  \
		x15 = fma(x15, a, b);                                                                                  \
	} while (0)

/* x -> x * 0.999999 + 0.001 stays near [0, 1000]: no overflow, no
 * subnormals, whatever the count. The sum is returned so that nothing is
 * optimised away. */
__attribute__((target("avx512f"))) static float fma_avx512(long iters)
{
	const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(0.001f);
	__m512 x0 = _mm512_set1_ps(0.0f), x1 = _mm512_set1_ps(1.0f), x2 = _mm512_set1_ps(2.0f),
	       x3 = _mm512_set1_ps(3.0f), x4 = _mm512_set1_ps(4.0f), x5 = _mm512_set1_ps(5.0f),
	       x6 = _mm512_set1_ps(6.0f), x7 = _mm512_set1_ps(7.0f), x8 = _mm512_set1_ps(8.0f),
	       x9 = _mm512_set1_ps(9.0f), x10 = _mm512_set1_ps(10.0f), x11 = _mm512_set1_ps(11.0f),
	       x12 = _mm512_set1_ps(12.0f), x13 = _mm512_set1_ps(13.0f), x14 = _mm512_set1_ps(14.0f),
	       x15 = _mm512_set1_ps(15.0f);
	for (long i = 0; i < iters; i++)
		FMA16(_mm512_fmadd_ps);
	__m512 s = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(x0, x1), _mm512_add_ps(x2, x3)),
	                         _mm512_add_ps(_mm512_add_ps(x4, x5), _mm512_add_ps(x6, x7)));
	s = _mm512_add_ps(s, _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(x8, x9), _mm512_add_ps(x10, x11)),
	                                   _mm512_add_ps(_mm512_add_ps(x12, x13), _mm512_add_ps(x14, x15))));
	return _mm512_reduce_add_ps(s);
}

__attribute__((target("avx2,fma"))) static float fma_avx2(long iters)
{
	const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(0.001f);
	__m256 x0 = _mm256_set1_ps(0.0f), x1 = _mm256_set1_ps(1.0f), x2 = _mm256_set1_ps(2.0f),
	       x3 = _mm256_set1_ps(3.0f), x4 = _mm256_set1_ps(4.0f), x5 = _mm256_set1_ps(5.0f),
	       x6 = _mm256_set1_ps(6.0f), x7 = _mm256_set1_ps(7.0f), x8 = _mm256_set1_ps(8.0f),
	       x9 = _mm256_set1_ps(9.0f), x10 = _mm256_set1_ps(10.0f), x11 = _mm256_set1_ps(11.0f);
	for (long i = 0; i < iters; i++)
		FMA12(_mm256_fmadd_ps);
	__m256 s = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(x0, x1), _mm256_add_ps(x2, x3)),
	                         _mm256_add_ps(_mm256_add_ps(x4, x5), _mm256_add_ps(x6, x7)));
	s = _mm256_add_ps(s, _mm256_add_ps(_mm256_add_ps(x8, x9), _mm256_add_ps(x10, x11)));
	float v[8];
	_mm256_storeu_ps(v, s);
	return v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7];
}

typedef float (*fma_fn)(long iters);

/* The loop `which` asks for on this CPU, its name and FMAs per iteration
 * (floats x chains); NULL when the CPU has none (BN_FMA_AVX2 on a CPU
 * without AVX2 and FMA). */
static fma_fn pick(bn_fma_t which, const char **name, int *lanes, int *chains)
{
	__builtin_cpu_init();
	if (which == BN_FMA_BEST && __builtin_cpu_supports("avx512f")) {
		*name = "AVX-512";
		*lanes = 16;
		*chains = CHAINS;
		return fma_avx512;
	}
	if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
		*name = "AVX2";
		*lanes = 8;
		*chains = CHAINS_AVX2;
		return fma_avx2;
	}
	return NULL;
}
#else
typedef float (*fma_fn)(long iters);
static fma_fn pick(bn_fma_t which, const char **name, int *lanes, int *chains)
{
	(void)which;
	*name = NULL;
	*lanes = 0;
	*chains = 0;
	return NULL;
}
#endif

const char *bn_fma_name(bn_fma_t which)
{
	const char *name = NULL;
	int lanes = 0, chains = 0;
	return pick(which, &name, &lanes, &chains) ? name : NULL;
}

int bn_fma_chains(bn_fma_t which)
{
	const char *name;
	int lanes = 0, chains = 0;
	return pick(which, &name, &lanes, &chains) ? chains : 0;
}

double bn_fma_flop(bn_fma_t which)
{
	const char *name;
	int lanes = 0, chains = 0;
	return pick(which, &name, &lanes, &chains) ? 2.0 * chains * lanes * (double)FMA_ITERS : 0;
}

typedef struct job {
	fma_fn fn;
	long iters;
	volatile float sink;
} job_t;

static void *run_job(void *arg)
{
	job_t *j = arg;
	j->sink = j->fn(j->iters);
	return NULL;
}

double bn_fma_run(bn_fma_t which, int threads, long calls)
{
	const char *name;
	int lanes, chains;
	fma_fn fn = pick(which, &name, &lanes, &chains);
	pthread_t tid[16];
	job_t jobs[16];
	int started = 0;
	if (!fn || threads < 1 || threads > 16 || calls < 1)
		return -1;
	for (int i = 0; i < threads; i++)
		jobs[i] = (job_t){ .fn = fn, .iters = calls * FMA_ITERS };
	double t0 = bn_now();
	/* Threads 1..T-1 start first; this thread runs the first loop itself. */
	for (int i = 1; i < threads; i++, started++)
		if (pthread_create(&tid[i], NULL, run_job, &jobs[i]) != 0)
			break;
	run_job(&jobs[0]);
	for (int i = 1; i <= started; i++)
		pthread_join(tid[i], NULL);
	double t = bn_now() - t0;
	return started == threads - 1 ? t : -1;
}
