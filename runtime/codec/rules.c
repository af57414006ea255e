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

#include <nnn/shape.h>

#include "path.h"
#include "vctx.h"

void nnn_v_problem(nnn_vctx_t *v, nnn_status_t code, const char *name, uint64_t at, const char *fmt, ...)
{
	char msg[NNN_MSG_MAX];
	size_t mark = nnn_path_push(&v->path, name);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	nnn_diags_add(v->diags, code, v->no_offsets ? NNN_NO_OFFSET : at, v->path.s, "%s", msg);
	nnn_path_pop(&v->path, mark);
	v->problems++;
}

/* "[10, 256]" (at most 16 dims shown). */
static const char *fmt_dims(nnn_i32s_t d, char *buf, size_t size)
{
	return nnn_dims_format(d, &(nnn_dims_style_t){ "[", ", ", "]", NULL, NULL, 16 }, buf, size);
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
