/* verifyline.c: see verifyline.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verifyline.h"

bool t_verify_line(const char *text, const char *out, const char *in, t_verify_t *v)
{
	char head[1024];
	snprintf(head, sizeof head, "nnnkit: verify: %s against %s on ", out, in);
	const char *p = strstr(text, head), *eol, *a, *r, *sh;
	if (!p)
		return false;
	p += strlen(head);
	eol = strchr(p, '\n');
	eol = eol ? eol : p + strlen(p);
	a = strstr(p, "max abs error ");
	r = strstr(p, "max rel error ");
	sh = strstr(p, " seeded inputs [");
	if (!a || !r || !sh || a > eol || r > eol || sh > eol)
		return false;
	memset(v, 0, sizeof *v);
	v->rows = strtoll(p, NULL, 10);
	sh += strlen(" seeded inputs ");
	size_t n = (size_t)(strchr(sh, ']') - sh) + 1;
	snprintf(v->input, sizeof v->input, "%.*s", (int)n, sh);
	v->abs = strtod(a + strlen("max abs error "), NULL);
	v->rel = strtod(r + strlen("max rel error "), NULL);
	const char *o = strstr(p, "(the smallest size the model takes");
	v->opened = o && o < eol;
	return true;
}
