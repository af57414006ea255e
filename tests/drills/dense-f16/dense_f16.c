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

/* ONNX: the float16 weights as a FLOAT16 initializer, bytes as they are
 * (NaN payloads and -0 kept), Cast to float, then as Dense: [Flatten,]
 * MatMul, Add of the bias. ONNX runtimes run it in float32, as forward. */
static nnn_status_t f16_onnx(const nnn_host_t *h, nnn_onnx_graph_t *g, const nnn_layer_t *layer, const void *body,
                             const nnn_pshape_t *in, const char *x, const char **y)
{
	const nnn_dense_f16_t *d = body;
	const nnn_tensor_f16_t *w = &d->weights;
	(void)in;
	if (w->dims.n != 2)
		return h->onnx_fail(g, "weights have %d dims, expected [inputs, neurons]", (int)w->dims.n);
	int64_t wd[2] = { w->dims.v[0], w->dims.v[1] }, nb = layer->bias.data.n;
	const char *wf = bi_onnx_cast(h, g, "weights", wd, 2, NNN_EK_FLOAT, 2, w->data.bytes);
	const char *b = h->onnx_elems(g, "bias", &nb, 1, NNN_EK_FLOAT, 4, layer->bias.data.bytes);
	nnn_onnx_attr_t axis = { .name = "axis", .kind = NNN_ONNX_ATTR_INT, .i = 1 };
	if (wf && b && d->flatten)
		x = h->onnx_node(g, "Flatten", "flatten", &x, 1, &axis, 1);
	const char *mm[2] = { x, wf };
	const char *p = wf && b && x ? h->onnx_node(g, "MatMul", "matmul", mm, 2, NULL, 0) : NULL;
	const char *add[2] = { p, b };
	*y = p ? h->onnx_node(g, "Add", "add", add, 2, NULL, 0) : NULL;
	return *y ? NNN_OK : NNN_E_ONNX_EXPORT;
}

/* What f16_onnx writes, read back: the weights and bias set from their
 * initializers as they are (the host refuses weights that are not
 * FLOAT16), neurons from the weights, flatten from the Flatten. */
static int f16_onnx_import(const nnn_host_t *h, nnn_onnx_match_t *m)
{
	int64_t dims[NNN_MAX_RANK];
	int rank;
	int32_t dtype;
	const void *bytes;
	int flatten = bi_onnx_flatten_at(h, m, 1), k = 1 + flatten;
	if (!bi_onnx_cast_is(h, m, 0) || flatten < 0 ||
	    !bi_onnx_node_is(h, m, k, "MatMul", 0, flatten ? 1 : NNN_ONNX_FROM_X) || h->onnx_input(m, k, 1) != 0 ||
	    !bi_onnx_node_is(h, m, k + 1, "Add", 0, k) || h->onnx_input(m, k + 1, 1) != NNN_ONNX_FROM_CONST ||
	    h->onnx_const_elems(m, 0, 0, dims, &rank, &dtype, &bytes) < 0 || rank != 2)
		return 0;
	if (h->onnx_set_tensor_const(m, BI_FIELD(nnn_dense_f16_t, weights), 0, 0) != NNN_OK ||
	    h->onnx_set_tensor_const(m, BI_FIELD(nnn_layer_t, bias), k + 1, 1) != NNN_OK ||
	    h->onnx_set_number(m, BI_FIELD(nnn_dense_f16_t, neurons), (double)dims[1]) != NNN_OK ||
	    h->onnx_set_number(m, BI_FIELD(nnn_dense_f16_t, flatten), flatten) != NNN_OK)
		return 0;
	return k + 2;
}

/* A core-schema ID: the host decodes it and its shapes come from the
 * schema's io, so the descriptor brings compute and ONNX only. */
const nnn_layer_type_t bi_dense_f16_type = {
	.size = sizeof(nnn_layer_type_t),
	.id = NNN_LAYER_ID_DENSE_F16,
	.name = "dense_f16",
	.forward = f16_forward,
	.onnx_export = f16_onnx,
	.onnx_import = f16_onnx_import,
};
