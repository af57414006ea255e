/* encode.c: the writers the generated encoder is built on, and the memory
 * sink (the file sink is write.c's).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "codec.h"
#include "sink.h"
#include "try.h"
#include "mem.h"

/* ---- writers ---- */

static nnn_status_t put(nnn_sink_t *w, const void *p, size_t n)
{
	return n ? w->write(w, p, n) : NNN_OK;
}

static void le32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
	p[2] = (unsigned char)(v >> 16);
	p[3] = (unsigned char)(v >> 24);
}

nnn_status_t nnn_wr_u8(nnn_sink_t *w, uint8_t v)
{
	return put(w, &v, 1);
}

nnn_status_t nnn_wr_i32(nnn_sink_t *w, int32_t v)
{
	unsigned char b[4];
	le32(b, (uint32_t)v);
	return put(w, b, 4);
}

nnn_status_t nnn_wr_u64(nnn_sink_t *w, uint64_t v)
{
	unsigned char b[8];
	le32(b, (uint32_t)v);
	le32(b + 4, (uint32_t)(v >> 32));
	return put(w, b, 8);
}

nnn_status_t nnn_wr_f32(nnn_sink_t *w, float v)
{
	uint32_t u;
	unsigned char b[4];
	memcpy(&u, &v, 4); /* bit pattern, NaN payloads included */
	le32(b, u);
	return put(w, b, 4);
}

nnn_status_t nnn_wr_bool(nnn_sink_t *w, bool v)
{
	return nnn_wr_u8(w, v ? 1 : 0);
}

static nnn_status_t wr_count(nnn_sink_t *w, int32_t n, const void *data)
{
	if (n < 0)
		return nnn_wr_fail(w, NNN_E_COUNT_NEGATIVE, "count", "found %d, expected >= 0", (int)n);
	if (n > 0 && !data)
		return nnn_wr_fail(w, NNN_E_USAGE, "data", "%d elements but no data", (int)n);
	return nnn_wr_i32(w, n);
}

nnn_status_t nnn_wr_string(nnn_sink_t *w, nnn_str_t v)
{
	NNN_TRY(wr_count(w, v.len, v.ptr));
	return put(w, v.ptr, (size_t)v.len);
}

nnn_status_t nnn_wr_i32_array(nnn_sink_t *w, nnn_i32s_t v)
{
	NNN_TRY(wr_count(w, v.n, v.v));
	for (int32_t i = 0; i < v.n; i++)
		NNN_TRY(nnn_wr_i32(w, v.v[i]));
	return NNN_OK;
}

nnn_status_t nnn_wr_f32_array(nnn_sink_t *w, nnn_f32s_t v)
{
	/* Already little-endian bytes: one bulk write, no per-element work. */
	NNN_TRY(wr_count(w, v.n, v.bytes));
	return put(w, v.bytes, 4 * (size_t)v.n);
}

/* Any element type: `width` bytes of the host value at v (its C type is of
 * that width, nnn/types.h), little-endian. */
nnn_status_t nnn_wr_num(nnn_sink_t *w, int width, const void *v)
{
	unsigned char b[8];
	uint64_t bits = 0;
	switch (width) { /* the value as the unsigned integer of its width */
	case 1: { uint8_t x; memcpy(&x, v, 1); bits = x; break; }
	case 2: { uint16_t x; memcpy(&x, v, 2); bits = x; break; }
	case 4: { uint32_t x; memcpy(&x, v, 4); bits = x; break; }
	case 8: memcpy(&bits, v, 8); break;
	default:
		return nnn_wr_fail(w, NNN_E_USAGE, "width", "found %d, expected 1, 2, 4 or 8", width);
	}
	for (int i = 0; i < width; i++)
		b[i] = (unsigned char)(bits >> 8 * i);
	return put(w, b, (size_t)width);
}

nnn_status_t nnn_wr_nums(nnn_sink_t *w, int width, nnn_elems_t v)
{
	/* Little-endian bytes already, as for f32_array. */
	NNN_TRY(wr_count(w, v.n, v.bytes));
	return put(w, v.bytes, (size_t)width * (size_t)v.n);
}

nnn_status_t nnn_wr_fail(nnn_sink_t *w, nnn_status_t code, const char *name, const char *fmt, ...)
{
	char msg[NNN_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return nnn_diags_add(w->diags, code, NNN_NO_OFFSET, name, "cannot encode: %s", msg);
}

/* ---- memory sink ---- */

typedef struct mem_sink {
	nnn_sink_t base;
	unsigned char *buf;
	size_t len, cap;
} mem_sink_t;

static nnn_status_t mem_write(nnn_sink_t *self, const void *p, size_t n)
{
	mem_sink_t *m = (mem_sink_t *)self;
	if (m->cap - m->len < n) {
		/* The exact size is known up front; this is only a fallback. */
		size_t cap = m->cap ? m->cap : 256;
		while (cap - m->len < n)
			cap *= 2;
		unsigned char *b = realloc(m->buf, cap);
		if (!b)
			return nnn_diags_add(self->diags, NNN_E_NOMEM, NNN_NO_OFFSET, "", "cannot grow the buffer to %zu", cap);
		m->buf = b;
		m->cap = cap;
	}
	memcpy(m->buf + m->len, p, n);
	m->len += n;
	return NNN_OK;
}

nnn_status_t nnn_model_encode(const nnn_model_t *m, unsigned char **buf, size_t *len, nnn_diags_t *diags)
{
	uint64_t size = nnn_gen_size(m);
	mem_sink_t s = { .base = { .write = mem_write, .diags = diags } };
	nnn_status_t st;

	*buf = NULL;
	*len = 0;
	if (size > SIZE_MAX)
		return nnn_diags_add(diags, NNN_E_NOMEM, NNN_NO_OFFSET, "", "%llu bytes do not fit in memory",
		                     (unsigned long long)size);
	s.cap = size ? (size_t)size : 1;
	s.buf = nnn_mem_big(s.cap);
	if (!s.buf)
		return nnn_diags_add(diags, NNN_E_NOMEM, NNN_NO_OFFSET, "", "cannot allocate %zu bytes", s.cap);
	st = nnn_gen_encode(&s.base, m);
	if (st != NNN_OK) {
		free(s.buf);
		return st;
	}
	*buf = s.buf;
	*len = s.len;
	return NNN_OK;
}

uint64_t nnn_model_encoded_size(const nnn_model_t *m)
{
	return nnn_gen_size(m);
}
