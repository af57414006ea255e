/* run.c: `nnnkit run MODEL --input X.npy`: inference over a batch file. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <nnn/npy.h>
#include <nnn/run.h>

#include "cli.h"

static int run(int argc, char **argv, cli_env_t *env);

const cli_cmd_t cmd_run = {
	"run", "run a model on inputs from a .npy file",
	"usage: nnnkit run MODEL --input X.npy [--output Y.npy] [--batch N] [--threads N]\n"
	"                  [--max-tensor-bytes N] [--conv-compat original|spec]\n"
	"Runs the model on X (float32 or convertible, C order, first axis = samples; '-' reads stdin)\n"
	"in batches of N samples (default 256) and writes the outputs to Y ('-' writes stdout),\n"
	"or prints them as text, one sample per line, when --output is not given.\n"
	"  --max-tensor-bytes N  refuse, naming the layer, an intermediate tensor or a kernel's working\n"
	"                        memory over N bytes (1 to 2^63 - 1; default 4 GiB)\n"
	CLI_CONV_COMPAT_HELP
	"  --progress, --no-progress  a progress bar on stderr, per batch (default: only when stderr\n"
	"                        is a terminal and TERM is not dumb; NNNKIT_PROGRESS=0/1 sets the default)\n",
	run,
};

typedef struct run_args {
	const char *model, *input, *output;
	cli_run_args_t run;
} run_args_t;

static int parse(int argc, char **argv, run_args_t *a)
{
	int code;
	for (int i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (cli_is_help(argv[i])) {
			fputs(cmd_run.help, stdout);
			return EXIT_VALID + 100;
		} else if (!strcmp(argv[i], "--input") && v) {
			a->input = v, i++;
		} else if (!strcmp(argv[i], "--output") && v) {
			a->output = v, i++;
		} else if ((code = cli_run_option(&cmd_run, argc, argv, &i, &a->run)) >= 0) {
			if (code != EXIT_VALID)
				return code;
		} else if ((code = cli_model_arg(&cmd_run, argv[i], &a->model)) != EXIT_VALID) {
			return code;
		}
	}
	if (!a->model || !a->input)
		return cli_usage(&cmd_run, "%s", !a->model ? "no model given" : "no --input given");
	return EXIT_VALID;
}

static void print_rows(const nnn_shape_t *s, const float *y)
{
	int64_t rows = s->dims[0], per = rows ? nnn_shape_numel(s) / rows : 0;
	for (int64_t r = 0; r < rows; r++) {
		for (int64_t k = 0; k < per; k++)
			printf("%s%.9g", k ? " " : "", (double)y[r * per + k]);
		putchar('\n');
	}
}

/* Runs every batch into *y (allocated here: total * out_per floats), with a
 * progress bar; sets the output shape. */
static nnn_status_t run_all(const nnn_ctx_t *ctx, const nnn_model_t *m, const nnn_npy_view_t *x, const run_args_t *a,
                            int progress, float **y, nnn_shape_t *out_shape, nnn_diags_t *d)
{
	nnn_run_opts_t o = cli_run_opts(&a->run);
	cli_batches_t b;
	cli_progress_t pr;
	int64_t total = x->shape.dims[0];
	nnn_status_t st = cli_batches_start(&b, ctx, m, &x->shape, x->data, a->run.batch, &o, d);
	if (st == NNN_OK) {
		*out_shape = b.out;
		out_shape->dims[0] = total;
		if (b.out_per && total > (int64_t)(SIZE_MAX / sizeof **y) / b.out_per)
			st = nnn_diags_add(d, NNN_E_NOMEM, NNN_NO_OFFSET, "",
			                   "%" PRId64 " outputs of %" PRId64 " floats do not fit in memory", total, b.out_per);
		else if (!(*y = malloc((size_t)(total * b.out_per) * sizeof **y + 1)))
			st = nnn_diags_add(d, NNN_E_NOMEM, NNN_NO_OFFSET, "", "no memory for the outputs");
	}
	cli_progress_start(&pr, st == NNN_OK && progress, "run", "samples", (uint64_t)total);
	while (st == NNN_OK && cli_batches_more(&b)) {
		st = cli_batches_next(&b, *y, d);
		cli_progress_update(&pr, (uint64_t)(b.from + b.n));
	}
	cli_progress_end(&pr);
	cli_batches_end(&b);
	return st;
}

static int run(int argc, char **argv, cli_env_t *env)
{
	run_args_t a = { .run = { .batch = 256, .threads = 1 } };
	nnn_diags_t d;
	nnn_npy_view_t x = { 0 };
	nnn_file_t *f = NULL;
	float *y = NULL;
	int code = parse(argc, argv, &a);
	if (code != EXIT_VALID)
		return code == EXIT_VALID + 100 ? EXIT_VALID : code;

	nnn_diags_init(&d);
	nnn_ctx_t *ctx = cli_ctx(env);
	nnn_decode_opts_t opts = { .ctx = ctx };
	const char *blame = a.model;
	nnn_status_t st = ctx ? nnn_file_open(a.model, &opts, &f, &d) : NNN_E_NOMEM;
	if (st == NNN_OK) {
		blame = a.input;
		st = nnn_npy_map(a.input, &x, &d);
	}
	if (st == NNN_OK && x.shape.rank < 2)
		st = nnn_diags_add(&d, NNN_E_INPUT_SHAPE, NNN_NO_OFFSET, "", "the input has rank %d; expected [samples, ...]",
		                   (int)x.shape.rank);
	if (st == NNN_OK && x.shape.dims[0] == 0)
		st = nnn_diags_add(&d, NNN_E_INPUT_SHAPE, NNN_NO_OFFSET, "", "the input has no samples");
	nnn_shape_t out_shape = { 0 };
	if (st == NNN_OK) {
		blame = a.model;
		st = run_all(ctx, nnn_file_model(f), &x, &a, cli_progress_wanted(env->progress), &y, &out_shape, &d);
	}
	if (st == NNN_OK) {
		if (a.output) {
			blame = a.output;
			st = nnn_npy_write_file(a.output, &out_shape, y, &d);
		} else {
			print_rows(&out_shape, y);
		}
	}
	code = st == NNN_OK ? EXIT_VALID : cli_report(blame, &d, st);
	free(y);
	nnn_npy_unmap(&x);
	nnn_file_close(f);
	nnn_diags_free(&d);
	return code;
}
