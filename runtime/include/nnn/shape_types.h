/* nnn/shape_types.h: shapes as far as they are known. Types and constants
 * only, no function: <nnn/plugin.h> includes it (an ONNX export hook gets
 * a nnn_pshape_t), and <nnn/shape.h> adds the shape engine.
 * nnn_shape_t, an exact shape, is in <nnn/types.h>.
 */
#ifndef NNN_SHAPE_TYPES_H
#define NNN_SHAPE_TYPES_H

#include <nnn/types.h>

#define NNN_DIM_UNKNOWN (-1)

/* A shape as far as it is known. */
typedef struct nnn_pshape {
	int32_t rank;               /* NNN_DIM_UNKNOWN when the rank is unknown */
	int64_t dims[NNN_MAX_RANK]; /* rank entries, NNN_DIM_UNKNOWN where unknown */
	int64_t last;               /* the last axis (also when the rank is unknown), or NNN_DIM_UNKNOWN */
} nnn_pshape_t;

/* A layer's input, as the previous layer gives it and this layer narrows it,
 * and its output. */
typedef struct nnn_layer_shapes {
	nnn_pshape_t in, out;
} nnn_layer_shapes_t;

/* How a shape is written (nnn_shape_format_as, nnn_dims_format): the one
 * printer of every shape nnnkit shows, in the notation each place needs. */
typedef struct nnn_dims_style {
	const char *open, *sep, *close; /* "[", ", ", "]" */
	const char *close1;  /* the close after exactly one dim when it differs (a Python tuple, "(5,)": ",)"); NULL: close */
	const char *unknown; /* a dim < 0 ("?", "null"); NULL: its number */
	int32_t most;        /* dims shown before ", ..."; 0: all */
} nnn_dims_style_t;

#endif
