/* onnx_graph.h (internal): an ONNX graph as export hooks build it.
 *
 * The host's onnx_* functions (nnn/plugin.h, ABI 1.5) fill it; export
 * (runtime/formats/onnx/export.c) then writes it as protobuf. It lives here,
 * apart from protobuf, because the host table (runtime/plugin/host.c) points
 * at its functions.
 */
#ifndef NNN_ONNX_GRAPH_H
#define NNN_ONNX_GRAPH_H

#include <nnn/plugin.h>

typedef struct nnn_og_attr {
	char *name;
	nnn_onnx_attr_kind_t kind;
	int64_t i;
	float f;
	int64_t *ints;
	int32_t n;
	char *s;
} nnn_og_attr_t;

typedef struct nnn_og_node {
	char *op, *out;
	char **in;
	int nin;
	nnn_og_attr_t *attrs;
	int nattr;
} nnn_og_node_t;

/* An initializer: n elements of ONNX type dtype (nnn_onnx_dtype), width
 * bytes each, little-endian as raw_data holds them. */
typedef struct nnn_og_init {
	char *name;
	int32_t dtype;
	int width;
	int64_t dims[NNN_MAX_RANK];
	int rank;
	void *data;
	size_t n;
} nnn_og_init_t;

struct nnn_onnx_graph {
	nnn_og_node_t *nodes;
	size_t nnodes, cap_nodes;
	nnn_og_init_t *inits;
	size_t ninits, cap_inits;
	/* Names are "<prefix>/<hint>" (the layer's "layers.2"), made unique. */
	char prefix[64];
	/* The first failure: a hook's onnx_fail, or out of memory. */
	nnn_status_t st;
	char msg[NNN_MSG_MAX];
};

/* Initializer t as a TensorProto (export.c; p borrows t's arrays): its
 * bytes as raw_data. Declared here without protobuf's header. */
struct Onnx__TensorProto;
void nnn_onnx_init_proto(const nnn_og_init_t *t, struct Onnx__TensorProto *p);

nnn_onnx_graph_t *nnn_og_new(void);
void nnn_og_free(nnn_onnx_graph_t *g);
/* Clears a failure, so the next layer's hook starts afresh. */
void nnn_og_clear(nnn_onnx_graph_t *g);

/* The host table's functions (nnn/plugin.h documents them). */
const char *nnn_og_floats(nnn_onnx_graph_t *g, const char *hint, const int64_t *dims, int rank, const float *data);
const char *nnn_og_ints(nnn_onnx_graph_t *g, const char *hint, const int64_t *v, int n);
const char *nnn_og_elems(nnn_onnx_graph_t *g, const char *hint, const int64_t *dims, int rank, nnn_ekind_t kind,
                         int width, const void *bytes);
const char *nnn_og_node(nnn_onnx_graph_t *g, const char *op, const char *hint, const char *const *in, int nin,
                        const nnn_onnx_attr_t *attrs, int nattr);
nnn_status_t nnn_og_fail(nnn_onnx_graph_t *g, const char *fmt, ...) NNN_PRINTF(2, 3);
nnn_status_t nnn_og_vfail(nnn_onnx_graph_t *g, const char *fmt, va_list ap) NNN_PRINTF(2, 0);

#endif
