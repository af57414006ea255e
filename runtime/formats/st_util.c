/* st_util.c: the byte buffer, JSON strings and base64 of the safetensors
 * writer and reader (st.h). */
#include <stdlib.h>
#include <string.h>

#include "st.h"

void st_put(st_buf_t *o, const void *p, size_t n)
{
	if (o->oom || !n)
		return;
	if (o->cap - o->n < n) {
		size_t cap = o->cap ? o->cap : 4096;
		while (cap - o->n < n) {
			if (cap > SIZE_MAX / 2) {
				o->oom = true;
				return;
			}
			cap *= 2;
		}
		unsigned char *b = realloc(o->b, cap);
		if (!b) {
			o->oom = true;
			return;
		}
		o->b = b;
		o->cap = cap;
	}
	memcpy(o->b + o->n, p, n);
	o->n += n;
}

void st_puts(st_buf_t *o, const char *s)
{
	st_put(o, s, strlen(s));
}

void st_put_jstr(st_buf_t *o, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	st_put(o, "\"", 1);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\') {
			char e[2] = { '\\', (char)c };
			st_put(o, e, 2);
		} else if (c < 0x20 || c == 0x7f) {
			char e[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15] };
			st_put(o, e, 6);
		} else {
			st_put(o, &s[i], 1);
		}
	}
	st_put(o, "\"", 1);
}

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

void st_put_b64(st_buf_t *o, const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0) |
		             (i + 2 < n ? p[i + 2] : 0);
		char q[4] = { b64[v >> 18], b64[v >> 12 & 63], i + 1 < n ? b64[v >> 6 & 63] : '=',
			      i + 2 < n ? b64[v & 63] : '=' };
		st_put(o, q, 4);
	}
}

static int b64_value(char c)
{
	const char *p = c ? strchr(b64, c) : NULL;
	return p ? (int)(p - b64) : -1;
}

size_t st_b64_decode(const char *s, size_t n, unsigned char *out, size_t *bad)
{
	size_t k = 0;
	if (n % 4) {
		*bad = n;
		return SIZE_MAX;
	}
	for (size_t i = 0; i < n; i += 4) {
		/* '=' only as the last one or two characters of the text */
		int pad = i + 4 == n ? (s[i + 3] == '=') + (s[i + 3] == '=' && s[i + 2] == '=') : 0;
		uint32_t v = 0;
		for (int j = 0; j < 4; j++) {
			int x = j >= 4 - pad ? 0 : b64_value(s[i + j]);
			if (x < 0) {
				*bad = i + (size_t)j;
				return SIZE_MAX;
			}
			v = v << 6 | (uint32_t)x;
		}
		unsigned char t[3] = { (unsigned char)(v >> 16), (unsigned char)(v >> 8), (unsigned char)v };
		memcpy(out + k, t, (size_t)(3 - pad));
		k += (size_t)(3 - pad);
	}
	return k;
}

/* The dtypes of the format's reference implementation, and the element
 * type of .nnn each is (none for the 8-bit floats). */
static const struct {
	const char *name;
	size_t size;
	nnn_ekind_t kind;
} dtypes[] = { { "BOOL", 1, NNN_EK_BOOL },   { "U8", 1, NNN_EK_UINT },   { "I8", 1, NNN_EK_INT },
	       { "F8_E5M2", 1, NNN_EK_NONE }, { "F8_E4M3", 1, NNN_EK_NONE }, { "I16", 2, NNN_EK_INT },
	       { "U16", 2, NNN_EK_UINT },    { "F16", 2, NNN_EK_FLOAT },  { "BF16", 2, NNN_EK_BFLOAT },
	       { "I32", 4, NNN_EK_INT },     { "U32", 4, NNN_EK_UINT },   { "F32", 4, NNN_EK_FLOAT },
	       { "I64", 8, NNN_EK_INT },     { "U64", 8, NNN_EK_UINT },   { "F64", 8, NNN_EK_FLOAT } };

size_t st_dtype_size(const char *name)
{
	return st_dtype_kind(name, NULL);
}

size_t st_dtype_kind(const char *name, nnn_ekind_t *kind)
{
	for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
		if (!strcmp(name, dtypes[i].name)) {
			if (kind)
				*kind = dtypes[i].kind;
			return dtypes[i].size;
		}
	return 0;
}

const char *st_dtype_name(nnn_ekind_t kind, int width)
{
	for (size_t i = 0; kind != NNN_EK_NONE && i < sizeof dtypes / sizeof dtypes[0]; i++)
		if (dtypes[i].kind == kind && dtypes[i].size == (size_t)width)
			return dtypes[i].name;
	return NULL;
}
