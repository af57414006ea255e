/* eval.c: `nnnkit eval MODEL --inputs X.npy --labels Y.npy`: accuracy,
 * per-class precision and recall, and the confusion matrix of a classifier
 * over a labelled data set. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <nnn/npy.h>

#include "cli.h"

/* The confusion matrix is classes^2 counters: 8 MiB at this many. */
#define CLASSES_MAX 1024
/* Wider matrices are left to --json. */
#define TEXT_MATRIX_MAX 20

static int run(const cli_args_t *a, cli_env_t *env);

static const cli_opt_t eval_opts[] = {
	{ "inputs", 'i', CLI_IN, CLI_DASH | CLI_DASH_LIB | CLI_REQUIRED, "X.npy",
	  "the samples (first axis = samples; '<f4' is read in place, other dtypes are converted)", .alias = "input" },
	{ "labels", 'l', CLI_IN, CLI_DASH | CLI_DASH_LIB | CLI_REQUIRED, "Y.npy",
	  .help = "a class index or a one-hot row per sample" },
	{ "top-k", 0, CLI_NUM, 0, "K",
	  .help = "also count a sample correct when its label is among the K highest outputs (top-K accuracy; "
	  "K up to the classes)", .min = 1, .max = CLASSES_MAX },
	{ "misclassified", 0, CLI_OUT, CLI_DASH, "FILE",
	  .help = "write the misclassified samples to FILE as CSV (index,true,predicted,predicted_score,true_score; "
	  "'-': stdout, the report then goes to stderr)" },
	{ NULL },
};
static const cli_opt_t eval_json[] = {
	{ "json", 0, CLI_FLAG, 0, NULL,
	  .help = "the result as one JSON object: n, classes, correct, accuracy, per_class [{class, support, predicted, "
	  "precision, recall}], confusion (rows: true class), seconds; with --top-k: top_k, top_k_correct, "
	  "top_k_accuracy" },
	{ NULL },
};
static const cli_pos_t eval_pos[] = {
	{ "MODEL", CLI_IN, CLI_DASH, .help = "the classifier: " CLI_MODEL_FORMS },
	{ NULL },
};

const cli_cmd_t cmd_eval = {
	.name = "eval",
	.summary = "accuracy and confusion matrix over a labelled data set",
	.main = run,
	.opts = CLI_OPTS(eval_opts, cli_opts_input_shape, cli_opts_run, eval_json),
	.pos = eval_pos,
	.exits = CLI_EXITS_MODEL,
	.exit_what = { [0] = "done", [1] = "the model, X or Y is invalid or they do not fit together (sample counts, "
	                                   "label values, output classes)" },
	.help = "usage: nnnkit eval MODEL --inputs X.npy --labels Y.npy [--batch N] [--threads N] [--json]\n"
		"                   [--input-shape 1,D,...] [--max-tensor-bytes N] [--conv-compat original|spec]\n"
		"                   [--top-k K] [--misclassified FILE]\n"
		"Runs the model on the samples of X in batches of N. The predicted class is the argmax of the\n"
		"output's last axis (the lowest class on ties); it is compared with Y, and the accuracy, each\n"
		"class's precision and recall, and the confusion matrix (rows: true class, columns:\n"
		"predicted) are printed. Outputs are ranked highest first, equal ones by class, lowest first,\n"
		"and NaN last: the predicted class is the first; --top-k K also counts a sample correct when\n"
		"its label is among the first K.\n"
		"--misclassified FILE writes one CSV line per misclassified sample (written atomically), after\n"
		"the header index,true,predicted,predicted_score,true_score: the sample's index in X (with\n"
		"several predictions per sample, output [n, ..., classes], the prediction's index in that\n"
		"order), its true and predicted classes, and the output for each (9 significant digits: float32 exact).\n"
		"Integer inputs (uint8...) with values over 1 are used as they are, with a warning: scale them\n"
		"as the model was trained (x.astype('float32') / 255).\n"
		"Y holds, for every sample, either a class index (shape [n] or [n, 1]; any dtype, as long\n"
		"as the values are whole numbers from 0 to classes - 1) or a one-hot row (shape [n, classes];\n"
		"the largest value of a row, which must be unique, is its class).\n"
		"--input-shape reshapes X's samples to the model's input shape (the first axis, the batch,\n"
		"is ignored): they must have as many values.\n",
};

typedef struct eval_args {
	const char *model, *inputs, *labels, *wrong; /* wrong: --misclassified */
	int64_t top_k;                               /* 0: not asked */
	cli_run_args_t run;
	cli_env_t *env;
	int json, reshape;
	nnn_shape_t shape; /* --input-shape: dims[0] is ignored */
} eval_args_t;

/* What was counted. Predictions are compared per output position: one per
 * sample for an output [n, classes]. */
typedef struct tally {
	int64_t classes, per;  /* classes; positions per sample */
	int64_t n, correct;    /* samples; correct positions */
	int64_t top_k, top_k_correct; /* --top-k K (0: none); positions whose label is among the K first */
	FILE *wrong;           /* --misclassified: CSV lines, in memory until written */
	int64_t *cm;           /* classes x classes: [true][predicted] */
	int one_hot;           /* the labels were one-hot rows */
	double seconds;
} tally_t;

/* Data that do not fit: said, with --json in the error object too. */
#define bad_data(a, file, ...) cli_fail_text((a)->env, (file), EXIT_INVALID, __VA_ARGS__)

/* The label shapes that fit an output shape (dims[0] = samples): class
 * indices (the output without its class axis) or one-hot rows (the output). */
static void expected_shapes(const nnn_shape_t *out, int64_t n, char *buf, size_t size)
{
	char a[256], b[256];
	nnn_shape_t idx = *out, hot = *out;
	idx.dims[0] = hot.dims[0] = n;
	idx.rank--;
	snprintf(buf, size, "%s (class indices) or %s (one-hot rows)", nnn_shape_format(&idx, a, sizeof a),
	         nnn_shape_format(&hot, b, sizeof b));
}

/* A class index label: the class, or -1 when v is not a whole number from
 * 0 to classes - 1 (NaN included). */
static int32_t index_class(float v, int64_t classes)
{
	return v >= 0 && v < (float)classes && v == floorf(v) ? (int32_t)v : -1;
}

/* A one-hot row: its class, or -1 when it has no single largest value. */
static int32_t row_class(const float *row, int64_t classes)
{
	int64_t best = 0, ties = 0;
	for (int64_t c = 1; c < classes; c++) {
		if (row[c] > row[best])
			best = c, ties = 0;
		else if (row[c] == row[best])
			ties++;
	}
	return ties || !isfinite(row[best]) ? -1 : (int32_t)best;
}

/* The true class of every position, from Y; checks every label first so
 * that a bad one is found before the model runs. *truth is returned (free). */
static int label_classes(const eval_args_t *a, const nnn_npy_t *y, const nnn_shape_t *out, tally_t *t,
                         int32_t **truth)
{
	char sh[256], want[600];
	int64_t n = t->n, C = t->classes, per = y->shape.rank ? (int64_t)y->count / n : 0;
	expected_shapes(out, n, want, sizeof want);
	if (y->shape.rank < 1)
		return bad_data(a, a->labels, "a single value, not one label per sample; expected %s", want);
	if (y->shape.dims[0] != n)
		return bad_data(a, a->labels,
		                "shape[0]: %" PRId64 " labels for %" PRId64 " samples in %s; expected one label per sample "
		                "(are both files from the same data set?)",
		                y->shape.dims[0], n, a->inputs);
	if (per != t->per && per != t->per * C)
		return bad_data(a, a->labels, "shape %s: %" PRId64 " values per sample, but the model gives %" PRId64
		                " class scores per sample; expected %s",
		                nnn_shape_format(&y->shape, sh, sizeof sh), per, t->per * C, want);
	t->one_hot = per != t->per;
	int64_t count = n * t->per, bad = 0, first = -1;
	/* count <= the floats Y holds: bounded by what is already in memory. */
	*truth = malloc((size_t)count * sizeof **truth + 1);
	if (!*truth) {
		cli_say(stderr, "nnnkit: %s: no memory for %" PRId64 " labels\n", cli_name(a->labels), count);
		return EXIT_USAGE;
	}
	for (int64_t i = 0; i < count; i++) {
		int32_t c = t->one_hot ? row_class(y->data + i * C, C) : index_class(y->data[i], C);
		(*truth)[i] = c;
		if (c < 0 && !bad++)
			first = i;
	}
	if (!bad)
		return EXIT_VALID;
	char more[64] = "";
	if (bad > 1)
		snprintf(more, sizeof more, " (%" PRId64 " labels like it in all)", bad);
	if (t->one_hot)
		return bad_data(a, a->labels,
		                "row %" PRId64 " (data[%" PRId64 "...]) has no single largest value%s; expected one-hot rows "
		                "(a 1 for the class, 0 elsewhere), or %s",
		                first, first * C, more, want);
	float v = y->data[first];
	if (v != floorf(v) || isnan(v))
		return bad_data(a, a->labels,
		                "data[%" PRId64 "]: label %.9g is not a class index%s; expected a whole number from 0 to %" PRId64
		                " (save labels as integers, e.g. y.astype('int64'), or as one-hot rows)",
		                first, (double)v, more, C - 1);
	return bad_data(a, a->labels,
	                "data[%" PRId64 "]: label %.9g is outside the model's %" PRId64 " classes%s; expected 0 to %" PRId64
	                " (are the labels for this model? labels counted from 1 need y - 1)",
	                first, (double)v, C, more, C - 1);
}

/* The one order of a row of outputs: whether class a ranks before class b
 * (a higher output; equal outputs by class, lowest first; NaN last). The
 * predicted class is the first, top-K the first K. */
static int ranks_before(const float *row, int64_t a, int64_t b)
{
	if (isnan(row[a]) || isnan(row[b]))
		return isnan(row[b]) && (!isnan(row[a]) || a < b);
	return row[a] > row[b] || (row[a] == row[b] && a < b);
}

/* Counts one batch's predictions. */
static void count_batch(tally_t *t, const cli_batches_t *b, const int32_t *truth)
{
	int64_t C = t->classes, positions = b->n * t->per;
	const int32_t *want = truth + b->from * t->per;
	for (int64_t j = 0; j < positions; j++) {
		const float *row = b->y + j * C;
		int64_t best = 0, above = 0;
		for (int64_t c = 1; c < C; c++)
			if (ranks_before(row, c, best))
				best = c;
		t->cm[want[j] * C + best]++;
		t->correct += want[j] == best;
		if (t->top_k) {
			for (int64_t c = 0; c < C; c++)
				above += ranks_before(row, c, want[j]);
			t->top_k_correct += above < t->top_k;
		}
		if (t->wrong && want[j] != best)
			fprintf(t->wrong, "%" PRId64 ",%d,%" PRId64 ",%.9g,%.9g\n", b->from * t->per + j, (int)want[j], best,
			        (double)row[best], (double)row[want[j]]);
	}
}

/* The classes: the last axis of the planned output, which the labels are
 * then checked against. */
static int classes_of(const eval_args_t *a, const cli_batches_t *b, tally_t *t)
{
	char sh[256];
	const nnn_shape_t *out = &b->out;
	t->classes = out->rank >= 2 ? out->dims[out->rank - 1] : 0;
	if (t->classes < 2 || t->classes > CLASSES_MAX)
		return bad_data(a, a->model,
		                "its output %s has a last axis of %" PRId64 "; eval takes the argmax over that axis and "
		                "needs 2 to %d classes (nnnkit run gives the raw outputs)",
		                nnn_shape_format(out, sh, sizeof sh), t->classes, CLASSES_MAX);
	t->per = b->out_per / t->classes;
	return EXIT_VALID;
}

/* How often class c was the true class (support) and the predicted one. */
static void class_counts(const tally_t *t, int64_t c, int64_t *support, int64_t *predicted)
{
	*support = *predicted = 0;
	for (int64_t k = 0; k < t->classes; k++) {
		*support += t->cm[c * t->classes + k];
		*predicted += t->cm[k * t->classes + c];
	}
}

static void print_text(FILE *o, const eval_args_t *a, const tally_t *t)
{
	int64_t C = t->classes, total = t->n * t->per, most = C - 1;
	cli_say(o, "model:    %s\ninputs:   %s\nlabels:   %s (%s)\n", cli_name(a->model), cli_name(a->inputs),
	        cli_name(a->labels), t->one_hot ? "one-hot rows" : "class indices");
	fprintf(o, "accuracy: %.4f (%" PRId64 " of %" PRId64 " correct)\n",
	        total ? (double)t->correct / (double)total : 0.0, t->correct, total);
	if (t->top_k)
		fprintf(o, "top-%" PRId64 ":%*s%.4f (%" PRId64 " of %" PRId64 " with the label among the %" PRId64
		        " highest outputs)\n", t->top_k, t->top_k < 10 ? 4 : t->top_k < 100 ? 3 : 2, "",
		        total ? (double)t->top_k_correct / (double)total : 0.0, t->top_k_correct, total, t->top_k);
	fprintf(o, "time:     %.3f s for %" PRId64 " samples (%.0f samples/s)\n\n", t->seconds, t->n,
	        t->seconds > 0 ? (double)t->n / t->seconds : 0.0);
	fprintf(o, "%5s %9s %9s %9s %9s\n", "class", "support", "predicted", "precision", "recall");
	for (int64_t c = 0; c < C; c++) {
		int64_t support, predicted, hit = t->cm[c * C + c];
		class_counts(t, c, &support, &predicted);
		fprintf(o, "%5" PRId64 " %9" PRId64 " %9" PRId64, c, support, predicted);
		if (predicted)
			fprintf(o, " %9.4f", (double)hit / (double)predicted);
		else
			fprintf(o, " %9s", "-");
		if (support)
			fprintf(o, " %9.4f\n", (double)hit / (double)support);
		else
			fprintf(o, " %9s\n", "-");
	}
	if (C > TEXT_MATRIX_MAX) {
		fprintf(o, "\nconfusion matrix: %" PRId64 " x %" PRId64 ", too wide to print (--json has it)\n", C, C);
		return;
	}
	for (int64_t i = 0; i < C * C; i++)
		most = t->cm[i] > most ? t->cm[i] : most;
	int width = snprintf(NULL, 0, "%" PRId64, most);
	width = width < 4 ? 4 : width;
	fprintf(o, "\nconfusion matrix (rows: true class, columns: predicted)\n%9s", "true\\pred");
	for (int64_t c = 0; c < C; c++)
		fprintf(o, " %*" PRId64, width, c);
	for (int64_t r = 0; r < C; r++) {
		fprintf(o, "\n%9" PRId64, r);
		for (int64_t c = 0; c < C; c++)
			fprintf(o, " %*" PRId64, width, t->cm[r * C + c]);
	}
	fputc('\n', o);
}

/* A ratio, or null when nothing was counted. */
static json_t *ratio(int64_t num, int64_t den)
{
	return den ? json_real((double)num / (double)den) : json_null();
}

static void print_json(FILE *o, const eval_args_t *a, const tally_t *t)
{
	int64_t C = t->classes, total = t->n * t->per;
	json_t *per_class = json_array(), *cm = json_array();
	for (int64_t c = 0; c < C; c++) {
		int64_t support, predicted, hit = t->cm[c * C + c];
		json_t *row = json_array();
		class_counts(t, c, &support, &predicted);
		for (int64_t k = 0; k < C; k++)
			json_array_append_new(row, json_integer(t->cm[c * C + k]));
		json_array_append_new(cm, row);
		json_array_append_new(per_class, json_pack("{s:I, s:I, s:I, s:o, s:o}", "class", (json_int_t)c, "support",
		                                           (json_int_t)support, "predicted", (json_int_t)predicted,
		                                           "precision", ratio(hit, predicted), "recall", ratio(hit, support)));
	}
	json_t *out = json_pack("{s:s, s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:o, s:o, s:o, s:f}", "model",
	                        cli_name(a->model), "inputs", cli_name(a->inputs), "labels", cli_name(a->labels), "label_kind",
	                        t->one_hot ? "one-hot" : "indices", "n", (json_int_t)t->n, "compared",
	                        (json_int_t)total, "classes", (json_int_t)C, "correct", (json_int_t)t->correct,
	                        "accuracy", ratio(t->correct, total), "per_class", per_class, "confusion", cm, "seconds",
	                        t->seconds);
	if (t->top_k) {
		json_object_set_new(out, "top_k", json_integer(t->top_k));
		json_object_set_new(out, "top_k_correct", json_integer(t->top_k_correct));
		json_object_set_new(out, "top_k_accuracy", ratio(t->top_k_correct, total));
	}
	/* ASCII: C1 and bidirectional controls as \uXXXX, as docs/cli-json.md promises */
	json_dumpf(out, o, JSON_PRESERVE_ORDER | JSON_COMPACT | JSON_ENSURE_ASCII);
	fputc('\n', o);
	json_decref(out);
}

/* Runs every batch with a progress bar and counts. */
static nnn_status_t evaluate(cli_batches_t *b, tally_t *t, const int32_t *truth, int progress, nnn_diags_t *d)
{
	cli_progress_t pr;
	nnn_status_t st = NNN_OK;
	cli_progress_start(&pr, progress, "eval", "samples", (uint64_t)t->n);
	while (st == NNN_OK && cli_batches_more(b)) {
		st = cli_batches_next(b, NULL, d);
		if (st == NNN_OK)
			count_batch(t, b, truth);
		cli_progress_update(&pr, (uint64_t)(b->from + b->n));
	}
	cli_progress_end(&pr);
	return st;
}

/* Opens the three files and checks that they fit together; EXIT_VALID
 * with the batches planned, the classes known and every label checked. */
static int prepare(const eval_args_t *a, cli_env_t *env, nnn_file_t **f, nnn_npy_view_t *x, cli_batches_t *b,
                   tally_t *t, int32_t **truth, nnn_diags_t *d)
{
	nnn_npy_t y = { 0 };
	nnn_ctx_t *ctx = cli_ctx(env);
	nnn_decode_opts_t opts = { .ctx = ctx };
	nnn_run_opts_t ro = cli_run_opts(&a->run);
	nnn_status_t st = ctx ? cli_file_open(env, a->model, &opts, f, d) : NNN_E_NOMEM;
	if (st != NNN_OK)
		return cli_fail(env, a->model, d, st);
	int code = cli_inputs(env, a->inputs, a->reshape ? &a->shape : NULL, x);
	if (code != EXIT_VALID)
		return code;
	st = nnn_npy_read_file(a->labels, &y, d);
	if (st != NNN_OK)
		return cli_fail(env, a->labels, d, st);
	t->n = x->shape.dims[0];
	st = cli_batches_start(b, ctx, nnn_file_model(*f), &x->shape, x->data, a->run.batch, &ro, d);
	if (st != NNN_OK)
		code = cli_report_input(env, a->model, a->inputs, &x->shape, a->reshape, d, st);
	else if ((code = classes_of(a, b, t)) == EXIT_VALID && a->top_k > t->classes)
		code = cli_usage(env, &cmd_eval, "--top-k %" PRId64 " is more than the model's %" PRId64 " classes (%s)", a->top_k,
		                 t->classes, cli_name(a->model));
	else if (code == EXIT_VALID)
		code = label_classes(a, &y, &b->out, t, truth);
	nnn_npy_free(&y); /* the classes are in truth now */
	return code;
}

static int eval_files(const eval_args_t *a, cli_env_t *env, nnn_diags_t *d)
{
	nnn_file_t *f = NULL;
	nnn_npy_view_t x = { 0 };
	cli_batches_t b = { 0 };
	tally_t t = { .top_k = a->top_k };
	int32_t *truth = NULL;
	char *csv = NULL;
	size_t csv_len = 0;
	double t0 = cli_seconds();
	int code = prepare(a, env, &f, &x, &b, &t, &truth, d);
	if (code == EXIT_VALID) {
		nnn_status_t st = NNN_E_NOMEM;
		t.cm = calloc((size_t)(t.classes * t.classes), sizeof *t.cm);
		if (a->wrong && (t.wrong = open_memstream(&csv, &csv_len)) != NULL)
			fputs("index,true,predicted,predicted_score,true_score\n", t.wrong);
		if (!t.cm || (a->wrong && !t.wrong))
			nnn_diags_add(d, st, NNN_NO_OFFSET, "", "no memory for the confusion matrix or the misclassified samples");
		else
			st = evaluate(&b, &t, truth, cli_progress_wanted(env->progress), d);
		t.seconds = cli_seconds() - t0;
		/* With --misclassified -, stdout is the CSV's: the report goes to stderr. */
		FILE *o = a->wrong && !strcmp(a->wrong, "-") ? stderr : stdout;
		if (st == NNN_OK)
			(a->json ? print_json : print_text)(o, a, &t), env->json_done = a->json;
		else
			code = cli_fail(env, a->model, d, st);
		int kept = t.wrong && fclose(t.wrong) == 0;
		if (st == NNN_OK && a->wrong && !kept) {
			cli_say(stderr, "nnnkit: %s: no memory for the misclassified samples\n",
			        cli_out_name(a->wrong));
			code = EXIT_USAGE;
		} else if (st == NNN_OK && a->wrong) {
			fflush(stdout);
			code = cli_emit(a->wrong, csv, csv_len);
		}
	}
	free(csv);
	free(t.cm);
	free(truth);
	cli_batches_end(&b);
	nnn_npy_unmap(&x);
	nnn_file_close(f);
	return code;
}

static int run(const cli_args_t *args, cli_env_t *env)
{
	eval_args_t a = { .model = cli_arg(args, "MODEL"), .inputs = cli_str(args, "inputs"),
		          .labels = cli_str(args, "labels"), .json = cli_flag(args, "json"),
		          .wrong = cli_str(args, "misclassified"), .top_k = (int64_t)cli_num(args, "top-k", 0),
		          .env = env };
	nnn_diags_t d;
	int code;
	if (a.json && a.wrong && !strcmp(a.wrong, "-"))
		return cli_usage(env, &cmd_eval, "--json and --misclassified - both write to stdout; give --misclassified a file");
	cli_run_args(args, &a.run);
	if (cli_shape(args, "input-shape"))
		a.shape = *cli_shape(args, "input-shape"), a.reshape = 1;
	nnn_diags_init(&d);
	code = eval_files(&a, env, &d);
	nnn_diags_free(&d);
	return code;
}
