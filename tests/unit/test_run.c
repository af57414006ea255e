/* test_run.c: plans and their threads (plugin ABI 1.1). A plan of several
 * threads offers its own pool to every kernel, and the kernel's activation
 * to fuse: the example classifier through the builtin plugin gives the same
 * bits at any thread count as layer by layer through each kernel alone;
 * runs of one plan from two threads take turns; a plugin built for ABI 1.0
 * still runs, and one of 1.1 gets the pool and may take the activation. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nnn/context.h>
#include <nnn/run.h>
#include <nnn/validate.h>

#include "blackbox.h"
#include "builder.h"
#include "ctx.h"

/* ---- the example classifier, built in memory ---- */

#define NL 4

typedef struct net {
	nnn_model_t m;
	nnn_layer_t L[NL];
	float *data[2 * NL];
} net_t;

static uint32_t lcg(uint32_t *s)
{
	return *s = *s * 1664525u + 1013904223u;
}

static nnn_tensor_t tensor(net_t *net, int k, const int32_t *dims, int32_t rank, float scale, uint32_t *seed)
{
	nnn_tensor_t t = { 0 };
	int32_t n = 1;
	for (int32_t i = 0; i < rank; i++)
		n *= dims[i];
	float *v = malloc((size_t)n * sizeof *v);
	cr_assert(v);
	for (int32_t i = 0; i < n; i++)
		v[i] = scale * ((float)(lcg(seed) >> 8) / (float)(1u << 24) - 0.5f);
	net->data[k] = v;
	t.dims.v = dims;
	t.dims.n = rank;
	t.data = nnn_f32s_view(v, n);
	return t;
}

/* Conv 5x5 1->8, Conv 5x5 8->16 (ReLU), Dense 6400->128 (ReLU), Dense
 * 128->10 (softmax), as tools/mkexample.c, with activation `act` in place
 * of the first ReLU. */
static void net_make(net_t *net, uint8_t act)
{
	static const int32_t k1[] = { 8, 5, 5, 1 }, b1[] = { 8 }, k2[] = { 16, 5, 5, 8 }, b2[] = { 16 };
	static const int32_t w3[] = { 6400, 128 }, b3[] = { 128 }, w4[] = { 128, 10 }, b4[] = { 10 };
	static const int32_t pads[] = { 0, 0, 0, 0 };
	uint32_t seed = 12345u;
	memset(net, 0, sizeof *net);
	for (int i = 0; i < 2; i++) {
		nnn_layer_t *L = &net->L[i];
		L->id = NNN_LAYER_ID_CONV;
		L->activation.id = i ? NNN_ACTIVATION_ID_RELU : act;
		L->activation.params.leaky_relu.tau = 0.125f;
		L->bias = tensor(net, 2 * i, i ? b2 : b1, 1, 0.1f, &seed);
		L->body.conv.filters = (i ? k2 : k1)[0];
		L->body.conv.kernels = tensor(net, 2 * i + 1, i ? k2 : k1, 4, 0.4f, &seed);
		L->body.conv.padding_type = NNN_PADDING_TYPE_VALID;
		L->body.conv.padding_dims.v = pads;
		L->body.conv.padding_dims.n = 4;
	}
	for (int i = 0; i < 2; i++) {
		nnn_layer_t *L = &net->L[2 + i];
		L->id = NNN_LAYER_ID_DENSE;
		L->activation.id = i ? NNN_ACTIVATION_ID_SOFTMAX : NNN_ACTIVATION_ID_RELU;
		L->bias = tensor(net, 4 + 2 * i, i ? b4 : b3, 1, 0.1f, &seed);
		L->body.dense.neurons = (i ? w4 : w3)[1];
		L->body.dense.weights = tensor(net, 5 + 2 * i, i ? w4 : w3, 2, 0.05f, &seed);
		L->body.dense.flatten = i == 0;
	}
	net->m.magic = 776883790;
	net->m.layer_count = NL;
	net->m.layers = net->L;
	net->m.param_count = nnn_model_param_total(&net->m);
}

static void net_free(net_t *net)
{
	for (int i = 0; i < 2 * NL; i++)
		free(net->data[i]);
}

static float *images(int64_t batch)
{
	uint32_t seed = 777;
	float *x = malloc((size_t)(batch * 784) * sizeof *x);
	cr_assert(x);
	for (int64_t i = 0; i < batch * 784; i++)
		x[i] = (float)(lcg(&seed) >> 8) / (float)(1u << 24);
	return x;
}

/* The model through a plan of `threads` threads: y, batch x 10 floats. */
static float *plan_run(const nnn_ctx_t *c, const nnn_model_t *m, const float *x, int64_t batch, int threads)
{
	nnn_shape_t in = { .rank = 4, .dims = { batch, 28, 28, 1 } };
	nnn_run_opts_t o = { .size = sizeof o, .threads = threads };
	nnn_plan_t *p;
	nnn_diags_t d;
	float *y = malloc((size_t)(batch * 10) * sizeof *y);
	cr_assert(y);
	nnn_diags_init(&d);
	cr_assert_eq(nnn_plan_new(c, m, &in, &o, &p, &d), NNN_OK, "%s", d.n ? d.v[0].msg : "");
	cr_assert_eq(nnn_plan_run(p, x, y, &d), NNN_OK, "%s", d.n ? d.v[0].msg : "");
	nnn_plan_free(p);
	nnn_diags_free(&d);
	return y;
}

/* The same, layer by layer as an ABI 1.0 host would: each kernel's forward
 * on one thread, then the activation's own kernel. */
static float *layer_by_layer(const nnn_ctx_t *c, const nnn_model_t *m, const float *x, int64_t batch)
{
	nnn_shape_t s[NL + 1] = { { .rank = 4, .dims = { batch, 28, 28, 1 } } };
	float *buf[NL + 1] = { (float *)x };
	char msg[512] = "";
	/* every shape from the shape engine, as the host computes them */
	cr_assert_eq(nnn_model_validate(m, &s[0], s + 1, NULL), NNN_OK);
	for (int i = 0; i < NL; i++) {
		const nnn_layer_t *L = &m->layers[i];
		const nnn_layer_type_t *t = nnn_ctx_layer(c, L->id, NULL);
		const nnn_activation_type_t *act = nnn_ctx_activation(c, L->activation.id, NULL);
		buf[i + 1] = malloc((size_t)nnn_shape_numel(&s[i + 1]) * sizeof(float));
		cr_assert(buf[i + 1]);
		nnn_kernel_args_t a = { .size = offsetof(nnn_kernel_args_t, pool), .layer = L, .body = &L->body,
			                .in = &s[i], .out = &s[i + 1], .x = buf[i], .y = buf[i + 1], .threads = 1 };
		cr_assert_eq(t->forward(&a, msg, sizeof msg), NNN_OK, "%s", msg);
		cr_assert_eq(act->forward(&L->activation, &L->activation.params, &s[i + 1], buf[i + 1], 1), NNN_OK);
	}
	for (int i = 1; i < NL; i++)
		free(buf[i]);
	return buf[NL];
}

Test(run, threads_and_fused_activations_give_the_same_bits)
{
	static const uint8_t acts[] = { NNN_ACTIVATION_ID_RELU, NNN_ACTIVATION_ID_LEAKY_RELU, NNN_ACTIVATION_ID_TANH };
	static const int threads[] = { 2, 3, 1, 2 };
	const int64_t batch = 9;
	nnn_ctx_t *c = t_ctx_with("plugins/builtin.so");
	float *x = images(batch);
	for (size_t k = 0; k < sizeof acts / sizeof acts[0]; k++) {
		net_t net;
		net_make(&net, acts[k]);
		float *want = layer_by_layer(c, &net.m, x, batch);
		for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++) {
			float *y = plan_run(c, &net.m, x, batch, threads[t]);
			cr_assert(memcmp(y, want, (size_t)(batch * 10) * sizeof *y) == 0,
			          "activation %d, %d threads: not the bits of the layers one by one", acts[k], threads[t]);
			free(y);
		}
		free(want);
		net_free(&net);
	}
	free(x);
	nnn_ctx_free(c);
}

/* ---- one plan, two threads calling it ---- */

typedef struct caller {
	nnn_plan_t *p;
	const float *x;
	float *y;
	int runs;
	nnn_status_t st;
} caller_t;

static void *call_plan(void *arg)
{
	caller_t *k = arg;
	for (int i = 0; i < k->runs && k->st == NNN_OK; i++)
		k->st = nnn_plan_run(k->p, k->x + i % 2 * 784 * 4, k->y + i % 2 * 40, NULL);
	return NULL;
}

Test(run, runs_of_one_plan_take_turns)
{
	const int64_t batch = 4;
	nnn_ctx_t *c = t_ctx_with("plugins/builtin.so");
	net_t net;
	nnn_plan_t *p;
	nnn_shape_t in = { .rank = 4, .dims = { batch, 28, 28, 1 } };
	nnn_run_opts_t o = { .size = sizeof o, .threads = 2 };
	float *x = images(2 * batch), *want = malloc(80 * sizeof *want);
	float y[2][80];
	pthread_t tid[2];
	caller_t k[2];
	cr_assert(want);
	net_make(&net, NNN_ACTIVATION_ID_RELU);
	cr_assert_eq(nnn_plan_new(c, &net.m, &in, &o, &p, NULL), NNN_OK);
	cr_assert_eq(nnn_plan_run(p, x, want, NULL), NNN_OK);
	cr_assert_eq(nnn_plan_run(p, x + batch * 784, want + 40, NULL), NNN_OK);
	for (int i = 0; i < 2; i++) {
		k[i] = (caller_t){ .p = p, .x = x, .y = y[i], .runs = t_under_valgrind() ? 4 : 40, .st = NNN_OK };
		cr_assert_eq(pthread_create(&tid[i], NULL, call_plan, &k[i]), 0);
	}
	for (int i = 0; i < 2; i++) {
		pthread_join(tid[i], NULL);
		cr_assert_eq(k[i].st, NNN_OK);
		cr_assert(memcmp(y[i], want, sizeof y[i]) == 0, "caller %d: other results", i);
	}
	nnn_plan_free(p);
	net_free(&net);
	free(want);
	free(x);
	nnn_ctx_free(c);
}

/* ---- plugins of ABI 1.0, 1.1 and 1.5 (tests/plugins/fixture.c) ---- */

/* bb_tiny with both layers on the fixture's layer and activation: the
 * output, [1, 3], after a plan of `threads` threads. */
static int64_t fixture_run(const char *fixture, int threads, float y[3])
{
	char rel[128];
	bb_t bb = { 0 };
	nnn_model_t *m;
	nnn_plan_t *p;
	nnn_diags_t d;
	nnn_shape_t in = { .rank = 2, .dims = { 1, 3 } };
	nnn_run_opts_t o = { .size = sizeof o, .threads = threads };
	float x[3] = { 1, 2, 3 };
	snprintf(rel, sizeof rel, "fixtures/%s.so", fixture);
	nnn_ctx_t *c = t_ctx_with(rel);
	nnn_diags_init(&d);
	bb_tiny(&bb);
	cr_assert_eq(nnn_model_decode(bb.b, bb.n, NULL, &m, &d), NNN_OK);
	m->layers[0].activation.id = m->layers[1].activation.id = 3;
	cr_assert_eq(nnn_plan_new(c, m, &in, &o, &p, &d), NNN_OK, "%s", d.n ? d.v[0].msg : "");
	/* the shapes are the schema's (a kernel for a core ID gives none) */
	int64_t n = nnn_shape_numel(nnn_plan_shape(p, m->layer_count - 1));
	cr_assert(n >= 1 && n <= 3, "output of %lld values", (long long)n);
	cr_assert_eq(nnn_plan_run(p, x, y, &d), NNN_OK, "%s", d.n ? d.v[0].msg : "");
	nnn_plan_free(p);
	nnn_model_free(m);
	nnn_ctx_free(c);
	nnn_diags_free(&d);
	bb_free(&bb);
	return n;
}

/* A plugin built for ABI 1.0 counts as built against the first
 * recorded struct layout: it runs as before while that is this nnnkit's, and
 * is refused at load once a growth of the schema has moved it. Returns
 * whether it loads (the refusal is checked here when it does not). */
static bool runs_as_before(const char *fixture)
{
	if (NNN_SCHEMA_LAYOUT == NNN_SCHEMA_LAYOUT_FIRST)
		return true;
	const char *b = t_build_dir();
	char path[1024];
	nnn_ctx_t *c;
	nnn_diags_t d;
	nnn_diags_init(&d);
	snprintf(path, sizeof path, "%s/fixtures/%s.so", b, fixture);
	cr_assert_eq(nnn_ctx_new(&c, &d), NNN_OK);
	cr_assert_eq(nnn_plugin_load(c, path, &d), NNN_E_PLUGIN);
	cr_assert(d.n && strstr(d.v[0].msg, "ABI stage") && strstr(d.v[0].msg, "layout"), "%s", d.n ? d.v[0].msg : "");
	nnn_ctx_free(c);
	nnn_diags_free(&d);
	return false;
}

Test(run, plugin_of_abi_1_0_still_runs)
{
	if (!runs_as_before("abi10"))
		return;
	for (int threads = 1; threads <= 2; threads++) {
		float y[3];
		int64_t n = fixture_run("abi10", threads, y);
		/* its tag, 7, then its activation (+100), which the host runs */
		for (int i = 0; i < n; i++)
			cr_assert_eq(y[i], 107.0f, "%d threads: element %d is %g", threads, i, (double)y[i]);
	}
}

/* A plugin built for ABI 1.5 (before the host table gained memory and
 * threads, 1.6) loads and runs exactly as before: the plan's threads and
 * the activation it applies itself, as the 1.1 fixture. */
Test(run, plugin_of_abi_1_5_runs_as_before)
{
	bool cpus = sysconf(_SC_NPROCESSORS_ONLN) > 1;
	nnn_plugin_report_t r;
	nnn_ctx_t *c = t_ctx_with("fixtures/abi15.so");
	cr_assert_geq(nnn_ctx_report(c, 0, &r), 1);
	cr_assert_eq(r.status, NNN_OK, "%s: %s", r.stage, r.message ? r.message : "");
	cr_assert_str_eq(r.stage, "loaded");
	nnn_ctx_free(c);
	for (int threads = 1; threads <= 2; threads++) {
		float y[3];
		int64_t n = fixture_run("abi15", threads, y);
		float want = 5.5f + (threads > 1 && cpus ? 10.0f : 0.0f);
		for (int i = 0; i < n; i++)
			cr_assert_eq(y[i], want, "%d threads: element %d is %g, expected %g", threads, i, (double)y[i],
			             (double)want);
	}
}

Test(run, plugin_of_abi_1_1_gets_the_pool_and_the_activation)
{
	bool cpus = sysconf(_SC_NPROCESSORS_ONLN) > 1;
	for (int threads = 1; threads <= 3; threads++) {
		float y[3];
		int64_t n = fixture_run("hostpool", threads, y);
		/* its tag, 6, + 10 when it had the plan's threads, + 0.5 for the
		 * activation it did itself: the host must not run it (+1000) */
		float want = 6.5f + (threads > 1 && cpus ? 10.0f : 0.0f);
		for (int i = 0; i < n; i++)
			cr_assert_eq(y[i], want, "%d threads: element %d is %g, expected %g", threads, i, (double)y[i],
			             (double)want);
	}
}
