/* test_conformance_testee.c: `nnnkit conformance --testee CMD`
 * (docs/conformance.md) against tests/kit/oracle_testee.py, a testee that
 * answers from the kit's own manifest and goes wrong when told to. Each
 * test makes a small kit in its temp folder: seven cases of the generated
 * corpus (two valid, four structural of four families, one semantic),
 * copied with the manifest's entries for them plus the kit's fields, and
 * .npy files written here. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <dirent.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nnn/npy.h>
#include <nnn/run.h>

#include "blackbox.h"
#include "clirun.h"
#include "ctx.h"
#include "manifest.h"
#include "shell.h"
#include "tmpdir.h"

#define PFX "nnnktee."

TestSuite(conformance_testee, .fini = t_tmpdir_remove, .timeout = 120);

/* The kit: its folder and the ids of its cases by role. */
typedef struct tkit {
	const char *dir;
	char valid[2][256];      /* valid cases, with a run */
	char structural[4][256]; /* one each of truncation, count, magic, trailing */
	char semantic[256];      /* a semantic case (the file decodes) */
} tkit_t;

/* The checks the kit makes, by the table of docs/conformance.md: a valid
 * case with a run gives decode, verdict, roundtrip and run; an invalid one
 * decode and verdict (required) and error (recommended). */
#define REQUIRED (2 * 4 + 5 * 2)
#define RECOMMENDED 5

/* The id of a manifest file ("valid/x.nnn" -> "valid/x"). */
static void id_of(const char *file, char *out, size_t size)
{
	snprintf(out, size, "%.*s", (int)(strlen(file) - 4), file);
}

/* Adds case i of the corpus to the kit: its file, its manifest entry with
 * the kit's fields, and for a valid case an input and an expected output. */
static void add(tkit_t *k, json_t *cases, const t_manifest_t *m, size_t i, char *id)
{
	const t_mcase_t *c = &m->cases[i];
	json_t *e = json_deep_copy(json_array_get(m->json ? json_object_get(m->json, "cases") : NULL, i));
	id_of(c->file, id, 256);
	cr_assert_eq(t_sh(NULL, 0, "cp '%s/conformance/%s' '%s/%s'", t_build_dir(), c->file, k->dir, c->file), 0);
	json_object_set_new(e, "id", json_string(id));
	json_object_set_new(e, "family", json_string(c->klass));
	json_object_set_new(e, "expect", json_string(c->valid ? "accept" : "reject"));
	json_object_set_new(e, "run", json_null());
	if (c->valid) {
		/* Any values will do: the oracle copies the expected output, and a
		 * broken one is caught against these. */
		float x[64] = { 0 }, y[3] = { 0.5f, -1.25f, 2.0f };
		nnn_shape_t ys = { .rank = 2, .dims = { 1, 3 } };
		const char *name = strrchr(id, '/') + 1;
		cr_assert(nnn_shape_numel(&c->input) <= 64);
		cr_assert_eq(nnn_npy_write_file(t_fmt("%s/io/%s.in.npy", k->dir, name), &c->input, x, NULL), NNN_OK);
		cr_assert_eq(nnn_npy_write_file(t_fmt("%s/io/%s.out.npy", k->dir, name), &ys, y, NULL), NNN_OK);
		json_object_set_new(e, "run", json_pack("{s:s, s:s, s:f}", "input", t_fmt("io/%s.in.npy", name), "output",
		                                        t_fmt("io/%s.out.npy", name), "tolerance", 1e-5));
	}
	json_array_append_new(cases, e);
}

static tkit_t make_kit(void)
{
	static const char *const families[4] = { "truncation", "count", "magic", "trailing" };
	tkit_t k = { .dir = t_tmpdir(PFX) };
	t_manifest_t m = t_manifest_load(t_fmt("%s/conformance", t_build_dir()));
	json_t *cases = json_array();
	int nv = 0, ns = 0, sem = 0;
	cr_assert_eq(t_sh(NULL, 0, "mkdir -p '%s/valid' '%s/invalid' '%s/io'", k.dir, k.dir, k.dir), 0);
	for (size_t i = 0; i < m.n; i++) {
		const t_mcase_t *c = &m.cases[i];
		if (c->valid && nv < 2 && c->has_input && nnn_shape_numel(&c->input) <= 64) {
			add(&k, cases, &m, i, k.valid[nv]);
			nv++;
		}
		for (int f = 0; f < 4; f++)
			if (!strcmp(c->kind, "structural") && !strcmp(c->klass, families[f]) && !k.structural[f][0])
				add(&k, cases, &m, i, k.structural[f]), ns++;
		if (!strcmp(c->kind, "semantic") && !sem)
			add(&k, cases, &m, i, k.semantic), sem = 1;
	}
	cr_assert(nv == 2 && ns == 4 && sem, "the corpus lacks a case the kit needs (%d valid, %d structural, %d semantic)",
	          nv, ns, sem);
	json_t *kit = json_pack("{s:{s:i, s:s, s:i}, s:{s:s}, s:o}", "kit", "format", 1, "version", "test", "protocol", 1,
	                        "schema", "name", "nnn", "cases", cases);
	cr_assert_eq(json_dump_file(kit, t_fmt("%s/manifest.json", k.dir), JSON_INDENT(1)), 0);
	json_decref(kit);
	t_manifest_free(&m);
	return k;
}

/* The oracle on kit k, with extra arguments (faults), as a --testee value. */
static const char *oracle(const tkit_t *k, const char *extra)
{
	return t_fmt("/usr/bin/python3 tests/kit/oracle_testee.py --kit %s %s", k->dir, extra);
}

/* nnnkit conformance on k with the oracle and `extra` faults, then `opts`. */
static void conf(run_t *r, const tkit_t *k, const char *extra, const char *opts)
{
	nnnkitf(r, "conformance --corpus %s --timeout 1 --testee \"%s\" %s", k->dir, oracle(k, extra), opts);
}

/* The same with --json: the results, parsed (json_decref them). */
static json_t *conf_json(run_t *r, const tkit_t *k, const char *extra, const char *opts)
{
	json_error_t e;
	nnnkitf(r, "conformance --corpus %s --timeout 1 --testee \"%s\" --json %s", k->dir, oracle(k, extra), opts);
	json_t *res = json_loads(r->out, 0, &e);
	cr_assert_not_null(res, "not JSON (%s): %s\nstderr: %s", e.text, r->out, r->err);
	return res;
}

static long level(const json_t *res, const char *lv, const char *key)
{
	return (long)json_integer_value(json_object_get(json_object_get(json_object_get(res, "levels"), lv), key));
}

/* The unexpected failure of case id's check in the results: its result and why, or NULL. */
static const json_t *unexpected(const json_t *res, const char *id, const char *check)
{
	size_t i;
	json_t *f;
	json_array_foreach(json_object_get(res, "unexpected_failures"), i, f) {
		if (!strcmp(json_string_value(json_object_get(f, "id")), id) &&
		    !strcmp(json_string_value(json_object_get(f, "check")), check))
			return f;
	}
	return NULL;
}

/* Case id's check in the results must be `result`, its why holding `why`
 * (NULL: no why), and the text report must name it the same way. */
static void caught(const json_t *res, const char *text, const char *id, const char *check, const char *result,
                   const char *why)
{
	const json_t *f = unexpected(res, id, check);
	cr_assert_not_null(f, "%s: %s is not among the unexpected failures", id, check);
	const char *r = json_string_value(json_object_get(f, "result"));
	const char *w = json_string_value(json_object_get(f, "why"));
	cr_assert_str_eq(r, result, "%s: %s", id, check);
	cr_assert(!why || (w && strstr(w, why)), "%s: %s: why '%s' lacks '%s'", id, check, w ? w : "(none)", why);
	cr_assert(strstr(text, t_fmt("  %s: %s: %s", id, check, result)), "%s: %s not in the report:\n%s", id, check,
	          text);
}

Test(conformance_testee, oracle_scores_100_percent)
{
	tkit_t k = make_kit();
	run_t r;
	conf(&r, &k, "", "");
	cr_assert_eq(r.code, 0, "%s%s", r.out, r.err);
	cr_assert(strstr(r.out, t_fmt("required %d/%d, recommended %d/%d: ok\n", REQUIRED, REQUIRED, RECOMMENDED,
	                              RECOMMENDED)), "%s", r.out);
	cr_assert(strstr(r.out, "testee: /usr/bin/python3 tests/kit/oracle_testee.py"), "%s", r.out);
	cr_assert(strstr(r.out, ": oracle ") && strstr(r.out, ", ops [\"decode\",\"validate\",\"encode\",\"run\"]"), "%s",
	          r.out);
	cr_assert(strstr(r.out, t_fmt("\n%-12s %8d %8d %7.1f%%\n", "required", REQUIRED, REQUIRED, 100.0)), "%s", r.out);
	cr_assert(strstr(r.out, "\nvalid        8/8 100.0%"), "%s", r.out);
	cr_assert(strstr(r.out, "\ntrailing     2/2 100.0%           1/1 100.0%"), "%s", r.out);
	cr_assert(strstr(r.out, "unexpected failures: 0\nunexpected passes: 0\n"), "%s", r.out);

	/* --json and --results in one run: the same results, every check passed */
	const char *file = t_tmppath(PFX, "results.json");
	json_t *res = conf_json(&r, &k, "", t_fmt("--results %s", file));
	cr_assert_eq(r.code, 0, "%s", r.err);
	char *written = t_slurp(file, NULL);
	cr_assert_not_null(written);
	cr_assert_str_eq(written, r.out);
	free(written);
	cr_assert_eq(level(res, "required", "passed"), REQUIRED);
	cr_assert_eq(level(res, "required", "total"), REQUIRED);
	cr_assert_eq(level(res, "recommended", "passed"), RECOMMENDED);
	cr_assert_eq(level(res, "recommended", "failed"), 0);
	cr_assert(json_is_true(json_object_get(res, "ok")));
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(res, "testee"), "name")), "oracle");
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(res, "kit"), "version")), "test");
	json_t *cases = json_object_get(res, "cases"), *c;
	size_t i;
	cr_assert_eq(json_array_size(cases), 7);
	int checks = 0;
	json_array_foreach(cases, i, c) {
		const char *name;
		json_t *v;
		cr_assert(json_is_null(json_object_get(c, "known")));
		json_object_foreach(json_object_get(c, "checks"), name, v) {
			cr_assert_str_eq(json_string_value(json_object_get(v, "result")), "pass", "%s %s",
			                 json_string_value(json_object_get(c, "id")), name);
			checks++;
		}
	}
	cr_assert_eq(checks, REQUIRED + RECOMMENDED);
	cr_assert_str_eq(json_string_value(json_object_get(json_array_get(cases, 0), "id")), k.valid[0]);
	json_decref(res);
}

/* Each fault on a case of its own, in one run: each caught, named by case
 * and check, with what went wrong; the testee restarted after each death. */
Test(conformance_testee, faults_caught_and_named)
{
	tkit_t k = make_kit();
	run_t r;
	const char *faults = t_fmt("--fault wrong-code=%s --fault accept=%s --fault garbage=%s --fault wrong-id=%s "
	                           "--fault crash=%s --fault reject=%s --fault bad-output=%s --fault bad-roundtrip=%s",
	                           k.structural[0], k.structural[1], k.structural[2], k.structural[3], k.semantic,
	                           k.valid[0], k.valid[1], k.valid[1]);
	conf(&r, &k, faults, "");
	cr_assert_eq(r.code, 1, "%s%s", r.out, r.err);
	char text[sizeof r.out];
	memcpy(text, r.out, sizeof text);
	json_t *res = conf_json(&r, &k, faults, "");
	cr_assert_eq(r.code, 1);
	cr_assert(json_is_false(json_object_get(res, "ok")));
	caught(res, text, k.structural[0], "error", "fail", "validate reported ");
	cr_assert_null(unexpected(res, k.structural[0], "decode"), "wrong-code: its decode refused the file");
	caught(res, text, k.structural[1], "decode", "fail", "accepted a file it must refuse");
	caught(res, text, k.structural[1], "verdict", "fail", "accepted a file it must refuse");
	caught(res, text, k.structural[2], "decode", "protocol", "': not one JSON object");
	caught(res, text, k.structural[3], "decode", "protocol", "with the id");
	caught(res, text, k.semantic, "decode", "crashed", "the testee exited with status 3; its stderr ends: ");
	caught(res, text, k.semantic, "verdict", "crashed", "the testee exited with status 3");
	caught(res, text, k.valid[0], "decode", "fail", "refused a file it must accept: ");
	caught(res, text, k.valid[0], "roundtrip", "fail", "encode refused it");
	caught(res, text, k.valid[0], "run", "fail", "run refused it");
	/* expected [0.5, -1.25, 2], the last got + 1 */
	caught(res, text, k.valid[1], "run", "fail", "max abs error 1; first mismatch at [0, 2]: 3, expected 2");
	caught(res, text, k.valid[1], "roundtrip", "fail", "first difference at byte offset ");
	cr_assert_null(unexpected(res, k.valid[1], "decode"));
	/* 18 required: valid[0] fails its 4, valid[1] 2, the structural 2, 2, 2, 2 (not the wrong code's), the semantic 2 */
	cr_assert_eq(level(res, "required", "passed"), REQUIRED - 4 - 2 - 6 - 2);
	cr_assert_eq(level(res, "recommended", "passed"), 0);
	json_decref(res);
}

/* A listed case that fails does not fail the run; a listed one that passes
 * does; --level required counts the required checks only. */
Test(conformance_testee, known_failures_and_levels)
{
	tkit_t k = make_kit();
	run_t r;
	const char *list = t_tmppath(PFX, "known.txt");
	const char *wrong = t_fmt("--fault wrong-code=%s", k.structural[0]);
	t_spit_str(list, t_fmt("# ours\n\n  %s    # we name another code\n", k.structural[0]));
	json_t *res = conf_json(&r, &k, wrong, t_fmt("--known-failures %s", list));
	cr_assert_eq(r.code, 0, "%s%s", r.out, r.err);
	cr_assert(json_is_true(json_object_get(res, "ok")));
	cr_assert_eq(json_array_size(json_object_get(res, "unexpected_failures")), 0);
	cr_assert_eq(level(res, "recommended", "passed"), RECOMMENDED - 1, "a known failure still fails its check");
	json_t *c, *cases = json_object_get(res, "cases");
	size_t i;
	int listed = 0;
	json_array_foreach(cases, i, c) {
		json_t *known = json_object_get(c, "known");
		if (!strcmp(json_string_value(json_object_get(c, "id")), k.structural[0])) {
			listed = 1;
			cr_assert_str_eq(json_string_value(known), "we name another code");
		} else {
			cr_assert(json_is_null(known));
		}
	}
	cr_assert(listed);
	json_decref(res);

	/* listed, and passing: the list is stale */
	conf(&r, &k, "", t_fmt("--known-failures %s", list));
	cr_assert_eq(r.code, 1, "%s%s", r.out, r.err);
	cr_assert(strstr(r.out, t_fmt("unexpected passes: 1\n  %s: listed as a known failure but passes", k.structural[0])),
	          "%s", r.out);
	cr_assert(strstr(r.out, ": FAILED\n"), "%s", r.out);

	/* the error check is recommended: not counted with --level required,
	 * where the listed case passes (so the list is stale) */
	conf(&r, &k, wrong, "--level required");
	cr_assert_eq(r.code, 0, "%s%s", r.out, r.err);
	conf(&r, &k, wrong, "");
	cr_assert_eq(r.code, 1, "%s%s", r.out, r.err);
	cr_assert(strstr(r.out, "unexpected failures: 1\n"), "%s", r.out);
	conf(&r, &k, wrong, t_fmt("--level required --known-failures %s", list));
	cr_assert_eq(r.code, 1, "%s%s", r.out, r.err);
	cr_assert(strstr(r.out, "unexpected passes: 1\n"), "%s", r.out);
	/* a verdict is required: --level required does not hide it */
	conf(&r, &k, t_fmt("--fault accept=%s", k.structural[1]), "--level required");
	cr_assert_eq(r.code, 1, "%s%s", r.out, r.err);
}

/* --fix: exactly the failing cases, the reasons of those still listed
 * kept, a new one's from its first failing check. */
Test(conformance_testee, fix_rewrites_the_list)
{
	tkit_t k = make_kit();
	run_t r;
	const char *list = t_tmppath(PFX, "known.txt");
	const char *faults = t_fmt("--fault wrong-code=%s --fault accept=%s", k.structural[0], k.structural[1]);
	t_spit_str(list, t_fmt("# our list\n\n%s # kept reason\n%s # stale\n", k.structural[0], k.valid[0]));
	conf(&r, &k, faults, t_fmt("--known-failures %s --fix", list));
	/* judged against the list as it was: a new failure and a stale entry */
	cr_assert_eq(r.code, 1, "%s%s", r.out, r.err);
	cr_assert(strstr(r.err, "rewritten: 2 failing cases (1 added, 1 removed)"), "%s", r.err);
	char *text = t_slurp(list, NULL);
	cr_assert_not_null(text);
	/* its leading comments kept */
	const char *want = t_fmt("# our list\n\n%s  # kept reason\n%s  # decode: fail: accepted a file it must refuse (the "
	                         "case is about ", k.structural[0], k.structural[1]);
	cr_assert(!strncmp(text, want, strlen(want)), "%s", text);
	cr_assert(strchr(text + strlen(want), '\n') && !strchr(text + strlen(want), '\n')[1], "two lines: %s", text);
	free(text);
	conf(&r, &k, faults, t_fmt("--known-failures %s", list));
	cr_assert_eq(r.code, 0, "the fixed list: %s%s", r.out, r.err);
	/* with --level required the wrong code is no failure: dropped */
	conf(&r, &k, faults, t_fmt("--known-failures %s --fix --level required", list));
	cr_assert_eq(r.code, 1, "%s%s", r.out, r.err);
	text = t_slurp(list, NULL);
	const char *rest = text ? strstr(text, "\n\n") : NULL;
	cr_assert(rest && !strncmp(rest + 2, k.structural[1], strlen(k.structural[1])) && !strstr(text, k.structural[0]),
	          "%s", text);
	free(text);

	/* an id that is no case of the kit: the list is for another kit */
	t_spit_str(list, "invalid/nope\n");
	conf(&r, &k, "", t_fmt("--known-failures %s", list));
	cr_assert_eq(r.code, 2, "%s%s", r.out, r.err);
	cr_assert(strstr(r.err, "'invalid/nope' is no case of the kit"), "%s", r.err);
	conf(&r, &k, "", t_fmt("--known-failures %s --fix", list));
	cr_assert_eq(r.code, 0, "%s%s", r.out, r.err);
	text = t_slurp(list, NULL);
	cr_assert_str_eq(text, "# Known failures: one case id a line, then '# reason'.\n# Written by nnnkit conformance --fix.\n");
	free(text);

	/* a list that does not exist yet: --fix makes it */
	const char *fresh = t_tmppath(PFX, "fresh.txt");
	conf(&r, &k, faults, t_fmt("--known-failures %s --fix", fresh));
	cr_assert_eq(r.code, 1, "%s%s", r.out, r.err);
	text = t_slurp(fresh, NULL);
	cr_assert(text && strstr(text, t_fmt("%s  # error: fail: validate reported ", k.structural[0])), "%s", text);
	free(text);
	nnnkitf(&r, "conformance --corpus %s --testee true --known-failures %s/none", k.dir, k.dir);
	cr_assert_eq(r.code, 2, "%s%s", r.out, r.err);
	cr_assert(strstr(r.err, t_fmt("%s/none: No such file or directory", k.dir)), "%s", r.err);
}

/* A live process (not a zombie) with pid `pid` or in group `pgid` (0:
 * none): its pid, or 0. */
static pid_t live(pid_t pid, pid_t pgid)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	pid_t found = 0;
	cr_assert_not_null(d);
	while (!found && (e = readdir(d)) != NULL) {
		char buf[512], path[300], state;
		int ppid, pgrp;
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		buf[fread(buf, 1, sizeof buf - 1, f)] = '\0';
		fclose(f);
		char *p = strrchr(buf, ')');
		pid_t at = (pid_t)atol(e->d_name);
		if (p && sscanf(p + 1, " %c %d %d", &state, &ppid, &pgrp) == 3 && state != 'Z' && state != 'X' &&
		    (at == pid || (pgid > 0 && pgrp == pgid)))
			found = at;
	}
	closedir(d);
	return found;
}

/* The pids a file lists, one a line: their count. */
static int pids(const char *path, pid_t *out, int n)
{
	FILE *f = fopen(path, "r");
	long v;
	int k = 0;
	while (f && k < n && fscanf(f, "%ld", &v) == 1)
		out[k++] = (pid_t)v;
	if (f)
		fclose(f);
	return k;
}

/* A folder with a `sleep` that records its pid in DIR/sleeps, then is
 * sleep: the hanging oracle's children, found by PATH. */
static const char *sleep_recorder(const tkit_t *k)
{
	char sleep_bin[512];
	cr_assert_eq(t_sh(sleep_bin, sizeof sleep_bin, "command -v sleep"), 0);
	sleep_bin[strcspn(sleep_bin, "\n")] = '\0';
	const char *bin = t_tmppath(PFX, "bin");
	cr_assert_eq(t_sh(NULL, 0, "mkdir %s && printf '#!/bin/sh\\necho $$ >>%s/sleeps\\nexec %s \"$@\"\\n' >%s/sleep && "
	                  "chmod +x %s/sleep", bin, k->dir, sleep_bin, bin, bin), 0);
	return bin;
}

/* The oracle, hanging at case `id`, as a --testee value (for single quotes)
 * that records each start's process group in DIR/groups: $$ is the shell
 * nnnkit starts, which the oracle replaces, the group's leader. */
static const char *hanging(const tkit_t *k, const char *bin, const char *id)
{
	return t_fmt("PATH=%s:$PATH; echo $$ >>%s/groups; exec %s --fault hang=%s", bin, k->dir, oracle(k, ""), id);
}

/* No process of the testee's groups, nor any child they recorded, is left
 * (what is left is killed before the test fails); the count of starts. */
static int none_left(const tkit_t *k)
{
	pid_t groups[8], children[8], first = 0, left;
	int ng = pids(t_fmt("%s/groups", k->dir), groups, 8), nc = pids(t_fmt("%s/sleeps", k->dir), children, 8);
	for (int i = 0; i < ng + nc; i++) {
		pid_t p = i < ng ? groups[i] : children[i - ng];
		for (int n = 0; n < 100 && (left = live(p, i < ng ? p : 0)) != 0; n++) {
			first = first ? first : left;
			kill(left, SIGKILL);
		}
	}
	cr_assert(nc >= 1, "the hanging testee's children never started");
	cr_assert_eq(first, 0, "process %d of the testee's groups outlived nnnkit", (int)first);
	return ng;
}

/* A testee that hangs at a case, with two children: its whole group is
 * killed at the timeout (no process of it stays: each start's group and
 * each child, as they recorded themselves), and the run goes on with the
 * testee started again. */
Test(conformance_testee, hanging_testee_killed_whole)
{
	tkit_t k = make_kit();
	run_t r;
	const char *bin = sleep_recorder(&k);
	nnnkitf(&r, "conformance --corpus %s --timeout 1 --json --testee '%s'", k.dir, hanging(&k, bin, k.semantic));
	cr_assert_eq(r.code, 1, "%s%s", r.out, r.err);
	json_t *res = json_loads(r.out, 0, NULL);
	cr_assert_not_null(res, "%s", r.out);
	const json_t *f = unexpected(res, k.semantic, "decode");
	cr_assert(f && !strcmp(json_string_value(json_object_get(f, "result")), "timeout") &&
	          strstr(json_string_value(json_object_get(f, "why")), "no answer in 1 s (--timeout) (the testee was killed "
	                                                              "by signal 9"), "%s", r.out);
	cr_assert_str_eq(json_string_value(json_object_get(unexpected(res, k.semantic, "verdict"), "result")), "timeout");
	/* every other check passed, before the hang and after it */
	cr_assert_eq(level(res, "required", "passed"), REQUIRED - 2);
	cr_assert_eq(level(res, "recommended", "passed"), RECOMMENDED - 1);
	json_decref(res);
	/* started, and again after each of the two requests that hung (unless the case was the last) */
	cr_assert_geq(none_left(&k), 2);
}

/* SIGTERM to nnnkit while the testee hangs: the testee's group goes, then
 * nnnkit, by that signal. */
Test(conformance_testee, sigterm_kills_the_testee, .timeout = 30)
{
	tkit_t k = make_kit();
	const char *bin = sleep_recorder(&k), *testee = hanging(&k, bin, k.valid[0]);
	struct timespec tick = { 0, 10000000 };
	pid_t kit = fork(), kids[2];
	int st;
	cr_assert_geq(kit, 0);
	if (kit == 0) {
		/* as from a terminal: SIGTERM neither blocked nor ignored */
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGTERM, SIG_DFL);
		if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr))
			_exit(127);
		execl(nnnkit_bin(), "nnnkit", "conformance", "--corpus", k.dir, "--timeout", "60", "--testee", testee,
		      (char *)NULL);
		_exit(127);
	}
	/* until the hang has started both children (at most 20 s) */
	for (int i = 0; i < 2000 && pids(t_fmt("%s/sleeps", k.dir), kids, 2) < 2; i++)
		nanosleep(&tick, NULL);
	kill(kit, SIGTERM);
	while (waitpid(kit, &st, 0) < 0)
		;
	cr_assert_eq(none_left(&k), 1);
	cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM, "nnnkit ended with status %#x, not by SIGTERM", st);
}

/* An op the testee does not offer fails its checks, saying so. */
Test(conformance_testee, op_not_offered)
{
	tkit_t k = make_kit();
	run_t r;
	json_t *res = conf_json(&r, &k, "--no-op run", "");
	cr_assert_eq(r.code, 1, "%s%s", r.out, r.err);
	for (int i = 0; i < 2; i++) {
		const json_t *f = unexpected(res, k.valid[i], "run");
		cr_assert(f && strstr(json_string_value(json_object_get(f, "why")), "the testee does not offer `run`"), "%s",
		          r.out);
	}
	cr_assert_eq(json_array_size(json_object_get(res, "unexpected_failures")), 2);
	json_decref(res);
}

/* Options that make no sense together, and testees that cannot be used:
 * exit 2, naming them. */
Test(conformance_testee, usage_errors)
{
	tkit_t k = make_kit();
	static const char *const bad[][2] = {
		{ "--testee true --decoder 'x {file}'", "--decoder does not go with --testee" },
		{ "--testee true --reference 'x {model} {input} {output}'", "--reference does not go with --testee" },
		{ "--testee true --tolerance 0.1", "--tolerance does not go with --testee" },
		{ "--testee true -v", "--verbose shows nnnkit's own runs" },
		{ "--testee true --fix", "--fix rewrites the list of --known-failures FILE: give it" },
		{ "--known-failures x.txt", "--known-failures goes with --testee only" },
		{ "--fix", "--fix goes with --testee only" },
		{ "--level required", "--level goes with --testee only" },
		{ "--results r.json", "--results goes with --testee only" },
		{ "--decoder 'x {file}' --level required", "--level goes with --testee only" },
		{ "--testee true --level all", "--level" },
		{ "--testee true", "the testee cannot be used: true: ended its stdout without an answer" },
		{ "--testee 'echo hi'", "the testee cannot be used: echo hi: answered 'hi': not one JSON object" },
		{ "--testee 'echo \"{\\\"id\\\": 0, \\\"ok\\\": true}\"'", "answered hello without \"ok\": true, protocol 1 "
		                                                         "and an \"ops\" array" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		run_t r;
		nnnkitf(&r, "conformance --corpus %s --timeout 1 %s", k.dir, bad[i][0]);
		cr_assert_eq(r.code, 2, "%s: exit %d: %s%s", bad[i][0], r.code, r.out, r.err);
		cr_assert(strstr(r.err, bad[i][1]), "%s: %s", bad[i][0], r.err);
	}
}
