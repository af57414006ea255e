/* test_discovery.c: plugin discovery as nnnkit does it, against fixture
 * plugins broken in every way (tests/plugins/fixture.c): every candidate
 * scanned in a child first, a plugin that crashes, exits or hangs leaving
 * commands working, the scan cache, the duplicate-ID rule across sources,
 * and the folders above a plugin checked. (The loader in process:
 * tests/unit/test_plugins.c.) */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nnn/context.h>
#include <nnn/json.h>
#include <nnn/npy.h>
#include <signal.h>
#include <sys/wait.h>

#include "blackbox.h"
#include "builder.h"
#include "ctx.h"
#include "shell.h"
#include "schemaq.h"

/* ---- discovery: every candidate scanned in a child first (runtime/plugin/discover.c) ---- */

/* The scan limit for fixtures that hang: short. nnnkit and its scanner run
 * natively even under make valgrind (VG_SKIP: tests/tests.mk). */
static int scan_ms(void)
{
	return 1000;
}

/* A private folder for one test (removed by rm_tree), with `sub` made in it. */
static void mk_tree(char *root, size_t size)
{
	snprintf(root, size, "/tmp/nnndisc.XXXXXX");
	cr_assert_not_null(mkdtemp(root));
}

static void rm_tree(const char *root)
{
	char cmd[300];
	snprintf(cmd, sizeof cmd, "chmod -R u+rwx %s; rm -rf %s", root, root);
	cr_assert_eq(system(cmd), 0);
}

/* Copies fixture `name` to DIR/AS (DIR made 0700 when missing). */
static void place(const char *dir, const char *name, const char *as)
{
	char cmd[2300];
	snprintf(cmd, sizeof cmd, "mkdir -p %s && chmod 700 %s && cp %s %s/%s && chmod 755 %s/%s", dir, dir,
	         t_fixture(name), dir, as, dir, as);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
}

/* The tiny model (input [n, 3]) and one input row for it, in root. */
static void tiny_model(const char *root, char *model, char *input, size_t size)
{
	bb_t b = { 0 };
	float x[3] = { 1, 2, 3 };
	nnn_shape_t s = { .rank = 2, .dims = { 1, 3 } };
	bb_tiny(&b);
	snprintf(model, size, "%s/tiny.nnn", root);
	FILE *f = fopen(model, "wb");
	cr_assert_not_null(f);
	cr_assert_eq(fwrite(b.b, 1, b.n, f), b.n);
	fclose(f);
	bb_free(&b);
	snprintf(input, size, "%s/x.npy", root);
	cr_assert_eq(nnn_npy_write_file(input, &s, x, NULL), NNN_OK);
}

/* What each broken fixture's scan says: its stage and how it ended. */
static const struct {
	const char *name, *says;
} broken[] = {
#if T_ASAN
	{ "initcrash", "initcrash.so: entry point stage: exited with status 1 during its entry point" },
#else
	{ "initcrash", "initcrash.so: entry point stage: crashed with SIGSEGV (Segmentation fault) during its entry point" },
#endif
	{ "initexit", "initexit.so: entry point stage: exited with status 0 during its entry point (a plugin must return "
	              "from its entry point, never end the process)" },
	{ "inithang", "inithang.so: entry point stage: did not finish loading in " },
	{ "initspin", "initspin.so: entry point stage: did not finish loading in " },
};

/* A plugin that crashes, exits or hangs in its entry point, on the search
 * path: `plugins -v`, `info` and `run` of a model still work (exit 3: a
 * plugin failed), and name the file and the stage. No cache: fresh scans. */
Test(discovery, bad_plugin_on_the_search_path_leaves_commands_working, .timeout = 300)
{
	char root[64], dir[128], model[256], input[256], out[16384], env[512];
	mk_tree(root, sizeof root);
	tiny_model(root, model, input, sizeof model);
	for (size_t i = 0; i < sizeof broken / sizeof broken[0]; i++) {
		snprintf(dir, sizeof dir, "%s/%s", root, broken[i].name);
		place(dir, broken[i].name, t_fmt("%s.so", broken[i].name));
		snprintf(env, sizeof env, "NNN_PLUGIN_CACHE= NNN_PLUGIN_SCAN_TIMEOUT_MS=%d NNN_PLUGIN_PATH=%s", scan_ms(), dir);

		cr_assert_eq(t_sh(out, sizeof out, "%s %s plugins -v 2>&1", env, nnnkit_bin()), 3, "%s", out);
		cr_expect(strstr(out, broken[i].says), "%s: no '%s' in:\n%s", broken[i].name, broken[i].says, out);
		cr_expect(strstr(out, "/plugins/builtin.so: loaded (builtin"), "%s", out);

		cr_assert_eq(t_sh(out, sizeof out, "%s %s info %s 2>&1", env, nnnkit_bin(), model), 3, "%s", out);
		cr_expect(strstr(out, broken[i].says), "%s: no '%s' in:\n%s", broken[i].name, broken[i].says, out);
		cr_expect(strstr(out, "layers:       2"), "%s", out);

		cr_assert_eq(t_sh(out, sizeof out, "%s %s run %s --input %s 2>/dev/null", env, nnnkit_bin(), model, input), 3, "%s",
		             out);
		cr_expect(out[0] >= '-' && out[0] <= '9', "no output row: %s", out);
	}
	rm_tree(root);
}

/* `plugins --check` of each fails with exit 3 and says how, never hangs,
 * and a plugin's exit(0) is no pass. */
Test(discovery, check_fails_for_every_bad_plugin, .timeout = 300)
{
	char out[8192];
	for (size_t i = 0; i < sizeof broken / sizeof broken[0]; i++) {
		cr_assert_eq(t_sh(out, sizeof out, "NNN_PLUGIN_CACHE= NNN_PLUGIN_SCAN_TIMEOUT_MS=%d %s --no-default-plugins "
		                  "plugins --check %s 2>&1", scan_ms(), nnnkit_bin(), t_fixture(broken[i].name)), 3, "%s", out);
		cr_expect(strstr(out, broken[i].says), "no '%s' in:\n%s", broken[i].says, out);
		cr_expect(strstr(out, "nothing of it was loaded"), "%s", out);
	}
	/* With a bad plugin on the search path, checking a good one is unaffected. */
	cr_assert_eq(t_sh(out, sizeof out, "NNN_PLUGIN_CACHE= NNN_PLUGIN_PATH=%s/.. %s plugins --check %s 2>&1",
	                  t_fixture("initcrash"), nnnkit_bin(), t_fixture("good")), 0, "%s", out);
	cr_expect(strstr(out, "good.so: loaded (fixture 1)"), "%s", out);
}

/* The scanner is killed with its parent: a hanging plugin does not outlive
 * a killed nnnkit. */
Test(discovery, scanner_dies_with_its_parent, .timeout = 120)
{
	char out[256], children[128];
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		setenv("NNN_PLUGIN_CACHE", "", 1);
		setenv("NNN_PLUGIN_SCAN_TIMEOUT_MS", "600000", 1);
		execl(nnnkit_bin(), "nnnkit", "--no-default-plugins", "plugins", "--check", t_fixture("inithang"), (char *)NULL);
		_exit(127);
	}
	/* Wait (at most about a minute) for the scanner to start. */
	long child = 0;
	for (int i = 0; i < 6000 && child == 0; i++) {
		snprintf(children, sizeof children, "/proc/%d/task/%d/children", (int)pid, (int)pid);
		FILE *f = fopen(children, "r");
		if (f) {
			if (fscanf(f, "%ld", &child) != 1)
				child = 0;
			fclose(f);
		}
		if (!child)
			usleep(10000);
	}
	cr_assert_gt(child, 0, "the scanner never started");
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	/* Gone, or a zombie waiting for init: either way, not running. */
	int alive = 1;
	for (int i = 0; i < 6000 && alive; i++) {
		snprintf(children, sizeof children, "/proc/%ld/stat", child);
		FILE *f = fopen(children, "r");
		char state = 'Z';
		if (f) {
			if (fscanf(f, "%*d (%*[^)]) %c", &state) != 1)
				state = 'Z';
			fclose(f);
		}
		alive = f && state != 'Z' && state != 'X';
		if (alive)
			usleep(10000);
	}
	snprintf(out, sizeof out, "scanner %ld outlived its parent", child);
	cr_assert(!alive, "%s", out);
}

/* Verdicts are cached by the file's identity: a hit uses the verdict
 * (here one edited in the cache, to tell a hit from a scan), touching or
 * replacing the file scans again, and a cache others can write is ignored. */
Test(discovery, cache_hits_misses_and_changes, .timeout = 120)
{
	char root[64], dir[128], cache[160], out[8192], cmd[1024];
	mk_tree(root, sizeof root);
	snprintf(dir, sizeof dir, "%s/p", root);
	snprintf(cache, sizeof cache, "%s/cache/scan.cache", root);
	place(dir, "initfail", "x.so");
#define RUN_X "NNN_PLUGIN_CACHE=%s %s --no-default-plugins --plugin %s/x.so plugins -v 2>&1"
	cr_assert_eq(t_sh(out, sizeof out, RUN_X, cache, nnnkit_bin(), dir), 3, "%s", out);
	cr_assert(strstr(out, "deliberate failure in init (fixture)"), "%s", out);
	cr_assert_eq(access(cache, R_OK), 0, "no cache written at %s", cache);
	/* Hit: the cached verdict, edited (same length), is what is reported. */
	snprintf(cmd, sizeof cmd, "sed -i 's/init (fixture)/init (cached!)/' %s", cache);
	cr_assert_eq(system(cmd), 0);
	cr_assert_eq(t_sh(out, sizeof out, RUN_X, cache, nnnkit_bin(), dir), 3, "%s", out);
	cr_assert(strstr(out, "deliberate failure in init (cached!)"), "not a hit:\n%s", out);
	/* A cache others can write is not read. */
	cr_assert_eq(chmod(cache, 0666), 0);
	cr_assert_eq(t_sh(out, sizeof out, RUN_X, cache, nnnkit_bin(), dir), 3, "%s", out);
	cr_assert(strstr(out, "init (fixture)"), "a cache others can write was used:\n%s", out);
	/* (the scan rewrote it, privately) */
	struct stat st;
	cr_assert_eq(stat(cache, &st), 0);
	cr_assert_eq(st.st_mode & 077, 0, "mode %o", st.st_mode & 0777);
	cr_assert_eq(system(cmd), 0);
	cr_assert_eq(t_sh(out, sizeof out, RUN_X, cache, nnnkit_bin(), dir), 3, "%s", out);
	cr_assert(strstr(out, "(cached!)"), "%s", out);
	/* Touched: scanned again. */
	cr_assert_eq(t_sh(NULL, 0, "touch %s/x.so", dir), 0);
	cr_assert_eq(t_sh(out, sizeof out, RUN_X, cache, nnnkit_bin(), dir), 3, "%s", out);
	cr_assert(strstr(out, "init (fixture)"), "a touched file was not scanned again:\n%s", out);
	/* Replaced by a good plugin (same path, new contents): the new verdict. */
	cr_assert_eq(system(cmd), 0);
	cr_assert_eq(t_sh(NULL, 0, "cp %s %s/x.so", t_fixture("good"), dir), 0);
	cr_assert_eq(t_sh(out, sizeof out, RUN_X, cache, nnnkit_bin(), dir), 0, "%s", out);
	cr_assert(strstr(out, "x.so: loaded (fixture 1)"), "%s", out);
	/* And back to a crashing one: the changed verdict is noticed. */
	cr_assert_eq(t_sh(NULL, 0, "cp %s %s/x.so", t_fixture("initcrash"), dir), 0);
	cr_assert_eq(t_sh(out, sizeof out, RUN_X, cache, nnnkit_bin(), dir), 3, "%s", out);
	cr_assert(strstr(out, "x.so: entry point stage: "), "%s", out);
	/* NNN_PLUGIN_CACHE= means none: nothing is written. */
	cr_assert_eq(t_sh(out, sizeof out, "XDG_CACHE_HOME=%s/xdg HOME=%s NNN_PLUGIN_CACHE= %s --no-default-plugins "
	                  "--plugin %s plugins 2>&1", root, root, nnnkit_bin(), t_fixture("good")), 0, "%s", out);
	cr_assert_neq(access(t_fmt("%s/xdg/nnnkit", root), F_OK), 0);
	/* Unset: the per-user cache under XDG_CACHE_HOME, made private. */
	cr_assert_eq(t_sh(out, sizeof out, "XDG_CACHE_HOME=%s/xdg env -u NNN_PLUGIN_CACHE %s --no-default-plugins "
	                  "--plugin %s plugins 2>&1", root, nnnkit_bin(), t_fixture("good")), 0, "%s", out);
	cr_assert_eq(stat(t_fmt("%s/xdg/nnnkit/plugin-scan.cache", root), &st), 0, "no per-user cache");
	cr_assert_eq(st.st_mode & 077, 0);
	rm_tree(root);
#undef RUN_X
}

/* Who provides an ID (fixtures good: layer 0 + activation 3; dupacross:
 * layer 0 + activation 5): the first source claiming it; two of one source
 * conflict, whatever their names' order, and neither gets it. */
Test(discovery, one_rule_for_duplicate_ids, .timeout = 120)
{
	char root[64], a[128], b[128], out[16384];
	mk_tree(root, sizeof root);
	snprintf(a, sizeof a, "%s/a", root);
	snprintf(b, sizeof b, "%s/b", root);
	place(a, "good", "good.so");
	place(b, "dupacross", "dup.so");
	/* Two --plugin files, either order: conflict, both named, exit 3. */
	for (int order = 0; order < 2; order++) {
		cr_assert_eq(t_sh(out, sizeof out, "%s --no-default-plugins --plugin %s/%s --plugin %s/%s plugins -v 2>&1",
		                  nnnkit_bin(), order ? b : a, order ? "dup.so" : "good.so", order ? a : b,
		                  order ? "good.so" : "dup.so"), 3, "%s", out);
		cr_expect(strstr(out, t_fmt("%s/good.so: conflict stage: layer ID 0 (%s) is also claimed by %s/dup.so", a,
		                            nnn_layer_id_name(0), b)), "%s", out);
		cr_expect(strstr(out, t_fmt("%s/dup.so: conflict stage: layer ID 0 (%s) is also claimed by %s/good.so", b,
		                            nnn_layer_id_name(0), a)), "%s", out);
		cr_expect(strstr(out, "provides layer 0 (provided by none: see the conflict), activation"), "%s", out);
		cr_expect(strstr(out, "activation 3 fixture-act,") || strstr(out, "activation 3 fixture-act\n"), "%s", out);
	}
	/* Two files of one NNN_PLUGIN_PATH folder, named either way round: the same. */
	for (int order = 0; order < 2; order++) {
		char both[128];
		snprintf(both, sizeof both, "%s/both%d", root, order);
		place(both, "good", order ? "z.so" : "a.so");
		place(both, "dupacross", order ? "a.so" : "z.so");
		cr_assert_eq(t_sh(out, sizeof out, "NNN_PLUGIN_PATH=%s %s plugins -v 2>&1", both, nnnkit_bin()), 3, "%s", out);
		cr_expect(strstr(out, t_fmt("conflict stage: layer ID 0 (%s) is also claimed by", nnn_layer_id_name(0))), "%s",
		          out);
		cr_expect(strstr(out, "from the same source (NNN_PLUGIN_PATH folder"), "%s", out);
		/* the builtin plugin (later) does not get it either */
		cr_expect(strstr(out, "layer 0 (provided by none"), "%s", out);
	}
	/* --plugin before NNN_PLUGIN_PATH: it wins the ID; the other keeps the rest. */
	cr_expect_eq(t_sh(out, sizeof out, "NNN_PLUGIN_PATH=%s %s --plugin %s/good.so plugins 2>&1", b, nnnkit_bin(), a), 0,
	             "%s", out);
	cr_expect(strstr(out, t_fmt("provides layer 0 (shadowed by %s/good.so), activation 5\n", a)), "%s", out);
	/* Folders in order: the first wins, either way round. */
	for (int order = 0; order < 2; order++) {
		cr_assert_eq(t_sh(out, sizeof out, "NNN_PLUGIN_PATH=%s:%s %s plugins 2>&1",
		                  order ? b : a, order ? a : b, nnnkit_bin()), 0, "%s", out);
		cr_expect(strstr(out, t_fmt("%s: loaded (fixture 1)\n    provides layer 0 (shadowed by %s)",
		                            order ? t_fmt("%s/good.so", a) : t_fmt("%s/dup.so", b),
		                            order ? t_fmt("%s/dup.so", b) : t_fmt("%s/good.so", a))), "%s", out);
	}
	/* NNN_PLUGIN_PATH before the installed folder: a Dense kernel there
	 * overrides the builtin plugin's, which still provides the rest. */
	cr_assert_eq(t_sh(out, sizeof out, "NNN_PLUGIN_PATH=%s %s plugins 2>&1", a, nnnkit_bin()), 0, "%s", out);
	cr_expect(strstr(out, t_fmt("provides layer 0 (shadowed by %s/good.so), layer 1,", a)), "%s", out);
	cr_expect(strstr(out, t_fmt("activation 3 (shadowed by %s/good.so)", a)), "%s", out);
	/* The same through the library, the installed folder given. */
	nnn_ctx_t *c = t_ctx_new();
	const char *path = NULL;
	nnn_discover_opts_t o = { .size = sizeof o, .installed_dir = b, .cache = "" };
	setenv("NNN_PLUGIN_PATH", a, 1);
	o.search = true;
	cr_assert_eq(nnn_plugin_discover(c, &o, NULL), NNN_OK);
	unsetenv("NNN_PLUGIN_PATH");
	cr_assert_not_null(nnn_ctx_layer(c, 0, &path));
	cr_assert(strstr(path, "/a/good.so"), "%s", path);
	cr_assert_not_null(nnn_ctx_activation(c, 5, &path));
	cr_assert(strstr(path, "/b/dup.so"), "%s", path);
	nnn_ctx_free(c);
	rm_tree(root);
}

/* Exit 3 for a plugin that fails, in every command. */
Test(discovery, every_command_exits_3_for_a_bad_plugin, .timeout = 120)
{
	char root[64], model[256], input[256], pic[256], out[8192];
	mk_tree(root, sizeof root);
	tiny_model(root, model, input, sizeof model);
	snprintf(pic, sizeof pic, "%s/pic.png", root);
	FILE *f = fopen(pic, "w");
	for (int i = 0; i < 64; i++)
		fputs("\x89PNG not a shared object\n", f);
	fclose(f);
	chmod(pic, 0644);
	const char *plugins[] = { "/nonexistent.so", pic };
	const char *cmds[] = { t_fmt("info %s", model), t_fmt("validate %s", model), t_fmt("dump %s", model),
		               t_fmt("graph %s", model), t_fmt("map %s -o %s/map.html", model, root),
		               t_fmt("convert %s %s/m.json", model, root), t_fmt("run %s --input %s", model, input), "plugins" };
	for (size_t p = 0; p < 2; p++) {
		for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
			const char *args = cmds[i];
			cr_expect_eq(t_sh(out, sizeof out, "%s --plugin %s %s 2>&1", nnnkit_bin(), plugins[p], args), 3, "%s: %s\n%s",
			             plugins[p], args, out);
			cr_expect(strstr(out, t_fmt("%s: open stage: ", plugins[p])), "%s", out);
		}
	}
	rm_tree(root);
}

/* Every folder from the plugin up to the root: a folder above it that others
 * can write must be sticky; its own folder may not be writable by others at
 * all; and the remedy is one the user can apply (never chmod of a shared
 * sticky folder such as /tmp). */
Test(discovery, every_folder_up_to_the_root_checked)
{
	char root[64], dir[128], so[160];
	nnn_ctx_t *c = t_ctx_new();
	mk_tree(root, sizeof root);
	snprintf(dir, sizeof dir, "%s/mid/p", root);
	cr_assert_eq(t_sh(NULL, 0, "mkdir -p %s", dir), 0);
	place(dir, "good", "good.so");
	snprintf(so, sizeof so, "%s/good.so", dir);
	cr_assert_eq(chmod(t_fmt("%s/mid", root), 0777), 0);
	const char *above[] = { t_fmt("the folder %s/mid above it is writable by group or others and not sticky", root),
		                "mode 0777", t_fmt("fix it with chmod go-w %s/mid", root), "NNN_PLUGIN_ALLOW_INSECURE", NULL };
	t_expect_refused(c, so, "open", above);
	/* Sticky above: fine, as /tmp is. */
	cr_assert_eq(chmod(t_fmt("%s/mid", root), 01777), 0);
	cr_assert_eq(nnn_plugin_load(c, so, NULL), NNN_OK);
	nnn_ctx_free(c);
	c = t_ctx_new();
	/* Its own folder sticky and writable by others: refused, and the remedy
	 * is to move the plugin, not to chmod a shared folder. */
	cr_assert_eq(chmod(t_fmt("%s/mid", root), 0755), 0);
	cr_assert_eq(chmod(dir, 01777), 0);
	const char *own[] = { t_fmt("its folder %s is writable by group or others (mode 1777", dir),
		              "anyone could add a plugin there", "move the plugin to a folder only you can write", NULL };
	t_expect_refused(c, so, "open", own);
	nnn_diags_t d;
	nnn_diags_init(&d);
	cr_assert_eq(nnn_plugin_load(c, so, &d), NNN_E_PLUGIN);
	cr_assert_null(strstr(d.v[0].msg, "chmod"), "%s", d.v[0].msg);
	nnn_diags_free(&d);
	/* The same check in discovery, before any scan. */
	nnn_discover_opts_t o = { .size = sizeof o, .files = (const char *[]){ so }, .nfiles = 1, .cache = "" };
	nnn_diags_init(&d);
	cr_assert_eq(nnn_plugin_discover(c, &o, &d), NNN_E_PLUGIN);
	cr_assert(strstr(d.v[0].msg, "open stage: its folder"), "%s", d.v[0].msg);
	nnn_diags_free(&d);
	nnn_ctx_free(c);
	rm_tree(root);
}
