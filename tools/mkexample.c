/* mkexample: writes the example model, an MNIST-shaped classifier
 * (Conv 5x5 1->8, Conv 5x5 8->16, Dense 6400->128, Dense 128->10) with
 * deterministic pseudo-random weights, or one of the benchmark's other
 * networks. Shows how to build a model with the library alone: fill in the
 * generated records, then write atomically.
 *
 * With INPUTS.npy it also writes two inputs: for the example, two 28x28x1
 * images; for a --net network, two deterministic inputs of its shape.
 *
 *   mkexample OUT.nnn [INPUTS.npy]
 *   mkexample --net NAME OUT.nnn [INPUTS.npy]
 *   mkexample --list      one line per network: name, input shape, layers
 *
 * The networks are spelled in the schema's own names (layer types,
 * activations, padding types), so they say nothing the schema does not.
 */
#define _POSIX_C_SOURCE 200809L /* strtok_r */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nnn/model.h>
#include <nnn/npy.h>

#define MAX_LAYERS 8

/* The benchmark's networks (make bench, issue 17), and the tests that hold
 * the fast kernels to the plain ones on every shape the benchmark uses.
 * layers: "|"-separated; "conv KxK.. FILTERS PADDING ACTIVATION" or
 * "dense NEURONS [flatten] ACTIVATION". */
typedef struct net {
	const char *name, *input, *layers, *about;
} net_t;

static const net_t nets[] = {
	{ "example", "28,28,1",
	  "conv 5x5 8 valid relu | conv 5x5 16 valid relu | dense 128 flatten relu | dense 10 softmax",
	  "the MNIST-shaped example classifier" },
	{ "cifar", "32,32,3", "conv 3x3 32 same relu | conv 3x3 64 same relu | dense 10 flatten softmax",
	  "CIFAR-sized: Conv 3x3 32 Same, Conv 3x3 64 Same, Dense 65536->10" },
	{ "audio", "16000,1", "conv 9 16 valid relu | conv 9 32 valid relu | dense 10 flatten softmax",
	  "1-D audio frame: Conv 9 16, Conv 9 32, Dense 511488->10" },
	{ "conv3d", "16,16,16,1", "conv 3x3x3 8 valid relu", "3-D conv: Conv 3x3x3 8" },
	{ "mlp", "1024", "dense 4096 relu | dense 4096 relu | dense 10 softmax", "wide MLP 1024->4096->4096->10" },
	{ "conv5x3", "32,32,16", "conv 5x3 32 same relu", "unequal kernel sizes: Conv 5x3 16->32 Same" },
	{ "identity", "1", "dense 1 linear", "identity-like: one Dense 1->1, linear (the fixed cost of a call)" },
};
#define NNETS (sizeof nets / sizeof nets[0])

/* Everything the model points at lives here; freed at exit. */
typedef struct owned {
	void *data[4 * MAX_LAYERS];
	int ndata;
} owned_t;

static uint32_t rng = 12345u;

static void die(const char *what)
{
	fprintf(stderr, "mkexample: %s\n", what);
	exit(2);
}

static void *own(owned_t *o, size_t bytes)
{
	void *p = bytes ? malloc(bytes) : NULL;
	if (!p || o->ndata == (int)(sizeof o->data / sizeof o->data[0]))
		die("out of memory");
	o->data[o->ndata++] = p;
	return p;
}

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
	float *v = own(o, (size_t)n * sizeof *v);
	for (int64_t i = 0; i < n; i++)
		v[i] = next_weight(scale);
	t.dims.v = dims;
	t.dims.n = rank;
	t.requires_grad = true;
	t.data = nnn_f32s_view(v, (int32_t)n);
	return t;
}

static int64_t value_of(bool (*lookup)(const char *, int64_t *), const char *name, const char *what)
{
	int64_t v;
	if (!name || !lookup(name, &v)) {
		fprintf(stderr, "mkexample: %s '%s' is not in the schema\n", what, name ? name : "");
		exit(2);
	}
	return v;
}

/* Parses "28,28,1" into dims (no batch); returns the rank. */
static int parse_dims(const char *s, int32_t *dims, int max, char sep)
{
	int n = 0;
	for (char *end; *s && n < max; s = *end == sep ? end + 1 : end) {
		dims[n++] = (int32_t)strtol(s, &end, 10);
		if (end == s)
			die("bad dims in a network's spec");
	}
	return n;
}

/* Builds network `net` into m. Weights are uniform with variance 1/fan-in
 * (outputs stay of the inputs' size), the example's with its own scales. */
static void build(const net_t *net, nnn_model_t *m, nnn_layer_t *layers, owned_t *o)
{
	bool example = strcmp(net->name, "example") == 0;
	int32_t in[8];
	int rank = parse_dims(net->input, in, 8, ',');
	char spec[256], *save = NULL;
	int nl = 0;

	snprintf(spec, sizeof spec, "%s", net->layers);
	for (char *ls = strtok_r(spec, "|", &save); ls; ls = strtok_r(NULL, "|", &save)) {
		char *w[8], *s2 = NULL;
		int nw = 0;
		for (char *t = strtok_r(ls, " ", &s2); t && nw < 8; t = strtok_r(NULL, " ", &s2))
			w[nw++] = t;
		if (nw < 3 || nl == MAX_LAYERS)
			die("bad layer in a network's spec");
		nnn_layer_t *L = &layers[nl++];
		L->id = (uint8_t)value_of(nnn_layer_id_value, w[0], "layer type");
		L->activation.id = (uint8_t)value_of(nnn_activation_id_value, w[nw - 1], "activation");
		if (L->id == NNN_LAYER_ID_CONV) {
			int32_t *kd = own(o, 8 * sizeof *kd), *bd = own(o, sizeof *bd), *pads = own(o, 16 * sizeof *pads);
			int nk = parse_dims(w[1], kd + 1, 6, 'x');
			int64_t ptype = value_of(nnn_padding_type_value, w[3], "padding type"), fan = in[rank - 1];
			if (nw != 5 || nk != rank - 1)
				die("a conv's kernel must have one size per spatial axis");
			kd[0] = bd[0] = (int32_t)strtol(w[2], NULL, 10);
			kd[nk + 1] = in[rank - 1];
			for (int i = 0; i < nk; i++) {
				int64_t before, after;
				if (!nnn_padding_type_pads(ptype, kd[i + 1], &before, &after))
					die("padding type without formulas");
				pads[2 * i] = (int32_t)before;
				pads[2 * i + 1] = (int32_t)after;
				in[i] += (int32_t)(before + after) - kd[i + 1] + 1;
				fan *= kd[i + 1];
			}
			in[rank - 1] = kd[0];
			L->bias = tensor(o, bd, 1, example ? 0.1f : 0.0f);
			L->body.conv.filters = kd[0];
			L->body.conv.kernels = tensor(o, kd, nk + 2, example ? 0.4f : 3.4641f / sqrtf((float)fan));
			L->body.conv.padding_type = (uint8_t)ptype;
			L->body.conv.padding_dims.v = pads;
			L->body.conv.padding_dims.n = 2 * nk;
		} else {
			int32_t *wd = own(o, 2 * sizeof *wd), *bd = own(o, sizeof *bd);
			bool flatten = nw == 4 && strcmp(w[2], "flatten") == 0;
			if (nw != 3 + flatten)
				die("bad dense layer in a network's spec");
			wd[0] = in[rank - 1];
			if (flatten)
				for (int i = 0; i < rank - 1; i++)
					wd[0] *= in[i];
			wd[1] = bd[0] = (int32_t)strtol(w[1], NULL, 10);
			if (flatten)
				rank = 1;
			in[rank - 1] = wd[1];
			L->bias = tensor(o, bd, 1, example ? 0.1f : 0.0f);
			L->body.dense.neurons = wd[1];
			L->body.dense.weights = tensor(o, wd, 2, example ? 0.05f : 3.4641f / sqrtf((float)wd[0]));
			L->body.dense.flatten = flatten;
		}
	}
	m->layer_count = nl;
	m->layers = layers;
	m->param_count = nnn_model_param_total(m);
}

/* Two inputs for net: the example's two images, else a sawtooth in [0, 1). */
static nnn_status_t write_inputs(const net_t *net, const char *path, owned_t *o, nnn_diags_t *d)
{
	nnn_shape_t shape = { .rank = 1, .dims = { 2 } };
	int32_t in[8];
	int64_t n = 1;
	shape.rank += parse_dims(net->input, in, 8, ',');
	for (int i = 1; i < shape.rank; i++)
		n *= shape.dims[i] = in[i - 1];
	float *x = own(o, (size_t)(2 * n) * sizeof *x);
	if (strcmp(net->name, "example") == 0) /* a bright square and a diagonal stroke */
		for (int y = 0; y < 28; y++)
			for (int i = 0; i < 28; i++) {
				x[y * 28 + i] = (i > 8 && i < 20 && y > 8 && y < 20) ? 1.0f : 0.0f;
				x[n + y * 28 + i] = (i == y || i == y + 1) ? 1.0f : 0.0f;
			}
	else
		for (int64_t i = 0; i < 2 * n; i++)
			x[i] = (float)(((uint64_t)i * 2654435761u) & 1023u) / 1024.0f;
	return nnn_npy_write_file(path, &shape, x, d);
}

int main(int argc, char **argv)
{
	char desc[160];
	const net_t *net = &nets[0];
	nnn_layer_t layers[MAX_LAYERS];
	nnn_model_t m;
	owned_t o = { .ndata = 0 };
	nnn_diags_t d;
	nnn_status_t st;

	if (argc == 2 && strcmp(argv[1], "--list") == 0) {
		for (size_t i = 0; i < NNETS; i++)
			printf("%s\t%s\t%s\t%s\n", nets[i].name, nets[i].input, nets[i].layers, nets[i].about);
		return 0;
	}
	if (argc >= 3 && strcmp(argv[1], "--net") == 0) {
		for (net = NULL; net == NULL || strcmp(net->name, argv[2]) != 0; net = net ? net + 1 : nets)
			if (net == nets + NNETS - 1) {
				fprintf(stderr, "mkexample: no network '%s' (mkexample --list names them)\n", argv[2]);
				return 2;
			}
		argv += 2;
		argc -= 2;
	}
	/* An option it does not know (--help, a typo) is not a path to write over. */
	if ((argc != 2 && argc != 3) || argv[1][0] == '-' || (argc == 3 && argv[2][0] == '-')) {
		fprintf(stderr, "usage: mkexample [--net NAME] OUT.nnn [INPUTS.npy]\n       mkexample --list\n");
		return 2;
	}
	memset(layers, 0, sizeof layers);
	memset(&m, 0, sizeof m);
	if (net == &nets[0])
		snprintf(desc, sizeof desc, "nnnkit example: MNIST-shaped classifier (random weights)");
	else
		snprintf(desc, sizeof desc, "nnnkit bench: %s (random weights)", net->about);
	build(net, &m, layers, &o);
	m.description.ptr = desc;
	m.description.len = (int32_t)strlen(desc);

	nnn_diags_init(&d);
	st = nnn_model_write_file(&m, argv[1], &d);
	if (st == NNN_OK && argc == 3)
		st = write_inputs(net, argv[2], &o, &d);
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
