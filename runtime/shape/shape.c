/* shape.c: the one shape engine. Generated code turns each layer's schema
 * `io` entry into an nnn_io_t (the values of the fields it names); this file
 * is the only place that knows what the io kinds do to a shape, and where a
 * kind's rule is a formula (gen/schema/io_kinds.lua `shape`) it calls the
 * generated one (nnn_gen_window_*), keeping the checks and messages. The
 * validator's chain rule, nnn_model_shapes and through them validate, build,
 * map, graph, info and run all come here.
 *
 * A shape is followed partially known (nnn_pshape_t): with an input shape
 * every dim is known until a layer does not fit; without one, each layer
 * still fixes what its own fields say. Every product and sum is checked for
 * 64-bit overflow.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nnn/shape.h>
#include <nnn/validate.h>

#include "codec.h"
#include "ext.h"
#include "path.h"
#include "shape_io.h"
#include "vctx.h"

#define UNK NNN_DIM_UNKNOWN

bool nnn_pshape_exact(const nnn_pshape_t *s)
{
	if (s->rank < 1)
		return false;
	for (int32_t i = 0; i < s->rank; i++)
		if (s->dims[i] < 0)
			return false;
	return true;
}

nnn_pshape_t nnn_pshape_of(const nnn_shape_t *s)
{
	nnn_pshape_t p = { .rank = s->rank, .last = s->rank > 0 ? s->dims[s->rank - 1] : UNK };
	for (int32_t i = 0; i < s->rank && i < NNN_MAX_RANK; i++)
		p.dims[i] = s->dims[i];
	return p;
}

/* ---- the one shape printer ---- */

/* Dims d64[0..n) (or d32, when d64 is NULL) as style says, from buf[k]:
 * every shape nnnkit prints is written here. */
static char *dims_put(const int64_t *d64, const int32_t *d32, int32_t n, const nnn_dims_style_t *st, char *buf,
                      size_t size, size_t k)
{
#define PUT(...) (k += k < size ? (size_t)snprintf(buf + k, size - k, __VA_ARGS__) : 0)
	PUT("%s", st->open);
	for (int32_t i = 0; i < n; i++) {
		int64_t d = d64 ? d64[i] : d32[i];
		if (st->most > 0 && i == st->most) {
			PUT(", ...");
			break;
		}
		if (d < 0 && st->unknown)
			PUT("%s%s", i ? st->sep : "", st->unknown);
		else
			PUT("%s%" PRId64, i ? st->sep : "", d);
	}
	PUT("%s", n == 1 && st->close1 ? st->close1 : st->close);
#undef PUT
	return buf;
}

char *nnn_shape_format_as(const nnn_shape_t *s, const nnn_dims_style_t *style, char *buf, size_t size)
{
	int32_t rank = s->rank < 0 ? 0 : s->rank > NNN_MAX_RANK ? NNN_MAX_RANK : s->rank;
	if (!size)
		return buf;
	buf[0] = '\0';
	return dims_put(s->dims, NULL, rank, style, buf, size, 0);
}

char *nnn_shape_format(const nnn_shape_t *s, char *buf, size_t size)
{
	return nnn_shape_format_as(s, &(nnn_dims_style_t){ "[", ", ", "]", NULL, NULL, 0 }, buf, size);
}

char *nnn_dims_format(nnn_i32s_t dims, const nnn_dims_style_t *style, char *buf, size_t size)
{
	if (!size)
		return buf;
	buf[0] = '\0';
	return dims_put(NULL, dims.v, dims.v ? dims.n : 0, style, buf, size, 0);
}

char *nnn_pshape_format(const nnn_pshape_t *s, char *buf, size_t size)
{
	if (!size)
		return buf;
	buf[0] = '\0';
	if (s->rank < 0) {
		if (s->last >= 0)
			snprintf(buf, size, "[?, ..., %" PRId64 "]", s->last);
		else
			snprintf(buf, size, "[?, ...]");
		return buf;
	}
	return dims_put(s->dims, NULL, s->rank < NNN_MAX_RANK ? s->rank : NNN_MAX_RANK,
	                &(nnn_dims_style_t){ "[", ", ", "]", NULL, "?", 0 }, buf, size, 0);
}

/* ---- the chain ---- */

typedef struct chain {
	nnn_vctx_t *v;
	const char *name;  /* the layers' field, "layers" */
	int32_t i;         /* the layer at hand */
	int32_t from;      /* the layer that made the incoming shape; -1: the input */
	bool broken;       /* a layer did not fit: no shape past it is exact */
	nnn_pshape_t s;    /* the shape at hand */
	char given[96];    /* the input shape the caller gave, as text; "": none */
	char after[160];   /* said after the next problem's "(from ...)", once */
} chain_t;

static void problem(chain_t *c, const nnn_io_src_t *src, int64_t index, nnn_status_t code, const char *fmt, ...)
	NNN_PRINTF(5, 6);

/* Reports at layers[i].<src path>[index] (index -1: src's own element), as
 * coming from the previous layer or the model's input. */
static void problem(chain_t *c, const nnn_io_src_t *src, int64_t index, nnn_status_t code, const char *fmt, ...)
{
	char msg[NNN_MSG_MAX], rel[64];
	va_list ap;
	size_t mark = nnn_path_push(&c->v->path, c->name);
	uint64_t at = src->at;
	nnn_path_index(&c->v->path, c->i);
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (src->path && src->path[0])
		nnn_path_push(&c->v->path, src->path);
	if (index < 0)
		index = src->index;
	if (index >= 0) {
		nnn_path_index(&c->v->path, index);
		if (at != NNN_NO_OFFSET)
			at += 4 + 4 * (uint64_t)index; /* an int32 array: count, then elements */
	}
	if (code == NNN_E_CHAIN || code == NNN_E_INPUT_SHAPE) {
		if (c->from >= 0)
			snprintf(rel, sizeof rel, "layers[%d]", (int)c->from);
		code = c->from < 0 ? NNN_E_INPUT_SHAPE : NNN_E_CHAIN;
		if (c->from < 0 && c->given[0])
			snprintf(rel, sizeof rel, "the input shape %.24s given", c->given);
		nnn_v_problem(c->v, code, "", at, "%s (from %s)%s", msg,
		              c->from < 0 && !c->given[0] ? "the model's input" : rel, c->after);
		c->after[0] = '\0';
	} else {
		nnn_v_problem(c->v, code, "", at, "%s", msg);
	}
	nnn_path_pop(&c->v->path, mark);
}

/* Given data whose axis 1, not its last, has the first layer's channels
 * are most likely channels-first (PyTorch's [N, C, H, W]): the problem
 * that follows says how to make them channels-last. */
static void channels_first_hint(chain_t *c, int64_t channels)
{
	const nnn_pshape_t *s = &c->s;
	if (c->from >= 0 || !c->given[0] || s->rank < 3 || s->dims[1] != channels || s->last == channels)
		return;
	size_t at = (size_t)snprintf(c->after, sizeof c->after,
	                             "; it looks channels-first (axis 1 has the %" PRId64 " channels) and nnn takes "
	                             "channels-last [N, d.., C]: transpose the data with x.transpose(0",
	                             channels);
	for (int32_t d = 2; d <= s->rank && at < sizeof c->after; d++)
		at += (size_t)snprintf(c->after + at, sizeof c->after - at, ", %d", d < s->rank ? (int)d : 1);
	if (at < sizeof c->after)
		snprintf(c->after + at, sizeof c->after - at, ")");
}

/* After a layer that does not fit, shapes are partial: later layers are
 * still checked against what earlier layers' own fields fix, so every
 * disagreement is reported, but no shape past it is called exact. */
static void misfit(chain_t *c)
{
	c->broken = true;
}

static bool mul_ok(int64_t a, int64_t b, int64_t *r)
{
	if (a < 0 || b < 0 || (b && a > INT64_MAX / b))
		return false;
	*r = a * b;
	return true;
}

/* Product of dims [from, rank) (UNK if one is unknown, -2 on overflow);
 * `known` gets the product of the known ones. */
static int64_t product(const nnn_pshape_t *s, int32_t from, int64_t *known)
{
	int64_t p = 1, k = 1;
	bool unknown = false;
	for (int32_t d = from; d < s->rank; d++) {
		if (s->dims[d] < 0) {
			unknown = true;
			continue;
		}
		if (!mul_ok(k, s->dims[d], &k))
			return -2;
	}
	p = k;
	if (known)
		*known = k;
	return unknown ? UNK : p;
}

static void set_rank_unknown(nnn_pshape_t *s, int64_t last)
{
	s->rank = UNK;
	s->last = last;
}

/* Element j of a per-axis list. */
static int64_t ints_at(const nnn_io_ints_t *x, int32_t j)
{
	return x->list ? x->v.v[j] : x->all;
}

static void features(chain_t *c, const nnn_io_t *io)
{
	nnn_pshape_t *s = &c->s;
	if (io->inputs < 1 || io->outputs < 1) { /* the layer's own rules say why */
		misfit(c);
		set_rank_unknown(s, UNK);
		return;
	}
	if (io->flatten) {
		int64_t known, feat = s->rank >= 0 ? product(s, 1, &known) : UNK;
		if (feat == -2) {
			problem(c, &io->in_src, -1, NNN_E_INPUT_SHAPE, "the incoming shape flattens to more than 2^63 - 1 values");
			misfit(c);
		} else if (feat >= 0 && feat != io->inputs) {
			problem(c, &io->in_src, -1, NNN_E_CHAIN,
			        "found %" PRId64 " inputs, but the incoming shape flattens to %" PRId64, io->inputs, feat);
			misfit(c);
		} else if (feat < 0 && s->rank >= 0 && known > 0 && io->inputs % known) {
			problem(c, &io->in_src, -1, NNN_E_CHAIN,
			        "found %" PRId64 " inputs, expected a multiple of the %" PRId64 " values known of the shape it flattens",
			        io->inputs, known);
			misfit(c);
		} else if (s->rank < 0 && s->last > 0 && io->inputs % s->last) {
			problem(c, &io->in_src, -1, NNN_E_CHAIN,
			        "found %" PRId64 " inputs, expected a multiple of the %" PRId64 " channels it flattens",
			        io->inputs, s->last);
			misfit(c);
		}
		int64_t batch = s->rank >= 1 ? s->dims[0] : UNK;
		s->rank = 2;
		s->dims[0] = batch;
		s->dims[1] = s->last = io->outputs;
		return;
	}
	if (s->last >= 0 && s->last != io->inputs) {
		channels_first_hint(c, io->inputs);
		problem(c, &io->in_src, -1, NNN_E_CHAIN, "found %" PRId64 " inputs, but the incoming last axis has %" PRId64,
		        io->inputs, s->last);
		misfit(c);
	}
	if (s->rank >= 1)
		s->dims[s->rank - 1] = io->outputs;
	s->last = io->outputs;
}

/* Checks a per-axis list has one entry per axis, each >= min. */
static bool axes_ok(chain_t *c, const char *what, const nnn_io_ints_t *x, int32_t n, int64_t min)
{
	if (x->list && x->v.n != n) {
		problem(c, &x->src, -1, NNN_E_SHAPE, "found %d %s values, expected %d (one per spatial axis)", (int)x->v.n,
		        what, (int)n);
		return false;
	}
	for (int32_t j = 0; j < n; j++) {
		int64_t e = ints_at(x, j);
		if (e < min) {
			problem(c, &x->src, x->list ? x->base + j : -1, NNN_E_SHAPE, "%s of axis %d is %" PRId64 ", expected >= %" PRId64,
			        what, (int)j + 1, e, min);
			return false;
		}
	}
	return true;
}

/* Padding of axis j for an effective window k, from the explicit list or
 * the padding type's formulas; false for an unknown padding type. */
static bool pad_of(const nnn_io_t *io, int32_t j, int64_t k, int64_t *before, int64_t *after)
{
	if (io->pads.list) {
		*before = io->pads.v.v[2 * j];
		*after = io->pads.v.v[2 * j + 1];
	} else if (io->pad_fn) {
		return io->pad_fn(io->pad_type, k, before, after);
	} else {
		*before = *after = 0;
	}
	return true;
}

/* pad_of, checked: what does not fit is reported. */
static bool padding(chain_t *c, const nnn_io_t *io, int32_t j, int64_t k, int64_t *before, int64_t *after)
{
	if (!pad_of(io, j, k, before, after))
		return false; /* an unknown padding type: its enum reports it */
	if (*before < 0 || *after < 0 || *before > INT32_MAX || *after > INT32_MAX) {
		problem(c, io->pads.list ? &io->pads.src : &io->in_src, io->pads.list ? io->pads.base + 2 * j : -1, NNN_E_PADDING,
		        "padding of axis %d is %" PRId64 " before and %" PRId64 " after, expected 0 to %d each", (int)j + 1,
		        *before, *after, INT32_MAX);
		return false;
	}
	return true;
}

/* The output size of spatial axis j of size x (UNK: unknown, or it does
 * not fit). The rule is the schema's (nnn_gen_window_*, generated from
 * gen/schema/io_kinds.lua); this keeps each step within 64 bits and says
 * why an axis does not fit. */
static int64_t window_axis(chain_t *c, const nnn_io_t *io, int32_t j, int64_t x)
{
	nnn_io_axis_t a = { .s = x, .window = ints_at(&io->window, j), .stride = ints_at(&io->stride, j),
	                    .dilation = ints_at(&io->dilation, j) };
	a.k = nnn_gen_window_k(&a); /* window and dilation are int32: no overflow */
	if (!padding(c, io, j, a.k, &a.before, &a.after)) {
		misfit(c);
		return UNK;
	}
	if (x < 0)
		return UNK;
	if (x > INT64_MAX - a.before - a.after) {
		problem(c, &io->window.src, io->window.base + j, NNN_E_INPUT_SHAPE, "axis %d of size %" PRId64 " is too large to pad",
		        (int)j + 1, x);
		misfit(c);
		return UNK;
	}
	a.room = nnn_gen_window_room(&a);
	if (a.room < 0) {
		problem(c, &io->window.src, io->window.base + j, NNN_E_CHAIN,
		        "axis %d of size %" PRId64 " (padded by %" PRId64 " and %" PRId64 ") is smaller than %s %" PRId64,
		        (int)j + 1, x, a.before, a.after, a.dilation > 1 ? "the dilated window" : "window size", a.k);
		misfit(c);
		return UNK;
	}
	return nnn_gen_window_out(&a);
}

static void window(chain_t *c, const nnn_io_t *io)
{
	nnn_pshape_t *s = &c->s;
	int32_t n = io->window.v.n;
	int64_t out_c = io->outputs >= 0 ? io->outputs : io->inputs >= 0 ? io->inputs : s->last;
	bool ok = n >= 1 && n + 2 <= NNN_MAX_RANK && axes_ok(c, "window", &io->window, n, 1) &&
	          axes_ok(c, "stride", &io->stride, n, 1) && axes_ok(c, "dilation", &io->dilation, n, 1);
	if (ok && io->pads.list && io->pads.v.n != 2 * n) {
		problem(c, &io->pads.src, -1, NNN_E_PADDING, "found %d padding dims, expected %d (before and after each axis)",
		        (int)io->pads.v.n, (int)(2 * n));
		ok = false;
	}
	if (!ok) { /* the window's own fields are broken: nothing is known past it */
		misfit(c);
		set_rank_unknown(s, io->outputs);
		return;
	}
	if (s->rank >= 0 && s->rank != n + 2) {
		/* A given shape one axis short is most often one sample without
		 * its batch axis (28,28,1 for 1,28,28,1). */
		bool no_batch = c->from < 0 && c->given[0] && s->rank == n + 1;
		problem(c, &io->window.src, -1, NNN_E_CHAIN,
		        "a %d-D window needs rank %d input [batch, d1..d%d, channels], found rank %d%s", (int)n, (int)n + 2,
		        (int)n, (int)s->rank, no_batch ? "; the first axis is the batch: give 1 before the others for "
		                                         "one sample" : "");
		misfit(c);
	} else if (io->inputs >= 0 && s->last >= 0 && s->last != io->inputs) {
		channels_first_hint(c, io->inputs);
		problem(c, &io->in_src, -1, NNN_E_CHAIN, "found %" PRId64 " channels, but the incoming last axis has %" PRId64,
		        io->inputs, s->last);
		misfit(c);
	}
	if (s->rank != n + 2) { /* the batch stays; the spatial axes are not known */
		s->dims[0] = s->rank >= 1 ? s->dims[0] : UNK;
		s->rank = n + 2;
		for (int32_t d = 1; d < n + 1; d++)
			s->dims[d] = UNK;
	}
	for (int32_t j = 0; j < n; j++)
		s->dims[1 + j] = window_axis(c, io, j, s->dims[1 + j]);
	s->dims[n + 1] = s->last = out_c;
}

static void elementwise(chain_t *c, const nnn_io_t *io)
{
	nnn_pshape_t *s = &c->s;
	if (io->inputs >= 0 && s->last >= 0 && s->last != io->inputs) {
		channels_first_hint(c, io->inputs);
		problem(c, &io->in_src, -1, NNN_E_CHAIN, "found %" PRId64 " channels, but the incoming last axis has %" PRId64,
		        io->inputs, s->last);
		misfit(c);
	}
	if (io->inputs >= 0) {
		s->last = io->inputs;
		if (s->rank >= 1)
			s->dims[s->rank - 1] = io->inputs;
	}
}

static void flatten(chain_t *c)
{
	nnn_pshape_t *s = &c->s;
	int64_t batch = s->rank >= 1 ? s->dims[0] : UNK, p = s->rank >= 0 ? product(s, 1, NULL) : UNK;
	if (p == -2) {
		problem(c, &(nnn_io_src_t){ "", -1, NNN_NO_OFFSET }, -1, NNN_E_INPUT_SHAPE,
		        "the incoming shape flattens to more than 2^63 - 1 values");
		misfit(c);
		p = UNK;
	}
	s->rank = 2;
	s->dims[0] = batch;
	s->dims[1] = s->last = p;
}

static void reshape(chain_t *c, const nnn_io_t *io)
{
	nnn_pshape_t *s = &c->s;
	const nnn_i32s_t *sh = &io->shape.v;
	int64_t batch = s->rank >= 1 ? s->dims[0] : UNK, in = s->rank >= 0 ? product(s, 1, NULL) : UNK, known = 1;
	int32_t free_at = -1;
	if (sh->n < 1 || sh->n + 1 > NNN_MAX_RANK) {
		problem(c, &io->shape.src, -1, NNN_E_SHAPE, "found %d target dims, expected 1 to %d", (int)sh->n,
		        NNN_MAX_RANK - 1);
		misfit(c);
		set_rank_unknown(s, UNK);
		return;
	}
	for (int32_t j = 0; j < sh->n; j++) {
		if (sh->v[j] == -1 && free_at < 0) {
			free_at = j;
		} else if (sh->v[j] < 1 || !mul_ok(known, sh->v[j], &known)) {
			problem(c, &io->shape.src, io->shape.base + j, NNN_E_SHAPE, "target dim %" PRId64 ", expected >= 1 (or one -1)",
			        (int64_t)sh->v[j]);
			misfit(c);
			set_rank_unknown(s, UNK);
			return;
		}
	}
	s->rank = sh->n + 1;
	s->dims[0] = batch;
	for (int32_t j = 0; j < sh->n; j++)
		s->dims[1 + j] = sh->v[j];
	if (in >= 0 && (free_at >= 0 ? in % known : in != known)) {
		problem(c, &io->shape.src, -1, NNN_E_CHAIN, "%" PRId64 " values per item cannot be reshaped to %s%" PRId64,
		        in, free_at >= 0 ? "a multiple of " : "", known);
		misfit(c);
		if (free_at >= 0)
			s->dims[1 + free_at] = UNK;
	} else if (free_at >= 0) {
		s->dims[1 + free_at] = in >= 0 ? in / known : UNK;
	}
	s->last = s->dims[s->rank - 1];
}

static void plugin(chain_t *c, const nnn_io_t *io)
{
	char msg[NNN_MSG_MAX] = "";
	nnn_shape_t in, out;
	if (!nnn_pshape_exact(&c->s)) { /* a plugin's infer needs the whole shape */
		set_rank_unknown(&c->s, UNK);
		return;
	}
	in.rank = c->s.rank;
	for (int32_t d = 0; d < in.rank; d++)
		in.dims[d] = c->s.dims[d];
	if (nnn_ext_infer(io, &in, &out, msg, sizeof msg) == NNN_OK && out.rank >= 1 && out.rank <= NNN_MAX_RANK) {
		c->s = nnn_pshape_of(&out);
		return;
	}
	problem(c, &io->in_src, -1, NNN_E_CHAIN, "%s", msg[0] ? msg : "the layer rejects its input shape");
	misfit(c);
	set_rank_unknown(&c->s, UNK);
}

/* Refuses an output of more than 2^63 - 1 elements (the batch included). */
static void check_size(chain_t *c, const nnn_io_t *io)
{
	int64_t known;
	if (c->s.rank >= 0 && product(&c->s, 0, &known) == -2) {
		char sh[256];
		problem(c, &io->in_src, -1, NNN_E_INPUT_SHAPE, "the output %s would have more than 2^63 - 1 elements",
		        nnn_pshape_format(&c->s, sh, sizeof sh));
		misfit(c);
		set_rank_unknown(&c->s, c->s.last);
	}
}

/* What a layer's own fields say of its input, added to what is known of
 * it (for display: a Dense takes [?, ..., inputs]). */
static void narrow_in(nnn_pshape_t *in, const nnn_io_t *io)
{
	int64_t last = io->kind == NNN_IO_FEATURES && !io->flatten ? io->inputs
	             : io->kind == NNN_IO_WINDOW || io->kind == NNN_IO_ELEMENTWISE ? io->inputs : UNK;
	if (io->kind == NNN_IO_WINDOW && in->rank < 0 && io->window.v.n >= 1 && io->window.v.n + 2 <= NNN_MAX_RANK) {
		in->rank = io->window.v.n + 2;
		for (int32_t d = 0; d < in->rank; d++)
			in->dims[d] = UNK;
		in->dims[in->rank - 1] = in->last;
	}
	if (last < 1 || in->last >= 0)
		return;
	in->last = last;
	if (in->rank >= 1)
		in->dims[in->rank - 1] = last;
}

void nnn_rule_chain(nnn_vctx_t *v, const char *name, const nnn_chain_src_t *src, const nnn_shape_t *input,
                    nnn_shape_t *out_shapes, nnn_shapes_fn each, void *ctx)
{
	nnn_io_t one, *io = &one;
	nnn_layer_shapes_t sh;
	chain_t c = { .v = v, .name = name, .from = -1, .s = { .rank = UNK, .last = UNK } };
	if (input) {
		if (input->rank < 2 || input->rank > NNN_MAX_RANK) {
			nnn_v_problem(v, NNN_E_INPUT_SHAPE, "", NNN_NO_OFFSET, "rank %d given, expected [batch, ..., features]",
			              (int)input->rank);
			c.broken = true;
		} else {
			c.s = nnn_pshape_of(input);
			nnn_shape_format(input, c.given, sizeof c.given);
			for (int32_t d = 0; d < input->rank; d++) {
				if (input->dims[d] < 0) {
					nnn_v_problem(v, NNN_E_INPUT_SHAPE, "", NNN_NO_OFFSET,
					              "dim %d of the input shape is negative (%" PRId64 "), expected >= 0", (int)d,
					              input->dims[d]);
					c.broken = true;
					c.s.dims[d] = UNK;
				}
			}
		}
	}
	for (int32_t i = 0; i < src->n; i++) {
		c.i = i;
		src->io(src->elems, i, io);
		if (src->broken && src->broken[i])
			io->kind = NNN_IO_UNKNOWN;
		sh.in = c.s;
		switch (io->kind) {
		case NNN_IO_FEATURES:
			features(&c, io);
			break;
		case NNN_IO_WINDOW:
			window(&c, io);
			break;
		case NNN_IO_ELEMENTWISE:
			elementwise(&c, io);
			break;
		case NNN_IO_FLATTEN:
			flatten(&c);
			break;
		case NNN_IO_RESHAPE:
			reshape(&c, io);
			break;
		case NNN_IO_PLUGIN:
			plugin(&c, io);
			break;
		case NNN_IO_UNKNOWN:
			set_rank_unknown(&c.s, UNK);
			c.broken = true;
			break;
		}
		check_size(&c, io);
		if (each) {
			narrow_in(&sh.in, io);
			sh.out = c.s;
			each(ctx, i, &sh);
		}
		if (out_shapes) {
			/* exact only while every layer so far fitted */
			bool exact = !c.broken && nnn_pshape_exact(&c.s);
			out_shapes[i].rank = exact ? c.s.rank : 0;
			for (int32_t d = 0; exact && d < c.s.rank; d++)
				out_shapes[i].dims[d] = c.s.dims[d];
		}
		c.from = i;
	}
}

nnn_status_t nnn_model_shapes_each(const nnn_model_t *m, const nnn_shape_t *input, nnn_shapes_fn each, void *ctx,
                                   nnn_diags_t *diags)
{
	nnn_vctx_t v = { .diags = diags };
	size_t first = diags ? diags->n : 0;
	nnn_gen_shapes(&v, m, input, each, ctx);
	return nnn_v_result(&v, first);
}

static void put_shapes(void *ctx, int32_t i, const nnn_layer_shapes_t *s)
{
	((nnn_layer_shapes_t *)ctx)[i] = *s;
}

nnn_status_t nnn_model_shapes(const nnn_model_t *m, const nnn_shape_t *input, nnn_layer_shapes_t *out,
                              nnn_diags_t *diags)
{
	return nnn_model_shapes_each(m, input, put_shapes, out, diags);
}

static void first_in(void *ctx, int32_t i, const nnn_layer_shapes_t *s)
{
	if (i == 0)
		*(nnn_pshape_t *)ctx = s->in;
}

bool nnn_model_fixed_input(const nnn_model_t *m, nnn_shape_t *in)
{
	nnn_pshape_t p = { .rank = 0 };
	if (!m || m->layer_count < 1 || nnn_model_shapes_each(m, NULL, first_in, &p, NULL) != NNN_OK)
		return false;
	if (p.rank < 0) { /* its rank open, as a Dense layer's [batch, ..., features] */
		*in = (nnn_shape_t){ .rank = 2, .dims = { 1, p.last } };
		if (p.last < 0)
			return false;
	} else {
		if (p.rank < 1)
			return false;
		in->rank = p.rank;
		in->dims[0] = 1;
		for (int32_t k = 1; k < p.rank; k++)
			if ((in->dims[k] = p.dims[k]) < 0)
				return false;
	}
	/* the engine decides: the whole chain must take it */
	return nnn_model_shapes_each(m, in, NULL, NULL, NULL) == NNN_OK;
}

bool nnn_layer_window(const nnn_layer_t *L, nnn_layer_window_t *w)
{
	nnn_io_t io;
	memset(w, 0, sizeof *w);
	w->at = NNN_NO_OFFSET;
	nnn_gen_io(L, &io);
	if (io.kind != NNN_IO_WINDOW || !io.window.list || io.window.v.n < 1 || io.window.v.n > NNN_MAX_RANK ||
	    !io.window.v.v)
		return false;
	w->n = io.window.v.n;
	memcpy(w->k, io.window.v.v, (size_t)w->n * sizeof w->k[0]);
	w->field = io.window.src.path;
	w->first = io.window.base;
	w->at = io.window.src.at;
	return true;
}

/* Each spatial axis' padding for its dilated window: the io's own (its
 * list, else its padding type's), or, `implied`, what the padding type's
 * formulas give whatever the list holds. */
static bool window_pads(const nnn_io_t *io, bool implied, int64_t pad[2 * NNN_MAX_RANK])
{
	for (int32_t j = 0; j < io->window.v.n; j++) {
		nnn_io_axis_t a = { .window = ints_at(&io->window, j), .stride = ints_at(&io->stride, j),
		                    .dilation = ints_at(&io->dilation, j) };
		int64_t *b = &pad[2 * j], *e = &pad[2 * j + 1];
		a.k = nnn_gen_window_k(&a);
		if (!(implied ? io->pad_fn(io->pad_type, a.k, b, e) : pad_of(io, j, a.k, b, e)))
			return false;
	}
	return true;
}

int32_t nnn_layer_implied_pads(const nnn_layer_t *L, int32_t pad[2 * NNN_MAX_RANK], const char **field)
{
	nnn_io_t io;
	int64_t p[2 * NNN_MAX_RANK];
	nnn_gen_io(L, &io);
	int32_t n = io.window.v.n;
	if (io.kind != NNN_IO_WINDOW || !io.pads.list || !io.pad_fn || !io.window.list || !io.window.v.v || n < 1 ||
	    n + 2 > NNN_MAX_RANK || !window_pads(&io, true, p))
		return 0;
	for (int32_t j = 0; j < 2 * n; j++) {
		if (p[j] < 0 || p[j] > INT32_MAX)
			return 0; /* the validator says why */
		pad[j] = (int32_t)p[j];
	}
	*field = io.pads.src.path;
	return 2 * n;
}

bool nnn_layer_pads(const nnn_layer_t *L, int64_t pad[2 * NNN_MAX_RANK])
{
	nnn_io_t io;
	int32_t n;
	nnn_gen_io(L, &io);
	n = io.window.v.n;
	if (io.kind != NNN_IO_WINDOW || n < 1 || n + 2 > NNN_MAX_RANK || (io.window.list && !io.window.v.v) ||
	    (io.pads.list && (io.pads.v.n != 2 * n || !io.pads.v.v)))
		return false;
	return window_pads(&io, false, pad);
}
