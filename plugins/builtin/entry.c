/* entry.c: the builtin plugin's descriptors and its one exported symbol.
 * Its layer types and activations are core-schema IDs: the host
 * decodes, encodes and validates them itself, so every codec field is
 * NULL/0 here and the plugin provides compute only. */
#include "builtin.h"

/* The host table, kept for the kernels: prepare, forward and release get
 * no host argument (the ABI has none), yet take memory and threads from
 * it. The table is the host's static storage, the same at every entry
 * point call, so this is written with one value only (atomic, as contexts
 * may be made on several threads at once). */
static _Atomic(const nnn_host_t *) host;

const nnn_host_t *bi_host(void)
{
	return atomic_load_explicit(&host, memory_order_acquire);
}

static const nnn_plugin_info_t info = NNN_PLUGIN_INFO("builtin", "1.0");

static const nnn_layer_type_t dense_type = {
	.size = sizeof(nnn_layer_type_t),
	.id = NNN_LAYER_ID_DENSE,
	.name = "dense",
	.prepare = bi_dense_prepare,
	.release = bi_state_free,
	.forward = bi_dense_forward,
	.work_bytes = bi_dense_work,
	.onnx_export = bi_dense_onnx,
};

static const nnn_layer_type_t conv_type = {
	.size = sizeof(nnn_layer_type_t),
	.id = NNN_LAYER_ID_CONV,
	.name = "conv",
	.prepare = bi_conv_prepare,
	.release = bi_state_free,
	.forward = bi_conv_forward,
	.work_bytes = bi_conv_work,
	.onnx_export = bi_conv_onnx,
};

/* A new layer kernel adds its descriptor here (docs/growing-the-format.md). */
static const nnn_layer_type_t *const layer_types[] = { &dense_type, &conv_type };

/* ACT(ID, NAME, FORWARD[, ONNX]): an activation kernel, and its ONNX
 * export hook (onnx.c) when it has one; one without is refused by ONNX
 * export, by name. */
#define ACT(ID, NAME, ...) ACT_(ID, NAME, __VA_ARGS__, NULL, NULL)
#define ACT_(ID, NAME, FN, ONNX, ...) \
	{ .size = sizeof(nnn_activation_type_t), .id = (ID), .name = (NAME), .forward = (FN), .onnx_export = (ONNX) }
static const nnn_activation_type_t act_types[] = {
	ACT(NNN_ACTIVATION_ID_LINEAR, "linear", bi_linear, bi_linear_onnx),
	ACT(NNN_ACTIVATION_ID_SIGMOID, "sigmoid", bi_sigmoid, bi_sigmoid_onnx),
	ACT(NNN_ACTIVATION_ID_TANH, "tanh", bi_tanh, bi_tanh_onnx),
	ACT(NNN_ACTIVATION_ID_RELU, "relu", bi_relu, bi_relu_onnx),
	ACT(NNN_ACTIVATION_ID_LEAKY_RELU, "leaky_relu", bi_leaky_relu, bi_leaky_relu_onnx),
	ACT(NNN_ACTIVATION_ID_SOFTMAX, "softmax", bi_softmax, bi_softmax_onnx),
};
#undef ACT_
#undef ACT

NNN_PLUGIN_EXPORT nnn_status_t NNN_PLUGIN_ENTRY(const nnn_host_t *h, nnn_decl_t *d)
{
	nnn_status_t st;
	if (!h || h->size < offsetof(nnn_host_t, fail) || !h->declare || !h->add_layer || !h->add_activation)
		return NNN_E_PLUGIN; /* not a host table this plugin can use */
	if ((st = h->declare(d, &info)) != NNN_OK)
		return st; /* an older host refuses ABI 1.6 here, with its own message */
	if (h->size < offsetof(nnn_host_t, cpus) + sizeof h->cpus || !h->mem_big || !h->mem_free || !h->pool_new ||
	    !h->pool_free || !h->pool_workers || !h->pool_run || !h->cpus)
		return h->fail(d, "the host table (%u bytes) lacks ABI 1.6's memory and threads (mem_big .. cpus): "
		               "this plugin needs a host of its own version", (unsigned)h->size);
	atomic_store_explicit(&host, h, memory_order_release);
	for (size_t i = 0; i < sizeof layer_types / sizeof layer_types[0]; i++)
		if ((st = h->add_layer(d, layer_types[i])) != NNN_OK)
			return st;
	for (size_t i = 0; i < sizeof act_types / sizeof act_types[0]; i++)
		if ((st = h->add_activation(d, &act_types[i])) != NNN_OK)
			return st;
	return NNN_OK;
}
