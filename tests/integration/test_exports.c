/* test_exports.c: libnnn.so exports exactly what its public headers declare
 * with NNN_API (nnn/api.h; the library is built with -fvisibility=hidden):
 * nothing a header does not declare, nothing a header declares missing. The
 * comparison, `nm -D --defined-only` of the library against the headers
 * (those of runtime/include/nnn/ and the generated nnn/schema_gen.h and
 * nnn/records_gen.h: the
 * installed set), is tests/tools/exports.lua; install/prefix_has_everything_and_builds_a_program
 * runs it on an installed prefix too. Its own tests come after: each way the
 * two can part is caught, so that a checker that reads nothing cannot pass. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "ctx.h"
#include "shell.h"
#include "tmpdir.h"

#define TMP "nnnexports."

/* Runs the checker on the build's libnnn.so.1 with the public headers and
 * `more` (more header paths, or ""), without those of `except` (a header's
 * file name, or ""); its output in out, its exit status returned. */
static int check(char *out, size_t size, const char *more, const char *except)
{
	const char *b = t_build_dir();
	return t_sh(out, size, "lua5.4 tests/tools/exports.lua %s/libnnn.so.1 $(ls runtime/include/nnn/*.h | grep -v '/%s$') "
	            "%s/gen/nnn/schema_gen.h %s/gen/nnn/records_gen.h %s", b, except[0] ? except : "-", b, b, more);
}

/* A header of its own in the test's folder, as nnn/NAME. */
static const char *header(const char *name, const char *text)
{
	const char *path = t_tmppath(TMP, t_fmt("nnn/%s", name));
	cr_assert_eq(t_sh(NULL, 0, "mkdir -p %s/nnn && printf '%%s' '%s' > %s", t_tmpdir(TMP), text, path), 0);
	return path;
}

Test(exports, libnnn_exports_exactly_what_its_headers_declare)
{
	char out[65536];
	cr_assert_eq(check(out, sizeof out, "", ""), 0, "%s", out);
	int exported = 0, declared = 0;
	cr_assert_eq(sscanf(out, "%d exported, %d declared", &exported, &declared), 2, "%s", out);
	cr_assert_gt(exported, 20, "%s: is the library built?", out);
}

/* An exported name no header declares (here: every one of status.h, left
 * out) is caught. */
Test(exports, an_undeclared_export_fails, .fini = t_tmpdir_remove)
{
	char out[65536];
	cr_assert_eq(check(out, sizeof out, "", "status.h"), 1, "%s", out);
	cr_assert(strstr(out, "exports nnn_status_str, which no public header declares with NNN_API"), "%s", out);
}

/* A function or object declared with NNN_API that the library does not
 * export is caught. */
Test(exports, a_declaration_not_exported_fails, .fini = t_tmpdir_remove)
{
	char out[65536];
	const char *h = header("extra.h", "#include <nnn/api.h>\n"
	                                  "NNN_API int nnn_not_in_libnnn(const char *why,\n    int n);\n"
	                                  "NNN_API extern const int nnn_nor_this[3];\n");
	cr_assert_eq(check(out, sizeof out, h, ""), 1, "%s", out);
	cr_assert(strstr(out, "declares nnn_not_in_libnnn with NNN_API, but"), "%s", out);
	cr_assert(strstr(out, "declares nnn_nor_this with NNN_API, but"), "%s", out);
}

/* A function or object a public header declares without NNN_API (it would
 * stay hidden) is caught, however its declaration is written: the function
 * list is the compiler's. */
Test(exports, a_declaration_without_nnn_api_fails, .fini = t_tmpdir_remove)
{
	char out[65536];
	const char *h = header("extra.h", "#include <nnn/status.h>\n"
	                                  "#define HIDE(x) x\n"
	                                  "NNN_NODISCARD nnn_status_t HIDE(nnn_hidden_fn)(int n);\n"
	                                  "extern int nnn_hidden_obj;\n");
	cr_assert_eq(check(out, sizeof out, h, ""), 1, "%s", out);
	cr_assert(strstr(out, "declares nnn_hidden_fn() without NNN_API"), "%s", out);
	cr_assert(strstr(out, "declares nnn_hidden_obj without NNN_API"), "%s", out);
}
