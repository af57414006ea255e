/* schemaq.c: see schemaq.h. */
#define _POSIX_C_SOURCE 200809L
#include <glob.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "schemaq.h"

/* Runs argv (no shell: under `make valgrind` lua5.4 then runs untraced),
 * its stdout and stderr into out (cut to size). Returns its exit status. */
static int run_argv(char *const *argv, char *out, size_t size)
{
	int fd[2];
	size_t n = 0;
	cr_assert_eq(pipe(fd), 0, "pipe");
	fflush(NULL);
	pid_t pid = fork();
	cr_assert(pid >= 0, "fork");
	if (pid == 0) {
		dup2(fd[1], 1);
		dup2(fd[1], 2);
		close(fd[0]);
		close(fd[1]);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(fd[1]);
	for (;;) { /* what does not fit is read and dropped, so the child never blocks */
		char drop[512];
		ssize_t got = n < size - 1 ? read(fd[0], out + n, size - 1 - n) : read(fd[0], drop, sizeof drop);
		if (got <= 0)
			break;
		if (n < size - 1)
			n += (size_t)got;
	}
	out[n] = '\0';
	close(fd[0]);
	int st;
	cr_assert_eq(waitpid(pid, &st, 0), pid, "waitpid");
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

NNN_PRINTF(1, 0) static const char *vquery(const char *fmt, va_list ap)
{
	static char ring[8][8192];
	static int next;
	char expr[2048];
	char *out = ring[next++ % 8];
	int n = vsnprintf(expr, sizeof expr, fmt, ap);
	cr_assert(n > 0 && (size_t)n < sizeof expr, "schema query too long");
	/* lua5.4 tests/tools/schemaq.lua --taken-by FRAGMENT... schema/nnn.lua EXPR */
	glob_t g;
	int gs = glob("examples/*/schema.lua", 0, NULL, &g);
	size_t nfrag = gs == 0 ? g.gl_pathc : 0, k = 0;
	char **argv = calloc(2 * nfrag + 5, sizeof *argv);
	cr_assert_not_null(argv);
	argv[k++] = "lua5.4";
	argv[k++] = "tests/tools/schemaq.lua";
	for (size_t i = 0; i < nfrag; i++) {
		argv[k++] = "--taken-by";
		argv[k++] = g.gl_pathv[i];
	}
	argv[k++] = "schema/nnn.lua";
	argv[k++] = expr;
	int st = run_argv(argv, out, sizeof ring[0]);
	free(argv);
	if (gs == 0)
		globfree(&g);
	cr_assert_eq(st, 0, "schema query %s failed (run the tests from the project root):\n%s", expr, out);
	size_t len = strlen(out);
	while (len && out[len - 1] == '\n')
		out[--len] = '\0';
	return out;
}

const char *sq(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	const char *r = vquery(fmt, ap);
	va_end(ap);
	return r;
}

long long sq_int(const char *fmt, ...)
{
	va_list ap;
	char *end;
	va_start(ap, fmt);
	const char *r = vquery(fmt, ap);
	va_end(ap);
	long long v = strtoll(r, &end, 10);
	cr_assert(*r && !*end, "schema query %s: not an integer: %s", fmt, r);
	return v;
}

int64_t t_undefined(const char *(*name)(int64_t), int64_t from)
{
	int64_t v = from;
	while (name(v))
		v++;
	return v;
}

int64_t t_undefined_down(const char *(*name)(int64_t), int64_t from)
{
	int64_t v = from;
	while (v >= 0 && name(v))
		v--;
	return v;
}
