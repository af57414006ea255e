/* tensor.c: a model's parameter tensors by field path, and the numbers and
 * shapes of the JSON reports (stats, diff, edit). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <nnn/shape.h>

#include "cli.h"

nnn_status_t cli_params(const nnn_model_t *m, bool any, cli_param_t **out, size_t *n, nnn_diags_t *d)
{
	size_t total = 0, k = 0;
	int most = 0;
	*out = NULL;
	*n = 0;
	/* nnn_layer_params counts without filling when given no room. */
	for (int32_t i = 0; i < m->layer_count; i++) {
		int c = nnn_layer_params(&m->layers[i], NULL, 0);
		total += (size_t)c;
		most = c > most ? c : most;
	}
	cli_param_t *ts = calloc(total ? total : 1, sizeof *ts);
	nnn_param_t *ps = calloc(most ? (size_t)most : 1, sizeof *ps);
	if (!ts || !ps) {
		free(ts);
		free(ps);
		return nnn_diags_add(d, NNN_E_NOMEM, NNN_NO_OFFSET, "", "no memory to list %zu tensors", total);
	}
	for (int32_t i = 0; i < m->layer_count; i++) {
		int c = nnn_layer_params(&m->layers[i], ps, most);
		for (int j = 0; j < c && j < most && k < total; j++) {
			if (!any && ps[j].prim != NNN_PRIM_F32_ARRAY)
				continue;
			snprintf(ts[k].path, sizeof ts[k].path, "layers[%d].%s", (int)i, ps[j].name);
			ts[k].t = ps[j].tensor;
			ts[k].dims = ps[j].dims;
			ts[k].at = ps[j].data;
			ts[k].data = *ps[j].data;
			ts[k].prim = ps[j].prim;
			k++;
		}
	}
	free(ps);
	*out = ts;
	*n = k;
	return NNN_OK;
}

void cli_npy_note(const char *path, const char *file, const char *dtype)
{
	if (strcmp(dtype, "bfloat16"))
		return;
	cli_say(stderr, "nnnkit: note: %s holds %s, bfloat16, as its raw bits: dtype '<u2' (NumPy has no bfloat16); "
	        "its values are (np.load(f).astype('<u4') << 16).view('<f4'), and a '<u2' file goes back into the "
	        "tensor bit for bit\n", file, path);
}

const cli_param_t *cli_param_find(const cli_param_t *ts, size_t n, const char *path)
{
	/* The data field's name, from the schema's tensor record. */
	const char *data = nnn_tensor_desc.fields[nnn_tensor_desc.data].name;
	size_t len = strlen(path), dl = strlen(data);
	if (len > dl + 1 && path[len - dl - 1] == '.' && !strcmp(path + len - dl, data))
		len -= dl + 1;
	for (size_t i = 0; i < n; i++)
		if (strlen(ts[i].path) == len && !strncmp(ts[i].path, path, len))
			return &ts[i];
	return NULL;
}

bool cli_tensor_shape(const nnn_tensor_t *t, nnn_shape_t *s)
{
	return cli_dims_shape(&t->dims, s);
}

bool cli_dims_shape(const nnn_i32s_t *dims, nnn_shape_t *s)
{
	if (dims->n < 0 || dims->n > NNN_MAX_RANK)
		return false;
	s->rank = dims->n;
	for (int32_t i = 0; i < dims->n; i++)
		s->dims[i] = dims->v[i];
	return true;
}

char *cli_shape_text(const nnn_shape_t *s, char *buf, size_t size)
{
	return nnn_shape_format_as(s, &(nnn_dims_style_t){ "[", ",", "]", NULL, NULL, 0 }, buf, size);
}

void cli_values_stats(nnn_f32s_t a, cli_vstats_t *s)
{
	cli_elems_stats((nnn_elems_t){ a.bytes, a.n }, NNN_PRIM_F32_ARRAY, s);
}

/* One value into the running statistics (Welford's update; m2 its sum of squares). */
static void add_value(cli_vstats_t *s, double *m2, double x)
{
	if (isnan(x)) {
		s->nan++;
	} else if (isinf(x)) {
		*(x > 0 ? &s->pinf : &s->ninf) += 1;
	} else {
		s->zeros += x == 0;
		if (!s->finite || x < s->min)
			s->min = x;
		if (!s->finite || x > s->max)
			s->max = x;
		s->finite++;
		double delta = x - s->mean;
		s->mean += delta / (double)s->finite;
		*m2 += delta * (x - s->mean);
	}
}

void cli_elems_stats(nnn_elems_t a, nnn_prim_t prim, cli_vstats_t *s)
{
	double m2 = 0;
	nnn_ekind_t kind = nnn_prim_ekind(prim);
	int width = nnn_prim_ewidth(prim);
	nnn_f32s_t f = { a.bytes, a.n };
	memset(s, 0, sizeof *s);
	s->count = (uint64_t)(a.n > 0 ? a.n : 0);
	if (prim == NNN_PRIM_F32_ARRAY) /* the common case, without a switch per value */
		for (int32_t i = 0; i < a.n; i++)
			add_value(s, &m2, nnn_f32s_get(f, i));
	else
		for (int32_t i = 0; i < a.n; i++)
			add_value(s, &m2, nnn_elems_get(a, kind, width, i));
	s->std = s->finite ? sqrt(m2 / (double)s->finite) : 0;
}

void cli_json_num(FILE *f, double x)
{
	if (isnan(x))
		fputs("\"nan\"", f);
	else if (isinf(x))
		fputs(x < 0 ? "\"-inf\"" : "\"inf\"", f);
	else
		fprintf(f, "%.9g", x);
}

void cli_json_shape(FILE *f, const nnn_shape_t *s)
{
	char buf[24 * NNN_MAX_RANK];
	fputs(nnn_shape_format(s, buf, sizeof buf), f);
}


void cli_json_pshape(FILE *f, const nnn_pshape_t *s)
{
	if (s->rank < 0) {
		fputs("null", f);
		return;
	}
	nnn_shape_t sh = { .rank = s->rank };
	char buf[24 * NNN_MAX_RANK];
	for (int32_t i = 0; i < s->rank && i < NNN_MAX_RANK; i++)
		sh.dims[i] = s->dims[i];
	fputs(nnn_shape_format_as(&sh, &(nnn_dims_style_t){ "[", ", ", "]", NULL, "null", 0 }, buf, sizeof buf), f);
}
