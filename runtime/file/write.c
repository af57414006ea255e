/* write.c: the single write path of libnnn (nnn_write_atomic), and what
 * goes through it: bytes, and models encoded straight to the file.
 *
 * A regular file (or a new name) is replaced atomically: a temporary file
 * beside the target, written, flushed and renamed over it, then the folder
 * flushed: a crash leaves the old file or the whole new one. Anything else
 * is never replaced: standard output ("-"), a FIFO or a character device
 * (/dev/null) is written in place, as a stream; a folder, a socket or a
 * block device is refused. What else it promises (docs/security.md):
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
 *   creation); a replaced file keeps its permission bits but not set-uid,
 *   set-gid or sticky. A file the writer may not write is not replaced.
 * - A symbolic link is written through: the file it names is replaced
 *   (atomically, in that file's folder), the link stays. A link to
 *   nothing is refused, and so is a link someone else planted in a sticky
 *   world-writable folder (check_planted). A hard-linked target is
 *   replaced by a new file: its other names keep the old contents.
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
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <nnn/file.h>

#include "codec.h"
#include "sink.h"
#include "try.h"
#include "fileio.h"

#define TMP_TAG ".tmp."
#define TMP_RAND 6

static const char alnum[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/* The file an output path names, once its symbolic links are followed. */
typedef struct {
	char *dir, *base; /* its folder and last name (owned) */
	bool exists;
	struct stat st; /* when it exists: the file itself, never a link */
} target_t;

static void target_free(target_t *t)
{
	free(t->dir);
	free(t->base);
}

/* The folder part of p ("." when it has none), in a new string. */
static char *dir_of(const char *p)
{
	const char *slash = strrchr(p, '/');
	return slash ? strndup(p, slash == p ? 1 : (size_t)(slash - p)) : strdup(".");
}

/* The kernel's fs.protected_symlinks rule, applied whatever the sysctl says
 * (rename() and realpath() never ask the kernel to follow the link): a link
 * in a sticky, world-writable folder (/tmp) is followed only if it belongs
 * to the writer or to the folder's owner. Anyone else may have planted it
 * to make this writer replace a file it can write and they cannot. */
static nnn_status_t check_planted(const char *path, const char *link, const struct stat *ls, nnn_diags_t *diags)
{
	struct stat ds;
	char *dir = dir_of(link);
	if (!dir)
		return nnn_diags_add(diags, NNN_E_NOMEM, NNN_NO_OFFSET, "", "cannot allocate a file name");
	bool planted = stat(dir, &ds) == 0 && (ds.st_mode & S_ISVTX) && (ds.st_mode & S_IWOTH) &&
	               ls->st_uid != geteuid() && ls->st_uid != ds.st_uid;
	nnn_status_t st = NNN_OK;
	if (planted)
		st = nnn_diags_add(diags, NNN_E_IO, NNN_NO_OFFSET, "",
		                   "refusing to write %s: %s is a symbolic link in %s, a sticky folder anyone may write "
		                   "to, and it belongs to user %u, neither you nor the folder's owner: it may have been "
		                   "planted to make you replace the file it names (the kernel's fs.protected_symlinks "
		                   "rule, which cp follows too); remove the link, or write the file it names directly",
		                   path, link, dir, (unsigned)ls->st_uid);
	free(dir);
	return st;
}

/* The target of the link at `link`, as a path usable from here: absolute,
 * or relative to the link's folder. NULL with errno on failure. */
static char *link_next(const char *link, const struct stat *ls)
{
	size_t size = (size_t)ls->st_size + 1 < 64 ? 64 : (size_t)ls->st_size + 1;
	char *to = malloc(size), *dir, *next;
	ssize_t n = to ? readlink(link, to, size) : -1;
	if (n < 0 || (size_t)n >= size) {
		if (n >= 0)
			errno = EAGAIN; /* it changed since lstat */
		free(to);
		return NULL;
	}
	to[n] = '\0';
	if (to[0] == '/')
		return to;
	dir = dir_of(link);
	next = dir ? malloc(strlen(dir) + (size_t)n + 2) : NULL;
	if (next)
		sprintf(next, "%s/%s", dir, to);
	free(dir);
	free(to);
	return next;
}

/* Follows the links at `path` one by one (never realpath: each link is
 * checked by check_planted) to the file to write, which may not exist yet.
 * A link to nothing is refused: nnnkit writes through a link only to the
 * file it names. A link the kernel follows to an open pipe or device
 * rather than to a name (/dev/stdout, /proc/self/fd/N) is itself the
 * target, written in place. */
static nnn_status_t resolve(const char *path, target_t *t, nnn_diags_t *diags)
{
	char *p = strdup(path), *prev = NULL;
	nnn_status_t st = NNN_OK;
	memset(t, 0, sizeof *t);
	for (int hops = 0; p && st == NNN_OK; hops++) {
		struct stat ls;
		if (lstat(p, &ls) != 0) {
			if (errno == ENOENT && !prev)
				break;
			if (errno == ENOENT && stat(prev, &ls) == 0 && !S_ISREG(ls.st_mode) && !S_ISDIR(ls.st_mode)) {
				free(p);
				p = prev;
				prev = NULL;
				t->exists = true;
				t->st = ls;
				break;
			}
			st = nnn_diags_add(diags, NNN_E_IO, NNN_NO_OFFSET, "",
			                   prev ? "cannot write %s: it is a symbolic link, and the file it names cannot be "
			                          "found (%s): nnnkit writes through a link to its file; remove the link or "
			                          "make its file"
			                        : "cannot write %s: %s",
			                   path, strerror(errno));
		} else if (!S_ISLNK(ls.st_mode)) {
			t->exists = true;
			t->st = ls;
			break;
		} else if (hops == 40) {
			st = nnn_diags_add(diags, NNN_E_IO, NNN_NO_OFFSET, "",
			                   "cannot write %s: more than 40 symbolic links in a row (a loop?): point the link "
			                   "at a file",
			                   path);
		} else if ((st = check_planted(path, p, &ls, diags)) == NNN_OK) {
			free(prev);
			prev = p;
			if (!(p = link_next(prev, &ls)))
				st = nnn_diags_add(diags, NNN_E_IO, NNN_NO_OFFSET, "", "cannot write %s: cannot read the link %s: %s",
				                   path, prev, strerror(errno));
		}
	}
	if (!p && st == NNN_OK)
		st = nnn_diags_add(diags, NNN_E_NOMEM, NNN_NO_OFFSET, "", "cannot allocate a file name");
	if (st == NNN_OK) {
		const char *slash = strrchr(p, '/');
		if (slash && !slash[1])
			st = nnn_diags_add(diags, NNN_E_IO, NNN_NO_OFFSET, "",
			                   "cannot write %s: a file name is needed, not a folder", path);
		else if (!(t->dir = dir_of(p)) || !(t->base = strdup(slash ? slash + 1 : p)))
			st = nnn_diags_add(diags, NNN_E_NOMEM, NNN_NO_OFFSET, "", "cannot allocate a file name");
	}
	free(prev);
	free(p);
	if (st != NNN_OK)
		target_free(t);
	return st;
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
 * umask applies), or the replaced file's permission bits, set after
 * creation. */
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
			/* The permission bits only: a set-uid, set-gid or sticky bit
			 * is not handed to a new file, as install and cp do not. */
			if (old && fchmod(fd, old->st_mode & 0777) != 0) {
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

static nnn_status_t write_in(int dirfd, const char *dir, const char *base, const struct stat *old,
                             nnn_status_t (*fill)(void *ctx, int fd, nnn_diags_t *diags), void *ctx,
                             nnn_diags_t *diags)
{
	char tmp[NAME_MAX + 16];
	nnn_status_t st;
	if (strlen(base) + strlen(TMP_TAG) + TMP_RAND > NAME_MAX)
		return nnn_diags_add(diags, NNN_E_IO, NNN_NO_OFFSET, "",
		                     "cannot write %s/%s: the name is too long for a temporary file beside it", dir, base);
	sweep(dirfd, base);
	int fd = make_tmp(dirfd, base, old, tmp);
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

/* Writes what fill writes to fd, a stream (standard output, a FIFO, a
 * character device): in place, as it comes, with nothing to flush. */
static nnn_status_t write_stream(int fd, const char *name, nnn_status_t (*fill)(void *ctx, int fd, nnn_diags_t *diags),
                                 void *ctx, nnn_diags_t *diags)
{
	bool was;
	block_xfsz(&was);
	nnn_status_t st = fill(ctx, fd, diags);
	unblock_xfsz(was);
	if (st != NNN_OK)
		nnn_diags_add(diags, st, NNN_NO_OFFSET, "", "cannot write %s: what came before the error was written", name);
	return st;
}

/* How long a FIFO may take to find a reader, in 20 ms steps (2 s): the
 * reader of `cat f & nnnkit ... -o f` may not have opened it yet, and a
 * FIFO nobody reads must not hang the writer. */
#define FIFO_WAIT_STEPS 100

/* Opens the FIFO or character device `file` for writing in place, without
 * following a link (resolve followed them) and without waiting past
 * FIFO_WAIT_STEPS for a reader. */
static nnn_status_t open_stream(const char *path, const char *file, const struct stat *was, int *fd,
                                nnn_diags_t *diags)
{
	struct stat now;
	int flags = O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | (strncmp(file, "/proc/", 6) ? O_NOFOLLOW : 0);
	for (int step = 0; (*fd = open(file, flags)) < 0 && errno == ENXIO && S_ISFIFO(was->st_mode) &&
	                   step < FIFO_WAIT_STEPS;
	     step++)
		nanosleep(&(struct timespec){ 0, 20 * 1000 * 1000 }, NULL);
	if (*fd < 0)
		return nnn_diags_add(diags, NNN_E_IO, NNN_NO_OFFSET, "",
		                     errno == ENXIO && S_ISFIFO(was->st_mode)
		                         ? "cannot write %s: it is a FIFO and nothing read it for 2 seconds: start its "
		                           "reader first"
		                         : "cannot write %s: %s",
		                     path, strerror(errno));
	/* What was checked is what is open: a name swapped for a regular file
	 * in between would be overwritten in place, not replaced. */
	if (fstat(*fd, &now) != 0 || (now.st_mode & S_IFMT) != (was->st_mode & S_IFMT) || now.st_rdev != was->st_rdev ||
	    fcntl(*fd, F_SETFL, fcntl(*fd, F_GETFL) & ~O_NONBLOCK) != 0) {
		close(*fd);
		*fd = -1;
		return nnn_diags_add(diags, NNN_E_IO, NNN_NO_OFFSET, "",
		                     "cannot write %s: it changed while it was opened; write it again", path);
	}
	return NNN_OK;
}

/* What a target that exists but is not a regular file gets: written in
 * place (a FIFO, a character device such as /dev/null), or refused with
 * why. Never replaced: renaming over /dev/null would replace the system's
 * null device with a file. */
static nnn_status_t write_special(const char *path, const target_t *t,
                                  nnn_status_t (*fill)(void *ctx, int fd, nnn_diags_t *diags), void *ctx,
                                  nnn_diags_t *diags)
{
	mode_t m = t->st.st_mode;
	const char *what = S_ISDIR(m)    ? "a folder: a file name is needed"
	                   : S_ISSOCK(m) ? "a socket, which cannot be opened as a file: give a file name"
	                   : S_ISBLK(m)  ? "a block device (a disk), which nnnkit neither replaces nor writes into: "
	                                   "write a file, then copy it with dd if that is meant"
	                                 : NULL;
	if (what)
		return nnn_diags_add(diags, NNN_E_IO, NNN_NO_OFFSET, "", "cannot write %s: it is %s", path, what);
	char *file = malloc(strlen(t->dir) + strlen(t->base) + 2);
	int fd;
	if (!file)
		return nnn_diags_add(diags, NNN_E_NOMEM, NNN_NO_OFFSET, "", "cannot allocate a file name");
	sprintf(file, "%s/%s", t->dir, t->base);
	nnn_status_t st = open_stream(path, file, &t->st, &fd, diags);
	free(file);
	if (st != NNN_OK)
		return st;
	st = write_stream(fd, path, fill, ctx, diags);
	if (close(fd) != 0 && st == NNN_OK)
		st = nnn_diags_add(diags, NNN_E_IO, NNN_NO_OFFSET, "", "cannot close %s: %s", path, strerror(errno));
	return st;
}

nnn_status_t nnn_write_atomic(const char *path, nnn_status_t (*fill)(void *ctx, int fd, nnn_diags_t *diags),
                              void *ctx, nnn_diags_t *diags)
{
	target_t t;
	bool was;
	if (!path)
		return nnn_diags_add(diags, NNN_E_USAGE, NNN_NO_OFFSET, "", "nnn_write_atomic: path is NULL");
	if (!strcmp(path, "-"))
		return write_stream(STDOUT_FILENO, "standard output", fill, ctx, diags);
	nnn_status_t st = resolve(path, &t, diags);
	if (st != NNN_OK)
		return st;
	if (t.exists && !S_ISREG(t.st.st_mode)) {
		st = write_special(path, &t, fill, ctx, diags);
		target_free(&t);
		return st;
	}
	/* Same folder as the target, so rename() cannot cross file systems. */
	int dirfd = open(t.dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0) {
		st = nnn_diags_add(diags, NNN_E_IO, NNN_NO_OFFSET, "", "cannot open the folder %s to write %s: %s", t.dir,
		                   path, strerror(errno));
	} else if (t.exists && faccessat(dirfd, t.base, W_OK, AT_EACCESS) != 0) {
		/* As cp: a file its owner made read-only is not replaced behind
		 * their back (root may, as root may write it). */
		st = nnn_diags_add(diags, NNN_E_IO, NNN_NO_OFFSET, "",
		                   "cannot write %s: you may not write it (%s, mode %04o): make it writable or remove it first",
		                   path, strerror(errno), (unsigned)(t.st.st_mode & 07777));
	} else {
		block_xfsz(&was);
		st = write_in(dirfd, t.dir, t.base, t.exists ? &t.st : NULL, fill, ctx, diags);
		unblock_xfsz(was);
	}
	if (dirfd >= 0)
		close(dirfd);
	target_free(&t);
	return st;
}

int nnn_tmp_dir_make(const char *target, char *tmp, size_t size)
{
	target_t t;
	int fd = -1;
	if (resolve(target, &t, NULL) != NNN_OK)
		return errno = EACCES, -1;
	int dirfd = open(t.dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	size_t n = strlen(target);
	if (dirfd < 0)
		goto out;
	if (n + strlen(TMP_TAG) + TMP_RAND + 1 > size || strlen(t.base) + strlen(TMP_TAG) + TMP_RAND > NAME_MAX) {
		errno = ENAMETOOLONG;
		goto out;
	}
	sweep(dirfd, t.base);
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
	target_free(&t);
	return fd;
}

void nnn_tmp_dir_remove(const char *tmp, int fd)
{
	remove_dir_at(AT_FDCWD, tmp, fd);
	close(fd);
}

/* ---- what is written: bytes, or a model encoded into a buffered sink on
 * the descriptor (the file layer calls the codec, never the reverse) ---- */

#define FD_BUF ((size_t)1 << 20)

typedef struct fd_sink {
	nnn_sink_t base;
	int fd;
	unsigned char *buf;
	size_t len;
} fd_sink_t;

/* EFBIG: the process's file size limit (SIGXFSZ is blocked while
 * nnn_write_atomic writes, so the write fails instead of killing). */
static nnn_status_t too_big(nnn_diags_t *diags)
{
	struct rlimit r;
	if (getrlimit(RLIMIT_FSIZE, &r) == 0 && r.rlim_cur != RLIM_INFINITY)
		return nnn_diags_add(diags, NNN_E_IO, NNN_NO_OFFSET, "",
		                     "write failed: the file would exceed this process's file size limit of %llu bytes "
		                     "(RLIMIT_FSIZE, ulimit -f): raise the limit or write elsewhere",
		                     (unsigned long long)r.rlim_cur);
	return nnn_diags_add(diags, NNN_E_IO, NNN_NO_OFFSET, "", "write failed: %s: the file system refuses a file "
	                     "this large", strerror(EFBIG));
}

nnn_status_t nnn_write_all(int fd, const void *buf, size_t n, nnn_diags_t *diags)
{
	const unsigned char *p = buf;
	while (n) {
		ssize_t k = write(fd, p, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 && errno == EFBIG)
			return too_big(diags);
		if (k <= 0)
			return nnn_diags_add(diags, NNN_E_IO, NNN_NO_OFFSET, "", "write failed: %s",
			                     k < 0 ? strerror(errno) : "no progress");
		p += k;
		n -= (size_t)k;
	}
	return NNN_OK;
}

static nnn_status_t fd_flush(fd_sink_t *s)
{
	nnn_status_t st = nnn_write_all(s->fd, s->buf, s->len, s->base.diags);
	s->len = 0;
	return st;
}

static nnn_status_t fd_write(nnn_sink_t *self, const void *p, size_t n)
{
	fd_sink_t *s = (fd_sink_t *)self;
	if (n >= FD_BUF) {
		/* Large tensors go straight from the mapping to the kernel. */
		NNN_TRY(fd_flush(s));
		return nnn_write_all(s->fd, p, n, self->diags);
	}
	if (FD_BUF - s->len < n)
		NNN_TRY(fd_flush(s));
	memcpy(s->buf + s->len, p, n);
	s->len += n;
	return NNN_OK;
}

static nnn_status_t fill_model(void *ctx, int fd, nnn_diags_t *diags)
{
	fd_sink_t s = { .base = { .write = fd_write, .diags = diags }, .fd = fd };
	nnn_status_t st;
	s.buf = malloc(FD_BUF);
	if (!s.buf)
		return nnn_diags_add(diags, NNN_E_NOMEM, NNN_NO_OFFSET, "", "cannot allocate a write buffer");
	st = nnn_gen_encode(&s.base, ctx);
	if (st == NNN_OK)
		st = fd_flush(&s);
	free(s.buf);
	return st;
}

nnn_status_t nnn_model_write_file(const nnn_model_t *m, const char *path, nnn_diags_t *diags)
{
	return nnn_write_atomic(path, fill_model, (void *)m, diags);
}

typedef struct bytes {
	const void *b;
	size_t n;
} bytes_t;

static nnn_status_t fill_bytes(void *ctx, int fd, nnn_diags_t *diags)
{
	const bytes_t *x = ctx;
	return nnn_write_all(fd, x->b, x->n, diags);
}

nnn_status_t nnn_write_atomic_bytes(const char *path, const void *buf, size_t n, nnn_diags_t *diags)
{
	bytes_t x = { buf, n };
	return nnn_write_atomic(path, fill_bytes, &x, diags);
}
