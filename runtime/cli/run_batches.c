/* run_batches.c: a model run over many samples, a batch at a time, for run,
 * eval and testee. Plans are made once per batch size, not per batch: planning
 * validates the whole model and asks every kernel to prepare. */
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static nnn_status_t plan_for(cli_batches_t *b, int64_t n, nnn_diags_t *d)
{
	nnn_plan_free(b->plan);
	b->plan = NULL;
	b->in.dims[0] = n;
	return nnn_plan_new(b->ctx, b->m, &b->in, &b->opts, &b->plan, d);
}

nnn_status_t cli_batches_start(cli_batches_t *b, const nnn_ctx_t *ctx, const nnn_model_t *m,
                               const nnn_shape_t *shape, const float *x, int64_t batch, const nnn_run_opts_t *opts,
                               nnn_diags_t *d)
{
	memset(b, 0, sizeof *b);
	b->ctx = ctx;
	b->m = m;
	b->opts = *opts;
	b->x = x;
	b->in = *shape;
	b->total = shape->dims[0];
	b->per = nnn_shape_numel(shape) / b->total;
	nnn_status_t st = plan_for(b, batch < b->total ? batch : b->total, d);
	if (st != NNN_OK)
		return st;
	b->out = *nnn_plan_shape(b->plan, m->layer_count - 1);
	b->out_per = nnn_shape_numel(&b->out) / b->in.dims[0];
	return NNN_OK;
}

int cli_batches_more(const cli_batches_t *b)
{
	return b->from + b->n < b->total;
}

nnn_status_t cli_batches_next(cli_batches_t *b, float *dst, nnn_diags_t *d)
{
	int64_t full = b->out.dims[0];
	b->from += b->n;
	b->n = b->total - b->from < full ? b->total - b->from : full;
	if (!dst && !b->y) {
		size_t bytes = (size_t)(full * b->out_per) * sizeof *b->y;
		b->y = malloc(bytes ? bytes : 1);
		if (!b->y)
			return nnn_diags_add(d, NNN_E_NOMEM, NNN_NO_OFFSET, "", "no memory for a batch's outputs");
	}
	/* The short batch is the last one: its plan replaces the full one. */
	if (b->n != b->in.dims[0]) {
		nnn_status_t st = plan_for(b, b->n, d);
		if (st != NNN_OK)
			return st;
	}
	return nnn_plan_run(b->plan, b->x + b->from * b->per, dst ? dst + b->from * b->out_per : b->y, d);
}

void cli_batches_end(cli_batches_t *b)
{
	nnn_plan_free(b->plan);
	free(b->y);
	b->plan = NULL;
	b->y = NULL;
}

nnn_status_t cli_run_all(const nnn_ctx_t *ctx, const nnn_model_t *m, const nnn_shape_t *shape, const float *x,
                         const cli_run_args_t *r, int progress, float **y, nnn_shape_t *out_shape, nnn_diags_t *d)
{
	nnn_run_opts_t o = cli_run_opts(r);
	cli_batches_t b;
	cli_progress_t pr;
	int64_t total = shape->dims[0];
	nnn_status_t st = cli_batches_start(&b, ctx, m, shape, x, r->batch, &o, d);
	if (st == NNN_OK) {
		*out_shape = b.out;
		out_shape->dims[0] = total;
		if (b.out_per && total > (int64_t)(SIZE_MAX / sizeof **y) / b.out_per)
			st = nnn_diags_add(d, NNN_E_NOMEM, NNN_NO_OFFSET, "",
			                   "%" PRId64 " outputs of %" PRId64 " floats do not fit in memory", total, b.out_per);
		else if (!(*y = malloc((size_t)(total * b.out_per) * sizeof **y + 1)))
			st = nnn_diags_add(d, NNN_E_NOMEM, NNN_NO_OFFSET, "", "no memory for the outputs");
	}
	cli_progress_start(&pr, st == NNN_OK && progress, "run", "samples", (uint64_t)total);
	while (st == NNN_OK && cli_batches_more(&b)) {
		st = cli_batches_next(&b, *y, d);
		cli_progress_update(&pr, (uint64_t)(b.from + b.n));
	}
	cli_progress_end(&pr);
	cli_batches_end(&b);
	return st;
}
