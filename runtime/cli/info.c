/* info.c: `nnnkit info MODEL`: what a model is, in one screen. */
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <nnn/info.h>

#include <nnn/npy.h>

#include "cli.h"

static int run(const cli_args_t *a, cli_env_t *env);

static const cli_pos_t info_pos[] = {
	{ "MODEL", CLI_IN, CLI_DASH, .help = CLI_MODEL_HELP },
	{ NULL },
};

static const cli_opt_t info_opts[] = {
	{ "markdown", 0, CLI_FLAG, 0, NULL,
	  .help = "the same as Markdown: a list of the facts and a table of the layers, every value escaped" },
	{ NULL },
};

const cli_cmd_t cmd_info = {
	.name = "info",
	.summary = "describe a model: description, parameters, a table of layers",
	.main = run,
	.opts = CLI_OPTS(cli_opts_input_shape, cli_opts_json, info_opts),
	.pos = info_pos,
	.exits = CLI_EXITS_MODEL,
	.exit_what = { [1] = "the model is invalid, or --input-shape does not fit it" },
	.help = "usage: nnnkit info [--input-shape 1,28,28,1] [--json | --markdown] MODEL\n"
	"Prints the description, the parameter count, the model's input and output shapes, and one row\n"
	"per layer: type, its own fields, activation and its parameters, dropout, output shape, tensor\n"
	"shapes, parameter count, bytes, and the plugin whose kernel runs it ('+' when another plugin\n"
	"runs its activation; 'none' when no plugin does).\n"
	"Shapes come from the shape engine (as for validate): from --input-shape when given, else from\n"
	"the input the layers fix, with a batch of 1, when they fix all of it (a Dense first layer\n"
	"takes [1, its inputs]). When they do not (a Conv's spatial sizes), '?' marks what is unknown\n"
	"and --input-shape gives it.\n"
	"--json: the same as one JSON object (docs/cli-json.md); --markdown: as Markdown, for a README\n"
	"or an issue (a list of the facts, then the table).\n",
};

/* The model's shapes, as the text shows them (nnn_model_info_shapes). */
typedef struct shapes {
	nnn_layer_shapes_t *v; /* one per layer; NULL when there are none (or no memory) */
	bool exact;            /* every shape known */
	bool fit;              /* --input-shape (when given) fits */
} shapes_t;

/* A given shape that does not fit is reported, with --json as the error
 * object (s->fit false). Every layer's shapes are kept for --json only: the
 * text (nnn_model_info) takes them a layer at a time. */
static void infer_shapes(cli_env_t *env, const nnn_model_t *m, const nnn_shape_t *given, const char *path, bool keep,
                         shapes_t *s)
{
	nnn_diags_t d;
	nnn_status_t st = NNN_OK;
	*s = (shapes_t){ .fit = true };
	if (m->layer_count < 1 || (keep && !(s->v = calloc((size_t)m->layer_count, sizeof *s->v))))
		return;
	nnn_diags_init(&d);
	if (keep)
		st = nnn_model_info_shapes(m, given, s->v, &s->exact, &d);
	else if (given)
		st = nnn_model_shapes_each(m, given, NULL, NULL, &d);
	if (st != NNN_OK) {
		char sh[256];
		cli_fail(env, path, &d, st);
		cli_say(stderr, "nnnkit: %s: --input-shape %s does not fit the model; give its input shape, batch "
		                "first (nnnkit info MODEL shows what the layers fix)\n",
		        cli_name(path), nnn_shape_format(given, sh, sizeof sh));
		s->fit = false;
	}
	nnn_diags_free(&d);
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
	nnn_param_t ts[8];
	char text[256];
	const char *kernel = NULL;
	int n = nnn_layer_params(L, ts, 8);
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
		cli_dims_shape(ts[t].dims, &sh);
		printf("%s{\"name\": ", t ? ", " : "");
		json_text(ts[t].name);
		printf(", \"shape\": ");
		cli_json_shape(stdout, &sh);
		printf(", \"dtype\": ");
		json_text(nnn_npy_dtype_name(nnn_prim_ekind(ts[t].prim), nnn_prim_ewidth(ts[t].prim)));
		printf(", \"count\": %" PRId64 "}", (int64_t)ts[t].data->n);
		count += (uint64_t)ts[t].data->n;
	}
	printf("], \"params\": %" PRIu64 ", \"offset\": %" PRIu64 ", \"bytes\": %" PRIu64 ", \"kernel\": ", count,
	       L->at[NNN_AT_LAYER_ID], end - L->at[NNN_AT_LAYER_ID]);
	if (kernel)
		nnn_layer_kernel_name(ctx, L, text, sizeof text);
	json_text(kernel ? text : NULL);
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

	if (cli_flag(a, "json") && cli_flag(a, "markdown"))
		return cli_usage(env, &cmd_info, "--json and --markdown are two forms of the same report: give one");
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
	nnn_file_bytes(f, &size);
	const nnn_shape_t *given = cli_shape(a, "input-shape");
	shapes_t sh;
	infer_shapes(env, m, given, path, cli_flag(a, "json"), &sh);
	int code = sh.fit ? EXIT_VALID : EXIT_INVALID;
	if (cli_flag(a, "json")) {
		if (sh.fit) {
			print_json(opts.ctx, path, m, &sh, given != NULL, size);
			env->json_done = 1;
		}
		goto done;
	}
	nnn_info_opts_t io = { .size = sizeof io, .file = cli_name(path), .file_size = size, .input = given,
		               .form = cli_flag(a, "markdown") ? NNN_INFO_MARKDOWN : NNN_INFO_TEXT };
	size_t n = nnn_model_info(opts.ctx, m, &io, NULL, 0);
	char *text = malloc(n + 1);
	if (!text) {
		code = cli_fail(env, path, &d, nnn_diags_add(&d, NNN_E_NOMEM, NNN_NO_OFFSET, "", "no memory for the report"));
		goto done;
	}
	nnn_model_info(opts.ctx, m, &io, text, n + 1);
	fwrite(text, 1, n, stdout);
	free(text);
done:
	cli_conv_notes(path, m);
	free(sh.v);
	nnn_file_close(f);
	nnn_diags_free(&d);
	return code;
}
