/* pool.c: how a forward call's chunks are shared among threads. A plan
 * offers its own threads (nnn_kernel_args_t.parallel_for, ABI 1.1: the
 * same ones from layer to layer, so they are awake when the next layer
 * starts); a caller of forward that offers none (tests, benchmarks) gets
 * the threads of the layer's state, a pool the host makes for it (ABI 1.6
 * host->pool_new) on the first forward that asks for threads, joined by
 * release. */
#include "builtin.h"

/* Whether the host offered its threads to this call. */
static bool host_pool(const nnn_kernel_args_t *a)
{
	return a->size >= offsetof(nnn_kernel_args_t, parallel_for) + sizeof a->parallel_for && a->pool &&
	       a->parallel_for;
}

void bi_run(const nnn_kernel_args_t *a, bi_state_t *st, int threads, int64_t n, nnn_task_fn f, void *ctx)
{
	const nnn_host_t *h = bi_host();
	threads = bi_threads(threads, 0, n);
	if (threads > 1 && host_pool(a)) {
		a->parallel_for(a->pool, threads, n, f, ctx);
		return;
	}
	if (!st) /* no state to keep threads in (a kernel without prepare): all on this one */
		threads = 1;
	if (threads > 1 && h->pool_workers(st->pool) < threads - 1) { /* none yet, or too few: a new one */
		h->pool_free(st->pool);
		st->pool = h->pool_new(threads - 1); /* NULL: no threads to be had, all on this one */
	}
	h->pool_run(threads > 1 ? st->pool : NULL, threads, n, f, ctx);
}

int bi_threads(int threads, int cpus, int64_t chunks)
{
	int n = threads < 1 ? 1 : threads;
	n = n > cpus && cpus > 0 ? cpus : n;
	n = n > NNN_POOL_MAX_THREADS ? NNN_POOL_MAX_THREADS : n;
	return chunks < n ? (chunks < 1 ? 1 : (int)chunks) : n;
}

int64_t bi_split(double flop, int64_t units, int threads, int cpus, int *used)
{
	int t = flop < 2 * BI_PAR_FLOP ? 1 : bi_threads(threads, cpus, units);
	int64_t per = units > 0 ? units : 1;
	if (t > 1) {
		double unit = flop / (double)units;
		per = (units + BI_CHUNKS * t - 1) / (BI_CHUNKS * t);
		if ((double)per * unit < BI_PAR_FLOP / 2)
			per = (int64_t)(BI_PAR_FLOP / 2 / unit) + 1;
		per = per < units ? per : units;
	}
	*used = bi_threads(t, 0, (units + per - 1) / per);
	return per;
}
