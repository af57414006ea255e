/* tmpdir.c: see tmpdir.h. */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <criterion/criterion.h>

#include "tmpdir.h"

#define ROOT "/tmp/"

static char g_tmp[64];

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

const char *t_tmpdir(const char *prefix)
{
	if (!g_tmp[0]) {
		int n = snprintf(g_tmp, sizeof g_tmp, ROOT "%sXXXXXX", prefix);
		cr_assert(n > 0 && (size_t)n < sizeof g_tmp, "temp folder prefix too long: %s", prefix);
		if (!mkdtemp(g_tmp)) {
			g_tmp[0] = '\0';
			cr_assert_fail("mkdtemp: %s", strerror(errno));
		}
	}
	return g_tmp;
}

const char *t_tmppath(const char *prefix, const char *name)
{
	static char ring[16][256];
	static int next;
	char *p = ring[next++ % 16];
	int n = snprintf(p, sizeof ring[0], "%s/%s", t_tmpdir(prefix), name);
	cr_assert(n > 0 && (size_t)n < sizeof ring[0], "temp path too long: %s", name);
	return p;
}

void t_tmpdir_remove(void)
{
	/* Only ever a folder mkdtemp made under /tmp: never walks anything else. */
	if (g_tmp[0] && !strncmp(g_tmp, ROOT, strlen(ROOT)))
		nftw(g_tmp, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	g_tmp[0] = '\0';
}
