/* test_etypes.c: the header-only element-type helpers of nnn/types.h that
 * plugins use too: float16 and bfloat16 to float and back (every bit
 * pattern, against the definitions computed in double), rounding ties to
 * even, the range limits, the NaN payload rules, and the kind and width of
 * every primitive; and the codec's readers and writers by width (values,
 * bytes written back, counts checked before anything is taken). */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <string.h>

#include <nnn/types.h>

#include "arena.h"
#include "cursor.h"
#include "sink.h"

static uint32_t bits_of(float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof u);
	return u;
}

static float float_of(uint32_t u)
{
	float f;
	memcpy(&f, &u, sizeof f);
	return f;
}

/* A binary16's value from its definition: sign * 2^(e-15) * (1 + m/1024),
 * subnormal sign * 2^-14 * (m/1024); NaN for an all-ones exponent with m. */
static double f16_value(uint16_t h)
{
	int s = h >> 15, e = h >> 10 & 0x1f, m = h & 0x3ff;
	double v = e == 0 ? ldexp(m / 1024.0, -14) : e == 31 ? (m ? NAN : INFINITY) : ldexp(1 + m / 1024.0, e - 15);
	return s ? -v : v;
}

/* A bfloat16's value from its definition: sign * 2^(e-127) * (1 + m/128). */
static double bf16_value(uint16_t b)
{
	int s = b >> 15, e = b >> 7 & 0xff, m = b & 0x7f;
	double v = e == 0 ? ldexp(m / 128.0, -126) : e == 255 ? (m ? NAN : INFINITY) : ldexp(1 + m / 128.0, e - 127);
	return s ? -v : v;
}

Test(etypes, f16_every_pattern_to_float_and_back)
{
	for (uint32_t i = 0; i < 65536; i++) {
		uint16_t h = (uint16_t)i;
		float f = nnn_f16_to_f32(h);
		double want = f16_value(h);
		if (isnan(want)) {
			/* NaN: sign and the 10 payload bits on top of the float's payload */
			cr_assert(isnan(f), "0x%04x", h);
			cr_assert_eq(bits_of(f) >> 31, (uint32_t)h >> 15, "0x%04x: sign", h);
			cr_assert_eq(bits_of(f) >> 13 & 0x3ff, (uint32_t)h & 0x3ff, "0x%04x: payload", h);
			cr_assert_eq(bits_of(f) & 0x1fff, 0u, "0x%04x: low payload bits", h);
		} else {
			cr_assert_eq((double)f, want, "0x%04x: %.17g, expected %.17g", h, (double)f, want);
			cr_assert_eq(!!signbit(f), !!signbit(want), "0x%04x: sign", h);
		}
		cr_assert_eq(nnn_f32_to_f16(f), h, "0x%04x: back as 0x%04x", h, nnn_f32_to_f16(f));
	}
}

Test(etypes, bf16_every_pattern_to_float_and_back)
{
	for (uint32_t i = 0; i < 65536; i++) {
		uint16_t b = (uint16_t)i;
		float f = nnn_bf16_to_f32(b);
		double want = bf16_value(b);
		if (isnan(want))
			cr_assert(isnan(f) && bits_of(f) == (uint32_t)b << 16, "0x%04x", b);
		else
			cr_assert(((double)f == want) && (!!signbit(f) == !!signbit(want)), "0x%04x", b);
		cr_assert_eq(nnn_f32_to_bf16(f), b, "0x%04x: back as 0x%04x", b, nnn_f32_to_bf16(f));
	}
}

/* Between two neighbouring finite binary16 values a < b (both positive):
 * below the midpoint gives a, above gives b, the midpoint the even one. */
Test(etypes, f16_rounds_to_nearest_ties_to_even)
{
	for (uint32_t h = 0; h < 0x7bff; h++) {
		double a = f16_value((uint16_t)h), b = f16_value((uint16_t)(h + 1)), mid = (a + b) / 2;
		float m = (float)mid; /* exact: 12 significant bits */
		cr_assert_eq((double)m, mid);
		uint16_t even = (h & 1) ? (uint16_t)(h + 1) : (uint16_t)h;
		cr_assert_eq(nnn_f32_to_f16(m), even, "midpoint of 0x%04x and 0x%04x", h, h + 1);
		cr_assert_eq(nnn_f32_to_f16(nextafterf(m, 0)), h, "just below the midpoint after 0x%04x", h);
		cr_assert_eq(nnn_f32_to_f16(nextafterf(m, INFINITY)), h + 1, "just above the midpoint after 0x%04x", h);
		cr_assert_eq(nnn_f32_to_f16(-m), 0x8000 | even, "negative midpoint after 0x%04x", h);
	}
	/* the top: half a step past 65504 is infinity (ties to even), below it 65504 */
	cr_assert_eq(nnn_f32_to_f16(65520.0f), 0x7c00);
	cr_assert_eq(nnn_f32_to_f16(nextafterf(65520.0f, 0)), 0x7bff);
	cr_assert_eq(nnn_f32_to_f16(-1e30f), 0xfc00);
	/* the bottom: half the smallest subnormal is 0 (even), just above it that subnormal */
	cr_assert_eq(nnn_f32_to_f16(ldexpf(1, -25)), 0x0000);
	cr_assert_eq(nnn_f32_to_f16(nextafterf(ldexpf(1, -25), 1)), 0x0001);
	cr_assert_eq(nnn_f32_to_f16(float_of(1)), 0x0000); /* the smallest float subnormal */
	cr_assert_eq(nnn_f32_to_f16(-0.0f), 0x8000);
}

Test(etypes, bf16_rounds_to_nearest_ties_to_even)
{
	for (uint32_t b = 0; b < 0x7f7f; b += 7) {
		double lo = bf16_value((uint16_t)b), hi = bf16_value((uint16_t)(b + 1)), mid = (lo + hi) / 2;
		float m = (float)mid;
		uint16_t even = (b & 1) ? (uint16_t)(b + 1) : (uint16_t)b;
		cr_assert_eq(nnn_f32_to_bf16(m), even, "midpoint after 0x%04x", b);
		cr_assert_eq(nnn_f32_to_bf16(nextafterf(m, 0)), b);
		cr_assert_eq(nnn_f32_to_bf16(nextafterf(m, INFINITY)), b + 1);
	}
	cr_assert_eq(nnn_f32_to_bf16(FLT_MAX), 0x7f80); /* past the largest bfloat16: infinity */
}

/* A float NaN keeps its sign and top payload bits; when none of those is
 * set it becomes the quiet NaN of its sign, never an infinity. */
Test(etypes, nan_payload_rules)
{
	cr_assert_eq(nnn_f32_to_f16(float_of(0x7fc00000u)), 0x7e00);
	cr_assert_eq(nnn_f32_to_f16(float_of(0x7f800001u)), 0x7e00);
	cr_assert_eq(nnn_f32_to_f16(float_of(0xff800001u)), 0xfe00);
	cr_assert_eq(nnn_f32_to_f16(float_of(0x7fa02000u)), 0x7d01);
	cr_assert_eq(nnn_f32_to_bf16(float_of(0x7f800001u)), 0x7fc0);
	cr_assert_eq(nnn_f32_to_bf16(float_of(0xffa10000u)), 0xffa1);
}

Test(etypes, numbers_by_kind_and_width)
{
	unsigned char b[8] = { 0xff, 0xfe, 0x00, 0x00, 0x00, 0x00, 0xf0, 0x3f };
	cr_assert_eq(nnn_num_double(NNN_EK_INT, 1, nnn_le_bits(b, 1)), -1.0);
	cr_assert_eq(nnn_num_double(NNN_EK_INT, 2, nnn_le_bits(b, 2)), -257.0);
	cr_assert_eq(nnn_num_double(NNN_EK_UINT, 2, nnn_le_bits(b, 2)), 65279.0);
	cr_assert_eq(nnn_num_double(NNN_EK_FLOAT, 8, nnn_le_bits(b, 8)), 1.0 + ldexp(0xfeff, -52));
	cr_assert_eq(nnn_num_double(NNN_EK_FLOAT, 2, 0x3c00), 1.0);
	cr_assert_eq(nnn_num_double(NNN_EK_BFLOAT, 2, 0xc000), -2.0);
	nnn_elems_t a = { b, 4 };
	cr_assert_eq(nnn_elems_get(a, NNN_EK_INT, 2, 0), -257.0);
	cr_assert_eq(nnn_elems_get(a, NNN_EK_UINT, 2, 3), 0x3ff0);
	/* the named primitives keep their values and say their kind and width */
	cr_assert_eq(nnn_prim_ekind(NNN_PRIM_F32_ARRAY), NNN_EK_FLOAT);
	cr_assert_eq(nnn_prim_ewidth(NNN_PRIM_F32_ARRAY), 4);
	cr_assert_eq(nnn_prim_ekind(NNN_PRIM_U64), NNN_EK_UINT);
	cr_assert_eq(nnn_prim_ewidth(NNN_PRIM_U8), 1);
	cr_assert_eq(nnn_prim_ekind(NNN_PRIM_STRING), NNN_EK_NONE);
	cr_assert(!nnn_prim_is_array(NNN_PRIM_STRING) && nnn_prim_is_array(NNN_PRIM_I32_ARRAY));
	nnn_prim_t f16s = NNN_PRIM_NUMS_OF(NNN_EK_FLOAT, 2), i8 = NNN_PRIM_NUM_OF(NNN_EK_INT, 1);
	cr_assert(nnn_prim_is_array(f16s) && !nnn_prim_is_array(i8));
	cr_assert_eq(nnn_prim_ekind(f16s), NNN_EK_FLOAT);
	cr_assert_eq(nnn_prim_ewidth(f16s), 2);
	cr_assert_eq(nnn_prim_ekind(i8), NNN_EK_INT);
	cr_assert_eq(nnn_prim_ewidth(i8), 1);
	cr_assert_eq(nnn_prim_ewidth(NNN_PRIM_NUMS_OF(NNN_EK_FLOAT, 8)), 8);
}

/* ---- the codec's readers and writers by width (cursor.c, encode.c) ---- */

typedef struct membuf {
	nnn_sink_t sink;
	unsigned char b[64];
	size_t n;
} membuf_t;

static nnn_status_t mem_write(nnn_sink_t *self, const void *p, size_t n)
{
	membuf_t *m = (membuf_t *)self;
	cr_assert_leq(m->n + n, sizeof m->b);
	memcpy(m->b + m->n, p, n);
	m->n += n;
	return NNN_OK;
}

static const unsigned char FILE_BYTES[] = {
	0xfe, 0xff,                                     /* int16 -2 */
	0x03, 0x00, 0x00, 0x00, 0x80, 0x7f, 0x01,       /* int8 array: -128, 127, 1 */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xf8, 0x7f, /* float64 NaN 0x7ff8... */
	0x02, 0x00, 0x00, 0x00, 0x80, 0x3f, 0xc0, 0x7f, /* bfloat16 array: 1.0, NaN */
};

Test(etypes, codec_reads_and_writes_by_width)
{
	nnn_arena_t arena = { 0 };
	nnn_diags_t d;
	nnn_diags_init(&d);
	nnn_cur_t c = { .buf = FILE_BYTES, .len = sizeof FILE_BYTES, .arena = &arena, .diags = &d };
	int16_t i16;
	double f64;
	nnn_elems_t i8s, bf16s;
	uint64_t at[4];
	cr_assert_eq(nnn_rd_num(&c, "a", "", NNN_EK_INT, 2, &i16, &at[0]), NNN_OK);
	cr_assert_eq(nnn_rd_nums(&c, "b", "", NNN_EK_INT, 1, &i8s, &at[1]), NNN_OK);
	cr_assert_eq(nnn_rd_num(&c, "c", "", NNN_EK_FLOAT, 8, &f64, &at[2]), NNN_OK);
	cr_assert_eq(nnn_rd_nums(&c, "d", "", NNN_EK_BFLOAT, 2, &bf16s, &at[3]), NNN_OK);
	cr_assert_eq(c.pos, sizeof FILE_BYTES);
	cr_assert_eq(i16, -2);
	cr_assert_eq(i8s.n, 3);
	cr_assert_eq(nnn_elems_get(i8s, NNN_EK_INT, 1, 0), -128.0);
	cr_assert_eq(nnn_elems_get(i8s, NNN_EK_INT, 1, 1), 127.0);
	cr_assert(isnan(f64));
	cr_assert_eq(bf16s.n, 2);
	cr_assert_eq(nnn_elems_get(bf16s, NNN_EK_BFLOAT, 2, 0), 1.0);
	cr_assert_eq(at[2], 9u);
	/* written back: the same bytes */
	membuf_t m = { .sink = { .write = mem_write, .diags = &d } };
	cr_assert_eq(nnn_wr_num(&m.sink, 2, &i16), NNN_OK);
	cr_assert_eq(nnn_wr_nums(&m.sink, 1, i8s), NNN_OK);
	cr_assert_eq(nnn_wr_num(&m.sink, 8, &f64), NNN_OK);
	cr_assert_eq(nnn_wr_nums(&m.sink, 2, bf16s), NNN_OK);
	cr_assert_eq(m.n, sizeof FILE_BYTES);
	cr_assert_eq(memcmp(m.b, FILE_BYTES, sizeof FILE_BYTES), 0);
	nnn_arena_free(&arena);
	nnn_diags_free(&d);
}

/* A count is checked against the bytes left, in elements of the width,
 * before anything is taken; a scalar cut short is truncated. */
Test(etypes, codec_counts_checked_by_width)
{
	/* 3 float16s claimed, 5 bytes follow: 6 are needed */
	static const unsigned char b[] = { 0x03, 0x00, 0x00, 0x00, 1, 2, 3, 4, 5 };
	nnn_arena_t arena = { 0 };
	nnn_diags_t d;
	nnn_diags_init(&d);
	nnn_cur_t c = { .buf = b, .len = sizeof b, .arena = &arena, .diags = &d };
	nnn_elems_t a;
	uint64_t at;
	cr_assert_eq(nnn_rd_nums(&c, "data", "", NNN_EK_FLOAT, 2, &a, &at), NNN_E_TRUNCATED);
	cr_assert_eq(d.n, 1u);
	cr_assert_eq(d.v[0].offset, 0u);
	cr_assert(strstr(d.v[0].msg, "found 3 float16s (6 bytes), but only 5 bytes remain"), "%s", d.v[0].msg);
	cr_assert_str_eq(d.v[0].path, "data");
	/* a 2-byte scalar with one byte left */
	nnn_cur_t c2 = { .buf = b, .len = 1, .arena = &arena, .diags = &d };
	uint16_t h;
	cr_assert_eq(nnn_rd_num(&c2, "half", "", NNN_EK_FLOAT, 2, &h, &at), NNN_E_TRUNCATED);
	nnn_arena_free(&arena);
	nnn_diags_free(&d);
}
