/* dense_f16.c: a fully connected layer whose weights are float16 (the
 * schema's f16_array, read by width): y = x @ float(W) + b, W of shape
 * [inputs, neurons], each weight widened exactly to float as it is used
 * (narrow.c: bi_dense_narrow, which reads the float16 weights in place);
 * the host applies the activation after. Shapes come from the
 * schema's `features` io, so the loops only check that the buffers hold
 * them. */
#include "builtin.h"

static nnn_status_t f16_check(const nnn_kernel_args_t *a, char *msg, size_t msg_size)
{
	if (!a || a->size < offsetof(nnn_kernel_args_t, threads) + sizeof a->threads || !a->layer || !a->in || !a->out)
		return bi_fail(msg, msg_size, NNN_E_KERNEL, "kernel arguments are missing or too short");
	const nnn_dense_f16_t *d = &a->layer->body.dense_f16;
	const nnn_tensor_f16_t *w = &d->weights;
	if (w->dims.n != 2 || w->dims.v[1] != d->neurons || (int64_t)w->dims.v[0] * w->dims.v[1] != w->data.n)
		return bi_fail(msg, msg_size, NNN_E_KERNEL, "weights are not [inputs, neurons]");
	if (a->layer->bias.data.n != d->neurons)
		return bi_fail(msg, msg_size, NNN_E_KERNEL, "bias has %d values, expected %d", (int)a->layer->bias.data.n,
		               (int)d->neurons);
	int64_t in = bi_numel(a->in), out = bi_numel(a->out), k = w->dims.v[0];
	if (k < 1 || in % k || out != in / k * d->neurons)
		return bi_fail(msg, msg_size, NNN_E_KERNEL, "input and output do not fit weights [%d, %d]", (int)k,
		               (int)d->neurons);
	if ((in > 0 && !a->x) || (out > 0 && !a->y))
		return bi_fail(msg, msg_size, NNN_E_KERNEL, "input or output buffer is NULL");
	return NNN_OK;
}

static nnn_status_t f16_forward(const nnn_kernel_args_t *a, char *msg, size_t msg_size)
{
	nnn_status_t st = f16_check(a, msg, msg_size);
	if (st != NNN_OK)
		return st;
	const nnn_tensor_f16_t *t = &a->layer->body.dense_f16.weights;
	const bi_narrow_t w = { .type = BI_NARROW_F16, .data = t->data.bytes, .k = t->dims.v[0], .n = t->dims.v[1],
		                .rows = bi_numel(a->in) / t->dims.v[0], .bias = a->layer->bias.data };
	bi_dense_narrow(a, &w);
	return NNN_OK;
}

/* A core-schema ID: the host decodes it and its shapes come from the
 * schema's io, so the descriptor brings compute only. */
const nnn_layer_type_t bi_dense_f16_type = {
	.size = sizeof(nnn_layer_type_t),
	.id = NNN_LAYER_ID_DENSE_F16,
	.name = "dense_f16",
	.forward = f16_forward,
};
