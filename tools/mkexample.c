/* mkexample: writes the example model, an MNIST-shaped classifier
 * (Conv 5x5 1->8, Conv 5x5 8->16, Dense 6400->128, Dense 128->10) with
 * deterministic pseudo-random weights. Shows how to build a model with the
 * library alone: fill in the generated records, then write atomically.
 *
 * With a second argument it also writes two 28x28x1 inputs as a .npy file.
 *
 *   mkexample OUT.nnn [INPUTS.npy]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nnn/model.h>
#include <nnn/npy.h>

/* Everything the model points at lives here; freed at exit. */
typedef struct owned {
	float *data[16];
	int ndata;
} owned_t;

static uint32_t rng = 12345u;

static float next_weight(float scale)
{
	rng = rng * 1664525u + 1013904223u; /* LCG: the same model every time */
	return scale * ((float)(rng >> 8) / (float)(1u << 24) - 0.5f);
}

static nnn_tensor_t tensor(owned_t *o, const int32_t *dims, int32_t rank, float scale)
{
	nnn_tensor_t t;
	int64_t n = 1;
	memset(&t, 0, sizeof t);
	for (int32_t i = 0; i < rank; i++)
		n *= dims[i];
	float *v = malloc((size_t)n * sizeof *v);
	if (!v) {
		perror("mkexample");
		exit(2);
	}
	for (int64_t i = 0; i < n; i++)
		v[i] = next_weight(scale);
	o->data[o->ndata++] = v;
	t.dims.v = dims;
	t.dims.n = rank;
	t.requires_grad = true;
	t.data = nnn_f32s_view(v, (int32_t)n);
	return t;
}

static void conv(nnn_layer_t *L, owned_t *o, const int32_t *kdims, const int32_t *bdims, const int32_t *pads)
{
	L->id = NNN_LAYER_ID_CONV;
	L->activation.id = NNN_ACTIVATION_ID_RELU;
	L->bias = tensor(o, bdims, 1, 0.1f);
	L->body.conv.filters = kdims[0];
	L->body.conv.kernels = tensor(o, kdims, 4, 0.4f);
	L->body.conv.padding_type = NNN_PADDING_TYPE_VALID;
	L->body.conv.padding_dims.v = pads;
	L->body.conv.padding_dims.n = 4;
}

static void dense(nnn_layer_t *L, owned_t *o, const int32_t *wdims, const int32_t *bdims, uint8_t act, bool flatten)
{
	L->id = NNN_LAYER_ID_DENSE;
	L->activation.id = act;
	L->bias = tensor(o, bdims, 1, 0.1f);
	L->body.dense.neurons = wdims[1];
	L->body.dense.weights = tensor(o, wdims, 2, 0.05f);
	L->body.dense.flatten = flatten;
}

int main(int argc, char **argv)
{
	static const int32_t k1[] = { 8, 5, 5, 1 }, b1[] = { 8 }, k2[] = { 16, 5, 5, 8 }, b2[] = { 16 };
	static const int32_t w3[] = { 6400, 128 }, b3[] = { 128 }, w4[] = { 128, 10 }, b4[] = { 10 };
	static const int32_t pads[] = { 0, 0, 0, 0 };
	static const char desc[] = "nnnkit example: MNIST-shaped classifier (random weights)";
	nnn_layer_t layers[4];
	nnn_model_t m;
	owned_t o = { .ndata = 0 };
	nnn_diags_t d;
	nnn_status_t st;

	if (argc != 2 && argc != 3) {
		fprintf(stderr, "usage: mkexample OUT.nnn [INPUTS.npy]\n");
		return 2;
	}
	memset(layers, 0, sizeof layers);
	memset(&m, 0, sizeof m);
	conv(&layers[0], &o, k1, b1, pads);
	conv(&layers[1], &o, k2, b2, pads);
	dense(&layers[2], &o, w3, b3, NNN_ACTIVATION_ID_RELU, true);
	dense(&layers[3], &o, w4, b4, NNN_ACTIVATION_ID_SOFTMAX, false);
	m.description.ptr = desc;
	m.description.len = (int32_t)strlen(desc);
	m.layer_count = 4;
	m.layers = layers;
	m.param_count = nnn_model_param_total(&m);

	nnn_diags_init(&d);
	st = nnn_model_write_file(&m, argv[1], &d);
	if (st == NNN_OK && argc == 3) {
		/* Two "images": a bright square and a diagonal stroke. */
		static float img[2][28 * 28];
		nnn_shape_t shape = { .rank = 4, .dims = { 2, 28, 28, 1 } };
		for (int y = 0; y < 28; y++)
			for (int x = 0; x < 28; x++) {
				img[0][y * 28 + x] = (x > 8 && x < 20 && y > 8 && y < 20) ? 1.0f : 0.0f;
				img[1][y * 28 + x] = (x == y || x == y + 1) ? 1.0f : 0.0f;
			}
		st = nnn_npy_write_file(argv[2], &shape, &img[0][0], &d);
	}
	if (st != NNN_OK) {
		char buf[1024];
		for (size_t i = 0; i < d.n; i++)
			fprintf(stderr, "mkexample: %s\n", nnn_diag_format(&d.v[i], buf, sizeof buf));
	}
	nnn_diags_free(&d);
	for (int i = 0; i < o.ndata; i++)
		free(o.data[i]);
	return st == NNN_OK ? 0 : 1;
}
