/* test_cli_conventions.c: every nnnkit command through the conventions of
 * its one option parser (runtime/cli/opts.c). The commands and their
 * options come from the binary's own tables (`nnnkit help --json`), never
 * from a list here that could go stale: a new command is walked as soon as
 * it is in main.c's table. Each result's exit code must be one the command
 * declares (its help lists them from the one exit table). */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nnn/npy.h>

#include "builder.h"
#include "clirun.h"
#include "ctx.h"
#include "shell.h"

static json_t *tables(void)
{
	static char out[1 << 17];
	const char *kit = nnnkit_bin();
	cr_assert_eq(t_sh(out, sizeof out, "'%s' help --json", kit), 0, "%s", out);
	json_error_t e;
	json_t *j = json_loads(out, 0, &e);
	cr_assert_not_null(j, "nnnkit help --json: line %d: %s", e.line, e.text);
	return j;
}

static const char *str(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

static int yes(const json_t *o, const char *key)
{
	return json_is_true(json_object_get(o, key));
}

/* The files a command line is made of, in one temporary folder. */
typedef struct fx {
	char dir[64], model[128], npy[128], text[128], spec[128];
} fx_t;

static void fx_make(fx_t *f)
{
	bb_t b = { 0 };
	char out[4096];
	nnn_shape_t s = { .rank = 2, .dims = { 2, 3 } };
	const float x[6] = { 1, 0, 0, 1, 0, 0 };
	snprintf(f->dir, sizeof f->dir, "/tmp/nnnconv.XXXXXX");
	cr_assert_not_null(mkdtemp(f->dir));
	bb_tiny(&b);
	snprintf(f->model, sizeof f->model, "%s/m.nnn", f->dir);
	FILE *o = fopen(f->model, "wb");
	cr_assert_not_null(o);
	cr_assert_eq(fwrite(b.b, 1, b.n, o), b.n);
	fclose(o);
	bb_free(&b);
	snprintf(f->npy, sizeof f->npy, "%s/x.npy", f->dir);
	cr_assert_eq(nnn_npy_write_file(f->npy, &s, x, NULL), NNN_OK);
	snprintf(f->text, sizeof f->text, "%s/notes.txt", f->dir);
	o = fopen(f->text, "w");
	fputs("these are notes, not a model\n", o);
	fclose(o);
	snprintf(f->spec, sizeof f->spec, "%s/spec.json", f->dir);
	cr_assert_eq(t_sh(out, sizeof out, "'%s' convert '%s' '%s'", nnnkit_bin(), f->model, f->spec), 0, "%s", out);
}

static void fx_free(fx_t *f)
{
	char out[256];
	t_sh(out, sizeof out, "rm -rf '%s'", f->dir);
}

/* A file of the kind an entry wants: a .json spec, a .npy array, or a
 * model; an output in the folder (a new name each time). */
static const char *good_value(const fx_t *f, const char *kind, const char *name, const char *metavar)
{
	static int serial;
	const char *m = metavar ? metavar : name;
	if (!strcmp(kind, "file-in"))
		return strstr(m, ".json") ? f->spec : strstr(m, ".npy") ? f->npy : f->model;
	if (!strcmp(kind, "file-out"))
		return t_fmt("%s/out%d%s", f->dir, serial++, strstr(m, ".npy") ? ".npy" : strstr(m, ".json") ? ".json" : ".nnn");
	if (!strcmp(kind, "dir-out"))
		return t_fmt("%s/dir%d", f->dir, serial++);
	if (!strcmp(kind, "dir-in"))
		return f->dir;
	return "1";
}

/* A command line for cmd: every positional and required option given a
 * good value, except `which` (a positional's or option's name) given
 * `value`; `extra` appended before the positionals' "--". */
static void line(char *buf, size_t size, const fx_t *f, const json_t *cmd, const char *which, const char *value,
                 const char *extra)
{
	size_t k = (size_t)snprintf(buf, size, "%s", str(cmd, "name"));
	size_t i;
	json_t *o;
	json_array_foreach(json_object_get(cmd, "options"), i, o) {
		int is = which && !strcmp(str(o, "name"), which);
		if (!yes(o, "required") && !is)
			continue;
		k += (size_t)snprintf(buf + k, size - k, " --%s '%s'", str(o, "name"),
		                      is ? value : good_value(f, str(o, "kind"), str(o, "name"), str(o, "metavar")));
	}
	/* edit needs something to do */
	if (!strcmp(str(cmd, "name"), "edit") && !(which && !strcmp(which, "get")))
		k += (size_t)snprintf(buf + k, size - k, " --fix-param-count");
	k += (size_t)snprintf(buf + k, size - k, " %s --", extra ? extra : "");
	json_array_foreach(json_object_get(cmd, "positionals"), i, o) {
		int is = which && !strcmp(str(o, "name"), which);
		if (which && str(o, "option") && !strcmp(str(o, "option"), which))
			continue; /* given as its option */
		k += (size_t)snprintf(buf + k, size - k, " '%s'",
		                      is ? value : good_value(f, str(o, "kind"), str(o, "name"), NULL));
	}
}

static int has_opt(const json_t *cmd, const char *name)
{
	size_t i;
	json_t *o;
	json_array_foreach(json_object_get(cmd, "options"), i, o)
		if (!strcmp(str(o, "name"), name))
			return 1;
	return 0;
}

/* The exit code is one the command declares. */
static void declared(const json_t *cmd, int code, const char *args, const char *err)
{
	size_t i;
	json_t *c;
	json_array_foreach(json_object_get(cmd, "exits"), i, c)
		if (json_integer_value(c) == code)
			return;
	cr_assert_fail("%s: exit %d is not in the command's exit table\n%s", args, code, err);
}

/* A usage error: exit 2, one line naming the problem, one pointing at help. */
static void one_line(const json_t *cmd, const run_t *r, const char *args, const char *needle)
{
	const char *name = str(cmd, "name");
	char see[128];
	snprintf(see, sizeof see, "see 'nnnkit %s --help'\n", name);
	cr_assert_eq(r->code, 2, "%s: exit %d\n%s", args, r->code, r->err);
	cr_assert(!strncmp(r->err, t_fmt("nnnkit %s: ", name), strlen(name) + 9), "%s:\n%s", args, r->err);
	const char *nl = strchr(r->err, '\n');
	cr_assert(nl && !strcmp(nl + 1, see), "%s: not one line and the help pointer:\n%s", args, r->err);
	cr_assert(!needle || strstr(r->err, needle), "%s: no '%s' in:\n%s", args, needle, r->err);
	declared(cmd, r->code, args, r->err);
}

Test(conventions, every_command_uses_the_parser_and_the_help_lists_them)
{
	json_t *j = tables();
	run_t r;
	size_t i;
	json_t *cmd;
	nnnkit(&r, "--help");
	cr_assert_eq(r.code, 0);
	json_array_foreach(json_object_get(j, "commands"), i, cmd) {
		const char *name = str(cmd, "name");
		cr_assert(yes(cmd, "parser"), "%s parses its own argv: declare its options (runtime/cli/cli.h)", name);
		cr_assert(strstr(r.out, t_fmt("\n  %-12s ", name)), "nnnkit --help does not list %s", name);
	}
	/* And nothing the help lists is missing from the tables. */
	char out[4096];
	cr_assert_eq(t_sh(out, sizeof out, "'%s' --help | awk '/^commands:/ {on=1; next} on && /^$/ {exit} on {print $1}' "
	                  "| wc -l", nnnkit_bin()), 0);
	cr_assert_eq((size_t)atoi(out), json_array_size(json_object_get(j, "commands")), "%s", out);
	json_decref(j);
}

Test(conventions, help_lists_every_option_and_exit_code)
{
	json_t *j = tables();
	run_t r, h;
	size_t i, k;
	json_t *cmd, *o;
	json_array_foreach(json_object_get(j, "commands"), i, cmd) {
		const char *name = str(cmd, "name");
		nnnkit(&r, t_fmt("%s --help", name));
		cr_assert_eq(r.code, 0, "%s --help: %s", name, r.err);
		cr_assert(strstr(r.out, "usage: nnnkit"), "%s --help:\n%s", name, r.out);
		json_array_foreach(json_object_get(cmd, "options"), k, o) {
			if (yes(o, "hidden"))
				continue;
			cr_assert(strstr(r.out, t_fmt("--%s", str(o, "name"))), "%s --help lacks --%s", name, str(o, "name"));
		}
		cr_assert(strstr(r.out, "\nExit status:\n"), "%s --help has no exit status", name);
		json_array_foreach(json_object_get(cmd, "exits"), k, o)
			cr_assert(strstr(r.out, t_fmt("\n  %d  ", (int)json_integer_value(o))), "%s --help lacks exit %d", name,
			          (int)json_integer_value(o));
		/* `nnnkit help CMD` is the same text; -h too, anywhere. */
		nnnkit(&h, t_fmt("help %s", name));
		cr_assert_eq(h.code, 0);
		cr_assert_str_eq(h.out, r.out, "help %s differs from %s --help", name, name);
		nnnkit(&h, t_fmt("%s some-file -h", name));
		cr_assert_eq(h.code, 0, "%s some-file -h: %s", name, h.err);
	}
	nnnkit(&r, "help");
	cr_assert_eq(r.code, 0);
	cr_assert(strstr(r.out, "commands:"), "%s", r.out);
	nnnkit(&r, "help frobnicate");
	cr_assert_eq(r.code, 2);
	json_decref(j);
}

Test(conventions, unknown_options_missing_values_and_repeats)
{
	json_t *j = tables();
	run_t r;
	size_t i, k;
	json_t *cmd, *o;
	json_array_foreach(json_object_get(j, "commands"), i, cmd) {
		const char *name = str(cmd, "name");
		const char *args = t_fmt("%s --bogus-option x", name);
		nnnkit(&r, args);
		one_line(cmd, &r, args, "unknown option --bogus-option");
		json_array_foreach(json_object_get(cmd, "options"), k, o) {
			const char *opt = str(o, "name"), *kind = str(o, "kind");
			/* A one-letter typo gets a suggestion. */
			if (strlen(opt) > 4) {
				args = t_fmt("%s --%.*sX%s", name, 2, opt, opt + 3);
				nnnkit(&r, args);
				one_line(cmd, &r, args, t_fmt("did you mean --%s?", opt));
			}
			if (!strcmp(kind, "flag")) {
				args = t_fmt("%s --%s=1", name, opt);
				nnnkit(&r, args);
				one_line(cmd, &r, args, "takes no value");
				continue;
			}
			args = t_fmt("%s --%s", name, opt);
			nnnkit(&r, args);
			one_line(cmd, &r, args, t_fmt("--%s needs a value", opt));
			if (!yes(o, "repeat")) {
				const char *v = !strcmp(kind, "shape") ? "1,4" : "1";
				if (!strcmp(kind, "choice")) /* its first word */
					v = t_fmt("%.*s", (int)strcspn(str(o, "choices"), " "), str(o, "choices"));
				args = t_fmt("%s --%s %s --%s=%s", name, opt, v, opt, v);
				nnnkit(&r, args);
				one_line(cmd, &r, args, t_fmt("--%s given twice", opt));
			}
		}
	}
	json_decref(j);
}

Test(conventions, numbers_reject_junk_and_name_their_range)
{
	json_t *j = tables();
	run_t r;
	size_t i, k;
	json_t *cmd, *o;
	int numeric = 0;
	json_array_foreach(json_object_get(j, "commands"), i, cmd) {
		const char *name = str(cmd, "name");
		json_array_foreach(json_object_get(cmd, "options"), k, o) {
			const char *opt = str(o, "name"), *kind = str(o, "kind");
			if (!strcmp(kind, "number")) {
				uint64_t max = (uint64_t)json_integer_value(json_object_get(o, "max"));
				char range[128], over[32];
				snprintf(range, sizeof range, "--%s needs a whole number from %lld to %llu", opt,
				         (long long)json_integer_value(json_object_get(o, "min")), (unsigned long long)max);
				snprintf(over, sizeof over, "%llu", (unsigned long long)max + 1);
				const char *bad[] = { "abc", "1e3", "-1", " 5", "0x10", "", over };
				for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
					const char *args = t_fmt("%s --%s '%s'", name, opt, bad[b]);
					nnnkit(&r, args);
					one_line(cmd, &r, args, range);
					cr_assert(strstr(r.err, t_fmt("not '%s'", bad[b])), "%s: %s", args, r.err);
				}
				numeric++;
			} else if (!strcmp(kind, "real")) {
				const char *bad[] = { "abc", "nan", "inf", "0x1p3", "1e99", "-5", "" };
				for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
					const char *args = t_fmt("%s --%s='%s'", name, opt, bad[b]);
					nnnkit(&r, args);
					one_line(cmd, &r, args, t_fmt("--%s needs a number from", opt));
				}
				numeric++;
			} else if (!strcmp(kind, "shape")) {
				const char *bad[] = { "1x4", "1,4,", ",1,4", "1,,4", "1,a", "", "0,4" };
				for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
					const char *args = t_fmt("%s --%s '%s'", name, opt, bad[b]);
					nnnkit(&r, args);
					one_line(cmd, &r, args, t_fmt("--%s", opt));
				}
			} else if (!strcmp(kind, "choice")) {
				const char *args = t_fmt("%s --%s nope", name, opt);
				nnnkit(&r, args);
				one_line(cmd, &r, args, t_fmt("one of: %s", str(o, "choices")));
			}
		}
	}
	cr_assert_gt(numeric, 5, "the tables declare fewer numeric options than nnnkit has");
	json_decref(j);
}

Test(conventions, missing_and_wrong_files_are_named, .timeout = 120)
{
	json_t *j = tables();
	fx_t f;
	run_t r;
	size_t i, k;
	json_t *cmd, *o;
	char args[4096];
	fx_make(&f);
	json_array_foreach(json_object_get(j, "commands"), i, cmd) {
		json_t *lists[2] = { json_object_get(cmd, "positionals"), json_object_get(cmd, "options") };
		for (int l = 0; l < 2; l++)
			json_array_foreach(lists[l], k, o) {
				if (strcmp(str(o, "kind"), "file-in") || !strcmp(str(cmd, "name"), "plugins"))
					continue;
				const char *missing = t_fmt("%s/no-such-file", f.dir);
				line(args, sizeof args, &f, cmd, str(o, "name"), missing, NULL);
				nnnkit(&r, args);
				cr_assert_eq(r.code, 2, "%s: exit %d\n%s", args, r.code, r.err);
				cr_assert(strstr(r.err, missing), "%s: the missing file is not named:\n%s", args, r.err);
				declared(cmd, r.code, args, r.err);
				/* A folder where a file goes: exit 2, named, said so. */
				line(args, sizeof args, &f, cmd, str(o, "name"), f.dir, NULL);
				nnnkit(&r, args);
				cr_assert_eq(r.code, 2, "%s: exit %d\n%s", args, r.code, r.err);
				cr_assert(strstr(r.err, t_fmt("%s: ", f.dir)) && strstr(r.err, "is a directory, not a regular file"),
				          "%s: %s", args, r.err);
				/* A text file where a model, spec or array goes: invalid (1), named;
				 * diff, whose 1 means "they differ", says 2 (as diff(1) and cmp do). */
				line(args, sizeof args, &f, cmd, str(o, "name"), f.text, NULL);
				nnnkit(&r, args);
				int wrong = !strcmp(str(cmd, "name"), "diff") ? 2 : 1;
				cr_assert_eq(r.code, wrong, "%s: exit %d\n%s", args, r.code, r.err);
				cr_assert(strstr(r.err, f.text), "%s: the wrong file is not named:\n%s", args, r.err);
				declared(cmd, r.code, args, r.err);
			}
	}
	fx_free(&f);
	json_decref(j);
}

Test(conventions, double_dash_ends_the_options, .timeout = 60)
{
	fx_t f;
	char out[8192];
	fx_make(&f);
	/* A model whose name starts with '-' works after --, and only there. */
	cr_assert_eq(t_sh(out, sizeof out, "cd '%s' && cp m.nnn ./-m.nnn && '%s' validate -- -m.nnn", f.dir, nnnkit_bin()),
	             0, "%s", out);
	cr_assert(strstr(out, "-m.nnn: valid"), "%s", out);
	cr_assert_eq(t_sh(out, sizeof out, "cd '%s' && '%s' validate -m.nnn", f.dir, nnnkit_bin()), 2, "%s", out);
	cr_assert(strstr(out, "unknown option -m.nnn"), "%s", out);
	/* Options after -- are files; global options are taken before it. */
	cr_assert_eq(t_sh(out, sizeof out, "cd '%s' && '%s' info --no-progress -- -m.nnn", f.dir, nnnkit_bin()), 0, "%s",
	             out);
	cr_assert_eq(t_sh(out, sizeof out, "cd '%s' && '%s' info -- --no-progress", f.dir, nnnkit_bin()), 2, "%s", out);
	cr_assert(strstr(out, "--no-progress"), "%s", out);
	fx_free(&f);
}

/* '-' for every file entry: where the table allows it, the same result as
 * the file's name (stdin from the file, or stdout); elsewhere refused with
 * a reason. */
Test(conventions, dash_is_stdin_or_stdout_or_refused, .timeout = 180)
{
	json_t *j = tables();
	fx_t f;
	size_t i, k;
	json_t *cmd, *o;
	char args[4096], base[4096], out[65536];
	int allowed = 0;
	fx_make(&f);
	json_array_foreach(json_object_get(j, "commands"), i, cmd) {
		json_t *lists[2] = { json_object_get(cmd, "positionals"), json_object_get(cmd, "options") };
		if (!strcmp(str(cmd, "name"), "conformance"))
			continue; /* its files are folders and commands */
		for (int l = 0; l < 2; l++)
			json_array_foreach(lists[l], k, o) {
				const char *kind = str(o, "kind"), *name = str(o, "name");
				if (strncmp(kind, "file-", 5) && strncmp(kind, "dir-", 4))
					continue;
				const char *force = has_opt(cmd, "force") ? "--force" : NULL;
				line(args, sizeof args, &f, cmd, name, "-", force);
				if (!yes(o, "dash")) {
					int st = t_sh(out, sizeof out, "'%s' %s < '%s'", nnnkit_bin(), args, f.model);
					cr_assert_eq(st, 2, "%s: exit %d\n%s", args, st, out);
					cr_assert(strstr(out, "cannot be '-'"), "%s: no reason given:\n%s", args, out);
					continue;
				}
				allowed++;
				const char *file = good_value(&f, kind, name, str(o, "metavar"));
				line(base, sizeof base, &f, cmd, name, file, force);
				int want = t_sh(out, sizeof out, "'%s' %s >/dev/null", nnnkit_bin(), base);
				/* stdout to a file, not a pipe: sh gives a pipe's last exit status */
				int st = !strcmp(kind, "file-in")
				                 ? t_sh(out, sizeof out, "cat '%s' | '%s' %s >/dev/null", file, nnnkit_bin(), args)
				                 : t_sh(out, sizeof out, "'%s' %s > '%s/stdout'", nnnkit_bin(), args, f.dir);
				cr_assert_eq(st, want, "%s: exit %d, but %d with a file name\n%s", args, st, want, out);
				cr_assert_null(strstr(out, "cannot open"), "%s: %s", args, out);
				declared(cmd, st, args, out);
				if (strcmp(kind, "file-in"))
					continue;
				/* Wrong bytes on stdin: the message names "stdin", whatever reads it
				 * (export's folder exists by now: it says so first). */
				st = t_sh(out, sizeof out, "printf 'not a model, not an array' | '%s' %s >/dev/null", nnnkit_bin(),
				          args);
				cr_assert(st != 0, "%s: took text", args);
				cr_assert(!strcmp(str(cmd, "name"), "export") || strstr(out, "nnnkit: stdin"),
				          "%s: stdin not named:\n%s", args, out);
				cr_assert_null(strstr(out, "/proc/self/fd/"), "%s: %s", args, out);
				cr_assert_null(strstr(out, "nnnkit: -:"), "%s: %s", args, out);
			}
	}
	cr_assert_gt(allowed, 8);
	/* stdin is read once. */
	cr_assert_eq(t_sh(out, sizeof out, "'%s' eval - --inputs - --labels x.npy < /dev/null", nnnkit_bin()), 2, "%s", out);
	cr_assert(strstr(out, "read only once"), "%s", out);
	fx_free(&f);
	json_decref(j);
}

/* Binary output to a terminal: refused unless --force (a pty from script(1)). */
Test(conventions, binary_to_a_terminal_is_refused, .timeout = 120)
{
	json_t *j = tables();
	fx_t f;
	size_t i, k;
	json_t *cmd, *o;
	char args[4096], out[65536];
	int seen = 0;
	if (t_sh(out, sizeof out, "script -qc true /dev/null") != 0)
		cr_skip_test("script(1) cannot open a pseudo-terminal here: %s", out);
	fx_make(&f);
	json_array_foreach(json_object_get(j, "commands"), i, cmd) {
		json_t *lists[2] = { json_object_get(cmd, "positionals"), json_object_get(cmd, "options") };
		for (int l = 0; l < 2; l++)
			json_array_foreach(lists[l], k, o) {
				if (!yes(o, "binary"))
					continue;
				seen++;
				line(args, sizeof args, &f, cmd, str(o, "name"), "-", NULL);
				int st = t_sh(out, sizeof out, "script -qec \"'%s' %s\" /dev/null < /dev/null", nnnkit_bin(), args);
				cr_assert_eq(st, 2, "%s on a terminal: exit %d\n%s", args, st, out);
				cr_assert(strstr(out, "refusing to write") && strstr(out, "--force"), "%s: %s", args, out);
				line(args, sizeof args, &f, cmd, str(o, "name"), "-", "--force");
				st = t_sh(out, sizeof out, "script -qec \"'%s' %s\" /dev/null < /dev/null", nnnkit_bin(), args);
				cr_assert_null(strstr(out, "refusing"), "%s --force: %s", args, out);
			}
	}
	cr_assert_gt(seen, 1);
	/* convert decides late (--to nnn): the same refusal. */
	int st = t_sh(out, sizeof out, "script -qec \"'%s' convert --to nnn '%s' -\" /dev/null < /dev/null", nnnkit_bin(),
	              f.model);
	cr_assert_eq(st, 2, "%s", out);
	cr_assert(strstr(out, "refusing to write a binary .nnn model to a terminal"), "%s", out);
	fx_free(&f);
	json_decref(j);
}

Test(conventions, environment_is_checked)
{
	run_t r;
	nnnkit_env(&r, "NNNKIT_PROGRESS=yes", "info /nonexistent.nnn");
	cr_assert_eq(r.code, 2);
	cr_assert(strstr(r.err, "NNNKIT_PROGRESS must be 0 or 1"), "%s", r.err);
	nnnkit_env(&r, "NNNKIT_PROGRESS=", "plugins");
	cr_assert_neq(r.code, 2, "an empty NNNKIT_PROGRESS is unset: %s", r.err);
}

/* The man page and the completion are made from the same tables: every
 * option of every command, every global option, every variable the sources
 * read, and every exit code. */
Test(conventions, man_page_and_completion_know_every_option, .timeout = 60)
{
	json_t *j = tables();
	const char *b = t_build_dir();
	static char man[1 << 18], comp[1 << 17];
	size_t i, k;
	json_t *cmd, *o;
	slurp_keep(t_fmt("%s/nnnkit.1", b), man, sizeof man);
	slurp_keep(t_fmt("%s/nnnkit.bash", b), comp, sizeof comp);
	cr_assert(man[0] && comp[0], "no %s/nnnkit.1 or nnnkit.bash", b);
	json_array_foreach(json_object_get(j, "commands"), i, cmd) {
		const char *name = str(cmd, "name");
		cr_assert(strstr(man, t_fmt("\n.SS %s\n", name)), "the man page has no %s", name);
		cr_assert(strstr(comp, t_fmt("\n\t%s)\n", name)), "the completion has no %s", name);
		json_array_foreach(json_object_get(cmd, "options"), k, o) {
			if (yes(o, "hidden"))
				continue;
			char roff[128];
			size_t n = 0;
			for (const char *p = str(o, "name"); *p && n + 3 < sizeof roff; p++)
				n += (size_t)snprintf(roff + n, sizeof roff - n, *p == '-' ? "\\-" : "%c", *p);
			cr_assert(strstr(man, t_fmt("\\fB\\-\\-%s\\fR", roff)), "the man page lacks %s --%s", name, str(o, "name"));
			cr_assert(strstr(comp, t_fmt("--%s", str(o, "name"))), "the completion lacks %s --%s", name,
			          str(o, "name"));
		}
	}
	json_array_foreach(json_object_get(j, "global"), k, o) {
		cr_assert(strstr(comp, t_fmt("--%s ", json_string_value(o))), "completion lacks --%s", json_string_value(o));
		cr_assert(strstr(man, "\\fB\\-\\-no\\-default\\-plugins\\fR") && strstr(man, "\\fB\\-\\-progress\\fR"));
	}
	json_array_foreach(json_object_get(j, "exits"), k, o)
		cr_assert(strstr(man, t_fmt(".TP\n.B %d\n", (int)json_integer_value(json_object_get(o, "code")))),
		          "the man page's EXIT STATUS lacks %d", (int)json_integer_value(json_object_get(o, "code")));
	/* Every variable the tool, the library and the builtin plugin read. */
	char vars[4096];
	/* (the suite runs from the tree's root, as make test runs it) */
	int st = t_sh(vars, sizeof vars, "grep -ohE 'getenv\\(\"[A-Z_]+\"\\)' runtime/*/*.c runtime/formats/onnx/*.c "
	              "plugins/*/*.c | sed -E 's/.*\\(\"([A-Z_]+)\"\\)/\\1/' | sort -u");
	cr_assert_eq(st, 0, "%s", vars);
	cr_assert(strstr(vars, "NNN_PLUGIN_PATH"), "no sources found in the working folder: %s", vars);
	for (char *v = strtok(vars, "\n"); v; v = strtok(NULL, "\n"))
		cr_assert(strstr(man, t_fmt(".TP\n.B %s\n", v)), "the man page's ENVIRONMENT lacks %s", v);
	cr_assert(strstr(man, ".TP\n.B NNNKIT_PROGRESS\n"));
	json_decref(j);
}

/* --input-shape wherever inputs are read: a flat [N, 784] array runs
 * through run as through eval; without it, the error names the array and
 * the option, not the model's kernel. */
Test(conventions, input_shape_for_run_and_blame_on_the_input, .timeout = 120)
{
	const char *b = t_build_dir();
	fx_t f;
	char out[65536], flat[160], x[160], m[160];
	nnn_npy_t a;
	fx_make(&f);
	snprintf(m, sizeof m, "%s/mnist.nnn", f.dir);
	snprintf(x, sizeof x, "%s/x4.npy", f.dir);
	snprintf(flat, sizeof flat, "%s/flat.npy", f.dir);
	cr_assert_eq(t_sh(out, sizeof out, "'%s/mkexample' '%s' '%s'", b, m, x), 0, "%s", out);
	cr_assert_eq(nnn_npy_read_file(x, &a, NULL), NNN_OK);
	nnn_shape_t s = { .rank = 2, .dims = { a.shape.dims[0], (int64_t)a.count / a.shape.dims[0] } };
	cr_assert_eq(nnn_npy_write_file(flat, &s, a.data, NULL), NNN_OK);
	nnn_npy_free(&a);
	char want[65536];
	cr_assert_eq(t_sh(want, sizeof want, "'%s' run '%s' --input '%s'", nnnkit_bin(), m, x), 0, "%s", want);
	cr_assert_eq(t_sh(out, sizeof out, "'%s' run '%s' --input '%s' --input-shape 1,28,28,1", nnnkit_bin(), m, flat), 0,
	             "%s", out);
	cr_assert_str_eq(out, want);
	for (int i = 0; i < 2; i++) {
		char line[1024];
		if (i == 0)
			snprintf(line, sizeof line, "run '%s' --input '%s'", m, flat);
		else
			snprintf(line, sizeof line, "eval '%s' --inputs '%s' --labels '%s'", m, flat, f.npy);
		int st = t_sh(out, sizeof out, "'%s' %s", nnnkit_bin(), line);
		cr_assert_eq(st, 1, "%s: exit %d\n%s", line, st, out);
		cr_assert(!strncmp(out, t_fmt("nnnkit: %s: ", flat), strlen(flat) + 10) && strstr(out, "--input-shape"),
		          "%s: the input and --input-shape are not named first:\n%s", line, out);
	}
	/* A shape the user gave is blamed as given, not as "the model's input";
	 * one axis short gets the batch hint (issue 33). */
	int st = t_sh(out, sizeof out, "'%s' validate --input-shape 28,28,1 '%s'", nnnkit_bin(), m);
	cr_assert(st == 1 && strstr(out, "(from the input shape [28, 28, 1] given)") &&
	                  strstr(out, "the first axis is the batch: give 1 before the others"),
	          "exit %d:\n%s", st, out);
	st = t_sh(out, sizeof out, "'%s' validate --input-shape 1,28,28,2 '%s'", nnnkit_bin(), m);
	cr_assert(st == 1 && strstr(out, "(from the input shape [1, 28, 28, 2] given)") && !strstr(out, "batch:"),
	          "exit %d:\n%s", st, out);
	fx_free(&f);
}

/* mkexample takes an option it does not know (--help, a typo) for what it
 * is: a usage error, with nothing written. It once wrote the example model
 * to a file named --help. */
Test(conventions, mkexample_refuses_an_unknown_option)
{
	char dir[64] = "/tmp/nnnmkex.XXXXXX", out[4096];
	cr_assert_not_null(mkdtemp(dir));
	const char *args[] = { "--help", "-x out.nnn", "out.nnn --inputs" };
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(t_sh(out, sizeof out, "cd '%s' && '%s/mkexample' %s", dir, t_build_dir(), args[i]), 2,
		             "mkexample %s: %s", args[i], out);
		cr_assert(strstr(out, "usage: mkexample"), "%s", out);
	}
	cr_assert_eq(t_sh(out, sizeof out, "ls -A '%s'", dir), 0);
	cr_assert_str_eq(out, "", "mkexample wrote files: %s", out);
	cr_assert_eq(rmdir(dir), 0);
}
