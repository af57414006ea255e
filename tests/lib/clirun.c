/* clirun.c: see clirun.h. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clirun.h"

void slurp_keep(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "rb");
	size_t n = 0;
	if (f) {
		n = fread(buf, 1, size - 1, f);
		fclose(f);
	}
	buf[n] = '\0';
}

void slurp(const char *path, char *buf, size_t size)
{
	slurp_keep(path, buf, size);
	unlink(path);
}

void nnnkit_env(run_t *r, const char *pre, const char *args)
{
	char out[] = "/tmp/nnncli.out.XXXXXX", err[] = "/tmp/nnncli.err.XXXXXX", cmd[4096];
	close(mkstemp(out));
	close(mkstemp(err));
	snprintf(cmd, sizeof cmd, "%s%s%s%s %s >%s 2>%s </dev/null", pre[0] ? "env " : "", pre, pre[0] ? " " : "",
	         nnnkit_bin(), args, out, err);
	int st = system(cmd);
	cr_assert(WIFEXITED(st), "nnnkit %s: did not exit normally", args);
	r->code = WEXITSTATUS(st);
	slurp(out, r->out, sizeof r->out);
	slurp(err, r->err, sizeof r->err);
}

void nnnkitf(run_t *r, const char *fmt, ...)
{
	char args[4096];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(args, sizeof args, fmt, ap);
	va_end(ap);
	cr_assert(n >= 0 && (size_t)n < sizeof args, "nnnkit arguments too long: %s", args);
	nnnkit(r, args);
}
