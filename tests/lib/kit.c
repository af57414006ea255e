/* kit.c: see kit.h. */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "kit.h"
#include "manifest.h"
#include "shell.h"

int t_kit(json_t **report, const char *fmt, ...)
{
	char cmd[6000];
	size_t size = 1 << 22;
	char *out = malloc(size);
	va_list ap;
	json_error_t err;
	cr_assert_not_null(out);
	va_start(ap, fmt);
	int n = vsnprintf(cmd, sizeof cmd, fmt, ap);
	va_end(ap);
	cr_assert(n > 0 && (size_t)n < sizeof cmd, "command too long");
	int st = t_sh(out, size, "%s --json 2>/dev/null", cmd);
	*report = json_loads(out, 0, &err);
	cr_assert_not_null(*report, "%s: no JSON report (%s): %.2000s", cmd, err.text, out);
	free(out);
	return st;
}

long t_kit_count(const json_t *report, const char *key)
{
	json_t *v = json_object_get(json_object_get(report, "valid_cases"), key);
	cr_assert(json_is_integer(v), "no valid_cases.%s in the report", key);
	return (long)json_integer_value(v);
}

const char *t_kit_why(const json_t *report, const char *file)
{
	size_t i;
	json_t *f;
	json_array_foreach(json_object_get(report, "failures"), i, f) {
		if (!strcmp(json_string_value(json_object_get(f, "file")), file))
			return json_string_value(json_object_get(f, "why"));
	}
	return NULL;
}

long t_kit_valid_cases(const char *dir)
{
	t_manifest_t m = t_manifest_load(dir);
	long n = 0;
	for (size_t i = 0; i < m.n; i++)
		n += m.cases[i].valid;
	t_manifest_free(&m);
	return n;
}
