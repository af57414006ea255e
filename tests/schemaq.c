/* schemaq.c: see schemaq.h. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "schemaq.h"
#include "shell.h"

NNN_PRINTF(1, 0) static const char *vquery(const char *fmt, va_list ap)
{
	static char ring[8][8192];
	static int next;
	char expr[2048];
	char *out = ring[next++ % 8];
	int n = vsnprintf(expr, sizeof expr, fmt, ap);
	cr_assert(n > 0 && (size_t)n < sizeof expr, "schema query too long");
	cr_assert(strchr(expr, '\'') == NULL, "schema query %s: use double quotes", expr);
	int st = t_sh(out, sizeof ring[0],
	              "lua5.4 tests/tools/schemaq.lua $(for f in examples/*/schema.lua; do "
	              "[ -e \"$f\" ] && printf -- '--taken-by %%s ' \"$f\"; done) schema/nnn.lua '%s'",
	              expr);
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
