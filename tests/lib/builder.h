/* builder.h: hand-built .nnn bytes for tests, written without libnnn so that
 * the decoder is checked against an independent encoding of the format. */
#ifndef NNN_TEST_BUILDER_H
#define NNN_TEST_BUILDER_H

#include <stddef.h>
#include <stdint.h>

typedef struct bb {
	unsigned char *b;
	size_t n, cap;
} bb_t;

void bb_free(bb_t *b);
void bb_bytes(bb_t *b, const void *p, size_t n);
void bb_u8(bb_t *b, uint8_t v);
void bb_i32(bb_t *b, int32_t v);
void bb_u64(bb_t *b, uint64_t v);
void bb_f32(bb_t *b, float v);
void bb_f32_bits(bb_t *b, uint32_t bits);
void bb_str(bb_t *b, const char *s, int32_t len);
void bb_i32s(bb_t *b, int32_t n, const int32_t *v);
/* A tensor with the given dims, requires_grad 1, and values 0.5*i - 1. */
void bb_tensor(bb_t *b, int32_t ndims, const int32_t *dims);
/* Overwrites 4 bytes at `at` with v (little-endian). */
void bb_put_i32(bb_t *b, size_t at, int32_t v);
void bb_put_f32(bb_t *b, size_t at, float v);

/* The "tiny" model, 154 bytes, whose offsets the tests rely on:
 *   0 magic, 4 description "tiny" (len at 4, bytes 8..11), 12 param_count = 11,
 *   20 layer_count = 2,
 *   layers[0] @24: id 0 (Dense) @24, activation 4 (Leaky ReLU) @25, tau 0.1 @26,
 *     dropout @30, bias dims {2} @34 (dims[0] @38), requires_grad @42, data count @43,
 *     data @47; neurons 2 @55; weights dims {3,2} @59 (dims[0] @63, dims[1] @67),
 *     requires_grad @71, data count @72, data @76; flatten @100
 *   layers[1] @101: Dense, Linear @102, dropout @103, bias dims {1} @107 (dims[0] @111),
 *     requires_grad @115, data @116; neurons 1 @124; weights dims {2,1} @128
 *     (dims[0] @132), requires_grad @140, data count @141; flatten @153. */
void bb_tiny(bb_t *b);
#define TINY_SIZE 154

/* A model header with `layers` layers and the given param count. */
void bb_header(bb_t *b, const char *desc, uint64_t params, int32_t layers);
/* A Conv layer: kernels [f, k..., c] (nk spatial dims), padding type, pads. */
void bb_conv(bb_t *b, uint8_t act, int32_t f, int32_t nk, const int32_t *k, int32_t c, int32_t ptype,
             int32_t npads, const int32_t *pads);
/* A Dense layer: weights [inputs, neurons]. */
void bb_dense(bb_t *b, uint8_t act, int32_t inputs, int32_t neurons, int flatten);

/* Writes bytes to a fresh file in a fresh temp folder; returns its path
 * (static storage, valid until the next call). */
const char *bb_to_file(const bb_t *b, const char *name);

#endif
