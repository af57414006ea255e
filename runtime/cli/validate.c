/* validate.c: `nnnkit validate MODEL`: every problem, one per line. */
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static int run(const cli_args_t *a, cli_env_t *env);

static const cli_opt_t validate_opts[] = {
	{ "check-finite", 0, CLI_FLAG, 0, NULL,
	  .help = "also read every tensor value and report NaN and infinities: each tensor's first few by element path and "
	  "byte offset, then its counts (one pass over the tensor bytes)" },
	{ NULL },
};
static const cli_pos_t validate_pos[] = {
	{ "MODEL", CLI_IN, CLI_DASH, .help = CLI_MODEL_HELP },
	{ NULL },
};

const cli_cmd_t cmd_validate = {
	.name = "validate",
	.summary = "check a model against every rule of the format",
	.main = run,
	.opts = CLI_OPTS(cli_opts_input_shape, validate_opts, cli_opts_json),
	.pos = validate_pos,
	.exits = CLI_EXITS_MODEL,
	.exit_what = { [0] = "the model is valid", [1] = "the model is invalid (every problem is listed)" },
	.help = "usage: nnnkit validate [--input-shape 1,28,28,1] [--check-finite] [--json] MODEL\n"
	"Checks the structure and every semantic rule, reporting every problem on its own line.\n"
	"With --input-shape, infers each layer's output shape and checks the whole chain exactly.\n"
	"Validation never reads tensor data (but with --check-finite): its time grows with the layers,\n"
	"not the bytes.\n",
};

typedef struct args {
	const char *path;
	nnn_shape_t in;
	int have_in, json, finite;
} args_t;

/* What a valid model's report adds: its output shapes, and what the finite
 * check found. */
typedef struct extra {
	nnn_shape_t *shapes; /* one per layer when n > 0 */
	const char **types;  /* each layer's type title (static or the plugin's, in ctx) */
	int32_t n;
	int finite_ran;
	uint64_t nonfinite, values;
} extra_t;

/* Every rule, with the plugins main() loaded before the file was read
 * (what loads never depends on what a file holds). *ctx is the context. */
static nnn_status_t check_rules(cli_env_t *env, const nnn_file_t *f, const args_t *a, nnn_diags_t *d,
                                const nnn_ctx_t **ctx)
{
	*ctx = cli_ctx(env);
	return nnn_file_validate(f, *ctx, a->have_in ? &a->in : NULL, d);
}

/* Output shapes and the finite check, on a model that decodes. The finite
 * check reads every tensor value: from a copy made with checked reads, so
 * that a file cut short meanwhile is an error, not SIGBUS. */
static nnn_status_t check_more(const nnn_ctx_t *ctx, const nnn_file_t *f, const args_t *a, nnn_status_t st,
                               extra_t *x, nnn_diags_t *d)
{
	nnn_model_t *m;
	nnn_decode_opts_t opts = { .ctx = ctx, .flags = a->finite ? NNN_DECODE_COPY : 0 };
	nnn_status_t ds;
	if (!a->have_in && !a->finite)
		return st;
	/* The problems that stop it are reported already, unless the file
	 * changed since (or the copy did not fit): those are told. */
	if ((ds = nnn_file_decode(f, &opts, &m, st == NNN_OK ? d : NULL)) != NNN_OK)
		return st == NNN_OK ? ds : st;
	if (st == NNN_OK && a->have_in && m->layer_count > 0 &&
	    (x->shapes = calloc((size_t)m->layer_count, sizeof *x->shapes)) != NULL &&
	    nnn_model_validate(m, &a->in, x->shapes, NULL) == NNN_OK &&
	    (x->types = calloc((size_t)m->layer_count, sizeof *x->types)) != NULL) {
		x->n = m->layer_count;
		for (int32_t i = 0; i < x->n; i++)
			x->types[i] = nnn_layer_title(&m->layers[i]);
	}
	if (a->finite) {
		nnn_status_t fs = nnn_model_check_finite(m, &x->nonfinite, d);
		x->finite_ran = 1;
		x->values = nnn_model_param_total(m);
		if (st == NNN_OK)
			st = fs;
	}
	nnn_model_free(m);
	return st;
}

/* docs/cli-json.md, "validate". */
static void print_json(const cli_env_t *env, const char *file, const nnn_diags_t *d, nnn_status_t st,
                       const extra_t *x, const nnn_model_t *m, int code)
{
	const char *path = cli_name(file);
	printf("{\"file\": ");
	cli_json_str(stdout, path, strlen(path));
	printf(", \"valid\": %s", st == NNN_OK ? "true" : "false");
	if (code != EXIT_VALID) {
		printf(", \"error\": ");
		cli_json_error_obj(stdout, env, file, d, st, code);
	}
	printf(", \"problems\": ");
	cli_json_problems(stdout, env, file, d);
	printf(", \"notes\": ");
	cli_conv_notes_json(stdout, m);
	if (x->n > 0) {
		printf(", \"output_shape\": ");
		cli_json_shape(stdout, &x->shapes[x->n - 1]);
		printf(", \"layers\": [");
		for (int32_t i = 0; i < x->n; i++) {
			printf("%s\n  {\"index\": %d, \"type\": ", i ? "," : "", (int)i);
			cli_json_str(stdout, x->types[i], strlen(x->types[i]));
			printf(", \"output_shape\": ");
			cli_json_shape(stdout, &x->shapes[i]);
			printf("}");
		}
		printf("\n]");
	}
	if (x->finite_ran)
		printf(", \"values\": %" PRIu64 ", \"nonfinite\": %" PRIu64, x->values, x->nonfinite);
	printf("}\n");
}

static void print_valid(const char *path, const extra_t *x)
{
	char buf[256];
	cli_say(stdout, "%s: valid", path);
	if (x->n > 0)
		printf(", output shape %s", nnn_shape_format(&x->shapes[x->n - 1], buf, sizeof buf));
	if (x->finite_ran)
		printf(", all %" PRIu64 " parameter values finite", x->values);
	printf("\n");
	for (int32_t i = 0; i < x->n; i++)
		printf("  layers[%d] -> %s\n", (int)i, nnn_shape_format(&x->shapes[i], buf, sizeof buf));
}

/* The model as far as notes on layers the original framework computes
 * differently from the spec need it (cli_conv_notes), for any model that
 * decodes, valid or not; NULL when it does not. */
static nnn_model_t *for_notes(const nnn_ctx_t *ctx, const nnn_file_t *f)
{
	nnn_decode_opts_t opts = { .ctx = ctx };
	nnn_model_t *m;
	return nnn_file_decode(f, &opts, &m, NULL) == NNN_OK ? m : NULL;
}

static int run(const cli_args_t *args, cli_env_t *env)
{
	args_t a = { .path = cli_arg(args, "MODEL"), .json = cli_flag(args, "json"),
		     .finite = cli_flag(args, "check-finite") };
	extra_t x = { 0 };
	const nnn_ctx_t *ctx;
	nnn_diags_t d;
	nnn_file_t *f;
	nnn_status_t st;
	int code;

	if (cli_shape(args, "input-shape"))
		a.in = *cli_shape(args, "input-shape"), a.have_in = 1;
	nnn_diags_init(&d);
	st = cli_file_open(env, a.path, NULL, &f, &d);
	if (st != NNN_OK) {
		code = cli_fail(env, a.path, &d, st);
		nnn_diags_free(&d);
		return code;
	}
	st = check_rules(env, f, &a, &d, &ctx);
	st = check_more(ctx, f, &a, st, &x, &d);
	nnn_model_t *m = for_notes(ctx, f);
	if (a.json) {
		code = cli_exit_code(st);
		print_json(env, a.path, &d, st, &x, m, cli_exit(env, code));
		env->json_done = 1;
	} else if (st != NNN_OK) {
		code = cli_report(env, a.path, &d, st);
	} else {
		print_valid(cli_name(a.path), &x);
		code = EXIT_VALID;
	}
	cli_conv_notes(a.path, m);
	nnn_model_free(m);
	free(x.shapes);
	free(x.types);
	nnn_file_close(f);
	nnn_diags_free(&d);
	return code;
}
