/* import.c: an ONNX model as a .nnn model (nnn/onnx.h, docs/onnx.md).
 *
 * The bytes are untrusted. Before anything is unpacked they are capped
 * (opts->max_bytes) and walked once without recursion to bound how deep
 * messages nest (protobuf-c recurses, one C frame per level); protobuf-c
 * then unpacks them through an allocator that counts every byte against a
 * budget proportional to the input. Tensors stored outside the file are
 * refused, and every tensor's dims are checked against its data.
 *
 * The graph must be a chain: one input, one output, each node taking the
 * output of the node before (plus constants). Walking it keeps the layout
 * of the value on the chain relative to the channels-last tensor nnn's
 * layers see: the same (LAST), channels first (FIRST: an NCHW graph, or
 * after a Transpose to NCHW), or a channels-first tensor flattened (FLAT:
 * the next Dense's weight rows are in (c, d1..dn) order and are permuted to
 * nnn's (d1..dn, c)). Every node outside the vocabulary is listed, then the
 * import fails: never a partial model.
 *
 * The model is built as its JSON form (docs/json.md) and read with
 * nnn_json_decode, so that every field the schema has is checked by the
 * reader the CLI uses. When the model carries "nnn.fields" (what export
 * writes: the JSON form without float data) and it agrees with the graph,
 * that text is used with the graph's tensors put in: the exact original
 * model, description and training fields included.
 */
#define _POSIX_C_SOURCE 200809L
#include <float.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <onnx.pb-c.h>

#include <nnn/file.h>
#include <nnn/json.h>
#include <nnn/onnx.h>
#include <nnn/shape.h>

#include "json_form.h"

/* The opsets of the default domain import reads. */
#define OPSET_MIN 11
#define OPSET_MAX 21
/* How deep messages may nest: a model needs about 8 (TypeProto's nesting
 * under a graph input); subgraphs, which no supported op has, need more. */
#define MAX_DEPTH 32
/* Spatial dims of a Conv (ONNX runtimes stop at 3). */
#define MAX_SPATIAL 3

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* The JSON form's names, from the schema's descriptors. */
#define FNAME(rec, at) (nnn_##rec##_desc.fields[NNN_AT_##at].name)

static const char supported_ops[] =
	"Conv, Gemm, MatMul (+ Add), Flatten, Reshape to [N, -1], Relu, Sigmoid, Tanh, LeakyRelu, Softmax, "
	"Identity, Dropout, Constant, Transpose (keeping the batch axis), and Shape/Gather/Unsqueeze/Concat giving a "
	"Reshape its batch size";

/* ---- the parse budget ---- */

typedef struct budget {
	size_t used, cap;
	int over;
} budget_t;

/* Every block carries its size in front, so that a free gives it back. */
#define HDR 16

static void *b_alloc(void *data, size_t n)
{
	budget_t *b = data;
	if (n > b->cap || b->cap - b->used < n + HDR) {
		b->over = 1;
		return NULL;
	}
	unsigned char *p = malloc(n + HDR);
	if (!p)
		return NULL;
	memcpy(p, &n, sizeof n);
	b->used += n + HDR;
	return p + HDR;
}

static void b_free(void *data, void *ptr)
{
	budget_t *b = data;
	if (!ptr)
		return;
	unsigned char *p = (unsigned char *)ptr - HDR;
	size_t n;
	memcpy(&n, p, sizeof n);
	b->used -= n + HDR;
	free(p);
}

/* ---- nesting depth, without recursion ---- */

static int varint(const unsigned char *b, size_t end, size_t *at, uint64_t *v)
{
	*v = 0;
	for (int s = 0; s < 64 && *at < end; s += 7) {
		unsigned char c = b[(*at)++];
		*v |= (uint64_t)(c & 0x7f) << s;
		if (!(c & 0x80))
			return 1;
	}
	return 0;
}

/* The deepest nesting of messages in buf read as `desc` (0: malformed
 * framing, left for protobuf-c to report; the depth then reached so far). */
static int nesting(const unsigned char *buf, size_t len, const ProtobufCMessageDescriptor *desc, int limit)
{
	struct {
		const ProtobufCMessageDescriptor *d;
		size_t end;
	} st[MAX_DEPTH + 2];
	int top = 0, deepest = 1;
	size_t at = 0;
	st[0].d = desc;
	st[0].end = len;
	while (top >= 0) {
		if (at >= st[top].end) {
			at = st[top].end;
			top--;
			continue;
		}
		uint64_t key, v;
		if (!varint(buf, st[top].end, &at, &key))
			return deepest;
		unsigned wire = (unsigned)(key & 7);
		switch (wire) {
		case 0:
			if (!varint(buf, st[top].end, &at, &v))
				return deepest;
			break;
		case 1:
			if (st[top].end - at < 8)
				return deepest;
			at += 8;
			break;
		case 5:
			if (st[top].end - at < 4)
				return deepest;
			at += 4;
			break;
		case 2: {
			if (!varint(buf, st[top].end, &at, &v) || v > st[top].end - at)
				return deepest;
			const ProtobufCFieldDescriptor *f =
				key >> 3 <= UINT32_MAX
					? protobuf_c_message_descriptor_get_field(st[top].d, (unsigned)(key >> 3))
					: NULL;
			if (f && f->type == PROTOBUF_C_TYPE_MESSAGE) {
				if (top + 2 > limit)
					return top + 2;
				top++;
				st[top].d = f->descriptor;
				st[top].end = at + (size_t)v;
				deepest = top + 1 > deepest ? top + 1 : deepest;
			} else {
				at += (size_t)v;
			}
			break;
		}
		default:
			return deepest; /* groups: protobuf-c refuses them */
		}
	}
	return deepest;
}

/* ---- constants: initializers and Constant nodes ---- */

typedef struct cst {
	const char *name;
	int32_t dtype;          /* ONNX TensorProto data type */
	const int64_t *dims;    /* borrowed from the message, or &one */
	size_t rank;
	int64_t one;            /* the dim of a Constant's value_floats / value_ints */
	int64_t n;              /* element count */
	const float *f;         /* FLOAT data (borrowed) */
	const int64_t *i;       /* INT64 data (borrowed) */
	const uint8_t *b;       /* BOOL data as raw_data bytes (borrowed) */
	const int32_t *b32;     /* BOOL data as int32_data (borrowed) */
	float fv;               /* a scalar Constant's value */
	int64_t iv;
} cst_t;

/* ---- the layers found ---- */

typedef struct layer {
	int id;                 /* NNN_LAYER_ID_* */
	int node;               /* the node that made it */
	int act;                /* NNN_ACTIVATION_ID_*; -1: none yet */
	int act_node;
	float tau;
	float dropout;
	int has_dropout;
	float *bias;
	int32_t nbias;
	float *w;               /* Dense weights [in, neurons] or Conv kernels [f, k.., c] */
	int32_t wdims[MAX_SPATIAL + 2];
	int32_t wrank;
	int flatten;
	int in_rank;            /* rank of the Dense's input, 0 when unknown */
	int32_t padding_type;
	int32_t pads[2 * MAX_SPATIAL];
	int bias_open;          /* a MatMul's layer: an Add may give its bias */
} layer_t;


typedef struct imp {
	nnn_diags_t *diags;
	const nnn_onnx_read_opts_t *opts;
	Onnx__ModelProto *mp;
	Onnx__GraphProto *g;
	int64_t opset;
	cst_t *c;
	size_t nc, capc;
	layer_t *L;
	size_t nl, capl;
	int nbad;               /* nodes refused */
	int lost;               /* after a refused node the chain's layout is unknown:
	                         * only what a node says by itself is checked */
	int last_bad;           /* the last node with a diagnostic */
	int oom;
	/* the value on the chain, and the graph's input */
	const char *cur, *input;
	int in_rank;
	int rank;               /* -1: unknown */
	int64_t shape[NNN_MAX_RANK]; /* in ONNX order; -1 unknown */
	/* The layout: ONNX axis k of the value is axis perm[k] of the
	 * channels-last value nnn's layers see (identity: the same). */
	int perm[NNN_MAX_RANK];
	int first_input;        /* the graph input is channels-first */
	int flat_pending, flat_node, flat_from_rank;
	/* A flattened value whose layout was not the identity: the Dense
	 * after it reorders its weight rows. Its ONNX dims 1..r-1 and perm. */
	int flat_perm;
	int fl_rank;
	int fl_p[NNN_MAX_RANK];
	int64_t fl_d[NNN_MAX_RANK];
	float pend_dropout;
	int has_pend_dropout;
	/* The batch-size idiom of torch.onnx.export with a dynamic batch
	 * (x.view(x.size(0), -1)): Shape, Gather 0, Unsqueeze, Concat with -1,
	 * feeding a Reshape. Values of it by name. */
	struct sym {
		const char *name;
		int kind;
	} *sym;
	size_t nsym, capsym;
} imp_t;

enum { SYM_SHAPE = 1, SYM_BATCH, SYM_BATCH1, SYM_N_MINUS1 };

static void node_path(char *p, size_t n, int i)
{
	snprintf(p, n, "graph.node[%d]", i);
}

static const char *node_name(const Onnx__NodeProto *nd)
{
	return nd->name && *nd->name ? nd->name : "(unnamed)";
}

/* The channels-first layout of rank r: [0, r-1, 1, .., r-2]. */
static int perm_first(const int *p, int r)
{
	for (int k = 0; k < r; k++)
		if (p[k] != (k == 0 ? 0 : k == 1 ? r - 1 : k - 1))
			return 0;
	return r > 2;
}

static int perm_ident(const int *p, int r)
{
	for (int k = 0; k < r; k++)
		if (p[k] != k)
			return 0;
	return 1;
}

static void set_ident(imp_t *im)
{
	for (int k = 0; k < NNN_MAX_RANK; k++)
		im->perm[k] = k;
}

/* numpy's axes for a value of rank r: channels-first to channels-last
 * (to_last: 0, 2, .., r-1, 1) or back (0, r-1, 1, .., r-2). */
static void perm_text(int r, int to_last, char *buf, size_t size)
{
	size_t at = 0;
	buf[0] = '\0';
	for (int k = 0; k < r && at < size; k++) {
		int a = k == 0 ? 0 : to_last ? (k == r - 1 ? 1 : k + 1) : (k == 1 ? r - 1 : k - 1);
		at += (size_t)snprintf(buf + at, size - at, "%s%d", k ? ", " : "", a);
	}
}

/* One diagnostic per refused node: the first reason found. */
static void bad(imp_t *im, int i, const char *fmt, ...) NNN_PRINTF(3, 4);

static void bad(imp_t *im, int i, const char *fmt, ...)
{
	if (im->last_bad == i)
		return;
	im->last_bad = i;
	im->nbad++;
	im->lost = 1;
	const Onnx__NodeProto *nd = im->g->node[i];
	char why[NNN_MSG_MAX], path[32];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	node_path(path, sizeof path, i);
	nnn_diags_add(im->diags, NNN_E_ONNX_OP, NNN_NO_OFFSET, path, "node '%.60s' (%.40s): %s", node_name(nd),
	              nd->op_type ? nd->op_type : "", why);
}

static const cst_t *find_cst(const imp_t *im, const char *name)
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

static int find_sym(const imp_t *im, const char *name)
{
	for (size_t k = im->nsym; name && k-- > 0;)
		if (!strcmp(im->sym[k].name, name))
			return im->sym[k].kind;
	return 0;
}

static void add_sym(imp_t *im, const char *name, int kind)
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

static cst_t *new_cst(imp_t *im)
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
static int read_tensor(const Onnx__TensorProto *t, cst_t *c, char *why, size_t nwhy)
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
	size_t width = c->dtype == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT   ? 4
	               : c->dtype == ONNX__TENSOR_PROTO__DATA_TYPE__INT64 ? 8
	                                                                  : 0;
	if (c->dtype == ONNX__TENSOR_PROTO__DATA_TYPE__BOOL) {
		/* One byte each in raw_data, else int32_data (Dropout's training_mode). */
		if (t->has_raw_data ? t->raw_data.len != (uint64_t)n : t->n_int32_data != (uint64_t)n) {
			snprintf(why, nwhy, "dims give %" PRId64 " BOOL values, the tensor holds %zu", n,
			         t->has_raw_data ? t->raw_data.len : t->n_int32_data);
			return 0;
		}
		c->b = t->has_raw_data ? t->raw_data.data : NULL;
		c->b32 = t->has_raw_data ? NULL : t->int32_data;
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
		 * little-endian hosts only (nnn/types.h), as raw_data is. */
		if (width == 4)
			c->f = (const float *)(const void *)t->raw_data.data;
		else
			c->i = (const int64_t *)(const void *)t->raw_data.data;
		return 1;
	}
	size_t have = width == 4 ? t->n_float_data : t->n_int64_data;
	if ((uint64_t)n != have) {
		snprintf(why, nwhy, "dims give %" PRId64 " values, %s holds %zu", n, width == 4 ? "float_data" : "int64_data",
		         have);
		return 0;
	}
	c->f = t->float_data;
	c->i = t->int64_data;
	return 1;
}

static const char *dtype_name(int32_t t)
{
	static const char *const names[] = { "UNDEFINED", "FLOAT", "UINT8", "INT8", "UINT16", "INT16", "INT32",
		                             "INT64", "STRING", "BOOL", "FLOAT16", "DOUBLE", "UINT32", "UINT64" };
	return t >= 0 && (size_t)t < ARRAY_LEN(names) ? names[t] : "another type";
}

/* A float constant for input `k` of node i, or NULL (refused, said why). */
static const cst_t *float_input(imp_t *im, int i, size_t k, const char *what)
{
	const Onnx__NodeProto *nd = im->g->node[i];
	if (k >= nd->n_input || !*nd->input[k]) {
		bad(im, i, "no %s input: nnnkit needs it as an initializer or Constant", what);
		return NULL;
	}
	const cst_t *c = find_cst(im, nd->input[k]);
	if (!c) {
		bad(im, i, "%s '%.60s' is not an initializer or Constant: nnnkit reads weights stored in the graph", what,
		    nd->input[k]);
		return NULL;
	}
	if (c->dtype != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT) {
		bad(im, i, "%s '%.60s' is %s: nnnkit reads FLOAT weights", what, nd->input[k], dtype_name(c->dtype));
		return NULL;
	}
	return c;
}

/* ---- attributes ---- */

static const Onnx__AttributeProto *attr(const Onnx__NodeProto *nd, const char *name)
{
	for (size_t k = 0; k < nd->n_attribute; k++)
		if (nd->attribute[k]->name && !strcmp(nd->attribute[k]->name, name))
			return nd->attribute[k];
	return NULL;
}

/* Whether every attribute is one of `known` (comma-separated); else refused. */
static int attrs_known(imp_t *im, int i, const char *known)
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
			bad(im, i, "attribute '%.40s': not one nnnkit reads for this op (it reads %s)", a,
			    *known ? known : "none");
			return 0;
		}
	}
	return 1;
}

static int attr_int(const Onnx__NodeProto *nd, const char *name, int64_t dflt, int64_t *v)
{
	const Onnx__AttributeProto *a = attr(nd, name);
	*v = dflt;
	if (!a)
		return 1;
	if (!a->has_i && a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT)
		return 0;
	*v = a->i;
	return 1;
}

static int attr_float(const Onnx__NodeProto *nd, const char *name, float dflt, float *v)
{
	const Onnx__AttributeProto *a = attr(nd, name);
	*v = dflt;
	if (!a)
		return 1;
	if (!a->has_f && a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT)
		return 0;
	*v = a->f;
	return 1;
}

static void ints_text(const int64_t *v, size_t n, char *buf, size_t size)
{
	size_t at = 0;
	at += (size_t)snprintf(buf, size, "[");
	for (size_t k = 0; k < n && at < size; k++)
		at += (size_t)snprintf(buf + at, size - at, "%s%" PRId64, k ? ", " : "", v[k]);
	if (at < size)
		snprintf(buf + at, size - at, "]");
}

/* ---- layers ---- */

static layer_t *new_layer(imp_t *im, int id, int i)
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

static float *bias_of(imp_t *im, int i, const cst_t *b, int64_t n)
{
	float *v = calloc((size_t)(n ? n : 1), sizeof *v);
	if (!v) {
		im->oom = 1;
		return NULL;
	}
	if (b) {
		if (b->n != n && b->n != 1) {
			bad(im, i, "bias '%.60s' has %" PRId64 " values, expected %" PRId64 " (one per output)", b->name,
			    b->n, n);
			free(v);
			return NULL;
		}
		for (int64_t k = 0; k < n; k++)
			v[k] = b->f[b->n == 1 ? 0 : k];
	}
	return v;
}

static int64_t known_product(const imp_t *im, int from)
{
	int64_t p = 1;
	for (int k = from; k < im->rank; k++) {
		if (im->shape[k] < 0 || (im->shape[k] && p > INT64_MAX / im->shape[k]))
			return -1;
		p *= im->shape[k];
	}
	return p;
}

/* A Dense layer from weights B ([K, M], or [M, K] transposed). */
static void dense(imp_t *im, int i, const cst_t *B, int trans, const cst_t *bias, int matmul)
{
	int64_t K = B->dims[trans ? 1 : 0], M = B->dims[trans ? 0 : 1];
	if (K < 1 || M < 1 || K > INT32_MAX || M > INT32_MAX || K * M > INT32_MAX) {
		bad(im, i, "weights '%.60s' are [%" PRId64 ", %" PRId64 "]: a Dense layer needs 1..2^31-1 values, "
		    "inputs and outputs >= 1", B->name, B->dims[0], B->dims[1]);
		return;
	}
	int64_t F = im->rank >= 1 ? im->shape[im->rank - 1] : -1;
	if (F >= 0 && F != K) {
		bad(im, i, "weights '%.60s' take %" PRId64 " inputs, the value before has %" PRId64, B->name, K, F);
		return;
	}
	if (!im->flat_perm && !perm_ident(im->perm, im->rank) && im->perm[im->rank - 1] != im->rank - 1) {
		bad(im, i, "it multiplies over an axis that is not the channels axis of the model's value: nnn's Dense "
		    "works on the last (channels) axis");
		return;
	}
	float *w = malloc((size_t)(K * M) * sizeof *w);
	float *b = bias_of(im, i, bias, M);
	layer_t *L = w && b ? new_layer(im, NNN_LAYER_ID_DENSE, i) : NULL;
	if (!L) {
		free(w);
		free(b);
		im->oom |= !w;
		return;
	}
	/* Row r of nnn's weights is input feature r of the channels-last
	 * value; after a flatten of another layout (channels-first: feature
	 * r = s * C + c is the graph's feature c * S + s), the graph's feature
	 * at the same place. */
	int n = im->fl_rank;
	int64_t nd[NNN_MAX_RANK], ost[NNN_MAX_RANK];
	if (im->flat_perm) {
		/* nnn's dims: ONNX axis k (1..n) is nnn axis fl_p[k]. */
		for (int k = 1; k <= n; k++)
			nd[im->fl_p[k]] = im->fl_d[k];
		ost[n] = 1;
		for (int k = n; k > 1; k--)
			ost[k - 1] = ost[k] * im->fl_d[k];
	}
	for (int64_t r = 0; r < K; r++) {
		int64_t src = r;
		if (im->flat_perm) {
			int64_t idx[NNN_MAX_RANK], q = r;
			for (int a = n; a >= 1; a--) {
				idx[a] = q % nd[a];
				q /= nd[a];
			}
			src = 0;
			for (int k = 1; k <= n; k++)
				src += idx[im->fl_p[k]] * ost[k];
		}
		for (int64_t m = 0; m < M; m++)
			w[r * M + m] = trans ? B->f[m * K + src] : B->f[src * M + m];
	}
	L->w = w;
	L->wdims[0] = (int32_t)K;
	L->wdims[1] = (int32_t)M;
	L->wrank = 2;
	L->bias = b;
	L->nbias = (int32_t)M;
	L->flatten = im->flat_pending;
	L->in_rank = im->flat_pending ? im->flat_from_rank : im->rank;
	L->bias_open = matmul && !bias;
	/* The other axes keep their layout (a MatMul of rank > 2). */
	im->flat_pending = 0;
	im->flat_perm = 0;
	im->shape[im->rank - 1] = M;
}

static void op_gemm(imp_t *im, int i)
{
	const Onnx__NodeProto *nd = im->g->node[i];
	int64_t ta, tb;
	float alpha, beta;
	if (!attrs_known(im, i, "alpha,beta,transA,transB"))
		return;
	if (!attr_float(nd, "alpha", 1.0f, &alpha) || alpha != 1.0f) {
		bad(im, i, "attribute alpha = %g: nnnkit reads Gemm with alpha 1 (a Dense layer: y = x W + b)", alpha);
		return;
	}
	if (!attr_float(nd, "beta", 1.0f, &beta) || beta != 1.0f) {
		bad(im, i, "attribute beta = %g: nnnkit reads Gemm with beta 1 (a Dense layer: y = x W + b)", beta);
		return;
	}
	if (!attr_int(nd, "transA", 0, &ta) || ta != 0) {
		bad(im, i, "attribute transA = %" PRId64 ": the input is the batch of rows, so transA must be 0", ta);
		return;
	}
	if (!attr_int(nd, "transB", 0, &tb) || (tb != 0 && tb != 1)) {
		bad(im, i, "attribute transB = %" PRId64 ": expected 0 or 1", tb);
		return;
	}
	const cst_t *B = float_input(im, i, 1, "weights B");
	if (!B)
		return;
	if (B->rank != 2) {
		bad(im, i, "weights B '%.60s' have rank %zu, expected 2", B->name, B->rank);
		return;
	}
	const cst_t *C = NULL;
	if (nd->n_input > 2 && *nd->input[2] && !(C = float_input(im, i, 2, "bias C")))
		return;
	if (im->lost)
		return;
	if (im->rank != 2) {
		bad(im, i, "its input has rank %d: Gemm takes rank 2 (a Flatten before it makes one)", im->rank);
		return;
	}
	dense(im, i, B, (int)tb, C, 0);
}

static void op_matmul(imp_t *im, int i)
{
	const Onnx__NodeProto *nd = im->g->node[i];
	if (!attrs_known(im, i, ""))
		return;
	const cst_t *B = float_input(im, i, 1, "weights");
	if (!B)
		return;
	if (B->rank != 2) {
		bad(im, i, "weights '%.60s' have rank %zu, expected 2 ([inputs, outputs])", B->name, B->rank);
		return;
	}
	if (im->lost)
		return;
	if (im->rank < 2) {
		bad(im, i, "its input has rank %d: nnnkit reads MatMul of a rank >= 2 value by a 2-D weight", im->rank);
		return;
	}
	if (im->perm[im->rank - 1] != im->rank - 1) {
		bad(im, i, "it multiplies over the last axis of a value whose last axis is not its channels (a "
		    "channels-first value): nnn's Dense works on the channels axis");
		return;
	}
	(void)nd;
	dense(im, i, B, 0, NULL, 1);
}

/* An Add right after a MatMul: the Dense layer's bias. */
static void op_add(imp_t *im, int i)
{
	const Onnx__NodeProto *nd = im->g->node[i];
	layer_t *L = im->nl ? &im->L[im->nl - 1] : NULL;
	if (!attrs_known(im, i, "") || im->lost)
		return;
	if (!L || !L->bias_open) {
		bad(im, i, "nnnkit reads Add only as the bias right after a MatMul (a Dense layer)");
		return;
	}
	if (nd->n_input != 2) {
		bad(im, i, "%zu inputs, expected 2", nd->n_input);
		return;
	}
	size_t k = !strcmp(nd->input[0], im->cur) ? 1 : 0;
	const cst_t *b = float_input(im, i, k, "bias");
	if (!b)
		return;
	for (size_t d = 0; d + 1 < b->rank; d++) {
		if (b->dims[d] != 1) {
			bad(im, i, "bias '%.60s' has dims[%zu] = %" PRId64 ": a Dense bias is one value per output", b->name,
			    d, b->dims[d]);
			return;
		}
	}
	float *v = bias_of(im, i, b, L->nbias);
	if (!v)
		return;
	free(L->bias);
	L->bias = v;
	L->bias_open = 0;
}

/* Checks Conv's weights W ([filters, channels, k1..kn], n = 1..3). */
static const cst_t *conv_weights(imp_t *im, int i)
{
	const cst_t *W = float_input(im, i, 1, "weights W");
	if (!W)
		return NULL;
	if (W->rank < 3 || W->rank > 2 + MAX_SPATIAL) {
		bad(im, i, "weights W '%.60s' have rank %zu: nnnkit reads Conv of 1 to 3 spatial dims "
		    "([filters, channels, k1..kn], n = 1..3)", W->name, W->rank);
		return NULL;
	}
	for (size_t d = 0; d < W->rank; d++) {
		if (W->dims[d] < 1 || W->dims[d] > INT32_MAX) {
			bad(im, i, "weights W '%.60s' have dims[%zu] = %" PRId64 ", expected 1..2^31-1", W->name, d,
			    W->dims[d]);
			return NULL;
		}
	}
	if (W->n > INT32_MAX) {
		bad(im, i, "weights W '%.60s' hold %" PRId64 " values: a .nnn tensor holds at most 2^31-1", W->name, W->n);
		return NULL;
	}
	return W;
}

/* Checks an attribute of ints is all ones (strides, dilations). */
static int conv_ones(imp_t *im, int i, const char *name)
{
	const Onnx__AttributeProto *a = attr(im->g->node[i], name);
	char t[128];
	for (size_t d = 0; a && d < a->n_ints; d++) {
		if (a->ints[d] != 1) {
			ints_text(a->ints, a->n_ints, t, sizeof t);
			bad(im, i, "attribute %s = %s: nnn's Conv has %s 1 (supported: stride 1, dilation 1, group 1)", name, t,
			    !strcmp(name, "strides") ? "stride" : "dilation");
			return 0;
		}
	}
	return 1;
}

/* Checks the attributes nnn's Conv has no field for say what it does. */
static int conv_attrs(imp_t *im, int i, const cst_t *W)
{
	const Onnx__NodeProto *nd = im->g->node[i];
	const Onnx__AttributeProto *a;
	size_t n = W->rank - 2;
	int64_t group;
	char t[128];
	if (!conv_ones(im, i, "strides") || !conv_ones(im, i, "dilations"))
		return 0;
	if (!attr_int(nd, "group", 1, &group) || group != 1) {
		bad(im, i, "attribute group = %" PRId64 ": nnn's Conv connects every channel to every filter (supported: "
		    "group 1)", group);
		return 0;
	}
	if ((a = attr(nd, "kernel_shape"))) {
		int same = a->n_ints == n;
		for (size_t d = 0; same && d < n; d++)
			same = a->ints[d] == W->dims[2 + d];
		if (!same) {
			ints_text(a->ints, a->n_ints, t, sizeof t);
			bad(im, i, "attribute kernel_shape = %s disagrees with the weights' spatial dims", t);
			return 0;
		}
	}
	return 1;
}

/* The padding of each spatial axis, begin pb[d] and end pe[d], from
 * auto_pad or pads; mode gets auto_pad's value ("NOTSET" when absent). */
static int conv_padding(imp_t *im, int i, const cst_t *W, int64_t *pb, int64_t *pe, char *mode, size_t msize)
{
	const Onnx__NodeProto *nd = im->g->node[i];
	const Onnx__AttributeProto *ap = attr(nd, "auto_pad"), *pads = attr(nd, "pads");
	size_t n = W->rank - 2;
	snprintf(mode, msize, "NOTSET");
	if (ap) {
		size_t l = ap->s.len < msize - 1 ? ap->s.len : msize - 1;
		if (l)
			memcpy(mode, ap->s.data, l);
		mode[l] = '\0';
	}
	if (strcmp(mode, "NOTSET") && pads) {
		bad(im, i, "attributes auto_pad = %s and pads both given: ONNX allows one or the other", mode);
		return 0;
	}
	if (!strcmp(mode, "NOTSET")) {
		if (pads && pads->n_ints != 2 * n) {
			bad(im, i, "attribute pads has %zu values, expected %zu (begin then end of each spatial axis)",
			    pads->n_ints, 2 * n);
			return 0;
		}
		for (size_t d = 0; pads && d < n; d++) {
			pb[d] = pads->ints[d];
			pe[d] = pads->ints[n + d];
		}
	} else if (!strcmp(mode, "SAME_UPPER") || !strcmp(mode, "SAME_LOWER")) {
		for (size_t d = 0; d < n; d++) { /* ONNX's rule, for stride 1: k - 1 in all */
			int64_t total = W->dims[2 + d] - 1;
			pb[d] = mode[5] == 'U' ? total / 2 : total - total / 2;
			pe[d] = total - pb[d];
		}
	} else if (strcmp(mode, "VALID")) {
		bad(im, i, "attribute auto_pad = %s: expected NOTSET, VALID, SAME_UPPER or SAME_LOWER", mode);
		return 0;
	}
	return 1;
}

/* The first padding type whose formulas (the schema's) give these pads,
 * or -1 (said, with the mode). */
static int64_t conv_padding_type(imp_t *im, int i, const cst_t *W, const int64_t *pb, const int64_t *pe,
                                 const char *mode)
{
	size_t n = W->rank - 2;
	int64_t ptype = -1, all[2 * MAX_SPATIAL];
	char t[128];
#define TRY_TYPE(value, name)                                                                          \
	if (ptype < 0) {                                                                                 \
		bool fits = true;                                                                       \
		for (size_t d = 0; d < n && fits; d++) {                                                \
			int64_t b, e;                                                                   \
			fits = nnn_padding_type_pads(value, W->dims[2 + d], &b, &e) && b == pb[d] && e == pe[d]; \
		}                                                                                       \
		ptype = fits ? (value) : -1;                                                            \
	}
	NNN_PADDING_TYPE_VALUES(TRY_TYPE)
#undef TRY_TYPE
	if (ptype >= 0)
		return ptype;
	for (size_t d = 0; d < n; d++) {
		all[d] = pb[d];
		all[n + d] = pe[d];
	}
	ints_text(all, 2 * n, t, sizeof t);
	bad(im, i, "padding %s (auto_pad %s): no padding type of the format gives it (each has its formulas: "
	    "docs/format.md, padding types); the format cannot express this padding", t, mode);
	return -1;
}

/* Checks the value on the chain is one the Conv takes (what follows
 * depends on the chain, unreliable after a refused node). */
static int conv_chain(imp_t *im, int i, const cst_t *W)
{
	if (im->lost)
		return 0;
	if (im->rank >= 0 && (size_t)im->rank != W->rank) {
		bad(im, i, "its input has rank %d, weights W '%.60s' rank %zu: expected the same rank", im->rank, W->name,
		    W->rank);
		return 0;
	}
	if (!perm_first(im->perm, im->rank)) {
		bad(im, i, "its input is not channels-first here: ONNX's Conv takes NCHW values, and nnnkit reads it on "
		    "the graph input (NCHW) or after a Transpose from channels-last to channels-first");
		return 0;
	}
	if (im->shape[1] >= 0 && im->shape[1] != W->dims[1]) {
		bad(im, i, "weights W '%.60s' take %" PRId64 " channels, its input has %" PRId64, W->name, W->dims[1],
		    im->shape[1]);
		return 0;
	}
	return 1;
}

/* The value after Conv layer L: its spatial dims as the shape engine
 * gives them for L (the schema's window rule), channels its filters. An
 * axis not known is asked about at the kernel's size, which always fits,
 * and stays unknown; so does one the engine refuses (too small for the
 * kernel: the model's validation says so). */
static void conv_shape(imp_t *im, const layer_t *L)
{
	int32_t n = L->wrank - 2;
	nnn_layer_t nl = { .id = NNN_LAYER_ID_CONV };
	nnn_model_t m = { .layer_count = 1, .layers = &nl };
	nnn_shape_t in = { .rank = n + 2 };
	nnn_layer_shapes_t out;
	nnn_diags_t quiet;
	nl.body.conv.filters = L->wdims[0];
	nl.body.conv.kernels.dims = (nnn_i32s_t){ .n = L->wrank, .v = L->wdims };
	nl.body.conv.padding_type = L->padding_type;
	nl.body.conv.padding_dims = (nnn_i32s_t){ .n = 2 * n, .v = L->pads };
	in.dims[0] = 1; /* the batch does not move the window */
	for (int32_t d = 0; d < n; d++)
		in.dims[1 + d] = im->shape[2 + d] >= 0 ? im->shape[2 + d] : L->wdims[1 + d];
	in.dims[n + 1] = L->wdims[n + 1];
	nnn_diags_init(&quiet);
	bool ok = nnn_model_shapes(&m, &in, &out, &quiet) == NNN_OK;
	nnn_diags_free(&quiet);
	for (int32_t d = 0; d < n; d++)
		im->shape[2 + d] = ok && im->shape[2 + d] >= 0 && out.out.dims[1 + d] >= 0 ? out.out.dims[1 + d] : -1;
	im->shape[1] = L->wdims[0];
}

/* ONNX's [f, c, k..] to nnn's [f, k.., c], and the layer with it. */
static layer_t *conv_layer(imp_t *im, int i, const cst_t *W, const cst_t *B)
{
	size_t n = W->rank - 2;
	int64_t f = W->dims[0], c = W->dims[1], ks = 1;
	for (size_t d = 0; d < n; d++)
		ks *= W->dims[2 + d];
	float *k = malloc((size_t)W->n * sizeof *k);
	float *b = bias_of(im, i, B, f);
	layer_t *L = k && b ? new_layer(im, NNN_LAYER_ID_CONV, i) : NULL;
	if (!L) {
		free(k);
		free(b);
		im->oom |= !k;
		return NULL;
	}
	for (int64_t fi = 0; fi < f; fi++)
		for (int64_t ci = 0; ci < c; ci++)
			for (int64_t p = 0; p < ks; p++)
				k[(fi * ks + p) * c + ci] = W->f[(fi * c + ci) * ks + p];
	L->w = k;
	L->wrank = (int32_t)n + 2;
	L->wdims[0] = (int32_t)f;
	for (size_t d = 0; d < n; d++)
		L->wdims[1 + d] = (int32_t)W->dims[2 + d];
	L->wdims[n + 1] = (int32_t)c;
	L->bias = b;
	L->nbias = (int32_t)f;
	return L;
}

static void op_conv(imp_t *im, int i)
{
	const Onnx__NodeProto *nd = im->g->node[i];
	const cst_t *W, *B = NULL;
	int64_t pb[MAX_SPATIAL] = { 0 }, pe[MAX_SPATIAL] = { 0 }, ptype;
	char mode[24];
	layer_t *L;
	if (!attrs_known(im, i, "auto_pad,dilations,group,kernel_shape,pads,strides") || !(W = conv_weights(im, i)) ||
	    !conv_attrs(im, i, W) || !conv_padding(im, i, W, pb, pe, mode, sizeof mode) ||
	    (ptype = conv_padding_type(im, i, W, pb, pe, mode)) < 0 || !conv_chain(im, i, W))
		return;
	if (nd->n_input > 2 && *nd->input[2] && !(B = float_input(im, i, 2, "bias B")))
		return;
	if (!(L = conv_layer(im, i, W, B)))
		return;
	L->padding_type = (int32_t)ptype;
	for (size_t d = 0; d + 2 < W->rank; d++) {
		L->pads[2 * d] = (int32_t)pb[d];
		L->pads[2 * d + 1] = (int32_t)pe[d];
	}
	conv_shape(im, L);
}

/* Flatten and Reshape to [N, -1]: the next Dense flattens. */
static void flatten(imp_t *im, int i)
{
	if (im->flat_pending && im->rank == 2)
		return; /* a second flatten changes nothing */
	im->flat_from_rank = im->rank;
	if (!perm_ident(im->perm, im->rank)) {
		if (known_product(im, 1) < 0) {
			bad(im, i, "it flattens a channels-first value whose dims are not all known: nnnkit reorders the "
			    "next Dense's weights to channels-last order and needs them; export the graph with a fixed "
			    "input size");
			return;
		}
		im->flat_perm = 1;
		im->fl_rank = im->rank - 1;
		for (int k = 1; k < im->rank; k++) {
			im->fl_p[k] = im->perm[k];
			im->fl_d[k] = im->shape[k];
		}
		set_ident(im);
	}
	int64_t p = known_product(im, 1);
	im->shape[1] = p;
	im->rank = 2;
	im->flat_pending = 1;
	im->flat_node = i;
}

static void op_flatten(imp_t *im, int i)
{
	int64_t axis;
	if (!attrs_known(im, i, "axis") || im->lost)
		return;
	if (!attr_int(im->g->node[i], "axis", 1, &axis) || (axis != 1 && !(im->rank > 1 && axis == 1 - im->rank))) {
		bad(im, i, "attribute axis = %" PRId64 ": nnnkit reads Flatten to [N, -1] (axis 1), which a Dense layer's "
		    "flatten does", axis);
		return;
	}
	flatten(im, i);
}

static void op_reshape(imp_t *im, int i)
{
	const Onnx__NodeProto *nd = im->g->node[i];
	int64_t allowzero;
	if (!attrs_known(im, i, "allowzero"))
		return;
	if (nd->n_input > 1 && find_sym(im, nd->input[1]) == SYM_N_MINUS1) {
		if (!im->lost)
			flatten(im, i); /* [x.size(0), -1] */
		return;
	}
	const cst_t *s = nd->n_input > 1 ? find_cst(im, nd->input[1]) : NULL;
	if (!s || s->dtype != ONNX__TENSOR_PROTO__DATA_TYPE__INT64) {
		bad(im, i, "its shape is not an INT64 initializer or Constant: nnnkit reads Reshape to a fixed [N, -1]");
		return;
	}
	const char *want = "nnnkit reads Reshape to [N, -1], [0, -1] or [-1, F] (a Dense layer's flatten)";
	char t[128];
	ints_text(s->i, (size_t)(s->n < 8 ? s->n : 8), t, sizeof t);
	if (s->n != 2 || (s->i[0] == -1 && s->i[1] == -1) || s->i[0] < -1 || s->i[1] < -1 || s->i[1] == 0) {
		bad(im, i, "shape %s: %s", t, want);
		return;
	}
	if (!attr_int(nd, "allowzero", 0, &allowzero) || (allowzero && s->i[0] == 0)) {
		bad(im, i, "shape %s with allowzero 1: a dim of 0 is then empty; %s", t, want);
		return;
	}
	if (im->lost)
		return;
	if (s->i[1] > 0) {
		int64_t p = known_product(im, 1);
		if (p != s->i[1]) {
			bad(im, i, "shape %s: the value has %s%" PRId64 " features after the batch; %s", t,
			    p < 0 ? "an unknown number of (" : "", p, want);
			return;
		}
	}
	flatten(im, i);
}

static void op_transpose(imp_t *im, int i)
{
	const Onnx__NodeProto *nd = im->g->node[i];
	const Onnx__AttributeProto *a = attr(nd, "perm");
	char t[128];
	if (!attrs_known(im, i, "perm") || im->lost)
		return;
	if (!a || a->n_ints != (size_t)im->rank) {
		bad(im, i, "nnnkit reads Transpose with a perm attribute of the value's rank (%d)", im->rank);
		return;
	}
	int r = im->rank, seen[NNN_MAX_RANK] = { 0 }, ok = a->ints[0] == 0;
	for (int d = 0; ok && d < r; d++) {
		ok = a->ints[d] >= 0 && a->ints[d] < r && !seen[a->ints[d]];
		if (ok)
			seen[a->ints[d]] = 1;
	}
	ints_text(a->ints, a->n_ints, t, sizeof t);
	if (!ok) {
		bad(im, i, "perm %s: nnnkit reads Transposes that keep the batch axis first (between channels-last and "
		    "channels-first, around Convs and Softmax)", t);
		return;
	}
	int64_t old[NNN_MAX_RANK];
	int op[NNN_MAX_RANK];
	memcpy(old, im->shape, sizeof old);
	memcpy(op, im->perm, sizeof op);
	for (int d = 0; d < r; d++)
		im->perm[d] = op[a->ints[d]];
	for (int d = 0; d < r; d++)
		im->shape[d] = old[a->ints[d]];
}

static void attach(imp_t *im, int i, int act, float tau)
{
	layer_t *L = im->nl ? &im->L[im->nl - 1] : NULL;
	if (im->lost)
		return;
	if (!L) {
		bad(im, i, "an activation with no layer before it: nnn keeps an activation as part of the Conv or Dense "
		    "layer it follows");
		return;
	}
	if (L->act >= 0) {
		bad(im, i, "a second activation after the layer of node '%.60s' (node '%.60s' gave it %s): a layer has "
		    "one activation", node_name(im->g->node[L->node]), node_name(im->g->node[L->act_node]),
		    nnn_activation_id_name(L->act));
		return;
	}
	L->act = act;
	L->act_node = i;
	L->tau = tau;
}

static void op_softmax(imp_t *im, int i)
{
	int64_t axis;
	if (!attrs_known(im, i, "axis") || im->lost)
		return;
	int new = im->opset >= 13;
	if (!attr_int(im->g->node[i], "axis", new ? -1 : 1, &axis) || im->rank < 1 || axis < -im->rank ||
	    axis >= im->rank) {
		bad(im, i, "attribute axis = %" PRId64 " on a value of rank %d", axis, im->rank);
		return;
	}
	if (axis < 0)
		axis += im->rank;
	/* nnn's Softmax is over the channels (last) axis of the layer's output. */
	/* Over every feature of a flattened value, or an axis that is not the
	 * channels; before opset 13, over every axis from `axis` on. */
	int ok = !(im->flat_pending && im->flat_from_rank > 2) && im->perm[axis] == im->rank - 1 &&
	         (new || axis == im->rank - 1);
	if (!ok) {
		bad(im, i, "attribute axis = %" PRId64 " (opset %" PRId64 ") on a value of rank %d: nnn's Softmax is "
		    "over the channels (last) axis only%s", axis, im->opset, im->rank,
		    new ? "" : " (before opset 13 Softmax flattens the axes from `axis` on)");
		return;
	}
	attach(im, i, NNN_ACTIVATION_ID_SOFTMAX, 0);
}

static void op_dropout(imp_t *im, int i)
{
	const Onnx__NodeProto *nd = im->g->node[i];
	float ratio = 0.5f;
	if (!attrs_known(im, i, "ratio,seed,is_test"))
		return;
	if (!attr_float(nd, "ratio", 0.5f, &ratio)) {
		bad(im, i, "attribute ratio is not a float");
		return;
	}
	if (nd->n_input > 1 && *nd->input[1]) {
		const cst_t *r = float_input(im, i, 1, "ratio");
		if (!r)
			return;
		if (r->n != 1) {
			bad(im, i, "ratio '%.60s' has %" PRId64 " values, expected one", r->name, r->n);
			return;
		}
		ratio = r->f[0];
	}
	if (nd->n_input > 2 && *nd->input[2]) {
		/* Inference is training_mode false, the default: only a constant false is read. */
		const cst_t *t = find_cst(im, nd->input[2]);
		if (!t || t->dtype != ONNX__TENSOR_PROTO__DATA_TYPE__BOOL || t->n != 1 || (t->b ? t->b[0] : t->b32[0])) {
			bad(im, i, "training_mode '%.60s' is not a constant false: nnnkit reads inference graphs (Dropout is "
			    "kept as the layer's rate)", nd->input[2]);
			return;
		}
	}
	if (!(ratio >= 0.0f && ratio < 1.0f)) {
		bad(im, i, "ratio %g: nnn's dropout is in [0, 1)", ratio);
		return;
	}
	if (im->lost)
		return;
	layer_t *L = im->nl ? &im->L[im->nl - 1] : NULL;
	if (L && L->has_dropout) {
		bad(im, i, "a second Dropout for the layer of node '%.60s': a layer has one dropout rate",
		    node_name(im->g->node[L->node]));
		return;
	}
	if (L) {
		L->dropout = ratio;
		L->has_dropout = 1;
	} else {
		im->pend_dropout = ratio; /* before the first layer: its rate */
		im->has_pend_dropout = 1;
	}
}

static void op_constant(imp_t *im, int i)
{
	const Onnx__NodeProto *nd = im->g->node[i];
	char why[256];
	if (nd->n_attribute != 1 || nd->n_output != 1) {
		bad(im, i, "a Constant has one value attribute and one output");
		return;
	}
	const Onnx__AttributeProto *a = nd->attribute[0];
	const char *an = a->name ? a->name : "";
	cst_t *c = new_cst(im);
	if (!c)
		return;
	if (!strcmp(an, "value") && a->t) {
		if (!read_tensor(a->t, c, why, sizeof why)) {
			im->nc--;
			bad(im, i, "its value: %s", why);
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
		bad(im, i, "attribute '%.40s': nnnkit reads Constant's value, value_float(s) and value_int(s)", an);
		return;
	}
	c->name = nd->output[0];
}

/* ---- the batch-size idiom ---- */

/* An INT64 constant of one value. */
static int int_scalar(const imp_t *im, const char *name, int64_t *v)
{
	const cst_t *c = find_cst(im, name);
	if (!c || c->dtype != ONNX__TENSOR_PROTO__DATA_TYPE__INT64 || c->n != 1)
		return 0;
	*v = c->i[0];
	return 1;
}

/* Shape of the chain's value, Gather of its dim 0, Unsqueeze to [N],
 * Concat with [-1]: what a Reshape to [N, -1] takes. Anything else of
 * these ops is refused. */
static void op_sym(imp_t *im, int i)
{
	const Onnx__NodeProto *nd = im->g->node[i];
	const char *op = nd->op_type;
	const char *why = "nnnkit reads Shape, Gather, Unsqueeze and Concat only as the batch size of a Reshape to "
	                  "[N, -1] (x.view(x.size(0), -1))";
	int64_t v, axis;
	if (!strcmp(op, "Shape")) {
		const Onnx__AttributeProto *st = attr(nd, "start");
		if (!attrs_known(im, i, "start,end")) {
			add_sym(im, nd->output[0], SYM_SHAPE);
			return;
		}
		/* Of the chain's value or the graph's input: the same batch. */
		if (nd->n_input != 1 || (strcmp(nd->input[0], im->cur) && strcmp(nd->input[0], im->input) && !im->lost) ||
		    (st && st->i != 0))
			bad(im, i, "%s", why);
		/* Refused or not, what it stands for, so that the nodes after it
		 * are not refused for it too. */
		add_sym(im, nd->output[0], SYM_SHAPE);
	} else if (!strcmp(op, "Gather")) {
		if (!attrs_known(im, i, "axis")) {
			add_sym(im, nd->output[0], SYM_BATCH);
			return;
		}
		if (nd->n_input != 2 || find_sym(im, nd->input[0]) != SYM_SHAPE || !int_scalar(im, nd->input[1], &v) ||
		    v != 0 || !attr_int(nd, "axis", 0, &axis) || axis != 0)
			bad(im, i, "%s", why);
		add_sym(im, nd->output[0], SYM_BATCH);
	} else if (!strcmp(op, "Unsqueeze")) {
		const Onnx__AttributeProto *ax = attr(nd, "axes");
		if (!attrs_known(im, i, "axes")) {
			add_sym(im, nd->output[0], SYM_BATCH1);
			return;
		}
		int ok = nd->n_input >= 1 && find_sym(im, nd->input[0]) == SYM_BATCH;
		if (ok && ax) /* opset < 13 */
			ok = nd->n_input == 1 && ax->n_ints == 1 && ax->ints[0] == 0;
		else if (ok)
			ok = nd->n_input == 2 && int_scalar(im, nd->input[1], &v) && v == 0;
		if (!ok)
			bad(im, i, "%s", why);
		add_sym(im, nd->output[0], SYM_BATCH1);
	} else {
		if (!attrs_known(im, i, "axis")) {
			add_sym(im, nd->output[0], SYM_N_MINUS1);
			return;
		}
		if (nd->n_input != 2 || find_sym(im, nd->input[0]) != SYM_BATCH1 || !int_scalar(im, nd->input[1], &v) ||
		    v != -1 || !attr_int(nd, "axis", 0, &axis) || axis != 0)
			bad(im, i, "%s", why);
		add_sym(im, nd->output[0], SYM_N_MINUS1);
	}
}

/* ---- the walk ---- */

typedef void (*op_fn)(imp_t *, int);

static void op_activation(imp_t *im, int i)
{
	const char *op = im->g->node[i]->op_type;
	if (!strcmp(op, "LeakyRelu")) {
		float alpha;
		if (!attrs_known(im, i, "alpha"))
			return;
		if (!attr_float(im->g->node[i], "alpha", 0.01f, &alpha) || !isfinite(alpha)) {
			bad(im, i, "attribute alpha = %g: expected a finite float", alpha);
			return;
		}
		attach(im, i, NNN_ACTIVATION_ID_LEAKY_RELU, alpha);
		return;
	}
	if (!attrs_known(im, i, ""))
		return;
	attach(im, i,
	       !strcmp(op, "Relu")      ? NNN_ACTIVATION_ID_RELU
	       : !strcmp(op, "Sigmoid") ? NNN_ACTIVATION_ID_SIGMOID
	                                : NNN_ACTIVATION_ID_TANH,
	       0);
}

static void op_identity(imp_t *im, int i)
{
	(void)attrs_known(im, i, "");
}

static const struct {
	const char *op;
	op_fn fn;
} ops[] = {
	{ "Conv", op_conv },       { "Gemm", op_gemm },       { "MatMul", op_matmul },
	{ "Add", op_add },         { "Flatten", op_flatten }, { "Reshape", op_reshape },
	{ "Transpose", op_transpose }, { "Relu", op_activation }, { "Sigmoid", op_activation },
	{ "Tanh", op_activation }, { "LeakyRelu", op_activation }, { "Softmax", op_softmax },
	{ "Identity", op_identity }, { "Dropout", op_dropout },
};

/* Whether the graph input is channels-first: the first Conv on the chain
 * comes before any Transpose. */
static int input_channels_first(const Onnx__GraphProto *g)
{
	for (size_t k = 0; k < g->n_node; k++) {
		const char *op = g->node[k]->op_type ? g->node[k]->op_type : "";
		if (!strcmp(op, "Transpose"))
			return 0;
		if (!strcmp(op, "Conv"))
			return 1;
	}
	return 0;
}

static void walk(imp_t *im)
{
	const Onnx__GraphProto *g = im->g;
	for (size_t k = 0; k < g->n_node; k++) {
		int i = (int)k;
		const Onnx__NodeProto *nd = g->node[k];
		const char *op = nd->op_type ? nd->op_type : "";
		if (nd->domain && *nd->domain && strcmp(nd->domain, "ai.onnx")) {
			bad(im, i, "domain '%.60s': nnnkit reads ops of the default ONNX domain (%s)", nd->domain,
			    supported_ops);
			continue;
		}
		if (nd->n_output < 1 || !*nd->output[0]) {
			bad(im, i, "no output");
			continue;
		}
		if (!strcmp(op, "Constant")) {
			op_constant(im, i);
			continue;
		}
		if (!strcmp(op, "Shape") || !strcmp(op, "Gather") || !strcmp(op, "Unsqueeze") || !strcmp(op, "Concat")) {
			op_sym(im, i); /* off the chain: its value stays */
			if (im->oom)
				return;
			continue;
		}
		/* Every other node takes the chain's value first (an Add's bias
		 * may come first) and constants for the rest. */
		int on_chain = nd->n_input >= 1 && !strcmp(nd->input[0], im->cur);
		if (!on_chain && !strcmp(op, "Add") && nd->n_input == 2)
			on_chain = !strcmp(nd->input[1], im->cur);
		size_t fn = 0;
		while (fn < ARRAY_LEN(ops) && strcmp(ops[fn].op, op))
			fn++;
		if (fn == ARRAY_LEN(ops)) {
			bad(im, i, "op type %.40s is outside the vocabulary nnnkit converts (%s)", op, supported_ops);
		} else if (!on_chain) {
			bad(im, i, "its input '%.60s' is not the output of the node before on the chain ('%.60s'): nnnkit "
			    "reads a chain of layers, without branches or merges", nd->n_input ? nd->input[0] : "",
			    im->cur);
		} else {
			for (size_t in = 1; in < nd->n_input; in++) {
				if (*nd->input[in] && strcmp(nd->input[in], im->cur) && !find_cst(im, nd->input[in]) &&
				    !find_sym(im, nd->input[in]) && strcmp(op, "Dropout")) {
					bad(im, i, "input '%.60s' is neither the chain's value nor a constant: nnnkit reads a chain "
					    "of layers, without branches or merges", nd->input[in]);
					break;
				}
			}
			if (im->last_bad != i)
				ops[fn].fn(im, i);
		}
		if (strcmp(op, "MatMul") && im->nl && im->L[im->nl - 1].node != i)
			im->L[im->nl - 1].bias_open = 0;
		im->cur = nd->output[0];
		if (im->oom)
			return;
	}
}

/* ---- the model's JSON form ---- */

/* A tensor's data, put where the placeholder `ph` is when the text is made. */
typedef struct slot {
	json_t *ph;
	const float *v;
	int64_t n;
} slot_t;

typedef struct jb {
	slot_t *s;
	size_t ns, caps;
	char *b;
	size_t n, cap;
	int oom;
} jb_t;

static json_t *placeholder(jb_t *j, const float *v, int64_t n)
{
	if (j->ns == j->caps) {
		size_t cap = j->caps ? 2 * j->caps : 16;
		slot_t *s = realloc(j->s, cap * sizeof *s);
		if (!s) {
			j->oom = 1;
			return NULL;
		}
		j->s = s;
		j->caps = cap;
	}
	json_t *ph = json_object(); /* a pointer of its own: what marks the slot */
	if (!ph) {
		j->oom = 1;
		return NULL;
	}
	j->s[j->ns++] = (slot_t){ ph, v, n };
	return ph;
}

static void put(jb_t *j, const char *s, size_t n)
{
	if (j->oom)
		return;
	if (j->cap - j->n <= n) {
		size_t cap = j->cap ? j->cap : 4096;
		while (cap - j->n <= n) {
			if (cap > SIZE_MAX / 2) {
				j->oom = 1;
				return;
			}
			cap *= 2;
		}
		char *b = realloc(j->b, cap);
		if (!b) {
			j->oom = 1;
			return;
		}
		j->b = b;
		j->cap = cap;
	}
	memcpy(j->b + j->n, s, n);
	j->n += n;
	j->b[j->n] = '\0';
}

static void puts_(jb_t *j, const char *s)
{
	put(j, s, strlen(s));
}

static void put_string(jb_t *j, json_t *s)
{
	char *t = json_dumps(s, JSON_ENCODE_ANY);
	if (!t) {
		j->oom = 1;
		return;
	}
	puts_(j, t);
	free(t);
}

/* The float32 a JSON number stands for, as the JSON form's reader takes it:
 * rounded to nearest, so the shortest text of FLT_MAX ("3.4028235e+38", a
 * little above it) is FLT_MAX. False when it is beyond float32 (or NaN). */
static bool f32_of(double dv, float *out)
{
	/* Half an ulp of FLT_MAX past it still rounds down to it. */
	const double limit = (double)FLT_MAX + ldexp(1.0, 127 - 24);
	if (!(fabs(dv) < limit))
		return false;
	*out = fabs(dv) >= (double)FLT_MAX ? copysignf(FLT_MAX, (float)(dv < 0 ? -1 : 1)) : (float)dv;
	return true;
}

/* Writes v; floats as the JSON writer writes them (exact). */
static void emit(jb_t *j, json_t *v)
{
	char buf[64];
	for (size_t k = 0; k < j->ns; k++) {
		if (j->s[k].ph == v) {
			puts_(j, "[");
			for (int64_t e = 0; e < j->s[k].n; e++) {
				uint32_t bits;
				memcpy(&bits, &j->s[k].v[e], sizeof bits);
				if (e)
					puts_(j, e % 16 ? ", " : ",\n");
				put(j, buf, nnn_json_f32_text(buf, sizeof buf, bits));
			}
			puts_(j, "]");
			return;
		}
	}
	switch (json_typeof(v)) {
	case JSON_OBJECT: {
		const char *key;
		json_t *val;
		int first = 1;
		puts_(j, "{");
		json_object_foreach (v, key, val) {
			json_t *ks = json_string(key);
			if (!ks) {
				j->oom = 1;
				return;
			}
			if (!first)
				puts_(j, ", ");
			first = 0;
			put_string(j, ks);
			json_decref(ks);
			puts_(j, ": ");
			emit(j, val);
		}
		puts_(j, "}\n");
		break;
	}
	case JSON_ARRAY: {
		puts_(j, "[");
		for (size_t k = 0; k < json_array_size(v); k++) {
			if (k)
				puts_(j, ", ");
			emit(j, json_array_get(v, k));
		}
		puts_(j, "]");
		break;
	}
	case JSON_STRING:
		put_string(j, v);
		break;
	case JSON_INTEGER:
		snprintf(buf, sizeof buf, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		puts_(j, buf);
		break;
	case JSON_REAL: {
		/* Every float of the form is an f32: its text is that f32's. One
		 * outside float32 stays as it was, for the reader to refuse. */
		double dv = json_real_value(v);
		float f;
		if (!f32_of(dv, &f)) {
			snprintf(buf, sizeof buf, "%.17g", dv);
			puts_(j, buf);
			break;
		}
		uint32_t bits;
		memcpy(&bits, &f, sizeof bits);
		put(j, buf, nnn_json_f32_text(buf, sizeof buf, bits));
		break;
	}
	case JSON_TRUE:
		puts_(j, "true");
		break;
	case JSON_FALSE:
		puts_(j, "false");
		break;
	default:
		puts_(j, "null");
		break;
	}
}

static json_t *int_array(const int32_t *v, size_t n)
{
	json_t *a = json_array();
	for (size_t k = 0; a && k < n; k++)
		json_array_append_new(a, json_integer(v[k]));
	return a;
}

static json_t *tensor_json(jb_t *j, const int32_t *dims, size_t rank, const float *v)
{
	int64_t n = 1;
	for (size_t k = 0; k < rank; k++)
		n *= dims[k];
	json_t *t = json_object();
	if (!t)
		return NULL;
	json_object_set_new(t, FNAME(tensor, TENSOR_DIMS), int_array(dims, rank));
	/* Weights read from a graph are trained parameters. */
	json_object_set_new(t, FNAME(tensor, TENSOR_REQUIRES_GRAD), json_true());
	json_object_set_new(t, FNAME(tensor, TENSOR_DATA), placeholder(j, v, n));
	return t;
}

static int64_t numel(const int32_t *d, size_t n)
{
	int64_t p = 1;
	for (size_t k = 0; k < n; k++)
		p *= d[k];
	return p;
}

/* The model from the graph alone. */
static json_t *graph_json(imp_t *im, jb_t *j)
{
	json_t *m = json_object(), *layers = json_array();
	uint64_t total = 0;
	if (!m || !layers) {
		json_decref(m);
		json_decref(layers);
		return NULL;
	}
	const char *doc = im->mp->doc_string ? im->mp->doc_string : "";
	json_t *desc = json_string(doc);
	json_object_set_new(m, FNAME(model, MODEL_DESCRIPTION), desc ? desc : json_string(""));
	for (size_t k = 0; k < im->nl; k++) {
		const layer_t *L = &im->L[k];
		json_t *o = json_object(), *act = json_object();
		if (!o || !act) {
			json_decref(o);
			json_decref(act);
			break;
		}
		int a = L->act < 0 ? NNN_ACTIVATION_ID_LINEAR : L->act;
		json_object_set_new(act, FNAME(activation, ACTIVATION_ID), json_string(nnn_activation_id_name(a)));
		if (a == NNN_ACTIVATION_ID_LEAKY_RELU)
			json_object_set_new(act, FNAME(leaky_relu, LEAKY_RELU_TAU), json_real(L->tau));
		json_object_set_new(o, FNAME(layer, LAYER_ID), json_string(nnn_layer_id_name(L->id)));
		json_object_set_new(o, FNAME(layer, LAYER_ACTIVATION), act);
		json_object_set_new(o, FNAME(layer, LAYER_DROPOUT), json_real(L->dropout));
		json_object_set_new(o, FNAME(layer, LAYER_BIAS), tensor_json(j, &L->nbias, 1, L->bias));
		if (L->id == NNN_LAYER_ID_DENSE) {
			json_object_set_new(o, FNAME(dense, DENSE_NEURONS), json_integer(L->wdims[1]));
			json_object_set_new(o, FNAME(dense, DENSE_WEIGHTS), tensor_json(j, L->wdims, 2, L->w));
			json_object_set_new(o, FNAME(dense, DENSE_FLATTEN), json_boolean(L->flatten));
		} else {
			json_object_set_new(o, FNAME(conv, CONV_FILTERS), json_integer(L->wdims[0]));
			json_object_set_new(o, FNAME(conv, CONV_KERNELS), tensor_json(j, L->wdims, (size_t)L->wrank, L->w));
			json_object_set_new(o, FNAME(conv, CONV_PADDING_TYPE),
			                    json_string(nnn_padding_type_name(L->padding_type)));
			json_object_set_new(o, FNAME(conv, CONV_PADDING_DIMS), int_array(L->pads, 2 * (size_t)(L->wrank - 2)));
		}
		total += (uint64_t)L->nbias + (uint64_t)numel(L->wdims, (size_t)L->wrank);
		json_array_append_new(layers, o);
	}
	json_object_set_new(m, FNAME(model, MODEL_PARAM_COUNT), json_integer((json_int_t)total));
	json_object_set_new(m, FNAME(model, MODEL_LAYERS), layers);
	return m;
}

/* ---- "nnn.fields": agreement with the graph ---- */

static int json_id(json_t *v, bool (*value_of)(const char *, int64_t *), int64_t *out)
{
	if (json_is_integer(v)) {
		*out = json_integer_value(v);
		return 1;
	}
	return json_is_string(v) && value_of(json_string_value(v), out);
}

static int dims_agree(json_t *t, const int32_t *dims, size_t n)
{
	json_t *d = json_is_object(t) ? json_object_get(t, FNAME(tensor, TENSOR_DIMS)) : NULL;
	if (!json_is_array(d) || json_array_size(d) != n)
		return 0;
	for (size_t k = 0; k < n; k++) {
		json_t *e = json_array_get(d, k);
		if (!json_is_integer(e) || json_integer_value(e) != dims[k])
			return 0;
	}
	return 1;
}

static int int_is(json_t *v, int64_t want)
{
	return json_is_integer(v) && json_integer_value(v) == want;
}

/* Whether any object in v has the key "npy": a .npy reference the
 * metadata has no business making. */
static int has_npy(json_t *v)
{
	const char *key;
	json_t *val;
	if (json_is_array(v)) {
		for (size_t k = 0; k < json_array_size(v); k++)
			if (has_npy(json_array_get(v, k)))
				return 1;
	} else if (json_is_object(v)) {
		json_object_foreach (v, key, val)
			if (!strcmp(key, "npy") || has_npy(val))
				return 1;
	}
	return 0;
}

/* Checks the metadata's layers against the graph's and puts the graph's
 * tensors in; 0 with the first disagreement in why. */
static int meta_fill(imp_t *im, jb_t *j, json_t *root, char *why, size_t nwhy)
{
	json_t *layers = json_is_object(root) ? json_object_get(root, FNAME(model, MODEL_LAYERS)) : NULL;
	if (!json_is_array(layers)) {
		snprintf(why, nwhy, "it has no layers array");
		return 0;
	}
	if (json_array_size(layers) != im->nl) {
		snprintf(why, nwhy, "it has %zu layers, the graph %zu", json_array_size(layers), im->nl);
		return 0;
	}
	if (has_npy(root)) {
		snprintf(why, nwhy, "it refers to .npy files");
		return 0;
	}
	for (size_t k = 0; k < im->nl; k++) {
		const layer_t *L = &im->L[k];
		json_t *o = json_array_get(layers, k);
		int64_t id, aid;
		if (!json_is_object(o) || !json_id(json_object_get(o, FNAME(layer, LAYER_ID)), nnn_layer_id_value, &id) ||
		    id != L->id) {
			snprintf(why, nwhy, "layers[%zu]: not a %s layer as in the graph", k, nnn_layer_id_name(L->id));
			return 0;
		}
		json_t *act = json_object_get(o, FNAME(layer, LAYER_ACTIVATION));
		int a = L->act < 0 ? NNN_ACTIVATION_ID_LINEAR : L->act;
		if (!json_is_object(act) ||
		    !json_id(json_object_get(act, FNAME(activation, ACTIVATION_ID)), nnn_activation_id_value, &aid) ||
		    aid != a) {
			snprintf(why, nwhy, "layers[%zu].activation: not %s as in the graph", k, nnn_activation_id_name(a));
			return 0;
		}
		if (a == NNN_ACTIVATION_ID_LEAKY_RELU) {
			json_t *tau = json_object_get(act, FNAME(leaky_relu, LEAKY_RELU_TAU));
			double dv = json_is_number(tau) ? json_number_value(tau) : NAN;
			float f;
			if (!f32_of(dv, &f) || memcmp(&f, &L->tau, sizeof f)) {
				snprintf(why, nwhy, "layers[%zu].activation.tau: not %.9g as in the graph", k, (double)L->tau);
				return 0;
			}
		}
		json_t *bias = json_object_get(o, FNAME(layer, LAYER_BIAS));
		if (!dims_agree(bias, &L->nbias, 1)) {
			snprintf(why, nwhy, "layers[%zu].bias.dims: not [%d] as in the graph", k, L->nbias);
			return 0;
		}
		json_t *w;
		if (L->id == NNN_LAYER_ID_DENSE) {
			w = json_object_get(o, FNAME(dense, DENSE_WEIGHTS));
			json_t *fl = json_object_get(o, FNAME(dense, DENSE_FLATTEN));
			if (!int_is(json_object_get(o, FNAME(dense, DENSE_NEURONS)), L->wdims[1]) ||
			    !dims_agree(w, L->wdims, 2)) {
				snprintf(why, nwhy, "layers[%zu]: not %d x %d weights as in the graph", k, L->wdims[0],
				         L->wdims[1]);
				return 0;
			}
			/* On a rank-2 input flatten changes nothing: either is the graph's. */
			if (!json_is_boolean(fl) || (json_is_true(fl) != !!L->flatten && L->in_rank != 2)) {
				snprintf(why, nwhy, "layers[%zu].flatten: not %s as in the graph", k,
				         L->flatten ? "true" : "false");
				return 0;
			}
		} else {
			w = json_object_get(o, FNAME(conv, CONV_KERNELS));
			json_t *pd = json_object_get(o, FNAME(conv, CONV_PADDING_DIMS));
			size_t np = 2 * (size_t)(L->wrank - 2);
			int ok = int_is(json_object_get(o, FNAME(conv, CONV_FILTERS)), L->wdims[0]) &&
			         dims_agree(w, L->wdims, (size_t)L->wrank) && json_is_array(pd) && json_array_size(pd) == np;
			for (size_t d = 0; ok && d < np; d++)
				ok = int_is(json_array_get(pd, d), L->pads[d]);
			if (!ok) {
				snprintf(why, nwhy, "layers[%zu]: its filters, kernels or padding_dims differ from the graph's", k);
				return 0;
			}
		}
		json_t *ph1 = placeholder(j, L->bias, L->nbias);
		json_t *ph2 = placeholder(j, L->w, numel(L->wdims, (size_t)L->wrank));
		if (!ph1 || !ph2)
			return 0;
		json_object_set_new(bias, FNAME(tensor, TENSOR_DATA), ph1);
		json_object_set_new(w, FNAME(tensor, TENSOR_DATA), ph2);
	}
	return 1;
}

static void jb_reset(jb_t *j)
{
	free(j->s);
	free(j->b);
	memset(j, 0, sizeof *j);
}

/* ---- the whole import ---- */

static void note(const nnn_onnx_read_opts_t *o, unsigned flag, const char *text)
{
	if (o->notes)
		*o->notes |= flag;
	if (o->note_text && o->note_size) {
		size_t at = strlen(o->note_text);
		if (at + 3 < o->note_size)
			snprintf(o->note_text + at, o->note_size - at, "%s%s", at ? "; " : "", text);
	}
}

static nnn_status_t fail(nnn_diags_t *d, nnn_status_t s, const char *path, const char *fmt, ...) NNN_PRINTF(4, 5);

static nnn_status_t fail(nnn_diags_t *d, nnn_status_t s, const char *path, const char *fmt, ...)
{
	char msg[NNN_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return nnn_diags_add(d, s, NNN_NO_OFFSET, path, "%s", msg);
}

/* The graph's input and output, the opset, the initializers. */
static nnn_status_t check_model(imp_t *im)
{
	Onnx__ModelProto *mp = im->mp;
	nnn_diags_t *d = im->diags;
	int have = 0;
	for (size_t k = 0; k < mp->n_opset_import; k++) {
		const Onnx__OperatorSetIdProto *o = mp->opset_import[k];
		if (!o->domain || !*o->domain || !strcmp(o->domain, "ai.onnx")) {
			have = 1;
			im->opset = o->has_version ? o->version : 0;
		}
	}
	if (!have)
		return fail(d, NNN_E_ONNX, "opset_import",
		            "no opset of the default ONNX domain: nnnkit reads opsets %d to %d", OPSET_MIN, OPSET_MAX);
	if (im->opset < OPSET_MIN || im->opset > OPSET_MAX)
		return fail(d, NNN_E_ONNX, "opset_import",
		            "opset %" PRId64 " of the default domain: nnnkit reads opsets %d to %d (convert the model with "
		            "onnx.version_converter.convert_version(m, 13))", im->opset, OPSET_MIN, OPSET_MAX);
	if (!mp->graph)
		return fail(d, NNN_E_ONNX, "graph", "the model has no graph");
	Onnx__GraphProto *g = im->g = mp->graph;
	if (g->n_sparse_initializer)
		return fail(d, NNN_E_ONNX, "graph.sparse_initializer",
		            "%zu sparse initializers: nnnkit reads dense tensors only", g->n_sparse_initializer);
	nnn_status_t st = NNN_OK;
	char why[320], path[64];
	for (size_t k = 0; k < g->n_initializer; k++) {
		cst_t *c = new_cst(im);
		if (!c)
			return nnn_diags_add(d, NNN_E_NOMEM, NNN_NO_OFFSET, "", "no memory for the initializers");
		if (!read_tensor(g->initializer[k], c, why, sizeof why)) {
			snprintf(path, sizeof path, "graph.initializer[%zu]", k);
			nnn_status_t s = fail(d, NNN_E_ONNX, path, "initializer '%.60s': %s", c->name, why);
			st = st ? st : s;
			im->nc--;
		}
	}
	if (st)
		return st;
	/* One input that is no initializer (older IRs list initializers as
	 * inputs too), one output. */
	const Onnx__ValueInfoProto *in = NULL;
	size_t nin = 0;
	for (size_t k = 0; k < g->n_input; k++) {
		if (!find_cst(im, g->input[k]->name)) {
			in = g->input[k];
			nin++;
		}
	}
	if (nin != 1)
		return fail(d, NNN_E_ONNX, "graph.input",
		            "%zu inputs that are not initializers: a .nnn model has one input", nin);
	if (g->n_output != 1)
		return fail(d, NNN_E_ONNX, "graph.output", "%zu outputs: a .nnn model has one output", g->n_output);
	const Onnx__TypeProto *tp = in->type;
	if (!in->name || !*in->name || !tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ||
	    !tp->tensor_type->shape)
		return fail(d, NNN_E_ONNX, "graph.input",
		            "input '%.60s' is not a tensor of known rank: nnnkit needs the input's rank",
		            in->name ? in->name : "");
	const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
	if (tt->has_elem_type && tt->elem_type != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT)
		return fail(d, NNN_E_ONNX, "graph.input", "input '%.60s' is %s: nnnkit runs float32 models", in->name,
		            dtype_name(tt->elem_type));
	if (tt->shape->n_dim < 2 || tt->shape->n_dim > NNN_MAX_RANK)
		return fail(d, NNN_E_ONNX, "graph.input", "input '%.60s' has rank %zu: expected [N, ...] of rank 2 to %d",
		            in->name, tt->shape->n_dim, NNN_MAX_RANK);
	im->cur = im->input = in->name;
	im->rank = im->in_rank = (int)tt->shape->n_dim;
	for (int k = 0; k < im->rank; k++) {
		const Onnx__TensorShapeProto__Dimension *dm = tt->shape->dim[k];
		/* A dim past 2^31 is as good as unknown (and keeps sums in range). */
		im->shape[k] = dm->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE &&
		                               dm->dim_value >= 0 && dm->dim_value <= INT32_MAX
		                       ? dm->dim_value
		                       : -1;
	}
	im->first_input = im->rank > 2 && input_channels_first(g);
	for (int k = 0; k < NNN_MAX_RANK; k++)
		im->perm[k] = im->first_input ? (k == 0 ? 0 : k == 1 ? im->rank - 1 : k - 1) : k;
	return NNN_OK;
}

/* Builds *out from the layers found: from "nnn.fields" when it agrees. */
static nnn_status_t build(imp_t *im, nnn_model_t **out)
{
	const nnn_onnx_read_opts_t *o = im->opts;
	nnn_json_read_opts_t jo = { .ctx = o->ctx };
	char why[NNN_MSG_MAX + 64] = "";
	const char *meta = NULL;
	for (size_t k = 0; k < im->mp->n_metadata_props; k++) {
		const Onnx__StringStringEntryProto *e = im->mp->metadata_props[k];
		if (e->key && !strcmp(e->key, NNN_ONNX_META_FIELDS))
			meta = e->value ? e->value : "";
	}
	jb_t j = { 0 };
	nnn_status_t st;
	if (meta) {
		json_error_t err;
		/* A description may hold NUL (written \u0000). */
		json_t *root = json_loads(meta, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &err);
		if (!root)
			snprintf(why, sizeof why, "it is not JSON (%s)", err.text);
		else if (meta_fill(im, &j, root, why, sizeof why))
			emit(&j, root);
		json_decref(root);
		if (!why[0] && !j.oom) {
			nnn_diags_t tmp;
			nnn_diags_init(&tmp);
			st = nnn_json_decode(j.b, j.n, &jo, out, &tmp);
			if (st == NNN_OK) {
				nnn_diags_free(&tmp);
				jb_reset(&j);
				return NNN_OK;
			}
			snprintf(why, sizeof why, "it does not read as the model's JSON form (%.80s: %.200s)",
			         tmp.n ? tmp.v[0].path : "", tmp.n ? tmp.v[0].msg : "");
			nnn_diags_free(&tmp);
		}
		jb_reset(&j);
		if (why[0]) {
			char line[NNN_MSG_MAX + 128];
			snprintf(line, sizeof line, "metadata \"%s\" ignored: %.380s; the model is built from the graph alone",
			         NNN_ONNX_META_FIELDS, why);
			note(o, NNN_ONNX_NOTE_META_IGNORED, line);
		}
	}
	json_t *root = graph_json(im, &j);
	if (root)
		emit(&j, root);
	json_decref(root);
	if (!root || j.oom) {
		jb_reset(&j);
		return nnn_diags_add(im->diags, NNN_E_NOMEM, NNN_NO_OFFSET, "", "no memory for the model's JSON form");
	}
	st = nnn_json_decode(j.b, j.n, &jo, out, im->diags);
	jb_reset(&j);
	return st;
}

static void imp_free(imp_t *im)
{
	for (size_t k = 0; k < im->nl; k++) {
		free(im->L[k].w);
		free(im->L[k].bias);
	}
	free(im->L);
	free(im->c);
	free(im->sym);
}

nnn_status_t nnn_onnx_decode(const void *buf, size_t len, const nnn_onnx_read_opts_t *opts, nnn_model_t **out,
                             nnn_diags_t *diags)
{
	static const nnn_onnx_read_opts_t none = { 0 };
	const nnn_onnx_read_opts_t *o = opts ? opts : &none;
	uint64_t max = o->max_bytes ? o->max_bytes : NNN_ONNX_MAX_BYTES;
	*out = NULL;
	if (o->notes)
		*o->notes = 0;
	if (o->note_text && o->note_size)
		o->note_text[0] = '\0';
	if (len > max)
		return fail(diags, NNN_E_ONNX, "",
		            "%zu bytes, over the limit of %" PRIu64 " bytes for an ONNX model (max_bytes): nnnkit reads ONNX "
		            "models up to that size", len, max);
	int depth = nesting(buf, len, &onnx__model_proto__descriptor, MAX_DEPTH);
	if (depth > MAX_DEPTH)
		return fail(diags, NNN_E_ONNX, "",
		            "messages nest more than %d deep: not an ONNX model nnnkit reads (a model nests about 8 deep)",
		            MAX_DEPTH);
	budget_t b = { 0, len <= (SIZE_MAX - ((size_t)1 << 20)) / 16 ? 16 * len + ((size_t)1 << 20) : SIZE_MAX, 0 };
	ProtobufCAllocator alloc = { b_alloc, b_free, &b };
	imp_t im = { .diags = diags, .opts = o, .last_bad = -1 };
	im.mp = onnx__model_proto__unpack(&alloc, len, buf);
	if (!im.mp) {
		if (b.over)
			return fail(diags, NNN_E_ONNX, "",
			            "parsing needs more than %zu bytes of memory (16 times the input, plus 1 MiB): not an ONNX "
			            "model nnnkit reads", b.cap);
		return fail(diags, NNN_E_ONNX, "",
		            "the %zu bytes are not an ONNX model (protobuf ModelProto): the file is not ONNX, or is cut "
		            "short or corrupt", len);
	}
	nnn_status_t st = check_model(&im);
	if (st == NNN_OK) {
		walk(&im);
		if (im.oom) {
			st = nnn_diags_add(diags, NNN_E_NOMEM, NNN_NO_OFFSET, "", "no memory for the graph's tensors");
		} else {
			if (!im.lost && im.flat_pending && im.flat_from_rank > 2)
				bad(&im, im.flat_node, "no Dense after it: nnn flattens only as part of a Dense layer");
			if (im.nbad)
				st = NNN_E_ONNX_OP;
			else if (strcmp(im.cur, im.g->output[0]->name ? im.g->output[0]->name : ""))
				st = fail(diags, NNN_E_ONNX, "graph.output",
				          "output '%.60s' is not the end of the chain of nodes ('%.60s'): nnnkit reads a chain "
				          "of layers", im.g->output[0]->name ? im.g->output[0]->name : "", im.cur);
			else if (!perm_ident(im.perm, im.rank) && !perm_first(im.perm, im.rank))
				st = fail(diags, NNN_E_ONNX, "graph.output",
				          "output '%.60s' is transposed in a way nnn's channels-last output cannot give: end the "
				          "graph channels-last or channels-first", im.cur);
		}
	}
	if (st == NNN_OK && (im.first_input || perm_first(im.perm, im.rank))) {
		char to_last[96], to_first[96], line[400];
		perm_text(im.in_rank, 1, to_last, sizeof to_last);
		perm_text(im.rank, 0, to_first, sizeof to_first);
		if (!im.first_input)
			snprintf(line, sizeof line,
			         "the graph gives a channels-first value: the model gives it channels-last [N, d1.., C]; "
			         "transpose outputs with y.transpose(%s)", to_first);
		else if (perm_first(im.perm, im.rank))
			snprintf(line, sizeof line,
			         "channels-first graph (NCHW): the model takes and gives channels-last values [N, d1.., C]; "
			         "transpose inputs with x.transpose(%s) and outputs back with y.transpose(%s)", to_last, to_first);
		else
			snprintf(line, sizeof line,
			         "channels-first graph (NCHW): the model takes channels-last inputs [N, d1.., C]; transpose "
			         "inputs with x.transpose(%s)", to_last);
		note(o, NNN_ONNX_NOTE_CHANNELS_FIRST, line);
	}
	if (st == NNN_OK)
		st = build(&im, out);
	imp_free(&im);
	onnx__model_proto__free_unpacked(im.mp, &alloc);
	return st;
}

nnn_status_t nnn_onnx_read_file(const char *path, const nnn_onnx_read_opts_t *opts, nnn_model_t **out,
                                nnn_diags_t *diags)
{
	static const nnn_onnx_read_opts_t none = { 0 };
	const nnn_onnx_read_opts_t *o = opts ? opts : &none;
	uint64_t max = o->max_bytes ? o->max_bytes : NNN_ONNX_MAX_BYTES;
	nnn_file_t *f;
	size_t size;
	*out = NULL;
	nnn_status_t st = nnn_file_map(path, &f, diags);
	if (st != NNN_OK)
		return st;
	nnn_file_bytes(f, &size);
	if (size > max) {
		nnn_file_close(f);
		return fail(diags, NNN_E_ONNX, "",
		            "%s: %zu bytes, over the limit of %" PRIu64 " bytes for an ONNX model (max_bytes)", path, size,
		            max);
	}
	unsigned char *b = malloc(size ? size : 1);
	if (!b) {
		nnn_file_close(f);
		return nnn_diags_add(diags, NNN_E_NOMEM, NNN_NO_OFFSET, "", "%s: no memory for its %zu bytes", path, size);
	}
	st = nnn_file_read(f, 0, b, size, diags);
	nnn_file_close(f);
	if (st == NNN_OK)
		st = nnn_onnx_decode(b, size, o, out, diags);
	free(b);
	return st;
}
