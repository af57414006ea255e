/* import.h: what the files of ONNX import (runtime/formats/onnx/import*.c)
 * share: the state of one import, the layers found, and the functions each
 * file gives the others. Internal: libnnn is built with hidden visibility, so
 * none of these is exported. */
#ifndef NNN_ONNX_IMPORT_H
#define NNN_ONNX_IMPORT_H

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

/* Spatial dims of a Conv (ONNX runtimes stop at 3). */
#define MAX_SPATIAL 3

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* The JSON form's names, from the schema's descriptors. */
#define FNAME(rec, at) (nnn_##rec##_desc.fields[NNN_AT_##at].name)

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
	const void *raw;        /* the data as little-endian bytes, any type: raw_data, or
	                         * float_data / int64_data (borrowed); NULL for other fields */
	float fv;               /* a scalar Constant's value */
	int64_t iv;
} cst_t;

/* ---- the fields a plugin type's onnx_import hook found (import_plugin.c) ---- */

typedef struct ptensor {
	char *field;
	int32_t dims[NNN_MAX_RANK];
	int rank;
	void *v;                /* owned: elements of kind and width, little-endian (float32: host floats) */
	nnn_ekind_t kind;
	int width;
} ptensor_t;

typedef struct pfields {
	const char *name;       /* the type's name, as the JSON form says it */
	json_t *vals;           /* the fields other than tensors, by name (owned) */
	ptensor_t *t;
	int nt;
} pfields_t;

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
	pfields_t *pl;          /* a plugin's layer: what its hook found (owned); NULL: Dense or Conv */
	pfields_t *pa;          /* a plugin's activation: the same */
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
	int nop_refused;        /* nodes refused for their op type: the ops converted are listed once, after them */
	int grp_end;            /* the last node of a known function refused whole (imp_known_fn); -1: none */
	int oom;
	/* the value on the chain, and the graph's input */
	const char *cur, *input;
	int cur_node;           /* the node that gave cur; -1: the graph's input */
	const Onnx__TensorShapeProto *in_shape; /* the graph input's, as it declares it */
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

/* ---- the model's JSON form ---- */

/* A tensor's data, put where the placeholder `ph` is when the text is made. */
typedef struct slot {
	json_t *ph;
	const void *v;          /* n elements of kind and width, little-endian */
	int64_t n;
	nnn_ekind_t kind;
	int width;
} slot_t;

typedef struct jb {
	slot_t *s;
	size_t ns, caps;
	char *b;
	size_t n, cap;
	int oom;
} jb_t;

/* ---- import_graph.c ---- */

const char *imp_node_name(const Onnx__NodeProto *nd);
/* The channels-first layout of rank r: [0, r-1, 1, .., r-2]. */
int imp_perm_first(const int *p, int r);
int imp_perm_ident(const int *p, int r);
void imp_set_ident(imp_t *im);
/* numpy's axes for a value of rank r: channels-first to channels-last
 * (to_last: 0, 2, .., r-1, 1) or back (0, r-1, 1, .., r-2). */
void imp_perm_text(int r, int to_last, char *buf, size_t size);
void imp_bad(imp_t *im, int i, const char *fmt, ...) NNN_PRINTF(3, 4);
/* The same for several nodes that node i begins: fmt names them itself. */
void imp_bad_nodes(imp_t *im, int i, const char *fmt, ...) NNN_PRINTF(3, 4);
const cst_t *imp_find_cst(const imp_t *im, const char *name);
int imp_find_sym(const imp_t *im, const char *name);
void imp_add_sym(imp_t *im, const char *name, int kind);
cst_t *imp_new_cst(imp_t *im);
/* Reads a tensor into c, checking it; a problem is a message in why
 * (returns 0). E_ONNX for external data, E_ONNX for a malformed tensor. */
int imp_read_tensor(const Onnx__TensorProto *t, cst_t *c, char *why, size_t nwhy);
const char *imp_dtype_name(int32_t t);
/* The width of ONNX data type t's elements and their kind (nnn_onnx_dtype
 * read backwards); 0 for a type without one (STRING, COMPLEX64...). */
int imp_dtype_width(int32_t t, nnn_ekind_t *kind);
/* Whether constant c holds elements of kind and width (its ONNX type
 * nnn_onnx_dtype's, its bytes raw); else 0, why saying "is BFLOAT16,
 * expected FLOAT16". */
int imp_const_of_type(const cst_t *c, nnn_ekind_t kind, int width, char *why, size_t nwhy);
/* A float constant for input `k` of node i, or NULL (refused, said why). */
const cst_t *imp_float_input(imp_t *im, int i, size_t k, const char *what);
const Onnx__AttributeProto *imp_attr(const Onnx__NodeProto *nd, const char *name);
/* Whether every attribute is one of `known` (comma-separated); else refused. */
int imp_attrs_known(imp_t *im, int i, const char *known);
int imp_attr_int(const Onnx__NodeProto *nd, const char *name, int64_t dflt, int64_t *v);
int imp_attr_float(const Onnx__NodeProto *nd, const char *name, float dflt, float *v);
void imp_ints_text(const int64_t *v, size_t n, char *buf, size_t size);
layer_t *imp_new_layer(imp_t *im, int id, int i);
float *imp_bias_of(imp_t *im, int i, const cst_t *b, int64_t n);
int64_t imp_known_product(const imp_t *im, int from);
void imp_op_constant(imp_t *im, int i);

/* ---- import_dense.c ---- */

void imp_op_gemm(imp_t *im, int i);
void imp_op_matmul(imp_t *im, int i);
/* An Add right after a MatMul: the Dense layer's bias. */
void imp_op_add(imp_t *im, int i);

/* ---- import_conv.c ---- */

void imp_op_conv(imp_t *im, int i);

/* ---- import_shape.c ---- */

void imp_op_flatten(imp_t *im, int i);
void imp_op_reshape(imp_t *im, int i);
void imp_op_transpose(imp_t *im, int i);
/* Shape of the chain's value, Gather of its dim 0, Unsqueeze to [N],
 * Concat with [-1]: what a Reshape to [N, -1] takes. Anything else of
 * these ops is refused. */
void imp_op_sym(imp_t *im, int i);

/* ---- import_act.c ---- */

/* Gives the layer before node i its activation, or refuses node i. */
void imp_attach(imp_t *im, int i, int act, float tau);

void imp_op_softmax(imp_t *im, int i);
void imp_op_dropout(imp_t *im, int i);
void imp_op_activation(imp_t *im, int i);
void imp_op_identity(imp_t *im, int i);
/* Whether node i begins a known function nnn has no activation for (GELU
 * as Div, Erf, Add, Mul, Mul): if so it is refused in one diagnostic and
 * im->grp_end is its last node. */
int imp_known_fn(imp_t *im, int i);

/* ---- import_plugin.c ---- */

/* Offers nodes from i on to the plugins' onnx_import hooks (ABI 1.7):
 * the number of nodes a type took (its layer, or the activation of the
 * layer before, recorded), or 0. */
int imp_plugin_match(imp_t *im, int i);
void imp_pfields_free(pfields_t *f);
/* The JSON fields of f, tensors as placeholders, into o. */
int imp_pfields_json(jb_t *j, const pfields_t *f, json_t *o);
/* Checks the metadata's layer o has f's tensors and puts their data in; 0
 * with why. */
int imp_pfields_meta(jb_t *j, const pfields_t *f, json_t *o, size_t k, char *why, size_t nwhy);

/* ---- import_json.c ---- */

json_t *imp_tensor_json(jb_t *j, const int32_t *dims, size_t rank, const float *v);
/* The same of elements of any kind and width (little-endian bytes). */
json_t *imp_tensor_json_elems(jb_t *j, const int32_t *dims, size_t rank, const void *v, nnn_ekind_t kind, int width);

json_t *imp_placeholder(jb_t *j, const float *v, int64_t n);
json_t *imp_placeholder_elems(jb_t *j, const void *v, int64_t n, nnn_ekind_t kind, int width);
/* The float32 a JSON number stands for, as the JSON form's reader takes it:
 * rounded to nearest, so the shortest text of FLT_MAX ("3.4028235e+38", a
 * little above it) is FLT_MAX. False when it is beyond float32 (or NaN). */
bool imp_f32_of(double dv, float *out);
/* Writes v; floats as the JSON writer writes them (exact). */
void imp_emit(jb_t *j, json_t *v);
int64_t imp_numel(const int32_t *d, size_t n);
/* The model from the graph alone. */
json_t *imp_graph_json(imp_t *im, jb_t *j);
void imp_jb_reset(jb_t *j);

/* ---- import_meta.c ---- */

/* Checks the metadata's layers against the graph's and puts the graph's
 * tensors in; 0 with the first disagreement in why. */
int imp_meta_fill(imp_t *im, jb_t *j, json_t *root, char *why, size_t nwhy);

#endif
