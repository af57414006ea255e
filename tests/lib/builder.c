/* builder.c: see builder.h. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builder.h"

void bb_free(bb_t *b)
{
	free(b->b);
	b->b = NULL;
	b->n = b->cap = 0;
}

void bb_bytes(bb_t *b, const void *p, size_t n)
{
	if (b->cap - b->n < n) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap - b->n < n)
			cap *= 2;
		b->b = realloc(b->b, cap);
		cr_assert_not_null(b->b);
		b->cap = cap;
	}
	if (n)
		memcpy(b->b + b->n, p, n);
	b->n += n;
}

void bb_u8(bb_t *b, uint8_t v)
{
	bb_bytes(b, &v, 1);
}

static void le32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

void bb_i32(bb_t *b, int32_t v)
{
	unsigned char p[4];
	le32(p, (uint32_t)v);
	bb_bytes(b, p, 4);
}

void bb_u64(bb_t *b, uint64_t v)
{
	bb_i32(b, (int32_t)(uint32_t)v);
	bb_i32(b, (int32_t)(uint32_t)(v >> 32));
}

void bb_f32_bits(bb_t *b, uint32_t bits)
{
	bb_i32(b, (int32_t)bits);
}

void bb_f32(bb_t *b, float v)
{
	uint32_t u;
	memcpy(&u, &v, 4);
	bb_f32_bits(b, u);
}

void bb_str(bb_t *b, const char *s, int32_t len)
{
	bb_i32(b, len);
	bb_bytes(b, s, (size_t)len);
}

void bb_i32s(bb_t *b, int32_t n, const int32_t *v)
{
	bb_i32(b, n);
	for (int32_t i = 0; i < n; i++)
		bb_i32(b, v[i]);
}

void bb_tensor(bb_t *b, int32_t ndims, const int32_t *dims)
{
	int32_t n = 1;
	bb_i32s(b, ndims, dims);
	bb_u8(b, 1);
	for (int32_t i = 0; i < ndims; i++)
		n *= dims[i];
	bb_i32(b, n);
	for (int32_t i = 0; i < n; i++)
		bb_f32(b, 0.5f * (float)i - 1.0f);
}

void bb_put_i32(bb_t *b, size_t at, int32_t v)
{
	le32(b->b + at, (uint32_t)v);
}

void bb_put_f32(bb_t *b, size_t at, float v)
{
	uint32_t u;
	memcpy(&u, &v, 4);
	le32(b->b + at, u);
}

void bb_header(bb_t *b, const char *desc, uint64_t params, int32_t layers)
{
	bb_i32(b, 776883790);
	bb_str(b, desc, (int32_t)strlen(desc));
	bb_u64(b, params);
	bb_i32(b, layers);
}

void bb_dense(bb_t *b, uint8_t act, int32_t inputs, int32_t neurons, int flatten)
{
	int32_t bias[1] = { neurons }, w[2] = { inputs, neurons };
	bb_u8(b, 0);
	bb_u8(b, act);
	if (act == 4)
		bb_f32(b, 0.1f);
	bb_f32(b, 0.0f);
	bb_tensor(b, 1, bias);
	bb_i32(b, neurons);
	bb_tensor(b, 2, w);
	bb_u8(b, (uint8_t)flatten);
}

void bb_conv(bb_t *b, uint8_t act, int32_t f, int32_t nk, const int32_t *k, int32_t c, int32_t ptype,
             int32_t npads, const int32_t *pads)
{
	int32_t bias[1] = { f }, kd[16];
	kd[0] = f;
	for (int32_t i = 0; i < nk; i++)
		kd[1 + i] = k[i];
	kd[1 + nk] = c;
	bb_u8(b, 1);
	bb_u8(b, act);
	if (act == 4)
		bb_f32(b, 0.1f);
	bb_f32(b, 0.0f);
	bb_tensor(b, 1, bias);
	bb_i32(b, f);
	bb_tensor(b, nk + 2, kd);
	bb_i32(b, ptype);
	bb_i32s(b, npads, pads);
}

void bb_tiny(bb_t *b)
{
	bb_header(b, "tiny", 11, 2);
	bb_dense(b, 4, 3, 2, 0);
	bb_dense(b, 0, 2, 1, 0);
	cr_assert_eq(b->n, TINY_SIZE);
}

const char *bb_to_file(const bb_t *b, const char *name)
{
	static char path[512];
	char dir[] = "/tmp/nnntest.XXXXXX";
	cr_assert_not_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	cr_assert_not_null(f);
	cr_assert_eq(fwrite(b->b, 1, b->n, f), b->n);
	cr_assert_eq(fclose(f), 0);
	return path;
}
