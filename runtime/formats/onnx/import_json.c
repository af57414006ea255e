/* import_json: the model's JSON form built from the layers found, its float data put in as text
 * without a round trip through jansson's doubles.
 * The driver and the shared types: import.c, import.h. */
#define _POSIX_C_SOURCE 200809L
#include "import.h"

json_t *imp_placeholder(jb_t *j, const float *v, int64_t n)
{
	return imp_placeholder_elems(j, v, n, NNN_EK_FLOAT, 4);
}

json_t *imp_placeholder_elems(jb_t *j, const void *v, int64_t n, nnn_ekind_t kind, int width)
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
	j->s[j->ns++] = (slot_t){ ph, v, n, kind, width };
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
bool imp_f32_of(double dv, float *out)
{
	/* Half an ulp of FLT_MAX past it still rounds down to it. */
	const double limit = (double)FLT_MAX + ldexp(1.0, 127 - 24);
	if (!(fabs(dv) < limit))
		return false;
	*out = fabs(dv) >= (double)FLT_MAX ? copysignf(FLT_MAX, (float)(dv < 0 ? -1 : 1)) : (float)dv;
	return true;
}

/* A placeholder's numbers, when v is one (1), else 0: each by its bits,
 * as the JSON writer writes that element type. */
static int emit_slot(jb_t *j, json_t *v)
{
	char buf[64];
	for (size_t k = 0; k < j->ns; k++) {
		if (j->s[k].ph == v) {
			const slot_t *s = &j->s[k];
			puts_(j, "[");
			for (int64_t e = 0; e < s->n; e++) {
				uint64_t bits = 0;
				memcpy(&bits, (const unsigned char *)s->v + e * s->width, (size_t)s->width); /* little-endian host */
				if (e)
					puts_(j, e % 16 ? ", " : ",\n");
				put(j, buf, nnn_json_num_text(buf, sizeof buf, s->kind, s->width, bits));
			}
			puts_(j, "]");
			return 1;
		}
	}
	return 0;
}

static void emit_object(jb_t *j, json_t *v)
{
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
		imp_emit(j, val);
	}
	puts_(j, "}\n");
}

/* Every float of the form is an f32: its text is that f32's. One outside
 * float32 stays as it was, for the reader to refuse. */
static void emit_real(jb_t *j, double dv)
{
	char buf[64];
	float f;
	uint32_t bits;
	if (!imp_f32_of(dv, &f)) {
		snprintf(buf, sizeof buf, "%.17g", dv);
		puts_(j, buf);
		return;
	}
	memcpy(&bits, &f, sizeof bits);
	put(j, buf, nnn_json_f32_text(buf, sizeof buf, bits));
}

/* Writes v; floats as the JSON writer writes them (exact). */
void imp_emit(jb_t *j, json_t *v)
{
	char buf[64];
	if (emit_slot(j, v))
		return;
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		emit_object(j, v);
		break;
	case JSON_ARRAY:
		puts_(j, "[");
		for (size_t k = 0; k < json_array_size(v); k++) {
			if (k)
				puts_(j, ", ");
			imp_emit(j, json_array_get(v, k));
		}
		puts_(j, "]");
		break;
	case JSON_STRING:
		put_string(j, v);
		break;
	case JSON_INTEGER:
		snprintf(buf, sizeof buf, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		puts_(j, buf);
		break;
	case JSON_REAL:
		emit_real(j, json_real_value(v));
		break;
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

json_t *imp_tensor_json(jb_t *j, const int32_t *dims, size_t rank, const float *v)
{
	return imp_tensor_json_elems(j, dims, rank, v, NNN_EK_FLOAT, 4);
}

json_t *imp_tensor_json_elems(jb_t *j, const int32_t *dims, size_t rank, const void *v, nnn_ekind_t kind, int width)
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
	json_object_set_new(t, FNAME(tensor, TENSOR_DATA), imp_placeholder_elems(j, v, n, kind, width));
	return t;
}

int64_t imp_numel(const int32_t *d, size_t n)
{
	int64_t p = 1;
	for (size_t k = 0; k < n; k++)
		p *= d[k];
	return p;
}

/* The model from the graph alone. */
json_t *imp_graph_json(imp_t *im, jb_t *j)
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
		json_object_set_new(act, FNAME(activation, ACTIVATION_ID),
		                    json_string(L->pa ? L->pa->name : nnn_activation_id_name(a)));
		if (a == NNN_ACTIVATION_ID_LEAKY_RELU && !L->pa)
			json_object_set_new(act, FNAME(leaky_relu, LEAKY_RELU_TAU), json_real(L->tau));
		if (L->pa && !imp_pfields_json(j, L->pa, act))
			j->oom = 1;
		json_object_set_new(o, FNAME(layer, LAYER_ID), json_string(L->pl ? L->pl->name : nnn_layer_id_name(L->id)));
		json_object_set_new(o, FNAME(layer, LAYER_ACTIVATION), act);
		json_object_set_new(o, FNAME(layer, LAYER_DROPOUT), json_real(L->dropout));
		json_object_set_new(o, FNAME(layer, LAYER_BIAS), imp_tensor_json(j, &L->nbias, 1, L->bias));
		if (L->pl) {
			if (!imp_pfields_json(j, L->pl, o))
				j->oom = 1;
			for (int t = 0; t < L->pl->nt; t++)
				total += (uint64_t)imp_numel(L->pl->t[t].dims, (size_t)L->pl->t[t].rank);
		} else if (L->id == NNN_LAYER_ID_DENSE) {
			json_object_set_new(o, FNAME(dense, DENSE_NEURONS), json_integer(L->wdims[1]));
			json_object_set_new(o, FNAME(dense, DENSE_WEIGHTS), imp_tensor_json(j, L->wdims, 2, L->w));
			json_object_set_new(o, FNAME(dense, DENSE_FLATTEN), json_boolean(L->flatten));
		} else {
			json_object_set_new(o, FNAME(conv, CONV_FILTERS), json_integer(L->wdims[0]));
			json_object_set_new(o, FNAME(conv, CONV_KERNELS), imp_tensor_json(j, L->wdims, (size_t)L->wrank, L->w));
			json_object_set_new(o, FNAME(conv, CONV_PADDING_TYPE),
			                    json_string(nnn_padding_type_name(L->padding_type)));
			json_object_set_new(o, FNAME(conv, CONV_PADDING_DIMS), int_array(L->pads, 2 * (size_t)(L->wrank - 2)));
		}
		total += (uint64_t)L->nbias + (L->pl ? 0 : (uint64_t)imp_numel(L->wdims, (size_t)L->wrank));
		json_array_append_new(layers, o);
	}
	json_object_set_new(m, FNAME(model, MODEL_PARAM_COUNT), json_integer((json_int_t)total));
	json_object_set_new(m, FNAME(model, MODEL_LAYERS), layers);
	return m;
}

void imp_jb_reset(jb_t *j)
{
	free(j->s);
	free(j->b);
	memset(j, 0, sizeof *j);
}
