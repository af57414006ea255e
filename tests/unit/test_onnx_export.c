/* test_onnx_export.c: the ONNX graph export writes, read back with
 * protobuf-c: the header (IR version, opset, producer), the nodes each layer
 * type's hook adds (Conv between Transposes, Gemm or MatMul + Add by the
 * input's rank, Flatten, the activations), the kernels permuted from
 * [f, k.., c] to [f, c, k..] value by value, the pads in ONNX's order, the
 * metadata that carries the fields ONNX lacks, and every refusal listed.
 * That the graphs compute what nnnkit run computes is test_onnx_ort.c's. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <onnx.pb-c.h>

#include <nnn/context.h>
#include <nnn/json.h>
#include <nnn/onnx.h>

#include "builder.h"
#include "host.h"       /* nnn_host_table */
#include "import.h"     /* imp_read_tensor, cst_t */
#include "onnx_graph.h" /* nnn_og_new, nnn_onnx_init_proto */
#include "ctx.h"
#include "clirun.h"
#include "tmpdir.h"

static nnn_model_t *decode(const bb_t *b, const nnn_ctx_t *ctx)
{
	nnn_model_t *m = NULL;
	nnn_diags_t d;
	nnn_diags_init(&d);
	nnn_decode_opts_t o = { .ctx = ctx };
	cr_assert_eq(nnn_model_decode(b->b, b->n, &o, &m, &d), NNN_OK, "%s", d.n ? d.v[0].msg : "");
	nnn_diags_free(&d);
	return m;
}

/* Exports m (input shape `in`, may be NULL) and unpacks what was written. */
static Onnx__ModelProto *export(const nnn_model_t *m, const nnn_ctx_t *ctx, const nnn_shape_t *in)
{
	unsigned char *buf;
	size_t len;
	nnn_diags_t d;
	nnn_diags_init(&d);
	nnn_onnx_write_opts_t o = { .ctx = ctx, .input_shape = in };
	cr_assert_eq(nnn_onnx_encode(m, &o, &buf, &len, &d), NNN_OK, "%s", d.n ? d.v[0].msg : "");
	nnn_diags_free(&d);
	Onnx__ModelProto *p = onnx__model_proto__unpack(NULL, len, buf);
	free(buf);
	cr_assert_not_null(p, "protobuf-c cannot read what export wrote");
	return p;
}

static const Onnx__TensorProto *init(const Onnx__GraphProto *g, const char *name)
{
	for (size_t i = 0; i < g->n_initializer; i++)
		if (!strcmp(g->initializer[i]->name, name))
			return g->initializer[i];
	cr_assert_fail("no initializer %s", name);
	return NULL;
}

static const Onnx__AttributeProto *attr(const Onnx__NodeProto *n, const char *name)
{
	for (size_t i = 0; i < n->n_attribute; i++)
		if (!strcmp(n->attribute[i]->name, name))
			return n->attribute[i];
	cr_assert_fail("node %s has no attribute %s", n->name, name);
	return NULL;
}

static float raw_f32(const Onnx__TensorProto *t, size_t i)
{
	float f;
	cr_assert(t->has_raw_data && (i + 1) * 4 <= t->raw_data.len);
	memcpy(&f, t->raw_data.data + 4 * i, 4);
	return f;
}

/* The node ops in order, joined by spaces. */
static const char *ops(const Onnx__GraphProto *g)
{
	static char s[1024];
	s[0] = '\0';
	for (size_t i = 0; i < g->n_node; i++)
		snprintf(s + strlen(s), sizeof s - strlen(s), "%s%s", i ? " " : "", g->node[i]->op_type);
	return s;
}

/* Conv 2-D (kernels [2, 3, 2, 3]: f 2, window 3x2, channels 3, Same), ReLU;
 * Dense without flatten on its rank-4 output (MatMul + Add), Leaky ReLU;
 * Dense with flatten (Flatten + Gemm), Softmax. */
Test(onnx_export, conv_dense_graph)
{
	nnn_ctx_t *ctx = t_ctx_with("plugins/builtin.so");
	bb_t b = { 0 };
	int32_t k[2] = { 3, 2 }, pads[4] = { 1, 1, 0, 1 };
	bb_header(&b, "graph", 0, 3);
	bb_conv(&b, NNN_ACTIVATION_ID_RELU, 2, 2, k, 3, NNN_PADDING_TYPE_SAME, 4, pads);
	bb_dense(&b, NNN_ACTIVATION_ID_LEAKY_RELU, 2, 4, 0);
	bb_dense(&b, NNN_ACTIVATION_ID_SOFTMAX, 5 * 4 * 4, 3, 1);
	nnn_model_t *m = decode(&b, ctx);
	nnn_shape_t in = { .rank = 4, .dims = { 1, 5, 4, 3 } };
	Onnx__ModelProto *p = export(m, ctx, &in);
	const Onnx__GraphProto *g = p->graph;

	cr_assert(p->has_ir_version && p->ir_version == NNN_ONNX_IR_VERSION);
	cr_assert_eq(p->n_opset_import, 1);
	cr_assert_str_eq(p->opset_import[0]->domain ? p->opset_import[0]->domain : "", "");
	cr_assert_eq(p->opset_import[0]->version, NNN_ONNX_OPSET);
	cr_assert_str_eq(p->producer_name, "nnnkit");
	cr_assert_str_eq(ops(g), "Transpose Conv Transpose Relu MatMul Add LeakyRelu Flatten Gemm Softmax");

	/* The layout changes: NHWC -> NCHW -> NHWC. */
	const Onnx__AttributeProto *perm = attr(g->node[0], "perm");
	int64_t to_cf[4] = { 0, 3, 1, 2 }, to_cl[4] = { 0, 2, 3, 1 };
	cr_assert_eq(perm->n_ints, 4);
	cr_assert_arr_eq(perm->ints, to_cf, sizeof to_cf);
	perm = attr(g->node[2], "perm");
	cr_assert_arr_eq(perm->ints, to_cl, sizeof to_cl);

	/* Pads: nnn's [before1, after1, before2, after2] as ONNX's [b1, b2, e1, e2]. */
	const Onnx__AttributeProto *pa = attr(g->node[1], "pads");
	int64_t want_pads[4] = { 1, 0, 1, 1 }, want_k[2] = { 3, 2 };
	cr_assert_eq(pa->n_ints, 4);
	cr_assert_arr_eq(pa->ints, want_pads, sizeof want_pads);
	cr_assert_arr_eq(attr(g->node[1], "kernel_shape")->ints, want_k, sizeof want_k);

	/* Kernels [f, c, k1, k2] from nnn's [f, k1, k2, c], every value. */
	const nnn_tensor_t *K = &m->layers[0].body.conv.kernels;
	const Onnx__TensorProto *kt = init(g, g->node[1]->input[1]);
	int64_t kd[4] = { 2, 3, 3, 2 };
	cr_assert_eq(kt->n_dims, 4);
	cr_assert_arr_eq(kt->dims, kd, sizeof kd);
	cr_assert_eq(kt->data_type, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT);
	for (int f = 0; f < 2; f++)
		for (int i = 0; i < 3; i++)
			for (int j = 0; j < 2; j++)
				for (int c = 0; c < 3; c++)
					cr_assert_eq(raw_f32(kt, ((size_t)(f * 3 + c) * 3 + i) * 2 + j),
					             nnn_f32s_get(K->data, ((f * 3 + i) * 2 + j) * 3 + c), "kernel %d,%d,%d,%d", f, i,
					             j, c);

	/* Dense weights stay [inputs, neurons]; bias [neurons]; tau is alpha. */
	const nnn_tensor_t *W = &m->layers[1].body.dense.weights;
	const Onnx__TensorProto *wt = init(g, g->node[4]->input[1]);
	cr_assert_eq(wt->n_dims, 2);
	cr_assert_eq(wt->dims[0], 2);
	cr_assert_eq(wt->dims[1], 4);
	for (int i = 0; i < 8; i++)
		cr_assert_eq(raw_f32(wt, (size_t)i), nnn_f32s_get(W->data, i));
	cr_assert_eq(init(g, g->node[5]->input[1])->dims[0], 4);
	cr_assert_float_eq(attr(g->node[6], "alpha")->f, m->layers[1].activation.params.leaky_relu.tau, 0);
	cr_assert_eq(attr(g->node[7], "axis")->i, 1);
	cr_assert_eq(attr(g->node[9], "axis")->i, -1);

	/* The graph's input is the model's, the batch symbolic; its output [N, 3]. */
	cr_assert_str_eq(g->input[0]->name, "input");
	const Onnx__TensorShapeProto *s = g->input[0]->type->tensor_type->shape;
	cr_assert_eq(s->n_dim, 4);
	cr_assert_str_eq(s->dim[0]->dim_param, "N");
	cr_assert_eq(s->dim[1]->dim_value, 5);
	cr_assert_eq(s->dim[3]->dim_value, 3);
	cr_assert_str_eq(g->output[0]->name, g->node[9]->output[0]);
	s = g->output[0]->type->tensor_type->shape;
	cr_assert_eq(s->n_dim, 2);
	cr_assert_eq(s->dim[1]->dim_value, 3);

	onnx__model_proto__free_unpacked(p, NULL);
	nnn_model_free(m);
	bb_free(&b);
	nnn_ctx_free(ctx);
}

/* A Dense on a rank-2 input is one Gemm; Linear adds no node; a model whose
 * layers add nothing still has a node, so that its output is a node's. */
Test(onnx_export, gemm_and_linear)
{
	nnn_ctx_t *ctx = t_ctx_with("plugins/builtin.so");
	bb_t b = { 0 };
	bb_header(&b, "", 0, 1);
	bb_dense(&b, NNN_ACTIVATION_ID_LINEAR, 3, 2, 0);
	nnn_model_t *m = decode(&b, ctx);
	nnn_shape_t in = { .rank = 2, .dims = { 1, 3 } };
	Onnx__ModelProto *p = export(m, ctx, &in);
	cr_assert_str_eq(ops(p->graph), "Gemm");
	onnx__model_proto__free_unpacked(p, NULL);
	nnn_model_free(m);
	bb_free(&b);

	bb_t e = { 0 };
	bb_header(&e, "empty", 0, 0);
	m = decode(&e, ctx);
	p = export(m, ctx, NULL);
	cr_assert_str_eq(ops(p->graph), "Identity");
	cr_assert_str_eq(p->graph->node[0]->input[0], "input");
	cr_assert_str_eq(p->graph->output[0]->name, p->graph->node[0]->output[0]);
	onnx__model_proto__free_unpacked(p, NULL);
	nnn_model_free(m);
	bb_free(&e);
	nnn_ctx_free(ctx);
}

/* The fields ONNX has none for: the JSON form without the float values. */
Test(onnx_export, metadata_holds_the_fields)
{
	nnn_ctx_t *ctx = t_ctx_with("plugins/builtin.so");
	bb_t b = { 0 };
	bb_tiny(&b);
	nnn_model_t *m = decode(&b, ctx);
	Onnx__ModelProto *p = export(m, ctx, NULL);
	char *text;
	size_t len;
	nnn_json_write_opts_t o = { .omit_floats = true };
	cr_assert_eq(nnn_json_encode(m, &o, &text, &len, NULL), NNN_OK);
	cr_assert_eq(p->n_metadata_props, 1);
	cr_assert_str_eq(p->metadata_props[0]->key, NNN_ONNX_META_FIELDS);
	cr_assert_str_eq(p->metadata_props[0]->value, text);
	cr_assert(strstr(text, "\"description\": \"tiny\""), "%s", text);
	cr_assert(strstr(text, "\"data\": null"), "%s", text);
	cr_assert_null(strstr(text, "0.5"), "a float value was written: %s", text);
	free(text);
	onnx__model_proto__free_unpacked(p, NULL);
	nnn_model_free(m);
	bb_free(&b);
	nnn_ctx_free(ctx);
}

/* What cannot be exported is refused, every such layer listed with its path
 * and why: a Conv of 4 spatial dims, and a layer whose type (a plugin's,
 * here the fixture that takes over Dense) has no export hook. Nothing is
 * written. */
Test(onnx_export, refusals_are_listed)
{
	nnn_ctx_t *ctx = t_ctx_with("plugins/builtin.so");
	bb_t b = { 0 };
	int32_t k4[4] = { 1, 1, 1, 1 }, pads8[8] = { 0 };
	bb_header(&b, "", 0, 3);
	bb_conv(&b, NNN_ACTIVATION_ID_RELU, 1, 4, k4, 1, NNN_PADDING_TYPE_VALID, 8, pads8);
	bb_conv(&b, NNN_ACTIVATION_ID_RELU, 1, 4, k4, 1, NNN_PADDING_TYPE_VALID, 8, pads8);
	bb_dense(&b, NNN_ACTIVATION_ID_LINEAR, 1, 1, 1);
	nnn_model_t *m = decode(&b, ctx);
	unsigned char *buf = (unsigned char *)"untouched";
	size_t len = 7;
	nnn_diags_t d;
	nnn_diags_init(&d);
	nnn_onnx_write_opts_t o = { .ctx = ctx };
	cr_assert_eq(nnn_onnx_encode(m, &o, &buf, &len, &d), NNN_E_ONNX_EXPORT);
	cr_assert_null(buf);
	cr_assert_eq(len, 0);
	cr_assert_eq(d.n, 2, "%zu problems", d.n);
	cr_assert_str_eq(d.v[0].path, "layers[0]");
	cr_assert_str_eq(d.v[1].path, "layers[1]");
	cr_assert_eq(d.v[0].code, NNN_E_ONNX_EXPORT);
	cr_assert_eq(d.v[0].offset, m->layers[0].at[NNN_AT_LAYER_ID]);
	cr_assert(strstr(d.v[0].msg, "4 spatial dims"), "%s", d.v[0].msg);
	nnn_diags_free(&d);
	nnn_model_free(m);
	nnn_ctx_free(ctx);

	/* The fixture provides Dense (and ReLU) without a hook. */
	ctx = t_ctx_with("fixtures/good.so");
	m = decode(&b, ctx);
	nnn_diags_init(&d);
	o.ctx = ctx;
	cr_assert_eq(nnn_onnx_encode(m, &o, &buf, &len, &d), NNN_E_PLUGIN);
	cr_assert_eq(d.n, 3, "%zu problems", d.n);
	cr_assert_eq(d.v[0].code, NNN_E_PLUGIN); /* no plugin provides Conv */
	cr_assert_eq(d.v[2].code, NNN_E_ONNX_EXPORT);
	cr_assert_str_eq(d.v[2].path, "layers[2]");
	cr_assert(strstr(d.v[2].msg, "fixture") && strstr(d.v[2].msg, "good.so") &&
	                  strstr(d.v[2].msg, "no ONNX export hook"),
	          "%s", d.v[2].msg);
	nnn_diags_free(&d);
	nnn_model_free(m);
	bb_free(&b);
	nnn_ctx_free(ctx);
}

/* An input shape the model does not fit is refused, as validate does. */
Test(onnx_export, input_shape_must_fit)
{
	nnn_ctx_t *ctx = t_ctx_with("plugins/builtin.so");
	bb_t b = { 0 };
	bb_tiny(&b);
	nnn_model_t *m = decode(&b, ctx);
	nnn_shape_t in = { .rank = 2, .dims = { 1, 4 } };
	unsigned char *buf;
	size_t len;
	nnn_diags_t d;
	nnn_diags_init(&d);
	nnn_onnx_write_opts_t o = { .ctx = ctx, .input_shape = &in };
	cr_assert_neq(nnn_onnx_encode(m, &o, &buf, &len, &d), NNN_OK);
	cr_assert_gt(d.n, 0);
	cr_assert_str_eq(d.v[0].path, "layers[0].weights.dims[0]");
	nnn_diags_free(&d);
	cr_assert_eq(nnn_onnx_encode(m, &(nnn_onnx_write_opts_t){ 0 }, &buf, &len, &d), NNN_E_USAGE);
	nnn_diags_free(&d);
	nnn_model_free(m);
	bb_free(&b);
	nnn_ctx_free(ctx);
}

/* The CLI: convert writes .onnx by the name (and --to onnx to stdout with
 * --force), edit writes .onnx as its name asks, and both come back to the
 * same .nnn bytes; a refused export writes nothing and exits 1. */
Test(onnx_export, cli_convert_and_edit, .fini = t_tmpdir_remove)
{
	bb_t b = { 0 };
	bb_tiny(&b);
	const char *m = t_tmppath("onnxexp", "m.nnn"), *o = t_tmppath("onnxexp", "m.onnx"),
	           *back = t_tmppath("onnxexp", "back.nnn"), *e = t_tmppath("onnxexp", "e.onnx"),
	           *e2 = t_tmppath("onnxexp", "e.nnn"), *ej = t_tmppath("onnxexp", "e.json");
	FILE *f = fopen(m, "wb");
	cr_assert(f);
	cr_assert_eq(fwrite(b.b, 1, b.n, f), b.n);
	fclose(f);
	run_t *r = malloc(sizeof *r);
	cr_assert(r);
	nnnkitf(r, "convert '%s' '%s'", m, o);
	cr_assert_eq(r->code, 0, "%s", r->err);
	nnnkitf(r, "convert '%s' '%s'", o, back);
	cr_assert_eq(r->code, 0, "%s", r->err);
	cr_assert_eq(t_sh(NULL, 0, "cmp '%s' '%s'", m, back), 0, ".nnn -> .onnx -> .nnn changed the bytes");
	cr_assert_eq(t_sh(NULL, 0, "'%s' convert --to onnx --force '%s' - | cmp - '%s'", nnnkit_bin(), m, o), 0,
	             "--to onnx on stdout differs from the file");

	nnnkitf(r, "edit '%s' -o '%s' --description edited", m, e);
	cr_assert_eq(r->code, 0, "%s", r->err);
	nnnkitf(r, "convert '%s' '%s'", e, e2);
	cr_assert_eq(r->code, 0, "%s", r->err);
	nnnkitf(r, "convert '%s' '%s'", e2, ej);
	cr_assert_eq(r->code, 0, "%s", r->err);
	char text[8192];
	slurp_keep(ej, text, sizeof text);
	cr_assert(strstr(text, "\"description\": \"edited\""), "%s", text);
	cr_assert_eq(t_sh(NULL, 0, "test \"$(wc -c < '%s')\" -eq %zu", e2, b.n + 2), 0, "edited size");

	/* A Conv of 4 spatial dims: refused, nothing written. */
	bb_t c = { 0 };
	int32_t k4[4] = { 1, 1, 1, 1 }, pads8[8] = { 0 };
	bb_header(&c, "", 4, 1);
	bb_conv(&c, NNN_ACTIVATION_ID_LINEAR, 1, 4, k4, 1, NNN_PADDING_TYPE_VALID, 8, pads8);
	const char *c4 = t_tmppath("onnxexp", "c4.nnn"), *c4o = t_tmppath("onnxexp", "c4.onnx");
	f = fopen(c4, "wb");
	cr_assert(f);
	cr_assert_eq(fwrite(c.b, 1, c.n, f), c.n);
	fclose(f);
	nnnkitf(r, "convert '%s' '%s'", c4, c4o);
	cr_assert_eq(r->code, 1, "%s", r->err);
	cr_assert(strstr(r->err, "layers[0]") && strstr(r->err, "4 spatial dims"), "%s", r->err);
	cr_assert_neq(access(c4o, F_OK), 0, "a refused export left %s", c4o);
	free(r);
	bb_free(&b);
	bb_free(&c);
}

/* ---- element types: typed initializers (ABI 1.8) ---- */

/* Each element type the schema language declares, with the ONNX type
 * onnx.proto gives it (independent truth: protoc's enum). */
static const struct {
	nnn_ekind_t kind;
	int width;
	int32_t onnx;
} etypes[] = {
	{ NNN_EK_INT, 1, ONNX__TENSOR_PROTO__DATA_TYPE__INT8 },
	{ NNN_EK_INT, 2, ONNX__TENSOR_PROTO__DATA_TYPE__INT16 },
	{ NNN_EK_INT, 4, ONNX__TENSOR_PROTO__DATA_TYPE__INT32 },
	{ NNN_EK_INT, 8, ONNX__TENSOR_PROTO__DATA_TYPE__INT64 },
	{ NNN_EK_UINT, 1, ONNX__TENSOR_PROTO__DATA_TYPE__UINT8 },
	{ NNN_EK_UINT, 2, ONNX__TENSOR_PROTO__DATA_TYPE__UINT16 },
	{ NNN_EK_UINT, 4, ONNX__TENSOR_PROTO__DATA_TYPE__UINT32 },
	{ NNN_EK_UINT, 8, ONNX__TENSOR_PROTO__DATA_TYPE__UINT64 },
	{ NNN_EK_FLOAT, 2, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16 },
	{ NNN_EK_FLOAT, 4, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT },
	{ NNN_EK_FLOAT, 8, ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE },
	{ NNN_EK_BFLOAT, 2, ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16 },
};

/* 24 bytes that are, at every width, -0 and NaNs with payloads among
 * others (0x8000, 0x7e01 and 0xfc01 as float16; 0x80000000 and
 * 0x7fc00001 as float32; 0xfff0000000000001 as float64). */
static const unsigned char pattern[24] = { 0x00, 0x80, 0x01, 0x7e, 0x01, 0xfc, 0xff, 0x7f, 0x00, 0x00,
	                                   0x00, 0x80, 0x01, 0x00, 0xc0, 0x7f, 0x01, 0x00, 0x00, 0x00,
	                                   0x00, 0x00, 0xf0, 0xff };

/* An initializer of each element type made by the host's onnx_elems (what
 * an export hook calls), written as export writes it and packed, then read
 * back by import: its ONNX type, dims and every byte as they were. */
Test(onnx_export, typed_initializers_round_trip)
{
	const nnn_host_t *h = nnn_host_table();
	for (size_t e = 0; e < sizeof etypes / sizeof etypes[0]; e++) {
		int w = etypes[e].width;
		int64_t dims[2] = { 3, 8 / w };
		cr_assert_eq(nnn_onnx_dtype(etypes[e].kind, w), etypes[e].onnx);
		nnn_onnx_graph_t *g = nnn_og_new();
		cr_assert_not_null(g);
		const char *name = h->onnx_elems(g, "t", dims, 2, etypes[e].kind, w, pattern);
		cr_assert_not_null(name, "width %d: %s", w, g->msg);
		Onnx__TensorProto tp;
		nnn_onnx_init_proto(&g->inits[0], &tp);
		size_t len = onnx__tensor_proto__get_packed_size(&tp);
		unsigned char *buf = malloc(len);
		cr_assert_not_null(buf);
		onnx__tensor_proto__pack(&tp, buf);
		nnn_og_free(g);
		Onnx__TensorProto *back = onnx__tensor_proto__unpack(NULL, len, buf);
		free(buf);
		cr_assert_not_null(back);
		cst_t c = { 0 };
		char why[256] = "";
		nnn_ekind_t kind;
		cr_assert_eq(imp_read_tensor(back, &c, why, sizeof why), 1, "%s", why);
		cr_assert_eq(c.dtype, etypes[e].onnx, "%s: dtype %d", imp_dtype_name(etypes[e].onnx), c.dtype);
		cr_assert_eq(imp_dtype_width(c.dtype, &kind), w);
		cr_assert_eq(kind, etypes[e].kind);
		cr_assert(c.rank == 2 && c.dims[0] == 3 && c.dims[1] == 8 / w && c.n == 24 / w);
		cr_assert_not_null(c.raw);
		cr_assert_eq(memcmp(c.raw, pattern, sizeof pattern), 0, "%s: the bytes changed", imp_dtype_name(c.dtype));
		cr_assert(imp_const_of_type(&c, etypes[e].kind, w, why, sizeof why), "%s", why);
		onnx__tensor_proto__free_unpacked(back, NULL);
	}
}

/* A typed constant of another element type than a field's is refused,
 * saying both types; so is one that ONNX has no type for. */
Test(onnx_export, typed_initializer_mismatch_refused)
{
	const nnn_host_t *h = nnn_host_table();
	int64_t dims[1] = { 12 };
	nnn_onnx_graph_t *g = nnn_og_new();
	cr_assert_not_null(h->onnx_elems(g, "t", dims, 1, NNN_EK_BFLOAT, 2, pattern));
	Onnx__TensorProto tp;
	nnn_onnx_init_proto(&g->inits[0], &tp);
	cst_t c = { 0 };
	char why[256] = "";
	cr_assert_eq(imp_read_tensor(&tp, &c, why, sizeof why), 1, "%s", why);
	cr_assert_not(imp_const_of_type(&c, NNN_EK_FLOAT, 2, why, sizeof why));
	cr_assert_str_eq(why, "is BFLOAT16, expected FLOAT16");
	cr_assert_not(imp_const_of_type(&c, NNN_EK_INT, 2, why, sizeof why));
	cr_assert_str_eq(why, "is BFLOAT16, expected INT16");
	/* No ONNX type: a bfloat of 4 bytes. */
	cr_assert_null(h->onnx_elems(g, "u", dims, 1, NNN_EK_BFLOAT, 4, pattern));
	cr_assert(strstr(g->msg, "ONNX has no such type"), "%s", g->msg);
	nnn_og_free(g);
}
