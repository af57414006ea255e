/* map.c: `nnnkit map [-o map.html] MODEL`: one self-contained page with the
 * layer graph, every layer's fields, a histogram per tensor and a byte map
 * of the file. The page (runtime/cli/map_page.html, HTML, CSS and JS with no
 * outside references) is compiled in; this file only adds the data, as one
 * JSON blob the page's script reads. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <nnn/file.h>
#include <nnn/model.h>
#include <nnn/shape.h>

#include "scan.h"
/* static const unsigned char map_page_html[] (made by the Makefile with xxd -i) */
#include "map_page.h"

static int run(const cli_args_t *a, cli_env_t *env);

static const cli_opt_t map_opts[] = {
	{ "output", 'o', CLI_OUT, CLI_DASH, "FILE", .help = "write the page to FILE atomically (default: stdout)" },
	{ NULL },
};

const cli_cmd_t cmd_map = {
	.name = "map",
	.summary = "one self-contained HTML page: layer graph, shapes, tensors' values, byte map, search",
	.main = run,
	.opts = CLI_OPTS(map_opts, cli_opts_input_shape),
	.pos = cli_picture_pos,
	.exits = CLI_EXITS_MODEL,
	.help = "usage: nnnkit map [--input-shape 1,28,28,1] [-o map.html] MODEL\n"
	"Writes one HTML page (no network access: inline CSS and script) showing the layer graph, which\n"
	"stays in view (each layer's type and kernel size, tensors' shapes, parameter count, input and\n"
	"output shapes), every layer's fields (plugin layers included), for every tensor a histogram\n"
	"on a log count axis (min, max, mean, std; zeros, NaN and infinities counted apart) and a\n"
	"paged value table (the page carries up to 65536 values a tensor), a Conv's filters as\n"
	"pictures, and a map of the file's bytes (the header, each layer, each field; every field\n"
	"visible, or each as wide as its bytes) with a list of its regions: hover one for its path,\n"
	"offset, size and value, click one or give an offset range to zoom in. Search by field path,\n"
	"byte offset (decimal or 0x hex) or value. The page fits screens from 360 px wide up.\n"
	"Without --input-shape, shapes follow from the input the layers fix, with a batch of 1 (as in\n"
	"nnnkit info), or, when they leave some of it open, show what each layer's own fields fix.\n"
	"An invalid model is mapped as far as it decodes, with its problems listed on the page and\n"
	"on stderr (exit 1).\n",
};

/* The marker in the page that the data replaces. */
#define DATA_MARK "@NNN_DATA@"

/* A JSON string that is also safe inside <script>: besides JSON's own
 * escapes, '<', '>' and '&' (no "</script>" or "<!--" can end or bend the
 * element). Every string here is text from the file, a plugin or the
 * command line, which the page shows: so controls, bidirectional controls
 * and U+2028/U+2029 (line ends to older JavaScript) are in it as the text
 * of their escape, "\\u202e", which the script reads as \u202e and the
 * page shows so (NNN_ESC_PAGE): escaped here, once, not in the script. */
static void jstr(FILE *o, const char *text, size_t n)
{
	fputc('"', o);
	cli_esc_print(o, text, n, NNN_ESC_PAGE);
	fputc('"', o);
}

static void jz(FILE *o, const char *s)
{
	if (s)
		jstr(o, s, strlen(s));
	else
		fputs("null", o);
}

/* Index of a kind in the page's colour table (kinds seen so far, in order). */
#define MAX_KINDS 64
typedef struct kinds {
	const char *v[MAX_KINDS];
	int n;
	size_t tensors; /* tensor rows written */
} kinds_t;

static int kind_index(kinds_t *k, const char *kind)
{
	for (int i = 0; i < k->n; i++)
		if (!strcmp(k->v[i], kind))
			return i;
	if (k->n == MAX_KINDS)
		return MAX_KINDS - 1; /* a schema with this many kinds shares the last colour */
	k->v[k->n] = kind;
	return k->n++;
}

/* The most values of one tensor the page carries (for its value table and
 * filter pictures): 256 KiB of floats, so that the page stays a page, not
 * a copy of the model, whatever the tensor's size. */
#define MAP_VALUES 65536

/* Where a float array's bytes are: its field's index, offset and size. */
typedef struct arr {
	size_t index;
	uint64_t offset, size;
} arr_t;

/* What the rows written as the scan hands them over need. */
typedef struct page {
	FILE *o;
	kinds_t k;
	const nnn_file_t *file;
	arr_t *arrs; /* the float arrays, in file order (cli_scan_layers) */
	size_t narrs, cap, next;
	int oom;
} page_t;

static void keep_arr(page_t *p, const cli_field_t *f)
{
	if (strcmp(f->kind, "f32_array") || p->oom)
		return;
	if (p->narrs == p->cap) {
		size_t c = p->cap ? 2 * p->cap : 64;
		arr_t *a = realloc(p->arrs, c * sizeof *a);
		if (!a) {
			p->oom = 1;
			return;
		}
		p->arrs = a;
		p->cap = c;
	}
	p->arrs[p->narrs++] = (arr_t){ f->index, f->offset, f->size };
}

static void field_row(void *arg, const cli_field_t *f)
{
	page_t *p = arg;
	unsigned char b[4];
	char text[5];
	fprintf(p->o, "%s\n[%" PRIu64 ",%" PRIu64 ",%d,%d,", f->index ? "," : "", f->offset, f->size,
	        kind_index(&p->k, f->kind), (int)f->layer);
	jz(p->o, f->path);
	fputc(',', p->o);
	jz(p->o, f->value);
	if (f->size == 4 && nnn_file_read(p->file, f->offset, b, 4, NULL) == NNN_OK && cli_const_text(f->path, b, text)) {
		fputc(',', p->o);
		jz(p->o, text);
	}
	fputc(']', p->o);
	keep_arr(p, f);
}

static void kinds(FILE *o, const kinds_t *k)
{
	fputs(",\n\"kinds\": [", o);
	for (int i = 0; i < k->n; i++) {
		fputs(i ? "," : "", o);
		jz(o, k->v[i]);
	}
	fputc(']', o);
}

/* What the decoded layer says beyond its fields, as the engine and the
 * schema's descriptors give it: the window it slides ("window": [5, 5],
 * from the schema's io; null for none), its parameter tensors by name with
 * their dims and where their dims and data are, and its parameter count. */
#define MAP_TENSORS 64
static void facts(FILE *o, const nnn_layer_t *L)
{
	nnn_layer_window_t w;
	nnn_named_tensor_t ts[MAP_TENSORS];
	int n = nnn_layer_tensors(L, ts, MAP_TENSORS);
	uint64_t params = 0;
	fputs(",\"window\":", o);
	if (nnn_layer_window(L, &w)) {
		for (int32_t j = 0; j < w.n; j++)
			fprintf(o, "%s%d", j ? "," : "[", (int)w.k[j]);
		fprintf(o, "],\"windowAt\":%" PRIu64 ",\"windowFirst\":%" PRId64, w.at, w.first);
	} else {
		fputs("null", o);
	}
	fputs(",\"tensors\":[", o);
	for (int t = 0; t < n && t < MAP_TENSORS; t++) {
		const nnn_tensor_t *T = ts[t].tensor;
		fprintf(o, "%s{\"name\":", t ? "," : "");
		jz(o, ts[t].name);
		fputs(",\"dims\":[", o);
		for (int32_t j = 0; j < T->dims.n; j++)
			fprintf(o, "%s%d", j ? "," : "", (int)T->dims.v[j]);
		fprintf(o, "],\"dimsAt\":%" PRIu64 ",\"dataAt\":%" PRIu64 ",\"count\":%" PRId64 "}", T->at[NNN_AT_TENSOR_DIMS],
		        T->at[NNN_AT_TENSOR_DATA], (int64_t)T->data.n);
		params += (uint64_t)T->data.n;
	}
	fprintf(o, "],\"params\":%" PRIu64, params);
}

static void layers(FILE *o, const cli_scan_t *s)
{
	nnn_model_t *m = cli_scan_model(s);
	fputs(",\n\"layers\": [", o);
	for (size_t i = 0; i < s->nlayers; i++) {
		const cli_layer_t *L = &s->layers[i];
		const char *summary = cli_scan_str(s, L->summary);
		fprintf(o, "%s\n{\"id\":%d,\"first\":%zu,\"end\":%zu,\"type\":", i ? "," : "", L->id, L->first, L->end);
		jz(o, cli_scan_str(s, L->type));
		fputs(",\"kernel\":", o);
		jz(o, L->kernel);
		fputs(",\"act\":", o);
		jz(o, cli_scan_str(s, L->act));
		fputs(",\"summary\":", o);
		jz(o, summary ? summary : "");
		fputs(",\"in\":", o);
		jz(o, cli_scan_str(s, L->in));
		fputs(",\"out\":", o);
		jz(o, cli_scan_str(s, L->out));
		if (m)
			facts(o, &m->layers[i]);
		fputc('}', o);
	}
	fputc(']', o);
	nnn_model_free(m);
}

static void num(FILE *o, const char *name, double v)
{
	fprintf(o, ",\"%s\":%.9g", name, v);
}

/* n bytes as base64. */
static void b64(FILE *o, const unsigned char *b, size_t n)
{
	static const char A[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)b[i] << 16 | (i + 1 < n ? (uint32_t)b[i + 1] << 8 : 0) | (i + 2 < n ? b[i + 2] : 0);
		fputc(A[v >> 18 & 63], o);
		fputc(A[v >> 12 & 63], o);
		fputc(i + 1 < n ? A[v >> 6 & 63] : '=', o);
		fputc(i + 2 < n ? A[v & 63] : '=', o);
	}
}

/* The tensor's first values (at most MAP_VALUES), as its little-endian
 * float bytes in base64: "values" and how many, "shown". The values are
 * the last 4 * count bytes of the array's field (its count comes first). */
static void values(FILE *o, page_t *p, const cli_tensor_t *t)
{
	unsigned char buf[3 * 1024]; /* a multiple of 3 and of 4: whole base64 groups, whole floats */
	while (p->next < p->narrs && p->arrs[p->next].index < t->field)
		p->next++;
	const arr_t *a = p->next < p->narrs && p->arrs[p->next].index == t->field ? &p->arrs[p->next] : NULL;
	uint64_t shown = t->st.count < MAP_VALUES ? t->st.count : MAP_VALUES;
	if (!a || a->size < 4 * t->st.count)
		shown = 0;
	fputs(",\"values\":\"", o);
	for (uint64_t at = 0; at < 4 * shown;) {
		size_t n = 4 * shown - at < sizeof buf ? (size_t)(4 * shown - at) : sizeof buf;
		if (nnn_file_read(p->file, a->offset + a->size - 4 * t->st.count + at, buf, n, NULL) != NNN_OK) {
			shown = at / 4; /* the file shrank: what was read is what there is (whole groups) */
			break;
		}
		b64(o, buf, n);
		at += n;
	}
	fprintf(o, "\",\"shown\":%" PRIu64, shown);
}

static void tensor_row(void *arg, const cli_tensor_t *t)
{
	page_t *p = arg;
	FILE *o = p->o;
	fprintf(o, "%s\n{\"field\":%zu,\"dims\":", p->k.tensors++ ? "," : "", t->field);
	jz(o, t->dims);
	fprintf(o, ",\"count\":%" PRIu64 ",\"finite\":%" PRIu64 ",\"nan\":%" PRIu64 ",\"pinf\":%" PRIu64
	           ",\"ninf\":%" PRIu64 ",\"zero\":%" PRIu64, t->st.count, t->st.finite, t->st.nan, t->st.pinf,
	           t->st.ninf, t->st.zeros);
	num(o, "min", t->st.min);
	num(o, "max", t->st.max);
	num(o, "mean", t->st.mean);
	num(o, "std", t->st.std);
	fputs(",\"bins\":[", o);
	for (int b = 0; b < CLI_BINS; b++)
		fprintf(o, "%s%" PRIu64, b ? "," : "", t->bins[b]);
	fputc(']', o);
	values(o, p, t);
	fputc('}', o);
}

static void problems(FILE *o, const cli_scan_t *s)
{
	char buf[NNN_PATH_MAX + NNN_MSG_MAX + 512];
	fputs(",\n\"problems\": [", o);
	for (size_t i = 0; i < s->problems.n; i++) {
		const nnn_diag_t *d = &s->problems.v[i];
		fprintf(o, "%s\n{\"code\":\"%s\",\"offset\":", i ? "," : "", nnn_status_name(d->code));
		if (d->offset == NNN_NO_OFFSET)
			fputs("null", o);
		else
			fprintf(o, "%" PRIu64, d->offset);
		fputs(",\"path\":", o);
		jz(o, d->path);
		fputs(",\"text\":", o);
		jz(o, nnn_diag_format(d, buf, sizeof buf));
		fputc('}', o);
	}
	fprintf(o, "],\n\"dropped\": %zu", s->problems.dropped);
}

/* The data as the page's script reads it, written as the scan goes: the
 * fields (first pass), what the first pass kept (description, layers),
 * then the tensors (second pass). Key order means nothing to the script. */
static nnn_status_t tail(FILE *o, cli_scan_t *s, page_t *p, nnn_diags_t *d);

static nnn_status_t data(FILE *o, cli_scan_t *s, const char *path, nnn_diags_t *d)
{
	page_t p = { o, { .n = 0 }, s->file, NULL, 0, 0, 0, 0 };
	fputs("{\"file\": ", o);
	jz(o, path);
	fprintf(o, ",\n\"size\": %zu,\n\"valid\": %s,\n\"status\": \"%s\"", s->size,
	        s->status == NNN_OK ? "true" : "false", nnn_status_name(s->status));
	fputs(",\n\"fields\": [", o);
	nnn_status_t st = cli_scan_layers(s, field_row, &p, d);
	if (st == NNN_OK)
		st = tail(o, s, &p, d);
	free(p.arrs);
	return st;
}

/* What follows the fields: kinds, description, layers, tensors, problems. */
static nnn_status_t tail(FILE *o, cli_scan_t *s, page_t *p, nnn_diags_t *d)
{
	char buf[NNN_MAX_RANK * 24];
	nnn_status_t st;
	if (p->oom)
		return nnn_diags_add(d, NNN_E_NOMEM, NNN_NO_OFFSET, "", "cannot hold the float arrays of a %zu-byte file",
		                     s->size);
	fputc(']', o);
	kinds(o, &p->k);
	fputs(",\n\"description\": ", o);
	if (s->desc)
		jstr(o, s->desc, s->desc_len);
	else
		fputs("null", o);
	fprintf(o, ",\n\"descCut\": %s", s->desc_cut ? "true" : "false");
	/* after the layers were scanned: the input the layers fix is known then */
	fputs(",\n\"input\": ", o);
	jz(o, s->have_input ? nnn_shape_format(&s->input, buf, sizeof buf) : NULL);
	fprintf(o, ",\n\"inputFixed\": %s", s->have_input == CLI_INPUT_FIXED ? "true" : "false");
	if (s->status != NNN_OK && s->decoded_end < s->size)
		fprintf(o, ",\n\"undecoded\": [%" PRIu64 ",%" PRIu64 "]", s->decoded_end, (uint64_t)s->size - s->decoded_end);
	else
		fputs(",\n\"undecoded\": null", o);
	layers(o, s);
	fputs(",\n\"tensors\": [", o);
	if ((st = cli_scan_tensors(s, tensor_row, p, d)) != NNN_OK)
		return st;
	fputc(']', o);
	problems(o, s);
	fputs("}", o);
	return NNN_OK;
}

static nnn_status_t render(FILE *o, cli_scan_t *s, const char *path, nnn_diags_t *d)
{
	const unsigned char *page = map_page_html;
	size_t n = sizeof map_page_html, m = strlen(DATA_MARK), at = 0;
	while (at + m <= n && memcmp(page + at, DATA_MARK, m))
		at++;
	if (at + m > n) {
		/* Only a broken build can get here: tests/cli/test_map.c renders a page. */
		fputs("nnnkit: the compiled-in map page has no data marker\n", stderr);
		at = n;
	}
	fwrite(page, 1, at, o);
	nnn_status_t st = data(o, s, path, d);
	if (st == NNN_OK && at < n)
		fwrite(page + at + m, 1, n - at - m, o);
	return st;
}

static int run(const cli_args_t *a, cli_env_t *env)
{
	return cli_picture(a, env, render);
}
