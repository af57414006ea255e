/* nnn/onnx.h: a model as ONNX and back (docs/onnx.md).
 *
 * Export writes an ONNX ModelProto (opset NNN_ONNX_OPSET, IR version
 * NNN_ONNX_IR_VERSION) whose graph takes the model's own channels-last input
 * [N, d1.., C] and gives what nnn_plan_run gives: each layer and activation
 * is added by its type's export hook (nnn/plugin.h, ABI 1.5; the format's
 * own types' hooks are the builtin plugin's), the layout changes (a Conv's
 * Transposes, its kernels [f, k.., c] as [f, c, k..]) inside the graph. What
 * ONNX has no field for goes into the model's metadata, key "nnn.fields":
 * the model's JSON form (nnn/json.h) with every float array left out, so
 * that .nnn -> .onnx -> .nnn gives back the same bytes.
 *
 * Import reads the graphs torch.onnx.export and tf2onnx write for the
 * format's vocabulary (docs/onnx.md: the table of ops), channels-first or
 * channels-last, into a channels-last model that computes the same function
 * on channels-last inputs. A graph with anything outside the vocabulary is
 * refused whole, every unsupported node listed. The bytes are untrusted:
 * the protobuf is parsed by protobuf-c under a memory budget proportional
 * to its size, and tensors in external files are refused.
 */
#ifndef NNN_ONNX_H
#define NNN_ONNX_H

#include <nnn/api.h>
#include <nnn/context.h>
#include <nnn/model.h>
#include <nnn/shape.h>

/* What export writes (import reads opsets 11 to 21). */
#define NNN_ONNX_OPSET 13
#define NNN_ONNX_IR_VERSION 7
/* The metadata key that carries the fields ONNX has none for. */
#define NNN_ONNX_META_FIELDS "nnn.fields"

typedef struct nnn_onnx_write_opts {
	/* Plugins: the export hooks of every layer and activation type (the
	 * builtin plugin's for the format's own). Required. */
	const nnn_ctx_t *ctx;
	/* The input shape the graph declares; NULL: what the layers fix, with
	 * symbolic names ("N", "d1", ...) for the rest. */
	const nnn_shape_t *input_shape;
} nnn_onnx_write_opts_t;

/* Encodes m as an ONNX model into a new buffer (*buf, free it with free()).
 * A layer or activation whose type has no export hook, or that ONNX cannot
 * express (a Conv of more than 3 spatial dims), is refused with
 * NNN_E_ONNX_EXPORT naming its path and type; every such layer is listed. */
NNN_API NNN_NODISCARD nnn_status_t nnn_onnx_encode(const nnn_model_t *m, const nnn_onnx_write_opts_t *opts,
                                                   unsigned char **buf, size_t *len, nnn_diags_t *diags);
/* The same into `path`, through nnn_write_atomic (file.h: "-" is standard
 * output). */
NNN_API NNN_NODISCARD nnn_status_t nnn_onnx_write_file(const nnn_model_t *m, const char *path,
                                                       const nnn_onnx_write_opts_t *opts, nnn_diags_t *diags);

/* Import notes: what the importer did that a user should know. */
enum {
	NNN_ONNX_NOTE_CHANNELS_FIRST = 1u << 0, /* an NCHW graph: weights were permuted */
	NNN_ONNX_NOTE_META_IGNORED = 1u << 1,   /* "nnn.fields" did not match the graph */
};

typedef struct nnn_onnx_read_opts {
	const nnn_ctx_t *ctx; /* plugins, for the JSON form's IDs; may be NULL */
	/* The largest input accepted, in bytes; 0: NNN_ONNX_MAX_BYTES. */
	uint64_t max_bytes;
	/* Out, may be NULL: NNN_ONNX_NOTE_* flags, and one line saying them. */
	unsigned *notes;
	char *note_text;
	size_t note_size;
} nnn_onnx_read_opts_t;

#define NNN_ONNX_MAX_BYTES ((uint64_t)2 << 30)

/* Reads an ONNX model from `len` bytes (opts may be NULL). On success *out
 * is a new model with memory of its own (free it with nnn_model_free). On
 * failure *out is NULL and every problem is in diags:
 *   NNN_E_ONNX     not an ONNX model nnnkit reads (not protobuf, over a
 *                  size cap, external data, a malformed tensor)
 *   NNN_E_ONNX_OP  a node outside the vocabulary: one diagnostic per node,
 *                  path "graph.node[i]" with its name, op type, attribute
 *                  and why */
NNN_API NNN_NODISCARD nnn_status_t nnn_onnx_decode(const void *buf, size_t len, const nnn_onnx_read_opts_t *opts,
                                                   nnn_model_t **out, nnn_diags_t *diags);
/* nnn_onnx_decode, and the input the graph declares as the model takes
 * it (channels-last, NNN_DIM_UNKNOWN where the graph names a dim) in
 * *input: the shape nnnkit convert --verify runs an imported model on. */
NNN_API NNN_NODISCARD nnn_status_t nnn_onnx_decode_input(const void *buf, size_t len, const nnn_onnx_read_opts_t *opts,
                                                         nnn_model_t **out, nnn_pshape_t *input, nnn_diags_t *diags);
/* The same from a file, read whole with checked reads. */
NNN_API NNN_NODISCARD nnn_status_t nnn_onnx_read_file(const char *path, const nnn_onnx_read_opts_t *opts,
                                                      nnn_model_t **out, nnn_diags_t *diags);

#endif
