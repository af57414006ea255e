/* builtin.h: private to the builtin plugin. Everything here has hidden
 * visibility (the plugin is built with -fvisibility=hidden); only the entry
 * point is exported. */
#ifndef NNN_BUILTIN_H
#define NNN_BUILTIN_H

#include <stddef.h>

#include <nnn/plugin.h>

/* plugin.h only gives the entry point's type; -Wmissing-prototypes wants a
 * declaration before the definition. */
NNN_PLUGIN_EXPORT nnn_status_t NNN_PLUGIN_ENTRY(const nnn_host_t *h, nnn_decl_t *d);

/* Bound on the im2col scratch of each thread of a Conv forward call on the
 * portable path, in floats (4 MiB). */
#define BI_SCRATCH_FLOATS ((int64_t)1 << 20)

/* A forward of fewer FLOPs than twice this stays on one thread, and a
 * chunk of work for a thread is no smaller than half of it. */
#define BI_PAR_FLOP 400000.0

/* Whether the AVX2 and AVX-512 code is compiled in (x86 with GCC or Clang:
 * each such function has its own target attribute, so the plugin still
 * runs on any x86-64, and picks at run time). */
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define BI_X86 1
#else
#define BI_X86 0
#endif

typedef nnn_status_t (*bi_infer_fn)(const nnn_layer_t *layer, const void *body, const nnn_shape_t *in,
                                    nnn_shape_t *out, char *msg, size_t msg_size);

/* ---- util.c ---- */

/* Writes a message into msg (when there is room); returns code. */
nnn_status_t bi_fail(char *msg, size_t msg_size, nnn_status_t code, const char *fmt, ...) NNN_PRINTF(4, 5);
/* "[2, 28, 28, 1]" into buf; returns buf. */
const char *bi_shape_str(const nnn_shape_t *s, char *buf, size_t size);
/* Element count of a shape, or -1 when a dim is < 0 or the product
 * overflows int64. */
int64_t bi_numel(const nnn_shape_t *s);
/* Checks an input shape is batch-first ([batch, ..., features]) with a
 * countable size; else writes msg and returns NNN_E_INPUT_SHAPE. */
nnn_status_t bi_check_input(const nnn_shape_t *in, char *msg, size_t msg_size);
/* Whether a tensor's data count equals the product of its (>= 0) dims. */
bool bi_tensor_ok(const nnn_tensor_t *t);
/* Checks a forward call's arguments: shapes as infer says, buffers present. */
nnn_status_t bi_check_args(const nnn_kernel_args_t *a, bi_infer_fn infer, char *msg, size_t msg_size);

/* A layer's parameters as aligned host floats: weights w, then bias b. */
typedef struct bi_params {
	int64_t nw, nb;
	float *w, *b;
	float v[];
} bi_params_t;

/* Packs a weight tensor and a bias into a new bi_params_t (free with free),
 * or NULL when out of memory. */
bi_params_t *bi_params_new(const nnn_tensor_t *w, const nnn_tensor_t *b);
/* Frees a bi_params_t (NULL is harmless). */
void bi_params_free(bi_params_t *p);
/* Sets each of `rows` rows of y (n floats each) to the bias b. */
void bi_fill_bias(float *y, int64_t rows, int64_t n, const float *b);

/* ---- kern.c: micro-kernels, weight panels, instruction set ---- */

/* The instruction sets the kernels are built for, in order. */
typedef enum bi_isa { BI_ISA_GENERIC, BI_ISA_AVX2, BI_ISA_AVX512 } bi_isa_t;

/* The best instruction set of this CPU, capped by the environment variable
 * NNN_BUILTIN_ISA (generic, avx2; for tests and comparisons). GENERIC means
 * the layers' portable im2col + sgemm path. */
bi_isa_t bi_isa(void);

/* A weight matrix of n columns (filters, neurons) by k taps in panels of j
 * vectors of v lanes: w is [np][k][j*v], b is the bias [np*j*v], columns
 * past n zero. 64-byte aligned; free with bi_pack_free. */
typedef struct bi_pack {
	int v, j;
	int64_t n, k, np;
	float *w, *b;
	/* grouped (bi_pack_group), g > 1: g positions of c channels a row,
	 * runs of len taps, mask[len] the lanes each tap is for */
	int g;
	int64_t c, len;
	uint16_t *mask;
} bi_pack_t;

/* Packs column c, tap t from src[t * sk + c * sn] and the bias (n floats).
 * False when isa is GENERIC, or out of memory. */
bool bi_pack_init(bi_pack_t *pk, bi_isa_t isa, int64_t n, int64_t k, const float *src, int64_t sk, int64_t sn,
                  const float *bias);
void bi_pack_free(bi_pack_t *pk);
/* For a Conv of f <= 8 filters with AVX-512: the panel of g = 16 / f
 * neighbouring positions along the last axis at once, lane l being filter
 * l % f of position l / f; its runs are len + (g - 1) * c taps, position
 * i's weights shifted by i * c taps, each tap masked to the lanes it is
 * for. src is the kernels [f][nq * len]. False when it would not be
 * faster than the plain panel, when isa is not AVX-512, or out of memory. */
bool bi_pack_group(bi_pack_t *pk, bi_isa_t isa, int64_t f, int64_t c, int64_t nq, int64_t len, const float *src,
                   const float *bias);
/* The most rows one kernel call takes for this packing. */
int bi_rmax(const bi_pack_t *pk);
/* One micro-kernel call: r rows (1..bi_rmax) of one panel w (cols valid
 * columns, 1..j*v), row i reading x + i*xs + off[q] + t for q < nq, t < len,
 * starting from init (ins == 0: the panel's bias) or from rows init + i*ins,
 * writing rows y + i*ys. */
void bi_ukr(const bi_pack_t *pk, int r, const float *x, ptrdiff_t xs, const ptrdiff_t *off, int64_t nq,
            int64_t len, const float *w, const float *init, ptrdiff_t ins, float *y, ptrdiff_t ys, int cols);

/* A grouped kernel call (pk from bi_pack_group): r rows (1..12) of pk->g
 * positions, row i reading x + i * g * c + off[q] + t, writing its
 * g * f floats at y + i * g * f. */
void bi_ukr_group(const bi_pack_t *pk, int r, const float *x, const ptrdiff_t *off, int64_t nq, float *y);

/* ---- pool.c: threads ---- */

#define BI_MAX_THREADS 255
typedef struct bi_pool bi_pool_t;
/* Chunk `chunk` of some work, on the thread numbered `slot`. */
typedef void (*bi_task_fn)(void *ctx, int64_t chunk, int slot);
/* Runs f(ctx, c, slot) once for every chunk c < n, on min(threads, n,
 * BI_MAX_THREADS) threads: the caller (slot 0) and workers (slots 1..) of *pool, which is
 * made, or remade larger, as needed and kept (pool NULL: workers for this
 * call only). Chunks go to whichever thread asks first, so a chunk's result
 * must not depend on its slot. Without threads (none can be made), every
 * chunk runs on the caller. */
void bi_run(bi_pool_t **pool, int threads, int64_t n, bi_task_fn f, void *ctx);
/* Threads worth asking bi_run for: `threads` (>= 1) capped by cpus (when
 * > 0), by BI_MAX_THREADS and by the chunk count. */
int bi_threads(int threads, int cpus, int64_t chunks);
/* How to cut work of `units` equal units, `flop` FLOPs in all, into chunks
 * for up to `threads` threads: returns the units per chunk and sets *used
 * to the threads worth using. One chunk when one thread will do (below
 * 2 * BI_PAR_FLOP); else about BI_CHUNKS chunks a thread, so that threads
 * that start late or run slow (the machine is shared) even out, none under
 * BI_PAR_FLOP / 2. */
#define BI_CHUNKS 16
int64_t bi_split(double flop, int64_t units, int threads, int cpus, int *used);
/* Joins the workers and frees the pool (NULL is harmless). */
void bi_pool_free(bi_pool_t *p);
/* Online CPUs (>= 1). */
int bi_cpus(void);

/* ---- util.c: a layer's state ---- */

/* Where a layer's weights put column c (filter, neuron) of tap t: element
 * t * sk + c * sn of the tensor, for n columns of k taps. */
typedef struct bi_layout {
	int64_t n, k, sk, sn;
	int64_t c, nq, len; /* Conv: channels, and its patch in nq runs of len taps; Dense: 0 */
} bi_layout_t;

/* A Dense or Conv layer's state: from prepare, or made for one forward. */
typedef struct bi_state {
	int64_t nw, nb, n, k; /* the layer's counts: a state only serves its own layer */
	bi_isa_t isa;
	int cpus;             /* online CPUs: threads beyond are not used */
	bi_params_t *plain;   /* BI_ISA_GENERIC: the weights as host floats, for sgemm */
	bi_pack_t pack;       /* else: the weights in panels, for the micro-kernels */
	bi_pack_t group;      /* and for a Conv with few filters, maybe grouped (w NULL: not) */
	bi_pool_t *pool;      /* threads: made by the first forward that asks for them */
} bi_state_t;

/* A new state for weights w laid out as `lay`, and bias b, for the
 * instruction set bi_isa() says. */
nnn_status_t bi_state_new(const nnn_tensor_t *w, const nnn_tensor_t *b, const bi_layout_t *lay, bi_state_t **out,
                          char *msg, size_t msg_size);
/* The state of a forward call: a->state from prepare (checked to be this
 * layer's), or a new one in *tmp (the caller frees it with bi_state_free). */
nnn_status_t bi_state_get(const nnn_kernel_args_t *a, const nnn_tensor_t *w, const bi_layout_t *lay, bi_state_t **st,
                          bi_state_t **tmp, char *msg, size_t msg_size);
/* Frees a state, joining its threads (the layers' release; NULL is harmless). */
void bi_state_free(void *state);

/* ---- dense.c: layer ID 0 ---- */
nnn_status_t bi_dense_infer(const nnn_layer_t *layer, const void *body, const nnn_shape_t *in, nnn_shape_t *out,
                            char *msg, size_t msg_size);
nnn_status_t bi_dense_prepare(const nnn_layer_t *layer, const void *body, const nnn_shape_t *in, void **state,
                              char *msg, size_t msg_size);
nnn_status_t bi_dense_forward(const nnn_kernel_args_t *a, char *msg, size_t msg_size);

/* ---- conv.c: layer ID 1 ---- */
nnn_status_t bi_conv_infer(const nnn_layer_t *layer, const void *body, const nnn_shape_t *in, nnn_shape_t *out,
                           char *msg, size_t msg_size);
nnn_status_t bi_conv_prepare(const nnn_layer_t *layer, const void *body, const nnn_shape_t *in, void **state,
                             char *msg, size_t msg_size);
nnn_status_t bi_conv_forward(const nnn_kernel_args_t *a, char *msg, size_t msg_size);

/* ---- act.c: activation IDs 0..5, in place ---- */
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

#endif
