/* test_hardening.c: nnnkit never loses a file, never runs out of memory on
 * a length bomb, survives a crashing plugin, names the layer whose kernel
 * failed, and leaves no process of a conformance decoder or reference
 * command behind (issue 28). */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <nnn/file.h>
#include <nnn/npy.h>
#include <nnn/run.h>
#include <nnn/validate.h>

#include "blackbox.h"
#include "builder.h"
#include "ctx.h"
#include "shell.h"

/* A one-layer Dense model whose weights are `inputs` x 4 floats of `fill`. */
static void big_model(bb_t *b, int32_t inputs, float fill)
{
	int32_t bias[1] = { 4 }, w[2] = { inputs, 4 };
	bb_header(b, "big", 4 + 4 * (uint64_t)inputs, 1);
	bb_u8(b, 0), bb_u8(b, 0), bb_f32(b, 0);
	bb_i32s(b, 1, bias), bb_u8(b, 1), bb_i32(b, 4);
	for (int i = 0; i < 4; i++)
		bb_f32(b, fill);
	bb_i32(b, 4);
	bb_i32s(b, 2, w), bb_u8(b, 1), bb_i32(b, inputs * 4);
	for (int32_t i = 0; i < inputs * 4; i++)
		bb_f32(b, fill);
	bb_u8(b, 0);
}

static unsigned char *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	cr_assert_not_null(f);
	fseek(f, 0, SEEK_END);
	*n = (size_t)ftell(f);
	fseek(f, 0, SEEK_SET);
	unsigned char *p = malloc(*n + 1);
	cr_assert_eq(fread(p, 1, *n, f), *n);
	fclose(f);
	return p;
}

static int entries(const char *dir)
{
	int n = 0;
	DIR *d = opendir(dir);
	struct dirent *e;
	while ((e = readdir(d)) != NULL)
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/* Kills a writer at many points of a 32 MiB write: the target is always the
 * old file or the whole new one, never a mixture; a clean write leaves no
 * temporary file, and the next write removes those killed writers left. */
Test(hardening, kill_during_write_never_mixes, .timeout = 120)
{
	char dir[] = "/tmp/nnnkill.XXXXXX", path[64];
	bb_t old = { 0 }, neu = { 0 };
	nnn_model_t *m;
	struct timespec t0, t1;
	if (t_under_valgrind())
		cr_skip_test("forks writers and times kills: too slow under valgrind; run by make test and test-asan");
	cr_assert_not_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/model.nnn", dir);
	big_model(&old, 1 << 20, 1.0f); /* 16 MiB */
	big_model(&neu, 2 << 20, 2.0f); /* 32 MiB */
	cr_assert_eq(nnn_model_decode(neu.b, neu.n, NULL, &m, NULL), NNN_OK);

	/* How long one whole write takes, to spread the kills over it. */
	cr_assert_eq(nnn_model_write_file(m, path, NULL), NNN_OK);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	cr_assert_eq(nnn_model_write_file(m, path, NULL), NNN_OK);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	cr_assert_eq(entries(dir), 1, "a clean write left a temporary file");
	long full_us = (t1.tv_sec - t0.tv_sec) * 1000000L + (t1.tv_nsec - t0.tv_nsec) / 1000;

	int olds = 0, news = 0;
	/* 40 kills spread over three times a clean write, then later ones until
	 * both outcomes are seen: on a loaded machine a write can take longer. */
	int k;
	for (k = 0; k < 200 && (k < 40 || !olds || !news); k++) {
		FILE *f = fopen(path, "wb");
		fwrite(old.b, 1, old.n, f);
		fclose(f);
		pid_t pid = fork();
		cr_assert_geq(pid, 0);
		if (pid == 0)
			_exit(nnn_model_write_file(m, path, NULL) == NNN_OK ? 0 : 1);
		long ns = (long)k * (full_us * 3000L / 40);
		struct timespec wait = { ns / 1000000000L, ns % 1000000000L };
		nanosleep(&wait, NULL);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		size_t n;
		unsigned char *got = slurp(path, &n);
		int is_old = n == old.n && !memcmp(got, old.b, n), is_new = n == neu.n && !memcmp(got, neu.b, n);
		cr_assert(is_old || is_new, "kill %d (%ld us in): the target is neither file (%zu bytes)", k, ns / 1000, n);
		olds += is_old, news += is_new;
		free(got);
	}
	cr_log_info("kills: of %d, %d left the old file, %d the new one (a write takes %ld us)", k, olds, news,
	            full_us);
	cr_assert_gt(olds, 0, "no kill landed before the rename");
	cr_assert_gt(news, 0, "no writer finished: the kills did not cover a whole write");
	/* What killed writers left, the next write of the target removes. */
	int left = entries(dir) - 1;
	cr_assert_eq(nnn_model_write_file(m, path, NULL), NNN_OK);
	cr_log_info("kills left %d temporary files; the next write left %d", left, entries(dir) - 1);
	cr_assert_eq(entries(dir), 1, "the write after %d kills left %d of their %d temporary files", k,
	             entries(dir) - 1, left);

	char cmd[64];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	cr_assert_eq(system(cmd), 0);
	nnn_model_free(m);
	bb_free(&old);
	bb_free(&neu);
}

/* Tiny files that claim huge counts, through the CLI under a 64 MiB
 * address-space limit (the bombs ask for GiBs). */
Test(hardening, cli_length_bombs_under_memory_limit)
{
	static const size_t at[] = { 4, 20, 34, 43, 72 };
	const char *kit = nnnkit_bin();
	char cmd[1024];
#if T_ASAN
	cr_skip_test("ASan reserves terabytes of address space: the memory limit runs in make test");
#endif
	if (t_under_valgrind())
		cr_skip_test("valgrind needs address space of its own: the memory limit runs in make test");
	for (size_t i = 0; i < sizeof at / sizeof at[0]; i++) {
		bb_t b = { 0 };
		bb_tiny(&b);
		bb_put_i32(&b, at[i], 0x7fffffff);
		const char *path = bb_to_file(&b, "bomb.nnn");
		snprintf(cmd, sizeof cmd, "ulimit -v 65536; %s validate %s >/dev/null 2>&1", kit, path);
		int st = system(cmd);
		cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 1, "bomb at %zu: status %d", at[i], st);
		snprintf(cmd, sizeof cmd, "ulimit -v 65536; %s dump %s >/dev/null 2>&1", kit, path);
		st = system(cmd);
		cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 1, "dump of bomb at %zu: status %d", at[i], st);
		bb_free(&b);
	}
}

/* info and run under 64 MiB of address space, each within 20 s: the
 * builtin plugin loads OpenBLAS only for its portable path, and OpenBLAS,
 * once linked into it, spun at start-up under such a limit without ever
 * reading the model. */
Test(hardening, cli_under_64_mib_does_not_hang, .timeout = 120)
{
	const char *kit = nnnkit_bin();
	char cmd[2048], npy[1024];
	bb_t b = { 0 };
	nnn_shape_t shape = { .rank = 2, .dims = { 2, 3 } };
	const float x[6] = { 1, 2, 3, 4, 5, 6 };
#if T_ASAN
	cr_skip_test("ASan reserves terabytes of address space: the memory limit runs in make test");
#endif
	if (t_under_valgrind())
		cr_skip_test("valgrind needs address space of its own: the memory limit runs in make test");
	bb_tiny(&b);
	const char *model = bb_to_file(&b, "tiny.nnn");
	snprintf(cmd, sizeof cmd, "timeout 20 sh -c 'ulimit -v 65536; exec %s info %s' >/dev/null 2>&1", kit, model);
	int st = system(cmd);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "info under 64 MiB: exit status %d (124: it hung)",
	          WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	/* run: where the AVX2/AVX-512 path runs (the portable one needs OpenBLAS) */
	bool fast = false;
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
	__builtin_cpu_init();
	fast = !getenv("NNN_BUILTIN_ISA") && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#endif
	if (!fast) {
		bb_free(&b);
		cr_skip_test("no AVX2 and FMA, or NNN_BUILTIN_ISA is set: run would load OpenBLAS");
	}
	snprintf(npy, sizeof npy, "%s", model);
	snprintf(strrchr(npy, '/'), sizeof npy - (size_t)(strrchr(npy, '/') - npy), "/x.npy");
	cr_assert_eq(nnn_npy_write_file(npy, &shape, x, NULL), NNN_OK);
	snprintf(cmd, sizeof cmd, "timeout 20 sh -c 'ulimit -v 65536; exec %s run %s --input %s --threads 2' >/dev/null 2>&1",
	         kit, model, npy);
	st = system(cmd);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "run under 64 MiB: exit status %d (124: it hung)",
	          WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	bb_free(&b);
}

/* 100,000 layers: validation is linear in layers, so it ends. */
Test(hardening, many_layers_validate, .timeout = 60)
{
	bb_t b = { 0 };
	nnn_diags_t d;
	nnn_shape_t in = { .rank = 2, .dims = { 1, 1 } };
	int32_t n = 100000;
	bb_header(&b, "deep", 2 * (uint64_t)n, n);
	for (int32_t i = 0; i < n; i++)
		bb_dense(&b, 3, 1, 1, 0);
	nnn_diags_init(&d);
	cr_assert_eq(nnn_validate_bytes(b.b, b.n, NULL, &in, &d), NNN_OK, "%s", d.n ? d.v[0].msg : "");
	nnn_diags_free(&d);
	bb_free(&b);
}

Test(hardening, crashing_plugin_is_checked_in_a_child)
{
	char cmd[1024], out[4096] = "";
	const char *kit = nnnkit_bin();
	const char *b = t_build_dir();
	snprintf(cmd, sizeof cmd, "%s --no-default-plugins plugins --check %s/fixtures/initcrash.so 2>&1", kit, b);
	FILE *p = popen(cmd, "r");
	out[fread(out, 1, sizeof out - 1, p)] = '\0';
	int st = pclose(p);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 3, "%s", out);
	/* A signal; under ASan its handler turns the SEGV into an exit status. */
#if T_ASAN
	cr_assert(strstr(out, "initcrash.so: entry point stage: exited with status 1 during its entry point"), "%s", out);
#else
	cr_assert(strstr(out, "initcrash.so: entry point stage: crashed with SIGSEGV (Segmentation fault) during its "
	                      "entry point"), "%s", out);
#endif
	snprintf(cmd, sizeof cmd, "%s --no-default-plugins plugins --check %s/fixtures/good.so 2>&1", kit, b);
	p = popen(cmd, "r");
	out[fread(out, 1, sizeof out - 1, p)] = '\0';
	st = pclose(p);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s", out);
	cr_assert(strstr(out, "good.so: loaded (fixture 1)"), "%s", out);
	/* Refused while loading, without crashing: the loader's reason, said once. */
	snprintf(cmd, sizeof cmd, "%s --no-default-plugins plugins --check %s/fixtures/badrecord.so 2>&1", kit, b);
	p = popen(cmd, "r");
	out[fread(out, 1, sizeof out - 1, p)] = '\0';
	st = pclose(p);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 3, "%s", out);
	cr_assert(!strncmp(out, "nnnkit: plugins --check: plugin not loaded: ", 44), "%s", out);
	cr_assert(strstr(out, "/badrecord.so: validation stage: layer ID 7 (fixture): its record descriptor does not fit "
	                      "its codec: regenerate the codec (nnnkit plugins -v lists every candidate and why)\n"),
	          "%s", out);
}

Test(hardening, failing_kernel_names_its_layer)
{
	char plugin[512];
	const char *b = t_build_dir();
	nnn_ctx_t *ctx;
	nnn_model_t *m;
	nnn_plan_t *p;
	nnn_diags_t d;
	bb_t bb = { 0 };
	float x[3] = { 1, 2, 3 }, y[1];
	bb_tiny(&bb);
	bb.b[102] = 3; /* layers[1]: ReLU, which the fixture provides */
	snprintf(plugin, sizeof plugin, "%s/fixtures/fwdfail.so", b);
	nnn_diags_init(&d);
	cr_assert_eq(nnn_ctx_new(&ctx, &d), NNN_OK);
	cr_assert_eq(nnn_plugin_load(ctx, plugin, &d), NNN_OK, "%s", d.n ? d.v[0].msg : "");
	cr_assert_eq(nnn_model_decode(bb.b, bb.n, NULL, &m, &d), NNN_OK);
	m->layers[0].activation.id = 3; /* both layers: Dense + ReLU from the fixture */
	nnn_shape_t in = { .rank = 2, .dims = { 1, 3 } };
	cr_assert_eq(nnn_plan_new(ctx, m, &in, NULL, &p, &d), NNN_OK, "%s", d.n ? d.v[0].msg : "");
	cr_assert_eq(nnn_plan_run(p, x, y, &d), NNN_E_KERNEL);
	cr_assert_str_eq(d.v[0].path, "layers[0]");
	cr_assert(strstr(d.v[0].msg, "forward failed: deliberate failure in forward"), "%s", d.v[0].msg);
	nnn_plan_free(p);
	nnn_model_free(m);
	nnn_ctx_free(ctx);
	nnn_diags_free(&d);
	bb_free(&bb);
}

/* ---- the children of `nnnkit conformance`: killed by process group ---- */

/* A command's background grandchild, as it recorded itself: pid and
 * process group. */
typedef struct rec {
	pid_t pid, pgid;
} rec_t;

/* Shell text that starts `sleep 777` in the background and writes its pid
 * and process group to DIR/rec (whole, by a rename); {file} and the
 * reference's placeholders go after it as a comment. */
static const char *recorder(const char *dir)
{
	return t_fmt("sleep 777 & echo $! $(cut -d\" \" -f5 /proc/$!/stat) >%s/rec.tmp; mv %s/rec.tmp %s/rec", dir, dir,
	             dir);
}

/* A corpus of one valid case, tiny.nnn (bb_tiny, input [1, 3]), in a new
 * folder: its path. */
static const char *one_case_corpus(char *dir)
{
	bb_t b = { 0 };
	cr_assert_not_null(mkdtemp(dir));
	bb_tiny(&b);
	t_spit(t_fmt("%s/tiny.nnn", dir), b.b, b.n);
	bb_free(&b);
	t_spit_str(t_fmt("%s/manifest.json", dir), "{\"schema\": \"nnn\", \"cases\": [{\"file\": \"tiny.nnn\", \"valid\": "
	                                            "true, \"class\": \"valid\", \"code\": \"OK\", \"input_shape\": [1, 3]}]}\n");
	return dir;
}

/* DIR/rec, waited for at most 10 s (a command started by a process the
 * test started). */
static rec_t read_rec(const char *dir)
{
	rec_t r = { 0, 0 };
	struct timespec tick = { 0, 10000000 };
	char path[256];
	snprintf(path, sizeof path, "%s/rec", dir);
	for (int i = 0; i < 1000 && !r.pid; i++) {
		FILE *f = fopen(path, "r");
		long pid, pgid;
		if (f && fscanf(f, "%ld %ld", &pid, &pgid) == 2 && pid > 1 && pgid > 1)
			r.pid = (pid_t)pid, r.pgid = (pid_t)pgid;
		if (f)
			fclose(f);
		if (!r.pid)
			nanosleep(&tick, NULL);
	}
	return r;
}

/* A live process (not a zombie, which init may not have reaped yet) with
 * pid `pid` or in group `pgid` (0: none): its pid, or 0. */
static pid_t live(pid_t pid, pid_t pgid)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	pid_t found = 0;
	cr_assert_not_null(d);
	while (!found && (e = readdir(d)) != NULL) {
		char buf[512], state;
		int ppid, pgrp;
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		char path[300];
		snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
		FILE *f = fopen(path, "r");
		if (!f)
			continue; /* ended meanwhile */
		buf[fread(buf, 1, sizeof buf - 1, f)] = '\0';
		fclose(f);
		/* "pid (comm) state ppid pgrp ...": comm may hold anything but ends at the last ')' */
		char *p = strrchr(buf, ')');
		pid_t at = (pid_t)atol(e->d_name);
		if (p && sscanf(p + 1, " %c %d %d", &state, &ppid, &pgrp) == 3 && state != 'Z' && state != 'X' &&
		    (at == pid || (pgid && pgrp == pgid)))
			found = at;
	}
	closedir(d);
	return found;
}

/* Nothing of r's group outlives nnnkit (a SIGKILL takes effect a moment
 * after it is sent: up to 3 s). What does stay is killed first, so a failure
 * leaves nothing running. */
static void assert_gone(rec_t r, const char *when)
{
	struct timespec tick = { 0, 10000000 };
	cr_assert(r.pid, "%s: the command never recorded its background process", when);
	/* Not the group of nnnkit (and of this test): the command needs one of its own. */
	pid_t group = r.pgid == getpgrp() ? 0 : r.pgid, left = 0;
	for (int i = 0; i < 300 && (left = live(r.pid, group)) != 0; i++)
		nanosleep(&tick, NULL);
	if (left) {
		kill(r.pid, SIGKILL);
		if (group)
			kill(-group, SIGKILL);
	}
	cr_assert(!left && group, "%s: process %d of the command's process group %d (%s) outlived it", when, (int)left,
	          (int)r.pgid, group ? "its own" : "nnnkit's: the command had no group of its own");
}

/* A decoder that hangs and one that exits at once, each with a child in
 * the background: nothing of either stays (issue 28: the `sleep` was
 * re-parented to init and ran on). */
Test(hardening, conformance_decoder_group_killed, .timeout = 60)
{
	char dir[] = "/tmp/nnnpgrp.XXXXXX", out[4096];
	one_case_corpus(dir);
	int st = t_sh(out, sizeof out, "%s conformance --corpus %s --timeout 0.5 --decoder '%s; wait # {file}'",
	              nnnkit_bin(), dir, recorder(dir));
	cr_assert_eq(st, 1, "%s", out);
	cr_assert(strstr(out, "crashed tiny.nnn: timed out after 0.5 s (--timeout)"), "%s", out);
	assert_gone(read_rec(dir), "a decoder that timed out");
	unlink(t_fmt("%s/rec", dir));
	st = t_sh(out, sizeof out, "%s conformance --corpus %s --decoder '%s; exit 0 # {file}'", nnnkit_bin(), dir,
	          recorder(dir));
	cr_assert_eq(st, 0, "%s", out);
	assert_gone(read_rec(dir), "a decoder that exited");
	cr_assert_eq(system(t_fmt("rm -rf %s", dir)), 0);
}

/* A decoder whose child leaves its group (setsid) and outlives it: it came
 * to nnnkit, the subreaper, and goes too (killing the group alone missed it). */
Test(hardening, conformance_decoder_setsid_child_killed, .timeout = 60)
{
	char dir[] = "/tmp/nnnpgrp.XXXXXX", out[4096];
	one_case_corpus(dir);
	int st = t_sh(out, sizeof out, "%s conformance --corpus %s --timeout 0.5 --decoder 'setsid %s; exit 0 # {file}'",
	              nnnkit_bin(), dir, recorder(dir));
	cr_assert_eq(st, 0, "%s", out);
	assert_gone(read_rec(dir), "a decoder's child in a session of its own");
	cr_assert_eq(system(t_fmt("rm -rf %s", dir)), 0);
}

/* The same for a reference command that hangs. */
Test(hardening, conformance_reference_group_killed, .timeout = 60)
{
	char dir[] = "/tmp/nnnpgrp.XXXXXX", out[4096];
	one_case_corpus(dir);
	int st = t_sh(out, sizeof out, "%s conformance --corpus %s --timeout 0.5 --reference '%s; wait; : {model} {input} "
	              "{output}'", nnnkit_bin(), dir, recorder(dir));
	cr_assert_eq(st, 1, "%s", out);
	cr_assert(strstr(out, "failed tiny.nnn: the reference command timed out after 0.5 s (--timeout)"), "%s", out);
	assert_gone(read_rec(dir), "a reference command that timed out");
	cr_assert_eq(system(t_fmt("rm -rf %s", dir)), 0);
}

/* SIGTERM or SIGINT to nnnkit while a decoder runs: nnnkit kills the
 * decoder's group, then ends by that signal. */
Test(hardening, conformance_signal_kills_decoder_group, .timeout = 60)
{
	static const int sigs[] = { SIGTERM, SIGINT };
	char dir[] = "/tmp/nnnpgrp.XXXXXX", decoder[1024];
	one_case_corpus(dir);
	snprintf(decoder, sizeof decoder, "%s; wait # {file}", recorder(dir));
	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
		int st;
		unlink(t_fmt("%s/rec", dir));
		pid_t kit = fork();
		cr_assert_geq(kit, 0);
		if (kit == 0) {
			/* As from a terminal: neither signal ignored (a background job's SIGINT is). */
			sigset_t none;
			sigemptyset(&none);
			sigprocmask(SIG_SETMASK, &none, NULL);
			signal(SIGTERM, SIG_DFL);
			signal(SIGINT, SIG_DFL);
			int null = open("/dev/null", O_RDWR);
			dup2(null, 0), dup2(null, 1), dup2(null, 2);
			execl(nnnkit_bin(), "nnnkit", "conformance", "--corpus", dir, "--timeout", "60", "--decoder", decoder,
			      (char *)NULL);
			_exit(127);
		}
		rec_t g = read_rec(dir);
		kill(kit, sigs[i]);
		while (waitpid(kit, &st, 0) < 0 && errno == EINTR)
			;
		assert_gone(g, strsignal(sigs[i]));
		cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == sigs[i], "%s: nnnkit ended with status %#x, not by the signal",
		          strsignal(sigs[i]), st);
	}
	cr_assert_eq(system(t_fmt("rm -rf %s", dir)), 0);
}
