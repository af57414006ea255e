/* nnn/shape.h: what a model does to shapes, layer by layer.
 *
 * One engine gives every shape nnnkit shows or checks (validate, build, map,
 * graph, info, run): each layer type's `io` entry in the schema says how it
 * maps its input shape to its output shape (dense features, N-D sliding
 * windows with stride, dilation and padding, element-wise, flatten,
 * reshape), and a plugin's layer type says it with its infer function.
 * Shapes are batch-first and channels-last.
 *
 * Without an input shape the engine still says what each layer's own fields
 * fix (a Dense layer's last axis, a Conv's rank and channels): a partial
 * shape, where NNN_DIM_UNKNOWN marks what is not known.
 */
#ifndef NNN_SHAPE_H
#define NNN_SHAPE_H

#include <nnn/api.h>
#include <nnn/model.h>
#include <nnn/shape_types.h> /* nnn_pshape_t, nnn_layer_shapes_t, nnn_dims_style_t, NNN_DIM_UNKNOWN */
#include <nnn/status.h>


/* Every layer's shapes (out: layer_count entries). With an input shape
 * [batch, ..., features] they are exact up to the first layer that does not
 * fit, and partial past it; with input NULL, partial. Every problem found
 * (a layer that does not fit its input, a shape over 2^63 - 1 elements, a
 * layer whose own fields disagree) goes to diags, with the layer's field
 * path and byte offset; the return value is the first problem's code, or
 * NNN_OK. The model's other rules are not checked: see nnn_model_validate. */
NNN_API NNN_NODISCARD nnn_status_t nnn_model_shapes(const nnn_model_t *m, const nnn_shape_t *input,
                                                    nnn_layer_shapes_t *out, nnn_diags_t *diags);

/* Layer i's shapes as nnn_model_shapes_each finds them, in layer order,
 * with the ctx given to it; `s` is valid during the call. */
typedef void (*nnn_shapes_fn)(void *ctx, int32_t i, const nnn_layer_shapes_t *s);

/* nnn_model_shapes one layer at a time, with nothing kept per layer: each
 * gets every layer's shapes (exact with an input shape, as far as it fits;
 * partial past that or with input NULL), for callers that keep less than
 * an array of layer_count entries (nnnkit map and graph keep their text).
 * Problems and the result as nnn_model_shapes. */
NNN_API NNN_NODISCARD nnn_status_t nnn_model_shapes_each(const nnn_model_t *m, const nnn_shape_t *input,
                                                         nnn_shapes_fn each, void *ctx, nnn_diags_t *diags);

/* The input the layers fix, with a batch of 1, when they fix all of it and
 * the whole chain takes it: every dim of the first layer's input but the
 * batch, or (its rank open, as a Dense layer's [batch, ..., features]) the
 * last axis alone, [1, features]. False when a dim stays open (a Conv's
 * spatial sizes): without an input shape, shapes are then partial. Shapes
 * `nnnkit info`, map and graph show without --input-shape follow from it. */
NNN_API bool nnn_model_fixed_input(const nnn_model_t *m, nnn_shape_t *in);

/* The sliding window of a layer whose type's schema `io` is a window (a
 * Conv's is kernels.dims[1:-1]), as the shape engine applies it: which
 * layers slide one, and along which axes, is the schema's to say. */
typedef struct nnn_layer_window {
	int32_t n;               /* spatial axes; 0: none given by a field */
	int32_t k[NNN_MAX_RANK]; /* the window's size along each */
	const char *field;       /* the layer's field they are elements of ("kernels.dims") */
	int64_t first;           /* the element of that field k[0] is */
	uint64_t at;             /* that field's byte offset, or NNN_NO_OFFSET */
} nnn_layer_window_t;

/* Fills *w for layer L; false (w->n 0) when its type slides no window
 * whose sizes a field gives. */
NNN_API bool nnn_layer_window(const nnn_layer_t *L, nnn_layer_window_t *w);

/* Whether every dim of s is known. */
NNN_API bool nnn_pshape_exact(const nnn_pshape_t *s);

/* An exact shape as a partial one. */
NNN_API nnn_pshape_t nnn_pshape_of(const nnn_shape_t *s);

/* Formats s as "[?, 26, 26, 8]", or "[?, ..., 10]" / "[?, ...]" when the
 * rank is unknown, into buf; returns buf. */
NNN_API char *nnn_pshape_format(const nnn_pshape_t *s, char *buf, size_t size);

/* Formats s (nnn/validate.h's nnn_shape_format is this with "[", ", ",
 * "]") into buf, truncated to size; returns buf. */
NNN_API char *nnn_shape_format_as(const nnn_shape_t *s, const nnn_dims_style_t *style, char *buf, size_t size);

/* Formats a tensor's dims the same way. */
NNN_API char *nnn_dims_format(nnn_i32s_t dims, const nnn_dims_style_t *style, char *buf, size_t size);

#endif
