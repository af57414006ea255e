/* ctx.c: see ctx.h. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>

#include <criterion/criterion.h>

#include "ctx.h"

const char *t_build_dir(void)
{
	const char *b = getenv("NNN_BUILD");
	return b && *b ? b : "build";
}

nnn_ctx_t *t_ctx_with(const char *rel)
{
	char path[1024];
	nnn_ctx_t *c;
	nnn_diags_t d;
	int n = snprintf(path, sizeof path, "%s/%s", t_build_dir(), rel);
	cr_assert(n > 0 && (size_t)n < sizeof path, "plugin path too long: %s/%s", t_build_dir(), rel);
	nnn_diags_init(&d);
	cr_assert_eq(nnn_ctx_new(&c, &d), NNN_OK);
	cr_assert_eq(nnn_plugin_load(c, path, &d), NNN_OK, "%s", d.n ? d.v[0].msg : "");
	nnn_diags_free(&d);
	return c;
}
