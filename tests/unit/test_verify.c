/* test_verify.c: two models run on the same seeded inputs and their
 * largest errors measured (nnn/verify.h), the core of nnnkit convert
 * --verify: figures worked by hand for models that differ by one value,
 * and the input shape chosen when the layers leave axes open. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include <nnn/model.h>
#include <nnn/verify.h>

#include "builder.h"
#include "ctx.h"

TestSuite(verify);

/* The tiny model (builder.h: Dense 3 -> 2, Leaky ReLU 0.1, Dense 2 -> 1). */
static nnn_model_t *tiny(bb_t *b, float w10, float w11, float bias1)
{
	nnn_model_t *m = NULL;
	bb_tiny(b);
	bb_put_f32(b, 145, w10);
	bb_put_f32(b, 149, w11);
	bb_put_f32(b, 120, bias1);
	cr_assert_eq(nnn_model_decode(b->b, b->n, NULL, &m, NULL), NNN_OK);
	return m;
}

static void check(const nnn_model_t *a, const nnn_model_t *b, nnn_verify_result_t *r)
{
	nnn_diags_t d;
	nnn_shape_t in;
	bool opened = true;
	nnn_diags_init(&d);
	cr_assert_eq(nnn_verify_input(a, NULL, NNN_VERIFY_ROWS, &in, &opened, &d), NNN_OK);
	cr_assert(!opened);
	cr_assert_eq(in.rank, 2);
	cr_assert_eq(in.dims[0], 4);
	cr_assert_eq(in.dims[1], 3);
	nnn_ctx_t *ctx = t_ctx_with("plugins/builtin.so");
	nnn_status_t st = nnn_verify(ctx, a, b, &in, NULL, r, &d);
	nnn_ctx_free(ctx);
	cr_assert_eq(st, NNN_OK, "%s", d.n ? d.v[0].msg : "");
	cr_assert_eq(r->output.rank, 2);
	cr_assert_eq(r->output.dims[0], 4);
	cr_assert_eq(r->output.dims[1], 1);
	nnn_diags_free(&d);
}

/* The same model twice: 0 and 0, found nowhere. */
Test(verify, the_same_model_differs_by_nothing)
{
	bb_t ba = { 0 }, bb = { 0 };
	nnn_model_t *a = tiny(&ba, 0.5f, -0.25f, -1), *b = tiny(&bb, 0.5f, -0.25f, -1);
	nnn_verify_result_t r;
	check(a, b, &r);
	cr_assert_eq(r.max_abs, 0);
	cr_assert_eq(r.max_rel, 0);
	cr_assert_eq(r.abs_row + r.abs_index + r.rel_row + r.rel_index, 0);
	nnn_model_free(a), nnn_model_free(b), bb_free(&ba), bb_free(&bb);
}

/* Last layer's weights 0: every output is its bias, -1 against 1.5, so
 * |1.5 - -1| = 2.5 and 2.5 / (1 + |-1|) = 1.25, first at row 0, output 0. */
Test(verify, one_bias_apart_by_hand)
{
	bb_t ba = { 0 }, bb = { 0 };
	nnn_model_t *a = tiny(&ba, 0, 0, -1), *b = tiny(&bb, 0, 0, 1.5f);
	nnn_verify_result_t r;
	check(a, b, &r);
	cr_assert_eq(r.max_abs, 2.5);
	cr_assert_eq(r.max_rel, 1.25);
	cr_assert_eq(r.abs_row, 0);
	cr_assert_eq(r.abs_index, 0);
	nnn_model_free(a), nnn_model_free(b), bb_free(&ba), bb_free(&bb);
}

/* The first layer worked out in double on the seeded inputs: hidden
 * h = leaky(x W + c) with tiny's values (0.5 i - 1: bias -1, -0.5; W
 * [[-1, -0.5], [0, 0.5], [1, 1.5]]); a's last layer reads h0 only, b's h1
 * only (the one weight that differs, twice), bias 0: the error is
 * |h1 - h0|, its largest over the 4 rows. */
Test(verify, one_weight_apart_by_hand)
{
	bb_t ba = { 0 }, bb = { 0 };
	nnn_model_t *a = tiny(&ba, 1, 0, 0), *b = tiny(&bb, 0, 1, 0);
	float x[4 * 3];
	double want = 0, wrel = 0;
	int64_t row = -1;
	nnn_verify_inputs(0, x, 12);
	for (int i = 0; i < 4; i++) {
		const float *v = x + 3 * i;
		double h0 = -1.0 * v[0] + 0.0 * v[1] + 1.0 * v[2] - 1, h1 = -0.5 * v[0] + 0.5 * v[1] + 1.5 * v[2] - 0.5;
		h0 = h0 < 0 ? 0.1 * h0 : h0, h1 = h1 < 0 ? 0.1 * h1 : h1;
		if (fabs(h1 - h0) > want)
			want = fabs(h1 - h0), row = i;
		wrel = fmax(wrel, fabs(h1 - h0) / (1 + fabs(h0)));
	}
	nnn_verify_result_t r;
	check(a, b, &r);
	cr_assert(want > 0.1, "the inputs separate the two: %g", want);
	cr_assert(fabs(r.max_abs - want) < 1e-6, "max abs %.9g, by hand %.9g", r.max_abs, want);
	cr_assert(fabs(r.max_rel - wrel) < 1e-6, "max rel %.9g, by hand %.9g", r.max_rel, wrel);
	cr_assert_eq(r.abs_row, row);
	nnn_model_free(a), nnn_model_free(b), bb_free(&ba), bb_free(&bb);
}

/* The inputs: in [-1, 1], the same for a seed, another for another seed. */
Test(verify, seeded_inputs)
{
	float a[64], b[64], c[64];
	nnn_verify_inputs(0, a, 64);
	nnn_verify_inputs(NNN_VERIFY_SEED, b, 64);
	nnn_verify_inputs(7, c, 64);
	cr_assert(!memcmp(a, b, sizeof a));
	cr_assert(memcmp(a, c, sizeof a));
	for (int i = 0; i < 64; i++)
		cr_assert(a[i] >= -1 && a[i] <= 1 && c[i] >= -1 && c[i] <= 1, "%d: %g %g", i, a[i], c[i]);
}

/* A Conv of kernel 3x2 leaves the spatial sizes open: the smallest input
 * it takes is 3x2. A 1x1 Conv then a Dense of 67 inputs takes only 1x67
 * and 67x1, past the sizes tried (67 is prime): said, naming the shape the
 * layers fix. A given shape wins. */
Test(verify, open_axes_take_the_smallest_size)
{
	bb_t b = { 0 }, c = { 0 };
	int32_t k[2] = { 3, 2 }, one[2] = { 1, 1 }, pads[4] = { 0 };
	nnn_model_t *m = NULL, *n = NULL;
	nnn_shape_t in, given = { .rank = 4, .dims = { 1, 9, 9, 1 } };
	bool opened = false;
	nnn_diags_t d;
	nnn_diags_init(&d);
	bb_header(&b, "conv", 2 + 2 * 6, 1);
	bb_conv(&b, 0, 2, 2, k, 1, NNN_PADDING_TYPE_VALID, 4, pads);
	cr_assert_eq(nnn_model_decode(b.b, b.n, NULL, &m, NULL), NNN_OK);
	cr_assert_eq(nnn_verify_input(m, NULL, 4, &in, &opened, &d), NNN_OK, "%s", d.n ? d.v[0].msg : "");
	cr_assert(opened);
	cr_assert(in.rank == 4 && in.dims[0] == 4 && in.dims[1] == 3 && in.dims[2] == 2 && in.dims[3] == 1);
	cr_assert_eq(nnn_verify_input(m, &given, 4, &in, &opened, &d), NNN_OK);
	cr_assert(!opened && in.dims[0] == 4 && in.dims[1] == 9);
	bb_header(&c, "nothing fits", 1 + 1 + 67 + 1, 2);
	bb_conv(&c, 0, 1, 2, one, 1, NNN_PADDING_TYPE_VALID, 4, pads);
	bb_dense(&c, 0, 67, 1, 1);
	cr_assert_eq(nnn_model_decode(c.b, c.n, NULL, &n, NULL), NNN_OK);
	cr_assert_eq(nnn_verify_input(n, NULL, 4, &in, &opened, &d), NNN_E_INPUT_SHAPE);
	const char *msg = d.v[d.n - 1].msg;
	cr_assert(strstr(msg, "fix the input as [?, ?, ?, 1], and the model takes no input of that form with sizes up to "
	                      "64 on its open axes (4096 tried)"),
	          "%s", msg);
	nnn_model_free(m), nnn_model_free(n), bb_free(&b), bb_free(&c), nnn_diags_free(&d);
}
