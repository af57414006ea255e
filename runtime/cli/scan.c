/* scan.c: see scan.h. nnn_file_validate finds the problems exactly as
 * `nnnkit validate` does; then a decode with a visitor hands over each
 * field (and files it under its layer), and the shape engine gives each
 * layer's shapes one at a time (nnn_model_shapes_each); map's histograms
 * come from a second decode, while the values are at hand (the visitor sees
 * every float array, even in a file that then fails). Nothing is kept per
 * field or per tensor: a model of many tiny layers has about ten fields a
 * layer in 50 bytes of file, and records of them would outweigh it. */
#define _GNU_SOURCE /* fopencookie */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nnn/shape.h>

#include "scan.h"

/* What the visitor needs besides the scan. */
typedef struct visit {
	cli_scan_t *s;
	FILE *scratch; /* formats each value (one stream, rewound per field) */
	char *buf;
	size_t len;
	size_t n;      /* fields seen in this pass */
	void (*on_field)(void *arg, const cli_field_t *f);
	void (*on_tensor)(void *arg, const cli_tensor_t *t);
	void *arg;
	/* the layer being read (cli_scan_layers): its texts, kept once it ends */
	char *act, *summary;
	size_t act_len, act_cap, sum_len, sum_cap;
	/* the last dims field (cli_scan_tensors), for the tensor data after it */
	char dims_path[NNN_PATH_MAX];
	char *dims;
	size_t dims_cap, dims_at;
	int32_t dims_layer;
} visit_t;

static const char *const PRIM_KIND[] = { "u8", "i32", "u64", "f32", "bool", "string", "i32_array", "f32_array" };

/* ---- texts: each kept once, by hash ---- */

static size_t hash(const char *p, size_t n)
{
	size_t h = 14695981039346656037u;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)p[i]) * 1099511628211u;
	return h;
}

/* The slot of the text p[0..n): its own, or the free one where it goes. */
static size_t *slot(const cli_scan_t *s, const char *p, size_t n)
{
	size_t mask = s->nslots - 1;
	for (size_t i = hash(p, n) & mask;; i = (i + 1) & mask) {
		size_t at = s->slots[i];
		if (!at || (!memcmp(s->text + at, p, n) && s->text[at + n] == '\0'))
			return &s->slots[i];
	}
}

/* Grows the table to twice its size (64 at first), when half full. */
static int rehash(cli_scan_t *s)
{
	size_t n = s->nslots ? 2 * s->nslots : 64, *old = s->slots, nold = s->nslots;
	if (!(s->slots = calloc(n, sizeof *s->slots))) {
		s->slots = old;
		return 0;
	}
	s->nslots = n;
	for (size_t i = 0; i < nold; i++)
		if (old[i])
			*slot(s, s->text + old[i], strlen(s->text + old[i])) = old[i];
	free(old);
	return 1;
}

/* Makes room for n more bytes in *p (*cap grows by doubling). */
static int room(cli_scan_t *s, char **p, size_t *cap, size_t len, size_t n)
{
	if (*cap - len > n)
		return 1;
	size_t c = *cap ? *cap : 64;
	while (c - len <= n)
		c *= 2;
	char *q = realloc(*p, c);
	if (!q) {
		s->oom = 1;
		return 0;
	}
	*p = q;
	*cap = c;
	return 1;
}

/* The offset of p[0..n) in the scan's text, added if new; 0 for none or
 * when out of memory (s->oom). */
static size_t keep(cli_scan_t *s, const char *p, size_t n)
{
	if (!n || s->oom)
		return 0;
	if (!s->tlen) { /* offset 0 is "": none */
		if (!room(s, &s->text, &s->tcap, 0, 1))
			return 0;
		s->text[s->tlen++] = '\0';
	}
	if (2 * (s->ntexts + 1) > s->nslots && !rehash(s)) {
		s->oom = 1;
		return 0;
	}
	size_t *at = slot(s, p, n);
	if (*at)
		return *at;
	if (!room(s, &s->text, &s->tcap, s->tlen, n + 1))
		return 0;
	memcpy(s->text + s->tlen, p, n);
	s->text[s->tlen + n] = '\0';
	*at = s->tlen;
	s->tlen += n + 1;
	s->ntexts++;
	return *at;
}

static size_t keep_str(cli_scan_t *s, const char *p)
{
	return keep(s, p, strlen(p));
}

const char *cli_scan_str(const cli_scan_t *s, size_t at)
{
	return at ? s->text + at : NULL;
}

/* Appends printf text to a growing string. */
static void append(cli_scan_t *s, char **str, size_t *len, size_t *cap, const char *fmt, ...) NNN_PRINTF(5, 6);
static void append(cli_scan_t *s, char **str, size_t *len, size_t *cap, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || !room(s, str, cap, *len, (size_t)n + 1))
		return;
	va_start(ap, fmt);
	vsnprintf(*str + *len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	*len += (size_t)n;
}

/* ---- fields ---- */

/* The field path relative to its layer ("bias.data"), or the whole path. */
static const char *rel_path(const char *path, int32_t layer)
{
	const char *p = layer >= 0 ? strchr(path, ']') : NULL;
	return p && p[1] == '.' ? p + 2 : path;
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

/* The field's value as `nnnkit dump` shows it, in the visit's buffer (valid
 * until the next field); NULL when out of memory. */
static const char *value_text(visit_t *v, const nnn_field_t *f)
{
	if (fseek(v->scratch, 0, SEEK_SET) == 0) {
		cli_field_value(v->scratch, f, 4, v->s->ctx);
		fputc('\0', v->scratch);
		if (fflush(v->scratch) == 0 && !ferror(v->scratch))
			return v->buf;
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
	else if (nnn_prim_is_array(f->prim) && bracket)
		snprintf(buf, size, "%s", bracket);
	else
		snprintf(buf, size, "%s", value);
}

/* A layer or activation type's name: the schema's title, else the title
 * its plugin gave it (plugin_title, may be NULL), else one made in buf. */
static const char *name_of(char *buf, size_t size, const char *title, const char *plugin_title, const char *what,
                           int id)
{
	if (!title)
		title = plugin_title;
	if (!title)
		snprintf(buf, size, "unknown %s ID %d", what, id);
	return title ? title : buf;
}

/* The layer read last is complete: its activation and summary are kept. */
static void end_layer(visit_t *v)
{
	cli_scan_t *s = v->s;
	if (!s->nlayers)
		return;
	cli_layer_t *L = &s->layers[s->nlayers - 1];
	if (v->act_len && memchr(v->act, '(', v->act_len))
		append(s, &v->act, &v->act_len, &v->act_cap, ")");
	L->act = keep(s, v->act, v->act_len);
	L->summary = keep(s, v->summary, v->sum_len);
	v->act_len = v->sum_len = 0;
}

/* Files the field under its layer: type, activation, summary. */
static void layer_field(visit_t *v, const cli_field_t *F, const nnn_field_t *f)
{
	cli_scan_t *s = v->s;
	const char *rel = rel_path(F->path, F->layer);
	char lab[128], buf[48];
	cli_layer_t *L;

	if ((size_t)F->layer == s->nlayers) {
		end_layer(v);
		if (s->nlayers == s->lcap) {
			size_t c = s->lcap ? 2 * s->lcap : 64;
			cli_layer_t *p = realloc(s->layers, c * sizeof *p);
			if (!p) {
				s->oom = 1;
				return;
			}
			s->layers = p;
			s->lcap = c;
		}
		L = &s->layers[s->nlayers++];
		memset(L, 0, sizeof *L);
		L->first = F->index;
		L->id = L->act_id = -1;
	}
	if ((size_t)F->layer + 1 != s->nlayers)
		return; /* layers come in order: the decoder never goes back */
	L = &s->layers[F->layer];
	L->end = F->index + 1;
	label(lab, sizeof lab, f, F->value);
	if (!strcmp(rel, "id")) {
		const char *name = NULL, *title = NULL;
		L->id = (int)f->i;
		if (!cli_plugin_type(s->ctx, f->type, L->id, &name, &title, &L->kernel))
			title = NULL;
		L->type = keep_str(s, name_of(buf, sizeof buf, nnn_layer_id_title(L->id), title, "layer", L->id));
	} else if (!strcmp(rel, "activation.id")) {
		const char *name = NULL, *title = NULL, *file;
		L->act_id = (int)f->i;
		if (!cli_plugin_type(s->ctx, f->type, L->act_id, &name, &title, &file))
			title = NULL;
		v->act_len = 0;
		append(s, &v->act, &v->act_len, &v->act_cap, "%s",
		       name_of(buf, sizeof buf, nnn_activation_id_title(L->act_id), title, "activation", L->act_id));
	} else if (!strncmp(rel, "activation.", 11)) {
		append(s, &v->act, &v->act_len, &v->act_cap, "%s%s=%s",
		       v->act_len && memchr(v->act, '(', v->act_len) ? " " : "(", rel + 11, lab);
	} else if (!strchr(rel, '.') && strcmp(rel, "dropout")) {
		append(s, &v->summary, &v->sum_len, &v->sum_cap, "%s%s=%s", v->sum_len ? " " : "", rel, lab);
	}
}

static void on_layers_field(void *ctx, const nnn_field_t *f)
{
	visit_t *v = ctx;
	cli_scan_t *s = v->s;
	if (s->oom)
		return;
	cli_field_t F = { .index = v->n++, .offset = f->offset, .size = f->size, .path = f->path,
		          .kind = f->type ? f->type->name : PRIM_KIND[f->prim], .layer = layer_of(f->path) };
	if (!(F.value = value_text(v, f)))
		return;
	s->nfields = v->n;
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
	if (F.layer >= 0)
		layer_field(v, &F, f);
	if (v->on_field && !s->oom)
		v->on_field(v->arg, &F);
}

/* ---- tensors ---- */

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

/* "[3, 2]" from the dims field beside a tensor's data ("x.data" after
 * "x.dims", a few fields before it in the same layer), or "?". */
static const char *dims_of(const visit_t *v, const char *path, size_t at, int32_t layer)
{
	size_t plen = strlen(path);
	if (!v->dims || plen < 5 || strcmp(path + plen - 5, ".data") || at - v->dims_at > 4 || v->dims_layer != layer)
		return "?";
	plen -= 5;
	if (strncmp(v->dims_path, path, plen) || strcmp(v->dims_path + plen, ".dims"))
		return "?";
	const char *bracket = strchr(v->dims, '[');
	return bracket ? bracket : "?";
}

static void on_tensor_field(void *ctx, const nnn_field_t *f)
{
	visit_t *v = ctx;
	cli_scan_t *s = v->s;
	size_t at = v->n++;
	size_t plen = strlen(f->path);
	if (s->oom)
		return;
	if (plen >= 5 && !strcmp(f->path + plen - 5, ".dims")) {
		const char *value = value_text(v, f);
		size_t n = value ? strlen(value) : 0;
		if (!value || !room(s, &v->dims, &v->dims_cap, 0, n + 1))
			return;
		memcpy(v->dims, value, n + 1);
		snprintf(v->dims_path, sizeof v->dims_path, "%s", f->path);
		v->dims_at = at;
		v->dims_layer = layer_of(f->path);
	}
	/* Past the fields the first pass saw, the file changed meanwhile. */
	if (f->prim != NNN_PRIM_F32_ARRAY || at >= s->nfields)
		return;
	cli_tensor_t t = { .field = at, .dims = dims_of(v, f->path, at, layer_of(f->path)) };
	stats(&t, (nnn_f32s_t){ f->bytes, f->count });
	v->on_tensor(v->arg, &t);
}

/* ---- passes ---- */

static void shape_of(void *ctx, int32_t i, const nnn_layer_shapes_t *sh)
{
	cli_scan_t *s = ctx;
	char buf[NNN_MAX_RANK * 24];
	s->layers[i].in = keep_str(s, nnn_pshape_format(&sh->in, buf, sizeof buf));
	s->layers[i].out = keep_str(s, nnn_pshape_format(&sh->out, buf, sizeof buf));
}

/* Each layer's shapes from the shape engine: exact from an input shape (up
 * to a layer that does not fit), or from the input the layers fix with a
 * batch of 1 (as `nnnkit info`), else what the layers' own fields fix; '?'
 * when the model did not decode. */
static void shapes(cli_scan_t *s, const nnn_model_t *m)
{
	if (m && s->nlayers && (size_t)m->layer_count == s->nlayers) {
		if (!s->have_input && nnn_model_fixed_input(m, &s->input))
			s->have_input = CLI_INPUT_FIXED;
		nnn_status_t st = nnn_model_shapes_each(m, s->have_input ? &s->input : NULL, shape_of, s, NULL);
		(void)st; /* the problems come from nnn_file_validate */
		return;
	}
	size_t unknown = keep_str(s, "?");
	for (size_t i = 0; i < s->nlayers; i++)
		s->layers[i].in = s->layers[i].out = unknown;
}

/* One decode of the file with the visitor v; the model when it decoded
 * (*m, may be NULL when not wanted). */
static nnn_status_t pass(cli_scan_t *s, visit_t *v, void (*fn)(void *, const nnn_field_t *), nnn_model_t **m,
                         nnn_diags_t *diags)
{
	nnn_visitor_t vis = { fn, NULL, v };
	nnn_decode_opts_t opts = { .flags = NNN_DECODE_KEEP_GOING, .visit = &vis, .ctx = s->ctx };
	nnn_model_t *got = NULL;
	v->scratch = open_memstream(&v->buf, &v->len);
	if (!v->scratch)
		return nnn_diags_add(diags, NNN_E_NOMEM, NNN_NO_OFFSET, "", "cannot make a text buffer");
	if (nnn_file_decode(s->file, &opts, &got, NULL) != NNN_OK)
		got = NULL; /* the fields seen up to the problem are all there is */
	fclose(v->scratch);
	free(v->buf);
	if (m)
		*m = got;
	else
		nnn_model_free(got);
	return NNN_OK;
}

nnn_status_t cli_scan_open(cli_scan_t *s, cli_env_t *env, const char *path, const nnn_shape_t *input,
                           nnn_diags_t *diags)
{
	const nnn_ctx_t *ctx = cli_ctx(env);
	memset(s, 0, sizeof *s);
	nnn_diags_init(&s->problems);
	s->ctx = ctx;
	if (input) {
		s->have_input = CLI_INPUT_GIVEN;
		s->input = *input;
	}
	nnn_status_t st = cli_file_open(env, path, NULL, &s->file, diags);
	if (st != NNN_OK)
		return st;
	nnn_file_bytes(s->file, &s->size);
	s->status = nnn_file_validate(s->file, ctx, input, &s->problems);
	return NNN_OK;
}

nnn_status_t cli_scan_layers(cli_scan_t *s, void (*on_field)(void *arg, const cli_field_t *f), void *arg,
                             nnn_diags_t *diags)
{
	visit_t v = { .s = s, .on_field = on_field, .arg = arg };
	nnn_model_t *m = NULL;
	nnn_status_t st = pass(s, &v, on_layers_field, &m, diags);
	if (st == NNN_OK) {
		end_layer(&v);
		shapes(s, m);
	}
	nnn_model_free(m);
	free(v.act);
	free(v.summary);
	if (st == NNN_OK && s->oom)
		st = nnn_diags_add(diags, NNN_E_NOMEM, NNN_NO_OFFSET, "", "cannot hold the layers of a %zu-byte file",
		                   s->size);
	return st;
}

nnn_status_t cli_scan_tensors(cli_scan_t *s, void (*on_tensor)(void *arg, const cli_tensor_t *t), void *arg,
                              nnn_diags_t *diags)
{
	visit_t v = { .s = s, .on_tensor = on_tensor, .arg = arg };
	nnn_status_t st = pass(s, &v, on_tensor_field, NULL, diags);
	free(v.dims);
	if (st == NNN_OK && s->oom)
		st = nnn_diags_add(diags, NNN_E_NOMEM, NNN_NO_OFFSET, "", "cannot hold a field of a %zu-byte file", s->size);
	return st;
}

void cli_scan_free(cli_scan_t *s)
{
	nnn_file_close(s->file);
	free(s->layers);
	free(s->desc);
	free(s->text);
	free(s->slots);
	nnn_diags_free(&s->problems);
	memset(s, 0, sizeof *s);
}

/* ---- the output, written as it is made ---- */

/* Where a picture goes: a descriptor written through nnn_write_all (the
 * one place that names a write failure, a file size limit included). */
typedef struct sink {
	int fd;
	nnn_diags_t *d;
	nnn_status_t st; /* the first write failure */
} sink_t;

static ssize_t sink_write(void *ctx, const char *buf, size_t n)
{
	sink_t *k = ctx;
	if (k->st == NNN_OK)
		k->st = nnn_write_all(k->fd, buf, n, k->d);
	return k->st == NNN_OK ? (ssize_t)n : -1;
}

typedef struct picture {
	nnn_status_t (*render)(FILE *out, cli_scan_t *s, const char *path, nnn_diags_t *diags);
	cli_scan_t *s;
	const char *name; /* the model as the picture names it */
	sink_t sink;
	nnn_status_t rendered; /* the render's own status: a failure there is the model's */
} picture_t;

/* Renders into fd through a buffered stream; the render's status, else
 * the first write failure's. */
static nnn_status_t draw(void *ctx, int fd, nnn_diags_t *d)
{
	picture_t *p = ctx;
	cookie_io_functions_t io = { .write = sink_write };
	p->sink = (sink_t){ fd, d, NNN_OK };
	FILE *o = fopencookie(&p->sink, "w", io);
	if (!o)
		return nnn_diags_add(d, NNN_E_NOMEM, NNN_NO_OFFSET, "", "cannot make an output stream");
	setvbuf(o, NULL, _IOFBF, (size_t)64 << 10);
	p->rendered = p->render(o, p->s, p->name, d);
	fclose(o); /* flushes: a failure there is the sink's */
	return p->rendered != NNN_OK ? p->rendered : p->sink.st;
}

int cli_picture(const cli_args_t *a, cli_env_t *env,
                nnn_status_t (*render)(FILE *out, cli_scan_t *s, const char *path, nnn_diags_t *diags))
{
	const char *path = cli_arg(a, "MODEL"), *out = cli_str(a, "output");
	const nnn_shape_t *in = cli_shape(a, "input-shape");
	int code;
	nnn_diags_t d;
	cli_scan_t s;

	if (!out)
		out = "-";
	nnn_diags_init(&d);
	nnn_status_t st = cli_scan_open(&s, env, path, in, &d);
	picture_t p = { render, &s, cli_name(path), { -1, &d, NNN_OK }, NNN_OK };
	bool opened = st == NNN_OK;
	if (opened)
		st = nnn_write_atomic(out, draw, &p, &d);
	if (st != NNN_OK) /* the model's when reading it failed, else the output's */
		code = cli_report(env, !opened || p.rendered != NNN_OK ? path : cli_out_name(out), &d, st);
	else
		code = cli_report(env, path, &s.problems, s.status); /* what the picture shows as problems */
	cli_scan_free(&s);
	nnn_diags_free(&d);
	return code;
}

const cli_pos_t cli_picture_pos[] = {
	{ "MODEL", CLI_IN, CLI_DASH, .help = CLI_MODEL_HELP },
	{ NULL },
};

nnn_model_t *cli_scan_model(const cli_scan_t *s)
{
	nnn_decode_opts_t opts = { .ctx = s->ctx };
	nnn_model_t *m = NULL;
	if (nnn_file_decode(s->file, &opts, &m, NULL) != NNN_OK || (m && (size_t)m->layer_count != s->nlayers)) {
		nnn_model_free(m);
		return NULL;
	}
	return m;
}
