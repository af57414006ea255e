/* dense.c: the Dense layer, y = x @ W + b, as one sgemm over all rows. */
#include <cblas.h>
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

nnn_status_t bi_dense_infer(const nnn_layer_t *layer, const void *body, const nnn_shape_t *in, nnn_shape_t *out,
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

nnn_status_t bi_dense_prepare(const nnn_layer_t *layer, const void *body, const nnn_shape_t *in, void **state,
                              char *msg, size_t msg_size)
{
	nnn_shape_t out;
	nnn_status_t st = bi_dense_infer(layer, body, in, &out, msg, msg_size);
	if (st != NNN_OK)
		return st;
	*state = bi_params_new(&layer->body.dense.weights, &layer->bias);
	if (!*state)
		return bi_fail(msg, msg_size, NNN_E_NOMEM, "out of memory copying %d weights",
		               (int)layer->body.dense.weights.data.n);
	return NNN_OK;
}

nnn_status_t bi_dense_forward(const nnn_kernel_args_t *a, char *msg, size_t msg_size)
{
	const nnn_dense_t *dn;
	const bi_params_t *p;
	bi_params_t *tmp;
	int64_t inputs, neurons, rows, chunk;
	nnn_status_t st = bi_check_args(a, bi_dense_infer, msg, msg_size);
	if (st != NNN_OK)
		return st;
	dn = &a->layer->body.dense;
	if ((st = bi_params_get(a, &dn->weights, &p, &tmp, msg, msg_size)) != NNN_OK)
		return st;
	inputs = dn->weights.dims.v[0];
	neurons = dn->neurons;
	/* Flattened or not, x is row-major [rows, inputs]: only the last axis is contracted. */
	rows = bi_numel(a->in) / inputs;
	bi_fill_bias(a->y, rows, neurons, p->b);
	/* BLAS takes int sizes: keep every count and offset it computes below INT_MAX. */
	chunk = INT_MAX / (inputs > neurons ? inputs : neurons);
	for (int64_t r0 = 0; r0 < rows; r0 += chunk) {
		int64_t m = rows - r0 < chunk ? rows - r0 : chunk;
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)neurons, (int)inputs, 1.0f,
		            a->x + r0 * inputs, (int)inputs, p->w, (int)neurons, 1.0f, a->y + r0 * neurons, (int)neurons);
	}
	free(tmp);
	return NNN_OK;
}
