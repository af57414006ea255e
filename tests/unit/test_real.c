/* test_real.c: the two files written by the original framework: decoded,
 * validated, re-encoded and converted to JSON and back byte for byte, and run
 * against the framework's own outputs. They live outside the project
 * (../shared/corpus/real, or $NNN_REAL_CORPUS) and are never copied in:
 * without them these tests skip, saying so.
 *
 * They are the benchmark's tiny models too (bench/suite/tiny.c: one call
 * at batch 1), so real/demos_on_each_path runs both on each of the builtin
 * plugin's paths, "avx512", "avx2" and "generic" (issue 34), at the
 * expected file's batch and at batch 1, its first sample alone: at batch 1
 * a Dense layer of several panels takes them in groups (dense.c, j.group),
 * a path no other batch takes. A path this CPU cannot run is skipped with
 * the reason. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <math.h>

#include <nnn/file.h>
#include <nnn/run.h>
#include <nnn/validate.h>

#include "ctx.h"
#include "isa.h"
#include "roundtrip.h"

static const char *corpus_path(const char *name, char *buf, size_t size)
{
	const char *dir = getenv("NNN_REAL_CORPUS");
	snprintf(buf, size, "%s/%s", dir ? dir : "../shared/corpus/real", name);
	if (access(buf, R_OK) != 0)
		cr_skip_test("real corpus not found at %s: skipped (set NNN_REAL_CORPUS to run it)", buf);
	return buf;
}

typedef struct real {
	const char *file;
	int32_t layers;
	int32_t widths[5];      /* inputs of layer 0, then each layer's neurons */
	uint8_t acts[4];
	uint64_t params;        /* computed by hand from the widths */
	int64_t batch;          /* from expected.json */
} real_t;

static const real_t REAL[] = {
	{ "tictactoedemo.nnn", 4, { 10, 256, 256, 128, 9 }, { 4, 4, 4, 0 },
	  (10 * 256 + 256) + (256 * 256 + 256) + (256 * 128 + 128) + (128 * 9 + 9), 4 },
	{ "2dmovedemo.nnn", 4, { 4, 64, 64, 32, 4 }, { 4, 4, 4, 0 },
	  (4 * 64 + 64) + (64 * 64 + 64) + (64 * 32 + 32) + (32 * 4 + 4), 3 },
};

static void check_real(const real_t *r)
{
	char path[512];
	nnn_file_t *f;
	nnn_diags_t d;
	nnn_shape_t out[4];
	corpus_path(r->file, path, sizeof path);
	nnn_diags_init(&d);
	cr_assert_eq(nnn_file_open(path, NULL, &f, &d), NNN_OK, "%s", d.n ? d.v[0].msg : "");
	const nnn_model_t *m = nnn_file_model(f);
	cr_assert_eq(m->layer_count, r->layers);
	cr_assert_eq(m->param_count, r->params);
	cr_assert_eq(nnn_model_param_total(m), r->params);
	for (int32_t i = 0; i < m->layer_count; i++) {
		const nnn_layer_t *L = &m->layers[i];
		cr_assert_eq(L->id, NNN_LAYER_ID_DENSE);
		cr_assert_eq(L->activation.id, r->acts[i]);
		if (L->activation.id == NNN_ACTIVATION_ID_LEAKY_RELU)
			cr_assert_eq(L->activation.params.leaky_relu.tau, 0.05f);
		cr_assert_eq(L->body.dense.weights.dims.v[0], r->widths[i]);
		cr_assert_eq(L->body.dense.weights.dims.v[1], r->widths[i + 1]);
		cr_assert_eq(L->bias.dims.v[0], r->widths[i + 1]);
	}
	nnn_shape_t in = { .rank = 2, .dims = { r->batch, r->widths[0] } };
	cr_assert_eq(nnn_model_validate(m, &in, out, &d), NNN_OK);
	cr_assert_eq(out[3].dims[0], r->batch);
	cr_assert_eq(out[3].dims[1], r->widths[4]);

	/* Byte for byte. */
	size_t size;
	const unsigned char *bytes = nnn_file_bytes(f, &size);
	unsigned char *enc;
	size_t len;
	cr_assert_eq(nnn_model_encode(m, &enc, &len, &d), NNN_OK);
	cr_assert_eq(len, size);
	cr_assert_eq(memcmp(enc, bytes, len), 0);
	free(enc);
	cr_assert_eq(nnn_validate_bytes(bytes, size, NULL, &in, &d), NNN_OK);

	/* .nnn -> JSON -> .nnn, inline and with the large tensors in .npy files. */
	char why[1024], dir[64] = "/tmp/nnnreal.XXXXXX", npy[96], cmd[128];
	cr_assert_not_null(mkdtemp(dir));
	snprintf(npy, sizeof npy, "%s/tensors", dir);
	cr_assert(json_roundtrip(bytes, size, NULL, NULL, 0, NULL, why, sizeof why), "%s: %s", r->file, why);
	cr_assert(json_roundtrip(bytes, size, NULL, npy, 64, NULL, why, sizeof why), "%s: %s", r->file, why);
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	cr_assert_eq(system(cmd), 0);
	nnn_file_close(f);
	nnn_diags_free(&d);
}

Test(real, tictactoe)
{
	check_real(&REAL[0]);
}

Test(real, movedemo)
{
	check_real(&REAL[1]);
}

/* The numbers of expected.json between `from` and `to` (both searched after
 * `start`), without a JSON library: the file is plain arrays of numbers. */
static size_t numbers(const char *text, const char *start, const char *from, const char *to, double *out, size_t max)
{
	const char *p = strstr(strstr(text, start), from), *end = strstr(p, to);
	size_t n = 0;
	cr_assert(p && end);
	p += strlen(from);
	while (p < end && n < max) {
		char *q;
		if (strchr("-0123456789", *p)) {
			out[n++] = strtod(p, &q);
			p = q;
		} else {
			p++;
		}
	}
	return n;
}

static void check_run(const char *file, int64_t rows, int64_t cols_in, int64_t cols_out)
{
	char path[512], json[512];
	static char text[65536];
	double in[64], want[64];
	float x[64], y[64];
	nnn_file_t *f;
	nnn_ctx_t *ctx;
	nnn_plan_t *plan;
	nnn_diags_t d;

	corpus_path(file, path, sizeof path);
	corpus_path("expected.json", json, sizeof json);
	FILE *jf = fopen(json, "r");
	text[fread(text, 1, sizeof text - 1, jf)] = '\0';
	fclose(jf);
	char key[64];
	snprintf(key, sizeof key, "\"%s\"", file);
	cr_assert_eq(numbers(text, key, "\"input\":", "\"output_shape\"", in, 64), (size_t)(rows * cols_in));
	cr_assert_eq(numbers(text, key, "\"output\":", "]\n }", want, 64), (size_t)(rows * cols_out));
	for (int64_t i = 0; i < rows * cols_in; i++)
		x[i] = (float)in[i];

	nnn_diags_init(&d);
	ctx = t_ctx_with("plugins/builtin.so");
	cr_assert_eq(nnn_file_open(path, NULL, &f, &d), NNN_OK);
	/* the first sample alone, as the benchmark runs it: the same outputs */
	nnn_shape_t one = { .rank = 2, .dims = { 1, cols_in } };
	cr_assert_eq(nnn_plan_new(ctx, nnn_file_model(f), &one, NULL, &plan, &d), NNN_OK, "%s", d.n ? d.v[0].msg : "");
	cr_assert_eq(nnn_plan_run(plan, x, y, &d), NNN_OK);
	nnn_plan_free(plan);
	for (int64_t i = 0; i < cols_out; i++)
		cr_assert(fabs(y[i] - want[i]) <= 1e-5 * fabs(want[i]) + 1e-6, "%s, batch 1 (%s path): output %lld: %.9g, "
		          "expected %.9g", file, t_isa_runs(getenv("NNN_BUILTIN_ISA")), (long long)i, (double)y[i], want[i]);
	nnn_shape_t shape = { .rank = 2, .dims = { rows, cols_in } }, out;
	cr_assert_eq(nnn_plan_new(ctx, nnn_file_model(f), &shape, NULL, &plan, &d), NNN_OK, "%s", d.n ? d.v[0].msg : "");
	cr_assert_eq(nnn_plan_run(plan, x, y, &d), NNN_OK);
	float y2[64];
	cr_assert_eq(nnn_model_run(ctx, nnn_file_model(f), &shape, x, y2, &out, NULL, &d), NNN_OK);
	cr_assert_eq(out.rank, 2);
	cr_assert_eq(out.dims[1], cols_out);
	cr_assert_arr_eq(y, y2, sizeof(float) * (size_t)(rows * cols_out));
	for (int64_t i = 0; i < rows * cols_out; i++)
		cr_assert(fabs(y[i] - want[i]) <= 1e-5 * fabs(want[i]) + 1e-6, "%s (%s path): output %lld: %.9g, expected %.9g",
		          file, t_isa_runs(getenv("NNN_BUILTIN_ISA")), (long long)i, (double)y[i], want[i]);
	nnn_plan_free(plan);
	nnn_file_close(f);
	nnn_ctx_free(ctx);
	nnn_diags_free(&d);
}

Test(real, tictactoe_reproduces_expected_outputs)
{
	check_run("tictactoedemo.nnn", 4, 10, 9);
}

Test(real, movedemo_reproduces_expected_outputs)
{
	check_run("2dmovedemo.nnn", 3, 4, 4);
}

ParameterizedTestParameters(real, demos_on_each_path)
{
	static t_pathspec_t v[T_NPATHS];
	t_path_specs(v);
	return cr_make_param_array(t_pathspec_t, v, T_NPATHS);
}

ParameterizedTest(t_pathspec_t *path, real, demos_on_each_path)
{
	T_SKIP_UNLESS_PATH("real::demos_on_each_path", path->name);
	t_use_isa(path->name);
	check_run("tictactoedemo.nnn", 4, 10, 9);
	check_run("2dmovedemo.nnn", 3, 4, 4);
	t_use_isa(NULL);
}
