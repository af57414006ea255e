/* nnn/plugin.h: the plugin ABI. What a plugin (.so) exports, what the host
 * hands it, and the descriptors of layer and activation types.
 *
 * A plugin exports exactly one symbol, NNN_PLUGIN_ENTRY_NAME, and never links
 * libnnn: everything it needs from the host comes through the nnn_host_t
 * table passed to its entry point. The entry point declares what the plugin
 * provides; the host checks all of it, then registers all of it or none.
 * Besides this table a plugin may use what this header includes: types,
 * records, macros and enums, and the header-only helpers, the `static
 * inline` functions (nnn_f32s_get, nnn_f32s_read, nnn_i32s_pick, ... in
 * <nnn/types.h>; nnn_tensor_numel in <nnn/records.h>). It declares no
 * function of libnnn: those (NNN_API, in <nnn/model.h>, <nnn/schema_gen.h>
 * and the other headers) are for applications. Build it as
 * docs/plugins.md says, with the nnnkit-plugin pkg-config module (no
 * libnnn; -shared -Wl,--no-undefined):
 *   cc $(pkg-config --cflags nnnkit-plugin) -o mine.so mine.c mine_gen.c \
 *      $(pkg-config --libs nnnkit-plugin)
 *
 * Compatibility: the plugin's ABI major must equal the host's and its minor
 * must not exceed the host's. Every struct that crosses the boundary starts
 * with its size, and tables only ever grow at the end, so a host reads only
 * the fields a plugin's size covers. The records a plugin reads (nnn_layer_t,
 * nnn_activation_t, ...) are generated from the schema, and growing the
 * schema can move their members: a plugin declares the layout it was built
 * against (NNN_SCHEMA_LAYOUT), and the host refuses any other. See
 * docs/plugins.md.
 */
#ifndef NNN_PLUGIN_H
#define NNN_PLUGIN_H

#include <stdarg.h>

/* Types, records and constants only: a translation unit that includes
 * this header alone sees no function of libnnn (tests/gen checks it). */
#include <nnn/api.h>
#include <nnn/compat.h>
#include <nnn/records.h>
#include <nnn/shape_types.h>
#include <nnn/status_codes.h>

#define NNN_ABI_MAJOR 1
/* 1.1: host threads and the activation in nnn_kernel_args_t; descriptors
 * end with `record`, the fields of a plugin's own type as data (the JSON
 * form uses it). Plugins built for 1.0 load and run as before.
 * 1.2: host->rule_bounds, range rules with open or absent bounds; and
 * nnn_plugin_info_t ends with `schema_layout`, the layout of the
 * generated records the plugin was built against; a plugin built for 1.0
 * or 1.1 is taken to have the first recorded one (NNN_SCHEMA_LAYOUT_FIRST)
 * and loads and runs as before while that is the host's.
 * 1.3: descriptors end with `title`, the type's title from the fragment
 * ("MaxPool"), which info, graph and map show; without it, the name; and
 * layer descriptors then with `work_bytes`, the memory a kernel will
 * allocate, which the host counts against max_tensor_bytes.
 * 1.4: nnn_kernel_args_t ends with `compat`, the run's compatibility
 * flags (nnn/compat.h): a Conv kernel asked for NNN_COMPAT_CONV_ORIGINAL
 * computes the original framework's convolution.
 * 1.5: descriptors end with `onnx_export`, the type's ONNX export hook
 * (optional), and nnn_host_t with the functions it builds the graph with
 * (nnn/onnx.h). A type without one is refused by ONNX export, by name.
 * 1.6: nnn_host_t ends with the host's memory and threads (mem_big,
 * mem_free, pool_new, pool_free, pool_workers, pool_run, cpus), so a
 * plugin's kernels need no copy of libnnn's code for them, and with
 * `shape_format`, the host's one shape printer; nnn_kernel_args_t ends
 * with `pad`, the padding the shape engine gave each spatial axis of a
 * window layer: with `in` and `out` the whole geometry, which a kernel
 * runs rather than derives. Plugins built for 1.0 to 1.5 load and run as
 * before.
 * 1.7: the entry point's symbol is stamped with the schema layout
 * (NNN_PLUGIN_ENTRY expands to nnn_plugin_entry_l<layout>), so a plugin
 * whose info leaves schema_layout 0 (the positional info of earlier docs)
 * builds and loads; a new layer ID may have no fields of its own
 * (body_size 0, as nnngen gives a fragment's type without a record);
 * descriptors end with `onnx_import`, the reading back of what
 * onnx_export writes, nnn_host_t with the onnx_* functions it reads the
 * graph with, so .nnn -> .onnx -> .nnn holds for a plugin's types; and
 * nnn_host_t ends with the readers and writers of element types the
 * schema declares without a named reader (rd_num, rd_nums, wr_num,
 * wr_nums: f16, bf16, i8, u16, f64, arrays of them) and rule_dims_count,
 * dims_product over data of any element type; nnn_prim_t gains
 * NNN_PRIM_NUM_OF and NNN_PRIM_NUMS_OF (nnn/types.h). Nothing before moves:
 * plugins built for 1.0 to 1.6 load and run as before.
 * 1.8: nnn_host_t ends with ONNX's element types: onnx_elems, an
 * initializer of any element type the schema declares (its bytes as
 * they are, of the ONNX type nnn_onnx_dtype names), and for import
 * onnx_const_elems and onnx_set_tensor_const, a tensor field set from a
 * typed initializer, its type checked against the field's. Plugins built
 * for 1.0 to 1.7 load and run as before. */
#define NNN_ABI_MINOR 8

/* The one exported symbol. Its name never depends on the file name; since
 * ABI 1.7 it ends with the schema layout the plugin is compiled against
 * (nnn_plugin_entry_l5cf5ddf9: NNN_SCHEMA_LAYOUT_ENTRY, <nnn/records_gen.h>),
 * so a plugin that writes its entry point with this macro declares its
 * layout whatever its nnn_plugin_info_t says (an info filled by hand before
 * 1.2 left schema_layout 0). */
#define NNN_PLUGIN_ENTRY NNN_SCHEMA_LAYOUT_ENTRY
#define NNN_PLUGIN_ENTRY_NAME NNN_SCHEMA_LAYOUT_ENTRY_NAME
/* What the name of the entry point stamped with layout L is: this prefix and
 * L as 8 lowercase hex digits. */
#define NNN_PLUGIN_ENTRY_PREFIX "nnn_plugin_entry_l"
/* The entry point of a plugin built before ABI 1.7, unstamped: its layout is
 * the one its info declares. */
#define NNN_PLUGIN_ENTRY_LEGACY_NAME "nnn_plugin_entry"

#if defined(__GNUC__)
#define NNN_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define NNN_PLUGIN_EXPORT
#endif

/* Opaque to plugins. */
typedef struct nnn_decl nnn_decl_t; /* what a plugin declares, during its entry point */
typedef struct nnn_cur nnn_cur_t;   /* a decoding cursor */
typedef struct nnn_sink nnn_sink_t; /* an encoding sink */
typedef struct nnn_vctx nnn_vctx_t; /* a validation context */
typedef struct nnn_host nnn_host_t;
typedef struct nnn_pool nnn_pool_t; /* the host's threads (ABI 1.1) */
/* The most threads one parallel_for or pool_run call uses: the caller and
 * 254 workers. */
#define NNN_POOL_MAX_THREADS 255
/* Chunk `chunk` of some work, run on the thread numbered `slot` (ABI 1.1). */
typedef void (*nnn_task_fn)(void *ctx, int64_t chunk, int slot);
typedef struct nnn_activation_type nnn_activation_type_t;
typedef struct nnn_onnx_graph nnn_onnx_graph_t; /* an ONNX graph being built (ABI 1.5) */
typedef struct nnn_onnx_match nnn_onnx_match_t; /* nodes of an ONNX graph being read (ABI 1.7) */

/* Where an input of a node offered to an onnx_import hook comes from
 * (host->onnx_input, ABI 1.7); a value >= 0 is the offered node of that
 * index whose output it is. */
enum nnn_onnx_from {
	NNN_ONNX_FROM_X = -1,     /* the value entering the offered nodes: the layer's input */
	NNN_ONNX_FROM_CONST = -2, /* a constant (an initializer or a Constant node) */
	NNN_ONNX_FROM_OTHER = -3  /* anything else, or no such input */
};

/* An entry of a "dims" rule's pattern (host->rule_dims; generated code
 * builds these from the schema). */
typedef enum nnn_pat_kind {
	NNN_PAT_EQ,      /* equals a field's value */
	NNN_PAT_ANY,     /* "*": >= 0 */
	NNN_PAT_POS,     /* "+": >= 1 */
	NNN_PAT_POS_MANY /* "+...": one or more dims, each >= 1 */
} nnn_pat_kind_t;

typedef struct nnn_pat {
	nnn_pat_kind_t kind;
	int64_t value;   /* NNN_PAT_EQ */
	const char *ref; /* the field it refers to, for messages */
} nnn_pat_t;

/* The bounds of a "range" rule (host->rule_bounds, ABI 1.2): which it has,
 * and which of those exclude their own value. */
enum nnn_bound {
	NNN_BOUND_MIN = 1,      /* value >= min */
	NNN_BOUND_MAX = 2,      /* value <= max */
	NNN_BOUND_MIN_OPEN = 4, /* with NNN_BOUND_MIN: value > min */
	NNN_BOUND_MAX_OPEN = 8  /* with NNN_BOUND_MAX: value < max */
};

/* Who the plugin is. Filled by the plugin (NNN_PLUGIN_INFO), passed to
 * host->declare. */
typedef struct nnn_plugin_info {
	uint32_t size;        /* sizeof(nnn_plugin_info_t) */
	uint16_t abi_major;   /* NNN_ABI_MAJOR the plugin was built with */
	uint16_t abi_minor;   /* NNN_ABI_MINOR the plugin was built with */
	const char *name;     /* short name, "builtin" */
	const char *version;  /* free text, "1.0" */
	/* ABI 1.2: NNN_SCHEMA_LAYOUT the plugin was built with (never 0). The
	 * host refuses a plugin whose layout is not its own: the generated
	 * records' members would be where the plugin does not look. */
	uint32_t schema_layout;
} nnn_plugin_info_t;

/* The info of a plugin built against these headers:
 *   static const nnn_plugin_info_t info = NNN_PLUGIN_INFO("mine", "1.0"); */
#define NNN_PLUGIN_INFO(name_, version_)                                                        \
	{ .size = sizeof(nnn_plugin_info_t), .abi_major = NNN_ABI_MAJOR, .abi_minor = NNN_ABI_MINOR, \
	  .name = (name_), .version = (version_), .schema_layout = NNN_SCHEMA_LAYOUT }

/* An attribute of an ONNX node (ABI 1.5, host->onnx_node). */
typedef enum nnn_onnx_attr_kind {
	NNN_ONNX_ATTR_INT,
	NNN_ONNX_ATTR_FLOAT,
	NNN_ONNX_ATTR_INTS,
	NNN_ONNX_ATTR_STRING
} nnn_onnx_attr_kind_t;
typedef struct nnn_onnx_attr {
	const char *name;
	nnn_onnx_attr_kind_t kind;
	int64_t i;           /* NNN_ONNX_ATTR_INT */
	float f;             /* NNN_ONNX_ATTR_FLOAT */
	const int64_t *ints; /* NNN_ONNX_ATTR_INTS: n of them */
	int32_t n;
	const char *s;       /* NNN_ONNX_ATTR_STRING */
} nnn_onnx_attr_t;

/* The ONNX TensorProto data type of an element type (ABI 1.8): FLOAT 1,
 * UINT8 2, INT8 3, UINT16 4, INT16 5, INT32 6, INT64 7, BOOL 9, FLOAT16
 * 10, DOUBLE 11, UINT32 12, UINT64 13, BFLOAT16 16; 0 when ONNX has none
 * (a Cast's `to` takes these numbers). */
static inline int32_t nnn_onnx_dtype(nnn_ekind_t kind, int width)
{
	switch (kind) {
	case NNN_EK_INT:
		return width == 1 ? 3 : width == 2 ? 5 : width == 4 ? 6 : width == 8 ? 7 : 0;
	case NNN_EK_UINT:
		return width == 1 ? 2 : width == 2 ? 4 : width == 4 ? 12 : width == 8 ? 13 : 0;
	case NNN_EK_FLOAT:
		return width == 2 ? 10 : width == 4 ? 1 : width == 8 ? 11 : 0;
	case NNN_EK_BFLOAT:
		return width == 2 ? 16 : 0;
	case NNN_EK_BOOL:
		return width == 1 ? 9 : 0;
	default:
		return 0;
	}
}
#define NNN_ONNX_DTYPE_FLOAT 1 /* nnn_onnx_dtype(NNN_EK_FLOAT, 4): a Cast to float32 */

/* Everything a forward kernel gets. Shapes are batch-first. */
typedef struct nnn_kernel_args {
	uint32_t size;            /* sizeof(nnn_kernel_args_t) */
	const nnn_layer_t *layer; /* the decoded layer (its body: core struct or ext.body) */
	const void *body;         /* the layer type's own fields */
	void *state;              /* from prepare, or NULL */
	const nnn_shape_t *in;    /* input shape */
	const nnn_shape_t *out;   /* output shape, as infer said */
	const float *x;           /* input, nnn_shape numel of `in` floats */
	float *y;                 /* output, numel of `out` floats; never aliases x */
	int threads;              /* threads the kernel may use */

	/* ---- ABI 1.1: read these only when `size` covers them ---- */

	/* The plan's threads, kept for the plan's life, so they are awake from
	 * one layer to the next: parallel_for(pool, threads, n, fn, ctx) runs
	 * fn(ctx, c, slot) once for every chunk c in [0, n) on at most
	 * `threads` threads (the pool may give fewer), and returns when all are
	 * done. The caller is slot 0, others 1 .. threads-1: per-slot scratch
	 * needs no lock. Slot s first takes chunks s*n/t .. (s+1)*n/t - 1 of
	 * the t threads in use, in order, then any the others have not taken:
	 * chunks that follow the batch keep each part of it on the same thread
	 * from layer to layer (and in its cache), yet any thread may compute
	 * any chunk, so a chunk's result must not depend on its slot. fn must
	 * not call parallel_for.
	 * Both NULL when the plan runs on one thread (or could not start
	 * any): a kernel then runs on the calling thread, or on its own. */
	nnn_pool_t *pool;
	void (*parallel_for)(nnn_pool_t *pool, int threads, int64_t n, nnn_task_fn fn, void *ctx);
	/* The activation the host applies to y after forward (its kernel and
	 * parameters, as the host would call act->forward(&layer->activation,
	 * act_params, out, y, threads)). A kernel may apply it itself instead,
	 * in its own chunks while y is in cache, if the result is the same:
	 * then it sets *act_done = true and the host skips it. NULL: no
	 * activation to fuse. */
	const nnn_activation_type_t *act;
	const void *act_params;
	bool *act_done;

	/* ---- ABI 1.4: read it only when `size` covers it ---- */

	/* The run's compatibility flags (enum nnn_compat, nnn/compat.h; 0: the
	 * spec). A kernel that computes something the flags name computes it
	 * that way: NNN_COMPAT_CONV_ORIGINAL, the original framework's Conv
	 * (nnn_conv_original_taps says which taps it sums how often). */
	uint32_t compat;

	/* ---- ABI 1.6: shapes the engine computed; read it only when `size` covers it ---- */

	/* The zero padding of a layer whose schema io is a window (explicit,
	 * or its padding type's formulas for its dilated window): pad[2 * j]
	 * before and pad[2 * j + 1] after spatial axis j (in->dims[1 + j]),
	 * for in->rank - 2 axes. NULL for any other layer. A kernel pads so
	 * and computes `out`; it checks only that its loops can. */
	const int64_t *pad;
} nnn_kernel_args_t;

/* A layer type. Functions marked "codec" are generated by gen/nnngen.lua in
 * plugin mode from the plugin's schema fragment; they must be NULL exactly
 * when the ID is defined by the host's own schema (which then decodes it). */
typedef struct nnn_layer_type {
	uint32_t size;    /* sizeof(nnn_layer_type_t) */
	uint8_t id;       /* layer ID, 0-255 */
	const char *name; /* "maxpool" */

	/* codec: the type's own fields, decoded into body_size bytes */
	size_t body_size;
	nnn_status_t (*decode)(const nnn_host_t *h, nnn_cur_t *c, void *body);
	nnn_status_t (*encode)(const nnn_host_t *h, nnn_sink_t *w, const void *body);
	uint64_t (*encoded_size)(const void *body);
	void (*validate)(const nnn_host_t *h, nnn_vctx_t *v, const nnn_layer_t *layer, const void *body);
	/* parameter tensors of the type's own fields, in file order */
	int (*tensors)(const void *body, nnn_named_tensor_t *out, int max);
	/* the type's scalar fields as "name=value ..." (optional) */
	size_t (*format)(const void *body, char *buf, size_t size);

	/* compute: output shape for an input shape, or a message saying why not */
	nnn_status_t (*infer)(const nnn_layer_t *layer, const void *body, const nnn_shape_t *in, nnn_shape_t *out,
	                      char *msg, size_t msg_size);
	/* optional: per-plan state (packed weights...), freed by release */
	nnn_status_t (*prepare)(const nnn_layer_t *layer, const void *body, const nnn_shape_t *in, void **state,
	                        char *msg, size_t msg_size);
	void (*release)(void *state);
	/* y = layer(x), for the whole batch */
	nnn_status_t (*forward)(const nnn_kernel_args_t *a, char *msg, size_t msg_size);

	/* codec, ABI 1.1: the fields of body_size bytes as data (generated, in
	 * the CODEC macro); NULL for core IDs. Without it (a plugin built for
	 * 1.0) the type still decodes and runs, but has no JSON form. */
	const nnn_rdesc_t *record;

	/* ABI 1.3: the title people read ("MaxPool"; generated, in the TYPE
	 * macro, from the fragment's `title`); NULL: the name is shown. */
	const char *title;

	/* ABI 1.3, optional: the most bytes prepare and forward together will
	 * allocate for this layer on input `in` (output `out`, as infer or the
	 * schema says) with up to `threads` threads: its state (packed
	 * weights...) and forward's scratch, every thread's; UINT64_MAX when
	 * more than that. Called before prepare; the host refuses, naming the
	 * layer, a plan where it exceeds max_tensor_bytes (nnn/run.h). NULL: the
	 * kernel's memory is not counted. */
	uint64_t (*work_bytes)(const nnn_layer_t *layer, const void *body, const nnn_shape_t *in, const nnn_shape_t *out,
	                       int threads);
	/* ABI 1.5, optional: adds the layer, without its activation, to ONNX
	 * graph g with the host's onnx_* functions. `x` names its input value
	 * (channels-last, shape `in`, as far as known); it sets *y to the name
	 * of its output value (channels-last, as forward gives it). Fails with
	 * h->onnx_fail saying why when this layer cannot be expressed. NULL:
	 * the type does not export, and export refuses it by name. */
	nnn_status_t (*onnx_export)(const nnn_host_t *h, nnn_onnx_graph_t *g, const nnn_layer_t *layer,
	                            const void *body, const nnn_pshape_t *in, const char *x, const char **y);

	/* ABI 1.7, optional: reads back what onnx_export writes. ONNX import
	 * offers the hook the nodes from the chain's value on (node k of m with
	 * h->onnx_op(m, k) ...); when they start with its pattern the hook
	 * gives the type's fields it finds (h->onnx_set_*: the tensors and the
	 * layer's bias; fields the graph does not hold come from the model's
	 * "nnn.fields" metadata) and returns how many nodes it takes; 0 when
	 * not its pattern. Its last node's output is the layer's, channels-last
	 * as forward gives it. NULL: the type is not imported. */
	int (*onnx_import)(const nnn_host_t *h, nnn_onnx_match_t *m);
} nnn_layer_type_t;

/* An activation. Codec functions as for layers (NULL for schema IDs). */
struct nnn_activation_type {
	uint32_t size;    /* sizeof(nnn_activation_type_t) */
	uint8_t id;       /* activation ID, 0-255 */
	const char *name; /* "swish" */

	size_t params_size;
	nnn_status_t (*decode)(const nnn_host_t *h, nnn_cur_t *c, void *params);
	nnn_status_t (*encode)(const nnn_host_t *h, nnn_sink_t *w, const void *params);
	uint64_t (*encoded_size)(const void *params);
	void (*validate)(const nnn_host_t *h, nnn_vctx_t *v, const void *params);
	size_t (*format)(const void *params, char *buf, size_t size);

	/* x = act(x) in place over a tensor of `shape` (the last axis is the
	 * feature axis, for softmax). `act` is the decoded activation. */
	nnn_status_t (*forward)(const nnn_activation_t *act, const void *params, const nnn_shape_t *shape, float *x,
	                        int threads);

	/* codec, ABI 1.1: as for layers */
	const nnn_rdesc_t *record;

	/* ABI 1.3: as for layers ("Swish") */
	const char *title;
	/* ABI 1.5, optional: as for layers; `shape` is the tensor's, the last
	 * axis the feature axis. */
	nnn_status_t (*onnx_export)(const nnn_host_t *h, nnn_onnx_graph_t *g, const nnn_activation_t *act,
	                            const void *params, const nnn_pshape_t *shape, const char *x, const char **y);
	/* ABI 1.7, optional: as for layers; the activation found is the one
	 * of the layer before. */
	int (*onnx_import)(const nnn_host_t *h, nnn_onnx_match_t *m);
};

/* The host's functions. Grows only at the end; check `size` before using a
 * field added after the ABI version you need. */
struct nnn_host {
	uint32_t size; /* sizeof(nnn_host_t) as the host knows it */
	uint16_t abi_major, abi_minor;

	/* ---- declaring: only during the entry point ---- */
	nnn_status_t (*declare)(nnn_decl_t *d, const nnn_plugin_info_t *info);
	nnn_status_t (*add_layer)(nnn_decl_t *d, const nnn_layer_type_t *t);
	nnn_status_t (*add_activation)(nnn_decl_t *d, const nnn_activation_type_t *t);
	/* Why init failed, for the host's message; returns NNN_E_PLUGIN. */
	nnn_status_t (*fail)(nnn_decl_t *d, const char *fmt, ...) NNN_PRINTF(2, 3);

	/* ---- codec, for generated plugin codecs (runtime/codec/cursor.h, sink.h, vctx.h) ---- */
	uint64_t (*cur_pos)(const nnn_cur_t *c);
	size_t (*cur_push)(nnn_cur_t *c, const char *name);
	size_t (*cur_index)(nnn_cur_t *c, int64_t i);
	void (*cur_pop)(nnn_cur_t *c, size_t mark);
	nnn_status_t (*rd_u8)(nnn_cur_t *c, const char *name, const char *doc, const nnn_type_t *type, uint8_t *out,
	                      uint64_t *at);
	nnn_status_t (*rd_i32)(nnn_cur_t *c, const char *name, const char *doc, const nnn_type_t *type, int32_t *out,
	                       uint64_t *at);
	nnn_status_t (*rd_u64)(nnn_cur_t *c, const char *name, const char *doc, const nnn_type_t *type, uint64_t *out,
	                       uint64_t *at);
	nnn_status_t (*rd_f32)(nnn_cur_t *c, const char *name, const char *doc, const nnn_type_t *type, float *out,
	                       uint64_t *at);
	nnn_status_t (*rd_bool)(nnn_cur_t *c, const char *name, const char *doc, const nnn_type_t *type, bool *out,
	                        uint64_t *at);
	nnn_status_t (*rd_string)(nnn_cur_t *c, const char *name, const char *doc, const nnn_type_t *type,
	                          nnn_str_t *out, uint64_t *at);
	nnn_status_t (*rd_i32_array)(nnn_cur_t *c, const char *name, const char *doc, const nnn_type_t *type,
	                             nnn_i32s_t *out, uint64_t *at);
	nnn_status_t (*rd_f32_array)(nnn_cur_t *c, const char *name, const char *doc, const nnn_type_t *type,
	                             nnn_f32s_t *out, uint64_t *at);
	nnn_status_t (*cur_enum)(nnn_cur_t *c, const char *name, const char *tag_kind, const nnn_type_t *type,
	                         int64_t found, uint64_t at);
	nnn_status_t (*rule_dims_product)(nnn_cur_t *c, nnn_i32s_t dims, uint64_t dims_at, nnn_f32s_t data,
	                                  uint64_t data_at);
	nnn_status_t (*wr_u8)(nnn_sink_t *w, uint8_t v);
	nnn_status_t (*wr_i32)(nnn_sink_t *w, int32_t v);
	nnn_status_t (*wr_u64)(nnn_sink_t *w, uint64_t v);
	nnn_status_t (*wr_f32)(nnn_sink_t *w, float v);
	nnn_status_t (*wr_bool)(nnn_sink_t *w, bool v);
	nnn_status_t (*wr_string)(nnn_sink_t *w, nnn_str_t v);
	nnn_status_t (*wr_i32_array)(nnn_sink_t *w, nnn_i32s_t v);
	nnn_status_t (*wr_f32_array)(nnn_sink_t *w, nnn_f32s_t v);
	size_t (*v_push)(nnn_vctx_t *v, const char *name);
	void (*v_pop)(nnn_vctx_t *v, size_t mark);
	void (*rule_min)(nnn_vctx_t *v, const char *name, int64_t value, int64_t min, uint64_t at);
	void (*rule_range)(nnn_vctx_t *v, const char *name, double value, double min, double max, bool max_open,
	                   uint64_t at);
	void (*rule_finite)(nnn_vctx_t *v, const char *name, float value, uint64_t at);
	/* nnn_rule_dims: pat is an array of nnn_pat_t (codec.h layout, ABI-stable) */
	void (*rule_dims)(nnn_vctx_t *v, const char *name, nnn_i32s_t dims, uint64_t at, const void *pat,
	                  size_t npat);
	void (*v_problem)(nnn_vctx_t *v, nnn_status_t code, const char *name, uint64_t at, const char *fmt, ...)
		NNN_PRINTF(5, 6);

	/* ---- ABI 1.2: use only when `size` covers it ---- */

	/* A "range" rule: value within the bounds `flags` names (enum
	 * nnn_bound; min or max is ignored when its flag is absent); NaN always
	 * fails. Generated code of ABI 1.2 calls it for every range rule;
	 * rule_range (closed min, max) stays for plugins built before. */
	void (*rule_bounds)(nnn_vctx_t *v, const char *name, double value, double min, double max, unsigned flags,
	                    uint64_t at);
	/* ---- ABI 1.5: ONNX export, only inside an onnx_export hook ---- */
	/* A float initializer of `rank` dims and their product of values
	 * (host floats, copied); returns its value name, unique in the graph
	 * (from `hint`), owned by g. NULL: out of memory (g remembers it). */
	const char *(*onnx_floats)(nnn_onnx_graph_t *g, const char *hint, const int64_t *dims, int rank,
	                           const float *data);
	/* An int64 initializer of n values, rank 1 (a Reshape's shape). */
	const char *(*onnx_ints)(nnn_onnx_graph_t *g, const char *hint, const int64_t *v, int n);
	/* A node of type `op` (default domain) with `nin` inputs and one output;
	 * returns the output's value name (unique, from `hint`), owned by g. */
	const char *(*onnx_node)(nnn_onnx_graph_t *g, const char *op, const char *hint, const char *const *in,
	                         int nin, const nnn_onnx_attr_t *attrs, int nattr);
	/* Why the hook cannot export this layer; returns NNN_E_ONNX_EXPORT. */
	nnn_status_t (*onnx_fail)(nnn_onnx_graph_t *g, const char *fmt, ...) NNN_PRINTF(2, 3);

	/* ---- ABI 1.6: memory and threads, from prepare, forward and release ---- */

	/* A buffer of n bytes that may be large (packed weights, scratch), on a
	 * 64-byte boundary; from 2 MiB on, on a 2 MiB one, the kernel asked to
	 * back it with huge pages (a hint: a page fault per 4 KiB page costs
	 * more than the work on it in a virtual machine). NULL: out of memory.
	 * Free it with mem_free (NULL is harmless). */
	void *(*mem_big)(size_t n);
	void (*mem_free)(void *p);
	/* Threads of a kernel's own, for a forward call that offers none (a
	 * caller of forward other than a plan: tests, benchmarks): a pool of
	 * `workers` (1 .. NNN_POOL_MAX_THREADS - 1, else capped) threads, or
	 * NULL when any cannot be started; owned, pool_free joins them (NULL is
	 * harmless). pool_run is parallel_for (nnn_kernel_args_t) on such a
	 * pool: every chunk on the caller when the pool is NULL. One call at a
	 * time per pool. */
	nnn_pool_t *(*pool_new)(int workers);
	void (*pool_free)(nnn_pool_t *p);
	int (*pool_workers)(const nnn_pool_t *p);
	void (*pool_run)(nnn_pool_t *p, int threads, int64_t n, nnn_task_fn fn, void *ctx);
	/* Online CPUs, 1 to 1024: threads beyond are not worth asking for. */
	int (*cpus)(void);

	/* Shapes as the host prints them: nnn_shape_format_as (nnn/shape.h), s in
	 * `style` into buf, cut to size; returns buf. A message that shows a shape shows it so. */
	char *(*shape_format)(const nnn_shape_t *s, const nnn_dims_style_t *style, char *buf, size_t size);

	/* ---- ABI 1.7: ONNX import, only inside an onnx_import hook ---- */

	/* Node k of those offered (0: the first, which takes the layer's
	 * input): its op type ("MaxPool"; default domain only), or NULL past
	 * the graph's end. */
	const char *(*onnx_op)(const nnn_onnx_match_t *m, int k);
	/* Where input `in` of node k comes from: enum nnn_onnx_from, or the
	 * index (< k) of the offered node whose output it is. */
	int (*onnx_input)(const nnn_onnx_match_t *m, int k, int in);
	/* Node k's attribute `name`: ints (or one int) into v, up to max (v
	 * may be NULL when max is 0), returning how many it has; a float into
	 * *v, returning 1. -1 when it has none of that name and kind. */
	int (*onnx_attr_ints)(const nnn_onnx_match_t *m, int k, const char *name, int64_t *v, int max);
	int (*onnx_attr_float)(const nnn_onnx_match_t *m, int k, const char *name, float *v);
	/* The float constant input `in` of node k is: its dims (up to
	 * NNN_MAX_RANK) and rank, and its values (host floats, valid while the
	 * hook runs); returns the number of values, -1 when not a float
	 * constant. */
	int64_t (*onnx_const)(const nnn_onnx_match_t *m, int k, int in, int64_t *dims, int *rank, const float **data);
	/* The type's fields the hook found, by their names in the fragment
	 * ("gamma"; "bias", the layer's own): a tensor (values copied), a
	 * number field (f32, i32, u8...; since ABI 1.8 a bool, true when
	 * not 0) or an i32 array. NNN_E_NOMEM, or NNN_E_ONNX when the name is
	 * used twice. */
	nnn_status_t (*onnx_set_tensor)(nnn_onnx_match_t *m, const char *field, const int64_t *dims, int rank,
	                                const float *data);
	nnn_status_t (*onnx_set_number)(nnn_onnx_match_t *m, const char *field, double v);
	nnn_status_t (*onnx_set_ints)(nnn_onnx_match_t *m, const char *field, const int64_t *v, int n);

	/* ---- ABI 1.7, too: element types by kind and width (generated codecs) ---- */

	/* A scalar of `kind` and `width` bytes into `out`, the member of the C
	 * type of that width (float16 and bfloat16: raw uint16_t bits). */
	nnn_status_t (*rd_num)(nnn_cur_t *c, const char *name, const char *doc, nnn_ekind_t kind, int width, void *out,
	                       uint64_t *at);
	/* An int32 count, checked against the bytes left, then a zero-copy view of its elements. */
	nnn_status_t (*rd_nums)(nnn_cur_t *c, const char *name, const char *doc, nnn_ekind_t kind, int width,
	                        nnn_elems_t *out, uint64_t *at);
	nnn_status_t (*wr_num)(nnn_sink_t *w, int width, const void *v);
	nnn_status_t (*wr_nums)(nnn_sink_t *w, int width, nnn_elems_t v);
	/* rule_dims_product for data of any element type: its element count. */
	nnn_status_t (*rule_dims_count)(nnn_cur_t *c, nnn_i32s_t dims, uint64_t dims_at, int32_t count,
	                                uint64_t data_at);

	/* ---- ABI 1.8: element types in ONNX ---- */

	/* Export, in an onnx_export hook: an initializer of `rank` dims and
	 * their product of elements of `kind` and `width` (a tensor's data,
	 * nnn_elems_t bytes: little-endian), of ONNX type nnn_onnx_dtype(kind,
	 * width), its bytes copied as they are into raw_data (NaN payloads and
	 * -0 kept). Returns its value name, as onnx_floats; NULL when ONNX has
	 * no such type (g says so) or out of memory. A graph ONNX runtimes run
	 * in float casts it: Cast(to = NNN_ONNX_DTYPE_FLOAT). */
	const char *(*onnx_elems)(nnn_onnx_graph_t *g, const char *hint, const int64_t *dims, int rank,
	                          nnn_ekind_t kind, int width, const void *bytes);
	/* Import, in an onnx_import hook: the constant input `in` of node k of
	 * any type: its dims (up to NNN_MAX_RANK), rank, ONNX data type and
	 * little-endian bytes (valid while the hook runs); returns the number
	 * of elements, -1 when not a constant or its data are not raw bytes
	 * (raw_data, or FLOAT and INT64 in float_data and int64_data). */
	int64_t (*onnx_const_elems)(const nnn_onnx_match_t *m, int k, int in, int64_t *dims, int *rank, int32_t *dtype,
	                            const void **bytes);
	/* Import: the type's tensor field `field` ("weights") is the constant
	 * input `in` of node k as it is, dims and bytes. Its ONNX type must be
	 * the field's element type (a float16 tensor's data: FLOAT16): else
	 * NNN_E_ONNX, and the import fails with a message naming the node,
	 * the initializer, its type and the type expected. NNN_E_NOMEM; and
	 * NNN_E_ONNX for a name used twice or not a tensor field. */
	nnn_status_t (*onnx_set_tensor_const)(nnn_onnx_match_t *m, const char *field, int k, int in);
};

/* The plugin's entry point:
 *   NNN_PLUGIN_EXPORT nnn_status_t NNN_PLUGIN_ENTRY(const nnn_host_t *h, nnn_decl_t *d);
 * It calls h->declare once, then h->add_layer / h->add_activation for each
 * type, and returns NNN_OK (or h->fail(d, "why")). Descriptors and the
 * strings they point to must stay valid while the plugin is loaded (static
 * storage). It must not keep `d`. */
typedef nnn_status_t (*nnn_plugin_entry_fn)(const nnn_host_t *h, nnn_decl_t *d);
NNN_PLUGIN_EXPORT nnn_status_t NNN_PLUGIN_ENTRY(const nnn_host_t *h, nnn_decl_t *d);

#endif
