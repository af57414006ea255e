/* nnn/validate.h: every rule of the schema, with every problem reported.
 *
 * Validation never scans tensor data: it costs time proportional to the
 * number of layers and dims, not to the file's bytes.
 */
#ifndef NNN_VALIDATE_H
#define NNN_VALIDATE_H

#include <nnn/api.h>
#include <nnn/model.h>

/* Checks the semantic rules of a decoded model. With `input` non-NULL (for
 * example [1, 28, 28, 1]) it also infers every layer's output shape and checks
 * the whole chain exactly; `out_shapes`, when non-NULL, receives one shape per
 * layer (rank 0 where it could not be inferred). Returns NNN_OK or the code
 * of the first problem; all problems are appended to `diags`. */
NNN_API NNN_NODISCARD nnn_status_t nnn_model_validate(const nnn_model_t *m, const nnn_shape_t *input,
                                                      nnn_shape_t *out_shapes, nnn_diags_t *diags);

/* Decodes (keeping going past problems that leave the framing intact) and,
 * when the bytes could be framed, validates: every problem of a file in one
 * call. `ctx` (may be NULL) provides plugin types. */
NNN_API NNN_NODISCARD nnn_status_t nnn_validate_bytes(const void *buf, size_t len, const nnn_ctx_t *ctx,
                                                      const nnn_shape_t *input, nnn_diags_t *diags);

/* nnn_validate_bytes of a file from nnn_file_map, reading it with pread
 * (nnn/file.h): a file cut short meanwhile is NNN_E_IO, never SIGBUS. */
typedef struct nnn_file nnn_file_t;
NNN_API NNN_NODISCARD nnn_status_t nnn_file_validate(const nnn_file_t *f, const nnn_ctx_t *ctx,
                                                     const nnn_shape_t *input, nnn_diags_t *diags);

/* Reads every value of every parameter tensor (bias, weights, kernels, and
 * those of plugin layers) and reports each NaN, +inf and -inf, which the
 * rules above never look for: they do not read tensor data. Each tensor's
 * first NNN_FINITE_SHOWN non-finite values are reported one by one as
 * NNN_E_RANGE at their element ("layers[2].weights.data[17]") and byte
 * offset (NNN_NO_OFFSET for a model not decoded from bytes); a tensor with
 * more gets one more line, at its data field, with its counts of NaN, +inf
 * and -inf. `nonfinite` (may be NULL) receives the total count. One pass
 * over the tensor bytes, at about memory read speed. Returns NNN_OK when
 * every value is finite, else NNN_E_RANGE. */
#define NNN_FINITE_SHOWN 4
NNN_API NNN_NODISCARD nnn_status_t nnn_model_check_finite(const nnn_model_t *m, uint64_t *nonfinite,
                                                          nnn_diags_t *diags);

/* Parses "1,28,28,1" into a shape; NNN_E_USAGE with a message otherwise. */
NNN_API NNN_NODISCARD nnn_status_t nnn_shape_parse(const char *text, nnn_shape_t *out, nnn_diags_t *diags);

/* Formats a shape as "[1, 28, 28, 1]" into buf; returns buf. */
NNN_API char *nnn_shape_format(const nnn_shape_t *s, char *buf, size_t size);

#endif
