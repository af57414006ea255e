/* conv.c: the N-D Conv layer (cross-correlation, stride 1, channels-last).
 *
 * With the micro-kernels of kern.c (AVX2 or AVX-512), no im2col: an output
 * position's patch is k1*..*k(n-1) runs of kn*channels contiguous floats
 * of the input (of a zero-padded copy of the item, when padded), which the
 * kernel reads in place for a block of neighbouring positions along the
 * last axis at a time. The portable path is im2col in bounded chunks of
 * output rows, each followed by one sgemm against the kernels viewed as
 * [filters, k1*..*kn*channels]. Either way the work is shared among
 * a->threads threads by chunks, the bias starts every sum, and the layer's
 * activation, when this plugin can fuse it, is applied to each chunk as
 * soon as it is complete.
 *
 * Asked for the original framework's arithmetic (nnn_kernel_args_t.compat,
 * NNN_COMPAT_CONV_ORIGINAL), a forward call whose kernel the original
 * computes differently makes a state of its own from the weights scaled
 * tap by tap (nnn/compat.h: the original's sum is the spec's with tap t
 * counted mult[t] times), and runs the same paths on it. */
#include <limits.h>
#include <stdint.h>
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

/* Checks each spatial axis padded by pad holds at least one window (the
 * loops' first), and that padding it cannot overflow. */
static nnn_status_t conv_room(const nnn_conv_t *cv, const nnn_shape_t *in, const int64_t *pad, char *msg,
                              size_t msg_size)
{
	char buf[128];
	for (int32_t j = 0; j < cv->kernels.dims.n - 2; j++) {
		int64_t d = in->dims[1 + j], k = cv->kernels.dims.v[1 + j];
		if (pad[2 * j] < 0 || pad[2 * j + 1] < 0 || pad[2 * j] > INT32_MAX || pad[2 * j + 1] > INT32_MAX)
			return bi_fail(msg, msg_size, NNN_E_KERNEL, "padding of axis %d is %lld before and %lld after, expected "
			               "0 to %d each", (int)j + 1, (long long)pad[2 * j], (long long)pad[2 * j + 1], INT32_MAX);
		if (d > INT64_MAX - 2 * (int64_t)INT32_MAX)
			return bi_fail(msg, msg_size, NNN_E_INPUT_SHAPE, "input axis %d of size %lld is too large",
			               (int)j + 1, (long long)d);
		if (k > d + pad[2 * j] + pad[2 * j + 1])
			return bi_fail(msg, msg_size, NNN_E_INPUT_SHAPE,
			               "input %s: axis %d of size %lld (padded by %lld and %lld) is smaller than kernel size %lld",
			               bi_shape_str(in, buf, sizeof buf), (int)j + 1, (long long)d, (long long)pad[2 * j],
			               (long long)pad[2 * j + 1], (long long)k);
	}
	return NNN_OK;
}

/* Checks an input is one the loops take: [batch, d1..dn, channels], with
 * the kernels' n and channels, each axis padded by pad holding a window. */
static nnn_status_t conv_input(const nnn_layer_t *layer, const nnn_shape_t *in, const int64_t *pad, char *msg,
                               size_t msg_size)
{
	const nnn_conv_t *cv = &layer->body.conv;
	int32_t n, c;
	nnn_status_t st;
	char buf[128];
	if ((st = conv_check(layer, msg, msg_size)) != NNN_OK || (st = bi_check_input(in, msg, msg_size)) != NNN_OK)
		return st;
	n = cv->kernels.dims.n - 2;
	c = cv->kernels.dims.v[n + 1];
	if (in->rank != n + 2)
		return bi_fail(msg, msg_size, NNN_E_INPUT_SHAPE,
		               "a %d-D convolution needs rank %d input [batch, d1..d%d, channels], found %s (rank %d)",
		               (int)n, (int)n + 2, (int)n, bi_shape_str(in, buf, sizeof buf), (int)in->rank);
	if (in->dims[n + 1] != c)
		return bi_fail(msg, msg_size, NNN_E_INPUT_SHAPE, "input %s has %lld channels, but the kernels take %d",
		               bi_shape_str(in, buf, sizeof buf), (long long)in->dims[n + 1], (int)c);
	return conv_room(cv, in, pad, msg, msg_size);
}

/* The padding of each spatial axis (pad[2j] before, pad[2j + 1] after):
 * the shape engine's (ABI 1.6), else the layer's padding_dims, which are
 * what the schema's io gives the engine for a Conv (a host before 1.6, a
 * caller without one, and work_bytes, which is given no padding). */
static const int64_t *conv_pads(const nnn_kernel_args_t *a, const nnn_conv_t *cv, int64_t *own)
{
	if (a && a->size >= offsetof(nnn_kernel_args_t, pad) + sizeof a->pad && a->pad)
		return a->pad;
	memset(own, 0, 2 * NNN_MAX_RANK * sizeof *own);
	for (int32_t i = 0; cv->padding_dims.v && i < cv->padding_dims.n && i < 2 * NNN_MAX_RANK; i++)
		own[i] = cv->padding_dims.v[i]; /* conv_check refuses a count that is not 2n */
	return own;
}

/* Checks an output and padding the shape engine computed are ones the loops
 * can run (out is not derived again): [batch, o1..on, filters], and along
 * each axis every window the loops read inside the padded input. */
static nnn_status_t conv_output(const nnn_layer_t *layer, const nnn_shape_t *in, const nnn_shape_t *out,
                                const int64_t *pad, char *msg, size_t msg_size)
{
	const nnn_conv_t *cv = &layer->body.conv;
	int32_t n = cv->kernels.dims.n - 2;
	char buf[128], got[128];
	if (out->rank != n + 2 || out->dims[0] != in->dims[0] || out->dims[n + 1] != cv->filters)
		return bi_fail(msg, msg_size, NNN_E_KERNEL, "output shape %s given for input %s, expected [%lld, o1..o%d, %d]",
		               bi_shape_str(out, got, sizeof got), bi_shape_str(in, buf, sizeof buf),
		               (long long)in->dims[0], (int)n, (int)cv->filters);
	for (int32_t j = 0; j < n; j++) {
		int64_t d = in->dims[1 + j], o = out->dims[1 + j], k = cv->kernels.dims.v[1 + j];
		/* stride 1: output position o - 1 reads padded positions up to o - 1 + k - 1
		 * (conv_room: the sum cannot overflow) */
		if (o < 1 || o + k - 1 > d + pad[2 * j] + pad[2 * j + 1])
			return bi_fail(msg, msg_size, NNN_E_KERNEL,
			               "output %s given for input %s: along axis %d, %lld windows of %lld do not fit in %lld "
			               "padded by %lld and %lld", bi_shape_str(out, got, sizeof got),
			               bi_shape_str(in, buf, sizeof buf), (int)j + 1, (long long)o, (long long)k,
			               (long long)d, (long long)pad[2 * j], (long long)pad[2 * j + 1]);
	}
	if (bi_numel(out) < 0)
		return bi_fail(msg, msg_size, NNN_E_INPUT_SHAPE, "output %s would have more than 2^63 elements",
		               bi_shape_str(out, buf, sizeof buf));
	return NNN_OK;
}

/* Checks a forward call's arguments: shapes the loops can run, buffers;
 * *pad: the padding to run (conv_pads, in own or the host's). */
static nnn_status_t conv_args(const nnn_kernel_args_t *a, int64_t *own, const int64_t **pad, char *msg,
                              size_t msg_size)
{
	nnn_status_t st;
	if (!a || a->size < offsetof(nnn_kernel_args_t, threads) + sizeof a->threads || !a->layer || !a->in ||
	    !a->out)
		return bi_fail(msg, msg_size, NNN_E_KERNEL, "kernel arguments are missing or too short");
	*pad = conv_pads(a, &a->layer->body.conv, own);
	if ((st = conv_input(a->layer, a->in, *pad, msg, msg_size)) != NNN_OK ||
	    (st = conv_output(a->layer, a->in, a->out, *pad, msg, msg_size)) != NNN_OK)
		return st;
	if ((bi_numel(a->in) && !a->x) || (bi_numel(a->out) && !a->y))
		return bi_fail(msg, msg_size, NNN_E_KERNEL, "input or output buffer is NULL");
	return NNN_OK;
}

/* Conv kernels [filters, k1..kn, channels]: filter c's tap t (k1..kn, then
 * channels, in order) is element c * taps + t. */
static bi_layout_t conv_layout(const nnn_conv_t *cv)
{
	const int32_t *kd = cv->kernels.dims.v, n = cv->kernels.dims.n - 2;
	int64_t taps = cv->kernels.data.n / cv->filters;
	bi_layout_t lay = { .n = cv->filters, .k = taps, .sk = 1, .sn = taps, .c = kd[n + 1] };
	lay.len = kd[n] * lay.c; /* a run: the last axis of the kernel, all channels */
	lay.nq = taps / lay.len;
	return lay;
}

nnn_status_t bi_conv_prepare(const nnn_layer_t *layer, const void *body, const nnn_shape_t *in, void **state,
                             char *msg, size_t msg_size)
{
	bi_layout_t lay;
	bi_state_t *st;
	nnn_status_t s;
	(void)body; /* core type: its fields are layer->body.conv */
	/* The output and padding come with each forward call (the engine's):
	 * forward checks them there. */
	int64_t own[2 * NNN_MAX_RANK];
	if ((s = conv_input(layer, in, conv_pads(NULL, &layer->body.conv, own), msg, msg_size)) != NNN_OK)
		return s;
	lay = conv_layout(&layer->body.conv);
	if ((s = bi_state_new(&layer->body.conv.kernels, &layer->bias, &lay, &st, msg, msg_size)) != NNN_OK)
		return s;
	*state = st;
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
	/* the micro-kernel path reads a zero-padded copy of each item when padded */
	bool padded;
	int64_t pd[NNN_MAX_RANK];      /* padded dims (d when not padded) */
	int64_t pstride[NNN_MAX_RANK]; /* floats per step along each axis of the padded item */
	int64_t pitem;     /* floats per padded item */
	int64_t outer;     /* o1*..*o(n-1): output lines (along the last axis) per item */
	int64_t nq, len;   /* a patch is nq runs (k1*..*k(n-1)) of len floats (kn*c) */
} geom_t;

static void geom_init(geom_t *g, const nnn_conv_t *cv, const nnn_shape_t *in, const nnn_shape_t *out,
                      const int64_t *pad)
{
	g->n = cv->kernels.dims.n - 2;
	g->f = cv->filters;
	g->c = cv->kernels.dims.v[g->n + 1];
	g->kc = g->c;
	g->batch = in->dims[0];
	g->opos = 1;
	g->padded = false;
	g->outer = 1;
	g->nq = 1;
	for (int32_t j = 0; j < g->n; j++) {
		g->d[j] = in->dims[1 + j];
		g->o[j] = out->dims[1 + j];
		g->k[j] = cv->kernels.dims.v[1 + j];
		g->before[j] = pad[2 * j];
		g->pd[j] = g->d[j] + pad[2 * j] + pad[2 * j + 1];
		g->padded = g->padded || g->pd[j] != g->d[j];
		g->kc *= g->k[j];
		g->opos *= g->o[j];
		if (j < g->n - 1) {
			g->outer *= g->o[j];
			g->nq *= g->k[j];
		}
	}
	g->len = g->k[g->n - 1] * g->c;
	g->stride[g->n - 1] = g->pstride[g->n - 1] = g->c;
	for (int32_t j = g->n - 2; j >= 0; j--) {
		g->stride[j] = g->stride[j + 1] * g->d[j + 1];
		g->pstride[j] = g->pstride[j + 1] * g->pd[j + 1];
	}
	g->bstride = g->stride[0] * g->d[0];
	g->pitem = g->pstride[0] * g->pd[0];
}

/* Copies one input item into the inside of its zero-padded copy (whose
 * border is zero already, and stays so). */
static void pad_item(const geom_t *g, const float *x, float *xp)
{
	const int32_t last = g->n - 1;
	int64_t idx[NNN_MAX_RANK] = { 0 };
	for (int32_t j = 0; j < g->n; j++)
		if (g->d[j] == 0)
			return;
	for (;;) {
		int64_t from = 0, to = g->before[last] * g->c;
		int32_t j;
		for (j = 0; j < last; j++) {
			from += idx[j] * g->stride[j];
			to += (idx[j] + g->before[j]) * g->pstride[j];
		}
		memcpy(xp + to, x + from, (size_t)(g->d[last] * g->c) * sizeof *xp);
		for (j = last - 1; j >= 0; j--) { /* the next run along axes 1..n-1 */
			if (++idx[j] < g->d[j])
				break;
			idx[j] = 0;
		}
		if (j < 0)
			return;
	}
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

/* Positions per segment of an output line: a unit of work. */
#define SEG 256

/* One forward call's work, shared among threads by chunks. */
typedef struct conv_job {
	const geom_t *g;
	const bi_state_t *st;
	const float *x;
	float *y;
	/* micro-kernels: units are segments of output lines */
	const ptrdiff_t *off;    /* [nq] offsets of a patch's runs in the (padded) item */
	int64_t seg, nseg;       /* positions per segment, segments per line */
	int64_t units, per;      /* units, units per chunk */
	float **pad;             /* per thread: a padded item, when padded */
	int64_t *pad_of;         /* per thread: the item in pad[slot], or -1 */
	/* generic: chunks of `chunk` rows (output positions) */
	int64_t rows, chunk;
	bool line;               /* one channel, few filters: the line kernel */
	int run;                 /* and lines of one segment: up to this many a call (bi_line_run) */
	bool act_in_line;        /* and the line kernel applies the activation itself */
	bool direct;             /* no im2col: 1x..x1 kernel without padding */
	int64_t share;           /* input floats of an item prefetched per line (unit_prefetch) */
	float **col;             /* per thread: im2col scratch of chunk * kc floats */
	bi_act_t act;            /* applied to each segment or chunk once it is complete */
} conv_job_t;

/* Item b's input as the kernels read it: in place, or its zero-padded
 * copy in this thread's slot (made once for consecutive lines of b). */
static const float *item_input(const conv_job_t *j, int64_t b, int slot)
{
	const float *xi = j->x + b * j->g->bstride;
	if (!j->g->padded)
		return xi;
	if (j->pad_of[slot] != b) {
		pad_item(j->g, xi, j->pad[slot]);
		j->pad_of[slot] = b;
	}
	return j->pad[slot];
}

/* The cnt (<= SEG) positions from p0 of an output line of item b, the
 * line starting `at` floats into the (padded) item, all filters, into yl:
 * the line kernel (one channel), or grouped kernels for whole groups of
 * positions where there are, then the plain kernel panel by panel; its
 * calls prefetch pf's lines (NULL: none), each call its share. */
static void conv_segment(const conv_job_t *j, int64_t b, int64_t at, int64_t p0, int cnt, float *yl, int slot,
                         const bi_pf_t *pf)
{
	const geom_t *g = j->g;
	const bi_pack_t *pk = &j->st->pack, *gp = &j->st->group;
	const int64_t jv = (int64_t)pk->j * pk->v;
	const int rmax = bi_rmax(pk);
	const float *xl = item_input(j, b, slot) + at + p0 * g->c;
	int blocks, rb;
	if (j->line) {
		bi_ukr_line(pk, xl, 0, 1, j->off, g->nq, g->len, cnt, yl, 0, &j->act);
		return;
	}
	if (gp->w && cnt >= gp->g) { /* whole groups of positions, then the rest one by one */
		int rows = cnt / gp->g, gb = (rows + 11) / 12, gr = (rows + gb - 1) / gb;
		for (int i = 0; i < rows; i += gr)
			bi_ukr_group(gp, rows - i < gr ? rows - i : gr, xl + i * gp->g * g->c, j->off, g->nq,
			             yl + i * gp->g * g->f);
		xl += rows * gp->g * g->c;
		yl += rows * gp->g * g->f;
		cnt -= rows * gp->g;
		if (cnt == 0)
			return;
	}
	blocks = (cnt + rmax - 1) / rmax;
	rb = (cnt + blocks - 1) / blocks;
	/* each call prefetches the next per[k] lines of pf's, until none are left */
	const int64_t calls = pk->np * ((cnt + rb - 1) / rb);
	bi_pf_t share = { { NULL, NULL }, { 0, 0 } };
	int64_t per[2] = { 0, 0 }, left[2] = { 0, 0 };
	for (int k = 0; pf && k < 2; k++) {
		share.p[k] = pf->p[k];
		left[k] = pf->n[k];
		per[k] = (left[k] + calls - 1) / calls;
	}
	for (int64_t p = 0; p < pk->np; p++) {
		const int cols = (int)(g->f - p * jv < jv ? g->f - p * jv : jv);
		for (int i = 0; i < cnt; i += rb) {
			for (int k = 0; pf && k < 2; k++) {
				if (share.n[k]) /* (no offset to a NULL p[1]) */
					share.p[k] += share.n[k] * 16;
				share.n[k] = left[k] < per[k] ? left[k] : per[k];
				left[k] -= share.n[k];
			}
			bi_ukr(pk, cnt - i < rb ? cnt - i : rb, xl + i * g->c, (ptrdiff_t)g->c, j->off, g->nq, g->len,
			       pk->w + p * jv * pk->k, pk->b + p * jv, 0, yl + i * g->f + p * jv, (ptrdiff_t)g->f, cols,
			       pf ? &share : NULL);
		}
	}
}

/* What a unit's kernel calls prefetch when a batch outgrows the caches
 * (conv5x3 at batch 64: 4 MiB in, 8 MiB out, against 1 MiB of L2 a
 * core): the next unit's output (next floats from y), whose lines the
 * kernels' stores would otherwise fetch from L3 when they end, and a
 * share of item b + 1's input (the one for line lin of the outer lines of
 * an item), which pad_item would otherwise copy from L3 or memory all at
 * once: 4-5 % of the time at batch 64, against 1 % at batch 1. Spread
 * over the kernels' runs: issued all at once between two kernel calls,
 * they waited on each other, and cost as much time as they saved. False
 * at batch 1 (everything stays in cache), for the line kernel (short
 * lines, small items), and for units of fewer than PF_MIN multiply-adds:
 * the example's second Conv (units of 64,000, its items 18 and 25 KiB)
 * ran 1.5-3 % slower with it, the hardware's own prefetch keeping up
 * there. A line of the cache is 64 bytes, 16 floats. */
#define PF_MIN 131072.0
static bool unit_prefetch(const conv_job_t *j, int64_t b, int64_t lin, bool first, const float *y, int64_t next,
                          bi_pf_t *pf)
{
	const geom_t *g = j->g;
	const float *yend = j->y + g->batch * g->opos * g->f;
	const int64_t share = j->share;
	if (j->line || g->batch < 2 || (double)j->seg * (double)g->f * (double)g->kc < PF_MIN)
		return false;
	pf->p[0] = y;
	pf->n[0] = yend - y >= next ? next / 16 : 0;
	pf->p[1] = NULL;
	pf->n[1] = 0;
	if (first && b + 1 < g->batch && lin * share < g->bstride) {
		pf->p[1] = j->x + (b + 1) * g->bstride + lin * share;
		pf->n[1] = ((g->bstride - lin * share < share ? g->bstride - lin * share : share) + 15) / 16;
	}
	return true;
}

/* A fused activation is applied to a chunk's output in spans of at least
 * this many floats (16 KiB, still in cache): once per short line would
 * cost as much as the line's convolution when its kernel is small. */
#define ACT_SPAN 4096

/* Steps to the next output line: the next position over axes 1..n-1 (idx,
 * and at, its place in the padded item), else the first of the next item. */
static void next_line(const geom_t *g, int64_t *idx, int64_t *at, int64_t *b)
{
	int32_t a = g->n - 2;
	for (; a >= 0; a--) {
		*at += g->pstride[a];
		if (++idx[a] < g->o[a])
			return;
		*at -= idx[a] * g->pstride[a];
		idx[a] = 0;
	}
	++*b;
}

/* Units (segments of output lines) in order: the first one's line is
 * found by division, the next ones by stepping through the output
 * positions like an odometer, since a division per short line costs as
 * much as its convolution. Consecutive units write consecutive output. */
static void conv_chunk(void *ctx, int64_t chunk, int slot)
{
	const conv_job_t *j = ctx;
	const geom_t *g = j->g;
	const int32_t last = g->n - 1;
	const int64_t u1 = (chunk + 1) * j->per < j->units ? (chunk + 1) * j->per : j->units, olast = g->o[last];
	int64_t u = chunk * j->per, line = u / j->nseg, s = u % j->nseg, b = line / g->outer, rem = line % g->outer;
	int64_t idx[NNN_MAX_RANK], at = 0, pending = 0, lin = rem;
	float *y = j->y + (line * olast + s * j->seg) * g->f, *from = y;
	for (int32_t a = last - 1; a >= 0; a--) { /* the line's place in its item */
		idx[a] = rem % g->o[a];
		at += idx[a] * g->pstride[a];
		rem /= g->o[a];
	}
	for (; u < u1; u++) {
		int64_t p0 = s * j->seg;
		int cnt = (int)(olast - p0 < j->seg ? olast - p0 : j->seg);
		if (j->run > 1 && u + 1 < u1 && last > 0 && idx[last - 1] + 1 < g->o[last - 1]) {
			/* this short line and the next ones of the same item along
			 * axis last - 1, together: m lines at one pstride apart */
			int64_t m = u1 - u < j->run ? u1 - u : j->run;
			m = g->o[last - 1] - idx[last - 1] < m ? g->o[last - 1] - idx[last - 1] : m;
			const float *xi = item_input(j, b, slot);
			bi_ukr_line(&j->st->pack, xi + at, (ptrdiff_t)g->pstride[last - 1], (int)m, j->off, g->nq, g->len, cnt,
			            y, cnt * g->f, &j->act);
			y += (m - 1) * cnt * g->f;
			pending += (m - 1) * cnt * g->f;
			idx[last - 1] += m - 1; /* next_line m - 1 times, in this run */
			at += (m - 1) * g->pstride[last - 1];
			u += m - 1;
		} else {
			/* the next unit: the rest of this line, else the next line's first segment */
			int64_t next = olast - p0 - cnt > 0 ? olast - p0 - cnt : olast;
			bi_pf_t pf;
			next = (next < j->seg ? next : j->seg) * g->f;
			conv_segment(j, b, at, p0, cnt, y, slot,
			             unit_prefetch(j, b, lin, s == 0, y + cnt * g->f, next, &pf) ? &pf : NULL);
		}
		y += cnt * g->f;
		if ((pending += cnt * g->f) >= ACT_SPAN) {
			if (!j->act_in_line)
				bi_act_apply(&j->act, from, pending);
			from = y;
			pending = 0;
		}
		if (++s < j->nseg)
			continue;
		s = 0;
		const int64_t was = b;
		next_line(g, idx, &at, &b);
		lin = b == was ? lin + 1 : 0; /* (a run's first lines are not counted: the line kernel prefetches nothing) */
	}
	if (!j->act_in_line)
		bi_act_apply(&j->act, from, pending);
}

/* Portable path: rows chunk * j->chunk.. by im2col (unless direct) and one sgemm. */
static void conv_chunk_blas(void *ctx, int64_t chunk, int slot)
{
	const conv_job_t *j = ctx;
	const geom_t *g = j->g;
	const bi_params_t *p = j->st->plain;
	int64_t r0 = chunk * j->chunk, m = j->rows - r0 < j->chunk ? j->rows - r0 : j->chunk;
	const float *src = j->x + r0 * g->c;
	bi_fill_bias(j->y + r0 * g->f, m, g->f, p->b);
	if (!j->direct) {
		im2col(g, j->x, r0, m, j->col[slot]);
		src = j->col[slot];
	}
	j->st->blas.sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)m, (int)g->f, (int)g->kc, 1.0f, src, (int)g->kc,
	                  p->w, (int)g->kc, 1.0f, j->y + r0 * g->f, (int)g->f);
	bi_act_apply(&j->act, j->y + r0 * g->f, m * g->f);
}

/* The original framework's arithmetic (nnn/compat.h) for this kernel:
 * how many times it sums each spatial tap, when that is not once each
 * (else NULL, the spec's convolution, and for a kernel it cannot count:
 * conv_check refuses those). *nomem: the counts did not fit in memory. */
static uint32_t *original_taps(const nnn_conv_t *cv, bool *nomem)
{
	const int32_t n = cv->kernels.dims.n - 2;
	int64_t taps = 1;
	uint32_t *mult;
	*nomem = false;
	if (n < 1 || n > NNN_MAX_RANK || cv->filters < 1)
		return NULL;
	taps = cv->kernels.data.n / cv->filters / cv->kernels.dims.v[n + 1];
	if (!(mult = malloc((size_t)(taps > 0 ? taps : 1) * sizeof *mult))) {
		*nomem = true;
		return NULL;
	}
	if (nnn_conv_original_taps(n, cv->kernels.dims.v + 1, mult) == 0) {
		free(mult); /* every tap once: the spec's arithmetic, the prepared state */
		return NULL;
	}
	return mult;
}

/* Whether this forward call asks for the original framework's Conv (ABI 1.4). */
static bool wants_original(const nnn_kernel_args_t *a)
{
	return a->size >= offsetof(nnn_kernel_args_t, compat) + sizeof a->compat &&
	       (a->compat & NNN_COMPAT_CONV_ORIGINAL);
}

/* Per-thread scratch: n buffers of `floats` zeroed floats each (and, when
 * item is not NULL, n item numbers set to -1). False when out of memory. */
static bool scratch_new(float ***buf, int64_t **item, int n, int64_t floats)
{
	*buf = calloc((size_t)n, sizeof **buf);
	if (item)
		*item = malloc((size_t)n * sizeof **item);
	if (!*buf || (item && !*item) || (uint64_t)floats > SIZE_MAX / sizeof(float))
		return false;
	for (int i = 0; i < n; i++) {
		if (item)
			(*item)[i] = -1;
		if (!((*buf)[i] = calloc((size_t)floats ? (size_t)floats : 1, sizeof(float))))
			return false;
	}
	return true;
}

static void scratch_free(float **buf, int64_t *item, int n)
{
	for (int i = 0; buf && i < n; i++)
		free(buf[i]);
	free(buf);
	free(item);
}

/* Padded copies of items, one per thread, kept by the layer's state from
 * one forward call to the next: made and freed every call, the allocator
 * gave them back to the system each time, and the TLB shootdowns that
 * cost made 2 threads slower than 1 at batch 1 (conv5x3: 280 against
 * 76 us a call). Their zero border is the geometry's (key), so they are
 * reused only for the same one. */
struct bi_scratch {
	int n;                               /* threads it serves */
	int64_t key[3 * NNN_MAX_RANK + 2];   /* n, c, and d, before, pd of each axis */
	float **buf;
	int64_t *item;
};

void bi_scratch_free(struct bi_scratch *sc)
{
	if (!sc)
		return;
	scratch_free(sc->buf, sc->item, sc->n);
	free(sc);
}

static void scratch_key(const geom_t *g, int64_t *key)
{
	memset(key, 0, (3 * NNN_MAX_RANK + 2) * sizeof *key);
	key[0] = g->n;
	key[1] = g->c;
	for (int32_t j = 0; j < g->n; j++) {
		key[2 + 3 * j] = g->d[j];
		key[3 + 3 * j] = g->before[j];
		key[4 + 3 * j] = g->pd[j];
	}
}

/* The state's padded copies for `threads` threads and this geometry, else
 * new ones (NULL: out of memory). Every item slot starts empty (-1). */
static struct bi_scratch *scratch_take(bi_state_t *st, const geom_t *g, int threads)
{
	struct bi_scratch *sc = atomic_exchange(&st->scratch, NULL);
	int64_t key[3 * NNN_MAX_RANK + 2];
	scratch_key(g, key);
	if (sc && (sc->n < threads || memcmp(sc->key, key, sizeof key) != 0)) {
		bi_scratch_free(sc);
		sc = NULL;
	}
	if (!sc) {
		if (!(sc = calloc(1, sizeof *sc)))
			return NULL;
		sc->n = threads;
		memcpy(sc->key, key, sizeof key);
		if (!scratch_new(&sc->buf, &sc->item, threads, g->pitem)) {
			bi_scratch_free(sc);
			return NULL;
		}
	}
	for (int i = 0; i < sc->n; i++)
		sc->item[i] = -1;
	return sc;
}

/* Gives the copies back to the state (a forward call on it at the same
 * time may have left its own: those are freed). */
static void scratch_give(bi_state_t *st, struct bi_scratch *sc)
{
	bi_scratch_free(atomic_exchange(&st->scratch, sc));
}

/* The state, then forward's scratch: as bi_conv_forward allocates it, on
 * at most min(threads, CPUs) threads. */
uint64_t bi_conv_work(const nnn_layer_t *layer, const void *body, const nnn_shape_t *in, const nnn_shape_t *out,
                      int threads)
{
	const nnn_conv_t *cv = &layer->body.conv;
	bi_layout_t lay = conv_layout(cv);
	geom_t g = { 0 };
	int cpus = bi_host()->cpus(), t = threads < 1 ? 1 : threads < cpus ? threads : cpus;
	double b = bi_state_bytes(&lay, cv->kernels.data.n, layer->bias.data.n), col;
	bool nomem;
	uint32_t *mult = original_taps(cv, &nomem);
	(void)body;
	/* work_bytes does not know the run's compat flags: for a kernel the
	 * original computes differently, count the state a forward call in
	 * that mode makes (a second copy, with its tap counts) */
	if (mult || nomem)
		b += b + (double)(cv->kernels.data.n / cv->filters) * sizeof *mult;
	free(mult);
	int64_t own[2 * NNN_MAX_RANK];
	geom_init(&g, cv, in, out, conv_pads(NULL, cv, own));
	if (bi_isa() != BI_ISA_GENERIC) {
		b += (double)g.nq * sizeof(ptrdiff_t);
		if (g.padded)
			b += (double)t * ((double)g.pitem * sizeof(float) + sizeof(float *) + sizeof(int64_t));
	} else if (g.kc != g.c || g.padded) { /* im2col in chunks of at most BI_SCRATCH_FLOATS (one row at least) */
		col = g.kc > BI_SCRATCH_FLOATS ? (double)g.kc : (double)BI_SCRATCH_FLOATS;
		b += (double)t * (col * sizeof(float) + sizeof(float *));
	}
	return bi_bytes(b);
}

/* The state a forward call runs: the prepared one (or a new one in *tmp),
 * or, asked for the original framework's arithmetic of a kernel it
 * computes differently, one of its own in *tmp (the caller frees *tmp). */
static nnn_status_t conv_state(const nnn_kernel_args_t *a, bi_layout_t *lay, bi_state_t **st, bi_state_t **tmp,
                               char *msg, size_t msg_size)
{
	const nnn_conv_t *cv = &a->layer->body.conv;
	bool nomem;
	uint32_t *mult;
	nnn_status_t s;
	*tmp = NULL;
	if (!wants_original(a))
		return bi_state_get(a, &cv->kernels, lay, st, tmp, msg, msg_size);
	if (!(mult = original_taps(cv, &nomem)) && nomem)
		return bi_fail(msg, msg_size, NNN_E_NOMEM, "out of memory counting the original's taps");
	/* the original's sum is the spec's with each tap's weights times
	 * its count: weights scaled so, for this call */
	lay->mult = mult;
	s = mult ? bi_state_new(&cv->kernels, &a->layer->bias, lay, tmp, msg, msg_size)
	         : bi_state_get(a, &cv->kernels, lay, st, tmp, msg, msg_size);
	if (mult)
		*st = *tmp;
	lay->mult = NULL;
	free(mult);
	return s;
}

/* The micro-kernels' path: segments of output lines, each patch read in
 * place (or in a padded copy of its item). */
static nnn_status_t run_micro(const nnn_kernel_args_t *a, conv_job_t *j, bi_state_t *st, double flop, char *msg,
                              size_t msg_size)
{
	const geom_t *g = j->g;
	const int32_t last = g->n - 1;
	int64_t t[NNN_MAX_RANK] = { 0 };
	struct bi_scratch *sc = NULL;
	ptrdiff_t *off;
	int threads = 1;
	if (!(off = malloc((size_t)g->nq * sizeof *off)))
		return bi_fail(msg, msg_size, NNN_E_NOMEM, "out of memory for %lld offsets", (long long)g->nq);
	for (int64_t q = 0; q < g->nq; q++) { /* kernel positions t over axes 1..n-1 */
		off[q] = 0;
		for (int32_t i = 0; i < last; i++)
			off[q] += (ptrdiff_t)(t[i] * g->pstride[i]);
		for (int32_t i = last - 1; i >= 0; i--) {
			if (++t[i] < g->k[i])
				break;
			t[i] = 0;
		}
	}
	j->off = off;
	j->line = bi_line(st->isa, g->f, g->c);
	j->run = j->line && g->o[last] <= SEG ? bi_line_run(&st->pack, g->o[last]) : 1;
	j->act_in_line = j->line && (j->act.kind == BI_ACT_RELU || j->act.kind == BI_ACT_LEAKY_RELU);
	j->seg = g->o[last] < SEG ? g->o[last] : SEG;
	j->nseg = (g->o[last] + j->seg - 1) / j->seg;
	j->units = g->batch * g->outer * j->nseg;
	j->share = (g->bstride + g->outer - 1) / g->outer;
	j->per = bi_split(flop, j->units, a->threads, st->cpus, &threads);
	if (g->padded) {
		if (!(sc = scratch_take(st, g, threads))) {
			free(off);
			return bi_fail(msg, msg_size, NNN_E_NOMEM, "out of memory for %d padded copies of %lld floats",
			               threads, (long long)g->pitem);
		}
		j->pad = sc->buf;
		j->pad_of = sc->item;
	}
	bi_run(a, st, threads, (j->units + j->per - 1) / j->per, conv_chunk, j);
	if (sc)
		scratch_give(st, sc);
	free(off);
	return NNN_OK;
}

/* The portable path: im2col in chunks of output rows, one sgemm each. */
static nnn_status_t run_blas(const nnn_kernel_args_t *a, conv_job_t *j, bi_state_t *st, double flop, char *msg,
                             size_t msg_size)
{
	const geom_t *g = j->g;
	int threads = 1;
	/* A 1x..x1 kernel without padding reads x as it is: no im2col. */
	int64_t most;
	j->direct = g->kc == g->c && !g->padded;
	/* BLAS takes int sizes: keep every count and offset it computes below INT_MAX. */
	most = INT_MAX / (g->kc > g->f ? g->kc : g->f);
	if (!j->direct && most > BI_SCRATCH_FLOATS / g->kc)
		most = BI_SCRATCH_FLOATS / g->kc > 0 ? BI_SCRATCH_FLOATS / g->kc : 1;
	j->chunk = bi_split(flop, j->rows, a->threads, st->cpus, &threads);
	if (j->chunk > most) {
		j->chunk = most;
		threads = bi_threads(threads, 0, (j->rows + j->chunk - 1) / j->chunk);
	}
	if (!j->direct && !scratch_new(&j->col, NULL, threads, j->chunk * g->kc)) {
		scratch_free(j->col, NULL, threads);
		return bi_fail(msg, msg_size, NNN_E_NOMEM, "out of memory for %lld floats of im2col scratch",
		               (long long)(j->chunk * g->kc));
	}
	bi_run(a, st, threads, (j->rows + j->chunk - 1) / j->chunk, conv_chunk_blas, j);
	scratch_free(j->col, NULL, threads);
	return NNN_OK;
}

nnn_status_t bi_conv_forward(const nnn_kernel_args_t *a, char *msg, size_t msg_size)
{
	bi_state_t *st = NULL, *tmp = NULL;
	bi_layout_t lay;
	geom_t g = { 0 };
	conv_job_t j = { 0 };
	double flop;
	int64_t own[2 * NNN_MAX_RANK];
	const int64_t *pad = own;
	nnn_status_t s = conv_args(a, own, &pad, msg, msg_size);
	if (s != NNN_OK)
		return s;
	lay = conv_layout(&a->layer->body.conv);
	if ((s = conv_state(a, &lay, &st, &tmp, msg, msg_size)) != NNN_OK)
		return s;
	geom_init(&g, &a->layer->body.conv, a->in, a->out, pad);
	j.g = &g;
	j.st = st;
	j.x = a->x;
	j.y = a->y;
	j.act = bi_act_fuse(a, st->isa);
	j.rows = g.batch * g.opos;
	flop = 2.0 * (double)j.rows * (double)g.f * (double)g.kc;
	if (j.rows == 0) {
		bi_state_free(tmp);
		return NNN_OK;
	}
	s = st->isa != BI_ISA_GENERIC ? run_micro(a, &j, st, flop, msg, msg_size) : run_blas(a, &j, st, flop, msg, msg_size);
	if (s == NNN_OK)
		bi_act_done(a, &j.act);
	bi_state_free(tmp);
	return s;
}
