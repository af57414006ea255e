/* dense.c: the Dense layer, y = x @ W + b: the micro-kernels of kern.c over
 * chunks of rows and panels of neurons, blocked over the inputs; or, on the
 * portable path, one sgemm per chunk of rows. Either way the chunks are
 * shared among a->threads threads, the bias starts every sum, and the
 * layer's activation, when this plugin can fuse it, is applied to each
 * chunk as soon as it is complete. */
#include <limits.h>
#include <stdlib.h>

#include "builtin.h"

/* Checks the layer's own tensors agree (the validator normally has). */
static nnn_status_t dense_check(const nnn_layer_t *layer, char *msg, size_t msg_size)
{
	const nnn_dense_t *dn = &layer->body.dense;
	const nnn_tensor_t *w = &dn->weights;
	if (dn->neurons < 1)
		return bi_fail(msg, msg_size, NNN_E_SHAPE, "neurons is %d, expected >= 1", (int)dn->neurons);
	if (!bi_tensor_ok(w))
		return bi_fail(msg, msg_size, NNN_E_SHAPE, "weights hold %d values, which their dims do not give",
		               (int)w->data.n);
	if (w->dims.n != 2)
		return bi_fail(msg, msg_size, NNN_E_SHAPE, "weights have %d dims, expected 2: [inputs, neurons]",
		               (int)w->dims.n);
	if (w->dims.v[0] < 1 || w->dims.v[1] != dn->neurons)
		return bi_fail(msg, msg_size, NNN_E_SHAPE, "weights are [%d, %d], expected [inputs >= 1, %d]",
		               (int)w->dims.v[0], (int)w->dims.v[1], (int)dn->neurons);
	if (!bi_tensor_ok(&layer->bias) || layer->bias.data.n != dn->neurons)
		return bi_fail(msg, msg_size, NNN_E_SHAPE, "bias has %d values, expected %d (one per neuron)",
		               (int)layer->bias.data.n, (int)dn->neurons);
	return NNN_OK;
}

nnn_status_t bi_dense_expect(const nnn_layer_t *layer, const void *body, const nnn_shape_t *in, nnn_shape_t *out,
                            char *msg, size_t msg_size)
{
	const nnn_dense_t *dn;
	nnn_status_t st;
	char buf[128];
	int64_t inputs, feat = 1;
	(void)body; /* core type: its fields are layer->body.dense */
	if (!layer || !in || !out)
		return bi_fail(msg, msg_size, NNN_E_USAGE, "infer needs a layer, an input and an output shape");
	if ((st = dense_check(layer, msg, msg_size)) != NNN_OK || (st = bi_check_input(in, msg, msg_size)) != NNN_OK)
		return st;
	dn = &layer->body.dense;
	inputs = dn->weights.dims.v[0];
	if (dn->flatten) {
		for (int32_t i = 1; i < in->rank; i++) {
			if (in->dims[i] && feat > INT64_MAX / in->dims[i]) {
				feat = -1;
				break;
			}
			feat *= in->dims[i];
		}
		if (feat != inputs)
			return bi_fail(msg, msg_size, NNN_E_INPUT_SHAPE,
			               "input %s flattens to %lld features, but the weights [%lld, %d] take %lld",
			               bi_shape_str(in, buf, sizeof buf), (long long)feat, (long long)inputs,
			               (int)dn->neurons, (long long)inputs);
		out->rank = 2;
		out->dims[0] = in->dims[0];
		out->dims[1] = dn->neurons;
	} else {
		if (in->dims[in->rank - 1] != inputs)
			return bi_fail(msg, msg_size, NNN_E_INPUT_SHAPE,
			               "input %s has %lld features on its last axis, but the weights [%lld, %d] take %lld",
			               bi_shape_str(in, buf, sizeof buf), (long long)in->dims[in->rank - 1],
			               (long long)inputs, (int)dn->neurons, (long long)inputs);
		*out = *in;
		out->dims[out->rank - 1] = dn->neurons;
	}
	if (bi_numel(out) < 0)
		return bi_fail(msg, msg_size, NNN_E_INPUT_SHAPE, "output %s would have more than 2^63 elements",
		               bi_shape_str(out, buf, sizeof buf));
	return NNN_OK;
}

/* Dense weights [inputs, neurons]: neuron c of input t is element t * neurons + c. */
static bi_layout_t dense_layout(const nnn_dense_t *dn)
{
	bi_layout_t lay = { .n = dn->neurons, .k = dn->weights.dims.v[0], .sk = dn->neurons, .sn = 1 };
	return lay;
}

nnn_status_t bi_dense_prepare(const nnn_layer_t *layer, const void *body, const nnn_shape_t *in, void **state,
                              char *msg, size_t msg_size)
{
	nnn_shape_t out;
	bi_layout_t lay;
	bi_state_t *st;
	nnn_status_t s = bi_dense_expect(layer, body, in, &out, msg, msg_size);
	if (s != NNN_OK)
		return s;
	lay = dense_layout(&layer->body.dense);
	if ((s = bi_state_new(&layer->body.dense.weights, &layer->bias, &lay, &st, msg, msg_size)) != NNN_OK)
		return s;
	bi_state_shaped(st, layer, in, &out);
	*state = st;
	return NNN_OK;
}

/* Dense allocates its state only: forward works in y and the panels. */
uint64_t bi_dense_work(const nnn_layer_t *layer, const void *body, const nnn_shape_t *in, const nnn_shape_t *out,
                       int threads)
{
	(void)body, (void)in, (void)out, (void)threads;
	bi_layout_t lay = dense_layout(&layer->body.dense);
	return bi_bytes(bi_state_bytes(&lay, layer->body.dense.weights.data.n, layer->bias.data.n));
}

/* The most rows of a chunk in the split order: their partial sums, 4 x 16
 * floats a row, are kept on the stack (forward holds mc to it). */
#define SPLIT_ROWS 32

/* The fewest rows of a chunk (but for the split order's): the panel's
 * weights, read from memory once a chunk, serve that many rows at least. */
#define MC_ROWS 64

/* One forward's rows x panels, cut into chunks of mc rows x one panel. */
typedef struct dense_job {
	const bi_state_t *st;
	const float *x;
	float *y;
	int64_t rows, inputs, neurons;
	int64_t mc, kc; /* rows per chunk, inputs per block */
	int64_t chunk;  /* generic: rows per sgemm call */
	int64_t group;  /* one row: panels a chunk (> 1: bi_ukr_panels) */
	bi_act_t act;   /* applied to each chunk once it is complete */
} dense_job_t;

static void dense_chunk(void *ctx, int64_t c, int slot)
{
	const dense_job_t *j = ctx;
	const bi_pack_t *pk = &j->st->pack;
	const int64_t jv = (int64_t)pk->j * pk->v, np = pk->np, k = j->inputs, n = j->neurons;
	const int64_t p = c % np, r0 = c / np * j->mc, r1 = r0 + j->mc < j->rows ? r0 + j->mc : j->rows;
	const int rmax = bi_rmax(pk);
	const int64_t blocks = (r1 - r0 + rmax - 1) / rmax, rb = (r1 - r0 + blocks - 1) / blocks;
	const int cols = (int)(n - p * jv < jv ? n - p * jv : jv);
	const ptrdiff_t zero = 0;
	(void)slot;
	if (j->group > 1) { /* one row: chunk c is panels c * group.. at once (the last alone, maybe) */
		const int64_t p0 = c * j->group, cnt = np - p0 < j->group ? np - p0 : j->group;
		const int64_t span = n - p0 * jv < cnt * jv ? n - p0 * jv : cnt * jv;
		if (cnt > 1)
			bi_ukr_panels(pk, j->x, p0, (int)cnt, j->y);
		else
			bi_ukr(pk, 1, j->x, (ptrdiff_t)k, &zero, 1, k, pk->w + p0 * k * jv, pk->b + p0 * jv, 0, j->y + p0 * jv,
			       (ptrdiff_t)n, (int)span, NULL);
		bi_act_apply(&j->act, j->y + p0 * jv, span);
		return;
	}
	if (pk->split) { /* the chunk's partial sums stay here from one block of inputs to the next */
		float part[SPLIT_ROWS * 4 * 16];
		for (int64_t k0 = 0; k0 < k; k0 += j->kc) {
			int64_t kc = k - k0 < j->kc ? k - k0 : j->kc;
			for (int64_t r = r0; r < r1; r += rb)
				bi_ukr_split(pk, (int)(r1 - r < rb ? r1 - r : rb), j->x + r * k + k0, (ptrdiff_t)k, kc,
				             pk->w + k0 * n, pk->b, k0 == 0, k0 + kc >= k,
				             part + (r - r0) * 4 * jv, j->y + r * n + p * jv, (ptrdiff_t)n, cols);
		}
		for (int64_t r = r0; r < r1; r++)
			bi_act_apply(&j->act, j->y + r * n + p * jv, cols);
		return;
	}
	/* a block of inputs at a time, for all the chunk's rows: the panel's
	 * block of weights stays in cache while every row uses it */
	for (int64_t k0 = 0; k0 < k; k0 += j->kc) {
		int64_t kc = k - k0 < j->kc ? k - k0 : j->kc;
		for (int64_t r = r0; r < r1; r += rb) {
			float *y = j->y + r * n + p * jv;
			bi_ukr(pk, (int)(r1 - r < rb ? r1 - r : rb), j->x + r * k + k0, (ptrdiff_t)k, &zero, 1, kc,
			       pk->w + (p * k + k0) * jv, k0 ? y : pk->b + p * jv, k0 ? (ptrdiff_t)n : 0, y, (ptrdiff_t)n,
			       cols, NULL);
		}
	}
	for (int64_t r = r0; r < r1; r++)
		bi_act_apply(&j->act, j->y + r * n + p * jv, cols);
}

/* Portable path: rows c * chunk.. of y = x @ W + b, one sgemm. */
static void dense_chunk_blas(void *ctx, int64_t c, int slot)
{
	const dense_job_t *j = ctx;
	const bi_params_t *p = j->st->plain;
	int64_t r0 = c * j->chunk, m = j->rows - r0 < j->chunk ? j->rows - r0 : j->chunk;
	(void)slot;
	bi_fill_bias(j->y + r0 * j->neurons, m, j->neurons, p->b);
	j->st->blas.sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)j->neurons, (int)j->inputs, 1.0f,
	                  j->x + r0 * j->inputs, (int)j->inputs, p->w, (int)j->neurons, 1.0f, j->y + r0 * j->neurons,
	                  (int)j->neurons);
	bi_act_apply(&j->act, j->y + r0 * j->neurons, m * j->neurons);
}

nnn_status_t bi_dense_forward(const nnn_kernel_args_t *a, char *msg, size_t msg_size)
{
	const nnn_dense_t *dn;
	bi_state_t *st, *tmp;
	bi_layout_t lay;
	dense_job_t j = { 0 };
	int threads;
	double flop;
	nnn_status_t s = bi_check_args(a, bi_dense_expect, msg, msg_size);
	if (s != NNN_OK)
		return s;
	dn = &a->layer->body.dense;
	lay = dense_layout(dn);
	if ((s = bi_state_get(a, &dn->weights, &lay, &st, &tmp, msg, msg_size)) != NNN_OK)
		return s;
	j.st = st;
	j.x = a->x;
	j.y = a->y;
	j.act = bi_act_fuse(a, st->isa);
	j.inputs = lay.k;
	j.neurons = lay.n;
	/* Flattened or not, x is row-major [rows, inputs]: only the last axis is contracted. */
	j.rows = bi_numel(a->in) / j.inputs;
	flop = 2.0 * (double)j.rows * (double)j.inputs * (double)j.neurons;
	threads = flop < 2 * BI_PAR_FLOP ? 1 : a->threads;
	if (j.rows > 0 && st->isa != BI_ISA_GENERIC) {
		const bi_pack_t *pk = &st->pack;
		int64_t jv = (int64_t)pk->j * pk->v, rmax = bi_rmax(pk), nchunks;
		const int64_t mc_min = (MC_ROWS + rmax - 1) / rmax * rmax;
		/* kc inputs of one panel's weights: 128 KiB; mc rows of kc inputs:
		 * 256 KiB, yet at least MC_ROWS (the weights come from memory once
		 * per chunk: AVX2's narrower panels, with kc 4 times as long, got
		 * 30 rows, and the MLP at batch 64 ran at 75 % of the peak, 86 %
		 * with 66) */
		j.kc = 32768 / jv < j.inputs ? 32768 / jv : j.inputs;
		j.mc = 65536 / j.kc / rmax * rmax;
		j.mc = j.mc < mc_min ? mc_min : j.mc;
		if (pk->split && j.mc > SPLIT_ROWS)
			j.mc = SPLIT_ROWS / rmax * rmax;
		threads = bi_threads(threads, st->cpus, INT64_MAX);
		/* with threads, at least two chunks each (the weights are read once per chunk) */
		while (threads > 1 && j.mc > rmax && (j.rows + j.mc - 1) / j.mc * pk->np < 2 * threads)
			j.mc = (j.mc / 2 + rmax - 1) / rmax * rmax;
		nchunks = (j.rows + j.mc - 1) / j.mc * pk->np;
		if (j.rows == 1 && pk->np > 1 && !pk->split) {
			/* up to BI_PANELS panels a chunk, yet a chunk for every thread */
			j.group = pk->np / threads < BI_PANELS ? pk->np / threads : BI_PANELS;
			if (j.group > 1)
				nchunks = (pk->np + j.group - 1) / j.group;
		}
		bi_run(a, st, threads, nchunks, dense_chunk, &j);
	} else if (j.rows > 0) {
		/* BLAS takes int sizes: keep every count and offset it computes below INT_MAX. */
		int64_t most = INT_MAX / (j.inputs > j.neurons ? j.inputs : j.neurons);
		j.chunk = bi_split(flop, j.rows, a->threads, st->cpus, &threads);
		if (j.chunk > most) {
			j.chunk = most;
			threads = bi_threads(threads, 0, (j.rows + j.chunk - 1) / j.chunk);
		}
		bi_run(a, st, threads, (j.rows + j.chunk - 1) / j.chunk, dense_chunk_blas, &j);
	}
	bi_act_done(a, &j.act);
	bi_state_free(tmp);
	return NNN_OK;
}
