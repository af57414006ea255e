/* blackbox.c: see blackbox.h. */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <valgrind/valgrind.h>

#include "blackbox.h"

int t_under_valgrind(void)
{
	return RUNNING_ON_VALGRIND != 0;
}

void t_require_root(void)
{
	cr_assert(access("gen/nnngen.lua", R_OK) == 0 && access("schema/nnn.lua", R_OK) == 0,
	          "run the tests from the project root (gen/nnngen.lua not found)");
}

char *t_slurp(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t n = 0, cap = 0;
	if (!f)
		return NULL;
	for (;;) {
		if (cap - n < 4096) {
			char *nb = realloc(buf, cap * 2 + 8192);
			if (!nb) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = nb;
			cap = cap * 2 + 8192;
		}
		size_t got = fread(buf + n, 1, cap - n - 1, f);
		n += got;
		if (got == 0)
			break;
	}
	fclose(f);
	buf[n] = '\0';
	if (size)
		*size = n;
	return buf;
}

void t_spit(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");
	cr_assert_not_null(f, "cannot create %s: %s", path, strerror(errno));
	cr_assert_eq(fwrite(data, 1, len, f), len, "cannot write %s", path);
	cr_assert_eq(fclose(f), 0, "cannot close %s", path);
}

void t_spit_str(const char *path, const char *text)
{
	t_spit(path, text, strlen(text));
}

void t_copy_schema(const char *dir)
{
	char path[512];
	size_t n;
	char *s = t_slurp("schema/nnn.lua", &n);
	cr_assert_not_null(s, "cannot read schema/nnn.lua");
	snprintf(path, sizeof path, "%s/nnn.lua", dir);
	t_spit(path, s, n);
	free(s);
}

void t_run_free(t_run_t *r)
{
	free(r->out);
	free(r->err);
	r->out = r->err = NULL;
}

/* The captured text of one stream: "" when the file is missing. */
static char *captured(const char *dir, const char *name)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	char *text = t_slurp(path, NULL);
	return text ? text : calloc(1, 1);
}

t_run_t t_run_in(const char *dir, const char *fmt, ...)
{
	char cmd[8192], full[8600];
	t_run_t r = { -1, NULL, NULL };
	va_list ap;
	int n, st;

	va_start(ap, fmt);
	n = vsnprintf(cmd, sizeof cmd, fmt, ap);
	va_end(ap);
	cr_assert(n > 0 && (size_t)n < sizeof cmd, "command too long");
	n = snprintf(full, sizeof full, "{ %s\n} </dev/null >'%s/.out' 2>'%s/.err'", cmd, dir, dir);
	cr_assert(n > 0 && (size_t)n < sizeof full, "command too long");
	fflush(NULL);
	st = system(full);
	if (st != -1 && WIFEXITED(st))
		r.status = WEXITSTATUS(st);
	else if (st != -1 && WIFSIGNALED(st))
		r.status = 128 + WTERMSIG(st);
	r.out = captured(dir, ".out");
	r.err = captured(dir, ".err");
	cr_assert(r.out && r.err, "out of memory");
	return r;
}
