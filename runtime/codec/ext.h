/* ext.h (internal): types provided by plugins (ext.c): the lookup of a
 * context's plugins the decoder is given, and what the rest of libnnn does
 * with an element of a plugin's type. */
#ifndef NNN_EXT_H
#define NNN_EXT_H

#include <nnn/plugin.h>

#include "cursor.h"
#include "shape_io.h"
#include "sink.h"
#include "vctx.h"

/* The lookup of ctx's plugins (ctx may be NULL: nothing is provided). Its
 * self is ctx: valid while ctx is. */
nnn_lookup_t nnn_ext_lookup(const nnn_ctx_t *ctx);
NNN_NODISCARD nnn_status_t nnn_wr_ext(nnn_sink_t *w, nnn_ext_kind_t k, const nnn_ext_t *ext);
uint64_t nnn_ext_size(nnn_ext_kind_t k, const nnn_ext_t *ext);
uint64_t nnn_ext_params(const nnn_ext_t *ext);
int nnn_ext_tensors(const nnn_ext_t *ext, nnn_named_tensor_t *out, int max);
const char *nnn_ext_title(nnn_ext_kind_t k, const nnn_ext_t *ext);
size_t nnn_ext_format(nnn_ext_kind_t k, const nnn_ext_t *ext, char *buf, size_t size);
/* `owner` is the nnn_layer_t or nnn_activation_t holding ext. */
void nnn_v_ext(nnn_vctx_t *v, nnn_ext_kind_t k, const void *owner, const nnn_ext_t *ext);
void nnn_io_ext(nnn_ext_kind_t k, const void *owner, const nnn_ext_t *ext, nnn_io_t *io);
/* The output shape of a plugin layer (io->kind NNN_IO_PLUGIN), by its infer. */
nnn_status_t nnn_ext_infer(const nnn_io_t *io, const nnn_shape_t *in, nnn_shape_t *out, char *msg, size_t size);

#endif
