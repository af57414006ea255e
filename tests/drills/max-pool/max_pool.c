/* max_pool.c: N-D max pooling, channels-last: for every output position
 * and channel, the largest input inside its window (padded cells do not
 * count), then the bias when the layer has one per channel. Shapes come
 * from the host's shape engine (the schema's io of max_pool); the loops
 * check every index against the input, so no shape can make them read
 * outside it. */
#include <math.h>

#include "builtin.h"

static nnn_status_t pool_check(const nnn_kernel_args_t *a, char *msg, size_t msg_size)
{
	const nnn_max_pool_t *p;
	int32_t n;
	if (!a || a->size < offsetof(nnn_kernel_args_t, threads) + sizeof a->threads || !a->layer || !a->in || !a->out)
		return bi_fail(msg, msg_size, NNN_E_KERNEL, "kernel arguments are missing or too short");
	p = &a->layer->body.max_pool;
	n = p->pool.n;
	if (n < 1 || a->in->rank != n + 2 || a->out->rank != n + 2)
		return bi_fail(msg, msg_size, NNN_E_KERNEL, "a %d-D pool needs rank %d input and output", (int)n, (int)n + 2);
	if (p->strides.n != n || (p->padding_dims.n != 2 * n && p->padding_dims.n != 0))
		return bi_fail(msg, msg_size, NNN_E_KERNEL, "strides or padding dims do not fit the pool");
	if (a->in->dims[n + 1] != a->out->dims[n + 1] || a->in->dims[0] != a->out->dims[0])
		return bi_fail(msg, msg_size, NNN_E_KERNEL, "input and output differ in batch or channels");
	if (a->layer->bias.data.n != 0 && a->layer->bias.data.n != a->in->dims[n + 1])
		return bi_fail(msg, msg_size, NNN_E_KERNEL, "bias has %d values, expected 0 or one per channel",
		               (int)a->layer->bias.data.n);
	if ((bi_numel(a->in) > 0 && !a->x) || (bi_numel(a->out) > 0 && !a->y))
		return bi_fail(msg, msg_size, NNN_E_KERNEL, "input or output buffer is NULL");
	return NNN_OK;
}

static nnn_status_t pool_forward(const nnn_kernel_args_t *a, char *msg, size_t msg_size)
{
	nnn_status_t st = pool_check(a, msg, msg_size);
	if (st != NNN_OK)
		return st;
	const nnn_max_pool_t *p = &a->layer->body.max_pool;
	const nnn_tensor_t *bias = &a->layer->bias;
	int32_t n = p->pool.n;
	int64_t C = a->in->dims[n + 1], opos = 1, taps = 1, o[NNN_MAX_RANK], w[NNN_MAX_RANK];
	for (int32_t j = 0; j < n; j++) {
		opos *= a->out->dims[1 + j];
		taps *= p->pool.v[j];
	}
	for (int64_t b = 0; b < a->in->dims[0]; b++) {
		const float *x = a->x + b * (bi_numel(a->in) / a->in->dims[0]);
		float *y = a->y + b * opos * C;
		for (int64_t q = 0; q < opos; q++) {
			int64_t r = q;
			for (int32_t j = n - 1; j >= 0; j--) { /* the output position, row-major */
				o[j] = r % a->out->dims[1 + j];
				r /= a->out->dims[1 + j];
			}
			for (int64_t c = 0; c < C; c++) {
				float m = -INFINITY;
				for (int64_t t = 0; t < taps; t++) {
					int64_t u = t, at = 0;
					bool inside = true;
					for (int32_t j = n - 1; j >= 0; j--) {
						w[j] = u % p->pool.v[j];
						u /= p->pool.v[j];
					}
					for (int32_t j = 0; j < n && inside; j++) {
						int64_t before = p->padding_dims.n ? p->padding_dims.v[2 * j] : 0;
						int64_t i = o[j] * p->strides.v[j] - before + w[j];
						inside = i >= 0 && i < a->in->dims[1 + j];
						at = at * a->in->dims[1 + j] + i;
					}
					if (inside && x[at * C + c] > m)
						m = x[at * C + c];
				}
				y[q * C + c] = m + (bias->data.n ? nnn_f32s_get(bias->data, c) : 0.0f);
			}
		}
	}
	return NNN_OK;
}

/* A core-schema ID: the host decodes it and its shapes come from the
 * schema's io, so the descriptor brings compute only. */
const nnn_layer_type_t bi_max_pool_type = {
	.size = sizeof(nnn_layer_type_t),
	.id = NNN_LAYER_ID_MAX_POOL,
	.name = "max_pool",
	.forward = pool_forward,
};
