/* shape_io.h (internal): how a layer maps shapes, as generated code states
 * it from the schema's `io`, and the chain rule that applies it (shape.c).
 */
#ifndef NNN_SHAPE_IO_H
#define NNN_SHAPE_IO_H

#include <nnn/plugin.h>
#include <nnn/shape.h>

#include "vctx.h"

/* How a layer maps shapes, from its schema `io` entry (generated code fills
 * it; runtime/shape/shape.c is the one engine that applies it). */
typedef enum nnn_io_kind {
	NNN_IO_UNKNOWN,     /* no io: nothing is known past this layer */
	NNN_IO_FEATURES,    /* dense: contracts the last axis (or all, flattened) */
	NNN_IO_WINDOW,      /* N-D sliding window over [batch, d1..dn, channels] */
	NNN_IO_ELEMENTWISE, /* output shape = input shape */
	NNN_IO_FLATTEN,     /* [batch, product of the rest] */
	NNN_IO_RESHAPE,     /* [batch, shape...], one entry may be -1 */
	NNN_IO_PLUGIN       /* a plugin's layer: its infer gives the shape */
} nnn_io_kind_t;

/* Where a value of the io came from, for messages: the field's path
 * relative to the layer ("weights.dims"), the element (-1 for a scalar
 * field) and the field's byte offset. */
typedef struct nnn_io_src {
	const char *path;
	int64_t index;
	uint64_t at;
} nnn_io_src_t;

/* A per-axis list of the io (window, stride, dilation, padding, shape):
 * the values of a field or of a slice of it (list), or else `all` for
 * every axis. */
typedef struct nnn_io_ints {
	bool list;
	nnn_i32s_t v;
	int64_t all;
	int64_t base;     /* the field's element that v.v[0] is */
	nnn_io_src_t src; /* the whole field */
} nnn_io_ints_t;

/* Elements [from, to) of a, counting from the end when negative (to_end:
 * up to the end), as a list of the io. */
static inline nnn_io_ints_t nnn_io_list(nnn_i32s_t a, int64_t from, bool to_end, int64_t to, const char *path,
                                        uint64_t at)
{
	nnn_io_ints_t x = { .list = true, .src = { path, -1, at } };
	from = from < 0 ? from + a.n : from;
	to = to_end ? a.n : to < 0 ? to + a.n : to;
	from = from < 0 ? 0 : from > a.n ? a.n : from;
	to = to < from ? from : to > a.n ? a.n : to;
	x.v.v = a.v ? a.v + from : NULL;
	x.v.n = (int32_t)(to - from);
	x.base = from;
	return x;
}

typedef struct nnn_io {
	nnn_io_kind_t kind;
	nnn_io_src_t in_src; /* the field that takes the input, blamed when it does not fit */
	int64_t inputs;      /* features: contracted size; window, elementwise: channels, -1 any */
	int64_t outputs;     /* features, window: the output's last axis; -1: the input's */
	bool flatten;        /* features: reshape to [batch, -1] first */
	nnn_io_ints_t window, stride, dilation;
	nnn_io_ints_t pads;  /* window: [before1, after1, ...]; v NULL: from pad_fn, or none */
	nnn_pad_fn pad_fn;   /* window: the padding type's formulas (the io's, or a padding rule's on the list), or NULL */
	int64_t pad_type;
	nnn_io_ints_t shape; /* reshape */
	const nnn_layer_t *layer; /* plugin: the layer, whose type's infer gives shapes */
} nnn_io_t;

/* ---- the io kinds' shape rules, generated from gen/schema/io_kinds.lua ---- */
/* One spatial axis as a kind's `shape` formulas name it. The engine fills
 * the inputs, then each result in the order the formulas read them; a
 * result function reads only the members its formula names. */
typedef struct nnn_io_axis {
	int64_t s, before, after;         /* the axis' size and its padding */
	int64_t window, stride, dilation; /* the io's keys along the axis */
	int64_t k, room, out;             /* results: nnn_gen_window_<name> */
} nnn_io_axis_t;
int64_t nnn_gen_window_k(const nnn_io_axis_t *a);    /* the dilated window */
int64_t nnn_gen_window_room(const nnn_io_axis_t *a); /* < 0: the axis is too small */
int64_t nnn_gen_window_out(const nnn_io_axis_t *a);  /* the output's size */
/* The padding the engine gives each spatial axis j of a window layer:
 * pad[2j] before, pad[2j + 1] after (what run passes its kernel, ABI 1.6).
 * False when L's io is no window, or its fields do not give one (the
 * validator says why). */
bool nnn_layer_pads(const nnn_layer_t *L, int64_t pad[2 * NNN_MAX_RANK]);

/* The padding list a window layer's padding type implies for its window
 * sizes, whatever its own list holds (a spec that leaves the list out gets
 * it filled in): its length 2n, with the list field's name in *field; 0
 * when the layer has no such list or its type gives no formulas. */
int32_t nnn_layer_implied_pads(const nnn_layer_t *L, int32_t pad[2 * NNN_MAX_RANK], const char **field);

/* The layers the chain walks: io(elems, i, &out) gives layer i's io, for
 * i < n, one at a time (an nnn_io_t is 400 bytes: an array of them for a
 * model of many small layers would outweigh the model). broken (may be
 * NULL): broken[i] != 0 for a layer whose own checks failed, whose shape
 * is then unknown. */
typedef struct nnn_chain_src {
	void (*io)(const void *elems, int32_t i, nnn_io_t *out);
	const void *elems;
	const unsigned char *broken;
	int32_t n;
} nnn_chain_src_t;

/* Applies the layers' io from `input` (NULL: partial shapes only). Every
 * problem is reported through v under `name` ("layers"); out_shapes (exact
 * shapes, rank 0 where not exact; an array of src->n) and each (partial
 * shapes) may be NULL. */
void nnn_rule_chain(nnn_vctx_t *v, const char *name, const nnn_chain_src_t *src, const nnn_shape_t *input,
                    nnn_shape_t *out_shapes, nnn_shapes_fn each, void *ctx);

#endif
