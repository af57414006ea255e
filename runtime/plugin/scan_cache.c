/* scan_cache.c: the plugin scan cache (scan_cache.h). Verdicts are
 * cached per user, keyed by the file's identity and the host's, as
 * GStreamer's registry does: a new nnnkit, or a file that changed, is
 * scanned anew. */
#define _GNU_SOURCE /* secure_getenv, mkostemp */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "scan_cache.h"

#ifndef NNN_VERSION
#define NNN_VERSION "unknown"
#endif

#define CACHE_MAGIC "nnnkit plugin scan cache 1\n"
#define CACHE_MAX_BYTES (8u << 20)
#define CACHE_MAX_ENTRIES 512

/* Where the file is and what it is: path, device, inode, size, times. */
typedef struct ident {
	dev_t dev;
	ino_t ino;
	off_t size;
	long long mtime_ns, ctime_ns;
} ident_t;

static ident_t ident_of(const struct stat *st)
{
	ident_t i = { st->st_dev, st->st_ino, st->st_size,
		      (long long)st->st_mtim.tv_sec * 1000000000LL + st->st_mtim.tv_nsec,
		      (long long)st->st_ctim.tv_sec * 1000000000LL + st->st_ctim.tv_nsec };
	return i;
}

/* The key line of an entry: the host (its version, ABI, schema layout and
 * the scanner's own identity, so a new nnnkit scans anew), then the file. */
static void key_line(buf_t *b, const char *host, const char *path, const struct stat *st)
{
	ident_t i = ident_of(st);
	nnn_buf_putf(b, "entry %s %llu %llu %lld %lld %lld ", host, (unsigned long long)i.dev, (unsigned long long)i.ino,
	     (long long)i.size, i.mtime_ns, i.ctime_ns);
	nnn_buf_putf(b, "%zu:", strlen(path));
	nnn_buf_put(b, path, strlen(path));
	nnn_buf_put(b, "\n", 1);
}

static bool cache_path(const nnn_discover_opts_t *o, char *out, size_t size)
{
	const char *env;
	if (o->cache) {
		snprintf(out, size, "%s", o->cache);
		return o->cache[0] != '\0';
	}
	if ((env = secure_getenv("NNN_PLUGIN_CACHE")) != NULL) {
		snprintf(out, size, "%s", env);
		return env[0] != '\0';
	}
	if ((env = secure_getenv("XDG_CACHE_HOME")) != NULL && env[0] == '/')
		snprintf(out, size, "%s/nnnkit/plugin-scan.cache", env);
	else if ((env = secure_getenv("HOME")) != NULL && env[0] == '/')
		snprintf(out, size, "%s/.cache/nnnkit/plugin-scan.cache", env);
	else
		return false;
	return true;
}

void nnn_cache_open(cache_t *c, const nnn_discover_opts_t *o, const char *scanner)
{
	struct stat st;
	buf_t h = { 0 };
	memset(c, 0, sizeof *c);
	if (stat(scanner, &st) == 0) {
		ident_t i = ident_of(&st);
		nnn_buf_putf(&h, "%s-%d.%d-%08x-%llx.%llx.%lld.%lld", NNN_VERSION, NNN_ABI_MAJOR, NNN_ABI_MINOR,
		     (unsigned)NNN_SCHEMA_LAYOUT, (unsigned long long)i.dev, (unsigned long long)i.ino, (long long)i.size,
		     i.mtime_ns);
	}
	if (!h.p || h.failed || strchr(h.p, ' ') || !cache_path(o, c->path, sizeof c->path)) {
		c->path[0] = '\0';
		free(h.p);
		return;
	}
	snprintf(c->host, sizeof c->host, "%s", h.p);
	free(h.p);
	int fd = open(c->path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
	    !(st.st_mode & (S_IWGRP | S_IWOTH)) && (size_t)st.st_size <= CACHE_MAX_BYTES && st.st_size > 0) {
		c->old = malloc((size_t)st.st_size + 1);
		size_t got = 0;
		while (c->old && got < (size_t)st.st_size) {
			ssize_t n = read(fd, c->old + got, (size_t)st.st_size - got);
			if (n <= 0)
				break;
			got += (size_t)n;
		}
		if (c->old && got == (size_t)st.st_size && got >= strlen(CACHE_MAGIC) &&
		    !memcmp(c->old, CACHE_MAGIC, strlen(CACHE_MAGIC))) {
			c->old[got] = '\0';
			c->nold = got;
		} else {
			free(c->old);
			c->old = NULL;
		}
	}
	close(fd);
}

bool nnn_cache_find(const cache_t *c, const char *path, const struct stat *st, verdict_t *v)
{
	buf_t k = { 0 };
	bool found = false;
	if (!c->old)
		return false;
	key_line(&k, c->host, path, st);
	for (const char *p = c->old + strlen(CACHE_MAGIC); !found && !k.failed && p && *p;) {
		if (!strncmp(p, k.p, k.n)) {
			rd_t r = { p + k.n, c->old + c->nold };
			memset(v, 0, sizeof *v);
			found = nnn_verdict_read(&r, v);
			if (!found)
				nnn_verdict_free(v);
			break;
		}
		p = strstr(p, "\nend\n");
		p = p ? p + 5 : NULL;
	}
	free(k.p);
	return found;
}

void nnn_cache_add(cache_t *c, const char *path, const struct stat *st, const verdict_t *v)
{
	if (!c->path[0])
		return;
	if (c->fresh.n == 0)
		nnn_buf_put(&c->fresh, "\n", 1); /* so that every key line follows a newline */
	key_line(&c->fresh, c->host, path, st);
	nnn_verdict_put(&c->fresh, &v->r);
	c->nfresh++;
}

/* The "HOST" and "LEN:PATH" of a key line (first and last fields). */
static bool key_parts(const char *line, size_t n, const char **host, size_t *nhost, const char **path, size_t *npath)
{
	const char *e = line + n, *sp = memchr(line + 6, ' ', n > 6 ? n - 6 : 0), *colon = NULL;
	if (n <= 6 || !sp)
		return false;
	*host = line + 6;
	*nhost = (size_t)(sp - *host);
	for (int f = 0; f < 5 && sp; f++) /* dev ino size mtime ctime */
		sp = memchr(sp + 1, ' ', (size_t)(e - sp - 1));
	if (!sp || !(colon = memchr(sp, ':', (size_t)(e - sp))))
		return false;
	*path = colon + 1;
	*npath = (size_t)(e - *path);
	return true;
}

/* Whether this run wrote an entry with the same host and path as `line`. */
static bool entry_in(const cache_t *c, const char *line, size_t n)
{
	const char *h, *p, *fh, *fp;
	size_t nh, np, nfh, nfp;
	if (!key_parts(line, n, &h, &nh, &p, &np))
		return true; /* malformed: dropped */
	for (const char *q = c->fresh.p; q && (q = strstr(q, "\nentry ")) != NULL;) {
		q++;
		const char *qn = strchr(q, '\n');
		if (qn && key_parts(q, (size_t)(qn - q), &fh, &nfh, &fp, &nfp) && nfh == nh && !memcmp(fh, h, nh) &&
		    nfp == np && !memcmp(fp, p, np))
			return true;
	}
	return false;
}

void nnn_cache_close(cache_t *c)
{
	buf_t out = { 0 };
	if (c->nfresh == 0 || !c->path[0])
		goto done;
	nnn_buf_put(&out, CACHE_MAGIC, strlen(CACHE_MAGIC));
	nnn_buf_put(&out, c->fresh.p + 1, c->fresh.n - 1); /* past its leading newline */
	int kept = c->nfresh;
	for (const char *p = c->old ? c->old + strlen(CACHE_MAGIC) : NULL; p && *p && kept < CACHE_MAX_ENTRIES;) {
		const char *end = strstr(p, "\nend\n");
		const char *nl = strchr(p, '\n');
		if (!end || !nl || strncmp(p, "entry ", 6))
			break;
		/* Dropped when this run wrote one for the same host and path (the
		 * file changed, or its verdict did). */
		if (!entry_in(c, p, (size_t)(nl - p))) {
			nnn_buf_put(&out, p, (size_t)(end + 5 - p));
			kept++;
		}
		p = end + 5;
	}
	if (out.failed)
		goto done;
	char dir[PATH_MAX], tmp[PATH_MAX + 16];
	snprintf(dir, sizeof dir, "%s", c->path);
	char *slash = strrchr(dir, '/');
	if (!slash)
		goto done;
	*slash = '\0';
	/* The default folder may not exist yet: made private. */
	if (dir[0] && access(dir, F_OK) != 0) {
		char *q = dir + 1;
		while ((q = strchr(q, '/')) != NULL) {
			*q = '\0';
			mkdir(dir, 0700);
			*q++ = '/';
		}
		mkdir(dir, 0700);
	}
	snprintf(tmp, sizeof tmp, "%s.XXXXXX", c->path);
	int fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		goto done;
	size_t off = 0;
	while (off < out.n) {
		ssize_t n = write(fd, out.p + off, out.n - off);
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	if (close(fd) != 0 || off != out.n || rename(tmp, c->path) != 0)
		unlink(tmp);
done:
	free(out.p);
	free(c->fresh.p);
	free(c->old);
}
