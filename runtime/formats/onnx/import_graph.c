/* import_graph: the graph as import reads it: node names and paths, the layout of the chain's
 * value, diagnostics, constants (initializers and Constant nodes), attributes, and new layers.
 * The driver and the shared types: import.c, import.h. */
#define _POSIX_C_SOURCE 200809L
#include "import.h"

static void node_path(char *p, size_t n, int i)
{
	snprintf(p, n, "graph.node[%d]", i);
}

const char *imp_node_name(const Onnx__NodeProto *nd)
{
	return nd->name && *nd->name ? nd->name : "(unnamed)";
}

/* The channels-first layout of rank r: [0, r-1, 1, .., r-2]. */
int imp_perm_first(const int *p, int r)
{
	for (int k = 0; k < r; k++)
		if (p[k] != (k == 0 ? 0 : k == 1 ? r - 1 : k - 1))
			return 0;
	return r > 2;
}

int imp_perm_ident(const int *p, int r)
{
	for (int k = 0; k < r; k++)
		if (p[k] != k)
			return 0;
	return 1;
}

void imp_set_ident(imp_t *im)
{
	for (int k = 0; k < NNN_MAX_RANK; k++)
		im->perm[k] = k;
}

/* numpy's axes for a value of rank r: channels-first to channels-last
 * (to_last: 0, 2, .., r-1, 1) or back (0, r-1, 1, .., r-2). */
void imp_perm_text(int r, int to_last, char *buf, size_t size)
{
	size_t at = 0;
	buf[0] = '\0';
	for (int k = 0; k < r && at < size; k++) {
		int a = k == 0 ? 0 : to_last ? (k == r - 1 ? 1 : k + 1) : (k == 1 ? r - 1 : k - 1);
		at += (size_t)snprintf(buf + at, size - at, "%s%d", k ? ", " : "", a);
	}
}

/* One diagnostic per refused node: the first reason found. */

static void vbad(imp_t *im, int i, int named, const char *fmt, va_list ap) NNN_PRINTF(4, 0);

static void vbad(imp_t *im, int i, int named, const char *fmt, va_list ap)
{
	if (im->last_bad == i)
		return;
	im->last_bad = i;
	im->nbad++;
	im->lost = 1;
	const Onnx__NodeProto *nd = im->g->node[i];
	char why[NNN_MSG_MAX], path[32];
	vsnprintf(why, sizeof why, fmt, ap);
	node_path(path, sizeof path, i);
	if (named)
		nnn_diags_add(im->diags, NNN_E_ONNX_OP, NNN_NO_OFFSET, path, "node '%.60s' (%.40s): %s", imp_node_name(nd),
		              nd->op_type ? nd->op_type : "", why);
	else
		nnn_diags_add(im->diags, NNN_E_ONNX_OP, NNN_NO_OFFSET, path, "%s", why);
}

void imp_bad(imp_t *im, int i, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vbad(im, i, 1, fmt, ap);
	va_end(ap);
}

void imp_bad_nodes(imp_t *im, int i, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vbad(im, i, 0, fmt, ap);
	va_end(ap);
}

const cst_t *imp_find_cst(const imp_t *im, const char *name)
{
	if (!name || !*name)
		return NULL;
	/* The latest of a name wins (a Constant may shadow nothing in valid
	 * ONNX, where every name is assigned once). */
	for (size_t k = im->nc; k-- > 0;)
		if (!strcmp(im->c[k].name, name))
			return &im->c[k];
	return NULL;
}

int imp_find_sym(const imp_t *im, const char *name)
{
	for (size_t k = im->nsym; name && k-- > 0;)
		if (!strcmp(im->sym[k].name, name))
			return im->sym[k].kind;
	return 0;
}

void imp_add_sym(imp_t *im, const char *name, int kind)
{
	if (im->nsym == im->capsym) {
		size_t cap = im->capsym ? 2 * im->capsym : 8;
		struct sym *v = realloc(im->sym, cap * sizeof *v);
		if (!v) {
			im->oom = 1;
			return;
		}
		im->sym = v;
		im->capsym = cap;
	}
	im->sym[im->nsym].name = name;
	im->sym[im->nsym++].kind = kind;
}

cst_t *imp_new_cst(imp_t *im)
{
	if (im->nc == im->capc) {
		size_t cap = im->capc ? 2 * im->capc : 16;
		cst_t *c = realloc(im->c, cap * sizeof *c);
		if (!c) {
			im->oom = 1;
			return NULL;
		}
		im->c = c;
		im->capc = cap;
	}
	cst_t *c = &im->c[im->nc++];
	memset(c, 0, sizeof *c);
	return c;
}

/* Reads a tensor into c, checking it; a problem is a message in why
 * (returns 0). E_ONNX for external data, E_ONNX for a malformed tensor. */
int imp_read_tensor(const Onnx__TensorProto *t, cst_t *c, char *why, size_t nwhy)
{
	c->name = t->name ? t->name : "";
	c->dtype = t->has_data_type ? t->data_type : 0;
	c->dims = t->dims;
	c->rank = t->n_dims;
	if ((t->has_data_location && t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) ||
	    t->n_external_data) {
		snprintf(why, nwhy,
		         "its data is in an external file (data_location EXTERNAL); nnnkit reads only tensors inside "
		         "the file: save the model with its tensors in it (onnx.save_model(m, path, "
		         "save_as_external_data=False))");
		return 0;
	}
	if (t->segment) {
		snprintf(why, nwhy, "a segmented tensor: nnnkit reads whole tensors only");
		return 0;
	}
	int64_t n = 1;
	for (size_t k = 0; k < t->n_dims; k++) {
		if (t->dims[k] < 0) {
			snprintf(why, nwhy, "dims[%zu] is %" PRId64 ": dims must be >= 0", k, t->dims[k]);
			return 0;
		}
		if (t->dims[k] && n > INT64_MAX / t->dims[k]) {
			snprintf(why, nwhy, "the product of its dims overflows 64 bits");
			return 0;
		}
		n *= t->dims[k];
	}
	c->n = n;
	nnn_ekind_t kind;
	size_t width = (size_t)imp_dtype_width(c->dtype, &kind);
	int fl = c->dtype == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, i64 = c->dtype == ONNX__TENSOR_PROTO__DATA_TYPE__INT64;
	if (c->dtype == ONNX__TENSOR_PROTO__DATA_TYPE__BOOL) {
		/* One byte each in raw_data, else int32_data (Dropout's training_mode). */
		if (t->has_raw_data ? t->raw_data.len != (uint64_t)n : t->n_int32_data != (uint64_t)n) {
			snprintf(why, nwhy, "dims give %" PRId64 " BOOL values, the tensor holds %zu", n,
			         t->has_raw_data ? t->raw_data.len : t->n_int32_data);
			return 0;
		}
		c->b = t->has_raw_data ? t->raw_data.data : NULL;
		c->b32 = t->has_raw_data ? NULL : t->int32_data;
		c->raw = c->b;
		return 1;
	}
	if (!width)
		return 1; /* another type: refused where a node uses it */
	if (t->has_raw_data) {
		if (t->n_float_data || t->n_int64_data || (uint64_t)n > t->raw_data.len / width ||
		    t->raw_data.len != (size_t)n * width) {
			snprintf(why, nwhy, "dims give %" PRId64 " values (%" PRId64 " bytes), raw_data holds %zu bytes", n,
			         n <= INT64_MAX / 8 ? n * (int64_t)width : -1, t->raw_data.len);
			return 0;
		}
		/* protobuf-c's copy is malloc'd, so aligned; nnnkit runs on
		 * little-endian hosts only (nnn/types.h), as raw_data is: the
		 * bytes of any type are its elements' as a tensor holds them. */
		c->raw = t->raw_data.data;
		c->f = fl ? (const float *)(const void *)t->raw_data.data : NULL;
		c->i = i64 ? (const int64_t *)(const void *)t->raw_data.data : NULL;
		return 1;
	}
	if (!fl && !i64)
		return 1; /* another type's typed fields (int32_data...): no raw bytes, refused where used */
	size_t have = fl ? t->n_float_data : t->n_int64_data;
	if ((uint64_t)n != have) {
		snprintf(why, nwhy, "dims give %" PRId64 " values, %s holds %zu", n, fl ? "float_data" : "int64_data",
		         have);
		return 0;
	}
	c->f = t->float_data;
	c->i = t->int64_data;
	c->raw = fl ? (const void *)t->float_data : (const void *)t->int64_data;
	return 1;
}

int imp_dtype_width(int32_t t, nnn_ekind_t *kind)
{
	static const nnn_ekind_t kinds[] = { NNN_EK_INT, NNN_EK_UINT, NNN_EK_FLOAT, NNN_EK_BFLOAT, NNN_EK_BOOL };
	for (size_t k = 0; k < ARRAY_LEN(kinds); k++)
		for (int w = 1; w <= 8; w *= 2)
			if (t && nnn_onnx_dtype(kinds[k], w) == t) {
				*kind = kinds[k];
				return w;
			}
	*kind = NNN_EK_NONE;
	return 0;
}

int imp_const_of_type(const cst_t *c, nnn_ekind_t kind, int width, char *why, size_t nwhy)
{
	int32_t want = nnn_onnx_dtype(kind, width);
	if (c->dtype == want && c->raw)
		return 1;
	snprintf(why, nwhy, "is %s%s, expected %s", imp_dtype_name(c->dtype),
	         c->dtype == want ? " without raw_data" : "", imp_dtype_name(want));
	return 0;
}

const char *imp_dtype_name(int32_t t)
{
	static const char *const names[] = { "UNDEFINED", "FLOAT", "UINT8", "INT8", "UINT16", "INT16", "INT32",
		                             "INT64", "STRING", "BOOL", "FLOAT16", "DOUBLE", "UINT32", "UINT64",
		                             "COMPLEX64", "COMPLEX128", "BFLOAT16" };
	return t >= 0 && (size_t)t < ARRAY_LEN(names) ? names[t] : "another type";
}

/* A float constant for input `k` of node i, or NULL (refused, said why). */
const cst_t *imp_float_input(imp_t *im, int i, size_t k, const char *what)
{
	const Onnx__NodeProto *nd = im->g->node[i];
	if (k >= nd->n_input || !*nd->input[k]) {
		imp_bad(im, i, "no %s input: nnnkit needs it as an initializer or Constant", what);
		return NULL;
	}
	const cst_t *c = imp_find_cst(im, nd->input[k]);
	if (!c) {
		imp_bad(im, i, "%s '%.60s' is not an initializer or Constant: nnnkit reads weights stored in the graph", what,
		    nd->input[k]);
		return NULL;
	}
	if (c->dtype != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT) {
		imp_bad(im, i, "%s '%.60s' is %s, expected FLOAT (float32): nnnkit reads float32 weights; export the model "
		    "in float32 (model.float() before torch.onnx.export)", what, nd->input[k], imp_dtype_name(c->dtype));
		return NULL;
	}
	return c;
}

/* ---- attributes ---- */

const Onnx__AttributeProto *imp_attr(const Onnx__NodeProto *nd, const char *name)
{
	for (size_t k = 0; k < nd->n_attribute; k++)
		if (nd->attribute[k]->name && !strcmp(nd->attribute[k]->name, name))
			return nd->attribute[k];
	return NULL;
}

/* Whether every attribute is one of `known` (comma-separated); else refused. */
int imp_attrs_known(imp_t *im, int i, const char *known)
{
	const Onnx__NodeProto *nd = im->g->node[i];
	for (size_t k = 0; k < nd->n_attribute; k++) {
		const char *a = nd->attribute[k]->name ? nd->attribute[k]->name : "";
		size_t n = strlen(a);
		const char *p = known;
		int found = 0;
		while (*p && !found) {
			const char *e = strchr(p, ',');
			size_t m = e ? (size_t)(e - p) : strlen(p);
			found = m == n && !strncmp(p, a, n);
			p += m + (e != NULL);
		}
		if (!found) {
			imp_bad(im, i, "attribute '%.40s': not one nnnkit reads for this op (it reads %s)", a,
			    *known ? known : "none");
			return 0;
		}
	}
	return 1;
}

int imp_attr_int(const Onnx__NodeProto *nd, const char *name, int64_t dflt, int64_t *v)
{
	const Onnx__AttributeProto *a = imp_attr(nd, name);
	*v = dflt;
	if (!a)
		return 1;
	if (!a->has_i && a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT)
		return 0;
	*v = a->i;
	return 1;
}

int imp_attr_float(const Onnx__NodeProto *nd, const char *name, float dflt, float *v)
{
	const Onnx__AttributeProto *a = imp_attr(nd, name);
	*v = dflt;
	if (!a)
		return 1;
	if (!a->has_f && a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT)
		return 0;
	*v = a->f;
	return 1;
}

void imp_ints_text(const int64_t *v, size_t n, char *buf, size_t size)
{
	size_t at = 0;
	at += (size_t)snprintf(buf, size, "[");
	for (size_t k = 0; k < n && at < size; k++)
		at += (size_t)snprintf(buf + at, size - at, "%s%" PRId64, k ? ", " : "", v[k]);
	if (at < size)
		snprintf(buf + at, size - at, "]");
}

/* ---- layers ---- */

layer_t *imp_new_layer(imp_t *im, int id, int i)
{
	if (im->nl == im->capl) {
		size_t cap = im->capl ? 2 * im->capl : 8;
		layer_t *L = realloc(im->L, cap * sizeof *L);
		if (!L) {
			im->oom = 1;
			return NULL;
		}
		im->L = L;
		im->capl = cap;
	}
	layer_t *L = &im->L[im->nl++];
	memset(L, 0, sizeof *L);
	L->id = id;
	L->node = i;
	L->act = -1;
	L->padding_type = NNN_PADDING_TYPE_VALID;
	if (im->has_pend_dropout) {
		L->dropout = im->pend_dropout;
		L->has_dropout = 1;
		im->has_pend_dropout = 0;
	}
	return L;
}

float *imp_bias_of(imp_t *im, int i, const cst_t *b, int64_t n)
{
	float *v = calloc((size_t)(n ? n : 1), sizeof *v);
	if (!v) {
		im->oom = 1;
		return NULL;
	}
	if (b) {
		if (b->n != n && b->n != 1) {
			imp_bad(im, i, "bias '%.60s' has %" PRId64 " values, expected %" PRId64 " (one per output)", b->name,
			    b->n, n);
			free(v);
			return NULL;
		}
		for (int64_t k = 0; k < n; k++)
			v[k] = b->f[b->n == 1 ? 0 : k];
	}
	return v;
}

int64_t imp_known_product(const imp_t *im, int from)
{
	int64_t p = 1;
	for (int k = from; k < im->rank; k++) {
		if (im->shape[k] < 0 || (im->shape[k] && p > INT64_MAX / im->shape[k]))
			return -1;
		p *= im->shape[k];
	}
	return p;
}
void imp_op_constant(imp_t *im, int i)
{
	const Onnx__NodeProto *nd = im->g->node[i];
	char why[256];
	if (nd->n_attribute != 1 || nd->n_output != 1) {
		imp_bad(im, i, "a Constant has one value attribute and one output");
		return;
	}
	const Onnx__AttributeProto *a = nd->attribute[0];
	const char *an = a->name ? a->name : "";
	cst_t *c = imp_new_cst(im);
	if (!c)
		return;
	if (!strcmp(an, "value") && a->t) {
		if (!imp_read_tensor(a->t, c, why, sizeof why)) {
			im->nc--;
			imp_bad(im, i, "its value: %s", why);
			return;
		}
	} else if (!strcmp(an, "value_float")) {
		c->dtype = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
		c->fv = a->f;
		c->f = &c->fv;
		c->n = 1;
	} else if (!strcmp(an, "value_int")) {
		c->dtype = ONNX__TENSOR_PROTO__DATA_TYPE__INT64;
		c->iv = a->i;
		c->i = &c->iv;
		c->n = 1;
	} else if (!strcmp(an, "value_floats") || !strcmp(an, "value_ints")) {
		int fl = an[6] == 'f';
		c->dtype = fl ? ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT : ONNX__TENSOR_PROTO__DATA_TYPE__INT64;
		c->one = (int64_t)(fl ? a->n_floats : a->n_ints);
		c->dims = &c->one;
		c->rank = 1;
		c->n = c->one;
		c->f = a->floats;
		c->i = a->ints;
	} else {
		im->nc--;
		imp_bad(im, i, "attribute '%.40s': nnnkit reads Constant's value, value_float(s) and value_int(s)", an);
		return;
	}
	c->name = nd->output[0];
}
