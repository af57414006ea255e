/* shell.c: see shell.h. */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "shell.h"

int t_sh(char *out, size_t size, const char *fmt, ...)
{
	char cmd[8192], full[8400], file[] = "/tmp/nnn-sh-XXXXXX";
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(cmd, sizeof cmd, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof cmd)
		return -1;
	int fd = mkstemp(file);
	if (fd < 0)
		return -1;
	close(fd);
	snprintf(full, sizeof full, "(%s) >%s 2>&1", cmd, file);
	int st = system(full);
	if (out && size) {
		FILE *f = fopen(file, "r");
		size_t got = f ? fread(out, 1, size - 1, f) : 0;
		out[got] = '\0';
		if (f)
			fclose(f);
	}
	unlink(file);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

const char *t_fmt(const char *f, ...)
{
	static char ring[16][2048];
	static int next;
	char *p = ring[next++ % 16];
	va_list ap;
	va_start(ap, f);
	int n = vsnprintf(p, sizeof ring[0], f, ap);
	va_end(ap);
	cr_assert(n >= 0 && (size_t)n < sizeof ring[0], "text too long for t_fmt");
	return p;
}

const char *nnnkit_bin(void)
{
	const char *p = getenv("NNNKIT");
	return p && *p ? p : "build/nnnkit";
}
