/* test_plugin_header.c: <nnn/plugin.h> declares no function or object of
 * libnnn. A plugin never links libnnn (docs/plugins.md), so a declaration
 * it can see is one it can call by mistake, and the link then fails only at
 * load time. The header includes the generated records (<nnn/records_gen.h>),
 * never libnnn's functions over them (<nnn/schema_gen.h>).
 *
 * The compiler lists what a translation unit declares (gcc -aux-info): every
 * nnn_ function there must be header-only (static inline) or the plugin's own
 * entry point; and no nnn_ object may be declared extern. Each check is shown
 * to fail on a header that does declare libnnn's (a control). */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ctx.h"
#include "shell.h"
#include "tmpdir.h"

#define TMP "nnnplugin_h."

/* The include flags of the tree, absolute (the compiler runs in the test's
 * folder): the public headers and the build's generated ones. */
static const char *includes(void)
{
	static char cwd[4096];
	const char *b = t_build_dir();
	cr_assert(getcwd(cwd, sizeof cwd));
	return t_fmt("-I'%s/runtime/include' -I'%s%s/gen'", cwd, b[0] == '/' ? "" : t_fmt("%s/", cwd), b);
}

/* Compiles a file that includes `headers` (one #include line each) and
 * prints each libnnn declaration it sees, one a line: functions that are
 * neither static nor the entry point, and extern nnn_ objects. Returns the
 * shell's status (0: the compiler ran). */
static int libnnn_decls(char *out, size_t size, const char *headers)
{
	const char *dir = t_tmpdir(TMP);
	return t_sh(out, size,
	            "cd %s && printf '%%s\\n' %s > tu.c && "
	            "cc -std=c11 %s -c -o /dev/null -aux-info aux.txt tu.c && "
	            "cc -std=c11 %s -E -P tu.c | tr '\\n' ' ' | tr ';' '\\n' > pp.txt && "
	            "{ grep -E '\\*/ *extern .*[^a-z_]nnn_[a-z0-9_]+ \\(' aux.txt | grep -v ' nnn_plugin_entry_l[0-9a-f]* (' ; "
	            "grep -E '(^| )extern [^(]*[ *]nnn_[a-z0-9_]+ *(\\[[^]]*\\])? *$' pp.txt ; true; }",
	            dir, headers, includes(), includes());
}

Test(plugin_header, declares_no_function_of_libnnn)
{
	char out[65536];
	cr_assert_eq(libnnn_decls(out, sizeof out, "'#include <nnn/plugin.h>'"), 0, "%s", out);
	cr_assert_str_eq(out, "", "<nnn/plugin.h> declares libnnn's:\n%s", out);
	cr_assert_eq(libnnn_decls(out, sizeof out, "'#include <nnn/records_gen.h>'"), 0, "%s", out);
	cr_assert_str_eq(out, "", "<nnn/records_gen.h> declares libnnn's:\n%s", out);
}

/* The control: the check finds libnnn's functions and objects where they are. */
Test(plugin_header, control_finds_libnnn_declarations)
{
	char out[65536];
	cr_assert_eq(libnnn_decls(out, sizeof out, "'#include <nnn/plugin.h>' '#include <nnn/model.h>'"), 0, "%s", out);
	cr_assert(strstr(out, "nnn_model_decode ("), "no nnn_model_decode found:\n%s", out);
	cr_assert(strstr(out, "nnn_layer_id_name ("), "no generated function found:\n%s", out);
	cr_assert(strstr(out, "nnn_tensor_desc"), "no generated object found:\n%s", out);
	cr_assert_null(strstr(out, "nnn_plugin_entry"), "the entry point is the plugin's:\n%s", out);
	cr_assert_null(strstr(out, "nnn_tensor_numel"), "a header-only helper is no libnnn function:\n%s", out);
}

/* What a plugin author meets: a call of a generated libnnn function does not
 * compile against <nnn/plugin.h> alone (it would not load: a plugin links no
 * libnnn), and does with <nnn/schema_gen.h>, an application's header. */
Test(plugin_header, generated_functions_are_out_of_reach)
{
	char out[65536];
	const char *dir = t_tmpdir(TMP);
	const char *cc = t_fmt("cc -std=c11 -Werror=implicit-function-declaration %s -c -o /dev/null", includes());
	const char *body = "'const char *f(void);' 'const char *f(void) { return nnn_layer_id_name(NNN_LAYER_ID_CONV); }'";
	cr_assert_neq(t_sh(out, sizeof out, "cd %s && printf '%%s\\n' '#include <nnn/plugin.h>' %s > call.c && %s call.c",
	                   dir, body, cc),
	              0, "compiled:\n%s", out);
	cr_assert(strstr(out, "nnn_layer_id_name"), "%s", out);
	cr_assert_eq(t_sh(out, sizeof out, "cd %s && printf '%%s\\n' '#include <nnn/plugin.h>' "
	                  "'#include <nnn/schema_gen.h>' %s > app.c && %s app.c",
	                  dir, body, cc),
	             0, "%s", out);
}
