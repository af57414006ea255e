/* export.c: a model as an ONNX ModelProto (nnn/onnx.h).
 *
 * Every layer and activation is added by its type's export hook (the
 * builtin plugin's for the format's own types), into the graph of
 * onnx_graph.h; this file declares the graph's input and output, adds the
 * metadata, and writes it all as protobuf with the code protoc-c generates
 * from onnx.proto.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <onnx.pb-c.h>

#include <nnn/file.h>
#include <nnn/json.h>
#include <nnn/onnx.h>

#include "host.h"
#include "onnx_graph.h"

#ifndef NNN_VERSION
#define NNN_VERSION "unknown"
#endif

/* Every protobuf struct export allocates, freed together at the end. */
typedef struct ex {
	void **p;
	size_t n, cap;
	bool nomem;
} ex_t;

static void *A(ex_t *e, size_t size)
{
	if (e->nomem)
		return NULL;
	if (e->n == e->cap) {
		size_t cap = e->cap ? 2 * e->cap : 64;
		void **p = realloc(e->p, cap * sizeof *p);
		if (!p) {
			e->nomem = true;
			return NULL;
		}
		e->p = p;
		e->cap = cap;
	}
	void *q = calloc(1, size ? size : 1);
	if (!q)
		e->nomem = true;
	else
		e->p[e->n++] = q;
	return q;
}

static void ex_free(ex_t *e)
{
	for (size_t i = 0; i < e->n; i++)
		free(e->p[i]);
	free(e->p);
}

void nnn_onnx_init_proto(const nnn_og_init_t *t, Onnx__TensorProto *p)
{
	onnx__tensor_proto__init(p);
	p->name = t->name;
	p->n_dims = (size_t)t->rank;
	p->dims = (int64_t *)t->dims;
	p->has_data_type = 1;
	p->data_type = t->dtype;
	/* raw_data is little-endian, as the host and a tensor's data are
	 * (nnn/types.h): every bit of every element type, NaN payloads and -0
	 * included, goes through unchanged. */
	p->has_raw_data = 1;
	p->raw_data.len = t->n * (size_t)t->width;
	p->raw_data.data = t->data;
}

static Onnx__TensorProto *tensor_proto(ex_t *e, const nnn_og_init_t *t)
{
	Onnx__TensorProto *p = A(e, sizeof *p);
	if (p)
		nnn_onnx_init_proto(t, p);
	return p;
}

static Onnx__NodeProto *node_proto(ex_t *e, const nnn_og_node_t *n)
{
	Onnx__NodeProto *p = A(e, sizeof *p);
	Onnx__AttributeProto **attrs = A(e, (size_t)n->nattr * sizeof *attrs);
	char **out = A(e, sizeof *out);
	if (!p || !attrs || !out)
		return NULL;
	onnx__node_proto__init(p);
	p->op_type = n->op;
	p->name = n->out; /* unique already: the node is named after its output */
	p->n_input = (size_t)n->nin;
	p->input = n->in;
	out[0] = n->out;
	p->n_output = 1;
	p->output = out;
	for (int k = 0; k < n->nattr; k++) {
		const nnn_og_attr_t *s = &n->attrs[k];
		Onnx__AttributeProto *a = attrs[k] = A(e, sizeof *a);
		if (!a)
			return NULL;
		onnx__attribute_proto__init(a);
		a->name = s->name;
		a->has_type = 1;
		switch (s->kind) {
		case NNN_ONNX_ATTR_INT:
			a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
			a->has_i = 1;
			a->i = s->i;
			break;
		case NNN_ONNX_ATTR_FLOAT:
			a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT;
			a->has_f = 1;
			a->f = s->f;
			break;
		case NNN_ONNX_ATTR_INTS:
			a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
			a->n_ints = (size_t)s->n;
			a->ints = s->ints;
			break;
		case NNN_ONNX_ATTR_STRING:
			a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING;
			a->has_s = 1;
			a->s.data = (uint8_t *)s->s;
			a->s.len = strlen(s->s);
			break;
		}
	}
	p->n_attribute = (size_t)n->nattr;
	p->attribute = attrs;
	return p;
}

/* A float tensor value of shape s: known dims as values, the batch as "N",
 * other unknown dims as d1, d2, ... (input) or left open (output); no shape
 * when the rank is unknown. */
static Onnx__ValueInfoProto *value_info(ex_t *e, char *name, const nnn_pshape_t *s, bool input)
{
	static const char *const params[] = { "N", "d1", "d2", "d3", "d4", "d5", "d6", "d7" };
	Onnx__ValueInfoProto *v = A(e, sizeof *v);
	Onnx__TypeProto *t = A(e, sizeof *t);
	Onnx__TypeProto__Tensor *tt = A(e, sizeof *tt);
	if (!v || !t || !tt)
		return NULL;
	onnx__value_info_proto__init(v);
	onnx__type_proto__init(t);
	onnx__type_proto__tensor__init(tt);
	v->name = name;
	v->type = t;
	t->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
	t->tensor_type = tt;
	tt->has_elem_type = 1;
	tt->elem_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
	if (s->rank < 1)
		return v;
	Onnx__TensorShapeProto *sp = A(e, sizeof *sp);
	Onnx__TensorShapeProto__Dimension **dims = A(e, (size_t)s->rank * sizeof *dims);
	if (!sp || !dims)
		return NULL;
	onnx__tensor_shape_proto__init(sp);
	sp->n_dim = (size_t)s->rank;
	sp->dim = dims;
	tt->shape = sp;
	for (int32_t i = 0; i < s->rank; i++) {
		Onnx__TensorShapeProto__Dimension *d = dims[i] = A(e, sizeof *d);
		if (!d)
			return NULL;
		onnx__tensor_shape_proto__dimension__init(d);
		if (s->dims[i] >= 0 && i > 0) {
			d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
			d->dim_value = s->dims[i];
		} else if (i == 0 || (input && i < (int32_t)(sizeof params / sizeof params[0]))) {
			d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
			d->dim_param = (char *)params[i];
		}
	}
	return v;
}

/* A shape of unknown rank given rank r: every dim unknown but the last. */
static void with_rank(nnn_pshape_t *s, int32_t r)
{
	s->rank = r;
	for (int32_t i = 0; i < r; i++)
		s->dims[i] = NNN_DIM_UNKNOWN;
	s->dims[r - 1] = s->last;
}

/* Calls every layer's and activation's hook; every layer that cannot be
 * exported goes to diags. On success *out names the graph's output. */
/* Adds layer i's activation after the layer's output *y (of shape out):
 * then *x is that output and *y the activation's. A problem goes to
 * diags (*x unchanged when no activation type is there to try). */
static nnn_status_t export_act(const nnn_ctx_t *ctx, nnn_onnx_graph_t *g, const nnn_layer_t *L, int32_t i,
                               const nnn_pshape_t *out, const char **x, const char **y, nnn_diags_t *diags)
{
	const nnn_host_t *h = nnn_host_table();
	const char *src = NULL;
	char path[NNN_PATH_MAX];
	const nnn_activation_type_t *at = L->activation.params_ext.type
	                                          ? L->activation.params_ext.type
	                                          : nnn_ctx_activation(ctx, L->activation.id, &src);
	snprintf(path, sizeof path, "layers[%d].activation", (int)i);
	if (!at || !at->onnx_export) {
		const char *name = at ? at->name : nnn_activation_id_name(L->activation.id);
		nnn_status_t code = at ? NNN_E_ONNX_EXPORT : NNN_E_PLUGIN;
		nnn_diags_add(diags, code, L->activation.at[NNN_AT_ACTIVATION_ID], path,
		              at ? "activation %s (ID %d%s%s) has no ONNX export hook; expected one whose plugin exports "
		                   "it (onnx_export, plugin ABI 1.5)"
		                 : "activation %s (ID %d%s%s): no loaded plugin provides it; load the plugin that does "
		                   "(nnnkit plugins -v lists them)",
		              name ? name : "unknown", (int)L->activation.id, at && src ? ", from " : "",
		              at && src ? src : "");
		return code;
	}
	const void *params = L->activation.params_ext.type ? (const void *)L->activation.params_ext.body
	                                                   : (const void *)&L->activation.params;
	*x = *y;
	*y = NULL;
	nnn_status_t st = at->onnx_export(h, g, &L->activation, params, out, *x, y);
	if (st == NNN_OK && (g->st != NNN_OK || !*y))
		st = g->st != NNN_OK ? g->st : NNN_E_ONNX_EXPORT;
	if (st != NNN_OK)
		nnn_diags_add(diags, st, L->activation.at[NNN_AT_ACTIVATION_ID], path, "%s: %s", at->name,
		              g->msg[0] ? g->msg : "its export hook failed without saying why");
	return st;
}

static nnn_status_t build(const nnn_model_t *m, const nnn_ctx_t *ctx, const nnn_layer_shapes_t *sh,
                          nnn_onnx_graph_t *g, const char **out, nnn_diags_t *diags)
{
	const nnn_host_t *h = nnn_host_table();
	const char *x = "input";
	nnn_status_t first = NNN_OK;
	for (int32_t i = 0; i < m->layer_count; i++) {
		const nnn_layer_t *L = &m->layers[i];
		const char *src = NULL, *y = NULL;
		const nnn_layer_type_t *lt = L->body_ext.type ? L->body_ext.type : nnn_ctx_layer(ctx, L->id, &src);
		char path[NNN_PATH_MAX];
		snprintf(path, sizeof path, "layers[%d]", (int)i);
		snprintf(g->prefix, sizeof g->prefix, "layers.%d", (int)i);
		nnn_og_clear(g);
		if (!lt) {
			const char *name = nnn_layer_id_name(L->id);
			first = first ? first : NNN_E_PLUGIN;
			nnn_diags_add(diags, NNN_E_PLUGIN, L->at[NNN_AT_LAYER_ID], path,
			              "layer type %s (ID %d): no loaded plugin provides it, and its export hook with it; load "
			              "the plugin that does (nnnkit plugins -v lists them)", name ? name : "unknown", (int)L->id);
			continue;
		}
		if (!lt->onnx_export) {
			first = first ? first : NNN_E_ONNX_EXPORT;
			nnn_diags_add(diags, NNN_E_ONNX_EXPORT, L->at[NNN_AT_LAYER_ID], path,
			              "layer type %s (ID %d%s%s) has no ONNX export hook; expected a type whose plugin "
			              "exports it (onnx_export, plugin ABI 1.5)", lt->name, (int)L->id, src ? ", from " : "",
			              src ? src : "");
			continue;
		}
		const void *body = L->body_ext.type ? (const void *)L->body_ext.body : (const void *)&L->body;
		nnn_status_t st = lt->onnx_export(h, g, L, body, &sh[i].in, x, &y);
		if (st == NNN_OK && (g->st != NNN_OK || !y))
			st = g->st != NNN_OK ? g->st : NNN_E_ONNX_EXPORT;
		if (st != NNN_OK) {
			first = first ? first : st;
			nnn_diags_add(diags, st, L->at[NNN_AT_LAYER_ID], path, "%s layer: %s", lt->name,
			              g->msg[0] ? g->msg : "its export hook failed without saying why");
			continue;
		}
		if ((st = export_act(ctx, g, L, i, &sh[i].out, &x, &y, diags)) != NNN_OK) {
			first = first ? first : st;
			continue;
		}
		x = y;
	}
	g->prefix[0] = '\0';
	if (first == NNN_OK && !strcmp(x, "input")) {
		/* No layer changed the input (none, or all Linear): an output needs a node. */
		x = nnn_og_node(g, "Identity", "output", &x, 1, NULL, 0);
		if (!x)
			return nnn_diags_add(diags, g->st, NNN_NO_OFFSET, "", "%s", g->msg);
	}
	*out = x;
	return first;
}

/* The fields without values (nnn.fields), as the JSON form writes them. */
static nnn_status_t fields_text(const nnn_model_t *m, char **text, nnn_diags_t *diags)
{
	size_t len;
	nnn_json_write_opts_t o = { .omit_floats = true };
	return nnn_json_encode(m, &o, text, &len, diags);
}

/* The graph input's shape when no input shape is given. ONNX graph inputs
 * have a rank. Where the first layers leave it open (Dense layers without
 * flatten keep any rank), it is the first rank a later layer fixes, else
 * 2: [batch, features], as a Dense layer's input usually is. Those layers'
 * shapes take that rank too. */
static nnn_pshape_t open_input(const nnn_model_t *m, nnn_layer_shapes_t *sh)
{
	nnn_pshape_t in0 = m->layer_count > 0 ? sh[0].in : (nnn_pshape_t){ .rank = NNN_DIM_UNKNOWN, .last = NNN_DIM_UNKNOWN };
	if (m->layer_count > 0 && in0.rank == NNN_DIM_UNKNOWN) {
		int32_t r = 2, j;
		for (j = 0; j < m->layer_count; j++) {
			if (sh[j].in.rank != NNN_DIM_UNKNOWN) {
				r = sh[j].in.rank;
				break;
			}
			if (sh[j].out.rank != NNN_DIM_UNKNOWN)
				break;
		}
		for (int32_t k = 0; k < m->layer_count && sh[k].in.rank == NNN_DIM_UNKNOWN; k++) {
			with_rank(&sh[k].in, r);
			if (sh[k].out.rank == NNN_DIM_UNKNOWN)
				with_rank(&sh[k].out, r);
		}
		in0 = sh[0].in;
	}
	if (in0.rank == NNN_DIM_UNKNOWN) /* no layers, or none that fixes a dim */
		in0 = (nnn_pshape_t){ .rank = 2, .dims = { NNN_DIM_UNKNOWN, in0.last }, .last = in0.last };
	return in0;
}

/* The model message around graph g (output value `out`, input shape in,
 * result shape res), packed into *buf. */
static nnn_status_t pack(ex_t *e, const nnn_onnx_graph_t *g, const char *out, char *fields, const nnn_pshape_t *in,
                         const nnn_pshape_t *res, unsigned char **buf, size_t *len, nnn_diags_t *diags)
{
	Onnx__ModelProto mp;
	Onnx__GraphProto gp;
	Onnx__OperatorSetIdProto opset;
	Onnx__StringStringEntryProto meta;
	Onnx__OperatorSetIdProto *opsets[1] = { &opset };
	Onnx__StringStringEntryProto *metas[1] = { &meta };
	onnx__model_proto__init(&mp);
	onnx__graph_proto__init(&gp);
	onnx__operator_set_id_proto__init(&opset);
	onnx__string_string_entry_proto__init(&meta);
	opset.domain = "";
	opset.has_version = 1;
	opset.version = NNN_ONNX_OPSET;
	meta.key = NNN_ONNX_META_FIELDS;
	meta.value = fields;
	mp.has_ir_version = 1;
	mp.ir_version = NNN_ONNX_IR_VERSION;
	mp.n_opset_import = 1;
	mp.opset_import = opsets;
	mp.producer_name = "nnnkit";
	mp.producer_version = NNN_VERSION;
	mp.n_metadata_props = 1;
	mp.metadata_props = metas;
	mp.graph = &gp;
	gp.name = "nnn";
	Onnx__ValueInfoProto *vin = value_info(e, "input", in, true);
	Onnx__ValueInfoProto *vout = value_info(e, (char *)out, res, false);
	gp.n_input = gp.n_output = 1;
	gp.input = &vin;
	gp.output = &vout;
	gp.n_node = g->nnodes;
	gp.node = A(e, g->nnodes * sizeof *gp.node);
	gp.n_initializer = g->ninits;
	gp.initializer = A(e, g->ninits * sizeof *gp.initializer);
	for (size_t i = 0; gp.node && i < g->nnodes; i++)
		gp.node[i] = node_proto(e, &g->nodes[i]);
	for (size_t i = 0; gp.initializer && i < g->ninits; i++)
		gp.initializer[i] = tensor_proto(e, &g->inits[i]);
	if (e->nomem || !vin || !vout)
		return nnn_diags_add(diags, NNN_E_NOMEM, NNN_NO_OFFSET, "", "out of memory exporting to ONNX");
	size_t n = protobuf_c_message_get_packed_size(&mp.base);
	if (!(*buf = malloc(n ? n : 1)))
		return nnn_diags_add(diags, NNN_E_NOMEM, NNN_NO_OFFSET, "", "out of memory: an ONNX model of %zu bytes", n);
	*len = protobuf_c_message_pack(&mp.base, *buf);
	return NNN_OK;
}

nnn_status_t nnn_onnx_encode(const nnn_model_t *m, const nnn_onnx_write_opts_t *opts, unsigned char **buf,
                             size_t *len, nnn_diags_t *diags)
{
	if (!m || !buf || !len || !opts || !opts->ctx)
		return nnn_diags_add(diags, NNN_E_USAGE, NNN_NO_OFFSET, "",
		                     "nnn_onnx_encode: a model, options with the plugins (ctx), and buf and len are needed");
	*buf = NULL;
	*len = 0;
	size_t nl = m->layer_count > 0 ? (size_t)m->layer_count : 1;
	nnn_layer_shapes_t *sh = calloc(nl, sizeof *sh);
	nnn_onnx_graph_t *g = nnn_og_new();
	char *fields = NULL;
	const char *out = NULL;
	ex_t e = { 0 };
	nnn_status_t st = NNN_OK;
	nnn_pshape_t in, res;
	if (!sh || !g) {
		st = nnn_diags_add(diags, NNN_E_NOMEM, NNN_NO_OFFSET, "", "out of memory exporting to ONNX");
		goto done;
	}
	/* Without an input shape the shapes are partial, and a model whose
	 * layers disagree is exported as it is (validate says what is wrong). */
	nnn_diags_t quiet;
	nnn_diags_init(&quiet);
	st = nnn_model_shapes(m, opts->input_shape, sh, opts->input_shape ? diags : &quiet);
	nnn_diags_free(&quiet);
	if (st != NNN_OK && opts->input_shape)
		goto done;
	in = opts->input_shape ? (m->layer_count > 0 ? sh[0].in : (nnn_pshape_t){ .rank = NNN_DIM_UNKNOWN,
	                                                                           .last = NNN_DIM_UNKNOWN })
	                       : open_input(m, sh);
	if ((st = build(m, opts->ctx, sh, g, &out, diags)) != NNN_OK)
		goto done;
	if ((st = fields_text(m, &fields, diags)) != NNN_OK)
		goto done;
	res = m->layer_count > 0 ? sh[m->layer_count - 1].out : in;
	if (opts->input_shape) {
		in = nnn_pshape_of(opts->input_shape);
		if (m->layer_count == 0)
			res = in;
	}
	st = pack(&e, g, out, fields, &in, &res, buf, len, diags);
done:
	ex_free(&e);
	free(fields);
	nnn_og_free(g);
	free(sh);
	return st;
}

nnn_status_t nnn_onnx_write_file(const nnn_model_t *m, const char *path, const nnn_onnx_write_opts_t *opts,
                                 nnn_diags_t *diags)
{
	unsigned char *b;
	size_t n;
	if (!path)
		return nnn_diags_add(diags, NNN_E_USAGE, NNN_NO_OFFSET, "", "nnn_onnx_write_file: path is NULL");
	nnn_status_t st = nnn_onnx_encode(m, opts, &b, &n, diags);
	if (st != NNN_OK)
		return st;
	st = nnn_write_atomic_bytes(path, b, n, diags);
	free(b);
	return st;
}
