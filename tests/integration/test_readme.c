/* test_readme.c: README.md agrees with what it describes.
 *
 * Its library program (the ```c block that names this file) compiles with
 * -Wall -Wextra -Werror against the build tree and, run on the example
 * model, prints what the library reads and writes a byte-identical copy.
 * Its `nnnkit ...` usage lines (in fenced blocks, continued on lines that
 * start with spaces and '[' or '-') name a command of `nnnkit --help` and
 * only options that command's --help shows (or the general --help, for the
 * options every command takes); every command has a usage line, and it
 * shows every option of the usage synopsis of the command's --help. The
 * help is read at run time: nothing here lists commands or options. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nnn/file.h>

#include "ctx.h"
#include "shell.h"

static char tmp[64];

static void teardown(void)
{
	if (tmp[0] && t_sh(NULL, 0, "rm -rf %s", tmp) != 0)
		fprintf(stderr, "could not remove %s\n", tmp);
}

Test(readme, library_program_compiles_and_runs, .fini = teardown, .timeout = 120)
{
	char out[65536], want[1024];
	const char *b = t_build_dir();
	/* A sanitized build's library needs its runtime in the program too. */
	const char *san = getenv("NNN_SANITIZE") ? getenv("NNN_SANITIZE") : "";

	snprintf(tmp, sizeof tmp, "/tmp/nnnreadme.XXXXXX");
	cr_assert_not_null(mkdtemp(tmp));
	cr_assert_eq(t_sh(out, sizeof out, "awk '/^```c$/ { on = 1; text = \"\"; next } on && /^```$/ { on = 0; "
	                  "if (text ~ /tests\\/integration\\/test_readme\\.c/) { printf \"%%s\", text; exit } next } "
	                  "on { text = text $0 \"\\n\" }' README.md > %s/prog.c && grep -c 'int main' %s/prog.c", tmp, tmp),
	             0, "README.md has no ```c block naming tests/integration/test_readme.c, or it has no main: %s", out);
	cr_assert_eq(t_sh(out, sizeof out, "cc -std=c11 -Wall -Wextra -Werror %s -Iruntime/include -I%s/gen %s/prog.c "
	                  "%s/libnnn.a -ljansson -lm -o %s/prog", san, b, tmp, b, tmp), 0, "%s", out);
	cr_assert_eq(t_sh(out, sizeof out, "%s/mkexample %s/example.nnn %s/x.npy", b, tmp, tmp), 0, "%s", out);

	/* What it prints, as the library reads the same file. */
	nnn_file_t *f;
	cr_assert_eq(nnn_file_open(t_fmt("%s/example.nnn", tmp), NULL, &f, NULL), NNN_OK);
	const nnn_model_t *m = nnn_file_model(f);
	cr_assert_gt(m->layer_count, 0);
	snprintf(want, sizeof want, "example.nnn: %d layers, %llu parameters, first bias %g\n", (int)m->layer_count,
	         (unsigned long long)nnn_model_param_total(m), nnn_f32s_get(m->layers[0].bias.data, 0));
	nnn_file_close(f);
	cr_assert_eq(t_sh(out, sizeof out, "cd %s && ./prog example.nnn", tmp), 0, "%s", out);
	cr_assert_str_eq(out, want);
	cr_assert_eq(t_sh(out, sizeof out, "cmp %s/example.nnn %s/copy.nnn", tmp, tmp), 0, "%s", out);

	/* A file cut short: no copy, each problem printed with its offset, exit 1. */
	cr_assert_eq(t_sh(out, sizeof out, "cd %s && rm copy.nnn && head -c 300 example.nnn > cut.nnn && ./prog cut.nnn",
	                  tmp), 1, "%s", out);
	cr_assert(strstr(out, "@0x"), "%s", out);
	cr_assert_neq(t_sh(NULL, 0, "test -e %s/copy.nnn", tmp), 0);
}

/* ---- usage lines ---- */

static int optchar(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
}

/* Whether `word` occurs in text as a whole option (no letter, digit or '-'
 * on either side). */
static int has_word(const char *text, const char *word)
{
	size_t n = strlen(word);
	for (const char *p = text; (p = strstr(p, word)) != NULL; p++)
		if ((p == text || !optchar(p[-1])) && !optchar(p[n]))
			return 1;
	return 0;
}

/* The option a token starts with ("[--batch" -> "--batch", "-o"), or 0. */
static int option_of(const char *tok, char *opt, size_t size)
{
	while (*tok == '[' || *tok == '(' || *tok == '|')
		tok++;
	const char *p = tok + (tok[0] == '-' && tok[1] == '-' ? 2 : 1);
	if (tok[0] != '-' || !((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')))
		return 0;
	size_t n = 0;
	while (optchar(tok[n]) && n + 1 < size)
		n++;
	memcpy(opt, tok, n);
	opt[n] = '\0';
	return 1;
}

/* Calls fn for each option in a line of text. */
static void each_option(const char *line, void (*fn)(const char *opt, void *arg), void *arg)
{
	char copy[4096], opt[128], *save = NULL;
	snprintf(copy, sizeof copy, "%s", line);
	for (char *t = strtok_r(copy, " \t", &save); t; t = strtok_r(NULL, " \t", &save))
		if (option_of(t, opt, sizeof opt))
			fn(opt, arg);
}

/* The command a usage line runs (its index): its first word that is a
 * command of `nnnkit --help` (global options may come before it); -1. */
static int command_of(const char *line, char cmds[][32], int ncmds)
{
	char copy[4096], *save = NULL;
	snprintf(copy, sizeof copy, "%s", line);
	for (char *t = strtok_r(copy, " \t", &save); t; t = strtok_r(NULL, " \t", &save))
		for (int i = 0; i < ncmds; i++)
			if (!strcmp(t, cmds[i]))
				return i;
	return -1;
}

typedef struct check {
	const char *line, *cmd, *help, *general, *general_usage;
	char *readme_opts; /* for the other direction: the README's options of cmd */
} check_t;

static void option_known(const char *opt, void *arg)
{
	const check_t *c = arg;
	cr_expect(has_word(c->help, opt) || has_word(c->general, opt),
	          "README.md: `%s`: %s is in neither `nnnkit %s --help` nor `nnnkit --help`", c->line, opt, c->cmd);
}

static void option_in_readme(const char *opt, void *arg)
{
	const check_t *c = arg;
	/* The options every command takes are in the general usage line. */
	if (has_word(c->general_usage, opt))
		return;
	cr_expect(has_word(c->readme_opts, opt), "README.md has no usage line of `nnnkit %s` showing %s, which its "
	                                         "--help's usage shows", c->cmd, opt);
}

Test(readme, usage_lines_agree_with_help, .timeout = 120)
{
	static char general[65536], general_usage[4096], help[65536], lines[65536], names[4096];
	char cmds[64][32];
	int ncmds = 0;

	cr_assert_eq(t_sh(general, sizeof general, "%s --help", nnnkit_bin()), 0, "%s", general);
	cr_assert_eq(t_sh(general_usage, sizeof general_usage, "%s --help | awk '/^$/ { exit } { print }'", nnnkit_bin()), 0);
	cr_assert_eq(t_sh(names, sizeof names, "%s --help | awk '/^commands:/ { on = 1; next } on && /^$/ { exit } "
	                  "on { print $1 }'", nnnkit_bin()), 0, "%s", names);
	for (char *save = NULL, *t = strtok_r(names, "\n", &save); t && ncmds < 64; t = strtok_r(NULL, "\n", &save))
		snprintf(cmds[ncmds++], sizeof cmds[0], "%s", t);
	cr_assert_gt(ncmds, 5, "nnnkit --help lists %d commands", ncmds);

	/* One usage per line: its first line, its continuations joined, each
	 * cut where the description column starts (two spaces). */
	cr_assert_eq(t_sh(lines, sizeof lines, "awk '"
	                  "function flush() { if (u != \"\") print u; u = \"\" } "
	                  "/^```/ { flush(); fence = !fence; next } "
	                  "fence && /^nnnkit / { flush(); u = $0; sub(/  +.*/, \"\", u); next } "
	                  "fence && u != \"\" && /^ +[[-]/ { l = $0; sub(/^ +/, \"\", l); sub(/  +.*/, \"\", l); "
	                  "u = u \" \" l; next } "
	                  "{ flush() }' README.md"), 0, "%s", lines);

	static char readme_opts[64][4096];
	int nlines = 0;
	for (char *save = NULL, *line = strtok_r(lines, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		int k = command_of(line, cmds, ncmds);
		nlines++;
		cr_expect_geq(k, 0, "README.md: `%s` names no command of `nnnkit --help`", line);
		if (k < 0)
			continue;
		const char *cmd = cmds[k];
		cr_assert_eq(t_sh(help, sizeof help, "%s %s --help", nnnkit_bin(), cmd), 0, "%s", help);
		check_t c = { line, cmd, help, general, general_usage, NULL };
		each_option(line, option_known, &c);
		size_t used = strlen(readme_opts[k]);
		snprintf(readme_opts[k] + used, sizeof readme_opts[k] - used, "%s\n", line);
	}
	cr_assert_gt(nlines, 5, "only %d usage lines found in README.md", nlines);

	/* Every command has a usage line showing the options of its synopsis
	 * (the help's first line and the indented lines after it). */
	for (int k = 0; k < ncmds; k++) {
		cr_expect(readme_opts[k][0], "README.md has no usage line for `nnnkit %s`", cmds[k]);
		cr_assert_eq(t_sh(help, sizeof help, "%s %s --help | awk '/^usage:/ && !on { on = 1; print; next } "
		                  "on && /^ / { print; next } on { exit }'", nnnkit_bin(), cmds[k]), 0, "%s", help);
		check_t c = { NULL, cmds[k], help, general, general_usage, readme_opts[k] };
		each_option(help, option_in_readme, &c);
	}
}

/* Every target make declares phony (read from make's own database, so a
 * new target is seen) has a row in the README's "Make targets" table: a
 * user finds `make ort` and `DESTDIR` there (issue 33). A harness of the
 * fuzzers (fuzz-fuzz_NAME) is covered by the one row `make fuzz-HARNESS`. */
Test(readme, every_make_target_has_a_row, .timeout = 120)
{
	static char table[32768], phony[4096];
	cr_assert_eq(t_sh(table, sizeof table, "awk -F'|' '/^## Make targets/ { on = 1; next } on && /^## / { exit } "
	                  "on && /^\\|/ { print $2 }' README.md"), 0, "%s", table);
	cr_assert_eq(t_sh(phony, sizeof phony, "make -pnq 2>/dev/null | sed -n 's/^\\.PHONY: //p' | tr ' ' '\\n' | sort -u"),
	             0, "%s", phony);
	int n = 0;
	for (char *save = NULL, *t = strtok_r(phony, "\n", &save); t; t = strtok_r(NULL, "\n", &save), n++) {
		const char *want = strncmp(t, "fuzz-fuzz_", 10) ? t : "fuzz-HARNESS";
		bool found = false;
		for (const char *p = table; !found && (p = strstr(p, want)); p += strlen(want))
			found = (p > table && strchr("` ", p[-1])) && strchr("`, ", p[strlen(want)]);
		cr_expect(found, "README.md's \"Make targets\" table has no row naming `make %s`", t);
	}
	cr_assert_gt(n, 10, "make declares only %d phony targets: %s", n, phony);
	cr_assert(strstr(table, "DESTDIR"), "README.md's \"Make targets\" table does not say DESTDIR");
}
