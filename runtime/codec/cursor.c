/* cursor.c: the cursor and its readers, the only code that reads file bytes.
 *
 * Every reader checks the bytes left before touching them, and every count
 * is checked against the bytes left before anything is allocated, so a
 * corrupt or hostile file costs at most a small multiple of its own size.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "arena.h"
#include "cursor.h"
#include "path.h"
#include "try.h"
#include "utf8.h"

/* ---- problems ---- */

__attribute__((format(printf, 4, 0))) static nnn_status_t report(nnn_cur_t *c, nnn_status_t code, uint64_t at,
                                                                 const char *fmt, va_list ap)
{
	char msg[NNN_MSG_MAX];
	vsnprintf(msg, sizeof msg, fmt, ap);
	nnn_diags_add(c->diags, code, at, c->path.s, "%s", msg);
	if (c->vis && c->vis->problem) {
		nnn_diag_t d = { .code = code, .offset = at };
		snprintf(d.path, sizeof d.path, "%s", c->path.s);
		snprintf(d.msg, sizeof d.msg, "%s", msg);
		c->vis->problem(c->vis->ctx, &d);
	}
	return code;
}

nnn_status_t nnn_cur_fail(nnn_cur_t *c, nnn_status_t code, uint64_t at, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	report(c, code, at, fmt, ap);
	va_end(ap);
	return code;
}

nnn_status_t nnn_cur_soft(nnn_cur_t *c, nnn_status_t code, uint64_t at, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	report(c, code, at, fmt, ap);
	va_end(ap);
	if (c->flags & NNN_DECODE_KEEP_GOING) {
		if (c->first_soft == NNN_OK)
			c->first_soft = code;
		return NNN_OK;
	}
	return code;
}

/* ---- readers ---- */

#define le32 nnn_le_u32

static uint64_t le64(const unsigned char *p)
{
	return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

/* The n bytes at pos (already checked to lie within the input) for the
 * decoder to read: from the window when there is one, refilled from the file
 * when they lie outside it, else from buf. Valid until the next call. NULL
 * when the read fails or comes up short: the file shrank since it was
 * mapped, and reading the mapping there would raise SIGBUS (see unread). */
static const unsigned char *bytes_at(nnn_cur_t *c, size_t pos, size_t n)
{
	nnn_window_t *w = c->win;
	if (!w)
		return c->buf + pos;
	if (n > sizeof w->b)
		return NULL; /* callers ask for more only through fetch */
	if (pos >= w->off && pos - w->off <= w->n && w->n - (pos - w->off) >= n)
		return w->b + (pos - w->off);
	w->off = pos;
	w->n = w->rd->read(w->rd, w->b, c->len - pos < sizeof w->b ? c->len - pos : sizeof w->b, pos);
	return w->n >= n ? w->b : NULL;
}

/* Copies the n bytes at the cursor to dst: from the file when there is a
 * window (straight into dst when they are more than it holds), else from
 * buf. False when the file came up short (see unread). */
static bool fetch(nnn_cur_t *c, size_t n, unsigned char *dst)
{
	const unsigned char *p;
	if (c->win && n > sizeof c->win->b)
		return c->win->rd->read(c->win->rd, dst, n, c->pos) == n;
	if (!(p = bytes_at(c, c->pos, n)))
		return false;
	memcpy(dst, p, n);
	return true;
}

/* The file came up shorter than when it was opened (or could not be read):
 * an error, where reading the mapping would have killed the process. */
static nnn_status_t unread(nnn_cur_t *c, size_t n)
{
	return nnn_cur_fail(c, NNN_E_IO, c->pos, "%zu bytes could not be read here: " NNN_SHORT_READ, n);
}

/* Makes `n` bytes available at the cursor or fails as truncated. */
static nnn_status_t need(nnn_cur_t *c, size_t n, const char *what)
{
	if (c->len - c->pos >= n)
		return NNN_OK;
	return nnn_cur_fail(c, NNN_E_TRUNCATED, c->pos, "%s needs %zu bytes, found %zu", what, n,
	                    c->len - c->pos);
}

static void visit(nnn_cur_t *c, nnn_field_t *f)
{
	if (c->vis && c->vis->field) {
		f->path = c->path.s;
		c->vis->field(c->vis->ctx, f);
	}
}

/* Pushes the field name, checks `n` fixed bytes, fills the common parts. */
static nnn_status_t begin(nnn_cur_t *c, const char *name, size_t n, const char *what, size_t *mark,
                          uint64_t *at)
{
	*mark = nnn_path_push(&c->path, name);
	*at = c->pos;
	return need(c, n, what);
}

#define SCALAR_READER(fn, ctype, prim_, what, width, decode_expr, store)                                   \
	nnn_status_t fn(nnn_cur_t *c, const char *name, const char *doc, const nnn_type_t *type,     \
	                ctype *out, uint64_t *at)                                                    \
	{                                                                                            \
		size_t mark;                                                                         \
		const unsigned char *p;                                                              \
		nnn_field_t f = { .prim = prim_, .type = type, .doc = doc, .size = width };          \
		NNN_TRY(begin(c, name, width, what, &mark, at));                                      \
		p = bytes_at(c, c->pos, width);                                                      \
		if (!p)                                                                              \
			return unread(c, width);                                                     \
		decode_expr;                                                                         \
		f.offset = *at;                                                                      \
		c->pos += width;                                                                     \
		visit(c, &f);                                                                        \
		store;                                                                               \
		nnn_path_pop(&c->path, mark);                                                        \
		return NNN_OK;                                                                       \
	}

SCALAR_READER(nnn_rd_u8, uint8_t, NNN_PRIM_U8, "u8", 1, f.i = p[0], *out = (uint8_t)f.i)
SCALAR_READER(nnn_rd_i32, int32_t, NNN_PRIM_I32, "int32", 4, f.i = (int32_t)le32(p), *out = (int32_t)f.i)
SCALAR_READER(nnn_rd_u64, uint64_t, NNN_PRIM_U64, "uint64", 8, f.u = le64(p), *out = f.u)
SCALAR_READER(nnn_rd_f32, float, NNN_PRIM_F32, "float32", 4, { uint32_t u = le32(p); memcpy(&f.f, &u, 4); },
              memcpy(out, &f.f, 4))

nnn_status_t nnn_rd_bool(nnn_cur_t *c, const char *name, const char *doc, const nnn_type_t *type,
                         bool *out, uint64_t *at)
{
	size_t mark;
	nnn_field_t f = { .prim = NNN_PRIM_BOOL, .type = type, .doc = doc, .size = 1 };
	NNN_TRY(begin(c, name, 1, "bool", &mark, at));
	f.offset = *at;
	const unsigned char *p = bytes_at(c, c->pos, 1);
	if (!p)
		return unread(c, 1);
	f.i = *p;
	c->pos++;
	visit(c, &f);
	*out = f.i != 0;
	if (f.i > 1)
		NNN_TRY(nnn_cur_soft(c, NNN_E_BOOL, *at, "found %d, expected 0 or 1", (int)f.i));
	nnn_path_pop(&c->path, mark);
	return NNN_OK;
}

/* Reads an int32 count of `elem`-byte elements and checks it against the
 * bytes left; leaves the cursor on the first element. */
static nnn_status_t count(nnn_cur_t *c, size_t elem, const char *what, int32_t *n)
{
	uint64_t at = c->pos;
	NNN_TRY(need(c, 4, "count"));
	const unsigned char *p = bytes_at(c, c->pos, 4);
	if (!p)
		return unread(c, 4);
	*n = (int32_t)le32(p);
	if (*n < 0)
		return nnn_cur_fail(c, NNN_E_COUNT_NEGATIVE, at, "%s count is %d, expected >= 0", what, (int)*n);
	c->pos += 4;
	/* Checked before anything is allocated: a 30-byte file cannot claim 2^31 floats. */
	if ((uint64_t)*n * elem > c->len - c->pos) {
		nnn_status_t s = elem == 1
		                         ? nnn_cur_fail(c, NNN_E_TRUNCATED, at, "found %d bytes, but only %zu remain",
		                                        (int)*n, c->len - c->pos)
		                         : nnn_cur_fail(c, NNN_E_TRUNCATED, at,
		                                        "found %d %ss (%" PRIu64 " bytes), but only %zu bytes remain",
		                                        (int)*n, what, (uint64_t)*n * elem, c->len - c->pos);
		c->pos -= 4;
		return s;
	}
	return NNN_OK;
}

/* Points at n bytes at the cursor. Bytes the decoder reads itself (`read`:
 * a string's, for UTF-8) are copied from the file when there is a window;
 * tensor data stay views of buf. (NNN_DECODE_COPY never reaches the cursor:
 * nnn_model_decode copies the whole input and decodes views of the copy.) */
static nnn_status_t take(nnn_cur_t *c, size_t n, bool read, const unsigned char **out)
{
	if (!read || !c->win || n == 0) {
		*out = c->buf + c->pos;
		return NNN_OK;
	}
	unsigned char *p = nnn_arena_alloc(c->arena, n);
	if (!p)
		return nnn_cur_fail(c, NNN_E_NOMEM, c->pos, "cannot allocate %zu bytes", n);
	if (!fetch(c, n, p))
		return unread(c, n);
	*out = p;
	return NNN_OK;
}

nnn_status_t nnn_rd_string(nnn_cur_t *c, const char *name, const char *doc, const nnn_type_t *type,
                           nnn_str_t *out, uint64_t *at)
{
	size_t mark, bad;
	const unsigned char *p;
	nnn_field_t f = { .prim = NNN_PRIM_STRING, .type = type, .doc = doc };
	NNN_TRY(begin(c, name, 0, "string", &mark, at));
	NNN_TRY(count(c, 1, "byte", &f.count));
	f.offset = *at;
	f.size = 4 + (uint64_t)f.count;
	NNN_TRY(take(c, (size_t)f.count, true, &p));
	f.bytes = p; /* the copy, when there is one */
	c->pos += (size_t)f.count;
	visit(c, &f);
	out->ptr = (const char *)p;
	out->len = f.count;
	bad = nnn_utf8_bad(p, (size_t)f.count);
	if (bad != (size_t)f.count)
		NNN_TRY(nnn_cur_soft(c, NNN_E_UTF8, *at + 4 + bad, "byte %zu of the string (0x%02x) is not valid UTF-8",
		                     bad, p[bad]));
	nnn_path_pop(&c->path, mark);
	return NNN_OK;
}

nnn_status_t nnn_rd_i32_array(nnn_cur_t *c, const char *name, const char *doc, const nnn_type_t *type,
                              nnn_i32s_t *out, uint64_t *at)
{
	size_t mark;
	int32_t *v = NULL;
	nnn_field_t f = { .prim = NNN_PRIM_I32_ARRAY, .type = type, .doc = doc };
	NNN_TRY(begin(c, name, 0, "int32 array", &mark, at));
	NNN_TRY(count(c, 4, "int32", &f.count));
	f.bytes = c->buf + c->pos;
	f.offset = *at;
	f.size = 4 + 4 * (uint64_t)f.count;
	if (f.count > 0) {
		/* Bounded by the bytes just checked: at most the array's own size. */
		v = nnn_arena_alloc(c->arena, 4 * (size_t)f.count);
		if (!v)
			return nnn_cur_fail(c, NNN_E_NOMEM, *at, "cannot allocate %d int32s", (int)f.count);
		if (!fetch(c, 4 * (size_t)f.count, (unsigned char *)v))
			return unread(c, 4 * (size_t)f.count);
		for (int32_t i = 0; i < f.count; i++) /* in place, from the file's little-endian bytes */
			v[i] = (int32_t)le32((const unsigned char *)(v + i));
		if (c->win)
			f.bytes = (const unsigned char *)v; /* the same bytes on the little-endian hosts nnnkit runs on */
	}
	c->pos += 4 * (size_t)f.count;
	visit(c, &f);
	out->v = v;
	out->n = f.count;
	nnn_path_pop(&c->path, mark);
	return NNN_OK;
}

/* A visitor reads the values of a float array; through a window they are
 * read with pread into the cursor's scratch (valid during the visit), so a
 * visitor never reads the mapping either. */
static nnn_status_t for_visitor(nnn_cur_t *c, size_t n, const unsigned char **out)
{
	if (n > c->scratch_cap) {
		unsigned char *p = realloc(c->scratch, n);
		if (!p)
			return nnn_cur_fail(c, NNN_E_NOMEM, c->pos, "cannot allocate %zu bytes to show a float array", n);
		c->scratch = p;
		c->scratch_cap = n;
	}
	if (!fetch(c, n, c->scratch))
		return unread(c, n);
	*out = c->scratch;
	return NNN_OK;
}

nnn_status_t nnn_rd_f32_array(nnn_cur_t *c, const char *name, const char *doc, const nnn_type_t *type,
                              nnn_f32s_t *out, uint64_t *at)
{
	size_t mark;
	const unsigned char *p;
	nnn_field_t f = { .prim = NNN_PRIM_F32_ARRAY, .type = type, .doc = doc };
	NNN_TRY(begin(c, name, 0, "float32 array", &mark, at));
	NNN_TRY(count(c, 4, "float32", &f.count));
	f.bytes = c->buf + c->pos;
	f.offset = *at;
	f.size = 4 + 4 * (uint64_t)f.count;
	NNN_TRY(take(c, 4 * (size_t)f.count, false, &p));
	if (c->win && c->vis && c->vis->field && f.count > 0)
		NNN_TRY(for_visitor(c, 4 * (size_t)f.count, &f.bytes));
	c->pos += 4 * (size_t)f.count;
	visit(c, &f);
	out->bytes = p;
	out->n = f.count;
	nnn_path_pop(&c->path, mark);
	return NNN_OK;
}

/* An element type's name in messages: "float16", "bfloat16", "int8", ... */
static const char *ekind_name(nnn_ekind_t k, int width, char *buf, size_t size)
{
	static const char *const kinds[] = { "?", "int", "uint", "float", "bfloat", "bool" };
	snprintf(buf, size, "%s%d", kinds[(unsigned)k < 6 ? k : 0], 8 * width);
	return buf;
}

nnn_status_t nnn_rd_num(nnn_cur_t *c, const char *name, const char *doc, nnn_ekind_t kind, int width, void *out,
                        uint64_t *at)
{
	size_t mark;
	char what[16];
	nnn_field_t f = { .prim = NNN_PRIM_NUM_OF(kind, width), .doc = doc, .size = (uint64_t)width };
	NNN_TRY(begin(c, name, (size_t)width, ekind_name(kind, width, what, sizeof what), &mark, at));
	const unsigned char *p = bytes_at(c, c->pos, (size_t)width);
	if (!p)
		return unread(c, (size_t)width);
	f.u = nnn_le_bits(p, width);
	f.i = (int64_t)f.u;
	if (kind == NNN_EK_INT && width < 8 && (f.u >> (8 * width - 1) & 1))
		f.i = (int64_t)(f.u | ~0ull << (8 * width)); /* sign-extended */
	if ((kind == NNN_EK_FLOAT || kind == NNN_EK_BFLOAT) && width <= 4) /* exact; a float64 may not fit */
		f.f = (float)nnn_num_double(kind, width, f.u);
	f.offset = *at;
	c->pos += (size_t)width;
	visit(c, &f);
	switch (width) { /* into the member's C type of that width */
	case 1: { uint8_t x = (uint8_t)f.u; memcpy(out, &x, 1); break; }
	case 2: { uint16_t x = (uint16_t)f.u; memcpy(out, &x, 2); break; }
	case 4: { uint32_t x = (uint32_t)f.u; memcpy(out, &x, 4); break; }
	default: memcpy(out, &f.u, 8); break;
	}
	nnn_path_pop(&c->path, mark);
	return NNN_OK;
}

nnn_status_t nnn_rd_nums(nnn_cur_t *c, const char *name, const char *doc, nnn_ekind_t kind, int width,
                         nnn_elems_t *out, uint64_t *at)
{
	size_t mark;
	char what[16], arr[32];
	const unsigned char *p;
	nnn_field_t f = { .prim = NNN_PRIM_NUMS_OF(kind, width), .doc = doc };
	ekind_name(kind, width, what, sizeof what);
	snprintf(arr, sizeof arr, "%s array", what);
	NNN_TRY(begin(c, name, 0, arr, &mark, at));
	/* Checked against the bytes left before anything is taken, as for float32s. */
	NNN_TRY(count(c, (size_t)width, what, &f.count));
	size_t n = (size_t)width * (size_t)f.count;
	f.bytes = c->buf + c->pos;
	f.offset = *at;
	f.size = 4 + (uint64_t)n;
	NNN_TRY(take(c, n, false, &p));
	if (c->win && c->vis && c->vis->field && f.count > 0)
		NNN_TRY(for_visitor(c, n, &f.bytes));
	c->pos += n;
	visit(c, &f);
	out->bytes = p;
	out->n = f.count;
	nnn_path_pop(&c->path, mark);
	return NNN_OK;
}

nnn_status_t nnn_cur_array(nnn_cur_t *c, const char *count_name, int32_t n, size_t min_bytes, size_t size,
                           uint64_t count_at, void **out)
{
	size_t left = c->len - c->pos;
	*out = NULL;
	if (n < 0) {
		size_t mark = nnn_path_push(&c->path, count_name);
		nnn_status_t s = nnn_cur_fail(c, NNN_E_COUNT_NEGATIVE, count_at, "found %d, expected >= 0", (int)n);
		nnn_path_pop(&c->path, mark);
		return s;
	}
	if (min_bytes && (uint64_t)n > left / min_bytes) {
		size_t mark = nnn_path_push(&c->path, count_name);
		nnn_status_t s = nnn_cur_fail(c, NNN_E_TRUNCATED, count_at,
		                              "found %d, but the %zu bytes left hold at most %zu (each takes >= %zu bytes)",
		                              (int)n, left, left / min_bytes, min_bytes);
		nnn_path_pop(&c->path, mark);
		return s;
	}
	if (n == 0)
		return NNN_OK;
	if ((size_t)n > SIZE_MAX / size)
		return nnn_cur_fail(c, NNN_E_NOMEM, count_at, "%d elements do not fit in memory", (int)n);
	if (c->look && c->look->big) {
		NNN_TRY(c->look->big(c->look, (size_t)n * size, out));
		if (*out)
			return NNN_OK;
	}
	*out = nnn_arena_alloc(c->arena, (size_t)n * size);
	if (!*out)
		return nnn_cur_fail(c, NNN_E_NOMEM, count_at, "cannot allocate %d elements", (int)n);
	memset(*out, 0, (size_t)n * size);
	return NNN_OK;
}

nnn_status_t nnn_cur_const(nnn_cur_t *c, const char *name, int64_t found, int64_t expected, uint64_t at)
{
	size_t mark = nnn_path_push(&c->path, name);
	nnn_status_t s = nnn_cur_fail(c, NNN_E_MAGIC, at, "found %" PRId64 " (0x%08" PRIx64 "), expected %" PRId64,
	                              found, (uint64_t)found & 0xffffffffu, expected);
	nnn_path_pop(&c->path, mark);
	return s;
}

nnn_status_t nnn_cur_enum(nnn_cur_t *c, const char *name, const char *tag_kind, const nnn_type_t *type,
                          int64_t found, uint64_t at)
{
	size_t mark = nnn_path_push(&c->path, name);
	nnn_status_t s;
	if (tag_kind) {
		/* The ID decides how many bytes follow: nothing after it can be read. */
		char loaded[256];
		s = nnn_cur_fail(c, NNN_E_UNKNOWN_ID, at,
		                 "%s ID %" PRId64 " is not defined by this codec's schema, and no loaded plugin "
		                 "provides it (plugins loaded: %s); nothing after it can be read",
		                 tag_kind, found, c->look ? c->look->names(c->look, loaded, sizeof loaded) : "none");
	} else {
		char known[256] = "";
		size_t k = 0;
		for (int64_t v = 0; v < 256 && k < sizeof known - 32; v++) {
			const char *n = type->value_name(v);
			if (n)
				k += (size_t)snprintf(known + k, sizeof known - k, "%s%" PRId64 " (%s)", k ? ", " : "", v, n);
		}
		s = nnn_cur_soft(c, NNN_E_ENUM, at, "%s %" PRId64 " is not one of %s", type->name, found, known);
	}
	nnn_path_pop(&c->path, mark);
	return s;
}

/* ---- IDs the schema lacks: the cursor's lookup answers ---- */

bool nnn_cur_ext_find(nnn_cur_t *c, nnn_ext_kind_t k, int64_t id, nnn_ext_t *ext)
{
	ext->type = NULL;
	ext->body = NULL;
	return c->look && c->look->find(c->look, c, k, id, ext);
}

nnn_status_t nnn_cur_ext_decode(nnn_cur_t *c, nnn_ext_kind_t k, nnn_ext_t *ext)
{
	return c->look->decode(c->look, c, k, ext);
}

nnn_status_t nnn_cur_end(nnn_cur_t *c)
{
	if (c->pos == c->len)
		return NNN_OK;
	return nnn_cur_soft(c, NNN_E_TRAILING, c->pos, "%zu bytes follow the last layer, expected none",
	                    c->len - c->pos);
}

/* ---- validation rule applied while decoding ---- */

nnn_status_t nnn_rule_dims_product(nnn_cur_t *c, nnn_i32s_t dims, uint64_t dims_at, nnn_f32s_t data,
                                   uint64_t data_at)
{
	return nnn_rule_dims_count(c, dims, dims_at, data.n, data_at);
}

nnn_status_t nnn_rule_dims_count(nnn_cur_t *c, nnn_i32s_t dims, uint64_t dims_at, int32_t count, uint64_t data_at)
{
	uint64_t prod = 1;
	bool zero = false, overflow = false;
	for (int32_t i = 0; i < dims.n; i++) {
		uint64_t d = (uint64_t)dims.v[i];
		if (dims.v[i] < 0) {
			size_t mark = nnn_path_push(&c->path, "dims");
			nnn_path_index(&c->path, i);
			nnn_status_t s = nnn_cur_soft(c, NNN_E_DIM_NEGATIVE, dims_at + 4 + 4 * (uint64_t)i,
			                              "found %d, expected >= 0", (int)dims.v[i]);
			nnn_path_pop(&c->path, mark);
			return s;
		}
		if (d == 0)
			zero = true;
		else if (prod > UINT64_MAX / d)
			overflow = true;
		else
			prod *= d;
	}
	if (zero) {
		prod = 0;
	} else if (overflow) {
		size_t mark = nnn_path_push(&c->path, "dims");
		nnn_status_t s = nnn_cur_soft(c, NNN_E_DIM_OVERFLOW, dims_at, "the product of %d dims exceeds 2^64",
		                              (int)dims.n);
		nnn_path_pop(&c->path, mark);
		return s;
	}
	nnn_status_t s = NNN_OK;
	if (prod != (uint64_t)count) {
		size_t mark = nnn_path_push(&c->path, "data");
		s = nnn_cur_soft(c, NNN_E_DIM_MISMATCH, data_at, "dims multiply to %" PRIu64 ", but data has %d values",
		                 prod, (int)count);
		nnn_path_pop(&c->path, mark);
	}
	return s;
}
