/* pool.h (internal): worker threads that share out the chunks of one call
 * at a time. libnnn gives one to every plan of more than one thread, and
 * kernels reach it through nnn_kernel_args_t.parallel_for (ABI 1.1), and
 * through the host table's pool_* (ABI 1.6) a pool of their own for a
 * forward call that offers none.
 */
#ifndef NNN_POOL_H
#define NNN_POOL_H

#include <nnn/plugin.h>

/* NNN_POOL_MAX_THREADS (nnn/plugin.h): the most threads one call uses. */

/* A pool of `workers` threads (1 .. NNN_POOL_MAX_THREADS - 1, else capped),
 * or NULL when any of them cannot be started. Owned: nnn_pool_free joins
 * them (NULL is harmless). */
nnn_pool_t *nnn_pool_new(int workers);
void nnn_pool_free(nnn_pool_t *p);
int nnn_pool_workers(const nnn_pool_t *p);

/* nnn_kernel_args_t.parallel_for: fn(ctx, c, slot) once for every chunk
 * c < n, on the caller (slot 0) and up to threads - 1 workers; returns when
 * all are done. Every chunk runs on the caller when p is NULL, threads or
 * n is 1, or n is more than a call can count (2^24 - 1). One call at a
 * time per pool, and fn must not call it again. */
void nnn_pool_run(nnn_pool_t *p, int threads, int64_t n, nnn_task_fn fn, void *ctx);

/* Online CPUs, 1 to 1024. */
int nnn_pool_cpus(void);

#endif
