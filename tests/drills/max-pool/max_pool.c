/* max_pool.c: N-D max pooling, channels-last: for every output position
 * and channel, the largest input inside its window (padded cells do not
 * count), then the bias when the layer has one ([channels]; an empty one,
 * [0], adds nothing). Shapes come from the host's shape engine (the
 * schema's io of max_pool); the loops check every index against the input,
 * so no shape can make them read outside it. The steps of a core kernel
 * (docs/growing-the-format.md, "Adding a core kernel"): this file's forward
 * and ONNX hook, their prototypes in builtin.h, the descriptor in entry.c. */
#include <math.h>
#include <stdlib.h>

#include "builtin.h"

static nnn_status_t pool_check(const nnn_kernel_args_t *a, char *msg, size_t msg_size)
{
	const nnn_max_pool_t *p;
	int32_t n;
	if (!a || a->size < offsetof(nnn_kernel_args_t, threads) + sizeof a->threads || !a->layer || !a->in || !a->out)
		return bi_fail(msg, msg_size, NNN_E_KERNEL, "kernel arguments are missing or too short");
	p = &a->layer->body.max_pool;
	n = p->pool.n;
	if (n < 1 || a->in->rank != n + 2 || a->out->rank != n + 2)
		return bi_fail(msg, msg_size, NNN_E_KERNEL, "a %d-D pool needs rank %d input and output", (int)n, (int)n + 2);
	if (p->strides.n != n || (p->padding_dims.n != 2 * n && p->padding_dims.n != 0))
		return bi_fail(msg, msg_size, NNN_E_KERNEL, "strides or padding dims do not fit the pool");
	if (a->in->dims[n + 1] != a->out->dims[n + 1] || a->in->dims[0] != a->out->dims[0])
		return bi_fail(msg, msg_size, NNN_E_KERNEL, "input and output differ in batch or channels");
	if (a->in->dims[n + 1] != p->channels)
		return bi_fail(msg, msg_size, NNN_E_KERNEL, "the input has %lld channels, the layer %d",
		               (long long)a->in->dims[n + 1], (int)p->channels);
	if (a->layer->bias.data.n != 0 && a->layer->bias.data.n != p->channels)
		return bi_fail(msg, msg_size, NNN_E_KERNEL, "bias has %d values, expected 0 or one per channel",
		               (int)a->layer->bias.data.n);
	if ((bi_numel(a->in) > 0 && !a->x) || (bi_numel(a->out) > 0 && !a->y))
		return bi_fail(msg, msg_size, NNN_E_KERNEL, "input or output buffer is NULL");
	return NNN_OK;
}

nnn_status_t bi_max_pool_forward(const nnn_kernel_args_t *a, char *msg, size_t msg_size)
{
	nnn_status_t st = pool_check(a, msg, msg_size);
	if (st != NNN_OK)
		return st;
	const nnn_max_pool_t *p = &a->layer->body.max_pool;
	const nnn_tensor_t *bias = &a->layer->bias;
	int32_t n = p->pool.n;
	int64_t C = a->in->dims[n + 1], opos = 1, taps = 1, o[NNN_MAX_RANK], w[NNN_MAX_RANK];
	for (int32_t j = 0; j < n; j++) {
		opos *= a->out->dims[1 + j];
		taps *= p->pool.v[j];
	}
	for (int64_t b = 0; b < a->in->dims[0]; b++) {
		const float *x = a->x + b * (bi_numel(a->in) / a->in->dims[0]);
		float *y = a->y + b * opos * C;
		for (int64_t q = 0; q < opos; q++) {
			int64_t r = q;
			for (int32_t j = n - 1; j >= 0; j--) { /* the output position, row-major */
				o[j] = r % a->out->dims[1 + j];
				r /= a->out->dims[1 + j];
			}
			for (int64_t c = 0; c < C; c++) {
				float m = -INFINITY;
				for (int64_t t = 0; t < taps; t++) {
					int64_t u = t, at = 0;
					bool inside = true;
					for (int32_t j = n - 1; j >= 0; j--) {
						w[j] = u % p->pool.v[j];
						u /= p->pool.v[j];
					}
					for (int32_t j = 0; j < n && inside; j++) {
						int64_t before = p->padding_dims.n ? p->padding_dims.v[2 * j] : 0;
						int64_t i = o[j] * p->strides.v[j] - before + w[j];
						inside = i >= 0 && i < a->in->dims[1 + j];
						at = at * a->in->dims[1 + j] + i;
					}
					if (inside && x[at * C + c] > m)
						m = x[at * C + c];
				}
				y[q * C + c] = m + (bias->data.n ? nnn_f32s_get(bias->data, c) : 0.0f);
			}
		}
	}
	return NNN_OK;
}

/* ONNX: Transpose to channels-first, MaxPool (a padded cell never wins, as
 * here), Transpose back, then Add the bias when the layer has one. */
nnn_status_t bi_max_pool_onnx(const nnn_host_t *h, nnn_onnx_graph_t *g, const nnn_layer_t *layer, const void *body,
                              const nnn_pshape_t *in, const char *x, const char **y)
{
	const nnn_max_pool_t *p = body;
	int n = p->pool.n;
	int64_t ks[NNN_MAX_RANK], st[NNN_MAX_RANK], pads[2 * NNN_MAX_RANK], to_cf[NNN_MAX_RANK], to_cl[NNN_MAX_RANK];
	(void)in;
	if (n < 1 || n > 3 || p->strides.n != n || (p->padding_dims.n != 2 * n && p->padding_dims.n != 0))
		return h->onnx_fail(g, "a MaxPool of %d spatial dims (ONNX runtimes pool 1 to 3)", n);
	to_cf[0] = to_cl[0] = 0;
	to_cf[1] = n + 1;
	to_cl[n + 1] = 1;
	for (int i = 0; i < n; i++) {
		ks[i] = p->pool.v[i];
		st[i] = p->strides.v[i];
		pads[i] = p->padding_dims.n ? p->padding_dims.v[2 * i] : 0;         /* befores first, */
		pads[n + i] = p->padding_dims.n ? p->padding_dims.v[2 * i + 1] : 0; /* then afters */
		to_cf[2 + i] = 1 + i;
		to_cl[1 + i] = 2 + i;
	}
	nnn_onnx_attr_t perm = { .name = "perm", .kind = NNN_ONNX_ATTR_INTS, .ints = to_cf, .n = n + 2 };
	const char *xt = h->onnx_node(g, "Transpose", "to_channels_first", &x, 1, &perm, 1);
	nnn_onnx_attr_t attrs[3] = { { .name = "kernel_shape", .kind = NNN_ONNX_ATTR_INTS, .ints = ks, .n = n },
		                     { .name = "strides", .kind = NNN_ONNX_ATTR_INTS, .ints = st, .n = n },
		                     { .name = "pads", .kind = NNN_ONNX_ATTR_INTS, .ints = pads, .n = 2 * n } };
	const char *pool = xt ? h->onnx_node(g, "MaxPool", "max_pool", &xt, 1, attrs, 3) : NULL;
	perm.ints = to_cl;
	*y = pool ? h->onnx_node(g, "Transpose", "to_channels_last", &pool, 1, &perm, 1) : NULL;
	if (*y && layer->bias.data.n) {
		int64_t dims[1] = { layer->bias.data.n };
		float *b = malloc((size_t)layer->bias.data.n * sizeof *b);
		if (!b)
			return h->onnx_fail(g, "out of memory copying the bias");
		nnn_f32s_read(layer->bias.data, b);
		const char *add[2] = { *y, h->onnx_floats(g, "bias", dims, 1, b) };
		free(b);
		*y = add[1] ? h->onnx_node(g, "Add", "add", add, 2, NULL, 0) : NULL;
	}
	return *y ? NNN_OK : NNN_E_ONNX_EXPORT;
}
