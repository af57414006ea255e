/* tensor.c: a model's parameter tensors by field path, and the numbers and
 * shapes of the JSON reports (stats, diff, edit). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <nnn/shape.h>

#include "cli.h"

nnn_status_t cli_params(const nnn_model_t *m, cli_param_t **out, size_t *n, nnn_diags_t *d)
{
	size_t total = 0, k = 0;
	*out = NULL;
	*n = 0;
	/* nnn_layer_tensors counts without filling when given no room. */
	for (int32_t i = 0; i < m->layer_count; i++)
		total += (size_t)nnn_layer_tensors(&m->layers[i], NULL, 0);
	cli_param_t *ts = calloc(total ? total : 1, sizeof *ts);
	nnn_named_tensor_t *named = calloc(total ? total : 1, sizeof *named);
	if (!ts || !named) {
		free(ts);
		free(named);
		return nnn_diags_add(d, NNN_E_NOMEM, NNN_NO_OFFSET, "", "no memory to list %zu tensors", total);
	}
	for (int32_t i = 0; i < m->layer_count; i++) {
		int c = nnn_layer_tensors(&m->layers[i], named, (int)(total - k));
		for (int j = 0; j < c && k < total; j++, k++) {
			snprintf(ts[k].path, sizeof ts[k].path, "layers[%d].%s", (int)i, named[j].name);
			ts[k].t = named[j].tensor;
		}
	}
	free(named);
	*out = ts;
	*n = k;
	return NNN_OK;
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
	if (t->dims.n < 0 || t->dims.n > NNN_MAX_RANK)
		return false;
	s->rank = t->dims.n;
	for (int32_t i = 0; i < t->dims.n; i++)
		s->dims[i] = t->dims.v[i];
	return true;
}

char *cli_shape_text(const nnn_shape_t *s, char *buf, size_t size)
{
	return nnn_shape_format_as(s, &(nnn_dims_style_t){ "[", ",", "]", NULL, NULL, 0 }, buf, size);
}

void cli_values_stats(nnn_f32s_t a, cli_vstats_t *s)
{
	double m2 = 0;
	memset(s, 0, sizeof *s);
	s->count = (uint64_t)(a.n > 0 ? a.n : 0);
	for (int32_t i = 0; i < a.n; i++) {
		double x = nnn_f32s_get(a, i);
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
			m2 += delta * (x - s->mean);
		}
	}
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
