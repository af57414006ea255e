/* scan_run.c: running the plugin scanner on one candidate, in a child
 * process spawned with posix_spawn, never fork (the caller may have
 * threads), and judging how it ended: a report with its end marker, or a
 * signal, an exit without one, or no end within the timeout, each a
 * failure named with the file and the stage the child had reached. */
#define _GNU_SOURCE /* dladdr1, sigabbrev_np, pipe2 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "scan_run.h"

#ifndef NNN_VERSION
#define NNN_VERSION "unknown"
#endif

extern char **environ;

bool nnn_scan_find_scanner(char *out, size_t size)
{
	static const char *const rel[] = { "/" SCANNER_NAME, "/../lib/nnnkit/" SCANNER_NAME, "/nnnkit/" SCANNER_NAME };
	char dir[PATH_MAX] = "";
	Dl_info info;
	struct link_map *map = NULL;
	void *self = (void *)(uintptr_t)nnn_scan_find_scanner;
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

void nnn_scan_fail(verdict_t *v, const char *stage, const char *fmt, ...)
{
	char msg[SCAN_MSG];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	nnn_verdict_free(v);
	v->r.stage = v->stage = strdup(stage);
	v->r.status = NNN_E_PLUGIN;
	v->r.message = strdup(msg);
}

#define NOT_LOADED                                                                                                    \
	": nothing of it was loaded, and the rest goes on without it; report it to the plugin's authors, and take it "   \
	"off the search path until it is fixed"

/* Starts the scanner on `path`, its pipe's reading end in *rfd; else a
 * failed verdict and false. */
static bool spawn(const char *scanner, const char *path, pid_t *pid, int *rfd, verdict_t *v)
{
	int p[2];
	char fdtext[16], pidtext[24];
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none, dflt;

	if (pipe2(p, O_CLOEXEC) != 0) {
		nnn_scan_fail(v, "scan", "cannot make a pipe for the plugin scanner: %s", strerror(errno));
		return false;
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
	int e = posix_spawn(pid, scanner, &fa, &at, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	close(p[1]);
	if (e != 0) {
		close(p[0]);
		nnn_scan_fail(v, "scan",
		              "cannot run the plugin scanner %s: %s: nnnkit's installation is incomplete (reinstall it); "
		              "no plugin is loaded without its scan",
		              scanner, strerror(e));
		return false;
	}
	*rfd = p[0];
	return true;
}

/* Reads until the child closes the pipe or the deadline passes (then
 * false); what it said in *b (at most REPLY_MAX bytes). */
static bool read_reply(int fd, double deadline, buf_t *b)
{
	for (;;) {
		double left = deadline - now_ms();
		if (left <= 0)
			return false;
		struct pollfd pf = { .fd = fd, .events = POLLIN };
		int k = poll(&pf, 1, (int)left + 1);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			continue; /* the deadline check ends it */
		char chunk[4096];
		ssize_t n = read(fd, chunk, sizeof chunk);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return true;
		if (b->n < REPLY_MAX)
			nnn_buf_put(b, chunk, (size_t)n);
	}
}

/* The child's end, within the same deadline (the pipe may close before
 * the child ends: a plugin can close fds); killed when time is up
 * (*timed_out). Returns waitpid's pid, its status in *status. */
static pid_t reap(pid_t pid, double deadline, bool *timed_out, int *status)
{
	pid_t w = 0;
	while (!*timed_out && (w = waitpid(pid, status, WNOHANG)) == 0) {
		if (now_ms() >= deadline) {
			*timed_out = true;
			break;
		}
		struct timespec ts = { 0, 2000000 };
		nanosleep(&ts, NULL);
	}
	if (*timed_out) {
		kill(pid, SIGKILL);
		while ((w = waitpid(pid, status, 0)) < 0 && errno == EINTR)
			;
	}
	return w;
}

/* What the child said: its host line (*host_ok: this nnnkit's), how far
 * it got (stage, "open" before any "at" line), its record into v; true
 * when the record was complete. */
static bool parse_reply(const buf_t *b, char *stage, size_t size, bool *host_ok, verdict_t *v)
{
	rd_t r = { b->p ? b->p : "", (b->p ? b->p : "") + b->n };
	char key[32], host[128];
	const char *val;
	size_t len;
	buf_t want = { 0 };
	nnn_scan_host_line(&want);
	snprintf(host, sizeof host, "%s", want.p ? want.p : "");
	free(want.p);
	snprintf(stage, size, "open");
	*host_ok = b->n >= strlen(host) && !memcmp(b->p, host, strlen(host));
	if (*host_ok)
		r.p += strlen(host);
	while (*host_ok && r.p < r.e) {
		const char *mark = r.p;
		if (!nnn_rd_field(&r, key, sizeof key, &val, &len))
			break;
		if (!strcmp(key, "at")) {
			snprintf(stage, size, "%.*s", (int)(len < 31 ? len : 31), val);
			continue;
		}
		r.p = mark;
		return nnn_verdict_read(&r, v);
	}
	return false;
}

/* How the child ended, in words, when it failed: into v. */
typedef struct ending {
	bool timed_out, reaped, host_ok, complete, said_nothing;
	int status;
} ending_t;

static void judge(const char *scanner, const char *stage, int timeout_ms, const ending_t *e, verdict_t *v)
{
	char sig[96];
	const char *during = !strcmp(stage, "entry point") ? "during its entry point" : "while it was opened (in "
	                                                                              "dlopen, running its constructors)";
	bool exited = e->reaped && WIFEXITED(e->status);
	if (e->timed_out)
		nnn_scan_fail(v, stage, "did not finish loading in %g s (%s; killed, and remembered until the file "
		              "changes; NNN_PLUGIN_SCAN_TIMEOUT_MS sets the limit in milliseconds): it hangs or spins%s",
		              timeout_ms / 1000.0, during, NOT_LOADED);
	else if (e->reaped && WIFSIGNALED(e->status))
		nnn_scan_fail(v, stage, "crashed with %s %s%s", sig_text(WTERMSIG(e->status), sig, sizeof sig), during,
		              NOT_LOADED);
	else if (exited && !e->host_ok && e->said_nothing && WEXITSTATUS(e->status) == 125)
		nnn_scan_fail(v, "scan", "the plugin scanner %s stopped: its parent was not this process", scanner);
	else if (!e->host_ok && exited)
		nnn_scan_fail(v, "scan", "the plugin scanner %s is not this nnnkit's (it said nothing this nnnkit (%s "
		              "%d.%d, layout %08x) understands, exit status %d): reinstall nnnkit",
		              scanner, NNN_VERSION, NNN_ABI_MAJOR, NNN_ABI_MINOR, (unsigned)NNN_SCHEMA_LAYOUT,
		              WEXITSTATUS(e->status));
	else if (!e->complete && exited)
		nnn_scan_fail(v, stage, "exited with status %d %s (a plugin must return from its entry point, never end "
		              "the process)%s", WEXITSTATUS(e->status), during, NOT_LOADED);
	else if (exited && WEXITSTATUS(e->status) != 0)
		nnn_scan_fail(v, stage, "exited with status %d after its entry point returned%s", WEXITSTATUS(e->status),
		              NOT_LOADED);
	else if (!e->complete)
		nnn_scan_fail(v, "scan", "the plugin scanner ended without a report (%s)", strerror(errno));
}

void nnn_scan_run(const char *scanner, const char *path, int timeout_ms, verdict_t *v)
{
	pid_t pid;
	int fd;
	buf_t b = { 0 };
	char stage[32];
	ending_t e = { 0 };
	if (!spawn(scanner, path, &pid, &fd, v))
		return;
	double deadline = now_ms() + timeout_ms;
	e.timed_out = !read_reply(fd, deadline, &b);
	close(fd);
	e.reaped = reap(pid, deadline, &e.timed_out, &e.status) == pid;
	e.complete = parse_reply(&b, stage, sizeof stage, &e.host_ok, v);
	e.said_nothing = b.n == 0;
	free(b.p);
	judge(scanner, stage, timeout_ms, &e, v);
}
