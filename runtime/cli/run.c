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
	"                  [--max-tensor-bytes N]\n"
	"Runs the model on X (float32 or convertible, C order, first axis = samples; '-' reads stdin)\n"
	"in batches of N samples (default 256) and writes the outputs to Y ('-' writes stdout),\n"
	"or prints them as text, one sample per line, when --output is not given.\n"
	"  --max-tensor-bytes N  refuse, naming the layer, an intermediate tensor over N bytes (4 GiB)\n",
	run,
};

typedef struct run_args {
	const char *model, *input, *output;
	long batch, threads;
	unsigned long long max_bytes;
} run_args_t;

static int parse(int argc, char **argv, run_args_t *a)
{
	for (int i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (cli_is_help(argv[i])) {
			fputs(cmd_run.help, stdout);
			return EXIT_VALID + 100;
		} else if (!strcmp(argv[i], "--input") && v) {
			a->input = v, i++;
		} else if (!strcmp(argv[i], "--output") && v) {
			a->output = v, i++;
		} else if ((!strcmp(argv[i], "--batch") || !strcmp(argv[i], "--threads")) && v) {
			char *end;
			long n = strtol(v, &end, 10);
			if (*end || n < 1 || n > 1 << 20)
				return cli_usage(&cmd_run, "%s needs a count from 1 to 1048576, not '%s'", argv[i], v);
			*(argv[i][2] == 'b' ? &a->batch : &a->threads) = n;
			i++;
		} else if (!strcmp(argv[i], "--max-tensor-bytes") && v) {
			char *end;
			a->max_bytes = strtoull(v, &end, 10);
			if (*end || a->max_bytes == 0)
				return cli_usage(&cmd_run, "--max-tensor-bytes needs a byte count > 0, not '%s'", v);
			i++;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			return cli_usage(&cmd_run, "unknown option or missing value: %s", argv[i]);
		} else if (a->model) {
			return cli_usage(&cmd_run, "one model at a time");
		} else {
			a->model = argv[i];
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

/* Runs the samples [from, from + n) through a plan made for n samples. */
static nnn_status_t run_batch(const nnn_ctx_t *ctx, const nnn_model_t *m, const nnn_npy_t *x, int64_t from, int64_t n,
                              const run_args_t *a, float *y, nnn_shape_t *out_shape, nnn_diags_t *d)
{
	nnn_shape_t in = x->shape;
	nnn_run_opts_t o = { .size = sizeof o, .threads = (int)a->threads, .max_tensor_bytes = a->max_bytes };
	nnn_plan_t *p;
	in.dims[0] = n;
	int64_t per = nnn_shape_numel(&x->shape) / x->shape.dims[0];
	nnn_status_t st = nnn_plan_new(ctx, m, &in, &o, &p, d);
	if (st != NNN_OK)
		return st;
	*out_shape = *nnn_plan_shape(p, m->layer_count - 1);
	int64_t out_per = nnn_shape_numel(out_shape) / n;
	st = nnn_plan_run(p, x->data + from * per, y + from * out_per, d);
	nnn_plan_free(p);
	return st;
}

static int run(int argc, char **argv, cli_env_t *env)
{
	run_args_t a = { .batch = 256, .threads = 1 };
	nnn_diags_t d;
	nnn_npy_t x = { 0 };
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
		st = nnn_npy_read_file(a.input, &x, &d);
	}
	if (st == NNN_OK && x.shape.rank < 2)
		st = nnn_diags_add(&d, NNN_E_INPUT_SHAPE, NNN_NO_OFFSET, "", "the input has rank %d; expected [samples, ...]",
		                   (int)x.shape.rank);
	if (st == NNN_OK && x.shape.dims[0] == 0)
		st = nnn_diags_add(&d, NNN_E_INPUT_SHAPE, NNN_NO_OFFSET, "", "the input has no samples");
	nnn_shape_t out_shape = { 0 };
	if (st == NNN_OK) {
		const nnn_model_t *m = nnn_file_model(f);
		int64_t total = x.shape.dims[0], b = a.batch < total ? a.batch : total;
		blame = a.model;
		/* A first plan tells the output size; then every full batch, then the rest. */
		nnn_shape_t one = x.shape;
		one.dims[0] = b;
		nnn_plan_t *p;
		nnn_run_opts_t o = { .size = sizeof o, .threads = (int)a.threads, .max_tensor_bytes = a.max_bytes };
		st = nnn_plan_new(ctx, m, &one, &o, &p, &d);
		if (st == NNN_OK) {
			out_shape = *nnn_plan_shape(p, m->layer_count - 1);
			int64_t per = nnn_shape_numel(&x.shape) / total, out_per = nnn_shape_numel(&out_shape) / b;
			y = malloc((size_t)(total * out_per) * sizeof *y);
			if (!y)
				st = nnn_diags_add(&d, NNN_E_NOMEM, NNN_NO_OFFSET, "", "no memory for the outputs");
			int64_t s = 0;
			for (; st == NNN_OK && s + b <= total; s += b)
				st = nnn_plan_run(p, x.data + s * per, y + s * out_per, &d);
			nnn_plan_free(p);
			if (st == NNN_OK && s < total)
				st = run_batch(ctx, m, &x, s, total - s, &a, y, &one, &d);
			out_shape.dims[0] = total;
		}
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
	if (code == EXIT_VALID && env->plugin_failed)
		code = EXIT_PLUGIN;
	free(y);
	nnn_npy_free(&x);
	nnn_file_close(f);
	nnn_diags_free(&d);
	return code;
}
