/* import_plugin: a plugin type's ONNX import (ABI 1.7). The nodes from the
 * chain's value on are offered to each registered type's onnx_import hook,
 * which reads them through the host's onnx_* functions below and gives the
 * fields it finds; the nodes it takes become its layer, or the activation
 * of the layer before.
 * The driver and the shared types: import.c, import.h. */
#define _POSIX_C_SOURCE 200809L
#include "import.h"

#include "host.h"       /* nnn_host_table */
#include "onnx_match.h" /* the reader the host table's functions forward to */

struct nnn_onnx_match {
	nnn_om_head_t head; /* first: the reader */
	imp_t *im;
	int start;        /* the first node offered */
	const char *x;    /* the value entering them */
	pfields_t f;
	const nnn_rdesc_t *rec; /* the type's fields, for the element types of its tensors */
	int seen;         /* the last node the hook looked at */
	int refused;      /* the node of a typed constant refused (onnx_set_tensor_const), or -1 */
};

static const Onnx__NodeProto *node(const nnn_onnx_match_t *m, int k)
{
	const Onnx__GraphProto *g = m->im->g;
	return k >= 0 && (size_t)m->start + (size_t)k < g->n_node ? g->node[m->start + k] : NULL;
}

static const char *r_op(const nnn_onnx_match_t *m, int k)
{
	const Onnx__NodeProto *nd = node(m, k);
	if (nd && k > m->seen)
		((nnn_onnx_match_t *)m)->seen = k; /* the match is the host's own, never const (offer) */
	if (!nd || (nd->domain && *nd->domain && strcmp(nd->domain, "ai.onnx")))
		return NULL;
	return nd->op_type ? nd->op_type : "";
}

static int r_input(const nnn_onnx_match_t *m, int k, int in)
{
	const Onnx__NodeProto *nd = node(m, k);
	if (!nd || in < 0 || (size_t)in >= nd->n_input || !*nd->input[in])
		return NNN_ONNX_FROM_OTHER;
	const char *name = nd->input[in];
	if (!strcmp(name, m->x))
		return NNN_ONNX_FROM_X;
	for (int j = 0; j < k; j++) {
		const Onnx__NodeProto *p = node(m, j);
		if (p->n_output >= 1 && !strcmp(p->output[0], name))
			return j;
	}
	return imp_find_cst(m->im, name) ? NNN_ONNX_FROM_CONST : NNN_ONNX_FROM_OTHER;
}

static int r_attr_ints(const nnn_onnx_match_t *m, int k, const char *name, int64_t *v, int max)
{
	const Onnx__NodeProto *nd = node(m, k);
	const Onnx__AttributeProto *a = nd ? imp_attr(nd, name) : NULL;
	if (a && a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT) {
		if (max > 0)
			v[0] = a->i;
		return 1;
	}
	if (!a || a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS || a->n_ints > INT32_MAX)
		return -1;
	for (size_t i = 0; i < a->n_ints && i < (size_t)(max > 0 ? max : 0); i++)
		v[i] = a->ints[i];
	return (int)a->n_ints;
}

static int r_attr_float(const nnn_onnx_match_t *m, int k, const char *name, float *v)
{
	const Onnx__NodeProto *nd = node(m, k);
	const Onnx__AttributeProto *a = nd ? imp_attr(nd, name) : NULL;
	if (!a || a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT)
		return -1;
	*v = a->f;
	return 1;
}

static int64_t r_const(const nnn_onnx_match_t *m, int k, int in, int64_t *dims, int *rank, const float **data)
{
	const Onnx__NodeProto *nd = node(m, k);
	const cst_t *c = nd && in >= 0 && (size_t)in < nd->n_input ? imp_find_cst(m->im, nd->input[in]) : NULL;
	if (!c || c->dtype != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT || c->rank > NNN_MAX_RANK)
		return -1;
	for (size_t d = 0; d < c->rank; d++)
		dims[d] = c->dims[d];
	*rank = (int)c->rank;
	*data = c->f;
	return c->n;
}

/* Whether f already has a field of that name. */
static bool taken(const pfields_t *f, const char *field)
{
	for (int i = 0; i < f->nt; i++)
		if (!strcmp(f->t[i].field, field))
			return true;
	return f->vals && json_object_get(f->vals, field);
}

/* Tensor field `field` of `rank` dims: their product of elements of kind
 * and width, copied from bytes. */
static nnn_status_t add_tensor(nnn_onnx_match_t *m, const char *field, const int64_t *dims, int rank,
                               nnn_ekind_t kind, int width, const void *bytes)
{
	int64_t n = 1;
	if (!field || taken(&m->f, field) || rank < 0 || rank > NNN_MAX_RANK)
		return NNN_E_ONNX;
	for (int d = 0; d < rank; d++) {
		if (dims[d] < 0 || dims[d] > INT32_MAX || (dims[d] && n > INT64_MAX / 8 / dims[d]))
			return NNN_E_ONNX;
		n *= dims[d];
	}
	ptensor_t *t = realloc(m->f.t, ((size_t)m->f.nt + 1) * sizeof *t);
	if (!t)
		return NNN_E_NOMEM;
	m->f.t = t;
	ptensor_t *p = &t[m->f.nt];
	*p = (ptensor_t){ .field = strdup(field), .rank = rank, .v = malloc(n ? (size_t)n * (size_t)width : 1),
		          .kind = kind, .width = width };
	if (!p->field || !p->v) {
		free(p->field);
		free(p->v);
		return NNN_E_NOMEM;
	}
	for (int d = 0; d < rank; d++)
		p->dims[d] = (int32_t)dims[d];
	if (n)
		memcpy(p->v, bytes, (size_t)n * (size_t)width);
	m->f.nt++;
	return NNN_OK;
}

static nnn_status_t r_set_tensor(nnn_onnx_match_t *m, const char *field, const int64_t *dims, int rank,
                               const float *data)
{
	return add_tensor(m, field, dims, rank, NNN_EK_FLOAT, 4, data);
}

static nnn_status_t set_val(nnn_onnx_match_t *m, const char *field, json_t *v)
{
	if (!v)
		return NNN_E_NOMEM;
	if (!field || taken(&m->f, field)) {
		json_decref(v);
		return NNN_E_ONNX;
	}
	if (!m->f.vals && !(m->f.vals = json_object())) {
		json_decref(v);
		return NNN_E_NOMEM;
	}
	return json_object_set_new(m->f.vals, field, v) ? NNN_E_NOMEM : NNN_OK;
}

static nnn_status_t r_set_number(nnn_onnx_match_t *m, const char *field, double v)
{
	/* A bool field as true or false; whole numbers as integers, which the
	 * JSON form takes for any number field. */
	for (int32_t i = 0; field && m->rec && i < m->rec->nfields; i++)
		if (!strcmp(m->rec->fields[i].name, field) && m->rec->fields[i].kind == NNN_FK_PRIM &&
		    m->rec->fields[i].prim == NNN_PRIM_BOOL)
			return set_val(m, field, json_boolean(v != 0));
	bool whole = v == floor(v) && fabs(v) < 9007199254740992.0;
	return set_val(m, field, whole ? json_integer((json_int_t)v) : json_real(v));
}

static nnn_status_t r_set_ints(nnn_onnx_match_t *m, const char *field, const int64_t *v, int n)
{
	json_t *a = json_array();
	for (int i = 0; a && i < n; i++)
		if (json_array_append_new(a, json_integer((json_int_t)v[i]))) {
			json_decref(a);
			a = NULL;
		}
	return set_val(m, field, a);
}

static const cst_t *const_input(const nnn_onnx_match_t *m, int k, int in)
{
	const Onnx__NodeProto *nd = node(m, k);
	return nd && in >= 0 && (size_t)in < nd->n_input ? imp_find_cst(m->im, nd->input[in]) : NULL;
}

static int64_t r_const_elems(const nnn_onnx_match_t *m, int k, int in, int64_t *dims, int *rank, int32_t *dtype,
                             const void **bytes)
{
	const cst_t *c = const_input(m, k, in);
	if (!c || !c->raw || c->rank > NNN_MAX_RANK)
		return -1;
	for (size_t d = 0; d < c->rank; d++)
		dims[d] = c->dims[d];
	*rank = (int)c->rank;
	*dtype = c->dtype;
	*bytes = c->raw;
	return c->n;
}

/* The element type of the data of the type's tensor field `name`: false
 * when it has no tensor of that name. */
static bool field_etype(const nnn_rdesc_t *rec, const char *name, nnn_ekind_t *kind, int *width)
{
	for (int32_t i = 0; rec && i < rec->nfields; i++) {
		const nnn_fdesc_t *f = &rec->fields[i];
		if (strcmp(f->name, name))
			continue;
		if (f->kind != NNN_FK_RECORD || !f->rec || f->rec->data < 0)
			return false;
		nnn_prim_t p = f->rec->fields[f->rec->data].prim;
		*kind = nnn_prim_ekind(p);
		*width = nnn_prim_ewidth(p);
		return true;
	}
	/* The layer's own bias: float32. */
	*kind = NNN_EK_FLOAT;
	*width = 4;
	return !strcmp(name, FNAME(layer, LAYER_BIAS));
}

static nnn_status_t r_set_tensor_const(nnn_onnx_match_t *m, const char *field, int k, int in)
{
	nnn_ekind_t kind;
	int width, rank;
	int32_t dtype;
	int64_t dims[NNN_MAX_RANK];
	const void *bytes;
	const cst_t *c = const_input(m, k, in);
	if (!field || !c || !field_etype(m->rec, field, &kind, &width))
		return NNN_E_ONNX;
	char why[160];
	if (!imp_const_of_type(c, kind, width, why, sizeof why) ||
	    r_const_elems(m, k, in, dims, &rank, &dtype, &bytes) < 0) {
		imp_bad(m->im, m->start + k, "initializer '%.60s' %s: the %s type's %s holds %s%d values (its element "
		        "type in the schema); export the model with nnnkit, or store the %s as that type in raw_data",
		        c->name, why, m->f.name, field, kind == NNN_EK_INT ? "int" : kind == NNN_EK_UINT ? "uint"
		        : kind == NNN_EK_BFLOAT ? "bfloat" : kind == NNN_EK_BOOL ? "bool" : "float", 8 * width, field);
		m->refused = k;
		return NNN_E_ONNX;
	}
	return add_tensor(m, field, dims, rank, kind, width, bytes);
}

static const nnn_om_reader_t reader = { r_op, r_input, r_attr_ints, r_attr_float, r_const, r_set_tensor, r_set_number,
	                                 r_set_ints, r_const_elems, r_set_tensor_const };

void imp_pfields_free(pfields_t *f)
{
	if (!f)
		return;
	for (int i = 0; i < f->nt; i++) {
		free(f->t[i].field);
		free(f->t[i].v);
	}
	free(f->t);
	json_decref(f->vals);
	memset(f, 0, sizeof *f);
}

/* Every input of the n nodes taken is the layer's input, an earlier node's
 * output or a constant, and one of them takes the layer's input: the chain
 * has no branch into or out of them. */
static bool closed(const nnn_onnx_match_t *m, int n)
{
	bool takes_x = false;
	for (int k = 0; k < n; k++) {
		const Onnx__NodeProto *nd = node(m, k);
		if (!r_op(m, k) || nd->n_output < 1 || !*nd->output[0])
			return false;
		for (size_t in = 0; in < nd->n_input; in++) {
			int from = *nd->input[in] ? r_input(m, k, (int)in) : NNN_ONNX_FROM_CONST;
			if (from == NNN_ONNX_FROM_OTHER)
				return false;
			takes_x |= from == NNN_ONNX_FROM_X;
		}
	}
	return takes_x;
}

/* The "bias" a layer's hook found is the layer's shared bias. */
static int take_bias(layer_t *L, pfields_t *f)
{
	for (int i = 0; i < f->nt; i++) {
		ptensor_t *t = &f->t[i];
		if (strcmp(t->field, FNAME(layer, LAYER_BIAS)))
			continue;
		if (t->rank != 1 || t->kind != NNN_EK_FLOAT || t->width != 4)
			return 0;
		L->bias = t->v;
		L->nbias = t->dims[0];
		free(t->field);
		f->t[i] = f->t[--f->nt];
		return 1;
	}
	return 1;
}

/* Records what type `t` (a layer when `layer`) took: nodes i .. i+n-1. */
static void took(imp_t *im, int i, int n, bool layer, int id, nnn_onnx_match_t *m)
{
	pfields_t *f = malloc(sizeof *f);
	if (!f) {
		im->oom = 1;
		return;
	}
	*f = m->f;
	memset(&m->f, 0, sizeof m->f);
	if (layer) {
		layer_t *L = imp_new_layer(im, id, i);
		if (!L) {
			imp_pfields_free(f);
			free(f);
			return;
		}
		L->pl = f;
		if (!take_bias(L, f))
			imp_bad(im, i, "the %s layer's onnx_import hook gave a bias that is not float32 of rank 1", f->name);
		/* Channels-last in and out, as forward: the rank stays, the dims
		 * are the plugin's; a Flatten it took (a Dense's flatten) leaves
		 * [N, -1], which the layer after it must see as rank 2. */
		for (int k = i; k < i + n; k++)
			if (!strcmp(im->g->node[k]->op_type, "Flatten"))
				im->rank = 2;
		for (int d = 0; d < im->rank; d++)
			im->shape[d] = -1;
	} else {
		layer_t *L = im->nl ? &im->L[im->nl - 1] : NULL;
		imp_attach(im, i, id, 0);
		if (L && L->act == id && L->act_node == i && !L->pa) {
			L->pa = f;
			f = NULL;
		}
		imp_pfields_free(f);
		free(f);
	}
	const Onnx__NodeProto *last = im->g->node[i + n - 1];
	im->cur = last->output[0];
	im->cur_node = i + n - 1;
}

/* The record of type id's fields: a plugin's own (rec), or the schema's
 * record that the tag selects in `owner` (the layer's or the activation's). */
static const nnn_rdesc_t *type_record(const nnn_rdesc_t *owner, int id, const nnn_rdesc_t *rec)
{
	for (int32_t i = 0; !rec && i < owner->nfields; i++) {
		const nnn_fdesc_t *f = &owner->fields[i];
		for (int32_t v = 0; f->kind == NNN_FK_VARIANT && v < f->nvariants; v++)
			if (f->variants[v].value == id)
				return f->variants[v].rec;
	}
	return rec;
}

/* Offers node i on to the hook of type id (a layer's when `layer`): the
 * nodes it took, or 0; -1 when it gave a typed constant of another element
 * type than its field's (refused: the nodes it looked at are one group). */
static int offer(imp_t *im, int i, bool layer, int id)
{
	const nnn_ctx_t *ctx = im->opts->ctx;
	const nnn_layer_type_t *lt = layer ? nnn_ctx_layer(ctx, id, NULL) : NULL;
	const nnn_activation_type_t *at = layer ? NULL : nnn_ctx_activation(ctx, id, NULL);
	/* The registry's descriptors are zero past a plugin's size: no hook before ABI 1.7. */
	int (*hook)(const nnn_host_t *, nnn_onnx_match_t *) = lt ? lt->onnx_import : at ? at->onnx_import : NULL;
	if (!hook)
		return 0;
	nnn_onnx_match_t m = { .head = { &reader }, .im = im, .start = i, .x = im->cur,
		               .f = { .name = lt ? lt->name : at->name }, .refused = -1,
		               .rec = lt ? type_record(&nnn_layer_desc, id, lt->record)
		                         : type_record(&nnn_activation_desc, id, at->record) };
	int n = hook(nnn_host_table(), &m);
	if (m.refused >= 0) {
		im->grp_end = i + (m.seen > m.refused ? m.seen : m.refused);
		n = -1;
	} else if (n > 0 && (size_t)i + (size_t)n <= im->g->n_node && closed(&m, n)) {
		took(im, i, n, layer, id, &m);
	} else {
		n = 0;
	}
	imp_pfields_free(&m.f);
	return n;
}

int imp_plugin_match(imp_t *im, int i)
{
	if (!im->opts->ctx || im->lost)
		return 0;
	/* The first node takes the chain's value, or constants only (a Cast
	 * of a float16 initializer before the MatMul that takes the value). */
	const Onnx__NodeProto *nd = im->g->node[i];
	bool on_chain = false, consts = nd->n_input > 0;
	for (size_t in = 0; in < nd->n_input; in++) {
		on_chain |= !strcmp(nd->input[in], im->cur);
		consts &= imp_find_cst(im, nd->input[in]) != NULL;
	}
	if (!on_chain && !consts)
		return 0;
	for (int kind = 0; kind < 2; kind++)
		for (int id = 0; id < 256; id++) {
			int n = offer(im, i, kind == 0, id);
			if (n > 0)
				return n;
			if (n < 0)
				return 0; /* refused: walk skips the group (grp_end) */
		}
	return 0;
}

int imp_pfields_json(jb_t *j, const pfields_t *f, json_t *o)
{
	const char *key;
	json_t *v;
	if (f->vals)
		json_object_foreach (f->vals, key, v)
			if (json_object_set(o, key, v))
				return 0;
	for (int i = 0; i < f->nt; i++) {
		const ptensor_t *p = &f->t[i];
		json_t *t = imp_tensor_json_elems(j, p->dims, (size_t)p->rank, p->v, p->kind, p->width);
		if (!t || json_object_set_new(o, f->t[i].field, t))
			return 0;
	}
	return 1;
}

int imp_pfields_meta(jb_t *j, const pfields_t *f, json_t *o, size_t k, char *why, size_t nwhy)
{
	for (int i = 0; i < f->nt; i++) {
		const ptensor_t *t = &f->t[i];
		json_t *mt = json_object_get(o, t->field);
		json_t *d = json_is_object(mt) ? json_object_get(mt, FNAME(tensor, TENSOR_DIMS)) : NULL;
		int ok = json_is_array(d) && json_array_size(d) == (size_t)t->rank;
		for (int e = 0; ok && e < t->rank; e++)
			ok = json_is_integer(json_array_get(d, (size_t)e)) &&
			     json_integer_value(json_array_get(d, (size_t)e)) == t->dims[e];
		if (!ok) {
			snprintf(why, nwhy, "layers[%zu].%.40s: not the dims of the graph's tensor", k, t->field);
			return 0;
		}
		json_t *ph = imp_placeholder_elems(j, t->v, imp_numel(t->dims, (size_t)t->rank), t->kind, t->width);
		if (!ph)
			return 0;
		json_object_set_new(mt, FNAME(tensor, TENSOR_DATA), ph);
	}
	return 1;
}
