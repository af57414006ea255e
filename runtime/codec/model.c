/* model.c: the public face of the codec: decode, free, validate. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include <nnn/file.h>
#include <nnn/validate.h>

#include "arena.h"
#include "codec.h"
#include "cursor.h"
#include "ext.h"
#include "probe.h"
#include "vctx.h"
#include "mem.h"

/* A decoded model and the memory it owns; `model` comes first so that a
 * pointer to it is a pointer to the whole. */
typedef struct decoded {
	nnn_model_t model;
	nnn_arena_t arena;
	unsigned char *copy; /* NNN_DECODE_COPY: the whole input, which the views point into */
} decoded_t;

nnn_status_t nnn_decode_windowed(const void *buf, size_t len, const nnn_reader_t *rd, const nnn_decode_opts_t *opts,
                                 nnn_model_t **out, nnn_diags_t *diags)
{
	decoded_t *d = calloc(1, sizeof *d);
	nnn_window_t win; /* its bytes are written before they are read */
	nnn_lookup_t look = nnn_ext_lookup(opts ? opts->ctx : NULL);
	nnn_cur_t c = { .buf = buf, .len = len, .diags = diags, .win = rd ? &win : NULL, .look = &look };
	nnn_status_t st;

	win.rd = rd;
	win.off = win.n = 0;

	*out = NULL;
	if (!d)
		return nnn_diags_add(diags, NNN_E_NOMEM, NNN_NO_OFFSET, "", "cannot allocate a model");
	if (opts) {
		c.flags = opts->flags & ~(unsigned)NNN_DECODE_COPY;
		c.vis = opts->visit;
	}
	c.arena = &d->arena;
	if (len && !buf)
		st = nnn_diags_add(diags, NNN_E_USAGE, NNN_NO_OFFSET, "", "no buffer for %zu bytes", len);
	else
		st = nnn_gen_decode(&c, &d->model);
	if (st == NNN_E_UNKNOWN_ID && diags)
		nnn_probe_unknowns(buf, len, rd, &look, diags);
	free(c.scratch);
	if (c.first_soft)
		st = c.first_soft; /* kept going past problems: the first one's code */
	if (st != NNN_OK) {
		nnn_model_free(&d->model);
		return st;
	}
	*out = &d->model;
	return NNN_OK;
}

nnn_status_t nnn_model_adopt(unsigned char *copy, size_t len, const nnn_decode_opts_t *opts, nnn_model_t **out,
                             nnn_diags_t *diags)
{
	nnn_status_t st = nnn_decode_windowed(copy, len, NULL, opts, out, diags);
	if (st != NNN_OK) {
		free(copy);
		return st;
	}
	((decoded_t *)*out)->copy = copy;
	return NNN_OK;
}

const unsigned char *nnn_model_copy(const nnn_model_t *m)
{
	return ((const decoded_t *)m)->copy;
}

nnn_status_t nnn_model_decode(const void *buf, size_t len, const nnn_decode_opts_t *opts, nnn_model_t **out,
                              nnn_diags_t *diags)
{
	nnn_decode_opts_t again = { 0 };
	unsigned char *copy;
	nnn_status_t st;

	if (!opts || !(opts->flags & NNN_DECODE_COPY))
		return nnn_decode_windowed(buf, len, NULL, opts, out, diags);
	/* A copy is one allocation of the whole input, filled by one memcpy:
	 * much cheaper than an allocation per tensor, whose fresh pages each
	 * fault. The bytes are checked where they are first, so that a bad
	 * input costs no copy; the second decode, from the copy, then only
	 * sets up the views (the visitor has seen every field already). */
	st = nnn_decode_windowed(buf, len, NULL, opts, out, diags);
	nnn_model_free(*out);
	*out = NULL;
	if (st != NNN_OK)
		return st;
	if (!(copy = nnn_mem_big(len)))
		return nnn_diags_add(diags, NNN_E_NOMEM, NNN_NO_OFFSET, "", "cannot allocate %zu bytes for a copy", len);
	if (len)
		memcpy(copy, buf, len);
	again.flags = opts->flags;
	again.ctx = opts->ctx;
	return nnn_model_adopt(copy, len, &again, out, diags);
}

nnn_model_t *nnn_model_new_arena(nnn_arena_t **arena)
{
	decoded_t *d = calloc(1, sizeof *d);
	*arena = d ? &d->arena : NULL;
	return d ? &d->model : NULL;
}

void nnn_model_free(nnn_model_t *m)
{
	decoded_t *d = (decoded_t *)m;
	if (!d)
		return;
	nnn_arena_free(&d->arena);
	free(d->copy);
	free(d);
}

uint64_t nnn_model_param_total(const nnn_model_t *m)
{
	return nnn_gen_params(m);
}

void nnn_f32s_copy(nnn_f32s_t a, float *out)
{
	nnn_f32s_read(a, out); /* one definition, header-only for plugins */
}

void nnn_tensor_copy(const nnn_tensor_t *t, float *out)
{
	nnn_f32s_copy(t->data, out);
}

/* The value of an integer member described by f (a variant's tag). */
static int64_t tag_of(const nnn_fdesc_t *f, const void *p)
{
	return f->prim == NNN_PRIM_U8 ? *(const uint8_t *)p : f->prim == NNN_PRIM_I32 ? *(const int32_t *)p
	                                                                             : (int64_t) * (const uint64_t *)p;
}

/* The param tensors of record rd at base (a layer, or a variant's record)
 * whose data are not float32, into out[*k..max); counts all of them in *k.
 * Variants the schema selects are followed; a plugin's (ext) tensors are
 * float32 and listed by nnn_layer_tensors. */
static void other_params(const nnn_rdesc_t *rd, const void *base, nnn_param_t *out, int max, int *k)
{
	for (int32_t i = 0; i < rd->nfields; i++) {
		const nnn_fdesc_t *f = &rd->fields[i];
		const char *p = (const char *)base + f->offset;
		if (f->kind == NNN_FK_VARIANT) {
			int64_t tag = tag_of(&rd->fields[f->ref], (const char *)base + rd->fields[f->ref].offset);
			for (int32_t v = 0; v < f->nvariants; v++)
				if (f->variants[v].value == tag)
					other_params(f->variants[v].rec, p, out, max, k);
		} else if (f->kind == NNN_FK_RECORD && (f->flags & NNN_FD_PARAM) && f->rec->data >= 0 &&
		           f->rec->fields[f->rec->data].prim != NNN_PRIM_F32_ARRAY) {
			const nnn_fdesc_t *df = &f->rec->fields[f->rec->data];
			if (*k < max)
				out[*k] = (nnn_param_t){ f->name, (const nnn_i32s_t *)(p + f->rec->fields[f->rec->dims].offset),
					                 (const nnn_elems_t *)(p + df->offset), df->prim, NULL };
			(*k)++;
		}
	}
}

_Static_assert(sizeof(nnn_f32s_t) == sizeof(nnn_elems_t) && offsetof(nnn_f32s_t, n) == offsetof(nnn_elems_t, n),
               "a float32 tensor's data is listed as an nnn_elems_t");

int nnn_layer_params(const nnn_layer_t *L, nnn_param_t *out, int max)
{
	nnn_named_tensor_t some[16];
	int n = nnn_layer_tensors(L, some, 16), k = 0;
	nnn_named_tensor_t *ts = n <= 16 ? some : malloc((size_t)n * sizeof *ts);
	if (!ts)
		return 0; /* no memory for a list of more than 16 (a plugin's): none listed */
	if (ts != some)
		n = nnn_layer_tensors(L, ts, n);
	for (; k < n; k++)
		if (k < max)
			out[k] = (nnn_param_t){ ts[k].name, &ts[k].tensor->dims, (const nnn_elems_t *)(const void *)&ts[k].tensor->data,
				                NNN_PRIM_F32_ARRAY, ts[k].tensor };
	if (ts != some)
		free(ts);
	other_params(&nnn_layer_desc, L, out, max, &k);
	return k;
}

/* ---- validation ---- */

_Static_assert(NNN_MODEL_NFIELDS > 1, "nnn_model_validate tells a decoded model by its second field's offset");

nnn_status_t nnn_model_validate(const nnn_model_t *m, const nnn_shape_t *input, nnn_shape_t *out_shapes,
                                nnn_diags_t *diags)
{
	/* A model made in memory (JSON, a spec, an import, a caller's own
	 * struct) holds zeros where a decoded one holds offsets; its second
	 * field, which no file starts with, tells them apart. */
	nnn_vctx_t v = { .diags = diags, .no_offsets = m->at[1] == 0 };
	size_t first = diags ? diags->n : 0;
	nnn_gen_validate(&v, m, input, out_shapes);
	return nnn_v_result(&v, first);
}

nnn_status_t nnn_validate_windowed(const void *buf, size_t len, const nnn_reader_t *rd, const nnn_ctx_t *ctx,
                                   const nnn_shape_t *input, nnn_diags_t *diags)
{
	nnn_window_t win = { .rd = rd };
	nnn_lookup_t look = nnn_ext_lookup(ctx);
	nnn_cur_t c = { .buf = buf, .len = len, .diags = diags, .flags = NNN_DECODE_KEEP_GOING, .look = &look };
	decoded_t d = { 0 };
	nnn_status_t st;

	c.win = rd ? &win : NULL;
	c.arena = &d.arena;
	st = nnn_gen_decode(&c, &d.model);
	if (st == NNN_E_UNKNOWN_ID && diags)
		nnn_probe_unknowns(buf, len, rd, &look, diags);
	if (st == NNN_OK) /* framed: every semantic rule can run, even past soft problems */
		st = nnn_model_validate(&d.model, input, NULL, diags);
	if (c.first_soft)
		st = c.first_soft; /* the code of the first problem, found while decoding */
	nnn_arena_free(&d.arena);
	return st;
}

nnn_status_t nnn_validate_bytes(const void *buf, size_t len, const nnn_ctx_t *ctx, const nnn_shape_t *input,
                                nnn_diags_t *diags)
{
	return nnn_validate_windowed(buf, len, NULL, ctx, input, diags);
}

nnn_status_t nnn_shape_parse(const char *text, nnn_shape_t *out, nnn_diags_t *diags)
{
	const char *p = text;
	out->rank = 0;
	while (*p) {
		char *end;
		errno = 0;
		long long x = strtoll(p, &end, 10);
		if (end == p || errno || x < 1 || x > INT32_MAX)
			return nnn_diags_add(diags, NNN_E_USAGE, NNN_NO_OFFSET, "", "bad input shape \"%s\": expected "
			                     "positive integers separated by commas, such as 1,28,28,1", text);
		if (out->rank == NNN_MAX_RANK)
			return nnn_diags_add(diags, NNN_E_USAGE, NNN_NO_OFFSET, "", "input shape \"%s\" has more than %d dims",
			                     text, NNN_MAX_RANK);
		out->dims[out->rank++] = x;
		p = end;
		if (*p == ',' || *p == 'x')
			p++;
		else if (*p)
			return nnn_diags_add(diags, NNN_E_USAGE, NNN_NO_OFFSET, "", "bad input shape \"%s\": unexpected '%c'",
			                     text, *p);
	}
	if (out->rank < 2)
		return nnn_diags_add(diags, NNN_E_USAGE, NNN_NO_OFFSET, "", "input shape \"%s\" needs a batch axis and "
		                     "at least one more, such as 1,10", text);
	return NNN_OK;
}


