/* test_install.c: `make install` into a temporary prefix puts every promised
 * file in place (tool, static and shared library with its soname, headers,
 * pkg-config file, generator and schema, plugin folder, man page, bash
 * completion, the C# assembly, tool and Unity package); a small program
 * builds against it with pkg-config, both shared and static, and runs; the
 * library exports exactly what the installed headers declare; the installed
 * generator reproduces the codec; the installed tool runs the installed
 * conformance corpus; `make uninstall` removes exactly what install wrote
 * (recorded in share/nnnkit/installed-files), never another package's file. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include <nnn/npy.h>

#include "builder.h"
#include "ctx.h"
#include "shell.h"

static char tmp[64];

static void teardown(void)
{
	if (tmp[0] && t_sh(NULL, 0, "rm -rf %s", tmp) != 0)
		fprintf(stderr, "could not remove %s\n", tmp);
}

/* A program a user of libnnn would write: open, validate, print counts. */
static const char prog[] =
	"#include <stdio.h>\n"
	"#include <nnn/file.h>\n"
	"#include <nnn/validate.h>\n"
	"int main(int argc, char **argv)\n"
	"{\n"
	"\t(void)argc;\n"
	"\tnnn_file_t *f = NULL;\n"
	"\tnnn_diags_t d = { 0 };\n"
	"\tnnn_status_t st = nnn_file_open(argv[1], NULL, &f, &d);\n"
	"\tif (st == NNN_OK)\n"
	"\t\tst = nnn_model_validate(nnn_file_model(f), NULL, NULL, &d);\n"
	"\tprintf(\"%s %d layers\\n\", nnn_status_name(st), st == NNN_OK ? (int)nnn_file_model(f)->layer_count : -1);\n"
	"\tnnn_diags_free(&d);\n"
	"\tnnn_file_close(f);\n"
	"\treturn st != NNN_OK;\n"
	"}\n";

Test(install, prefix_has_everything_and_builds_a_program, .fini = teardown, .timeout = 300)
{
	char out[65536], prefix[128], path[256];
	const char *build = t_build_dir();

	snprintf(tmp, sizeof tmp, "/tmp/nnninst.XXXXXX");
	cr_assert_not_null(mkdtemp(tmp));
	snprintf(prefix, sizeof prefix, "%s/prefix", tmp);
	cr_assert_eq(t_sh(out, sizeof out, "make -s install O=%s PREFIX=%s", build, prefix), 0, "%s", out);

	static const char *const files[] = {
		"bin/nnnkit", "bin/nnngen", "lib/libnnn.a", "lib/libnnn.so", "lib/libnnn.so.1",
		"lib/pkgconfig/libnnn.pc", "include/nnn/model.h", "include/nnn/plugin.h", "include/nnn/schema_gen.h", "include/nnn/records_gen.h",
		"share/nnnkit/schema/nnn.lua", "share/nnnkit/gen/nnngen.lua", "lib/nnnkit/plugins/builtin.so",
		"share/man/man1/nnnkit.1", "share/bash-completion/completions/nnnkit",
		"share/nnnkit/csharp/Nnn.dll", "share/nnnkit/csharp/Nnn.dll.config", "share/nnnkit/csharp/nnn-cs.exe",
		"share/nnnkit/csharp/package/package.json",
		"share/nnnkit/csharp/package/README.md", "share/nnnkit/csharp/package/Runtime/Nnn.asmdef",
		"share/nnnkit/csharp/package/Runtime/Schema.g.cs", "share/nnnkit/csharp/package/Runtime/Status.g.cs",
	};
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		struct stat st;
		snprintf(path, sizeof path, "%s/%s", prefix, files[i]);
		cr_expect_eq(stat(path, &st), 0, "%s is not installed", files[i]);
	}
	/* Every public header is installed, and compiles on its own. */
	cr_assert_eq(t_sh(out, sizeof out, "for h in runtime/include/nnn/*.h; do cmp $h %s/include/nnn/$(basename $h) || exit 1;"
	                  " printf '#include <nnn/%%s>\\n' $(basename $h) | cc -std=c11 -Wall -Werror -fsyntax-only"
	                  " -I%s/include -x c - || exit 1; done", prefix, prefix), 0, "%s", out);

	/* The shared library carries its soname; the link name points at it. */
	cr_assert_eq(t_sh(out, sizeof out, "objdump -p %s/lib/libnnn.so.1 | awk '$1 == \"SONAME\" {print $2}'", prefix), 0);
	cr_assert_str_eq(out, "libnnn.so.1\n");
	cr_assert_eq(t_sh(out, sizeof out, "readlink %s/lib/libnnn.so", prefix), 0);
	cr_assert_str_eq(out, "libnnn.so.1\n");
	/* It exports exactly what the installed headers declare with NNN_API
	 * (tests/integration/test_exports.c says how that is checked). */
	cr_assert_eq(t_sh(out, sizeof out, "lua5.4 tests/tools/exports.lua %s/lib/libnnn.so.1 %s/include/nnn/*.h", prefix,
	                  prefix), 0, "%s", out);

	/* A program built with pkg-config against the prefix only: shared, then static. */
	bb_t b = { 0 };
	bb_tiny(&b);
	const char *model = bb_to_file(&b, "tiny.nnn");
	bb_free(&b);
	snprintf(path, sizeof path, "%s/prog.c", tmp);
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs(prog, f);
	fclose(f);
#define PC "PKG_CONFIG_PATH=%s/lib/pkgconfig pkg-config"
	/* A sanitized build's library needs its runtime in the program too. */
	const char *san = getenv("NNN_SANITIZE") ? getenv("NNN_SANITIZE") : "";
	cr_assert_eq(t_sh(out, sizeof out, "cd %s && cc -std=c11 -Wall -Werror %s $(" PC " --cflags libnnn) prog.c -o prog"
	                  " $(" PC " --libs libnnn)", tmp, san, prefix, prefix), 0, "%s", out);
	/* It starts as built: no LD_LIBRARY_PATH, no ldconfig (libnnn.pc gives the rpath). */
	cr_assert_eq(t_sh(out, sizeof out, "env -u LD_LIBRARY_PATH ldd %s/prog | grep libnnn", tmp), 0, "%s", out);
	cr_assert(strstr(out, prefix), "the program does not use the installed library: %s", out);
	cr_assert_eq(t_sh(out, sizeof out, "env -u LD_LIBRARY_PATH %s/prog %s", tmp, model), 0, "%s", out);
	cr_assert_str_eq(out, "OK 2 layers\n");
	cr_assert_eq(t_sh(out, sizeof out, "cd %s && cc -std=c11 %s $(" PC " --cflags libnnn) prog.c -o prog-static"
	                  " -L$(" PC " --variable=libdir libnnn) -l:libnnn.a $(" PC " --static --libs-only-l libnnn |"
	                  " sed 's/-lnnn//')", tmp, san, prefix, prefix, prefix), 0, "%s", out);
	cr_assert_neq(t_sh(out, sizeof out, "ldd %s/prog-static | grep libnnn", tmp), 0, "%s", out);
	cr_assert_eq(t_sh(out, sizeof out, "%s/prog-static %s", tmp, model), 0, "%s", out);
	cr_assert_str_eq(out, "OK 2 layers\n");

	/* The installed tool finds its installed plugins, with no environment help. */
	cr_assert_eq(t_sh(out, sizeof out, "env -u NNN_PLUGIN_PATH %s/bin/nnnkit plugins", prefix), 0, "%s", out);
	cr_assert(strstr(out, "lib/nnnkit/plugins/builtin.so"), "%s", out);
	const float x[6] = { 1, 2, 3, -1, 0.5f, 4 };
	nnn_shape_t s = { .rank = 2, .dims = { 2, 3 } };
	snprintf(path, sizeof path, "%s/x.npy", tmp);
	cr_assert_eq(nnn_npy_write_file(path, &s, x, NULL), NNN_OK);
	char want[4096];
	cr_assert_eq(t_sh(want, sizeof want, "%s run %s --input %s", nnnkit_bin(), model, path), 0, "%s", want);
	cr_assert_eq(t_sh(out, sizeof out, "env -u NNN_PLUGIN_PATH %s/bin/nnnkit run %s --input %s", prefix, model, path),
	             0, "%s", out);
	cr_assert_str_eq(out, want);

	/* The installed C# tool runs from the prefix (its Nnn.dll beside it) and
	 * reads a model; the installed package's C# is the build's. */
	cr_assert_eq(t_sh(out, sizeof out, "mono %s/share/nnnkit/csharp/nnn-cs.exe decode %s", prefix, model), 0, "%s", out);
	cr_assert_eq(t_sh(out, sizeof out, "for f in %s/csharp/package/Runtime/*; do cmp $f %s/share/nnnkit/csharp/package/Runtime/"
	                  "$(basename $f) || exit 1; done", build, prefix), 0, "%s", out);

	/* The installed generator, schema and lock (whose struct layouts the
	 * generated code carries) reproduce the codec the tool was built from. */
	cr_assert_eq(t_sh(out, sizeof out, "%s/bin/nnngen %s/share/nnnkit/schema/nnn.lua --c %s/g.c --h %s/g.h "
	                  "--layouts %s/share/nnnkit/schema/nnn.lock && "
	                  "cmp %s/g.c %s/gen/schema_gen.c && cmp %s/g.h %s/include/nnn/schema_gen.h && "
	                  "cmp %s/records_gen.h %s/include/nnn/records_gen.h",
	                  prefix, prefix, tmp, tmp, prefix, tmp, build, tmp, prefix, tmp, prefix), 0, "%s", out);

	/* And the C# codec and status codes the package holds (nnngen --lang cs). */
	cr_assert_eq(t_sh(out, sizeof out, "%s/bin/nnngen %s/share/nnnkit/schema/nnn.lua --lang cs --cs %s/s.cs && "
	                  "%s/bin/nnngen --cs-status %s/include/nnn/status_codes.h --cs %s/st.cs && "
	                  "cmp %s/s.cs %s/share/nnnkit/csharp/package/Runtime/Schema.g.cs && "
	                  "cmp %s/st.cs %s/share/nnnkit/csharp/package/Runtime/Status.g.cs",
	                  prefix, prefix, tmp, prefix, prefix, tmp, tmp, prefix, tmp, prefix), 0, "%s", out);

	/* The man page renders without warnings and documents every command. */
	cr_assert_eq(t_sh(out, sizeof out, "groff -man -Tutf8 -ww -z %s/share/man/man1/nnnkit.1", prefix), 0, "%s", out);
	cr_assert_str_eq(out, "");
	cr_assert_eq(t_sh(out, sizeof out, "%s/bin/nnnkit --help | awk '/^commands:/ {on=1; next} on && /^$/ {exit} on "
	                  "{print $1}' | while read c; do grep -qx \".SS $c\" %s/share/man/man1/nnnkit.1 || echo missing $c;"
	                  " done", prefix, prefix), 0, "%s", out);
	cr_assert_str_eq(out, "", "commands without a man page section: %s", out);

	/* Completion: commands, then a command's own options. */
	cr_assert_eq(t_sh(out, sizeof out, "PATH=%s/bin:$PATH bash -c '. %s/share/bash-completion/completions/nnnkit; "
	                  "COMP_WORDS=(nnnkit vali); COMP_CWORD=1; _nnnkit; echo \"${COMPREPLY[*]}\"; "
	                  "COMP_WORDS=(nnnkit run m.nnn --thr); COMP_CWORD=3; _nnnkit; echo \"${COMPREPLY[*]}\"'",
	                  prefix, prefix), 0, "%s", out);
	cr_assert_str_eq(out, "validate\n--threads\n");

	/* The installed tool finds the installed conformance corpus, with no
	 * option, from any folder, and every case passes. */
	cr_assert_eq(t_sh(out, sizeof out, "cd %s && env -u NNN_PLUGIN_PATH %s/bin/nnnkit conformance", tmp, prefix), 0,
	             "%s", out);
	cr_assert_eq(t_sh(out, sizeof out, "cd %s && env -u NNN_PLUGIN_PATH %s/bin/nnnkit conformance --json 2>/dev/null",
	                  tmp, prefix), 0, "%s", out);
	json_t *j = json_loads(out, 0, NULL);
	cr_assert_not_null(j, "%s", out);
	const char *corpus = json_string_value(json_object_get(j, "corpus"));
	cr_assert(corpus && strlen(corpus) > 25 && !strcmp(corpus + strlen(corpus) - 25, "/share/nnnkit/conformance") &&
	          !strncmp(corpus, prefix, strlen(prefix)), "corpus: %s", corpus ? corpus : "none");
	cr_expect_gt(json_integer_value(json_object_get(j, "passed")), 100);
	cr_expect_eq(json_integer_value(json_object_get(j, "failed")), 0);
	json_decref(j);

	/* Every relative link of the installed README and docs leads to an
	 * installed file. */
	cr_assert_eq(t_sh(out, sizeof out, "cd %s/share/doc/nnnkit && for md in README.md docs/*.md; do "
	                  "grep -o '](\\([^)#]*\\)' $md | sed 's/^](//' | grep -v '^[a-z]*:' | grep -v '^$' |"
	                  " while read -r l; do [ -e \"$(dirname $md)/$l\" ] || echo \"$md: $l\"; done; done", prefix),
	             0, "%s", out);
	cr_assert_str_eq(out, "", "links to files not installed: %s", out);
	/* So is every file the man pages name: PREFIX/... paths and docs. */
	/* (roff writes a hyphen as \-: read as text first) */
	cr_assert_eq(t_sh(out, sizeof out, "cd %s && sed 's/\\\\-/-/g' share/man/man1/*.1 > man.txt && "
	                  "for p in $(grep -o 'PREFIX/[A-Za-z0-9_./-]*' man.txt | "
	                  "sed 's|^PREFIX/||' | sort -u); do [ -e \"$p\" ] || echo \"$p\"; done; "
	                  "for n in $(grep -oE '\\b([a-z][a-z0-9_-]*|README)[.]md' man.txt | sort -u); do "
	                  "[ -e share/doc/nnnkit/docs/$n ] || [ -e share/doc/nnnkit/$n ] || echo $n; done; rm man.txt", prefix),
	             0, "%s", out);
	cr_assert_str_eq(out, "", "the man pages name files not installed: %s", out);

	/* Uninstall removes every file install wrote (the prefix's files
	 * before, independent of the record), and no one else's: a plugin
	 * another package put in our plugin folder, a file in share/doc. */
	cr_assert_eq(t_sh(out, sizeof out, "cd %s && find . ! -type d | sort > %s/before && "
	                  "sed -n 's|^f |./|p' share/nnnkit/installed-files | sort | diff - %s/before", prefix, tmp, tmp),
	             0, "the record is not the list of installed files: %s", out);
	cr_assert_eq(t_sh(out, sizeof out, "wc -l < %s/before", tmp), 0);
	cr_assert_gt(atoi(out), 30, "%s", out);
	cr_assert_eq(t_sh(out, sizeof out, "echo theirs > %s/lib/nnnkit/plugins/other.so && mkdir -p %s/share/doc/other && "
	                  "echo theirs > %s/share/doc/other/README", prefix, prefix, prefix), 0, "%s", out);
	cr_assert_eq(t_sh(out, sizeof out, "make -s uninstall O=%s PREFIX=%s", build, prefix), 0, "%s", out);
	cr_assert_eq(t_sh(out, sizeof out, "cd %s && find . ! -type d | sort", prefix), 0, "%s", out);
	cr_assert_str_eq(out, "./lib/nnnkit/plugins/other.so\n./share/doc/other/README\n", "after uninstall: %s", out);
	cr_assert_eq(t_sh(out, sizeof out, "cat %s/lib/nnnkit/plugins/other.so %s/share/doc/other/README", prefix, prefix), 0);
	cr_assert_str_eq(out, "theirs\ntheirs\n");
	/* Folders install made and left empty are gone; those holding the
	 * others' files stay. */
	cr_assert_eq(t_sh(out, sizeof out, "cd %s && find . -type d | sort | tr '\\n' ' '", prefix), 0, "%s", out);
	cr_assert_str_eq(out, ". ./lib ./lib/nnnkit ./lib/nnnkit/plugins ./share ./share/doc ./share/doc/other ");
}

/* Uninstall from a prefix where nnnkit was installed twice (the second
 * install found every folder made) still removes the folders the first
 * made; a prefix with no record is left alone; a record naming a file
 * outside the prefix is refused before anything is removed. */
Test(install, uninstall_after_reinstall_and_a_bad_record, .fini = teardown, .timeout = 300)
{
	char out[65536], prefix[128];
	const char *build = t_build_dir();

	snprintf(tmp, sizeof tmp, "/tmp/nnninst.XXXXXX");
	cr_assert_not_null(mkdtemp(tmp));
	snprintf(prefix, sizeof prefix, "%s/prefix", tmp);
	for (int i = 0; i < 2; i++)
		cr_assert_eq(t_sh(out, sizeof out, "make -s install O=%s PREFIX=%s", build, prefix), 0, "%s", out);
	cr_assert_eq(t_sh(out, sizeof out, "make -s uninstall O=%s PREFIX=%s", build, prefix), 0, "%s", out);
	cr_assert_eq(t_sh(out, sizeof out, "find %s -mindepth 1", prefix), 0, "%s", out);
	cr_assert_str_eq(out, "", "left after uninstall: %s", out);

	cr_assert_eq(t_sh(out, sizeof out, "echo mine > %s/keep && make -s uninstall O=%s PREFIX=%s && cat %s/keep", tmp,
	                  build, prefix, tmp), 0, "%s", out);
	cr_assert(strstr(out, "no record of an installation here"), "%s", out);
	cr_assert(strstr(out, "mine\n"), "%s", out);

	cr_assert_eq(t_sh(out, sizeof out, "make -s install O=%s PREFIX=%s && echo 'f ../keep' >> "
	                  "%s/share/nnnkit/installed-files", build, prefix, prefix), 0, "%s", out);
	cr_assert_neq(t_sh(out, sizeof out, "make -s uninstall O=%s PREFIX=%s", build, prefix), 0, "%s", out);
	cr_assert(strstr(out, "refusing path '../keep'"), "%s", out);
	cr_assert_eq(t_sh(out, sizeof out, "cat %s/keep && ls %s/bin/nnnkit", tmp, prefix), 0, "%s", out);
}

/* A staged install (a distribution's package build): make install
 * DESTDIR=STAGE PREFIX=P puts every file under STAGE/P, and no file names
 * STAGE (the compiled Python once did: its tracebacks pointed into the
 * stage); the pkg-config module says P; uninstall with the same DESTDIR
 * leaves the stage empty. */
Test(install, destdir_stages_what_the_prefix_names, .fini = teardown, .timeout = 300)
{
	char out[65536], stage[128];
	const char *build = t_build_dir(), *prefix = "/opt/nnnkit-staged";

	snprintf(tmp, sizeof tmp, "/tmp/nnninst.XXXXXX");
	cr_assert_not_null(mkdtemp(tmp));
	snprintf(stage, sizeof stage, "%s/stage", tmp);
	cr_assert_eq(t_sh(out, sizeof out, "make -s install O=%s DESTDIR=%s PREFIX=%s", build, stage, prefix), 0, "%s", out);
	cr_assert_eq(t_sh(out, sizeof out, "test -x %s%s/bin/nnnkit && ls %s", stage, prefix, stage), 0, "%s", out);
	cr_assert_str_eq(out, "opt\n", "the stage holds more than its prefix: %s", out);
	t_sh(out, sizeof out, "grep -rlF '%s' %s", stage, stage);
	cr_assert_str_eq(out, "", "files that name the stage, not the prefix:\n%s", out);
	cr_assert_eq(t_sh(out, sizeof out, "grep '^prefix=' %s%s/lib/pkgconfig/libnnn.pc", stage, prefix), 0, "%s", out);
	cr_assert_str_eq(out, "prefix=/opt/nnnkit-staged\n");
	cr_assert_eq(t_sh(out, sizeof out, "make -s uninstall O=%s DESTDIR=%s PREFIX=%s && find %s -mindepth 1 -type f", build,
	                  stage, prefix, stage), 0, "%s", out);
	cr_assert_str_eq(out, "", "left after uninstall: %s", out);
}
