/* lnelu: an out-of-tree nnnkit plugin. A layer type, LayerNorm over the
 * last axis, and two activations, ELU and GELU, which has no parameters
 * (schema.lua gives their IDs, names, titles and fields). The codec is generated from schema.lua by nnngen (lnelu_gen.c/h);
 * this file holds what a generator cannot write: shapes and kernels. It
 * uses the host table and the header-only helpers of <nnn/types.h> only,
 * never libnnn. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* ---- ONNX: export (ABI 1.5) and import (ABI 1.7) of one node pattern each ----
 * A pattern is a list of nodes, each with an op and two inputs: the value
 * entering the pattern, the pattern's next constant, an earlier node's
 * output, or none. Export writes it, import reads it back: one table. */

enum { IN_X = -1, IN_C = -2, IN_NONE = -3 };

typedef struct step {
	const char *op;
	int a, b;
} step_t;

/* LayerNorm over the last axis, as opset 13 has it (LayerNormalization is
 * 17's): constants epsilon, gamma, beta, bias. */
static const step_t LN[] = {
	{ "ReduceMean", IN_X, IN_NONE }, { "Sub", IN_X, 0 }, { "Mul", 1, 1 }, { "ReduceMean", 2, IN_NONE },
	{ "Add", 3, IN_C }, { "Sqrt", 4, IN_NONE }, { "Div", 1, 5 }, { "Mul", 6, IN_C }, { "Add", 7, IN_C },
	{ "Add", 8, IN_C },
};
#define LN_NODES ((int)(sizeof LN / sizeof LN[0]))

/* GELU as torch.onnx.export writes nn.GELU(): constants sqrt(2), 1, 0.5. */
static const step_t GELU[] = {
	{ "Div", IN_X, IN_C }, { "Erf", 0, IN_NONE }, { "Add", 1, IN_C }, { "Mul", IN_X, 2 }, { "Mul", 3, IN_C },
};
#define GELU_NODES ((int)(sizeof GELU / sizeof GELU[0]))
static const float GELU_CONSTS[3] = { 1.41421356237309504880f, 1.0f, 0.5f };

/* ReduceMean's axes: the last. */
static const int64_t LAST_AXIS[1] = { -1 };

/* Writes the pattern from x with its constants' value names; its output, or NULL. */
static const char *write_steps(const nnn_host_t *h, nnn_onnx_graph_t *g, const step_t *s, int n, const char *x,
                               const char *const *consts)
{
	const char *out[16];
	nnn_onnx_attr_t axes = { .name = "axes", .kind = NNN_ONNX_ATTR_INTS, .ints = LAST_AXIS, .n = 1 };
	for (int k = 0, c = 0; k < n; k++) {
		const char *in[2];
		int ab[2] = { s[k].a, s[k].b }, nin = 0;
		for (int j = 0; j < 2; j++)
			if (ab[j] != IN_NONE)
				in[nin++] = ab[j] == IN_X ? x : ab[j] == IN_C ? consts[c++] : out[ab[j]];
		bool mean = !strcmp(s[k].op, "ReduceMean");
		for (int j = 0; j < nin; j++)
			if (!in[j])
				return NULL;
		out[k] = h->onnx_node(g, s[k].op, s[k].op, in, nin, mean ? &axes : NULL, mean);
	}
	return out[n - 1];
}

/* Whether the offered nodes start with the pattern; its constants (float
 * values and counts, ranks up to 1) into c. */
static bool read_steps(const nnn_host_t *h, const nnn_onnx_match_t *m, const step_t *s, int n, const float **c,
                       int64_t *count)
{
	int64_t ax[2], dims[NNN_MAX_RANK];
	for (int k = 0, nc = 0; k < n; k++) {
		const char *op = h->onnx_op(m, k);
		int ab[2] = { s[k].a, s[k].b };
		if (!op || strcmp(op, s[k].op))
			return false;
		if (!strcmp(op, "ReduceMean") && (h->onnx_attr_ints(m, k, "axes", ax, 2) != 1 || ax[0] != -1))
			return false;
		for (int j = 0; j < 2; j++) {
			int want = ab[j] == IN_X ? NNN_ONNX_FROM_X : ab[j] == IN_C ? NNN_ONNX_FROM_CONST : ab[j];
			int rank = 0;
			if (ab[j] == IN_NONE)
				continue;
			if (h->onnx_input(m, k, j) != want)
				return false;
			if (ab[j] == IN_C &&
			    ((count[nc] = h->onnx_const(m, k, j, dims, &rank, &c[nc])) < 1 || rank > 1))
				return false;
			nc += ab[j] == IN_C;
		}
	}
	return true;
}

static nnn_status_t ln_onnx(const nnn_host_t *h, nnn_onnx_graph_t *g, const nnn_layer_t *layer, const void *body,
                            const nnn_pshape_t *in, const char *x, const char **y)
{
	const lnelu_layer_norm_t *p = body;
	int64_t n = p->gamma.data.n;
	float *v = malloc(3 * (size_t)n * sizeof *v);
	(void)in;
	if (!v)
		return h->onnx_fail(g, "out of memory for %lld features", (long long)n);
	nnn_f32s_read(p->gamma.data, v);
	nnn_f32s_read(p->beta.data, v + n);
	nnn_f32s_read(layer->bias.data, v + 2 * n);
	const char *c[4] = { h->onnx_floats(g, "epsilon", NULL, 0, &p->epsilon), h->onnx_floats(g, "gamma", &n, 1, v),
		             h->onnx_floats(g, "beta", &n, 1, v + n), h->onnx_floats(g, "bias", &n, 1, v + 2 * n) };
	free(v);
	*y = c[0] && c[1] && c[2] && c[3] ? write_steps(h, g, LN, LN_NODES, x, c) : NULL;
	return *y ? NNN_OK : NNN_E_ONNX_EXPORT;
}

static int ln_onnx_import(const nnn_host_t *h, nnn_onnx_match_t *m)
{
	const float *c[4];
	int64_t count[4];
	const nnn_fdesc_t *f = lnelu_layer_norm_desc.fields;
	if (!read_steps(h, m, LN, LN_NODES, c, count) || count[0] != 1 || count[2] != count[1] || count[3] != count[1])
		return 0;
	bool ok = h->onnx_set_number(m, f[LNELU_AT_LAYER_NORM_EPSILON].name, c[0][0]) == NNN_OK &&
	          h->onnx_set_tensor(m, f[LNELU_AT_LAYER_NORM_GAMMA].name, &count[1], 1, c[1]) == NNN_OK &&
	          h->onnx_set_tensor(m, f[LNELU_AT_LAYER_NORM_BETA].name, &count[2], 1, c[2]) == NNN_OK &&
	          h->onnx_set_tensor(m, "bias", &count[3], 1, c[3]) == NNN_OK;
	return ok ? LN_NODES : 0;
}

static nnn_status_t elu_onnx(const nnn_host_t *h, nnn_onnx_graph_t *g, const nnn_activation_t *act, const void *params,
                             const nnn_pshape_t *shape, const char *x, const char **y)
{
	const lnelu_elu_t *e = params;
	nnn_onnx_attr_t alpha = { .name = "alpha", .kind = NNN_ONNX_ATTR_FLOAT, .f = e->alpha };
	(void)act, (void)shape;
	*y = h->onnx_node(g, "Elu", "elu", &x, 1, &alpha, 1);
	return *y ? NNN_OK : NNN_E_ONNX_EXPORT;
}

static int elu_onnx_import(const nnn_host_t *h, nnn_onnx_match_t *m)
{
	float alpha = 1.0f; /* ONNX's default */
	const char *op = h->onnx_op(m, 0);
	if (!op || strcmp(op, "Elu") || h->onnx_input(m, 0, 0) != NNN_ONNX_FROM_X)
		return 0;
	h->onnx_attr_float(m, 0, "alpha", &alpha);
	return h->onnx_set_number(m, lnelu_elu_desc.fields[LNELU_AT_ELU_ALPHA].name, alpha) == NNN_OK;
}

static nnn_status_t gelu_onnx(const nnn_host_t *h, nnn_onnx_graph_t *g, const nnn_activation_t *act,
                              const void *params, const nnn_pshape_t *shape, const char *x, const char **y)
{
	const char *c[3];
	(void)act, (void)params, (void)shape;
	for (int i = 0; i < 3; i++)
		if (!(c[i] = h->onnx_floats(g, "gelu_c", NULL, 0, &GELU_CONSTS[i])))
			return NNN_E_ONNX_EXPORT;
	*y = write_steps(h, g, GELU, GELU_NODES, x, c);
	return *y ? NNN_OK : NNN_E_ONNX_EXPORT;
}

static int gelu_onnx_import(const nnn_host_t *h, nnn_onnx_match_t *m)
{
	const float *c[3];
	int64_t count[3];
	if (!read_steps(h, m, GELU, GELU_NODES, c, count))
		return 0;
	for (int i = 0; i < 3; i++)
		if (count[i] != 1 || c[i][0] != GELU_CONSTS[i])
			return 0;
	return GELU_NODES;
}

/* ID, name, title and codec come from schema.lua (the TYPE macros). */
static const nnn_layer_type_t layer_norm = {
	LNELU_LAYER_NORM_TYPE,
	.infer = ln_infer,
	.prepare = ln_prepare,
	.release = ln_release,
	.forward = ln_forward,
	.onnx_export = ln_onnx,
	.onnx_import = ln_onnx_import,
};

static const nnn_activation_type_t elu = {
	LNELU_ELU_TYPE,
	.forward = elu_forward,
	.onnx_export = elu_onnx,
	.onnx_import = elu_onnx_import,
};

static const nnn_activation_type_t gelu = {
	LNELU_GELU_TYPE,
	.forward = gelu_forward,
	.onnx_export = gelu_onnx,
	.onnx_import = gelu_onnx_import,
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
