/* nnn/validate.h: every rule of the schema, with every problem reported.
 *
 * Validation never scans tensor data: it costs time proportional to the
 * number of layers and dims, not to the file's bytes.
 */
#ifndef NNN_VALIDATE_H
#define NNN_VALIDATE_H

#include <nnn/model.h>

/* Checks the semantic rules of a decoded model. With `input` non-NULL (for
 * example [1, 28, 28, 1]) it also infers every layer's output shape and checks
 * the whole chain exactly; `out_shapes`, when non-NULL, receives one shape per
 * layer (rank 0 where it could not be inferred). Returns NNN_OK or the code
 * of the first problem; all problems are appended to `diags`. */
NNN_NODISCARD nnn_status_t nnn_model_validate(const nnn_model_t *m, const nnn_shape_t *input,
                                              nnn_shape_t *out_shapes, nnn_diags_t *diags);

/* Decodes (keeping going past problems that leave the framing intact) and,
 * when the bytes could be framed, validates: every problem of a file in one
 * call. `ctx` (may be NULL) provides plugin types. */
NNN_NODISCARD nnn_status_t nnn_validate_bytes(const void *buf, size_t len, const nnn_ctx_t *ctx,
                                              const nnn_shape_t *input, nnn_diags_t *diags);

/* Parses "1,28,28,1" into a shape; NNN_E_USAGE with a message otherwise. */
NNN_NODISCARD nnn_status_t nnn_shape_parse(const char *text, nnn_shape_t *out, nnn_diags_t *diags);

/* Formats a shape as "[1, 28, 28, 1]" into buf; returns buf. */
char *nnn_shape_format(const nnn_shape_t *s, char *buf, size_t size);

#endif
