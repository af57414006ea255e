/* import_meta: "nnn.fields", the JSON form export writes as metadata: used when it agrees with the
 * graph, with the graph's tensors put in.
 * The driver and the shared types: import.c, import.h. */
#define _POSIX_C_SOURCE 200809L
#include "import.h"

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

/* Checks layer k's activation (o's) is the graph's. */
static int meta_act(const layer_t *L, json_t *o, size_t k, char *why, size_t nwhy)
{
	json_t *act = json_object_get(o, FNAME(layer, LAYER_ACTIVATION));
	int a = L->act < 0 ? NNN_ACTIVATION_ID_LINEAR : L->act;
	int64_t aid;
	if (L->pa) { /* a plugin's: its name, or its ID */
		json_t *id = json_is_object(act) ? json_object_get(act, FNAME(activation, ACTIVATION_ID)) : NULL;
		if (json_is_string(id) ? strcmp(json_string_value(id), L->pa->name) : !int_is(id, a)) {
			snprintf(why, nwhy, "layers[%zu].activation: not %s as in the graph", k, L->pa->name);
			return 0;
		}
		return 1;
	}
	if (!json_is_object(act) ||
	    !json_id(json_object_get(act, FNAME(activation, ACTIVATION_ID)), nnn_activation_id_value, &aid) || aid != a) {
		snprintf(why, nwhy, "layers[%zu].activation: not %s as in the graph", k, nnn_activation_id_name(a));
		return 0;
	}
	if (a == NNN_ACTIVATION_ID_LEAKY_RELU) {
		json_t *tau = json_object_get(act, FNAME(leaky_relu, LEAKY_RELU_TAU));
		double dv = json_is_number(tau) ? json_number_value(tau) : NAN;
		float f;
		if (!imp_f32_of(dv, &f) || memcmp(&f, &L->tau, sizeof f)) {
			snprintf(why, nwhy, "layers[%zu].activation.tau: not %.9g as in the graph", k, (double)L->tau);
			return 0;
		}
	}
	return 1;
}

/* Checks layer k's own fields (o's) are the graph's; returns its weights
 * tensor (Dense weights, Conv kernels), or NULL with why. */
static json_t *meta_body(const layer_t *L, json_t *o, size_t k, char *why, size_t nwhy)
{
	json_t *w;
	if (L->id == NNN_LAYER_ID_DENSE) {
		w = json_object_get(o, FNAME(dense, DENSE_WEIGHTS));
		json_t *fl = json_object_get(o, FNAME(dense, DENSE_FLATTEN));
		if (!int_is(json_object_get(o, FNAME(dense, DENSE_NEURONS)), L->wdims[1]) || !dims_agree(w, L->wdims, 2)) {
			snprintf(why, nwhy, "layers[%zu]: not %d x %d weights as in the graph", k, L->wdims[0], L->wdims[1]);
			return NULL;
		}
		/* On a rank-2 input flatten changes nothing: either is the graph's. */
		if (!json_is_boolean(fl) || (json_is_true(fl) != !!L->flatten && L->in_rank != 2)) {
			snprintf(why, nwhy, "layers[%zu].flatten: not %s as in the graph", k, L->flatten ? "true" : "false");
			return NULL;
		}
		return w;
	}
	w = json_object_get(o, FNAME(conv, CONV_KERNELS));
	json_t *pd = json_object_get(o, FNAME(conv, CONV_PADDING_DIMS));
	size_t np = 2 * (size_t)(L->wrank - 2);
	int ok = int_is(json_object_get(o, FNAME(conv, CONV_FILTERS)), L->wdims[0]) &&
	         dims_agree(w, L->wdims, (size_t)L->wrank) && json_is_array(pd) && json_array_size(pd) == np;
	for (size_t d = 0; ok && d < np; d++)
		ok = int_is(json_array_get(pd, d), L->pads[d]);
	if (!ok) {
		snprintf(why, nwhy, "layers[%zu]: its filters, kernels or padding_dims differ from the graph's", k);
		return NULL;
	}
	return w;
}

/* Checks the metadata's layers against the graph's and puts the graph's
 * tensors in; 0 with the first disagreement in why. */
int imp_meta_fill(imp_t *im, jb_t *j, json_t *root, char *why, size_t nwhy)
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
		json_t *o = json_array_get(layers, k), *w;
		int64_t id;
		json_t *oid = json_is_object(o) ? json_object_get(o, FNAME(layer, LAYER_ID)) : NULL;
		bool same = L->pl ? (json_is_string(oid) ? !strcmp(json_string_value(oid), L->pl->name) : int_is(oid, L->id))
		                  : json_id(oid, nnn_layer_id_value, &id) && id == L->id;
		if (!same) {
			snprintf(why, nwhy, "layers[%zu]: not a %s layer as in the graph",
			         k, L->pl ? L->pl->name : nnn_layer_id_name(L->id));
			return 0;
		}
		if (!meta_act(L, o, k, why, nwhy))
			return 0;
		json_t *bias = json_object_get(o, FNAME(layer, LAYER_BIAS));
		if (!dims_agree(bias, &L->nbias, 1)) {
			snprintf(why, nwhy, "layers[%zu].bias.dims: not [%d] as in the graph", k, L->nbias);
			return 0;
		}
		json_t *ph1;
		if (L->pl) {
			if (!imp_pfields_meta(j, L->pl, o, k, why, nwhy) || !(ph1 = imp_placeholder(j, L->bias, L->nbias)))
				return 0;
			json_object_set_new(bias, FNAME(tensor, TENSOR_DATA), ph1);
			continue;
		}
		if (!(w = meta_body(L, o, k, why, nwhy)))
			return 0;
		ph1 = imp_placeholder(j, L->bias, L->nbias);
		json_t *ph2 = imp_placeholder(j, L->w, imp_numel(L->wdims, (size_t)L->wrank));
		if (!ph1 || !ph2)
			return 0;
		json_object_set_new(bias, FNAME(tensor, TENSOR_DATA), ph1);
		json_object_set_new(w, FNAME(tensor, TENSOR_DATA), ph2);
	}
	return 1;
}
