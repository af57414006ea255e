/* import_conv: Conv as a Conv layer; its output shape comes from the shape engine.
 * The driver and the shared types: import.c, import.h. */
#define _POSIX_C_SOURCE 200809L
#include "import.h"

/* Checks Conv's weights W ([filters, channels, k1..kn], n = 1..3). */
static const cst_t *conv_weights(imp_t *im, int i)
{
	const cst_t *W = imp_float_input(im, i, 1, "weights W");
	if (!W)
		return NULL;
	if (W->rank < 3 || W->rank > 2 + MAX_SPATIAL) {
		imp_bad(im, i, "weights W '%.60s' have rank %zu: nnnkit reads Conv of 1 to 3 spatial dims "
		    "([filters, channels, k1..kn], n = 1..3)", W->name, W->rank);
		return NULL;
	}
	for (size_t d = 0; d < W->rank; d++) {
		if (W->dims[d] < 1 || W->dims[d] > INT32_MAX) {
			imp_bad(im, i, "weights W '%.60s' have dims[%zu] = %" PRId64 ", expected 1..2^31-1", W->name, d,
			    W->dims[d]);
			return NULL;
		}
	}
	if (W->n > INT32_MAX) {
		imp_bad(im, i, "weights W '%.60s' hold %" PRId64 " values: a .nnn tensor holds at most 2^31-1", W->name, W->n);
		return NULL;
	}
	return W;
}

/* Checks an attribute of ints is all ones (strides, dilations). */
static int conv_ones(imp_t *im, int i, const char *name)
{
	const Onnx__AttributeProto *a = imp_attr(im->g->node[i], name);
	char t[128];
	for (size_t d = 0; a && d < a->n_ints; d++) {
		if (a->ints[d] != 1) {
			imp_ints_text(a->ints, a->n_ints, t, sizeof t);
			imp_bad(im, i, "attribute %s = %s: nnn's Conv has %s 1 (supported: stride 1, dilation 1, group 1)", name, t,
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
	if (!imp_attr_int(nd, "group", 1, &group) || group != 1) {
		imp_bad(im, i, "attribute group = %" PRId64 ": nnn's Conv connects every channel to every filter (supported: "
		    "group 1)", group);
		return 0;
	}
	if ((a = imp_attr(nd, "kernel_shape"))) {
		int same = a->n_ints == n;
		for (size_t d = 0; same && d < n; d++)
			same = a->ints[d] == W->dims[2 + d];
		if (!same) {
			imp_ints_text(a->ints, a->n_ints, t, sizeof t);
			imp_bad(im, i, "attribute kernel_shape = %s disagrees with the weights' spatial dims", t);
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
	const Onnx__AttributeProto *ap = imp_attr(nd, "auto_pad"), *pads = imp_attr(nd, "pads");
	size_t n = W->rank - 2;
	snprintf(mode, msize, "NOTSET");
	if (ap) {
		size_t l = ap->s.len < msize - 1 ? ap->s.len : msize - 1;
		if (l)
			memcpy(mode, ap->s.data, l);
		mode[l] = '\0';
	}
	if (strcmp(mode, "NOTSET") && pads) {
		imp_bad(im, i, "attributes auto_pad = %s and pads both given: ONNX allows one or the other", mode);
		return 0;
	}
	if (!strcmp(mode, "NOTSET")) {
		if (pads && pads->n_ints != 2 * n) {
			imp_bad(im, i, "attribute pads has %zu values, expected %zu (begin then end of each spatial axis)",
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
		imp_bad(im, i, "attribute auto_pad = %s: expected NOTSET, VALID, SAME_UPPER or SAME_LOWER", mode);
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
	imp_ints_text(all, 2 * n, t, sizeof t);
	imp_bad(im, i, "padding %s (auto_pad %s): no padding type of the format gives it (each has its formulas: "
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
		imp_bad(im, i, "its input has rank %d, weights W '%.60s' rank %zu: expected the same rank", im->rank, W->name,
		    W->rank);
		return 0;
	}
	if (!imp_perm_first(im->perm, im->rank)) {
		imp_bad(im, i, "its input is not channels-first here: ONNX's Conv takes NCHW values, and nnnkit reads it on "
		    "the graph input (NCHW) or after a Transpose from channels-last to channels-first");
		return 0;
	}
	if (im->shape[1] >= 0 && im->shape[1] != W->dims[1]) {
		imp_bad(im, i, "weights W '%.60s' take %" PRId64 " channels, its input has %" PRId64, W->name, W->dims[1],
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
	float *b = imp_bias_of(im, i, B, f);
	layer_t *L = k && b ? imp_new_layer(im, NNN_LAYER_ID_CONV, i) : NULL;
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

void imp_op_conv(imp_t *im, int i)
{
	const Onnx__NodeProto *nd = im->g->node[i];
	const cst_t *W, *B = NULL;
	int64_t pb[MAX_SPATIAL] = { 0 }, pe[MAX_SPATIAL] = { 0 }, ptype;
	char mode[24];
	layer_t *L;
	if (!imp_attrs_known(im, i, "auto_pad,dilations,group,kernel_shape,pads,strides") || !(W = conv_weights(im, i)) ||
	    !conv_attrs(im, i, W) || !conv_padding(im, i, W, pb, pe, mode, sizeof mode) ||
	    (ptype = conv_padding_type(im, i, W, pb, pe, mode)) < 0 || !conv_chain(im, i, W))
		return;
	if (nd->n_input > 2 && *nd->input[2] && !(B = imp_float_input(im, i, 2, "bias B")))
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
