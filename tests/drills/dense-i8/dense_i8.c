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

/* ONNX: the int8 weights as an INT8 initializer, bytes as they are, Cast
 * to float, then [Flatten,] MatMul, Mul by the scales (a FLOAT
 * initializer [neurons], -0 and subnormals kept), Add of the bias: the
 * order forward computes in, (x @ float(W)) * scales + b, in float32. */
static nnn_status_t i8_onnx(const nnn_host_t *h, nnn_onnx_graph_t *g, const nnn_layer_t *layer, const void *body,
                            const nnn_pshape_t *in, const char *x, const char **y)
{
	const nnn_dense_i8_t *d = body;
	const nnn_tensor_i8_t *w = &d->weights;
	(void)in;
	if (w->dims.n != 2)
		return h->onnx_fail(g, "weights have %d dims, expected [inputs, neurons]", (int)w->dims.n);
	int64_t wd[2] = { w->dims.v[0], w->dims.v[1] }, ns = d->scales.data.n, nb = layer->bias.data.n;
	const char *wf = bi_onnx_cast(h, g, "weights", wd, 2, NNN_EK_INT, 1, w->data.bytes);
	const char *s = h->onnx_elems(g, "scales", &ns, 1, NNN_EK_FLOAT, 4, d->scales.data.bytes);
	const char *b = h->onnx_elems(g, "bias", &nb, 1, NNN_EK_FLOAT, 4, layer->bias.data.bytes);
	nnn_onnx_attr_t axis = { .name = "axis", .kind = NNN_ONNX_ATTR_INT, .i = 1 };
	if (wf && s && b && d->flatten)
		x = h->onnx_node(g, "Flatten", "flatten", &x, 1, &axis, 1);
	const char *mm[2] = { x, wf };
	const char *p = wf && s && b && x ? h->onnx_node(g, "MatMul", "matmul", mm, 2, NULL, 0) : NULL;
	const char *mul[2] = { p, s };
	const char *q = p ? h->onnx_node(g, "Mul", "scale", mul, 2, NULL, 0) : NULL;
	const char *add[2] = { q, b };
	*y = q ? h->onnx_node(g, "Add", "add", add, 2, NULL, 0) : NULL;
	return *y ? NNN_OK : NNN_E_ONNX_EXPORT;
}

/* What i8_onnx writes, read back: the weights, scales and bias set from
 * their initializers as they are (the host refuses weights that are not
 * INT8, scales and bias that are not FLOAT), neurons from the weights,
 * flatten from the Flatten. */
static int i8_onnx_import(const nnn_host_t *h, nnn_onnx_match_t *m)
{
	int64_t dims[NNN_MAX_RANK];
	int rank;
	int32_t dtype;
	const void *bytes;
	int flatten = bi_onnx_flatten_at(h, m, 1), k = 1 + flatten;
	if (!bi_onnx_cast_is(h, m, 0) || flatten < 0 ||
	    !bi_onnx_node_is(h, m, k, "MatMul", 0, flatten ? 1 : NNN_ONNX_FROM_X) || h->onnx_input(m, k, 1) != 0 ||
	    !bi_onnx_node_is(h, m, k + 1, "Mul", 0, k) || h->onnx_input(m, k + 1, 1) != NNN_ONNX_FROM_CONST ||
	    !bi_onnx_node_is(h, m, k + 2, "Add", 0, k + 1) || h->onnx_input(m, k + 2, 1) != NNN_ONNX_FROM_CONST ||
	    h->onnx_const_elems(m, 0, 0, dims, &rank, &dtype, &bytes) < 0 || rank != 2)
		return 0;
	if (h->onnx_set_tensor_const(m, BI_FIELD(nnn_dense_i8_t, weights), 0, 0) != NNN_OK ||
	    h->onnx_set_tensor_const(m, BI_FIELD(nnn_dense_i8_t, scales), k + 1, 1) != NNN_OK ||
	    h->onnx_set_tensor_const(m, BI_FIELD(nnn_layer_t, bias), k + 2, 1) != NNN_OK ||
	    h->onnx_set_number(m, BI_FIELD(nnn_dense_i8_t, neurons), (double)dims[1]) != NNN_OK ||
	    h->onnx_set_number(m, BI_FIELD(nnn_dense_i8_t, flatten), flatten) != NNN_OK)
		return 0;
	return k + 3;
}

/* A core-schema ID: the host decodes it and its shapes come from the
 * schema's io, so the descriptor brings compute and ONNX only. */
const nnn_layer_type_t bi_dense_i8_type = {
	.size = sizeof(nnn_layer_type_t),
	.id = NNN_LAYER_ID_DENSE_I8,
	.name = "dense_i8",
	.prepare = i8_prepare,
	.release = bi_narrow_pack_free,
	.forward = i8_forward,
	.onnx_export = i8_onnx,
	.onnx_import = i8_onnx_import,
};
