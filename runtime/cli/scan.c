/* scan.c: see scan.h. One decode with a visitor collects the fields, and the
 * histograms while the values are at hand (the visitor sees every float
 * array, even in a file that then fails); nnn_validate_bytes finds the
 * problems exactly as `nnnkit validate` does; nnn_model_validate gives the
 * shapes when the model decodes. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <nnn/shape.h>

#include "scan.h"

/* What the visitor needs besides the scan. */
typedef struct visit {
	cli_scan_t *s;
	const nnn_ctx_t *ctx;
	FILE *scratch; /* formats each value (one stream, rewound per field) */
	char *buf;
	size_t len;
} visit_t;

static const char *const PRIM_KIND[] = { "u8", "i32", "u64", "f32", "bool", "string", "i32_array", "f32_array" };

static char *dup(cli_scan_t *s, const char *t)
{
	char *p = strdup(t);
	if (!p)
		s->oom = 1;
	return p;
}

/* Appends printf text to a growing string (*str may be NULL). */
static void append(cli_scan_t *s, char **str, const char *fmt, ...) NNN_PRINTF(3, 4);
static void append(cli_scan_t *s, char **str, const char *fmt, ...)
{
	va_list ap;
	size_t old = *str ? strlen(*str) : 0;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	char *p = n < 0 ? NULL : realloc(*str, old + (size_t)n + 1);
	if (!p) {
		s->oom = 1;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(p + old, (size_t)n + 1, fmt, ap);
	va_end(ap);
	*str = p;
}

/* Makes room for one more element of an array that doubles. */
static int grow(cli_scan_t *s, void **v, size_t *cap, size_t n, size_t elem)
{
	if (n < *cap)
		return 1;
	size_t c = *cap ? 2 * *cap : 64;
	void *p = realloc(*v, c * elem);
	if (!p) {
		s->oom = 1;
		return 0;
	}
	*v = p;
	*cap = c;
	return 1;
}

const char *cli_scan_rel(const cli_field_t *f)
{
	const char *p = f->layer >= 0 ? strchr(f->path, ']') : NULL;
	return p && p[1] == '.' ? p + 2 : f->path;
}

/* "layers[3].bias" -> 3; -1 outside the layers. */
static int32_t layer_of(const char *path)
{
	char *end;
	if (strncmp(path, "layers[", 7))
		return -1;
	long i = strtol(path + 7, &end, 10);
	return *end == ']' && i >= 0 && i <= INT32_MAX ? (int32_t)i : -1;
}

static char *value_text(visit_t *v, const nnn_field_t *f)
{
	if (fseek(v->scratch, 0, SEEK_SET) == 0) {
		cli_field_value(v->scratch, f, 4, v->ctx);
		fputc('\0', v->scratch);
		if (fflush(v->scratch) == 0 && !ferror(v->scratch))
			return dup(v->s, v->buf);
	}
	v->s->oom = 1;
	return NULL;
}

/* The short form of a value, for one-line summaries. */
static void label(char *buf, size_t size, const nnn_field_t *f, const char *value)
{
	int is_enum = f->type && f->type->value_name && (f->prim == NNN_PRIM_U8 || f->prim == NNN_PRIM_I32);
	const char *name = is_enum ? f->type->value_name(f->i) : NULL;
	const char *bracket = strchr(value, '[');
	if (f->prim == NNN_PRIM_F32)
		snprintf(buf, size, "%.7g", (double)f->f);
	else if (name)
		snprintf(buf, size, "%s", name);
	else if ((f->prim == NNN_PRIM_I32_ARRAY || f->prim == NNN_PRIM_F32_ARRAY) && bracket)
		snprintf(buf, size, "%s", bracket);
	else
		snprintf(buf, size, "%s", value);
}

/* A layer or activation type's name: the schema's title, else the title
 * its plugin gave it (plugin_title, may be NULL). */
static char *name_of(cli_scan_t *s, const char *title, const char *plugin_title, const char *what, int id)
{
	char buf[48];
	if (!title)
		title = plugin_title;
	if (!title)
		snprintf(buf, sizeof buf, "unknown %s ID %d", what, id);
	return dup(s, title ? title : buf);
}

/* Files the field under its layer: type, activation, summary. */
static void layer_field(visit_t *v, size_t at, const nnn_field_t *f)
{
	cli_scan_t *s = v->s;
	const cli_field_t *F = &s->fields[at];
	const char *rel = cli_scan_rel(F);
	char lab[128];
	cli_layer_t *L;

	if ((size_t)F->layer == s->nlayers) {
		if (!grow(s, (void **)&s->layers, &s->lcap, s->nlayers, sizeof *s->layers))
			return;
		L = &s->layers[s->nlayers++];
		memset(L, 0, sizeof *L);
		L->first = at;
		L->id = L->act_id = -1;
	}
	if ((size_t)F->layer + 1 != s->nlayers)
		return; /* layers come in order: the decoder never goes back */
	L = &s->layers[F->layer];
	L->end = at + 1;
	label(lab, sizeof lab, f, F->value);
	if (!strcmp(rel, "id")) {
		const char *name = NULL, *title = NULL;
		L->id = (int)f->i;
		if (!cli_plugin_type(v->ctx, f->type, L->id, &name, &title, &L->kernel))
			title = NULL;
		L->type = name_of(s, nnn_layer_id_title(L->id), title, "layer", L->id);
	} else if (!strcmp(rel, "activation.id")) {
		const char *name = NULL, *title = NULL, *file;
		L->act_id = (int)f->i;
		if (!cli_plugin_type(v->ctx, f->type, L->act_id, &name, &title, &file))
			title = NULL;
		L->act = name_of(s, nnn_activation_id_title(L->act_id), title, "activation", L->act_id);
	} else if (!strncmp(rel, "activation.", 11)) {
		append(s, &L->act, "%s%s=%s", strchr(L->act ? L->act : "", '(') ? " " : "(", rel + 11, lab);
	} else if (!strchr(rel, '.') && strcmp(rel, "dropout")) {
		append(s, &L->summary, "%s%s=%s", L->summary ? " " : "", rel, lab);
	}
}

/* "[3, 2]" from the dims field beside a tensor's data ("x.data" and
 * "x.dims", a few fields before it). */
static const char *dims_of(const cli_scan_t *s, size_t at)
{
	const char *path = s->fields[at].path;
	size_t plen = strlen(path);
	if (plen < 5 || strcmp(path + plen - 5, ".data"))
		return "?";
	plen -= 5;
	for (size_t j = at; j-- > 0 && at - j <= 4 && s->fields[j].layer == s->fields[at].layer;) {
		const cli_field_t *d = &s->fields[j];
		if (!strncmp(d->path, path, plen) && !strcmp(d->path + plen, ".dims") && strchr(d->value, '['))
			return strchr(d->value, '[');
	}
	return "?";
}

/* Counts and statistics (cli_values_stats, as `nnnkit stats`), then the
 * histogram of the finite values over [min, max], which needs both ends
 * first. */
static void stats(cli_tensor_t *t, nnn_f32s_t a)
{
	cli_values_stats(a, &t->st);
	if (!t->st.finite)
		return;
	double w = t->st.max - t->st.min;
	for (int32_t i = 0; i < a.n; i++) {
		double x = nnn_f32s_get(a, i);
		if (!isfinite(x))
			continue;
		int b = w > 0 ? (int)((x - t->st.min) / w * CLI_BINS) : 0;
		t->bins[b < CLI_BINS ? b : CLI_BINS - 1]++;
	}
}

static void tensor(visit_t *v, size_t at, const nnn_field_t *f)
{
	cli_scan_t *s = v->s;
	if (!grow(s, (void **)&s->tensors, &s->tcap, s->ntensors, sizeof *s->tensors))
		return;
	cli_tensor_t *t = &s->tensors[s->ntensors++];
	memset(t, 0, sizeof *t);
	t->field = at;
	t->dims = dims_of(s, at);
	stats(t, (nnn_f32s_t){ f->bytes, f->count });
}

static void on_field(void *ctx, const nnn_field_t *f)
{
	visit_t *v = ctx;
	cli_scan_t *s = v->s;
	if (s->oom || !grow(s, (void **)&s->fields, &s->fcap, s->nfields, sizeof *s->fields))
		return;
	size_t at = s->nfields++;
	cli_field_t *F = &s->fields[at];
	memset(F, 0, sizeof *F);
	F->offset = f->offset;
	F->size = f->size;
	F->kind = f->type ? f->type->name : PRIM_KIND[f->prim];
	F->layer = layer_of(f->path);
	F->path = dup(s, f->path);
	F->value = value_text(v, f);
	if (s->oom)
		return;
	if (f->offset + f->size > s->decoded_end)
		s->decoded_end = f->offset + f->size;
	if (!strcmp(f->path, "description") && f->prim == NNN_PRIM_STRING && !s->desc) {
		s->desc_len = f->count < CLI_DESC_MAX ? (size_t)f->count : CLI_DESC_MAX;
		s->desc_cut = (size_t)f->count > s->desc_len;
		if ((s->desc = malloc(s->desc_len + 1)) == NULL)
			s->oom = 1;
		else
			memcpy(s->desc, f->bytes, s->desc_len), s->desc[s->desc_len] = '\0';
	}
	if (F->layer >= 0)
		layer_field(v, at, f);
	if (f->prim == NNN_PRIM_F32_ARRAY)
		tensor(v, at, f);
}

static char *shape_text(cli_scan_t *s, const nnn_pshape_t *sh)
{
	char buf[NNN_MAX_RANK * 24];
	return dup(s, nnn_pshape_format(sh, buf, sizeof buf));
}

/* Each layer's shapes from the shape engine: exact from an input shape (up
 * to a layer that does not fit), else what the layers' own fields fix; '?'
 * when the model did not decode. */
static void shapes(cli_scan_t *s, const nnn_model_t *m)
{
	nnn_layer_shapes_t *sh = NULL;
	if (m && s->nlayers && (size_t)m->layer_count == s->nlayers && (sh = calloc(s->nlayers, sizeof *sh)) == NULL)
		s->oom = 1;
	if (sh) {
		nnn_status_t st = nnn_model_shapes(m, s->have_input ? &s->input : NULL, sh, NULL);
		(void)st; /* the problems come from nnn_validate_bytes */
	}
	for (size_t i = 0; i < s->nlayers; i++) {
		cli_layer_t *L = &s->layers[i];
		if (L->act && strchr(L->act, '('))
			append(s, &L->act, ")");
		L->in = sh ? shape_text(s, &sh[i].in) : dup(s, "?");
		L->out = sh ? shape_text(s, &sh[i].out) : dup(s, "?");
	}
	free(sh);
}

nnn_status_t cli_scan(cli_scan_t *s, const char *path, const nnn_ctx_t *ctx, const nnn_shape_t *input,
                      nnn_diags_t *diags)
{
	visit_t v = { s, ctx, NULL, NULL, 0 };
	nnn_visitor_t vis = { on_field, NULL, &v };
	nnn_decode_opts_t opts = { .flags = NNN_DECODE_KEEP_GOING, .visit = &vis, .ctx = ctx };
	nnn_file_t *f;
	nnn_model_t *m = NULL;
	nnn_status_t st;

	memset(s, 0, sizeof *s);
	nnn_diags_init(&s->problems);
	if (input) {
		s->have_input = 1;
		s->input = *input;
	}
	st = nnn_file_map(path, &f, diags);
	if (st != NNN_OK)
		return st;
	nnn_file_bytes(f, &s->size);
	v.scratch = open_memstream(&v.buf, &v.len);
	if (!v.scratch) {
		nnn_file_close(f);
		return nnn_diags_add(diags, NNN_E_NOMEM, NNN_NO_OFFSET, "", "cannot make a text buffer");
	}
	s->status = nnn_file_validate(f, ctx, input, &s->problems);
	if (nnn_file_decode(f, &opts, &m, NULL) != NNN_OK)
		m = NULL; /* the fields seen up to the problem are all there is */
	shapes(s, m);
	nnn_model_free(m);
	fclose(v.scratch);
	free(v.buf);
	nnn_file_close(f);
	if (s->oom)
		return nnn_diags_add(diags, NNN_E_NOMEM, NNN_NO_OFFSET, "", "cannot hold the fields of a %zu-byte file",
		                     s->size);
	return NNN_OK;
}

void cli_scan_free(cli_scan_t *s)
{
	for (size_t i = 0; i < s->nfields; i++) {
		free(s->fields[i].path);
		free(s->fields[i].value);
	}
	for (size_t i = 0; i < s->nlayers; i++) {
		cli_layer_t *L = &s->layers[i];
		free(L->type);
		free(L->act);
		free(L->summary);
		free(L->in);
		free(L->out);
	}
	free(s->fields);
	free(s->tensors);
	free(s->layers);
	free(s->desc);
	nnn_diags_free(&s->problems);
	memset(s, 0, sizeof *s);
}

int cli_picture(const cli_args_t *a, cli_env_t *env,
                void (*render)(FILE *out, const cli_scan_t *s, const char *path))
{
	const char *path = cli_arg(a, "MODEL"), *out = cli_str(a, "output");
	const nnn_shape_t *in = cli_shape(a, "input-shape");
	int code;
	char *page = NULL;
	size_t n = 0;
	nnn_diags_t d;
	cli_scan_t s;

	if (!out)
		out = "-";
	nnn_diags_init(&d);
	nnn_status_t st = cli_scan(&s, path, cli_ctx(env), in, &d);
	FILE *o = st == NNN_OK ? open_memstream(&page, &n) : NULL;
	if (st == NNN_OK && !o)
		st = nnn_diags_add(&d, NNN_E_NOMEM, NNN_NO_OFFSET, "", "cannot make a page buffer");
	if (o) {
		render(o, &s, cli_name(path));
		int bad = ferror(o);
		if (fclose(o) != 0 || bad)
			st = nnn_diags_add(&d, NNN_E_NOMEM, NNN_NO_OFFSET, "", "cannot hold the output in memory");
	}
	if (st != NNN_OK)
		code = cli_report(path, &d, st);
	else if ((code = cli_emit(out, page, n)) == EXIT_VALID)
		code = cli_report(path, &s.problems, s.status); /* what the picture shows as problems */
	free(page);
	cli_scan_free(&s);
	nnn_diags_free(&d);
	return code;
}

const cli_pos_t cli_picture_pos[] = {
	{ "MODEL", CLI_IN, CLI_DASH, .help = "the .nnn model" },
	{ NULL },
};
