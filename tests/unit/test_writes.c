/* test_writes.c: the one write path (nnn_write_atomic) and export under
 * failure: a file size limit, stale temporaries, the umask, symbolic
 * links; export all or nothing. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
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
