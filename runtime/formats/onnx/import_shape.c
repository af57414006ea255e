/* import_shape: Flatten, Reshape, Transpose, and the batch-size idiom that gives a Reshape its
 * batch size (Shape, Gather, Unsqueeze, Concat).
 * The driver and the shared types: import.c, import.h. */
#define _POSIX_C_SOURCE 200809L
#include "import.h"

/* Flatten and Reshape to [N, -1]: the next Dense flattens. */
static void flatten(imp_t *im, int i)
{
	if (im->flat_pending && im->rank == 2)
		return; /* a second flatten changes nothing */
	im->flat_from_rank = im->rank;
	if (!imp_perm_ident(im->perm, im->rank)) {
		if (imp_known_product(im, 1) < 0) {
			imp_bad(im, i, "it flattens a channels-first value whose dims are not all known: nnnkit reorders the "
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
		imp_set_ident(im);
	}
	int64_t p = imp_known_product(im, 1);
	im->shape[1] = p;
	im->rank = 2;
	im->flat_pending = 1;
	im->flat_node = i;
}

void imp_op_flatten(imp_t *im, int i)
{
	int64_t axis;
	if (!imp_attrs_known(im, i, "axis") || im->lost)
		return;
	if (!imp_attr_int(im->g->node[i], "axis", 1, &axis) || (axis != 1 && !(im->rank > 1 && axis == 1 - im->rank))) {
		imp_bad(im, i, "attribute axis = %" PRId64 ": nnnkit reads Flatten to [N, -1] (axis 1), which a Dense layer's "
		    "flatten does", axis);
		return;
	}
	flatten(im, i);
}

void imp_op_reshape(imp_t *im, int i)
{
	const Onnx__NodeProto *nd = im->g->node[i];
	int64_t allowzero;
	if (!imp_attrs_known(im, i, "allowzero"))
		return;
	if (nd->n_input > 1 && imp_find_sym(im, nd->input[1]) == SYM_N_MINUS1) {
		if (!im->lost)
			flatten(im, i); /* [x.size(0), -1] */
		return;
	}
	const cst_t *s = nd->n_input > 1 ? imp_find_cst(im, nd->input[1]) : NULL;
	if (!s || s->dtype != ONNX__TENSOR_PROTO__DATA_TYPE__INT64) {
		imp_bad(im, i, "its shape is not an INT64 initializer or Constant: nnnkit reads Reshape to a fixed [N, -1]");
		return;
	}
	const char *want = "nnnkit reads Reshape to [N, -1], [0, -1] or [-1, F] (a Dense layer's flatten)";
	char t[128];
	imp_ints_text(s->i, (size_t)(s->n < 8 ? s->n : 8), t, sizeof t);
	if (s->n != 2 || (s->i[0] == -1 && s->i[1] == -1) || s->i[0] < -1 || s->i[1] < -1 || s->i[1] == 0) {
		imp_bad(im, i, "shape %s: %s", t, want);
		return;
	}
	if (!imp_attr_int(nd, "allowzero", 0, &allowzero) || (allowzero && s->i[0] == 0)) {
		imp_bad(im, i, "shape %s with allowzero 1: a dim of 0 is then empty; %s", t, want);
		return;
	}
	if (im->lost)
		return;
	if (s->i[1] > 0) {
		int64_t p = imp_known_product(im, 1);
		if (p != s->i[1]) {
			imp_bad(im, i, "shape %s: the value has %s%" PRId64 " features after the batch; %s", t,
			    p < 0 ? "an unknown number of (" : "", p, want);
			return;
		}
	}
	flatten(im, i);
}

void imp_op_transpose(imp_t *im, int i)
{
	const Onnx__NodeProto *nd = im->g->node[i];
	const Onnx__AttributeProto *a = imp_attr(nd, "perm");
	char t[128];
	if (!imp_attrs_known(im, i, "perm") || im->lost)
		return;
	if (!a || a->n_ints != (size_t)im->rank) {
		imp_bad(im, i, "nnnkit reads Transpose with a perm attribute of the value's rank (%d)", im->rank);
		return;
	}
	int r = im->rank, seen[NNN_MAX_RANK] = { 0 }, ok = a->ints[0] == 0;
	for (int d = 0; ok && d < r; d++) {
		ok = a->ints[d] >= 0 && a->ints[d] < r && !seen[a->ints[d]];
		if (ok)
			seen[a->ints[d]] = 1;
	}
	imp_ints_text(a->ints, a->n_ints, t, sizeof t);
	if (!ok) {
		imp_bad(im, i, "perm %s: nnnkit reads Transposes that keep the batch axis first (between channels-last and "
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

/* ---- the batch-size idiom ---- */

/* An INT64 constant of one value. */
static int int_scalar(const imp_t *im, const char *name, int64_t *v)
{
	const cst_t *c = imp_find_cst(im, name);
	if (!c || c->dtype != ONNX__TENSOR_PROTO__DATA_TYPE__INT64 || c->n != 1)
		return 0;
	*v = c->i[0];
	return 1;
}

/* Shape of the chain's value, Gather of its dim 0, Unsqueeze to [N],
 * Concat with [-1]: what a Reshape to [N, -1] takes. Anything else of
 * these ops is refused. */
void imp_op_sym(imp_t *im, int i)
{
	const Onnx__NodeProto *nd = im->g->node[i];
	const char *op = nd->op_type;
	const char *why = "nnnkit reads Shape, Gather, Unsqueeze and Concat only as the batch size of a Reshape to "
	                  "[N, -1] (x.view(x.size(0), -1))";
	int64_t v, axis;
	if (!strcmp(op, "Shape")) {
		const Onnx__AttributeProto *st = imp_attr(nd, "start");
		if (!imp_attrs_known(im, i, "start,end")) {
			imp_add_sym(im, nd->output[0], SYM_SHAPE);
			return;
		}
		/* Of the chain's value or the graph's input: the same batch. */
		if (nd->n_input != 1 || (strcmp(nd->input[0], im->cur) && strcmp(nd->input[0], im->input) && !im->lost) ||
		    (st && st->i != 0))
			imp_bad(im, i, "%s", why);
		/* Refused or not, what it stands for, so that the nodes after it
		 * are not refused for it too. */
		imp_add_sym(im, nd->output[0], SYM_SHAPE);
	} else if (!strcmp(op, "Gather")) {
		if (!imp_attrs_known(im, i, "axis")) {
			imp_add_sym(im, nd->output[0], SYM_BATCH);
			return;
		}
		if (nd->n_input != 2 || imp_find_sym(im, nd->input[0]) != SYM_SHAPE || !int_scalar(im, nd->input[1], &v) ||
		    v != 0 || !imp_attr_int(nd, "axis", 0, &axis) || axis != 0)
			imp_bad(im, i, "%s", why);
		imp_add_sym(im, nd->output[0], SYM_BATCH);
	} else if (!strcmp(op, "Unsqueeze")) {
		const Onnx__AttributeProto *ax = imp_attr(nd, "axes");
		if (!imp_attrs_known(im, i, "axes")) {
			imp_add_sym(im, nd->output[0], SYM_BATCH1);
			return;
		}
		int ok = nd->n_input >= 1 && imp_find_sym(im, nd->input[0]) == SYM_BATCH;
		if (ok && ax) /* opset < 13 */
			ok = nd->n_input == 1 && ax->n_ints == 1 && ax->ints[0] == 0;
		else if (ok)
			ok = nd->n_input == 2 && int_scalar(im, nd->input[1], &v) && v == 0;
		if (!ok)
			imp_bad(im, i, "%s", why);
		imp_add_sym(im, nd->output[0], SYM_BATCH1);
	} else {
		if (!imp_attrs_known(im, i, "axis")) {
			imp_add_sym(im, nd->output[0], SYM_N_MINUS1);
			return;
		}
		if (nd->n_input != 2 || imp_find_sym(im, nd->input[0]) != SYM_BATCH1 || !int_scalar(im, nd->input[1], &v) ||
		    v != -1 || !imp_attr_int(nd, "axis", 0, &axis) || axis != 0)
			imp_bad(im, i, "%s", why);
		imp_add_sym(im, nd->output[0], SYM_N_MINUS1);
	}
}
