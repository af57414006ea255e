/* test_real.c: the two files written by the original framework. They live
 * outside the project (../shared/corpus/real, or $NNN_REAL_CORPUS) and are
 * never copied in: without them these tests skip, saying so. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nnn/file.h>
#include <nnn/validate.h>

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
