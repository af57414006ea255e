/* run.c: `nnnkit run MODEL --input X.npy`: inference over a batch file. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <nnn/npy.h>
#include <nnn/run.h>

#include "cli.h"

static int run(const cli_args_t *a, cli_env_t *env);

static const cli_opt_t run_opts[] = {
	{ "input", 'i', CLI_IN, CLI_DASH | CLI_DASH_LIB | CLI_REQUIRED, "X.npy",
	  "the samples (float32 or convertible, C order, first axis = samples)", .alias = "inputs" },
	{ "output", 'o', CLI_OUT, CLI_DASH | CLI_BINARY, "Y.npy",
	  .help = "write the outputs as a float32 .npy file (default: print them as text, one sample per line)" },
	{ NULL },
};
static const cli_pos_t run_pos[] = {
	{ "MODEL", CLI_IN, CLI_DASH, .help = CLI_MODEL_HELP },
	{ NULL },
};

const cli_cmd_t cmd_run = {
	.name = "run",
	.summary = "run a model on inputs from a .npy file",
	.main = run,
	.opts = CLI_OPTS(run_opts, cli_opts_input_shape, cli_opts_run, cli_opts_force),
	.pos = run_pos,
	.exits = CLI_EXITS_MODEL,
	.help = "usage: nnnkit run MODEL --input X.npy [-o Y.npy] [--input-shape 1,D,...] [--batch N] [--threads N]\n"
		"                  [--max-tensor-bytes N] [--conv-compat original|spec] [--force]\n"
		"Runs the model on the samples of X in batches of N samples and writes the outputs to Y,\n"
		"or prints them as text, one sample per line, when -o is not given. With --input-shape, X's\n"
		"samples are reshaped to the model's input shape (a flat [N, 784] array runs a [1,28,28,1]\n"
		"model, as with eval). Input values are used as they are: integer inputs (uint8...) with a\n"
		"value over 1 get a warning saying how to scale them (x.astype('float32') / 255).\n",
};

typedef struct run_args {
	const char *model, *input, *output;
	const nnn_shape_t *shape;
	cli_run_args_t run;
} run_args_t;

static void print_rows(const nnn_shape_t *s, const float *y)
{
	int64_t rows = s->dims[0], per = rows ? nnn_shape_numel(s) / rows : 0;
	for (int64_t r = 0; r < rows; r++) {
		for (int64_t k = 0; k < per; k++)
			printf("%s%.9g", k ? " " : "", (double)y[r * per + k]);
		putchar('\n');
	}
}

static int run(const cli_args_t *args, cli_env_t *env)
{
	run_args_t a = { .model = cli_arg(args, "MODEL"), .input = cli_str(args, "input"),
		         .output = cli_str(args, "output"), .shape = cli_shape(args, "input-shape") };
	nnn_diags_t d;
	nnn_npy_view_t x = { 0 };
	nnn_file_t *f = NULL;
	float *y = NULL;
	int code = EXIT_VALID;

	cli_run_args(args, &a.run);
	nnn_diags_init(&d);
	nnn_ctx_t *ctx = cli_ctx(env);
	nnn_decode_opts_t opts = { .ctx = ctx };
	const char *blame = a.model;
	nnn_status_t st = ctx ? cli_file_open(env, a.model, &opts, &f, &d) : NNN_E_NOMEM;
	if (st == NNN_OK && (code = cli_inputs(env, a.input, a.shape, &x)) != EXIT_VALID)
		st = NNN_E_INPUT_SHAPE; /* reported */
	nnn_shape_t out_shape = { 0 };
	if (st == NNN_OK) {
		st = cli_run_all(ctx, nnn_file_model(f), &x.shape, x.data, &a.run, cli_progress_wanted(env->progress), &y,
		                 &out_shape, &d);
		if (st != NNN_OK)
			code = cli_report_input(env, a.model, a.input, &x.shape, a.shape != NULL, &d, st);
	}
	if (st == NNN_OK) {
		if (a.output) {
			blame = cli_out_name(a.output);
			st = nnn_npy_write_file(a.output, &out_shape, y, &d);
		} else {
			print_rows(&out_shape, y);
		}
	}
	if (code == EXIT_VALID && st != NNN_OK)
		code = cli_report(env, blame, &d, st);
	free(y);
	nnn_npy_unmap(&x);
	nnn_file_close(f);
	nnn_diags_free(&d);
	return code;
}
