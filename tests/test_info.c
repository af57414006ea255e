/* test_info.c: `nnnkit info` shows the model's input and output shapes,
 * and each layer's output, from the shape engine: exact when the layers
 * fix the input (a Dense first layer: [1, its inputs]) or --input-shape
 * gives it; else '?' where unknown and how to give it (issue 15). The
 * expected shapes are worked out by hand from the layers' dims. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "builder.h"
#include "clirun.h"
#include "shell.h"

/* tiny: Dense 3 -> 2, Dense 2 -> 1. */
Test(info, dense_model_shapes_from_its_first_layer)
{
	bb_t b = { 0 };
	run_t r;
	bb_tiny(&b);
	const char *path = bb_to_file(&b, "tiny.nnn");
	bb_free(&b);
	nnnkit(&r, t_fmt("info %s", path));
	cr_assert_eq(r.code, 0, "%s", r.err);
	cr_assert(strstr(r.out, "\nshapes:       input [1, 3] -> output [1, 1] (the input the layers fix, with a batch "
	                        "of 1)\n"), "%s", r.out);
	/* The output column, aligned with its heading. */
	const char *head = strstr(r.out, "\n#  "), *row0 = strstr(r.out, "\n0  "), *row1 = strstr(r.out, "\n1  ");
	cr_assert(head && row0 && row1, "%s", r.out);
	cr_assert(strstr(row0, "  [1, 2]  "), "%s", r.out);
	cr_assert_eq(strstr(head, "output") - head, strstr(row0, "[1, 2]") - row0, "%s", r.out);
	cr_assert_eq(strstr(head, "output") - head, strstr(row1, "[1, 1]") - row1, "%s", r.out);

	/* A batch of 5 given. */
	nnnkit(&r, t_fmt("info --input-shape 5,3 %s", path));
	cr_assert_eq(r.code, 0, "%s", r.err);
	cr_assert(strstr(r.out, "shapes:       input [5, 3] -> output [5, 1] (from --input-shape)\n"), "%s", r.out);
	/* One that does not fit: the problem, the option named, exit 1. */
	nnnkit(&r, t_fmt("info --input-shape 1,4 %s", path));
	cr_assert_eq(r.code, 1, "%s", r.err);
	cr_assert(strstr(r.err, "layers[0]"), "%s", r.err);
	cr_assert(strstr(r.err, "--input-shape [1, 4] does not fit the model"), "%s", r.err);
	cr_assert(strstr(r.out, "(--input-shape does not fit: see above)"), "%s", r.out);
}

/* Conv: 2 filters of 3x3 over 1 channel, valid padding, then a Dense of
 * 3 * 3 * 2 = 18 inputs (a 5x5 input) flattened to 4. */
static const char *conv_model(void)
{
	bb_t b = { 0 };
	int32_t k[2] = { 3, 3 }, pads[4] = { 0, 0, 0, 0 };
	bb_header(&b, "conv", 2 * 3 * 3 * 1 + 2 + 18 * 4 + 4, 2);
	bb_conv(&b, 0, 2, 2, k, 1, 0 /* Valid */, 4, pads);
	bb_dense(&b, 0, 18, 4, 1);
	const char *path = bb_to_file(&b, "conv.nnn");
	bb_free(&b);
	return path;
}

Test(info, conv_model_needs_an_input_shape)
{
	const char *path = conv_model();
	run_t r;
	nnnkit(&r, t_fmt("validate %s", path));
	cr_assert_eq(r.code, 0, "the model is valid: %s", r.err);
	nnnkit(&r, t_fmt("info %s", path));
	cr_assert_eq(r.code, 0, "%s", r.err);
	cr_assert(strstr(r.out, "shapes:       input [?, ?, ?, 1] -> output [?, 4]\n"
	                        "              the layers do not fix the whole input (?: unknown); give it with "
	                        "--input-shape 1,D1,D2,1 (D1...: the sizes of your inputs)\n"), "%s", r.out);
	cr_assert(strstr(r.out, "  [?, ?, ?, 2]  "), "%s", r.out);
	nnnkit(&r, t_fmt("info --input-shape 1,5,5,1 %s", path));
	cr_assert_eq(r.code, 0, "%s", r.err);
	cr_assert(strstr(r.out, "shapes:       input [1, 5, 5, 1] -> output [1, 4] (from --input-shape)\n"), "%s", r.out);
	cr_assert(strstr(r.out, "  [1, 3, 3, 2]  "), "%s", r.out);
	/* 4x4: the Conv gives 2 * 2 * 2 = 8 values, the Dense takes 18. */
	nnnkit(&r, t_fmt("info --input-shape 1,4,4,1 %s", path));
	cr_assert_eq(r.code, 1, "%s", r.err);
	cr_assert(strstr(r.err, "layers[1]"), "%s", r.err);
	cr_assert(strstr(r.err, "--input-shape [1, 4, 4, 1] does not fit the model"), "%s", r.err);
	nnnkit(&r, t_fmt("info --input-shape 1,4,x %s", path));
	cr_assert_eq(r.code, 2, "%s", r.err);

	/* The same in JSON: unknown dims are null (docs/cli-json.md, "info"). */
	nnnkit(&r, t_fmt("info --json %s", path));
	cr_assert_eq(r.code, 0, "%s", r.err);
	cr_assert(strstr(r.out, "\"input_shape\": [null, null, null, 1], \"output_shape\": [null, 4], "
	                        "\"shapes_from\": null, "), "%s", r.out);
	cr_assert(strstr(r.out, "\"input_shape\": [null, null, null, 1], \"output_shape\": [null, null, null, 2], "
	                        "\"tensors\""), "layers[0]: %s", r.out);
	nnnkit(&r, t_fmt("info --json --input-shape 1,5,5,1 %s", path));
	cr_assert_eq(r.code, 0, "%s", r.err);
	cr_assert(strstr(r.out, "\"input_shape\": [1, 5, 5, 1], \"output_shape\": [1, 4], "
	                        "\"shapes_from\": \"--input-shape\", "), "%s", r.out);
	cr_assert(strstr(r.out, "\"input_shape\": [1, 3, 3, 2], \"output_shape\": [1, 4], \"tensors\""), "%s", r.out);
	nnnkit(&r, t_fmt("info --json --input-shape 1,4,4,1 %s", path));
	cr_assert_eq(r.code, 1, "%s", r.err);
	cr_assert(strncmp(r.out, "{\"error\": {\"code\": \"E_CHAIN\"", 28) == 0, "the error object alone: %s", r.out);
	cr_assert(strstr(r.out, "\"exit\": 1, \"file\": "), "%s", r.out);
	cr_assert(strstr(r.out, "\"path\": \"layers[1]"), "%s", r.out);
	cr_assert_null(strstr(r.out, "\"layers\": ["), "no report for a shape that does not fit: %s", r.out);
}

/* The files of the original framework (../shared/corpus/real, or
 * $NNN_REAL_CORPUS, as test_real.c finds them): Dense chains of 10 -> 9
 * and 4 -> 4 (test_real.c checks their widths). */
Test(info, real_corpus_files)
{
	static const struct {
		const char *file, *shapes;
	} real[] = {
		{ "tictactoedemo.nnn", "shapes:       input [1, 10] -> output [1, 9] " },
		{ "2dmovedemo.nnn", "shapes:       input [1, 4] -> output [1, 4] " },
	};
	const char *dir = getenv("NNN_REAL_CORPUS") ? getenv("NNN_REAL_CORPUS") : "../shared/corpus/real";
	for (size_t i = 0; i < sizeof real / sizeof real[0]; i++) {
		const char *path = t_fmt("%s/%s", dir, real[i].file);
		run_t r;
		if (access(path, R_OK) != 0)
			cr_skip_test("real corpus not found at %s: skipped (set NNN_REAL_CORPUS to run it)", path);
		nnnkit(&r, t_fmt("info %s", path));
		cr_assert_eq(r.code, 0, "%s", r.err);
		cr_assert(strstr(r.out, real[i].shapes), "%s", r.out);
	}
}
