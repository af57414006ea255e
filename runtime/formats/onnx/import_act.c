/* import_act: activations, Softmax, Dropout and Identity: what they add to the layer before.
 * The driver and the shared types: import.c, import.h. */
#define _POSIX_C_SOURCE 200809L
#include "import.h"

static void attach(imp_t *im, int i, int act, float tau)
{
	layer_t *L = im->nl ? &im->L[im->nl - 1] : NULL;
	if (im->lost)
		return;
	if (!L) {
		imp_bad(im, i, "an activation with no layer before it: nnn keeps an activation as part of the Conv or Dense "
		    "layer it follows");
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
	attach(im, i, NNN_ACTIVATION_ID_SOFTMAX, 0);
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
		attach(im, i, NNN_ACTIVATION_ID_LEAKY_RELU, alpha);
		return;
	}
	if (!imp_attrs_known(im, i, ""))
		return;
	attach(im, i,
	       !strcmp(op, "Relu")      ? NNN_ACTIVATION_ID_RELU
	       : !strcmp(op, "Sigmoid") ? NNN_ACTIVATION_ID_SIGMOID
	                                : NNN_ACTIVATION_ID_TANH,
	       0);
}

void imp_op_identity(imp_t *im, int i)
{
	(void)imp_attrs_known(im, i, "");
}
