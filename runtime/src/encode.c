/* encode.c: the writers the generated encoder is built on, the memory and
 * file sinks, and the single atomic write path of libnnn.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include <nnn/file.h>

#include "codec.h"
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

/* ---- file sink: buffered writes to a descriptor ---- */

#define FD_BUF ((size_t)1 << 20)

typedef struct fd_sink {
	nnn_sink_t base;
	int fd;
	unsigned char *buf;
	size_t len;
} fd_sink_t;

/* EFBIG: the process's file size limit (SIGXFSZ is blocked while
 * nnn_write_atomic writes, so the write fails instead of killing). */
static nnn_status_t too_big(nnn_diags_t *diags)
{
	struct rlimit r;
	if (getrlimit(RLIMIT_FSIZE, &r) == 0 && r.rlim_cur != RLIM_INFINITY)
		return nnn_diags_add(diags, NNN_E_IO, NNN_NO_OFFSET, "",
		                     "write failed: the file would exceed this process's file size limit of %llu bytes "
		                     "(RLIMIT_FSIZE, ulimit -f): raise the limit or write elsewhere",
		                     (unsigned long long)r.rlim_cur);
	return nnn_diags_add(diags, NNN_E_IO, NNN_NO_OFFSET, "", "write failed: %s: the file system refuses a file "
	                     "this large", strerror(EFBIG));
}

nnn_status_t nnn_write_all(int fd, const void *buf, size_t n, nnn_diags_t *diags)
{
	const unsigned char *p = buf;
	while (n) {
		ssize_t k = write(fd, p, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 && errno == EFBIG)
			return too_big(diags);
		if (k <= 0)
			return nnn_diags_add(diags, NNN_E_IO, NNN_NO_OFFSET, "", "write failed: %s",
			                     k < 0 ? strerror(errno) : "no progress");
		p += k;
		n -= (size_t)k;
	}
	return NNN_OK;
}

static nnn_status_t fd_flush(fd_sink_t *s)
{
	nnn_status_t st = nnn_write_all(s->fd, s->buf, s->len, s->base.diags);
	s->len = 0;
	return st;
}

static nnn_status_t fd_write(nnn_sink_t *self, const void *p, size_t n)
{
	fd_sink_t *s = (fd_sink_t *)self;
	if (n >= FD_BUF) {
		/* Large tensors go straight from the mapping to the kernel. */
		NNN_TRY(fd_flush(s));
		return nnn_write_all(s->fd, p, n, self->diags);
	}
	if (FD_BUF - s->len < n)
		NNN_TRY(fd_flush(s));
	memcpy(s->buf + s->len, p, n);
	s->len += n;
	return NNN_OK;
}

static nnn_status_t fill_model(void *ctx, int fd, nnn_diags_t *diags)
{
	fd_sink_t s = { .base = { .write = fd_write, .diags = diags }, .fd = fd };
	nnn_status_t st;
	s.buf = malloc(FD_BUF);
	if (!s.buf)
		return nnn_diags_add(diags, NNN_E_NOMEM, NNN_NO_OFFSET, "", "cannot allocate a write buffer");
	st = nnn_gen_encode(&s.base, ctx);
	if (st == NNN_OK)
		st = fd_flush(&s);
	free(s.buf);
	return st;
}

nnn_status_t nnn_model_write_file(const nnn_model_t *m, const char *path, nnn_diags_t *diags)
{
	return nnn_write_atomic(path, fill_model, (void *)m, diags);
}

typedef struct bytes {
	const void *b;
	size_t n;
} bytes_t;

static nnn_status_t fill_bytes(void *ctx, int fd, nnn_diags_t *diags)
{
	const bytes_t *x = ctx;
	return nnn_write_all(fd, x->b, x->n, diags);
}

nnn_status_t nnn_write_atomic_bytes(const char *path, const void *buf, size_t n, nnn_diags_t *diags)
{
	bytes_t x = { buf, n };
	return nnn_write_atomic(path, fill_bytes, &x, diags);
}
