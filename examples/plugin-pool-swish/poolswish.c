/* poolswish: an out-of-tree nnnkit plugin. A layer type of N-D max pooling
 * (window `pool`, step `stride`, no padding, channels-last) and an activation,
 * Swish, y = x * sigmoid(beta * x). The codec for their fields is
 * generated from schema.lua by nnngen (poolswish_gen.c/h); this file holds
 * only what a generator cannot write: shapes and kernels. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "poolswish_gen.h"

/* The output of pooling an input shape, or why not. */
static nnn_status_t pool_infer(const nnn_layer_t *layer, const void *body, const nnn_shape_t *in, nnn_shape_t *out,
                               char *msg, size_t msg_size)
{
	const poolswish_maxpool_t *p = body;
	int32_t n = p->pool.n;
	if (in->rank != n + 2) {
		snprintf(msg, msg_size, "a %d-D max pool needs rank %d input [batch, d1..d%d, channels], found rank %d",
		         (int)n, (int)n + 2, (int)n, (int)in->rank);
		return NNN_E_INPUT_SHAPE;
	}
	if (p->stride.n != n) {
		snprintf(msg, msg_size, "%d strides for %d window sizes", (int)p->stride.n, (int)n);
		return NNN_E_SHAPE;
	}
	int64_t c = in->dims[in->rank - 1];
	if (layer->bias.data.n != 0 && layer->bias.data.n != c) {
		snprintf(msg, msg_size, "bias has %d values; expected 0 or %lld (the channels)", (int)layer->bias.data.n,
		         (long long)c);
		return NNN_E_SHAPE;
	}
	*out = *in;
	for (int32_t j = 0; j < n; j++) {
		if (in->dims[1 + j] < p->pool.v[j]) {
			snprintf(msg, msg_size, "axis %d of size %lld is smaller than the window %d", (int)j + 1,
			         (long long)in->dims[1 + j], (int)p->pool.v[j]);
			return NNN_E_INPUT_SHAPE;
		}
		out->dims[1 + j] = (in->dims[1 + j] - p->pool.v[j]) / p->stride.v[j] + 1;
	}
	return NNN_OK;
}

static nnn_status_t pool_forward(const nnn_kernel_args_t *a, char *msg, size_t msg_size)
{
	const poolswish_maxpool_t *p = a->body;
	const nnn_shape_t *in = a->in, *out = a->out;
	int32_t n = p->pool.n;
	int64_t c = in->dims[in->rank - 1], cells = 1, wins = 1, spatial = 1;
	int64_t o[NNN_MAX_RANK], w[NNN_MAX_RANK];
	nnn_f32s_t bias = a->layer->bias.data;
	(void)msg, (void)msg_size;
	for (int32_t j = 0; j < n; j++) {
		cells *= out->dims[1 + j];
		wins *= p->pool.v[j];
		spatial *= in->dims[1 + j];
	}
	for (int64_t b = 0; b < in->dims[0]; b++) {
		for (int64_t cell = 0; cell < cells; cell++) {
			int64_t t = cell;
			for (int32_t j = n - 1; j >= 0; j--) { /* output coordinates, row-major */
				o[j] = t % out->dims[1 + j];
				t /= out->dims[1 + j];
			}
			float *y = a->y + (b * cells + cell) * c;
			for (int64_t k = 0; k < c; k++)
				y[k] = -INFINITY;
			for (int64_t win = 0; win < wins; win++) {
				int64_t off = 0;
				t = win;
				for (int32_t j = n - 1; j >= 0; j--) {
					w[j] = t % p->pool.v[j];
					t /= p->pool.v[j];
				}
				for (int32_t j = 0; j < n; j++)
					off = off * in->dims[1 + j] + o[j] * p->stride.v[j] + w[j];
				const float *x = a->x + (b * spatial + off) * c;
				for (int64_t k = 0; k < c; k++)
					y[k] = x[k] > y[k] ? x[k] : y[k];
			}
			for (int64_t k = 0; k < c && bias.n; k++)
				y[k] += nnn_f32s_get(bias, k);
		}
	}
	return NNN_OK;
}

static nnn_status_t swish_forward(const nnn_activation_t *act, const void *params, const nnn_shape_t *shape, float *x,
                                  int threads)
{
	const poolswish_swish_t *s = params;
	int64_t n = 1;
	(void)act, (void)threads;
	for (int32_t i = 0; i < shape->rank; i++)
		n *= shape->dims[i];
	for (int64_t i = 0; i < n; i++)
		x[i] = x[i] / (1.0f + expf(-s->beta * x[i]));
	return NNN_OK;
}

/* ONNX export (ABI 1.5, optional): the layer as MaxPool between Transposes
 * to channels-first and back, plus the bias when there is one. */
static nnn_status_t pool_onnx(const nnn_host_t *h, nnn_onnx_graph_t *g, const nnn_layer_t *layer, const void *body,
                              const nnn_pshape_t *in, const char *x, const char **y)
{
	const poolswish_maxpool_t *p = body;
	int32_t n = p->pool.n;
	int64_t ks[NNN_MAX_RANK], st[NNN_MAX_RANK], to_cf[NNN_MAX_RANK], to_cl[NNN_MAX_RANK];
	(void)in;
	if (n < 1 || n > 3 || p->stride.n != n)
		return h->onnx_fail(g, "a max pool of %d window sizes and %d strides: ONNX pools 1 to 3 axes, one stride each",
		                    (int)n, (int)p->stride.n);
	to_cf[0] = to_cl[0] = 0;
	to_cf[1] = n + 1;
	to_cl[n + 1] = 1;
	for (int32_t j = 0; j < n; j++) {
		ks[j] = p->pool.v[j];
		st[j] = p->stride.v[j];
		to_cf[2 + j] = 1 + j;
		to_cl[1 + j] = 2 + j;
	}
	nnn_onnx_attr_t perm = { .name = "perm", .kind = NNN_ONNX_ATTR_INTS, .ints = to_cf, .n = n + 2 };
	const char *t = h->onnx_node(g, "Transpose", "to_channels_first", &x, 1, &perm, 1);
	nnn_onnx_attr_t attrs[2] = { { .name = "kernel_shape", .kind = NNN_ONNX_ATTR_INTS, .ints = ks, .n = n },
		                     { .name = "strides", .kind = NNN_ONNX_ATTR_INTS, .ints = st, .n = n } };
	const char *pool = t ? h->onnx_node(g, "MaxPool", "maxpool", &t, 1, attrs, 2) : NULL;
	perm.ints = to_cl;
	*y = pool ? h->onnx_node(g, "Transpose", "to_channels_last", &pool, 1, &perm, 1) : NULL;
	if (*y && layer->bias.data.n > 0) {
		float b[4096];
		int64_t c = layer->bias.data.n;
		if (c > (int64_t)(sizeof b / sizeof b[0]))
			return h->onnx_fail(g, "a bias of %lld values (this example exports up to 4096)", (long long)c);
		nnn_f32s_read(layer->bias.data, b);
		const char *args[2] = { *y, h->onnx_floats(g, "bias", &c, 1, b) };
		*y = args[1] ? h->onnx_node(g, "Add", "add_bias", args, 2, NULL, 0) : NULL;
	}
	return *y ? NNN_OK : NNN_E_ONNX_EXPORT;
}

/* Swish: x * Sigmoid(beta * x). */
static nnn_status_t swish_onnx(const nnn_host_t *h, nnn_onnx_graph_t *g, const nnn_activation_t *act,
                               const void *params, const nnn_pshape_t *shape, const char *x, const char **y)
{
	const poolswish_swish_t *s = params;
	(void)act, (void)shape;
	const char *beta = h->onnx_floats(g, "beta", NULL, 0, &s->beta);
	const char *bx[2] = { x, beta };
	const char *scaled = beta ? h->onnx_node(g, "Mul", "beta_x", bx, 2, NULL, 0) : NULL;
	const char *gate = scaled ? h->onnx_node(g, "Sigmoid", "gate", &scaled, 1, NULL, 0) : NULL;
	const char *xg[2] = { x, gate };
	*y = gate ? h->onnx_node(g, "Mul", "swish", xg, 2, NULL, 0) : NULL;
	return *y ? NNN_OK : NNN_E_ONNX_EXPORT;
}

/* ID, name, title and codec come from schema.lua (the TYPE macros). */
static const nnn_layer_type_t maxpool = {
	POOLSWISH_MAXPOOL_TYPE,
	.infer = pool_infer,
	.forward = pool_forward,
	.onnx_export = pool_onnx,
};

static const nnn_activation_type_t swish = {
	POOLSWISH_SWISH_TYPE,
	.forward = swish_forward,
	.onnx_export = swish_onnx,
};

NNN_PLUGIN_EXPORT nnn_status_t NNN_PLUGIN_ENTRY(const nnn_host_t *h, nnn_decl_t *d)
{
	static const nnn_plugin_info_t info = NNN_PLUGIN_INFO("poolswish", "1.0");
	nnn_status_t st = h->declare(d, &info);
	if (st == NNN_OK)
		st = h->add_layer(d, &maxpool);
	if (st == NNN_OK)
		st = h->add_activation(d, &swish);
	return st;
}
