/* test_gen.c: the code generator (gen/nnngen.lua) as a black box.
 *
 * These tests shell out to lua5.4 and cc from the project root (make test
 * runs the tiers there). Each test works in its own mkdtemp directory
 * under /tmp, removed by the suite's fini even when an assertion fails.
 *
 *   gen/deterministic            two runs give byte-identical .c/.h/.md with a banner
 *   gen/compiles_O0, _O2         the generated C compiles warning-free
 *   gen/rejects_cleanly          a malformed schema: exit 1, a message naming the entry,
 *                                no traceback, nothing on stdout, nothing written (the
 *                                message each malformed schema gets is checked in one
 *                                lua5.4 process: tests/gen/schema_errors.lua)
 *   gen/schema_extension         a schema that imports nnn.lua and adds an activation
 *                                yields a codec that decodes, encodes and validates it
 *   gen/original_rejects_new_id  the project's own nnnkit rejects that activation
 *   gen/rejects_*, escapes_*,    generator robustness: unusual schemas are either
 *   accepts_*, schema_sandbox    rejected cleanly or give C that compiles (section 5)
 *   gen/lang_*                   the strict schema language (gen/schema/lang.lua):
 *                                removed fields, slices, open range bounds in the
 *                                core's and a plugin's validator, the rendered
 *                                reference (section 6; its refusals: unknown keys and
 *                                kinds with "did you mean", wrong types and field
 *                                kinds, are in schema_errors.lua)
 *
 * Entries, indices and new IDs in the schemas and messages below come from
 * the schema (tests/lib/schemaq.h), so that they hold after a compatible growth.
 */
#define _XOPEN_SOURCE 700
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "blackbox.h"
#include "ctx.h"
#include "schemaq.h"
#include "shell.h"
#include "tmpdir.h"

#define GEN_LUA "lua5.4 gen/nnngen.lua"
#define CC_WARN "-std=c11 -Wall -Wextra -Werror"
/* libnnn's folders (the Makefile's RT_DIRS but formats/onnx, which needs
 * protobuf, passed by tests/tests.mk): one -I each, and their sources
 * (runtime/plugin's scanner.c is a program of its own). */
#define INCLUDES(dir) "-Iruntime/include -I" dir " " T_LIB_INC
#define LIBNNN_SRC T_LIB_SRC " $(ls runtime/plugin/*.c | grep -v /scanner.c)"

/* ---- temp dir per test ---- */

#define TMP "nnn-gen-"

static const char *tmp(void)
{
	return t_tmpdir(TMP);
}

TestSuite(gen, .fini = t_tmpdir_remove);

/* A shell command run with its output captured in the temp dir. */
#define sh(...) t_run_in(tmp(), __VA_ARGS__)

/* ---- helpers ---- */

static const char *tpath(const char *name)
{
	return t_tmppath(TMP, name);
}

static int file_exists(const char *path)
{
	return access(path, F_OK) == 0;
}

/* The first line of text that starts with prefix, copied into buf; "" if none. */
static const char *line_with_prefix(const char *text, const char *prefix, char *buf, size_t size)
{
	size_t plen = strlen(prefix);
	buf[0] = '\0';
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (!strncmp(p, prefix, plen)) {
			size_t n = strcspn(p, "\n");
			if (n >= size)
				n = size - 1;
			memcpy(buf, p, n);
			buf[n] = '\0';
			break;
		}
	}
	return buf;
}

/* Generates .c/.h/.md from `schema` into <tmp>/<sub>/ (the header goes to
 * <sub>/nnn/schema_gen.h, as the runtime includes it, and the records beside
 * it, nnn/records_gen.h). */
static t_run_t generate(const char *schema, const char *sub)
{
	return sh("mkdir -p '%s/%s/nnn' && " GEN_LUA " '%s' --c '%s/%s/schema_gen.c' "
	          "--h '%s/%s/nnn/schema_gen.h' --doc '%s/%s/format.md'",
	          tmp(), sub, schema, tmp(), sub, tmp(), sub, tmp(), sub);
}

/* ---- 1. determinism and banners ---- */

static void check_banner(const char *what, const char *text, const char *opener)
{
	char first[512];
	size_t n = strcspn(text, "\n");
	cr_assert(n < sizeof first, "%s: first line too long", what);
	memcpy(first, text, n);
	first[n] = '\0';
	cr_expect(!strncmp(first, opener, strlen(opener)), "%s does not start with %s: %s", what, opener, first);
	cr_expect(strstr(first, "do not edit") != NULL, "%s: banner lacks \"do not edit\": %s", what, first);
	cr_expect(strstr(first, "nnn.lua") != NULL, "%s: banner does not name the schema: %s", what, first);
}

Test(gen, deterministic)
{
	static const char *const files[] = { "schema_gen.c", "nnn/schema_gen.h", "nnn/records_gen.h", "format.md" };
	static const char *const openers[] = { "/*", "/*", "/*", "<!--" };
	t_run_t r;

	t_require_root();
	r = generate("schema/nnn.lua", "a");
	cr_assert_eq(r.status, 0, "first run failed (status %d): %s", r.status, r.err);
	t_run_free(&r);
	r = generate("schema/nnn.lua", "b");
	cr_assert_eq(r.status, 0, "second run failed (status %d): %s", r.status, r.err);
	t_run_free(&r);

	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		char pa[300], pb[300];
		size_t na, nb;
		snprintf(pa, sizeof pa, "%s/a/%s", tmp(), files[i]);
		snprintf(pb, sizeof pb, "%s/b/%s", tmp(), files[i]);
		char *a = t_slurp(pa, &na), *b = t_slurp(pb, &nb);
		cr_assert_not_null(a, "%s was not written", pa);
		cr_assert_not_null(b, "%s was not written", pb);
		cr_expect(na > 500, "%s is suspiciously small (%zu bytes)", files[i], na);
		cr_expect(na == nb && !memcmp(a, b, na), "%s differs between two runs (%zu vs %zu bytes)", files[i],
		          na, nb);
		check_banner(files[i], a, openers[i]);
		free(a);
		free(b);
	}
}

/* ---- 2. the generated C compiles cleanly ---- */

static void compiles_at(const char *opt)
{
	t_run_t r;

	t_require_root();
	r = generate("schema/nnn.lua", "g");
	cr_assert_eq(r.status, 0, "generation failed (status %d): %s", r.status, r.err);
	t_run_free(&r);
	r = sh("cc " CC_WARN " %s " INCLUDES("'%s/g'") " -c '%s/g/schema_gen.c' -o '%s/g/schema_gen.o'", opt, tmp(),
	       tmp(), tmp());
	cr_expect_eq(r.status, 0, "cc %s failed on the generated code (status %d):\n%s%s", opt, r.status, r.out,
	             r.err);
	cr_expect_str_empty(r.err, "cc %s printed diagnostics:\n%s", opt, r.err);
	t_run_free(&r);
	cr_assert(file_exists(tpath("g/schema_gen.o")), "no object file was produced");

	/* The header stands alone: a user may include it first. */
	t_spit_str(tpath("g/hdr.c"), "#include <nnn/schema_gen.h>\n"
	                           "int nnn_hdr_probe(void);\n"
	                           "int nnn_hdr_probe(void) { return (int)sizeof(nnn_model_t); }\n");
	r = sh("cc " CC_WARN " -Wmissing-prototypes -Wstrict-prototypes %s " INCLUDES("'%s/g'")
	       " -c '%s/g/hdr.c' -o '%s/g/hdr.o'",
	       opt, tmp(), tmp(), tmp());
	cr_expect_eq(r.status, 0, "the generated header does not compile on its own:\n%s", r.err);
	t_run_free(&r);
}

Test(gen, compiles_O0)
{
	compiles_at("-O0");
}

Test(gen, compiles_O2)
{
	compiles_at("-O2");
}

/* ---- 3. malformed schemas ---- */

/* Every bad schema starts from nnn.lua; `find` and `push` are shorthands
 * (the sandbox also offers table.insert and the rest of table/string/math).
 * tests/gen/schema_errors.lua starts its cases from the same text. */
static const char BAD_PROLOGUE[] =
	"local s = import(\"nnn.lua\")\n"
	"local function find(list, name)\n"
	"  for i = 1, #list do if list[i].name == name then return list[i] end end\n"
	"  error(\"test schema: no entry \" .. name)\n"
	"end\n"
	"local function push(list, e) list[#list + 1] = e end\n"
	"local function field_of(rec, name) return find(find(s.records, rec).fields, name) end\n"
	"local function rule_of(rec, kind)\n"
	"  for _, r in ipairs(find(s.records, rec).rules) do if r.kind == kind then return r end end\n"
	"  error(\"test schema: no rule \" .. kind)\n"
	"end\n";

static void write_bad(const char *file, const char *body)
{
	char text[4096];
	int n = snprintf(text, sizeof text, "%s%s\nreturn s\n", BAD_PROLOGUE, body);
	cr_assert(n > 0 && (size_t)n < sizeof text, "schema body too long");
	t_spit_str(tpath(file), text);
}

/* The schemas the generator must refuse, and the message each gets, are
 * tests/gen/schema_errors.lua: one lua5.4 process loads each through the
 * generator's schema reader. What only a process shows is nnngen's main,
 * checked here once: exit status 1, no Lua traceback, a "schema error: "
 * line naming the entry, nothing on stdout and no output file written. */
Test(gen, rejects_cleanly)
{
	static const char body[] = "find(find(s.records, \"dense\").fields, \"weights\").type = \"tensr\"";
	static const char *const want[] = { "\"dense\".fields[", "] \"weights\": unknown type \"tensr\"" };
	char line[1024];
	t_run_t r;

	t_require_root();
	t_copy_schema(tmp());
	write_bad("bad.lua", body);
	r = generate(tpath("bad.lua"), "out");
	cr_assert_eq(r.status, 1, "expected exit status 1, got %d\nschema body:\n%s\nstderr:\n%s", r.status, body,
	             r.err);
	cr_expect(strstr(r.err, "traceback") == NULL, "generator crashed instead of reporting:\n%s", r.err);
	line_with_prefix(r.err, "schema error: ", line, sizeof line);
	cr_assert(line[0], "no \"schema error: \" line on stderr:\n%s", r.err);
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
		cr_expect(strstr(line, want[i]) != NULL, "message lacks '%s':\n%s", want[i], line);
	cr_expect_str_empty(r.out, "stdout should be empty:\n%s", r.out);
	cr_expect(!file_exists(tpath("out/schema_gen.c")), "the .c was written despite the error");
	cr_expect(!file_exists(tpath("out/nnn/schema_gen.h")), "the .h was written despite the error");
	cr_expect(!file_exists(tpath("out/nnn/records_gen.h")), "the records .h was written despite the error");
	cr_expect(!file_exists(tpath("out/format.md")), "the .md was written despite the error");
	t_run_free(&r);
}

/* ---- 4. the schema is the source of truth ---- */

/* A new activation with one parameter, declared like leaky_relu, at the
 * next free activation ID (a printf format: %lld is the ID). */
#define EXT_LUA \
	"-- nnn.lua plus the Swish activation (y = x * sigmoid(beta * x)).\n" \
	"local s = import(\"nnn.lua\")\n" \
	"local function find(list, name)\n" \
	"  for i = 1, #list do if list[i].name == name then return list[i], i end end\n" \
	"end\n" \
	"local acts = find(s.enums, \"activation_id\").values\n" \
	"acts[#acts + 1] = { value = %lld, name = \"swish\", title = \"Swish\", record = \"swish\",\n" \
	"  doc = \"y = x * sigmoid(beta * x).\" }\n" \
	"local _, at = find(s.records, \"activation\")\n" \
	"for i = #s.records, at, -1 do s.records[i + 1] = s.records[i] end\n" \
	"s.records[at] = { name = \"swish\", doc = \"Parameters of Swish.\", section = \"activation_params\",\n" \
	"  fields = {\n" \
	"    { name = \"beta\", type = \"f32\", doc = \"Scale of the input inside the sigmoid.\" },\n" \
	"  },\n" \
	"  rules = {\n" \
	"    { kind = \"finite\", field = \"beta\", doc = \"beta is a finite number.\" },\n" \
	"  } }\n" \
	"return s\n"

/* The test's own little-endian writer, for the file the programs exchange. */
typedef struct bytes {
	unsigned char b[512];
	size_t n;
} bytes_t;

static void put_u8(bytes_t *w, unsigned v)
{
	cr_assert(w->n < sizeof w->b);
	w->b[w->n++] = (unsigned char)v;
}

static void put_u32(bytes_t *w, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		put_u8(w, (v >> (8 * i)) & 0xffu);
}

static void put_u64(bytes_t *w, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		put_u8(w, (unsigned)((v >> (8 * i)) & 0xffu));
}

static void put_f32(bytes_t *w, float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof u);
	put_u32(w, u);
}

/* One Dense layer 3 -> 2 with activation `act`; when `has_param`, the
 * activation carries one f32 parameter (Swish's beta, Leaky ReLU's tau). */
static void build_model(bytes_t *w, unsigned act, int has_param, float param)
{
	static const char desc[] = "gen test: swish";
	w->n = 0;
	put_u32(w, 776883790u);
	put_u32(w, (uint32_t)strlen(desc));
	for (const char *p = desc; *p; p++)
		put_u8(w, (unsigned char)*p);
	put_u64(w, 8);  /* param count: 2 bias + 6 weights */
	put_u32(w, 1);  /* layer count */
	put_u8(w, 0);   /* layer id: dense */
	put_u8(w, act); /* activation id */
	if (has_param)
		put_f32(w, param);
	put_f32(w, 0.0f); /* dropout */
	/* bias: dims {2}, requires_grad, 2 floats */
	put_u32(w, 1);
	put_u32(w, 2);
	put_u8(w, 1);
	put_u32(w, 2);
	put_f32(w, 0.25f);
	put_f32(w, -0.5f);
	put_u32(w, 2); /* neurons */
	/* weights: dims {3, 2}, requires_grad, 6 floats */
	put_u32(w, 2);
	put_u32(w, 3);
	put_u32(w, 2);
	put_u8(w, 1);
	put_u32(w, 6);
	for (int i = 0; i < 6; i++)
		put_f32(w, (float)i * 0.5f - 1.0f);
	put_u8(w, 0); /* flatten */
}

/* Built against the codec generated from ext.lua: writes the file given as
 * argv[1] and checks that codec end to end. SWISH_ID is Swish's ID, UNDEF_ID
 * one the extended schema does not define (both given to cc). */
static const char PROG_C[] =
	"#include <math.h>\n"
	"#include <stdint.h>\n"
	"#include <stdio.h>\n"
	"#include <stdlib.h>\n"
	"#include <string.h>\n"
	"#include <nnn/model.h>\n"
	"#include <nnn/validate.h>\n"
	"\n"
	"static unsigned char buf[512];\n"
	"static size_t len;\n"
	"static void u8(unsigned v) { buf[len++] = (unsigned char)v; }\n"
	"static void u32(uint32_t v) { for (int i = 0; i < 4; i++) u8((v >> (8 * i)) & 0xffu); }\n"
	"static void u64(uint64_t v) { for (int i = 0; i < 8; i++) u8((unsigned)((v >> (8 * i)) & 0xffu)); }\n"
	"static void f32(float f) { uint32_t u; memcpy(&u, &f, 4); u32(u); }\n"
	"\n"
	"static void dump(const nnn_diags_t *d)\n"
	"{\n"
	"\tchar line[1024];\n"
	"\tfor (size_t i = 0; i < d->n; i++)\n"
	"\t\tprintf(\"  diag: %s\\n\", nnn_diag_format(&d->v[i], line, sizeof line));\n"
	"}\n"
	"\n"
	"#define CHECK(c) do { if (!(c)) { printf(\"FAIL (line %d): %s\\n\", __LINE__, #c); dump(&d); \\\n"
	"\treturn 1; } } while (0)\n"
	"\n"
	"int main(int argc, char **argv)\n"
	"{\n"
	"\tstatic const char desc[] = \"gen test: swish\";\n"
	"\tnnn_diags_t d;\n"
	"\tnnn_model_t *m = NULL, *bad = NULL;\n"
	"\tunsigned char *out = NULL;\n"
	"\tsize_t out_len = 0, beta_at;\n"
	"\tchar text[64];\n"
	"\tFILE *f;\n"
	"\n"
	"\tnnn_diags_init(&d);\n"
	"\tCHECK(argc == 2);\n"
	"\tu32(776883790u);\n"
	"\tu32((uint32_t)strlen(desc));\n"
	"\tfor (const char *p = desc; *p; p++) u8((unsigned char)*p);\n"
	"\tu64(8);\n"
	"\tu32(1);\n"
	"\tu8(0); /* dense */\n"
	"\tu8(SWISH_ID);\n"
	"\tbeta_at = len;\n"
	"\tf32(1.5f); /* beta */\n"
	"\tf32(0.0f); /* dropout */\n"
	"\tu32(1); u32(2); u8(1); u32(2); f32(0.25f); f32(-0.5f); /* bias */\n"
	"\tu32(2); /* neurons */\n"
	"\tu32(2); u32(3); u32(2); u8(1); u32(6); /* weights */\n"
	"\tfor (int i = 0; i < 6; i++) f32((float)i * 0.5f - 1.0f);\n"
	"\tu8(0); /* flatten */\n"
	"\tf = fopen(argv[1], \"wb\");\n"
	"\tCHECK(f != NULL);\n"
	"\tCHECK(fwrite(buf, 1, len, f) == len);\n"
	"\tCHECK(fclose(f) == 0);\n"
	"\n"
	"\tCHECK(nnn_model_decode(buf, len, NULL, &m, &d) == NNN_OK);\n"
	"\tCHECK(m->layer_count == 1);\n"
	"\tCHECK(m->layers[0].id == NNN_LAYER_ID_DENSE);\n"
	"\tCHECK(m->layers[0].activation.id == SWISH_ID);\n"
	"\tCHECK(m->layers[0].activation.id == NNN_ACTIVATION_ID_SWISH);\n"
	"\tCHECK(m->layers[0].activation.params.swish.beta == 1.5f);\n"
	"\tCHECK(m->layers[0].dropout == 0.0f);\n"
	"\tCHECK(m->layers[0].body.dense.neurons == 2);\n"
	"\tCHECK(m->layers[0].body.dense.weights.data.n == 6);\n"
	"\tCHECK(m->layers[0].bias.data.n == 2);\n"
	"\tCHECK(nnn_f32s_get(m->layers[0].bias.data, 1) == -0.5f);\n"
	"\tCHECK(nnn_activation_id_name(SWISH_ID) != NULL && strcmp(nnn_activation_id_name(SWISH_ID), \"swish\") == 0);\n"
	"\tCHECK(nnn_activation_id_title(SWISH_ID) != NULL && strcmp(nnn_activation_id_title(SWISH_ID), \"Swish\") == 0);\n"
	"\tCHECK(nnn_activation_id_name(UNDEF_ID) == NULL);\n"
	"\tCHECK(nnn_activation_title(&m->layers[0].activation) != NULL);\n"
	"\tCHECK(strcmp(nnn_activation_title(&m->layers[0].activation), \"Swish\") == 0);\n"
	"\tCHECK(nnn_activation_format(&m->layers[0].activation, text, sizeof text) == strlen(\"beta=1.5\"));\n"
	"\tCHECK(strcmp(text, \"beta=1.5\") == 0);\n"
	"\tCHECK(nnn_model_param_total(m) == 8);\n"
	"\tCHECK(nnn_model_encoded_size(m) == len);\n"
	"\tCHECK(nnn_model_encode(m, &out, &out_len, &d) == NNN_OK);\n"
	"\tCHECK(out_len == len);\n"
	"\tCHECK(memcmp(out, buf, len) == 0);\n"
	"\tCHECK(nnn_model_validate(m, NULL, NULL, &d) == NNN_OK);\n"
	"\tCHECK(d.n == 0);\n"
	"\n"
	"\t/* The new record's rule is generated too: a NaN beta is invalid. */\n"
	"\t{\n"
	"\t\tsize_t keep = len;\n"
	"\t\tlen = beta_at;\n"
	"\t\tf32(nanf(\"\"));\n"
	"\t\tlen = keep;\n"
	"\t}\n"
	"\tCHECK(nnn_model_decode(buf, len, NULL, &bad, &d) == NNN_OK);\n"
	"\tCHECK(nnn_model_validate(bad, NULL, NULL, &d) == NNN_E_RANGE);\n"
	"\tCHECK(d.n == 1 && strstr(d.v[0].path, \"beta\") != NULL);\n"
	"\n"
	"\tfree(out);\n"
	"\tnnn_model_free(bad);\n"
	"\tnnn_model_free(m);\n"
	"\tnnn_diags_free(&d);\n"
	"\tputs(\"OK\");\n"
	"\treturn 0;\n"
	"}\n";

/* Writes <tmp>/<name>.c from `source` and builds <tmp>/<name> from it, the
 * codec generated into <tmp>/<sub>/ and libnnn's sources (LIBNNN_SRC). */
static void build_against_codec(const char *name, const char *source, const char *sub)
{
	char file[64];
	t_run_t r;

	snprintf(file, sizeof file, "%s.c", name);
	t_spit_str(tpath(file), source);
	r = sh("cc " CC_WARN " -O0 -g " INCLUDES("'%s/%s'") " -o '%s/%s' '%s/%s' '%s/%s/schema_gen.c' "
	       LIBNNN_SRC " -ljansson -lm",
	       tmp(), sub, tmp(), name, tmp(), file, tmp(), sub);
	cr_assert_eq(r.status, 0, "building %s against the codec generated from %s failed:\n%s%s", file, sub, r.out,
	             r.err);
	t_run_free(&r);
}

/* `nnnkit validate FILE` from the project's own build must refuse activation `id`. */
static void expect_original_rejects(const char *file, long long id)
{
	char want[64];
	const char *kit = nnnkit_bin();
	char prefix[512];
	t_run_t r;

	cr_assert(access(kit, X_OK) == 0, "%s is not built (run make)", kit);
	/* No plugin search path: only the codec built from schema/nnn.lua answers. */
	r = sh("unset NNN_PLUGIN_PATH; '%s' validate '%s'", kit, file);
	cr_expect_eq(r.status, 1, "nnnkit validate: expected exit status 1, got %d\nstdout:\n%s\nstderr:\n%s",
	             r.status, r.out, r.err);
	snprintf(prefix, sizeof prefix, "nnnkit: %s: ", file);
	cr_expect(strstr(r.err, prefix) != NULL, "no '%s' line on stderr:\n%s", prefix, r.err);
	snprintf(want, sizeof want, "activation ID %lld", id);
	cr_expect(strstr(r.err, want) != NULL, "stderr does not mention %s:\n%s", want, r.err);
	t_run_free(&r);
}

Test(gen, schema_extension)
{
	t_run_t r;
	char *text;
	long long id, undef;

	t_require_root();
	id = sq_int("next_free(\"activation_id\")");
	undef = sq_int("unused(\"activation_id\", %lld)", id);
	t_copy_schema(tmp());
	t_spit_str(tpath("ext.lua"), t_fmt(EXT_LUA, id));

	/* The extension is a valid schema, and the unchanged copy still is. */
	r = generate(tpath("ext.lua"), "x");
	cr_assert_eq(r.status, 0, "generation from ext.lua failed (status %d):\n%s", r.status, r.err);
	t_run_free(&r);

	text = t_slurp(tpath("x/nnn/records_gen.h"), NULL);
	cr_assert_not_null(text, "no header generated");
	cr_expect(strstr(text, t_fmt("NNN_ACTIVATION_ID_SWISH = %lld,", id)) != NULL, "header lacks the Swish ID");
	cr_expect(strstr(text, "typedef struct nnn_swish {") != NULL, "header lacks the swish record");
	cr_expect(strstr(text, "ext.lua") != NULL, "header banner does not name ext.lua");
	free(text);
	text = t_slurp(tpath("x/format.md"), NULL);
	cr_assert_not_null(text, "no format.md generated");
	cr_expect(strstr(text, "### `swish`") != NULL, "format.md does not document the swish record");
	cr_expect(strstr(text, t_fmt("| %lld | Swish | `swish` |", id)) != NULL, "format.md does not list activation %lld",
	          id);
	free(text);

	t_spit_str(tpath("prog.c"), PROG_C);
	r = sh("cc " CC_WARN " -O0 -g -DSWISH_ID=%lld -DUNDEF_ID=%lld " INCLUDES("'%s/x'")
	       " -o '%s/prog' '%s/prog.c' '%s/x/schema_gen.c' " LIBNNN_SRC " -ljansson -lm",
	       id, undef, tmp(), tmp(), tmp(), tmp());
	cr_assert_eq(r.status, 0, "building the program against the extended codec failed:\n%s%s", r.out, r.err);
	t_run_free(&r);

	r = sh("'%s/prog' '%s/swish.nnn'", tmp(), tmp());
	cr_expect_eq(r.status, 0, "the program failed (status %d):\n%s%s", r.status, r.out, r.err);
	cr_expect_str_eq(r.out, "OK\n", "the program's output:\n%s%s", r.out, r.err);
	t_run_free(&r);

	/* The program wrote the layout this test also builds byte by byte. */
	{
		bytes_t want;
		size_t n;
		char *got = t_slurp(tpath("swish.nnn"), &n);
		build_model(&want, (unsigned)id, 1, 1.5f);
		cr_assert_not_null(got, "the program wrote no file");
		cr_expect(n == want.n && !memcmp(got, want.b, n), "the program's file differs from the expected bytes");
		free(got);
	}

	/* The project's own codec knows nothing of the new activation. */
	expect_original_rejects(tpath("swish.nnn"), id);
}

Test(gen, original_rejects_new_id)
{
	long long id;
	bytes_t w;
	const char *kit = nnnkit_bin();
	t_run_t r;

	t_require_root();
	/* Control: the same layout with Leaky ReLU (tau = 1.5) is valid. */
	build_model(&w, (unsigned)sq_int("value(\"activation_id\", \"leaky_relu\")"), 1, 1.5f);
	t_spit(tpath("leaky.nnn"), w.b, w.n);
	cr_assert(access(kit, X_OK) == 0, "%s is not built (run make)", kit);
	r = sh("unset NNN_PLUGIN_PATH; '%s' validate '%s'", kit, tpath("leaky.nnn"));
	cr_expect_eq(r.status, 0, "the control file is not valid (status %d):\n%s%s", r.status, r.out, r.err);
	t_run_free(&r);

	id = sq_int("next_free(\"activation_id\")");
	build_model(&w, (unsigned)id, 1, 1.5f);
	t_spit(tpath("swish.nnn"), w.b, w.n);
	expect_original_rejects(tpath("swish.nnn"), id);
}

/* ---- 5. generator robustness ----
 *
 * Each schema below is malformed or unusual. The generator must either
 * reject it cleanly (exit 1, one "schema error:" line naming the entry, no
 * traceback) or produce C that compiles: expect_robust checks exactly that.
 * Each of these once failed one way or the other (a Lua traceback, an
 * unclean message, a schema silently accepted, or generated C that does not
 * compile); the message the checker gives now is pinned down by the cases of
 * the same test name in tests/gen/schema_errors.lua.
 */
static void expect_robust(const char *name, const char *body)
{
	char file[64], sub[64], line[1024];
	t_run_t r;

	t_require_root();
	t_copy_schema(tmp());
	snprintf(file, sizeof file, "%s.lua", name);
	snprintf(sub, sizeof sub, "%s", name);
	write_bad(file, body);
	r = generate(tpath(file), sub);
	cr_assert(r.status == 0 || r.status == 1, "generator exit status %d\n%s", r.status, r.err);
	cr_expect(strstr(r.err, "traceback") == NULL, "generator crashed instead of reporting:\n%s", r.err);
	if (r.status == 1) {
		line_with_prefix(r.err, "schema error: ", line, sizeof line);
		cr_expect(line[0] != '\0', "no \"schema error: \" line on stderr:\n%s", r.err);
		t_run_free(&r);
		return;
	}
	t_run_free(&r);
	r = sh("cc " CC_WARN " -O2 " INCLUDES("'%s/%s'") " -c '%s/%s/schema_gen.c' -o '%s/%s/schema_gen.o'", tmp(),
	       sub, tmp(), sub, tmp(), sub);
	cr_expect_eq(r.status, 0, "the schema was accepted but its C does not compile:\n%s\n%s", body, r.err);
	t_run_free(&r);
}

/* Generates <tmp>/<name>/ from nnn.lua + body and expects success; returns
 * the generated .c (free it). */
static char *expect_accepted(const char *name, const char *body)
{
	char file[64], p[128];
	char *text;
	t_run_t r;

	t_require_root();
	t_copy_schema(tmp());
	snprintf(file, sizeof file, "%s.lua", name);
	write_bad(file, body);
	r = generate(tpath(file), name);
	cr_assert_eq(r.status, 0, "the schema was rejected (status %d):\n%s\nstderr:\n%s", r.status, body, r.err);
	t_run_free(&r);
	snprintf(p, sizeof p, "%s/schema_gen.c", name);
	text = t_slurp(tpath(p), NULL);
	cr_assert_not_null(text, "no .c generated");
	return text;
}

/* A decode-stage rule other than dims_product: the C emitter indexed a nil dims_ref. */
static const char DECODE_STAGE_MIN[] =
	"push(find(s.records, \"dense\").rules,\n"
	"  { kind = \"min\", stage = \"decode\", field = \"neurons\", value = 1, doc = \"x.\" })";

Test(gen, rejects_decode_stage_rule)
{
	expect_robust("odd", DECODE_STAGE_MIN);
}

/* A title that is not a string: cstr() indexed a number. */
static const char TITLE_NUMBER[] = "find(find(s.enums, \"activation_id\").values, \"linear\").title = 5";

Test(gen, rejects_title_not_string)
{
	expect_robust("odd", TITLE_NUMBER);
}

/* An enum value that is not a table: a raw Lua error without the entry. */
static const char VALUE_NUMBER[] = "push(find(s.enums, \"activation_id\").values, 7)";

Test(gen, rejects_enum_value_not_table)
{
	expect_robust("odd", VALUE_NUMBER);
}

/* `rules` that is not a list was silently treated as no rules. */
Test(gen, rejects_rules_not_list)
{
	char line[1024];
	t_run_t r;

	expect_robust("odd", "find(s.records, \"dense\").rules = \"min\"");
	/* Accepting it is wrong even though the C compiles: the rules are gone. */
	r = generate(tpath("odd.lua"), "again");
	line_with_prefix(r.err, "schema error: ", line, sizeof line);
	cr_expect_eq(r.status, 1, "a non-list `rules` was accepted");
	cr_expect(strstr(line, "\"dense\"") != NULL, "the message does not name the record: %s", line);
	t_run_free(&r);
}

/* Doc strings and titles went into C comments and strings unescaped. */
Test(gen, escapes_doc_in_comments)
{
	char *c;

	c = expect_accepted("esc", "find(find(s.records, \"dense\").fields, \"neurons\").doc = \"Number */ of /* neurons.\"\n"
	                           "find(s.records, \"dense\").rules[1].doc = \"At least */ one.\"");
	cr_expect(strstr(c, "/* neurons: Number * / of / * neurons. */") != NULL, "the field's comment is not escaped");
	cr_expect(strstr(c, "/* rule: At least * / one. */") != NULL, "the rule's comment is not escaped");
	cr_expect(strstr(c, "\"Number */ of /* neurons.\"") != NULL, "the doc string in C lost its text");
	free(c);
	/* Last: it compiles the C, which is skipped under valgrind. */
	expect_robust("odd", "find(find(s.records, \"dense\").fields, \"neurons\").doc = \"Number */ of neurons.\"");
}

static const char TITLE_NEWLINE[] = "find(find(s.enums, \"activation_id\").values, \"linear\").title = \"Lin\\near\"";

Test(gen, rejects_title_with_newline)
{
	expect_robust("odd", TITLE_NEWLINE);
}

/* What remains allowed in titles and docs (tab, quotes, backslashes, "??")
 * is escaped in C strings. "?\?" keeps this file free of trigraphs too. */
Test(gen, escapes_control_characters)
{
	static const char body[] =
		"find(find(s.enums, \"activation_id\").values, \"linear\").title = \"Lin\\tear \\\"x\\\" \\\\ ?\?!\"\n"
		"find(find(s.records, \"dense\").fields, \"neurons\").doc = \"Tab\\tand ?\?=.\"";
	char *c = expect_accepted("ctl", body);

	cr_expect(strstr(c, "return \"Lin\\tear \\\"x\\\" \\\\ ?\\?!\";") != NULL, "the title is not escaped:\n%s", c);
	cr_expect(strstr(c, "\"Tab\\tand ?\\?=.\"") != NULL, "the doc string is not escaped");
	free(c);
	expect_robust("ctl2", body);
}

/* A range bound of 1/0 or 0/0 became the C identifiers inf / nan. */
Test(gen, rejects_range_not_finite)
{
	expect_robust("odd", "find(s.records, \"layer\").rules[1].max = 1/0");
}

/* Field names that collide with C keywords or the generated `at` member. */
Test(gen, rejects_field_named_at)
{
	expect_robust("odd", "push(find(s.records, \"dense\").fields, { name = \"at\", type = \"i32\", doc = \"x.\" })");
}

Test(gen, rejects_field_named_keyword)
{
	char *c;

	expect_robust("odd", "push(find(s.records, \"dense\").fields, { name = \"int\", type = \"i32\", doc = \"x.\" })");
	/* A value without a record is only an NNN_..._DOUBLE constant (one that
	 * selects a record names a union member: schema_errors.lua). */
	c = expect_accepted("kw", t_fmt("push(find(s.enums, \"activation_id\").values,\n"
	                              "  { value = %lld, name = \"double\", doc = \"x.\" })",
	                              sq_int("next_free(\"activation_id\")")));
	cr_expect(strstr(c, "NNN_ACTIVATION_ID_DOUBLE") != NULL, "no constant for the value");
	free(c);
}

/* A padding formula was checked only for its characters: "k/0" passed. */
Test(gen, rejects_padding_formula)
{
	expect_robust("odd", "find(find(s.enums, \"padding_type\").values, \"same\").pad_before = \"k/0\"");
}

/* An enum stored as u64: the range check computed 1 << 64 = 0, so every
 * value was "out of [0, -1]". */
Test(gen, accepts_u64_enum)
{
	static const char body[] = "find(s.enums, \"padding_type\").type = \"u64\"";
	char line[1024];
	t_run_t r;

	t_require_root();
	t_copy_schema(tmp());
	write_bad("u64.lua", body);
	r = generate(tpath("u64.lua"), "again");
	line_with_prefix(r.err, "schema error: ", line, sizeof line);
	cr_expect(strstr(line, "[0, -1]") == NULL, "impossible range in the message: %s", line);
	cr_expect_eq(r.status, 0, "a u64 enum was rejected:\n%s", r.err);
	t_run_free(&r);
	/* Last: it compiles the C, which is skipped under valgrind. */
	expect_robust("odd", body);
}

/* A record both selected by a variant and used as a plain field: its
 * validator was called with the wrong parent type. */
Test(gen, rejects_variant_record_as_field)
{
	expect_robust("odd", "push(find(s.records, \"dense\").fields,\n"
	                     "  { name = \"slope\", type = \"leaky_relu\", doc = \"A slope.\" })");
}

/* Schema files get import and a read-only part of the standard library. */
Test(gen, schema_sandbox)
{
	char *h, p[128];
	long long id = sq_int("next_free(\"activation_id\")");
	char *c = expect_accepted("sb", t_fmt("table.insert(find(s.enums, \"activation_id\").values,\n"
	                                "  { value = %lld, name = string.format(\"act%%d\", math.floor(%lld.5)),\n"
	                                "    title = (\"six\"):upper(), doc = table.concat({ \"Six\", \".\" }) })\n"
	                                "local n = 0\n"
	                                "for _ in pairs(string) do n = n + 1 end\n"
	                                "assert(n > 10 and select(\"#\", 1, 2) == 2 and tonumber(\"7\") == 7)\n"
	                                "assert(type(next) == \"function\" and tostring(1) == \"1\")", id, id));
	cr_expect(strstr(c, "return \"SIX\";") != NULL, "the value built with string/math is missing");
	free(c);
	snprintf(p, sizeof p, "sb/nnn/records_gen.h");
	h = t_slurp(tpath(p), NULL);
	cr_assert_not_null(h);
	cr_expect(strstr(h, t_fmt("NNN_ACTIVATION_ID_ACT%lld = %lld,", id, id)) != NULL, "no constant for the new value");
	free(h);
}

/* ---- 6. the schema language (gen/schema/lang.lua) ----
 *
 * The checker accepts only what the language table lists, and says what it
 * expected (the messages: tests/gen/schema_errors.lua). Each case starts from
 * nnn.lua and names its entries by name. */

/* `ids` (the ID ownership policy) is a key of the top level. */
Test(gen, lang_accepts_ids)
{
	/* the ID policy's own check reads inside it (test_compat.c) */
	char *c = expect_accepted("ids", "s.ids.layer_id.doc = \"Layer IDs.\"");
	free(c);
}

/* A field removed from the schema: every reference to it says it is gone,
 * before any other check reads the reference. */
Test(gen, lang_removed_field)
{
	static const char remove_flatten[] =
		"local d = find(s.records, \"dense\")\n"
		"for i, f in ipairs(d.fields) do if f.name == d.io.flatten then table.remove(d.fields, i) break end end";
	char line[1024];
	t_run_t r;

	/* The message names the removed field (schema_errors.lua): it is not a
	 * complaint about what the io key must be. */
	t_require_root();
	t_copy_schema(tmp());
	write_bad("removed.lua", remove_flatten);
	r = generate(tpath("removed.lua"), "removed");
	line_with_prefix(r.err, "schema error: ", line, sizeof line);
	cr_expect(strstr(line, "must be a field reference") == NULL && strstr(line, "needs ") == NULL,
	          "a downstream check answered: %s", line);
	t_run_free(&r);
}

/* Writes <tmp>/probe.lua, which loads a schema through the checker and prints
 * every io reference's index and slice, "<key> <from>:<to>" per line. */
static void write_probe(void)
{
	t_spit_str(tpath("probe.lua"),
	         "package.path = \"gen/?.lua;\" .. package.path\n"
	         "local s = require(\"schema.check\")(arg[1])\n"
	         "local keys = {}\n"
	         "for _, r in ipairs(s.records) do\n"
	         "  if r.io then\n"
	         "    for k, x in pairs(r.io) do\n"
	         "      if type(k) == \"string\" and k:find(\"_ref$\") then\n"
	         "        local t = x.slice and (x.slice.from .. \":\" .. tostring(x.slice.to))\n"
	         "          or x.index and (\"[\" .. x.index .. \"]\") or \"whole\"\n"
	         "        keys[#keys + 1] = r.name .. \".\" .. k .. \" \" .. t\n"
	         "      end\n"
	         "    end\n"
	         "  end\n"
	         "end\n"
	         "table.sort(keys)\n"
	         "print(table.concat(keys, \"\\n\"))\n");
}

/* References may be sliced, Python style, where an i32_array is wanted. */
Test(gen, lang_slices)
{
	static const char window[] =
		"local c = find(s.records, \"conv\")\n"
		"c.io = { kind = \"window\", window = \"kernels.dims[1:-1]\", channels = \"kernels.dims[-1]\",\n"
		"  outputs = \"filters\", stride = \"kernels.dims[:1]\", dilation = \"kernels.dims[2:]\",\n"
		"  padding = \"padding_dims\", padding_type = \"padding_type\" }";
	t_run_t r;

	t_require_root();
	t_copy_schema(tmp());
	write_bad("window.lua", window);
	write_probe();
	r = sh("lua5.4 '%s' '%s'", tpath("probe.lua"), tpath("window.lua"));
	cr_assert_eq(r.status, 0, "the window io was rejected:\n%s", r.err);
	cr_expect(strstr(r.out, "conv.window_ref 1:-1\n") != NULL, "slice [1:-1]:\n%s", r.out);
	cr_expect(strstr(r.out, "conv.stride_ref 0:nil\n") == NULL && strstr(r.out, "conv.stride_ref 0:1\n") != NULL,
	          "slice [:1]:\n%s", r.out);
	cr_expect(strstr(r.out, "conv.dilation_ref 2:nil\n") != NULL, "slice [2:]:\n%s", r.out);
	cr_expect(strstr(r.out, "conv.channels_ref [-1]\n") != NULL, "index [-1]:\n%s", r.out);
	cr_expect(strstr(r.out, "conv.padding_ref whole\n") != NULL, "whole:\n%s", r.out);
	t_run_free(&r);
	r = sh(GEN_LUA " '%s' --check", tpath("window.lua"));
	cr_expect_eq(r.status, 0, "nnngen --check refused the window io:\n%s", r.err);
	t_run_free(&r);
	/* The emitters turn every key of it, slices included, into C (the
	 * slices the checker refuses: schema_errors.lua). */
	r = generate(tpath("window.lua"), "window");
	cr_expect_eq(r.status, 0, "nnngen refused the window io:\n%s", r.err);
	t_run_free(&r);
	char *c = t_slurp(tpath("window/schema_gen.c"), NULL);
	cr_assert_not_null(c);
	cr_expect(strstr(c, "io->window = nnn_io_list(r->kernels.dims, 1, false, -1, ") != NULL, "window slice");
	cr_expect(strstr(c, "io->stride = nnn_io_list(r->kernels.dims, 0, false, 1, ") != NULL, "stride slice");
	cr_expect(strstr(c, "io->dilation = nnn_io_list(r->kernels.dims, 2, true, 0, ") != NULL, "dilation slice");
	cr_expect(strstr(c, "io->pad_fn = pad_padding_type;") != NULL, "padding type formulas");
	free(c);
}

/* The kinds the reference lists: the headings of docs/schema-language.md
 * under `section` ("## Rule kinds") joined by ", ". schema_errors.lua checks
 * that the checker's messages list the same. */
static void doc_kinds(const char *doc, const char *section, char *out, size_t size)
{
	const char *p = strstr(doc, section);
	out[0] = '\0';
	cr_assert_not_null(p, "docs/schema-language.md has no \"%s\"", section);
	p += strlen(section);
	const char *end = strstr(p, "\n## ");
	for (const char *h = strstr(p, "\n### `"); h && (!end || h < end); h = strstr(h + 1, "\n### `")) {
		const char *name = h + 6;
		size_t n = strcspn(name, "`");
		size_t k = strlen(out);
		cr_assert(k + n + 3 < size);
		snprintf(out + k, size - k, "%s%.*s", k ? ", " : "", (int)n, name);
	}
}

Test(gen, lang_reference_lists_what_the_checker_knows)
{
	char rules[512], ios[512];
	char *doc;

	t_require_root();
	doc = t_slurp("docs/schema-language.md", NULL);
	cr_assert_not_null(doc, "docs/schema-language.md is missing (run make)");
	cr_expect(!strncmp(doc, "<!-- Generated by gen/nnngen.lua", 32), "the reference is not generated");
	doc_kinds(doc, "\n## Rule kinds\n", rules, sizeof rules);
	doc_kinds(doc, "\n## io kinds\n", ios, sizeof ios);
	free(doc);
	cr_assert(strstr(rules, "range") && strstr(ios, "features"), "rules: %s; io: %s", rules, ios);
}

/* A cc run against the codec generated from <tmp>/<sub>, with libnnn's sources:
 * a program that validates the file it is given (exit 0 valid, 1 not) and
 * prints every problem. */
static const char VALIDATE_C[] =
	"#include <stdio.h>\n"
	"#include <stdlib.h>\n"
	"#include <nnn/validate.h>\n"
	"\n"
	"int main(int argc, char **argv)\n"
	"{\n"
	"\tstatic unsigned char buf[1 << 20];\n"
	"\tnnn_diags_t d;\n"
	"\tchar line[1024];\n"
	"\tFILE *f = argc == 2 ? fopen(argv[1], \"rb\") : NULL;\n"
	"\tif (!f)\n"
	"\t\treturn 2;\n"
	"\tsize_t n = fread(buf, 1, sizeof buf, f);\n"
	"\tfclose(f);\n"
	"\tnnn_diags_init(&d);\n"
	"\tnnn_status_t st = nnn_validate_bytes(buf, n, NULL, NULL, &d);\n"
	"\tfor (size_t i = 0; i < d.n; i++)\n"
	"\t\tprintf(\"%s\\n\", nnn_diag_format(&d.v[i], line, sizeof line));\n"
	"\tnnn_diags_free(&d);\n"
	"\treturn st == NNN_OK ? 0 : 1;\n"
	"}\n";

/* The manifest line of the case whose file name ends with `suffix`, copied
 * into buf; its file (relative to the corpus) into file. */
static void find_case(const char *manifest, const char *suffix, char *buf, size_t size, char *file, size_t fsize)
{
	char *m = t_slurp(manifest, NULL);
	cr_assert_not_null(m, "no manifest at %s", manifest);
	buf[0] = '\0';
	for (char *p = strstr(m, suffix); p; p = strstr(p + 1, suffix)) {
		if (p[strlen(suffix)] != '"')
			continue;
		char *start = p;
		while (start > m && start[-1] != '\n')
			start--;
		size_t n = strcspn(start, "\n");
		snprintf(buf, size, "%.*s", (int)(n < size ? n : size - 1), start);
		const char *q = strstr(buf, "\"file\": \"");
		cr_assert_not_null(q);
		q += 9;
		snprintf(file, fsize, "%.*s", (int)strcspn(q, "\""), q);
		break;
	}
	free(m);
	cr_assert(buf[0], "the corpus has no case *%s", suffix);
}

/* `tau > 0` on Leaky ReLU: the generated validator refuses tau == 0, as the
 * conformance corpus generated from the same schema expects. */
Test(gen, lang_range_min_open_core, .timeout = 240)
{
	static const char body[] =
		"push(find(s.records, \"leaky_relu\").rules,\n"
		"  { kind = \"range\", field = \"tau\", min = 0, min_open = true, doc = \"tau > 0.\" })";
	char line[2048], file[512];
	t_run_t r;

	t_require_root();
	t_copy_schema(tmp());
	write_bad("open.lua", body);
	r = generate(tpath("open.lua"), "o");
	cr_assert_eq(r.status, 0, "generation failed:\n%s", r.err);
	t_run_free(&r);
	build_against_codec("validate", VALIDATE_C, "o");
	r = sh(GEN_LUA " '%s' --conformance '%s/corpus'", tpath("open.lua"), tmp());
	cr_assert_eq(r.status, 0, "the corpus was not generated:\n%s", r.err);
	t_run_free(&r);

	/* The corpus holds tau == min as an E_RANGE case... */
	find_case(tpath("corpus/manifest.json"), "-range-tau-min.nnn", line, sizeof line, file, sizeof file);
	cr_expect(strstr(line, "\"code\": \"E_RANGE\"") != NULL, "%s", line);
	/* ...which the generated validator refuses, saying why. */
	r = sh("'%s/validate' '%s/corpus/%s'", tmp(), tmp(), file);
	cr_expect_eq(r.status, 1, "tau == 0 was accepted:\n%s", r.out);
	cr_expect(strstr(r.out, "activation.tau") != NULL && strstr(r.out, "found 0, expected > 0") != NULL, "%s",
	          r.out);
	t_run_free(&r);
	/* And the validator agrees with the reference on every case of the corpus. */
	cr_assert(access(nnnkit_bin(), X_OK) == 0, "%s is not built (run make)", nnnkit_bin());
	r = sh("'%s' conformance --no-progress --corpus '%s/corpus' --decoder '%s/validate {file}'", nnnkit_bin(), tmp(),
	       tmp());
	cr_expect_eq(r.status, 0, "the generated validator disagrees with the corpus:\n%s%s", r.out, r.err);
	t_run_free(&r);
}

/* An int field whose range allows one value ([0, 1) of an i32: layer.dropout
 * retyped to i32, the edit that stopped make with "two cases named
 * valid/int-layer-dropout-0.nnn"): the corpus holds that bound once. */
Test(gen, corpus_int_range_of_one_value)
{
	static const char body[] =
		"local layer = find(s.records, \"layer\")\n"
		"find(layer.fields, \"dropout\").type = \"i32\"\n"
		"for _, r in ipairs(layer.rules) do\n"
		"  if r.field == \"dropout\" then r.min, r.max, r.min_open, r.max_open = 0, 1, nil, true end\n"
		"end";
	t_run_t r;

	t_require_root();
	t_copy_schema(tmp());
	write_bad("one.lua", body);
	r = sh(GEN_LUA " '%s' --conformance '%s/corpus' && grep -c '\"file\": \"valid/int-layer-dropout-' "
	       "'%s/corpus/manifest.json'", tpath("one.lua"), tmp(), tmp());
	cr_expect_eq(r.status, 0, "the corpus was not generated:\n%s", r.err);
	cr_expect_str_eq(r.out, "1\n", "cases at dropout's one allowed value: %s", r.out);
	t_run_free(&r);
}

/* The same rule in a plugin's fragment: its generated validator calls the
 * host's rule_bounds (ABI 1.2). */
Test(gen, lang_range_min_open_plugin, .timeout = 240)
{
	char line[2048], file[512];
	const char *build = t_build_dir();
	t_run_t r;

	t_require_root();
	cr_assert(access(nnnkit_bin(), X_OK) == 0, "%s is not built (run make)", nnnkit_bin());
	r = sh("cp examples/plugin-pool-swish/schema.lua '%s/poolswish.lua'", tmp());
	cr_assert_eq(r.status, 0);
	t_run_free(&r);
	t_spit_str(tpath("frag.lua"),
	         "local f = import(\"poolswish.lua\")\n"
	         "for _, r in ipairs(f.records) do\n"
	         "  for _, fl in ipairs(r.fields) do\n"
	         "    if fl.type == \"f32\" then\n"
	         "      r.rules[#r.rules + 1] = { kind = \"range\", field = fl.name, min = 0, min_open = true, doc = \"> 0.\" }\n"
	         "    end\n"
	         "  end\n"
	         "end\n"
	         "return f\n");
	r = sh(GEN_LUA " --plugin '%s/frag.lua' --c '%s/ps_gen.c' --h '%s/poolswish_gen.h' && "
	       "cc -std=c11 -O1 -fPIC -shared -fvisibility=hidden -Iruntime/include -I'%s/gen' -I'%s' "
	       "-o '%s/poolswish.so' examples/plugin-pool-swish/poolswish.c '%s/ps_gen.c' -lm && "
	       GEN_LUA " schema/nnn.lua --conformance '%s/corpus' --plugin '%s/frag.lua'",
	       tmp(), tmp(), tmp(), build, tmp(), tmp(), tmp(), tmp(), tmp());
	cr_assert_eq(r.status, 0, "building the plugin or its corpus failed:\n%s%s", r.out, r.err);
	t_run_free(&r);
	{
		char *c = t_slurp(tpath("ps_gen.c"), NULL);
		cr_assert_not_null(c);
		cr_expect(strstr(c, "NNN_BOUND_MIN | NNN_BOUND_MIN_OPEN") != NULL, "no open bound in the plugin's code");
		free(c);
	}

	find_case(tpath("corpus/manifest.json"), "-range-beta-min.nnn", line, sizeof line, file, sizeof file);
	cr_expect(strstr(line, "\"code\": \"E_RANGE\"") != NULL, "%s", line);
	r = sh("'%s' --plugin '%s/poolswish.so' validate '%s/corpus/%s'", nnnkit_bin(), tmp(), tmp(), file);
	cr_expect_eq(r.status, 1, "beta == 0 was accepted:\n%s%s", r.out, r.err);
	cr_expect(strstr(r.err, "activation.beta") != NULL && strstr(r.err, "found 0, expected > 0") != NULL, "%s%s",
	          r.out, r.err);
	t_run_free(&r);
	r = sh("'%s' --plugin '%s/poolswish.so' conformance --no-progress --corpus '%s/corpus'", nnnkit_bin(), tmp(),
	       tmp());
	cr_expect_eq(r.status, 0, "nnnkit with the plugin disagrees with the corpus:\n%s%s", r.out, r.err);
	t_run_free(&r);
}

/* A fragment's keys are checked like a schema's. */
Test(gen, lang_fragment_keys)
{
	char line[1024];
	t_run_t r;

	t_require_root();
	t_spit_str(tpath("typo.lua"), "return { name = \"typo\", doc = \"A typo.\", layres = {} }\n");
	r = sh(GEN_LUA " --plugin '%s' --c '%s/t.c' --h '%s/t.h'", tpath("typo.lua"), tmp(), tmp());
	cr_expect_eq(r.status, 1, "a misspelt fragment key was accepted:\n%s", r.err);
	line_with_prefix(r.err, "schema error: ", line, sizeof line);
	cr_expect(strstr(line, "typo.lua: unknown key \"layres\"; did you mean \"layers\"?") != NULL, "%s", r.err);
	t_run_free(&r);
}
