/* pool.c: worker threads that share the chunks of one call at a time
 * (pool.h). There is no global state: a pool belongs to whoever made it (a
 * plan; or, in the builtin plugin's copy, a layer's state).
 *
 * A call cuts the work into chunks; the calling thread and the workers take
 * the next chunk from a shared counter until none is left. So a worker the
 * system schedules late only takes fewer chunks (the caller never waits
 * for a thread that has not started), and which thread computes a chunk
 * changes nothing in its result. Between calls a worker waits a short
 * while without sleeping (spin_until), then sleeps on a condition
 * variable: the layers of a plan follow each other closely, and a wake-up
 * through the kernel can cost as much as a small layer. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "pool.h"

/* How long a waiting thread only pauses (it sees new work at once), then
 * how long it waits in all, pausing then yielding, before it sleeps. */
#define PAUSE_NS 30000.0
#define SPIN_NS 100000.0

/* A call's ticket: its number, its thread count and its chunk count, in
 * one atomic word. Slot s owns chunks [s * n / threads, (s + 1) * n /
 * threads) of a call: a thread takes its own in order, then those the
 * others have not taken yet. So from call to call (layer to layer) a thread
 * mostly computes the same part of the batch, whose data its cache holds
 * (the layers' outputs crossing between cores cost a 2-thread plan a fifth
 * of its speed), while a thread that starts late or runs slow only takes
 * fewer chunks (the caller never waits for a thread that has not started).
 * Each slot's next chunk is one atomic word with the call's number in its
 * high half: a thread takes chunk c by moving it from c to c + 1, so a
 * worker late for a call can take nothing of the next one. It reads f and
 * ctx only once it holds a chunk, and the caller waits for every chunk
 * taken before it returns (or changes them). */
#define T_N_BITS 24
#define T_THREADS_BITS 8 /* NNN_POOL_MAX_THREADS fits */
#define T_MASK(bits) ((1ull << (bits)) - 1)
#define T_THREADS_SHIFT T_N_BITS
#define T_CALL_SHIFT (T_THREADS_SHIFT + T_THREADS_BITS) /* the call's number: the high 32 bits */

/* A slot's next chunk (call << 32 | chunk), alone in its cache line. */
typedef struct next {
	_Alignas(64) atomic_ullong v;
} next_t;

struct nnn_pool {
	pthread_mutex_t mu;
	pthread_cond_t go, finished;
	pthread_t *tid;
	int nworkers;
	atomic_ulong gen;     /* bumped by every call, and by free */
	atomic_bool quit;
	int sleepers;         /* workers waiting on go (under mu) */
	bool caller_sleeps;   /* the caller waits on finished (under mu) */
	atomic_ullong ticket; /* the current call */
	next_t *next;         /* nworkers + 1: each slot's next chunk */
	atomic_llong done;    /* chunks of the current call finished */
	nnn_task_fn f;        /* the current call's work */
	void *ctx;
};

typedef struct worker_arg {
	nnn_pool_t *p;
	int slot;
} worker_arg_t;

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static inline void cpu_relax(void)
{
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
	__builtin_ia32_pause();
#endif
}

/* Waits up to SPIN_NS for done(p, arg) without sleeping: for PAUSE_NS it
 * only pauses between looks, so it sees new work within a fraction of a
 * microsecond (the layers of a plan follow each other closely); then it
 * calls sched_yield between looks, so that a thread that waits long gives
 * its CPU to any other that can run. True when done. */
static bool spin_until(bool (*done)(nnn_pool_t *, unsigned long), nnn_pool_t *p, unsigned long arg)
{
	const double t0 = now_ns();
	for (unsigned n = 1;; n++) {
		double t;
		if (done(p, arg))
			return true;
		if (n % 64) { /* the clock only now and then */
			cpu_relax();
			continue;
		}
		t = now_ns() - t0;
		if (t > SPIN_NS)
			return false;
		if (t > PAUSE_NS)
			sched_yield();
	}
}

static bool gen_moved(nnn_pool_t *p, unsigned long old)
{
	return atomic_load(&p->gen) != old;
}

static bool all_done(nnn_pool_t *p, unsigned long n)
{
	return (unsigned long)atomic_load(&p->done) >= n;
}

/* Takes the chunks slot `from` owns in the call whose ticket was t, until
 * none is left; signals a sleeping caller after the call's last chunk.
 * False once the pool has moved on to another call. */
static bool take(nnn_pool_t *p, unsigned long long t, int from, int slot)
{
	const unsigned long long call = t >> T_CALL_SHIFT, n = t & T_MASK(T_N_BITS);
	const unsigned long long threads = t >> T_THREADS_SHIFT & T_MASK(T_THREADS_BITS);
	const unsigned long long end = ((unsigned long long)from + 1) * n / threads;
	atomic_ullong *next = &p->next[from].v;
	for (;;) {
		unsigned long long c = atomic_load(next);
		if (c >> 32 != call)
			return false;
		if ((c & 0xffffffffu) >= end)
			return true;
		if (!atomic_compare_exchange_weak(next, &c, c + 1))
			continue;
		p->f(p->ctx, (int64_t)(c & 0xffffffffu), slot);
		if ((unsigned long long)atomic_fetch_add(&p->done, 1) + 1 == n) {
			pthread_mutex_lock(&p->mu);
			if (p->caller_sleeps)
				pthread_cond_signal(&p->finished);
			pthread_mutex_unlock(&p->mu);
		}
	}
}

/* Takes chunks of the call whose ticket was t until none is left: this
 * slot's own, then the next slots'. */
static void work(nnn_pool_t *p, unsigned long long t, int slot)
{
	const int threads = (int)(t >> T_THREADS_SHIFT & T_MASK(T_THREADS_BITS));
	for (int k = 0; slot < threads && k < threads; k++)
		if (!take(p, t, (slot + k) % threads, slot))
			return;
}

static void *worker(void *arg)
{
	nnn_pool_t *p = ((worker_arg_t *)arg)->p;
	int slot = ((worker_arg_t *)arg)->slot;
	unsigned long seen = 0;
	free(arg);
	for (;;) {
		if (!spin_until(gen_moved, p, seen)) {
			pthread_mutex_lock(&p->mu);
			p->sleepers++;
			while (atomic_load(&p->gen) == seen)
				pthread_cond_wait(&p->go, &p->mu);
			p->sleepers--;
			pthread_mutex_unlock(&p->mu);
		}
		seen = atomic_load(&p->gen);
		if (atomic_load(&p->quit))
			break;
		work(p, atomic_load(&p->ticket), slot);
	}
	return NULL;
}

/* Bumps gen, waking the workers that sleep. */
static void wake(nnn_pool_t *p)
{
	atomic_fetch_add(&p->gen, 1);
	pthread_mutex_lock(&p->mu);
	if (p->sleepers)
		pthread_cond_broadcast(&p->go);
	pthread_mutex_unlock(&p->mu);
}

void nnn_pool_free(nnn_pool_t *p)
{
	if (!p)
		return;
	atomic_store(&p->quit, true);
	wake(p);
	for (int i = 0; i < p->nworkers; i++)
		pthread_join(p->tid[i], NULL);
	pthread_cond_destroy(&p->go);
	pthread_cond_destroy(&p->finished);
	pthread_mutex_destroy(&p->mu);
	free(p->tid);
	free(p->next);
	free(p);
}

nnn_pool_t *nnn_pool_new(int n)
{
	nnn_pool_t *p = calloc(1, sizeof *p);
	if (!p)
		return NULL;
	n = n < 1 ? 1 : n > NNN_POOL_MAX_THREADS - 1 ? NNN_POOL_MAX_THREADS - 1 : n;
	atomic_init(&p->gen, 0);
	atomic_init(&p->quit, false);
	atomic_init(&p->ticket, 0);
	atomic_init(&p->done, 0);
	p->next = aligned_alloc(sizeof *p->next, (size_t)(n + 1) * sizeof *p->next);
	if (!p->next || !(p->tid = calloc((size_t)n, sizeof *p->tid)) || pthread_mutex_init(&p->mu, NULL) != 0) {
		free(p->next);
		free(p->tid);
		free(p);
		return NULL;
	}
	for (int i = 0; i <= n; i++)
		atomic_init(&p->next[i].v, 0);
	if (pthread_cond_init(&p->go, NULL) != 0) {
		pthread_mutex_destroy(&p->mu);
		free(p->next);
		free(p->tid);
		free(p);
		return NULL;
	}
	if (pthread_cond_init(&p->finished, NULL) != 0) {
		pthread_cond_destroy(&p->go);
		pthread_mutex_destroy(&p->mu);
		free(p->next);
		free(p->tid);
		free(p);
		return NULL;
	}
	for (int i = 0; i < n; i++) {
		worker_arg_t *a = malloc(sizeof *a);
		if (!a)
			break;
		a->p = p;
		a->slot = i + 1;
		if (pthread_create(&p->tid[i], NULL, worker, a) != 0) {
			free(a);
			break;
		}
		p->nworkers++;
	}
	if (p->nworkers < n) {
		nnn_pool_free(p);
		return NULL;
	}
	return p;
}

int nnn_pool_workers(const nnn_pool_t *p)
{
	return p ? p->nworkers : 0;
}

int nnn_pool_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : n > 1024 ? 1024 : (int)n;
}

void nnn_pool_run(nnn_pool_t *p, int threads, int64_t n, nnn_task_fn f, void *ctx)
{
	unsigned long long call, t;
	if (n <= 0)
		return;
	threads = p && threads > p->nworkers + 1 ? p->nworkers + 1 : threads;
	threads = n < threads ? (int)n : threads;
	if (!p || threads <= 1 || (unsigned long long)n > T_MASK(T_N_BITS)) {
		for (int64_t c = 0; c < n; c++)
			f(ctx, c, 0);
		return;
	}
	/* No worker reads f or ctx before it holds a chunk of this call. */
	p->f = f;
	p->ctx = ctx;
	atomic_store(&p->done, 0);
	call = ((atomic_load(&p->ticket) >> T_CALL_SHIFT) + 1) & 0xffffffffu;
	for (int s = 0; s < threads; s++)
		atomic_store(&p->next[s].v, call << 32 | (unsigned long long)s * (unsigned long long)n / (unsigned)threads);
	t = call << T_CALL_SHIFT | (unsigned long long)threads << T_THREADS_SHIFT | (unsigned long long)n;
	atomic_store(&p->ticket, t);
	wake(p);
	work(p, t, 0);
	/* every chunk is taken; wait for those still running elsewhere */
	if (!spin_until(all_done, p, (unsigned long)n)) {
		pthread_mutex_lock(&p->mu);
		p->caller_sleeps = true;
		while (atomic_load(&p->done) < n)
			pthread_cond_wait(&p->finished, &p->mu);
		p->caller_sleeps = false;
		pthread_mutex_unlock(&p->mu);
	}
}
