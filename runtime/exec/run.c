/* run.c: plans and runs a model with the kernels of a context.
 *
 * A plan of more than one thread keeps a pool of workers for its whole
 * life and offers it to every kernel (nnn_kernel_args_t.parallel_for):
 * the same threads serve one layer after another, awake, where a pool per
 * layer would have to wake its own threads for every layer. */
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include <nnn/run.h>
#include <nnn/validate.h>

#include "mem.h"
#include "pool.h"
#include "shape_io.h"
#include "try.h"

typedef struct step {
	const nnn_layer_t *layer;
	const nnn_layer_type_t *type;
	const void *body;
	void *state;
	const nnn_activation_type_t *act;
	const void *act_params;
	bool padded;                   /* pad holds the engine's padding (a window layer) */
	int64_t pad[2 * NNN_MAX_RANK]; /* nnn_kernel_args_t.pad */
} step_t;

struct nnn_plan {
	const nnn_model_t *m;
	int32_t n;
	step_t *steps;
	nnn_shape_t *shapes; /* n + 1: the input, then each layer's output */
	float *buf[2];       /* ping-pong between layers */
	int threads;
	uint32_t compat;     /* nnn_run_opts_t.compat, for every kernel */
	nnn_pool_t *pool;    /* threads - 1 workers (fewer CPUs: fewer), or NULL */
	pthread_mutex_t lock; /* one run at a time: the buffers and the pool are the plan's */
	bool locked;          /* lock was made */
};

int64_t nnn_shape_numel(const nnn_shape_t *s)
{
	int64_t n = s->rank ? 1 : 0;
	for (int32_t i = 0; i < s->rank; i++) {
		if (s->dims[i] < 0 || (s->dims[i] && n > INT64_MAX / s->dims[i]))
			return -1; /* not a shape, or over 2^63 - 1 elements */
		n *= s->dims[i];
	}
	return n;
}

const nnn_shape_t *nnn_plan_shape(const nnn_plan_t *p, int32_t i)
{
	return i >= -1 && i < p->n ? &p->shapes[i + 1] : NULL;
}

void nnn_plan_free(nnn_plan_t *p)
{
	if (!p)
		return;
	for (int32_t i = 0; p->steps && i < p->n; i++) /* NULL: its allocation failed */
		if (p->steps[i].state && p->steps[i].type->release)
			p->steps[i].type->release(p->steps[i].state);
	free(p->steps);
	free(p->shapes);
	free(p->buf[0]);
	free(p->buf[1]);
	nnn_pool_free(p->pool);
	if (p->locked)
		pthread_mutex_destroy(&p->lock);
	free(p);
}

static nnn_status_t layer_fail(nnn_diags_t *d, nnn_status_t code, const nnn_layer_t *L, int32_t i,
                               const char *fmt, ...) NNN_PRINTF(5, 6);

static nnn_status_t layer_fail(nnn_diags_t *d, nnn_status_t code, const nnn_layer_t *L, int32_t i,
                               const char *fmt, ...)
{
	char path[32], msg[NNN_MSG_MAX];
	va_list ap;
	snprintf(path, sizeof path, "layers[%d]", (int)i);
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	const char *title = nnn_layer_title(L);
	return nnn_diags_add(d, code, L->at[NNN_AT_LAYER_ID], path, "%s: %s", title ? title : "?", msg);
}

/* Finds the kernels of layer i. */
static nnn_status_t bind(const nnn_ctx_t *ctx, const nnn_layer_t *L, int32_t i, step_t *s, nnn_diags_t *d)
{
	char loaded[256];
	s->layer = L;
	s->type = L->body_ext.type ? L->body_ext.type : nnn_ctx_layer(ctx, L->id, NULL);
	s->body = L->body_ext.type ? (const void *)L->body_ext.body : (const void *)&L->body;
	s->act = L->activation.params_ext.type ? L->activation.params_ext.type
	                                       : nnn_ctx_activation(ctx, L->activation.id, NULL);
	s->act_params = L->activation.params_ext.type ? (const void *)L->activation.params_ext.body
	                                              : (const void *)&L->activation.params;
	s->padded = nnn_layer_pads(L, s->pad);
	if (!s->type)
		return layer_fail(d, NNN_E_PLUGIN, L, i,
		                  "no loaded plugin provides a kernel for layer ID %d (plugins loaded: %s); load one with "
		                  "--plugin FILE or NNN_PLUGIN_PATH",
		                  (int)L->id, nnn_ctx_plugins_text(ctx, loaded, sizeof loaded));
	if (!s->act)
		return layer_fail(d, NNN_E_PLUGIN, L, i,
		                  "no loaded plugin provides a kernel for activation ID %d (plugins loaded: %s); load one "
		                  "with --plugin FILE or NNN_PLUGIN_PATH",
		                  (int)L->activation.id, nnn_ctx_plugins_text(ctx, loaded, sizeof loaded));
	return NNN_OK;
}

/* A plan with its arrays, for m's layers, and nothing bound yet. */
static nnn_status_t plan_alloc(const nnn_model_t *m, const nnn_run_opts_t *opts, nnn_plan_t **out, nnn_diags_t *d)
{
	nnn_plan_t *p = calloc(1, sizeof *p);
	*out = NULL;
	if (!p)
		return nnn_diags_add(d, NNN_E_NOMEM, NNN_NO_OFFSET, "", "cannot allocate a plan");
	p->m = m;
	p->n = m->layer_count;
	p->threads = opts && opts->threads > 0 ? opts->threads : 1;
	/* a caller built before `compat` gives a smaller size: the spec */
	if (opts && opts->size >= offsetof(nnn_run_opts_t, compat) + sizeof opts->compat)
		p->compat = opts->compat;
	p->steps = calloc((size_t)p->n + 1, sizeof *p->steps);
	p->shapes = calloc((size_t)p->n + 1, sizeof *p->shapes);
	p->locked = pthread_mutex_init(&p->lock, NULL) == 0;
	if (!p->steps || !p->shapes || !p->locked) {
		nnn_plan_free(p);
		return nnn_diags_add(d, NNN_E_NOMEM, NNN_NO_OFFSET, "", "cannot allocate a plan of %d layers", (int)m->layer_count);
	}
	*out = p;
	return NNN_OK;
}

/* Layer i's output is known and within the limit; *n its floats. */
static nnn_status_t check_output(const nnn_plan_t *p, int32_t i, uint64_t limit, int64_t *n, nnn_diags_t *d)
{
	const nnn_layer_t *L = &p->m->layers[i];
	if (p->shapes[i + 1].rank < 1)
		return layer_fail(d, NNN_E_INPUT_SHAPE, L, i, "its output shape is unknown: the schema gives this layer "
		                  "type no io and no plugin's infer gives one");
	*n = nnn_shape_numel(&p->shapes[i + 1]);
	if (*n < 0 || (uint64_t)*n > limit / sizeof(float)) {
		char sh[256];
		/* in floats: a byte count could overflow */
		return layer_fail(d, NNN_E_LIMIT, L, i, "its output %s holds %s%" PRId64 " floats of 4 bytes, over the limit "
		                  "of %" PRIu64 " bytes", nnn_shape_format(&p->shapes[i + 1], sh, sizeof sh),
		                  *n < 0 ? "more than " : "", *n < 0 ? INT64_MAX : *n, limit);
	}
	return NNN_OK;
}

/* What the kernel will allocate counts too: a small file can ask for huge
 * scratch (a wide kernel padded on a tiny input). */
static nnn_status_t check_work(const nnn_plan_t *p, int32_t i, uint64_t limit, nnn_diags_t *d)
{
	const step_t *s = &p->steps[i];
	uint64_t work = s->type->work_bytes ? s->type->work_bytes(s->layer, s->body, &p->shapes[i], &p->shapes[i + 1],
	                                                         p->threads)
	                                    : 0;
	if (work <= limit)
		return NNN_OK;
	return layer_fail(d, NNN_E_LIMIT, s->layer, i, "its kernel would allocate %s%" PRIu64 " bytes (packed weights "
	                  "and scratch, on %d thread%s) for this input, over the limit of %" PRIu64 " bytes",
	                  work == UINT64_MAX ? "more than " : "", work, p->threads, p->threads == 1 ? "" : "s", limit);
}

/* Binds layer i's kernels, checks what it will take and prepares it;
 * *biggest grows to the largest output between layers, in floats. */
static nnn_status_t plan_layer(const nnn_ctx_t *ctx, nnn_plan_t *p, int32_t i, uint64_t limit, int64_t *biggest,
                               nnn_diags_t *d)
{
	const nnn_layer_t *L = &p->m->layers[i];
	step_t *s = &p->steps[i];
	char msg[NNN_MSG_MAX] = "";
	int64_t n = 0;
	NNN_TRY(bind(ctx, L, i, s, d));
	NNN_TRY(check_output(p, i, limit, &n, d));
	if (n > *biggest && i + 1 < p->n)
		*biggest = n;
	NNN_TRY(check_work(p, i, limit, d));
	/* out of memory stays that (a kernel's large buffers come from the
	 * host, ABI 1.6); any other failure is the kernel's */
	nnn_status_t ps = s->type->prepare ? s->type->prepare(L, s->body, &p->shapes[i], &s->state, msg, sizeof msg)
	                                   : NNN_OK;
	if (ps != NNN_OK)
		return layer_fail(d, ps == NNN_E_NOMEM ? NNN_E_NOMEM : NNN_E_KERNEL, L, i, "prepare failed: %s", msg);
	return NNN_OK;
}

/* The pool and the two buffers layers pass their outputs through. */
static nnn_status_t plan_buffers(nnn_plan_t *p, int64_t biggest, nnn_diags_t *d)
{
	int cpus = nnn_pool_cpus();
	/* More threads than CPUs would only take turns. Without threads (none
	 * can be started), kernels run on the caller or on their own. */
	if (p->threads > 1 && cpus > 1)
		p->pool = nnn_pool_new((p->threads < cpus ? p->threads : cpus) - 1);
	if (biggest > 0) {
		p->buf[0] = nnn_mem_big((size_t)biggest * sizeof(float));
		p->buf[1] = nnn_mem_big((size_t)biggest * sizeof(float));
		if (!p->buf[0] || !p->buf[1])
			return nnn_diags_add(d, NNN_E_NOMEM, NNN_NO_OFFSET, "", "cannot allocate 2 x %" PRId64 " floats", biggest);
	}
	return NNN_OK;
}

nnn_status_t nnn_plan_new(const nnn_ctx_t *ctx, const nnn_model_t *m, const nnn_shape_t *input,
                          const nnn_run_opts_t *opts, nnn_plan_t **out, nnn_diags_t *d)
{
	uint64_t limit = opts && opts->max_tensor_bytes ? opts->max_tensor_bytes : (uint64_t)4 << 30;
	int64_t biggest = 0;
	nnn_plan_t *p;
	nnn_status_t st;

	*out = NULL;
	NNN_TRY(plan_alloc(m, opts, &p, d));
	/* Every shape comes from the one shape engine, through the validator
	 * (a plugin layer's from its infer): kernels only run them. */
	p->shapes[0] = *input;
	st = nnn_model_validate(m, input, p->shapes + 1, d);
	for (int32_t i = 0; i < p->n && st == NNN_OK; i++)
		st = plan_layer(ctx, p, i, limit, &biggest, d);
	if (st == NNN_OK)
		st = plan_buffers(p, biggest, d);
	if (st != NNN_OK) {
		nnn_plan_free(p);
		return st;
	}
	*out = p;
	return NNN_OK;
}

/* Every layer, then its activation (unless its kernel applied it). */
static nnn_status_t run_steps(nnn_plan_t *p, const float *x, float *y, nnn_diags_t *d)
{
	for (int32_t i = 0; i < p->n; i++) {
		const step_t *s = &p->steps[i];
		char msg[NNN_MSG_MAX] = "";
		bool act_done = false;
		nnn_kernel_args_t a = {
			.size = sizeof a,
			.layer = s->layer,
			.body = s->body,
			.state = s->state,
			.in = &p->shapes[i],
			.out = &p->shapes[i + 1],
			.x = i == 0 ? x : p->buf[(i - 1) % 2],
			.y = i == p->n - 1 ? y : p->buf[i % 2],
			.threads = p->threads,
			.pool = p->pool,
			.parallel_for = p->pool ? nnn_pool_run : NULL,
			.act = s->act,
			.act_params = s->act_params,
			.act_done = &act_done,
			.compat = p->compat,
			.pad = s->padded ? s->pad : NULL,
		};
		if (s->type->forward(&a, msg, sizeof msg) != NNN_OK)
			return layer_fail(d, NNN_E_KERNEL, s->layer, i, "forward failed: %s", msg[0] ? msg : "no reason given");
		if (!act_done && s->act->forward(&s->layer->activation, s->act_params, a.out, a.y, p->threads) != NNN_OK)
			return layer_fail(d, NNN_E_KERNEL, s->layer, i, "activation %s failed", s->act->name);
	}
	return NNN_OK;
}

nnn_status_t nnn_plan_run(nnn_plan_t *p, const float *x, float *y, nnn_diags_t *d)
{
	nnn_status_t st;
	if (p->n == 0) {
		int64_t n = nnn_shape_numel(&p->shapes[0]);
		memcpy(y, x, (size_t)n * sizeof *y);
		return NNN_OK;
	}
	pthread_mutex_lock(&p->lock);
	st = run_steps(p, x, y, d);
	pthread_mutex_unlock(&p->lock);
	return st;
}

nnn_status_t nnn_model_run(const nnn_ctx_t *ctx, const nnn_model_t *m, const nnn_shape_t *input, const float *x,
                           float *y, nnn_shape_t *out_shape, const nnn_run_opts_t *opts, nnn_diags_t *diags)
{
	nnn_plan_t *p;
	nnn_status_t st = nnn_plan_new(ctx, m, input, opts, &p, diags);
	if (st != NNN_OK)
		return st;
	if (out_shape)
		*out_shape = *nnn_plan_shape(p, p->n - 1);
	st = nnn_plan_run(p, x, y, diags);
	nnn_plan_free(p);
	return st;
}
