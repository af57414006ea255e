/* test_onnx_import.c: ONNX graphs built here with protobuf-c's structs,
 * packed, and read by nnn_onnx_decode. Each refusal gives its exact status
 * code and path (graph.node[i] for a node, one diagnostic per refused
 * node); each accepted graph is run (nnn/run.h) and compared with values
 * computed here by hand or by a direct loop over the ONNX layout (NCHW,
 * [f, c, k..] kernels), independent of the importer's permutations. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <onnx.pb-c.h>

#include <nnn/context.h>
#include <nnn/model.h>
#include <nnn/npy.h>
#include <nnn/onnx.h>
#include <nnn/run.h>

#include "clirun.h"
#include "ctx.h"
#include "tmpdir.h"

TestSuite(onnx_import, .fini = t_tmpdir_remove);

static const char *const node0[] = { "graph.node[0]" };
static const char *const node1[] = { "graph.node[1]" };

/* ---- a small graph builder: every block it makes is freed by gb_free ---- */

typedef struct gb {
	Onnx__ModelProto m;
	Onnx__GraphProto g;
	void **blocks;
	size_t nblocks;
} gb_t;

static void *gb_new(gb_t *b, size_t n)
{
	void *p = calloc(1, n ? n : 1);
	void **v = realloc(b->blocks, (b->nblocks + 1) * sizeof *v);
	cr_assert(p && v);
	b->blocks = v;
	b->blocks[b->nblocks++] = p;
	return p;
}

/* Appends x to the pointer array *arr of *n elements. */
#define GB_PUSH(b, arr, n, x)                                                      \
	do {                                                                       \
		void *na_ = gb_new((b), ((n) + 1) * sizeof *(arr));                \
		if (n)                                                             \
			memcpy(na_, (arr), (n) * sizeof *(arr));                   \
		(arr) = na_;                                                       \
		(arr)[(n)++] = (x);                                                \
	} while (0)

static char *gb_str(gb_t *b, const char *s)
{
	char *p = gb_new(b, strlen(s) + 1);
	strcpy(p, s);
	return p;
}

static void gb_opset(gb_t *b, int64_t version)
{
	Onnx__OperatorSetIdProto *o = gb_new(b, sizeof *o);
	onnx__operator_set_id_proto__init(o);
	o->domain = gb_str(b, "");
	o->has_version = 1;
	o->version = version;
	GB_PUSH(b, b->m.opset_import, b->m.n_opset_import, o);
}

static Onnx__ValueInfoProto *gb_value(gb_t *b, const char *name, const int64_t *dims, int rank)
{
	Onnx__ValueInfoProto *v = gb_new(b, sizeof *v);
	onnx__value_info_proto__init(v);
	v->name = gb_str(b, name);
	if (rank < 0)
		return v;
	Onnx__TypeProto *tp = gb_new(b, sizeof *tp);
	Onnx__TypeProto__Tensor *tt = gb_new(b, sizeof *tt);
	Onnx__TensorShapeProto *sh = gb_new(b, sizeof *sh);
	onnx__type_proto__init(tp);
	onnx__type_proto__tensor__init(tt);
	onnx__tensor_shape_proto__init(sh);
	tt->has_elem_type = 1;
	tt->elem_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
	for (int k = 0; k < rank; k++) {
		Onnx__TensorShapeProto__Dimension *d = gb_new(b, sizeof *d);
		onnx__tensor_shape_proto__dimension__init(d);
		if (dims[k] < 0) { /* symbolic */
			d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
			d->dim_param = gb_str(b, "N");
		} else {
			d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
			d->dim_value = dims[k];
		}
		GB_PUSH(b, sh->dim, sh->n_dim, d);
	}
	tt->shape = sh;
	tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
	tp->tensor_type = tt;
	v->type = tp;
	return v;
}

/* A model of opset `opset` whose graph takes `input` (dims < 0: symbolic)
 * and gives "y". */
static void gb_init(gb_t *b, int64_t opset, const int64_t *dims, int rank)
{
	memset(b, 0, sizeof *b);
	onnx__model_proto__init(&b->m);
	onnx__graph_proto__init(&b->g);
	b->m.has_ir_version = 1;
	b->m.ir_version = 7;
	b->m.graph = &b->g;
	b->g.name = gb_str(b, "g");
	gb_opset(b, opset);
	Onnx__ValueInfoProto *in = gb_value(b, "x", dims, rank);
	GB_PUSH(b, b->g.input, b->g.n_input, in);
	Onnx__ValueInfoProto *out = gb_value(b, "y", NULL, -1);
	GB_PUSH(b, b->g.output, b->g.n_output, out);
}

static void gb_free(gb_t *b)
{
	for (size_t k = 0; k < b->nblocks; k++)
		free(b->blocks[k]);
	free(b->blocks);
}

static Onnx__TensorProto *gb_tensor(gb_t *b, const char *name, int32_t type, const int64_t *dims, int rank)
{
	Onnx__TensorProto *t = gb_new(b, sizeof *t);
	onnx__tensor_proto__init(t);
	t->name = gb_str(b, name);
	t->has_data_type = 1;
	t->data_type = type;
	t->n_dims = (size_t)rank;
	t->dims = gb_new(b, (size_t)rank * sizeof *t->dims);
	memcpy(t->dims, dims, (size_t)rank * sizeof *t->dims);
	return t;
}

static int64_t count(const int64_t *dims, int rank)
{
	int64_t n = 1;
	for (int k = 0; k < rank; k++)
		n *= dims[k];
	return n;
}

/* A float initializer; raw: as raw_data, else float_data. */
static Onnx__TensorProto *gb_floats(gb_t *b, const char *name, const int64_t *dims, int rank, const float *v,
                                    int raw)
{
	Onnx__TensorProto *t = gb_tensor(b, name, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, dims, rank);
	size_t n = (size_t)count(dims, rank);
	if (raw) {
		t->has_raw_data = 1;
		t->raw_data.len = 4 * n;
		t->raw_data.data = gb_new(b, 4 * n);
		memcpy(t->raw_data.data, v, 4 * n);
	} else {
		t->n_float_data = n;
		t->float_data = gb_new(b, 4 * n);
		memcpy(t->float_data, v, 4 * n);
	}
	GB_PUSH(b, b->g.initializer, b->g.n_initializer, t);
	return t;
}

static Onnx__TensorProto *gb_int64s(gb_t *b, const char *name, const int64_t *dims, int rank, const int64_t *v)
{
	Onnx__TensorProto *t = gb_tensor(b, name, ONNX__TENSOR_PROTO__DATA_TYPE__INT64, dims, rank);
	size_t n = (size_t)count(dims, rank);
	t->n_int64_data = n;
	t->int64_data = gb_new(b, 8 * n);
	memcpy(t->int64_data, v, 8 * n);
	GB_PUSH(b, b->g.initializer, b->g.n_initializer, t);
	return t;
}

/* A node: inputs comma-separated ("" between commas: an absent input). */
static Onnx__NodeProto *gb_node(gb_t *b, const char *op, const char *name, const char *inputs, const char *output)
{
	Onnx__NodeProto *n = gb_new(b, sizeof *n);
	onnx__node_proto__init(n);
	n->op_type = gb_str(b, op);
	n->name = gb_str(b, name);
	const char *p = inputs;
	while (p && *p) {
		const char *e = strchr(p, ',');
		size_t l = e ? (size_t)(e - p) : strlen(p);
		char *s = gb_new(b, l + 1);
		memcpy(s, p, l);
		GB_PUSH(b, n->input, n->n_input, s);
		p = e ? e + 1 : NULL;
	}
	char *o = gb_str(b, output);
	GB_PUSH(b, n->output, n->n_output, o);
	GB_PUSH(b, b->g.node, b->g.n_node, n);
	return n;
}

static Onnx__AttributeProto *gb_attr(gb_t *b, Onnx__NodeProto *n, const char *name,
                                     Onnx__AttributeProto__AttributeType type)
{
	Onnx__AttributeProto *a = gb_new(b, sizeof *a);
	onnx__attribute_proto__init(a);
	a->name = gb_str(b, name);
	a->has_type = 1;
	a->type = type;
	GB_PUSH(b, n->attribute, n->n_attribute, a);
	return a;
}

static void gb_attr_i(gb_t *b, Onnx__NodeProto *n, const char *name, int64_t v)
{
	Onnx__AttributeProto *a = gb_attr(b, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
	a->has_i = 1;
	a->i = v;
}

static void gb_attr_f(gb_t *b, Onnx__NodeProto *n, const char *name, float v)
{
	Onnx__AttributeProto *a = gb_attr(b, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT);
	a->has_f = 1;
	a->f = v;
}

static void gb_attr_ints(gb_t *b, Onnx__NodeProto *n, const char *name, const int64_t *v, size_t k)
{
	Onnx__AttributeProto *a = gb_attr(b, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
	a->n_ints = k;
	a->ints = gb_new(b, k * sizeof *v);
	memcpy(a->ints, v, k * sizeof *v);
}

static void gb_attr_s(gb_t *b, Onnx__NodeProto *n, const char *name, const char *s)
{
	Onnx__AttributeProto *a = gb_attr(b, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING);
	a->has_s = 1;
	a->s.len = strlen(s);
	a->s.data = (uint8_t *)gb_str(b, s);
}

static void gb_meta(gb_t *b, const char *key, const char *value)
{
	Onnx__StringStringEntryProto *e = gb_new(b, sizeof *e);
	onnx__string_string_entry_proto__init(e);
	e->key = gb_str(b, key);
	e->value = gb_str(b, value);
	GB_PUSH(b, b->m.metadata_props, b->m.n_metadata_props, e);
}

static unsigned char *gb_pack(gb_t *b, size_t *len)
{
	*len = onnx__model_proto__get_packed_size(&b->m);
	unsigned char *buf = malloc(*len ? *len : 1);
	cr_assert(buf);
	cr_assert_eq(onnx__model_proto__pack(&b->m, buf), *len);
	return buf;
}

/* ---- reading and running ---- */

typedef struct got {
	nnn_status_t st;
	nnn_model_t *m;
	nnn_diags_t d;
	unsigned notes;
	char note[512];
} got_t;

static void got_read(got_t *r, const void *buf, size_t len, uint64_t max)
{
	memset(r, 0, sizeof *r);
	nnn_diags_init(&r->d);
	nnn_onnx_read_opts_t o = { .max_bytes = max, .notes = &r->notes, .note_text = r->note,
		                   .note_size = sizeof r->note };
	r->st = nnn_onnx_decode(buf, len, &o, &r->m, &r->d);
	if (r->st != NNN_OK)
		cr_assert_null(r->m);
}

/* Packs and reads b (then frees it). */
static void import(gb_t *b, got_t *r)
{
	size_t len;
	unsigned char *buf = gb_pack(b, &len);
	got_read(r, buf, len, 0);
	free(buf);
	gb_free(b);
}

static void got_free(got_t *r)
{
	nnn_model_free(r->m);
	nnn_diags_free(&r->d);
}

static const char *first_msg(const got_t *r)
{
	return r->d.n ? r->d.v[0].msg : "";
}

/* A refusal: the status and the path of every diagnostic, in order. */
static void expect_refused(gb_t *b, nnn_status_t code, const char *const *paths, size_t npaths, const char *word)
{
	got_t r;
	import(b, &r);
	cr_assert_eq(r.st, code, "status %d (%s), expected %d", r.st, first_msg(&r), code);
	cr_assert_eq(r.d.n, npaths, "%zu diagnostics, expected %zu (first: %s)", r.d.n, npaths, first_msg(&r));
	for (size_t k = 0; k < npaths; k++) {
		cr_assert_eq(r.d.v[k].code, code);
		cr_assert_str_eq(r.d.v[k].path, paths[k], "diagnostic %zu: %s", k, r.d.v[k].msg);
	}
	if (word)
		cr_assert(strstr(r.d.v[0].msg, word), "'%s' not in: %s", word, r.d.v[0].msg);
	got_free(&r);
}

/* Runs m on x of shape `in`; y gets numel(out) floats. */
static void run_model(const nnn_model_t *m, const int64_t *in, int rank, const float *x, float *y, int64_t ny)
{
	nnn_ctx_t *c = t_ctx_with("plugins/builtin.so");
	nnn_shape_t s = { .rank = rank }, out;
	nnn_diags_t d;
	nnn_diags_init(&d);
	for (int k = 0; k < rank; k++)
		s.dims[k] = in[k];
	cr_assert_eq(nnn_model_run(c, m, &s, x, y, &out, NULL, &d), NNN_OK, "%s", d.n ? d.v[0].msg : "");
	cr_assert_eq(nnn_shape_numel(&out), ny);
	nnn_diags_free(&d);
	nnn_ctx_free(c);
}

static void expect_close(const float *got, const float *want, int64_t n, float tol)
{
	for (int64_t k = 0; k < n; k++)
		cr_assert(fabsf(got[k] - want[k]) <= tol, "y[%ld] = %.9g, expected %.9g", (long)k, got[k], want[k]);
}

/* ---- accepted graphs ---- */

/* Gemm with transB = 1, as torch.onnx.export writes nn.Linear. */
Test(onnx_import, gemm_transB)
{
	gb_t b;
	const int64_t in[] = { -1, 3 }, wd[] = { 2, 3 }, bd[] = { 2 };
	const float w[] = { 1, 2, 3, 4, 5, 6 }, bias[] = { 0.5f, -1 };
	gb_init(&b, 13, in, 2);
	gb_floats(&b, "W", wd, 2, w, 1);
	gb_floats(&b, "B", bd, 1, bias, 0);
	Onnx__NodeProto *n = gb_node(&b, "Gemm", "fc", "x,W,B", "y");
	gb_attr_f(&b, n, "alpha", 1.0f);
	gb_attr_f(&b, n, "beta", 1.0f);
	gb_attr_i(&b, n, "transB", 1);
	got_t r;
	import(&b, &r);
	cr_assert_eq(r.st, NNN_OK, "%s", first_msg(&r));
	cr_assert_eq(r.m->layer_count, 1);
	cr_assert_eq(r.m->layers[0].id, NNN_LAYER_ID_DENSE);
	cr_assert_eq(r.m->layers[0].body.dense.neurons, 2);
	cr_assert_eq(r.m->param_count, 8);
	cr_assert_eq(r.notes, 0);
	/* y = x W^T + b: [1, 0, -1] -> [1 - 3 + 0.5, 4 - 6 - 1]; [2, 1, 0] -> [4.5, 12]. */
	const int64_t s[] = { 2, 3 };
	const float x[] = { 1, 0, -1, 2, 1, 0 }, want[] = { -1.5f, -3, 4.5f, 12 };
	float y[4];
	run_model(r.m, s, 2, x, y, 4);
	expect_close(y, want, 4, 0);
	got_free(&r);
}

/* A plugin's onnx_import hook (ABI 1.7) takes only nodes that draw on the
 * layer's output, constants and each other: a Mul of the chain's value by
 * the graph's input is a branch, refused as nnnkit refuses Mul, though the
 * fixture's hook claims it. */
Test(onnx_import, plugin_hook_takes_no_branch)
{
	gb_t b;
	const int64_t in[] = { -1, 2 }, wd[] = { 2, 2 }, bd[] = { 2 };
	const float w[] = { 1, 2, 3, 4 }, bias[] = { 0, 0 };
	gb_init(&b, 13, in, 2);
	gb_floats(&b, "W", wd, 2, w, 0);
	gb_floats(&b, "B", bd, 1, bias, 0);
	gb_node(&b, "Gemm", "fc", "x,W,B", "h");
	gb_node(&b, "Mul", "mul", "h,x", "y");
	nnn_ctx_t *c = t_ctx_new();
	cr_assert_eq(nnn_plugin_load(c, t_fixture("onnximp"), NULL), NNN_OK);
	size_t len;
	unsigned char *buf = gb_pack(&b, &len);
	gb_free(&b);
	nnn_diags_t d;
	nnn_diags_init(&d);
	nnn_model_t *m = NULL;
	nnn_onnx_read_opts_t o = { .ctx = c };
	cr_assert_eq(nnn_onnx_decode(buf, len, &o, &m, &d), NNN_E_ONNX_OP);
	cr_assert(d.n >= 1 && strstr(d.v[0].msg, "op type Mul is not one nnnkit converts"), "%s", d.n ? d.v[0].msg : "");
	cr_assert_null(m);
	nnn_diags_free(&d);
	free(buf);
	nnn_ctx_free(c);
}

/* After nodes a plugin's hook took (here the fixture's activation, a Mul
 * by a constant), an Add is no bias of the MatMul before them. */
Test(onnx_import, plugin_nodes_close_the_bias)
{
	gb_t b;
	const int64_t in[] = { -1, 2 }, wd[] = { 2, 2 }, bd[] = { 2 }, sd[] = { 1 };
	const float w[] = { 1, 2, 3, 4 }, bias[] = { 1, 1 }, two[] = { 2 };
	gb_init(&b, 13, in, 2);
	gb_floats(&b, "W", wd, 2, w, 0);
	gb_floats(&b, "B", bd, 1, bias, 0);
	gb_floats(&b, "two", sd, 1, two, 0);
	gb_node(&b, "MatMul", "mm", "x,W", "h");
	gb_node(&b, "Mul", "act", "h,two", "a");
	gb_node(&b, "Add", "add", "a,B", "y");
	nnn_ctx_t *c = t_ctx_new();
	cr_assert_eq(nnn_plugin_load(c, t_fixture("onnximp"), NULL), NNN_OK);
	size_t len;
	unsigned char *buf = gb_pack(&b, &len);
	gb_free(&b);
	nnn_diags_t d;
	nnn_diags_init(&d);
	nnn_model_t *m = NULL;
	nnn_onnx_read_opts_t o = { .ctx = c };
	cr_assert_eq(nnn_onnx_decode(buf, len, &o, &m, &d), NNN_E_ONNX_OP);
	cr_assert(d.n >= 1 && strstr(d.v[0].path, "graph.node[2]") &&
	          strstr(d.v[0].msg, "nnnkit reads Add only as the bias right after a MatMul"), "%s: %s",
	          d.n ? d.v[0].path : "", d.n ? d.v[0].msg : "");
	nnn_diags_free(&d);
	free(buf);
	nnn_ctx_free(c);
}

/* MatMul + Add on a rank-3 value (a Dense over the last axis), then
 * LeakyRelu with its alpha. */
Test(onnx_import, matmul_add_leaky_relu)
{
	gb_t b;
	const int64_t in[] = { -1, 2, 3 }, wd[] = { 3, 2 }, bd[] = { 2 };
	const float w[] = { 1, -1, 0, 2, -2, 1 }, bias[] = { 0.25f, -0.5f };
	gb_init(&b, 13, in, 3);
	gb_floats(&b, "W", wd, 2, w, 0);
	gb_floats(&b, "B", bd, 1, bias, 1);
	gb_node(&b, "MatMul", "mm", "x,W", "h");
	gb_node(&b, "Add", "add", "B,h", "z"); /* bias first: either order */
	Onnx__NodeProto *n = gb_node(&b, "LeakyRelu", "act", "z", "y");
	gb_attr_f(&b, n, "alpha", 0.3f);
	got_t r;
	import(&b, &r);
	cr_assert_eq(r.st, NNN_OK, "%s", first_msg(&r));
	cr_assert_eq(r.m->layer_count, 1);
	const nnn_layer_t *L = &r.m->layers[0];
	cr_assert_eq(L->id, NNN_LAYER_ID_DENSE);
	cr_assert_not(L->body.dense.flatten);
	cr_assert_eq(L->activation.id, NNN_ACTIVATION_ID_LEAKY_RELU);
	cr_assert_eq(L->activation.params.leaky_relu.tau, 0.3f);
	/* rows [1, 2, 3] -> [1 - 6 + .25, -1 + 4 + 3 - .5] = [-4.75, 5.5] -> [-1.425, 5.5];
	 *      [0, 1, 0] -> [0.25, 1.5]. */
	const int64_t s[] = { 1, 2, 3 };
	const float x[] = { 1, 2, 3, 0, 1, 0 }, want[] = { -4.75f * 0.3f, 5.5f, 0.25f, 1.5f };
	float y[4];
	run_model(r.m, s, 3, x, y, 4);
	expect_close(y, want, 4, 1e-6f);
	got_free(&r);
}

/* Conv2d on an NCHW input, Relu, Flatten, Gemm: the model takes NHWC and
 * gives what a direct NCHW loop gives. */
Test(onnx_import, conv_nchw_flatten_gemm)
{
	enum { N = 2, C = 2, H = 3, W = 4, F = 3, K = 2, OH = H - K + 1, OW = W - K + 1, M = 4 };
	gb_t b;
	const int64_t in[] = { -1, C, H, W }, kd[] = { F, C, K, K }, bd[] = { F }, gd[] = { F * OH * OW, M },
		      gbd[] = { M };
	float kern[F * C * K * K], kb[F], gw[F * OH * OW * M], gbias[M];
	for (int i = 0; i < F * C * K * K; i++)
		kern[i] = (float)((i * 7) % 11 - 5) / 8;
	for (int i = 0; i < F; i++)
		kb[i] = (float)i / 4 - 0.25f;
	for (int i = 0; i < F * OH * OW * M; i++)
		gw[i] = (float)((i * 5) % 13 - 6) / 16;
	for (int i = 0; i < M; i++)
		gbias[i] = (float)i / 2;
	gb_init(&b, 11, in, 4);
	gb_floats(&b, "k", kd, 4, kern, 1);
	gb_floats(&b, "kb", bd, 1, kb, 1);
	gb_floats(&b, "gw", gd, 2, gw, 1);
	gb_floats(&b, "gb", gbd, 1, gbias, 0);
	Onnx__NodeProto *n = gb_node(&b, "Conv", "conv", "x,k,kb", "c");
	const int64_t ones[] = { 1, 1 }, zeros[] = { 0, 0, 0, 0 }, ks[] = { K, K };
	gb_attr_ints(&b, n, "strides", ones, 2);
	gb_attr_ints(&b, n, "dilations", ones, 2);
	gb_attr_ints(&b, n, "pads", zeros, 4);
	gb_attr_ints(&b, n, "kernel_shape", ks, 2);
	gb_attr_i(&b, n, "group", 1);
	gb_node(&b, "Relu", "relu", "c", "r");
	gb_node(&b, "Flatten", "flat", "r", "f");
	gb_node(&b, "Gemm", "fc", "f,gw,gb", "y");
	/* The input is fixed but for N: the Flatten needs C, H and W. */
	got_t r;
	import(&b, &r);
	cr_assert_eq(r.st, NNN_OK, "%s", first_msg(&r));
	cr_assert_eq(r.notes, NNN_ONNX_NOTE_CHANNELS_FIRST);
	cr_assert(strstr(r.note, "transpose(0, 2, 3, 1)"), "%s", r.note);
	cr_assert_eq(r.m->layer_count, 2);
	cr_assert(r.m->layers[1].body.dense.flatten);

	/* The truth: NCHW all the way, as the graph says. */
	float x[N * C * H * W], conv[N * F * OH * OW], want[N * M];
	for (int i = 0; i < N * C * H * W; i++)
		x[i] = (float)((i * 3) % 7) / 4 - 0.5f;
	for (int s = 0; s < N; s++)
		for (int f = 0; f < F; f++)
			for (int oh = 0; oh < OH; oh++)
				for (int ow = 0; ow < OW; ow++) {
					float acc = kb[f];
					for (int c = 0; c < C; c++)
						for (int i = 0; i < K; i++)
							for (int j = 0; j < K; j++)
								acc += x[((s * C + c) * H + oh + i) * W + ow + j] *
								       kern[((f * C + c) * K + i) * K + j];
					conv[((s * F + f) * OH + oh) * OW + ow] = acc > 0 ? acc : 0;
				}
	for (int s = 0; s < N; s++)
		for (int m = 0; m < M; m++) {
			float acc = gbias[m];
			for (int k = 0; k < F * OH * OW; k++)
				acc += conv[s * F * OH * OW + k] * gw[k * M + m];
			want[s * M + m] = acc;
		}
	/* The model's input: x as NHWC. */
	float xl[N * H * W * C], y[N * M];
	for (int s = 0; s < N; s++)
		for (int c = 0; c < C; c++)
			for (int h = 0; h < H; h++)
				for (int w = 0; w < W; w++)
					xl[((s * H + h) * W + w) * C + c] = x[((s * C + c) * H + h) * W + w];
	const int64_t shape[] = { N, H, W, C };
	run_model(r.m, shape, 4, xl, y, N * M);
	expect_close(y, want, N * M, 1e-5f);
	got_free(&r);
}

/* A channels-last graph as tf2onnx and nnnkit's export write it:
 * Transpose to NCHW, Conv (auto_pad SAME_UPPER), Relu, Transpose back. */
Test(onnx_import, conv_nhwc_boundary_transposes)
{
	enum { H = 4, W = 3, C = 2, F = 2, K = 3 };
	gb_t b;
	const int64_t in[] = { 1, H, W, C }, kd[] = { F, C, K, K }, bd[] = { F };
	float kern[F * C * K * K];
	const float kb[] = { 0.5f, -0.25f };
	for (int i = 0; i < F * C * K * K; i++)
		kern[i] = (float)((i * 5) % 9 - 4) / 4;
	gb_init(&b, 13, in, 4);
	gb_floats(&b, "k", kd, 4, kern, 0);
	gb_floats(&b, "kb", bd, 1, kb, 0);
	const int64_t to_first[] = { 0, 3, 1, 2 }, to_last[] = { 0, 2, 3, 1 };
	Onnx__NodeProto *n = gb_node(&b, "Transpose", "t0", "x", "xt");
	gb_attr_ints(&b, n, "perm", to_first, 4);
	n = gb_node(&b, "Conv", "conv", "xt,k,kb", "c");
	gb_attr_s(&b, n, "auto_pad", "SAME_UPPER");
	gb_node(&b, "Relu", "relu", "c", "r");
	n = gb_node(&b, "Transpose", "t1", "r", "y");
	gb_attr_ints(&b, n, "perm", to_last, 4);
	got_t r;
	import(&b, &r);
	cr_assert_eq(r.st, NNN_OK, "%s", first_msg(&r));
	cr_assert_eq(r.notes, 0, "no channels-first note for a channels-last graph: %s", r.note);
	cr_assert_eq(r.m->layers[0].body.conv.padding_type, NNN_PADDING_TYPE_SAME);
	/* The truth: NHWC with one zero of padding on each side. */
	float x[H * W * C], want[H * W * F], y[H * W * F];
	for (int i = 0; i < H * W * C; i++)
		x[i] = (float)((i * 7) % 5) / 2 - 1;
	for (int h = 0; h < H; h++)
		for (int w = 0; w < W; w++)
			for (int f = 0; f < F; f++) {
				float acc = kb[f];
				for (int i = 0; i < K; i++)
					for (int j = 0; j < K; j++)
						for (int c = 0; c < C; c++) {
							int hh = h + i - 1, ww = w + j - 1;
							if (hh >= 0 && hh < H && ww >= 0 && ww < W)
								acc += x[(hh * W + ww) * C + c] * kern[((f * C + c) * K + i) * K + j];
						}
				want[(h * W + w) * F + f] = acc > 0 ? acc : 0;
			}
	run_model(r.m, in, 4, x, y, H * W * F);
	expect_close(y, want, H * W * F, 1e-5f);
	got_free(&r);
}

/* Dropout's ratio becomes the layer's dropout: an attribute (opset 11) or
 * a constant input (opset 12 on); Identity passes through. */
Test(onnx_import, dropout_ratio_kept)
{
	for (int opset = 11; opset <= 13; opset += 2) {
		gb_t b;
		const int64_t in[] = { -1, 2 }, wd[] = { 2, 2 }, bd[] = { 2 }, scalar[] = { 0 };
		const float w[] = { 1, 0, 0, 1 }, bias[] = { 0, 0 }, ratio = 0.25f;
		gb_init(&b, opset, in, 2);
		gb_floats(&b, "W", wd, 2, w, 0);
		gb_floats(&b, "B", bd, 1, bias, 0);
		gb_node(&b, "Gemm", "fc", "x,W,B", "h");
		gb_node(&b, "Sigmoid", "act", "h", "s");
		gb_node(&b, "Identity", "id", "s", "i");
		if (opset == 11) {
			Onnx__NodeProto *n = gb_node(&b, "Dropout", "drop", "i", "y");
			gb_attr_f(&b, n, "ratio", ratio);
		} else {
			gb_floats(&b, "ratio", scalar, 0, &ratio, 0);
			gb_node(&b, "Dropout", "drop", "i,ratio", "y");
		}
		got_t r;
		import(&b, &r);
		cr_assert_eq(r.st, NNN_OK, "opset %d: %s", opset, first_msg(&r));
		cr_assert_eq(r.m->layers[0].dropout, 0.25f, "opset %d", opset);
		cr_assert_eq(r.m->layers[0].activation.id, NNN_ACTIVATION_ID_SIGMOID);
		got_free(&r);
	}
}

/* A Reshape to [0, -1] whose shape is a Constant node, and Softmax over the
 * last axis (opset 11's default axis 1 on rank 2). */
Test(onnx_import, reshape_constant_softmax)
{
	gb_t b;
	const int64_t in[] = { -1, 1, 2 }, wd[] = { 2, 2 }, bd[] = { 2 }, sd[] = { 2 }, shape[] = { 0, -1 };
	const float w[] = { 1, 0, 0, 1 }, bias[] = { 0, 0 };
	gb_init(&b, 11, in, 3);
	gb_floats(&b, "W", wd, 2, w, 0);
	gb_floats(&b, "B", bd, 1, bias, 0);
	Onnx__NodeProto *c = gb_node(&b, "Constant", "shape", "", "s");
	Onnx__AttributeProto *a = gb_attr(&b, c, "value", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR);
	a->t = gb_tensor(&b, "", ONNX__TENSOR_PROTO__DATA_TYPE__INT64, sd, 1);
	a->t->n_int64_data = 2;
	a->t->int64_data = gb_new(&b, sizeof shape);
	memcpy(a->t->int64_data, shape, sizeof shape);
	gb_node(&b, "Reshape", "flat", "x,s", "f");
	gb_node(&b, "Gemm", "fc", "f,W,B", "h");
	gb_node(&b, "Softmax", "sm", "h", "y");
	got_t r;
	import(&b, &r);
	cr_assert_eq(r.st, NNN_OK, "%s", first_msg(&r));
	cr_assert(r.m->layers[0].body.dense.flatten);
	cr_assert_eq(r.m->layers[0].activation.id, NNN_ACTIVATION_ID_SOFTMAX);
	/* softmax([0, ln 3]) = [0.25, 0.75] */
	const int64_t s[] = { 1, 1, 2 };
	const float x[] = { 0, logf(3) }, want[] = { 0.25f, 0.75f };
	float y[2];
	run_model(r.m, s, 3, x, y, 2);
	expect_close(y, want, 2, 1e-6f);
	got_free(&r);
}

/* Softmax over the channels of an NCHW value as torch writes it before
 * opset 13: Transpose channels last, Softmax on the last axis, Transpose
 * back. A 1x1 Conv of weight 1 keeps x, so y is softmax over x's channels. */
Test(onnx_import, softmax_between_transposes)
{
	gb_t b;
	const int64_t in[] = { -1, 2, 1, 2 }, kd[] = { 2, 2, 1, 1 }, swap[] = { 0, 3, 2, 1 };
	const float k[] = { 1, 0, 0, 1 };
	gb_init(&b, 11, in, 4);
	gb_floats(&b, "k", kd, 4, k, 0);
	gb_node(&b, "Conv", "conv", "x,k", "c");
	gb_attr_ints(&b, gb_node(&b, "Transpose", "t0", "c", "t"), "perm", swap, 4);
	gb_attr_i(&b, gb_node(&b, "Softmax", "sm", "t", "s"), "axis", 3);
	gb_attr_ints(&b, gb_node(&b, "Transpose", "t1", "s", "y"), "perm", swap, 4);
	got_t r;
	import(&b, &r);
	cr_assert_eq(r.st, NNN_OK, "%s", first_msg(&r));
	cr_assert_eq(r.m->layers[0].activation.id, NNN_ACTIVATION_ID_SOFTMAX);
	cr_assert(strstr(r.note, "outputs back"), "%s", r.note);
	/* NHWC [1, 1, 2, 2]: pixels (0, ln 3) and (ln 3, 0) over the channels. */
	const int64_t s[] = { 1, 1, 2, 2 };
	const float x[] = { 0, logf(3), logf(3), 0 }, want[] = { 0.25f, 0.75f, 0.75f, 0.25f };
	float y[4];
	run_model(r.m, s, 4, x, y, 4);
	expect_close(y, want, 4, 1e-6f);
	got_free(&r);
}

/* A Softmax of opset 11 on axis 1 of that NCHW value flattens C, H and W
 * together: not nnn's Softmax. */
Test(onnx_import, refuses_softmax_axis_1_nchw_opset_11)
{
	gb_t b;
	const int64_t in[] = { -1, 2, 1, 2 }, kd[] = { 2, 2, 1, 1 };
	const float k[] = { 1, 0, 0, 1 };
	gb_init(&b, 11, in, 4);
	gb_floats(&b, "k", kd, 4, k, 0);
	gb_node(&b, "Conv", "conv", "x,k", "c");
	gb_attr_i(&b, gb_node(&b, "Softmax", "sm", "c", "y"), "axis", 1);
	expect_refused(&b, NNN_E_ONNX_OP, node1, 1, "before opset 13");
}

/* A Reshape to [-1, F] (tf2onnx's flatten), its shape an initializer: F
 * must be the value's feature count. */
static void reshape_graph(gb_t *b, int64_t F)
{
	const int64_t in[] = { -1, 2, 2 }, wd[] = { 4, 1 }, bd[] = { 1 }, sd[] = { 2 }, shape[] = { -1, F };
	const float w[] = { 1, 2, 3, 4 }, bias[] = { 0 };
	gb_init(b, 13, in, 3);
	gb_floats(b, "W", wd, 2, w, 0);
	gb_floats(b, "B", bd, 1, bias, 0);
	gb_int64s(b, "s", sd, 1, shape);
	gb_node(b, "Reshape", "flat", "x,s", "f");
	gb_node(b, "MatMul", "mm", "f,W", "h");
	gb_node(b, "Add", "add", "h,B", "y");
}

Test(onnx_import, reshape_minus1_F)
{
	gb_t b;
	reshape_graph(&b, 4);
	got_t r;
	import(&b, &r);
	cr_assert_eq(r.st, NNN_OK, "%s", first_msg(&r));
	cr_assert(r.m->layers[0].body.dense.flatten);
	const int64_t s[] = { 1, 2, 2 };
	const float x[] = { 1, 1, 1, -1 }, want[] = { 1 + 2 + 3 - 4 };
	float y[1];
	run_model(r.m, s, 3, x, y, 1);
	expect_close(y, want, 1, 0);
	got_free(&r);
	reshape_graph(&b, 3);
	expect_refused(&b, NNN_E_ONNX_OP, node0, 1, "[-1, 3]");
}

/* torch.onnx.export's x.view(x.size(0), -1) with a dynamic batch: Shape of
 * the input, Gather 0, Unsqueeze, Concat with -1, Reshape. `index`: the
 * dim Gather takes (only 0 is the batch). */
static void view_graph(gb_t *b, int64_t index)
{
	const int64_t in[] = { -1, 2, 2 }, wd[] = { 4, 1 }, sc[] = { 1 }, one[] = { 1 };
	const int64_t zero = 0, idx = index, minus1 = -1;
	const float w[] = { 1, 2, 3, 4 };
	gb_init(b, 13, in, 3);
	gb_floats(b, "W", wd, 2, w, 0);
	gb_int64s(b, "idx", sc, 0, &idx);
	gb_int64s(b, "axes", one, 1, &zero);
	gb_int64s(b, "m1", one, 1, &minus1);
	gb_node(b, "Shape", "shape", "x", "s");
	gb_node(b, "Gather", "gather", "s,idx", "n");
	gb_node(b, "Unsqueeze", "unsq", "n,axes", "n1");
	gb_attr_i(b, gb_node(b, "Concat", "cat", "n1,m1", "shp"), "axis", 0);
	gb_node(b, "Reshape", "flat", "x,shp", "f");
	gb_node(b, "MatMul", "mm", "f,W", "y");
}

Test(onnx_import, batch_size_idiom)
{
	gb_t b;
	view_graph(&b, 0);
	got_t r;
	import(&b, &r);
	cr_assert_eq(r.st, NNN_OK, "%s", first_msg(&r));
	cr_assert_eq(r.m->layer_count, 1);
	cr_assert(r.m->layers[0].body.dense.flatten);
	const int64_t s[] = { 2, 2, 2 };
	const float x[] = { 1, 0, 0, 0, 0, 1, 1, 1 }, want[] = { 1, 9 };
	float y[2];
	run_model(r.m, s, 3, x, y, 2);
	expect_close(y, want, 2, 0);
	got_free(&r);
	view_graph(&b, 1); /* a dim that is not the batch */
	expect_refused(&b, NNN_E_ONNX_OP, node1, 1, "batch size");
}

/* "nnn.fields" (what export writes) that agrees with the graph gives the
 * fields ONNX has none for; one that disagrees is ignored, with a note. */
static void meta_graph(gb_t *b, const char *meta)
{
	const int64_t in[] = { -1, 2 }, wd[] = { 2, 1 }, bd[] = { 1 };
	const float w[] = { 2, 3 }, bias[] = { 1 };
	gb_init(b, 13, in, 2);
	gb_floats(b, "W", wd, 2, w, 0);
	gb_floats(b, "B", bd, 1, bias, 0);
	gb_node(b, "Gemm", "fc", "x,W,B", "h");
	gb_node(b, "Tanh", "act", "h", "y");
	gb_meta(b, NNN_ONNX_META_FIELDS, meta);
}

Test(onnx_import, metadata_agrees)
{
	gb_t b;
	meta_graph(&b, "{\"description\": \"from nnn\", \"param_count\": 3, \"layers\": [{\"id\": \"dense\", "
	               "\"activation\": {\"id\": \"tanh\"}, \"dropout\": 0.5, \"bias\": {\"dims\": [1], "
	               "\"requires_grad\": false, \"data\": null}, \"neurons\": 1, \"weights\": {\"dims\": [2, 1], "
	               "\"requires_grad\": true, \"data\": null}, \"flatten\": true}]}");
	got_t r;
	import(&b, &r);
	cr_assert_eq(r.st, NNN_OK, "%s", first_msg(&r));
	cr_assert_eq(r.notes, 0, "%s", r.note);
	cr_assert_eq(r.m->description.len, 8);
	cr_assert(!memcmp(r.m->description.ptr, "from nnn", 8));
	const nnn_layer_t *L = &r.m->layers[0];
	cr_assert_eq(L->dropout, 0.5f);
	cr_assert_not(L->bias.requires_grad);
	cr_assert(L->body.dense.weights.requires_grad);
	cr_assert(L->body.dense.flatten); /* on a rank-2 input either is the graph's */
	cr_assert_eq(nnn_f32s_get(L->body.dense.weights.data, 1), 3.0f);
	got_free(&r);
}

Test(onnx_import, metadata_disagrees)
{
	gb_t b;
	meta_graph(&b, "{\"description\": \"from nnn\", \"param_count\": 3, \"layers\": [{\"id\": \"dense\", "
	               "\"activation\": {\"id\": \"relu\"}, \"dropout\": 0.5, \"bias\": {\"dims\": [1], "
	               "\"requires_grad\": false, \"data\": null}, \"neurons\": 1, \"weights\": {\"dims\": [2, 1], "
	               "\"requires_grad\": true, \"data\": null}, \"flatten\": false}]}");
	got_t r;
	import(&b, &r);
	cr_assert_eq(r.st, NNN_OK, "%s", first_msg(&r));
	cr_assert_eq(r.notes, NNN_ONNX_NOTE_META_IGNORED);
	cr_assert(strstr(r.note, "layers[0].activation"), "%s", r.note);
	cr_assert_eq(r.m->description.len, 0);
	cr_assert_eq(r.m->layers[0].activation.id, NNN_ACTIVATION_ID_TANH);
	got_free(&r);
}

/* ---- refusals: one diagnostic per unsupported node ---- */


/* x [N, 2, 5, 5] -> Conv (2 filters, 3x3) -> y; `tweak` adds the attribute under test. */
static Onnx__NodeProto *conv_graph(gb_t *b, int64_t group_channels)
{
	const int64_t in[] = { -1, 2, 5, 5 }, kd[] = { 2, group_channels, 3, 3 };
	float k[2 * 2 * 9] = { 0 };
	gb_init(b, 13, in, 4);
	gb_floats(b, "k", kd, 4, k, 0);
	return gb_node(b, "Conv", "conv", "x,k", "y");
}

Test(onnx_import, refuses_conv_stride_2)
{
	gb_t b;
	const int64_t two[] = { 2, 2 };
	gb_attr_ints(&b, conv_graph(&b, 2), "strides", two, 2);
	expect_refused(&b, NNN_E_ONNX_OP, node0, 1, "strides = [2, 2]");
}

Test(onnx_import, refuses_conv_dilation_2)
{
	gb_t b;
	const int64_t two[] = { 2, 2 };
	gb_attr_ints(&b, conv_graph(&b, 2), "dilations", two, 2);
	expect_refused(&b, NNN_E_ONNX_OP, node0, 1, "dilations = [2, 2]");
}

Test(onnx_import, refuses_conv_group_2)
{
	gb_t b;
	gb_attr_i(&b, conv_graph(&b, 1), "group", 2);
	expect_refused(&b, NNN_E_ONNX_OP, node0, 1, "group = 2");
}

Test(onnx_import, refuses_asymmetric_pads)
{
	gb_t b;
	const int64_t pads[] = { 0, 0, 1, 1 }; /* after only: neither Valid nor Same */
	gb_attr_ints(&b, conv_graph(&b, 2), "pads", pads, 4);
	expect_refused(&b, NNN_E_ONNX_OP, node0, 1, "cannot express");
}

Test(onnx_import, accepts_symmetric_pads_as_same)
{
	gb_t b;
	const int64_t pads[] = { 1, 1, 1, 1 };
	gb_attr_ints(&b, conv_graph(&b, 2), "pads", pads, 4);
	got_t r;
	import(&b, &r);
	cr_assert_eq(r.st, NNN_OK, "%s", first_msg(&r));
	cr_assert_eq(r.m->layers[0].body.conv.padding_type, NNN_PADDING_TYPE_SAME);
	cr_assert_eq(r.m->layers[0].body.conv.padding_dims.n, 4);
	got_free(&r);
}

static Onnx__NodeProto *gemm_graph(gb_t *b)
{
	const int64_t in[] = { -1, 2 }, wd[] = { 2, 2 };
	const float w[] = { 1, 2, 3, 4 };
	gb_init(b, 13, in, 2);
	gb_floats(b, "W", wd, 2, w, 0);
	return gb_node(b, "Gemm", "fc", "x,W", "y");
}

/* Gemm's alpha and beta scale the weights and the bias (ONNX's own node
 * tests test_gemm_alpha and test_gemm_beta): y = alpha (x W) + beta C. */
Test(onnx_import, gemm_alpha_beta_folded)
{
	gb_t b;
	const int64_t bd[] = { 2 };
	const float bias[] = { 1, -1 };
	Onnx__NodeProto *n = gemm_graph(&b);
	gb_floats(&b, "C", bd, 1, bias, 0);
	GB_PUSH(&b, n->input, n->n_input, gb_str(&b, "C"));
	gb_attr_f(&b, n, "alpha", 0.5f);
	gb_attr_f(&b, n, "beta", 2.0f);
	got_t r;
	import(&b, &r);
	cr_assert_eq(r.st, NNN_OK, "%s", first_msg(&r));
	/* W = [[1, 2], [3, 4]]: [1, 1] -> 0.5 [4, 6] + 2 [1, -1] = [4, 1];
	 * [2, -1] -> 0.5 [-1, 0] + [2, -2] = [1.5, -2]. */
	const int64_t s[] = { 2, 2 };
	const float x[] = { 1, 1, 2, -1 }, want[] = { 4, 1, 1.5f, -2 };
	float y[4];
	run_model(r.m, s, 2, x, y, 4);
	expect_close(y, want, 4, 0);
	got_free(&r);
}

Test(onnx_import, refuses_gemm_alpha_inf)
{
	gb_t b;
	gb_attr_f(&b, gemm_graph(&b), "alpha", INFINITY);
	expect_refused(&b, NNN_E_ONNX_OP, node0, 1, "alpha = inf: expected a finite float");
}

/* Weights given as graph inputs (as ONNX's node tests give them): the
 * refusal names each input and says to store the weights as initializers. */
Test(onnx_import, refuses_weights_as_inputs_naming_them)
{
	gb_t b;
	const int64_t in[] = { -1, 2 }, wd[] = { 2, 2 };
	gb_init(&b, 13, in, 2);
	GB_PUSH(&b, b.g.input, b.g.n_input, gb_value(&b, "W", wd, 2));
	gb_node(&b, "Gemm", "fc", "x,W", "y");
	const char *const path[] = { "graph.input" };
	expect_refused(&b, NNN_E_ONNX, path, 1, "2 inputs that are not initializers ('x', 'W'): a .nnn model has one "
	                                        "input, the data, and keeps weights and biases in its layers; store "
	                                        "them in the graph as initializers");
}

/* PyTorch's old Linear without bias: Transpose of the weights, then
 * MatMul. The refusal says the Transpose works on a constant and to fold it. */
Test(onnx_import, refuses_a_node_on_a_constant)
{
	gb_t b;
	const int64_t in[] = { -1, 2 }, wd[] = { 2, 2 };
	const float w[] = { 1, 2, 3, 4 };
	gb_init(&b, 13, in, 2);
	gb_floats(&b, "W", wd, 2, w, 0);
	gb_node(&b, "Transpose", "t", "W", "Wt");
	gb_node(&b, "MatMul", "mm", "x,Wt", "y");
	expect_refused(&b, NNN_E_ONNX_OP, (const char *const[]){ "graph.node[0]", "graph.node[1]" }, 2,
	               "its input 'W' is a constant, not the chain's value ('x'): nnnkit does not compute on constants; "
	               "fold them into the weights first");
}

/* ONNX's test_shape: the output is a Shape of the input, off the chain. */
Test(onnx_import, refuses_an_output_off_the_chain_naming_its_node)
{
	gb_t b;
	const int64_t in[] = { -1, 2 };
	gb_init(&b, 13, in, 2);
	gb_node(&b, "Shape", "s", "x", "y");
	const char *const path[] = { "graph.output" };
	expect_refused(&b, NNN_E_ONNX, path, 1, "output 'y' is made by graph.node[0] ('s', Shape), which is off the "
	                                        "chain of layers (it ends at 'x')");
}

Test(onnx_import, refuses_two_outputs_naming_them)
{
	gb_t b;
	Onnx__NodeProto *n = gemm_graph(&b);
	GB_PUSH(&b, n->output, n->n_output, gb_str(&b, "mask"));
	GB_PUSH(&b, b.g.output, b.g.n_output, gb_value(&b, "mask", NULL, -1));
	const char *const path[] = { "graph.output" };
	expect_refused(&b, NNN_E_ONNX, path, 1, "2 outputs ('y', 'mask'): a .nnn model has one output");
}

Test(onnx_import, refuses_gemm_transA)
{
	gb_t b;
	gb_attr_i(&b, gemm_graph(&b), "transA", 1);
	expect_refused(&b, NNN_E_ONNX_OP, node0, 1, "transA = 1");
}

Test(onnx_import, refuses_softmax_axis_1_on_rank_3)
{
	gb_t b;
	const int64_t in[] = { -1, 2, 3 }, wd[] = { 3, 2 };
	const float w[6] = { 0 };
	gb_init(&b, 13, in, 3);
	gb_floats(&b, "W", wd, 2, w, 0);
	gb_node(&b, "MatMul", "mm", "x,W", "h");
	gb_attr_i(&b, gb_node(&b, "Softmax", "sm", "h", "y"), "axis", 1);
	expect_refused(&b, NNN_E_ONNX_OP, node1, 1, "axis = 1");
}

Test(onnx_import, refuses_maxpool)
{
	gb_t b;
	const int64_t in[] = { -1, 1, 4, 4 }, kd[] = { 1, 1, 1, 1 }, ks[] = { 2, 2 };
	const float k[] = { 1 };
	gb_init(&b, 13, in, 4);
	gb_floats(&b, "k", kd, 4, k, 0);
	gb_node(&b, "Conv", "conv", "x,k", "c");
	gb_attr_ints(&b, gb_node(&b, "MaxPool", "pool", "c", "y"), "kernel_shape", ks, 2);
	/* The node, then the ops nnnkit converts, once. */
	expect_refused(&b, NNN_E_ONNX_OP, (const char *const[]){ "graph.node[1]", "graph.node" }, 2, "MaxPool");
}

Test(onnx_import, refuses_activation_first)
{
	gb_t b;
	const int64_t in[] = { -1, 2 }, wd[] = { 2, 2 };
	const float w[4] = { 0 };
	gb_init(&b, 13, in, 2);
	gb_floats(&b, "W", wd, 2, w, 0);
	gb_node(&b, "Relu", "relu", "x", "r");
	gb_node(&b, "Gemm", "fc", "r,W", "y");
	expect_refused(&b, NNN_E_ONNX_OP, node0, 1, "no layer before it");
}

Test(onnx_import, refuses_two_activations)
{
	gb_t b;
	const int64_t in[] = { -1, 2 }, wd[] = { 2, 2 };
	const float w[4] = { 0 };
	gb_init(&b, 13, in, 2);
	gb_floats(&b, "W", wd, 2, w, 0);
	gb_node(&b, "Gemm", "fc", "x,W", "h");
	gb_node(&b, "Relu", "relu", "h", "r");
	gb_node(&b, "Tanh", "tanh", "r", "y");
	expect_refused(&b, NNN_E_ONNX_OP, (const char *const[]){ "graph.node[2]" }, 1, "second activation");
}

/* Every bad node listed, one diagnostic each, in graph order; then the ops
 * nnnkit converts, once (a MaxPool is among them). */
Test(onnx_import, lists_every_bad_node)
{
	gb_t b;
	const int64_t in[] = { -1, 2, 6, 6 }, kd[] = { 2, 2, 1, 1 }, two[] = { 2, 2 }, wd[] = { 8, 2 };
	const float k[4] = { 1, 0, 0, 1 }, w[16] = { 0 };
	gb_init(&b, 13, in, 4);
	gb_floats(&b, "k", kd, 4, k, 0);
	gb_floats(&b, "W", wd, 2, w, 0);
	gb_attr_ints(&b, gb_node(&b, "Conv", "c1", "x,k", "a"), "strides", two, 2);
	gb_node(&b, "Relu", "r1", "a", "b");
	gb_attr_ints(&b, gb_node(&b, "MaxPool", "pool", "b", "c"), "kernel_shape", two, 2);
	gb_attr_i(&b, gb_node(&b, "Conv", "c2", "c,k", "d"), "group", 2);
	gb_node(&b, "Flatten", "flat", "d", "e");
	gb_attr_i(&b, gb_node(&b, "Gemm", "fc", "e,W", "y"), "transA", 1);
	const char *const paths[] = { "graph.node[0]", "graph.node[2]", "graph.node[3]", "graph.node[5]", "graph.node" };
	got_t r;
	size_t len;
	unsigned char *buf = gb_pack(&b, &len);
	gb_free(&b);
	got_read(&r, buf, len, 0);
	free(buf);
	cr_assert_eq(r.st, NNN_E_ONNX_OP, "%s", first_msg(&r));
	cr_assert_eq(r.d.n, 5, "%zu diagnostics (first: %s)", r.d.n, first_msg(&r));
	for (size_t i = 0; i < 5; i++)
		cr_assert_str_eq(r.d.v[i].path, paths[i], "%zu: %s", i, r.d.v[i].msg);
	cr_assert(strstr(r.d.v[0].msg, "'c1' (Conv)") && strstr(r.d.v[0].msg, "strides"), "%s", r.d.v[0].msg);
	cr_assert(strstr(r.d.v[1].msg, "'pool' (MaxPool)"), "%s", r.d.v[1].msg);
	cr_assert(strstr(r.d.v[2].msg, "group"), "%s", r.d.v[2].msg);
	cr_assert(strstr(r.d.v[3].msg, "transA"), "%s", r.d.v[3].msg);
	cr_assert(strstr(r.d.v[4].msg, "the ops nnnkit converts: Conv, Gemm"), "%s", r.d.v[4].msg);
	got_free(&r);
}

/* GELU as other exporters write it (x times 1/sqrt(2) for the Div; x^3 as
 * a Pow in the tanh form, its scalars as initializers): one diagnostic
 * for the nodes, then the ops converted. A Div by another constant is no
 * GELU: each node is its own. */
static void gelu_graph(gb_t *b, int tanh_form, float scale)
{
	const int64_t in[] = { -1, 2 }, wd[] = { 2, 2 };
	const float w[4] = { 1, 0, 0, 1 }, half = 0.5f, one = 1, k = 0.044715f, r = 0.7978845608f, three = 3;
	gb_init(b, 13, in, 2);
	gb_floats(b, "W", wd, 2, w, 0);
	gb_floats(b, "half", wd, 0, &half, 0);
	gb_floats(b, "one", wd, 0, &one, 1);
	gb_floats(b, "s", wd, 0, &scale, 0);
	gb_floats(b, "k", wd, 0, &k, 0);
	gb_floats(b, "r", wd, 0, &r, 0);
	gb_floats(b, "three", wd, 0, &three, 0);
	gb_node(b, "Gemm", "fc", "x,W", "h");
	if (tanh_form) {
		gb_node(b, "Pow", "p", "h,three", "h3");
		gb_node(b, "Mul", "m1", "k,h3", "a");
		gb_node(b, "Add", "a1", "h,a", "c");
		gb_node(b, "Mul", "m2", "c,r", "d");
		gb_node(b, "Tanh", "t", "d", "e");
	} else {
		gb_node(b, "Mul", "m1", "h,s", "d");
		gb_node(b, "Erf", "t", "d", "e");
	}
	gb_node(b, "Add", "a2", "one,e", "f");
	gb_node(b, "Mul", "m3", "f,h", "g");
	gb_node(b, "Mul", "m4", "g,half", "y");
}

Test(onnx_import, gelu_variants_one_line)
{
	gb_t b;
	const char *const paths[] = { "graph.node[1]", "graph.node" };
	gelu_graph(&b, 0, 0.70710678f);
	expect_refused(&b, NNN_E_ONNX_OP, paths, 2, "nodes 'm1', 't', 'a2', 'm3', 'm4' (graph.node[1] to [5]) form GELU,");
	gelu_graph(&b, 1, 0.70710678f);
	expect_refused(&b, NNN_E_ONNX_OP, paths, 2,
	               "nodes 'p', 'm1', 'a1', 'm2', 't', 'a2', 'm3', 'm4' (graph.node[1] to [8]) form GELU (tanh form),");
	/* x times 0.6: each node refused for itself, the Add too (it follows the Erf). */
	gelu_graph(&b, 0, 0.6f);
	expect_refused(&b, NNN_E_ONNX_OP,
	               (const char *const[]){ "graph.node[1]", "graph.node[2]", "graph.node[3]", "graph.node[4]",
	                                      "graph.node[5]", "graph.node" },
	               6, "op type Mul is not one nnnkit converts");
}

/* ---- refusals of the file itself ---- */

Test(onnx_import, refuses_external_data)
{
	gb_t b;
	gemm_graph(&b);
	Onnx__TensorProto *t = b.g.initializer[0];
	t->n_float_data = 0;
	t->has_data_location = 1;
	t->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
	Onnx__StringStringEntryProto *e = gb_new(&b, sizeof *e);
	onnx__string_string_entry_proto__init(e);
	e->key = gb_str(&b, "location");
	e->value = gb_str(&b, "weights.bin");
	GB_PUSH(&b, t->external_data, t->n_external_data, e);
	expect_refused(&b, NNN_E_ONNX, (const char *const[]){ "graph.initializer[0]" }, 1, "'W'");
}

Test(onnx_import, refuses_dims_that_disagree_with_data)
{
	gb_t b;
	gemm_graph(&b);
	b.g.initializer[0]->n_float_data = 3; /* dims [2, 2] */
	expect_refused(&b, NNN_E_ONNX, (const char *const[]){ "graph.initializer[0]" }, 1, "4 values");
}

Test(onnx_import, refuses_raw_data_of_the_wrong_size)
{
	gb_t b;
	const int64_t in[] = { -1, 2 }, wd[] = { 2, 2 };
	const float w[] = { 1, 2, 3, 4 };
	gb_init(&b, 13, in, 2);
	gb_floats(&b, "W", wd, 2, w, 1)->raw_data.len = 12;
	gb_node(&b, "Gemm", "fc", "x,W", "y");
	expect_refused(&b, NNN_E_ONNX, (const char *const[]){ "graph.initializer[0]" }, 1, "raw_data");
}

Test(onnx_import, refuses_opset_10_and_22)
{
	for (int64_t v = 10; v <= 22; v += 12) {
		gb_t b;
		gemm_graph(&b);
		b.m.opset_import[0]->version = v;
		expect_refused(&b, NNN_E_ONNX, (const char *const[]){ "opset_import" }, 1, v == 10 ? "opset 10" : "opset 22");
	}
}

Test(onnx_import, accepts_opsets_11_to_21)
{
	for (int64_t v = 11; v <= 21; v++) {
		gb_t b;
		gemm_graph(&b);
		b.m.opset_import[0]->version = v;
		got_t r;
		import(&b, &r);
		cr_assert_eq(r.st, NNN_OK, "opset %ld: %s", (long)v, first_msg(&r));
		got_free(&r);
	}
}

Test(onnx_import, refuses_what_is_not_protobuf)
{
	static const char text[] = "this is not an onnx model";
	got_t r;
	got_read(&r, text, sizeof text - 1, 0);
	cr_assert_eq(r.st, NNN_E_ONNX);
	cr_assert_eq(r.d.n, 1);
	cr_assert_str_eq(r.d.v[0].path, "");
	got_free(&r);
	/* A .nnn file's magic is no protobuf either. */
	got_read(&r, "NNN.\0\0\0\0", 8, 0);
	cr_assert_eq(r.st, NNN_E_ONNX);
	got_free(&r);
}

Test(onnx_import, refuses_a_truncated_model)
{
	gb_t b;
	gemm_graph(&b);
	size_t len;
	unsigned char *buf = gb_pack(&b, &len);
	gb_free(&b);
	got_t r;
	got_read(&r, buf, len / 2, 0);
	cr_assert_eq(r.st, NNN_E_ONNX, "%s", first_msg(&r));
	cr_assert_eq(r.d.n, 1);
	cr_assert_str_eq(r.d.v[0].path, "");
	got_free(&r);
	free(buf);
}

Test(onnx_import, refuses_over_max_bytes)
{
	gb_t b;
	gemm_graph(&b);
	size_t len;
	unsigned char *buf = gb_pack(&b, &len);
	gb_free(&b);
	got_t r;
	got_read(&r, buf, len, len - 1);
	cr_assert_eq(r.st, NNN_E_ONNX);
	cr_assert(strstr(first_msg(&r), "max_bytes"), "%s", first_msg(&r));
	got_free(&r);
	got_read(&r, buf, len, len); /* exactly the limit: read */
	cr_assert_eq(r.st, NNN_OK, "%s", first_msg(&r));
	got_free(&r);
	free(buf);
}

/* Messages nested deeper than any model: refused before protobuf-c, which
 * recurses once per level, sees them. */
Test(onnx_import, refuses_deep_nesting)
{
	/* graph (7) { node (1) { attribute (5) { g (6) { node ... } } } } */
	enum { LEVELS = 200 };
	static unsigned char buf[LEVELS * 3 * 4 + 16], tmp[sizeof buf];
	size_t n = 0;
	static const unsigned char tags[] = { 0x32 /* AttributeProto.g */, 0x2a /* NodeProto.attribute */,
		                              0x0a /* GraphProto.node */ };
	for (int l = 0; l < LEVELS; l++) {
		for (int t = 0; t < 3; t++) {
			unsigned char hdr[4];
			size_t h = 0;
			hdr[h++] = tags[t];
			size_t v = n;
			do {
				hdr[h++] = (unsigned char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
				v >>= 7;
			} while (v);
			memcpy(tmp, hdr, h);
			memcpy(tmp + h, buf, n);
			n += h;
			memcpy(buf, tmp, n);
		}
	}
	/* Under ModelProto.graph (field 7). */
	unsigned char hdr[4] = { 0x3a };
	size_t h = 1, v = n;
	do {
		hdr[h++] = (unsigned char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	memmove(buf + h, buf, n);
	memcpy(buf, hdr, h);
	n += h;
	got_t r;
	got_read(&r, buf, n, 0);
	cr_assert_eq(r.st, NNN_E_ONNX);
	cr_assert(strstr(first_msg(&r), "nest"), "%s", first_msg(&r));
	got_free(&r);
}

/* Many empty nodes: a few bytes each in the file, a struct each when
 * unpacked: over the memory budget, refused without using it all. */
Test(onnx_import, refuses_over_the_parse_budget)
{
	enum { NODES = 200000 };
	size_t inner = 2 * NODES, n = 0;
	unsigned char *buf = malloc(inner + 16);
	cr_assert(buf);
	buf[n++] = 0x3a; /* ModelProto.graph */
	for (size_t v = inner; ; v >>= 7) {
		buf[n++] = (unsigned char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		if (v <= 0x7f)
			break;
	}
	for (int k = 0; k < NODES; k++) {
		buf[n++] = 0x0a; /* GraphProto.node, empty */
		buf[n++] = 0x00;
	}
	got_t r;
	got_read(&r, buf, n, 0);
	cr_assert_eq(r.st, NNN_E_ONNX);
	cr_assert(strstr(first_msg(&r), "memory"), "%s", first_msg(&r));
	got_free(&r);
	free(buf);
}

/* ---- the CLI: nnnkit convert reads .onnx, and says what it did ---- */

Test(onnx_import, cli_convert_onnx_to_nnn)
{
	gb_t b;
	const int64_t in[] = { -1, 1, 2, 2 }, kd[] = { 1, 1, 1, 1 };
	const float k[] = { 2 };
	gb_init(&b, 13, in, 4);
	gb_floats(&b, "k", kd, 4, k, 0);
	gb_node(&b, "Conv", "conv", "x,k", "y");
	size_t len;
	unsigned char *buf = gb_pack(&b, &len);
	gb_free(&b);
	const char *onnx = t_tmppath("onnx", "m.onnx"), *out = t_tmppath("onnx", "m.nnn");
	FILE *f = fopen(onnx, "wb");
	cr_assert(f);
	cr_assert_eq(fwrite(buf, 1, len, f), len);
	fclose(f);
	free(buf);
	run_t *r = malloc(sizeof *r);
	cr_assert(r);
	nnnkitf(r, "convert '%s' '%s'", onnx, out);
	cr_assert_eq(r->code, 0, "%s", r->err);
	cr_assert(strstr(r->err, "m.onnx: channels-first graph (NCHW)"), "%s", r->err);
	nnnkitf(r, "info '%s'", out);
	cr_assert_eq(r->code, 0, "%s", r->err);
	cr_assert(strstr(r->out, "Conv"), "%s", r->out);
	/* run reads .onnx too: x NHWC [1, 2, 2, 1] = 1, 2, 3, 4 times the kernel 2. */
	const char *x = t_tmppath("onnx", "x.npy");
	nnn_shape_t xs = { .rank = 4, .dims = { 1, 2, 2, 1 } };
	const float xv[] = { 1, 2, 3, 4 };
	nnn_diags_t d;
	nnn_diags_init(&d);
	cr_assert_eq(nnn_npy_write_file(x, &xs, xv, &d), NNN_OK);
	nnn_diags_free(&d);
	nnnkitf(r, "run '%s' --input '%s'", onnx, x);
	cr_assert_eq(r->code, 0, "%s", r->err);
	cr_assert(strstr(r->out, "2 4 6 8") || strstr(r->out, "2\n4\n6\n8"), "%s", r->out);
	cr_assert(strstr(r->err, "channels-first graph"), "%s", r->err);
	/* and info and validate, on the model the import gives. */
	nnnkitf(r, "validate --input-shape 1,2,2,1 '%s'", onnx);
	cr_assert_eq(r->code, 0, "%s", r->err);
	cr_assert(strstr(r->out, "valid"), "%s", r->out);
	nnnkitf(r, "info '%s'", onnx);
	cr_assert_eq(r->code, 0, "%s", r->err);
	cr_assert(strstr(r->out, "filters=1"), "%s", r->out);
	free(r);
}
