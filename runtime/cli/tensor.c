/* tensor.c: a model's parameter tensors by field path, and the numbers and
 * shapes of the JSON reports (stats, diff, edit). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <nnn/shape.h>

#include "cli.h"

/* The value of an integer member described by f (a variant's tag). */
static int64_t tag_of(const nnn_fdesc_t *f, const void *p)
{
	return f->prim == NNN_PRIM_U8 ? *(const uint8_t *)p : f->prim == NNN_PRIM_I32 ? *(const int32_t *)p
	                                                                             : (int64_t) * (const uint64_t *)p;
}

/* The param tensors of record rd at base (a layer, or a variant's record)
 * whose data are not float32, into out[*k..max) with paths "prefix.field";
 * counts all of them in *k. Variants the schema selects are followed; a
 * plugin's (ext) tensors are float32 and listed by nnn_layer_tensors. */
static void other_tensors(const nnn_rdesc_t *rd, const void *base, const char *prefix, cli_param_t *out, size_t max,
                          size_t *k)
{
	for (int32_t i = 0; i < rd->nfields; i++) {
		const nnn_fdesc_t *f = &rd->fields[i];
		const char *p = (const char *)base + f->offset;
		if (f->kind == NNN_FK_VARIANT) {
			int64_t tag = tag_of(&rd->fields[f->ref], (const char *)base + rd->fields[f->ref].offset);
			for (int32_t v = 0; v < f->nvariants; v++)
				if (f->variants[v].value == tag)
					other_tensors(f->variants[v].rec, p, prefix, out, max, k);
		} else if (f->kind == NNN_FK_RECORD && (f->flags & NNN_FD_PARAM) && f->rec->data >= 0 &&
		           f->rec->fields[f->rec->data].prim != NNN_PRIM_F32_ARRAY) {
			const nnn_fdesc_t *df = &f->rec->fields[f->rec->data];
			if (*k < max) {
				cli_param_t *t = &out[*k];
				snprintf(t->path, sizeof t->path, "%s.%s", prefix, f->name);
				t->t = NULL;
				t->dims = (const nnn_i32s_t *)(p + f->rec->fields[f->rec->dims].offset);
				t->data = *(const nnn_elems_t *)(p + df->offset);
				t->prim = df->prim;
			}
			(*k)++;
		}
	}
}

nnn_status_t cli_params(const nnn_model_t *m, bool any, cli_param_t **out, size_t *n, nnn_diags_t *d)
{
	size_t total = 0, k = 0, more = 0;
	char prefix[32];
	*out = NULL;
	*n = 0;
	/* nnn_layer_tensors counts without filling when given no room. */
	for (int32_t i = 0; i < m->layer_count; i++) {
		total += (size_t)nnn_layer_tensors(&m->layers[i], NULL, 0);
		if (any)
			other_tensors(&nnn_layer_desc, &m->layers[i], "", NULL, 0, &more);
	}
	total += more;
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
			ts[k].dims = &named[j].tensor->dims;
			ts[k].data = (nnn_elems_t){ named[j].tensor->data.bytes, named[j].tensor->data.n };
			ts[k].prim = NNN_PRIM_F32_ARRAY;
		}
		snprintf(prefix, sizeof prefix, "layers[%d]", (int)i);
		if (any)
			other_tensors(&nnn_layer_desc, &m->layers[i], prefix, ts, total, &k);
	}
	free(named);
	*out = ts;
	*n = k < total ? k : total;
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
