/* info.c: the text of `nnnkit info` (nnn/info.h), for the CLI and the
 * Python package alike. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nnn/esc.h>
#include <nnn/info.h>
#include <nnn/model.h>
#include <nnn/npy.h>
#include <nnn/shape.h>

/* ---- the shapes ---- */

nnn_status_t nnn_model_info_shapes(const nnn_model_t *m, const nnn_shape_t *input, nnn_layer_shapes_t *out,
                                   bool *exact, nnn_diags_t *diags)
{
	nnn_status_t st = NNN_OK;
	nnn_shape_t guess;
	bool all = true;
	if (m->layer_count < 1)
		goto done;
	if (input)
		st = nnn_model_shapes(m, input, out, diags);
	else
		all = nnn_model_shapes(m, nnn_model_fixed_input(m, &guess) ? &guess : NULL, out, NULL) == NNN_OK;
	all = all && st == NNN_OK;
	for (int32_t i = 0; i < m->layer_count && all; i++)
		all = nnn_pshape_exact(&out[i].in) && nnn_pshape_exact(&out[i].out);
done:
	if (exact)
		*exact = all;
	return st;
}

/* ---- the text, snprintf-like ---- */

typedef struct out {
	char *buf;
	size_t size, len; /* len: the whole text's, also past size */
	bool md;          /* Markdown: a list of facts and a table */
	bool value;       /* Markdown: what is written now is a value, escaped */
	char last;        /* the last byte of a value */
} out_t;

static void put_raw(out_t *o, const char *s, size_t n)
{
	if (o->len < o->size)
		memcpy(o->buf + o->len, s, n < o->size - o->len ? n : o->size - o->len);
	o->len += n;
}

/* In a Markdown value, what would format, link, open HTML or end a table
 * cell is backslash-escaped (a description can hold any of it); "[1, 28]"
 * and "->" stay as they are: only "](" makes a link, and '>' quotes only
 * at a line's start, where no value is. */
static void put(out_t *o, const char *s, size_t n)
{
	if (!o->md || !o->value) {
		put_raw(o, s, n);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		if ((s[i] && strchr("\\`*_<|~", s[i])) || (s[i] == '(' && o->last == ']'))
			put_raw(o, "\\", 1);
		put_raw(o, &s[i], 1);
		o->last = s[i];
	}
}

static void puts_(out_t *o, const char *s)
{
	put(o, s, strlen(s));
}

static void put_any(void *o, const char *s, size_t n)
{
	put(o, s, n);
}

/* For short pieces only: numbers, a table cell. */
static void putf(out_t *o, const char *fmt, ...) NNN_PRINTF(2, 3);

static void putf(out_t *o, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	if (n > 0)
		put(o, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

/* A fact's name: "file:         " as text, "- **file**: " in Markdown,
 * whose value follows escaped up to fact_end. */
static void fact(out_t *o, const char *name)
{
	if (o->md) {
		putf(o, "- **%s**: ", name);
		o->value = true;
		o->last = 0;
	} else {
		char pad[16];
		snprintf(pad, sizeof pad, "%s:", name);
		putf(o, "%-14s", pad);
	}
}

static void fact_end(out_t *o)
{
	o->value = false;
	put_raw(o, "\n", 1);
}

/* How each nnn_info_say_t names a given input shape. */
static const struct say {
	const char *name, *eq, *open, *sep, *close, *misfit;
} says[] = {
	[NNN_INFO_SAY_CLI] = { "--input-shape", " ", "", ",", "", "--input-shape does not fit: see above" },
	[NNN_INFO_SAY_PYTHON] = { "input_shape", "=", "(", ", ", ")", "input_shape does not fit" },
};

/* "input [1, 784] -> output [1, 10]", or what is unknown and how to give it. */
static void put_shapes(out_t *o, const nnn_pshape_t *first_in, const nnn_pshape_t *last_out, bool exact, bool fit,
                       bool given, const struct say *say)
{
	char in[NNN_MAX_RANK * 24], out[NNN_MAX_RANK * 24];
	fact(o, "shapes");
	if (!first_in) {
		puts_(o, "none (no layers)");
		fact_end(o);
		return;
	}
	puts_(o, "input ");
	puts_(o, nnn_pshape_format(first_in, in, sizeof in));
	puts_(o, " -> output ");
	puts_(o, nnn_pshape_format(last_out, out, sizeof out));
	if (exact) {
		putf(o, " (%s%s)", given ? "from " : "", given ? say->name : "the input the layers fix, with a batch of 1");
		fact_end(o);
		return;
	}
	if (!fit) {
		putf(o, " (%s)", say->misfit);
		fact_end(o);
		return;
	}
	const nnn_pshape_t *p = first_in;
	puts_(o, o->md ? "; " : "\n              ");
	putf(o, "the layers do not fix the whole input (?: unknown); give it with %s", say->name);
	if (p->rank >= 1) {
		int unknown = 0;
		putf(o, "%s%s1", say->eq, say->open);
		for (int32_t k = 1; k < p->rank; k++)
			p->dims[k] < 0 ? putf(o, "%sD%d", say->sep, ++unknown) : putf(o, "%s%" PRId64, say->sep, p->dims[k]);
		putf(o, "%s (D1...: the sizes of your inputs)", say->close);
	} else {
		puts_(o, " (batch first)");
	}
	fact_end(o);
}

/* One row of the layer table, as text. */
enum { COL_NUM, COL_TYPE, COL_FIELDS, COL_ACT, COL_DROPOUT, COL_OUTPUT, COL_TENSORS, COL_PARAMS, COL_BYTES, COL_KERNEL, NCOLS };
typedef struct row {
	char col[NCOLS][256];
} row_t;

static const row_t header = { { "#", "type", "fields", "activation", "dropout", "output", "tensors", "params", "bytes",
	                        "kernel" } };

/* "[24,40]", and the element type when it is not float32: "[24,40] float16". */
static void shape_text(const nnn_param_t *t, char *buf, size_t size)
{
	nnn_dims_format(*t->dims, &(nnn_dims_style_t){ "[", ",", "]", NULL, NULL, 0 }, buf, size);
	size_t k = strlen(buf);
	const char *dtype = nnn_npy_dtype_name(nnn_prim_ekind(t->prim), nnn_prim_ewidth(t->prim));
	if (t->prim != NNN_PRIM_F32_ARRAY && k < size)
		snprintf(buf + k, size - k, " %s", dtype ? dtype : "?");
}

size_t nnn_layer_kernel_name(const nnn_ctx_t *ctx, const nnn_layer_t *L, char *buf, size_t size)
{
	const char *lp = NULL, *ap = NULL;
	int n;
	if (ctx) {
		nnn_ctx_layer(ctx, L->id, &lp);
		nnn_ctx_activation(ctx, L->activation.id, &ap);
	}
	if (!lp)
		n = snprintf(buf, size, "none");
	else
		n = snprintf(buf, size, "%s%s", strrchr(lp, '/') ? strrchr(lp, '/') + 1 : lp,
		             ap && strcmp(ap, lp) ? "+" : "");
	return n < 0 ? 0 : (size_t)n;
}

/* Bytes of layer i in the file: to the next layer's start, or the file's end. */
static void layer_bytes(const nnn_model_t *m, int32_t i, const nnn_info_opts_t *opts, char *buf, size_t size)
{
	uint64_t at = m->layers[i].at[NNN_AT_LAYER_ID];
	uint64_t end = i + 1 < m->layer_count ? m->layers[i + 1].at[NNN_AT_LAYER_ID] : opts->file_size;
	if (!opts->file || at == NNN_NO_OFFSET || end == NNN_NO_OFFSET)
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, "%" PRIu64, end - at);
}

static void format_layer(const nnn_ctx_t *ctx, const nnn_model_t *m, const nnn_pshape_t *out, int32_t i,
                         const nnn_info_opts_t *opts, row_t *r)
{
	const nnn_layer_t *L = &m->layers[i];
	const char *title = nnn_layer_title(L), *act = nnn_activation_title(&L->activation);
	nnn_param_t ts[8];
	char params[128];
	int n = nnn_layer_params(L, ts, 8);
	uint64_t count = 0;
	size_t k = 0;

	snprintf(r->col[COL_NUM], sizeof r->col[0], "%d", (int)i);
	snprintf(r->col[COL_TYPE], sizeof r->col[0], "%s", title ? title : "?");
	nnn_layer_format(L, r->col[COL_FIELDS], sizeof r->col[0]);
	nnn_activation_format(&L->activation, params, sizeof params);
	snprintf(r->col[COL_ACT], sizeof r->col[0], "%s%s%s%s", act ? act : "?", params[0] ? "(" : "", params,
	         params[0] ? ")" : "");
	snprintf(r->col[COL_DROPOUT], sizeof r->col[0], "%g", (double)L->dropout);
	nnn_pshape_format(out, r->col[COL_OUTPUT], sizeof r->col[0]);
	r->col[COL_TENSORS][0] = '\0';
	for (int t = 0; t < n && t < 8; t++) {
		char shape[96];
		shape_text(&ts[t], shape, sizeof shape);
		k += (size_t)snprintf(r->col[COL_TENSORS] + k, sizeof r->col[0] - k, "%s%s %s", t ? ", " : "", ts[t].name,
		                      shape);
		if (k >= sizeof r->col[0])
			break;
		count += (uint64_t)ts[t].data->n;
	}
	snprintf(r->col[COL_PARAMS], sizeof r->col[0], "%" PRIu64, count);
	layer_bytes(m, i, opts, r->col[COL_BYTES], sizeof r->col[0]);
	nnn_layer_kernel_name(ctx, L, r->col[COL_KERNEL], sizeof r->col[0]);
	/* Titles, fields and tensor names can come from a plugin's strings. */
	for (int c = 0; c < NCOLS; c++) {
		char raw[sizeof r->col[0]];
		memcpy(raw, r->col[c], sizeof raw);
		nnn_esc(r->col[c], sizeof r->col[0], raw, strlen(raw), NNN_ESC_C);
	}
}

static bool right_aligned(int c)
{
	return c == COL_NUM || c == COL_PARAMS || c == COL_BYTES;
}

/* A Markdown table row; after the header, the alignment row. */
static void put_md_row(out_t *o, const row_t *r)
{
	for (int c = 0; c < NCOLS; c++) {
		put_raw(o, "| ", 2);
		o->value = true;
		o->last = 0;
		puts_(o, r->col[c]);
		o->value = false;
		put_raw(o, " ", 1);
	}
	put_raw(o, "|\n", 2);
	if (r == &header) {
		for (int c = 0; c < NCOLS; c++)
			puts_(o, right_aligned(c) ? "|--:" : "|:--");
		put_raw(o, "|\n", 2);
	}
}

/* Numbers right-aligned, text left-aligned; the last column unpadded. */
static void put_row(out_t *o, const row_t *r, const int *width)
{
	if (o->md) {
		put_md_row(o, r);
		return;
	}
	for (int c = 0; c + 1 < NCOLS; c++) {
		putf(o, right_aligned(c) ? "%*s  " : "%-*s  ", width[c], r->col[c]);
	}
	puts_(o, r->col[NCOLS - 1]);
	puts_(o, "\n");
}

/* The table, a layer at a time as the shape engine gives it: a first pass
 * measures the widths (and the shapes line's facts), a second prints, so
 * nothing is held per layer. */
typedef struct table {
	const nnn_ctx_t *ctx;
	const nnn_model_t *m;
	const nnn_info_opts_t *opts;
	out_t *o;
	bool print, exact;
	int width[NCOLS];
	nnn_pshape_t first_in, last_out;
} table_t;

static void table_layer(void *ctx, int32_t i, const nnn_layer_shapes_t *s)
{
	table_t *t = ctx;
	row_t r;
	format_layer(t->ctx, t->m, &s->out, i, t->opts, &r);
	if (t->print) {
		put_row(t->o, &r, t->width);
		return;
	}
	for (int c = 0; c < NCOLS; c++)
		if ((int)strlen(r.col[c]) > t->width[c])
			t->width[c] = (int)strlen(r.col[c]);
	if (i == 0)
		t->first_in = s->in;
	t->last_out = s->out;
	t->exact = t->exact && nnn_pshape_exact(&s->in) && nnn_pshape_exact(&s->out);
}

/* The shapes line and the table. Without an input shape, the one the layers
 * fix (with a batch of 1) when the engine takes it, else partial shapes. */
static void put_model_shapes(out_t *o, const nnn_ctx_t *ctx, const nnn_model_t *m, const nnn_info_opts_t *opts,
                             const struct say *say)
{
	table_t t = { .ctx = ctx, .m = m, .opts = opts, .o = o, .exact = true };
	const nnn_shape_t *input = opts->input;
	nnn_shape_t guess;
	for (int c = 0; c < NCOLS; c++)
		t.width[c] = (int)strlen(header.col[c]);
	if (m->layer_count < 1) {
		put_shapes(o, NULL, NULL, false, true, false, say);
		puts_(o, "\n");
		put_row(o, &header, t.width);
		return;
	}
	if (!input && nnn_model_fixed_input(m, &guess))
		input = &guess;
	nnn_status_t st = nnn_model_shapes_each(m, input, table_layer, &t, NULL);
	put_shapes(o, &t.first_in, &t.last_out, t.exact && st == NNN_OK, !opts->input || st == NNN_OK,
	           opts->input != NULL, say);
	puts_(o, "\n");
	put_row(o, &header, t.width);
	t.print = true;
	if (nnn_model_shapes_each(m, input, table_layer, &t, NULL) != st)
		return; /* the same pass again: never */
}

size_t nnn_model_info(const nnn_ctx_t *ctx, const nnn_model_t *m, const nnn_info_opts_t *opts, char *buf,
                      size_t size)
{
	nnn_info_opts_t o = { .size = sizeof o };
	out_t t = { .buf = buf, .size = size };
	uint64_t total = nnn_model_param_total(m);
	/* A caller built against an older header passes a shorter struct. */
	if (opts)
		memcpy(&o, opts, opts->size < sizeof o ? opts->size : sizeof o);
	const struct say *say = &says[o.say == NNN_INFO_SAY_PYTHON ? NNN_INFO_SAY_PYTHON : NNN_INFO_SAY_CLI];
	t.md = o.form == NNN_INFO_MARKDOWN;

	fact(&t, "file");
	if (o.file) {
		/* A name from the command line, shown as every message shows it. */
		nnn_esc_put(o.file, strlen(o.file), NNN_ESC_MSG, put_any, &t);
		putf(&t, " (%" PRIu64 " bytes)", o.file_size);
	} else {
		putf(&t, "(in memory, %" PRIu64 " bytes encoded)", nnn_model_encoded_size(m));
	}
	fact_end(&t);
	fact(&t, "description");
	puts_(&t, "\"");
	nnn_esc_put(m->description.ptr, m->description.len > 0 ? (size_t)m->description.len : 0, NNN_ESC_C, put_any, &t);
	puts_(&t, "\"");
	fact_end(&t);
	fact(&t, "parameters");
	putf(&t, "%" PRIu64, total);
	if (total != m->param_count)
		putf(&t, " (the header says %" PRIu64 ": run nnnkit validate)", m->param_count);
	fact_end(&t);
	fact(&t, "layers");
	putf(&t, "%d", (int)m->layer_count);
	fact_end(&t);
	put_model_shapes(&t, ctx, m, &o, say);
	if (size)
		buf[t.len < size ? t.len : size - 1] = '\0';
	return t.len;
}
