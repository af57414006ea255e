/* st_write.c: a model as safetensors (nnn/safetensors.h).
 *
 * The model is encoded to .nnn bytes, which are decoded again with a field
 * visitor: that walk, not a list here, finds every array of numbers (but
 * int32 arrays, which are dims), of any element type the schema declares,
 * so a field the schema or a plugin adds is carried without a change to
 * this file.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nnn/file.h>
#include <nnn/safetensors.h>

#include "codec.h"
#include "st.h"

/* One array of numbers of the .nnn bytes (float32, or another element type). */
typedef struct ent {
	char path[NNN_PATH_MAX];
	size_t plen;     /* the part of path that names the tensor */
	uint64_t at;     /* offset of its count in the .nnn bytes */
	int32_t count;
	int width;       /* bytes per element */
	const char *dtype; /* "F32", "F16", "I8"... */
	nnn_shape_t shape;
} ent_t;

typedef struct walk {
	ent_t *v;
	size_t n, cap;
	bool oom;
	/* The last int array seen: the shape of a float array beside it in
	 * the same record when the product of its values is the count. */
	char ipath[NNN_PATH_MAX];
	nnn_shape_t idims;
	bool iok;
} walk_t;

/* The length of the path of the record holding the field at `path`. */
static size_t parent_len(const char *path)
{
	const char *dot = strrchr(path, '.');
	return dot ? (size_t)(dot - path) : 0;
}

static void saw_ints(walk_t *w, const nnn_field_t *f)
{
	snprintf(w->ipath, sizeof w->ipath, "%s", f->path);
	w->iok = f->count >= 0 && f->count <= NNN_MAX_RANK;
	w->idims.rank = w->iok ? f->count : 0;
	for (int32_t i = 0; i < w->idims.rank; i++)
		w->idims.dims[i] = (int32_t)nnn_le_u32(f->bytes + 4 * (size_t)i);
}

/* Whether the last int array is this float array's shape. */
static bool is_shape(const walk_t *w, const char *path, int32_t count)
{
	size_t p = parent_len(path);
	if (!w->iok || !p || parent_len(w->ipath) != p || memcmp(w->ipath, path, p))
		return false;
	int64_t prod = 1;
	for (int32_t i = 0; i < w->idims.rank; i++) {
		int64_t d = w->idims.dims[i];
		if (d < 0 || (d && prod > INT32_MAX / d))
			return false;
		prod *= d;
	}
	return prod == count;
}

static void saw_values(walk_t *w, const nnn_field_t *f, const char *dtype)
{
	if (w->n == w->cap) {
		size_t cap = w->cap ? 2 * w->cap : 16;
		ent_t *v = realloc(w->v, cap * sizeof *v);
		if (!v) {
			w->oom = true;
			return;
		}
		w->v = v;
		w->cap = cap;
	}
	ent_t *e = &w->v[w->n++];
	snprintf(e->path, sizeof e->path, "%s", f->path);
	e->at = f->offset;
	e->count = f->count;
	e->width = nnn_prim_ewidth(f->prim);
	e->dtype = dtype;
	e->plen = strlen(e->path);
	e->shape.rank = 1;
	e->shape.dims[0] = f->count;
	if (is_shape(w, f->path, f->count)) { /* a tensor: named as its record */
		e->plen = parent_len(f->path);
		e->shape = w->idims;
	}
}

static void on_field(void *ctx, const nnn_field_t *f)
{
	walk_t *w = ctx;
	if (w->oom)
		return;
	/* int32 arrays are dims; every other array of numbers is a tensor
	 * of its safetensors dtype (F32, F16, BF16, I8, U8, ...). */
	const char *dtype = nnn_prim_is_array(f->prim) ? st_dtype_name(nnn_prim_ekind(f->prim), nnn_prim_ewidth(f->prim))
	                                               : NULL;
	if (f->prim == NNN_PRIM_I32_ARRAY)
		saw_ints(w, f);
	else if (dtype)
		saw_values(w, f, dtype);
}

static void on_problem(void *ctx, const nnn_diag_t *d)
{
	(void)ctx, (void)d; /* the decode's status says it */
}

/* Two tensors of one record would share its name: the later one keeps its
 * whole path. Only names cut to their record can meet, and rarely. */
static void unique_names(walk_t *w)
{
	for (size_t i = 1; i < w->n; i++) {
		ent_t *e = &w->v[i];
		size_t whole = strlen(e->path);
		for (size_t j = 0; j < i && e->plen != whole; j++)
			if (w->v[j].plen == e->plen && !memcmp(w->v[j].path, e->path, e->plen))
				e->plen = whole;
	}
}

static nnn_status_t find_arrays(const unsigned char *b, size_t len, const nnn_ctx_t *ctx, walk_t *w,
                                nnn_diags_t *d)
{
	nnn_visitor_t vis = { on_field, on_problem, w };
	nnn_decode_opts_t o = { .visit = &vis, .ctx = ctx };
	nnn_model_t *m = NULL;
	nnn_status_t st = nnn_model_decode(b, len, &o, &m, d);
	nnn_model_free(m);
	if (st == NNN_OK && w->oom)
		st = nnn_diags_add(d, NNN_E_NOMEM, NNN_NO_OFFSET, "", "no memory for the list of tensors");
	unique_names(w);
	return st;
}

static void put_name(st_buf_t *o, const ent_t *e)
{
	char name[NNN_PATH_MAX];
	size_t k = nnn_path_dotted(e->path, e->plen, name, sizeof name);
	st_put_jstr(o, name, k);
}

/* The metadata: the .nnn bytes without float payloads, and where each goes. */
static void put_meta(st_buf_t *o, const unsigned char *b, size_t len, const walk_t *w)
{
	st_buf_t skel = { 0 }, where = { 0 };
	size_t from = 0, cut = 0;
	char num[32];
	st_puts(&where, "[");
	for (size_t i = 0; i < w->n; i++) {
		const ent_t *e = &w->v[i];
		size_t start = (size_t)e->at + 4;
		st_put(&skel, b + from, start - from);
		from = start + (size_t)e->width * (size_t)e->count;
		st_puts(&where, i ? ", [" : "[");
		put_name(&where, e);
		snprintf(num, sizeof num, ", %zu]", start - cut);
		st_puts(&where, num);
		cut += (size_t)e->width * (size_t)e->count;
	}
	st_put(&skel, b + from, len - from);
	st_puts(&where, "]");
	st_puts(o, "{\"__metadata__\": {\"" NNN_ST_META_FORMAT "\": \"nnn\", \"" NNN_ST_META_SKELETON "\": \"");
	st_put_b64(o, skel.b, skel.n);
	st_puts(o, "\", \"" NNN_ST_META_TENSORS "\": ");
	st_put_jstr(o, (const char *)where.b, where.n);
	st_puts(o, "}");
	o->oom |= skel.oom || where.oom;
	free(skel.b);
	free(where.b);
}

static void put_tensors(st_buf_t *o, const walk_t *w)
{
	char num[64];
	uint64_t at = 0;
	for (size_t i = 0; i < w->n; i++) {
		const ent_t *e = &w->v[i];
		st_puts(o, ",\n ");
		put_name(o, e);
		st_puts(o, ": {\"dtype\": \"");
		st_puts(o, e->dtype);
		st_puts(o, "\", \"shape\": [");
		for (int32_t k = 0; k < e->shape.rank; k++) {
			snprintf(num, sizeof num, "%s%" PRId64, k ? ", " : "", e->shape.dims[k]);
			st_puts(o, num);
		}
		snprintf(num, sizeof num, "], \"data_offsets\": [%" PRIu64 ", %" PRIu64 "]}", at,
		         at + (uint64_t)e->width * (uint64_t)e->count);
		st_puts(o, num);
		at += (uint64_t)e->width * (uint64_t)e->count;
	}
	st_puts(o, "}");
}

/* The file: header length, header padded to a multiple of 8 (so the
 * buffer is aligned in the file), then the float bytes in file order. */
static void put_file(st_buf_t *o, const unsigned char *b, size_t len, const walk_t *w)
{
	st_put(o, "\0\0\0\0\0\0\0\0", 8);
	put_meta(o, b, len, w);
	put_tensors(o, w);
	while (!o->oom && o->n % 8)
		st_put(o, " ", 1);
	uint64_t n = o->n - 8;
	for (int i = 0; !o->oom && i < 8; i++)
		o->b[i] = (unsigned char)(n >> 8 * i);
	for (size_t i = 0; i < w->n; i++)
		st_put(o, b + w->v[i].at + 4, (size_t)w->v[i].width * (size_t)w->v[i].count);
}

nnn_status_t nnn_safetensors_encode(const nnn_model_t *m, const nnn_ctx_t *ctx, unsigned char **buf, size_t *len,
                                    nnn_diags_t *diags)
{
	unsigned char *b = NULL;
	size_t n = 0;
	walk_t w = { 0 };
	st_buf_t o = { 0 };
	if (!buf || !len || !m)
		return nnn_diags_add(diags, NNN_E_USAGE, NNN_NO_OFFSET, "", "nnn_safetensors_encode: a NULL argument");
	*buf = NULL;
	*len = 0;
	nnn_status_t st = nnn_model_encode(m, &b, &n, diags);
	if (st == NNN_OK)
		st = find_arrays(b, n, ctx, &w, diags);
	if (st == NNN_OK) {
		put_file(&o, b, n, &w);
		if (o.oom)
			st = nnn_diags_add(diags, NNN_E_NOMEM, NNN_NO_OFFSET, "", "no memory for the safetensors bytes");
	}
	free(b);
	free(w.v);
	if (st != NNN_OK) {
		free(o.b);
		return st;
	}
	*buf = o.b;
	*len = o.n;
	return NNN_OK;
}

nnn_status_t nnn_safetensors_write_file(const nnn_model_t *m, const nnn_ctx_t *ctx, const char *path,
                                        nnn_diags_t *diags)
{
	unsigned char *b;
	size_t n;
	nnn_status_t st = nnn_safetensors_encode(m, ctx, &b, &n, diags);
	if (st != NNN_OK)
		return st;
	st = nnn_write_atomic_bytes(path, b, n, diags);
	free(b);
	return st;
}
