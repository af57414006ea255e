/* dense_i8.c: a fully connected layer whose weights are int8 (the schema's
 * i8_array, read by width) with one float32 scale a neuron:
 * y = x @ (float(W) * scales) + b, W of shape [inputs, neurons]; the sums
 * are scaled once per neuron (narrow.c: bi_dense_narrow, which reads the
 * int8 weights in place, or the copy prepare packs for AVX-512 VNNI); the
 * host applies the activation after. Shapes
 * come from the schema's `features` io, so this only checks that the
 * buffers hold them. */
#include "builtin.h"

static nnn_status_t i8_check(const nnn_kernel_args_t *a, char *msg, size_t msg_size)
{
	if (!a || a->size < offsetof(nnn_kernel_args_t, threads) + sizeof a->threads || !a->layer || !a->in || !a->out)
		return bi_fail(msg, msg_size, NNN_E_KERNEL, "kernel arguments are missing or too short");
	const nnn_dense_i8_t *d = &a->layer->body.dense_i8;
	const nnn_tensor_i8_t *w = &d->weights;
	if (w->dims.n != 2 || w->dims.v[1] != d->neurons || (int64_t)w->dims.v[0] * w->dims.v[1] != w->data.n)
		return bi_fail(msg, msg_size, NNN_E_KERNEL, "weights are not [inputs, neurons]");
	if (d->scales.data.n != d->neurons)
		return bi_fail(msg, msg_size, NNN_E_KERNEL, "scales have %d values, expected %d", (int)d->scales.data.n,
		               (int)d->neurons);
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

static nnn_status_t i8_forward(const nnn_kernel_args_t *a, char *msg, size_t msg_size)
{
	nnn_status_t st = i8_check(a, msg, msg_size);
	if (st != NNN_OK)
		return st;
	const nnn_dense_i8_t *d = &a->layer->body.dense_i8;
	const int64_t k = d->weights.dims.v[0];
	const bi_narrow_t w = { .type = BI_NARROW_I8, .data = d->weights.data.bytes, .k = k, .n = d->neurons,
		                .rows = bi_numel(a->in) / k, .scale = d->scales.data, .bias = a->layer->bias.data,
		                .pack = a->state };
	bi_dense_narrow(a, &w);
	return NNN_OK;
}

/* The weights packed for the integer path, where the CPU has one (the
 * state may be NULL: forward then takes the float path). */
static nnn_status_t i8_prepare(const nnn_layer_t *layer, const void *body, const nnn_shape_t *in, void **state,
                               char *msg, size_t msg_size)
{
	(void)body, (void)in, (void)msg, (void)msg_size;
	const nnn_tensor_i8_t *w = &layer->body.dense_i8.weights;
	*state = NULL;
	if (w->dims.n == 2 && (int64_t)w->dims.v[0] * w->dims.v[1] == w->data.n)
		*state = bi_narrow_pack(w->data.bytes, w->dims.v[0], w->dims.v[1]);
	return NNN_OK;
}

/* A core-schema ID: the host decodes it and its shapes come from the
 * schema's io, so the descriptor brings compute only. */
const nnn_layer_type_t bi_dense_i8_type = {
	.size = sizeof(nnn_layer_type_t),
	.id = NNN_LAYER_ID_DENSE_I8,
	.name = "dense_i8",
	.prepare = i8_prepare,
	.release = bi_narrow_pack_free,
	.forward = i8_forward,
};
