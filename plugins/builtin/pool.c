/* pool.c: how a forward call's chunks are shared among threads. On a host
 * of ABI 1.1 or later a plan offers its own threads (the same ones from
 * layer to layer, so they are awake when the next layer starts); on an
 * older host, or one that calls forward directly (tests, benchmarks), the
 * layer's state keeps a pool of its own, made by the first forward that
 * asks for threads and joined by release.
 *
 * That pool is libnnn's own code, compiled in here: a plugin never links
 * libnnn, and with -fvisibility=hidden this copy stays private. */
#include "../../runtime/src/pool.c"

#include "builtin.h"

/* Whether the host offered its threads to this call. */
static bool host_pool(const nnn_kernel_args_t *a)
{
	return a->size >= offsetof(nnn_kernel_args_t, parallel_for) + sizeof a->parallel_for && a->pool &&
	       a->parallel_for;
}

void bi_run(const nnn_kernel_args_t *a, bi_state_t *st, int threads, int64_t n, nnn_task_fn f, void *ctx)
{
	threads = bi_threads(threads, 0, n);
	if (threads > 1 && host_pool(a)) {
		a->parallel_for(a->pool, threads, n, f, ctx);
		return;
	}
	if (threads > 1 && nnn_pool_workers(st->pool) < threads - 1) { /* none yet, or too few: a new one */
		nnn_pool_free(st->pool);
		st->pool = nnn_pool_new(threads - 1); /* NULL: no threads to be had, all on this one */
	}
	nnn_pool_run(threads > 1 ? st->pool : NULL, threads, n, f, ctx);
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
