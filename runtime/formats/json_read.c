/* json_read.c: the JSON form back into a model (nnn/json.h, docs/json.md).
 *
 * jansson parses the text; the walk follows the record descriptors generated
 * from the schema, as the writer's does, and fills a model whose memory is
 * an arena of its own. Reading stops at the first problem. jansson keeps no
 * positions of values, so a problem's line and column are found afterwards
 * by scanning the text for the problem's field path (nnn_json_locate):
 * field paths and JSON paths are the same by construction.
 */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nnn/esc.h>
#include <nnn/file.h>
#include <nnn/npy.h>
#include <nnn/validate.h>

#include "arena.h"
#include "codec.h"
#include "path.h"
#include "try.h"
#include "fileio.h"
#include "json_form.h"
#include "shape_io.h"

/* Descriptors whose fields one JSON object holds: a record's, and those its
 * variants select (a Dense layer's fields beside the layer's). */
#define MAX_ACTIVE 8
typedef struct active {
	const nnn_rdesc_t *v[MAX_ACTIVE];
	int n;
} active_t;

/* A .npy file already read, known by device and inode (whatever name a
 * reference gives it): every tensor that names it shares its data. */
typedef struct npy_file {
	dev_t dev;
	ino_t ino;
	const unsigned char *bytes; /* the file's elements as it holds them, in the model's arena */
	int32_t n;
	nnn_shape_t shape;
	size_t uses;
	nnn_npy_typed_t t;          /* its dtype (bytes: NULL; for nnn_npy_typed_as, nnn_npy_typed_f32) */
	const unsigned char *f32;   /* the elements as float32, made for the first float32 field naming it */
} npy_file_t;

typedef struct rd {
	const char *text;
	size_t len;
	nnn_diags_t *d;
	nnn_arena_t *arena;
	unsigned flags;
	const nnn_ctx_t *ctx;
	const char *base_dir;
	nnn_path_t path;
	uint64_t *total;       /* spec: the parameter count to fill in, or NULL */
	bool npy_read;         /* the last float array came from a .npy file... */
	nnn_shape_t npy_shape; /* ...of this shape */
	npy_file_t *files;     /* the .npy files read, each once... */
	size_t nfiles, files_cap;
	size_t *slots;         /* ...found by (device, inode) here: index + 1, 0 free */
	size_t nslots;         /* a power of two, at least twice nfiles; 0 before the first */
	uint64_t npy_total;    /* bytes the references fill, each one counted */
	uint64_t npy_distinct; /* bytes of the distinct files' data */
	uint64_t npy_cap;      /* 0, or the cap a first walk found passed: refuse the reference past it... */
	uint64_t cap_distinct; /* ...set by the distinct files' bytes of that walk... */
	size_t cap_files;      /* ...and their number */
} rd_t;

#define SPEC(r) (((r)->flags & NNN_JSON_SPEC) != 0)

/* ---- positions ---- */

typedef struct scan {
	const char *s;
	size_t n, i;
} scan_t;

static void sc_ws(scan_t *c)
{
	while (c->i < c->n && (c->s[c->i] == ' ' || c->s[c->i] == '\t' || c->s[c->i] == '\n' || c->s[c->i] == '\r'))
		c->i++;
}

/* Past a string at '"'; its content into key (escapes of ASCII decoded,
 * others as '?'), when key is not NULL. */
static void sc_string(scan_t *c, char *key, size_t size)
{
	size_t k = 0;
	for (c->i++; c->i < c->n && c->s[c->i] != '"'; c->i++) {
		char ch = c->s[c->i];
		if (ch == '\\' && c->i + 1 < c->n) {
			ch = c->s[++c->i];
			if (ch == 'u') {
				unsigned u = 0;
				for (int j = 0; j < 4 && c->i + 1 < c->n; j++) {
					char h = c->s[++c->i];
					u = u * 16 + (unsigned)(h <= '9' ? h - '0' : (h | 0x20) - 'a' + 10);
				}
				ch = u < 0x80 ? (char)u : '?';
			}
		}
		if (key && k + 1 < size)
			key[k++] = ch;
	}
	c->i++;
	if (key)
		key[k] = '\0';
}

/* Past one value, nested ones included, without recursion. */
static void sc_skip(scan_t *c)
{
	size_t depth = 0;
	sc_ws(c);
	do {
		if (c->i >= c->n)
			return;
		char ch = c->s[c->i];
		if (ch == '"') {
			sc_string(c, NULL, 0);
		} else if (ch == '{' || ch == '[') {
			depth++;
			c->i++;
		} else if (ch == '}' || ch == ']') {
			if (depth == 0)
				return;
			depth--;
			c->i++;
		} else if (depth == 0) {
			while (c->i < c->n && !strchr(",]} \t\r\n", c->s[c->i]))
				c->i++;
		} else {
			c->i++;
		}
	} while (depth > 0);
}

/* Whether path starts with the field path `p` as a whole step. */
static bool on_path(const char *path, const char *p, size_t n)
{
	return !strncmp(path, p, n) && (path[n] == '\0' || path[n] == '.' || path[n] == '[');
}

/* The offset of the value at `path`, or of its deepest ancestor present. */
static size_t find_path(const char *text, size_t len, const char *path)
{
	scan_t c = { text, len, 0 };
	char cur[NNN_PATH_MAX + 8] = "", key[NNN_PATH_MAX];
	size_t best;
	sc_ws(&c);
	for (;;) {
		best = c.i;
		if (!strcmp(cur, path) || c.i >= c.n || (c.s[c.i] != '{' && c.s[c.i] != '['))
			return best;
		bool obj = c.s[c.i] == '{', found = false;
		size_t base = strlen(cur);
		c.i++;
		for (int64_t idx = 0; !found; idx++) {
			sc_ws(&c);
			if (c.i >= c.n || c.s[c.i] == '}' || c.s[c.i] == ']')
				return best;
			if (obj) {
				if (c.s[c.i] != '"')
					return best;
				sc_string(&c, key, sizeof key);
				sc_ws(&c);
				c.i++; /* ':' */
				snprintf(cur + base, sizeof cur - base, "%s%s", base ? "." : "", key);
			} else {
				snprintf(cur + base, sizeof cur - base, "[%" PRId64 "]", idx);
			}
			sc_ws(&c);
			found = on_path(path, cur, strlen(cur));
			if (!found) {
				sc_skip(&c);
				sc_ws(&c);
				if (c.i < c.n && c.s[c.i] == ',')
					c.i++;
			}
		}
	}
}

static void position(const char *text, size_t at, uint32_t *line, uint32_t *column)
{
	*line = *column = 1;
	for (size_t i = 0; i < at; i++) {
		if (text[i] == '\n')
			*line += 1, *column = 1;
		else if (((unsigned char)text[i] & 0xC0) != 0x80) /* characters, as jansson counts */
			*column += 1;
	}
}

void nnn_json_locate(const char *text, size_t len, nnn_diags_t *diags, size_t from)
{
	for (size_t i = from; diags && text && i < diags->n; i++) {
		nnn_diag_t *g = &diags->v[i];
		if (g->line == 0 && g->path[0])
			position(text, find_path(text, len, g->path), &g->line, &g->column);
	}
}

/* ---- problems ---- */

static nnn_status_t fail(rd_t *r, nnn_status_t code, const char *fmt, ...) NNN_PRINTF(3, 4);

static nnn_status_t fail(rd_t *r, nnn_status_t code, const char *fmt, ...)
{
	char msg[NNN_MSG_MAX];
	size_t before = r->d ? r->d->n : 0;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	nnn_diags_add(r->d, code, NNN_NO_OFFSET, r->path.s, "%s", msg);
	if (r->d && r->d->n > before && r->text) {
		nnn_diag_t *g = &r->d->v[before];
		position(r->text, find_path(r->text, r->len, r->path.s), &g->line, &g->column);
	}
	return code;
}

/* A value as a short text for messages. */
static const char *shown(const json_t *v, char *buf, size_t size)
{
	if (json_is_object(v))
		snprintf(buf, size, "an object");
	else if (json_is_array(v))
		snprintf(buf, size, "an array of %zu values", json_array_size(v));
	else if (json_is_real(v))
		snprintf(buf, size, "%.9g", json_real_value(v));
	else {
		char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
		size_t k = s ? strlen(s) : 0;
		if (k > 40) {
			for (k = 37; k > 0 && ((unsigned char)s[k] & 0xC0) == 0x80; k--)
				;
			snprintf(buf, size, "%.*s...", (int)k, s);
		} else {
			snprintf(buf, size, "%s", s ? s : "a value");
		}
		free(s);
	}
	return buf;
}

/* ---- scalars ---- */

/* A string's text when it holds no NUL (a name, a number, a file); else NULL. */
static const char *text_of(const json_t *v)
{
	const char *s = json_string_value(v);
	return s && strlen(s) == json_string_length(v) ? s : NULL;
}

static nnn_status_t get_int(rd_t *r, const json_t *v, int64_t lo, int64_t hi, int64_t *out)
{
	char b[64];
	if (!json_is_integer(v))
		return fail(r, NNN_E_JSON_TYPE, "expected an integer in %" PRId64 "..%" PRId64 ", found %s", lo, hi,
		            shown(v, b, sizeof b));
	json_int_t x = json_integer_value(v);
	if (x < lo || x > hi)
		return fail(r, NNN_E_RANGE, "expected an integer in %" PRId64 "..%" PRId64 ", found %" PRId64, lo, hi,
		            (int64_t)x);
	*out = x;
	return NNN_OK;
}

static nnn_status_t get_u64(rd_t *r, const json_t *v, uint64_t *out)
{
	char b[64];
	const char *s = text_of(v);
	if (json_is_integer(v) && json_integer_value(v) >= 0) {
		*out = (uint64_t)json_integer_value(v);
		return NNN_OK;
	}
	/* Above 2^63-1, JSON readers need a string of digits. */
	if (s && s[0] >= '0' && s[0] <= '9' && strspn(s, "0123456789") == strlen(s) && strlen(s) <= 20) {
		uint64_t x = 0;
		bool over = false;
		for (const char *p = s; *p; p++) {
			over |= x > (UINT64_MAX - (uint64_t)(*p - '0')) / 10;
			x = x * 10 + (uint64_t)(*p - '0');
		}
		if (!over) {
			*out = x;
			return NNN_OK;
		}
	}
	bool digits = s && s[0] && strspn(s, "0123456789") == strlen(s);
	return fail(r, json_is_integer(v) || digits ? NNN_E_RANGE : NNN_E_JSON_TYPE,
	            "expected an integer in 0..18446744073709551615 (as a string of digits above "
	            "9223372036854775807), found %s",
	            shown(v, b, sizeof b));
}

static nnn_status_t get_f32(rd_t *r, const json_t *v, uint32_t *bits)
{
	char b[64];
	const char *s = text_of(v);
	if (json_is_number(v)) {
		double x = json_number_value(v);
		float f = (float)x;
		if (isinf(f))
			return fail(r, NNN_E_RANGE, "%s is outside float32's range (+-3.40282347e+38); write \"inf\" or "
			            "\"-inf\" for an infinity", shown(v, b, sizeof b));
		memcpy(bits, &f, sizeof f);
		return NNN_OK;
	}
	if (s && (!strcmp(s, "inf") || !strcmp(s, "-inf"))) {
		*bits = s[0] == '-' ? 0xff800000u : 0x7f800000u;
		return NNN_OK;
	}
	if (s && !strcmp(s, "nan")) {
		*bits = NNN_JSON_NAN;
		return NNN_OK;
	}
	unsigned long u;
	char *end;
	if (s && !strncmp(s, "nan:0x", 6) && strlen(s) == 14 && strspn(s + 6, "0123456789abcdefABCDEF") == 8) {
		u = strtoul(s + 6, &end, 16);
		if ((u & 0x7f800000u) != 0x7f800000u || (u & 0x007fffffu) == 0)
			return fail(r, NNN_E_RANGE, "%s: 0x%08lx is not the bits of a NaN (exponent all ones, mantissa not "
			            "zero); write the number instead", s, u);
		*bits = (uint32_t)u;
		return NNN_OK;
	}
	return fail(r, NNN_E_JSON_TYPE, "expected a number, or one of \"inf\", \"-inf\", \"nan\", "
	            "\"nan:0x7fc00001\" (a NaN's 8 hex digits), found %s", shown(v, b, sizeof b));
}

/* ---- arrays ---- */

static nnn_status_t alloc(rd_t *r, size_t n, size_t size, void **out)
{
	if (size && n > SIZE_MAX / size)
		return fail(r, NNN_E_NOMEM, "%zu elements of %zu bytes do not fit in memory", n, size);
	size_t bytes = n * size;
	bytes += !bytes; /* never 0: the arena gives every call its own bytes */
	*out = nnn_arena_alloc(r->arena, bytes);
	if (!*out)
		return fail(r, NNN_E_NOMEM, "cannot allocate %zu bytes", bytes);
	memset(*out, 0, bytes);
	return NNN_OK;
}

static nnn_status_t check_array(rd_t *r, const json_t *v, const char *what)
{
	char b[64];
	if (!json_is_array(v))
		return fail(r, NNN_E_JSON_TYPE, "expected %s, found %s", what, shown(v, b, sizeof b));
	if (json_array_size(v) > INT32_MAX)
		return fail(r, NNN_E_LIMIT, "%zu elements; the format holds at most 2147483647", json_array_size(v));
	return NNN_OK;
}

static nnn_status_t get_i32s(rd_t *r, const json_t *v, nnn_i32s_t *out)
{
	NNN_TRY(check_array(r, v, "an array of integers"));
	size_t n = json_array_size(v);
	int32_t *a;
	NNN_TRY(alloc(r, n, sizeof *a, (void **)&a));
	for (size_t i = 0; i < n; i++) {
		int64_t x;
		size_t m = nnn_path_index(&r->path, (int64_t)i);
		NNN_TRY(get_int(r, json_array_get(v, i), INT32_MIN, INT32_MAX, &x));
		nnn_path_pop(&r->path, m);
		a[i] = (int32_t)x;
	}
	out->v = a;
	out->n = (int32_t)n;
	return NNN_OK;
}

static void put_le(unsigned char *p, uint32_t u)
{
	p[0] = (unsigned char)u;
	p[1] = (unsigned char)(u >> 8);
	p[2] = (unsigned char)(u >> 16);
	p[3] = (unsigned char)(u >> 24);
}

/* A .npy problem as one of this field's: the file's own path and message. */
static nnn_status_t npy_fail(rd_t *r, const char *file, const nnn_diags_t *nd, nnn_status_t st)
{
	char where[NNN_PATH_MAX + 32] = "";
	if (!nd->n)
		return fail(r, st, "%s: %s", file, nnn_status_str(st));
	const nnn_diag_t *g = &nd->v[0];
	if (g->path[0] && g->offset != NNN_NO_OFFSET)
		snprintf(where, sizeof where, "%s @0x%" PRIx64 ": ", g->path, g->offset);
	else if (g->path[0])
		snprintf(where, sizeof where, "%s: ", g->path);
	return fail(r, g->code, "%s: %s%s", file, where, g->msg);
}

/* The tensor bytes a spec's .npy references may fill in all (each reference
 * counted): NPY_CAP_BASE plus NPY_CAP_TIMES the bytes of the distinct files'
 * data. Every file is read once whatever names it, so memory while reading
 * follows the distinct files; but the model, and every copy of it written or
 * encoded, holds each reference's bytes: without a cap a 10 KB spec naming
 * one 4 MB file 100 times makes a 400 MB model. */
#define NPY_CAP_BASE ((uint64_t)64 << 20)
#define NPY_CAP_TIMES 4

static uint64_t npy_cap(uint64_t distinct)
{
	return distinct > (UINT64_MAX - NPY_CAP_BASE) / NPY_CAP_TIMES ? UINT64_MAX
	                                                               : NPY_CAP_BASE + NPY_CAP_TIMES * distinct;
}

/* The slot of (dev, ino) in the table: its file's, or the free one where
 * it goes. Open addressing, so that a spec naming many files costs time
 * linear in its references. */
static size_t *slot_of(const rd_t *r, dev_t dev, ino_t ino)
{
	size_t h = ((size_t)dev * 0x9e3779b97f4a7c15u) ^ (size_t)ino, mask = r->nslots - 1;
	for (size_t i = (h ^ h >> 29) & mask;; i = (i + 1) & mask) {
		size_t k = r->slots[i];
		if (!k || (r->files[k - 1].dev == dev && r->files[k - 1].ino == ino))
			return &r->slots[i];
	}
}

/* The file seen before as (dev, ino), or NULL. */
static npy_file_t *seen_file(const rd_t *r, const struct stat *sb)
{
	size_t k = r->nslots ? *slot_of(r, sb->st_dev, sb->st_ino) : 0;
	return k ? &r->files[k - 1] : NULL;
}

/* Room for one more file in the list and the table (rebuilt twice as big
 * when half full). */
static nnn_status_t files_room(rd_t *r)
{
	if (r->nfiles == r->files_cap) {
		size_t cap = r->files_cap ? 2 * r->files_cap : 8;
		npy_file_t *v = cap <= SIZE_MAX / sizeof *v ? realloc(r->files, cap * sizeof *v) : NULL;
		if (!v)
			return fail(r, NNN_E_NOMEM, "cannot allocate a list of %zu .npy files", cap);
		r->files = v, r->files_cap = cap;
	}
	if (2 * (r->nfiles + 1) > r->nslots) {
		size_t n = r->nslots ? 2 * r->nslots : 16;
		size_t *old = r->slots, nold = r->nslots;
		if (!(r->slots = n <= SIZE_MAX / sizeof *r->slots ? calloc(n, sizeof *r->slots) : NULL)) {
			r->slots = old;
			return fail(r, NNN_E_NOMEM, "cannot allocate a table of %zu .npy files", n);
		}
		r->nslots = n;
		for (size_t i = 0; i < nold; i++)
			if (old[i])
				*slot_of(r, r->files[old[i] - 1].dev, r->files[old[i] - 1].ino) = old[i];
		free(old);
	}
	return NNN_OK;
}

/* The open file's array, kept as the file holds it, in the arena: the bytes
 * are read (checked reads), decoded, then copied, each buffer freed as soon
 * as the next holds the values, so that a file costs twice its size at most. */
static nnn_status_t read_npy(rd_t *r, const char *file, int fd, size_t size, const struct stat *sb,
                             npy_file_t **out)
{
	unsigned char *buf = NULL, *bytes = NULL;
	nnn_npy_typed_t a = { 0 };
	nnn_diags_t nd;
	nnn_diags_init(&nd);
	nnn_status_t st = nnn_read_copy(fd, size, &buf, &nd);
	if (st == NNN_OK)
		st = nnn_npy_read_typed_mem(buf, size, &a, &nd);
	free(buf);
	if (st != NNN_OK)
		st = npy_fail(r, file, &nd, st);
	nnn_diags_free(&nd);
	if (st == NNN_OK && a.count > INT32_MAX)
		st = fail(r, NNN_E_LIMIT, "%s holds %zu values; a tensor holds at most 2147483647", file, a.count);
	if (st == NNN_OK)
		st = files_room(r);
	if (st == NNN_OK)
		st = alloc(r, a.count, (size_t)a.width, (void **)&bytes);
	if (st == NNN_OK) {
		if (a.count)
			memcpy(bytes, a.bytes, a.count * (size_t)a.width);
		*out = &r->files[r->nfiles++];
		**out = (npy_file_t){ sb->st_dev, sb->st_ino, bytes, (int32_t)a.count, a.shape, 0, a, NULL };
		(*out)->t.bytes = NULL;
		*slot_of(r, sb->st_dev, sb->st_ino) = r->nfiles;
		r->npy_distinct += (uint64_t)a.width * a.count;
	}
	nnn_npy_typed_free(&a);
	return st;
}

/* The file a reference names: regular files only (not standard input, a
 * pipe or /dev/zero, which would be read without end), opened first and
 * known by what it is, so that a file named again (by any name: a link, a
 * path with "./") is not read again. */
static nnn_status_t load_npy(rd_t *r, const char *name, npy_file_t **out)
{
	char file[4096];
	struct stat sb;
	nnn_diags_t nd;
	size_t size;
	int fd;
	bool rel = name[0] != '/';
	snprintf(file, sizeof file, "%s%s%s", rel ? (r->base_dir ? r->base_dir : ".") : "", rel ? "/" : "", name);
	nnn_diags_init(&nd);
	nnn_status_t st = nnn_open_regular(file, NULL, &fd, &size, &nd);
	if (st != NNN_OK) {
		st = npy_fail(r, file, &nd, st);
		nnn_diags_free(&nd);
		return st;
	}
	nnn_diags_free(&nd);
	if (fstat(fd, &sb) != 0)
		st = fail(r, NNN_E_IO, "%s: cannot stat: %s", file, strerror(errno));
	else if ((*out = seen_file(r, &sb)) == NULL)
		st = read_npy(r, file, fd, size, &sb, out);
	close(fd);
	return st;
}

/* The optional "dtype" and "shape" of a reference against the file read:
 * the dtype is the field's element type ("float16"; "bfloat16" for a
 * bfloat16 field, whose file holds the raw bits as '<u2'). */
static nnn_status_t check_ref(rd_t *r, const json_t *ref, const char *name, const nnn_shape_t *file_shape,
                              nnn_ekind_t kind, int width)
{
	char b[64], sh[NNN_MAX_RANK * 22 + 8];
	const json_t *dtype = json_object_get(ref, "dtype"), *shape = json_object_get(ref, "shape");
	const char *dt = dtype ? text_of(dtype) : NULL, *want = nnn_npy_dtype_name(kind, width);
	size_t m;
	if (dtype && (!dt || (strcmp(dt, want) && strcmp(dt, nnn_npy_descr(kind, width))))) {
		nnn_path_push(&r->path, "dtype");
		return fail(r, NNN_E_ENUM, "expected \"%s\" (what this field holds%s), found %s", want,
		            kind == NNN_EK_FLOAT && width == 4 ? "; any dtype nnnkit reads is converted"
		            : kind == NNN_EK_BFLOAT ? "; its .npy file holds the raw bits as '<u2'" : "",
		            shown(dtype, b, sizeof b));
	}
	if (!shape)
		return NNN_OK;
	m = nnn_path_push(&r->path, "shape");
	bool same = json_is_array(shape) && json_array_size(shape) == (size_t)file_shape->rank;
	for (int32_t i = 0; same && i < file_shape->rank; i++)
		same = json_is_integer(json_array_get(shape, (size_t)i)) &&
		       json_integer_value(json_array_get(shape, (size_t)i)) == file_shape->dims[i];
	if (!same)
		return fail(r, NNN_E_DIM_MISMATCH, "%s has shape %s, the reference says %s", name,
		            nnn_shape_format(file_shape, sh, sizeof sh), shown(shape, b, sizeof b));
	nnn_path_pop(&r->path, m);
	return NNN_OK;
}

/* The reference that takes the total past the cap (known on the second
 * walk: see over_cap). */
static nnn_status_t check_cap(rd_t *r, const char *name, const npy_file_t *f)
{
	if (!r->npy_cap || r->npy_total <= r->npy_cap)
		return NNN_OK;
	return fail(r, NNN_E_LIMIT, "%s: the .npy references up to here fill %" PRIu64 " bytes of tensors (each "
	            "reference counted), past this spec's cap of %" PRIu64 " bytes: %" PRIu64 " MiB plus %d times the %"
	            PRIu64 " bytes of the %zu distinct .npy file%s it names (each is read once, but the model holds "
	            "every reference's copy); %s is named %zu times up to here. Give such tensors files of their own, "
	            "or name each file fewer times", name, r->npy_total, r->npy_cap, NPY_CAP_BASE >> 20, NPY_CAP_TIMES,
	            r->cap_distinct, r->cap_files, r->cap_files == 1 ? "" : "s", name, f->uses);
}

/* The file's elements as a float32 field takes them: its own '<f4' bytes,
 * or every dtype converted (nnn_npy_read_mem's conversions), once per file. */
static nnn_status_t npy_f32(rd_t *r, const char *name, npy_file_t *f, const unsigned char **out)
{
	if (f->t.kind == NNN_EK_FLOAT && f->t.width == 4) {
		*out = f->bytes;
		return NNN_OK;
	}
	if (!f->f32) {
		unsigned char *b;
		nnn_diags_t nd;
		NNN_TRY(alloc(r, (size_t)f->n, 4, (void **)&b));
		nnn_npy_typed_t t = f->t;
		t.bytes = (unsigned char *)f->bytes;
		nnn_diags_init(&nd);
		nnn_status_t st = nnn_npy_typed_f32(&t, (float *)(void *)b, &nd); /* the arena aligns: little-endian hosts */
		if (st != NNN_OK)
			st = npy_fail(r, name, &nd, st);
		nnn_diags_free(&nd);
		NNN_TRY(st);
		f->f32 = b;
	}
	*out = f->f32;
	return NNN_OK;
}

/* The file's elements as a field of `kind` and `width` takes them
 * (nnn_npy_typed_as: its own dtype, or an exact widening). */
static nnn_status_t npy_typed(rd_t *r, const char *name, npy_file_t *f, nnn_ekind_t kind, int width,
                              const unsigned char **out)
{
	if ((f->t.kind == kind || (kind == NNN_EK_BFLOAT && f->t.kind == NNN_EK_UINT)) && f->t.width == width) {
		*out = f->bytes;
		return NNN_OK;
	}
	unsigned char *b;
	nnn_diags_t nd;
	NNN_TRY(alloc(r, (size_t)f->n, (size_t)width, (void **)&b));
	nnn_npy_typed_t t = f->t;
	t.bytes = (unsigned char *)f->bytes;
	nnn_diags_init(&nd);
	nnn_status_t st = nnn_npy_typed_as(&t, kind, width, b, r->path.s, &nd);
	if (st != NNN_OK)
		st = fail(r, st, "%s: %s", name, nd.n ? nd.v[0].msg : nnn_status_str(st));
	nnn_diags_free(&nd);
	*out = b;
	return st;
}

/* {"npy": FILE, "shape": [...], "dtype": "float32"}: the array in FILE, as
 * elements of `kind` and `width` (the field's). */
static nnn_status_t get_npy(rd_t *r, const json_t *v, nnn_ekind_t kind, int width, const unsigned char **bytes,
                            int32_t *count)
{
	char b[64];
	const json_t *name = json_object_get(v, "npy");
	const char *key;
	json_t *val;
	json_object_foreach((json_t *)v, key, val) {
		if (strcmp(key, "npy") && strcmp(key, "shape") && strcmp(key, "dtype")) {
			nnn_path_push(&r->path, key);
			return fail(r, NNN_E_JSON_UNKNOWN, "\"%s\": a .npy reference has the keys \"npy\", \"shape\" and "
			            "\"dtype\"", key);
		}
	}
	const char *n = name ? text_of(name) : NULL;
	if (!n)
		return fail(r, name ? NNN_E_JSON_TYPE : NNN_E_JSON_MISSING,
		            "a .npy reference needs \"npy\": the file's name (relative to the JSON's folder), found %s",
		            name ? shown(name, b, sizeof b) : "none");
	npy_file_t *f;
	size_t m = nnn_path_push(&r->path, "npy");
	NNN_TRY(load_npy(r, n, &f));
	f->uses++;
	r->npy_total += (uint64_t)width * (uint64_t)f->n;
	NNN_TRY(check_cap(r, n, f));
	nnn_path_pop(&r->path, m);
	NNN_TRY(check_ref(r, v, n, &f->shape, kind, width));
	if (kind == NNN_EK_FLOAT && width == 4)
		NNN_TRY(npy_f32(r, n, f, bytes));
	else
		NNN_TRY(npy_typed(r, n, f, kind, width, bytes));
	*count = f->n;
	r->npy_read = true;
	r->npy_shape = f->shape;
	return NNN_OK;
}

static nnn_status_t get_f32s(rd_t *r, const json_t *v, nnn_f32s_t *out)
{
	if (json_is_object(v))
		return get_npy(r, v, NNN_EK_FLOAT, 4, &out->bytes, &out->n);
	NNN_TRY(check_array(r, v, "an array of numbers, or {\"npy\": FILE}"));
	size_t n = json_array_size(v);
	unsigned char *b;
	NNN_TRY(alloc(r, n, 4, (void **)&b));
	for (size_t i = 0; i < n; i++) {
		uint32_t u;
		size_t m = nnn_path_index(&r->path, (int64_t)i);
		NNN_TRY(get_f32(r, json_array_get(v, i), &u));
		nnn_path_pop(&r->path, m);
		put_le(b + 4 * i, u);
	}
	out->bytes = b;
	out->n = (int32_t)n;
	return NNN_OK;
}

/* A float16, bfloat16 or float64 as get_f32 reads a float32: a number
 * (through float, but float64), "inf", "-inf", "nan", "nan:0x" and the
 * width's hex digits. */
static nnn_status_t get_real(rd_t *r, const json_t *v, nnn_ekind_t kind, int width, uint64_t *bits)
{
	char b[64];
	bool ok;
	const char *s = text_of(v);
	const char *name = kind == NNN_EK_BFLOAT ? "bfloat16" : width == 2 ? "float16" : "float64";
	if (json_is_number(v)) {
		*bits = nnn_json_num_bits(kind, width, json_number_value(v), &ok);
		if (isinf(nnn_num_double(kind, width, *bits)))
			return fail(r, NNN_E_RANGE, "%s is outside %s's range; write \"inf\" or \"-inf\" for an infinity",
			            shown(v, b, sizeof b), name);
		return NNN_OK;
	}
	if (s && (!strcmp(s, "inf") || !strcmp(s, "-inf") || !strcmp(s, "nan"))) {
		double d = !strcmp(s, "nan") ? NAN : s[0] == '-' ? -INFINITY : INFINITY;
		*bits = nnn_json_num_bits(kind, width, d, &ok); /* the quiet NaN without sign or payload */
		return NNN_OK;
	}
	size_t hex = 2 * (size_t)width;
	if (s && !strncmp(s, "nan:0x", 6) && strlen(s) == 6 + hex && strspn(s + 6, "0123456789abcdefABCDEF") == hex) {
		*bits = strtoull(s + 6, NULL, 16);
		if (!isnan(nnn_num_double(kind, width, *bits)))
			return fail(r, NNN_E_RANGE, "%s: not the bits of a %s NaN (exponent all ones, mantissa not zero); "
			            "write the number instead", s, name);
		return NNN_OK;
	}
	return fail(r, NNN_E_JSON_TYPE, "expected a number, or one of \"inf\", \"-inf\", \"nan\", \"nan:0x\" "
	            "and a %s NaN's %zu hex digits, found %s", name, hex, shown(v, b, sizeof b));
}

/* Any number of an element type without a named reader, as its raw bits. */
static nnn_status_t get_num(rd_t *r, const json_t *v, nnn_ekind_t kind, int width, uint64_t *bits)
{
	int64_t x;
	int b = 8 * width;
	if (kind == NNN_EK_FLOAT && width == 4) {
		uint32_t u;
		NNN_TRY(get_f32(r, v, &u));
		*bits = u;
		return NNN_OK;
	}
	if (kind == NNN_EK_FLOAT || kind == NNN_EK_BFLOAT)
		return get_real(r, v, kind, width, bits);
	if (kind == NNN_EK_UINT && width == 8)
		return get_u64(r, v, bits);
	if (kind == NNN_EK_INT)
		NNN_TRY(get_int(r, v, b == 64 ? INT64_MIN : -(INT64_C(1) << (b - 1)),
		                b == 64 ? INT64_MAX : (INT64_C(1) << (b - 1)) - 1, &x));
	else
		NNN_TRY(get_int(r, v, 0, (INT64_C(1) << b) - 1, &x));
	*bits = b == 64 ? (uint64_t)x : (uint64_t)x & ((UINT64_C(1) << b) - 1);
	return NNN_OK;
}

/* An NNN_PRIM_NUM or NNN_PRIM_NUMS field: a number, or an array of them. */
static nnn_status_t get_nums(rd_t *r, const nnn_fdesc_t *f, const json_t *v, void *p)
{
	nnn_ekind_t kind = nnn_prim_ekind(f->prim);
	int width = nnn_prim_ewidth(f->prim);
	uint64_t bits;
	if (!(f->prim & NNN_PRIM_NUMS)) {
		NNN_TRY(get_num(r, v, kind, width, &bits));
		memcpy(p, &bits, (size_t)width); /* little-endian hosts, as nnn_f32s_read */
		return NNN_OK;
	}
	if (json_is_object(v)) {
		nnn_elems_t *e = p;
		return get_npy(r, v, kind, width, &e->bytes, &e->n);
	}
	NNN_TRY(check_array(r, v, "an array of numbers, or {\"npy\": FILE}"));
	size_t n = json_array_size(v);
	unsigned char *b;
	NNN_TRY(alloc(r, n, (size_t)width, (void **)&b));
	for (size_t i = 0; i < n; i++) {
		size_t m = nnn_path_index(&r->path, (int64_t)i);
		NNN_TRY(get_num(r, json_array_get(v, i), kind, width, &bits));
		nnn_path_pop(&r->path, m);
		for (int k = 0; k < width; k++)
			b[(size_t)width * i + (size_t)k] = (unsigned char)(bits >> 8 * k);
	}
	*(nnn_elems_t *)p = (nnn_elems_t){ b, (int32_t)n };
	return NNN_OK;
}

static nnn_status_t get_prim(rd_t *r, const nnn_fdesc_t *f, const json_t *v, void *p)
{
	char b[64];
	int64_t x;
	switch (f->prim) {
	case NNN_PRIM_U8:
		NNN_TRY(get_int(r, v, 0, UINT8_MAX, &x));
		*(uint8_t *)p = (uint8_t)x;
		return NNN_OK;
	case NNN_PRIM_I32:
		NNN_TRY(get_int(r, v, INT32_MIN, INT32_MAX, &x));
		*(int32_t *)p = (int32_t)x;
		return NNN_OK;
	case NNN_PRIM_U64:
		return get_u64(r, v, p);
	case NNN_PRIM_F32: {
		uint32_t u;
		NNN_TRY(get_f32(r, v, &u));
		memcpy(p, &u, sizeof u);
		return NNN_OK;
	}
	case NNN_PRIM_BOOL:
		if (!json_is_boolean(v))
			return fail(r, NNN_E_JSON_TYPE, "expected true or false, found %s", shown(v, b, sizeof b));
		*(bool *)p = json_is_true(v);
		return NNN_OK;
	case NNN_PRIM_STRING: {
		if (!json_is_string(v))
			return fail(r, NNN_E_JSON_TYPE, "expected a string, found %s", shown(v, b, sizeof b));
		size_t n = json_string_length(v);
		char *s;
		if (n > INT32_MAX)
			return fail(r, NNN_E_LIMIT, "a string of %zu bytes; the format holds at most 2147483647", n);
		NNN_TRY(alloc(r, n, 1, (void **)&s));
		memcpy(s, json_string_value(v), n);
		*(nnn_str_t *)p = (nnn_str_t){ n ? s : NULL, (int32_t)n };
		return NNN_OK;
	}
	case NNN_PRIM_I32_ARRAY:
		return get_i32s(r, v, p);
	case NNN_PRIM_F32_ARRAY:
		return get_f32s(r, v, p);
	default:
		return get_nums(r, f, v, p);
	}
}

/* ---- enums and the plugin types of a variant ---- */

static bool near(const char *key, const char *name);

/* The open variant (one plugins may extend) whose tag is field i, or NULL. */
static const nnn_fdesc_t *open_variant(const nnn_rdesc_t *rd, int32_t i)
{
	for (int32_t k = 0; k < rd->nfields; k++)
		if (rd->fields[k].kind == NNN_FK_VARIANT && rd->fields[k].ref == i && rd->fields[k].ext != NNN_FX_NONE)
			return &rd->fields[k];
	return NULL;
}

static const void *plugin_type(const nnn_ctx_t *ctx, nnn_fext_t kind, int64_t id)
{
	return kind == NNN_FX_LAYER ? (const void *)nnn_ctx_layer(ctx, (int)id, NULL)
	                            : (const void *)nnn_ctx_activation(ctx, (int)id, NULL);
}

static bool plugin_named(const rd_t *r, const nnn_fdesc_t *var, const char *name, int64_t *id)
{
	for (int k = 0; r->ctx && k < 256; k++) {
		const void *t = plugin_type(r->ctx, var->ext, k);
		const char *n;
		if (t && !var->type->value_name(k) && (nnn_json_ext(var->ext, t, &n), !strcmp(n, name))) {
			*id = k;
			return true;
		}
	}
	return false;
}

/* A name as people write it, from a title ("Leaky ReLU", "MaxPool"), in
 * the schema's spelling: lower case, spaces and hyphens as underscores.
 * False when it does not fit (no schema name is that long). */
static bool loose(const char *s, char *out, size_t size)
{
	size_t n = 0;
	for (; *s && n + 1 < size; s++)
		out[n++] = *s == ' ' || *s == '-' ? '_' : (char)tolower((unsigned char)*s);
	out[n] = '\0';
	return !*s;
}

/* A search among an enum's names (and the plugins' types of its variant)
 * for one a loosely spelled name is. */
typedef struct enum_walk {
	const char *want; /* the loose spelling sought */
	int64_t value;    /* the value of the name that is it */
	bool found;
	char near[64];    /* a name it could be a misspelling of */
} enum_walk_t;

static bool walk_name(enum_walk_t *w, const char *name, int64_t value)
{
	if (!strcmp(name, w->want)) {
		w->value = value;
		return w->found = true;
	}
	if (!w->near[0] && near(w->want, name))
		snprintf(w->near, sizeof w->near, "%s", name);
	return false;
}

/* Every name of the enum's names text ("\"dense\", \"conv\""), then every
 * plugin type's, until one is the name sought. */
static void walk_enum(const rd_t *r, const nnn_fdesc_t *f, const nnn_fdesc_t *var, enum_walk_t *w)
{
	char n[64];
	int64_t x;
	for (const char *q = f->type->names; (q = strchr(q, '"')) != NULL;) {
		const char *end = strchr(++q, '"');
		if (!end)
			break;
		size_t len = (size_t)(end - q);
		q = end + 1;
		if (len >= sizeof n)
			continue;
		memcpy(n, end - len, len);
		n[len] = '\0';
		if (f->type->value_of(n, &x) && walk_name(w, n, x))
			return;
	}
	for (int k = 0; var && r->ctx && k < 256; k++) {
		const void *t = plugin_type(r->ctx, var->ext, k);
		const char *name;
		if (t && !var->type->value_name(k) && (nnn_json_ext(var->ext, t, &name), walk_name(w, name, k)))
			return;
	}
}

/* A name that is not exactly one: taken when it is one as people write it
 * (the title `info` prints, any case); else a failure that names the value
 * it looks like a misspelling of. */
static nnn_status_t enum_by_title(rd_t *r, const nnn_fdesc_t *f, const nnn_fdesc_t *var, const json_t *v,
                                  int64_t *x)
{
	char b[64], plugins[512];
	enum_walk_t w = { .want = b };
	if (loose(text_of(v) ? text_of(v) : "", b, sizeof b))
		walk_enum(r, f, var, &w);
	if (w.found) {
		*x = w.value;
		return NNN_OK;
	}
	char hint[96] = "";
	if (w.near[0])
		snprintf(hint, sizeof hint, "did you mean \"%s\"? ", w.near);
	return fail(r, var ? NNN_E_UNKNOWN_ID : NNN_E_ENUM, "%s is no %s: %sexpected one of %s%s%s%s, or a number",
	            shown(v, b, sizeof b), f->type->name, hint, f->type->names,
	            var ? ", or the name of a type a loaded plugin provides (plugins loaded: " : "",
	            var ? nnn_ctx_plugins_text(r->ctx, plugins, sizeof plugins) : "", var ? ")" : "");
}

static nnn_status_t get_enum(rd_t *r, const nnn_rdesc_t *rd, int32_t i, const json_t *v, void *p)
{
	const nnn_fdesc_t *f = &rd->fields[i], *var = open_variant(rd, i);
	char b[64], plugins[512];
	int64_t x;
	if (json_is_string(v)) {
		const char *s = text_of(v) ? text_of(v) : "";
		if (!f->type->value_of(s, &x) && !(var && plugin_named(r, var, s, &x)))
			NNN_TRY(enum_by_title(r, f, var, v, &x));
	} else if (json_is_integer(v)) {
		int64_t hi = f->prim == NNN_PRIM_U8 ? UINT8_MAX : f->prim == NNN_PRIM_I32 ? INT32_MAX : INT64_MAX;
		NNN_TRY(get_int(r, v, f->prim == NNN_PRIM_I32 ? INT32_MIN : 0, hi, &x));
		/* Without its fields' codec, an ID the schema lacks cannot be written. */
		if (var && !f->type->value_name(x) && !plugin_type(r->ctx, var->ext, x))
			return fail(r, NNN_E_UNKNOWN_ID, "%s ID %" PRId64 " is not in the schema, and no loaded plugin "
			            "provides it (plugins loaded: %s)", var->ext == NNN_FX_LAYER ? "layer" : "activation", x,
			            nnn_ctx_plugins_text(r->ctx, plugins, sizeof plugins));
	} else {
		return fail(r, NNN_E_JSON_TYPE, "expected the name of a %s (%s) or its number, found %s", f->type->name,
		            f->type->names, shown(v, b, sizeof b));
	}
	switch (f->prim) {
	case NNN_PRIM_U8:
		*(uint8_t *)p = (uint8_t)x;
		break;
	case NNN_PRIM_I32:
		*(int32_t *)p = (int32_t)x;
		break;
	default:
		*(uint64_t *)p = (uint64_t)x;
		break;
	}
	return NNN_OK;
}

/* ---- records ---- */

static nnn_status_t rd_record(rd_t *r, const nnn_rdesc_t *rd, const json_t *v, void *base);
static nnn_status_t rd_fields(rd_t *r, const nnn_rdesc_t *rd, const json_t *obj, void *base, active_t *act);
static nnn_status_t missing(rd_t *r, const nnn_fdesc_t *f, const json_t *obj);

static void *at(void *base, const nnn_fdesc_t *f)
{
	return (char *)base + f->offset;
}

/* The fields a variant's tag selects, read from the same object. */
static nnn_status_t rd_variant(rd_t *r, const nnn_rdesc_t *rd, const nnn_fdesc_t *f, const json_t *obj, void *base,
                               active_t *act)
{
	int64_t tag = nnn_json_int(&rd->fields[f->ref], at(base, &rd->fields[f->ref]));
	const nnn_rdesc_t *rec = NULL;
	void *body = NULL;
	for (int32_t i = 0; i < f->nvariants && !rec; i++) {
		if (f->variants[i].value == tag) {
			rec = f->variants[i].rec;
			body = at(base, f);
		}
	}
	if (!rec && f->ext != NNN_FX_NONE && !f->type->value_name(tag)) {
		nnn_ext_t *ext = (void *)((char *)base + f->ext_offset);
		const char *name;
		ext->type = plugin_type(r->ctx, f->ext, tag); /* present: get_enum checked */
		rec = ext->type ? nnn_json_ext(f->ext, ext->type, &name) : NULL;
		if (ext->type && !rec)
			return fail(r, NNN_E_PLUGIN, "%s %s comes from a plugin built for ABI 1.0, which gives no "
			            "descriptors of its fields, so they cannot be read from JSON: rebuild the plugin with "
			            "nnngen --plugin from this nnnkit", f->ext == NNN_FX_LAYER ? "layer" : "activation", name);
		if (rec) {
			NNN_TRY(alloc(r, 1, rec->record_size, &ext->body));
			body = ext->body;
		}
	}
	if (!rec)
		return NNN_OK;
	if (act->n < MAX_ACTIVE)
		act->v[act->n++] = rec;
	return rd_fields(r, rec, obj, body, act);
}

static nnn_status_t rd_array(rd_t *r, const nnn_rdesc_t *rd, const nnn_fdesc_t *f, const json_t *v, void *base)
{
	const nnn_fdesc_t *cf = &rd->fields[f->ref];
	const json_t *given = json_object_get(v, cf->name);
	const json_t *a = json_object_get(v, f->name);
	size_t n = 0, m = nnn_path_push(&r->path, f->name);
	char *elems = NULL;
	if (a) {
		NNN_TRY(check_array(r, a, "an array of objects"));
		n = json_array_size(a);
	} else if (!SPEC(r)) {
		return missing(r, f, v);
	}
	NNN_TRY(alloc(r, n, f->rec->record_size, (void **)&elems));
	for (size_t i = 0; i < n; i++) {
		size_t k = nnn_path_index(&r->path, (int64_t)i);
		NNN_TRY(rd_record(r, f->rec, json_array_get(a, i), elems + i * f->rec->record_size));
		nnn_path_pop(&r->path, k);
	}
	nnn_path_pop(&r->path, m);
	*(char **)at(base, f) = elems;
	*(int32_t *)at(base, cf) = (int32_t)n;
	if (given) { /* optional, as the array's length says it */
		int64_t x;
		m = nnn_path_push(&r->path, cf->name);
		NNN_TRY(get_int(r, given, INT32_MIN, INT32_MAX, &x));
		if (x != (int64_t)n)
			return fail(r, NNN_E_RANGE, "%" PRId64 ", but \"%s\" has %zu elements; leave it out (the length "
			            "of \"%s\" gives it)", x, f->name, n, f->name);
		nnn_path_pop(&r->path, m);
	}
	return NNN_OK;
}

/* Whether `key` looks like a misspelling of `name`. */
static bool near(const char *key, const char *name)
{
	size_t d = nnn_edit_distance(key, name);
	return d > 0 && d <= 2 && d < strlen(name);
}

static bool known(const active_t *act, const char *key)
{
	for (int k = 0; k < act->n; k++)
		for (int32_t i = 0; i < act->v[k]->nfields; i++)
			if (act->v[k]->fields[i].kind != NNN_FK_VARIANT && !strcmp(act->v[k]->fields[i].name, key))
				return true;
	return false;
}

static nnn_status_t missing(rd_t *r, const nnn_fdesc_t *f, const json_t *obj)
{
	char hint[NNN_PATH_MAX] = "";
	const char *key;
	json_t *val;
	json_object_foreach((json_t *)obj, key, val) {
		if (near(key, f->name))
			snprintf(hint, sizeof hint, " (\"%s\" is there: a misspelling?)", key);
	}
	return fail(r, NNN_E_JSON_MISSING, "expected \"%s\" in this object (%s)%s", f->name, f->doc, hint);
}

static nnn_status_t unknown_keys(rd_t *r, const json_t *obj, const active_t *act)
{
	const char *key;
	json_t *val;
	json_object_foreach((json_t *)obj, key, val) {
		if (known(act, key))
			continue;
		char names[NNN_MSG_MAX / 2] = "", hint[NNN_PATH_MAX] = "";
		size_t k = 0;
		for (int a = 0; a < act->n; a++) {
			for (int32_t i = 0; i < act->v[a]->nfields; i++) {
				const nnn_fdesc_t *f = &act->v[a]->fields[i];
				if (f->kind == NNN_FK_VARIANT)
					continue;
				if (k < sizeof names)
					k += (size_t)snprintf(names + k, sizeof names - k, "%s%s", k ? ", " : "", f->name);
				if (near(key, f->name))
					snprintf(hint, sizeof hint, "did you mean \"%s\"? ", f->name);
			}
		}
		nnn_path_push(&r->path, key);
		return fail(r, NNN_E_JSON_UNKNOWN, "\"%s\" is not a field here: %sthe fields are %s", key, hint, names);
	}
	return NNN_OK;
}

/* A tensor's dims against its data: what the decoder checks (dims_product). */
static nnn_status_t check_dims(rd_t *r, const nnn_rdesc_t *rd, void *base)
{
	const nnn_fdesc_t *df = &rd->fields[rd->dims];
	const nnn_i32s_t *dims = at(base, df);
	const nnn_f32s_t *data = at(base, &rd->fields[rd->data]);
	uint64_t prod = 1;
	bool zero = false, over = false;
	for (int32_t i = 0; i < dims->n; i++) {
		if (dims->v[i] < 0) {
			size_t m = nnn_path_push(&r->path, df->name);
			nnn_path_index(&r->path, i);
			nnn_status_t st = fail(r, NNN_E_DIM_NEGATIVE, "found %d, expected >= 0", (int)dims->v[i]);
			nnn_path_pop(&r->path, m);
			return st;
		}
		zero |= dims->v[i] == 0;
		if (dims->v[i] && prod > UINT64_MAX / (uint64_t)dims->v[i])
			over = true;
		else
			prod *= dims->v[i] ? (uint64_t)dims->v[i] : 1;
	}
	if (zero)
		prod = 0;
	else if (over)
		return fail(r, NNN_E_DIM_OVERFLOW, "the product of the %d dims exceeds 2^64", (int)dims->n);
	if (prod != (uint64_t)data->n) {
		char sh[NNN_MAX_RANK * 22 + 8] = "";
		size_t k = 0;
		for (int32_t i = 0; i < dims->n && k + 24 < sizeof sh; i++)
			k += (size_t)snprintf(sh + k, sizeof sh - k, "%s%d", i ? ", " : "", (int)dims->v[i]);
		size_t m = nnn_path_push(&r->path, rd->fields[rd->data].name);
		nnn_status_t st = fail(r, NNN_E_DIM_MISMATCH, "dims [%s] multiply to %" PRIu64 ", but data has %d "
		                       "values", sh, prod, (int)data->n);
		nnn_path_pop(&r->path, m);
		return st;
	}
	return NNN_OK;
}

/* Spec: a tensor without dims takes its .npy file's shape, else [count]. */
static nnn_status_t default_dims(rd_t *r, const nnn_rdesc_t *rd, void *base, const nnn_shape_t *npy)
{
	nnn_i32s_t *dims = at(base, &rd->fields[rd->dims]);
	const nnn_f32s_t *data = at(base, &rd->fields[rd->data]);
	nnn_shape_t s = npy ? *npy : (nnn_shape_t){ .rank = 1, .dims = { data->n } };
	int32_t *v;
	NNN_TRY(alloc(r, (size_t)s.rank, sizeof *v, (void **)&v));
	for (int32_t i = 0; i < s.rank; i++) {
		if (s.dims[i] > INT32_MAX)
			return fail(r, NNN_E_RANGE, "dim %d of the .npy file is %" PRId64 ", more than a dim holds "
			            "(2147483647)", (int)i, s.dims[i]);
		v[i] = (int32_t)s.dims[i];
	}
	*dims = (nnn_i32s_t){ v, s.rank };
	return NNN_OK;
}

/* Spec: int fields a "dims" rule ties to a tensor's dim, when left out. */
static void derive(const nnn_rdesc_t *rd, const json_t *obj, void *base)
{
	for (int32_t k = 0; k < rd->nderive; k++) {
		const nnn_derive_t *dv = &rd->derive[k];
		const nnn_fdesc_t *f = &rd->fields[dv->field], *t = &rd->fields[dv->tensor];
		const nnn_i32s_t *dims = at(at(base, t), &t->rec->fields[dv->array]);
		int32_t i = dv->dim < 0 ? dims->n + dv->dim : dv->dim;
		if (!json_object_get(obj, f->name) && i >= 0 && i < dims->n && f->prim == NNN_PRIM_I32)
			*(int32_t *)at(base, f) = dims->v[i];
	}
}

static nnn_status_t rd_field(rd_t *r, const nnn_rdesc_t *rd, int32_t i, const json_t *obj, void *base)
{
	const nnn_fdesc_t *f = &rd->fields[i];
	const json_t *v = json_object_get(obj, f->name);
	void *p = at(base, f);
	if (f->flags & NNN_FD_CONST) {
		int64_t x;
		if (v) {
			NNN_TRY(get_int(r, v, INT32_MIN, INT32_MAX, &x));
			if (x != f->value)
				return fail(r, NNN_E_RANGE, "found %" PRId64 ", but it is always %" PRId64 "; leave it out", x,
				            f->value);
		}
		*(int32_t *)p = (int32_t)f->value;
		return NNN_OK;
	}
	if (!v) {
		bool tensor = (f->kind == NNN_FK_RECORD && f->rec->dims >= 0) ||
		              (f->kind == NNN_FK_PRIM && f->prim == NNN_PRIM_F32_ARRAY);
		if (!SPEC(r) || tensor)
			return missing(r, f, obj);
		if (f->flags & NNN_FD_TOTAL)
			r->total = p;
		if (f->kind != NNN_FK_RECORD)
			return NNN_OK; /* zero: the arena's memory was cleared */
		json_t *empty = json_object();
		nnn_status_t st = empty ? rd_record(r, f->rec, empty, p) : fail(r, NNN_E_NOMEM, "no memory");
		json_decref(empty);
		return st;
	}
	if (f->kind == NNN_FK_ENUM)
		return get_enum(r, rd, i, v, p);
	if (f->kind == NNN_FK_RECORD)
		return rd_record(r, f->rec, v, p);
	return get_prim(r, f, v, p);
}

static nnn_status_t rd_fields(rd_t *r, const nnn_rdesc_t *rd, const json_t *obj, void *base, active_t *act)
{
	nnn_shape_t npy;
	bool from_npy = false;
	for (int32_t i = 0; i < rd->nfields; i++) {
		const nnn_fdesc_t *f = &rd->fields[i];
		if (f->flags & NNN_FD_COUNT)
			continue; /* set by its array */
		if (f->kind == NNN_FK_VARIANT) {
			NNN_TRY(rd_variant(r, rd, f, obj, base, act));
		} else if (f->kind == NNN_FK_ARRAY) {
			NNN_TRY(rd_array(r, rd, f, obj, base));
		} else {
			size_t m = nnn_path_push(&r->path, f->name);
			r->npy_read = false;
			NNN_TRY(rd_field(r, rd, i, obj, base));
			nnn_path_pop(&r->path, m);
			if (i == rd->data && r->npy_read)
				from_npy = true, npy = r->npy_shape;
		}
	}
	if (rd->dims >= 0) {
		if (SPEC(r) && !json_object_get(obj, rd->fields[rd->dims].name))
			NNN_TRY(default_dims(r, rd, base, from_npy ? &npy : NULL));
		NNN_TRY(check_dims(r, rd, base));
	}
	if (SPEC(r))
		derive(rd, obj, base);
	return NNN_OK;
}

/* Spec shorthands: a tensor as its .npy file's name, a record that starts
 * with an ID as the ID's name. NULL when none applies. */
static json_t *expand(const nnn_rdesc_t *rd, const json_t *v)
{
	json_t *o = json_object();
	if (!o)
		return NULL;
	if (rd->dims >= 0) {
		json_t *ref = json_object();
		if (ref && !json_object_set(ref, "npy", (json_t *)v) && !json_object_set(o, rd->fields[rd->data].name, ref)) {
			json_decref(ref);
			return o;
		}
		json_decref(ref);
	} else if (rd->nfields > 0 && rd->fields[0].kind == NNN_FK_ENUM && open_variant(rd, 0)) {
		if (!json_object_set(o, rd->fields[0].name, (json_t *)v))
			return o;
	}
	json_decref(o);
	return NULL;
}

static nnn_status_t rd_record(rd_t *r, const nnn_rdesc_t *rd, const json_t *v, void *base)
{
	char b[64];
	json_t *tmp = json_is_string(v) && SPEC(r) ? expand(rd, v) : NULL;
	if (tmp)
		v = tmp;
	if (!json_is_object(v))
		return fail(r, NNN_E_JSON_TYPE, "expected an object (the fields of a %s), found %s", rd->name,
		            shown(v, b, sizeof b));
	active_t act = { { rd }, 1 };
	nnn_status_t st = rd_fields(r, rd, v, base, &act);
	if (st == NNN_OK)
		st = unknown_keys(r, v, &act);
	json_decref(tmp);
	return st;
}

/* ---- spec: what the schema's rules imply ---- */

/* The model's array of layers, by the descriptors. */
static const nnn_fdesc_t *layers_field(void)
{
	for (int32_t i = 0; i < nnn_model_desc.nfields; i++)
		if (nnn_model_desc.fields[i].kind == NNN_FK_ARRAY)
			return &nnn_model_desc.fields[i];
	return NULL;
}

/* The field of a layer's body named `name`, by the descriptors: the layer
 * record is the model's array's, its body the variant whose tag is L->id. */
static nnn_i32s_t *body_list(nnn_layer_t *L, const char *name)
{
	const nnn_fdesc_t *lf = layers_field();
	const nnn_rdesc_t *lr = lf ? lf->rec : NULL;
	for (int32_t i = 0; lr && i < lr->nfields; i++) {
		const nnn_fdesc_t *f = &lr->fields[i];
		for (int32_t j = 0; f->kind == NNN_FK_VARIANT && j < f->nvariants; j++) {
			const nnn_rdesc_t *rec = f->variants[j].rec;
			if (f->variants[j].value != L->id || !rec)
				continue;
			for (int32_t k = 0; k < rec->nfields; k++)
				if (!strcmp(rec->fields[k].name, name) && rec->fields[k].kind == NNN_FK_PRIM &&
				    rec->fields[k].prim == NNN_PRIM_I32_ARRAY)
					return at(at(L, f), &rec->fields[k]);
		}
	}
	return NULL;
}

/* A window layer whose padding list the spec leaves out gets the list its
 * padding type implies (a Conv's "same" with kernels 5x5: [2, 2, 2, 2]), as
 * `neurons` comes from a tensor: the schema's padding rule fixes it. */
static nnn_status_t spec_pads(rd_t *r, const json_t *root, nnn_model_t *m)
{
	const nnn_fdesc_t *lf = layers_field();
	const json_t *layers = lf ? json_object_get(root, lf->name) : NULL;
	for (int32_t i = 0; i < m->layer_count; i++) {
		int32_t pad[2 * NNN_MAX_RANK];
		const char *name;
		const json_t *obj = json_array_get(layers, (size_t)i);
		int32_t n = nnn_layer_implied_pads(&m->layers[i], pad, &name);
		nnn_i32s_t *list = n > 0 && json_is_object(obj) && !json_object_get(obj, name)
		                   ? body_list(&m->layers[i], name) : NULL;
		if (!list)
			continue;
		void *v;
		NNN_TRY(alloc(r, (size_t)n, sizeof pad[0], &v));
		memcpy(v, pad, (size_t)n * sizeof pad[0]);
		*list = (nnn_i32s_t){ v, n };
	}
	return NNN_OK;
}

/* ---- entry points ---- */

/* One walk of the parsed text into a new model (*m, freed on failure). */
static nnn_status_t walk(rd_t *r, const json_t *root, nnn_model_t **m)
{
	nnn_arena_t *arena;
	*m = nnn_model_new_arena(&arena);
	if (!*m)
		return nnn_diags_add(r->d, NNN_E_NOMEM, NNN_NO_OFFSET, "", "cannot allocate a model");
	r->arena = arena;
	r->total = NULL;
	r->nfiles = 0;
	if (r->nslots)
		memset(r->slots, 0, r->nslots * sizeof *r->slots);
	r->npy_total = r->npy_distinct = 0;
	nnn_status_t st = rd_record(r, &nnn_model_desc, root, *m);
	if (st == NNN_OK && SPEC(r))
		st = spec_pads(r, root, *m);
	if (st == NNN_OK && r->total)
		*r->total = nnn_model_param_total(*m);
	if (st != NNN_OK) {
		nnn_model_free(*m);
		*m = NULL;
	}
	return st;
}

/* The references filled more than the cap allows, which only the whole
 * walk can tell (the distinct files' bytes set the cap). A second walk
 * with the cap known stops at the reference that passes it, so that the
 * message names its place in the text. Only if the files changed between
 * the walks does it get through: then the whole spec is blamed. */
static nnn_status_t over_cap(rd_t *r, const json_t *root, nnn_model_t **m)
{
	uint64_t total = r->npy_total, cap = npy_cap(r->npy_distinct);
	nnn_model_free(*m);
	r->npy_cap = cap;
	r->cap_distinct = r->npy_distinct;
	r->cap_files = r->nfiles;
	nnn_status_t st = walk(r, root, m);
	if (st != NNN_OK)
		return st;
	nnn_model_free(*m);
	*m = NULL;
	return fail(r, NNN_E_LIMIT, "the .npy references fill %" PRIu64 " bytes of tensors (each reference counted), "
	            "past this spec's cap of %" PRIu64 " bytes: %" PRIu64 " MiB plus %d times the bytes of the distinct "
	            ".npy files it names. Give such tensors files of their own, or name each file fewer times", total,
	            cap, NPY_CAP_BASE >> 20, NPY_CAP_TIMES);
}

nnn_status_t nnn_json_decode(const char *text, size_t len, const nnn_json_read_opts_t *opts, nnn_model_t **out,
                             nnn_diags_t *diags)
{
	json_error_t err;
	rd_t r = { .text = text, .len = len, .d = diags };

	if (!out)
		return nnn_diags_add(diags, NNN_E_USAGE, NNN_NO_OFFSET, "", "nnn_json_decode: out is NULL");
	*out = NULL;
	if (!text && len)
		return nnn_diags_add(diags, NNN_E_USAGE, NNN_NO_OFFSET, "", "nnn_json_decode: no text for %zu bytes", len);
	if (opts) {
		r.flags = opts->flags;
		r.ctx = opts->ctx;
		r.base_dir = opts->base_dir;
	}
	/* jansson leaves err untouched when it fails before its lexer exists. */
	memset(&err, 0, sizeof err);
	json_t *root = json_loadb(text ? text : "", len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &err);
	if (!root) {
		size_t before = diags ? diags->n : 0;
		/* A failed allocation is not bad text: jansson marks it with its code,
		 * or (its lexer's first buffer) with no text at all. */
		nnn_status_t code = json_error_code(&err) == json_error_out_of_memory || !err.text[0] ? NNN_E_NOMEM
		                                                                                      : NNN_E_JSON;
		if (code == NNN_E_NOMEM)
			nnn_diags_add(diags, code, NNN_NO_OFFSET, "", "no memory left to parse %zu bytes of JSON%s%s", len,
			              err.text[0] ? ": " : "", err.text);
		else
			nnn_diags_add(diags, code, NNN_NO_OFFSET, "", "%s", err.text);
		if (diags && diags->n > before && (code == NNN_E_JSON || err.line > 0)) {
			diags->v[before].line = err.line > 0 ? (uint32_t)err.line : 1;
			diags->v[before].column = err.column > 0 ? (uint32_t)err.column : 1;
		}
		return code;
	}
	nnn_model_t *m = NULL;
	nnn_status_t st = walk(&r, root, &m);
	if (st == NNN_OK && r.npy_total > npy_cap(r.npy_distinct))
		st = over_cap(&r, root, &m);
	free(r.files);
	free(r.slots);
	json_decref(root);
	if (st != NNN_OK) {
		nnn_model_free(m);
		return st;
	}
	*out = m;
	return NNN_OK;
}

nnn_status_t nnn_json_read_file(const char *path, const nnn_json_read_opts_t *opts, nnn_model_t **out,
                                nnn_diags_t *diags)
{
	unsigned char *data = NULL;
	size_t size;
	char dir[4096];
	nnn_json_read_opts_t o = opts ? *opts : (nnn_json_read_opts_t){ 0 };
	if (!path || !out)
		return nnn_diags_add(diags, NNN_E_USAGE, NNN_NO_OFFSET, "", "nnn_json_read_file: a NULL argument");
	*out = NULL;
	const char *slash = strrchr(path, '/');
	if (!o.base_dir && slash) {
		snprintf(dir, sizeof dir, "%.*s", slash == path ? 1 : (int)(slash - path), path);
		o.base_dir = dir;
	}
	/* Read with checked reads, never mapped: a file cut short while it is
	 * read is an error, not SIGBUS. */
	int fd;
	NNN_TRY(nnn_open_regular(path, NULL, &fd, &size, diags));
	nnn_status_t st = nnn_read_copy(fd, size, &data, diags);
	close(fd);
	if (st == NNN_OK)
		st = nnn_json_decode((const char *)data, size, &o, out, diags);
	free(data);
	return st;
}
