/* import_act: activations, Softmax, Dropout and Identity: what they add to the layer before.
 * The driver and the shared types: import.c, import.h. */
#define _POSIX_C_SOURCE 200809L
#include "import.h"

void imp_attach(imp_t *im, int i, int act, float tau)
{
	layer_t *L = im->nl ? &im->L[im->nl - 1] : NULL;
	if (im->lost)
		return;
	if (!L) {
		imp_bad(im, i, "an activation with no layer before it: nnn keeps an activation as part of the Conv or Dense "
		    "layer it follows, so it must come after a Conv, Gemm or MatMul");
		return;
	}
	if (L->act >= 0) {
		imp_bad(im, i, "a second activation after the layer of node '%.60s' (node '%.60s' gave it %s): a layer has "
		    "one activation", imp_node_name(im->g->node[L->node]), imp_node_name(im->g->node[L->act_node]),
		    nnn_activation_id_name(L->act));
		return;
	}
	L->act = act;
	L->act_node = i;
	L->tau = tau;
}

void imp_op_softmax(imp_t *im, int i)
{
	int64_t axis;
	if (!imp_attrs_known(im, i, "axis") || im->lost)
		return;
	int new = im->opset >= 13;
	if (!imp_attr_int(im->g->node[i], "axis", new ? -1 : 1, &axis) || im->rank < 1 || axis < -im->rank ||
	    axis >= im->rank) {
		imp_bad(im, i, "attribute axis = %" PRId64 " on a value of rank %d", axis, im->rank);
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
		imp_bad(im, i, "attribute axis = %" PRId64 " (opset %" PRId64 ") on a value of rank %d: nnn's Softmax is "
		    "over the channels (last) axis only%s", axis, im->opset, im->rank,
		    new ? "" : " (before opset 13 Softmax flattens the axes from `axis` on)");
		return;
	}
	imp_attach(im, i, NNN_ACTIVATION_ID_SOFTMAX, 0);
}

void imp_op_dropout(imp_t *im, int i)
{
	const Onnx__NodeProto *nd = im->g->node[i];
	float ratio = 0.5f;
	if (!imp_attrs_known(im, i, "ratio,seed,is_test"))
		return;
	if (!imp_attr_float(nd, "ratio", 0.5f, &ratio)) {
		imp_bad(im, i, "attribute ratio is not a float");
		return;
	}
	if (nd->n_input > 1 && *nd->input[1]) {
		const cst_t *r = imp_float_input(im, i, 1, "ratio");
		if (!r)
			return;
		if (r->n != 1) {
			imp_bad(im, i, "ratio '%.60s' has %" PRId64 " values, expected one", r->name, r->n);
			return;
		}
		ratio = r->f[0];
	}
	if (nd->n_input > 2 && *nd->input[2]) {
		/* Inference is training_mode false, the default: only a constant false is read. */
		const cst_t *t = imp_find_cst(im, nd->input[2]);
		if (!t || t->dtype != ONNX__TENSOR_PROTO__DATA_TYPE__BOOL || t->n != 1 || (t->b ? t->b[0] : t->b32[0])) {
			imp_bad(im, i, "training_mode '%.60s' is not a constant false: nnnkit reads inference graphs (Dropout is "
			    "kept as the layer's rate)", nd->input[2]);
			return;
		}
	}
	if (!(ratio >= 0.0f && ratio < 1.0f)) {
		imp_bad(im, i, "ratio %g: nnn's dropout is in [0, 1)", ratio);
		return;
	}
	if (im->lost)
		return;
	layer_t *L = im->nl ? &im->L[im->nl - 1] : NULL;
	if (L && L->has_dropout) {
		imp_bad(im, i, "a second Dropout for the layer of node '%.60s': a layer has one dropout rate",
		    imp_node_name(im->g->node[L->node]));
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

void imp_op_activation(imp_t *im, int i)
{
	const char *op = im->g->node[i]->op_type;
	if (!strcmp(op, "LeakyRelu")) {
		float alpha;
		if (!imp_attrs_known(im, i, "alpha"))
			return;
		if (!imp_attr_float(im->g->node[i], "alpha", 0.01f, &alpha) || !isfinite(alpha)) {
			imp_bad(im, i, "attribute alpha = %g: expected a finite float", alpha);
			return;
		}
		imp_attach(im, i, NNN_ACTIVATION_ID_LEAKY_RELU, alpha);
		return;
	}
	if (!imp_attrs_known(im, i, ""))
		return;
	imp_attach(im, i,
	       !strcmp(op, "Relu")      ? NNN_ACTIVATION_ID_RELU
	       : !strcmp(op, "Sigmoid") ? NNN_ACTIVATION_ID_SIGMOID
	                                : NNN_ACTIVATION_ID_TANH,
	       0);
}

void imp_op_identity(imp_t *im, int i)
{
	(void)imp_attrs_known(im, i, "");
}

/* ---- known functions: GELU as exporters write it ---- */

/* One node of a function: its op and its inputs, each the function's input
 * ('X'), the node before's output ('P'), a scalar constant near c ('c'), or
 * none ('-'). Add and Mul take theirs in either order. */
typedef struct fn_step {
	const char *op;
	char a, b;
	float c;
} fn_step_t;

typedef struct known_fn {
	const char *name;
	int n;
	fn_step_t s[9];
} known_fn_t;

#define GELU_ERF_TAIL { "Erf", 'P', '-', 0 }, { "Add", 'P', 'c', 1 }, { "Mul", 'X', 'P', 0 }, { "Mul", 'P', 'c', 0.5f }
#define GELU_TANH_TAIL                                                                                        \
	{ "Mul", 'P', 'c', 0.044715f }, { "Add", 'X', 'P', 0 }, { "Mul", 'P', 'c', 0.7978845608f },              \
	{ "Tanh", 'P', '-', 0 }, { "Add", 'P', 'c', 1 }, { "Mul", 'X', 'P', 0 }, { "Mul", 'P', 'c', 0.5f }

/* torch.onnx.export's nn.GELU() and nn.GELU(approximate='tanh'), and the
 * same with x / sqrt(2) as a product or x^3 as a Pow. */
static const known_fn_t known_fns[] = {
	{ "GELU", 5, { { "Div", 'X', 'c', 1.41421356f }, GELU_ERF_TAIL } },
	{ "GELU", 5, { { "Mul", 'X', 'c', 0.70710678f }, GELU_ERF_TAIL } },
	{ "GELU (tanh form)", 9, { { "Mul", 'X', 'X', 0 }, { "Mul", 'X', 'P', 0 }, GELU_TANH_TAIL } },
	{ "GELU (tanh form)", 8, { { "Pow", 'X', 'c', 3 }, GELU_TANH_TAIL } },
};

/* Whether `name` is a scalar near `want`: a constant already read, or a
 * Constant node among nodes from..to (read when the walk reaches them). */
static int scalar_near(imp_t *im, const char *name, float want, int from, int to)
{
	const cst_t *c = imp_find_cst(im, name);
	cst_t tmp;
	char why[8];
	for (int k = from; !c && k <= to; k++) {
		const Onnx__NodeProto *nd = im->g->node[k];
		if (strcmp(nd->op_type ? nd->op_type : "", "Constant") || nd->n_output != 1 || strcmp(nd->output[0], name) ||
		    nd->n_attribute != 1 || !nd->attribute[0]->name)
			continue;
		const Onnx__AttributeProto *a = nd->attribute[0];
		memset(&tmp, 0, sizeof tmp);
		if (!strcmp(a->name, "value_float")) {
			tmp.dtype = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
			tmp.fv = a->f;
			tmp.f = &tmp.fv;
			tmp.n = 1;
			c = &tmp;
		} else if (!strcmp(a->name, "value") && a->t && imp_read_tensor(a->t, &tmp, why, sizeof why)) {
			c = &tmp;
		}
	}
	if (!c || c->n != 1)
		return 0;
	double v = c->dtype == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT && c->f   ? c->f[0]
	           : c->dtype == ONNX__TENSOR_PROTO__DATA_TYPE__INT64 && c->i ? (double)c->i[0]
	                                                                      : NAN;
	return fabs(v - want) <= 1e-3 * fmax(1.0, fabs(want));
}

static int role_ok(imp_t *im, const char *in, char role, const fn_step_t *s, const char *x, const char *p, int from,
                   int to)
{
	return role == 'X' ? !strcmp(in, x) : role == 'P' ? p && !strcmp(in, p) : scalar_near(im, in, s->c, from, to);
}

/* Node j as step s of a function of input x after the value p. */
static int step_ok(imp_t *im, int j, const fn_step_t *s, const char *x, const char *p, int from)
{
	const Onnx__NodeProto *nd = im->g->node[j];
	if (strcmp(nd->op_type ? nd->op_type : "", s->op) || nd->n_output != 1 || nd->n_input != (s->b == '-' ? 1u : 2u))
		return 0;
	if (s->b == '-')
		return role_ok(im, nd->input[0], s->a, s, x, p, from, j);
	if (role_ok(im, nd->input[0], s->a, s, x, p, from, j) && role_ok(im, nd->input[1], s->b, s, x, p, from, j))
		return 1;
	return (!strcmp(s->op, "Add") || !strcmp(s->op, "Mul")) && role_ok(im, nd->input[1], s->a, s, x, p, from, j) &&
	       role_ok(im, nd->input[0], s->b, s, x, p, from, j);
}

/* The nodes of f from node i with input x, into nodes (Constant nodes
 * between them are skipped); 0 when they are not f. */
static int match_fn(imp_t *im, int i, const known_fn_t *f, const char *x, int *nodes)
{
	const char *p = NULL;
	int j = i;
	for (int k = 0; k < f->n; k++, j++) {
		while (k && j < (int)im->g->n_node && !strcmp(im->g->node[j]->op_type ? im->g->node[j]->op_type : "",
		                                                "Constant"))
			j++;
		if (j >= (int)im->g->n_node || !step_ok(im, j, &f->s[k], x, p, i))
			return 0;
		nodes[k] = j;
		p = im->g->node[j]->output[0];
	}
	return 1;
}

static void refuse_fn(imp_t *im, const known_fn_t *f, const int *nodes)
{
	char names[160];
	size_t at = 0;
	for (int k = 0; k < f->n && at < sizeof names; k++)
		at += (size_t)snprintf(names + at, sizeof names - at, "%s'%.40s'", k ? ", " : "",
		                       imp_node_name(im->g->node[nodes[k]]));
	if (at >= sizeof names) /* long names: the first and the last */
		snprintf(names, sizeof names, "'%.40s' to '%.40s' (%d nodes)", imp_node_name(im->g->node[nodes[0]]),
		         imp_node_name(im->g->node[nodes[f->n - 1]]), f->n);
	imp_bad_nodes(im, nodes[0], "nodes %s (graph.node[%d] to [%d]) form %s, which nnnkit's activations do not "
	              "include: ONNX import maps Relu, Sigmoid, Tanh, LeakyRelu and Softmax to them; export the net with "
	              "one of those in its place (nn.ReLU for nn.GELU, then fine-tune)", names, nodes[0],
	              nodes[f->n - 1], f->name);
	im->nop_refused++;
	im->grp_end = nodes[f->n - 1];
}

int imp_known_fn(imp_t *im, int i)
{
	const Onnx__NodeProto *nd = im->g->node[i];
	int nodes[ARRAY_LEN(known_fns[0].s)];
	for (size_t f = 0; f < ARRAY_LEN(known_fns); f++) {
		/* The function's input is either input of its first node. */
		for (size_t k = 0; k < nd->n_input && k < 2; k++) {
			if (match_fn(im, i, &known_fns[f], nd->input[k], nodes)) {
				refuse_fn(im, &known_fns[f], nodes);
				return 1;
			}
		}
	}
	return 0;
}
