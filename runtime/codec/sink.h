/* sink.h (internal): the writers the generated encoder is built on
 * (encode.c), into a sink that takes the bytes (memory, or a file:
 * write.c). */
#ifndef NNN_SINK_H
#define NNN_SINK_H

#include <nnn/plugin.h>

#include "path.h"

typedef struct nnn_sink nnn_sink_t;
struct nnn_sink {
	/* Writes n bytes or fails; `self` is the sink. */
	nnn_status_t (*write)(nnn_sink_t *self, const void *p, size_t n);
	nnn_diags_t *diags;
	nnn_path_t path;
};

NNN_NODISCARD nnn_status_t nnn_wr_u8(nnn_sink_t *w, uint8_t v);
NNN_NODISCARD nnn_status_t nnn_wr_i32(nnn_sink_t *w, int32_t v);
NNN_NODISCARD nnn_status_t nnn_wr_u64(nnn_sink_t *w, uint64_t v);
NNN_NODISCARD nnn_status_t nnn_wr_f32(nnn_sink_t *w, float v);
NNN_NODISCARD nnn_status_t nnn_wr_bool(nnn_sink_t *w, bool v);
NNN_NODISCARD nnn_status_t nnn_wr_string(nnn_sink_t *w, nnn_str_t v);
NNN_NODISCARD nnn_status_t nnn_wr_i32_array(nnn_sink_t *w, nnn_i32s_t v);
NNN_NODISCARD nnn_status_t nnn_wr_f32_array(nnn_sink_t *w, nnn_f32s_t v);
/* An element type without a named writer (ABI 1.7): a scalar of `width`
 * bytes at v, in the C type of that width; an array of such elements. */
NNN_NODISCARD nnn_status_t nnn_wr_num(nnn_sink_t *w, int width, const void *v);
NNN_NODISCARD nnn_status_t nnn_wr_nums(nnn_sink_t *w, int width, nnn_elems_t v);
/* A value the encoder cannot write (unknown ID, negative count). */
NNN_NODISCARD nnn_status_t nnn_wr_fail(nnn_sink_t *w, nnn_status_t code, const char *name,
                                       const char *fmt, ...) NNN_PRINTF(4, 5);

#endif
