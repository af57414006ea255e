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

/* ID, name, title and codec come from schema.lua (the TYPE macros). */
static const nnn_layer_type_t maxpool = {
	POOLSWISH_MAXPOOL_TYPE,
	.infer = pool_infer,
	.forward = pool_forward,
};

static const nnn_activation_type_t swish = {
	POOLSWISH_SWISH_TYPE,
	.forward = swish_forward,
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
