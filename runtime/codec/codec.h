/* codec.h (internal): the codec's entry points for the rest of libnnn:
 * a whole model decoded or validated from bytes (model.c; the file layer
 * gives a reader of its file), and the generated codec's own
 * (build/gen/schema_gen.c). Each part the codec is built on has its header:
 * cursor.h, sink.h, vctx.h, shape_io.h, ext.h, arena.h, path.h.
 */
#ifndef NNN_CODEC_H
#define NNN_CODEC_H

#include <nnn/plugin.h>
#include <nnn/shape.h>

#include "arena.h"
#include "cursor.h"
#include "shape_io.h"

/* ---- decoding and validating a whole model (model.c) ---- */

/* A zeroed model with an arena of its own for everything it points to, both
 * freed by nnn_model_free (as a decoded model). NULL when out of memory. */
nnn_model_t *nnn_model_new_arena(nnn_arena_t **arena);

/* The decode proper (model.c): strings and float arrays are views into
 * buf. Windowed: with a reader (of the file buf maps) the decoder reads the
 * structure through a window it refills with the reader instead
 * (nnn_window_t), so that only the pages of tensor data a caller reads are
 * ever touched, and a file cut short is NNN_E_IO; with rd NULL it reads buf
 * alone (nnn_model_decode passes NULL, nnn_file_decode its file's reader). */
NNN_NODISCARD nnn_status_t nnn_decode_windowed(const void *buf, size_t len, const nnn_reader_t *rd,
                                               const nnn_decode_opts_t *opts, nnn_model_t **out, nnn_diags_t *diags);
/* nnn_validate_bytes, reading as nnn_decode_windowed does (nnn_file_validate
 * passes its file's reader). */
NNN_NODISCARD nnn_status_t nnn_validate_windowed(const void *buf, size_t len, const nnn_reader_t *rd,
                                                 const nnn_ctx_t *ctx, const nnn_shape_t *input, nnn_diags_t *diags);
/* Decodes views into `copy` (from nnn_mem_big), which the model then owns
 * (nnn_model_copy); on failure copy is freed. */
NNN_NODISCARD nnn_status_t nnn_model_adopt(unsigned char *copy, size_t len, const nnn_decode_opts_t *opts,
                                           nnn_model_t **out, nnn_diags_t *diags);
const unsigned char *nnn_model_copy(const nnn_model_t *m);

/* ---- entry points of the generated codec (build/gen/schema_gen.c) ---- */

nnn_status_t nnn_gen_decode(nnn_cur_t *c, nnn_model_t *r);
nnn_status_t nnn_gen_encode(nnn_sink_t *w, const nnn_model_t *r);
void nnn_gen_validate(nnn_vctx_t *v, const nnn_model_t *r, const nnn_shape_t *in, nnn_shape_t *out_shapes);
/* The chain's shapes alone (nnn_model_shapes_each). */
void nnn_gen_shapes(nnn_vctx_t *v, const nnn_model_t *r, const nnn_shape_t *in, nnn_shapes_fn each, void *ctx);
/* One layer's io, as the chain rule applies it (NNN_IO_UNKNOWN without one). */
void nnn_gen_io(const nnn_layer_t *r, nnn_io_t *io);
uint64_t nnn_gen_params(const nnn_model_t *r);
uint64_t nnn_gen_size(const nnn_model_t *r);

#endif
