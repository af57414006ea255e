/* info.c: `nnnkit info MODEL`: what a model is, in one screen. */
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <nnn/shape.h>

#include "cli.h"

static int run(const cli_args_t *a, cli_env_t *env);

static const cli_pos_t info_pos[] = {
	{ "MODEL", CLI_IN, CLI_DASH, .help = "the .nnn model" },
	{ NULL },
};

const cli_cmd_t cmd_info = {
	.name = "info",
	.summary = "describe a model: description, parameters, a table of layers",
	.main = run,
	.opts = CLI_OPTS(cli_opts_input_shape, cli_opts_json),
	.pos = info_pos,
	.exits = CLI_EXITS_MODEL,
	.exit_what = { [1] = "the model is invalid, or --input-shape does not fit it" },
	.help = "usage: nnnkit info [--input-shape 1,28,28,1] [--json] MODEL\n"
	"Prints the description, the parameter count, the model's input and output shapes, and one row\n"
	"per layer: type, its own fields, activation and its parameters, dropout, output shape, tensor\n"
	"shapes, parameter count, bytes, and the plugin whose kernel runs it ('+' when another plugin\n"
	"runs its activation; 'none' when no plugin does).\n"
	"Shapes come from the shape engine (as for validate): from --input-shape when given, else from\n"
	"the input the layers fix, with a batch of 1, when they fix all of it (a Dense first layer\n"
	"takes [1, its inputs]). When they do not (a Conv's spatial sizes), '?' marks what is unknown\n"
	"and --input-shape gives it.\n"
	"--json: the same as one JSON object (docs/cli-json.md).\n",
};

static void shape_text(const nnn_tensor_t *t, char *buf, size_t size)
{
	size_t k = (size_t)snprintf(buf, size, "[");
	for (int32_t i = 0; i < t->dims.n && k < size; i++)
		k += (size_t)snprintf(buf + k, size - k, "%s%d", i ? "," : "", (int)t->dims.v[i]);
	if (k < size)
		snprintf(buf + k, size - k, "]");
}

/* The description, quoted, escaped for the terminal. */
static void print_text(const nnn_str_t *s)
{
	putchar('"');
	cli_esc_print(stdout, s->ptr, (size_t)s->len, CLI_ESC_C);
	putchar('"');
}

/* Which plugin's kernel runs a layer and its activation: "builtin". */
static const char *kernel_of(const nnn_ctx_t *ctx, const nnn_layer_t *L, char *buf, size_t size)
{
	const char *lp = NULL, *ap = NULL;
	nnn_ctx_layer(ctx, L->id, &lp);
	nnn_ctx_activation(ctx, L->activation.id, &ap);
	if (!lp)
		snprintf(buf, size, "none");
	else
		snprintf(buf, size, "%s%s", strrchr(lp, '/') + 1, ap && strcmp(ap, lp) ? "+" : "");
	return buf;
}

/* One row of the layer table, as text. */
enum { COL_NUM, COL_TYPE, COL_FIELDS, COL_ACT, COL_DROPOUT, COL_OUTPUT, COL_TENSORS, COL_PARAMS, COL_BYTES, COL_KERNEL, NCOLS };
typedef struct row {
	char col[NCOLS][256];
} row_t;

static const row_t header = { { "#", "type", "fields", "activation", "dropout", "output", "tensors", "params", "bytes",
	                        "kernel" } };

static void format_layer(const nnn_ctx_t *ctx, const nnn_model_t *m, const nnn_layer_shapes_t *sh, int32_t i,
                         size_t file_size, row_t *r)
{
	const nnn_layer_t *L = &m->layers[i];
	nnn_named_tensor_t ts[8];
	char params[128];
	int n = nnn_layer_tensors(L, ts, 8);
	uint64_t count = 0;
	uint64_t end = i + 1 < m->layer_count ? m->layers[i + 1].at[NNN_AT_LAYER_ID] : file_size;
	size_t k = 0;

	snprintf(r->col[COL_NUM], sizeof r->col[0], "%d", (int)i);
	snprintf(r->col[COL_TYPE], sizeof r->col[0], "%s", nnn_layer_title(L));
	nnn_layer_format(L, r->col[COL_FIELDS], sizeof r->col[0]);
	nnn_activation_format(&L->activation, params, sizeof params);
	snprintf(r->col[COL_ACT], sizeof r->col[0], "%s%s%s%s", nnn_activation_title(&L->activation),
	         params[0] ? "(" : "", params, params[0] ? ")" : "");
	snprintf(r->col[COL_DROPOUT], sizeof r->col[0], "%g", (double)L->dropout);
	if (sh)
		nnn_pshape_format(&sh[i].out, r->col[COL_OUTPUT], sizeof r->col[0]);
	else
		snprintf(r->col[COL_OUTPUT], sizeof r->col[0], "?");
	r->col[COL_TENSORS][0] = '\0';
	for (int t = 0; t < n && t < 8; t++) {
		char shape[96];
		shape_text(ts[t].tensor, shape, sizeof shape);
		k += (size_t)snprintf(r->col[COL_TENSORS] + k, sizeof r->col[0] - k, "%s%s %s", t ? ", " : "", ts[t].name,
		                      shape);
		if (k >= sizeof r->col[0])
			break;
		count += (uint64_t)ts[t].tensor->data.n;
	}
	snprintf(r->col[COL_PARAMS], sizeof r->col[0], "%" PRIu64, count);
	snprintf(r->col[COL_BYTES], sizeof r->col[0], "%" PRIu64, end - L->at[NNN_AT_LAYER_ID]);
	kernel_of(ctx, L, r->col[COL_KERNEL], sizeof r->col[0]);
	/* Titles, fields and tensor names can come from a plugin's strings. */
	for (int c = 0; c < NCOLS; c++) {
		char raw[sizeof r->col[0]];
		memcpy(raw, r->col[c], sizeof raw);
		cli_esc(r->col[c], sizeof r->col[0], raw, strlen(raw), CLI_ESC_C);
	}
}

/* Numbers right-aligned, text left-aligned; the last column unpadded. */
static void print_row(const row_t *r, const int *width)
{
	for (int c = 0; c < NCOLS; c++) {
		bool right = c == COL_NUM || c == COL_PARAMS || c == COL_BYTES;
		printf(c + 1 < NCOLS ? (right ? "%*s  " : "%-*s  ") : "%.*s\n", c + 1 < NCOLS ? width[c] : 256,
		       r->col[c]);
	}
}

/* The table: widths measured in a first pass, so nothing is held per layer. */
static void print_layers(const nnn_ctx_t *ctx, const nnn_model_t *m, const nnn_layer_shapes_t *sh, size_t file_size)
{
	int width[NCOLS];
	row_t r;
	for (int c = 0; c < NCOLS; c++)
		width[c] = (int)strlen(header.col[c]);
	for (int32_t i = 0; i < m->layer_count; i++) {
		format_layer(ctx, m, sh, i, file_size, &r);
		for (int c = 0; c < NCOLS; c++)
			if ((int)strlen(r.col[c]) > width[c])
				width[c] = (int)strlen(r.col[c]);
	}
	print_row(&header, width);
	for (int32_t i = 0; i < m->layer_count; i++) {
		format_layer(ctx, m, sh, i, file_size, &r);
		print_row(&r, width);
	}
}

/* The model's shapes, from the one shape engine (nnn_model_shapes). */
typedef struct shapes {
	nnn_layer_shapes_t *v; /* one per layer; NULL when there are none (or no memory) */
	int exact;             /* every shape known */
	int fit;               /* --input-shape (when given) fits */
	nnn_shape_t input;     /* the input they follow from, when exact */
} shapes_t;

/* The input the layers fix, with a batch of 1, when they fix all of it:
 * every dim of the first layer's partial input but the batch, or (its rank
 * open, as a Dense layer's [batch, ..., features]) the last axis: [1, last]. */
static bool fixed_input(const nnn_pshape_t *p, nnn_shape_t *in)
{
	if (p->rank < 0) {
		*in = (nnn_shape_t){ .rank = 2, .dims = { 1, p->last } };
		return p->last >= 0;
	}
	if (p->rank < 1)
		return false;
	in->rank = p->rank;
	in->dims[0] = 1;
	for (int32_t k = 1; k < p->rank; k++)
		if ((in->dims[k] = p->dims[k]) < 0)
			return false;
	return true;
}

/* Shapes from --input-shape (given), else from the input the layers fix
 * when the engine takes it, else partial. A given shape that does not fit
 * is reported, with --json as the error object (s->fit 0); the rest are
 * not problems of info's. */
static void infer_shapes(cli_env_t *env, const nnn_model_t *m, const nnn_shape_t *given, const char *path,
                         shapes_t *s)
{
	nnn_diags_t d;
	nnn_status_t st;
	*s = (shapes_t){ .fit = 1 };
	if (m->layer_count < 1 || !(s->v = calloc((size_t)m->layer_count, sizeof *s->v)))
		return;
	nnn_diags_init(&d);
	if (given) {
		s->input = *given;
		st = nnn_model_shapes(m, given, s->v, &d);
		if (st != NNN_OK) {
			char sh[256];
			cli_fail(env, path, &d, st);
			fprintf(stderr, "nnnkit: %s: --input-shape %s does not fit the model; give its input shape, batch "
			                "first (nnnkit info MODEL shows what the layers fix)\n",
			        cli_name(path), nnn_shape_format(given, sh, sizeof sh));
			s->fit = 0;
		}
	} else if (nnn_model_shapes(m, NULL, s->v, NULL) == NNN_OK && fixed_input(&s->v[0].in, &s->input)) {
		/* The engine decides: a guess it refuses leaves the partial shapes. */
		nnn_layer_shapes_t *exact = calloc((size_t)m->layer_count, sizeof *exact);
		if (exact && nnn_model_shapes(m, &s->input, exact, NULL) == NNN_OK) {
			free(s->v);
			s->v = exact;
			exact = NULL;
		}
		free(exact);
	}
	nnn_diags_free(&d);
	s->exact = s->fit;
	for (int32_t i = 0; i < m->layer_count && s->exact; i++)
		s->exact = nnn_pshape_exact(&s->v[i].in) && nnn_pshape_exact(&s->v[i].out);
}

/* "input [1, 784] -> output [1, 10]", or what is unknown and how to give it. */
static void print_shapes(const nnn_model_t *m, const shapes_t *s, int given)
{
	char in[NNN_MAX_RANK * 24], out[NNN_MAX_RANK * 24];
	if (!s->v) {
		printf("shapes:       %s\n", m->layer_count ? "not inferred (no memory)" : "none (no layers)");
		return;
	}
	nnn_pshape_format(&s->v[0].in, in, sizeof in);
	nnn_pshape_format(&s->v[m->layer_count - 1].out, out, sizeof out);
	printf("shapes:       input %s -> output %s", in, out);
	if (s->exact) {
		printf(" (%s)\n", given ? "from --input-shape" : "the input the layers fix, with a batch of 1");
		return;
	}
	if (!s->fit) {
		printf(" (--input-shape does not fit: see above)\n");
		return;
	}
	const nnn_pshape_t *p = &s->v[0].in;
	printf("\n              the layers do not fix the whole input (?: unknown); give it with --input-shape");
	if (p->rank >= 1) {
		int unknown = 0;
		printf(" 1");
		for (int32_t k = 1; k < p->rank; k++)
			p->dims[k] < 0 ? printf(",D%d", ++unknown) : printf(",%" PRId64, p->dims[k]);
		printf(" (D1...: the sizes of your inputs)");
	} else {
		printf(" (batch first)");
	}
	putchar('\n');
}

/* A string in JSON, or null. */
static void json_text(const char *s)
{
	if (s)
		cli_json_str(stdout, s, strlen(s));
	else
		fputs("null", stdout);
}

/* One layer, as the table's row says it (docs/cli-json.md, "info"). */
static void json_layer(const nnn_ctx_t *ctx, const nnn_model_t *m, const shapes_t *s, int32_t i, size_t file_size)
{
	const nnn_layer_t *L = &m->layers[i];
	nnn_named_tensor_t ts[8];
	char text[256];
	const char *kernel = NULL;
	int n = nnn_layer_tensors(L, ts, 8);
	uint64_t count = 0, end = i + 1 < m->layer_count ? m->layers[i + 1].at[NNN_AT_LAYER_ID] : file_size;
	nnn_ctx_layer(ctx, L->id, &kernel);
	printf("%s\n  {\"index\": %d, \"type\": ", i ? "," : "", (int)i);
	json_text(nnn_layer_title(L));
	printf(", \"id\": %d, \"fields\": ", (int)L->id);
	nnn_layer_format(L, text, sizeof text);
	json_text(text);
	printf(", \"activation\": ");
	json_text(nnn_activation_title(&L->activation));
	printf(", \"activation_params\": ");
	nnn_activation_format(&L->activation, text, sizeof text);
	json_text(text);
	printf(", \"dropout\": ");
	cli_json_num(stdout, L->dropout);
	if (s->v) {
		printf(", \"input_shape\": ");
		cli_json_pshape(stdout, &s->v[i].in);
		printf(", \"output_shape\": ");
		cli_json_pshape(stdout, &s->v[i].out);
	}
	printf(", \"tensors\": [");
	for (int t = 0; t < n && t < 8; t++) {
		nnn_shape_t sh = { 0 };
		cli_tensor_shape(ts[t].tensor, &sh);
		printf("%s{\"name\": ", t ? ", " : "");
		json_text(ts[t].name);
		printf(", \"shape\": ");
		cli_json_shape(stdout, &sh);
		printf(", \"count\": %" PRId64 "}", (int64_t)ts[t].tensor->data.n);
		count += (uint64_t)ts[t].tensor->data.n;
	}
	printf("], \"params\": %" PRIu64 ", \"offset\": %" PRIu64 ", \"bytes\": %" PRIu64 ", \"kernel\": ", count,
	       L->at[NNN_AT_LAYER_ID], end - L->at[NNN_AT_LAYER_ID]);
	json_text(kernel ? kernel_of(ctx, L, text, sizeof text) : NULL);
	putchar('}');
}

static void print_json(const nnn_ctx_t *ctx, const char *path, const nnn_model_t *m, const shapes_t *s, int given,
                       size_t size)
{
	printf("{\"file\": ");
	json_text(cli_name(path));
	printf(", \"bytes\": %zu, \"description\": ", size);
	cli_json_str(stdout, m->description.ptr, (size_t)m->description.len);
	printf(", \"parameters\": %" PRIu64 ", \"param_count\": %" PRIu64 ", \"layer_count\": %d",
	       nnn_model_param_total(m), m->param_count, (int)m->layer_count);
	if (s->v) {
		printf(", \"input_shape\": ");
		cli_json_pshape(stdout, &s->v[0].in);
		printf(", \"output_shape\": ");
		cli_json_pshape(stdout, &s->v[m->layer_count - 1].out);
		printf(", \"shapes_from\": %s",
		       !s->exact ? "null" : given ? "\"--input-shape\"" : "\"layers\"");
	}
	printf(", \"notes\": ");
	cli_conv_notes_json(stdout, m);
	printf(", \"layers\": [");
	for (int32_t i = 0; i < m->layer_count; i++)
		json_layer(ctx, m, s, i, size);
	printf("%s]}\n", m->layer_count ? "\n" : "");
}

static int run(const cli_args_t *a, cli_env_t *env)
{
	const char *path = cli_arg(a, "MODEL");
	nnn_diags_t d;
	nnn_file_t *f;
	nnn_status_t st;

	nnn_diags_init(&d);
	nnn_decode_opts_t opts = { .ctx = cli_ctx(env) };
	st = cli_file_open(env, path, &opts, &f, &d);
	if (st != NNN_OK) {
		int code = cli_fail(env, path, &d, st);
		nnn_diags_free(&d);
		return code;
	}
	const nnn_model_t *m = nnn_file_model(f);
	size_t size;
	uint64_t total = nnn_model_param_total(m);
	nnn_file_bytes(f, &size);
	const nnn_shape_t *given = cli_shape(a, "input-shape");
	shapes_t sh;
	infer_shapes(env, m, given, path, &sh);
	if (cli_flag(a, "json")) {
		if (sh.fit) {
			print_json(opts.ctx, path, m, &sh, given != NULL, size);
			env->json_done = 1;
		}
		goto done;
	}
	printf("file:         %s (%zu bytes)\n", cli_name(path), size);
	printf("description:  ");
	print_text(&m->description);
	printf("\nparameters:   %" PRIu64, total);
	if (total != m->param_count)
		printf(" (the header says %" PRIu64 ": run nnnkit validate)", m->param_count);
	printf("\nlayers:       %d\n", (int)m->layer_count);
	print_shapes(m, &sh, given != NULL);
	putchar('\n');
	print_layers(opts.ctx, m, sh.v, size);
done:
	cli_conv_notes(path, m);
	free(sh.v);
	nnn_file_close(f);
	nnn_diags_free(&d);
	return sh.fit ? EXIT_VALID : EXIT_INVALID;
}
