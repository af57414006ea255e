/* nnn/model.h: decode a .nnn model from bytes, encode it back, free it.
 *
 * The record types (nnn_model_t, nnn_layer_t, nnn_tensor_t, ...) and the ID
 * enums are generated from schema/nnn.lua into <nnn/records_gen.h>
 * (<nnn/records.h>), libnnn's functions over them into <nnn/schema_gen.h>.
 *
 * Decoding is all-or-nothing and never trusts the bytes: every read is
 * bounds-checked and every count is checked against the bytes left before
 * anything is allocated, so memory use is bounded by a small multiple of the
 * input size. Files are mapped zero-copy by nnn_file_open (nnn/file.h).
 */
#ifndef NNN_MODEL_H
#define NNN_MODEL_H

#include <nnn/api.h>
#include <nnn/status.h>
#include <nnn/types.h>
#include <nnn/records.h>
#include <nnn/schema_gen.h>

/* Decode flags. */
enum {
	/* Copy the input into memory the model owns (one allocation, huge pages
	 * when large), so the model outlives the input buffer. Without it
	 * strings and float data are views into the buffer. */
	NNN_DECODE_COPY = 1u << 0,
	/* Record problems that leave the framing intact (a bool byte of 2, a bad
	 * dims product, invalid UTF-8, trailing bytes) and go on; used by the
	 * validator and `nnnkit dump`. The call still fails if any was found. */
	NNN_DECODE_KEEP_GOING = 1u << 1,
};

typedef struct nnn_ctx nnn_ctx_t; /* nnn/context.h */

typedef struct nnn_decode_opts {
	unsigned flags;             /* NNN_DECODE_* */
	const nnn_visitor_t *visit; /* sees every field and problem; may be NULL */
	const nnn_ctx_t *ctx;       /* plugins for IDs the schema lacks; may be NULL */
} nnn_decode_opts_t;

/* Decodes `len` bytes at `buf` (opts may be NULL). On success *out is a new
 * model: returned, free it with nnn_model_free. Without NNN_DECODE_COPY it
 * borrows `buf`, which must outlive it. On failure *out is NULL and the
 * problems are appended to `diags` (may be NULL). */
NNN_API NNN_NODISCARD nnn_status_t nnn_model_decode(const void *buf, size_t len, const nnn_decode_opts_t *opts,
                                                    nnn_model_t **out, nnn_diags_t *diags);

/* Frees a model from nnn_model_decode; NULL is harmless. Do not call it on a
 * model you filled in yourself, nor on one from nnn_file_model. */
NNN_API void nnn_model_free(nnn_model_t *m);

/* Encodes a model (decoded, or filled in by hand) into a new buffer: returned
 * in *buf, free it with free(). */
NNN_API NNN_NODISCARD nnn_status_t nnn_model_encode(const nnn_model_t *m, unsigned char **buf, size_t *len,
                                                    nnn_diags_t *diags);

/* Encodes a model into `path` through nnn_write_atomic (file.h): a file is
 * replaced atomically (on any failure `path` is untouched and the temporary
 * file removed); "-", a FIFO or a character device is written in place. */
NNN_API NNN_NODISCARD nnn_status_t nnn_model_write_file(const nnn_model_t *m, const char *path,
                                                        nnn_diags_t *diags);

/* Total element count of every parameter tensor (as the header should say). */
NNN_API uint64_t nnn_model_param_total(const nnn_model_t *m);

/* Encoded size of the model in bytes. */
NNN_API uint64_t nnn_model_encoded_size(const nnn_model_t *m);

/* Copies a tensor's data out as host floats (out has nnn_tensor_numel slots).
 * In libnnn, for applications: a plugin calls nnn_f32s_read(t->data, out). */
NNN_API void nnn_tensor_copy(const nnn_tensor_t *t, float *out);

/* A layer's parameter tensor of any element type, with its field name. */
typedef struct nnn_param {
	const char *name;           /* "weights": the field's (a plugin's tensor: the name its hook gives) */
	const nnn_i32s_t *dims;     /* borrowed from the layer */
	const nnn_elems_t *data;    /* the data member: little-endian elements of prim's kind and width */
	nnn_prim_t prim;            /* NNN_PRIM_F32_ARRAY, or NNN_PRIM_NUMS_OF(kind, width) */
	const nnn_tensor_t *tensor; /* the float32 tensor record; NULL for another element type */
} nnn_param_t;

/* Every parameter tensor of layer L, of every element type, in file order
 * per kind: the float32 ones nnn_layer_tensors lists (a plugin's included),
 * then those of other element types the schema's records hold (a float16
 * Dense's weights). Fills out[0..max) and returns how many there are (may
 * be more than max; out may be NULL when max is 0). */
NNN_API int nnn_layer_params(const nnn_layer_t *L, nnn_param_t *out, int max);

/* The same as nnn_f32s_read (nnn/types.h), in libnnn: for applications; a
 * plugin calls nnn_f32s_read. */
NNN_API void nnn_f32s_copy(nnn_f32s_t a, float *out);

#endif
