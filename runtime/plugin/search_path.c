/* search_path.c: where plugins are looked for, in precedence order: the
 * files named (--plugin), then each folder of NNN_PLUGIN_PATH in turn
 * (absolute ones only: a relative entry would search the current folder),
 * then the installed folder. Every *.so of a folder is a candidate; none
 * is opened here. */
#define _GNU_SOURCE /* secure_getenv */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search_path.h"

cand_t *nnn_cand_add(set_t *s, const char *path, int rank, const char *source)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 16;
		cand_t *v = realloc(s->v, cap * sizeof *v);
		if (!v) {
			s->oom = true;
			return NULL;
		}
		s->v = v;
		s->cap = cap;
	}
	cand_t *c = &s->v[s->n];
	memset(c, 0, sizeof *c);
	c->path = strdup(path);
	c->source = strdup(source);
	if (!c->path || !c->source) {
		free(c->path);
		free(c->source);
		s->oom = true;
		return NULL;
	}
	c->rank = rank;
	c->first = -1;
	s->n++;
	return c;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every *.so of a folder (not hidden), in name order: the order only
 * decides how reports are listed, never who provides an ID. */
static void add_dir(set_t *s, const char *dir, int rank, const char *source)
{
	DIR *dp = opendir(dir);
	struct dirent *e;
	char **names = NULL;
	size_t n = 0, cap = 0;
	if (!dp)
		return; /* a folder that does not exist holds no plugins */
	while ((e = readdir(dp)) != NULL) {
		size_t len = strlen(e->d_name);
		if (len < 4 || strcmp(e->d_name + len - 3, ".so") || e->d_name[0] == '.')
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 16;
			char **v = realloc(names, cap * sizeof *v);
			if (!v)
				break;
			names = v;
		}
		if (!(names[n] = malloc(strlen(dir) + len + 2)))
			break;
		sprintf(names[n], "%s/%s", dir, e->d_name);
		n++;
	}
	closedir(dp);
	if (n)
		qsort(names, n, sizeof *names, by_name);
	for (size_t i = 0; i < n; i++) {
		nnn_cand_add(s, names[i], rank, source);
		free(names[i]);
	}
	free(names);
}

void nnn_cands_list(set_t *s, const nnn_discover_opts_t *o)
{
	char source[PATH_MAX + 64];
	int rank = 0;
	for (int i = 0; i < o->nfiles; i++)
		nnn_cand_add(s, o->files[i], rank, "--plugin files");
	rank++;
	const char *env = o->search ? secure_getenv("NNN_PLUGIN_PATH") : NULL;
	if (env && *env) {
		char *copy = strdup(env), *save = NULL;
		for (char *dir = copy ? strtok_r(copy, ":", &save) : NULL; dir; dir = strtok_r(NULL, ":", &save)) {
			/* Relative entries would search the current folder: skipped. */
			if (dir[0] != '/')
				continue;
			snprintf(source, sizeof source, "NNN_PLUGIN_PATH folder %s", dir);
			add_dir(s, dir, rank++, source);
		}
		if (!copy)
			s->oom = true;
		free(copy);
	}
	if (o->installed_dir && o->installed_dir[0] == '/') {
		snprintf(source, sizeof source, "the installed folder %s", o->installed_dir);
		add_dir(s, o->installed_dir, rank, source);
	}
}
