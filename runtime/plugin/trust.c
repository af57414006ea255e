/* trust.c: whether a plugin file may be loaded at all, before anything
 * of it is opened: a path, not a bare name; a regular file nobody but root
 * or the caller can change; folders nobody else can add to or swap out
 * (docs/security.md). NNN_PLUGIN_ALLOW_INSECURE=1 overrides. */
#define _GNU_SOURCE /* secure_getenv */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "loader.h"

static bool insecure_allowed(void)
{
	const char *v = secure_getenv("NNN_PLUGIN_ALLOW_INSECURE");
	return v && !strcmp(v, "1");
}

/* The remedy for `what` (the file or a folder): the caller can fix their
 * own; anything else is not theirs to change, nor is a sticky shared
 * folder such as /tmp (even for root: others rely on writing there). */
static const char *fix(const struct stat *st, char *buf, size_t size, const char *what)
{
	if (st->st_uid == geteuid() && !(st->st_mode & S_ISVTX))
		snprintf(buf, size, "fix it with chmod go-w %s", what);
	else
		snprintf(buf, size, "move the plugin to a folder only you can write");
	return buf;
}

#define OVERRIDE "; or set NNN_PLUGIN_ALLOW_INSECURE=1 to override"

/* Whether anyone but root and the caller can change what loads from
 * `real`: the file itself; its own folder (a search loads every *.so in
 * it, so no one else may add one: not even a sticky folder will do); and
 * every folder above it up to the root (no one else may rename a folder
 * on the way and put another in its place: group- or other-writable
 * folders must be sticky, as /tmp is, and none may be another user's). */
static bool path_unsafe(const char *real, const struct stat *st, char *why, size_t size)
{
	char dir[PATH_MAX], remedy[PATH_MAX + 64];
	struct stat dst;
	if (st->st_mode & (S_IWGRP | S_IWOTH)) {
		snprintf(why, size, "the file is writable by group or others (mode %04o, owner uid %u): refusing to load "
		         "it; %s" OVERRIDE, (unsigned)(st->st_mode & 07777), (unsigned)st->st_uid,
		         fix(st, remedy, sizeof remedy, real));
		return true;
	}
	if (st->st_uid != 0 && st->st_uid != geteuid()) {
		snprintf(why, size, "the file is owned by another user (uid %u), who can change it: refusing to load it; "
		         "move the plugin to a folder only you can write" OVERRIDE, (unsigned)st->st_uid);
		return true;
	}
	snprintf(dir, sizeof dir, "%s", real);
	for (bool own = true;; own = false) {
		char *slash = strrchr(dir, '/');
		if (!slash)
			return false;
		slash[slash == dir] = '\0'; /* "/a/b" -> "/a"; "/a" -> "/" */
		if (stat(dir, &dst) != 0) {
			snprintf(why, size, "cannot stat the folder %s: %s", dir, strerror(errno));
			return true;
		}
		bool writable = dst.st_mode & (S_IWGRP | S_IWOTH);
		if (own && writable) {
			snprintf(why, size, "its folder %s is writable by group or others (mode %04o, owner uid %u), so "
			         "anyone could add a plugin there: refusing to load it; %s" OVERRIDE,
			         dir, (unsigned)(dst.st_mode & 07777), (unsigned)dst.st_uid, fix(&dst, remedy, sizeof remedy, dir));
			return true;
		}
		if (writable && !(dst.st_mode & S_ISVTX)) {
			snprintf(why, size, "the folder %s above it is writable by group or others and not sticky (mode %04o, "
			         "owner uid %u), so anyone could put another folder in its place: refusing to load it; %s"
			         OVERRIDE, dir, (unsigned)(dst.st_mode & 07777), (unsigned)dst.st_uid,
			         fix(&dst, remedy, sizeof remedy, dir));
			return true;
		}
		if (dst.st_uid != 0 && dst.st_uid != geteuid()) {
			snprintf(why, size, "%s %s is owned by another user (uid %u), who could replace what it holds: "
			         "refusing to load it; move the plugin to a folder only you can write" OVERRIDE,
			         own ? "its folder" : "the folder", dir, (unsigned)dst.st_uid);
			return true;
		}
		if (!strcmp(dir, "/"))
			return false;
	}
}

nnn_status_t nnn_plugin_precheck(const char *path, char *real, struct stat *st, char *why, size_t size)
{
	real[0] = '\0';
	if (!strchr(path, '/')) {
		snprintf(why, size, "a bare name is never searched for: give a path such as ./%s or put it in a folder on "
		         "NNN_PLUGIN_PATH", path);
		return NNN_E_PLUGIN;
	}
	if (!realpath(path, real)) {
		snprintf(why, size, "cannot resolve the path: %s", strerror(errno));
		real[0] = '\0';
		return NNN_E_PLUGIN;
	}
	if (stat(real, st) != 0 || !S_ISREG(st->st_mode)) {
		snprintf(why, size, "not a regular file");
		return NNN_E_PLUGIN;
	}
	if (!insecure_allowed() && path_unsafe(real, st, why, size))
		return NNN_E_PLUGIN;
	return NNN_OK;
}
