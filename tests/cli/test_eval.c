/* test_eval.c: `nnnkit eval` on a model whose outputs are known exactly,
 * and the progress bar of eval and run (on a pipe, forced, on a terminal).
 *
 * The model is one Dense layer 3 -> 3 with identity weights, zero bias and
 * a linear activation: its output is its input, so the predicted class of
 * a sample is the position of its largest value. Seven samples:
 *
 *   x          predicted  label
 *   [1, 0, 0]  0          0
 *   [0, 1, 0]  1          1
 *   [0, 0, 1]  2          2
 *   [1, 0, 0]  0          1   wrong
 *   [0, 2, 1]  1          2   wrong
 *   [3, 1, 0]  0          0
 *   [0, 1, 1]  1 (tie)    1   ties go to the lowest class
 *
 * accuracy 5/7; confusion (rows true) [[2,0,0],[1,2,0],[0,1,1]];
 * precision 2/3, 2/3, 1/1; recall 2/2, 2/3, 1/2. */
#define _DEFAULT_SOURCE
#include <criterion/criterion.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <pty.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nnn/npy.h>

#include "builder.h"
#include "clirun.h"
#include "shell.h"

#define N 7
static const float X[N * 3] = { 1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 0, 0, 0, 2, 1, 3, 1, 0, 0, 1, 1 };
static const float Y[N] = { 0, 1, 2, 1, 2, 0, 1 };

/* The files of one test, in one fresh folder. */
typedef struct files {
	char dir[600], model[700], x[700], y[700];
} files_t;

static void identity_model(bb_t *b)
{
	int32_t bias[1] = { 3 }, w[2] = { 3, 3 };
	bb_header(b, "identity", 12, 1);
	bb_u8(b, 0);    /* Dense */
	bb_u8(b, 0);    /* Linear */
	bb_f32(b, 0);   /* dropout */
	bb_i32s(b, 1, bias), bb_u8(b, 1), bb_i32(b, 3);
	for (int i = 0; i < 3; i++)
		bb_f32(b, 0);
	bb_i32(b, 3);   /* neurons */
	bb_i32s(b, 2, w), bb_u8(b, 1), bb_i32(b, 9);
	for (int i = 0; i < 9; i++)
		bb_f32(b, i % 4 == 0 ? 1.0f : 0.0f);
	bb_u8(b, 0);    /* flatten */
}

static void write_f32(const char *path, nnn_shape_t s, const float *v)
{
	cr_assert_eq(nnn_npy_write_file(path, &s, v, NULL), NNN_OK, "%s", path);
}

/* A version 1.0 .npy file of any dtype: `dict` is the header's dict. */
static void write_raw(const char *path, const char *dict, const void *data, size_t n)
{
	char h[256];
	size_t len = (size_t)snprintf(h, sizeof h, "%s", dict);
	while ((10 + len + 1) % 64)
		h[len++] = ' ';
	h[len++] = '\n';
	FILE *f = fopen(path, "wb");
	cr_assert_not_null(f);
	unsigned char pre[10] = { 0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)len, (unsigned char)(len >> 8) };
	fwrite(pre, 1, sizeof pre, f);
	fwrite(h, 1, len, f);
	fwrite(data, 1, n, f);
	cr_assert_eq(fclose(f), 0);
}

/* The model, X and Y (class indices as float32). */
static files_t setup(void)
{
	files_t f;
	bb_t b = { 0 };
	identity_model(&b);
	snprintf(f.dir, sizeof f.dir, "%s", bb_to_file(&b, "identity.nnn"));
	bb_free(&b);
	snprintf(f.model, sizeof f.model, "%s", f.dir);
	*strrchr(f.dir, '/') = '\0';
	snprintf(f.x, sizeof f.x, "%s/x.npy", f.dir);
	snprintf(f.y, sizeof f.y, "%s/y.npy", f.dir);
	write_f32(f.x, (nnn_shape_t){ .rank = 2, .dims = { N, 3 } }, X);
	write_f32(f.y, (nnn_shape_t){ .rank = 1, .dims = { N } }, Y);
	return f;
}

static void teardown(const files_t *f)
{
	char cmd[700];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->dir);
	cr_assert_eq(system(cmd), 0);
}

/* `eval MODEL --inputs X --labels Y EXTRA`. */
static void eval(run_t *r, const char *pre, const files_t *f, const char *extra)
{
	char args[4096];
	snprintf(args, sizeof args, "eval %s --inputs %s --labels %s %s", f->model, f->x, f->y, extra);
	nnnkit_env(r, pre, args);
}

/* The output without its time line, which differs from run to run. */
static const char *timeless(char *out)
{
	char *t = strstr(out, "time:");
	cr_assert_not_null(t, "%s", out);
	memmove(t, strchr(t, '\n') + 1, strlen(strchr(t, '\n') + 1) + 1);
	return out;
}

static const char TABLE[] = "accuracy: 0.7143 (5 of 7 correct)\n"
                            "\n"
                            "class   support predicted precision    recall\n"
                            "    0         2         3    0.6667    1.0000\n"
                            "    1         3         3    0.6667    0.6667\n"
                            "    2         2         1    1.0000    0.5000\n"
                            "\n"
                            "confusion matrix (rows: true class, columns: predicted)\n"
                            "true\\pred    0    1    2\n"
                            "        0    2    0    0\n"
                            "        1    1    2    0\n"
                            "        2    0    1    1\n";

Test(eval, counts_by_hand_in_any_batch_size)
{
	static const char *batches[] = { "", "--batch 1", "--batch 2", "--batch 3", "--batch 7", "--batch 100" };
	files_t f = setup();
	run_t r;
	for (size_t i = 0; i < sizeof batches / sizeof batches[0]; i++) {
		eval(&r, "-u NNNKIT_PROGRESS", &f, batches[i]);
		cr_assert_eq(r.code, 0, "%s: %s", batches[i], r.err);
		cr_assert_str_eq(r.err, "", "%s", batches[i]);
		cr_assert(strstr(timeless(r.out), TABLE), "%s:\n%s", batches[i], r.out);
		cr_assert(strstr(r.out, "(class indices)"), "%s", r.out);
	}
	teardown(&f);
}

static json_t *parse_json(const run_t *r)
{
	json_error_t e;
	json_t *j = json_loads(r->out, 0, &e);
	cr_assert_not_null(j, "line %d: %s: %s", e.line, e.text, r->out);
	return j;
}

static void check_json(json_t *j, const char *kind)
{
	static const int cm[3][3] = { { 2, 0, 0 }, { 1, 2, 0 }, { 0, 1, 1 } };
	static const double precision[3] = { 2.0 / 3, 2.0 / 3, 1 }, recall[3] = { 1, 2.0 / 3, 0.5 };
	cr_assert_str_eq(json_string_value(json_object_get(j, "label_kind")), kind);
	cr_assert_eq(json_integer_value(json_object_get(j, "n")), N);
	cr_assert_eq(json_integer_value(json_object_get(j, "classes")), 3);
	cr_assert_eq(json_integer_value(json_object_get(j, "correct")), 5);
	cr_assert_float_eq(json_real_value(json_object_get(j, "accuracy")), 5.0 / 7, 1e-12);
	cr_assert(json_is_number(json_object_get(j, "seconds")));
	json_t *m = json_object_get(j, "confusion"), *pc = json_object_get(j, "per_class");
	cr_assert_eq(json_array_size(m), 3);
	cr_assert_eq(json_array_size(pc), 3);
	for (size_t t = 0; t < 3; t++) {
		json_t *c = json_array_get(pc, t);
		for (size_t p = 0; p < 3; p++)
			cr_assert_eq(json_integer_value(json_array_get(json_array_get(m, t), p)), cm[t][p], "[%zu][%zu]", t, p);
		cr_assert_eq(json_integer_value(json_object_get(c, "class")), (json_int_t)t);
		cr_assert_float_eq(json_real_value(json_object_get(c, "precision")), precision[t], 1e-12);
		cr_assert_float_eq(json_real_value(json_object_get(c, "recall")), recall[t], 1e-12);
	}
}

Test(eval, json_with_every_label_kind)
{
	files_t f = setup();
	run_t r;
	eval(&r, "", &f, "--json --batch 3");
	cr_assert_eq(r.code, 0, "%s", r.err);
	json_t *j = parse_json(&r);
	check_json(j, "indices");
	json_decref(j);

	/* int64, int32 and uint8 indices, [n] or [n, 1]. */
	int64_t i8[N];
	int32_t i4[N];
	uint8_t u1[N];
	for (int i = 0; i < N; i++)
		i8[i] = (int64_t)Y[i], i4[i] = (int32_t)Y[i], u1[i] = (uint8_t)Y[i];
	static const struct {
		const char *dict;
		size_t size;
	} kinds[] = {
		{ "{'descr': '<i8', 'fortran_order': False, 'shape': (7,), }", 8 },
		{ "{'descr': '<i4', 'fortran_order': False, 'shape': (7, 1), }", 4 },
		{ "{'descr': '|u1', 'fortran_order': False, 'shape': (7,), }", 1 },
	};
	const void *data[] = { i8, i4, u1 };
	for (size_t k = 0; k < 3; k++) {
		write_raw(f.y, kinds[k].dict, data[k], N * kinds[k].size);
		eval(&r, "", &f, "--json");
		cr_assert_eq(r.code, 0, "%s: %s", kinds[k].dict, r.err);
		j = parse_json(&r);
		check_json(j, "indices");
		json_decref(j);
	}

	/* One-hot rows [n, 3]. */
	float hot[N * 3] = { 0 };
	for (int i = 0; i < N; i++)
		hot[i * 3 + (int)Y[i]] = 1;
	write_f32(f.y, (nnn_shape_t){ .rank = 2, .dims = { N, 3 } }, hot);
	eval(&r, "", &f, "--json --batch 2");
	cr_assert_eq(r.code, 0, "%s", r.err);
	j = parse_json(&r);
	check_json(j, "one-hot");
	json_decref(j);
	eval(&r, "", &f, "");
	cr_assert(strstr(timeless(r.out), TABLE), "%s", r.out);
	cr_assert(strstr(r.out, "(one-hot rows)"), "%s", r.out);
	teardown(&f);
}

/* A class never predicted has no precision, one never seen no recall. */
Test(eval, json_null_for_empty_classes)
{
	files_t f = setup();
	const float y[2] = { 0, 2 };
	run_t r;
	write_f32(f.x, (nnn_shape_t){ .rank = 2, .dims = { 2, 3 } }, X);
	write_f32(f.y, (nnn_shape_t){ .rank = 1, .dims = { 2 } }, y);
	eval(&r, "", &f, "--json");
	cr_assert_eq(r.code, 0, "%s", r.err);
	json_t *j = parse_json(&r), *pc = json_object_get(j, "per_class");
	cr_assert(json_is_null(json_object_get(json_array_get(pc, 1), "recall")), "%s", r.out);
	cr_assert(json_is_null(json_object_get(json_array_get(pc, 2), "precision")), "%s", r.out);
	cr_assert_float_eq(json_real_value(json_object_get(j, "accuracy")), 0.5, 1e-12);
	json_decref(j);
	eval(&r, "", &f, "");
	cr_assert(strstr(r.out, "    1         0         1    0.0000         -\n"), "%s", r.out);
	cr_assert(strstr(r.out, "    2         1         0         -    0.0000\n"), "%s", r.out);
	teardown(&f);
}

Test(eval, input_shape_reshapes_flat_inputs)
{
	files_t f = setup();
	run_t r;
	write_f32(f.x, (nnn_shape_t){ .rank = 3, .dims = { N, 3, 1 } }, X);
	eval(&r, "", &f, "");
	cr_assert_eq(r.code, 1, "%s", r.err);
	eval(&r, "", &f, "--input-shape 1,3");
	cr_assert_eq(r.code, 0, "%s", r.err);
	cr_assert(strstr(r.out, "accuracy: 0.7143 (5 of 7 correct)"), "%s", r.out);
	eval(&r, "", &f, "--input-shape 1,2");
	cr_assert_eq(r.code, 1, "%s", r.err);
	cr_assert(strstr(r.err, "x.npy: shape [7, 3, 1]: 3 values per sample, but --input-shape [1, 2] takes 2"), "%s",
	          r.err);
	eval(&r, "", &f, "--input-shape 1,3,x");
	cr_assert_eq(r.code, 2, "%s", r.err);
	teardown(&f);
}

/* Y as float32 values, with the message expected. */
static void bad_labels(const files_t *f, nnn_shape_t s, const float *v, const char *want)
{
	run_t r;
	char line[1600];
	write_f32(f->y, s, v);
	eval(&r, "", f, "");
	cr_assert_eq(r.code, 1, "%s: %s", want, r.err);
	snprintf(line, sizeof line, "nnnkit: %s: %s", f->y, want);
	cr_assert(strstr(r.err, line), "expected \"%s\" in: %s", line, r.err);
	cr_assert_str_eq(r.out, "");
}

Test(eval, bad_labels_exit_1_naming_the_file)
{
	files_t f = setup();
	float y[N * 3];
	nnn_shape_t n1 = { .rank = 1, .dims = { N } };

	bad_labels(&f, (nnn_shape_t){ .rank = 1, .dims = { 5 } }, Y,
	           "shape[0]: 5 labels for 7 samples in ");
	memcpy(y, Y, sizeof Y);
	y[1] = 3, y[4] = -1;
	bad_labels(&f, n1, y,
	           "data[1]: label 3 is outside the model's 3 classes (2 labels like it in all); expected 0 to 2");
	memcpy(y, Y, sizeof Y);
	y[2] = 1.5f;
	bad_labels(&f, n1, y, "data[2]: label 1.5 is not a class index; expected a whole number from 0 to 2");
	y[2] = NAN;
	bad_labels(&f, n1, y, "data[2]: label nan is not a class index");
	bad_labels(&f, (nnn_shape_t){ .rank = 2, .dims = { N, 2 } }, X,
	           "shape [7, 2]: 2 values per sample, but the model gives 3 class scores per sample; expected [7] "
	           "(class indices) or [7, 3] (one-hot rows)");
	memset(y, 0, sizeof y);
	for (int i = 0; i < N; i++)
		y[i * 3 + (int)Y[i]] = 1;
	y[2 * 3 + 2] = 0; /* row 2: all zeros */
	bad_labels(&f, (nnn_shape_t){ .rank = 2, .dims = { N, 3 } }, y,
	           "row 2 (data[6...]) has no single largest value; expected one-hot rows");
	bad_labels(&f, (nnn_shape_t){ .rank = 0 }, Y, "a single value, not one label per sample");

	/* A dtype nnnkit does not read: the reader names it. */
	run_t r;
	write_raw(f.y, "{'descr': '<c8', 'fortran_order': False, 'shape': (7,), }", X, N * 8);
	eval(&r, "", &f, "");
	cr_assert_eq(r.code, 1);
	cr_assert(strstr(r.err, "descr is \"<c8\", a dtype nnnkit does not read"), "%s", r.err);
	cr_assert(strstr(r.err, f.y), "%s", r.err);
	teardown(&f);
}

Test(eval, other_errors_and_exit_codes)
{
	files_t f = setup();
	run_t r;
	char args[4096];

	/* Usage: exit 2. */
	snprintf(args, sizeof args, "eval %s --inputs %s", f.model, f.x);
	nnnkit(&r, args);
	cr_assert_eq(r.code, 2);
	cr_assert(strstr(r.err, "nnnkit eval: no --labels given"), "%s", r.err);
	eval(&r, "", &f, "--batch 0");
	cr_assert_eq(r.code, 2);
	cr_assert(strstr(r.err, "--batch needs a whole number from 1 to 1048576, not '0'"), "%s", r.err);
	nnnkit(&r, "eval --help");
	cr_assert_eq(r.code, 0);
	cr_assert(strstr(r.out, "usage: nnnkit eval MODEL --inputs X.npy --labels Y.npy"), "%s", r.out);

	/* A missing file: exit 2 (I/O), named. */
	snprintf(args, sizeof args, "eval %s --inputs %s --labels %s/none.npy", f.model, f.x, f.dir);
	nnnkit(&r, args);
	cr_assert_eq(r.code, 2);
	cr_assert(strstr(r.err, "/none.npy: input/output error: cannot open "), "%s", r.err);

	/* Inputs that do not fit the model, or hold no samples: exit 1. */
	write_f32(f.x, (nnn_shape_t){ .rank = 2, .dims = { 3, 7 } }, X);
	eval(&r, "", &f, "");
	cr_assert_eq(r.code, 1);
	cr_assert(strstr(r.err, "found 3 inputs, but the incoming last axis has 7"), "%s", r.err);
	write_f32(f.x, (nnn_shape_t){ .rank = 2, .dims = { 0, 3 } }, X);
	eval(&r, "", &f, "");
	cr_assert_eq(r.code, 1);
	cr_assert(strstr(r.err, "x.npy: shape [0, 3]: no samples"), "%s", r.err);

	/* A model with one output per sample is no classifier. */
	bb_t b = { 0 };
	bb_tiny(&b);
	snprintf(f.model, sizeof f.model, "%s/tiny.nnn", f.dir);
	FILE *m = fopen(f.model, "wb");
	fwrite(b.b, 1, b.n, m);
	fclose(m);
	bb_free(&b);
	write_f32(f.x, (nnn_shape_t){ .rank = 2, .dims = { N, 3 } }, X);
	eval(&r, "", &f, "");
	cr_assert_eq(r.code, 1);
	cr_assert(strstr(r.err, "tiny.nnn: its output [7, 1] has a last axis of 1; eval takes the argmax"), "%s",
	          r.err);
	teardown(&f);
}

/* ---- progress ---- */

/* A bar was drawn ("\rLABEL [") and erased: the text ends "\r", spaces, "\r". */
static void drawn_and_erased(const char *err, size_t n, const char *label)
{
	char want[64];
	snprintf(want, sizeof want, "\r%s [", label);
	cr_assert(strstr(err, want), "no bar in: %s", err);
	cr_assert(n >= 3 && err[n - 1] == '\r', "not erased at the end: [%s]", err);
	size_t i = n - 2;
	while (i > 0 && err[i] == ' ')
		i--;
	cr_assert(err[i] == '\r' && i < n - 2, "not erased at the end: [%s]", err);
}

Test(eval, progress_only_on_a_terminal_or_when_forced)
{
	files_t f = setup();
	run_t r;
	/* A pipe: no bar. */
	eval(&r, "-u NNNKIT_PROGRESS TERM=xterm", &f, "--json");
	cr_assert_eq(r.code, 0);
	cr_assert_str_eq(r.err, "");

	/* Forced by the option or the variable; the option wins. */
	eval(&r, "-u NNNKIT_PROGRESS", &f, "--json --progress --batch 1");
	cr_assert_eq(r.code, 0);
	drawn_and_erased(r.err, strlen(r.err), "eval");
	cr_assert(!strstr(r.out, "\r"));
	eval(&r, "NNNKIT_PROGRESS=1", &f, "--json");
	drawn_and_erased(r.err, strlen(r.err), "eval");
	eval(&r, "NNNKIT_PROGRESS=1", &f, "--json --no-progress");
	cr_assert_str_eq(r.err, "");
	eval(&r, "NNNKIT_PROGRESS=0", &f, "--progress");
	drawn_and_erased(r.err, strlen(r.err), "eval");
	teardown(&f);
}

/* Runs eval with stderr on a pseudo-terminal and stdout in a file; returns
 * what the terminal showed (static). */
static const char *on_terminal(const files_t *f, const char *term, size_t *n, char *out, size_t out_size)
{
	static char seen[65536];
	char outp[700];
	int master;
	snprintf(outp, sizeof outp, "%s/out.json", f->dir);
	pid_t pid = forkpty(&master, NULL, NULL, NULL);
	cr_assert_neq(pid, -1);
	if (pid == 0) {
		int fd = open(outp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd < 0 || dup2(fd, 1) < 0)
			_exit(99);
		setenv("TERM", term, 1);
		unsetenv("NNNKIT_PROGRESS");
		execl(nnnkit_bin(), "nnnkit", "eval", f->model, "--inputs", f->x, "--labels", f->y, "--json", "--batch", "1",
		      (char *)NULL);
		_exit(98);
	}
	*n = 0;
	for (;;) {
		ssize_t k = read(master, seen + *n, sizeof seen - 1 - *n);
		if (k <= 0) /* EIO once the child has gone */
			break;
		*n += (size_t)k;
	}
	seen[*n] = '\0';
	close(master);
	int st;
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d: %s", st, seen);
	FILE *o = fopen(outp, "rb");
	cr_assert_not_null(o);
	out[fread(out, 1, out_size - 1, o)] = '\0';
	fclose(o);
	return seen;
}

Test(eval, progress_on_a_pseudo_terminal)
{
	files_t f = setup();
	char out[8192];
	size_t n;
	const char *seen = on_terminal(&f, "xterm", &n, out, sizeof out);
	drawn_and_erased(seen, n, "eval");
	cr_assert(strstr(seen, " samples "), "%s", seen);
	cr_assert(strstr(out, "\"correct\":5"), "%s", out);
	seen = on_terminal(&f, "dumb", &n, out, sizeof out);
	cr_assert_eq(n, 0, "TERM=dumb drew: %s", seen);
	teardown(&f);
}

/* Progress goes to stderr only: run's output file is the same bytes. */
Test(eval, run_output_unaffected_by_progress)
{
	files_t f = setup();
	enum { M = 1000 };
	static float x[M * 3];
	char args[4096], a[700], b[700];
	run_t r;
	for (int i = 0; i < M * 3; i++)
		x[i] = (float)(i % 17) - 8.0f;
	write_f32(f.x, (nnn_shape_t){ .rank = 2, .dims = { M, 3 } }, x);
	snprintf(a, sizeof a, "%s/a.npy", f.dir);
	snprintf(b, sizeof b, "%s/b.npy", f.dir);
	snprintf(args, sizeof args, "run %s --input %s --output %s --batch 7", f.model, f.x, a);
	nnnkit_env(&r, "-u NNNKIT_PROGRESS", args);
	cr_assert_eq(r.code, 0, "%s", r.err);
	cr_assert_str_eq(r.err, "");
	snprintf(args, sizeof args, "run %s --input %s --output %s --batch 7 --progress", f.model, f.x, b);
	nnnkit(&r, args);
	cr_assert_eq(r.code, 0, "%s", r.err);
	drawn_and_erased(r.err, strlen(r.err), "run");
	snprintf(args, sizeof args, "cmp -s %s %s && cmp -s %s %s", a, b, a, f.x);
	cr_assert_eq(system(args), 0, "the outputs differ (or are not the identity of the input)");
	teardown(&f);
}

/* ---- top-K, the misclassified samples, unscaled inputs (issue 15) ----
 *
 * Five samples through the identity model (outputs = inputs), ranked by
 * the one order: higher first, equal outputs by class, lowest first.
 *
 *   x          label  order      predicted  rank of label  top-1  top-2
 *   [0, 1, 1]  2      1, 2, 0    1          1 (tie, after 1)  no   yes
 *   [1, 1, 1]  2      0, 1, 2    0          2               no     no
 *   [1, 1, 1]  0      0, 1, 2    0          0               yes    yes
 *   [3, 2, 1]  2      0, 1, 2    0          2               no     no
 *   [1, 2, 3]  1      2, 1, 0    2          1               no     yes
 *
 * top-1 1/5, top-2 3/5, top-3 5/5. */
#define NK 5
static const float XK[NK * 3] = { 0, 1, 1, 1, 1, 1, 1, 1, 1, 3, 2, 1, 1, 2, 3 };
static const float YK[NK] = { 2, 2, 0, 2, 1 };

static files_t setup_topk(void)
{
	files_t f = setup();
	write_f32(f.x, (nnn_shape_t){ .rank = 2, .dims = { NK, 3 } }, XK);
	write_f32(f.y, (nnn_shape_t){ .rank = 1, .dims = { NK } }, YK);
	return f;
}

Test(eval, top_k_by_hand_with_ties)
{
	files_t f = setup_topk();
	run_t r;
	eval(&r, "", &f, "--top-k 2");
	cr_assert_eq(r.code, 0, "%s", r.err);
	cr_assert(strstr(r.out, "accuracy: 0.2000 (1 of 5 correct)\n"
	                        "top-2:    0.6000 (3 of 5 with the label among the 2 highest outputs)\n"), "%s", r.out);
	static const struct {
		const char *k;
		int correct;
	} ks[] = { { "1", 1 }, { "2", 3 }, { "3", 5 } };
	for (size_t i = 0; i < 3; i++) {
		char extra[64];
		snprintf(extra, sizeof extra, "--json --batch 2 --top-k %s", ks[i].k);
		eval(&r, "", &f, extra);
		cr_assert_eq(r.code, 0, "%s", r.err);
		json_t *j = parse_json(&r);
		cr_assert_eq(json_integer_value(json_object_get(j, "correct")), 1, "%s", r.out);
		cr_assert_eq(json_integer_value(json_object_get(j, "top_k")), atoi(ks[i].k), "%s", r.out);
		cr_assert_eq(json_integer_value(json_object_get(j, "top_k_correct")), ks[i].correct, "%s", r.out);
		cr_assert_float_eq(json_real_value(json_object_get(j, "top_k_accuracy")), ks[i].correct / 5.0, 1e-12);
		json_decref(j);
	}
	/* Without --top-k: no top-K line or field. */
	eval(&r, "", &f, "--json");
	json_t *j = parse_json(&r);
	cr_assert_null(json_object_get(j, "top_k"), "%s", r.out);
	json_decref(j);
	eval(&r, "", &f, "");
	cr_assert_null(strstr(r.out, "top-"), "%s", r.out);
	/* K past the classes, or 0: usage errors. */
	eval(&r, "", &f, "--top-k 4");
	cr_assert_eq(r.code, 2, "%s", r.err);
	cr_assert(strstr(r.err, "--top-k 4 is more than the model's 3 classes"), "%s", r.err);
	eval(&r, "", &f, "--top-k 0");
	cr_assert_eq(r.code, 2, "%s", r.err);
	teardown(&f);
}

static const char MISCLASSIFIED[] = "index,true,predicted,predicted_score,true_score\n"
                                    "0,2,1,1,1\n"
                                    "1,2,0,1,1\n"
                                    "3,2,0,3,1\n"
                                    "4,1,2,3,2\n";

Test(eval, misclassified_csv_to_a_file_and_stdout)
{
	files_t f = setup_topk();
	run_t r;
	char extra[800], text[4096] = "";
	snprintf(extra, sizeof extra, "--batch 3 --misclassified %s/wrong.csv", f.dir);
	eval(&r, "", &f, extra);
	cr_assert_eq(r.code, 0, "%s", r.err);
	cr_assert(strstr(r.out, "accuracy: 0.2000 (1 of 5 correct)"), "the report on stdout: %s", r.out);
	FILE *in = fopen(t_fmt("%s/wrong.csv", f.dir), "r");
	cr_assert_not_null(in);
	text[fread(text, 1, sizeof text - 1, in)] = '\0';
	fclose(in);
	cr_assert_str_eq(text, MISCLASSIFIED);

	/* '-': the CSV alone on stdout, the report on stderr. */
	eval(&r, "", &f, "--misclassified -");
	cr_assert_eq(r.code, 0, "%s", r.err);
	cr_assert_str_eq(r.out, MISCLASSIFIED);
	cr_assert(strstr(r.err, "accuracy: 0.2000 (1 of 5 correct)"), "%s", r.err);
	eval(&r, "", &f, "--misclassified - --json");
	cr_assert_eq(r.code, 2, "%s", r.err);
	cr_assert(strstr(r.err, "--json and --misclassified - both write to stdout"), "%s", r.err);

	/* Nothing misclassified: the header alone. */
	write_f32(f.y, (nnn_shape_t){ .rank = 1, .dims = { 1 } }, YK + 2);
	write_f32(f.x, (nnn_shape_t){ .rank = 2, .dims = { 1, 3 } }, XK + 6);
	eval(&r, "", &f, "--misclassified -");
	cr_assert_eq(r.code, 0, "%s", r.err);
	cr_assert_str_eq(r.out, "index,true,predicted,predicted_score,true_score\n");

	/* A folder that does not exist: exit 2, named. */
	snprintf(extra, sizeof extra, "--misclassified %s/no/such/dir/w.csv", f.dir);
	eval(&r, "", &f, extra);
	cr_assert_eq(r.code, 2, "%s", r.err);
	cr_assert(strstr(r.err, "/no/such/dir/w.csv"), "%s", r.err);
	teardown(&f);
}

/* X as '|u1' bytes (the values of X, which are whole numbers). */
static void write_u8(const char *path, int64_t n, const float *v)
{
	uint8_t u[64];
	char dict[128];
	for (int64_t i = 0; i < n * 3; i++)
		u[i] = (uint8_t)v[i];
	snprintf(dict, sizeof dict, "{'descr': '|u1', 'fortran_order': False, 'shape': (%lld, 3), }", (long long)n);
	write_raw(path, dict, u, (size_t)(n * 3));
}

static const char UNSCALED[] = "x.npy: warning: uint8 values (up to 3) are used as they are";

Test(eval, warns_about_unscaled_integer_inputs)
{
	files_t f = setup();
	run_t r;
	char args[2048];
	/* uint8 with a value over 1 (X's max is 3): a warning, the same result, exit 0. */
	write_u8(f.x, N, X);
	eval(&r, "", &f, "");
	cr_assert_eq(r.code, 0, "%s", r.err);
	cr_assert(strstr(r.err, UNSCALED), "%s", r.err);
	cr_assert(strstr(r.err, "x.astype('float32') / 255"), "%s", r.err);
	cr_assert(strstr(timeless(r.out), TABLE), "%s", r.out);
	snprintf(args, sizeof args, "run %s --input %s", f.model, f.x);
	nnnkit(&r, args);
	cr_assert_eq(r.code, 0, "%s", r.err);
	cr_assert(strstr(r.err, UNSCALED), "run: %s", r.err);

	/* int64 too: scaled by the largest value found. */
	int64_t i8[N * 3];
	for (int i = 0; i < N * 3; i++)
		i8[i] = (int64_t)X[i];
	write_raw(f.x, "{'descr': '<i8', 'fortran_order': False, 'shape': (7, 3), }", i8, sizeof i8);
	eval(&r, "", &f, "");
	cr_assert_eq(r.code, 0, "%s", r.err);
	cr_assert(strstr(r.err, "x.npy: warning: int64 values (up to 3)"), "%s", r.err);
	cr_assert(strstr(r.err, "x.astype('float32') / 3)"), "%s", r.err);

	/* uint8 all in {0, 1} (the first three samples), and float32 over 1: no warning. */
	write_u8(f.x, 3, X);
	write_f32(f.y, (nnn_shape_t){ .rank = 1, .dims = { 3 } }, Y);
	eval(&r, "", &f, "");
	cr_assert_eq(r.code, 0, "%s", r.err);
	cr_assert_str_eq(r.err, "");
	snprintf(args, sizeof args, "run %s --input %s", f.model, f.x);
	nnnkit(&r, args);
	cr_assert_eq(r.code, 0, "%s", r.err);
	cr_assert_str_eq(r.err, "");
	write_f32(f.x, (nnn_shape_t){ .rank = 2, .dims = { N, 3 } }, X);
	write_f32(f.y, (nnn_shape_t){ .rank = 1, .dims = { N } }, Y);
	eval(&r, "", &f, "");
	cr_assert_eq(r.code, 0, "%s", r.err);
	cr_assert_str_eq(r.err, "");
	nnnkit(&r, args);
	cr_assert_eq(r.code, 0, "%s", r.err);
	cr_assert_str_eq(r.err, "");
	teardown(&f);
}
