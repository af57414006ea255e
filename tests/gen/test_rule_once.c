/* test_rule_once.c: the window io kind's rule (a Conv's output size) is
 * stated once, in gen/schema/io_kinds.lua, and generated into the codec
 * (nnn_gen_window_*); the Lua conformance reference is the one deliberate
 * second implementation (gen/corpus/reference.lua, gen/corpus/shapes.lua).
 * Hand-written C and Lua elsewhere in runtime/, plugins/ and gen/ must not
 * write its arithmetic again: each pattern below is one way the rule was
 * written before (the engine, the builtin Conv, ONNX import), and the test
 * first proves each still matches the line it was made from. */
#define _XOPEN_SOURCE 700
#include <criterion/criterion.h>
#include <ftw.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blackbox.h"

/* One way of writing the rule, and a line that wrote it so. */
static const struct {
	const char *what, *re, *was;
} PATTERNS[] = {
	{ "the dilated window, d * (w - 1) + 1", "[*][[:space:]]*[(][[:space:]]*[[:alnum:]_>.-]+([[][^]]*[]])?[[:space:]]*-[[:space:]]*1[[:space:]]*[)][[:space:]]*[+][[:space:]]*1([^[:alnum:]_]|$)",
	  "\t\tint64_t k = dl * (w - 1) + 1, before, after, x = s->dims[1 + j];" },
	{ "the output, (s + before + after - k) / stride + 1", "-[[:space:]]*[[:alnum:]_>.-]+([[][^]]*[]])?[[:space:]]*[)][[:space:]]*/[[:space:]]*[[:alnum:]_>.-]+([[][^]]*[]])?[[:space:]]*[+][[:space:]]*1([^[:alnum:]_]|$)",
	  "\t\ts->dims[1 + j] = (x + before + after - k) / st + 1;" },
	{ "the output at stride 1, s + before + after - k + 1", "[+][[:space:]]*[[:alnum:]_>.-]+([[][^]]*[]])?[[:space:]]*[+][[:space:]]*[[:alnum:]_>.-]+([[][^]]*[]])?[[:space:]]*-[[:space:]]*[[:alnum:]_>.-]+([[][^]]*[]])?[[:space:]]*[+][[:space:]]*1([^[:alnum:]_]|$)",
	  "\t\to = d + pad[2 * j] + pad[2 * j + 1] - kd[1 + j] + 1;" },
	{ "the room, s + before + after < k", "[+][[:space:]]*[[:alnum:]_>.-]+([[][^]]*[]])?[[:space:]]*[+][[:space:]]*[[:alnum:]_>.-]+([[][^]]*[]])?[[:space:]]*<[[:space:]]*k([^[:alnum:]_]|$)",
	  "\t\tif (x + before + after < k) {" },
};
#define NPAT (sizeof PATTERNS / sizeof PATTERNS[0])

/* Where the rule may be written: its home and the conformance reference. */
static const char *const ALLOWED[] = { "gen/schema/io_kinds.lua", "gen/corpus/reference.lua", "gen/corpus/shapes.lua" };

static regex_t RE[NPAT];
static char found[4096];

static void compile_all(void)
{
	for (size_t p = 0; p < NPAT; p++)
		cr_assert_eq(regcomp(&RE[p], PATTERNS[p].re, REG_EXTENDED | REG_NOSUB), 0, "pattern %zu does not compile", p);
}

static void free_all(void)
{
	for (size_t p = 0; p < NPAT; p++)
		regfree(&RE[p]);
}

/* Every line of a .c, .h or .lua file that writes the rule goes to found. */
static int scan(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	const char *dot = strrchr(path, '.');
	(void)st;
	(void)ftw;
	if (type != FTW_F || !dot || (strcmp(dot, ".c") && strcmp(dot, ".h") && strcmp(dot, ".lua")))
		return 0;
	for (size_t a = 0; a < sizeof ALLOWED / sizeof ALLOWED[0]; a++)
		if (!strcmp(path, ALLOWED[a]))
			return 0;
	char *text = t_slurp(path, NULL);
	cr_assert(text, "cannot read %s", path);
	int no = 1;
	for (char *line = text, *end; line && *line; line = end ? end + 1 : NULL, no++) {
		if ((end = strchr(line, '\n')))
			*end = '\0';
		for (size_t p = 0; p < NPAT; p++) {
			size_t k = strlen(found);
			if (regexec(&RE[p], line, 0, NULL, 0) == 0 && k < sizeof found - 1)
				snprintf(found + k, sizeof found - k, "\n  %s:%d (%s): %s", path, no, PATTERNS[p].what, line);
		}
	}
	free(text);
	return 0;
}

Test(rule_once, patterns_match_what_they_were_made_from)
{
	compile_all();
	for (size_t p = 0; p < NPAT; p++)
		cr_expect_eq(regexec(&RE[p], PATTERNS[p].was, 0, NULL, 0), 0, "pattern for %s does not match \"%s\"",
		             PATTERNS[p].what, PATTERNS[p].was);
	/* nor anything a loop or a sum of two dims writes */
	cr_expect_neq(regexec(&RE[0], "for (i = 0; i < n - 1; i++) x = a * b + 1;", 0, NULL, 0), 0);
	cr_expect_neq(regexec(&RE[2], "\tn = a + b;", 0, NULL, 0), 0);
	free_all();
}

Test(rule_once, window_rule_only_in_io_kinds_and_the_reference)
{
	t_require_root();
	compile_all();
	found[0] = '\0';
	const char *roots[] = { "runtime", "plugins", "gen" };
	for (size_t r = 0; r < sizeof roots / sizeof roots[0]; r++)
		cr_assert_eq(nftw(roots[r], scan, 16, FTW_PHYS), 0, "cannot walk %s", roots[r]);
	free_all();
	cr_expect(!found[0],
	          "the window rule is written again outside gen/schema/io_kinds.lua (and the conformance reference): "
	          "take it from the generated nnn_gen_window_* or the shape engine instead:%s",
	          found);
}
