/* test_terminal.c: text from a file never reaches a terminal raw. A
 * description with C0 (ESC, BEL), DEL, C1 (U+009B, the 8-bit CSI; U+0085)
 * and bidirectional controls (U+202E, U+2066, U+200F, U+061C), and line
 * separators (U+2028), through every command that shows it. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builder.h"
#include "clirun.h"
#include "shell.h"

static const char evil[] = "a\x1b[31m b\xc2\x9b" "31m c\xe2\x80\xae" "d e\xe2\x81\xa6" "f g\xe2\x80\x8f" "h "
                           "i\xd8\x9cj k\x07l\x7fm n\xc2\x85o p\xe2\x80\xa8q \"r\\";

/* The raw forms: none may appear in any output. */
static void no_raw(const char *what, const char *text)
{
	static const char *const raw[] = { "\x1b", "\x07", "\x7f", "\xc2\x9b", "\xc2\x85", "\xe2\x80\xae",
	                                   "\xe2\x81\xa6", "\xe2\x80\x8f", "\xd8\x9c", "\xe2\x80\xa8" };
	for (size_t i = 0; i < sizeof raw / sizeof raw[0]; i++)
		cr_assert(!strstr(text, raw[i]), "%s: the control %zu reaches the terminal raw", what, i);
}

static const char *evil_file(void)
{
	static char path[512];
	bb_t b = { 0 };
	bb_header(&b, evil, 11, 2);
	bb_dense(&b, 4, 3, 2, 0);
	bb_dense(&b, 0, 2, 1, 0);
	snprintf(path, sizeof path, "%s", bb_to_file(&b, "evil.nnn"));
	bb_free(&b);
	return path;
}

static void rm_dir_of(const char *path)
{
	char dir[512];
	snprintf(dir, sizeof dir, "%s", path);
	*strrchr(dir, '/') = '\0';
	cr_assert_eq(t_sh(NULL, 0, "rm -rf %s", dir), 0);
}

Test(terminal, info_escapes_the_description)
{
	run_t r;
	const char *f = evil_file();
	nnnkit(&r, t_fmt("info %s", f));
	cr_assert_eq(r.code, 0, "%s", r.err);
	no_raw("info", r.out);
	cr_assert(strstr(r.out, "description:  \"a\\x1b[31m b\\u009b31m c\\u202ed e\\u2066f g\\u200fh i\\u061cj "
	                        "k\\x07l\\x7fm n\\u0085o p\\u2028q \\\"r\\\\\"\n"), "%s", r.out);
	rm_dir_of(f);
}

Test(terminal, graph_dump_map_convert_escape_the_description)
{
	run_t r;
	char html[1 << 16];
	const char *f = evil_file();
	nnnkit(&r, t_fmt("graph %s", f));
	cr_assert_eq(r.code, 0, "%s", r.err);
	no_raw("graph", r.out);
	cr_assert(strstr(r.out, "label=\"a?[31m b?31m c?d e?f g?h i?j k?l?m n?o p?q \\\"r\\\\\\n"), "%s", r.out);
	nnnkit(&r, t_fmt("dump %s", f));
	cr_assert_eq(r.code, 0, "%s", r.err);
	no_raw("dump", r.out);
	cr_assert(strstr(r.out, "\"a\\u001b[31m b\\u009b31m c\\u202ed e\\u2066f g\\u200fh i\\u061cj k\\u0007l\\u007fm "
	                        "n\\u0085o p\\u2028q \\\"r\\\\\""), "%s", r.out);
	nnnkit(&r, t_fmt("map %s -o %s.html", f, f));
	cr_assert_eq(r.code, 0, "%s", r.err);
	slurp_keep(t_fmt("%s.html", f), html, sizeof html);
	no_raw("map", html);
	cr_assert(strstr(html, "b\\u009b31m c\\u202ed"), "map: the description is not escaped");
	/* the JSON form: escaped too, and it reads back to the same bytes */
	nnnkit(&r, t_fmt("convert %s - --to json", f));
	cr_assert_eq(r.code, 0, "%s", r.err);
	no_raw("convert --to json", r.out);
	cr_assert_eq(t_sh(NULL, 0, "%s convert %s %s.json && %s build %s.json %s.back.nnn && cmp %s %s.back.nnn",
	                  nnnkit_bin(), f, f, nnnkit_bin(), f, f, f, f), 0);
	rm_dir_of(f);
}

/* A message that quotes the file's own text (an unknown JSON key). */
Test(terminal, messages_escape_quoted_file_text)
{
	run_t r;
	const char *f = evil_file();
	FILE *j = fopen(t_fmt("%s.json", f), "w");
	cr_assert_not_null(j);
	fprintf(j, "{\"description\": \"x\", \"param_count\": 0, \"layers\": [], \"\xc2\x9b" "31m\xe2\x80\xae\": 1}\n");
	fclose(j);
	nnnkit(&r, t_fmt("build %s.json %s.out.nnn", f, f));
	cr_assert_eq(r.code, 1, "%s", r.err);
	no_raw("build's message", r.err);
	cr_assert(strstr(r.err, "\\u009b31m\\u202e"), "%s", r.err);
	rm_dir_of(f);
}
