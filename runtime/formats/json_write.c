/* json_write.c: a model as JSON text (nnn/json.h, docs/json.md).
 *
 * The walk follows the record descriptors generated from the schema; the
 * only knowledge written here is how each primitive looks in JSON. Output is
 * made in memory, then written in one piece (atomically for a file).
 */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nnn/file.h>
#include <nnn/json.h>
#include <nnn/npy.h>
#include <nnn/validate.h>

#include "path.h"
#include "try.h"
#include "utf8.h"
#include "json_form.h"

/* Lines are kept within WIDTH: an array or a record goes on one line when
 * it fits (and holds no record, and no more than INLINE_MAX values), else
 * an array takes as many values a line as fit, and a record a field a line. */
#define WIDTH 100
#define INLINE_MAX 16
#define INLINE_STR 60

/* ---- a growing text buffer ---- */

typedef struct out {
	char *b;
	size_t n, cap;
	size_t col; /* characters since the last newline */
	bool oom;
} out_t;

static void put(out_t *o, const char *s, size_t n)
{
	if (o->oom)
		return;
	if (o->cap - o->n <= n) {
		size_t cap = o->cap ? o->cap : 4096;
		while (cap - o->n <= n) {
			if (cap > SIZE_MAX / 2) {
				o->oom = true;
				return;
			}
			cap *= 2;
		}
		char *b = realloc(o->b, cap);
		if (!b) {
			o->oom = true;
			return;
		}
		o->b = b;
		o->cap = cap;
	}
	memcpy(o->b + o->n, s, n);
	o->n += n;
	o->b[o->n] = '\0';
	size_t k = n;
	while (k > 0 && s[k - 1] != '\n')
		k--;
	o->col = k ? n - k : o->col + n;
}

/* Back to an earlier state of the text (a line that did not fit). */
static void rewind_(out_t *o, size_t n, size_t col)
{
	o->n = n;
	o->col = col;
	if (o->b)
		o->b[n] = '\0';
}

static void puts_(out_t *o, const char *s)
{
	put(o, s, strlen(s));
}

static void putf(out_t *o, const char *fmt, ...) NNN_PRINTF(2, 3);

static void putf(out_t *o, const char *fmt, ...)
{
	char buf[128];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	put(o, buf, n < 0 ? 0 : (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}

static void indent(out_t *o, int depth)
{
	put(o, "\n", 1);
	for (int i = 0; i < depth; i++)
		put(o, "  ", 2);
}

/* ---- primitives ---- */

static uint32_t f32_bits(float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof u);
	return u;
}

/* Whether "%.{p}g" reads back to f the way the reader converts it
 * (strtod, then to float). */
static bool reads_back(char *buf, size_t size, float f, int p)
{
	snprintf(buf, size, "%.*g", p, (double)f);
	return f32_bits((float)strtod(buf, NULL)) == f32_bits(f);
}

/* A float's JSON text (json_form.h): shared with the ONNX importer, which
 * writes a model's JSON form too. */
size_t nnn_json_f32_text(char *buf, size_t size, uint32_t bits)
{
	float f;
	memcpy(&f, &bits, sizeof f);
	if (isnan(f) && bits == NNN_JSON_NAN)
		return (size_t)snprintf(buf, size, "\"nan\"");
	if (isnan(f))
		return (size_t)snprintf(buf, size, "\"nan:0x%08" PRIx32 "\"", bits);
	if (isinf(f))
		return (size_t)snprintf(buf, size, "\"%sinf\"", f < 0 ? "-" : "");
	/* The fewest digits that give the bits back: 9 always do for a float,
	 * unless rounding twice (decimal to double to float) bites, and 17 then
	 * give the double that equals the float. More digits never hurt, so the
	 * search may halve. */
	if (!reads_back(buf, size, f, 9)) {
		snprintf(buf, size, "%.17g", (double)f);
	} else {
		int lo = 1, hi = 9;
		while (lo < hi) {
			int mid = (lo + hi) / 2;
			if (reads_back(buf, size, f, mid))
				hi = mid;
			else
				lo = mid + 1;
		}
		reads_back(buf, size, f, lo);
	}
	/* A locale may have put a comma for the point (JSON wants '.'); a float
	 * keeps a point or exponent, so that "-0" stays -0.0 and reads as a real. */
	char *comma = strchr(buf, ',');
	if (comma)
		*comma = '.';
	if (!strpbrk(buf, ".eE"))
		strncat(buf, ".0", size - strlen(buf) - 1);
	return strlen(buf);
}

/* "%.{p}g" of d, with a point or exponent and a '.' whatever the locale. */
static size_t real_text(char *buf, size_t size, double d, int p)
{
	snprintf(buf, size, "%.*g", p, d);
	char *comma = strchr(buf, ',');
	if (comma)
		*comma = '.';
	if (!strpbrk(buf, ".eEni"))
		strncat(buf, ".0", size - strlen(buf) - 1);
	return strlen(buf);
}

size_t nnn_json_num_text(char *buf, size_t size, nnn_ekind_t kind, int width, uint64_t bits)
{
	if (kind == NNN_EK_FLOAT && width == 4)
		return nnn_json_f32_text(buf, size, (uint32_t)bits);
	if (kind == NNN_EK_INT) {
		if (width < 8 && (bits >> (8 * width - 1) & 1))
			bits |= ~0ull << (8 * width); /* sign-extended */
		return (size_t)snprintf(buf, size, "%" PRId64, (int64_t)bits);
	}
	if (kind == NNN_EK_UINT || kind == NNN_EK_BOOL) /* JSON readers hold integers in 64 signed bits at most */
		return (size_t)snprintf(buf, size, bits > INT64_MAX ? "\"%" PRIu64 "\"" : "%" PRIu64, bits);
	double d = nnn_num_double(kind, width, bits);
	if (isnan(d)) { /* the quiet NaN without sign or payload is plain "nan", as for float32 */
		uint64_t quiet = kind == NNN_EK_BFLOAT ? 0x7fc0u : width == 2 ? 0x7e00u : 0x7ff8000000000000u;
		if (bits == quiet)
			return (size_t)snprintf(buf, size, "\"nan\"");
		return (size_t)snprintf(buf, size, "\"nan:0x%0*" PRIx64 "\"", 2 * width, bits);
	}
	if (isinf(d))
		return (size_t)snprintf(buf, size, "\"%sinf\"", d < 0 ? "-" : "");
	/* The fewest digits that read back to the bits the way the reader
	 * converts them (nnn_json_num_bits); 17 always do. */
	for (int p = 1; p < 17; p++) {
		real_text(buf, size, d, p);
		bool ok;
		if (nnn_json_num_bits(kind, width, strtod(buf, NULL), &ok) == bits && ok)
			return strlen(buf);
	}
	return real_text(buf, size, d, 17);
}

uint64_t nnn_json_num_bits(nnn_ekind_t kind, int width, double d, bool *ok)
{
	*ok = true;
	if (kind == NNN_EK_FLOAT && width == 8) {
		uint64_t u;
		memcpy(&u, &d, sizeof u);
		return u;
	}
	/* Through float, as for float32 values: a float16 or bfloat16 is a float
	 * exactly. Beyond float's range, infinity (a conversion would be undefined). */
	float f = isfinite(d) && fabs(d) > FLT_MAX ? (d < 0 ? -INFINITY : INFINITY) : (float)d;
	if (kind == NNN_EK_FLOAT && width == 4)
		return f32_bits(f);
	if (kind == NNN_EK_FLOAT && width == 2)
		return nnn_f32_to_f16(f);
	if (kind == NNN_EK_BFLOAT)
		return nnn_f32_to_bf16(f);
	*ok = false; /* integers are read as integers */
	return 0;
}

/* Whether the 2- or 3-byte UTF-8 sequence at s is an unsafe code point
 * (nnn_cp_unsafe, all of which have 2 or 3 bytes), into *cp. */
static bool unsafe_at(const char *s, size_t n, uint32_t *cp)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t k = u[0] < 0xe0 ? 2 : 3;
	if (n < k || (u[1] & 0xc0) != 0x80 || (k == 3 && (u[2] & 0xc0) != 0x80))
		return false;
	*cp = k == 2 ? (uint32_t)(u[0] & 0x1f) << 6 | (u[1] & 0x3f)
	             : (uint32_t)(u[0] & 0x0f) << 12 | (uint32_t)(u[1] & 0x3f) << 6 | (u[2] & 0x3f);
	return nnn_cp_unsafe(*cp);
}

static void put_string(out_t *o, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	uint32_t k;
	put(o, "\"", 1);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		const char *esc = c == '"' ? "\\\"" : c == '\\' ? "\\\\" : c == '\n' ? "\\n" : c == '\t' ? "\\t"
		                : c == '\r' ? "\\r" : NULL;
		if (esc) {
			puts_(o, esc);
		} else if (c < 0x20 || c == 0x7f) {
			char u[7] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15], 0 };
			put(o, u, 6);
		} else if (c >= 0xc2 && c < 0xf0 && unsafe_at(s + i, n - i, &k)) {
			/* C1 and bidirectional controls: escaped, so the text shown
			 * anywhere is what it says (docs/security.md) */
			char u[7];
			snprintf(u, sizeof u, "\\u%04x", (unsigned)k);
			put(o, u, 6);
			i += c < 0xe0 ? 1 : 2;
		} else {
			put(o, (const char *)&s[i], 1);
		}
	}
	put(o, "\"", 1);
}

/* ---- the walk ---- */

typedef struct wr {
	out_t o;
	nnn_path_t path;
	nnn_diags_t *d;
	const nnn_json_write_opts_t *opts;
	char dir[PATH_MAX];   /* tensors_dir as given */
	char ref[PATH_MAX];   /* tensors_dir relative to the JSON's folder */
} wr_t;

static nnn_status_t fail(wr_t *w, nnn_status_t code, const char *fmt, ...) NNN_PRINTF(3, 4);

static nnn_status_t fail(wr_t *w, nnn_status_t code, const char *fmt, ...)
{
	char msg[NNN_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return nnn_diags_add(w->d, code, NNN_NO_OFFSET, w->path.s, "cannot write JSON: %s", msg);
}

static const void *member(const void *base, const nnn_fdesc_t *f)
{
	return (const char *)base + f->offset;
}

/* The record a variant's tag selects, and where its fields are: a core
 * record, a plugin's, or none (a value without fields). False when the tag
 * is a plugin's type that brings no descriptors (ABI 1.0): *name says which. */
static bool selected(const nnn_rdesc_t *rd, const nnn_fdesc_t *f, const void *base, const nnn_rdesc_t **rec,
                     const void **body, const char **name)
{
	int64_t tag = nnn_json_int(&rd->fields[f->ref], member(base, &rd->fields[f->ref]));
	*rec = NULL;
	for (int32_t i = 0; i < f->nvariants; i++) {
		if (f->variants[i].value == tag) {
			*rec = f->variants[i].rec;
			*body = member(base, f);
			return true;
		}
	}
	const nnn_ext_t *ext = (const void *)((const char *)base + f->ext_offset);
	if (f->ext == NNN_FX_NONE || f->type->value_name(tag) || !ext->type)
		return true;
	*rec = nnn_json_ext(f->ext, ext->type, name);
	*body = ext->body;
	return *rec && ext->body;
}

static void put_key(wr_t *w, const char *name, bool *first, int depth, bool multi)
{
	if (!*first)
		put(&w->o, ",", 1);
	if (multi)
		indent(&w->o, depth);
	else if (!*first)
		put(&w->o, " ", 1);
	*first = false;
	put_string(&w->o, name, strlen(name));
	put(&w->o, ": ", 2);
}

static bool goes_to_npy(const wr_t *w, int32_t n)
{
	return w->opts && w->opts->tensors_dir && n >= w->opts->tensors_min;
}

/* Whether a record fits one line: no record inside, nothing long. */
static bool flat(const wr_t *w, const nnn_rdesc_t *rd, const void *base)
{
	for (int32_t i = 0; i < rd->nfields; i++) {
		const nnn_fdesc_t *f = &rd->fields[i];
		const void *p = member(base, f);
		if (f->kind == NNN_FK_RECORD || f->kind == NNN_FK_ARRAY)
			return false;
		if (f->kind == NNN_FK_VARIANT) {
			const nnn_rdesc_t *rec;
			const void *body;
			const char *name;
			if (!selected(rd, f, base, &rec, &body, &name) || (rec && !flat(w, rec, body)))
				return false;
		} else if (f->prim == NNN_PRIM_STRING && ((const nnn_str_t *)p)->len > INLINE_STR) {
			return false;
		} else if (f->prim == NNN_PRIM_I32_ARRAY && ((const nnn_i32s_t *)p)->n > INLINE_MAX) {
			return false;
		} else if (f->prim == NNN_PRIM_F32_ARRAY) {
			int32_t n = ((const nnn_f32s_t *)p)->n;
			if (n > INLINE_MAX || goes_to_npy(w, n))
				return false;
		} else if (f->prim & NNN_PRIM_NUMS) {
			int32_t n = ((const nnn_elems_t *)p)->n;
			if (n > INLINE_MAX || goes_to_npy(w, n))
				return false;
		}
	}
	return true;
}

/* Element i of an array of `prim` (an i32_array's host ints, else
 * little-endian elements of any element type). */
static void put_value(wr_t *w, nnn_prim_t prim, const void *v, int32_t i)
{
	char buf[64];
	if (prim == NNN_PRIM_I32_ARRAY) {
		putf(&w->o, "%" PRId32, ((const int32_t *)v)[i]);
	} else {
		int width = nnn_prim_ewidth(prim);
		uint64_t bits = nnn_le_bits((const unsigned char *)v + (size_t)width * (size_t)i, width);
		put(&w->o, buf, nnn_json_num_text(buf, sizeof buf, nnn_prim_ekind(prim), width, bits));
	}
}

/* The values of an array: on one line when they fit, else filling lines. */
static void put_values(wr_t *w, int32_t n, int depth, nnn_prim_t prim, const void *v)
{
	size_t start = w->o.n, col = w->o.col;
	put(&w->o, "[", 1);
	if (n <= INLINE_MAX) {
		for (int32_t i = 0; i < n; i++) {
			put(&w->o, ", ", i ? 2 : 0);
			put_value(w, prim, v, i);
		}
		put(&w->o, "]", 1);
		if (w->o.col <= WIDTH)
			return;
		rewind_(&w->o, start, col);
		put(&w->o, "[", 1);
	}
	indent(&w->o, depth + 1);
	for (int32_t i = 0; i < n; i++) {
		size_t at = w->o.n, c = w->o.col;
		put(&w->o, ", ", i ? 2 : 0);
		put_value(w, prim, v, i);
		if (i && w->o.col + 1 > WIDTH) { /* +1: the comma that may follow */
			rewind_(&w->o, at, c);
			put(&w->o, ",", 1);
			indent(&w->o, depth + 1);
			put_value(w, prim, v, i);
		}
	}
	indent(&w->o, depth);
	put(&w->o, "]", 1);
}

/* tensors_dir relative to the folder of the JSON, so that references hold
 * when both move together; as given when either cannot be resolved. */
static void relative_ref(wr_t *w)
{
	char jdir[PATH_MAX], a[PATH_MAX], b[PATH_MAX];
	const char *jp = w->opts->json_path, *slash = jp ? strrchr(jp, '/') : NULL;
	if (slash)
		snprintf(jdir, sizeof jdir, "%.*s", slash == jp ? 1 : (int)(slash - jp), jp);
	else
		snprintf(jdir, sizeof jdir, ".");
	snprintf(w->ref, sizeof w->ref, "%s", w->dir);
	if (!realpath(jdir, a) || !realpath(w->dir, b))
		return;
	/* "/" as "", so that every path is "" or "/name/..." */
	if (!strcmp(a, "/"))
		a[0] = '\0';
	if (!strcmp(b, "/"))
		b[0] = '\0';
	size_t i = 0, common;
	while (a[i] && a[i] == b[i])
		i++;
	if ((!a[i] && (!b[i] || b[i] == '/')) || (!b[i] && a[i] == '/'))
		common = i; /* one is the other or an ancestor of it */
	else
		for (common = i ? i - 1 : 0; common > 0 && a[common] != '/';)
			common--;
	size_t k = 0;
	for (const char *p = a + common; *p && k + 4 < sizeof w->ref; p++)
		if (*p == '/')
			k += (size_t)snprintf(w->ref + k, sizeof w->ref - k, "../");
	snprintf(w->ref + k, sizeof w->ref - k, "%s", b + common + (b[common] == '/'));
	k = strlen(w->ref);
	if (k && w->ref[k - 1] == '/')
		w->ref[k - 1] = '\0';
	if (!w->ref[0])
		snprintf(w->ref, sizeof w->ref, ".");
}

/* Writes an array of `prim`'s elements (f32_array or NNN_PRIM_NUMS) to a
 * .npy file of their dtype named after its path, and its reference. `dims`
 * is the tensor's shape when the array is a tensor's data (rank 1
 * otherwise). A bfloat16 file holds the raw bits as '<u2'; the reference's
 * "dtype" is "bfloat16". */
static nnn_status_t put_npy(wr_t *w, nnn_prim_t prim, nnn_elems_t a, const nnn_i32s_t *dims, bool is_data)
{
	char name[NNN_PATH_MAX + 8], file[PATH_MAX + NNN_PATH_MAX + 16], tpath[NNN_PATH_MAX], sh[24 * NNN_MAX_RANK];
	nnn_shape_t shape = { .rank = 1, .dims = { a.n } };
	/* "layers[0].weights.data" -> "layers.0.weights.npy" */
	size_t len = w->path.len;
	if (is_data && len >= 5 && !strcmp(w->path.s + len - 5, ".data"))
		len -= 5;
	snprintf(tpath, sizeof tpath, "%.*s", (int)len, w->path.s);
	size_t k = nnn_path_dotted(tpath, len, name, sizeof name - 4);
	snprintf(name + k, sizeof name - k, ".npy");
	if (dims && dims->n >= 0 && dims->n <= NNN_MAX_RANK) {
		uint64_t prod = 1;
		for (int32_t i = 0; i < dims->n && prod != UINT64_MAX; i++)
			if (dims->v[i] < 0 || (dims->v[i] && prod > UINT64_MAX / (uint64_t)dims->v[i] - 1))
				prod = UINT64_MAX; /* not a shape for these values */
			else
				prod *= (uint64_t)dims->v[i];
		if (prod == (uint64_t)a.n) {
			shape.rank = dims->n;
			for (int32_t i = 0; i < dims->n; i++)
				shape.dims[i] = dims->v[i];
		}
	}
	nnn_ekind_t kind = nnn_prim_ekind(prim);
	int width = nnn_prim_ewidth(prim);
	snprintf(file, sizeof file, "%s/%s", w->dir, name);
	size_t before = w->d ? w->d->n : 0;
	nnn_status_t st = nnn_npy_write_typed_file(file, &shape, kind, width, a.bytes, w->d);
	if (st != NNN_OK) {
		if (w->d && w->d->n > before) { /* where, and which file */
			nnn_diag_t *g = &w->d->v[w->d->n - 1];
			size_t nl = strlen(name) < 100 ? strlen(name) : 100;
			memmove(g->msg + nl + 2, g->msg, sizeof g->msg - nl - 2);
			g->msg[sizeof g->msg - 1] = '\0';
			memcpy(g->msg, name, nl);
			memcpy(g->msg + nl, ": ", 2);
			snprintf(g->path, sizeof g->path, "%s", w->path.s);
		}
		return st;
	}
	snprintf(file, sizeof file, "%s%s%s", strcmp(w->ref, ".") ? w->ref : "", strcmp(w->ref, ".") ? "/" : "", name);
	puts_(&w->o, "{\"npy\": ");
	put_string(&w->o, file, strlen(file));
	puts_(&w->o, ", \"shape\": ");
	puts_(&w->o, nnn_shape_format(&shape, sh, sizeof sh));
	puts_(&w->o, ", \"dtype\": ");
	put_string(&w->o, nnn_npy_dtype_name(kind, width), strlen(nnn_npy_dtype_name(kind, width)));
	puts_(&w->o, "}");
	if (w->opts->on_npy_typed)
		w->opts->on_npy_typed(w->opts->ctx, tpath, file, &shape, nnn_npy_dtype_name(kind, width));
	else if (w->opts->on_npy)
		w->opts->on_npy(w->opts->ctx, tpath, file, &shape);
	return NNN_OK;
}

static nnn_status_t put_fields(wr_t *w, const nnn_rdesc_t *rd, const void *base, int depth, bool multi,
                               bool *first);

static nnn_status_t put_record(wr_t *w, const nnn_rdesc_t *rd, const void *base, int depth, bool multi)
{
	bool first = true;
	put(&w->o, "{", 1);
	NNN_TRY(put_fields(w, rd, base, depth + 1, multi, &first));
	if (multi)
		indent(&w->o, depth);
	put(&w->o, "}", 1);
	return NNN_OK;
}

/* The name of an enum value: the schema's, a plugin's for a tag the
 * schema lacks, or none (written as its number). */
static const char *enum_name(const nnn_rdesc_t *rd, int32_t i, const void *base, int64_t v)
{
	const char *name = rd->fields[i].type->value_name(v);
	for (int32_t k = 0; !name && k < rd->nfields; k++) {
		const nnn_fdesc_t *f = &rd->fields[k];
		if (f->kind != NNN_FK_VARIANT || f->ref != i || f->ext == NNN_FX_NONE)
			continue;
		const nnn_ext_t *ext = (const void *)((const char *)base + f->ext_offset);
		int64_t clash;
		if (ext->type)
			nnn_json_ext(f->ext, ext->type, &name);
		/* A plugin's name that is also a schema name would read back as that. */
		if (name && f->type->value_of(name, &clash))
			name = NULL;
	}
	return name;
}

/* A number of an element type without a named reader (NNN_PRIM_NUM, _NUMS):
 * the same text as a float32's or an int's, by its kind and width. */
static nnn_status_t put_num(wr_t *w, const nnn_rdesc_t *rd, int32_t i, const void *base, int depth)
{
	const nnn_fdesc_t *f = &rd->fields[i];
	const void *p = member(base, f);
	int width = nnn_prim_ewidth(f->prim);
	char buf[64];
	if (f->prim & NNN_PRIM_NUMS) {
		const nnn_elems_t *a = p;
		if (a->n < 0 || (a->n > 0 && !a->bytes))
			return fail(w, NNN_E_USAGE, "an array of %d values without its values", (int)a->n);
		if (w->opts && w->opts->omit_floats && nnn_prim_ekind(f->prim) >= NNN_EK_FLOAT) {
			puts_(&w->o, "null");
			return NNN_OK;
		}
		if (goes_to_npy(w, a->n) && nnn_npy_descr(nnn_prim_ekind(f->prim), width)) {
			bool is_data = rd->data == i;
			return put_npy(w, f->prim, *a, is_data ? member(base, &rd->fields[rd->dims]) : NULL, is_data);
		}
		put_values(w, a->n, depth, f->prim, a->bytes);
		return NNN_OK;
	}
	uint64_t bits = 0;
	memcpy(&bits, p, (size_t)width); /* the host value's bytes: little-endian hosts only, as nnn_f32s_read */
	put(&w->o, buf, nnn_json_num_text(buf, sizeof buf, nnn_prim_ekind(f->prim), width, bits));
	return NNN_OK;
}

static nnn_status_t put_prim(wr_t *w, const nnn_rdesc_t *rd, int32_t i, const void *base, int depth)
{
	const nnn_fdesc_t *f = &rd->fields[i];
	const void *p = member(base, f);
	char buf[64];
	switch (f->prim) {
	case NNN_PRIM_U8:
	case NNN_PRIM_I32:
		putf(&w->o, "%" PRId64, nnn_json_int(f, p));
		break;
	case NNN_PRIM_U64: {
		uint64_t u = *(const uint64_t *)p;
		/* JSON readers hold integers in 64 signed bits at most. */
		if (u > INT64_MAX)
			putf(&w->o, "\"%" PRIu64 "\"", u);
		else
			putf(&w->o, "%" PRIu64, u);
		break;
	}
	case NNN_PRIM_F32: {
		float v;
		memcpy(&v, p, sizeof v);
		size_t k = nnn_json_f32_text(buf, sizeof buf, f32_bits(v));
		put(&w->o, buf, k);
		break;
	}
	case NNN_PRIM_BOOL:
		puts_(&w->o, *(const bool *)p ? "true" : "false");
		break;
	case NNN_PRIM_STRING: {
		const nnn_str_t *s = p;
		if (s->len < 0 || (s->len > 0 && !s->ptr))
			return fail(w, NNN_E_USAGE, "a string of %d bytes without its bytes", (int)s->len);
		size_t bad = nnn_utf8_bad((const unsigned char *)s->ptr, (size_t)s->len);
		if (bad != (size_t)s->len)
			return fail(w, NNN_E_UTF8, "byte %zu (0x%02x) is not UTF-8, which JSON text must be", bad,
			            (unsigned char)s->ptr[bad]);
		put_string(&w->o, s->ptr, (size_t)s->len);
		break;
	}
	case NNN_PRIM_I32_ARRAY: {
		const nnn_i32s_t *a = p;
		if (a->n < 0 || (a->n > 0 && !a->v))
			return fail(w, NNN_E_USAGE, "an array of %d values without its values", (int)a->n);
		put_values(w, a->n, depth, NNN_PRIM_I32_ARRAY, a->v);
		break;
	}
	case NNN_PRIM_F32_ARRAY: {
		const nnn_f32s_t *a = p;
		if (a->n < 0 || (a->n > 0 && !a->bytes))
			return fail(w, NNN_E_USAGE, "an array of %d values without its values", (int)a->n);
		if (w->opts && w->opts->omit_floats) {
			puts_(&w->o, "null");
			break;
		}
		if (goes_to_npy(w, a->n)) {
			bool is_data = rd->data == i;
			return put_npy(w, f->prim, (nnn_elems_t){ a->bytes, a->n },
			               is_data ? member(base, &rd->fields[rd->dims]) : NULL, is_data);
		}
		put_values(w, a->n, depth, NNN_PRIM_F32_ARRAY, a->bytes);
		break;
	}
	default:
		return put_num(w, rd, i, base, depth);
	}
	return NNN_OK;
}

static nnn_status_t put_fields(wr_t *w, const nnn_rdesc_t *rd, const void *base, int depth, bool multi,
                               bool *first)
{
	for (int32_t i = 0; i < rd->nfields; i++) {
		const nnn_fdesc_t *f = &rd->fields[i];
		const void *p = member(base, f);
		size_t mark;
		nnn_status_t st = NNN_OK;
		if (f->flags & (NNN_FD_CONST | NNN_FD_COUNT))
			continue; /* implied: the format's constant, an array's length */
		if (f->kind == NNN_FK_VARIANT) {
			const nnn_rdesc_t *rec;
			const void *body;
			const char *name;
			if (!selected(rd, f, base, &rec, &body, &name))
				return fail(w, NNN_E_PLUGIN,
				            "%s %s comes from a plugin built for ABI 1.0, which gives no descriptors of its "
				            "fields, so it has no JSON form: rebuild the plugin with nnngen --plugin from this "
				            "nnnkit", f->ext == NNN_FX_LAYER ? "layer" : "activation", name);
			if (rec)
				NNN_TRY(put_fields(w, rec, body, depth, multi, first));
			continue;
		}
		put_key(w, f->name, first, depth, multi);
		mark = nnn_path_push(&w->path, f->name);
		if (f->kind == NNN_FK_ENUM) {
			int64_t v = nnn_json_int(f, p);
			const char *name = enum_name(rd, i, base, v);
			if (name)
				put_string(&w->o, name, strlen(name));
			else
				putf(&w->o, "%" PRId64, v);
		} else if (f->kind == NNN_FK_PRIM) {
			st = put_prim(w, rd, i, base, depth);
		} else if (f->kind == NNN_FK_RECORD) {
			/* One line when it fits, else a field a line. */
			bool one = flat(w, f->rec, p);
			size_t start = w->o.n, col = w->o.col;
			st = put_record(w, f->rec, p, depth, !one);
			if (st == NNN_OK && one && !w->o.oom &&
			    (w->o.col + 1 > WIDTH || memchr(w->o.b + start, '\n', w->o.n - start))) {
				rewind_(&w->o, start, col);
				st = put_record(w, f->rec, p, depth, true);
			}
		} else {
			int32_t n = *(const int32_t *)member(base, &rd->fields[f->ref]);
			const char *elems = *(const char *const *)p;
			if (n > 0 && !elems)
				return fail(w, NNN_E_USAGE, "%d elements without their records", (int)n);
			put(&w->o, "[", 1);
			for (int32_t k = 0; k < n && st == NNN_OK; k++) {
				size_t m = nnn_path_index(&w->path, k);
				put(&w->o, k ? "," : "", k ? 1 : 0);
				indent(&w->o, depth + 1);
				st = put_record(w, f->rec, elems + (size_t)k * f->rec->record_size, depth + 1, true);
				nnn_path_pop(&w->path, m);
			}
			if (n > 0)
				indent(&w->o, depth);
			put(&w->o, "]", 1);
		}
		nnn_path_pop(&w->path, mark);
		NNN_TRY(st);
	}
	return NNN_OK;
}

/* ---- entry points ---- */

static nnn_status_t make_dir(wr_t *w)
{
	const char *dir = w->opts->tensors_dir;
	if (strlen(dir) >= sizeof w->dir)
		return fail(w, NNN_E_USAGE, "the folder name %.40s... is too long", dir);
	snprintf(w->dir, sizeof w->dir, "%s", dir);
	if (mkdir(dir, 0777) != 0 && errno != EEXIST)
		return nnn_diags_add(w->d, NNN_E_IO, NNN_NO_OFFSET, "", "cannot create the folder %s for .npy files: %s",
		                     dir, strerror(errno));
	relative_ref(w);
	return NNN_OK;
}

nnn_status_t nnn_json_encode(const nnn_model_t *m, const nnn_json_write_opts_t *opts, char **text, size_t *len,
                             nnn_diags_t *diags)
{
	static const nnn_json_write_opts_t none = { 0 };
	wr_t *w;
	nnn_status_t st = NNN_OK;

	if (!text || !len || !m)
		return nnn_diags_add(diags, NNN_E_USAGE, NNN_NO_OFFSET, "", "nnn_json_encode: a NULL argument");
	*text = NULL;
	*len = 0;
	w = calloc(1, sizeof *w);
	if (!w)
		return nnn_diags_add(diags, NNN_E_NOMEM, NNN_NO_OFFSET, "", "cannot allocate a JSON writer");
	w->d = diags;
	w->opts = opts ? opts : &none;
	if (w->opts->tensors_dir)
		st = make_dir(w);
	if (st == NNN_OK)
		st = put_record(w, &nnn_model_desc, m, 0, true);
	put(&w->o, "\n", 1);
	if (st == NNN_OK && w->o.oom)
		st = nnn_diags_add(diags, NNN_E_NOMEM, NNN_NO_OFFSET, "", "no memory for the JSON text");
	if (st == NNN_OK) {
		*text = w->o.b;
		*len = w->o.n;
	} else {
		free(w->o.b);
	}
	free(w);
	return st;
}

nnn_status_t nnn_json_write_file(const nnn_model_t *m, const char *path, const nnn_json_write_opts_t *opts,
                                 nnn_diags_t *diags)
{
	nnn_json_write_opts_t o = opts ? *opts : (nnn_json_write_opts_t){ 0 };
	char *b;
	size_t n;
	if (!path)
		return nnn_diags_add(diags, NNN_E_USAGE, NNN_NO_OFFSET, "", "nnn_json_write_file: path is NULL");
	bool out = !strcmp(path, "-");
	if (!o.json_path && !out)
		o.json_path = path;
	nnn_status_t st = nnn_json_encode(m, &o, &b, &n, diags);
	if (st != NNN_OK)
		return st;
	st = nnn_write_atomic_bytes(path, b, n, diags);
	free(b);
	return st;
}
