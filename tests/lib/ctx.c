/* ctx.c: see ctx.h. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

nnn_ctx_t *t_ctx_new(void)
{
	nnn_ctx_t *c;
	cr_assert_eq(nnn_ctx_new(&c, NULL), NNN_OK);
	return c;
}

const char *t_fixture(const char *name)
{
	static char path[4][1024];
	static int k;
	char *p = path[k++ % 4];
	snprintf(p, sizeof path[0], "%s/fixtures/%s.so", t_build_dir(), name);
	cr_assert_eq(access(p, R_OK), 0, "missing fixture %s: run make", p);
	return p;
}

void t_expect_refused(nnn_ctx_t *c, const char *path, const char *stage, const char *const *want)
{
	nnn_diags_t d;
	char buf[2048], st[64];
	nnn_diags_init(&d);
	cr_assert_eq(nnn_plugin_load(c, path, &d), NNN_E_PLUGIN, "%s loaded", path);
	cr_assert_eq(d.n, 1);
	nnn_diag_format(&d.v[0], buf, sizeof buf);
	snprintf(st, sizeof st, "%s stage: ", stage);
	cr_assert(strstr(buf, st), "no '%s' in: %s", st, buf);
	for (; *want; want++)
		cr_assert(strstr(buf, *want), "no '%s' in: %s", *want, buf);
	nnn_plugin_report_t r;
	size_t n = nnn_ctx_report(c, 0, NULL);
	nnn_ctx_report(c, n - 1, &r);
	cr_assert_str_eq(r.stage, stage);
	cr_assert_eq(r.status, NNN_E_PLUGIN);
	nnn_diags_free(&d);
}
