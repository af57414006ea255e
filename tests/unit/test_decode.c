/* test_decode.c: the decoder against hand-built bytes: every record, every
 * error kind with its exact code, path and offset, every truncation. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nnn/file.h>

#include "blackbox.h"
#include "builder.h"
#include "schemaq.h"
#include "codec.h"

/* Decodes b and expects failure with exactly one first problem. */
static void expect_fail(const bb_t *b, unsigned flags, nnn_status_t code, const char *path, uint64_t offset)
{
	nnn_diags_t d;
	nnn_model_t *m = (nnn_model_t *)1;
	nnn_decode_opts_t o = { .flags = flags };
	nnn_diags_init(&d);
	nnn_status_t st = nnn_model_decode(b->b, b->n, &o, &m, &d);
	cr_assert_eq(st, code, "status %s, expected %s", nnn_status_name(st), nnn_status_name(code));
	cr_assert_null(m);
	cr_assert_geq(d.n, 1);
	cr_assert_eq(d.v[0].code, code, "first problem %s", nnn_status_name(d.v[0].code));
	cr_assert_str_eq(d.v[0].path, path);
	cr_assert_eq(d.v[0].offset, offset, "offset 0x%llx, expected 0x%llx", (unsigned long long)d.v[0].offset,
	             (unsigned long long)offset);
	nnn_diags_free(&d);
}

Test(decode, tiny_fields_and_offsets)
{
	bb_t b = { 0 };
	nnn_model_t *m;
	bb_tiny(&b);
	cr_assert_eq(nnn_model_decode(b.b, b.n, NULL, &m, NULL), NNN_OK);
	cr_assert_eq(m->description.len, 4);
	cr_assert_eq(memcmp(m->description.ptr, "tiny", 4), 0);
	cr_assert_eq(m->param_count, 11);
	cr_assert_eq(m->layer_count, 2);
	const nnn_layer_t *L0 = &m->layers[0], *L1 = &m->layers[1];
	cr_assert_eq(L0->id, NNN_LAYER_ID_DENSE);
	cr_assert_eq(L0->activation.id, NNN_ACTIVATION_ID_LEAKY_RELU);
	cr_assert_eq(L0->activation.params.leaky_relu.tau, 0.1f);
	cr_assert_eq(L0->bias.dims.n, 1);
	cr_assert_eq(L0->bias.dims.v[0], 2);
	cr_assert(L0->bias.requires_grad);
	cr_assert_eq(L0->body.dense.neurons, 2);
	cr_assert_eq(L0->body.dense.weights.dims.v[0], 3);
	cr_assert_eq(L0->body.dense.weights.data.n, 6);
	cr_assert_eq(nnn_f32s_get(L0->body.dense.weights.data, 5), 1.5f);
	cr_assert_not(L0->body.dense.flatten);
	cr_assert_eq(L1->activation.id, NNN_ACTIVATION_ID_LINEAR);
	/* Offsets of fields, as laid out by hand in builder.h. */
	cr_assert_eq(m->at[NNN_AT_MODEL_LAYER_COUNT], 20);
	cr_assert_eq(L0->at[NNN_AT_LAYER_ID], 24);
	cr_assert_eq(L0->activation.params.leaky_relu.at[NNN_AT_LEAKY_RELU_TAU], 26);
	cr_assert_eq(L0->bias.at[NNN_AT_TENSOR_DATA], 43);
	cr_assert_eq(L0->body.dense.at[NNN_AT_DENSE_FLATTEN], 100);
	cr_assert_eq(L1->at[NNN_AT_LAYER_ID], 101);
	cr_assert_eq(L1->body.dense.weights.at[NNN_AT_TENSOR_DIMS], 128);
	/* Zero-copy: float data points into the input. */
	cr_assert_eq(L0->bias.data.bytes, b.b + 47);
	float out[6];
	nnn_tensor_copy(&L0->body.dense.weights, out);
	cr_assert_eq(out[0], -1.0f);
	cr_assert_eq(out[5], 1.5f);
	nnn_model_free(m);
	bb_free(&b);
}

Test(decode, every_proper_prefix_is_truncated)
{
	bb_t b = { 0 };
	bb_tiny(&b);
	for (size_t n = 0; n < b.n; n++) {
		nnn_model_t *m;
		nnn_diags_t d;
		nnn_diags_init(&d);
		nnn_status_t st = nnn_model_decode(b.b, n, NULL, &m, &d);
		cr_assert_eq(st, NNN_E_TRUNCATED, "prefix of %zu bytes: %s", n, nnn_status_name(st));
		cr_assert_eq(d.n, 1);
		cr_assert_leq(d.v[0].offset, n, "prefix %zu reports offset %llu", n, (unsigned long long)d.v[0].offset);
		nnn_diags_free(&d);
	}
	bb_free(&b);
}

Test(decode, one_trailing_byte)
{
	bb_t b = { 0 };
	bb_tiny(&b);
	bb_u8(&b, 0);
	expect_fail(&b, 0, NNN_E_TRAILING, "", TINY_SIZE);
	bb_free(&b);
}

Test(decode, bad_magic)
{
	bb_t b = { 0 };
	bb_tiny(&b);
	b.b[3] = 'X';
	expect_fail(&b, 0, NNN_E_MAGIC, "magic", 0);
	bb_free(&b);
}

Test(decode, negative_and_huge_counts)
{
	static const struct {
		size_t at;
		int32_t v;
		nnn_status_t code;
		const char *path;
	} cases[] = {
		{ 4, -1, NNN_E_COUNT_NEGATIVE, "description" },
		{ 4, INT32_MAX, NNN_E_TRUNCATED, "description" },
		{ 20, -1, NNN_E_COUNT_NEGATIVE, "layer_count" },
		{ 20, INT32_MAX, NNN_E_TRUNCATED, "layer_count" },
		{ 34, -1, NNN_E_COUNT_NEGATIVE, "layers[0].bias.dims" },
		{ 34, INT32_MAX, NNN_E_TRUNCATED, "layers[0].bias.dims" },
		{ 43, INT32_MAX, NNN_E_TRUNCATED, "layers[0].bias.data" },
		{ 43, -7, NNN_E_COUNT_NEGATIVE, "layers[0].bias.data" },
		{ 72, INT32_MAX, NNN_E_TRUNCATED, "layers[0].weights.data" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		bb_t b = { 0 };
		bb_tiny(&b);
		bb_put_i32(&b, cases[i].at, cases[i].v);
		expect_fail(&b, 0, cases[i].code, cases[i].path, cases[i].at);
		bb_free(&b);
	}
}

Test(decode, one_layer_more_than_written)
{
	bb_t b = { 0 };
	bb_tiny(&b);
	/* The 130 bytes left could hold three layers of >= 29 bytes, so the
	 * count passes its check and the third layer is cut short where it starts. */
	bb_put_i32(&b, 20, 3);
	expect_fail(&b, 0, NNN_E_TRUNCATED, "layers[2].id", TINY_SIZE);
	bb_put_i32(&b, 20, 1);
	expect_fail(&b, 0, NNN_E_TRAILING, "", 101);
	bb_free(&b);
}

Test(decode, unknown_ids_stop_decoding_and_name_remedies)
{
	bb_t b = { 0 };
	nnn_diags_t d;
	nnn_model_t *m;
	char buf[1024], want[32];
	int64_t undef = t_undefined(nnn_layer_id_name, 0);
	bb_tiny(&b);
	b.b[24] = (unsigned char)undef;
	expect_fail(&b, NNN_DECODE_KEEP_GOING, NNN_E_UNKNOWN_ID, "layers[0].id", 24);
	nnn_diags_init(&d);
	cr_assert_eq(nnn_model_decode(b.b, b.n, NULL, &m, &d), NNN_E_UNKNOWN_ID);
	nnn_diag_format(&d.v[0], buf, sizeof buf);
	snprintf(want, sizeof want, "layer ID %d", (int)undef);
	cr_assert(strstr(buf, want), "%s", buf);
	cr_assert(strstr(buf, "plugin"), "%s", buf);
	cr_assert(strstr(buf, "nnnkit plugins lists"), "%s", buf);
	nnn_diags_free(&d);
	b.b[24] = 0;
	b.b[102] = 200; /* layers[1].activation.id */
	expect_fail(&b, NNN_DECODE_KEEP_GOING, NNN_E_UNKNOWN_ID, "layers[1].activation.id", 102);
	bb_free(&b);
}

Test(decode, bool_bytes)
{
	bb_t b = { 0 };
	bb_tiny(&b);
	b.b[42] = 2;
	expect_fail(&b, 0, NNN_E_BOOL, "layers[0].bias.requires_grad", 42);
	b.b[42] = 1;
	b.b[100] = 255;
	expect_fail(&b, 0, NNN_E_BOOL, "layers[0].flatten", 100);
	bb_free(&b);
}

Test(decode, dims)
{
	bb_t b = { 0 };
	bb_tiny(&b);
	bb_put_i32(&b, 38, -2);
	expect_fail(&b, 0, NNN_E_DIM_NEGATIVE, "layers[0].bias.dims[0]", 38);
	bb_put_i32(&b, 38, 2);
	bb_put_i32(&b, 67, 3); /* weights [3,3] with 6 values */
	expect_fail(&b, 0, NNN_E_DIM_MISMATCH, "layers[0].weights.data", 72);
	bb_free(&b);

	/* Dims whose product overflows 64 bits, and zero dims that make it 0. */
	int32_t big[5] = { 65536, 65536, 65536, 65536, 2 };
	bb_t o = { 0 };
	bb_header(&o, "", 0, 1);
	bb_u8(&o, 0);
	bb_u8(&o, 0);
	bb_f32(&o, 0);
	bb_i32s(&o, 5, big);
	bb_u8(&o, 0);
	bb_i32(&o, 0);
	expect_fail(&o, 0, NNN_E_DIM_OVERFLOW, "layers[0].bias.dims", 26);
	bb_free(&o);
}

Test(decode, zero_dim_means_empty_tensor)
{
	int32_t dims[3] = { 65536, 0, 65536 };
	bb_t b = { 0 };
	nnn_diags_t d;
	nnn_model_t *m;
	bb_header(&b, "", 0, 1);
	bb_u8(&b, 0);
	bb_u8(&b, 0);
	bb_f32(&b, 0);
	bb_tensor(&b, 3, dims);
	bb_i32(&b, 1);
	bb_tensor(&b, 3, dims);
	bb_u8(&b, 0);
	nnn_diags_init(&d);
	/* Structurally fine (the validator rejects the shapes). */
	cr_assert_eq(nnn_model_decode(b.b, b.n, NULL, &m, &d), NNN_OK);
	nnn_model_free(m);
	nnn_diags_free(&d);
	bb_free(&b);
}

Test(decode, utf8_description)
{
	static const char good[] = "h\0\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"; /* h NUL é € 😀 */
	static const char *bad[] = { "\xc3", "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xff" };
	bb_t b = { 0 };
	nnn_model_t *m;
	bb_i32(&b, 776883790);
	bb_str(&b, good, (int32_t)sizeof good - 1);
	bb_u64(&b, 0);
	bb_i32(&b, 0);
	cr_assert_eq(nnn_model_decode(b.b, b.n, NULL, &m, NULL), NNN_OK);
	cr_assert_eq(m->description.len, (int32_t)sizeof good - 1);
	cr_assert_eq(memcmp(m->description.ptr, good, sizeof good - 1), 0);
	nnn_model_free(m);
	bb_free(&b);
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		bb_t c = { 0 };
		bb_i32(&c, 776883790);
		bb_i32(&c, (int32_t)strlen(bad[i]) + 1);
		bb_u8(&c, 'a');
		bb_bytes(&c, bad[i], strlen(bad[i]));
		bb_u64(&c, 0);
		bb_i32(&c, 0);
		expect_fail(&c, 0, NNN_E_UTF8, "description", 9);
		bb_free(&c);
	}
}

Test(decode, padding_type_outside_enum)
{
	int32_t k[2] = { 3, 3 }, pads[4] = { 0, 0, 0, 0 };
	bb_t b = { 0 };
	bb_header(&b, "c", 2 + 2 * 9, 1);
	size_t at = b.n;
	bb_conv(&b, 3, 2, 2, k, 1, 5, 4, pads);
	/* id, act, dropout(4), bias(4+4+1+4+8), filters(4), kernels(4+16+1+4+72) */
	expect_fail(&b, 0, NNN_E_ENUM, "layers[0].padding_type", at + 1 + 1 + 4 + 21 + 4 + 97);
	bb_free(&b);
}

Test(decode, keep_going_reports_every_soft_problem)
{
	bb_t b = { 0 };
	nnn_diags_t d;
	nnn_model_t *m;
	nnn_decode_opts_t o = { .flags = NNN_DECODE_KEEP_GOING };
	bb_tiny(&b);
	b.b[42] = 2;
	b.b[100] = 3;
	bb_put_i32(&b, 132, 5);
	bb_u8(&b, 9);
	nnn_diags_init(&d);
	cr_assert_eq(nnn_model_decode(b.b, b.n, &o, &m, &d), NNN_E_BOOL);
	cr_assert_null(m);
	cr_assert_eq(d.n, 4);
	cr_assert_eq(d.v[1].code, NNN_E_BOOL);
	cr_assert_eq(d.v[2].code, NNN_E_DIM_MISMATCH);
	cr_assert_str_eq(d.v[2].path, "layers[1].weights.data");
	cr_assert_eq(d.v[3].code, NNN_E_TRAILING);
	nnn_diags_free(&d);
	bb_free(&b);
}

/* The visitor sees every byte exactly once, in order. */
typedef struct tile {
	uint64_t end;
	int fields, gaps;
} tile_t;

static void on_field(void *ctx, const nnn_field_t *f)
{
	tile_t *t = ctx;
	if (f->offset != t->end)
		t->gaps++;
	t->end = f->offset + f->size;
	t->fields++;
}

Test(decode, visitor_tiles_the_file)
{
	bb_t b = { 0 };
	tile_t t = { 0, 0, 0 };
	nnn_visitor_t vis = { on_field, NULL, &t };
	nnn_decode_opts_t o = { .visit = &vis };
	nnn_model_t *m;
	bb_tiny(&b);
	cr_assert_eq(nnn_model_decode(b.b, b.n, &o, &m, NULL), NNN_OK);
	cr_assert_eq(t.gaps, 0);
	cr_assert_eq(t.end, TINY_SIZE);
	cr_assert_eq(t.fields, 4 + 2 * 11 + 1); /* header 4, per layer 11, one tau */
	nnn_model_free(m);
	bb_free(&b);
}

/* Decodes b with NNN_DECODE_COPY from a duplicate that is scribbled over
 * and freed at once: the model must not need it. */
static nnn_model_t *copy_of(const bb_t *b)
{
	nnn_model_t *m;
	nnn_decode_opts_t o = { .flags = NNN_DECODE_COPY };
	unsigned char *dup = malloc(b->n);
	cr_assert_not_null(dup);
	memcpy(dup, b->b, b->n);
	cr_assert_eq(nnn_model_decode(dup, b->n, &o, &m, NULL), NNN_OK);
	memset(dup, 0xAB, b->n);
	free(dup);
	return m;
}

/* m encodes to exactly b's bytes. */
static void encodes_to(const nnn_model_t *m, const bb_t *b)
{
	unsigned char *out;
	size_t len;
	cr_assert_eq(nnn_model_encode(m, &out, &len, NULL), NNN_OK);
	cr_assert_eq(len, b->n);
	cr_assert_eq(memcmp(out, b->b, len), 0);
	free(out);
}

Test(decode, copy_outlives_the_buffer)
{
	bb_t b = { 0 };
	bb_tiny(&b);
	nnn_model_t *m = copy_of(&b);
	encodes_to(m, &b);
	nnn_model_free(m);
	bb_free(&b);
}

Test(decode, file_open_maps_zero_copy)
{
	bb_t b = { 0 };
	nnn_file_t *f;
	size_t size;
	bb_tiny(&b);
	const char *path = bb_to_file(&b, "tiny.nnn");
	cr_assert_eq(nnn_file_open(path, NULL, &f, NULL), NNN_OK);
	const unsigned char *base = nnn_file_bytes(f, &size);
	cr_assert_eq(size, TINY_SIZE);
	cr_assert_eq(nnn_file_model(f)->layers[0].bias.data.bytes, base + 47);
	nnn_file_close(f);
	nnn_file_close(NULL);
	nnn_model_free(NULL);
	unlink(path);
	bb_free(&b);
}

/* kB of the mapping starting at `base` that this process has mapped in
 * (its Rss line in /proc/self/smaps); -1 when not found. */
static long mapped_kb(const void *base)
{
	char line[512];
	long kb = -1;
	bool in = false;
	FILE *f = fopen("/proc/self/smaps", "r");
	cr_assert_not_null(f);
	while (fgets(line, sizeof line, f)) {
		unsigned long lo, hi;
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2) /* a mapping's first line */
			in = lo == (unsigned long)(uintptr_t)base;
		else if (in && sscanf(line, "Rss: %ld kB", &kb) == 1)
			break;
	}
	fclose(f);
	return kb;
}

/* Opening reads the structure with pread: not one page of the mapping is
 * faulted in until a caller reads tensor data, however big the model. */
Test(decode, file_open_maps_no_page_until_data_is_read)
{
	bb_t b = { 0 };
	nnn_file_t *f;
	size_t size;
	bb_header(&b, "big", 1024 + 1024 * 1024 + 10 + 1024 * 10, 2);
	bb_dense(&b, 1, 1024, 1024, 0); /* 4 MiB of weights between the two layers' fields */
	bb_dense(&b, 0, 1024, 10, 0);
	const char *path = bb_to_file(&b, "big.nnn");
	cr_assert_eq(nnn_file_open(path, NULL, &f, NULL), NNN_OK);
	const unsigned char *base = nnn_file_bytes(f, &size);
	cr_assert_eq(size, b.n);
	cr_assert_eq(mapped_kb(base), 0, "%ld kB of the model mapped in by opening it", mapped_kb(base));
	const nnn_model_t *m = nnn_file_model(f);
	const unsigned char *view = m->layers[0].body.dense.weights.data.bytes;
	cr_assert(view > base && view + 4 * 1024 * 1024 <= base + size, "the weights are a view into the mapping");
	float w;
	memcpy(&w, m->layers[1].body.dense.weights.data.bytes + 4 * 9, 4); /* the check can see a page */
	cr_assert_float_eq(w, 0.5f * 9 - 1, 0);
	cr_assert_gt(mapped_kb(base), 0);
	encodes_to(m, &b);
	nnn_file_close(f);
	unlink(path);
	bb_free(&b);
}

/* A Dense layer 1 -> 1 whose bias has `ndims` dims of 1: an int32 array as
 * long as wanted. */
static void long_dims_dense(bb_t *b, int32_t ndims)
{
	int32_t w[2] = { 1, 1 };
	bb_u8(b, 0);
	bb_u8(b, 0);
	bb_f32(b, 0.0f);
	bb_i32(b, ndims);
	for (int32_t i = 0; i < ndims; i++)
		bb_i32(b, 1);
	bb_u8(b, 1);
	bb_i32(b, 1); /* one value, as its dims multiply to */
	bb_f32(b, 1.0f);
	bb_i32(b, 1);
	bb_tensor(b, 2, w);
	bb_u8(b, 0);
}

/* The window's edges: fields that end exactly at it, straddle it or are
 * bigger than it (a long description, a long int32 array) decode as they
 * do from memory, to the same bytes and the same problems. */
Test(decode, file_open_reads_across_the_window)
{
	enum { W = NNN_WINDOW_BYTES };
	char *desc = malloc(3 * W);
	cr_assert_not_null(desc);
	memset(desc, 'x', 3 * W);
	for (int len = W - 64; len <= 2 * W + 8; len += len < W + 40 ? 1 : W / 2 - 3) {
		for (int cut = 0; cut < 2; cut++) {
			bb_t b = { 0 };
			nnn_file_t *f;
			nnn_model_t *m;
			nnn_diags_t d1, d2;
			int32_t k[1] = { 3 }, pads[2] = { 1, 1 };
			bb_i32(&b, 776883790);
			bb_str(&b, desc, len);
			bb_u64(&b, 0);
			bb_i32(&b, 3);
			bb_conv(&b, 1, 4, 1, k, 2, 1, 2, pads);
			long_dims_dense(&b, len / 4); /* longer than the window past len 4096 */
			bb_dense(&b, 0, 2, 3, 1);
			if (cut)
				b.n -= 7; /* truncated inside the last tensor */
			const char *path = bb_to_file(&b, "edge.nnn");
			nnn_diags_init(&d1);
			nnn_diags_init(&d2);
			nnn_status_t s1 = nnn_file_open(path, NULL, &f, &d1);
			nnn_status_t s2 = nnn_model_decode(b.b, b.n, NULL, &m, &d2);
			cr_assert_eq(s1, s2, "description of %d bytes: %s from the file, %s from memory", len,
			             nnn_status_name(s1), nnn_status_name(s2));
			cr_assert_eq(s1, cut ? NNN_E_TRUNCATED : NNN_OK);
			cr_assert_eq(d1.n, d2.n);
			for (size_t i = 0; i < d1.n; i++) {
				cr_assert_str_eq(d1.v[i].path, d2.v[i].path);
				cr_assert_eq(d1.v[i].offset, d2.v[i].offset);
				cr_assert_str_eq(d1.v[i].msg, d2.v[i].msg);
			}
			if (!cut) {
				cr_assert_eq(nnn_file_model(f)->description.len, len);
				encodes_to(nnn_file_model(f), &b);
			}
			nnn_file_close(f);
			nnn_model_free(m);
			nnn_diags_free(&d1);
			nnn_diags_free(&d2);
			unlink(path);
			bb_free(&b);
		}
	}
	free(desc);
}

Test(decode, file_open_copy_outlives_the_file)
{
	bb_t b = { 0 };
	nnn_file_t *f;
	nnn_decode_opts_t o = { .flags = NNN_DECODE_COPY };
	size_t size;
	bb_tiny(&b);
	const char *path = bb_to_file(&b, "tiny.nnn");
	cr_assert_eq(nnn_file_open(path, &o, &f, NULL), NNN_OK);
	/* The file's bytes, read into memory the model owns. */
	const unsigned char *base = nnn_file_bytes(f, &size);
	cr_assert_eq(size, TINY_SIZE);
	cr_assert_eq(memcmp(base, b.b, size), 0);
	cr_assert_eq(nnn_file_model(f)->layers[0].bias.data.bytes, base + 47);
	FILE *w = fopen(path, "wb"); /* the file changes: the model does not */
	cr_assert_not_null(w);
	fclose(w);
	unlink(path);
	encodes_to(nnn_file_model(f), &b);
	nnn_file_close(f);
	bb_free(&b);
}

Test(decode, file_open_copy_fails_as_zero_copy_does)
{
	nnn_diags_t d1, d2;
	nnn_file_t *f;
	nnn_decode_opts_t o = { .flags = NNN_DECODE_COPY };
	bb_t b = { 0 };
	bb_tiny(&b);
	b.n -= 3;
	const char *paths[] = { bb_to_file(&b, "cut.nnn"), "/nonexistent/x.nnn", "/tmp" };
	char cut[512];
	snprintf(cut, sizeof cut, "%s", paths[0]);
	paths[0] = cut;
	for (size_t i = 0; i < 3; i++) {
		nnn_diags_init(&d1);
		nnn_diags_init(&d2);
		nnn_status_t s1 = nnn_file_open(paths[i], NULL, &f, &d1);
		cr_assert_null(f);
		nnn_status_t s2 = nnn_file_open(paths[i], &o, &f, &d2);
		cr_assert_null(f);
		cr_assert_neq(s1, NNN_OK, "%s", paths[i]);
		cr_assert_eq(s1, s2, "%s: %s, with COPY %s", paths[i], nnn_status_name(s1), nnn_status_name(s2));
		cr_assert_eq(d1.n, d2.n, "%s", paths[i]);
		for (size_t k = 0; k < d1.n; k++) {
			cr_assert_str_eq(d1.v[k].path, d2.v[k].path);
			cr_assert_eq(d1.v[k].offset, d2.v[k].offset);
			cr_assert_str_eq(d1.v[k].msg, d2.v[k].msg);
		}
		nnn_diags_free(&d1);
		nnn_diags_free(&d2);
	}
	unlink(cut);
	bb_free(&b);
}

/* A copy past 2 MiB takes the huge-page path: the same values, owned. */
Test(decode, large_copy_equals_the_input)
{
	bb_t b = { 0 };
	bb_header(&b, "big", 1024 * 1024 + 1024, 1);
	bb_dense(&b, 0, 1024, 1024, 0);
	nnn_model_t *m = copy_of(&b);
	const nnn_tensor_t *w = &m->layers[0].body.dense.weights;
	cr_assert_eq(w->data.n, 1024 * 1024);
	cr_assert_eq(memcmp(w->data.bytes, b.b + w->at[NNN_AT_TENSOR_DATA] + 4, 4u << 20), 0);
	cr_assert_eq(nnn_f32s_get(w->data, 1024 * 1024 - 1), 0.5f * (1024 * 1024 - 1) - 1);
	nnn_model_free(m);
	bb_free(&b);
}

Test(decode, missing_file_is_io_error)
{
	nnn_diags_t d;
	nnn_file_t *f;
	nnn_diags_init(&d);
	cr_assert_eq(nnn_file_open("/nonexistent/x.nnn", NULL, &f, &d), NNN_E_IO);
	cr_assert_null(f);
	cr_assert(strstr(d.v[0].msg, "No such file"), "%s", d.v[0].msg);
	nnn_diags_free(&d);
}

/* Length bombs: tiny files that claim huge counts fail before allocating.
 * Checked in a child under a 512 MiB address-space limit, except where a
 * sanitizer or valgrind needs the address space for itself. */
static int bombs_fail_small(void)
{
	static const size_t at[] = { 4, 20, 34, 43 };
	for (size_t i = 0; i < sizeof at / sizeof at[0]; i++) {
		bb_t b = { 0 };
		nnn_model_t *m;
		bb_tiny(&b);
		bb_put_i32(&b, at[i], INT32_MAX);
		b.n = at[i] + 4 + 10; /* a 20-50 byte file */
		if (nnn_model_decode(b.b, b.n, NULL, &m, NULL) != NNN_E_TRUNCATED)
			return 1;
		bb_free(&b);
	}
	return 0;
}

Test(decode, length_bombs_under_memory_limit)
{
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
#if !T_ASAN
		if (!t_under_valgrind()) {
			/* Room for what the test process maps already; the bombs ask for GiBs. */
			struct rlimit r = { (rlim_t)512 << 20, (rlim_t)512 << 20 };
			if (setrlimit(RLIMIT_AS, &r) != 0)
				_exit(3);
		}
#endif
		_exit(bombs_fail_small());
	}
	int status;
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status), "child died with signal %d", WTERMSIG(status));
	cr_assert_eq(WEXITSTATUS(status), 0);
}

/* Cuts the file short when the decoder reports layers[0]'s first field. */
typedef struct cutter {
	const char *path;
	bool done;
} cutter_t;

static void cut_short(void *ctx, const nnn_field_t *f)
{
	cutter_t *k = ctx;
	if (!k->done && !strncmp(f->path, "layers[0]", 9)) {
		cr_assert_eq(truncate(k->path, 100), 0);
		k->done = true;
	}
}

/* A file that shrinks while it is being opened (another program rewriting
 * it in place) is an error: the decoder reads with pread, which comes up
 * short, where reading the mapping past the new end would raise SIGBUS. */
Test(decode, file_cut_short_while_opened_is_an_error_not_a_crash)
{
	bb_t b = { 0 };
	nnn_file_t *f;
	nnn_diags_t d;
	bb_header(&b, "cut", 1024 + 1024 * 1024 + 10 + 1024 * 10, 2);
	bb_dense(&b, 1, 1024, 1024, 0);
	bb_dense(&b, 0, 1024, 10, 0);
	const char *path = bb_to_file(&b, "cut.nnn");
	cutter_t k = { .path = path };
	nnn_visitor_t vis = { .field = cut_short, .ctx = &k };
	nnn_decode_opts_t o = { .visit = &vis };
	nnn_diags_init(&d);
	cr_assert_eq(nnn_file_open(path, &o, &f, &d), NNN_E_IO);
	cr_assert(k.done);
	cr_assert_null(f);
	cr_assert_eq(d.n, 1);
	/* The visitor is shown the float values, read with pread as well: the
	 * first array's, which starts inside the window, is cut. */
	cr_assert_str_eq(d.v[0].path, "layers[0].bias.data");
	cr_assert_eq(d.v[0].offset, 42);
	cr_assert(strstr(d.v[0].msg, "the file is shorter than when it was opened"), "%s", d.v[0].msg);
	nnn_diags_free(&d);
	unlink(path);
	bb_free(&b);
}

/* Field paths, built for every field decoded without printf: the same text
 * snprintf would make, cut at NNN_PATH_MAX - 1 characters. */
Test(decode, paths_read_as_printf_would_write_them)
{
	nnn_path_t p = { .len = 0 };
	char want[NNN_PATH_MAX];
	size_t top = nnn_path_push(&p, "layers");
	nnn_path_index(&p, 2);
	size_t mark = nnn_path_push(&p, "weights");
	nnn_path_push(&p, "dims");
	nnn_path_index(&p, -1);
	nnn_path_index(&p, INT64_MIN);
	nnn_path_index(&p, INT64_MAX);
	nnn_path_push(&p, "");
	cr_assert_str_eq(p.s, "layers[2].weights.dims[-1][-9223372036854775808][9223372036854775807]");
	cr_assert_eq(p.len, strlen(p.s));
	nnn_path_pop(&p, mark);
	cr_assert_str_eq(p.s, "layers[2]");
	nnn_path_pop(&p, top);
	cr_assert_str_eq(p.s, "");
	size_t k = 0;
	want[0] = '\0';
	for (int i = 0; i < 40; i++) {
		nnn_path_push(&p, "field");
		nnn_path_index(&p, 1000 + i);
		k += (size_t)snprintf(want + k, sizeof want - k, "%sfield[%d]", i ? "." : "", 1000 + i);
		if (k >= sizeof want)
			k = sizeof want - 1;
		cr_assert_str_eq(p.s, want, "after %d pushes", i + 1);
		cr_assert_eq(p.len, k);
	}
	cr_assert_eq(p.len, NNN_PATH_MAX - 1);
}
