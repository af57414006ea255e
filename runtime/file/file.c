/* file.c: opening a model file and reading its bytes (nnn/file.h, and the
 * internal fileio.h every other reader of files uses).
 *
 * One way for every command: open without blocking, regular files only, and
 * read the structure with pread (the cursor's window, cursor.h), so that a
 * file cut short while it is read is NNN_E_IO with the offset, never SIGBUS.
 * The mapping is there for tensor data only, which decoding never reads. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nnn/file.h>
#include <nnn/validate.h>

#include "codec.h"
#include "cursor.h"
#include "try.h"
#include "fileio.h"
#include "mem.h"

static const char *kind(mode_t m)
{
	return S_ISDIR(m)    ? "a directory"
	       : S_ISFIFO(m) ? "a FIFO (named pipe)"
	       : S_ISCHR(m)  ? "a character device"
	       : S_ISBLK(m)  ? "a block device"
	       : S_ISSOCK(m) ? "a socket"
	                     : "not a file";
}

nnn_status_t nnn_open_regular(const char *path, const char *name, int *fd, size_t *size, nnn_diags_t *diags)
{
	struct stat sb;
	const char *sep = name ? " " : "";
	int flags;
	nnn_status_t st = NNN_OK;

	*size = 0;
	name = name ? name : "";
	/* Opening a FIFO for reading waits for a writer, and some devices wait
	 * too: O_NONBLOCK makes open return at once, and nothing is read before
	 * fstat says what the file is. */
	*fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (*fd < 0)
		return nnn_diags_add(diags, NNN_E_IO, NNN_NO_OFFSET, "", "cannot open%s%s: %s", sep, name, strerror(errno));
	if (fstat(*fd, &sb) != 0)
		st = nnn_diags_add(diags, NNN_E_IO, NNN_NO_OFFSET, "", "cannot stat%s%s: %s", sep, name, strerror(errno));
	else if (!S_ISREG(sb.st_mode))
		st = nnn_diags_add(diags, NNN_E_IO, NNN_NO_OFFSET, "", "%s%sis %s, not a regular file: nothing was read from "
		                   "it; give the path of a regular file", name, sep, kind(sb.st_mode));
	else if ((uintmax_t)sb.st_size > SIZE_MAX)
		st = nnn_diags_add(diags, NNN_E_NOMEM, NNN_NO_OFFSET, "", "%s%sholds %lld bytes, more than this machine "
		                   "can address", name, sep, (long long)sb.st_size);
	else if ((flags = fcntl(*fd, F_GETFL)) < 0 || fcntl(*fd, F_SETFL, flags & ~O_NONBLOCK) != 0)
		st = nnn_diags_add(diags, NNN_E_IO, NNN_NO_OFFSET, "", "cannot set up%s%s for reading: %s", sep, name,
		                   strerror(errno));
	if (st != NNN_OK) {
		close(*fd);
		*fd = -1;
		return st;
	}
	*size = (size_t)sb.st_size;
	return NNN_OK;
}

size_t nnn_pread_all(int fd, void *dst, size_t n, uint64_t off)
{
	size_t got = 0;
	while (got < n) {
		ssize_t k = pread(fd, (unsigned char *)dst + got, n - got, (off_t)(off + got));
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		got += (size_t)k;
	}
	return got;
}

nnn_status_t nnn_read_copy(int fd, size_t size, unsigned char **out, nnn_diags_t *diags)
{
	size_t got;
	*out = nnn_mem_big(size ? size : 1);
	if (!*out)
		return nnn_diags_add(diags, NNN_E_NOMEM, NNN_NO_OFFSET, "", "cannot allocate %zu bytes for a copy", size);
	got = nnn_pread_all(fd, *out, size, 0);
	if (got == size)
		return NNN_OK;
	free(*out);
	*out = NULL;
	return nnn_diags_add(diags, NNN_E_IO, got, "", "%zu of %zu bytes could be read: " NNN_SHORT_READ, got, size);
}

struct nnn_file {
	int fd;                    /* open for the structure's preads; -1 once not needed */
	const unsigned char *data; /* the mapping; NULL when empty or with NNN_DECODE_COPY */
	size_t size;
	nnn_model_t *model;        /* nnn_file_open's; NULL from nnn_file_map */
	const unsigned char *copy; /* NNN_DECODE_COPY: the file's bytes, owned by the model */
	unsigned char *own;        /* nnn_file_of_copy without a model: its bytes */
};

nnn_status_t nnn_file_map(const char *path, nnn_file_t **out, nnn_diags_t *diags)
{
	nnn_file_t *f = calloc(1, sizeof *f);
	nnn_status_t st;
	*out = NULL;
	if (!f)
		return nnn_diags_add(diags, NNN_E_NOMEM, NNN_NO_OFFSET, "", "cannot allocate a file");
	st = nnn_open_regular(path, NULL, &f->fd, &f->size, diags);
	if (st == NNN_OK && f->size > 0) {
		void *p = mmap(NULL, f->size, PROT_READ, MAP_PRIVATE, f->fd, 0);
		if (p == MAP_FAILED)
			st = nnn_diags_add(diags, NNN_E_IO, NNN_NO_OFFSET, "", "cannot map: %s", strerror(errno));
		else
			f->data = p;
	}
	if (st != NNN_OK) {
		nnn_file_close(f);
		return st;
	}
	*out = f;
	return NNN_OK;
}

nnn_status_t nnn_file_read(const nnn_file_t *f, uint64_t off, void *dst, size_t n, nnn_diags_t *diags)
{
	size_t got;
	if (off > f->size || n > f->size - off)
		return nnn_diags_add(diags, NNN_E_TRUNCATED, off, "", "%zu bytes at offset %llu: the file has %zu", n,
		                     (unsigned long long)off, f->size);
	if (f->copy) {
		memcpy(dst, f->copy + off, n);
		return NNN_OK;
	}
	got = nnn_pread_all(f->fd, dst, n, off);
	if (got == n)
		return NNN_OK;
	return nnn_diags_add(diags, NNN_E_IO, off + got, "", "%zu of %zu bytes could be read: " NNN_SHORT_READ, got, n);
}

/* How the codec reads the file's structure (cursor.h, nnn_reader_t): pread
 * of its descriptor. The codec never reads a file by itself. */
static size_t read_fd(const nnn_reader_t *r, void *dst, size_t n, uint64_t off)
{
	const nnn_file_t *f = r->self;
	return nnn_pread_all(f->fd, dst, n, off);
}

nnn_status_t nnn_file_decode(const nnn_file_t *f, const nnn_decode_opts_t *opts, nnn_model_t **out,
                             nnn_diags_t *diags)
{
	unsigned char *copy;
	*out = NULL;
	if (f->copy || !opts || !(opts->flags & NNN_DECODE_COPY))
		return f->copy ? nnn_model_decode(f->copy, f->size, opts, out, diags)
		               : nnn_decode_windowed(f->data, f->size, &(nnn_reader_t){ read_fd, f }, opts, out, diags);
	/* A copy read with checked preads: the model then never reads the file. */
	NNN_TRY(nnn_read_copy(f->fd, f->size, &copy, diags));
	return nnn_model_adopt(copy, f->size, opts, out, diags);
}

nnn_status_t nnn_file_validate(const nnn_file_t *f, const nnn_ctx_t *ctx, const nnn_shape_t *input,
                               nnn_diags_t *diags)
{
	if (f->copy)
		return nnn_validate_bytes(f->copy, f->size, ctx, input, diags);
	return nnn_validate_windowed(f->data, f->size, &(nnn_reader_t){ read_fd, f }, ctx, input, diags);
}

nnn_status_t nnn_file_open(const char *path, const nnn_decode_opts_t *o, nnn_file_t **out, nnn_diags_t *diags)
{
	nnn_decode_opts_t opts = { 0 };
	nnn_file_t *f;
	nnn_status_t st;

	*out = NULL;
	if (o)
		opts = *o;
	/* A model that failed is not opened: keeping going only helps reports. */
	opts.flags &= ~(unsigned)NNN_DECODE_KEEP_GOING;
	NNN_TRY(nnn_file_map(path, &f, diags));
	st = nnn_file_decode(f, &opts, &f->model, diags);
	if (st == NNN_OK && (opts.flags & NNN_DECODE_COPY)) {
		/* The model holds the bytes: the file is no longer needed. */
		f->copy = nnn_model_copy(f->model);
		nnn_unmap(f->data, f->size);
		f->data = NULL;
		close(f->fd);
		f->fd = -1;
	}
	if (st != NNN_OK) {
		nnn_file_close(f);
		return st;
	}
	*out = f;
	return NNN_OK;
}

nnn_status_t nnn_file_of_copy(unsigned char *copy, size_t len, const nnn_decode_opts_t *opts, nnn_file_t **out,
                              nnn_diags_t *diags)
{
	nnn_file_t *f = calloc(1, sizeof *f);
	*out = NULL;
	if (!f) {
		free(copy);
		return nnn_diags_add(diags, NNN_E_NOMEM, NNN_NO_OFFSET, "", "cannot allocate a file");
	}
	f->fd = -1;
	f->size = len;
	if (opts) {
		nnn_decode_opts_t o = *opts;
		o.flags = (o.flags | NNN_DECODE_COPY) & ~(unsigned)NNN_DECODE_KEEP_GOING;
		nnn_status_t st = nnn_model_adopt(copy, len, &o, &f->model, diags);
		if (st != NNN_OK) {
			free(f);
			return st;
		}
		f->copy = nnn_model_copy(f->model);
	} else {
		f->copy = f->own = copy;
	}
	*out = f;
	return NNN_OK;
}

const nnn_model_t *nnn_file_model(const nnn_file_t *f)
{
	return f->model;
}

const unsigned char *nnn_file_bytes(const nnn_file_t *f, size_t *size)
{
	*size = f->size;
	return f->data ? f->data : f->copy;
}

void nnn_file_close(nnn_file_t *f)
{
	if (!f)
		return;
	nnn_model_free(f->model);
	free(f->own);
	nnn_unmap(f->data, f->size);
	if (f->fd >= 0)
		close(f->fd);
	free(f);
}

nnn_status_t nnn_map(const char *path, const unsigned char **data, size_t *size, nnn_diags_t *diags)
{
	nnn_file_t *f;
	*data = NULL;
	*size = 0;
	NNN_TRY(nnn_file_map(path, &f, diags));
	*data = f->data;
	*size = f->size;
	close(f->fd);
	free(f);
	return NNN_OK;
}

void nnn_unmap(const unsigned char *data, size_t size)
{
	if (data && size)
		munmap((void *)data, size);
}
