/* path.c: see path.h. */
#include <string.h>

#include "path.h"

/* Appends n bytes, cut to the room left (a path that long is already
 * unreadable); no printf: paths are built for every field decoded. */
static void path_append(nnn_path_t *p, const char *s, size_t n)
{
	size_t room = sizeof p->s - 1 - p->len;
	if (n > room)
		n = room;
	memcpy(p->s + p->len, s, n);
	p->len += n;
	p->s[p->len] = '\0';
}

size_t nnn_path_push(nnn_path_t *p, const char *name)
{
	size_t mark = p->len;
	if (!name[0])
		return mark;
	if (p->len)
		path_append(p, ".", 1);
	path_append(p, name, strlen(name));
	return mark;
}

size_t nnn_path_index(nnn_path_t *p, int64_t i)
{
	size_t mark = p->len;
	char t[24];
	size_t k = sizeof t;
	uint64_t u = i < 0 ? 0 - (uint64_t)i : (uint64_t)i;
	t[--k] = ']';
	do
		t[--k] = (char)('0' + u % 10);
	while ((u /= 10) != 0);
	if (i < 0)
		t[--k] = '-';
	t[--k] = '[';
	path_append(p, t + k, sizeof t - k);
	return mark;
}

size_t nnn_path_dotted(const char *path, size_t len, char *out, size_t size)
{
	size_t k = 0;
	for (size_t i = 0; i < len && path[i] && k + 1 < size; i++)
		if (path[i] != ']')
			out[k++] = path[i] == '[' ? '.' : path[i];
	if (size)
		out[k] = '\0';
	return k;
}
