/* npy.c: NumPy .npy arrays in and out, as float32 or as the file's own
 * element type (typed).
 *
 * Layout (numpy/lib/format.py): the magic "\x93NUMPY", a major and a minor
 * version byte, the header length (2 bytes little-endian in 1.0, 4 in 2.0
 * and 3.0), the header (a Python dict literal, padded with spaces and a
 * newline), then the raw elements in C order.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nnn/file.h>
#include <nnn/npy.h>
#include <nnn/shape.h>

#include "fileio.h"
#include "mem.h"

#define NPY_MAGIC "\x93" "NUMPY"
#define NPY_MAGIC_LEN 6
#define NPY_ALIGN 64           /* numpy's ARRAY_ALIGN */
#define NPY_GROWTH_DIGITS 21   /* numpy's GROWTH_AXIS_MAX_DIGITS */
#define NPY_HEADER_MAX 1024    /* the longest header the writer makes, rank 32 */
#define NPY_FIX "save it with np.save(path, np.ascontiguousarray(x, dtype='<f4'))"

/* ---- dtypes ---- */

typedef enum { DT_F4, DT_F8, DT_I4, DT_I8, DT_U1, DT_B1, DT_F2, DT_I1, DT_I2, DT_U2, DT_U4, DT_U8 } dtype_t;

static const struct {
	char kind;
	unsigned size;
	const char *descr; /* as numpy writes it */
	const char *name;
	nnn_ekind_t ek;    /* the element kind of its values */
} dtypes[] = {
	[DT_F4] = { 'f', 4, "<f4", "float32", NNN_EK_FLOAT }, [DT_F8] = { 'f', 8, "<f8", "float64", NNN_EK_FLOAT },
	[DT_I4] = { 'i', 4, "<i4", "int32", NNN_EK_INT },     [DT_I8] = { 'i', 8, "<i8", "int64", NNN_EK_INT },
	[DT_U1] = { 'u', 1, "|u1", "uint8", NNN_EK_UINT },    [DT_B1] = { 'b', 1, "|b1", "bool", NNN_EK_BOOL },
	[DT_F2] = { 'f', 2, "<f2", "float16", NNN_EK_FLOAT }, [DT_I1] = { 'i', 1, "|i1", "int8", NNN_EK_INT },
	[DT_I2] = { 'i', 2, "<i2", "int16", NNN_EK_INT },     [DT_U2] = { 'u', 2, "<u2", "uint16", NNN_EK_UINT },
	[DT_U4] = { 'u', 4, "<u4", "uint32", NNN_EK_UINT },   [DT_U8] = { 'u', 8, "<u8", "uint64", NNN_EK_UINT },
};
#define NDTYPES (sizeof dtypes / sizeof dtypes[0])
#define DT_ACCEPTED "'<f2', '<f4', '<f8', '|i1', '|u1', '<i2', '<u2', '<i4', '<u4', '<i8', '<u8' or '|b1'"

/* The dtype of elements of `kind` and `width`; bfloat16 is stored as its
 * raw bits, NumPy having no bfloat16: '<u2'. -1 when there is none. */
static int dtype_of(nnn_ekind_t kind, int width)
{
	if (kind == NNN_EK_BFLOAT)
		kind = NNN_EK_UINT;
	for (size_t k = 0; k < NDTYPES; k++)
		if (dtypes[k].ek == kind && dtypes[k].size == (unsigned)width)
			return (int)k;
	return -1;
}

/* ---- small helpers ---- */

static uint64_t le_u64(const unsigned char *p)
{
	return (uint64_t)nnn_le_u32(p) | (uint64_t)nnn_le_u32(p + 4) << 32;
}

static void put_le_f32(unsigned char *p, float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof u);
	p[0] = (unsigned char)u;
	p[1] = (unsigned char)(u >> 8);
	p[2] = (unsigned char)(u >> 16);
	p[3] = (unsigned char)(u >> 24);
}

/* Up to 24 bytes at p as a quoted, escaped string for a message; "the end
 * of the header" when there are none. */
static const char *snip(const unsigned char *p, size_t n, char *buf, size_t size)
{
	size_t k = 0, i;
	if (n == 0) {
		snprintf(buf, size, "the end of the header");
		return buf;
	}
	k += (size_t)snprintf(buf + k, size - k, "\"");
	for (i = 0; i < n && i < 24 && k + 8 < size; i++) {
		unsigned char c = p[i];
		if (c == '"' || c == '\\')
			k += (size_t)snprintf(buf + k, size - k, "\\%c", c);
		else if (c >= 0x20 && c < 0x7f)
			k += (size_t)snprintf(buf + k, size - k, "%c", c);
		else if (c == '\n')
			k += (size_t)snprintf(buf + k, size - k, "\\n");
		else
			k += (size_t)snprintf(buf + k, size - k, "\\x%02x", c);
	}
	snprintf(buf + k, size - k, "%s\"", i < n ? "..." : "");
	return buf;
}

/* "(2, 3)", "(5,)", "()": the shape as Python prints a tuple. */
static const char *fmt_shape(const nnn_shape_t *s, char *buf, size_t size)
{
	return nnn_shape_format_as(s, &(nnn_dims_style_t){ "(", ", ", ")", ",)", NULL, 0 }, buf, size);
}

/* ---- the header dict ---- */

typedef struct hp {
	const unsigned char *s; /* the header */
	size_t n, i;            /* its length, the position */
	uint64_t base;          /* file offset of s[0] */
	unsigned major;
	nnn_diags_t *d;
	char tmp[128];
} hp_t;

enum { KEY_DESCR, KEY_FORTRAN, KEY_SHAPE, NKEYS };
static const char *const key_names[NKEYS] = { "descr", "fortran_order", "shape" };

static uint64_t hp_off(const hp_t *p)
{
	return p->base + p->i;
}

static const char *hp_here(hp_t *p)
{
	return snip(p->s + p->i, p->n - p->i, p->tmp, sizeof p->tmp);
}

static void hp_ws(hp_t *p)
{
	while (p->i < p->n) {
		switch (p->s[p->i]) {
		case ' ': case '\t': case '\n': case '\r': case '\f':
			p->i++;
			continue;
		}
		break;
	}
}

static int hp_peek(const hp_t *p)
{
	return p->i < p->n ? p->s[p->i] : -1;
}

static int is_ident(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* A Python string literal in ' or " quotes without escapes: sets *str and *len. */
static int hp_string(hp_t *p, const unsigned char **str, size_t *len)
{
	int q = hp_peek(p);
	size_t j;
	if (q != '\'' && q != '"')
		return 0;
	for (j = p->i + 1; j < p->n && p->s[j] != q && p->s[j] != '\\' && p->s[j] != '\n'; j++)
		;
	if (j == p->n || p->s[j] != q)
		return 0;
	*str = p->s + p->i + 1;
	*len = j - p->i - 1;
	p->i = j + 1;
	return 1;
}

/* A bare word (True, False, None). */
static int hp_word(hp_t *p, const char *w)
{
	size_t n = strlen(w);
	if (p->n - p->i < n || memcmp(p->s + p->i, w, n) || (p->i + n < p->n && is_ident(p->s[p->i + n])))
		return 0;
	p->i += n;
	return 1;
}

static nnn_status_t hp_descr(hp_t *p, dtype_t *dt)
{
	const unsigned char *s;
	size_t n;
	uint64_t at = hp_off(p);
	int c = hp_peek(p);

	if (c == '[' || c == '(')
		return nnn_diags_add(p->d, NNN_E_ENUM, at, "descr",
		                     "descr is %s, a structured or subarray dtype; expected %s; %s", hp_here(p),
		                     DT_ACCEPTED, NPY_FIX);
	if (!hp_string(p, &s, &n))
		return nnn_diags_add(p->d, NNN_E_NPY, at, "descr",
		                     "descr: found %s, expected a dtype string in quotes such as '<f4'", hp_here(p));
	char found[64];
	snip(s, n, found, sizeof found);
	if (n == 3 && s[2] >= '1' && s[2] <= '9') {
		for (size_t k = 0; k < NDTYPES; k++) {
			if (dtypes[k].kind != s[1] || dtypes[k].size != (unsigned)(s[2] - '0'))
				continue;
			/* Byte order is meaningless for one byte: numpy writes '|'. */
			if (s[0] == '<' || (dtypes[k].size == 1 && (s[0] == '|' || s[0] == '>'))) {
				*dt = (dtype_t)k;
				return NNN_OK;
			}
			if (s[0] == '>')
				return nnn_diags_add(p->d, NNN_E_ENUM, at, "descr",
				                     "descr is %s, big-endian %s; expected little-endian '%c%c%c'; %s",
				                     found, dtypes[k].name, '<', s[1], s[2], NPY_FIX);
			return nnn_diags_add(p->d, NNN_E_ENUM, at, "descr",
			                     "descr is %s, with byte order '%c'; expected little-endian '%c%c%c'; %s",
			                     found, s[0], '<', s[1], s[2], NPY_FIX);
		}
	}
	return nnn_diags_add(p->d, NNN_E_ENUM, at, "descr", "descr is %s, a dtype nnnkit does not read; expected %s; %s",
	                     found, DT_ACCEPTED, NPY_FIX);
}

static nnn_status_t hp_fortran(hp_t *p)
{
	uint64_t at = hp_off(p);
	if (hp_word(p, "False"))
		return NNN_OK;
	if (hp_word(p, "True"))
		return nnn_diags_add(p->d, NNN_E_ENUM, at, "fortran_order",
		                     "fortran_order is True: the data is in Fortran (column-major) order; expected "
		                     "False (C order); %s",
		                     NPY_FIX);
	return nnn_diags_add(p->d, NNN_E_NPY, at, "fortran_order", "fortran_order: found %s, expected False",
	                     hp_here(p));
}

/* The dimension token at `start`: up to the next ',', ')' or '}', for a
 * message; the header from there when that is empty. */
static const char *hp_token(hp_t *p, size_t start)
{
	size_t e = start;
	while (e < p->n && p->s[e] != ',' && p->s[e] != ')' && p->s[e] != '}')
		e++;
	while (e > start && (p->s[e - 1] == ' ' || p->s[e - 1] == '\t' || p->s[e - 1] == '\n'))
		e--;
	p->i = start;
	return e > start ? snip(p->s + start, e - start, p->tmp, sizeof p->tmp) : hp_here(p);
}

/* One dimension: an optional sign, digits, in Python 2 files an 'L'. */
static nnn_status_t hp_dim(hp_t *p, int32_t k, int64_t *out)
{
	char path[32];
	uint64_t at = hp_off(p);
	size_t start = p->i;
	int neg = 0;
	uint64_t v = 0;

	snprintf(path, sizeof path, "shape[%" PRId32 "]", k);
	if (hp_peek(p) == '-' || hp_peek(p) == '+') {
		neg = hp_peek(p) == '-';
		p->i++;
		hp_ws(p);
	}
	if (hp_peek(p) < '0' || hp_peek(p) > '9')
		return nnn_diags_add(p->d, NNN_E_NPY, at, path, "%s: found %s, expected a non-negative integer", path,
		                     hp_token(p, start));
	while (hp_peek(p) >= '0' && hp_peek(p) <= '9') {
		unsigned digit = (unsigned)(p->s[p->i] - '0');
		if (v > ((uint64_t)INT64_MAX - digit) / 10)
			return nnn_diags_add(p->d, NNN_E_DIM_OVERFLOW, at, path, "%s is %s, more than 2^63 - 1", path,
			                     hp_token(p, start));
		v = v * 10 + digit;
		p->i++;
	}
	if (p->major <= 2 && hp_peek(p) == 'L' && !(p->i + 1 < p->n && is_ident(p->s[p->i + 1])))
		p->i++; /* 5L: written by Python 2 (numpy reads it too) */
	if (hp_peek(p) >= 0 && (is_ident(hp_peek(p)) || hp_peek(p) == '.'))
		return nnn_diags_add(p->d, NNN_E_NPY, at, path, "%s: found %s, expected a non-negative integer", path,
		                     hp_token(p, start));
	if (neg && v)
		return nnn_diags_add(p->d, NNN_E_DIM_NEGATIVE, at, path, "%s: found %s, expected an integer >= 0", path,
		                     hp_token(p, start));
	*out = (int64_t)v;
	return NNN_OK;
}

static nnn_status_t hp_shape(hp_t *p, nnn_shape_t *shape, uint64_t *offs)
{
	uint64_t at = hp_off(p);
	int commas = 0;
	nnn_status_t st;

	shape->rank = 0;
	if (hp_peek(p) != '(')
		return nnn_diags_add(p->d, NNN_E_NPY, at, "shape", "shape: found %s, expected a tuple such as (2, 3)",
		                     hp_here(p));
	p->i++;
	for (;;) {
		hp_ws(p);
		if (hp_peek(p) == ')')
			break;
		if (shape->rank == NNN_MAX_RANK)
			return nnn_diags_add(p->d, NNN_E_LIMIT, hp_off(p), "shape",
			                     "shape has more than %d dimensions, the most nnnkit handles", NNN_MAX_RANK);
		offs[shape->rank] = hp_off(p);
		st = hp_dim(p, shape->rank, &shape->dims[shape->rank]);
		if (st != NNN_OK)
			return st;
		shape->rank++;
		hp_ws(p);
		if (hp_peek(p) == ',') {
			p->i++;
			commas++;
		} else if (hp_peek(p) != ')') {
			return nnn_diags_add(p->d, NNN_E_NPY, hp_off(p), "shape", "shape: found %s, expected ',' or ')'",
			                     hp_here(p));
		}
	}
	p->i++;
	if (shape->rank == 1 && commas == 0)
		return nnn_diags_add(p->d, NNN_E_NPY, at, "shape",
		                     "shape is (%" PRId64 "), which Python reads as a number, not a tuple; expected "
		                     "(%" PRId64 ",)",
		                     shape->dims[0], shape->dims[0]);
	return NNN_OK;
}

/* Parses the dict: exactly the three keys, any order, any whitespace. */
static nnn_status_t parse_header(hp_t *p, dtype_t *dt, nnn_shape_t *shape, uint64_t *offs)
{
	int seen[NKEYS] = { 0 };
	const unsigned char *key;
	size_t klen;
	nnn_status_t st = NNN_OK;

	hp_ws(p);
	if (hp_peek(p) != '{')
		return nnn_diags_add(p->d, NNN_E_NPY, hp_off(p), "header", "header: found %s, expected a dict: '{'",
		                     hp_here(p));
	p->i++;
	for (;;) {
		int k;
		uint64_t at;
		hp_ws(p);
		if (hp_peek(p) == '}')
			break;
		at = hp_off(p);
		if (!hp_string(p, &key, &klen))
			return nnn_diags_add(p->d, NNN_E_NPY, at, "header",
			                     "header: found %s, expected a key in quotes or '}'", hp_here(p));
		for (k = 0; k < NKEYS; k++)
			if (strlen(key_names[k]) == klen && !memcmp(key_names[k], key, klen))
				break;
		if (k == NKEYS) {
			char found[64];
			return nnn_diags_add(p->d, NNN_E_NPY, at, "header",
			                     "header has the key %s; expected only 'descr', 'fortran_order' and 'shape'",
			                     snip(key, klen, found, sizeof found));
		}
		if (seen[k]++)
			return nnn_diags_add(p->d, NNN_E_NPY, at, key_names[k], "header has the key '%s' twice",
			                     key_names[k]);
		hp_ws(p);
		if (hp_peek(p) != ':')
			return nnn_diags_add(p->d, NNN_E_NPY, hp_off(p), key_names[k], "%s: found %s, expected ':'",
			                     key_names[k], hp_here(p));
		p->i++;
		hp_ws(p);
		switch (k) {
		case KEY_DESCR:
			st = hp_descr(p, dt);
			break;
		case KEY_FORTRAN:
			st = hp_fortran(p);
			break;
		default:
			st = hp_shape(p, shape, offs);
			break;
		}
		if (st != NNN_OK)
			return st;
		hp_ws(p);
		if (hp_peek(p) == ',')
			p->i++;
		else if (hp_peek(p) != '}')
			return nnn_diags_add(p->d, NNN_E_NPY, hp_off(p), "header", "header: found %s, expected ',' or '}'",
			                     hp_here(p));
	}
	p->i++;
	hp_ws(p);
	if (p->i != p->n)
		return nnn_diags_add(p->d, NNN_E_NPY, hp_off(p), "header",
		                     "header: found %s after the dict, expected only spaces and a newline", hp_here(p));
	for (int k = 0; k < NKEYS; k++)
		if (!seen[k])
			return nnn_diags_add(p->d, NNN_E_NPY, p->base, "header",
			                     "header has no '%s' key; expected 'descr', 'fortran_order' and 'shape'",
			                     key_names[k]);
	return NNN_OK;
}

/* The element count of a shape, or the index of the dim at which the
 * product of the nonzero dims passes INT64_MAX (numpy too refuses those,
 * even when another dim is 0). Dims must be >= 0. */
static int32_t shape_count(const nnn_shape_t *s, uint64_t *count)
{
	uint64_t prod = 1;
	int zero = 0;
	for (int32_t i = 0; i < s->rank; i++) {
		uint64_t d = (uint64_t)s->dims[i];
		if (d == 0) {
			zero = 1;
			continue;
		}
		if (prod > (uint64_t)INT64_MAX / d)
			return i;
		prod *= d;
	}
	*count = zero ? 0 : prod;
	return -1;
}

/* ---- elements ---- */

static nnn_status_t convert(dtype_t dt, const unsigned char *p, size_t count, uint64_t base, float *out,
                            nnn_diags_t *d)
{
	size_t i;
	switch (dt) {
	case DT_F4:
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		if (count) /* the file's bytes are the host's floats already */
			memcpy(out, p, count * sizeof *out);
#else
		for (i = 0; i < count; i++) {
			uint32_t u = nnn_le_u32(p + 4 * i);
			memcpy(&out[i], &u, sizeof u);
		}
#endif
		break;
	case DT_F8:
		for (i = 0; i < count; i++) {
			uint64_t u = le_u64(p + 8 * i);
			double v;
			memcpy(&v, &u, sizeof v);
			/* Rounds to FLT_MAX below half an ulp above it, else overflows. */
			if (isfinite(v) && fabs(v) >= 0x1.ffffffp127) {
				char path[48];
				snprintf(path, sizeof path, "data[%zu]", i);
				return nnn_diags_add(d, NNN_E_RANGE, base + 8 * i, path,
				                     "%s is %g, outside float32's range (+-%g); expected a value float32 "
				                     "can hold; scale the data or %s",
				                     path, v, (double)FLT_MAX, NPY_FIX);
			}
			out[i] = isfinite(v) && fabs(v) > FLT_MAX ? (float)copysign(FLT_MAX, v) : (float)v;
		}
		break;
	case DT_I4:
		for (i = 0; i < count; i++)
			out[i] = (float)(int32_t)nnn_le_u32(p + 4 * i);
		break;
	case DT_I8:
		for (i = 0; i < count; i++)
			out[i] = (float)(int64_t)le_u64(p + 8 * i);
		break;
	case DT_U1:
		for (i = 0; i < count; i++)
			out[i] = (float)p[i];
		break;
	case DT_F2:
	case DT_I1:
	case DT_I2:
	case DT_U2:
	case DT_U4:
	case DT_U8: /* every value float32 holds exactly, but uint32 and uint64 ones past 2^24: rounded */
		for (i = 0; i < count; i++)
			out[i] = (float)nnn_elems_get((nnn_elems_t){ p, 0 }, dtypes[dt].ek, (int)dtypes[dt].size, (int64_t)i);
		break;
	case DT_B1:
		for (i = 0; i < count; i++) {
			if (p[i] > 1) {
				char path[48];
				snprintf(path, sizeof path, "data[%zu]", i);
				return nnn_diags_add(d, NNN_E_BOOL, base + i, path,
				                     "%s is the byte %u in a bool array, expected 0 or 1", path, p[i]);
			}
			out[i] = (float)p[i];
		}
		break;
	}
	return NNN_OK;
}

/* ---- reading ---- */

/* Where the elements are, as the preamble and the header say. */
typedef struct layout {
	dtype_t dt;
	nnn_shape_t shape;
	size_t data_at; /* offset of the first element */
	size_t count;   /* elements */
} layout_t;

/* Checks the preamble and the header, and the data size against the shape
 * exactly, before anything is allocated. With `need` non-NULL it stops
 * after the header (b holds the preamble and the header only, from a
 * stream) and stores the size of the whole file the header describes. */
static nnn_status_t parse(const unsigned char *b, size_t len, layout_t *lay, uint64_t *need, nnn_diags_t *d)
{
	char tmp[128], sh[NNN_MAX_RANK * 22 + 8];
	size_t hstart, hlen, left;
	uint64_t offs[NNN_MAX_RANK], count = 0;
	dtype_t dt = DT_F4;
	nnn_status_t st;
	int32_t bad;
	unsigned major, minor;

	if (memcmp(b, NPY_MAGIC, len < NPY_MAGIC_LEN ? len : NPY_MAGIC_LEN) != 0) {
		const char *hint = "";
		if (len >= 4 && !memcmp(b, "PK\x03\x04", 4))
			hint = "; this is a zip archive, probably a .npz: save one of its arrays with "
			       "np.save(path, np.load(npz)[name])";
		else if (len >= 4 && !memcmp(b, "NNN.", 4))
			hint = "; this is a .nnn model, not a .npy array";
		return nnn_diags_add(d, NNN_E_NPY, 0, "magic", "magic: found %s, expected \"\\x93NUMPY\" (a .npy file)%s",
		                     snip(b, len < 8 ? len : 8, tmp, sizeof tmp), hint);
	}
	if (len < 8)
		return nnn_diags_add(d, NNN_E_TRUNCATED, len, "version",
		                     "the file ends after %zu bytes, inside the preamble; a .npy file has at least 10", len);
	major = b[6];
	minor = b[7];
	if (major < 1 || major > 3 || minor != 0)
		return nnn_diags_add(d, NNN_E_NPY, 6, "version",
		                     "version %u.%u, expected 1.0, 2.0 or 3.0; save the array again with np.save", major,
		                     minor);
	hstart = major == 1 ? 10 : 12;
	if (len < hstart)
		return nnn_diags_add(d, NNN_E_TRUNCATED, len, "header_len",
		                     "the file ends after %zu bytes, inside the preamble; a version %u.0 file has at "
		                     "least %zu",
		                     len, major, hstart);
	hlen = major == 1 ? (size_t)b[8] | (size_t)b[9] << 8 : (size_t)nnn_le_u32(b + 8);
	if (hlen > len - hstart)
		return nnn_diags_add(d, NNN_E_TRUNCATED, len, "header",
		                     "header_len is %zu but the file ends %zu bytes into the header", hlen, len - hstart);

	hp_t p = { .s = b + hstart, .n = hlen, .base = hstart, .major = major, .d = d };
	st = parse_header(&p, &dt, &lay->shape, offs);
	if (st != NNN_OK)
		return st;
	bad = shape_count(&lay->shape, &count);
	if (bad >= 0) {
		char path[32];
		snprintf(path, sizeof path, "shape[%" PRId32 "]", bad);
		return nnn_diags_add(d, NNN_E_DIM_OVERFLOW, offs[bad], path,
		                     "shape %s: the product of the dims passes 2^63 - 1 at %s",
		                     fmt_shape(&lay->shape, sh, sizeof sh), path);
	}

	if (need) {
		uint64_t head = (uint64_t)hstart + hlen;
		*need = count > (UINT64_MAX - head) / dtypes[dt].size ? UINT64_MAX : head + count * dtypes[dt].size;
		return NNN_OK;
	}
	/* The data size must match exactly, and is checked before allocating. */
	left = len - hstart - hlen;
	if (count > left / dtypes[dt].size)
		return nnn_diags_add(d, NNN_E_TRUNCATED, len, "data",
		                     "shape %s of '%s' needs %" PRIu64 " elements of %u bytes, but the file ends %zu "
		                     "bytes after the header",
		                     fmt_shape(&lay->shape, sh, sizeof sh), dtypes[dt].descr, count, dtypes[dt].size, left);
	if (count * dtypes[dt].size != left)
		return nnn_diags_add(d, NNN_E_DIM_MISMATCH, hstart + hlen + count * dtypes[dt].size, "data",
		                     "%zu bytes after the data: shape %s of '%s' takes %" PRIu64 " bytes, the file has %zu "
		                     "after the header; the shape is wrong or bytes were appended",
		                     left - (size_t)(count * dtypes[dt].size), fmt_shape(&lay->shape, sh, sizeof sh),
		                     dtypes[dt].descr, count * dtypes[dt].size, left);
	if (count > SIZE_MAX / sizeof(float))
		return nnn_diags_add(d, NNN_E_NOMEM, NNN_NO_OFFSET, "data", "%" PRIu64 " float32 elements do not fit in memory",
		                     count);
	lay->dt = dt;
	lay->data_at = hstart + hlen;
	lay->count = (size_t)count;
	return NNN_OK;
}

/* The elements of a parsed file as float32, in a new buffer (*out). */
static nnn_status_t convert_new(const unsigned char *b, const layout_t *lay, float **out, nnn_diags_t *d)
{
	*out = nnn_mem_big(lay->count * sizeof(float));
	if (!*out)
		return nnn_diags_add(d, NNN_E_NOMEM, NNN_NO_OFFSET, "data", "cannot allocate %zu float32 elements",
		                     lay->count);
	return convert(lay->dt, b + lay->data_at, lay->count, lay->data_at, *out, d);
}

static nnn_status_t decode(const unsigned char *b, size_t len, nnn_npy_t *out, nnn_diags_t *d)
{
	layout_t lay;
	nnn_status_t st = parse(b, len, &lay, NULL, d);
	if (st != NNN_OK)
		return st;
	out->shape = lay.shape;
	out->count = lay.count;
	return convert_new(b, &lay, &out->data, d);
}

nnn_status_t nnn_npy_read_mem(const void *buf, size_t len, nnn_npy_t *out, nnn_diags_t *diags)
{
	nnn_status_t st;
	if (!out)
		return nnn_diags_add(diags, NNN_E_USAGE, NNN_NO_OFFSET, "", "nnn_npy_read_mem: out is NULL");
	memset(out, 0, sizeof *out);
	if (!buf && len)
		return nnn_diags_add(diags, NNN_E_USAGE, NNN_NO_OFFSET, "", "nnn_npy_read_mem: buf is NULL");
	st = decode(buf ? buf : "", len, out, diags);
	if (st != NNN_OK)
		nnn_npy_free(out);
	return st;
}

/* A stream's header may take this much at most (numpy's take a few
 * hundred bytes; its own reader refuses more than 10000 by default). */
#define STREAM_HEADER_MAX ((size_t)1 << 20)

/* Reads from fd until *n bytes are in *buf (grown by doubling up to `want`,
 * so memory follows the bytes that actually come) or the stream ends. */
static nnn_status_t read_upto(int fd, const char *name, unsigned char **buf, size_t *n, size_t *cap, size_t want,
                              nnn_diags_t *d)
{
	while (*n < want) {
		if (*n == *cap) {
			size_t c = *cap < want / 2 ? (*cap ? 2 * *cap : 4096) : want;
			unsigned char *nb = realloc(*buf, c);
			if (!nb)
				return nnn_diags_add(d, NNN_E_NOMEM, *n, "", "cannot allocate %zu bytes to read %s", c, name);
			*buf = nb;
			*cap = c;
		}
		ssize_t k = read(fd, *buf + *n, (*cap < want ? *cap : want) - *n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return nnn_diags_add(d, NNN_E_IO, *n, "", "cannot read %s: %s", name, strerror(errno));
		if (k == 0)
			break;
		*n += (size_t)k;
	}
	return NNN_OK;
}

/* A stream (standard input) is read in steps, each checked before the
 * next: the preamble (magic, version, header length), the header, then the
 * data the header describes and one byte more (to tell bytes appended). So
 * what is not a .npy file costs its first 12 bytes, and any stream at most
 * the size its own header states, never "everything until it ends". */
static nnn_status_t read_stream(int fd, const char *name, unsigned char **buf, size_t *len, nnn_diags_t *d)
{
	size_t n = 0, cap = 0, hstart = 10, hlen = 0;
	uint64_t need = 0;
	layout_t lay;
	nnn_status_t st = read_upto(fd, name, buf, &n, &cap, 12, d);
	if (st == NNN_OK && n >= 10 && !memcmp(*buf, NPY_MAGIC, NPY_MAGIC_LEN) && (*buf)[6] >= 1 && (*buf)[6] <= 3) {
		hstart = (*buf)[6] == 1 ? 10 : 12;
		hlen = (*buf)[6] == 1 ? (size_t)(*buf)[8] | (size_t)(*buf)[9] << 8 : (size_t)nnn_le_u32(*buf + 8);
		if (hlen > STREAM_HEADER_MAX)
			st = nnn_diags_add(d, NNN_E_NPY, 8, "header_len", "header_len is %zu: a .npy header read from %s "
			                   "may take %zu bytes at most", hlen, name, STREAM_HEADER_MAX);
		if (st == NNN_OK)
			st = read_upto(fd, name, buf, &n, &cap, hstart + hlen, d);
		/* A preamble and header that parse give the size to read. */
		if (st == NNN_OK && n == hstart + hlen && parse(*buf, n, &lay, &need, NULL) == NNN_OK)
			st = need >= SIZE_MAX ? nnn_diags_add(d, NNN_E_NOMEM, NNN_NO_OFFSET, "", "the header of %s describes "
			                                      "more bytes than this machine can address", name)
			                      : read_upto(fd, name, buf, &n, &cap, (size_t)need + 1, d);
	}
	/* Anything else: parsing what was read tells what is wrong. */
	if (st != NNN_OK) {
		free(*buf);
		*buf = NULL;
		return st;
	}
	*len = n;
	return NNN_OK;
}

/* A file's bytes: mapped when it is a regular file of known size, else read
 * to EOF into a malloc'd buffer (pipes, terminals, devices). */
typedef struct src {
	const unsigned char *b;
	size_t n;
	int mapped;
} src_t;

static void src_drop(src_t *s)
{
	if (s->mapped)
		munmap((void *)s->b, s->n);
	else
		free((void *)s->b);
	memset(s, 0, sizeof *s);
}

/* "-" is standard input (read as a stream, in checked steps); anything
 * else must be a regular file (never a FIFO or a device, which could block
 * or never end), mapped when `map`, else read with checked reads. Names in
 * messages are the caller's path. */
static nnn_status_t src_load(const char *path, int map, src_t *s, nnn_diags_t *diags)
{
	int fd;
	size_t size;
	unsigned char *b = NULL;
	nnn_status_t st;

	memset(s, 0, sizeof *s);
	if (!strcmp(path, "-")) {
		st = read_stream(STDIN_FILENO, "standard input", &b, &s->n, diags);
		s->b = b;
		return st;
	}
	if ((st = nnn_open_regular(path, path, &fd, &size, diags)) != NNN_OK)
		return st;
	if (size == 0) {
		st = NNN_OK;
	} else if (map) {
		void *m = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (m == MAP_FAILED) {
			st = nnn_diags_add(diags, NNN_E_IO, NNN_NO_OFFSET, "", "cannot map %s: %s", path, strerror(errno));
		} else {
			s->b = m;
			s->n = size;
			s->mapped = 1;
			st = NNN_OK;
		}
	} else if ((st = nnn_read_copy(fd, size, &b, diags)) == NNN_OK) {
		s->b = b;
		s->n = size;
	}
	close(fd);
	return st;
}

/* The file readers' start: checks the arguments of `fn`, zeroes *out
 * (out_size bytes) and loads the bytes of `path` into *s (zeroed on failure,
 * so that src_drop is always safe). */
static nnn_status_t load_checked(const char *fn, const char *path, int map, void *out, size_t out_size, src_t *s,
                                 nnn_diags_t *diags)
{
	memset(s, 0, sizeof *s);
	if (!out)
		return nnn_diags_add(diags, NNN_E_USAGE, NNN_NO_OFFSET, "", "%s: out is NULL", fn);
	memset(out, 0, out_size);
	if (!path)
		return nnn_diags_add(diags, NNN_E_USAGE, NNN_NO_OFFSET, "", "%s: path is NULL", fn);
	return src_load(path, map, s, diags);
}

nnn_status_t nnn_npy_read_file(const char *path, nnn_npy_t *out, nnn_diags_t *diags)
{
	src_t s;
	nnn_status_t st = load_checked("nnn_npy_read_file", path, 0, out, sizeof *out, &s, diags);
	if (st == NNN_OK)
		st = nnn_npy_read_mem(s.b, s.n, out, diags);
	src_drop(&s);
	return st;
}

static int host_little_endian(void)
{
	const uint16_t one = 1;
	unsigned char first;
	memcpy(&first, &one, 1);
	return first == 1;
}

nnn_status_t nnn_npy_map(const char *path, nnn_npy_view_t *out, nnn_diags_t *diags)
{
	src_t s;
	layout_t lay;
	nnn_status_t st = load_checked("nnn_npy_map", path, 1, out, sizeof *out, &s, diags);
	if (st == NNN_OK)
		st = parse(s.b ? s.b : (const unsigned char *)"", s.n, &lay, NULL, diags);
	if (st != NNN_OK) {
		src_drop(&s);
		return st;
	}
	out->shape = lay.shape;
	out->count = lay.count;
	out->dtype = dtypes[lay.dt].name;
	out->kind = dtypes[lay.dt].kind;
	/* numpy aligns the data to 64 bytes, so '<f4' data is usable in place. */
	if (lay.dt == DT_F4 && host_little_endian() && (uintptr_t)(s.b + lay.data_at) % _Alignof(float) == 0) {
		out->data = (const float *)(const void *)(s.b + lay.data_at);
		out->in_place = 1;
		out->base_ = s.b;
		out->base_size_ = s.n;
		out->base_mapped_ = s.mapped;
		return NNN_OK;
	}
	float *copy;
	st = convert_new(s.b, &lay, &copy, diags);
	src_drop(&s);
	if (st != NNN_OK) {
		free(copy);
		memset(out, 0, sizeof *out);
		return st;
	}
	out->data = copy;
	out->base_ = copy;
	return NNN_OK;
}

void nnn_npy_unmap(nnn_npy_view_t *v)
{
	if (!v)
		return;
	src_t s = { v->base_, v->base_size_, v->base_mapped_ };
	src_drop(&s);
	memset(v, 0, sizeof *v);
}

void nnn_npy_free(nnn_npy_t *a)
{
	if (!a)
		return;
	free(a->data);
	memset(a, 0, sizeof *a);
}

/* ---- typed arrays: the file's elements as they are ---- */

static nnn_status_t decode_typed(const unsigned char *b, size_t len, nnn_npy_typed_t *out, nnn_diags_t *d)
{
	layout_t lay;
	nnn_status_t st = parse(b, len, &lay, NULL, d);
	if (st != NNN_OK)
		return st;
	size_t n = lay.count * dtypes[lay.dt].size; /* the data is in the file: it fits */
	out->bytes = nnn_mem_big(n ? n : 1);
	if (!out->bytes)
		return nnn_diags_add(d, NNN_E_NOMEM, NNN_NO_OFFSET, "data", "cannot allocate %zu bytes", n);
	if (n)
		memcpy(out->bytes, b + lay.data_at, n);
	out->shape = lay.shape;
	out->count = lay.count;
	out->kind = dtypes[lay.dt].ek;
	out->width = (int)dtypes[lay.dt].size;
	out->dtype = dtypes[lay.dt].name;
	out->data_at = lay.data_at;
	return NNN_OK;
}

nnn_status_t nnn_npy_read_typed_mem(const void *buf, size_t len, nnn_npy_typed_t *out, nnn_diags_t *diags)
{
	nnn_status_t st;
	if (!out)
		return nnn_diags_add(diags, NNN_E_USAGE, NNN_NO_OFFSET, "", "nnn_npy_read_typed_mem: out is NULL");
	memset(out, 0, sizeof *out);
	if (!buf && len)
		return nnn_diags_add(diags, NNN_E_USAGE, NNN_NO_OFFSET, "", "nnn_npy_read_typed_mem: buf is NULL");
	st = decode_typed(buf ? buf : "", len, out, diags);
	if (st != NNN_OK)
		nnn_npy_typed_free(out);
	return st;
}

nnn_status_t nnn_npy_read_typed_file(const char *path, nnn_npy_typed_t *out, nnn_diags_t *diags)
{
	src_t s;
	nnn_status_t st = load_checked("nnn_npy_read_typed_file", path, 0, out, sizeof *out, &s, diags);
	if (st == NNN_OK)
		st = nnn_npy_read_typed_mem(s.b, s.n, out, diags);
	src_drop(&s);
	return st;
}

void nnn_npy_typed_free(nnn_npy_typed_t *a)
{
	if (!a)
		return;
	free(a->bytes);
	memset(a, 0, sizeof *a);
}

nnn_status_t nnn_npy_typed_f32(const nnn_npy_typed_t *a, float *out, nnn_diags_t *diags)
{
	int dt = a ? dtype_of(a->kind, a->width) : -1;
	if (dt < 0 || (!out && a->count))
		return nnn_diags_add(diags, NNN_E_USAGE, NNN_NO_OFFSET, "", "nnn_npy_typed_f32: not a typed array read");
	return convert((dtype_t)dt, a->bytes, a->count, a->data_at, out, diags);
}

const char *nnn_npy_descr(nnn_ekind_t kind, int width)
{
	int k = dtype_of(kind, width);
	return k < 0 ? NULL : dtypes[k].descr;
}

const char *nnn_npy_dtype_name(nnn_ekind_t kind, int width)
{
	int k = dtype_of(kind, width);
	return kind == NNN_EK_BFLOAT && width == 2 ? "bfloat16" : k < 0 ? NULL : dtypes[k].name;
}

/* Whether every value of (fk, fw) is a value of (tk, tw): the same type,
 * or a float into a wider float, an int into a wider int, an unsigned int
 * into a wider unsigned or signed int. */
static int widens_exactly(nnn_ekind_t fk, int fw, nnn_ekind_t tk, int tw)
{
	if (fk == tk && fw == tw)
		return 1;
	if (fw >= tw || tk == NNN_EK_BFLOAT || fk == NNN_EK_BFLOAT || fk == NNN_EK_BOOL)
		return 0;
	return fk == tk || (fk == NNN_EK_UINT && tk == NNN_EK_INT);
}

/* The bits of the float of `to` bytes whose value is the float of `from`
 * bytes with bits v (to > from). A NaN keeps its sign and payload on top of
 * the wider one's, as it is, signaling or quiet: no conversion through a
 * floating-point register, which may quiet it. */
static uint64_t widen_float(uint64_t v, int from, int to)
{
	int fm = from == 2 ? 10 : 23, tm = to == 4 ? 23 : 52, fe = from == 2 ? 5 : 8, te = to == 4 ? 8 : 11;
	uint64_t sign = v >> (8 * from - 1) & 1, m = v & ((1ull << fm) - 1), e = v >> fm & ((1ull << fe) - 1);
	if (e == (1ull << fe) - 1) /* infinity or NaN */
		return sign << (8 * to - 1) | ((1ull << te) - 1) << tm | m << (tm - fm);
	double x = from == 2 ? nnn_f16_to_f32((uint16_t)v) : nnn_f32_from_bits((uint32_t)v);
	float f = (float)x;
	uint64_t out = 0;
	if (to == 4)
		memcpy(&out, &f, 4);
	else
		memcpy(&out, &x, 8);
	return out;
}

nnn_status_t nnn_npy_typed_as(const nnn_npy_typed_t *a, nnn_ekind_t kind, int width, void *out, const char *path,
                              nnn_diags_t *d)
{
	const char *want = nnn_npy_descr(kind, width), *name = nnn_npy_dtype_name(kind, width);
	if (!a || (!out && a->count))
		return nnn_diags_add(d, NNN_E_USAGE, NNN_NO_OFFSET, path ? path : "", "nnn_npy_typed_as: a or out is NULL");
	if (!want)
		return nnn_diags_add(d, NNN_E_USAGE, NNN_NO_OFFSET, path ? path : "",
		                     "no .npy dtype holds elements of kind %d and width %d", (int)kind, width);
	/* bfloat16 travels as its raw bits: the same bytes as '<u2' */
	nnn_ekind_t ak = kind == NNN_EK_BFLOAT && a->kind == NNN_EK_UINT && a->width == 2 ? NNN_EK_BFLOAT : a->kind;
	if (!widens_exactly(ak, a->width, kind, width)) {
		const char *found = nnn_npy_descr(a->kind, a->width);
		return nnn_diags_add(d, NNN_E_ENUM, NNN_NO_OFFSET, path ? path : "",
		                     "the .npy file holds '%s' (%s), the field holds %s: expected '%s'%s; no conversion "
		                     "that could change a value is made: save it with np.save(path, x.astype('%s'))%s",
		                     found ? found : "?", a->dtype ? a->dtype : "?", name, want,
		                     kind == NNN_EK_BFLOAT ? " (bfloat16's raw bits)" : " or a type it widens exactly",
		                     want, kind == NNN_EK_BFLOAT ? " after taking the bits (the high half of each float32)" : "");
	}
	unsigned char *o = out;
	if (ak == kind && a->width == width) {
		if (a->count)
			memcpy(o, a->bytes, a->count * (size_t)width);
		return NNN_OK;
	}
	for (size_t i = 0; i < a->count; i++) {
		uint64_t v = nnn_le_bits(a->bytes + i * (size_t)a->width, a->width);
		if (kind == NNN_EK_FLOAT) { /* float16 -> float32 or float64, float32 -> float64: exact */
			v = widen_float(v, a->width, width);
		} else if (ak == NNN_EK_INT && a->width < 8 && (v >> (8 * a->width - 1) & 1)) {
			v |= ~0ull << (8 * a->width); /* sign-extended */
		}
		for (int k = 0; k < width; k++)
			o[i * (size_t)width + (size_t)k] = (unsigned char)(v >> 8 * k);
	}
	return NNN_OK;
}

/* ---- writing ---- */

/* Checks the caller's shape and data; sets *count. */
static nnn_status_t check_args(const nnn_shape_t *shape, const void *data, size_t width, uint64_t *count,
                               nnn_diags_t *d)
{
	char path[32];
	int32_t bad;
	if (!shape)
		return nnn_diags_add(d, NNN_E_USAGE, NNN_NO_OFFSET, "shape", "shape is NULL");
	if (shape->rank < 0 || shape->rank > NNN_MAX_RANK)
		return nnn_diags_add(d, shape->rank < 0 ? NNN_E_NPY : NNN_E_LIMIT, NNN_NO_OFFSET, "shape",
		                     "rank is %" PRId32 ", expected 0 to %d", shape->rank, NNN_MAX_RANK);
	for (int32_t i = 0; i < shape->rank; i++) {
		if (shape->dims[i] < 0) {
			snprintf(path, sizeof path, "shape[%" PRId32 "]", i);
			return nnn_diags_add(d, NNN_E_DIM_NEGATIVE, NNN_NO_OFFSET, path, "%s is %" PRId64 ", expected >= 0",
			                     path, shape->dims[i]);
		}
	}
	bad = shape_count(shape, count);
	if (bad >= 0) {
		snprintf(path, sizeof path, "shape[%" PRId32 "]", bad);
		return nnn_diags_add(d, NNN_E_DIM_OVERFLOW, NNN_NO_OFFSET, path,
		                     "the product of the dims passes 2^63 - 1 at %s", path);
	}
	if (*count > (SIZE_MAX - NPY_HEADER_MAX) / width)
		return nnn_diags_add(d, NNN_E_LIMIT, NNN_NO_OFFSET, "shape",
		                     "%" PRIu64 " elements are more than memory can hold", *count);
	if (!data && *count)
		return nnn_diags_add(d, NNN_E_USAGE, NNN_NO_OFFSET, "data", "data is NULL for %" PRIu64 " elements",
		                     *count);
	return NNN_OK;
}

/* The header numpy.save writes for a C-ordered array of `descr` ('<f4'): the dict with
 * sorted keys and a trailing ", ", room for the first dim to grow to 21
 * digits, then spaces and '\n' up to a multiple of 64 bytes (at least one
 * space). Returns the header's total size, preamble included. */
static size_t make_header(const nnn_shape_t *s, const char *descr, unsigned char *h)
{
	char *t = (char *)h + 10;
	size_t n = 0, len;
	char dim0[24];

	n += (size_t)sprintf(t + n, "{'descr': '%s', 'fortran_order': False, 'shape': ", descr);
	n += strlen(fmt_shape(s, t + n, NPY_HEADER_MAX - 10 - n)); /* rank <= 32: it fits */
	n += (size_t)sprintf(t + n, ", }");
	if (s->rank > 0) {
		size_t digits = (size_t)snprintf(dim0, sizeof dim0, "%" PRId64, s->dims[0]);
		for (; digits < NPY_GROWTH_DIGITS; digits++)
			t[n++] = ' ';
	}
	len = NPY_ALIGN - (10 + n + 1) % NPY_ALIGN;
	memset(t + n, ' ', len);
	n += len;
	t[n++] = '\n';
	memcpy(h, NPY_MAGIC "\x01\x00", 8);
	h[8] = (unsigned char)n;
	h[9] = (unsigned char)(n >> 8);
	return 10 + n;
}

static void put_data(unsigned char *p, const float *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		put_le_f32(p + 4 * i, v[i]);
}

nnn_status_t nnn_npy_encode(const nnn_shape_t *shape, const float *data, unsigned char **buf, size_t *len,
                            nnn_diags_t *diags)
{
	unsigned char h[NPY_HEADER_MAX];
	uint64_t count;
	size_t hn;
	nnn_status_t st;

	if (!buf || !len)
		return nnn_diags_add(diags, NNN_E_USAGE, NNN_NO_OFFSET, "", "nnn_npy_encode: buf or len is NULL");
	*buf = NULL;
	*len = 0;
	st = check_args(shape, data, 4, &count, diags);
	if (st != NNN_OK)
		return st;
	hn = make_header(shape, "<f4", h);
	*buf = malloc(hn + (size_t)count * 4);
	if (!*buf)
		return nnn_diags_add(diags, NNN_E_NOMEM, NNN_NO_OFFSET, "", "cannot allocate %zu bytes",
		                     hn + (size_t)count * 4);
	memcpy(*buf, h, hn);
	put_data(*buf + hn, data, (size_t)count);
	*len = hn + (size_t)count * 4;
	return NNN_OK;
}

typedef struct wctx {
	const unsigned char *h;
	size_t hn;
	const float *data;
	size_t count;
	const unsigned char *raw; /* or little-endian elements of any width: raw_len bytes */
	size_t raw_len;
} wctx_t;

/* Header, then the data in little-endian chunks. */
static nnn_status_t fill_npy(void *ctx, int fd, nnn_diags_t *d)
{
	const wctx_t *w = ctx;
	unsigned char chunk[16384];
	nnn_status_t st = nnn_write_all(fd, w->h, w->hn, d);
	if (st == NNN_OK && w->raw)
		return w->raw_len ? nnn_write_all(fd, w->raw, w->raw_len, d) : NNN_OK;
	for (size_t i = 0; st == NNN_OK && i < w->count; i += sizeof chunk / 4) {
		size_t n = w->count - i < sizeof chunk / 4 ? w->count - i : sizeof chunk / 4;
		put_data(chunk, w->data + i, n);
		st = nnn_write_all(fd, chunk, 4 * n, d);
	}
	return st;
}

nnn_status_t nnn_npy_write_file(const char *path, const nnn_shape_t *shape, const float *data, nnn_diags_t *diags)
{
	unsigned char h[NPY_HEADER_MAX];
	uint64_t count;
	nnn_status_t st;

	if (!path)
		return nnn_diags_add(diags, NNN_E_USAGE, NNN_NO_OFFSET, "", "nnn_npy_write_file: path is NULL");
	st = check_args(shape, data, 4, &count, diags);
	if (st != NNN_OK)
		return st;
	wctx_t w = { .h = h, .hn = make_header(shape, "<f4", h), .data = data, .count = (size_t)count };
	return nnn_write_atomic(path, fill_npy, &w, diags);
}

/* The header and the size of a typed array's file; checks the arguments. */
static nnn_status_t typed_header(const nnn_shape_t *shape, nnn_ekind_t kind, int width, const void *bytes,
                                 unsigned char *h, size_t *hn, size_t *dn, nnn_diags_t *d)
{
	uint64_t count;
	const char *descr = nnn_npy_descr(kind, width);
	if (!descr)
		return nnn_diags_add(d, NNN_E_USAGE, NNN_NO_OFFSET, "", "no .npy dtype holds elements of kind %d and width %d",
		                     (int)kind, width);
	nnn_status_t st = check_args(shape, bytes, (size_t)width, &count, d);
	if (st != NNN_OK)
		return st;
	*hn = make_header(shape, descr, h);
	*dn = (size_t)count * (size_t)width;
	return NNN_OK;
}

nnn_status_t nnn_npy_encode_typed(const nnn_shape_t *shape, nnn_ekind_t kind, int width, const void *bytes,
                                  unsigned char **buf, size_t *len, nnn_diags_t *diags)
{
	unsigned char h[NPY_HEADER_MAX];
	size_t hn, dn;
	if (!buf || !len)
		return nnn_diags_add(diags, NNN_E_USAGE, NNN_NO_OFFSET, "", "nnn_npy_encode_typed: buf or len is NULL");
	*buf = NULL;
	*len = 0;
	nnn_status_t st = typed_header(shape, kind, width, bytes, h, &hn, &dn, diags);
	if (st != NNN_OK)
		return st;
	if (!(*buf = malloc(hn + dn)))
		return nnn_diags_add(diags, NNN_E_NOMEM, NNN_NO_OFFSET, "", "cannot allocate %zu bytes", hn + dn);
	memcpy(*buf, h, hn);
	if (dn)
		memcpy(*buf + hn, bytes, dn);
	*len = hn + dn;
	return NNN_OK;
}

nnn_status_t nnn_npy_write_typed_file(const char *path, const nnn_shape_t *shape, nnn_ekind_t kind, int width,
                                      const void *bytes, nnn_diags_t *diags)
{
	unsigned char h[NPY_HEADER_MAX];
	size_t hn, dn;
	if (!path)
		return nnn_diags_add(diags, NNN_E_USAGE, NNN_NO_OFFSET, "", "nnn_npy_write_typed_file: path is NULL");
	nnn_status_t st = typed_header(shape, kind, width, bytes, h, &hn, &dn, diags);
	if (st != NNN_OK)
		return st;
	wctx_t w = { .h = h, .hn = hn, .raw = bytes ? bytes : (const unsigned char *)"", .raw_len = dn };
	return nnn_write_atomic(path, fill_npy, &w, diags);
}
