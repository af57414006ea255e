/* test_fastpaths.c: issue 17, target 6: the builtin plugin's fast paths
 * (its own AVX2 and AVX-512 micro-kernels) stay exact within the corpus
 * tolerances, held to its plain path (im2col + OpenBLAS sgemm) and to a
 * double-precision reference, on every kernel shape the benchmark uses.
 *
 * The networks are the benchmark's: `mkexample --list` at run time
 * ($NNN_BUILD/mkexample, else build/mkexample), one parameter of each test
 * per line, so that a network added there is covered here with nothing to
 * change. Each is written by `mkexample --net NAME` and read back; a layer
 * whose bias is all zero (the benchmark's random networks) gets test
 * values, so that the bias add is checked too.
 *
 *   fastpaths/layers    every layer of the network, its input shape from the
 *                       shape engine (nnn_model_shapes), at batch 1, 2, 3, 5
 *                       and 64 with 1 and 2 threads, under every instruction
 *                       set the CPU has (its best, "avx2", "generic"): the
 *                       kernel through the context, nnn_ctx_layer(ctx,
 *                       id)->forward with the state of its own prepare and
 *                       the activation offered for fusing as nnn_plan_run
 *                       offers it, on pseudo-random inputs in [-1, 1).
 *   fastpaths/networks  the whole network through nnn_plan_run at batch 1, 3
 *                       and 64 (the benchmark's two, and an odd one; each
 *                       layer has the others), 1 and 2 threads, every
 *                       instruction set; inputs in [-1, 1).
 *   fastpaths/list      the list itself: one parseable line per network.
 *   paths/bench_batches one test per path, "avx512", "avx2", "generic"
 *                       (issue 34): every layer of the example at the
 *                       benchmark's own batches that the layers test does
 *                       not run, 8 and 256, on that path alone (and the
 *                       plain path beside it), 1 and 2 threads. At 256 the
 *                       AVX-512 Dense layers take their rows in more than
 *                       one block of 126 (the 128 KiB blocks of weights,
 *                       dense.c), which batch 64 never does on one thread;
 *                       the benchmark's 1024 is more blocks of the same
 *                       (it took 4 of the test's 7 seconds, for no path
 *                       256 misses). A path this CPU cannot run is skipped
 *                       with the reason: a [SKIP] line on stderr, and
 *                       SKIPPED in the JUnit report.
 *
 * A CPU without AVX-512 (or under valgrind, which hides it), or without
 * AVX2, cannot run those paths at all: layers and networks then run the
 * paths it has, and say which they left out (a [SKIP] line on stderr), and
 * paths/bench_batches skips that path's test (cr_skip_test: SKIPPED in the JUnit
 * report, left out of Criterion's "Tested" count), so no missing path
 * passes unseen.
 *
 * Truth. A layer's value is b + sum of x * w over its taps (Dense: the
 * inputs; Conv: cross-correlation, stride 1, over the zero-padded patch,
 * channels-last, as the spec says), then its activation, computed here in
 * double by plain loops over the float inputs and weights (each product is
 * exact in double). A network's output: those layers chained in double.
 *
 * Tolerance. The conformance corpus holds an output to
 * |got - ref| <= T * (1 + |ref|), T = 1e-4 (`nnnkit conformance
 * --tolerance`, its default; docs/plugins.md). Most corpus cases are
 * one-layer models, so every layer's output here meets that rule, and every
 * network's. A layer's value also meets the bound every float evaluation of
 * its sum meets, whatever its order (Higham, Accuracy and Stability of
 * Numerical Algorithms, 3.1): with n = K + 1 terms (K products and the
 * bias), |got - exact| <= g(n) * M, g(n) = n u / (1 - n u), u = 2^-24, M =
 * b + sum |x * w| in magnitude; ReLU and linear keep it. For short sums that
 * bound is far tighter than the corpus rule (a 5x5 conv of one channel:
 * g(26) = 1.5e-6 of M), so a lost or doubled tap is caught; for long ones
 * (g(n) passes T at n of about 1700) the corpus rule mostly is. So:
 *   layer value vs reference  |got - ref| <= min(T (1 + |ref|), g(K + 1) M)
 *   fast vs plain, every value |fast - plain| <= min(2 T (1 + |plain|) /
 *                              (1 - T), 2 g(K + 1) M'), M' = |b| +
 *                              |patch| |w_f| (Cauchy-Schwarz: >= M, and cheap
 *                              for every value)
 *   softmax (the host applies it, never fused): the layer's logits as above,
 *                              its probabilities by the corpus rule alone
 *   network output vs reference, fast vs plain: the corpus rule (doubled for
 *                              two computed sides)
 * Bits: the fast kernels sum in one fixed order whatever the thread count
 * and the instruction set (plugins/builtin/kern.c), so threads 1 and 2, and
 * AVX-512 and AVX2, must give the same bits, per layer and per network.
 *
 * Cost. The fast and plain paths run on every value. The double reference
 * of a layer costs K multiply-adds a value: every value when the layer's
 * whole output costs at most REF_MACS, else a deterministic sample of
 * values that costs about that (edges favoured: first and last along every
 * axis, the filters at panel boundaries), at least MIN_SAMPLES values; e.g.
 * mlp's 4096x4096 layer at batch 64 alone would take 1.1 G multiply-adds.
 * Every value is still held to the plain path. A network's reference is
 * computed for the rows 0, 1, 2, batch/2 and batch-1 of its inputs (rows
 * are the same whatever the batch, so each row's reference is computed
 * once). Under `make valgrind` (t_under_valgrind(); valgrind hides
 * AVX-512, so the best is AVX2 there) batches 1 and 2 only, a smaller
 * sample; batch 2 only for layers of at most VG_RUN_MACS multiply-adds
 * there, and networks of at most VG_NET_MACS an item, which alone are held
 * to their double reference (the others run at batch 1, fast against plain;
 * the log names what was left out). Under ASan (T_ASAN: the sanitizer
 * tree, clang -O1, kernels about 20x slower) the batches of make test, but
 * past batch 2 only layers of at most SAN_RUN_MACS multiply-adds and
 * networks of at most SAN_NET_MACS an item: what a sanitizer can find
 * (every kernel path, its panel and thread-chunk edges) is on every layer
 * below that; the bench's largest layers at batch 64 only cost time there.
 *
 * NNN_FASTPATHS_REPORT=1 prints the worst differences seen per instruction
 * set to stderr. */
#define _DEFAULT_SOURCE /* madvise, MADV_HUGEPAGE */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <nnn/context.h>
#include <nnn/file.h>
#include <nnn/run.h>
#include <nnn/shape.h>

#include "blackbox.h"
#include "ctx.h"
#include "isa.h"
#include "shell.h"
#include "tmpdir.h"

#define T_CORPUS 1e-4            /* nnnkit conformance's default --tolerance */
#define U_F32 (1.0 / 16777216.0) /* 2^-24: float's unit roundoff */
#define REF_MACS 4000000.0       /* double multiply-adds of a layer's sampled reference */
#define VG_REF_MACS 1000000.0    /* the same under valgrind */
#define MIN_SAMPLES 64
#define VG_NET_MACS 25000000.0   /* under valgrind: networks' references up to this a row */
#define VG_RUN_MACS 10000000.0   /* under valgrind: batches past 1 of a layer up to this */
#define SAN_RUN_MACS 50000000.0  /* under ASan: batches past 2 of a layer up to this */
#define SAN_NET_MACS 5000000.0   /* under ASan: batches past the first of networks up to this an item */
#define MAX_NETS 64
#define MAX_LAYERS 16
#define PAD 16                   /* floats past every output, which no kernel may write */

static const int batches[] = { 1, 2, 3, 5, 64 };
/* whole networks: the benchmark's two and an odd one (each layer has all) */
static const int net_batches[] = { 1, 3, 64 };
static const int vg_batches[] = { 1, 2 };

/* ---- the networks: `mkexample --list` ---- */

/* One line of the list; error set when the list could not be read (the
 * test then fails with it). No pointers: Criterion copies parameters. */
typedef struct netspec {
	char name[48], input[64];
	char error[2048];
} netspec_t;

/* Reads the list (in Criterion's runner: no assertions here). */
static size_t read_list(netspec_t *v, size_t max)
{
	char cmd[1200], line[2048];
	size_t n = 0;
	snprintf(cmd, sizeof cmd, "'%s/mkexample' --list 2>&1", t_build_dir());
	FILE *p = popen(cmd, "r");
	if (!p) {
		snprintf(v[0].error, sizeof v[0].error, "cannot run %s", cmd);
		return 1;
	}
	while (fgets(line, sizeof line, p)) {
		char *tab1 = strchr(line, '\t'), *tab2 = tab1 ? strchr(tab1 + 1, '\t') : NULL;
		if (n == max) {
			snprintf(v[0].error, sizeof v[0].error, "%s lists more than %d networks: raise MAX_NETS", cmd,
			         MAX_NETS);
			n = 1;
			break;
		}
		memset(&v[n], 0, sizeof v[n]);
		if (!tab1 || !tab2 || tab1 == line || tab2 == tab1 + 1 || (size_t)(tab1 - line) >= sizeof v[n].name ||
		    (size_t)(tab2 - tab1 - 1) >= sizeof v[n].input) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(v[0].error, sizeof v[0].error, "%s: line %zu is not NAME<tab>INPUT<tab>LAYERS...: '%.150s'",
			         cmd, n + 1, line);
			n = 1;
			break;
		}
		memcpy(v[n].name, line, (size_t)(tab1 - line));
		memcpy(v[n].input, tab1 + 1, (size_t)(tab2 - tab1 - 1));
		n++;
	}
	int st = pclose(p);
	if (!v[0].error[0] && (st != 0 || n == 0)) {
		snprintf(v[0].error, sizeof v[0].error, "%s: exit status %d, %zu networks (make builds mkexample)", cmd, st,
		         n);
		n = 1;
	}
	return n;
}

static netspec_t *list_params(size_t *n)
{
	static netspec_t v[MAX_NETS];
	memset(v, 0, sizeof v);
	*n = read_list(v, MAX_NETS);
	return v;
}

/* ---- deterministic inputs ---- */

/* Row r of stream `seed`: n values in [-1, 1), multiples of 2^-23, the
 * same whatever the batch the row is part of. */
static void fill_row(float *x, int64_t n, uint64_t seed, int64_t r)
{
	uint64_t z = seed * 0x9e3779b97f4a7c15u ^ (uint64_t)(r + 1) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 30)) * 0x94d049bb133111ebu;
	z ^= z >> 31;
	for (int64_t j = 0; j < n; j++) {
		z = z * 6364136223846793005u + 1442695040888963407u;
		x[j] = (float)((double)(z >> 40) / (double)(1u << 23) - 1.0);
	}
}

static void fill_rows(float *x, int64_t rows, int64_t per_row, uint64_t seed)
{
	for (int64_t r = 0; r < rows; r++)
		fill_row(x + r * per_row, per_row, seed, r);
}

/* ---- a network, read back from mkexample's file ---- */

/* A layer's weights as the reference reads them: w[f * k + tap] (Dense:
 * transposed from [inputs, neurons]), the bias, and |w_f|. */
typedef struct wts {
	int64_t f, k;
	float *w, *b;
	double *wn;
} wts_t;

typedef struct net {
	const netspec_t *spec;
	int32_t in_rank; /* the input without batch */
	int64_t in_dims[NNN_MAX_RANK];
	nnn_file_t *file;
	nnn_model_t m;       /* the file's, with layers of our own (biases) */
	nnn_layer_t *layers;
	float *bias[MAX_LAYERS]; /* test biases, or NULL */
	wts_t wt[MAX_LAYERS];
	nnn_ctx_t *ctx;
} net_t;

static const char *plugin_path(void)
{
	static char path[1024];
	snprintf(path, sizeof path, "%s/plugins/builtin.so", t_build_dir());
	return path;
}

static const char *diag_msg(const nnn_diags_t *d)
{
	return d->n ? d->v[0].msg : "(no message)";
}

static void wts_init(wts_t *t, const nnn_layer_t *L)
{
	nnn_f32s_t src;
	int64_t nw;
	t->f = L->id == NNN_LAYER_ID_CONV ? L->body.conv.filters : L->body.dense.neurons;
	cr_assert(L->id == NNN_LAYER_ID_CONV || L->id == NNN_LAYER_ID_DENSE,
	          "layer type %s: the test has no reference for it; add one to tests/unit/test_fastpaths.c",
	          nnn_layer_id_name(L->id) ? nnn_layer_id_name(L->id) : "?");
	src = L->id == NNN_LAYER_ID_CONV ? L->body.conv.kernels.data : L->body.dense.weights.data;
	nw = src.n;
	t->k = nw / t->f;
	t->w = malloc((size_t)nw * sizeof *t->w);
	t->b = malloc((size_t)t->f * sizeof *t->b);
	t->wn = calloc((size_t)t->f, sizeof *t->wn);
	cr_assert(t->w && t->b && t->wn, "out of memory for %lld weights", (long long)nw);
	if (L->id == NNN_LAYER_ID_CONV) /* [filters, k1..kn, channels]: filter-major already */
		nnn_f32s_copy(src, t->w);
	else { /* [inputs, neurons], transposed in tiles (a column at a time would miss the cache) */
		float *tmp = malloc((size_t)nw * sizeof *tmp);
		cr_assert(tmp, "out of memory for %lld weights", (long long)nw);
		nnn_f32s_copy(src, tmp);
		for (int64_t i0 = 0; i0 < t->k; i0 += 64)
			for (int64_t f0 = 0; f0 < t->f; f0 += 64)
				for (int64_t i = i0; i < i0 + 64 && i < t->k; i++)
					for (int64_t f = f0; f < f0 + 64 && f < t->f; f++)
						t->w[f * t->k + i] = tmp[i * t->f + f];
		free(tmp);
	}
	nnn_f32s_copy(L->bias.data, t->b);
	for (int64_t f = 0; f < t->f; f++) {
		double s = 0;
		for (int64_t i = 0; i < t->k; i++)
			s += (double)t->w[f * t->k + i] * t->w[f * t->k + i];
		t->wn[f] = sqrt(s);
	}
}

static void net_open(net_t *n, const netspec_t *spec)
{
	nnn_decode_opts_t copy = { .flags = NNN_DECODE_COPY };
	nnn_diags_t d;
	char out[2048];
	const char *file = t_tmppath("fastpaths", "net.nnn");

	cr_assert(!spec->error[0], "%s", spec->error);
	memset(n, 0, sizeof *n);
	n->spec = spec;
	for (const char *s = spec->input; *s; s += *s == ',') {
		char *end;
		cr_assert(n->in_rank < NNN_MAX_RANK - 1, "%s: input %s has too many dims", spec->name, spec->input);
		n->in_dims[n->in_rank++] = strtoll(s, &end, 10);
		cr_assert(end != s && (*end == ',' || !*end) && n->in_dims[n->in_rank - 1] > 0,
		          "%s: input '%s' is not D1,D2,...", spec->name, spec->input);
		s = end;
	}
	cr_assert_eq(t_sh(out, sizeof out, "'%s/mkexample' --net '%s' '%s'", t_build_dir(), spec->name, file), 0,
	             "mkexample --net %s: %s", spec->name, out);
	nnn_diags_init(&d);
	cr_assert_eq(nnn_file_open(file, &copy, &n->file, &d), NNN_OK, "%s: %s", file, diag_msg(&d));
	const nnn_model_t *m = nnn_file_model(n->file);
	cr_assert(m->layer_count >= 1 && m->layer_count <= MAX_LAYERS, "%s: %d layers (at most %d here)", spec->name,
	          (int)m->layer_count, MAX_LAYERS);
	n->m = *m;
	n->layers = malloc((size_t)m->layer_count * sizeof *n->layers);
	cr_assert(n->layers);
	memcpy(n->layers, m->layers, (size_t)m->layer_count * sizeof *n->layers);
	n->m.layers = n->layers;
	for (int32_t i = 0; i < m->layer_count; i++) {
		nnn_layer_t *L = &n->layers[i];
		bool zero = true;
		for (int32_t j = 0; j < L->bias.data.n && zero; j++)
			zero = nnn_f32s_get(L->bias.data, j) == 0.0f;
		if (zero && L->bias.data.n > 0) { /* else the bias add would go unchecked */
			n->bias[i] = malloc((size_t)L->bias.data.n * sizeof(float));
			cr_assert(n->bias[i]);
			fill_row(n->bias[i], L->bias.data.n, 1000 + (uint64_t)i, 0);
			for (int32_t j = 0; j < L->bias.data.n; j++)
				n->bias[i][j] *= 0.5f;
			L->bias.data = nnn_f32s_view(n->bias[i], L->bias.data.n);
		}
		wts_init(&n->wt[i], L);
	}
	cr_assert_eq(nnn_ctx_new(&n->ctx, &d), NNN_OK, "%s", diag_msg(&d));
	cr_assert_eq(nnn_plugin_load(n->ctx, plugin_path(), &d), NNN_OK, "%s: %s", plugin_path(), diag_msg(&d));
	nnn_diags_free(&d);
}

static void net_close(net_t *n)
{
	nnn_ctx_free(n->ctx);
	for (int i = 0; i < MAX_LAYERS; i++) {
		free(n->bias[i]);
		free(n->wt[i].w);
		free(n->wt[i].b);
		free(n->wt[i].wn);
	}
	free(n->layers);
	nnn_file_close(n->file);
}

static nnn_shape_t input_shape(const net_t *n, int64_t batch)
{
	nnn_shape_t s = { .rank = n->in_rank + 1 };
	s.dims[0] = batch;
	memcpy(s.dims + 1, n->in_dims, (size_t)n->in_rank * sizeof s.dims[0]);
	return s;
}

/* Every layer's input and output shapes from the shape engine. */
static void net_shapes(const net_t *n, int64_t batch, nnn_shape_t *in, nnn_shape_t *out)
{
	nnn_layer_shapes_t sh[MAX_LAYERS];
	nnn_shape_t x = input_shape(n, batch);
	nnn_diags_t d;
	nnn_diags_init(&d);
	nnn_status_t st = nnn_model_shapes(&n->m, &x, sh, &d);
	cr_assert_eq(st, NNN_OK, "%s at batch %lld: shapes: %s", n->spec->name, (long long)batch, diag_msg(&d));
	nnn_diags_free(&d);
	for (int32_t i = 0; i < n->m.layer_count; i++) {
		const nnn_pshape_t *ps[2] = { &sh[i].in, &sh[i].out };
		nnn_shape_t *s[2] = { &in[i], &out[i] };
		for (int k = 0; k < 2; k++) {
			cr_assert(nnn_pshape_exact(ps[k]), "%s layer %d: a shape the engine does not know exactly",
			          n->spec->name, (int)i);
			s[k]->rank = ps[k]->rank;
			memcpy(s[k]->dims, ps[k]->dims, (size_t)ps[k]->rank * sizeof s[k]->dims[0]);
		}
	}
}

/* "layer 1 (conv 9 16->32, relu)" */
static const char *layer_what(const net_t *n, int i)
{
	static char buf[4][160];
	char *b = buf[i % 4];
	const nnn_layer_t *L = &n->layers[i];
	const char *act = nnn_activation_id_name(L->activation.id);
	if (L->id == NNN_LAYER_ID_CONV) {
		const int32_t *k = L->body.conv.kernels.dims.v, nk = L->body.conv.kernels.dims.n;
		char ks[64] = "";
		for (int32_t j = 1; j < nk - 1; j++)
			snprintf(ks + strlen(ks), sizeof ks - strlen(ks), "%s%d", j > 1 ? "x" : "", (int)k[j]);
		snprintf(b, sizeof buf[0], "%s layer %d (conv %s %d->%d, %s)", n->spec->name, i, ks, (int)k[nk - 1],
		         (int)k[0], act ? act : "?");
	} else {
		snprintf(b, sizeof buf[0], "%s layer %d (dense %lld->%d, %s)", n->spec->name, i, (long long)n->wt[i].k,
		         (int)L->body.dense.neurons, act ? act : "?");
	}
	return b;
}

/* ---- the reference ---- */

/* A layer's geometry at one batch: the output is P rows (batch and
 * positions) of F values; value (p, f) is b[f] plus the dot product of
 * filter f's K weights with p's patch, a few runs of contiguous input. */
typedef struct geo {
	const wts_t *wt;
	uint8_t act;
	int64_t P, F, K;
	bool conv;
	int32_t n;                /* Conv: spatial axes */
	int64_t c, nq, klast;     /* channels; runs of a patch; last kernel size */
	int64_t d[NNN_MAX_RANK], o[NNN_MAX_RANK], k[NNN_MAX_RANK], before[NNN_MAX_RANK];
	int64_t stride[NNN_MAX_RANK], bstride, opos;
	int32_t out_rank;
	int64_t out_dims[NNN_MAX_RANK];
} geo_t;

typedef struct run {
	int64_t xo, wo, len;
} run_t;

static void geo_init(geo_t *g, const net_t *n, int li, const nnn_shape_t *in, const nnn_shape_t *out)
{
	const nnn_layer_t *L = &n->layers[li];
	memset(g, 0, sizeof *g);
	g->wt = &n->wt[li];
	g->act = L->activation.id;
	g->F = g->wt->f;
	g->K = g->wt->k;
	g->out_rank = out->rank;
	memcpy(g->out_dims, out->dims, sizeof g->out_dims);
	g->P = nnn_shape_numel(out) / g->F;
	cr_assert_eq(out->dims[out->rank - 1], g->F, "%s: output %lld features, expected %lld", layer_what(n, li),
	             (long long)out->dims[out->rank - 1], (long long)g->F);
	if (L->id == NNN_LAYER_ID_DENSE) {
		cr_assert_eq(nnn_shape_numel(in), g->P * g->K, "%s: %lld inputs are not %lld rows of %lld",
		             layer_what(n, li), (long long)nnn_shape_numel(in), (long long)g->P, (long long)g->K);
		g->nq = 1;
		return;
	}
	g->conv = true;
	g->n = in->rank - 2;
	g->c = in->dims[in->rank - 1];
	g->opos = 1;
	g->nq = 1;
	for (int32_t j = 0; j < g->n; j++) {
		g->d[j] = in->dims[1 + j];
		g->o[j] = out->dims[1 + j];
		g->k[j] = L->body.conv.kernels.dims.v[1 + j];
		g->before[j] = L->body.conv.padding_dims.v[2 * j];
		/* the spec's Conv: stride 1, the output what the padded input leaves */
		int64_t want = g->d[j] + g->before[j] + L->body.conv.padding_dims.v[2 * j + 1] - g->k[j] + 1;
		cr_assert_eq(g->o[j], want, "%s: output axis %d is %lld; stride 1 gives %lld (the reference assumes it)",
		             layer_what(n, li), (int)j + 1, (long long)g->o[j], (long long)want);
		g->opos *= g->o[j];
		if (j < g->n - 1)
			g->nq *= g->k[j];
	}
	g->klast = g->k[g->n - 1];
	g->stride[g->n - 1] = g->c;
	for (int32_t j = g->n - 2; j >= 0; j--)
		g->stride[j] = g->stride[j + 1] * g->d[j + 1];
	g->bstride = g->stride[0] * g->d[0];
	cr_assert_eq(g->K, g->nq * g->klast * g->c, "%s: kernels of %lld taps a filter", layer_what(n, li),
	             (long long)g->K);
}

/* The runs of row p's patch that lie inside the input (zero padding adds
 * nothing): input offset, tap offset, length. Returns how many. */
static int64_t patch_runs(const geo_t *g, int64_t p, run_t *r)
{
	if (!g->conv) {
		r[0] = (run_t){ p * g->K, 0, g->K };
		return 1;
	}
	int64_t pos[NNN_MAX_RANK], t[NNN_MAX_RANK] = { 0 }, b = p / g->opos, rem = p % g->opos, nr = 0;
	const int32_t last = g->n - 1;
	for (int32_t j = last; j >= 0; j--) {
		pos[j] = rem % g->o[j];
		rem /= g->o[j];
	}
	for (int64_t q = 0; q < g->nq; q++) {
		int64_t off = b * g->bstride;
		bool inside = true;
		for (int32_t j = 0; j < last && inside; j++) {
			int64_t i = pos[j] + t[j] - g->before[j];
			inside = i >= 0 && i < g->d[j];
			off += i * g->stride[j];
		}
		int64_t s = pos[last] - g->before[last], lo = s < 0 ? 0 : s;
		int64_t hi = s + g->klast < g->d[last] ? s + g->klast : g->d[last];
		if (inside && hi > lo)
			r[nr++] = (run_t){ off + lo * g->c, (q * g->klast + lo - s) * g->c, (hi - lo) * g->c };
		for (int32_t j = last - 1; j >= 0; j--) {
			if (++t[j] < g->k[j])
				break;
			t[j] = 0;
		}
	}
	return nr;
}

/* b[f] + sum over the runs, in double; *mag = |b[f]| + sum |x * w|. */
#define DEF_DOT(NAME, T)                                                                                   \
	static double NAME(const geo_t *g, const T *x, const run_t *r, int64_t nr, int64_t f, double *mag)     \
	{                                                                                                        \
		const float *w = g->wt->w + f * g->K;                                                                \
		double s0 = g->wt->b[f], s1 = 0, m0 = fabs((double)g->wt->b[f]), m1 = 0;                              \
		for (int64_t q = 0; q < nr; q++) {                                                                   \
			const T *xq = x + r[q].xo;                                                                       \
			const float *wq = w + r[q].wo;                                                                   \
			int64_t i = 0;                                                                                   \
			for (; i + 1 < r[q].len; i += 2) { /* two chains: twice as fast, and double is ample */        \
				double a = (double)xq[i] * wq[i], c = (double)xq[i + 1] * wq[i + 1];                         \
				s0 += a;                                                                                     \
				s1 += c;                                                                                     \
				m0 += fabs(a);                                                                               \
				m1 += fabs(c);                                                                               \
			}                                                                                                \
			if (i < r[q].len) {                                                                              \
				double a = (double)xq[i] * wq[i];                                                            \
				s0 += a;                                                                                     \
				m0 += fabs(a);                                                                               \
			}                                                                                                \
		}                                                                                                    \
		*mag = m0 + m1;                                                                                      \
		return s0 + s1;                                                                                      \
	}
DEF_DOT(dot_f, float)
DEF_DOT(dot_d, double)

/* |patch of row p|, for the Cauchy-Schwarz bound of its magnitudes. */
static double patch_norm(const geo_t *g, const float *x, const run_t *r, int64_t nr)
{
	double s = 0;
	for (int64_t q = 0; q < nr; q++)
		for (int64_t i = 0; i < r[q].len; i++)
			s += (double)x[r[q].xo + i] * x[r[q].xo + i];
	(void)g;
	return sqrt(s);
}

/* The activation on rows of n values, in double. False when the test
 * has none for it. */
static bool act_ref(uint8_t id, double *y, int64_t rows, int64_t n)
{
	for (int64_t r = 0; r < rows; r++) {
		double *v = y + r * n, mx = -INFINITY, sum = 0;
		switch (id) {
		case NNN_ACTIVATION_ID_LINEAR:
			break;
		case NNN_ACTIVATION_ID_RELU:
			for (int64_t i = 0; i < n; i++)
				v[i] = v[i] > 0 ? v[i] : 0;
			break;
		case NNN_ACTIVATION_ID_SIGMOID:
			for (int64_t i = 0; i < n; i++)
				v[i] = 1 / (1 + exp(-v[i]));
			break;
		case NNN_ACTIVATION_ID_TANH:
			for (int64_t i = 0; i < n; i++)
				v[i] = tanh(v[i]);
			break;
		case NNN_ACTIVATION_ID_SOFTMAX: /* over the last axis */
			for (int64_t i = 0; i < n; i++)
				mx = v[i] > mx ? v[i] : mx;
			for (int64_t i = 0; i < n; i++)
				sum += v[i] = exp(v[i] - mx);
			for (int64_t i = 0; i < n; i++)
				v[i] /= sum;
			break;
		default:
			return false;
		}
	}
	return true;
}

/* Extra room, relative to 1 + |value|, for an activation's own rounding
 * (the reference computes it in double, the kernel in float). */
static double act_slack(uint8_t id)
{
	return id == NNN_ACTIVATION_ID_SIGMOID || id == NNN_ACTIVATION_ID_TANH ? 8 * U_F32 : 0;
}

/* g(n) = n u / (1 - n u): what a float sum of n terms may be off by, in
 * units of the sum of their magnitudes, whatever its order. */
static double gamma_n(double n)
{
	return n * U_F32 < 0.5 ? n * U_F32 / (1 - n * U_F32) : INFINITY;
}

/* ---- checks ---- */

/* The worst value of one comparison: the largest |diff| / tolerance. */
typedef struct worst {
	double ratio, diff, got, want, tol;
	int64_t at, bad, checked;
} worst_t;

static void worst_init(worst_t *w)
{
	memset(w, 0, sizeof *w);
	w->at = -1;
}

static inline void worst_add(worst_t *w, int64_t at, double got, double want, double tol)
{
	double diff = fabs(got - want);
	if (!(diff <= tol)) /* NaN too: a value left unwritten or computed from one */
		w->bad++;
	w->checked++;
	if (w->at < 0 || !(diff <= w->ratio * tol)) { /* a new worst (the division only then) */
		double ratio = diff / tol;
		ratio = ratio == ratio ? ratio : INFINITY;
		if (w->at >= 0 && !(ratio > w->ratio))
			return;
		w->ratio = ratio;
		w->diff = diff;
		w->got = got;
		w->want = want;
		w->tol = tol;
		w->at = at;
	}
}

/* "[b, i, j, f]" of flat index at in a shape; at < 0: the shape. */
static const char *coords(int32_t rank, const int64_t *dims, int64_t at)
{
	static char buf[4][128];
	static int k;
	char *b = buf[k++ % 4];
	int64_t c[NNN_MAX_RANK];
	if (at < 0) { /* the dims themselves */
		memcpy(c, dims, (size_t)rank * sizeof c[0]);
		at = 0;
	} else
	for (int32_t j = rank - 1; j >= 0; j--) {
		c[j] = dims[j] ? at % dims[j] : 0;
		at = dims[j] ? at / dims[j] : 0;
	}
	b[0] = '\0';
	for (int32_t j = 0; j < rank; j++)
		snprintf(b + strlen(b), 128 - strlen(b), "%s%lld", j ? ", " : "[", (long long)c[j]);
	strcat(b, "]");
	return b;
}

/* The worst difference per instruction set and kind, for the report. */
typedef struct tally {
	char isa[16];
	double layer_rel, layer_corpus, layer_ratio; /* vs reference: /M, /(1+|ref|), /tolerance */
	double plain_rel, plain_ratio;               /* vs the plain path: /M', /tolerance */
	double net_abs, net_ratio;                   /* network outputs vs reference */
	int64_t values, sampled;
} tally_t;

static tally_t *tally_of(tally_t *tallies, const char *isa)
{
	for (int i = 0; i < T_NISAS; i++) {
		if (!tallies[i].isa[0])
			snprintf(tallies[i].isa, sizeof tallies[i].isa, "%s", isa);
		if (!strcmp(tallies[i].isa, isa))
			return &tallies[i];
	}
	return &tallies[0];
}

static void report(const tally_t *tallies, const char *what, bool nets)
{
	if (!getenv("NNN_FASTPATHS_REPORT"))
		return;
	for (int i = 0; i < T_NISAS && tallies[i].isa[0]; i++) {
		const tally_t *t = &tallies[i];
		if (nets)
			fprintf(stderr, "fastpaths %-8s network %-7s worst |d| %.3g, %.3g of the tolerance\n", what, t->isa,
			        t->net_abs, t->net_ratio);
		else
			fprintf(stderr,
			        "fastpaths %-8s layers  %-7s vs reference: %lld values, worst |d|/M %.3g (%.2f u), "
			        "|d|/(1+|ref|) %.3g, %.3g of the tolerance; vs plain: %lld values, worst |d|/M' %.3g "
			        "(%.2f u), %.3g of the tolerance\n",
			        what, t->isa, (long long)t->sampled, t->layer_rel, t->layer_rel / U_F32, t->layer_corpus,
			        t->layer_ratio, (long long)t->values, t->plain_rel, t->plain_rel / U_F32, t->plain_ratio);
	}
}

static void expect_worst(const worst_t *w, const char *what, int32_t rank, const int64_t *dims)
{
	cr_assert(w->bad == 0,
	          "%s: %lld of %lld values out of tolerance; the worst at %s (flat %lld): %.9g, expected %.9g, "
	          "|diff| %.3g > %.3g (%.3g times the tolerance)",
	          what, (long long)w->bad, (long long)w->checked, coords(rank, dims, w->at), (long long)w->at, w->got,
	          w->want, w->diff, w->tol, w->ratio);
}

/* The first float of a and b (n each) whose bits differ, or -1. */
static int64_t first_diff_bits(const float *a, const float *b, int64_t n)
{
	if (memcmp(a, b, (size_t)n * sizeof *a) == 0)
		return -1;
	for (int64_t i = 0; i < n; i++)
		if (memcmp(&a[i], &b[i], sizeof a[i]))
			return i;
	return -1;
}

/* Buffers kept from one layer or batch to the next, made once at the
 * largest size and in 2 MiB pages where the kernel gives them (MADV_HUGEPAGE):
 * in a virtual machine, first touches of fresh 4 KiB pages of buffers of up to
 * 130 MB each cost more than the checks (see runtime/base/mem.c). */
enum { B_X, B_PN, B_PLAIN, B_FAST, B_Y, B_PLAIN_PRE, B_FAST_PRE, B_Y_PRE, B_COUNT };
typedef struct bufs {
	void *p[B_COUNT];
	size_t cap[B_COUNT];
} bufs_t;

static void *grow(bufs_t *b, int i, size_t bytes)
{
	const size_t huge = (size_t)2 << 20;
	if (b->cap[i] < bytes) {
		free(b->p[i]);
		b->cap[i] = (bytes + huge - 1) / huge * huge;
		b->p[i] = aligned_alloc(huge, b->cap[i]);
		cr_assert(b->p[i], "out of memory for %zu bytes", bytes);
#ifdef MADV_HUGEPAGE
		(void)madvise(b->p[i], b->cap[i], MADV_HUGEPAGE);
#endif
	}
	return b->p[i];
}

static void bufs_free(bufs_t *b)
{
	for (int i = 0; i < B_COUNT; i++)
		free(b->p[i]);
}

/* n floats and the guard past them. */
static float *out_buffer(bufs_t *b, int i, int64_t n)
{
	return grow(b, i, (size_t)(n + PAD) * sizeof(float));
}

/* Every buffer the layers of n need at `batch`, the largest a test runs, at
 * once (in and out: the shapes there), so no run of a smaller batch grows
 * one. */
static void grow_for_batch(bufs_t *b, const net_t *n, int64_t batch, nnn_shape_t *in, nnn_shape_t *out)
{
	net_shapes(n, batch, in, out);
	for (int32_t i = 0; i < n->m.layer_count; i++) {
		grow(b, B_X, (size_t)nnn_shape_numel(&in[i]) * sizeof(float));
		grow(b, B_PN, (size_t)(nnn_shape_numel(&out[i]) / n->wt[i].f) * sizeof(double));
		for (int k = B_PLAIN; k < B_COUNT; k++)
			out_buffer(b, k, nnn_shape_numel(&out[i]));
	}
}

/* NaN in every value (one a kernel skips stays NaN and fails): all bits
 * set is a NaN; then a guard pattern past the end. */
static void poison(float *y, int64_t n)
{
	memset(y, 0xff, (size_t)n * sizeof *y);
	for (int64_t i = n; i < n + PAD; i++)
		y[i] = -12345.0f;
}

static bool guard_intact(const float *y, int64_t n)
{
	for (int64_t i = n; i < n + PAD; i++)
		if (y[i] != -12345.0f)
			return false;
	return true;
}

/* ---- one layer at one batch ---- */

/* A value of the reference sample: row p, feature f; its exact sum (pre),
 * after the activation (post), and its magnitude. */
typedef struct samp {
	int64_t p, f;
	double pre, post, mag;
} samp_t;

typedef struct lrun {
	const net_t *net;
	int li;
	const nnn_layer_t *L;
	const nnn_layer_type_t *type;
	const nnn_activation_type_t *act;
	const nnn_shape_t *in, *out;
	int64_t batch, nx, ny;
	geo_t g;
	bool softmax;
	float *x;
	samp_t *s;
	int64_t ns;
	double *pn; /* |patch| of every row */
	float *plain, *plain_pre, *fast, *fast_pre, *y, *y_pre;
} lrun_t;

/* 0, 1, d-2, d-1 often; else anywhere. */
static int64_t edgy(uint64_t *seed, int64_t d)
{
	*seed = *seed * 6364136223846793005u + 1442695040888963407u;
	uint64_t r = *seed >> 33;
	switch (r % 8) {
	case 0:
		return 0;
	case 1:
		return d - 1;
	case 2:
		return d > 1 ? 1 : 0;
	case 3:
		return d > 1 ? d - 2 : 0;
	default:
		return (int64_t)((r >> 3) % (uint64_t)d);
	}
}

/* A filter or neuron: the edges of panels (8 and 16 lanes, up to 4
 * vectors) often; else any. */
static int64_t edgy_feature(uint64_t *seed, int64_t F)
{
	static const int64_t edges[] = { 7, 8, 15, 16, 31, 32, 47, 48, 63, 64 };
	*seed = *seed * 6364136223846793005u + 1442695040888963407u;
	uint64_t r = *seed >> 33;
	if (r % 4 == 0) {
		int64_t e = edges[(r >> 2) % (sizeof edges / sizeof edges[0])];
		return e < F ? e : F - 1;
	}
	return edgy(seed, F);
}

/* The reference sample of a layer run: every value when affordable. */
static void sample(lrun_t *t)
{
	const geo_t *g = &t->g;
	double budget = t_under_valgrind() ? VG_REF_MACS : REF_MACS, per = (double)g->K * (t->softmax ? (double)g->F : 1);
	bool all = (double)g->P * (double)g->F * (double)g->K <= budget;
	int64_t want = all ? g->P * (t->softmax ? 1 : g->F) : (int64_t)(budget / per);
	uint64_t seed = 77u + (uint64_t)t->li * 131u + (uint64_t)t->batch;
	run_t *r = malloc((size_t)g->nq * sizeof *r);
	int64_t per_p = t->softmax ? g->F : 1, rank = g->out_rank - 1;

	if (!all && want < (t->softmax ? 2 : MIN_SAMPLES))
		want = t->softmax ? 2 : MIN_SAMPLES;
	t->s = malloc((size_t)(want * per_p) * sizeof *t->s);
	cr_assert(r && t->s);
	t->ns = 0;
	for (int64_t i = 0; i < want; i++) {
		int64_t p, f = 0;
		if (all) {
			p = t->softmax ? i : i / g->F;
			f = t->softmax ? 0 : i % g->F;
		} else if (i == 0 || i == 1) { /* the first and the last value */
			p = i ? g->P - 1 : 0;
			f = i ? g->F - 1 : 0;
		} else {
			p = 0;
			for (int32_t a = 0; a < rank; a++)
				p = p * g->out_dims[a] + edgy(&seed, g->out_dims[a]);
			f = edgy_feature(&seed, g->F);
		}
		int64_t nr = patch_runs(g, p, r);
		for (int64_t k = 0; k < per_p; k++) {
			samp_t *s = &t->s[t->ns++];
			s->p = p;
			s->f = t->softmax ? k : f;
			s->pre = s->post = dot_f(g, t->x, r, nr, s->f, &s->mag);
		}
		if (t->softmax) {
			double row[4096];
			cr_assert(g->F <= 4096, "softmax rows of %lld: raise the test's limit", (long long)g->F);
			for (int64_t k = 0; k < g->F; k++)
				row[k] = t->s[t->ns - g->F + k].pre;
			act_ref(g->act, row, 1, g->F);
			for (int64_t k = 0; k < g->F; k++)
				t->s[t->ns - g->F + k].post = row[k];
		} else {
			cr_assert(act_ref(g->act, &t->s[t->ns - 1].post, 1, 1),
			          "%s: activation %s: the test has no reference for it; add one to tests/unit/test_fastpaths.c",
			          layer_what(t->net, t->li), nnn_activation_id_name(g->act));
		}
	}
	free(r);
}

static void patch_norms(lrun_t *t, bufs_t *b)
{
	run_t *r = malloc((size_t)t->g.nq * sizeof *r);
	t->pn = grow(b, B_PN, (size_t)t->g.P * sizeof *t->pn);
	cr_assert(r && t->pn);
	for (int64_t p = 0; p < t->g.P; p++)
		t->pn[p] = patch_norm(&t->g, t->x, r, patch_runs(&t->g, p, r));
	free(r);
}

/* Runs the layer's kernel as nnn_plan_run does: forward with the state of
 * its prepare, the activation offered to fuse, else applied after (when
 * pre is given, the values before it are kept there). */
static void forward(const lrun_t *t, void *state, int threads, float *y, float *pre, const char *what)
{
	char msg[NNN_MSG_MAX] = "";
	bool done = false;
	const void *params = &t->L->activation.params;
	nnn_kernel_args_t a = { .size = sizeof a, .layer = t->L, .body = &t->L->body, .state = state, .in = t->in,
		                .out = t->out, .x = t->x, .y = y, .threads = threads, .act = t->act,
		                .act_params = params, .act_done = &done };
	poison(y, t->ny);
	nnn_status_t st = t->type->forward(&a, msg, sizeof msg);
	cr_assert_eq(st, NNN_OK, "%s: forward: %s: %s", what, nnn_status_name(st), msg);
	cr_assert(guard_intact(y, t->ny), "%s: forward wrote past the output", what);
	cr_assert(!(done && pre), "%s: the kernel fused %s, which the test expects the host to apply", what,
	          t->act->name);
	if (!done) {
		if (pre)
			memcpy(pre, y, (size_t)t->ny * sizeof *y);
		st = t->act->forward(&t->L->activation, params, t->out, y, threads);
		cr_assert_eq(st, NNN_OK, "%s: activation %s: %s", what, t->act->name, nnn_status_name(st));
	}
}

/* y (and its logits, for softmax) against the reference sample. */
static void check_ref(const lrun_t *t, const float *y, const float *pre, const char *what, tally_t *ty)
{
	worst_t w, wp;
	double gam = gamma_n((double)t->g.K + 1), slack = act_slack(t->g.act);
	worst_init(&w);
	worst_init(&wp);
	for (int64_t i = 0; i < t->ns; i++) {
		const samp_t *s = &t->s[i];
		int64_t at = s->p * t->g.F + s->f;
		double got = y[at], corpus = T_CORPUS * (1 + fabs(s->post));
		if (t->softmax) {
			double lg = pre[at], lcorp = T_CORPUS * (1 + fabs(s->pre));
			worst_add(&wp, at, lg, s->pre, fmin(lcorp, gam * s->mag));
			worst_add(&w, at, got, s->post, corpus);
		} else {
			worst_add(&w, at, got, s->post, fmin(corpus, gam * s->mag + slack * (1 + fabs(s->post))));
		}
		double rel = fabs((t->softmax ? pre[at] : got) - (t->softmax ? s->pre : s->post)) / s->mag;
		double crel = fabs(got - s->post) / (1 + fabs(s->post));
		ty->layer_rel = rel > ty->layer_rel ? rel : ty->layer_rel;
		ty->layer_corpus = crel > ty->layer_corpus ? crel : ty->layer_corpus;
	}
	ty->sampled += t->ns;
	ty->layer_ratio = fmax(ty->layer_ratio, fmax(w.ratio, wp.ratio));
	char buf[600];
	snprintf(buf, sizeof buf, "%s against the double reference (%lld of %lld values)", what, (long long)t->ns,
	         (long long)t->ny);
	expect_worst(&w, buf, t->out->rank, t->out->dims);
	if (t->softmax) {
		snprintf(buf, sizeof buf, "%s: its logits against the double reference", what);
		expect_worst(&wp, buf, t->out->rank, t->out->dims);
	}
}

/* Every value of y against the plain path's (Cauchy-Schwarz magnitudes);
 * for softmax, the logits so and the probabilities by the corpus rule. */
static void check_plain(const lrun_t *t, const float *y, const float *pre, const char *what, tally_t *ty)
{
	const geo_t *g = &t->g;
	worst_t w, wp;
	double gam2 = 2 * gamma_n((double)g->K + 1), slack = 2 * act_slack(g->act);
	worst_init(&w);
	worst_init(&wp);
	const float *gv = t->softmax ? pre : y, *bv = t->softmax ? t->plain_pre : t->plain;
	const double c2 = 2 * T_CORPUS / (1 - T_CORPUS);
	for (int64_t p = 0; p < g->P; p++)
		for (int64_t f = 0; f < g->F; f++) {
			int64_t at = p * g->F + f;
			double mag = fabs((double)g->wt->b[f]) + t->pn[p] * g->wt->wn[f], base = bv[at], got = gv[at];
			double corpus = c2 * (1 + fabs(base)), own = gam2 * mag + slack * (1 + fabs(base));
			worst_add(&w, at, got, base, corpus < own ? corpus : own);
			if (fabs(got - base) > ty->plain_rel * mag && mag > 0)
				ty->plain_rel = fabs(got - base) / mag;
		}
	for (int64_t at = 0; t->softmax && at < t->ny; at++)
		worst_add(&wp, at, y[at], t->plain[at], c2 * (1 + fabs(t->plain[at])));
	ty->values += t->ny;
	ty->plain_ratio = fmax(ty->plain_ratio, fmax(w.ratio, wp.ratio));
	char buf[600];
	snprintf(buf, sizeof buf, "%s against the plain path%s", what, t->softmax ? " (logits)" : "");
	expect_worst(&w, buf, t->out->rank, t->out->dims);
	if (t->softmax) {
		snprintf(buf, sizeof buf, "%s against the plain path (probabilities)", what);
		expect_worst(&wp, buf, t->out->rank, t->out->dims);
	}
}

static void expect_bits(const lrun_t *t, const float *y, const float *ref, const char *what, const char *ref_what)
{
	int64_t at = first_diff_bits(y, ref, t->ny);
	cr_assert(at < 0, "%s: not the bits of %s (the fast kernels sum in one fixed order): at %s (flat %lld) %.9g vs %.9g",
	          what, ref_what, coords(t->out->rank, t->out->dims, at), (long long)at, (double)y[at], (double)ref[at]);
}

/* The instruction sets to run, the plain path first; each distinct one
 * once (NULL, the best, may be what "avx2" gives). With `only` (a path's
 * name, t_paths), the plain path and that one alone. */
static int isa_order(const char **order, const char *only)
{
	int n = 0;
	order[n++] = "generic";
	if (only) {
		if (strcmp(only, "generic"))
			order[n++] = only;
		return n;
	}
	for (int i = 0; i < T_NISAS; i++) {
		bool seen = false;
		for (int j = 0; j < n; j++)
			seen = seen || !strcmp(t_isa_runs(order[j]), t_isa_runs(t_isas[i]));
		if (!seen)
			order[n++] = t_isas[i];
	}
	return n;
}

static void layer_check(const net_t *net, int li, const nnn_shape_t *in, const nnn_shape_t *out, int64_t batch,
                        tally_t *tallies, bufs_t *b, const char *only)
{
	lrun_t t = { .net = net, .li = li, .L = &net->layers[li], .in = in, .out = out, .batch = batch };
	const char *order[T_NISAS + 1];
	int norder = isa_order(order, only);
	const char *first_fast = NULL;

	t.type = nnn_ctx_layer(net->ctx, t.L->id, NULL);
	t.act = nnn_ctx_activation(net->ctx, t.L->activation.id, NULL);
	cr_assert(t.type && t.type->forward && t.act && t.act->forward, "%s: no kernel in %s", layer_what(net, li),
	          plugin_path());
	geo_init(&t.g, net, li, in, out);
	t.softmax = t.L->activation.id == NNN_ACTIVATION_ID_SOFTMAX;
	t.nx = nnn_shape_numel(in);
	t.ny = nnn_shape_numel(out);
	t.x = grow(b, B_X, (size_t)t.nx * sizeof *t.x);
	fill_rows(t.x, batch, t.nx / batch, 100 + (uint64_t)li);
	sample(&t);
	patch_norms(&t, b);
	t.plain = out_buffer(b, B_PLAIN, t.ny);
	t.fast = out_buffer(b, B_FAST, t.ny);
	t.y = out_buffer(b, B_Y, t.ny);
	if (t.softmax) {
		t.plain_pre = out_buffer(b, B_PLAIN_PRE, t.ny);
		t.fast_pre = out_buffer(b, B_FAST_PRE, t.ny);
		t.y_pre = out_buffer(b, B_Y_PRE, t.ny);
	}
	for (int k = 0; k < norder; k++) {
		const char *isa = t_isa_runs(order[k]);
		bool fast = t_isa_is_fast(order[k]);
		char msg[NNN_MSG_MAX] = "", what[400];
		void *state = NULL;
		t_use_isa(order[k]);
		if (t.type->prepare) {
			nnn_status_t st = t.type->prepare(t.L, &t.L->body, in, &state, msg, sizeof msg);
			cr_assert_eq(st, NNN_OK, "%s, %s: prepare: %s: %s", layer_what(net, li), isa, nnn_status_name(st), msg);
		}
		for (int threads = 1; threads <= 2; threads++) {
			/* the plain path's run of 1 thread is kept; so is the first fast one's */
			bool keep_plain = !fast && threads == 1, keep_fast = fast && !first_fast && threads == 1;
			float *y = keep_plain ? t.plain : keep_fast ? t.fast : t.y;
			float *pre = !t.softmax ? NULL : keep_plain ? t.plain_pre : keep_fast ? t.fast_pre : t.y_pre;
			snprintf(what, sizeof what, "%s, batch %lld (input %s), %d thread%s, %s", layer_what(net, li),
			         (long long)batch, coords(in->rank, in->dims, -1), threads, threads > 1 ? "s" : "", isa);
			forward(&t, state, threads, y, pre, what);
			tally_t *ty = tally_of(tallies, isa);
			check_ref(&t, y, pre, what, ty);
			if (fast || threads > 1)
				check_plain(&t, y, pre, what, ty);
			if (fast && !keep_fast) {
				char ref_what[64];
				snprintf(ref_what, sizeof ref_what, "%s with 1 thread", t_isa_runs(first_fast ? first_fast : order[k]));
				expect_bits(&t, y, t.fast, what, ref_what);
			}
		}
		if (fast && !first_fast)
			first_fast = order[k];
		if (t.type->release)
			t.type->release(state);
	}
	t_use_isa(NULL);
	free(t.s);
}

static const int *batch_list(size_t *n, bool nets)
{
	if (t_under_valgrind()) {
		*n = sizeof vg_batches / sizeof vg_batches[0];
		return vg_batches;
	}
	*n = nets ? sizeof net_batches / sizeof net_batches[0] : sizeof batches / sizeof batches[0];
	return nets ? net_batches : batches;
}

TestSuite(fastpaths, .fini = t_tmpdir_remove);

/* Says on stderr which of the plugin's paths this CPU cannot run, and so
 * were left out (paths/bench_batches skips them). On stderr, not cr_log_warn:
 * Criterion 2.4 exits 1 after any warning, and its own [SKIP] lines and
 * info lines show only with --verbose, which make test does not pass. */
static void say_missing_paths(const char *test, const char *what)
{
	for (int i = 0; i < T_NPATHS; i++) {
		char why[400];
		if (!t_path_here(t_paths[i], why, sizeof why))
			fprintf(stderr, "[SKIP] fastpaths::%s: %s: the %s path is not run: %s\n", test, what, t_paths[i], why);
	}
}

ParameterizedTestParameters(fastpaths, layers)
{
	size_t n;
	netspec_t *v = list_params(&n);
	return cr_make_param_array(netspec_t, v, n);
}

ParameterizedTest(netspec_t *spec, fastpaths, layers)
{
	net_t net;
	nnn_shape_t in[MAX_LAYERS], out[MAX_LAYERS];
	tally_t tallies[T_NISAS] = { 0 };
	bufs_t bufs = { 0 };
	size_t nb;
	const int *bs = batch_list(&nb, false);
	say_missing_paths("layers", spec->name);
	net_open(&net, spec);
	grow_for_batch(&bufs, &net, bs[nb - 1], in, out);
	for (size_t b = 0; b < nb; b++) {
		net_shapes(&net, bs[b], in, out);
		for (int32_t i = 0; i < net.m.layer_count; i++) {
			double macs = (double)nnn_shape_numel(&out[i]) * (double)net.wt[i].k;
			if (t_under_valgrind() && bs[b] > 1 && macs > VG_RUN_MACS) {
				cr_log_info("%s: %.0f multiply-adds at batch %d: batch 1 only under valgrind (make test runs all)",
				            layer_what(&net, i), macs, bs[b]);
				continue;
			}
			if (T_ASAN && bs[b] > 2 && macs > SAN_RUN_MACS) {
				cr_log_info("%s: %.0f multiply-adds at batch %d: batches 1 and 2 only under ASan (make test runs "
				            "all)", layer_what(&net, i), macs, bs[b]);
				continue;
			}
			layer_check(&net, i, &in[i], &out[i], bs[b], tallies, &bufs, NULL);
		}
	}
	bufs_free(&bufs);
	report(tallies, spec->name, false);
	net_close(&net);
}

/* ---- whole networks ---- */

/* Multiply-adds of one item through the network. */
static double net_macs(const net_t *n, const nnn_shape_t *out)
{
	double s = 0;
	for (int32_t i = 0; i < n->m.layer_count; i++)
		s += (double)(nnn_shape_numel(&out[i]) / out[i].dims[0]) * (double)n->wt[i].k;
	return s;
}

/* Row r of the network's input through every layer, in double. */
static double *net_ref_row(const net_t *n, const nnn_shape_t *in1, const nnn_shape_t *out1, int64_t r)
{
	int64_t nx = nnn_shape_numel(&in1[0]);
	double *x = malloc((size_t)nx * sizeof *x), *y = NULL;
	float *xf = malloc((size_t)nx * sizeof *xf);
	cr_assert(x && xf);
	fill_row(xf, nx, 7, r);
	for (int64_t j = 0; j < nx; j++)
		x[j] = xf[j];
	free(xf);
	for (int32_t i = 0; i < n->m.layer_count; i++) {
		geo_t g;
		double mag;
		geo_init(&g, n, i, &in1[i], &out1[i]);
		run_t *runs = malloc((size_t)g.nq * sizeof *runs);
		y = malloc((size_t)(g.P * g.F) * sizeof *y);
		cr_assert(runs && y);
		for (int64_t p = 0; p < g.P; p++) {
			int64_t nr = patch_runs(&g, p, runs);
			for (int64_t f = 0; f < g.F; f++)
				y[p * g.F + f] = dot_d(&g, x, runs, nr, f, &mag);
		}
		cr_assert(act_ref(g.act, y, g.P, g.F), "%s: activation %s: the test has no reference for it",
		          layer_what(n, i), nnn_activation_id_name(g.act));
		free(runs);
		free(x);
		x = y;
	}
	return x;
}

ParameterizedTestParameters(fastpaths, networks)
{
	size_t n;
	netspec_t *v = list_params(&n);
	return cr_make_param_array(netspec_t, v, n);
}

#define REF_ROWS 64

ParameterizedTest(netspec_t *spec, fastpaths, networks)
{
	net_t net;
	nnn_shape_t in1[MAX_LAYERS], out1[MAX_LAYERS];
	double *ref[REF_ROWS] = { 0 };
	const char *order[T_NISAS + 1];
	int norder;
	size_t nb;
	const int *bs = batch_list(&nb, true);
	bool with_ref;
	tally_t tallies[T_NISAS] = { 0 };
	bufs_t bufs = { 0 };
	nnn_diags_t d;

	say_missing_paths("networks", spec->name);
	net_open(&net, spec);
	nnn_diags_init(&d);
	net_shapes(&net, 1, in1, out1);
	int32_t last = net.m.layer_count - 1;
	int64_t per_out = nnn_shape_numel(&out1[last]), per_in = nnn_shape_numel(&in1[0]);
	with_ref = !t_under_valgrind() || net_macs(&net, out1) <= VG_NET_MACS;
	if (!with_ref)
		cr_log_info("%s: %.0f multiply-adds an item: under valgrind batch 1 only, its outputs held to the plain "
		            "path's only, not to the double reference (make test does all)",
		            spec->name, net_macs(&net, out1));
	norder = isa_order(order, NULL);
	grow(&bufs, B_X, (size_t)(per_in * bs[nb - 1]) * sizeof(float)); /* the largest batch first */
	for (int k = B_PLAIN; k <= B_Y; k++)
		out_buffer(&bufs, k, per_out * bs[nb - 1]);
	/* Under ASan the big ones at their first batch only: they reach no kernel
	 * path the small ones miss. */
	if (T_ASAN && net_macs(&net, out1) > SAN_NET_MACS) {
		cr_log_info("%s: %.0f multiply-adds an item: batch %d only under ASan (make test runs all)", spec->name,
		            net_macs(&net, out1), bs[0]);
		nb = 1;
	}
	for (size_t b = 0; b < nb && (with_ref || b == 0); b++) { /* under valgrind, the big ones at batch 1 */
		int64_t batch = bs[b], rows[5] = { 0, 1, 2, batch / 2, batch - 1 }, nrows = 0;
		nnn_shape_t in = input_shape(&net, batch);
		int64_t nx = per_in * batch, ny = per_out * batch;
		float *x = grow(&bufs, B_X, (size_t)nx * sizeof *x), *plain = out_buffer(&bufs, B_PLAIN, ny);
		float *fast = out_buffer(&bufs, B_FAST, ny), *y = out_buffer(&bufs, B_Y, ny);
		const char *first_fast = NULL;
		cr_assert(batch <= REF_ROWS);
		fill_rows(x, batch, per_in, 7);
		for (int k = 0; k < 5; k++) { /* distinct rows of this batch */
			bool seen = rows[k] >= batch;
			for (int64_t j = 0; j < nrows; j++)
				seen = seen || rows[j] == rows[k];
			if (!seen)
				rows[nrows++] = rows[k];
		}
		for (int64_t k = 0; with_ref && k < nrows; k++)
			if (!ref[rows[k]])
				ref[rows[k]] = net_ref_row(&net, in1, out1, rows[k]);
		for (int k = 0; k < norder; k++) {
			const char *isa = t_isa_runs(order[k]);
			bool fast_isa = t_isa_is_fast(order[k]);
			tally_t *ty = tally_of(tallies, isa);
			t_use_isa(order[k]);
			for (int threads = 1; threads <= 2; threads++) {
				nnn_run_opts_t opts = { .size = sizeof opts, .threads = threads };
				nnn_plan_t *plan;
				char what[300];
				bool keep_plain = !fast_isa && threads == 1, keep_fast = fast_isa && !first_fast && threads == 1;
				float *out = keep_plain ? plain : keep_fast ? fast : y;
				worst_t w;
				snprintf(what, sizeof what, "%s network, batch %lld, %d thread%s, %s: nnn_plan_run", spec->name,
				         (long long)batch, threads, threads > 1 ? "s" : "", isa);
				cr_assert_eq(nnn_plan_new(net.ctx, &net.m, &in, &opts, &plan, &d), NNN_OK, "%s: plan: %s", what,
				             diag_msg(&d));
				poison(out, ny);
				cr_assert_eq(nnn_plan_run(plan, x, out, &d), NNN_OK, "%s: %s", what, diag_msg(&d));
				nnn_plan_free(plan);
				cr_assert(guard_intact(out, ny), "%s: wrote past the output", what);
				/* against the double reference, the corpus rule */
				worst_init(&w);
				for (int64_t kk = 0; with_ref && kk < nrows; kk++) {
					int64_t r = rows[kk];
					for (int64_t j = 0; j < per_out; j++) {
						double want = ref[r][j], got = out[r * per_out + j], tol = T_CORPUS * (1 + fabs(want));
						worst_add(&w, r * per_out + j, got, want, tol);
						ty->net_abs = fmax(ty->net_abs, fabs(got - want));
					}
				}
				ty->net_ratio = fmax(ty->net_ratio, w.ratio);
				char buf[400];
				nnn_shape_t oshape = out1[last];
				oshape.dims[0] = batch;
				snprintf(buf, sizeof buf, "%s, against the double reference", what);
				expect_worst(&w, buf, oshape.rank, oshape.dims);
				/* against the plain path, every value */
				if (!keep_plain) {
					worst_init(&w);
					for (int64_t j = 0; j < ny; j++)
						worst_add(&w, j, out[j], plain[j], 2 * T_CORPUS * (1 + fabs(plain[j])) / (1 - T_CORPUS));
					ty->net_ratio = fmax(ty->net_ratio, w.ratio);
					snprintf(buf, sizeof buf, "%s, against the plain path", what);
					expect_worst(&w, buf, oshape.rank, oshape.dims);
				}
				if (fast_isa && !keep_fast) {
					int64_t at = first_diff_bits(out, fast, ny);
					cr_assert(at < 0, "%s: not the bits of %s with 1 thread (the fast kernels sum in one fixed "
					                  "order): at %s (flat %lld) %.9g vs %.9g",
					          what, t_isa_runs(first_fast ? first_fast : order[k]),
					          coords(oshape.rank, oshape.dims, at), (long long)at, (double)out[at],
					          (double)fast[at]);
				}
			}
			if (fast_isa && !first_fast)
				first_fast = order[k];
		}
		t_use_isa(NULL);
	}
	bufs_free(&bufs);
	for (int r = 0; r < REF_ROWS; r++)
		free(ref[r]);
	nnn_diags_free(&d);
	report(tallies, spec->name, true);
	net_close(&net);
}

/* ---- the benchmark's other batches, path by path ---- */

/* The example's batches in the benchmark (bench/suite/infer.c: 1, 8, 64,
 * 256 and 1024) that `batches` lacks, 1024 but in its blocks (above).
 * Under valgrind and ASan the first alone: 256 reaches no code the others
 * miss but the row blocks, and costs there 20 to 50 times what it costs
 * here. */
static const int bench_batches[] = { 8, 256 };

/* A suite of its own, without the fastpaths suite's .fini: under valgrind
 * (which hides AVX-512, so the avx512 test always skips there) a test of
 * that suite that skipped crashed in Criterion's teardown (SIGSEGV, "crashed
 * during its setup or teardown", exit 1), where the same skip in a suite
 * without .fini, as real/demos_on_each_path, ends clean. The test removes
 * its temporary folder itself (an assertion that fails leaves it in /tmp). */
ParameterizedTestParameters(paths, bench_batches)
{
	static t_pathspec_t v[T_NPATHS];
	t_path_specs(v);
	return cr_make_param_array(t_pathspec_t, v, T_NPATHS);
}

ParameterizedTest(t_pathspec_t *path, paths, bench_batches)
{
	netspec_t *list = calloc(MAX_NETS, sizeof *list), spec = { 0 };
	nnn_shape_t in[MAX_LAYERS], out[MAX_LAYERS];
	tally_t tallies[T_NISAS] = { 0 };
	bufs_t bufs = { 0 };
	net_t net;
	size_t n, nb = T_ASAN || t_under_valgrind() ? 1 : sizeof bench_batches / sizeof bench_batches[0];
	bool found = false;

	T_SKIP_UNLESS_PATH("paths::bench_batches", path->name);
	cr_assert(list);
	n = read_list(list, MAX_NETS);
	cr_assert(!list[0].error[0], "%s", list[0].error);
	for (size_t i = 0; i < n && !found; i++)
		if ((found = !strcmp(list[i].name, "example")))
			spec = list[i];
	free(list);
	cr_assert(found, "mkexample --list has no 'example' (the benchmark's main network)");
	if (nb == 1)
		cr_log_info("%s path: example at batch %d only under valgrind and ASan (make test runs %d and %d)",
		            path->name, bench_batches[0], bench_batches[0], bench_batches[1]);
	net_open(&net, &spec);
	grow_for_batch(&bufs, &net, bench_batches[nb - 1], in, out);
	for (size_t b = 0; b < nb; b++) {
		net_shapes(&net, bench_batches[b], in, out);
		for (int32_t i = 0; i < net.m.layer_count; i++)
			layer_check(&net, i, &in[i], &out[i], bench_batches[b], tallies, &bufs, path->name);
	}
	bufs_free(&bufs);
	report(tallies, spec.name, false);
	net_close(&net);
	t_tmpdir_remove();
}

/* ---- the list ---- */

/* Every line names a network, with an input shape, which mkexample
 * writes; names are unique; the example classifier is among them. */
Test(fastpaths, list)
{
	netspec_t *v = calloc(MAX_NETS, sizeof *v);
	cr_assert(v);
	size_t n = read_list(v, MAX_NETS);
	bool example = false;
	cr_assert(!v[0].error[0], "%s", v[0].error);
	for (size_t i = 0; i < n; i++) {
		example = example || !strcmp(v[i].name, "example");
		for (size_t j = 0; j < i; j++)
			cr_assert(strcmp(v[i].name, v[j].name), "mkexample --list names %s twice", v[i].name);
	}
	cr_assert(example, "mkexample --list has no 'example' (the benchmark's main network)");
	free(v);
}
