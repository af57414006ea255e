/* conv.c: the N-D Conv layer (cross-correlation, stride 1, channels-last) as
 * im2col in bounded chunks of output rows, each followed by one sgemm
 * against the kernels viewed as [filters, k1*..*kn*channels]. */
#include <cblas.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "builtin.h"

/* Checks the layer's own tensors agree (the validator normally has). */
static nnn_status_t conv_check(const nnn_layer_t *layer, char *msg, size_t msg_size)
{
	const nnn_conv_t *cv = &layer->body.conv;
	const nnn_tensor_t *k = &cv->kernels;
	int32_t n;
	if (cv->filters < 1)
		return bi_fail(msg, msg_size, NNN_E_SHAPE, "filters is %d, expected >= 1", (int)cv->filters);
	if (!bi_tensor_ok(k))
		return bi_fail(msg, msg_size, NNN_E_SHAPE, "kernels hold %d values, which their dims do not give",
		               (int)k->data.n);
	if (k->dims.n < 3 || k->dims.n > NNN_MAX_RANK)
		return bi_fail(msg, msg_size, NNN_E_SHAPE, "kernels have %d dims, expected 3 to %d: [filters, k1..kn, channels]",
		               (int)k->dims.n, NNN_MAX_RANK);
	n = k->dims.n - 2;
	if (k->dims.v[0] != cv->filters)
		return bi_fail(msg, msg_size, NNN_E_SHAPE, "kernels have %d filters, expected %d", (int)k->dims.v[0],
		               (int)cv->filters);
	for (int32_t i = 1; i < k->dims.n; i++)
		if (k->dims.v[i] < 1)
			return bi_fail(msg, msg_size, NNN_E_SHAPE, "kernels dim %d is %d, expected >= 1", (int)i,
			               (int)k->dims.v[i]);
	if (cv->padding_dims.n != 2 * n || !cv->padding_dims.v)
		return bi_fail(msg, msg_size, NNN_E_SHAPE, "%d padding dims for a %d-D convolution, expected %d",
		               (int)cv->padding_dims.n, (int)n, (int)(2 * n));
	for (int32_t i = 0; i < 2 * n; i++)
		if (cv->padding_dims.v[i] < 0)
			return bi_fail(msg, msg_size, NNN_E_SHAPE, "padding dim %d is %d, expected >= 0", (int)i,
			               (int)cv->padding_dims.v[i]);
	if (!bi_tensor_ok(&layer->bias) || layer->bias.data.n != cv->filters)
		return bi_fail(msg, msg_size, NNN_E_SHAPE, "bias has %d values, expected %d (one per filter)",
		               (int)layer->bias.data.n, (int)cv->filters);
	return NNN_OK;
}

nnn_status_t bi_conv_infer(const nnn_layer_t *layer, const void *body, const nnn_shape_t *in, nnn_shape_t *out,
                           char *msg, size_t msg_size)
{
	const nnn_conv_t *cv;
	const int32_t *kd, *pad;
	int32_t n, c;
	nnn_status_t st;
	char buf[128];
	(void)body; /* core type: its fields are layer->body.conv */
	if (!layer || !in || !out)
		return bi_fail(msg, msg_size, NNN_E_USAGE, "infer needs a layer, an input and an output shape");
	if ((st = conv_check(layer, msg, msg_size)) != NNN_OK || (st = bi_check_input(in, msg, msg_size)) != NNN_OK)
		return st;
	cv = &layer->body.conv;
	kd = cv->kernels.dims.v;
	pad = cv->padding_dims.v;
	n = cv->kernels.dims.n - 2;
	c = kd[n + 1];
	if (in->rank != n + 2)
		return bi_fail(msg, msg_size, NNN_E_INPUT_SHAPE,
		               "a %d-D convolution needs rank %d input [batch, d1..d%d, channels], found %s (rank %d)",
		               (int)n, (int)n + 2, (int)n, bi_shape_str(in, buf, sizeof buf), (int)in->rank);
	if (in->dims[n + 1] != c)
		return bi_fail(msg, msg_size, NNN_E_INPUT_SHAPE, "input %s has %lld channels, but the kernels take %d",
		               bi_shape_str(in, buf, sizeof buf), (long long)in->dims[n + 1], (int)c);
	for (int32_t j = 0; j < n; j++) {
		int64_t d = in->dims[1 + j], o;
		if (d > INT64_MAX - 2 * (int64_t)INT32_MAX)
			return bi_fail(msg, msg_size, NNN_E_INPUT_SHAPE, "input axis %d of size %lld is too large",
			               (int)j + 1, (long long)d);
		o = d + pad[2 * j] + pad[2 * j + 1] - kd[1 + j] + 1;
		if (o < 1)
			return bi_fail(msg, msg_size, NNN_E_INPUT_SHAPE,
			               "input %s: axis %d of size %lld (padded by %d and %d) is smaller than kernel size %d",
			               bi_shape_str(in, buf, sizeof buf), (int)j + 1, (long long)d, (int)pad[2 * j],
			               (int)pad[2 * j + 1], (int)kd[1 + j]);
		out->dims[1 + j] = o;
	}
	out->rank = n + 2;
	out->dims[0] = in->dims[0];
	out->dims[n + 1] = cv->filters;
	if (bi_numel(out) < 0)
		return bi_fail(msg, msg_size, NNN_E_INPUT_SHAPE, "output %s would have more than 2^63 elements",
		               bi_shape_str(out, buf, sizeof buf));
	return NNN_OK;
}

nnn_status_t bi_conv_prepare(const nnn_layer_t *layer, const void *body, const nnn_shape_t *in, void **state,
                             char *msg, size_t msg_size)
{
	nnn_shape_t out;
	nnn_status_t st = bi_conv_infer(layer, body, in, &out, msg, msg_size);
	if (st != NNN_OK)
		return st;
	*state = bi_params_new(&layer->body.conv.kernels, &layer->bias);
	if (!*state)
		return bi_fail(msg, msg_size, NNN_E_NOMEM, "out of memory copying %d kernel values",
		               (int)layer->body.conv.kernels.data.n);
	return NNN_OK;
}

/* The geometry of one forward call, in elements. */
typedef struct geom {
	int32_t n;         /* spatial rank */
	int64_t c, f;      /* channels, filters */
	int64_t kc;        /* k1*..*kn*c: one im2col row */
	int64_t batch, opos; /* batch, o1*..*on */
	int64_t d[NNN_MAX_RANK], o[NNN_MAX_RANK], k[NNN_MAX_RANK], before[NNN_MAX_RANK];
	int64_t stride[NNN_MAX_RANK]; /* input floats per step along each spatial axis */
	int64_t bstride;   /* input floats per batch item */
} geom_t;

static void geom_init(geom_t *g, const nnn_conv_t *cv, const nnn_shape_t *in, const nnn_shape_t *out)
{
	g->n = cv->kernels.dims.n - 2;
	g->f = cv->filters;
	g->c = cv->kernels.dims.v[g->n + 1];
	g->kc = g->c;
	g->batch = in->dims[0];
	g->opos = 1;
	for (int32_t j = 0; j < g->n; j++) {
		g->d[j] = in->dims[1 + j];
		g->o[j] = out->dims[1 + j];
		g->k[j] = cv->kernels.dims.v[1 + j];
		g->before[j] = cv->padding_dims.v[2 * j];
		g->kc *= g->k[j];
		g->opos *= g->o[j];
	}
	g->stride[g->n - 1] = g->c;
	for (int32_t j = g->n - 2; j >= 0; j--)
		g->stride[j] = g->stride[j + 1] * g->d[j + 1];
	g->bstride = g->stride[0] * g->d[0];
}

/* Fills m rows of col (kc floats each) for output rows r0..r0+m-1: row r is
 * the zero-padded input patch under output position r, in kernel order
 * (k1..kn, then channels). Along the last spatial axis a patch row is one
 * contiguous run of the input, so it is copied whole. */
static void im2col(const geom_t *g, const float *x, int64_t r0, int64_t m, float *col)
{
	const int32_t last = g->n - 1;
	const int64_t klast = g->k[last], run = klast * g->c, outer = g->kc / run;
	int64_t pos[NNN_MAX_RANK], t[NNN_MAX_RANK];
	int64_t b = r0 / g->opos, rem = r0 % g->opos;

	for (int32_t j = last; j >= 0; j--) {
		pos[j] = rem % g->o[j];
		rem /= g->o[j];
	}
	for (int64_t r = 0; r < m; r++) {
		const float *xb = x + b * g->bstride;
		memset(t, 0, (size_t)g->n * sizeof t[0]);
		for (int64_t q = 0; q < outer; q++, col += run) {
			int64_t off = 0, s, lo, hi;
			bool inside = true;
			for (int32_t j = 0; j < last && inside; j++) {
				int64_t i = pos[j] + t[j] - g->before[j];
				inside = i >= 0 && i < g->d[j];
				off += i * g->stride[j];
			}
			for (int32_t j = last - 1; j >= 0; j--) { /* next kernel position over axes 1..n-1 */
				if (++t[j] < g->k[j])
					break;
				t[j] = 0;
			}
			s = pos[last] - g->before[last]; /* input index under the run's first tap */
			lo = s < 0 ? 0 : s;
			hi = s + klast < g->d[last] ? s + klast : g->d[last];
			if (!inside || hi <= lo) {
				memset(col, 0, (size_t)run * sizeof *col);
				continue;
			}
			memset(col, 0, (size_t)((lo - s) * g->c) * sizeof *col);
			memcpy(col + (lo - s) * g->c, xb + off + lo * g->c, (size_t)((hi - lo) * g->c) * sizeof *col);
			memset(col + (hi - s) * g->c, 0, (size_t)((s + klast - hi) * g->c) * sizeof *col);
		}
		for (int32_t j = last; j >= 0; j--) { /* next output position, then next batch item */
			if (++pos[j] < g->o[j])
				break;
			pos[j] = 0;
			if (j == 0)
				b++;
		}
	}
}

nnn_status_t bi_conv_forward(const nnn_kernel_args_t *a, char *msg, size_t msg_size)
{
	const nnn_conv_t *cv;
	const bi_params_t *p;
	bi_params_t *tmp;
	float *col = NULL;
	geom_t g = { 0 };
	int64_t rows, chunk;
	bool direct;
	nnn_status_t st = bi_check_args(a, bi_conv_infer, msg, msg_size);
	if (st != NNN_OK)
		return st;
	cv = &a->layer->body.conv;
	if ((st = bi_params_get(a, &cv->kernels, &p, &tmp, msg, msg_size)) != NNN_OK)
		return st;
	geom_init(&g, cv, a->in, a->out);
	rows = g.batch * g.opos;
	bi_fill_bias(a->y, rows, g.f, p->b);
	/* A 1x..x1 kernel without padding reads x as it is: no im2col. */
	direct = g.kc == g.c;
	for (int32_t i = 0; i < 2 * g.n; i++)
		direct = direct && cv->padding_dims.v[i] == 0;
	/* BLAS takes int sizes: keep every count and offset it computes below INT_MAX. */
	chunk = INT_MAX / (g.kc > g.f ? g.kc : g.f);
	if (!direct) {
		if (chunk > BI_SCRATCH_FLOATS / g.kc)
			chunk = BI_SCRATCH_FLOATS / g.kc > 0 ? BI_SCRATCH_FLOATS / g.kc : 1;
		if (chunk > rows)
			chunk = rows;
		if (rows > 0 && !(col = malloc((size_t)(chunk * g.kc) * sizeof *col))) {
			free(tmp);
			return bi_fail(msg, msg_size, NNN_E_NOMEM, "out of memory for %lld floats of im2col scratch",
			               (long long)(chunk * g.kc));
		}
	}
	for (int64_t r0 = 0; r0 < rows; r0 += chunk) {
		int64_t m = rows - r0 < chunk ? rows - r0 : chunk;
		const float *src = a->x + r0 * g.c;
		if (!direct) {
			im2col(&g, a->x, r0, m, col);
			src = col;
		}
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)m, (int)g.f, (int)g.kc, 1.0f, src, (int)g.kc,
		            p->w, (int)g.kc, 1.0f, a->y + r0 * g.f, (int)g.f);
	}
	free(col);
	free(tmp);
	return NNN_OK;
}
