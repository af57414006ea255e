/* test_validate.c: every semantic rule of the schema, with exact codes, paths
 * and offsets, every problem reported, and shape inference checked against
 * hand-computed shapes. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include <nnn/validate.h>

#include "builder.h"

typedef struct want {
	nnn_status_t code;
	const char *path;
	uint64_t offset;
} want_t;

/* Validates b's bytes (decode keeping going, then every rule) and expects
 * exactly the problems in w, in order. */
static void expect(const bb_t *b, const nnn_shape_t *in, const want_t *w, size_t n)
{
	nnn_diags_t d;
	char buf[1024];
	nnn_diags_init(&d);
	nnn_status_t st = nnn_validate_bytes(b->b, b->n, NULL, in, &d);
	for (size_t i = 0; i < d.n; i++)
		cr_log_info("problem %zu: %s", i, nnn_diag_format(&d.v[i], buf, sizeof buf));
	cr_assert_eq(d.n, n, "%zu problems, expected %zu", d.n, n);
	cr_assert_eq(st, n ? w[0].code : NNN_OK, "status %s", nnn_status_name(st));
	for (size_t i = 0; i < n; i++) {
		cr_assert_eq(d.v[i].code, w[i].code, "problem %zu: %s, expected %s", i, nnn_status_name(d.v[i].code),
		             nnn_status_name(w[i].code));
		cr_assert_str_eq(d.v[i].path, w[i].path, "problem %zu", i);
		cr_assert_eq(d.v[i].offset, w[i].offset, "problem %zu (%s): offset %llu, expected %llu", i, w[i].path,
		             (unsigned long long)d.v[i].offset, (unsigned long long)w[i].offset);
	}
	nnn_diags_free(&d);
}

static nnn_shape_t shape(int32_t rank, const int64_t *dims)
{
	nnn_shape_t s = { .rank = rank };
	memcpy(s.dims, dims, (size_t)rank * sizeof *dims);
	return s;
}

Test(validate, tiny_is_valid)
{
	bb_t b = { 0 };
	bb_tiny(&b);
	expect(&b, NULL, NULL, 0);
	bb_free(&b);
}

Test(validate, param_count)
{
	bb_t b = { 0 };
	bb_tiny(&b);
	bb_put_i32(&b, 12, 12);
	want_t w[] = { { NNN_E_PARAM_COUNT, "param_count", 12 } };
	expect(&b, NULL, w, 1);
	bb_free(&b);
}

Test(validate, dense_shapes_all_reported)
{
	bb_t b = { 0 };
	bb_tiny(&b);
	bb_put_i32(&b, 55, 3); /* neurons 3: weights [3,2] and bias [2] both disagree */
	want_t w[] = {
		{ NNN_E_SHAPE, "layers[0].weights.dims[1]", 67 },
		{ NNN_E_SHAPE, "layers[0].bias.dims[0]", 38 },
		/* layer 0 is broken, so the chain is not checked across it */
	};
	expect(&b, NULL, w, 2);
	bb_free(&b);
}

Test(validate, neurons_at_least_one)
{
	bb_t b = { 0 };
	bb_header(&b, "", 0, 1);
	bb_dense(&b, 0, 3, 0, 0);
	/* header 20; id, act, dropout 6; bias dims{0}: count @26, dim @30, rg @34, data @35; neurons @39 */
	want_t w[] = { { NNN_E_RANGE, "layers[0].neurons", 39 } };
	expect(&b, NULL, w, 1);
	bb_free(&b);
}

Test(validate, dropout_and_tau)
{
	bb_t b = { 0 };
	bb_tiny(&b);
	bb_put_f32(&b, 30, 1.0f);
	bb_put_f32(&b, 26, INFINITY);
	bb_put_f32(&b, 103, NAN);
	want_t w[] = {
		{ NNN_E_RANGE, "layers[0].activation.tau", 26 },
		{ NNN_E_RANGE, "layers[0].dropout", 30 },
		{ NNN_E_RANGE, "layers[1].dropout", 103 },
	};
	expect(&b, NULL, w, 3);
	bb_put_f32(&b, 30, 0.999f);
	bb_put_f32(&b, 26, -3.0f);
	bb_put_f32(&b, 103, 0.0f);
	expect(&b, NULL, NULL, 0);
	bb_free(&b);
}

Test(validate, dense_chain)
{
	bb_t b = { 0 };
	bb_header(&b, "", 8 + 4, 2);
	bb_dense(&b, 0, 3, 2, 0);
	size_t l1 = b.n;
	bb_dense(&b, 0, 3, 1, 0); /* expects 3 inputs, gets 2 */
	/* layer 1: id, act, dropout 6; bias 4+4+1+4+4 = 17; neurons 4; weights dims count, then dims[0] */
	want_t w[] = { { NNN_E_CHAIN, "layers[1].weights.dims[0]", l1 + 6 + 17 + 4 + 4 } };
	expect(&b, NULL, w, 1);
	bb_free(&b);
}

Test(validate, input_shape_inference_dense)
{
	bb_t b = { 0 };
	nnn_model_t *m;
	nnn_shape_t out[2];
	bb_tiny(&b);
	nnn_shape_t in = shape(2, (int64_t[]){ 5, 3 });
	expect(&b, &in, NULL, 0);
	cr_assert_eq(nnn_model_decode(b.b, b.n, NULL, &m, NULL), NNN_OK);
	cr_assert_eq(nnn_model_validate(m, &in, out, NULL), NNN_OK);
	cr_assert_eq(out[0].rank, 2);
	cr_assert_eq(out[0].dims[1], 2);
	cr_assert_eq(out[1].dims[0], 5);
	cr_assert_eq(out[1].dims[1], 1);
	/* Without flatten the product contracts the last axis: [5, 7, 3] -> [5, 7, 1]. */
	in = shape(3, (int64_t[]){ 5, 7, 3 });
	cr_assert_eq(nnn_model_validate(m, &in, out, NULL), NNN_OK);
	cr_assert_eq(out[1].rank, 3);
	cr_assert_eq(out[1].dims[1], 7);
	cr_assert_eq(out[1].dims[2], 1);
	nnn_model_free(m);
	in = shape(2, (int64_t[]){ 5, 4 });
	want_t w[] = { { NNN_E_INPUT_SHAPE, "layers[0].weights.dims[0]", 63 } };
	expect(&b, &in, w, 1);
	bb_free(&b);
}

/* Conv 2-D k=3x4 on 1 channel (Same), Conv 1x1 -> 3 filters, Dense flatten. */
static size_t conv_net(bb_t *b, int32_t pad1_after, int32_t c2, int32_t dense_in, size_t *at2, size_t *at3)
{
	int32_t k1[2] = { 3, 4 }, k2[2] = { 1, 1 };
	int32_t p1[4] = { 1, 1, 1, pad1_after }, p2[4] = { 0, 0, 0, 0 };
	uint64_t params = (2 + 2 * 12) + (3 + 3 * c2) + (4 + 4 * (uint64_t)dense_in);
	bb_header(b, "conv", params, 3);
	size_t at1 = b->n;
	bb_conv(b, 3, 2, 2, k1, 1, 1, 4, p1);
	*at2 = b->n;
	bb_conv(b, 4, 3, 2, k2, c2, 0, 4, p2);
	*at3 = b->n;
	bb_dense(b, 5, dense_in, 4, 1);
	return at1;
}

Test(validate, conv_same_padding_and_flatten)
{
	bb_t b = { 0 };
	size_t at2, at3;
	nnn_model_t *m;
	nnn_shape_t out[3];
	conv_net(&b, 2, 2, 6 * 5 * 3, &at2, &at3);
	nnn_shape_t in = shape(4, (int64_t[]){ 2, 6, 5, 1 });
	expect(&b, &in, NULL, 0);
	cr_assert_eq(nnn_model_decode(b.b, b.n, NULL, &m, NULL), NNN_OK);
	cr_assert_eq(nnn_model_validate(m, &in, out, NULL), NNN_OK);
	/* Same keeps 6x5; 1x1 keeps it; flatten gives 90 features. */
	int64_t want0[] = { 2, 6, 5, 2 }, want1[] = { 2, 6, 5, 3 }, want2[] = { 2, 4 };
	cr_assert_eq(out[0].rank, 4);
	cr_assert_arr_eq(out[0].dims, want0, sizeof want0);
	cr_assert_arr_eq(out[1].dims, want1, sizeof want1);
	cr_assert_eq(out[2].rank, 2);
	cr_assert_arr_eq(out[2].dims, want2, sizeof want2);
	nnn_model_free(m);
	bb_free(&b);
}

Test(validate, conv_padding_rules)
{
	bb_t b = { 0 };
	size_t at2, at3;
	size_t at1 = conv_net(&b, 1, 2, 90, &at2, &at3);
	/* layer 0: id, act, dropout 6; bias 4+4+1+4+8 = 21; filters 4; kernels 4+16+1+4+96 = 121;
	 * padding type 4; padding dims count, then [1, 1, 1, 1]: after of axis 2 (k=4) must be 2. */
	size_t pads = at1 + 6 + 21 + 4 + 121 + 4;
	want_t w[] = { { NNN_E_PADDING, "layers[0].padding_dims[3]", pads + 4 + 12 } };
	expect(&b, NULL, w, 1);
	bb_free(&b);
}

Test(validate, conv_channels_and_flatten_divisibility)
{
	bb_t b = { 0 };
	size_t at2, at3;
	conv_net(&b, 2, 5, 91, &at2, &at3);
	/* layer 1: id, act+tau, dropout 10; bias 4+4+1+4+12 = 25; filters 4; kernels dims count, then [3,1,1,5] */
	/* layer 2: id, act, dropout 6; bias 4+4+1+4+16 = 29; neurons 4; weights dims count, then [91, 4] */
	want_t w[] = {
		{ NNN_E_CHAIN, "layers[1].kernels.dims[3]", at2 + 10 + 25 + 4 + 4 + 12 },
		{ NNN_E_CHAIN, "layers[2].weights.dims[0]", at3 + 6 + 29 + 4 + 4 },
	};
	expect(&b, NULL, w, 2);
	bb_free(&b);
}

Test(validate, conv_exact_chain_with_input)
{
	bb_t b = { 0 };
	size_t at2, at3;
	conv_net(&b, 2, 2, 96, &at2, &at3); /* 96 is divisible by 3 but the map flattens to 90 */
	expect(&b, NULL, NULL, 0);
	nnn_shape_t in = shape(4, (int64_t[]){ 1, 6, 5, 1 });
	want_t w[] = { { NNN_E_CHAIN, "layers[2].weights.dims[0]", at3 + 6 + 29 + 4 + 4 } };
	expect(&b, &in, w, 1);
	/* Wrong rank for a 2-D convolution. */
	nnn_shape_t in3 = shape(3, (int64_t[]){ 1, 6, 1 });
	/* the rank comes from the kernels' dims: the window of the layer's io */
	want_t w3[] = { { NNN_E_INPUT_SHAPE, "layers[0].kernels.dims", 0 } };
	nnn_diags_t d;
	nnn_diags_init(&d);
	cr_assert_eq(nnn_validate_bytes(b.b, b.n, NULL, &in3, &d), NNN_E_INPUT_SHAPE);
	cr_assert_str_eq(d.v[0].path, w3[0].path);
	nnn_diags_free(&d);
	bb_free(&b);
}

Test(validate, conv_kernel_rank_and_sizes)
{
	int32_t k0[1] = { 0 }, pads[2] = { 0, 0 };
	bb_t b = { 0 };
	bb_header(&b, "", 1, 1);
	size_t at = b.n;
	bb_conv(&b, 0, 1, 1, k0, 1, 0, 2, pads); /* kernels [1, 0, 1]: k = 0 */
	/* id, act, dropout 6; bias 4+4+1+4+4 = 17; filters 4; kernels dims count, then dims[1] */
	want_t w[] = { { NNN_E_SHAPE, "layers[0].kernels.dims[1]", at + 6 + 17 + 4 + 4 + 4 } };
	expect(&b, NULL, w, 1);
	bb_free(&b);
}

Test(validate, conv_1d_and_3d_inference)
{
	int32_t k1[1] = { 3 }, p1[2] = { 0, 0 };
	int32_t k3[3] = { 2, 3, 4 }, p3[6] = { 0, 1, 1, 1, 1, 2 };
	nnn_shape_t out[1];
	nnn_model_t *m;
	bb_t b = { 0 };
	bb_header(&b, "", 2 + 2 * 3 * 2, 1);
	bb_conv(&b, 0, 2, 1, k1, 2, 0, 2, p1);
	cr_assert_eq(nnn_model_decode(b.b, b.n, NULL, &m, NULL), NNN_OK);
	nnn_shape_t in = shape(3, (int64_t[]){ 4, 10, 2 });
	cr_assert_eq(nnn_model_validate(m, &in, out, NULL), NNN_OK);
	cr_assert_eq(out[0].rank, 3);
	cr_assert_eq(out[0].dims[1], 8);
	cr_assert_eq(out[0].dims[2], 2);
	nnn_model_free(m);
	bb_free(&b);

	bb_header(&b, "", 5 + 5 * 24 * 3, 1);
	bb_conv(&b, 0, 5, 3, k3, 3, 1, 6, p3);
	cr_assert_eq(nnn_model_decode(b.b, b.n, NULL, &m, NULL), NNN_OK);
	in = shape(5, (int64_t[]){ 1, 4, 5, 6, 3 });
	cr_assert_eq(nnn_model_validate(m, &in, out, NULL), NNN_OK);
	int64_t want[] = { 1, 4, 5, 6, 5 };
	cr_assert_arr_eq(out[0].dims, want, sizeof want);
	nnn_model_free(m);
	bb_free(&b);
}

Test(validate, structural_and_semantic_problems_together)
{
	bb_t b = { 0 };
	bb_tiny(&b);
	b.b[42] = 2;                /* structural, soft */
	bb_put_i32(&b, 12, 99);     /* param count */
	bb_put_f32(&b, 103, -0.5f); /* dropout */
	want_t w[] = {
		{ NNN_E_BOOL, "layers[0].bias.requires_grad", 42 },
		{ NNN_E_RANGE, "layers[1].dropout", 103 },
		{ NNN_E_PARAM_COUNT, "param_count", 12 },
	};
	expect(&b, NULL, w, 3);
	bb_free(&b);
}

Test(validate, shape_parse)
{
	nnn_shape_t s;
	nnn_diags_t d;
	char buf[64];
	nnn_diags_init(&d);
	cr_assert_eq(nnn_shape_parse("1,28,28,1", &s, &d), NNN_OK);
	cr_assert_str_eq(nnn_shape_format(&s, buf, sizeof buf), "[1, 28, 28, 1]");
	cr_assert_eq(nnn_shape_parse("1,0", &s, &d), NNN_E_USAGE);
	cr_assert_eq(nnn_shape_parse("10", &s, &d), NNN_E_USAGE);
	cr_assert_eq(nnn_shape_parse("1,x", &s, &d), NNN_E_USAGE);
	cr_assert_eq(nnn_shape_parse("", &s, &d), NNN_E_USAGE);
	nnn_diags_free(&d);
}
