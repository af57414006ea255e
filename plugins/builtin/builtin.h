/* builtin.h: private to the builtin plugin. Everything here has hidden
 * visibility (the plugin is built with -fvisibility=hidden); only the entry
 * point is exported. */
#ifndef NNN_BUILTIN_H
#define NNN_BUILTIN_H

#include <cblas.h> /* types only: blas.c loads the library when needed */
#include <stdatomic.h>
#include <stddef.h>

#include <nnn/plugin.h>

#include "kern.h"

/* plugin.h only gives the entry point's type; -Wmissing-prototypes wants a
 * declaration before the definition. */
NNN_PLUGIN_EXPORT nnn_status_t NNN_PLUGIN_ENTRY(const nnn_host_t *h, nnn_decl_t *d);

/* The host table the entry point was given (entry.c): large buffers and
 * threads come from it (ABI 1.6), as a third party's plugin gets them. */
const nnn_host_t *bi_host(void);

/* Bound on the im2col scratch of each thread of a Conv forward call on the
 * portable path, in floats (4 MiB). */
#define BI_SCRATCH_FLOATS ((int64_t)1 << 20)

/* A forward of fewer FLOPs than twice this stays on one thread, and a
 * chunk of work for a thread is no smaller than half of it. */
#define BI_PAR_FLOP 400000.0


/* The output shape a layer's kernel computes for an input: the shape its
 * loops assume. Shapes come from the host's shape engine (these layer
 * types give no infer); prepare and forward refuse an input or output
 * shape other than the one their loops are written for, saying why. */
typedef nnn_status_t (*bi_expect_fn)(const nnn_layer_t *layer, const void *body, const nnn_shape_t *in,
                                    nnn_shape_t *out, char *msg, size_t msg_size);

/* ---- util.c ---- */

/* Writes a message into msg (when there is room); returns code. */
nnn_status_t bi_fail(char *msg, size_t msg_size, nnn_status_t code, const char *fmt, ...) NNN_PRINTF(4, 5);
/* "[2, 28, 28, 1]" into buf; returns buf. The host's printer
 * (nnn_host_t.shape_format, ABI 1.6) writes the same, but prepare, forward
 * and work_bytes are handed no host table and this plugin keeps no global
 * state to hold one: its messages print shapes here, in the host's
 * notation ("[", ", ", "]"), until a kernel call carries the table. */
const char *bi_shape_str(const nnn_shape_t *s, char *buf, size_t size);
/* Element count of a shape, or -1 when a dim is < 0 or the product
 * overflows int64. */
int64_t bi_numel(const nnn_shape_t *s);
/* Checks an input shape is batch-first ([batch, ..., features]) with a
 * countable size; else writes msg and returns NNN_E_INPUT_SHAPE. */
nnn_status_t bi_check_input(const nnn_shape_t *in, char *msg, size_t msg_size);
/* Whether a tensor's data count equals the product of its (>= 0) dims. */
bool bi_tensor_ok(const nnn_tensor_t *t);
/* Checks a forward call's arguments: shapes as the kernel expects, buffers
 * present. With a state from prepare for the same layer and shapes
 * (bi_state_shaped), the shapes were checked then: a tiny model's call
 * would otherwise spend a quarter of its time deriving them again. */
nnn_status_t bi_check_args(const nnn_kernel_args_t *a, bi_expect_fn infer, char *msg, size_t msg_size);

/* A layer's parameters as aligned host floats: weights w, then bias b. */
typedef struct bi_params {
	int64_t nw, nb;
	float *w, *b;
	float v[];
} bi_params_t;

/* Packs a weight tensor and a bias into a new bi_params_t (host->mem_big;
 * free with bi_params_free), or NULL when out of memory. */
bi_params_t *bi_params_new(const nnn_tensor_t *w, const nnn_tensor_t *b);
/* Frees a bi_params_t (NULL is harmless). */
void bi_params_free(bi_params_t *p);
/* Sets each of `rows` rows of y (n floats each) to the bias b. */
void bi_fill_bias(float *y, int64_t rows, int64_t n, const float *b);


/* ---- blas.c: the portable path's sgemm ---- */

/* cblas_sgemm's type (blas.c checks it against <cblas.h>). */
typedef void (*bi_sgemm_fn)(enum CBLAS_ORDER, enum CBLAS_TRANSPOSE, enum CBLAS_TRANSPOSE, blasint, blasint,
                            blasint, float, const float *, blasint, const float *, blasint, float, float *, blasint);
typedef struct bi_blas {
	void *lib;         /* dlopen handle, or NULL */
	bi_sgemm_fn sgemm;
} bi_blas_t;
/* Loads the CBLAS library (NNN_BUILTIN_BLAS, read with secure_getenv, else
 * libopenblas.so.0) and sets OpenBLAS to one thread; or NNN_E_KERNEL with a
 * message naming the library and the remedy. */
nnn_status_t bi_blas_open(bi_blas_t *b, char *msg, size_t msg_size);
/* Drops the handle (a zeroed bi_blas_t is harmless). */
void bi_blas_close(bi_blas_t *b);

/* ---- pool.c: threads ---- */

typedef struct bi_state bi_state_t;
/* Runs f(ctx, c, slot) once for every chunk c < n, on min(threads, n,
 * NNN_POOL_MAX_THREADS) threads, slot 0 being the caller: the host's (a's
 * parallel_for, ABI 1.1) when it offers them, else st's own pool, made or
 * remade larger as needed and kept. Chunks go to whichever thread asks
 * first, so a chunk's result must not depend on its slot. Without threads
 * (none can be made, or st is NULL), every chunk runs on the caller. */
void bi_run(const nnn_kernel_args_t *a, bi_state_t *st, int threads, int64_t n, nnn_task_fn f, void *ctx);
/* Threads worth asking bi_run for: `threads` (>= 1) capped by cpus (when
 * > 0), by NNN_POOL_MAX_THREADS and by the chunk count. */
int bi_threads(int threads, int cpus, int64_t chunks);
/* How to cut work of `units` equal units, `flop` FLOPs in all, into chunks
 * for up to `threads` threads: returns the units per chunk and sets *used
 * to the threads worth using. One chunk when one thread will do (below
 * 2 * BI_PAR_FLOP); else about BI_CHUNKS chunks a thread, so that threads
 * that start late or run slow (the machine is shared) even out, none under
 * BI_PAR_FLOP / 2. */
#define BI_CHUNKS 16
int64_t bi_split(double flop, int64_t units, int threads, int cpus, int *used);

/* ---- util.c: a layer's state ---- */

/* Where a layer's weights put column c (filter, neuron) of tap t: element
 * t * sk + c * sn of the tensor, for n columns of k taps. */
typedef struct bi_layout {
	int64_t n, k, sk, sn;
	int64_t c, nq, len; /* Conv: channels, and its patch in nq runs of len taps; Dense: 0 */
	/* Conv with the original framework's arithmetic (nnn/compat.h): spatial
	 * tap t's weights count mult[t] times; NULL: once (the spec) */
	const uint32_t *mult;
} bi_layout_t;

/* A Dense or Conv layer's state: from prepare, or made for one forward. */
struct bi_state {
	int64_t nw, nb, n, k; /* the layer's counts: a state only serves its own layer */
	bi_isa_t isa;
	int cpus;             /* online CPUs: threads beyond are not used */
	bi_params_t *plain;   /* BI_ISA_GENERIC: the weights as host floats, for sgemm */
	bi_blas_t blas;       /* and the sgemm */
	bi_pack_t pack;       /* else: the weights in panels, for the micro-kernels */
	bi_pack_t group;      /* and for a Conv with few filters, maybe grouped (w NULL: not) */
	/* a Conv's padded copies, kept from one forward call to the next
	 * (conv.c); NULL: none kept */
	_Atomic(struct bi_scratch *) scratch;
	nnn_pool_t *pool;     /* threads of its own, for callers that offer none (bi_run) */
	/* what prepare checked (bi_state_shaped): a forward call of that layer
	 * on those shapes skips re-deriving the output shape */
	const nnn_layer_t *layer;
	nnn_shape_t in, out;
	int64_t in_n, out_n; /* their element counts */
};

/* Frees a Conv's kept scratch (conv.c). */
void bi_scratch_free(struct bi_scratch *sc);

/* A new state for weights w laid out as `lay`, and bias b, for the
 * instruction set bi_isa() says. */
nnn_status_t bi_state_new(const nnn_tensor_t *w, const nnn_tensor_t *b, const bi_layout_t *lay, bi_state_t **out,
                          char *msg, size_t msg_size);
/* The most bytes bi_state_new allocates for these weights: their copy,
 * then the panels (work_bytes of the descriptors, ABI 1.3). */
double bi_state_bytes(const bi_layout_t *lay, int64_t nw, int64_t nb);
/* The bytes counted as UINT64_MAX past it. */
uint64_t bi_bytes(double b);
/* The state of a forward call: a->state from prepare (checked to be this
 * layer's), or a new one in *tmp (the caller frees it with bi_state_free). */
nnn_status_t bi_state_get(const nnn_kernel_args_t *a, const nnn_tensor_t *w, const bi_layout_t *lay, bi_state_t **st,
                          bi_state_t **tmp, char *msg, size_t msg_size);
/* Records that prepare checked layer on in -> out (bi_check_args trusts it). */
void bi_state_shaped(bi_state_t *st, const nnn_layer_t *layer, const nnn_shape_t *in, const nnn_shape_t *out);
/* Frees a state, joining its threads (the layers' release; NULL is harmless). */
void bi_state_free(void *state);

/* ---- narrow.c: Dense products of int8 or float16 weights (grown layer types' kernels) ---- */

typedef enum bi_narrow_type { BI_NARROW_I8, BI_NARROW_F16 } bi_narrow_type_t;
/* int8 weights repacked for AVX-512 VNNI (narrow_vnni.c), made at prepare. */
typedef struct bi_narrow_pack bi_narrow_pack_t;
/* Weights [k, n] of one element type, as the file holds them (row-major,
 * little-endian, any alignment), with one scale a neuron (scale.n == 0:
 * none) and the bias, for `rows` rows of k inputs; int8 ones may bring
 * their pack (NULL: none). The kernel file of the layer checks their sizes
 * against the layer and the shapes first. */
typedef struct bi_narrow {
	bi_narrow_type_t type;
	const unsigned char *data;
	int64_t k, n, rows;
	nnn_f32s_t scale, bias;
	const bi_narrow_pack_t *pack;
} bi_narrow_t;
/* y = (x @ float(W)) * scale + bias on a->x and a->y, on up to a->threads
 * of the host's threads (none but the caller's when it offers none). */
void bi_dense_narrow(const nnn_kernel_args_t *a, const bi_narrow_t *w);
/* int8 weights [k, n] packed for the integer path (a layer's prepare), or
 * NULL when this CPU has no AVX-512 VNNI (or NNN_BUILTIN_ISA caps it), k is
 * past 65535, or memory is short: forward then takes the float path. */
bi_narrow_pack_t *bi_narrow_pack(const unsigned char *data, int64_t k, int64_t n);
/* Frees a pack (a layer's release; NULL is harmless). */
void bi_narrow_pack_free(void *pack);
/* The integer path of bi_dense_narrow on `threads` threads; false (y not
 * written) when w has no pack of its shape, or a row of x is not finite. */
bool bi_dense_narrow_vnni(const nnn_kernel_args_t *a, const bi_narrow_t *w, int threads);

/* ---- dense.c: NNN_LAYER_ID_DENSE ---- */
nnn_status_t bi_dense_expect(const nnn_layer_t *layer, const void *body, const nnn_shape_t *in, nnn_shape_t *out,
                            char *msg, size_t msg_size);
nnn_status_t bi_dense_prepare(const nnn_layer_t *layer, const void *body, const nnn_shape_t *in, void **state,
                              char *msg, size_t msg_size);
nnn_status_t bi_dense_forward(const nnn_kernel_args_t *a, char *msg, size_t msg_size);
uint64_t bi_dense_work(const nnn_layer_t *layer, const void *body, const nnn_shape_t *in, const nnn_shape_t *out,
                       int threads);

/* ---- conv.c: NNN_LAYER_ID_CONV ---- */
nnn_status_t bi_conv_prepare(const nnn_layer_t *layer, const void *body, const nnn_shape_t *in, void **state,
                             char *msg, size_t msg_size);
nnn_status_t bi_conv_forward(const nnn_kernel_args_t *a, char *msg, size_t msg_size);
uint64_t bi_conv_work(const nnn_layer_t *layer, const void *body, const nnn_shape_t *in, const nnn_shape_t *out,
                      int threads);

/* ---- act.c: the core activations, in place ---- */
nnn_status_t bi_linear(const nnn_activation_t *act, const void *params, const nnn_shape_t *shape, float *x,
                       int threads);
nnn_status_t bi_sigmoid(const nnn_activation_t *act, const void *params, const nnn_shape_t *shape, float *x,
                        int threads);
nnn_status_t bi_tanh(const nnn_activation_t *act, const void *params, const nnn_shape_t *shape, float *x,
                     int threads);
nnn_status_t bi_relu(const nnn_activation_t *act, const void *params, const nnn_shape_t *shape, float *x,
                     int threads);
nnn_status_t bi_leaky_relu(const nnn_activation_t *act, const void *params, const nnn_shape_t *shape, float *x,
                           int threads);
nnn_status_t bi_softmax(const nnn_activation_t *act, const void *params, const nnn_shape_t *shape, float *x,
                        int threads);

/* What a forward call fuses: BI_ACT_NONE unless the host is ABI 1.1 or
 * later and its activation is one of this plugin's element-wise ones.
 * isa is the layer state's, picked when it was made (bi_isa reads the
 * environment: too slow to ask on every call of a tiny model). */
bi_act_t bi_act_fuse(const nnn_kernel_args_t *a, bi_isa_t isa);
/* Applies it to x[0..n) in place (nothing for NONE and LINEAR). */
void bi_act_apply(const bi_act_t *f, float *x, int64_t n);
/* Tells the host the activation is done (after a forward that applied it
 * to every chunk), unless it is NONE. */
void bi_act_done(const nnn_kernel_args_t *a, const bi_act_t *f);

/* ---- onnx.c: export hooks (ABI 1.5) ---- */

nnn_status_t bi_dense_onnx(const nnn_host_t *h, nnn_onnx_graph_t *g, const nnn_layer_t *layer, const void *body,
                           const nnn_pshape_t *in, const char *x, const char **y);
nnn_status_t bi_conv_onnx(const nnn_host_t *h, nnn_onnx_graph_t *g, const nnn_layer_t *layer, const void *body,
                          const nnn_pshape_t *in, const char *x, const char **y);
#define BI_ACT_ONNX(FN)                                                                                       \
	nnn_status_t FN(const nnn_host_t *h, nnn_onnx_graph_t *g, const nnn_activation_t *act, const void *params, \
	                const nnn_pshape_t *shape, const char *x, const char **y);
BI_ACT_ONNX(bi_linear_onnx)
BI_ACT_ONNX(bi_sigmoid_onnx)
BI_ACT_ONNX(bi_tanh_onnx)
BI_ACT_ONNX(bi_relu_onnx)
BI_ACT_ONNX(bi_leaky_relu_onnx)
BI_ACT_ONNX(bi_softmax_onnx)
#undef BI_ACT_ONNX

/* ---- onnx.c: what the ONNX hooks of grown layer types share (ABI 1.7, 1.8) ---- */

/* A field's name in the schema for the host's onnx_set_* functions,
 * checked by the compiler: the member of record `type` the generator
 * named after it (a renamed field then fails to build, not to import). */
#define BI_FIELD(type, member) ((void)sizeof(((type *)0)->member), #member)

/* Export: a tensor's data of element type kind and width, dims [rank], as
 * an initializer of its ONNX type named from `hint` (bytes as they are:
 * -0, subnormals and NaN payloads kept), then Cast to float (the node
 * `hint`_float). Returns the Cast's output; NULL when either failed (g
 * says why). */
const char *bi_onnx_cast(const nnn_host_t *h, nnn_onnx_graph_t *g, const char *hint, const int64_t *dims, int rank,
                         nnn_ekind_t kind, int width, const void *bytes);
/* Import: whether offered node k is an `op` whose input `in` comes from
 * `from` (enum nnn_onnx_from, or the index of an offered node). */
bool bi_onnx_node_is(const nnn_host_t *h, const nnn_onnx_match_t *m, int k, const char *op, int in, int from);
/* Import: whether offered node k is what bi_onnx_cast writes, a Cast to
 * float of a constant (of any type: onnx_set_tensor_const checks it). */
bool bi_onnx_cast_is(const nnn_host_t *h, const nnn_onnx_match_t *m, int k);
/* Import: 1 when offered node k is Flatten(axis=1) of the layer's input,
 * 0 when it is no Flatten, -1 when a Flatten of another axis or input. */
int bi_onnx_flatten_at(const nnn_host_t *h, const nnn_onnx_match_t *m, int k);

#endif
