/* poolswish: an out-of-tree nnnkit plugin. A layer type of N-D max pooling
 * (window `pool`, step `stride`, no padding, channels-last) and an activation,
 * Swish, y = x * sigmoid(beta * x). The codec for their fields is
 * generated from schema.lua by nnngen (poolswish_gen.c/h); this file holds
 * only what a generator cannot write: shapes and kernels. */
#include <math.h>
#include <stdbool.h>
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
/* The Transposes around ONNX's channels-first MaxPool of n spatial axes:
 * to channels-first [0, n+1, 1..n] and back [0, 2..n+1, 1]. */
static void perms(int32_t n, int64_t *to_cf, int64_t *to_cl)
{
	to_cf[0] = to_cl[0] = 0;
	to_cf[1] = n + 1;
	to_cl[n + 1] = 1;
	for (int32_t j = 0; j < n; j++) {
		to_cf[2 + j] = 1 + j;
		to_cl[1 + j] = 2 + j;
	}
}

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
	perms(n, to_cf, to_cl);
	for (int32_t j = 0; j < n; j++) {
		ks[j] = p->pool.v[j];
		st[j] = p->stride.v[j];
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
/* Whether offered node k is an `op` whose input `in` comes from `from`. */
static bool node_is(const nnn_host_t *h, const nnn_onnx_match_t *m, int k, const char *op, int in, int from)
{
	const char *o = h->onnx_op(m, k);
	return o && !strcmp(o, op) && h->onnx_input(m, k, in) == from;
}

/* Whether node k's attribute `name` is the n ints of want. */
static bool ints_are(const nnn_host_t *h, const nnn_onnx_match_t *m, int k, const char *name, const int64_t *want,
                     int n)
{
	int64_t v[NNN_MAX_RANK];
	if (h->onnx_attr_ints(m, k, name, v, NNN_MAX_RANK) != n)
		return false;
	for (int j = 0; j < n; j++)
		if (v[j] != want[j])
			return false;
	return true;
}

/* What pool_onnx writes, read back (ABI 1.7): Transpose, MaxPool of no
 * padding, dilation or ceil mode, Transpose, and an Add of a float vector
 * when the layer has a bias. */
static int pool_onnx_import(const nnn_host_t *h, nnn_onnx_match_t *m)
{
	int64_t ks[3], st[3], to_cf[5], to_cl[5], dims[NNN_MAX_RANK];
	int rank;
	const float *bias;
	if (!node_is(h, m, 0, "Transpose", 0, NNN_ONNX_FROM_X) || !node_is(h, m, 1, "MaxPool", 0, 0) ||
	    !node_is(h, m, 2, "Transpose", 0, 1))
		return 0;
	int n = h->onnx_attr_ints(m, 1, "kernel_shape", ks, 3);
	if (n < 1 || n > 3 || h->onnx_attr_ints(m, 1, "strides", st, 3) != n || h->onnx_attr_ints(m, 1, "pads", NULL, 0) >= 0 ||
	    h->onnx_attr_ints(m, 1, "dilations", NULL, 0) >= 0 || h->onnx_attr_ints(m, 1, "ceil_mode", NULL, 0) >= 0)
		return 0;
	perms(n, to_cf, to_cl);
	if (!ints_are(h, m, 0, "perm", to_cf, n + 2) || !ints_are(h, m, 2, "perm", to_cl, n + 2))
		return 0;
	if (h->onnx_set_ints(m, poolswish_maxpool_desc.fields[POOLSWISH_AT_MAXPOOL_POOL].name, ks, n) != NNN_OK ||
	    h->onnx_set_ints(m, poolswish_maxpool_desc.fields[POOLSWISH_AT_MAXPOOL_STRIDE].name, st, n) != NNN_OK)
		return 0;
	if (!node_is(h, m, 3, "Add", 0, 2) || h->onnx_input(m, 3, 1) != NNN_ONNX_FROM_CONST ||
	    h->onnx_const(m, 3, 1, dims, &rank, &bias) < 1 || rank != 1)
		return 3;
	return h->onnx_set_tensor(m, "bias", dims, 1, bias) == NNN_OK ? 4 : 0;
}

/* What swish_onnx writes, read back (ABI 1.7): Mul by a float scalar,
 * Sigmoid, Mul by the input. */
static int swish_onnx_import(const nnn_host_t *h, nnn_onnx_match_t *m)
{
	int64_t dims[NNN_MAX_RANK];
	int rank;
	const float *beta;
	if (!node_is(h, m, 0, "Mul", 0, NNN_ONNX_FROM_X) || h->onnx_input(m, 0, 1) != NNN_ONNX_FROM_CONST ||
	    !node_is(h, m, 1, "Sigmoid", 0, 0) || !node_is(h, m, 2, "Mul", 0, NNN_ONNX_FROM_X) ||
	    h->onnx_input(m, 2, 1) != 1 || h->onnx_const(m, 0, 1, dims, &rank, &beta) != 1)
		return 0;
	return h->onnx_set_number(m, poolswish_swish_desc.fields[POOLSWISH_AT_SWISH_BETA].name, beta[0]) == NNN_OK ? 3 : 0;
}

static const nnn_layer_type_t maxpool = {
	POOLSWISH_MAXPOOL_TYPE,
	.infer = pool_infer,
	.forward = pool_forward,
	.onnx_export = pool_onnx,
	.onnx_import = pool_onnx_import,
};

static const nnn_activation_type_t swish = {
	POOLSWISH_SWISH_TYPE,
	.forward = swish_forward,
	.onnx_export = swish_onnx,
	.onnx_import = swish_onnx_import,
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
