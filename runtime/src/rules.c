/* rules.c: the rule kinds a schema can name, and the shape chain.
 *
 * The generated validator extracts field values and offsets and calls these;
 * each reports every problem it finds and never stops the validation.
 * Nothing here reads tensor data: validation costs time in layers and dims.
 */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>

#include "codec.h"

void nnn_v_problem(nnn_vctx_t *v, nnn_status_t code, const char *name, uint64_t at, const char *fmt, ...)
{
	char msg[NNN_MSG_MAX];
	size_t mark = nnn_path_push(&v->path, name);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	nnn_diags_add(v->diags, code, at, v->path.s, "%s", msg);
	nnn_path_pop(&v->path, mark);
	v->problems++;
}

/* "[10, 256]" (at most 16 dims shown). */
static const char *fmt_dims(nnn_i32s_t d, char *buf, size_t size)
{
	size_t k = (size_t)snprintf(buf, size, "[");
	for (int32_t i = 0; i < d.n && k < size; i++) {
		if (i == 16) {
			k += (size_t)snprintf(buf + k, size - k, ", ...");
			break;
		}
		k += (size_t)snprintf(buf + k, size - k, "%s%d", i ? ", " : "", (int)d.v[i]);
	}
	if (k < size)
		snprintf(buf + k, size - k, "]");
	return buf;
}

void nnn_rule_min(nnn_vctx_t *v, const char *name, int64_t value, int64_t min, uint64_t at)
{
	if (value < min)
		nnn_v_problem(v, NNN_E_RANGE, name, at, "found %" PRId64 ", expected >= %" PRId64, value, min);
}

void nnn_rule_bounds(nnn_vctx_t *v, const char *name, double value, double min, double max, unsigned flags,
                     uint64_t at)
{
	bool has_min = flags & NNN_BOUND_MIN, has_max = flags & NNN_BOUND_MAX;
	bool min_open = flags & NNN_BOUND_MIN_OPEN, max_open = flags & NNN_BOUND_MAX_OPEN;
	/* Every comparison with NaN is false, and NaN fails without bounds too. */
	bool ok = !isnan(value) && (!has_min || (min_open ? value > min : value >= min)) &&
	          (!has_max || (max_open ? value < max : value <= max));
	if (ok)
		return;
	if (has_min && has_max)
		nnn_v_problem(v, NNN_E_RANGE, name, at, "found %.9g, expected in %c%g, %g%c", value, min_open ? '(' : '[',
		              min, max, max_open ? ')' : ']');
	else if (has_min)
		nnn_v_problem(v, NNN_E_RANGE, name, at, "found %.9g, expected %s %g", value, min_open ? ">" : ">=", min);
	else if (has_max)
		nnn_v_problem(v, NNN_E_RANGE, name, at, "found %.9g, expected %s %g", value, max_open ? "<" : "<=", max);
	else
		nnn_v_problem(v, NNN_E_RANGE, name, at, "found %.9g, expected a number", value);
}

void nnn_rule_range(nnn_vctx_t *v, const char *name, double value, double min, double max, bool max_open,
                    uint64_t at)
{
	nnn_rule_bounds(v, name, value, min, max, NNN_BOUND_MIN | NNN_BOUND_MAX | (max_open ? NNN_BOUND_MAX_OPEN : 0u),
	                at);
}

void nnn_rule_finite(nnn_vctx_t *v, const char *name, float value, uint64_t at)
{
	if (!isfinite(value))
		nnn_v_problem(v, NNN_E_RANGE, name, at, "found %g, expected a finite number", (double)value);
}

static void pat_text(const nnn_pat_t *pat, size_t npat, char *buf, size_t size)
{
	size_t k = (size_t)snprintf(buf, size, "[");
	for (size_t i = 0; i < npat && k < size; i++) {
		const char *sep = i ? ", " : "";
		switch (pat[i].kind) {
		case NNN_PAT_EQ:
			k += (size_t)snprintf(buf + k, size - k, "%s%s = %" PRId64, sep, pat[i].ref, pat[i].value);
			break;
		case NNN_PAT_ANY:
			k += (size_t)snprintf(buf + k, size - k, "%s>= 0", sep);
			break;
		case NNN_PAT_POS:
			k += (size_t)snprintf(buf + k, size - k, "%s>= 1", sep);
			break;
		case NNN_PAT_POS_MANY:
			k += (size_t)snprintf(buf + k, size - k, "%sone or more >= 1", sep);
			break;
		}
	}
	if (k < size)
		snprintf(buf + k, size - k, "]");
}

void nnn_rule_dims(nnn_vctx_t *v, const char *name, nnn_i32s_t dims, uint64_t at, const nnn_pat_t *pat,
                   size_t npat)
{
	size_t many = npat; /* index of the "+..." entry, npat when none */
	size_t fixed = npat;
	char want[160], got[160];

	for (size_t i = 0; i < npat; i++)
		if (pat[i].kind == NNN_PAT_POS_MANY)
			many = i, fixed = npat - 1;
	if (many == npat ? (size_t)dims.n != fixed : (size_t)dims.n < fixed + 1) {
		pat_text(pat, npat, want, sizeof want);
		nnn_v_problem(v, NNN_E_SHAPE, name, at, "found %d dims %s, expected %s%zu: %s", (int)dims.n,
		              fmt_dims(dims, got, sizeof got), many == npat ? "" : "at least ",
		              many == npat ? fixed : fixed + 1, want);
		return;
	}
	size_t tail = many == npat ? 0 : (size_t)dims.n - fixed; /* dims covered by "+..." */
	for (size_t d = 0, p = 0; d < (size_t)dims.n; d++) {
		const nnn_pat_t *e = &pat[p];
		int64_t x = dims.v[d];
		size_t mark = nnn_path_push(&v->path, name);
		nnn_path_index(&v->path, (int64_t)d);
		uint64_t dat = at + 4 + 4 * (uint64_t)d;
		if (e->kind == NNN_PAT_EQ && x != e->value)
			nnn_v_problem(v, NNN_E_SHAPE, "", dat, "found %" PRId64 ", expected %s = %" PRId64, x, e->ref,
			              e->value);
		else if (e->kind == NNN_PAT_ANY && x < 0)
			nnn_v_problem(v, NNN_E_SHAPE, "", dat, "found %" PRId64 ", expected >= 0", x);
		else if ((e->kind == NNN_PAT_POS || e->kind == NNN_PAT_POS_MANY) && x < 1)
			nnn_v_problem(v, NNN_E_SHAPE, "", dat, "found %" PRId64 ", expected >= 1", x);
		nnn_path_pop(&v->path, mark);
		if (p == many && --tail > 0)
			continue;
		p++;
	}
}

void nnn_rule_padding(nnn_vctx_t *v, const char *name, nnn_i32s_t pads, uint64_t pads_at, nnn_i32s_t kdims,
                      int64_t type, nnn_pad_fn formulas)
{
	int64_t n = (int64_t)kdims.n - 2, before, after;
	char got[160];

	if (n < 1)
		return; /* the kernels' rank is reported by their dims rule */
	/* The count holds whatever the type: shapes are inferred from it. */
	if (pads.n != 2 * n) {
		nnn_v_problem(v, NNN_E_PADDING, name, pads_at, "found %d padding dims %s, expected %" PRId64
		              " (before and after for each of the %" PRId64 " spatial axes)",
		              (int)pads.n, fmt_dims(pads, got, sizeof got), 2 * n, n);
		return;
	}
	for (int64_t j = 0; j < n; j++) {
		int64_t k = kdims.v[1 + j];
		if (k < 1 || !formulas(type, k, &before, &after))
			continue;
		for (int side = 0; side < 2; side++) {
			int64_t want = side ? after : before, found = pads.v[2 * j + side];
			if (found == want)
				continue;
			size_t mark = nnn_path_push(&v->path, name);
			nnn_path_index(&v->path, 2 * j + side);
			nnn_v_problem(v, NNN_E_PADDING, "", pads_at + 4 + 4 * (uint64_t)(2 * j + side),
			              "found %" PRId64 ", expected %" PRId64 " (%s of axis %" PRId64 " for kernel size %" PRId64
			              ")", found, want, side ? "after" : "before", j + 1, k);
			nnn_path_pop(&v->path, mark);
		}
	}
}

void nnn_rule_param_count(nnn_vctx_t *v, const char *name, uint64_t found, uint64_t total, uint64_t at)
{
	if (found != total)
		nnn_v_problem(v, NNN_E_PARAM_COUNT, name, at,
		              "found %" PRIu64 ", but the parameter tensors hold %" PRIu64 " values", found, total);
}

/* ---- the shape chain ---- */

/* What is known of the previous layer's output. */
typedef struct chain_state {
	int64_t last;      /* last-axis size; -1 unknown */
	int32_t rank;      /* dims between batch and last axis; -1 unknown */
	bool exact;        /* `shape` holds the whole output shape */
	nnn_shape_t shape;
	int32_t from;      /* the layer that produced it; -1 for the input */
} chain_state_t;

static void chain_problem(nnn_vctx_t *v, const char *name, int32_t i, const nnn_io_t *io,
                          const chain_state_t *st, const char *fmt, ...) NNN_PRINTF(6, 7);

static void chain_problem(nnn_vctx_t *v, const char *name, int32_t i, const nnn_io_t *io,
                          const chain_state_t *st, const char *fmt, ...)
{
	char msg[NNN_MSG_MAX], rel[64];
	va_list ap;
	size_t mark = nnn_path_push(&v->path, name);
	nnn_path_index(&v->path, i);
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (st->from >= 0)
		snprintf(rel, sizeof rel, "layers[%d]", (int)st->from);
	nnn_path_push(&v->path, io->inputs_path);
	if (io->inputs_index >= 0)
		nnn_path_index(&v->path, io->inputs_index);
	nnn_v_problem(v, st->from < 0 ? NNN_E_INPUT_SHAPE : NNN_E_CHAIN, "", io->inputs_at, "%s (from %s)", msg,
	              st->from < 0 ? "the model's input" : rel);
	nnn_path_pop(&v->path, mark);
}

static int64_t shape_features(const nnn_shape_t *s)
{
	int64_t n = 1;
	for (int32_t d = 1; d < s->rank; d++) {
		if (s->dims[d] && n > INT64_MAX / s->dims[d])
			return -1;
		n *= s->dims[d];
	}
	return n;
}

static void chain_features(nnn_vctx_t *v, const char *name, int32_t i, const nnn_io_t *io, chain_state_t *st)
{
	if (st->exact) {
		int64_t feat = io->flatten ? shape_features(&st->shape) : st->shape.dims[st->shape.rank - 1];
		if (feat != io->inputs) {
			chain_problem(v, name, i, io, st, "found %" PRId64 " inputs, but the incoming %s has %" PRId64,
			              io->inputs, io->flatten ? "shape flattens to" : "last axis", feat);
			st->exact = false;
		} else if (io->flatten) {
			st->shape.rank = 2;
			st->shape.dims[1] = io->outputs;
		} else {
			st->shape.dims[st->shape.rank - 1] = io->outputs;
		}
	} else if (st->last >= 0) {
		if (io->flatten && st->rank != 0) {
			if (st->last == 0 || io->inputs % st->last != 0)
				chain_problem(v, name, i, io, st,
				              "found %" PRId64 " inputs, expected a multiple of the %" PRId64
				              " channels it flattens",
				              io->inputs, st->last);
		} else if (io->inputs != st->last) {
			chain_problem(v, name, i, io, st, "found %" PRId64 " inputs, expected %" PRId64, io->inputs, st->last);
		}
	}
	st->last = io->outputs;
	st->rank = io->flatten ? 0 : st->rank;
}

static void chain_spatial(nnn_vctx_t *v, const char *name, int32_t i, const nnn_io_t *io, chain_state_t *st)
{
	int32_t n = io->kernel.n - 2;
	if (n < 1 || io->pads.n != 2 * n) { /* reported by the layer's own rules; nothing to infer from */
		st->exact = false;
		st->last = -1;
		st->rank = -1;
		return;
	}
	if (st->exact) {
		if (st->shape.rank != n + 2) {
			chain_problem(v, name, i, io, st, "a %d-D convolution needs rank %d input [batch, d1..d%d, channels], found rank %d",
			              (int)n, (int)n + 2, (int)n, (int)st->shape.rank);
			st->exact = false;
		} else if (st->shape.dims[n + 1] != io->inputs) {
			chain_problem(v, name, i, io, st, "found %" PRId64 " channels, but the incoming last axis has %" PRId64,
			              io->inputs, st->shape.dims[n + 1]);
			st->exact = false;
		} else {
			for (int32_t j = 0; j < n && st->exact; j++) {
				int64_t o = st->shape.dims[1 + j] + io->pads.v[2 * j] + io->pads.v[2 * j + 1] - io->kernel.v[1 + j] + 1;
				if (o < 1) {
					chain_problem(v, name, i, io, st,
					              "axis %d of size %" PRId64 " (padded by %d and %d) is smaller than kernel size %d",
					              (int)j + 1, st->shape.dims[1 + j], (int)io->pads.v[2 * j],
					              (int)io->pads.v[2 * j + 1], (int)io->kernel.v[1 + j]);
					st->exact = false;
				}
				st->shape.dims[1 + j] = o;
			}
			st->shape.dims[n + 1] = io->outputs;
		}
	} else if (st->last >= 0) {
		if (io->inputs != st->last)
			chain_problem(v, name, i, io, st, "found %" PRId64 " channels, expected %" PRId64, io->inputs, st->last);
		else if (st->rank >= 0 && st->rank != n)
			chain_problem(v, name, i, io, st, "a %d-D convolution cannot follow an output with %d spatial axes",
			              (int)n, (int)st->rank);
	}
	st->last = io->outputs;
	st->rank = n;
}

/* A plugin's layer: its infer gives the exact shape; without one, nothing
 * is known past it. */
static void chain_plugin(nnn_vctx_t *v, const char *name, int32_t i, const nnn_io_t *io, chain_state_t *st)
{
	char msg[NNN_MSG_MAX];
	nnn_shape_t out;
	if (st->exact) {
		if (nnn_ext_infer(io, &st->shape, &out, msg, sizeof msg) == NNN_OK && out.rank >= 2 &&
		    out.rank <= NNN_MAX_RANK) {
			st->shape = out;
			st->last = out.dims[out.rank - 1];
			st->rank = out.rank - 2;
			return;
		}
		chain_problem(v, name, i, io, st, "%s", msg[0] ? msg : "the layer rejects its input shape");
	}
	st->exact = false;
	st->last = -1;
	st->rank = -1;
}

void nnn_rule_chain(nnn_vctx_t *v, const char *name, const nnn_io_t *io, int32_t n, const nnn_shape_t *input,
                    nnn_shape_t *out_shapes)
{
	chain_state_t st = { .last = -1, .rank = -1, .from = -1 };

	if (input) {
		st.exact = input->rank >= 2 && input->rank <= NNN_MAX_RANK;
		st.shape = *input;
		if (st.exact) {
			st.last = input->dims[input->rank - 1];
			st.rank = input->rank - 2;
		} else {
			nnn_v_problem(v, NNN_E_INPUT_SHAPE, "", NNN_NO_OFFSET, "rank %d given, expected [batch, ..., features]",
			              (int)input->rank);
		}
	}
	for (int32_t i = 0; i < n; i++) {
		switch (io[i].kind) {
		case NNN_IO_FEATURES:
			chain_features(v, name, i, &io[i], &st);
			break;
		case NNN_IO_SPATIAL:
			chain_spatial(v, name, i, &io[i], &st);
			break;
		case NNN_IO_PLUGIN:
			chain_plugin(v, name, i, &io[i], &st);
			break;
		case NNN_IO_UNKNOWN:
			st.last = -1;
			st.rank = -1;
			st.exact = false;
			break;
		}
		st.from = i;
		if (out_shapes) {
			out_shapes[i] = st.shape;
			if (!st.exact)
				out_shapes[i].rank = 0;
		}
	}
}
