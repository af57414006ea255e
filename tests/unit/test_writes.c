/* test_writes.c: the one write path (nnn_write_atomic) and export under
 * failure: a file size limit, stale temporaries, the umask and mode bits,
 * symbolic links (planted ones too), devices, FIFOs and sockets written in
 * place or refused, never replaced; export all or nothing. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <nnn/file.h>

#include "builder.h"
#include "clirun.h"
#include "shell.h"

/* A fresh folder; *model is a 64 KiB model written in it as big.nnn. */
static void setup(char *dir, size_t size, bb_t *b)
{
	snprintf(dir, size, "/tmp/nnnwrites.XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	int32_t bias[1] = { 4 }, w[2] = { 4096, 4 };
	bb_header(b, "big", 4 + 4 * 4096, 1);
	bb_u8(b, 0), bb_u8(b, 0), bb_f32(b, 0);
	bb_i32s(b, 1, bias), bb_u8(b, 1), bb_i32(b, 4);
	for (int i = 0; i < 4; i++)
		bb_f32(b, 1.0f);
	bb_i32(b, 4);
	bb_i32s(b, 2, w), bb_u8(b, 1), bb_i32(b, 4096 * 4);
	for (int32_t i = 0; i < 4096 * 4; i++)
		bb_f32(b, 0.5f);
	bb_u8(b, 0);
	cr_assert_eq(nnn_write_atomic_bytes(t_fmt("%s/big.nnn", dir), b->b, b->n, NULL), NNN_OK);
}

static void cleanup(const char *dir)
{
	cr_assert_eq(t_sh(NULL, 0, "rm -rf %s", dir), 0);
}

/* The names in dir, sorted, space-separated. */
static const char *names(const char *dir)
{
	static char out[4096];
	cr_assert_eq(t_sh(out, sizeof out, "ls -A %s | tr '\\n' ' '", dir), 0);
	return out;
}

static mode_t mode_of(const char *path)
{
	struct stat s;
	cr_assert_eq(lstat(path, &s), 0, "%s", path);
	return s.st_mode;
}

/* Over `ulimit -f 10` (sh's 512-byte blocks: 5 KiB), convert of a 64 KiB model fails with a
 * message naming the limit: no SIGXFSZ death, the old target intact, no
 * temporary left. */
Test(writes, file_size_limit_is_an_error_not_a_signal)
{
	char dir[64], out[4096];
	bb_t b = { 0 };
	setup(dir, sizeof dir, &b);
	cr_assert_eq(nnn_write_atomic_bytes(t_fmt("%s/t.nnn", dir), "old", 3, NULL), NNN_OK);
	int st = t_sh(out, sizeof out, "cd %s && ulimit -f 10 && %s convert big.nnn t.nnn", dir, nnnkit_bin());
	cr_assert_eq(st, 2, "exit status %d (%d: killed by SIGXFSZ): %s", st, 128 + 25, out);
	cr_assert(strstr(out, "nnnkit: t.nnn: input/output error: write failed: the file would exceed this process's "
	                      "file size limit of 5120 bytes (RLIMIT_FSIZE, ulimit -f)"), "%s", out);
	cr_assert_str_eq(names(dir), "big.nnn t.nnn ");
	char old[8] = "";
	slurp_keep(t_fmt("%s/t.nnn", dir), old, sizeof old);
	cr_assert_str_eq(old, "old");
	/* A new target: nothing is made. */
	st = t_sh(out, sizeof out, "cd %s && ulimit -f 10 && %s convert big.nnn new.nnn", dir, nnnkit_bin());
	cr_assert_eq(st, 2, "%s", out);
	cr_assert_str_eq(names(dir), "big.nnn t.nnn ");
	bb_free(&b);
	cleanup(dir);
}

/* Temporaries of the target that no live writer holds are removed by the
 * next write; a held one, another target's, a name off the pattern and
 * a symbolic link are kept. */
Test(writes, stale_temporaries_are_swept_safely)
{
	char dir[64];
	bb_t b = { 0 };
	setup(dir, sizeof dir, &b);
	const char *keep[] = { "other.nnn.tmp.AbC123", "t.nnn.tmp.AbC12", "t.nnn.tmp.AbC1234", "t.nnn.tmp.Ab-123",
	                       "t.nnnx.tmp.AbC123" };
	for (size_t i = 0; i < sizeof keep / sizeof keep[0]; i++)
		cr_assert_eq(nnn_write_atomic_bytes(t_fmt("%s/%s", dir, keep[i]), "x", 1, NULL), NNN_OK);
	cr_assert_eq(nnn_write_atomic_bytes(t_fmt("%s/t.nnn.tmp.Stale1", dir), "x", 1, NULL), NNN_OK);
	cr_assert_eq(symlink("big.nnn", t_fmt("%s/t.nnn.tmp.Link12", dir)), 0);
	/* held: as a live writer holds its temporary */
	cr_assert_eq(nnn_write_atomic_bytes(t_fmt("%s/t.nnn.tmp.Held12", dir), "x", 1, NULL), NNN_OK);
	int held = open(t_fmt("%s/t.nnn.tmp.Held12", dir), O_RDONLY);
	cr_assert_eq(flock(held, LOCK_EX), 0);
	cr_assert_eq(nnn_write_atomic_bytes(t_fmt("%s/t.nnn", dir), "new", 3, NULL), NNN_OK);
	cr_assert_str_eq(names(dir), "big.nnn other.nnn.tmp.AbC123 t.nnn t.nnn.tmp.Ab-123 t.nnn.tmp.AbC12 "
	                             "t.nnn.tmp.AbC1234 t.nnn.tmp.Held12 t.nnn.tmp.Link12 t.nnnx.tmp.AbC123 ");
	close(held);
	cr_assert_eq(nnn_write_atomic_bytes(t_fmt("%s/t.nnn", dir), "new", 3, NULL), NNN_OK);
	cr_assert(!strstr(names(dir), "Held12"), "%s", names(dir));
	bb_free(&b);
	cleanup(dir);
}

/* A new file has 0666 less the umask; a replaced one keeps its mode. */
Test(writes, umask_and_kept_mode)
{
	char dir[64];
	bb_t b = { 0 };
	setup(dir, sizeof dir, &b);
	static const struct { mode_t umask, mode; } cases[] = { { 077, 0600 }, { 022, 0644 }, { 002, 0664 } };
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const char *p = t_fmt("%s/new%zu.nnn", dir, i);
		mode_t was = umask(cases[i].umask);
		cr_assert_eq(nnn_write_atomic_bytes(p, "x", 1, NULL), NNN_OK);
		umask(was);
		cr_assert_eq(mode_of(p) & 07777, cases[i].mode, "umask %03o: mode %03o", (unsigned)cases[i].umask,
		             (unsigned)(mode_of(p) & 07777));
	}
	/* the CLI too */
	cr_assert_eq(t_sh(NULL, 0, "cd %s && umask 077 && %s convert big.nnn c.nnn", dir, nnnkit_bin()), 0);
	cr_assert_eq(mode_of(t_fmt("%s/c.nnn", dir)) & 07777, 0600);
	const char *p = t_fmt("%s/kept.nnn", dir);
	cr_assert_eq(nnn_write_atomic_bytes(p, "x", 1, NULL), NNN_OK);
	cr_assert_eq(chmod(p, 0640), 0);
	mode_t was = umask(077);
	cr_assert_eq(nnn_write_atomic_bytes(p, "y", 1, NULL), NNN_OK);
	umask(was);
	cr_assert_eq(mode_of(p) & 07777, 0640);
	bb_free(&b);
	cleanup(dir);
}

/* A symbolic link is written through (its file replaced, the link kept,
 * also across folders); a link to nothing is refused and nothing made. A
 * hard link's other name keeps the old contents. */
Test(writes, symlinks_written_through_hard_links_split)
{
	char dir[64], got[16];
	bb_t b = { 0 };
	setup(dir, sizeof dir, &b);
	cr_assert_eq(t_sh(NULL, 0, "mkdir %s/sub && echo -n old > %s/sub/real.nnn && ln -s sub/real.nnn %s/link.nnn",
	                  dir, dir, dir), 0);
	cr_assert_eq(nnn_write_atomic_bytes(t_fmt("%s/link.nnn", dir), "new", 3, NULL), NNN_OK);
	cr_assert(S_ISLNK(mode_of(t_fmt("%s/link.nnn", dir))), "the link was replaced");
	slurp_keep(t_fmt("%s/sub/real.nnn", dir), got, sizeof got);
	cr_assert_str_eq(got, "new");
	cr_assert_str_eq(names(t_fmt("%s/sub", dir)), "real.nnn ");

	nnn_diags_t d;
	nnn_diags_init(&d);
	cr_assert_eq(symlink("nowhere.nnn", t_fmt("%s/dangling.nnn", dir)), 0);
	cr_assert_eq(nnn_write_atomic_bytes(t_fmt("%s/dangling.nnn", dir), "new", 3, &d), NNN_E_IO);
	cr_assert(strstr(d.v[0].msg, "dangling.nnn: it is a symbolic link, and the file it names cannot be found"), "%s",
	          d.v[0].msg);
	cr_assert(!strstr(names(dir), "nowhere"), "%s", names(dir));
	nnn_diags_free(&d);

	cr_assert_eq(link(t_fmt("%s/sub/real.nnn", dir), t_fmt("%s/hard.nnn", dir)), 0);
	cr_assert_eq(nnn_write_atomic_bytes(t_fmt("%s/hard.nnn", dir), "newer", 5, NULL), NNN_OK);
	slurp_keep(t_fmt("%s/hard.nnn", dir), got, sizeof got);
	cr_assert_str_eq(got, "newer");
	slurp_keep(t_fmt("%s/sub/real.nnn", dir), got, sizeof got);
	cr_assert_str_eq(got, "new");
	bb_free(&b);
	cleanup(dir);
}

/* The permission bits of a replaced file are kept; its set-uid, set-gid
 * and sticky bits are not (as install and cp onto a new file): an edit as
 * root of a 4755 file must not leave a root-owned set-uid file. */
Test(writes, set_id_bits_dropped)
{
	char dir[64];
	bb_t b = { 0 };
	setup(dir, sizeof dir, &b);
	static const mode_t modes[] = { 04755, 02750, 01777, 06711 };
	for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
		const char *p = t_fmt("%s/big.nnn", dir);
		cr_assert_eq(chmod(p, modes[i]), 0);
		cr_assert_eq(nnn_write_atomic_bytes(p, b.b, b.n, NULL), NNN_OK);
		cr_assert_eq(mode_of(p) & 07777, modes[i] & 0777, "%04o became %04o", (unsigned)modes[i],
		             (unsigned)(mode_of(p) & 07777));
	}
	/* the CLI's edit in place, as the repro */
	cr_assert_eq(chmod(t_fmt("%s/big.nnn", dir), 04755), 0);
	cr_assert_eq(t_sh(NULL, 0, "%s edit %s/big.nnn -o %s/big.nnn --description y", nnnkit_bin(), dir, dir), 0);
	cr_assert_eq(mode_of(t_fmt("%s/big.nnn", dir)) & 07777, 0755);
	bb_free(&b);
	cleanup(dir);
}

/* The bytes a FIFO's reader got, read in a child while `path` is written. */
static pid_t fifo_reader(const char *fifo, const char *into)
{
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0)
		_exit(execlp("sh", "sh", "-c", "cat \"$0\" > \"$1\"", fifo, into, (char *)NULL) ? 127 : 0);
	return pid;
}

/* A FIFO or a character device is written in place and stays what it was;
 * "-" is standard output. A FIFO nobody reads is refused after its wait,
 * never replaced and without a temporary left. */
Test(writes, fifos_and_devices_written_in_place, .timeout = 60)
{
	char dir[64], got[16];
	bb_t b = { 0 };
	setup(dir, sizeof dir, &b);
	const char *fifo = t_fmt("%s/f.nnn", dir), *into = t_fmt("%s/got", dir);
	cr_assert_eq(mkfifo(fifo, 0600), 0);
	pid_t reader = fifo_reader(fifo, into);
	cr_assert_eq(nnn_write_atomic_bytes(fifo, "through", 7, NULL), NNN_OK);
	int status;
	cr_assert_eq(waitpid(reader, &status, 0), reader);
	slurp_keep(into, got, sizeof got);
	cr_assert_str_eq(got, "through");
	cr_assert(S_ISFIFO(mode_of(fifo)));

	nnn_diags_t d;
	nnn_diags_init(&d);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	cr_assert_eq(nnn_write_atomic_bytes(fifo, "nobody", 6, &d), NNN_E_IO);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	cr_assert(strstr(d.v[0].msg, "f.nnn: it is a FIFO and nothing read it for 2 seconds: start its reader first"),
	          "%s", d.v[0].msg);
	cr_assert_lt(t1.tv_sec - t0.tv_sec, 10, "the writer waited %lds", (long)(t1.tv_sec - t0.tv_sec));
	cr_assert(S_ISFIFO(mode_of(fifo)));
	nnn_diags_free(&d);

	/* "-": standard output, here a pipe */
	int p[2], out = dup(STDOUT_FILENO);
	cr_assert_eq(pipe(p), 0);
	cr_assert_eq(dup2(p[1], STDOUT_FILENO), STDOUT_FILENO);
	cr_assert_eq(nnn_write_atomic_bytes("-", "stdout", 6, NULL), NNN_OK);
	cr_assert_eq(dup2(out, STDOUT_FILENO), STDOUT_FILENO);
	close(p[1]);
	close(out);
	cr_assert_eq(read(p[0], got, sizeof got), 6);
	close(p[0]);
	cr_assert(!strncmp(got, "stdout", 6));
	cr_assert(!strstr(names(dir), ".tmp."), "%s", names(dir));

	/* a copy of /dev/null (needs CAP_MKNOD: root, as CI runs) */
	const char *null = t_fmt("%s/null", dir);
	if (mknod(null, S_IFCHR | 0666, makedev(1, 3)) != 0) {
		cr_log_warn("writes/fifos_and_devices_written_in_place: cannot make a device node here (%s): its part skipped",
		            strerror(errno));
	} else {
		cr_assert_eq(nnn_write_atomic_bytes(null, b.b, b.n, NULL), NNN_OK);
		struct stat s;
		cr_assert_eq(lstat(null, &s), 0);
		cr_assert(S_ISCHR(s.st_mode) && s.st_rdev == makedev(1, 3), "the device was replaced");
		/* and through a link to it, as /dev/stdout is one */
		cr_assert_eq(symlink("null", t_fmt("%s/tonull", dir)), 0);
		cr_assert_eq(nnn_write_atomic_bytes(t_fmt("%s/tonull", dir), "x", 1, NULL), NNN_OK);
		cr_assert(S_ISCHR(mode_of(null)));
	}
	cr_assert(!strstr(names(dir), ".tmp."), "%s", names(dir));
	bb_free(&b);
	cleanup(dir);
}

/* A folder, a socket and a block device are refused, each naming what it
 * is, and stay what they were. */
Test(writes, folders_sockets_block_devices_refused)
{
	char dir[64];
	bb_t b = { 0 };
	setup(dir, sizeof dir, &b);
	nnn_diags_t d;
	nnn_diags_init(&d);

	cr_assert_eq(mkdir(t_fmt("%s/sub", dir), 0700), 0);
	cr_assert_eq(nnn_write_atomic_bytes(t_fmt("%s/sub", dir), "x", 1, &d), NNN_E_IO);
	cr_assert(strstr(d.v[0].msg, "sub: it is a folder: a file name is needed"), "%s", d.v[0].msg);
	cr_assert(S_ISDIR(mode_of(t_fmt("%s/sub", dir))));

	struct sockaddr_un a = { .sun_family = AF_UNIX };
	snprintf(a.sun_path, sizeof a.sun_path, "%s/sock", dir);
	int sk = socket(AF_UNIX, SOCK_STREAM, 0);
	cr_assert_eq(bind(sk, (struct sockaddr *)&a, sizeof a), 0);
	nnn_diags_clear(&d);
	cr_assert_eq(nnn_write_atomic_bytes(a.sun_path, "x", 1, &d), NNN_E_IO);
	cr_assert(strstr(d.v[0].msg, "sock: it is a socket"), "%s", d.v[0].msg);
	cr_assert(S_ISSOCK(mode_of(a.sun_path)));
	close(sk);

	/* a block device node (loop0's numbers); nothing is ever opened */
	const char *blk = t_fmt("%s/disk", dir);
	if (mknod(blk, S_IFBLK | 0600, makedev(7, 0)) == 0) {
		nnn_diags_clear(&d);
		cr_assert_eq(nnn_write_atomic_bytes(blk, "x", 1, &d), NNN_E_IO);
		cr_assert(strstr(d.v[0].msg, "disk: it is a block device"), "%s", d.v[0].msg);
		cr_assert(S_ISBLK(mode_of(blk)));
	} else {
		cr_log_warn("writes/folders_sockets_block_devices_refused: no device nodes here (%s): that part skipped",
		            strerror(errno));
	}
	cr_assert(!strstr(names(dir), ".tmp."), "%s", names(dir));
	nnn_diags_free(&d);
	bb_free(&b);
	cleanup(dir);
}

/* The kernel's fs.protected_symlinks rule, whatever the sysctl says: a link
 * in a sticky world-writable folder is followed only when it belongs to the
 * writer or to the folder's owner. As root (CI) the link is given to
 * nobody, as another user would plant it. */
Test(writes, planted_links_refused)
{
	char dir[64], got[16];
	bb_t b = { 0 };
	setup(dir, sizeof dir, &b);
	const char *pub = t_fmt("%s/pub", dir), *secret = t_fmt("%s/secret.conf", dir),
	           *link = t_fmt("%s/pub/out.nnn", dir);
	cr_assert_eq(mkdir(pub, 0777), 0);
	cr_assert_eq(chmod(pub, 01777), 0);
	cr_assert_eq(t_sh(NULL, 0, "echo -n secret > %s", secret), 0);
	cr_assert_eq(symlink(secret, link), 0);
	if (lchown(link, 65534, 65534) != 0) {
		cr_log_warn("writes/planted_links_refused: cannot give a link to another user here (%s): skipped",
		            strerror(errno));
		bb_free(&b);
		cleanup(dir);
		return;
	}
	nnn_diags_t d;
	nnn_diags_init(&d);
	cr_assert_eq(nnn_write_atomic_bytes(link, "owned", 5, &d), NNN_E_IO);
	cr_assert(strstr(d.v[0].msg, "pub/out.nnn is a symbolic link in ") &&
	              strstr(d.v[0].msg, "a sticky folder anyone may write to, and it belongs to user 65534"),
	          "%s", d.v[0].msg);
	slurp_keep(secret, got, sizeof got);
	cr_assert_str_eq(got, "secret");
	/* the CLI says the same, and leaves the file */
	cr_assert_eq(t_sh(NULL, 0, "%s convert %s/big.nnn %s --to nnn 2>/dev/null", nnnkit_bin(), dir, link), 2);
	slurp_keep(secret, got, sizeof got);
	cr_assert_str_eq(got, "secret");
	/* a link further down a chain is checked too */
	cr_assert_eq(symlink(link, t_fmt("%s/chain.nnn", dir)), 0);
	nnn_diags_clear(&d);
	cr_assert_eq(nnn_write_atomic_bytes(t_fmt("%s/chain.nnn", dir), "owned", 5, &d), NNN_E_IO);
	slurp_keep(secret, got, sizeof got);
	cr_assert_str_eq(got, "secret");

	/* the writer's own link, or the folder owner's, is followed */
	cr_assert_eq(lchown(link, geteuid(), getegid()), 0);
	cr_assert_eq(nnn_write_atomic_bytes(link, "mine", 4, NULL), NNN_OK);
	slurp_keep(secret, got, sizeof got);
	cr_assert_str_eq(got, "mine");
	cr_assert_eq(chown(pub, 65534, 65534), 0);
	cr_assert_eq(lchown(link, 65534, 65534), 0);
	cr_assert_eq(nnn_write_atomic_bytes(link, "owner's", 7, NULL), NNN_OK);
	slurp_keep(secret, got, sizeof got);
	cr_assert_str_eq(got, "owner's");
	/* not sticky: the folder's writers could replace the file anyway */
	cr_assert_eq(chown(pub, 0, 0), 0);
	cr_assert_eq(chmod(pub, 0777), 0);
	cr_assert_eq(nnn_write_atomic_bytes(link, "plain", 5, NULL), NNN_OK);
	nnn_diags_free(&d);
	bb_free(&b);
	cleanup(dir);
}

/* A file its writer may not write is refused, not replaced behind its
 * owner's back (as cp); root may write it, so root replaces it. Checked as
 * nobody in a child when the test runs as root. */
Test(writes, read_only_file_refused_unless_root)
{
	char dir[64], got[16];
	bb_t b = { 0 };
	setup(dir, sizeof dir, &b);
	const char *ro = t_fmt("%s/ro.nnn", dir);
	cr_assert_eq(t_sh(NULL, 0, "echo -n old > %s && chmod 444 %s", ro, ro), 0);
	if (geteuid() != 0) {
		cr_assert_eq(nnn_write_atomic_bytes(ro, "new", 3, NULL), NNN_E_IO);
	} else {
		cr_assert_eq(chown(dir, 65534, 65534), 0);
		cr_assert_eq(chown(ro, 65534, 65534), 0);
		cr_assert_eq(nnn_write_atomic_bytes(ro, "root", 4, NULL), NNN_OK);
		cr_assert_eq(mode_of(ro) & 0777, 0444);
		cr_assert_eq(chown(ro, 65534, 65534), 0);
		pid_t pid = fork();
		cr_assert_geq(pid, 0);
		if (pid == 0) {
			nnn_diags_t d;
			nnn_diags_init(&d);
			if (setgid(65534) || setuid(65534))
				_exit(3);
			nnn_status_t st = nnn_write_atomic_bytes(ro, "nobody", 6, &d);
			_exit(st == NNN_E_IO && strstr(d.v[0].msg, "ro.nnn: you may not write it") &&
			              strstr(d.v[0].msg, "mode 0444")
			          ? 0
			          : 1);
		}
		int status;
		cr_assert_eq(waitpid(pid, &status, 0), pid);
		cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "as nobody: status %d", status);
	}
	slurp_keep(ro, got, sizeof got);
	cr_assert_str_eq(got, geteuid() ? "old" : "root");
	cr_assert(!strstr(names(dir), ".tmp."), "%s", names(dir));
	bb_free(&b);
	cleanup(dir);
}

/* export under a file size limit (as on a full disk: every write fails
 * from some point) leaves no folder, and no temporary folder; an existing
 * non-empty folder is refused untouched; an empty one is filled. */
Test(writes, export_all_or_nothing)
{
	char dir[64], out[4096];
	bb_t b = { 0 };
	setup(dir, sizeof dir, &b);
	int st = t_sh(out, sizeof out, "cd %s && ulimit -f 20 && %s export big.nnn out", dir, nnnkit_bin());
	cr_assert_eq(st, 2, "exit status %d: %s", st, out);
	cr_assert(strstr(out, "layers.0.weights.npy: write failed: the file would exceed"), "%s", out);
	cr_assert_str_eq(names(dir), "big.nnn ");

	cr_assert_eq(t_sh(NULL, 0, "mkdir %s/full && echo keep > %s/full/mine.txt", dir, dir), 0);
	st = t_sh(out, sizeof out, "%s export %s/big.nnn %s/full/", nnnkit_bin(), dir, dir);
	cr_assert_eq(st, 2, "%s", out);
	cr_assert(strstr(out, "/full: exists and is not an empty folder"), "%s", out);
	cr_assert_str_eq(names(t_fmt("%s/full", dir)), "mine.txt ");

	cr_assert_eq(mkdir(t_fmt("%s/empty", dir), 0700), 0);
	st = t_sh(out, sizeof out, "%s export %s/big.nnn %s/empty/", nnnkit_bin(), dir, dir);
	cr_assert_eq(st, 0, "%s", out);
	cr_assert_str_eq(names(t_fmt("%s/empty", dir)), "index.json layers.0.bias.npy layers.0.weights.npy model.json ");
	cr_assert_str_eq(names(dir), "big.nnn empty full ");
	bb_free(&b);
	cleanup(dir);
}

/* A killed export leaves its temporary folder (SIGKILL releases its lock):
 * the next export of the same folder removes it, and only it. One whose
 * lock is held (a live export) stays, as do other names. */
Test(writes, export_sweeps_folders_of_killed_exports)
{
	char dir[64], out[4096];
	bb_t b = { 0 };
	setup(dir, sizeof dir, &b);
	cr_assert_eq(t_sh(NULL, 0, "cd %s && mkdir out.tmp.Stale1 out.tmp.Held12 out.tmp.Ab-123 other.tmp.AbC123 && "
	                  "echo x > out.tmp.Stale1/model.json && echo x > out.tmp.Stale1/layers.0.bias.npy", dir), 0);
	int held = open(t_fmt("%s/out.tmp.Held12", dir), O_RDONLY | O_DIRECTORY);
	cr_assert_eq(flock(held, LOCK_EX), 0);
	/* a real one: killed while it writes (stopped first, so that it is mid-way) */
	int st = t_sh(out, sizeof out, "cd %s && { %s export big.nnn out & p=$!; kill -STOP $p; kill -KILL $p; "
	              "wait $p; } 2>/dev/null; ls -d out.tmp.* | wc -l", dir, nnnkit_bin());
	cr_assert_eq(st, 0, "%s", out);

	st = t_sh(out, sizeof out, "cd %s && %s export big.nnn out", dir, nnnkit_bin());
	cr_assert_eq(st, 0, "exit status %d: %s", st, out);
	cr_assert_str_eq(names(dir), "big.nnn other.tmp.AbC123 out out.tmp.Ab-123 out.tmp.Held12 ");
	close(held);
	bb_free(&b);
	cleanup(dir);
}
