/* onnx.c: the ONNX export hooks of the builtin layer types and activations
 * (ABI 1.5), which ONNX export calls exactly as it calls a third party's.
 * The graph stays channels-last between layers: a Conv transposes its input
 * to ONNX's channels-first and its output back (runtimes fold the pairs). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builtin.h"

/* A tensor's values as host floats under its own dims (or `dims`, when
 * given, with the same element count): an initializer named from `hint`. */
static const char *tensor(const nnn_host_t *h, nnn_onnx_graph_t *g, const char *hint, const nnn_tensor_t *t,
                          const int64_t *dims, int rank, const float *values)
{
	int64_t own[NNN_MAX_RANK];
	if (!dims) {
		if (t->dims.n > NNN_MAX_RANK) {
			h->onnx_fail(g, "%s has %d dims (at most %d)", hint, (int)t->dims.n, NNN_MAX_RANK);
			return NULL;
		}
		for (int32_t i = 0; i < t->dims.n; i++)
			own[i] = t->dims.v[i];
		dims = own;
		rank = t->dims.n;
	}
	float *v = values ? NULL : malloc((size_t)(t->data.n > 0 ? t->data.n : 1) * sizeof *v);
	if (!values && !v) {
		h->onnx_fail(g, "out of memory copying %s", hint);
		return NULL;
	}
	if (!values)
		nnn_f32s_read(t->data, v);
	const char *name = h->onnx_floats(g, hint, dims, rank, values ? values : v);
	free(v);
	return name;
}

static nnn_onnx_attr_t attr_int(const char *name, int64_t i)
{
	return (nnn_onnx_attr_t){ .name = name, .kind = NNN_ONNX_ATTR_INT, .i = i };
}

static nnn_onnx_attr_t attr_ints(const char *name, const int64_t *v, int n)
{
	return (nnn_onnx_attr_t){ .name = name, .kind = NNN_ONNX_ATTR_INTS, .ints = v, .n = n };
}

/* Dense: Gemm on a rank-2 input (after Flatten, with flatten); MatMul + Add
 * when the rank is higher or not known, contracting the last axis. */
nnn_status_t bi_dense_onnx(const nnn_host_t *h, nnn_onnx_graph_t *g, const nnn_layer_t *layer, const void *body,
                           const nnn_pshape_t *in, const char *x, const char **y)
{
	const nnn_dense_t *d = body;
	const char *w = tensor(h, g, "weights", &d->weights, NULL, 0, NULL);
	const char *b = tensor(h, g, "bias", &layer->bias, NULL, 0, NULL);
	if (!w || !b)
		return NNN_E_ONNX_EXPORT;
	if (d->flatten) {
		nnn_onnx_attr_t axis = attr_int("axis", 1);
		x = h->onnx_node(g, "Flatten", "flatten", &x, 1, &axis, 1);
	}
	if (d->flatten || in->rank == 2) {
		const char *args[3] = { x, w, b };
		*y = h->onnx_node(g, "Gemm", "gemm", args, 3, NULL, 0);
	} else {
		const char *mm[2] = { x, w };
		const char *p = h->onnx_node(g, "MatMul", "matmul", mm, 2, NULL, 0);
		const char *add[2] = { p, b };
		*y = p ? h->onnx_node(g, "Add", "add", add, 2, NULL, 0) : NULL;
	}
	return *y ? NNN_OK : NNN_E_ONNX_EXPORT;
}

/* Conv: Transpose to [N, C, d..], Conv with kernels [f, c, k..], Transpose
 * back to [N, d.., f]. ONNX runtimes implement 1 to 3 spatial dims. */
nnn_status_t bi_conv_onnx(const nnn_host_t *h, nnn_onnx_graph_t *g, const nnn_layer_t *layer, const void *body,
                          const nnn_pshape_t *in, const char *x, const char **y)
{
	const nnn_conv_t *c = body;
	const nnn_tensor_t *k = &c->kernels;
	(void)in;
	int n = k->dims.n - 2; /* spatial dims */
	if (n < 1 || n > 3)
		return h->onnx_fail(g, "a Conv of %d spatial dims (kernels.dims %d values): ONNX runtimes implement 1 to 3",
		                    n, (int)k->dims.n);
	if (c->padding_dims.n != 2 * n)
		return h->onnx_fail(g, "%d padding dims for %d spatial dims (expected %d)", (int)c->padding_dims.n, n,
		                    2 * n);
	int64_t f = k->dims.v[0], ch = k->dims.v[n + 1], ks[3], kd[5], pads[6], to_cf[5], to_cl[5];
	int64_t per = ch; /* values per kernel position */
	for (int i = 0; i < n; i++) {
		ks[i] = k->dims.v[1 + i];
		per *= ks[i];
		pads[i] = c->padding_dims.v[2 * i];         /* befores first, */
		pads[n + i] = c->padding_dims.v[2 * i + 1]; /* then afters */
	}
	/* [f, k.., c] -> [f, c, k..]: within each filter, a [taps, c] matrix transposed. */
	int64_t taps = per / (ch ? ch : 1), count = f * per;
	float *src = malloc((size_t)(count > 0 ? count : 1) * sizeof *src);
	float *dst = malloc((size_t)(count > 0 ? count : 1) * sizeof *dst);
	if (!src || !dst) {
		free(src);
		free(dst);
		return h->onnx_fail(g, "out of memory permuting the kernels");
	}
	nnn_f32s_read(k->data, src);
	for (int64_t o = 0; o < f; o++)
		for (int64_t t = 0; t < taps; t++)
			for (int64_t i = 0; i < ch; i++)
				dst[o * per + i * taps + t] = src[o * per + t * ch + i];
	kd[0] = f;
	kd[1] = ch;
	for (int i = 0; i < n; i++)
		kd[2 + i] = ks[i];
	const char *w = tensor(h, g, "kernels", k, kd, n + 2, dst);
	free(src);
	free(dst);
	const char *b = tensor(h, g, "bias", &layer->bias, NULL, 0, NULL);
	if (!w || !b)
		return NNN_E_ONNX_EXPORT;
	to_cf[0] = 0;
	to_cf[1] = n + 1;
	to_cl[0] = 0;
	to_cl[n + 1] = 1;
	for (int i = 0; i < n; i++) {
		to_cf[2 + i] = 1 + i;
		to_cl[1 + i] = 2 + i;
	}
	nnn_onnx_attr_t perm = attr_ints("perm", to_cf, n + 2);
	const char *xt = h->onnx_node(g, "Transpose", "to_channels_first", &x, 1, &perm, 1);
	const char *args[3] = { xt, w, b };
	nnn_onnx_attr_t attrs[2] = { attr_ints("kernel_shape", ks, n), attr_ints("pads", pads, 2 * n) };
	const char *conv = h->onnx_node(g, "Conv", "conv", args, 3, attrs, 2);
	perm = attr_ints("perm", to_cl, n + 2);
	*y = h->onnx_node(g, "Transpose", "to_channels_last", &conv, 1, &perm, 1);
	return *y ? NNN_OK : NNN_E_ONNX_EXPORT;
}

/* Activations: one node each (Linear none); Softmax over the last axis,
 * which opset 13 and later mean by axis -1. */
static nnn_status_t act_node(const nnn_host_t *h, nnn_onnx_graph_t *g, const char *op, const char *x, const char **y,
                             const nnn_onnx_attr_t *attrs, int nattr)
{
	*y = h->onnx_node(g, op, NULL, &x, 1, attrs, nattr);
	return *y ? NNN_OK : NNN_E_ONNX_EXPORT;
}

nnn_status_t bi_linear_onnx(const nnn_host_t *h, nnn_onnx_graph_t *g, const nnn_activation_t *act,
                            const void *params, const nnn_pshape_t *shape, const char *x, const char **y)
{
	(void)h, (void)g, (void)act, (void)params, (void)shape;
	*y = x;
	return NNN_OK;
}

#define SIMPLE(FN, OP)                                                                                        \
	nnn_status_t FN(const nnn_host_t *h, nnn_onnx_graph_t *g, const nnn_activation_t *act, const void *params, \
	                const nnn_pshape_t *shape, const char *x, const char **y)                                  \
	{                                                                                                         \
		(void)act, (void)params, (void)shape;                                                             \
		return act_node(h, g, OP, x, y, NULL, 0);                                                         \
	}
SIMPLE(bi_sigmoid_onnx, "Sigmoid")
SIMPLE(bi_tanh_onnx, "Tanh")
SIMPLE(bi_relu_onnx, "Relu")
#undef SIMPLE

nnn_status_t bi_leaky_relu_onnx(const nnn_host_t *h, nnn_onnx_graph_t *g, const nnn_activation_t *act,
                                const void *params, const nnn_pshape_t *shape, const char *x, const char **y)
{
	(void)act, (void)shape;
	const nnn_leaky_relu_t *p = params;
	nnn_onnx_attr_t alpha = { .name = "alpha", .kind = NNN_ONNX_ATTR_FLOAT, .f = p->tau };
	return act_node(h, g, "LeakyRelu", x, y, &alpha, 1);
}

nnn_status_t bi_softmax_onnx(const nnn_host_t *h, nnn_onnx_graph_t *g, const nnn_activation_t *act,
                             const void *params, const nnn_pshape_t *shape, const char *x, const char **y)
{
	(void)act, (void)params, (void)shape;
	nnn_onnx_attr_t axis = attr_int("axis", -1);
	return act_node(h, g, "Softmax", x, y, &axis, 1);
}

/* ---- what the hooks of grown layer types share (dense_f16.c, dense_i8.c) ---- */

const char *bi_onnx_cast(const nnn_host_t *h, nnn_onnx_graph_t *g, const char *hint, const int64_t *dims, int rank,
                         nnn_ekind_t kind, int width, const void *bytes)
{
	char cast[64];
	snprintf(cast, sizeof cast, "%s_float", hint);
	const char *w = h->onnx_elems(g, hint, dims, rank, kind, width, bytes);
	nnn_onnx_attr_t to = attr_int("to", NNN_ONNX_DTYPE_FLOAT);
	return w ? h->onnx_node(g, "Cast", cast, &w, 1, &to, 1) : NULL;
}

bool bi_onnx_node_is(const nnn_host_t *h, const nnn_onnx_match_t *m, int k, const char *op, int in, int from)
{
	const char *o = h->onnx_op(m, k);
	return o && !strcmp(o, op) && h->onnx_input(m, k, in) == from;
}

bool bi_onnx_cast_is(const nnn_host_t *h, const nnn_onnx_match_t *m, int k)
{
	int64_t to;
	return bi_onnx_node_is(h, m, k, "Cast", 0, NNN_ONNX_FROM_CONST) && h->onnx_attr_ints(m, k, "to", &to, 1) == 1 &&
	       to == NNN_ONNX_DTYPE_FLOAT;
}

int bi_onnx_flatten_at(const nnn_host_t *h, const nnn_onnx_match_t *m, int k)
{
	int64_t axis;
	const char *o = h->onnx_op(m, k);
	if (!o || strcmp(o, "Flatten"))
		return 0;
	return h->onnx_input(m, k, 0) == NNN_ONNX_FROM_X && h->onnx_attr_ints(m, k, "axis", &axis, 1) == 1 && axis == 1
	               ? 1
	               : -1;
}
