/* nnn/run.h: running a model. A plan does shape inference once for an input
 * shape, finds every layer's and activation's kernel in a context, asks
 * kernels to prepare, and sizes its buffers once; running it then only
 * computes. Dropout is ignored, as at inference.
 *
 * Threads: a plan of more than one thread starts its worker threads once,
 * at nnn_plan_new (at most one per online CPU, the caller being one), and
 * joins them at nnn_plan_free; every kernel may share its work with them
 * (plugin ABI 1.1). Results do not depend on the thread count with the
 * builtin kernels' AVX2/AVX-512 path.
 */
#ifndef NNN_RUN_H
#define NNN_RUN_H

#include <nnn/api.h>
#include <nnn/compat.h>
#include <nnn/context.h>

/* Rows per plan run when a caller runs many (nnnkit run, eval and the Python
 * package's Model.run by default): enough to amortise each layer's call,
 * few enough that a layer's activations stay in cache. All rows at once is
 * several times slower on the example (10,000 MNIST-shaped rows: 1.3-3.3 s
 * against 0.7 s). */
#define NNN_RUN_BATCH 256

typedef struct nnn_run_opts {
	uint32_t size;             /* sizeof(nnn_run_opts_t) */
	int threads;               /* threads kernels may use, the caller's included; 0 means 1 */
	uint64_t max_tensor_bytes; /* largest intermediate tensor allowed; 0 means 4 GiB */
	/* Added later: read only when `size` covers it (0 for callers built
	 * before). Compatibility flags (enum nnn_compat, nnn/compat.h), handed
	 * to every kernel: NNN_COMPAT_CONV_ORIGINAL runs Conv layers with the
	 * original framework's arithmetic, for files trained there. */
	uint32_t compat;
} nnn_run_opts_t;

typedef struct nnn_plan nnn_plan_t;

/* Validates the model for `input` (every rule), then plans. The model and
 * the context must outlive the plan (borrowed). Owned: nnn_plan_free.
 * Errors name the layer: an ID no loaded plugin provides, an input shape
 * the layer rejects, a tensor over the size limit, a kernel's prepare. */
NNN_API NNN_NODISCARD nnn_status_t nnn_plan_new(const nnn_ctx_t *ctx, const nnn_model_t *m, const nnn_shape_t *input,
                                                const nnn_run_opts_t *opts, nnn_plan_t **out, nnn_diags_t *diags);

/* Shape of layer i's output (i = -1: the input). Borrowed from the plan. */
NNN_API const nnn_shape_t *nnn_plan_shape(const nnn_plan_t *p, int32_t i);

/* Element count of a shape (0 for rank 0; -1 for a negative dim or over
 * 2^63 - 1 elements). */
NNN_API int64_t nnn_shape_numel(const nnn_shape_t *s);

/* Runs the model on x (numel of the input shape floats) into y (numel of
 * the output shape floats). y may not alias x. A plan runs one call at a
 * time: calls from several threads on the same plan are safe but take
 * turns (its buffers and threads are the plan's); for calls in parallel,
 * make one plan per calling thread. */
NNN_API NNN_NODISCARD nnn_status_t nnn_plan_run(nnn_plan_t *p, const float *x, float *y, nnn_diags_t *diags);

NNN_API void nnn_plan_free(nnn_plan_t *p);

/* One call: plan for `input`, run x into y, free the plan. `y` must hold the
 * output's numel floats; *out_shape (when non-NULL) receives its shape. For
 * many batches of one shape, keep a plan instead. */
NNN_API NNN_NODISCARD nnn_status_t nnn_model_run(const nnn_ctx_t *ctx, const nnn_model_t *m, const nnn_shape_t *input,
                                                 const float *x, float *y, nnn_shape_t *out_shape,
                                                 const nnn_run_opts_t *opts, nnn_diags_t *diags);

#endif
