/* test_compat.c: the schema lock (schema/nnn.lock) and the compatibility
 * check (gen/lock/compat.lua, `nnngen --check-compat OLD NEW`), as a black box.
 *
 * These tests shell out to lua5.4 (and cc) from the project root (make test
 * runs the tiers there). Each test works in its own mkdtemp directory
 * under /tmp, removed by the suite's fini even when an assertion fails.
 *
 *   compat/lock_up_to_date       schema/nnn.lock is what --lock writes for schema/nnn.lua
 *   compat/schema_matches_lock   the schema is compatible with its lock (either side a schema or a lock)
 *   compat/refuses_*             one test per refusal rule: exit 1 and the exact line
 *                                "<rule>: <element>: <what>; safe alternative: <what instead>"
 *   compat/generation_refuses_breaking_schema  nnngen's generation (make) with --compat LOCK:
 *                                check-compat's lines, nothing written
 *   compat/lists_every_violation every violation is listed, not only the first
 *   compat/allows_*              additions and doc-only changes: exit 0 and a summary line
 *   compat/usage_errors          exit 2, nothing compared
 *   compat/growing_walk          docs/growing-the-format.md done for real on a copy of the
 *                                schema: BatchNorm as layer ID 3, check, regenerate, compile;
 *                                files written before still decode and re-encode byte for
 *                                byte, and a BatchNorm file decodes too
 *   compat/refused_change_breaks_old_files  the control: a change check-compat refuses
 *                                (a field added to dense) does break those files
 *   compat/policy_*              the ID policy (schema `ids`): in the lock and the generated
 *                                header, a core value refused on a taken, third-party or
 *                                never ID, a taken record or a range kept; nnngen's
 *                                warnings; the guide's table. IDs come from the generated
 *                                header (NNN_*_TAKEN, *_CORE_MIN, ...), never from numbers
 *                                written here. (A malformed `ids` table and a malformed
 *                                renamed_from are schema errors: tests/gen/schema_errors.lua.)
 *   compat/refuses_*_name*       names are owned like IDs: a core value may not take a name a
 *                                recorded plugin gives its ID, nor a name (current or former)
 *                                the core gave another ID; a former name stays recorded
 *   compat/renames_*             renamed_from: a declared rename passes and is flagged, one
 *                                that is not declared is refused with the hint to declare it
 *   compat/layout_*              the struct layouts plugins see (gen/lock/layout.lua): the lock's
 *                                fingerprints are FNV-1a of its struct lines and the header's
 *                                NNN_SCHEMA_LAYOUT; --check-layout refuses a schema whose
 *                                structs moved until --lock appends the new layout
 *
 * New IDs, the "next free" numbers in messages and the IDs of the walk's
 * BatchNorm come from the schema (tests/lib/schemaq.h): a compatible growth of
 * schema/nnn.lua leaves these tests as they are.
 */
#define _XOPEN_SOURCE 700
#include <glob.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include <nnn/model.h>

#include "builder.h"
#include "blackbox.h"
#include "schemaq.h"
#include "shell.h"
#include "tmpdir.h"

#define GEN_LUA "lua5.4 gen/nnngen.lua"
#define LOCK "schema/nnn.lock"

/* ---- temp dir per test ---- */

#define TMP "nnn-compat-"

static const char *tmp(void)
{
	return t_tmpdir(TMP);
}

TestSuite(compat, .fini = t_tmpdir_remove);

/* A shell command run with its output captured in the temp dir. */
#define sh(...) t_run_in(tmp(), __VA_ARGS__)

/* ---- helpers ---- */

static const char *tpath(const char *name)
{
	return t_tmppath(TMP, name);
}

/* Whether `text` holds `line` as one whole line. */
static int has_line(const char *text, const char *line)
{
	size_t n = strlen(line);
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (!strncmp(p, line, n) && (p[n] == '\n' || p[n] == '\0'))
			return 1;
	}
	return 0;
}

static size_t count_lines(const char *text)
{
	size_t n = 0;
	for (const char *p = text; *p; p++)
		n += *p == '\n';
	return n;
}


/* Every modified schema starts from nnn.lua; `find` and `push` are shorthands
 * (the sandbox also offers table.insert, table.remove and the rest).
 * tests/gen/schema_errors.lua starts the schema errors it took from here
 * from the same text. */
static const char PROLOGUE[] =
	"local s = import(\"nnn.lua\")\n"
	"local function find(list, name)\n"
	"  for i = 1, #list do if list[i].name == name then return list[i], i end end\n"
	"  error(\"test schema: no entry \" .. name)\n"
	"end\n"
	"local function push(list, e) list[#list + 1] = e end\n";

/* Writes <tmp>/<name>.lua: nnn.lua modified by `body`; returns its path. */
static const char *write_schema(const char *name, const char *body)
{
	char file[64], text[8192];
	int n;

	t_copy_schema(tmp());
	snprintf(file, sizeof file, "%s.lua", name);
	n = snprintf(text, sizeof text, "%s%s\nreturn s\n", PROLOGUE, body);
	cr_assert(n > 0 && (size_t)n < sizeof text, "schema body too long");
	t_spit_str(tpath(file), text);
	return tpath(file);
}

static t_run_t check_compat(const char *old, const char *new)
{
	return sh(GEN_LUA " --check-compat '%s' '%s'", old, new);
}

/* Expects exit 1 with exactly the violations `want` (NULL-terminated), each
 * one whole line of stderr, then the summary line naming their number. */
static void expect_violations(const char *old, const char *new, const char *const *want)
{
	char summary[64];
	size_t n = 0;
	t_run_t r = check_compat(old, new);

	while (want[n])
		n++;
	cr_assert_eq(r.status, 1, "check-compat %s %s: expected exit 1, got %d\nstdout:\n%s\nstderr:\n%s", old, new,
	             r.status, r.out, r.err);
	cr_expect(strstr(r.err, "traceback") == NULL, "check-compat crashed:\n%s", r.err);
	for (size_t i = 0; want[i]; i++)
		cr_expect(has_line(r.err, want[i]), "missing line:\n%s\nstderr:\n%s", want[i], r.err);
	cr_expect_eq(count_lines(r.err), n + 1, "expected %zu violations and a summary, stderr:\n%s", n, r.err);
	snprintf(summary, sizeof summary, ": %zu incompatible change%s: ", n, n == 1 ? "" : "s");
	cr_expect(strstr(r.err, summary) != NULL, "no summary with '%s':\n%s", summary, r.err);
	cr_expect_str_empty(r.out, "stdout should be empty:\n%s", r.out);
	t_run_free(&r);
}

/* make's generation step (nnngen SCHEMA ... --compat LOCK; the corpus too
 * when `corpus`) on a schema check-compat refuses: the same lines as
 * check-compat's, then one saying nothing was generated, and no file
 * written into <tmp>/<name>-out. */
static void expect_generation_refused_by(const char *name, const char *schema, int corpus)
{
	const char *o = tpath(t_fmt("%s-out", name)), *tail;
	t_run_t want = check_compat(LOCK, schema), r;

	cr_assert_eq(want.status, 1, "check-compat accepted %s:\n%s%s", name, want.out, want.err);
	tail = t_fmt("nnngen: %s: nothing generated: it breaks files written under " LOCK " (the lines above; make "
	             "check-compat says the same)\n", schema);
	for (int conf = 0; conf <= corpus; conf++) {
		r = sh("mkdir -p '%s/nnn' && " GEN_LUA " '%s' %s --compat " LOCK, o, schema,
		       conf ? t_fmt("--conformance '%s/corpus'", o)
		            : t_fmt("--c '%s/x.c' --h '%s/nnn/x.h' --doc '%s/f.md' --layouts " LOCK, o, o, o));
		cr_expect_eq(r.status, 1, "%s (%s): expected exit 1, got %d\n%s", name, conf ? "corpus" : "codec", r.status,
		             r.err);
		cr_expect(!strcmp(r.err, t_fmt("%s%s", want.err, tail)),
		          "%s: not check-compat's lines, then the generator's:\nwant:\n%s%s\ngot:\n%s", name, want.err, tail,
		          r.err);
		t_run_free(&r);
	}
	r = sh("find '%s' -type f", o);
	cr_expect_str_empty(r.out, "%s: files were written from a schema check-compat refuses:\n%s", name, r.out);
	t_run_free(&r);
	t_run_free(&want);
}

/* nnn.lua modified by `body` against the lock, and against nnn.lua itself:
 * the same violations either way; and make's generation step refuses it
 * with the same lines (every rule check-compat knows stops make). */
static void expect_refused(const char *name, const char *body, const char *const *want)
{
	const char *schema;

	t_require_root();
	schema = write_schema(name, body);
	expect_violations(LOCK, schema, want);
	expect_violations("schema/nnn.lua", schema, want);
	expect_generation_refused_by(name, schema, 0);
}

#define REFUSES(name, body, ...) expect_refused(name, body, (const char *const[]){ __VA_ARGS__, NULL })

/* Writes <tmp>/<name>.lock: the lock of schema/nnn.lua with the first `from`
 * replaced by `to` (a lock written under some other, older schema). */
static const char *edited_lock(const char *name, const char *from, const char *to)
{
	char file[64];
	t_run_t r;
	char *text, *at, *out;
	size_t n;

	snprintf(file, sizeof file, "%s.lock", name);
	r = sh(GEN_LUA " --lock schema/nnn.lua --out '%s'", tpath(file));
	cr_assert_eq(r.status, 0, "--lock failed (status %d):\n%s", r.status, r.err);
	t_run_free(&r);
	text = t_slurp(tpath(file), &n);
	cr_assert_not_null(text);
	at = strstr(text, from);
	cr_assert_not_null(at, "the lock has no '%s'", from);
	out = malloc(n + strlen(to) + 1);
	cr_assert_not_null(out);
	memcpy(out, text, (size_t)(at - text));
	strcpy(out + (at - text), to);
	strcat(out, at + strlen(from));
	t_spit_str(tpath(file), out);
	free(out);
	free(text);
	return tpath(file);
}

/* An older lock (`from` -> `to`) against today's schema. */
static void expect_refused_since(const char *name, const char *from, const char *to, const char *const *want)
{
	t_require_root();
	expect_violations(edited_lock(name, from, to), "schema/nnn.lua", want);
}

#define REFUSES_SINCE(name, from, to, ...) \
	expect_refused_since(name, from, to, (const char *const[]){ __VA_ARGS__, NULL })

/* Expects exit 0 and a stdout summary ending in `tail`. */
static void expect_compatible(const char *old, const char *new, const char *tail)
{
	t_run_t r = check_compat(old, new);
	size_t no = strlen(r.out), nt = strlen(tail);
	cr_assert_eq(r.status, 0, "check-compat %s %s: expected exit 0, got %d\nstdout:\n%s\nstderr:\n%s", old, new,
	             r.status, r.out, r.err);
	cr_expect_eq(count_lines(r.out), 1, "expected one summary line:\n%s", r.out);
	cr_expect(!strncmp(r.out, "check-compat: ", 14), "summary does not start with check-compat:\n%s", r.out);
	cr_expect(no > nt && !strcmp(r.out + no - nt, tail), "summary does not end in\n%s\n%s", tail, r.out);
	cr_expect_str_empty(r.err, "stderr should be empty:\n%s", r.err);
	t_run_free(&r);
}

#define SAME ": compatible, no additions (same IDs and layouts)\n"


/* ---- the ID policy, as the generated header states it ---- */

typedef struct taken {
	int id;
	const char *by, *name;
} taken_t;

#define TAKEN_ENTRY_(i, b, n) { i, b, n },
static const taken_t taken_layer[] = { NNN_LAYER_ID_TAKEN(TAKEN_ENTRY_){ -1, NULL, NULL } };
static const taken_t taken_act[] = { NNN_ACTIVATION_ID_TAKEN(TAKEN_ENTRY_){ -1, NULL, NULL } };

/* One enum open to plugins: its name, its values' names, its taken list and ranges. */
typedef struct policy {
	const char *enum_name, *word; /* "activation_id", "activation ID" */
	const char *(*name)(int64_t);
	nnn_id_range_t (*range)(int64_t);
	const char *(*taken_by)(int64_t);
	const taken_t *taken;
	int core_min, core_max, tp_min, tp_max, never_min, never_max; /* never: -1 when none */
	int next; /* the generator's NNN_*_NEXT_CORE */
} policy_t;

#ifndef NNN_LAYER_ID_NEVER_MIN
#define NNN_LAYER_ID_NEVER_MIN (-1)
#define NNN_LAYER_ID_NEVER_MAX (-1)
#endif
#ifndef NNN_ACTIVATION_ID_NEVER_MIN
#define NNN_ACTIVATION_ID_NEVER_MIN (-1)
#define NNN_ACTIVATION_ID_NEVER_MAX (-1)
#endif

static const policy_t POLICIES[] = {
	{ "layer_id", "layer ID", nnn_layer_id_name, nnn_layer_id_range, nnn_layer_id_taken_by, taken_layer,
	  NNN_LAYER_ID_CORE_MIN, NNN_LAYER_ID_CORE_MAX, NNN_LAYER_ID_THIRD_PARTY_MIN, NNN_LAYER_ID_THIRD_PARTY_MAX,
	  NNN_LAYER_ID_NEVER_MIN, NNN_LAYER_ID_NEVER_MAX, NNN_LAYER_ID_NEXT_CORE },
	{ "activation_id", "activation ID", nnn_activation_id_name, nnn_activation_id_range, nnn_activation_id_taken_by,
	  taken_act, NNN_ACTIVATION_ID_CORE_MIN, NNN_ACTIVATION_ID_CORE_MAX, NNN_ACTIVATION_ID_THIRD_PARTY_MIN,
	  NNN_ACTIVATION_ID_THIRD_PARTY_MAX, NNN_ACTIVATION_ID_NEVER_MIN, NNN_ACTIVATION_ID_NEVER_MAX,
	  NNN_ACTIVATION_ID_NEXT_CORE },
};
#define NPOLICIES (sizeof POLICIES / sizeof POLICIES[0])

/* "2" or "128..254", as messages write a range. */
static const char *range_text(int lo, int hi)
{
	return lo == hi ? t_fmt("%d", lo) : t_fmt("%d..%d", lo, hi);
}
#define LAYERS (&POLICIES[0])
#define ACTS (&POLICIES[1])

static const taken_t *taken_at(const policy_t *p, int id)
{
	for (const taken_t *t = p->taken; t->by; t++)
		if (t->id == id)
			return t;
	return NULL;
}

/* The lowest core ID the schema neither defines nor records as taken,
 * counted here from the enum's names and the taken list; -1 if none. */
static int next_core_but(const policy_t *p, int but)
{
	for (int id = p->core_min; id <= p->core_max; id++)
		if (!p->name(id) && !taken_at(p, id) && id != but)
			return id;
	return -1;
}

static int next_core(const policy_t *p)
{
	return next_core_but(p, -1);
}

/* ---- 1. the lock ---- */

Test(compat, lock_up_to_date)
{
	char *want, *a, *b;
	size_t nw, na, nb;
	t_run_t r;

	t_require_root();
	r = sh(GEN_LUA " --lock schema/nnn.lua --layouts " LOCK " --out '%s' && " GEN_LUA
	       " --lock schema/nnn.lua --layouts " LOCK " --out '%s'", tpath("a.lock"), tpath("b.lock"));
	cr_assert_eq(r.status, 0, "--lock failed (status %d):\n%s", r.status, r.err);
	t_run_free(&r);
	want = t_slurp(LOCK, &nw);
	a = t_slurp(tpath("a.lock"), &na);
	b = t_slurp(tpath("b.lock"), &nb);
	cr_assert_not_null(want, LOCK " is missing: run make lock");
	cr_assert_not_null(a);
	cr_assert_not_null(b);
	cr_expect(na == nb && !memcmp(a, b, na), "two --lock runs differ");
	cr_expect(nw == na && !memcmp(want, a, na),
	          LOCK " is out of date: the schema gained IDs or records since it was written.\n"
	          "Check with make check-compat, then run make lock and commit " LOCK ".");
	/* Plain data, one line per element, in schema order. */
	cr_expect(has_line(a, "      { value = 4, name = \"leaky_relu\", record = \"leaky_relu\" },"), "%s", a);
	cr_expect(has_line(a, "      { name = \"layers\", type = \"layer\", count = \"layer_count\" },"), "%s", a);
	cr_expect(has_line(a, "      { name = \"body\", type = \"variant\", tag = \"id\" },"), "%s", a);
	cr_expect(has_line(a, "    { name = \"u64\", kind = \"uint\", width = 8, encoding = \"unsigned, little-endian\" },"),
	          "%s", a);
	cr_expect(strstr(a, "{ name = \"layer_id\", type = \"u8\", values = {") != NULL, "%s", a);
	free(want);
	free(a);
	free(b);

	/* Without --out the lock goes to stdout. */
	r = sh(GEN_LUA " --lock schema/nnn.lua --layouts " LOCK);
	cr_expect_eq(r.status, 0);
	want = t_slurp(LOCK, &nw);
	cr_expect(want && !strcmp(r.out, want), "--lock without --out does not print the lock");
	free(want);
	t_run_free(&r);
}

Test(compat, schema_matches_lock)
{
	t_require_root();
	expect_compatible(LOCK, "schema/nnn.lua", SAME);
	expect_compatible("schema/nnn.lua", LOCK, SAME);
	expect_compatible("schema/nnn.lua", "schema/nnn.lua", SAME);
	expect_compatible(LOCK, LOCK, SAME);
}

/* ---- 2. one test per refusal rule ---- */

Test(compat, refuses_field_added)
{
	REFUSES("field_added",
	        "push(find(s.records, \"dense\").fields, { name = \"scale\", type = \"f32\", doc = \"A scale.\" })",
	        "field added: records \"dense\".fields[4] \"scale\": new f32 field: files written before have no bytes "
	        "for it; safe alternative: allocate a new layer ID with its own record instead of adding a field to "
	        "dense");
	/* In an activation's parameters the alternative is a new activation ID. */
	REFUSES("param_added",
	        "table.insert(find(s.records, \"leaky_relu\").fields, 1,\n"
	        "  { name = \"alpha\", type = \"f32\", doc = \"Another slope.\" })",
	        "field added: records \"leaky_relu\".fields[1] \"alpha\": new f32 field: files written before have no "
	        "bytes for it; safe alternative: allocate a new activation ID with its own record instead of adding a "
	        "field to leaky_relu");
}

Test(compat, refuses_field_removed)
{
	REFUSES("field_removed", "table.remove(find(s.records, \"tensor\").fields, 2)",
	        "field removed: records \"tensor\".fields[2] \"requires_grad\": removed (bool): files written before "
	        "still hold its bytes; safe alternative: leave tensor as it is (files written before hold it) and put "
	        "new data in a new record selected by a new layer ID or activation ID");
}

Test(compat, refuses_field_reordered)
{
	REFUSES("field_reordered",
	        "local f = find(s.records, \"conv\").fields\n"
	        "f[3], f[4] = f[4], f[3]",
	        "field reordered: records \"conv\".fields[4] \"padding_type\": moved (old order: filters, kernels, "
	        "padding_type, padding_dims): files written before hold the fields in that order; safe alternative: "
	        "allocate a new layer ID with its own record instead of reordering the fields of conv");
}

Test(compat, refuses_field_retyped)
{
	/* The type, the count field, a const value and the param flag. */
	REFUSES("field_retyped",
	        "find(find(s.records, \"layer\").fields, \"dropout\").type = \"i32\"\n"
	        "find(find(s.records, \"layer\").fields, \"bias\").param = nil\n"
	        "find(find(s.records, \"model\").fields, \"magic\").const = 776883791\n"
	        "find(find(s.records, \"model\").fields, \"layers\").count = \"magic\"",
	        "field retyped: records \"layer\".fields[3] \"dropout\": type f32 -> i32: files written before hold f32 "
	        "bytes here; safe alternative: leave layer as it is (files written before hold it) and put new data in "
	        "a new record selected by a new layer ID or activation ID",
	        "field retyped: records \"layer\".fields[4] \"bias\": param true -> false: param_count of files "
	        "written before counts it; safe alternative: leave layer as it is (files written before hold it) and "
	        "put new data in a new record selected by a new layer ID or activation ID",
	        "field retyped: records \"model\".fields[1] \"magic\": const 776883790 -> 776883791: files written "
	        "before hold 776883790 here; safe alternative: leave model as it is (files written before hold it) and "
	        "put new data in a new record selected by a new layer ID or activation ID",
	        "field retyped: records \"model\".fields[5] \"layers\": count field layer_count -> magic: files "
	        "written before give the number of elements in layer_count; safe alternative: leave model as it is "
	        "(files written before hold it) and put new data in a new record selected by a new layer ID or "
	        "activation ID");
	/* (Its rules and io need an int: they go too, to reach the compat check.) */
	REFUSES("field_retyped_dense",
	        "local dense = find(s.records, \"dense\")\n"
	        "dense.rules, dense.io = nil, nil\n"
	        "find(dense.fields, \"neurons\").type = \"f32\"",
	        "field retyped: records \"dense\".fields[1] \"neurons\": type i32 -> f32: files written before hold "
	        "i32 bytes here; safe alternative: allocate a new layer ID with its own record instead of changing a "
	        "field of dense");
	/* A variant tag: the only enum field of a record is its tag today, so
	 * this one compares a lock written when the tag had another name. */
	REFUSES_SINCE("tag", "{ name = \"body\", type = \"variant\", tag = \"id\" }",
	              "{ name = \"body\", type = \"variant\", tag = \"kind\" }",
	              "field retyped: records \"layer\".fields[5] \"body\": variant tag kind -> id: files written "
	              "before select these fields by kind; safe alternative: leave layer as it is (files written "
	              "before hold it) and put new data in a new record selected by a new layer ID or activation ID");
}

/* The retype that crashed the corpus generator before, and Conv's two
 * fields swapped, which make built without a word: make's generation step,
 * codec and corpus, refuses both with check-compat's lines. */
Test(compat, generation_refuses_breaking_schema)
{
	t_run_t r;

	t_require_root();
	expect_generation_refused_by("retype",
	                             write_schema("retype",
	                                          "find(find(s.records, \"layer\").fields, \"dropout\").type = \"i32\""),
	                             1);
	expect_generation_refused_by(
		"swap", write_schema("swap", "local f = find(s.records, \"conv\").fields\nf[3], f[4] = f[4], f[3]"), 1);
	/* A compatible schema generates as before, without a word. */
	r = sh("mkdir -p '%s/ok/nnn' && " GEN_LUA " schema/nnn.lua --c '%s/ok/x.c' --h '%s/ok/nnn/x.h' --layouts " LOCK
	       " --compat " LOCK " && test -s '%s/ok/x.c'", tmp(), tmp(), tmp(), tmp());
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect_str_empty(r.err, "%s", r.err);
	t_run_free(&r);
}

Test(compat, refuses_id_removed)
{
	REFUSES("id_removed", "table.remove(find(s.enums, \"activation_id\").values, 6)",
	        "ID removed: enums \"activation_id\" value 5 \"softmax\": no longer defined, but files written before "
	        "may use it; safe alternative: keep value 5 \"softmax\" in activation_id (its doc can say it is "
	        "deprecated)");
}

Test(compat, refuses_id_renumbered)
{
	/* softmax moves to the next free core number; the next free one is then another. */
	long long to = sq_int("next_free(\"activation_id\")");
	REFUSES("id_renumbered", t_fmt("find(find(s.enums, \"activation_id\").values, \"softmax\").value = %lld", to),
	        t_fmt("ID renumbered: enums \"activation_id\" value 5 \"softmax\": \"softmax\" is now %lld; safe alternative: "
	          "keep softmax = 5 (files written before store the number); a new activation ID takes an unused number "
	          "(next free: %d)",
	          to, next_core_but(ACTS, (int)to)));
	/* Two layer IDs swapped: both renumbered, both numbers reused. */
	REFUSES("id_swapped",
	        "local v = find(s.enums, \"layer_id\").values\n"
	        "v[1].value, v[2].value = 1, 0",
	        t_fmt("ID renumbered: enums \"layer_id\" value 0 \"dense\": \"dense\" is now 1; safe alternative: keep "
	          "dense = 0 (files written before store the number); a new layer ID takes an unused number (next free: "
	          "%d)",
	          next_core(LAYERS)),
	        t_fmt("ID reused: enums \"layer_id\" value 0 \"dense\": 0 is now \"conv\"; safe alternative: keep 0 meaning "
	          "dense; give conv an unused number (next free: %d)",
	          next_core(LAYERS)),
	        t_fmt("ID renumbered: enums \"layer_id\" value 1 \"conv\": \"conv\" is now 0; safe alternative: keep conv "
	          "= 1 (files written before store the number); a new layer ID takes an unused number (next free: %d)",
	          next_core(LAYERS)),
	        t_fmt("ID reused: enums \"layer_id\" value 1 \"conv\": 1 is now \"dense\"; safe alternative: keep 1 meaning "
	          "conv; give dense an unused number (next free: %d)",
	          next_core(LAYERS)));
}

Test(compat, refuses_id_reused)
{
	/* Same number, another name. */
	REFUSES("id_reused_name",
	        "local v = find(find(s.enums, \"activation_id\").values, \"softmax\")\n"
	        "v.name, v.title, v.doc = \"hardswish\", \"Hard Swish\", \"x * relu6(x + 3) / 6.\"",
	        t_fmt("ID reused: enums \"activation_id\" value 5 \"softmax\": 5 is now \"hardswish\"; safe alternative: keep "
	          "5 meaning softmax; give hardswish an unused number (next free: %d); if \"hardswish\" is \"softmax\" renamed, say "
	          "so with renamed_from = \"softmax\" on it (files stay readable; JSON written before uses the old name)",
	          next_core(ACTS)));
	/* Same number and name, another selected record. */
	REFUSES("id_reused_record",
	        "local _, at = find(s.records, \"activation\")\n"
	        "table.insert(s.records, at, { name = \"relu_params\", doc = \"Parameters of ReLU.\",\n"
	        "  section = \"activation_params\",\n"
	        "  fields = { { name = \"cap\", type = \"f32\", doc = \"Upper bound.\" } } })\n"
	        "find(find(s.enums, \"activation_id\").values, \"relu\").record = \"relu_params\"",
	        t_fmt("ID reused: enums \"activation_id\" value 3 \"relu\": 3 now selects record \"relu_params\" (was no "
	          "record); safe alternative: keep 3 selecting no record; a new activation ID (next free: %d) can select "
	          "record \"relu_params\"",
	          next_core(ACTS)));
}

Test(compat, refuses_enum_storage_changed)
{
	REFUSES("enum_storage", "find(s.enums, \"layer_id\").type = \"i32\"",
	        "enum storage type changed: enums \"layer_id\": stored as u8 -> i32; safe alternative: keep layer_id "
	        "stored as u8, as in files written before; new values must fit in a u8");
}

Test(compat, refuses_enum_removed)
{
	/* The checker keeps a schema from dropping an enum a field uses; a lock
	 * written when an enum still existed catches an unused one's removal. */
	REFUSES_SINCE("enum_removed", "  },\n  records = {\n",
	              "    { name = \"dtype\", type = \"u8\", values = {\n"
	              "      { value = 0, name = \"float32\" },\n"
	              "    } },\n"
	              "  },\n"
	              "  records = {\n",
	              "enum removed: enums \"dtype\": no longer defined, but files written before store its values; safe "
	              "alternative: keep enum dtype with all its values");
}

Test(compat, refuses_record_removed)
{
	/* Leaky ReLU loses its record: the ID now means something else, and the
	 * record files hold is gone. */
	REFUSES("record_removed",
	        "local _, at = find(s.records, \"leaky_relu\")\n"
	        "table.remove(s.records, at)\n"
	        "find(find(s.enums, \"activation_id\").values, \"leaky_relu\").record = nil",
	        t_fmt("ID reused: enums \"activation_id\" value 4 \"leaky_relu\": 4 now selects no record (was record "
	          "\"leaky_relu\"); safe alternative: keep 4 selecting record \"leaky_relu\"; a new activation ID (next "
	          "free: %d) can have no record",
	          next_core(ACTS)),
	        "record removed: records \"leaky_relu\": no longer defined, but files written before hold it; safe "
	        "alternative: keep record leaky_relu with its fields as they are");
}

/* The checker accepts only the primitives the runtime reads, so these
 * compare locks written when a primitive was laid out otherwise. */
Test(compat, refuses_primitive_width_changed)
{
	REFUSES_SINCE("prim_width", "name = \"u64\", kind = \"uint\", width = 8,",
	              "name = \"u64\", kind = \"uint\", width = 4,",
	              "primitive width changed: primitives \"u64\": width 4 -> 8 bytes; safe alternative: keep u64 as it "
	              "is and add a primitive with a new name (and its reader and writer in runtime/codec) for new "
	              "records");
}

Test(compat, refuses_primitive_kind_changed)
{
	REFUSES_SINCE("prim_kind", "name = \"i32\", kind = \"int\",", "name = \"i32\", kind = \"uint\",",
	              "primitive kind changed: primitives \"i32\": kind uint -> int; safe alternative: keep i32 as it "
	              "is and add a primitive with a new name (and its reader and writer in runtime/codec) for new "
	              "records");
}

Test(compat, refuses_primitive_encoding_changed)
{
	REFUSES_SINCE("prim_encoding", "encoding = \"i32 byte count, then UTF-8 bytes\"",
	              "encoding = \"u64 byte count, then UTF-8 bytes\"",
	              "primitive encoding changed: primitives \"string\": encoding \"u64 byte count, then UTF-8 "
	              "bytes\" -> \"i32 byte count, then UTF-8 bytes\"; safe alternative: keep string as it is and add "
	              "a primitive with a new name (and its reader and writer in runtime/codec) for new records");
}

Test(compat, refuses_primitive_removed)
{
	REFUSES_SINCE("prim_removed", "  },\n  enums = {\n",
	              "    { name = \"f64\", kind = \"float\", width = 8, encoding = \"IEEE 754 binary64\" },\n"
	              "  },\n"
	              "  enums = {\n",
	              "primitive removed: primitives \"f64\": no longer defined, but fields of files written before may "
	              "store it; safe alternative: keep primitive f64 as it is (new records need not use it)");
}

Test(compat, lists_every_violation)
{
	const char *body = t_fmt("local dense = find(s.records, \"dense\")\n"
	                       "push(dense.fields, { name = \"scale\", type = \"f32\", doc = \"A scale.\" })\n"
	                       "table.remove(find(s.records, \"tensor\").fields, 2)\n"
	                       "local acts = find(s.enums, \"activation_id\").values\n"
	                       "find(acts, \"softmax\").value = %lld\n"
	                       "find(acts, \"relu\").name = \"hardswish\"\n"
	                       "table.remove(acts, 3)\n"
	                       "find(s.enums, \"layer_id\").type = \"i32\"\n"
	                       "find(find(s.records, \"layer\").fields, \"dropout\").type = \"i32\"\n",
	                       sq_int("next_free(\"activation_id\")")); /* not onto a plugin's ID: one break each */
	t_run_t r;

	t_require_root();
	r = check_compat(LOCK, write_schema("many", body));
	cr_assert_eq(r.status, 1, "expected exit 1, got %d:\n%s", r.status, r.err);
	/* In schema order: enums, then records; one line each, then the summary. */
	cr_expect_eq(count_lines(r.err), 8, "stderr:\n%s", r.err);
	{
		static const char *const starts[] = {
			"enum storage type changed: enums \"layer_id\": ",
			"ID removed: enums \"activation_id\" value 2 \"tanh\": ",
			"ID reused: enums \"activation_id\" value 3 \"relu\": ",
			"ID renumbered: enums \"activation_id\" value 5 \"softmax\": ",
			"field removed: records \"tensor\".fields[2] \"requires_grad\": ",
			"field added: records \"dense\".fields[4] \"scale\": ",
			"field retyped: records \"layer\".fields[3] \"dropout\": ",
			"check-compat: " LOCK " -> ",
		};
		const char *p = r.err;
		for (size_t i = 0; i < sizeof starts / sizeof starts[0]; i++) {
			cr_expect(!strncmp(p, starts[i], strlen(starts[i])), "line %zu should start with %s\nstderr:\n%s",
			          i + 1, starts[i], r.err);
			p = strchr(p, '\n');
			cr_assert_not_null(p);
			p++;
		}
	}
	cr_expect(strstr(r.err, ": 7 incompatible changes: files written under " LOCK " would break") != NULL, "%s",
	          r.err);
	t_run_free(&r);
}

/* ---- 3. what is allowed ---- */

Test(compat, allows_new_activation_with_record)
{
	/* At the next free numbers; a padding type of a name no schema would take. (Not
	 * "swish": examples/plugin-pool-swish holds that name.) */
	long long act = sq_int("next_free(\"activation_id\")"), pad = sq_int("next_free(\"padding_type\")");
	const char *body =
		t_fmt("local acts = find(s.enums, \"activation_id\").values\n"
		    "push(acts, { value = %lld, name = \"swish_beta\", title = \"Swish\", record = \"swish_beta\",\n"
		    "  doc = \"y = x * sigmoid(beta * x).\" })\n"
		    "local _, at = find(s.records, \"activation\")\n"
		    "table.insert(s.records, at, { name = \"swish_beta\", doc = \"Parameters of Swish.\",\n"
		    "  section = \"activation_params\",\n"
		    "  fields = { { name = \"beta\", type = \"f32\", doc = \"Scale inside the sigmoid.\" } },\n"
		    "  rules = { { kind = \"finite\", field = \"beta\", doc = \"beta is finite.\" } } })\n"
		    "push(find(s.enums, \"padding_type\").values, { value = %lld, name = \"test_pad\", title = \"Test\",\n"
		    "  pad_before = \"k - 1\", pad_after = \"k - 1\", doc = \"Full padding.\" })\n",
		    act, pad);
	const char *added = t_fmt(": compatible, 3 additions: enums \"activation_id\" value %lld \"swish_beta\", enums "
	                        "\"padding_type\" value %lld \"test_pad\", records \"swish_beta\"\n",
	                        act, pad);
	const char *schema;

	t_require_root();
	schema = write_schema("swish_beta", body);
	expect_compatible(LOCK, schema, added);
	expect_compatible("schema/nnn.lua", schema, added);
	/* Going back would remove them. */
	{
		t_run_t r = check_compat(schema, LOCK);
		cr_expect_eq(r.status, 1, "removing swish_beta again should be refused:\n%s%s", r.out, r.err);
		cr_expect(strstr(r.err, t_fmt("ID removed: enums \"activation_id\" value %lld \"swish_beta\"", act)) != NULL,
		          "%s", r.err);
		cr_expect(strstr(r.err, "record removed: records \"swish_beta\"") != NULL, "%s", r.err);
		t_run_free(&r);
	}
}

Test(compat, allows_doc_changes)
{
	static const char body[] =
		"s.doc = \"Another description of the format.\"\n"
		"find(s.records, \"dense\").doc = \"Reworded.\"\n"
		"find(find(s.records, \"dense\").fields, \"neurons\").doc = \"How many outputs.\"\n"
		"find(find(s.enums, \"activation_id\").values, \"relu\").title = \"Rectifier\"\n"
		"find(find(s.enums, \"activation_id\").values, \"relu\").doc = \"y = max(0, x).\"\n"
		"find(s.records, \"leaky_relu\").rules[1].doc = \"tau is neither infinite nor NaN.\"\n"
		"find(s.sections, \"tensor\").doc = \"Shape, flag, data.\"\n";

	t_require_root();
	expect_compatible(LOCK, write_schema("docs", body), SAME);
}

Test(compat, usage_errors)
{
	static const char *const cmds[] = {
		GEN_LUA " --check-compat",
		GEN_LUA " --check-compat " LOCK,
		GEN_LUA " --check-compat " LOCK " schema/nnn.lua schema/nnn.lua",
		GEN_LUA " --check-compat " LOCK " schema/nnn.lua --frobnicate",
		GEN_LUA " --check-compat " LOCK " schema/nnn.lua --out x.lock",
		GEN_LUA " --check-compat " LOCK " schema/no-such-file.lua",
		GEN_LUA " --lock",
		GEN_LUA " --lock schema/nnn.lua --check-compat " LOCK,
		GEN_LUA " --lock schema/nnn.lua --layouts",
		GEN_LUA " --lock schema/nnn.lua --layouts schema/no-such-file.lock",
		GEN_LUA " --check-compat " LOCK " schema/nnn.lua --layouts " LOCK,
		GEN_LUA " --check-layout " LOCK,
		GEN_LUA " --check-layout " LOCK " schema/nnn.lua --out x.lock",
		GEN_LUA " --check-layout " LOCK " schema/no-such-file.lua",
		GEN_LUA " --check-layout schema/no-such-file.lock schema/nnn.lua",
		GEN_LUA " --check-layout " LOCK " schema/nnn.lua --check-compat",
	};
	t_run_t r;

	t_require_root();
	for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
		r = sh("%s", cmds[i]);
		cr_expect_eq(r.status, 2, "%s: expected exit 2, got %d\n%s%s", cmds[i], r.status, r.out, r.err);
		cr_expect(!strncmp(r.err, "nnngen: ", 8), "%s: stderr should start with nnngen:\n%s", cmds[i], r.err);
		cr_expect(strstr(r.err, "traceback") == NULL, "%s crashed:\n%s", cmds[i], r.err);
		t_run_free(&r);
	}

	/* Inputs that cannot be compared: a malformed lock, a schema with an error. */
	t_spit_str(tpath("bad.lock"), "return { lock = 1, schema = \"nnn\", primitives = {}, enums = {}, records = 7 }\n");
	r = check_compat(tpath("bad.lock"), "schema/nnn.lua");
	cr_expect_eq(r.status, 2, "malformed lock: expected exit 2, got %d\n%s", r.status, r.err);
	cr_expect(strstr(r.err, "lock error: ") != NULL && strstr(r.err, "records must be a list") != NULL, "%s", r.err);
	t_run_free(&r);
	r = check_compat(LOCK, write_schema("broken", "find(s.records, \"dense\").fields[1].type = \"int\""));
	cr_expect_eq(r.status, 2, "schema error: expected exit 2, got %d\n%s", r.status, r.err);
	cr_expect(strstr(r.err, "schema error: ") != NULL && strstr(r.err, "unknown type \"int\"") != NULL, "%s",
	          r.err);
	t_run_free(&r);
}

/* ---- 4. docs/growing-the-format.md, done for real ---- */

/* The schema change of the walk-through: BatchNorm with its own record (the
 * Lua the guide shows, applied to a copy of nnn.lua), at the next free layer
 * ID, which the example plugin's IDs do not count as free (a printf format:
 * %lld is the ID; ID 3 when the guide was written). */
#define BATCHNORM \
	"local layer_ids = find(s.enums, \"layer_id\").values\n" \
	"push(layer_ids, { value = %lld, name = \"batch_norm\", title = \"BatchNorm\", record = \"batch_norm\",\n" \
	"  doc = \"Batch normalization with running statistics: y = (x - mean) / sqrt(variance + epsilon) + bias.\" })\n" \
	"local _, at = find(s.records, \"layer\")\n" \
	"table.insert(s.records, at, {\n" \
	"  name = \"batch_norm\", doc = \"Type-specific fields of a BatchNorm layer.\", section = \"type_specific\",\n" \
	"  fields = {\n" \
	"    { name = \"mean\", type = \"tensor\", param = true, doc = \"Running mean per channel, shape [channels].\" },\n" \
	"    { name = \"variance\", type = \"tensor\", param = true,\n" \
	"      doc = \"Running variance per channel, shape [channels].\" },\n" \
	"    { name = \"epsilon\", type = \"f32\", doc = \"Added to the variance before the square root.\" },\n" \
	"  },\n" \
	"  rules = {\n" \
	"    { kind = \"finite\", field = \"epsilon\", doc = \"epsilon is a finite number.\" },\n" \
	"    { kind = \"dims\", field = \"mean.dims\", pattern = { \"+\" }, doc = \"Mean is [channels], channels >= 1.\" },\n" \
	"    { kind = \"dims\", field = \"variance.dims\", pattern = { \"mean.dims[0]\" }, doc = \"Variance is [channels].\" },\n" \
	"    { kind = \"dims\", field = \"bias.dims\", pattern = { \"mean.dims[0]\" }, doc = \"Bias is [channels].\" },\n" \
	"  },\n" \
	"  io = { kind = \"elementwise\", channels = \"mean.dims[0]\" } })\n"

/* Built against the codec generated from the BatchNorm schema. Every file
 * given decodes, validates and re-encodes to the same bytes; with
 * --batchnorm FILE, the file's second layer is also read as a BatchNorm
 * (BN_ID, given to cc, is its layer ID). */
static const char WALK_C[] =
	"#include <stdint.h>\n"
	"#include <stdio.h>\n"
	"#include <stdlib.h>\n"
	"#include <string.h>\n"
	"#include <nnn/model.h>\n"
	"#include <nnn/validate.h>\n"
	"\n"
	"static unsigned char *t_slurp(const char *path, size_t *len)\n"
	"{\n"
	"\tFILE *f = fopen(path, \"rb\");\n"
	"\tunsigned char *b;\n"
	"\tlong n;\n"
	"\tif (!f || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0)\n"
	"\t\treturn NULL;\n"
	"\tb = malloc((size_t)n + 1);\n"
	"\tif (!b || fread(b, 1, (size_t)n, f) != (size_t)n)\n"
	"\t\treturn NULL;\n"
	"\tfclose(f);\n"
	"\t*len = (size_t)n;\n"
	"\treturn b;\n"
	"}\n"
	"\n"
	"static void dump(const nnn_diags_t *d)\n"
	"{\n"
	"\tchar line[1024];\n"
	"\tfor (size_t i = 0; i < d->n; i++)\n"
	"\t\tprintf(\"  diag: %s\\n\", nnn_diag_format(&d->v[i], line, sizeof line));\n"
	"}\n"
	"\n"
	"#define CHECK(c) do { if (!(c)) { printf(\"FAIL %s (line %d): %s\\n\", path, __LINE__, #c); dump(&d); \\\n"
	"\treturn 1; } } while (0)\n"
	"\n"
	"static int check_file(const char *path, int batchnorm)\n"
	"{\n"
	"\tnnn_diags_t d;\n"
	"\tnnn_model_t *m = NULL;\n"
	"\tunsigned char *buf, *out = NULL;\n"
	"\tsize_t len = 0, out_len = 0;\n"
	"\n"
	"\tnnn_diags_init(&d);\n"
	"\tbuf = t_slurp(path, &len);\n"
	"\tCHECK(buf != NULL);\n"
	"\tCHECK(nnn_model_decode(buf, len, NULL, &m, &d) == NNN_OK);\n"
	"\tCHECK(nnn_model_validate(m, NULL, NULL, &d) == NNN_OK);\n"
	"\tCHECK(nnn_model_encoded_size(m) == len);\n"
	"\tCHECK(nnn_model_encode(m, &out, &out_len, &d) == NNN_OK);\n"
	"\tCHECK(out_len == len);\n"
	"\tCHECK(memcmp(out, buf, len) == 0);\n"
	"#ifndef NO_BATCHNORM\n"
	"\tif (batchnorm) {\n"
	"\t\tconst nnn_layer_t *l;\n"
	"\t\tCHECK(m->layer_count == 2);\n"
	"\t\tl = &m->layers[1];\n"
	"\t\tCHECK(l->id == NNN_LAYER_ID_BATCH_NORM && l->id == BN_ID);\n"
	"\t\tCHECK(strcmp(nnn_layer_id_name(BN_ID), \"batch_norm\") == 0);\n"
	"\t\tCHECK(strcmp(nnn_layer_title(l), \"BatchNorm\") == 0);\n"
	"\t\tCHECK(l->body.batch_norm.epsilon == 0.001f);\n"
	"\t\tCHECK(l->body.batch_norm.mean.data.n == 2);\n"
	"\t\tCHECK(nnn_f32s_get(l->body.batch_norm.mean.data, 1) == -0.5f);\n"
	"\t\tCHECK(nnn_f32s_get(l->body.batch_norm.variance.data, 0) == 0.25f);\n"
	"\t\tCHECK(nnn_model_param_total(m) == 14);\n"
	"\t}\n"
	"#else\n"
	"\t(void)batchnorm;\n"
	"#endif\n"
	"\tfree(out);\n"
	"\tnnn_model_free(m);\n"
	"\tfree(buf);\n"
	"\tnnn_diags_free(&d);\n"
	"\tprintf(\"ok %s\\n\", path);\n"
	"\treturn 0;\n"
	"}\n"
	"\n"
	"int main(int argc, char **argv)\n"
	"{\n"
	"\tint bad = 0;\n"
	"\tfor (int i = 1; i < argc; i++) {\n"
	"\t\tint bn = !strcmp(argv[i], \"--batchnorm\");\n"
	"\t\tif (bn && ++i == argc)\n"
	"\t\t\treturn 2;\n"
	"\t\tbad |= check_file(argv[i], bn);\n"
	"\t}\n"
	"\treturn bad;\n"
	"}\n";

/* Generates the codec of `schema` into <tmp>/<sub>/ and builds WALK_C
 * against it as <tmp>/<sub>/walk (with `defs` given to cc). */
static void build_walk(const char *schema, const char *sub, const char *defs)
{
	t_run_t r = sh("mkdir -p '%s/%s/nnn' && " GEN_LUA " '%s' --c '%s/%s/schema_gen.c' --h '%s/%s/nnn/schema_gen.h' "
	             "--doc '%s/%s/format.md'",
	             tmp(), sub, schema, tmp(), sub, tmp(), sub, tmp(), sub);
	cr_assert_eq(r.status, 0, "generation from %s failed (status %d):\n%s", schema, r.status, r.err);
	t_run_free(&r);
	t_spit_str(tpath("walk.c"), WALK_C);
	/* libnnn's folders but formats/onnx (protobuf): the Makefile's RT_DIRS, from tests/tests.mk. */
	r = sh("cc -std=c11 -Wall -Wextra -Werror -O0 -g %s -Iruntime/include -I'%s/%s' " T_LIB_INC " -o '%s/%s/walk' "
	       "'%s/%s/schema_gen.c' " T_LIB_SRC " $(ls runtime/plugin/*.c | grep -v /scanner.c) '%s/walk.c' "
	       "-ljansson -lm",
	       defs, tmp(), sub, tmp(), sub, tmp(), sub, tmp());
	cr_assert_eq(r.status, 0, "building against the codec of %s failed:\n%s%s", schema, r.out, r.err);
	t_run_free(&r);
}

/* Files written before any change, as shell words in `files`: two built by
 * hand (between them every record of the format), then the real corpus when
 * it is there. Returns how many. */
static size_t old_files(char *files, size_t size)
{
	const char *dir = getenv("NNN_REAL_CORPUS");
	char pattern[512];
	size_t used, n = 2;
	glob_t g;
	bb_t b = { 0 };
	int32_t k[1] = { 3 }, pads[2] = { 0, 0 };

	bb_tiny(&b); /* Dense + Leaky ReLU, then Dense + Linear */
	t_spit(tpath("tiny.nnn"), b.b, b.n);
	bb_free(&b);
	bb_header(&b, "conv, valid padding: \xc3\xa9t\xc3\xa9", 2 + 2 * 3 * 1, 1);
	bb_conv(&b, 4, 2, 1, k, 1, 0, 2, pads);
	t_spit(tpath("conv.nnn"), b.b, b.n);
	bb_free(&b);
	used = (size_t)snprintf(files, size, "'%s' '%s'", tpath("tiny.nnn"), tpath("conv.nnn"));
	snprintf(pattern, sizeof pattern, "%s/*.nnn", dir && *dir ? dir : "../shared/corpus/real");
	if (glob(pattern, 0, NULL, &g) == 0) {
		for (size_t i = 0; i < g.gl_pathc; i++) {
			int m = snprintf(files + used, size - used, " '%s'", g.gl_pathv[i]);
			cr_assert(m > 0 && (size_t)m < size - used, "too many corpus files");
			used += (size_t)m;
			n++;
		}
		globfree(&g);
	} else {
		fprintf(stderr, "note: no real corpus at %s: only hand-built files are checked\n", pattern);
	}
	return n;
}

/* A Dense 3 -> 2 (ReLU), then a BatchNorm (layer ID bn) over its 2 channels. */
static void build_batchnorm(bb_t *b, long long bn)
{
	int32_t two[1] = { 2 };
	bb_header(b, "dense, then batch norm", 8 + 6, 2);
	bb_dense(b, 3, 3, 2, 0);
	bb_u8(b, (uint8_t)bn); /* layer ID: batch_norm */
	bb_u8(b, 0);          /* activation: linear */
	bb_f32(b, 0.0f);      /* dropout */
	bb_tensor(b, 1, two); /* bias: -1, -0.5 */
	bb_tensor(b, 1, two); /* mean: -1, -0.5 */
	bb_i32s(b, 1, two);   /* variance: dims [2], requires_grad 0, 0.25 and 4 */
	bb_u8(b, 0);
	bb_i32(b, 2);
	bb_f32(b, 0.25f);
	bb_f32(b, 4.0f);
	bb_f32(b, 0.001f); /* epsilon */
}

#define BN_ADDED ": compatible, 2 additions: enums \"layer_id\" value %lld \"batch_norm\", records \"batch_norm\"\n"

Test(compat, growing_walk)
{
	char schema[256], files[8192], defs[32];
	size_t nold;
	char *text;
	t_run_t r;
	long long bn;

	t_require_root();

	/* 1. Edit the schema (here a copy): BatchNorm at the next free layer ID. */
	bn = sq_int("next_free(\"layer_id\")");
	snprintf(schema, sizeof schema, "%s", write_schema("batchnorm", t_fmt(BATCHNORM, bn)));

	/* 2. Check compatibility, against the lock and against the unchanged schema. */
	expect_compatible(LOCK, schema, t_fmt(BN_ADDED, bn));
	expect_compatible("schema/nnn.lua", schema, t_fmt(BN_ADDED, bn));

	/* 3. Regenerate the codec and the format reference, and build a program
	 * against the new codec. */
	snprintf(defs, sizeof defs, "-DBN_ID=%lld", bn);
	build_walk(schema, "x", defs);
	text = t_slurp(tpath("x/nnn/records_gen.h"), NULL);
	cr_assert_not_null(text);
	cr_expect(strstr(text, t_fmt("NNN_LAYER_ID_BATCH_NORM = %lld,", bn)) != NULL, "header lacks layer ID %lld", bn);
	cr_expect(strstr(text, "typedef struct nnn_batch_norm {") != NULL, "header lacks the batch_norm record");
	free(text);
	text = t_slurp(tpath("x/format.md"), NULL);
	cr_assert_not_null(text);
	cr_expect(strstr(text, "### `batch_norm`") != NULL, "format.md does not document batch_norm");
	cr_expect(strstr(text, t_fmt("| %lld | BatchNorm | `batch_norm` |", bn)) != NULL, "format.md does not list layer ID %lld",
	          bn);
	free(text);

	/* 4. Files written before the change decode, validate and re-encode byte
	 * for byte with the new codec; a file that uses BatchNorm decodes too. */
	nold = old_files(files, sizeof files);
	{
		bb_t b = { 0 };
		build_batchnorm(&b, bn);
		t_spit(tpath("batchnorm.nnn"), b.b, b.n);
		bb_free(&b);
	}
	r = sh("'%s/x/walk' %s --batchnorm '%s'", tmp(), files, tpath("batchnorm.nnn"));
	cr_expect_eq(r.status, 0, "files did not survive the new codec (status %d):\n%s%s", r.status, r.out, r.err);
	cr_expect_eq(count_lines(r.out), nold + 1, "one ok line per file expected:\n%s", r.out);
	cr_expect(!strstr(r.out, "FAIL"), "%s", r.out);
	t_run_free(&r);

	/* The project's own nnnkit, built before the change, refuses the new layer ID. */
	{
		const char *kit = nnnkit_bin();
		if (access(kit, X_OK) == 0) {
			r = sh("unset NNN_PLUGIN_PATH; '%s' validate '%s'", kit, tpath("batchnorm.nnn"));
			cr_expect_eq(r.status, 1, "old nnnkit should reject BatchNorm (status %d):\n%s%s", r.status, r.out,
			             r.err);
			cr_expect(strstr(r.err, t_fmt("layer ID %lld", bn)) != NULL, "stderr does not mention layer ID %lld:\n%s", bn,
			          r.err);
			t_run_free(&r);
		}
	}

	/* 5. Update the lock: it gains exactly the two additions. */
	r = sh(GEN_LUA " --lock '%s' --layouts " LOCK " --out '%s'", schema, tpath("new.lock"));
	cr_assert_eq(r.status, 0, "--lock failed:\n%s", r.err);
	t_run_free(&r);
	expect_compatible(LOCK, tpath("new.lock"), t_fmt(BN_ADDED, bn));
	expect_compatible(tpath("new.lock"), schema, SAME);
	/* (Line 2 names the schema file the lock was written from.) */
	r = sh("sed 2d " LOCK " > '%s' && sed 2d '%s' > '%s' && diff '%s' '%s'", tpath("a.lock"), tpath("new.lock"),
	       tpath("b.lock"), tpath("a.lock"), tpath("b.lock"));
	cr_expect_eq(r.status, 1);
	cr_expect(has_line(r.out, t_fmt(">       { value = %lld, name = \"batch_norm\", record = \"batch_norm\" },", bn)),
	          "diff:\n%s", r.out);
	cr_expect(has_line(r.out, ">     { name = \"batch_norm\", fields = {"), "diff:\n%s", r.out);
	cr_expect(has_line(r.out, ">       { name = \"epsilon\", type = \"f32\" },"), "diff:\n%s", r.out);
	/* The structs plugins see gained members: a layout is appended. */
	cr_expect(has_line(r.out, ">       \"nnn_layer_t: union body: nnn_batch_norm_t batch_norm\","), "diff:\n%s", r.out);
	cr_expect(strstr(r.out, "change = \"nnn_layer_t.body gained nnn_batch_norm_t batch_norm\" },") != NULL, "diff:\n%s",
	          r.out);
	cr_expect(strstr(r.out, "\n< ") == NULL && strncmp(r.out, "< ", 2) != 0, "the new lock drops lines:\n%s", r.out);
	t_run_free(&r);
}

Test(compat, refused_change_breaks_old_files)
{
	static const char body[] =
		"push(find(s.records, \"dense\").fields, { name = \"epsilon\", type = \"f32\", doc = \"Epsilon.\" })\n";
	char schema[256], files[8192];
	size_t nold, fails = 0;
	t_run_t r;

	t_require_root();
	/* What check-compat refuses... */
	snprintf(schema, sizeof schema, "%s", write_schema("dense_epsilon", body));
	expect_violations(LOCK, schema,
	                  (const char *const[]){ "field added: records \"dense\".fields[4] \"epsilon\": new f32 field: "
	                                         "files written before have no bytes for it; safe alternative: allocate "
	                                         "a new layer ID with its own record instead of adding a field to dense",
	                                         NULL });
	/* ...does break the files written before: every one with a Dense layer
	 * (all but conv.nnn). */
	build_walk(schema, "y", "-DNO_BATCHNORM");
	nold = old_files(files, sizeof files);
	r = sh("'%s/y/walk' %s", tmp(), files);
	cr_expect_eq(r.status, 1, "the old files should not survive (status %d):\n%s%s", r.status, r.out, r.err);
	for (const char *p = r.out; (p = strstr(p, "FAIL ")) != NULL; p++)
		fails++;
	cr_expect_eq(fails, nold - 1, "one FAIL per file with a Dense layer expected:\n%s", r.out);
	{
		char ok[300];
		snprintf(ok, sizeof ok, "ok %s", tpath("conv.nnn"));
		cr_expect(has_line(r.out, ok), "the Conv-only file should still load:\n%s", r.out);
	}
	t_run_free(&r);
}

/* ---- 5. the ID policy ---- */

/* The generated header agrees with itself and with the lock: every ID in
 * one range, the taken ones named, the next free core ID as counted here. */
Test(compat, policy_in_generated_header_and_lock)
{
	char *lock;

	t_require_root();
	lock = t_slurp(LOCK, NULL);
	cr_assert_not_null(lock);
	for (size_t k = 0; k < NPOLICIES; k++) {
		const policy_t *p = &POLICIES[k];
		cr_expect_eq(p->next, next_core(p), "%s: NEXT_CORE %d, but %d is the lowest free core ID", p->enum_name,
		             p->next, next_core(p));
		for (int id = 0; id <= 255; id++) {
			nnn_id_range_t want = id >= p->core_min && id <= p->core_max ? NNN_ID_CORE
			                      : id >= p->tp_min && id <= p->tp_max   ? NNN_ID_THIRD_PARTY
			                                                             : NNN_ID_NEVER;
			const taken_t *t = taken_at(p, id);
			cr_expect_eq(p->range(id), want, "%s %d", p->word, id);
			if (want == NNN_ID_NEVER)
				cr_expect(id >= p->never_min && id <= p->never_max, "%s %d is in no range", p->word, id);
			if (t)
				cr_expect(p->taken_by(id) && !strcmp(p->taken_by(id), t_fmt("%s (%s)", t->by, t->name)), "%s %d: %s",
				          p->word, id, p->taken_by(id) ? p->taken_by(id) : "(null)");
			else
				cr_expect_null(p->taken_by(id), "%s %d", p->word, id);
		}
		cr_expect(strstr(lock, t_fmt("    { enum = \"%s\", core = { %d, %d }, third_party = { %d, %d }, ", p->enum_name,
		                         p->core_min, p->core_max, p->tp_min, p->tp_max)) != NULL,
		          "the lock lacks the policy of %s:\n%s", p->enum_name, lock);
		for (const taken_t *t = p->taken; t->by; t++)
			cr_expect(has_line(lock, t_fmt("      { id = %d, by = \"%s\", name = \"%s\" },", t->id, t->by, t->name)),
			          "the lock lacks taken %s %d", p->word, t->id);
	}
	free(lock);
}

/* Every example plugin's IDs, read from its own fragment, are recorded as
 * taken by it (examples/<folder>) under the names it gives them: IDs and
 * names a core growth must not take. */
Test(compat, policy_records_the_example_plugin)
{
	t_run_t r;
	int n = 0;

	t_require_root();
	r = sh("for f in examples/*/schema.lua; do F=\"$f\" lua5.4 -e 'local f = os.getenv(\"F\")\n"
	       "local s = dofile(f)\n"
	       "for _, k in ipairs({ \"layers\", \"activations\" }) do\n"
	       "  for _, v in ipairs(s[k] or {}) do print(f:match(\"^(.*)/\"), k, v.value, v.name) end\n"
	       "end' || exit 1; done");
	cr_assert_eq(r.status, 0, "%s", r.err);
	for (const char *line = r.out; *line; line = strchr(line, '\n') + 1) {
		char by[128], kind[32], name[64];
		int id;
		cr_assert_eq(sscanf(line, "%127s %31s %d %63s", by, kind, &id, name), 4, "%s", line);
		const taken_t *t = taken_at(!strcmp(kind, "layers") ? LAYERS : ACTS, id);
		cr_expect(t && !strcmp(t->by, by) && !strcmp(t->name, name),
		          "%s's %s %d (%s) is not recorded as taken by it", by, kind, id, name);
		n++;
	}
	cr_expect_geq(n, 4, "the example plugins declare fewer IDs than the two of each known:\n%s", r.out);
	t_run_free(&r);
}

/* A value that takes `id` in the enum of `p`. */
static const char *newcomer(const policy_t *p, int id)
{
	return t_fmt("push(find(s.enums, \"%s\").values, { value = %d, name = \"newcomer\", title = \"Newcomer\", "
	         "doc = \"A new core value.\" })\n",
	         p->enum_name, id);
}

/* Removes the taken record of `id` from the policy of `p`. */
static const char *untake(const policy_t *p, int id)
{
	return t_fmt("for i, t in ipairs(s.ids.%s.taken) do if t.id == %d then table.remove(s.ids.%s.taken, i) break end end\n",
	         p->enum_name, id, p->enum_name);
}

Test(compat, refuses_core_value_on_taken_id)
{
	size_t tested = 0;
	for (size_t k = 0; k < NPOLICIES; k++) {
		const policy_t *p = &POLICIES[k];
		const taken_t *t = p->taken;
		if (!t->by)
			continue;
		const char *taken_line =
			t_fmt("ID taken: enums \"%s\" value %d \"newcomer\": %d is taken by %s (%s): files written with it store %d, "
			  "which would then read as newcomer; safe alternative: give newcomer the next free core %s, %d "
			  "(ids.%s.taken lists the IDs plugins hold)",
			  p->enum_name, t->id, t->id, t->by, t->name, t->id, p->word, next_core(p), p->enum_name);
		const char *removed_line =
			t_fmt("taken ID removed: ids \"%s\" taken %d \"%s\": no longer recorded, but %s writes files with %s %d; safe "
			  "alternative: keep the record: a core %s never takes %d (%d is free)",
			  p->enum_name, t->id, t->name, t->by, p->word, t->id, p->word, t->id, next_core(p));
		REFUSES("taken", newcomer(p, t->id), taken_line);
		/* Dropping the record to make room is caught too: the lock keeps it. */
		REFUSES("taken_dropped", t_fmt("%s%s", newcomer(p, t->id), untake(p, t->id)), taken_line, removed_line);
		REFUSES("untaken", untake(p, t->id), removed_line);
		tested++;
	}
	cr_expect_gt(tested, 0, "the schema records no taken ID: nothing was tested");
}

/* A value named `name` at `id` in the enum of `p`. */
static const char *named_newcomer(const policy_t *p, int id, const char *name)
{
	return t_fmt("push(find(s.enums, \"%s\").values, { value = %d, name = \"%s\", title = \"Newcomer\", "
	         "doc = \"A new core value.\" })\n",
	         p->enum_name, id, name);
}

/* Names are owned like IDs: a core value at a free ID under a name a
 * recorded plugin gives its own ID (examples/plugin-layernorm-elu's
 * layer_norm among them: policy_records_the_example_plugin) is refused,
 * naming the plugin; nnngen --plugin does refuse that plugin's fragment then. */
Test(compat, refuses_core_value_on_taken_name)
{
	size_t tested = 0;
	for (size_t k = 0; k < NPOLICIES; k++) {
		const policy_t *p = &POLICIES[k];
		for (const taken_t *t = p->taken; t->by; t++) {
			int id = next_core(p);
			REFUSES("taken_name", named_newcomer(p, id, t->name),
			        t_fmt("name taken: enums \"%s\" value %d \"%s\": \"%s\" is the name %s gives its %s %d: JSON "
			          "written with that plugin names %d so, and nnngen --plugin refuses its fragment once the core "
			          "has the name; safe alternative: choose another name for %s %d (ids.%s.taken records the "
			          "names plugins hold with their IDs)",
			          p->enum_name, id, t->name, t->name, t->by, p->word, t->id, t->id, p->word, id, p->enum_name));
			/* The control: the holder's fragment, where the tree has it, is then refused. */
			if (access(t_fmt("%s/schema.lua", t->by), R_OK) == 0) {
				t_run_t r = sh(GEN_LUA " --schema '%s' --plugin '%s/schema.lua' --c '%s' --h '%s'",
				               tpath("taken_name.lua"), t->by, tpath("frag.c"), tpath("frag.h"));
				cr_expect_eq(r.status, 1, "%s's fragment was accepted beside a core %s:\n%s", t->by, t->name, r.err);
				cr_expect(strstr(r.err, t_fmt("name \"%s\" is used twice", t->name)) != NULL, "%s", r.err);
				t_run_free(&r);
			}
			tested++;
		}
	}
	cr_expect_gt(tested, 0, "the schema records no taken ID: nothing was tested");
}

/* A name the core itself gave an ID stays that ID's after a rename: neither
 * a new value nor another renamed one may take it (against a lock written
 * after the rename, whose renamed_from is all that remembers the name). */
Test(compat, refuses_former_core_name_reused)
{
	const policy_t *p = ACTS;
	const int was = NNN_ACTIVATION_ID_SOFTMAX, other = NNN_ACTIVATION_ID_SIGMOID, id = next_core(p);
	const char *lock, *rename = "local a = find(s.enums, \"activation_id\")\n"
	                            "find(a.values, \"softmax\").name = \"soft_max\"\n";
	t_run_t r;

	t_require_root();
	r = sh(GEN_LUA " --lock '%s' --out '%s'",
	       write_schema("renamed", "local v = find(find(s.enums, \"activation_id\").values, \"softmax\")\n"
	                               "v.name, v.renamed_from = \"soft_max\", \"softmax\""),
	       tpath("renamed.lock"));
	cr_assert_eq(r.status, 0, "%s", r.err);
	t_run_free(&r);
	lock = tpath("renamed.lock");
	const char *schemas[] = {
		write_schema("new_value", t_fmt("%s%s", rename, named_newcomer(p, id, "softmax"))),
		write_schema("renamed_value", t_fmt("%sfind(a.values, \"sigmoid\").name = \"softmax\"\n"
		                                    "find(a.values, \"softmax\").renamed_from = \"sigmoid\"\n", rename)),
	};
	const int at[] = { id, other };
	for (int i = 0; i < 2; i++) {
		const char *line = t_fmt("name reused: enums \"activation_id\" value %d \"softmax\": \"softmax\" was the name "
		                         "of activation ID %d (now \"soft_max\"): JSON written before names %d so, and would "
		                         "read as %d; safe alternative: choose another name for activation ID %d: a name an "
		                         "ID has had stays its own",
		                         at[i], was, was, at[i], at[i]);
		r = check_compat(lock, schemas[i]);
		cr_expect_eq(r.status, 1, "%s: expected exit 1, got %d\n%s%s", schemas[i], r.status, r.out, r.err);
		cr_expect(has_line(r.err, line), "%s: missing line\n%s\nstderr:\n%s", schemas[i], line, r.err);
		t_run_free(&r);
	}
	/* Nor may the record of the name go, which is how a later lock would forget it. */
	const char *dropped = t_fmt("former name dropped: enums \"activation_id\" value %d \"soft_max\": renamed_from no "
	                            "longer lists \"softmax\", which the lock records as its name before: the next lock "
	                            "would forget it, and a later value could take it; safe alternative: keep \"softmax\" "
	                            "in its renamed_from: a name an ID has had stays its own",
	                            was);
	expect_violations(lock, write_schema("dropped", rename), (const char *const[]){ dropped, NULL });
}

Test(compat, refuses_core_value_outside_the_core_range)
{
	for (size_t k = 0; k < NPOLICIES; k++) {
		const policy_t *p = &POLICIES[k];
		REFUSES("third_party", newcomer(p, p->tp_min),
		        t_fmt("ID in the third-party range: enums \"%s\" value %d \"newcomer\": %d is in the third-party range %s "
		          "of %s, where plugins choose IDs without asking: one may already write files with it; safe "
		          "alternative: give newcomer the next free core %s, %d",
		          p->enum_name, p->tp_min, p->tp_min, range_text(p->tp_min, p->tp_max), p->enum_name, p->word,
		          next_core(p)));
		if (p->never_min >= 0)
			REFUSES("never", newcomer(p, p->never_max),
			        t_fmt("ID never used: enums \"%s\" value %d \"newcomer\": %d is never a %s (the never range of %s is "
			          "%s); safe alternative: give newcomer the next free core %s, %d",
			          p->enum_name, p->never_max, p->never_max, p->word, p->enum_name,
			          range_text(p->never_min, p->never_max), p->word, next_core(p)));
		/* The next free core ID itself passes. */
		t_require_root();
		expect_compatible(LOCK, write_schema("next", newcomer(p, next_core(p))),
		                  t_fmt(": compatible, 1 addition: enums \"%s\" value %d \"newcomer\"\n", p->enum_name, next_core(p)));
	}
}

Test(compat, refuses_id_range_changed)
{
	const policy_t *p = ACTS;
	REFUSES("ranges",
	        t_fmt("s.ids.%s.core.max = %d\ns.ids.%s.third_party.min = %d\n", p->enum_name, p->core_max - 1, p->enum_name,
	          p->tp_min - 1),
	        t_fmt("ID range changed: ids \"%s\" core: %s -> %s: plugins chose their IDs under the old ranges; safe "
	          "alternative: keep the ranges as they are; record single IDs under ids.%s.taken instead",
	          p->enum_name, range_text(p->core_min, p->core_max), range_text(p->core_min, p->core_max - 1),
	          p->enum_name),
	        t_fmt("ID range changed: ids \"%s\" third_party: %s -> %s: plugins chose their IDs under the old ranges; safe "
	          "alternative: keep the ranges as they are; record single IDs under ids.%s.taken instead",
	          p->enum_name, range_text(p->tp_min, p->tp_max), range_text(p->tp_min - 1, p->tp_max), p->enum_name));
	/* A lock that had a policy the schema dropped. */
	REFUSES_SINCE("policy_removed", "  ids = {\n",
	              "  ids = {\n"
	              "    { enum = \"old_id\", core = { 0, 127 }, third_party = { 128, 255 }, taken = {\n"
	              "    } },\n",
	              "ID policy removed: ids \"old_id\": no longer defined, but plugins chose their IDs under it; safe "
	              "alternative: keep ids.old_id as it is");
}

Test(compat, allows_new_taken_record)
{
	t_require_root();
	for (size_t k = 0; k < NPOLICIES; k++) {
		const policy_t *p = &POLICIES[k];
		int id = p->tp_min + 7;
		const char *schema = write_schema(
			"take", t_fmt("push(s.ids.%s.taken, { id = %d, by = \"acme/nnn-extras\", name = \"mish\", doc = \"Mish.\" })\n"
		              "push(s.ids.%s.taken, { id = %d, by = \"acme/nnn-extras\", name = \"gelu\", doc = \"GELU.\" })\n",
		              p->enum_name, id, p->enum_name, next_core(p)));
		const char *want = t_fmt(": compatible, 2 additions: ids \"%s\" taken %d \"mish\", ids \"%s\" taken %d \"gelu\"\n",
		                     p->enum_name, id, p->enum_name, next_core(p));
		expect_compatible(LOCK, schema, want);
		/* A record binds at once: a core value on the ID it takes is refused. */
		t_run_t r = check_compat(
			LOCK, write_schema("take2", t_fmt("push(s.ids.%s.taken, { id = %d, by = \"acme/nnn-extras\", name = \"gelu\", "
		                                  "doc = \"GELU.\" })\n%s",
		                                  p->enum_name, next_core(p), newcomer(p, next_core(p)))));
		cr_expect_eq(r.status, 1, "%s%s", r.out, r.err);
		cr_expect(strstr(r.err, t_fmt("ID taken: enums \"%s\" value %d \"newcomer\": %d is taken by acme/nnn-extras (gelu)",
		                          p->enum_name, next_core(p), next_core(p))) != NULL,
		          "%s", r.err);
		t_run_free(&r);
	}
}

/* nnngen warns (and still generates) about a value on a taken ID, and
 * about a plugin fragment's ID in the core range that is not taken. */
Test(compat, nnngen_warns_about_ids)
{
	t_run_t r;
	const policy_t *p = ACTS;

	t_require_root();
	if (p->taken->by) {
		r = sh(GEN_LUA " '%s' --check", write_schema("warn", newcomer(p, p->taken->id)));
		cr_expect_eq(r.status, 0, "%s", r.err);
		cr_expect(strstr(r.err, t_fmt(": ID taken: enums \"%s\" value %d \"newcomer\": %d is taken by %s (%s)", p->enum_name,
		                          p->taken->id, p->taken->id, p->taken->by, p->taken->name)) != NULL,
		          "%s", r.err);
		cr_expect(!strncmp(r.err, "nnngen: warning: ", 17) && strstr(r.err, "(make check-compat refuses it)"), "%s",
		          r.err);
		t_run_free(&r);
	}
	r = sh(GEN_LUA " schema/nnn.lua --check");
	cr_expect_eq(r.status, 0);
	cr_expect_str_empty(r.err, "the schema breaks its own ID policy:\n%s", r.err);
	t_run_free(&r);

	for (int third = 0; third < 2; third++) {
		int id = third ? p->tp_min : next_core(p);
		t_spit_str(tpath("frag.lua"),
		         t_fmt("return { name = \"mine\", doc = \"A test fragment.\",\n"
		           "  activations = { { value = %d, name = \"mish\", record = \"mish\", doc = \"Mish.\" } },\n"
		           "  records = { { name = \"mish\", section = \"activation_params\", doc = \"Parameters of Mish.\",\n"
		           "    fields = { { name = \"beta\", type = \"f32\", doc = \"A scale.\" } } } } }\n",
		           id));
		r = sh(GEN_LUA " --plugin '%s' --check", tpath("frag.lua"));
		cr_expect_eq(r.status, 0, "%s", r.err);
		if (third)
			cr_expect_str_empty(r.err, "a third-party ID was warned about:\n%s", r.err);
		else
			cr_expect(strstr(r.err, t_fmt("nnngen: warning: %s: %s %d (mish) is in the core range %s and not recorded as "
			                          "taken",
			                          tpath("frag.lua"), p->word, id, range_text(p->core_min, p->core_max))) &&
			                  strstr(r.err, t_fmt("move it to the third-party range %s", range_text(p->tp_min, p->tp_max))),
			          "%s", r.err);
		t_run_free(&r);
	}
}

/* The guide states the policy in a table: it must be the schema's, for
 * every enum open to plugins. */
Test(compat, guide_states_the_policy)
{
	char *guide;
	t_require_root();
	guide = t_slurp("docs/growing-the-format.md", NULL);
	cr_assert_not_null(guide);
	for (size_t k = 0; k < NPOLICIES; k++) {
		const policy_t *p = &POLICIES[k];
		cr_expect(strstr(guide, t_fmt("\n| %s | core |", range_text(p->core_min, p->core_max))), "%s core", p->enum_name);
		cr_expect(strstr(guide, t_fmt("\n| %s | third-party |", range_text(p->tp_min, p->tp_max))), "%s third party",
		          p->enum_name);
		if (p->never_min >= 0)
			cr_expect(strstr(guide, t_fmt("\n| %s | never |", range_text(p->never_min, p->never_max))), "%s never",
			          p->enum_name);
	}
	free(guide);
}

/* ---- 6. renames ---- */

/* A field, an enum value, a record and an enum, each renamed with renamed_from
 * (and the references to them updated). */
static const char RENAMES[] =
	"local d = find(s.records, \"dense\")\n"
	"local f = find(d.fields, \"neurons\")\n"
	"f.name, f.renamed_from = \"units\", \"neurons\"\n"
	"d.rules[1].field = \"units\"\n"
	"d.rules[2].pattern = { \"+\", \"units\" }\n"
	"d.rules[3].pattern = { \"units\" }\n"
	"d.io.outputs = \"units\"\n"
	"local v = find(find(s.enums, \"activation_id\").values, \"softmax\")\n"
	"v.name, v.renamed_from = \"soft_max\", { \"softmax\" }\n"
	"local r = find(s.records, \"leaky_relu\")\n"
	"r.name, r.renamed_from = \"lrelu\", \"leaky_relu\"\n"
	"find(find(s.enums, \"activation_id\").values, \"leaky_relu\").record = \"lrelu\"\n"
	"local e = find(s.enums, \"padding_type\")\n"
	"e.name, e.renamed_from = \"padding_kind\", \"padding_type\"\n"
	"find(find(s.records, \"conv\").fields, \"padding_type\").type = \"padding_kind\"\n";

Test(compat, renames_pass_and_are_flagged)
{
	static const char *const lines[] = {
		"ID renamed: enums \"activation_id\" value 5 \"soft_max\": was \"softmax\": files stay readable (they store "
		"the number 5); the JSON form changes: JSON written before this change names it \"softmax\", which nnnkit "
		"now refuses: write \"soft_max\" or 5 there instead",
		"enum renamed: enums \"padding_kind\": was \"padding_type\": files and the JSON form stay the same; the "
		"generated C names change (nnn_padding_type_t and NNN_PADDING_TYPE_* are now nnn_padding_kind_t and "
		"NNN_PADDING_KIND_*): update C code, plugins included, that uses them",
		"record renamed: records \"lrelu\": was \"leaky_relu\": files and the JSON form stay the same; the generated "
		"C type nnn_leaky_relu_t is now nnn_lrelu_t: update C code, plugins included, that uses it",
		"field renamed: records \"dense\".fields[1] \"units\": was \"neurons\": files stay readable (its bytes have not "
		"moved); the JSON form changes: JSON written before this change has the key \"neurons\", which nnnkit now "
		"refuses as an unknown field: rename that key to \"units\" (or convert the JSON to .nnn with an nnnkit built "
		"before this change)",
	};
	static const char summary[] =
		": compatible, no additions (same IDs and layouts); 4 renames (files stay readable; flagged on stderr): "
		"enums \"activation_id\" value 5 \"soft_max\" (was \"softmax\"), enums \"padding_kind\" (was "
		"\"padding_type\"), records \"lrelu\" (was \"leaky_relu\"), records \"dense\".fields[1] \"units\" (was "
		"\"neurons\")\n";
	const char *schema, *olds[] = { LOCK, "schema/nnn.lua", NULL, NULL };
	t_run_t r;

	t_require_root();
	/* (Conv's padding rule names the field padding_type, which keeps its name.) */
	schema = write_schema("renames", RENAMES);
	/* Against the lock, the schema, and a lock written from the renamed schema. */
	r = sh(GEN_LUA " --lock '%s' --out '%s'", schema, tpath("renamed.lock"));
	cr_assert_eq(r.status, 0, "%s", r.err);
	t_run_free(&r);
	olds[2] = tpath("renamed.lock");
	for (int i = 0; i < 3; i++) {
		const char *old = i < 2 ? olds[i] : LOCK, *new = i < 2 ? schema : olds[2];
		size_t no, ns = strlen(summary);
		r = check_compat(old, new);
		cr_expect_eq(r.status, 0, "%s -> %s: status %d\n%s%s", old, new, r.status, r.out, r.err);
		for (size_t j = 0; j < sizeof lines / sizeof lines[0]; j++)
			cr_expect(has_line(r.err, lines[j]), "%s -> %s: missing line\n%s\nstderr:\n%s", old, new, lines[j], r.err);
		cr_expect_eq(count_lines(r.err), sizeof lines / sizeof lines[0], "stderr:\n%s", r.err);
		no = strlen(r.out);
		cr_expect(no > ns && !strcmp(r.out + no - ns, summary), "summary:\n%s", r.out);
		t_run_free(&r);
	}
	/* The lock keeps the former names; once the lock has the new ones, nothing is flagged. */
	{
		char *lock = t_slurp(olds[2], NULL);
		cr_assert_not_null(lock);
		cr_expect(has_line(lock, "      { name = \"units\", type = \"i32\", renamed_from = { \"neurons\" } },"), "%s",
		          lock);
		free(lock);
	}
	expect_compatible(olds[2], schema, SAME);
}

Test(compat, renames_not_declared_are_refused_with_a_hint)
{
	/* The same field renamed, without renamed_from. */
	REFUSES("undeclared",
	        "local d = find(s.records, \"dense\")\n"
	        "find(d.fields, \"neurons\").name = \"units\"\n"
	        "d.rules[1].field = \"units\"\n"
	        "d.rules[2].pattern = { \"+\", \"units\" }\n"
	        "d.rules[3].pattern = { \"units\" }\n"
	        "d.io.outputs = \"units\"\n",
	        "field renamed or replaced: records \"dense\".fields[1] \"units\": takes the place of \"neurons\" with the "
	        "same type (i32): files written before hold the bytes of \"neurons\" here, now read as \"units\", and "
	        "nothing says whether it is the same field; safe alternative: if \"units\" is \"neurons\" renamed, say so "
	        "with renamed_from = \"neurons\" on it (files stay readable; JSON written before uses the old name); if it "
	        "is a new field, allocate a new layer ID with its own record instead of replacing a field of dense");
	/* A record renamed without it: removed, and the ID now selects another record. */
	REFUSES("undeclared_record",
	        "find(s.records, \"leaky_relu\").name = \"lrelu\"\n"
	        "find(find(s.enums, \"activation_id\").values, \"leaky_relu\").record = \"lrelu\"\n",
	        t_fmt("ID reused: enums \"activation_id\" value 4 \"leaky_relu\": 4 now selects record \"lrelu\" (was record "
	          "\"leaky_relu\"); safe alternative: keep 4 selecting record \"leaky_relu\"; a new activation ID (next "
	          "free: %d) can select record \"lrelu\"",
	          next_core(ACTS)),
	        "record removed: records \"leaky_relu\": no longer defined, but files written before hold it; safe "
	        "alternative: keep record leaky_relu with its fields as they are; if \"lrelu\" is \"leaky_relu\" renamed, "
	        "say so with renamed_from = \"leaky_relu\" on it (files stay readable)");
}

/* ---- 6. the struct layouts plugins see (gen/lock/layout.lua) ---- */

/* FNV-1a, 32 bits: how gen/lock/layout.lua defines a fingerprint, computed here
 * independently. */
static uint32_t fnv1a(const char *s, size_t n)
{
	uint32_t h = 0x811c9dc5u;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 0x01000193u;
	return h;
}

typedef struct abi {
	uint32_t fp[16]; /* the layouts' fingerprints, oldest first */
	char change[16][256];
	int n;
	char structs[8192]; /* the struct lines, joined by "\n" */
} abi_t;

/* The abi section of a lock's text, read line by line as the lock writes it. */
static void read_abi(const char *text, abi_t *a)
{
	const char *p = strstr(text, "\n  abi = {\n");
	size_t k = 0;
	int in_structs = 0;
	memset(a, 0, sizeof *a);
	cr_assert_not_null(p, "the lock has no abi section:\n%s", text);
	for (p++; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		unsigned fp;
		char change[256];
		const char *end = strchr(p, '\n');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		if (sscanf(p, "      { fingerprint = 0x%x, change = \"%255[^\"]\" },", &fp, change) == 2) {
			cr_assert_lt(a->n, 16);
			a->fp[a->n] = fp;
			snprintf(a->change[a->n++], sizeof a->change[0], "%s", change);
		} else if (!strncmp(p, "    structs = {", 15)) {
			in_structs = 1;
		} else if (in_structs && !strncmp(p, "      \"", 7) && len > 9) {
			cr_assert_lt(k + len, sizeof a->structs);
			k += (size_t)snprintf(a->structs + k, sizeof a->structs - k, "%s%.*s", k ? "\n" : "", (int)(len - 9),
			                      p + 7);
		} else if (in_structs) {
			break;
		}
	}
}

static abi_t *lock_abi(const char *path)
{
	static abi_t a;
	char *text = t_slurp(path, NULL);
	cr_assert_not_null(text, "cannot read %s", path);
	read_abi(text, &a);
	free(text);
	return &a;
}

/* The layout in the lock is the one this build's headers were generated
 * with: the last fingerprint is NNN_SCHEMA_LAYOUT, the first
 * NNN_SCHEMA_LAYOUT_FIRST, and each is FNV-1a of the struct lines. */
Test(compat, layout_fingerprint_in_lock)
{
	abi_t *a;

	t_require_root();
	a = lock_abi(LOCK);
	cr_assert_geq(a->n, 1, "no layouts in " LOCK);
	cr_assert_eq(a->n, NNN_SCHEMA_LAYOUTS);
	cr_assert_eq(fnv1a(a->structs, strlen(a->structs)), a->fp[a->n - 1], "the structs of " LOCK " have another "
	             "fingerprint than its last layout 0x%08x:\n%s", a->fp[a->n - 1], a->structs);
	cr_assert_eq(a->fp[a->n - 1], NNN_SCHEMA_LAYOUT, LOCK " ends with layout 0x%08x, the header has 0x%08x: run make",
	             a->fp[a->n - 1], NNN_SCHEMA_LAYOUT);
	cr_assert_eq(a->fp[0], NNN_SCHEMA_LAYOUT_FIRST);
	for (int i = 0; i < a->n; i++) {
		cr_assert_eq(nnn_schema_layouts[i].fingerprint, a->fp[i]);
		cr_assert_str_eq(nnn_schema_layouts[i].change, a->change[i]);
	}
	/* One member a line: the layer's union and its ext member among them. */
	cr_assert(strstr(a->structs, "nnn_layer_t: nnn_ext_t body_ext\n"), "%s", a->structs);
	cr_assert(strstr(a->structs, "nnn_model_t: nnn_layer_t *layers\n"), "%s", a->structs);
}

/* A record of its own for a new layer ID, one for a new activation with a
 * parameter, and an activation without parameters; each takes the next
 * unused ID of its enum. */
#define NEXT_ID \
	"local function next_id(e)\n" \
	"  local n = 0\n" \
	"  for _, v in ipairs(e.values) do if v.value >= n then n = v.value + 1 end end\n" \
	"  return n\n" \
	"end\n"
#define PROBE_RECORD(name, section) \
	"table.insert(s.records, 1, { name = \"" name "\", section = \"" section "\", doc = \"A probe.\",\n" \
	"  fields = { { name = \"gain\", type = \"f32\", doc = \"A gain.\" } } })\n"
static const char GROW_LAYER[] = NEXT_ID PROBE_RECORD("probe", "type_specific")
	"local e = find(s.enums, \"layer_id\")\n"
	"push(e.values, { value = next_id(e), name = \"probe\", title = \"Probe\", record = \"probe\", doc = \"P.\" })\n";
static const char GROW_PARAM_ACT[] = NEXT_ID PROBE_RECORD("probe", "activation_params")
	"local e = find(s.enums, \"activation_id\")\n"
	"push(e.values, { value = next_id(e), name = \"probe\", title = \"Probe\", record = \"probe\", doc = \"P.\" })\n";
static const char GROW_PLAIN_ACT[] = NEXT_ID
	"local e = find(s.enums, \"activation_id\")\n"
	"push(e.values, { value = next_id(e), name = \"probe\", title = \"Probe\", doc = \"P.\" })\n";

static void expect_layout_moved(const char *name, const char *body, const char *change)
{
	char line[1024];
	abi_t *a = lock_abi(LOCK);
	t_run_t r = sh(GEN_LUA " --check-layout " LOCK " '%s'", write_schema(name, body));
	cr_assert_eq(r.status, 1, "%s: expected exit 1, got %d\n%s%s", name, r.status, r.out, r.err);
	snprintf(line, sizeof line, ": the generated structs plugins see changed (%s): layout 0x", change);
	cr_expect(strstr(r.err, line) != NULL, "no '%s' in:\n%s", line, r.err);
	snprintf(line, sizeof line, " is not recorded, the last is 0x%08x; run make lock to record it.", a->fp[a->n - 1]);
	cr_expect(strstr(r.err, line) != NULL, "no '%s' in:\n%s", line, r.err);
	cr_expect_str_empty(r.out);
	t_run_free(&r);
}

static void expect_layout_kept(const char *name, const char *body)
{
	char line[256];
	abi_t *a = lock_abi(LOCK);
	t_run_t r = sh(GEN_LUA " --check-layout " LOCK " '%s'", body ? write_schema(name, body) : name);
	cr_assert_eq(r.status, 0, "%s: expected exit 0, got %d\n%s%s", name, r.status, r.out, r.err);
	snprintf(line, sizeof line, " are at layout 0x%08x, the last of %d recorded\n", a->fp[a->n - 1], a->n);
	cr_expect(strstr(r.out, line) != NULL, "no '%s' in:\n%s", line, r.out);
	t_run_free(&r);
}

Test(compat, layout_checked_against_lock)
{
	t_require_root();
	expect_layout_kept("schema/nnn.lua", NULL);
	/* Records selected by new IDs grow the unions plugins read through. */
	expect_layout_moved("grow_layer", GROW_LAYER, "nnn_layer_t.body gained nnn_probe_t probe");
	expect_layout_moved("grow_param_act", GROW_PARAM_ACT, "nnn_activation_t.params gained nnn_probe_t probe");
	/* An enum value alone, or new docs, move nothing. */
	expect_layout_kept("grow_plain_act", GROW_PLAIN_ACT);
	expect_layout_kept("docs", "find(s.records, \"layer\").doc = \"Reworded.\"\n"
	                           "find(find(s.records, \"dense\").fields, \"neurons\").doc = \"Outputs.\"\n");
}

Test(compat, layout_appended_by_lock)
{
	abi_t old, *a;
	char *x, *y, *h, schema[256];
	t_run_t r;

	t_require_root();
	old = *lock_abi(LOCK);
	snprintf(schema, sizeof schema, "%s", write_schema("grow_layer", GROW_LAYER));

	/* --lock continues the history of --layouts: the old layouts stay, the
	 * new one comes last, with what changed; then the check passes. */
	r = sh(GEN_LUA " --lock '%s' --layouts " LOCK " --out '%s'", schema, tpath("new.lock"));
	cr_assert_eq(r.status, 0, "--lock failed:\n%s", r.err);
	t_run_free(&r);
	a = lock_abi(tpath("new.lock"));
	cr_assert_eq(a->n, old.n + 1);
	for (int i = 0; i < old.n; i++) {
		cr_expect_eq(a->fp[i], old.fp[i]);
		cr_expect_str_eq(a->change[i], old.change[i]);
	}
	cr_expect_str_eq(a->change[old.n], "nnn_layer_t.body gained nnn_probe_t probe");
	cr_expect_eq(fnv1a(a->structs, strlen(a->structs)), a->fp[old.n]);
	cr_expect_neq(a->fp[old.n], old.fp[old.n - 1]);
	r = sh(GEN_LUA " --check-layout '%s' '%s'", tpath("new.lock"), schema);
	cr_expect_eq(r.status, 0, "%s%s", r.out, r.err);
	t_run_free(&r);

	/* Again, from the lock it replaces (the default): nothing more to add. */
	r = sh("cp '%s' '%s' && " GEN_LUA " --lock '%s' --out '%s' && cmp '%s' '%s'", tpath("new.lock"), tpath("again.lock"),
	       schema, tpath("again.lock"), tpath("new.lock"), tpath("again.lock"));
	cr_expect_eq(r.status, 0, "%s%s", r.out, r.err);
	t_run_free(&r);
	/* With no lock to continue, the schema's layout is the first. */
	r = sh(GEN_LUA " --lock '%s' --out '%s'", schema, tpath("fresh.lock"));
	cr_assert_eq(r.status, 0, "%s", r.err);
	t_run_free(&r);
	a = lock_abi(tpath("fresh.lock"));
	cr_expect_eq(a->n, 1);
	cr_expect_eq(a->fp[0], fnv1a(a->structs, strlen(a->structs)));

	/* The generated code carries the history; generated before make lock
	 * (the new layout appended on the fly) or after, the bytes are the same. */
	r = sh("mkdir -p '%s/b/nnn' '%s/a/nnn' && " GEN_LUA " '%s' --c '%s/b/g.c' --h '%s/b/nnn/g.h' --layouts " LOCK
	       " && " GEN_LUA " '%s' --c '%s/a/g.c' --h '%s/a/nnn/g.h' --layouts '%s' && cmp '%s/b/g.c' '%s/a/g.c' && "
	       "cmp '%s/b/nnn/g.h' '%s/a/nnn/g.h' && cmp '%s/b/nnn/records_gen.h' '%s/a/nnn/records_gen.h'", tmp(),
	       tmp(), schema, tmp(), tmp(), schema, tmp(), tmp(), tpath("new.lock"), tmp(), tmp(), tmp(), tmp(), tmp(),
	       tmp());
	cr_assert_eq(r.status, 0, "%s%s", r.out, r.err);
	t_run_free(&r);
	h = t_slurp(tpath("a/nnn/records_gen.h"), NULL); /* the layouts are the records' */
	x = malloc(256);
	y = malloc(256);
	cr_assert(h && x && y);
	snprintf(x, 256, "#define NNN_SCHEMA_LAYOUT 0x%08xu\n", a->fp[0]);
	snprintf(y, 256, "#define NNN_SCHEMA_LAYOUT_FIRST 0x%08xu\n", old.fp[0]);
	cr_expect(strstr(h, x) != NULL, "no '%s' in the header", x);
	cr_expect(strstr(h, y) != NULL, "no '%s' in the header", y);
	snprintf(x, 256, "#define NNN_SCHEMA_LAYOUTS %d\n", old.n + 1);
	cr_expect(strstr(h, x) != NULL, "no '%s' in the header", x);
	free(h);
	h = t_slurp(tpath("a/g.c"), NULL);
	snprintf(x, 256, "\t{ 0x%08xu, \"nnn_layer_t.body gained nnn_probe_t probe\" },\n};", a->fp[0]);
	cr_expect(h && strstr(h, x) != NULL, "no '%s' in the source", x);
	free(h);
	free(x);
	free(y);
}

/* A lock without layouts (written before they were recorded) still works for
 * check-compat; --check-layout asks for make lock. A lock whose structs were
 * edited by hand no longer matches its fingerprint and is refused. */
Test(compat, layout_lock_without_or_edited)
{
	char *text, *cut;
	t_run_t r;

	t_require_root();
	text = t_slurp(LOCK, NULL);
	cr_assert_not_null(text);
	cut = strstr(text, "  -- The generated C structs");
	cr_assert_not_null(cut, "no abi section in " LOCK);
	strcpy(cut, "}\n");
	t_spit_str(tpath("old.lock"), text);
	free(text);
	expect_compatible(tpath("old.lock"), "schema/nnn.lua", SAME);
	r = sh(GEN_LUA " --check-layout '%s' schema/nnn.lua", tpath("old.lock"));
	cr_expect_eq(r.status, 1, "%s%s", r.out, r.err);
	cr_expect(strstr(r.err, "records no struct layouts") && strstr(r.err, "run make lock"), "%s", r.err);
	t_run_free(&r);

	r = sh("sed 's/\"nnn_tensor_t: bool requires_grad\"/\"nnn_tensor_t: int requires_grad\"/' " LOCK " > '%s' && "
	       GEN_LUA " --check-layout '%s' schema/nnn.lua", tpath("edited.lock"), tpath("edited.lock"));
	cr_expect_eq(r.status, 2, "%s%s", r.out, r.err);
	cr_expect(strstr(r.err, "abi: the structs have fingerprint") && strstr(r.err, "edited by hand"), "%s", r.err);
	t_run_free(&r);
	r = check_compat(tpath("edited.lock"), "schema/nnn.lua");
	cr_expect_eq(r.status, 2, "%s%s", r.out, r.err);
	t_run_free(&r);
}
