/* builtin.h: private to the builtin plugin. Everything here has hidden
 * visibility (the plugin is built with -fvisibility=hidden); only the entry
 * point is exported. */
#ifndef NNN_BUILTIN_H
#define NNN_BUILTIN_H

#include <nnn/plugin.h>

/* plugin.h only gives the entry point's type; -Wmissing-prototypes wants a
 * declaration before the definition. */
NNN_PLUGIN_EXPORT nnn_status_t NNN_PLUGIN_ENTRY(const nnn_host_t *h, nnn_decl_t *d);

/* Bound on the im2col scratch of one Conv forward call, in floats (4 MiB). */
#define BI_SCRATCH_FLOATS ((int64_t)1 << 20)

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
/* The packed parameters of a forward call: a->state from prepare, or a
 * temporary copy (*tmp, the caller frees it) when there is no state. */
nnn_status_t bi_params_get(const nnn_kernel_args_t *a, const nnn_tensor_t *w, const bi_params_t **p,
                           bi_params_t **tmp, char *msg, size_t msg_size);
/* Frees a bi_params_t (the layers' release). */
void bi_params_free(void *state);
/* Sets each of `rows` rows of y (n floats each) to the bias b. */
void bi_fill_bias(float *y, int64_t rows, int64_t n, const float *b);

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
