/* discover.c: finding plugins without letting one take the host down.
 *
 * Every candidate is first loaded by the plugin scanner (nnn-plugin-scan),
 * a child process spawned with posix_spawn, never fork (the caller may have
 * threads). The scanner reports on a pipe of its own (a plugin may print on
 * stdout) what the loader found: stage, status, message, name, version and
 * the IDs declared, then an end marker, written only after the entry point
 * returned. Anything else (a signal, an exit of any status without the
 * marker, no end within the timeout) is a failure named with the file and
 * the stage the child had reached. Verdicts are cached per user, keyed by
 * the file's identity and the host's, as GStreamer's registry does.
 *
 * With every verdict in hand, one rule decides who provides each ID
 * (resolve()), and only candidates that passed are loaded in process.
 */
#define _GNU_SOURCE /* secure_getenv, dladdr1, sigabbrev_np, pipe2 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <nnn/context.h>

#include "loader.h"

#ifndef NNN_VERSION
#define NNN_VERSION "unknown"
#endif

const char *nnn_version(void)
{
	return NNN_VERSION;
}

extern char **environ;

#define SCANNER_NAME "nnn-plugin-scan"
#define DEFAULT_TIMEOUT_MS 5000
#define CACHE_MAGIC "nnnkit plugin scan cache 1\n"
#define CACHE_MAX_BYTES (8u << 20)
#define CACHE_MAX_ENTRIES 512
#define REPLY_MAX (256u << 10)
#define MSG 1024

/* ---- a growable byte buffer ---- */

typedef struct buf {
	char *p;
	size_t n, cap;
	bool failed;
} buf_t;

static void put(buf_t *b, const void *s, size_t n)
{
	if (b->failed)
		return;
	if (b->n + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 1024;
		while (cap < b->n + n + 1)
			cap *= 2;
		char *p = realloc(b->p, cap);
		if (!p) {
			b->failed = true;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->n, s, n);
	b->n += n;
	b->p[b->n] = '\0';
}

static void putf(buf_t *b, const char *fmt, ...) NNN_PRINTF(2, 3);

static void putf(buf_t *b, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	if (n > 0)
		put(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

/* "KEY LEN:BYTES\n": strings may hold anything, newlines included. */
static void put_str(buf_t *b, const char *key, const char *s)
{
	if (!s)
		return;
	putf(b, "%s %zu:", key, strlen(s));
	put(b, s, strlen(s));
	put(b, "\n", 1);
}

/* ---- verdicts: written by the scanner, read back from it and the cache ---- */

/* A report whose strings this module owns. */
typedef struct verdict {
	nnn_plugin_report_t r;
	char *stage; /* r.stage points here */
} verdict_t;

static void verdict_free(verdict_t *v)
{
	free((char *)v->r.path);
	free((char *)v->r.name);
	free((char *)v->r.version);
	free((char *)v->r.message);
	free(v->stage);
	memset(v, 0, sizeof *v);
}

static void put_record(buf_t *b, const nnn_plugin_report_t *r)
{
	put_str(b, "stage", r->stage);
	putf(b, "status %d\n", (int)r->status);
	put_str(b, "name", r->name);
	put_str(b, "version", r->version);
	put_str(b, "message", r->message ? r->message : "");
	put(b, "layers", 6);
	for (int i = 0; i < r->nlayers; i++)
		putf(b, " %d", r->layer_ids[i]);
	put(b, "\nactivations", 12);
	for (int i = 0; i < r->nactivations; i++)
		putf(b, " %d", r->activation_ids[i]);
	put(b, "\nend\n", 5);
}

/* A reader over bytes that may be cut anywhere. */
typedef struct rd {
	const char *p, *e;
} rd_t;

/* The next line's key (up to a space or newline) into key; *val, *len get
 * its value: "LEN:BYTES" strings by their length, anything else to the
 * end of the line. False at the end or on anything malformed. */
static bool next_field(rd_t *r, char *key, size_t ksize, const char **val, size_t *len)
{
	size_t k = 0;
	while (r->p < r->e && *r->p != ' ' && *r->p != '\n' && k + 1 < ksize)
		key[k++] = *r->p++;
	key[k] = '\0';
	if (r->p >= r->e || k == 0)
		return false;
	if (*r->p == '\n') {
		r->p++;
		*val = r->p - 1;
		*len = 0;
		return true;
	}
	r->p++;
	const char *q = r->p;
	size_t n = 0;
	while (q < r->e && *q >= '0' && *q <= '9' && n < REPLY_MAX)
		n = n * 10 + (size_t)(*q++ - '0');
	if (q > r->p && q < r->e && *q == ':') {
		q++;
		if ((size_t)(r->e - q) < n + 1 || q[n] != '\n')
			return false;
		*val = q;
		*len = n;
		r->p = q + n + 1;
		return true;
	}
	const char *nl = memchr(r->p, '\n', (size_t)(r->e - r->p));
	if (!nl)
		return false;
	*val = r->p;
	*len = (size_t)(nl - r->p);
	r->p = nl + 1;
	return true;
}

static char *dupn(const char *s, size_t n)
{
	char *d = malloc(n + 1);
	if (d) {
		memcpy(d, s, n);
		d[n] = '\0';
	}
	return d;
}

static int read_ids(const char *s, size_t n, uint8_t *ids)
{
	char tmp[2048];
	int k = 0;
	if (n >= sizeof tmp)
		return -1;
	memcpy(tmp, s, n);
	tmp[n] = '\0';
	for (char *p = tmp, *end; *p && k < 256; p = end) {
		long v = strtol(p, &end, 10);
		if (end == p)
			break;
		if (v < 0 || v > 255)
			return -1;
		ids[k++] = (uint8_t)v;
	}
	return k;
}

/* Reads one record up to its "end": true when it was complete. Fields it
 * does not know are skipped (a later version may add some). */
static bool read_record(rd_t *r, verdict_t *v)
{
	char key[32];
	const char *val;
	size_t len;
	int n;
	while (next_field(r, key, sizeof key, &val, &len)) {
		if (!strcmp(key, "end"))
			return v->stage != NULL && v->r.message != NULL;
		if (!strcmp(key, "stage") && !v->stage)
			v->r.stage = v->stage = dupn(val, len);
		else if (!strcmp(key, "status"))
			v->r.status = (nnn_status_t)strtol(val, NULL, 10);
		else if (!strcmp(key, "name") && !v->r.name)
			v->r.name = dupn(val, len);
		else if (!strcmp(key, "version") && !v->r.version)
			v->r.version = dupn(val, len);
		else if (!strcmp(key, "message") && !v->r.message)
			v->r.message = dupn(val, len);
		else if (!strcmp(key, "layers") && (n = read_ids(val, len, v->r.layer_ids)) >= 0)
			v->r.nlayers = n;
		else if (!strcmp(key, "activations") && (n = read_ids(val, len, v->r.activation_ids)) >= 0)
			v->r.nactivations = n;
	}
	return false;
}

/* ---- the scanner (the child) ---- */

static void write_all_fd(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t k = write(fd, p, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return;
		p += k;
		n -= (size_t)k;
	}
}

static void scanner_stage(void *arg, const char *stage)
{
	char line[64];
	int n = snprintf(line, sizeof line, "at %zu:%s\n", strlen(stage), stage);
	/* write(2), never stdio: a buffer flushed by an exit() inside the
	 * plugin must not look like progress. */
	write_all_fd(*(int *)arg, line, (size_t)n);
}

static void host_line(buf_t *b)
{
	putf(b, "host %s %d.%d %08x\n", NNN_VERSION, NNN_ABI_MAJOR, NNN_ABI_MINOR, (unsigned)NNN_SCHEMA_LAYOUT);
}

int nnn_plugin_scanner_main(int argc, char **argv)
{
	/* Dies with the parent; the parent may already be gone (then we were
	 * reparented and getppid no longer names it). */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (argc != 6 || strcmp(argv[1], "--fd") || strcmp(argv[3], "--parent")) {
		fprintf(stderr, "usage: " SCANNER_NAME " --fd FD --parent PID FILE\n"
		                "nnnkit runs it to load one plugin candidate in a process of its own; see nnnkit plugins.\n");
		return 2;
	}
	int fd = atoi(argv[2]);
	if ((pid_t)atol(argv[4]) != getppid())
		_exit(125);
	buf_t b = { 0 };
	host_line(&b);
	write_all_fd(fd, b.p, b.n);
	b.n = 0;
	nnn_ctx_t *ctx;
	nnn_diags_t d;
	nnn_plugin_report_t r;
	nnn_diags_init(&d);
	if (nnn_ctx_new(&ctx, &d) != NNN_OK)
		_exit(124);
	nnn_load_ex_t x = { .stage = scanner_stage, .arg = &fd };
	(void)nnn_plugin_load_ex(ctx, argv[5], &x, &d);
	if (nnn_ctx_report(ctx, 0, &r) < 1)
		_exit(124);
	put_record(&b, &r);
	if (b.failed)
		_exit(124);
	write_all_fd(fd, b.p, b.n);
	/* No unloading: the plugin's destructors are not our business. */
	_exit(0);
}

/* ---- the parent: running the scanner ---- */

/* The scanner next to this library (or the executable it is linked into):
 * DIR/nnn-plugin-scan (the build tree), DIR/../lib/nnnkit/ (PREFIX/bin),
 * DIR/nnnkit/ (PREFIX/lib). Never PATH, never the current folder. */
static bool find_scanner(char *out, size_t size)
{
	static const char *const rel[] = { "/" SCANNER_NAME, "/../lib/nnnkit/" SCANNER_NAME, "/nnnkit/" SCANNER_NAME };
	char dir[PATH_MAX] = "";
	Dl_info info;
	struct link_map *map = NULL;
	void *self = (void *)(uintptr_t)find_scanner;
	if (dladdr1(self, &info, (void **)&map, RTLD_DL_LINKMAP) && map && map->l_name && map->l_name[0] == '/')
		snprintf(dir, sizeof dir, "%s", map->l_name);
	else if (readlink("/proc/self/exe", dir, sizeof dir - 1) < 0)
		return false; /* the main program: its l_name is "" */
	char *slash = strrchr(dir, '/');
	if (!slash)
		return false;
	*slash = '\0';
	for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
		snprintf(out, size, "%s%s", dir, rel[i]);
		if (access(out, X_OK) == 0)
			return true;
	}
	snprintf(out, size, "%s/%s", dir, SCANNER_NAME);
	return false;
}

static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static const char *sig_text(int sig, char *buf, size_t size)
{
	const char *abbrev = sigabbrev_np(sig);
	if (abbrev)
		snprintf(buf, size, "SIG%s (%s)", abbrev, strsignal(sig));
	else
		snprintf(buf, size, "signal %d", sig);
	return buf;
}

static void set_failure(verdict_t *v, const char *stage, const char *fmt, ...) NNN_PRINTF(3, 4);

static void set_failure(verdict_t *v, const char *stage, const char *fmt, ...)
{
	char msg[MSG];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	verdict_free(v);
	v->r.stage = v->stage = strdup(stage);
	v->r.status = NNN_E_PLUGIN;
	v->r.message = strdup(msg);
}

#define NOT_LOADED                                                                                                    \
	": nothing of it was loaded, and the rest goes on without it; report it to the plugin's authors, and take it "   \
	"off the search path until it is fixed"

/* Runs the scanner on `path`; the verdict in *v. */
static void scan(const char *scanner, const char *path, int timeout_ms, verdict_t *v)
{
	int p[2];
	char fdtext[16], pidtext[24], sig[96];
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none, dflt;
	pid_t pid;
	buf_t b = { 0 };

	if (pipe2(p, O_CLOEXEC) != 0) {
		set_failure(v, "scan", "cannot make a pipe for the plugin scanner: %s", strerror(errno));
		return;
	}
	/* The child's end as fd 3 there; dup2 onto itself would keep O_CLOEXEC. */
	if (p[1] == 3) {
		int w = fcntl(p[1], F_DUPFD_CLOEXEC, 4);
		close(p[1]);
		p[1] = w;
	}
	snprintf(fdtext, sizeof fdtext, "3");
	snprintf(pidtext, sizeof pidtext, "%ld", (long)getpid());
	char *argv[] = { (char *)SCANNER_NAME, (char *)"--fd", fdtext, (char *)"--parent", pidtext, (char *)path, NULL };
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	/* What the plugin prints goes nowhere: it must not mix into our output. */
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, p[1], 3);
	posix_spawnattr_init(&at);
	sigemptyset(&none);
	sigemptyset(&dflt);
	sigaddset(&dflt, SIGPIPE);
	sigaddset(&dflt, SIGCHLD);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setsigdefault(&at, &dflt);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	int e = posix_spawn(&pid, scanner, &fa, &at, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	close(p[1]);
	if (e != 0) {
		close(p[0]);
		set_failure(v, "scan",
		            "cannot run the plugin scanner %s: %s: nnnkit's installation is incomplete (reinstall it); "
		            "no plugin is loaded without its scan",
		            scanner, strerror(e));
		return;
	}

	/* Read until the child closes the pipe or time is up. */
	double deadline = now_ms() + timeout_ms;
	bool timed_out = false;
	for (;;) {
		double left = deadline - now_ms();
		if (left <= 0) {
			timed_out = true;
			break;
		}
		struct pollfd pf = { .fd = p[0], .events = POLLIN };
		int k = poll(&pf, 1, (int)left + 1);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			continue; /* the deadline check ends it */
		char chunk[4096];
		ssize_t n = read(p[0], chunk, sizeof chunk);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (b.n < REPLY_MAX)
			put(&b, chunk, (size_t)n);
	}
	close(p[0]);
	/* The pipe may close before the child ends (a plugin can close fds):
	 * the exit is waited for within the same deadline. */
	int status = 0;
	pid_t w = 0;
	while (!timed_out && (w = waitpid(pid, &status, WNOHANG)) == 0) {
		if (now_ms() >= deadline) {
			timed_out = true;
			break;
		}
		struct timespec ts = { 0, 2000000 };
		nanosleep(&ts, NULL);
	}
	if (timed_out) {
		kill(pid, SIGKILL);
		while ((w = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
			;
	}

	/* What the child said: its host line, how far it got, its record. */
	rd_t r = { b.p ? b.p : "", (b.p ? b.p : "") + b.n };
	char key[32], stage[32] = "open", host[128];
	const char *val;
	size_t len;
	bool complete = false, host_ok = false;
	buf_t want = { 0 };
	host_line(&want);
	snprintf(host, sizeof host, "%s", want.p ? want.p : "");
	free(want.p);
	if (b.n >= strlen(host) && !memcmp(b.p, host, strlen(host))) {
		host_ok = true;
		r.p += strlen(host);
	}
	while (host_ok && r.p < r.e) {
		const char *mark = r.p;
		if (!next_field(&r, key, sizeof key, &val, &len))
			break;
		if (!strcmp(key, "at")) {
			snprintf(stage, sizeof stage, "%.*s", (int)(len < 31 ? len : 31), val);
			continue;
		}
		r.p = mark;
		complete = read_record(&r, v);
		break;
	}
	free(b.p);
	double secs = timeout_ms / 1000.0;
	const char *during = !strcmp(stage, "entry point") ? "during its entry point" : "while it was opened (in "
	                                                                              "dlopen, running its constructors)";
	if (timed_out)
		set_failure(v, stage, "did not finish loading in %g s (%s; killed, and remembered until the file "
		            "changes; NNN_PLUGIN_SCAN_TIMEOUT_MS sets the limit in milliseconds): it hangs or spins%s",
		            secs, during, NOT_LOADED);
	else if (w == pid && WIFSIGNALED(status))
		set_failure(v, stage, "crashed with %s %s%s", sig_text(WTERMSIG(status), sig, sizeof sig), during, NOT_LOADED);
	else if (w == pid && WIFEXITED(status) && !host_ok && b.n == 0 && WEXITSTATUS(status) == 125)
		set_failure(v, "scan", "the plugin scanner %s stopped: its parent was not this process", scanner);
	else if (!host_ok && w == pid && WIFEXITED(status))
		set_failure(v, "scan", "the plugin scanner %s is not this nnnkit's (it said nothing this nnnkit (%s %d.%d, "
		            "layout %08x) understands, exit status %d): reinstall nnnkit",
		            scanner, NNN_VERSION, NNN_ABI_MAJOR, NNN_ABI_MINOR, (unsigned)NNN_SCHEMA_LAYOUT,
		            WEXITSTATUS(status));
	else if (!complete && w == pid && WIFEXITED(status))
		set_failure(v, stage, "exited with status %d %s (a plugin must return from its entry point, never end "
		            "the process)%s", WEXITSTATUS(status), during, NOT_LOADED);
	else if (w == pid && WIFEXITED(status) && WEXITSTATUS(status) != 0)
		set_failure(v, stage, "exited with status %d after its entry point returned%s", WEXITSTATUS(status),
		            NOT_LOADED);
	else if (!complete)
		set_failure(v, "scan", "the plugin scanner ended without a report (%s)", strerror(errno));
}

/* ---- the cache ---- */

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
	putf(b, "entry %s %llu %llu %lld %lld %lld ", host, (unsigned long long)i.dev, (unsigned long long)i.ino,
	     (long long)i.size, i.mtime_ns, i.ctime_ns);
	putf(b, "%zu:", strlen(path));
	put(b, path, strlen(path));
	put(b, "\n", 1);
}

typedef struct cache {
	char path[PATH_MAX]; /* "" when there is none */
	char host[160];
	char *old;          /* the file's bytes, or NULL */
	size_t nold;
	buf_t fresh;        /* entries scanned this time */
	int nfresh;
} cache_t;

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

/* Reads the cache when it is ours and nobody else can write it: else it
 * is ignored (never an error; scanning every time is the fallback). */
static void cache_open(cache_t *c, const nnn_discover_opts_t *o, const char *scanner)
{
	struct stat st;
	buf_t h = { 0 };
	memset(c, 0, sizeof *c);
	if (stat(scanner, &st) == 0) {
		ident_t i = ident_of(&st);
		putf(&h, "%s-%d.%d-%08x-%llx.%llx.%lld.%lld", NNN_VERSION, NNN_ABI_MAJOR, NNN_ABI_MINOR,
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

/* The cached verdict for the file, when there is one. */
static bool cache_find(const cache_t *c, const char *path, const struct stat *st, verdict_t *v)
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
			found = read_record(&r, v);
			if (!found)
				verdict_free(v);
			break;
		}
		p = strstr(p, "\nend\n");
		p = p ? p + 5 : NULL;
	}
	free(k.p);
	return found;
}

static void cache_add(cache_t *c, const char *path, const struct stat *st, const verdict_t *v)
{
	if (!c->path[0])
		return;
	if (c->fresh.n == 0)
		put(&c->fresh, "\n", 1); /* so that every key line follows a newline */
	key_line(&c->fresh, c->host, path, st);
	put_record(&c->fresh, &v->r);
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

/* Writes this run's entries and the old ones of other files or hosts (up
 * to CACHE_MAX_ENTRIES), atomically: a temporary file renamed over it. A
 * cache that cannot be written is no error. */
static void cache_close(cache_t *c)
{
	buf_t out = { 0 };
	if (c->nfresh == 0 || !c->path[0])
		goto done;
	put(&out, CACHE_MAGIC, strlen(CACHE_MAGIC));
	put(&out, c->fresh.p + 1, c->fresh.n - 1); /* past its leading newline */
	int kept = c->nfresh;
	for (const char *p = c->old ? c->old + strlen(CACHE_MAGIC) : NULL; p && *p && kept < CACHE_MAX_ENTRIES;) {
		const char *end = strstr(p, "\nend\n");
		const char *nl = strchr(p, '\n');
		if (!end || !nl || strncmp(p, "entry ", 6))
			break;
		/* Dropped when this run wrote one for the same host and path (the
		 * file changed, or its verdict did). */
		if (!entry_in(c, p, (size_t)(nl - p))) {
			put(&out, p, (size_t)(end + 5 - p));
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

/* ---- candidates and the one rule ---- */

typedef struct cand {
	char *path;       /* canonical, or as given when the precheck failed */
	int rank;         /* 0: the files named; then each search folder; then the installed folder */
	char *source;     /* "--plugin files", "NNN_PLUGIN_PATH folder X", "the installed folder X" */
	struct stat st;
	bool statted;     /* st is valid: the precheck passed */
	int first;        /* index of the same file seen earlier, or -1 */
	bool pass;        /* its scan passed */
	verdict_t v;
	bool skip_l[256], skip_a[256];
	char conflict[MSG]; /* the IDs it lost to a candidate of the same rank */
} cand_t;

typedef struct set {
	cand_t *v;
	size_t n, cap;
	bool oom;
} set_t;

static cand_t *add_cand(set_t *s, const char *path, int rank, const char *source)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 16;
		cand_t *v = realloc(s->v, cap * sizeof *v);
		if (!v) {
			s->oom = true;
			return NULL;
		}
		s->v = v;
		s->cap = cap;
	}
	cand_t *c = &s->v[s->n];
	memset(c, 0, sizeof *c);
	c->path = strdup(path);
	c->source = strdup(source);
	if (!c->path || !c->source) {
		free(c->path);
		free(c->source);
		s->oom = true;
		return NULL;
	}
	c->rank = rank;
	c->first = -1;
	s->n++;
	return c;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every *.so of a folder (not hidden), in name order: the order only
 * decides how reports are listed, never who provides an ID. */
static void add_dir(set_t *s, const char *dir, int rank, const char *source)
{
	DIR *dp = opendir(dir);
	struct dirent *e;
	char **names = NULL;
	size_t n = 0, cap = 0;
	if (!dp)
		return; /* a folder that does not exist holds no plugins */
	while ((e = readdir(dp)) != NULL) {
		size_t len = strlen(e->d_name);
		if (len < 4 || strcmp(e->d_name + len - 3, ".so") || e->d_name[0] == '.')
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 16;
			char **v = realloc(names, cap * sizeof *v);
			if (!v)
				break;
			names = v;
		}
		if (!(names[n] = malloc(strlen(dir) + len + 2)))
			break;
		sprintf(names[n], "%s/%s", dir, e->d_name);
		n++;
	}
	closedir(dp);
	if (n)
		qsort(names, n, sizeof *names, by_name);
	for (size_t i = 0; i < n; i++) {
		add_cand(s, names[i], rank, source);
		free(names[i]);
	}
	free(names);
}

static const char *kind_name(bool layer, int id)
{
	const char *n = layer ? nnn_layer_id_name(id) : nnn_activation_id_name(id);
	return n ? n : "not in the schema";
}

/* Who provides each ID, over the whole set: of the candidates that passed
 * their scan (each file once), the one of the highest precedence (lowest
 * rank) that claims it. A lower one's claim is shadowed: it loads without
 * that ID. Two or more of the same rank claiming it conflict: none of them,
 * nor any lower one, gets it. Name order never matters. */
static void resolve(set_t *s, bool layer)
{
	for (int id = 0; id < 256; id++) {
		int best = INT_MAX, nbest = 0;
		for (size_t i = 0; i < s->n; i++) {
			cand_t *c = &s->v[i];
			const nnn_plugin_report_t *r = &c->v.r;
			bool claims = false;
			if (!c->pass || c->first >= 0)
				continue;
			for (int k = 0; k < (layer ? r->nlayers : r->nactivations); k++)
				claims |= (layer ? r->layer_ids[k] : r->activation_ids[k]) == id;
			if (!claims)
				continue;
			if (c->rank < best)
				best = c->rank, nbest = 0;
			if (c->rank == best)
				nbest++;
			(layer ? c->skip_l : c->skip_a)[id] = true; /* undone below for the one winner */
		}
		if (nbest == 0)
			continue;
		for (size_t i = 0; i < s->n; i++) {
			cand_t *c = &s->v[i];
			if (!c->pass || c->first >= 0 || c->rank != best || !(layer ? c->skip_l : c->skip_a)[id])
				continue;
			if (nbest == 1) {
				(layer ? c->skip_l : c->skip_a)[id] = false;
				continue;
			}
			/* Name every other claimant of the same rank. */
			size_t k = strlen(c->conflict);
			for (size_t j = 0; j < s->n && k < sizeof c->conflict; j++) {
				const cand_t *o = &s->v[j];
				if (j == i || !o->pass || o->first >= 0 || o->rank != best || !(layer ? o->skip_l : o->skip_a)[id])
					continue;
				int w = snprintf(c->conflict + k, sizeof c->conflict - k, "%s%s ID %d (%s) is also claimed by %s",
				                 k ? "; " : "", layer ? "layer" : "activation", id, kind_name(layer, id), o->path);
				k += w > 0 ? (size_t)w : 0;
			}
		}
	}
}

static int timeout_of(const nnn_discover_opts_t *o)
{
	const char *env = secure_getenv("NNN_PLUGIN_SCAN_TIMEOUT_MS");
	long t;
	char *end;
	if (o->timeout_ms > 0)
		return o->timeout_ms;
	if (env && (t = strtol(env, &end, 10)) > 0 && !*end && t <= 24L * 3600 * 1000)
		return (int)t;
	return DEFAULT_TIMEOUT_MS;
}

nnn_status_t nnn_plugin_discover(nnn_ctx_t *ctx, const nnn_discover_opts_t *o, nnn_diags_t *diags)
{
	static const nnn_discover_opts_t defaults = { .size = sizeof defaults, .search = true };
	set_t s = { 0 };
	nnn_status_t first = NNN_OK;
	char scanner[PATH_MAX], source[PATH_MAX + 64];
	int rank = 0;

	if (!o)
		o = &defaults;
	/* 1. Every candidate, with its precedence. */
	for (int i = 0; i < o->nfiles; i++)
		add_cand(&s, o->files[i], rank, "--plugin files");
	rank++;
	const char *env = o->search ? secure_getenv("NNN_PLUGIN_PATH") : NULL;
	if (env && *env) {
		char *copy = strdup(env), *save = NULL;
		for (char *dir = copy ? strtok_r(copy, ":", &save) : NULL; dir; dir = strtok_r(NULL, ":", &save)) {
			/* Relative entries would search the current folder: skipped. */
			if (dir[0] != '/')
				continue;
			snprintf(source, sizeof source, "NNN_PLUGIN_PATH folder %s", dir);
			add_dir(&s, dir, rank++, source);
		}
		if (!copy)
			s.oom = true;
		free(copy);
	}
	if (o->installed_dir && o->installed_dir[0] == '/') {
		snprintf(source, sizeof source, "the installed folder %s", o->installed_dir);
		add_dir(&s, o->installed_dir, rank, source);
	}
	if (s.oom)
		first = nnn_diags_add(diags, NNN_E_NOMEM, NNN_NO_OFFSET, "", "out of memory while listing plugins");

	/* 2. A verdict for each: the checks before opening, then the cache or a scan. */
	bool have_scanner = o->scanner ? snprintf(scanner, sizeof scanner, "%s", o->scanner) > 0
	                               : find_scanner(scanner, sizeof scanner);
	(void)have_scanner; /* a missing one fails in posix_spawn, with its path */
	cache_t cache;
	cache_open(&cache, o, scanner);
	int timeout = timeout_of(o);
	for (size_t i = 0; i < s.n; i++) {
		cand_t *c = &s.v[i];
		char real[PATH_MAX], why[MSG];
		if (nnn_plugin_precheck(c->path, real, &c->st, why, sizeof why) != NNN_OK) {
			set_failure(&c->v, "open", "%s", why);
			if (real[0]) {
				free(c->path);
				c->path = strdup(real);
			}
			continue;
		}
		free(c->path);
		c->path = strdup(real);
		c->statted = true;
		for (size_t j = 0; j < i && c->first < 0; j++)
			if (s.v[j].statted && s.v[j].first < 0 && s.v[j].st.st_ino == c->st.st_ino &&
			    s.v[j].st.st_dev == c->st.st_dev)
				c->first = (int)j;
		if (c->first >= 0)
			continue;
		if (!cache_find(&cache, c->path, &c->st, &c->v)) {
			scan(scanner, c->path, timeout, &c->v);
			/* A failure to open (a library it needs, the environment) may
			 * pass next time with nothing about the file changed. */
			if (strcmp(c->v.r.stage, "open") && strcmp(c->v.r.stage, "scan"))
				cache_add(&cache, c->path, &c->st, &c->v);
		}
		c->pass = c->v.r.status == NNN_OK && !strcmp(c->v.r.stage, "loaded");
	}
	cache_close(&cache);

	/* 3. Who provides what, over the whole set. */
	resolve(&s, true);
	resolve(&s, false);

	/* 4. Load what passed, in precedence order; report the rest. */
	for (size_t i = 0; i < s.n; i++) {
		cand_t *c = &s.v[i];
		nnn_status_t st;
		if (!c->path)
			continue;
		if (c->first >= 0) {
			nnn_plugin_report_t r = { .path = c->path, .stage = "already loaded", .message = "" };
			char msg[PATH_MAX + 64];
			snprintf(msg, sizeof msg, "same file as %s", s.v[c->first].path);
			r.message = msg;
			st = nnn_plugin_add_report(ctx, &r, diags);
		} else if (!c->pass) {
			nnn_plugin_report_t r = c->v.r;
			r.path = c->path;
			if (r.status == NNN_OK) /* a verdict of another kind: not loadable */
				r.status = NNN_E_PLUGIN;
			st = nnn_plugin_add_report(ctx, &r, diags);
		} else {
			nnn_load_ex_t x = { .skip_layers = c->skip_l, .skip_acts = c->skip_a, .expect = &c->st };
			st = nnn_plugin_load_ex(ctx, c->path, &x, diags);
		}
		if (first == NNN_OK)
			first = st;
		if (c->conflict[0]) {
			char msg[MSG + 512];
			snprintf(msg, sizeof msg, "%s, from the same source (%s): neither provides it; remove one of them%s",
			         c->conflict, c->source,
			         c->rank == 0 ? "" : ", or move one to a folder of its own earlier on NNN_PLUGIN_PATH");
			nnn_plugin_report_t r = { .path = c->path, .stage = "conflict", .status = NNN_E_PLUGIN, .message = msg };
			st = nnn_plugin_add_report(ctx, &r, diags);
			if (first == NNN_OK)
				first = st;
		}
	}
	for (size_t i = 0; i < s.n; i++) {
		verdict_free(&s.v[i].v);
		free(s.v[i].path);
		free(s.v[i].source);
	}
	free(s.v);
	return first;
}

nnn_status_t nnn_plugin_load_default(nnn_ctx_t *ctx, const char *installed_dir, nnn_diags_t *diags)
{
	nnn_discover_opts_t o = { .size = sizeof o, .search = true, .installed_dir = installed_dir };
	return nnn_plugin_discover(ctx, &o, diags);
}
