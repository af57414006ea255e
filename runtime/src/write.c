/* write.c: the single atomic write path of libnnn (nnn_write_atomic).
 *
 * A temporary file beside the target, written, flushed and renamed over
 * it, then the folder flushed: a crash leaves the old file or the whole
 * new one. What else it promises (docs/security.md):
 * - No temporary file outlives a failure: every error path removes it,
 *   and SIGXFSZ is blocked in the writing thread so that a file size
 *   limit is a write error (EFBIG), not a death.
 * - A writer killed outright (SIGKILL, power loss) leaves its temporary;
 *   the next write of the same target removes it. A writer holds an
 *   exclusive flock on its temporary from creation to rename, so a
 *   temporary whose lock can be taken has no live writer: only those,
 *   named by this writer's pattern (TARGET.tmp.XXXXXX), regular files or
 *   folders (nnn_tmp_dir_make, for export) owned by the caller, are
 *   removed.
 * - A new file gets mode 0666 less the umask (the kernel applies it at
 *   creation); a replaced file keeps its mode.
 * - A symbolic link is written through: the file it names is replaced
 *   (atomically, in that file's folder), the link stays. A link to
 *   nothing is refused. A hard-linked target is replaced by a new file:
 *   its other names keep the old contents.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <nnn/file.h>

#include "fileio.h"

#define TMP_TAG ".tmp."
#define TMP_RAND 6

static const char alnum[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/* The folder and last name of the file to replace: `path`, or the file a
 * symbolic link at `path` names. Returned in *dir and *base (free both). */
static nnn_status_t resolve(const char *path, char **dir, char **base, nnn_diags_t *diags)
{
	struct stat s;
	char *real = NULL;
	const char *p = path, *slash;
	*dir = *base = NULL;
	if (lstat(path, &s) == 0 && S_ISLNK(s.st_mode)) {
		if (!(real = realpath(path, NULL)))
			return nnn_diags_add(diags, NNN_E_IO, NNN_NO_OFFSET, "",
			                     "cannot write %s: it is a symbolic link, and the file it names cannot be found "
			                     "(%s): nnnkit writes through a link to its file; remove the link or make its file",
			                     path, strerror(errno));
		p = real;
	}
	slash = strrchr(p, '/');
	if (slash && !slash[1]) {
		free(real);
		return nnn_diags_add(diags, NNN_E_IO, NNN_NO_OFFSET, "", "cannot write %s: a file name is needed, not a folder",
		                     path);
	}
	*dir = slash ? strndup(p, slash == p ? 1 : (size_t)(slash - p)) : strdup(".");
	*base = strdup(slash ? slash + 1 : p);
	free(real);
	if (!*dir || !*base) {
		free(*dir);
		free(*base);
		return nnn_diags_add(diags, NNN_E_NOMEM, NNN_NO_OFFSET, "", "cannot allocate a file name");
	}
	return NNN_OK;
}

/* Whether `name` is `base` followed by this writer's temporary suffix. */
static bool is_tmp_of(const char *name, const char *base)
{
	size_t n = strlen(base), t = strlen(TMP_TAG);
	if (strncmp(name, base, n) || strncmp(name + n, TMP_TAG, t) || strlen(name + n + t) != TMP_RAND)
		return false;
	return strspn(name + n + t, alnum) == TMP_RAND;
}

/* Removes what export wrote into a temporary folder (plain files, no
 * subfolders), then the folder; best effort. */
static void remove_dir_at(int dirfd, const char *name, int fd)
{
	int dup_fd = dup(fd);
	DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
	struct dirent *e;
	if (!d) {
		if (dup_fd >= 0)
			close(dup_fd);
	} else {
		while ((e = readdir(d)) != NULL)
			if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
				unlinkat(fd, e->d_name, 0);
		closedir(d);
	}
	unlinkat(dirfd, name, AT_REMOVEDIR);
}

/* Removes the temporaries of `base` that no live writer holds (see the
 * top of the file): files, and the folders of nnn_tmp_dir_make. Best
 * effort, never an error. */
static void sweep(int dirfd, const char *base)
{
	int dup_fd = dup(dirfd);
	DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
	struct dirent *e;
	if (!d) {
		if (dup_fd >= 0)
			close(dup_fd);
		return;
	}
	while ((e = readdir(d)) != NULL) {
		struct stat held, named;
		if (!is_tmp_of(e->d_name, base))
			continue;
		int fd = openat(dirfd, e->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0)
			continue;
		/* Locked by us, the name still the file we hold: nobody can be
		 * writing it, and nobody else can remove it in between. */
		if (fstat(fd, &held) == 0 && (S_ISREG(held.st_mode) || S_ISDIR(held.st_mode)) &&
		    held.st_uid == geteuid() && flock(fd, LOCK_EX | LOCK_NB) == 0 &&
		    fstatat(dirfd, e->d_name, &named, AT_SYMLINK_NOFOLLOW) == 0 && named.st_dev == held.st_dev &&
		    named.st_ino == held.st_ino) {
			if (S_ISDIR(held.st_mode))
				remove_dir_at(dirfd, e->d_name, fd);
			else
				unlinkat(dirfd, e->d_name, 0);
		}
		close(fd);
	}
	closedir(d);
}

static void random_name(char *out)
{
	unsigned char r[TMP_RAND];
	if (getrandom(r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r) {
		struct timespec t;
		clock_gettime(CLOCK_MONOTONIC, &t);
		unsigned long long x = (unsigned long long)t.tv_nsec ^ ((unsigned long long)getpid() << 20);
		for (int i = 0; i < TMP_RAND; i++, x = x * 6364136223846793005ull + 1442695040888963407ull)
			r[i] = (unsigned char)(x >> 33);
	}
	for (int i = 0; i < TMP_RAND; i++)
		out[i] = alnum[r[i] % (sizeof alnum - 1)];
	out[TMP_RAND] = '\0';
}

/* Creates and locks a new temporary `base`.tmp.XXXXXX in dirfd; its name
 * goes to tmp (room for base + 12 bytes). mode: 0666 for a new file (the
 * umask applies), or the replaced file's, set after creation. */
static int make_tmp(int dirfd, const char *base, const struct stat *old, char *tmp)
{
	size_t n = strlen(base);
	memcpy(tmp, base, n);
	memcpy(tmp + n, TMP_TAG, strlen(TMP_TAG));
	for (int attempt = 0; attempt < 100; attempt++) {
		struct stat held, named;
		random_name(tmp + n + strlen(TMP_TAG));
		int fd = openat(dirfd, tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
		if (fd < 0) {
			if (errno == EEXIST)
				continue;
			return -1;
		}
		/* A sweeper may have taken the new file between open and flock. */
		if (flock(fd, LOCK_EX | LOCK_NB) == 0 && fstat(fd, &held) == 0 &&
		    fstatat(dirfd, tmp, &named, AT_SYMLINK_NOFOLLOW) == 0 && named.st_dev == held.st_dev &&
		    named.st_ino == held.st_ino) {
			if (old && fchmod(fd, old->st_mode & 07777) != 0) {
				int e = errno;
				unlinkat(dirfd, tmp, 0);
				close(fd);
				errno = e;
				return -1;
			}
			return fd;
		}
		close(fd);
	}
	errno = EEXIST;
	return -1;
}

/* SIGXFSZ blocked in this thread while it writes (*was: whether it was
 * blocked before); unblock_xfsz discards one raised meanwhile, which
 * write() reported as EFBIG. */
static void block_xfsz(bool *was)
{
	sigset_t s, old;
	sigemptyset(&s);
	sigaddset(&s, SIGXFSZ);
	*was = pthread_sigmask(SIG_BLOCK, &s, &old) != 0 || sigismember(&old, SIGXFSZ);
}

static void unblock_xfsz(bool was)
{
	sigset_t s, pending;
	struct timespec zero = { 0, 0 };
	if (was)
		return;
	sigemptyset(&s);
	sigaddset(&s, SIGXFSZ);
	if (sigpending(&pending) == 0 && sigismember(&pending, SIGXFSZ))
		sigtimedwait(&s, NULL, &zero);
	pthread_sigmask(SIG_UNBLOCK, &s, NULL);
}

static nnn_status_t write_in(int dirfd, const char *dir, const char *base,
                             nnn_status_t (*fill)(void *ctx, int fd, nnn_diags_t *diags), void *ctx,
                             nnn_diags_t *diags)
{
	char tmp[NAME_MAX + 16];
	struct stat old;
	nnn_status_t st;
	if (strlen(base) + strlen(TMP_TAG) + TMP_RAND > NAME_MAX)
		return nnn_diags_add(diags, NNN_E_IO, NNN_NO_OFFSET, "",
		                     "cannot write %s/%s: the name is too long for a temporary file beside it", dir, base);
	sweep(dirfd, base);
	bool exists = fstatat(dirfd, base, &old, 0) == 0;
	int fd = make_tmp(dirfd, base, exists ? &old : NULL, tmp);
	if (fd < 0)
		return nnn_diags_add(diags, NNN_E_IO, NNN_NO_OFFSET, "", "cannot create a temporary file beside %s/%s: %s",
		                     dir, base, strerror(errno));
	st = fill(ctx, fd, diags);
	if (st == NNN_OK && fsync(fd) != 0)
		st = nnn_diags_add(diags, NNN_E_IO, NNN_NO_OFFSET, "", "cannot flush %s/%s: %s", dir, tmp, strerror(errno));
	if (st == NNN_OK && renameat(dirfd, tmp, dirfd, base) != 0)
		st = nnn_diags_add(diags, NNN_E_IO, NNN_NO_OFFSET, "", "cannot rename %s/%s to %s: %s", dir, tmp, base,
		                   strerror(errno));
	/* Removed while still locked, so no sweeper can race for the name. */
	if (st != NNN_OK)
		unlinkat(dirfd, tmp, 0);
	if (close(fd) != 0 && st == NNN_OK)
		st = nnn_diags_add(diags, NNN_E_IO, NNN_NO_OFFSET, "", "cannot close %s/%s: %s", dir, base, strerror(errno));
	if (st == NNN_OK)
		fsync(dirfd); /* best effort: makes the rename itself durable */
	return st;
}

nnn_status_t nnn_write_atomic(const char *path, nnn_status_t (*fill)(void *ctx, int fd, nnn_diags_t *diags),
                              void *ctx, nnn_diags_t *diags)
{
	char *dir, *base;
	bool was;
	nnn_status_t st = resolve(path, &dir, &base, diags);
	if (st != NNN_OK)
		return st;
	/* Same folder as the target, so rename() cannot cross file systems. */
	int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0) {
		st = nnn_diags_add(diags, NNN_E_IO, NNN_NO_OFFSET, "", "cannot open the folder %s to write %s: %s", dir,
		                   path, strerror(errno));
	} else {
		block_xfsz(&was);
		st = write_in(dirfd, dir, base, fill, ctx, diags);
		unblock_xfsz(was);
		close(dirfd);
	}
	free(dir);
	free(base);
	return st;
}

int nnn_tmp_dir_make(const char *target, char *tmp, size_t size)
{
	char *dir, *base;
	int fd = -1;
	if (resolve(target, &dir, &base, NULL) != NNN_OK)
		return errno = ENOMEM, -1;
	int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	size_t n = strlen(target);
	if (dirfd < 0)
		goto out;
	if (n + strlen(TMP_TAG) + TMP_RAND + 1 > size || strlen(base) + strlen(TMP_TAG) + TMP_RAND > NAME_MAX) {
		errno = ENAMETOOLONG;
		goto out;
	}
	sweep(dirfd, base);
	memcpy(tmp, target, n);
	memcpy(tmp + n, TMP_TAG, strlen(TMP_TAG));
	for (int attempt = 0; attempt < 100 && fd < 0; attempt++) {
		struct stat held, named;
		random_name(tmp + n + strlen(TMP_TAG));
		if (mkdir(tmp, 0777) != 0) {
			if (errno == EEXIST)
				continue;
			break;
		}
		fd = open(tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		/* As make_tmp: a sweeper may have taken it between mkdir and flock. */
		if (fd >= 0 && !(flock(fd, LOCK_EX | LOCK_NB) == 0 && fstat(fd, &held) == 0 &&
		                 lstat(tmp, &named) == 0 && named.st_dev == held.st_dev && named.st_ino == held.st_ino)) {
			close(fd);
			fd = -1;
		}
	}
out:
	if (dirfd >= 0) {
		int e = errno;
		close(dirfd);
		errno = e;
	}
	free(dir);
	free(base);
	return fd;
}

void nnn_tmp_dir_remove(const char *tmp, int fd)
{
	remove_dir_at(AT_FDCWD, tmp, fd);
	close(fd);
}
