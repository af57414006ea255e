/* test_outputs.c: every command that writes a file, pointed at what must
 * never be replaced (issue 28): a copy of /dev/null and the real one, a
 * FIFO with a reader and one without, a dangling link, a link another user
 * planted in a sticky folder, a read-only file. Each output goes through
 * nnn_write_atomic; this sweep proves every command reaches it that way. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nnn/npy.h>

#include "clirun.h"
#include "ctx.h"
#include "shell.h"
#include "tmpdir.h"

#define PFX "nnnout."

TestSuite(outputs, .fini = t_tmpdir_remove);

/* Each command that writes, OUT where its output goes; ext: the name the
 * output would have (convert and run choose nothing by it here, but a
 * user's name would carry it); folder: it writes a folder (export), so
 * anything but a new name or an empty folder is refused. */
static const struct out_cmd {
	const char *name, *args, *ext;
	bool folder;
} cmds[] = {
	{ "convert-nnn", "convert m.nnn OUT --to nnn", "nnn", false },
	{ "convert-json", "convert m.nnn OUT --to json", "json", false },
	{ "convert-onnx", "convert m.nnn OUT --to onnx", "onnx", false },
	{ "convert-safetensors", "convert m.nnn OUT --to safetensors", "safetensors", false },
	{ "build", "build spec.json OUT", "nnn", false },
	{ "edit", "edit m.nnn -o OUT --description edited", "nnn", false },
	{ "edit-get", "edit m.nnn --get 'layers[0].bias' -o OUT", "npy", false },
	{ "run", "run m.nnn --input x.npy -o OUT", "npy", false },
	{ "map", "map m.nnn -o OUT", "html", false },
	{ "graph", "graph m.nnn -o OUT", "dot", false },
	{ "eval", "eval m.nnn --inputs x.npy --labels y.npy --misclassified OUT", "csv", false },
	{ "export", "export m.nnn OUT", "d", true },
};
#define NCMDS (sizeof cmds / sizeof cmds[0])

/* The model, its input, a wrong label (so eval lists a sample) and the
 * JSON spec build reads, in the test's folder. */
static const char *setup(void)
{
	const char *dir = t_tmpdir(PFX);
	cr_assert_eq(t_sh(NULL, 0, "cd %s && %s/mkexample m.nnn x.npy >/dev/null && %s convert m.nnn spec.json --to json",
	                  dir, t_build_dir(), nnnkit_bin()),
	             0);
	nnn_shape_t s = { .rank = 1, .dims = { 2 } };
	float labels[2] = { 3.0f, 3.0f };
	cr_assert_eq(nnn_npy_write_file(t_tmppath(PFX, "y.npy"), &s, labels, NULL), NNN_OK);
	return dir;
}

/* cmd's arguments with OUT replaced by out (shell-quoted). */
static const char *args_to(const struct out_cmd *c, const char *out, char *args, size_t size)
{
	const char *at = strstr(c->args, "OUT");
	snprintf(args, size, "%.*s'%s'%s", (int)(at - c->args), c->args, out, at + 3);
	return args;
}

/* Runs cmd with OUT replaced by out, in dir; rc, stderr in err. */
static int run_to(const char *dir, const struct out_cmd *c, const char *out, char *err, size_t size)
{
	char args[512];
	return t_sh(err, size, "cd %s && %s %s 2>&1 >/dev/null", dir, nnnkit_bin(), args_to(c, out, args, sizeof args));
}

static void expect_device(const char *path, const char *cmd)
{
	struct stat s;
	cr_assert_eq(lstat(path, &s), 0, "%s: %s", cmd, path);
	cr_assert(S_ISCHR(s.st_mode) && s.st_rdev == makedev(1, 3), "%s replaced %s (mode %o)", cmd, path,
	          (unsigned)s.st_mode);
}

/* A copy of /dev/null, then the real one: every command writes into it (a
 * folder writer refuses it), and it stays the null device. The real one is
 * checked again at the end of `make test`. */
Test(outputs, dev_null_survives_every_command, .timeout = 120)
{
	char err[4096];
	const char *dir = setup(), *copy = t_tmppath(PFX, "null");
	if (mknod(copy, S_IFCHR | 0666, makedev(1, 3)) != 0)
		cr_skip_test("outputs: cannot make a device node here (%s); the real /dev/null is still swept",
		             strerror(errno));
	const char *targets[] = { copy, "/dev/null" };
	for (size_t t = 0; t < 2; t++)
		for (size_t i = 0; i < NCMDS; i++) {
			int rc = run_to(dir, &cmds[i], targets[t], err, sizeof err);
			if (cmds[i].folder)
				cr_assert(rc != 0 && strstr(err, "exists and is not"), "%s into %s: rc %d: %s", cmds[i].name,
				          targets[t], rc, err);
			else
				cr_assert_eq(rc, 0, "%s into %s: %s", cmds[i].name, targets[t], err);
			expect_device(targets[t], cmds[i].name);
		}
}

/* A reader of the FIFO at path, copying what it gets into `into`. */
static pid_t fifo_reader(const char *path, const char *into)
{
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		execlp("sh", "sh", "-c", "exec cat \"$0\" > \"$1\"", path, into, (char *)NULL);
		_exit(127);
	}
	return pid;
}

/* Ends a reader whose writer never opened the FIFO (a refusal), then reaps
 * it: a writer end opened and closed once the reader has the FIFO open (it
 * may not have reached its open yet: until then there is no reader, and the
 * open fails), so it reads the end. A writer that replaced the FIFO left the
 * reader waiting on a FIFO no one can open any more: it is killed, as is a
 * reader that never came, and the caller's check fails. */
static void reap_reader(const char *path, pid_t pid)
{
	struct stat s;
	int status;
	for (int tries = 0; tries < 1000; tries++) { /* 10 s */
		if (waitpid(pid, &status, WNOHANG) == pid)
			return;
		if (lstat(path, &s) != 0 || !S_ISFIFO(s.st_mode))
			break;
		int fd = open(path, O_WRONLY | O_NONBLOCK);
		if (fd >= 0) {
			close(fd);
			cr_assert_eq(waitpid(pid, &status, 0), pid);
			return;
		}
		usleep(10000);
	}
	kill(pid, SIGKILL);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
}

/* Every command at once into a FIFO of its own that no one reads: each is
 * refused after its 2-second wait (together, not one after another: 2 s,
 * not 20), leaves the FIFO as it was, and says why. */
static void fifos_unread_refused(const char *dir)
{
	char script[8192] = "", args[512], err[4096];
	size_t n = 0;
	for (size_t i = 0; i < NCMDS; i++)
		if (!cmds[i].folder)
			n += (size_t)snprintf(script + n, sizeof script - n, "(%s %s >/dev/null 2>err-%zu; echo $? >rc-%zu) & ",
			                      nnnkit_bin(), args_to(&cmds[i], t_fmt("%s.%s", cmds[i].name, cmds[i].ext), args,
			                                            sizeof args), i, i);
	cr_assert_lt(n, sizeof script - 8);
	cr_assert_eq(t_sh(err, sizeof err, "cd %s || exit 1; %s wait", dir, script), 0, "%s", err);
	for (size_t i = 0; i < NCMDS; i++) {
		if (cmds[i].folder)
			continue;
		char rc[16] = "";
		struct stat s;
		slurp_keep(t_tmppath(PFX, t_fmt("rc-%zu", i)), rc, sizeof rc);
		slurp_keep(t_tmppath(PFX, t_fmt("err-%zu", i)), err, sizeof err);
		cr_assert(atoi(rc) != 0 && strstr(err, "it is a FIFO and nothing read it for 2 seconds"), "%s: rc %s: %s",
		          cmds[i].name, rc, err);
		const char *fifo = t_tmppath(PFX, t_fmt("%s.%s", cmds[i].name, cmds[i].ext));
		cr_assert(lstat(fifo, &s) == 0 && S_ISFIFO(s.st_mode), "%s replaced its FIFO", cmds[i].name);
	}
}

/* A FIFO with a reader gets exactly what a file would; one without is
 * refused after its 2-second wait. Neither is replaced. */
Test(outputs, fifos_streamed_or_refused, .timeout = 180)
{
	char err[4096];
	const char *dir = setup();
	for (size_t i = 0; i < NCMDS; i++) {
		const struct out_cmd *c = &cmds[i];
		const char *fifo = t_tmppath(PFX, t_fmt("%s.%s", c->name, c->ext)),
		           *ref = t_tmppath(PFX, t_fmt("ref-%s.%s", c->name, c->ext)),
		           *got = t_tmppath(PFX, t_fmt("got-%s", c->name));
		cr_assert_eq(mkfifo(fifo, 0600), 0);
		pid_t reader = fifo_reader(fifo, got);
		int rc = run_to(dir, c, fifo, err, sizeof err);
		reap_reader(fifo, reader);
		struct stat s;
		cr_assert(lstat(fifo, &s) == 0 && S_ISFIFO(s.st_mode), "%s replaced its FIFO", c->name);
		if (c->folder) {
			cr_assert(rc != 0 && strstr(err, "exists and is not"), "%s: rc %d: %s", c->name, rc, err);
			continue;
		}
		cr_assert_eq(rc, 0, "%s: %s", c->name, err);
		cr_assert_eq(run_to(dir, c, ref, err, sizeof err), 0, "%s: %s", c->name, err);
		cr_assert_eq(t_sh(err, sizeof err, "cmp '%s' '%s'", ref, got), 0, "%s: the FIFO got other bytes: %s", c->name,
		             err);
	}
	fifos_unread_refused(dir);
	cr_assert_eq(t_sh(err, sizeof err, "ls -A %s | grep -c '\\.tmp\\.'", dir), 1, "a temporary was left: %s", err);
}

/* A dangling link, and a link another user (nobody) planted in a sticky,
 * world-writable folder: refused by every command, nothing made or
 * changed. */
Test(outputs, links_dangling_or_planted_refused, .timeout = 120)
{
	char err[4096], got[64], pub[256], secret[256];
	const char *dir = setup();
	/* copies: t_tmppath's ring turns over in the loop */
	snprintf(pub, sizeof pub, "%s", t_tmppath(PFX, "pub"));
	snprintf(secret, sizeof secret, "%s", t_tmppath(PFX, "secret.conf"));
	cr_assert_eq(mkdir(pub, 0777), 0);
	cr_assert_eq(chmod(pub, 01777), 0);
	cr_assert_eq(t_sh(NULL, 0, "echo -n secret > %s", secret), 0);
	bool can_plant = true;
	for (size_t i = 0; i < NCMDS; i++) {
		const struct out_cmd *c = &cmds[i];
		const char *dangling = t_tmppath(PFX, t_fmt("dangling-%s", c->name)),
		           *planted = t_fmt("%s/%s.%s", pub, c->name, c->ext);
		cr_assert_eq(symlink(t_fmt("nowhere-%s", c->name), dangling), 0);
		int rc = run_to(dir, c, dangling, err, sizeof err);
		cr_assert(rc != 0, "%s wrote through a dangling link", c->name);
		cr_assert(access(t_tmppath(PFX, t_fmt("nowhere-%s", c->name)), F_OK) != 0, "%s made the link's file", c->name);

		cr_assert_eq(symlink(secret, planted), 0, "%s: %s", planted, strerror(errno));
		if (lchown(planted, 65534, 65534) != 0) {
			can_plant = false;
			continue;
		}
		rc = run_to(dir, c, planted, err, sizeof err);
		cr_assert(rc != 0, "%s wrote through a planted link", c->name);
		if (!c->folder)
			cr_assert(strstr(err, "a sticky folder anyone may write to"), "%s: %s", c->name, err);
		slurp_keep(secret, got, sizeof got);
		cr_assert_str_eq(got, "secret", "%s changed the planted link's file", c->name);
	}
	if (!can_plant)
		cr_log_warn("outputs/links_dangling_or_planted_refused: cannot give a link to another user here: the planted "
		            "links were not tried");
}

/* A read-only file that belongs to someone else: as that user (nobody, by
 * setpriv when the test runs as root) every command refuses to replace it,
 * and it keeps its bytes. */
Test(outputs, read_only_file_refused, .timeout = 120)
{
	char err[4096], got[64];
	const char *dir = setup();
	if (geteuid() != 0 || t_sh(NULL, 0, "setpriv --version") != 0)
		cr_skip_test("outputs: needs root and setpriv to run the commands as another user");
	cr_assert_eq(t_sh(err, sizeof err, "chmod 755 %s && chown -R 65534:65534 %s", dir, dir), 0, "%s", err);
	/* The growth drills build in private copies: there nobody may not reach
	 * nnnkit or its plugins (every command here needs the builtin one:
	 * kernels, export hooks), and the main run covers this. */
	if (t_sh(err, sizeof err,
	         "cd %s && NNN_PLUGIN_CACHE=/dev/null/none setpriv --reuid=65534 --regid=65534 --clear-groups %s convert "
	         "m.nnn - --to onnx >/dev/null",
	         dir, nnnkit_bin()) != 0)
		cr_skip_test("outputs: user nobody cannot run %s here (a private build folder): %.200s", nnnkit_bin(), err);
	for (size_t i = 0; i < NCMDS; i++) {
		const struct out_cmd *c = &cmds[i];
		if (c->folder)
			continue;
		const char *ro = t_tmppath(PFX, t_fmt("ro-%s.%s", c->name, c->ext));
		cr_assert_eq(t_sh(NULL, 0, "echo -n old > %s && chmod 444 %s && chown 65534:65534 %s", ro, ro, ro), 0);
		int rc = t_sh(err, sizeof err,
		              "cd %s && NNN_PLUGIN_CACHE=/dev/null/none setpriv --reuid=65534 --regid=65534 --clear-groups "
		              "%s %s 2>&1 >/dev/null",
		              dir, nnnkit_bin(), t_fmt("%.*s'%s'%s", (int)(strstr(c->args, "OUT") - c->args), c->args, ro,
		                                       strstr(c->args, "OUT") + 3));
		cr_assert(rc != 0 && strstr(err, "you may not write it"), "%s: rc %d: %s", c->name, rc, err);
		slurp_keep(ro, got, sizeof got);
		cr_assert_str_eq(got, "old", "%s replaced a read-only file", c->name);
	}
}
