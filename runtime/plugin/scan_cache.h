/* scan_cache.h (internal): the plugin scan cache, a file of verdicts
 * (scan_pipe.h records) keyed by the host and the file's identity, so a
 * plugin that passed or failed is not scanned again until the file or
 * nnnkit changes. A cache that cannot be read or written is never an
 * error: scanning every time is the fallback. */
#ifndef NNN_SCAN_CACHE_H
#define NNN_SCAN_CACHE_H

#include <limits.h>
#include <sys/stat.h>

#include "scan_pipe.h"

typedef struct cache {
	char path[PATH_MAX]; /* "" when there is none */
	char host[160];
	char *old;          /* the file's bytes, or NULL */
	size_t nold;
	buf_t fresh;        /* entries scanned this time */
	int nfresh;
} cache_t;

/* Reads the cache (o->cache, NNN_PLUGIN_CACHE, else under XDG_CACHE_HOME
 * or HOME) when it is ours and nobody else can write it: else it is
 * ignored. The host key includes the scanner's identity. */
void nnn_cache_open(cache_t *c, const nnn_discover_opts_t *o, const char *scanner);
/* The cached verdict for the file, when there is one (into v, owned). */
bool nnn_cache_find(const cache_t *c, const char *path, const struct stat *st, verdict_t *v);
/* Adds this run's verdict for the file. */
void nnn_cache_add(cache_t *c, const char *path, const struct stat *st, const verdict_t *v);
/* Writes this run's entries and the old ones of other files or hosts (up
 * to a bound), atomically: a temporary file renamed over it; frees c. */
void nnn_cache_close(cache_t *c);

#endif
