/* map.c: `nnnkit map [-o map.html] MODEL`: one self-contained page with the
 * layer graph, every layer's fields, a histogram per tensor and a byte map
 * of the file. The page (runtime/cli/map_page.html, HTML, CSS and JS with no
 * outside references) is compiled in; this file only adds the data, as one
 * JSON blob the page's script reads. */
#include <inttypes.h>
#include <string.h>

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
	.summary = "one self-contained HTML page: layer graph, shapes, histograms, byte map",
	.main = run,
	.opts = CLI_OPTS(map_opts, cli_opts_input_shape),
	.pos = cli_picture_pos,
	.exits = CLI_EXITS_MODEL,
	.help = "usage: nnnkit map [--input-shape 1,28,28,1] [-o map.html] MODEL\n"
	"Writes one HTML page (no network access: inline CSS and script) showing the layer graph with\n"
	"each layer's input and output shapes, every layer's fields (plugin layers included), a\n"
	"histogram of every tensor on a log count axis (min, max, mean, std; zeros, NaN and\n"
	"infinities counted apart), and a map of the file's bytes, each region as wide as its bytes\n"
	"(the header, each layer, each field): hover one for its path, offset, size and value, click\n"
	"one or give an offset range to zoom in. The page fits screens from 360 px wide up.\n"
	"Without --input-shape, shapes show what each layer's own fields fix.\n"
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

/* What the rows written as the scan hands them over need. */
typedef struct page {
	FILE *o;
	kinds_t k;
} page_t;

static void field_row(void *arg, const cli_field_t *f)
{
	page_t *p = arg;
	fprintf(p->o, "%s\n[%" PRIu64 ",%" PRIu64 ",%d,%d,", f->index ? "," : "", f->offset, f->size,
	        kind_index(&p->k, f->kind), (int)f->layer);
	jz(p->o, f->path);
	fputc(',', p->o);
	jz(p->o, f->value);
	fputc(']', p->o);
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

static void layers(FILE *o, const cli_scan_t *s)
{
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
		fputc('}', o);
	}
	fputc(']', o);
}

static void num(FILE *o, const char *name, double v)
{
	fprintf(o, ",\"%s\":%.9g", name, v);
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
	fputs("]}", o);
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
static nnn_status_t data(FILE *o, cli_scan_t *s, const char *path, nnn_diags_t *d)
{
	char buf[NNN_MAX_RANK * 24];
	page_t p = { o, { .n = 0 } };
	fputs("{\"file\": ", o);
	jz(o, path);
	fprintf(o, ",\n\"size\": %zu,\n\"valid\": %s,\n\"status\": \"%s\",\n\"input\": ", s->size,
	        s->status == NNN_OK ? "true" : "false", nnn_status_name(s->status));
	jz(o, s->have_input ? nnn_shape_format(&s->input, buf, sizeof buf) : NULL);
	fputs(",\n\"fields\": [", o);
	nnn_status_t st = cli_scan_layers(s, field_row, &p, d);
	if (st != NNN_OK)
		return st;
	fputc(']', o);
	kinds(o, &p.k);
	fputs(",\n\"description\": ", o);
	if (s->desc)
		jstr(o, s->desc, s->desc_len);
	else
		fputs("null", o);
	fprintf(o, ",\n\"descCut\": %s", s->desc_cut ? "true" : "false");
	if (s->status != NNN_OK && s->decoded_end < s->size)
		fprintf(o, ",\n\"undecoded\": [%" PRIu64 ",%" PRIu64 "]", s->decoded_end, (uint64_t)s->size - s->decoded_end);
	else
		fputs(",\n\"undecoded\": null", o);
	layers(o, s);
	fputs(",\n\"tensors\": [", o);
	if ((st = cli_scan_tensors(s, tensor_row, &p, d)) != NNN_OK)
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
