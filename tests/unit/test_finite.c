/* test_finite.c: nnn_model_check_finite, the one check that reads tensor
 * data: exact codes, paths and offsets for NaN and infinities in each kind
 * of tensor, the per-tensor summary, and the vectorised fast pass against a
 * plain isfinite loop on large, unaligned tensors. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nnn/validate.h>

#include "builder.h"

typedef struct want {
	const char *path;
	uint64_t offset;
	const char *msg; /* a substring */
} want_t;

/* Decodes b, runs the check, and expects exactly the problems in w. */
static void expect(const bb_t *b, uint64_t total, const want_t *w, size_t n)
{
	nnn_model_t *m;
	nnn_diags_t d;
	uint64_t found = 99;
	char buf[1024];
	nnn_diags_init(&d);
	cr_assert_eq(nnn_model_decode(b->b, b->n, NULL, &m, NULL), NNN_OK);
	nnn_status_t st = nnn_model_check_finite(m, &found, &d);
	for (size_t i = 0; i < d.n; i++)
		cr_log_info("problem %zu: %s", i, nnn_diag_format(&d.v[i], buf, sizeof buf));
	cr_assert_eq(st, total ? NNN_E_RANGE : NNN_OK, "status %s", nnn_status_name(st));
	cr_assert_eq(found, total, "%llu non-finite, expected %llu", (unsigned long long)found,
	             (unsigned long long)total);
	cr_assert_eq(d.n, n, "%zu problems, expected %zu", d.n, n);
	for (size_t i = 0; i < n; i++) {
		cr_assert_eq(d.v[i].code, NNN_E_RANGE, "problem %zu: %s", i, nnn_status_name(d.v[i].code));
		cr_assert_str_eq(d.v[i].path, w[i].path, "problem %zu", i);
		cr_assert_eq(d.v[i].offset, w[i].offset, "problem %zu (%s): offset %llu, expected %llu", i, w[i].path,
		             (unsigned long long)d.v[i].offset, (unsigned long long)w[i].offset);
		cr_assert(strstr(d.v[i].msg, w[i].msg), "problem %zu: \"%s\" lacks \"%s\"", i, d.v[i].msg, w[i].msg);
	}
	nnn_model_free(m);
	nnn_diags_free(&d);
}

static void put_bits(bb_t *b, size_t at, uint32_t bits)
{
	for (int i = 0; i < 4; i++)
		b->b[at + (size_t)i] = (unsigned char)(bits >> (8 * i));
}

Test(finite, finite_model_passes)
{
	bb_t b = { 0 };
	bb_tiny(&b);
	expect(&b, 0, NULL, 0);
	bb_free(&b);
}

Test(finite, bias_and_weights_of_dense)
{
	bb_t b = { 0 };
	bb_tiny(&b);
	/* tiny: layers[0] bias data @47, weights data @76; layers[1] weights data @145 */
	put_bits(&b, 47 + 4 * 1, 0x7fc00000u);  /* NaN */
	put_bits(&b, 76 + 4 * 5, 0x7f800000u);  /* +inf */
	put_bits(&b, 145 + 4 * 0, 0xff800000u); /* -inf */
	want_t w[] = {
		{ "layers[0].bias.data[1]", 51, "found NaN (bits 0x7fc00000), expected a finite number" },
		{ "layers[0].weights.data[5]", 96, "found +inf (bits 0x7f800000)" },
		{ "layers[1].weights.data[0]", 145, "found -inf (bits 0xff800000)" },
	};
	expect(&b, 3, w, 3);
	bb_free(&b);
}

Test(finite, kernels_of_conv)
{
	static const int32_t k[] = { 3, 3 };
	bb_t b = { 0 };
	/* header "x": layer @21; bias [2] data field @36 (values @40); filters @48;
	 * kernels [2,3,3,1] data field @73, values @77 */
	bb_header(&b, "x", 20, 1);
	bb_conv(&b, 3, 2, 2, k, 1, 0, 4, (const int32_t[]){ 0, 0, 0, 0 });
	put_bits(&b, 77 + 4 * 17, 0xffc00001u); /* a negative NaN with a payload, the last value */
	put_bits(&b, 40 + 4 * 0, 0x7f800001u);  /* a signalling NaN */
	want_t w[] = {
		{ "layers[0].bias.data[0]", 40, "found NaN (bits 0x7f800001)" },
		{ "layers[0].kernels.data[17]", 145, "found NaN (bits 0xffc00001)" },
	};
	expect(&b, 2, w, 2);
	bb_free(&b);
}

Test(finite, extremes_that_are_finite)
{
	static const uint32_t ok[] = { 0x7f7fffffu, 0xff7fffffu, 0x00000001u, 0x80000000u, 0x00800000u, 0x7f000000u };
	bb_t b = { 0 };
	bb_tiny(&b);
	for (size_t i = 0; i < 6; i++)
		put_bits(&b, 76 + 4 * i, ok[i]); /* FLT_MAX, -FLT_MAX, denormal, -0, FLT_MIN, 2^127 */
	expect(&b, 0, NULL, 0);
	bb_free(&b);
}

Test(finite, many_in_one_tensor_are_counted)
{
	bb_t b = { 0 };
	bb_tiny(&b);
	static const uint32_t bad[] = { 0x7fc00000u, 0x7f800000u, 0xff800000u, 0x7fc00000u, 0x7f800000u, 0x7fffffffu };
	for (size_t i = 0; i < 6; i++)
		put_bits(&b, 76 + 4 * i, bad[i]);
	want_t w[] = {
		{ "layers[0].weights.data[0]", 76, "NaN" },
		{ "layers[0].weights.data[1]", 80, "+inf" },
		{ "layers[0].weights.data[2]", 84, "-inf" },
		{ "layers[0].weights.data[3]", 88, "NaN" },
		{ "layers[0].weights.data", 72, "6 of 6 values are not finite (3 NaN, 2 +inf, 1 -inf); the first 4" },
	};
	expect(&b, 6, w, 5);
	bb_free(&b);
}

/* ---- the fast pass against a plain loop ---- */

static uint32_t rng = 1;

static uint32_t next(void)
{
	rng = rng * 1664525u + 1013904223u;
	return rng >> 8;
}

/* A one-layer Dense model over `n` weights at `bytes` (any alignment),
 * bias 1 finite value; built by hand, so offsets are unknown. */
static void one_layer(nnn_model_t *m, nnn_layer_t *L, int32_t *dims, const unsigned char *bytes, int32_t n,
                      const float *bias)
{
	memset(m, 0, sizeof *m);
	memset(L, 0, sizeof *L);
	dims[0] = n;
	dims[1] = 1;
	L->id = NNN_LAYER_ID_DENSE;
	L->body.dense.neurons = 1;
	L->body.dense.weights.dims = (nnn_i32s_t){ dims, 2 };
	L->body.dense.weights.data = (nnn_f32s_t){ bytes, n };
	L->bias.dims = (nnn_i32s_t){ &dims[1], 1 };
	L->bias.data = nnn_f32s_view(bias, 1);
	m->layer_count = 1;
	m->layers = L;
}

/* n values at byte offset `skew` of a buffer, `nbad` of them non-finite at
 * random places (a few on block edges); the check must find exactly what a
 * plain isfinite loop finds, and list the first ones in order. */
static void against_plain(int32_t n, int skew, int nbad)
{
	unsigned char *buf = malloc(4 * (size_t)n + 8), *p = buf + skew;
	static const uint32_t kinds[] = { 0x7fc00000u, 0x7f800000u, 0xff800000u, 0xffffffffu, 0x7f800001u };
	float bias = 0.5f;
	for (int32_t i = 0; i < n; i++) {
		float v = (float)(next() % 2001) / 1000.0f - 1.0f;
		memcpy(p + 4 * (size_t)i, &v, 4);
	}
	for (int k = 0; k < nbad && n > 0; k++) {
		int32_t at = k == 0 ? n - 1 : k == 1 ? 1023 % n : k == 2 ? 1024 % n : (int32_t)(next() % (uint32_t)n);
		memcpy(p + 4 * (size_t)at, &kinds[next() % 5], 4);
	}
	uint64_t plain = 0;
	int32_t first[NNN_FINITE_SHOWN];
	for (int32_t i = 0; i < n; i++) {
		float v;
		memcpy(&v, p + 4 * (size_t)i, 4);
		if (!isfinite(v)) {
			if (plain < NNN_FINITE_SHOWN)
				first[plain] = i;
			plain++;
		}
	}

	nnn_model_t m;
	nnn_layer_t L;
	int32_t dims[2];
	nnn_diags_t d;
	uint64_t found;
	one_layer(&m, &L, dims, p, n, &bias);
	nnn_diags_init(&d);
	nnn_status_t st = nnn_model_check_finite(&m, &found, &d);
	cr_assert_eq(st, plain ? NNN_E_RANGE : NNN_OK, "n %d skew %d", (int)n, skew);
	cr_assert_eq(found, plain, "n %d skew %d: %llu, plain loop %llu", (int)n, skew, (unsigned long long)found,
	             (unsigned long long)plain);
	size_t listed = plain < NNN_FINITE_SHOWN ? (size_t)plain : NNN_FINITE_SHOWN;
	cr_assert_eq(d.n, listed + (plain > NNN_FINITE_SHOWN), "n %d: %zu problems", (int)n, d.n);
	for (size_t i = 0; i < listed; i++) {
		char path[64];
		snprintf(path, sizeof path, "layers[0].weights.data[%d]", (int)first[i]);
		cr_assert_str_eq(d.v[i].path, path);
		cr_assert_eq(d.v[i].offset, NNN_NO_OFFSET); /* built by hand: no file offsets */
	}
	nnn_diags_free(&d);
	free(buf);
}

Test(finite, fast_pass_equals_plain_loop)
{
	static const int32_t sizes[] = { 0, 1, 7, 1023, 1024, 1025, 2048, 3 * 1024 + 7 };
	for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
		for (int skew = 0; skew < 4; skew++)
			for (int nbad = 0; nbad < 8; nbad += 3)
				against_plain(sizes[s], skew, nbad);
}

Test(finite, large_tensor)
{
	against_plain((3 << 20) + 5, 1, 0);
	against_plain((3 << 20) + 5, 3, 1);
	against_plain((3 << 20) + 5, 2, 40);
}
