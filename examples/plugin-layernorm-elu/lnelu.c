/* lnelu: an out-of-tree nnnkit plugin. A layer type, LayerNorm over the
 * last axis, and two activations, ELU and GELU, which has no parameters
 * (schema.lua gives their IDs, names, titles and fields). The codec is generated from schema.lua by nnngen (lnelu_gen.c/h);
 * this file holds what a generator cannot write: shapes and kernels. It
 * uses the host table and the header-only helpers of <nnn/types.h> only,
 * never libnnn. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "lnelu_gen.h"

/* LayerNorm keeps the shape; its last axis must be gamma's length (the
 * schema's rules already tie beta and the bias to gamma). */
static nnn_status_t ln_infer(const nnn_layer_t *layer, const void *body, const nnn_shape_t *in, nnn_shape_t *out,
                             char *msg, size_t msg_size)
{
	const lnelu_layer_norm_t *p = body;
	(void)layer;
	if (in->rank < 2 || in->dims[in->rank - 1] != p->gamma.data.n) {
		snprintf(msg, msg_size, "LayerNorm over %d features needs input [batch, ..., %d], found rank %d with last axis %lld",
		         (int)p->gamma.data.n, (int)p->gamma.data.n, (int)in->rank,
		         in->rank ? (long long)in->dims[in->rank - 1] : 0LL);
		return NNN_E_INPUT_SHAPE;
	}
	*out = *in;
	return NNN_OK;
}

/* gamma, beta and the bias as host floats, read once per plan. */
static nnn_status_t ln_prepare(const nnn_layer_t *layer, const void *body, const nnn_shape_t *in, void **state,
                               char *msg, size_t msg_size)
{
	const lnelu_layer_norm_t *p = body;
	size_t n = (size_t)p->gamma.data.n;
	float *s = malloc(3 * n * sizeof *s);
	(void)in;
	if (!s) {
		snprintf(msg, msg_size, "out of memory for %zu features", n);
		return NNN_E_NOMEM;
	}
	nnn_f32s_read(p->gamma.data, s);
	nnn_f32s_read(p->beta.data, s + n);
	nnn_f32s_read(layer->bias.data, s + 2 * n);
	*state = s;
	return NNN_OK;
}

static void ln_release(void *state)
{
	free(state);
}

static nnn_status_t ln_forward(const nnn_kernel_args_t *a, char *msg, size_t msg_size)
{
	const lnelu_layer_norm_t *p = a->body;
	const float *g = a->state;
	int64_t n = p->gamma.data.n, rows = 1;
	(void)msg, (void)msg_size;
	for (int32_t i = 0; i < a->in->rank - 1; i++)
		rows *= a->in->dims[i];
	for (int64_t r = 0; r < rows; r++) {
		const float *x = a->x + r * n;
		float *y = a->y + r * n;
		double mean = 0, var = 0;
		for (int64_t i = 0; i < n; i++)
			mean += x[i];
		mean /= (double)n;
		for (int64_t i = 0; i < n; i++)
			var += (x[i] - mean) * (x[i] - mean);
		var /= (double)n;
		double inv = 1.0 / sqrt(var + p->epsilon);
		for (int64_t i = 0; i < n; i++)
			y[i] = (float)((x[i] - mean) * inv) * g[i] + g[n + i] + g[2 * n + i];
	}
	return NNN_OK;
}

static nnn_status_t elu_forward(const nnn_activation_t *act, const void *params, const nnn_shape_t *shape, float *x,
                                int threads)
{
	const lnelu_elu_t *e = params;
	int64_t n = 1;
	(void)act, (void)threads;
	for (int32_t i = 0; i < shape->rank; i++)
		n *= shape->dims[i];
	for (int64_t i = 0; i < n; i++)
		x[i] = x[i] > 0 ? x[i] : e->alpha * expm1f(x[i]);
	return NNN_OK;
}

/* GELU, exact (erf, not the tanh approximation), in double as the reference. */
static nnn_status_t gelu_forward(const nnn_activation_t *act, const void *params, const nnn_shape_t *shape, float *x,
                                 int threads)
{
	int64_t n = 1;
	(void)act, (void)params, (void)threads; /* no parameters: params points at nothing */
	for (int32_t i = 0; i < shape->rank; i++)
		n *= shape->dims[i];
	for (int64_t i = 0; i < n; i++)
		x[i] = (float)(0.5 * x[i] * (1.0 + erf(x[i] * 0.70710678118654752440)));
	return NNN_OK;
}

/* ID, name, title and codec come from schema.lua (the TYPE macros). */
static const nnn_layer_type_t layer_norm = {
	LNELU_LAYER_NORM_TYPE,
	.infer = ln_infer,
	.prepare = ln_prepare,
	.release = ln_release,
	.forward = ln_forward,
};

static const nnn_activation_type_t elu = {
	LNELU_ELU_TYPE,
	.forward = elu_forward,
};

static const nnn_activation_type_t gelu = {
	LNELU_GELU_TYPE,
	.forward = gelu_forward,
};

NNN_PLUGIN_EXPORT nnn_status_t NNN_PLUGIN_ENTRY(const nnn_host_t *h, nnn_decl_t *d)
{
	static const nnn_plugin_info_t info = NNN_PLUGIN_INFO("lnelu", "1.0");
	nnn_status_t s = h->declare(d, &info);
	if (s == NNN_OK)
		s = h->add_layer(d, &layer_norm);
	if (s == NNN_OK)
		s = h->add_activation(d, &elu);
	if (s == NNN_OK)
		s = h->add_activation(d, &gelu);
	return s;
}
