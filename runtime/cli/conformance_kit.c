/* conformance_kit.c: `nnnkit conformance --testee CMD`: every case of the
 * kit asked of the testee, its checks scored per level and per family,
 * known failures weighed, the report and the results written
 * (docs/conformance.md, "Checks and levels" to "Results"). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nnn/file.h>
#include <nnn/npy.h>

#include "conformance_kit.h"

/* Room for a why: paths, a message and an answer's problem. */
#define WHY 12000

static const char *const RESULT[] = { [CONF_ANSWERED] = "pass", [CONF_TIMEOUT] = "timeout",
	                              [CONF_CRASHED] = "crashed", [CONF_PROTOCOL] = "protocol" };

/* A case, as the manifest gives it (older manifests: its file, class and
 * valid instead of id, family and expect). */
typedef struct kcase {
	const char *id, *family, *kind, *code, *path;
	char file[4400];
	int accept, has_offset;
	long long offset;
	json_t *shape, *run;
} kcase_t;

/* One request's outcome: the answer, or why there is none. */
typedef struct asked {
	int result; /* CONF_* */
	int offered;
	json_t *ans;
	char why[1536];
} asked_t;

typedef struct kit {
	const conf_kit_opts_t *o;
	conf_testee_t t;
	json_t *cases; /* results: one per case */
	int n_out;     /* files the testee wrote, named apart */
} kit_t;

static int read_case(const conf_kit_opts_t *o, json_t *c, kcase_t *k)
{
	char id[4400];
	const char *file = json_string_value(json_object_get(c, "file"));
	const char *expect = json_string_value(json_object_get(c, "expect"));
	json_t *off = json_object_get(c, "offset");
	if (!file)
		return 0;
	memset(k, 0, sizeof *k);
	snprintf(k->file, sizeof k->file, "%s/%s", o->kit, file);
	k->id = json_string_value(json_object_get(c, "id"));
	if (!k->id) {
		/* the file's path without .nnn */
		snprintf(id, sizeof id, "%.*s", (int)(strlen(file) > 4 && !strcmp(file + strlen(file) - 4, ".nnn")
		                                                ? strlen(file) - 4 : strlen(file)), file);
		json_object_set_new(c, "id", json_string(id));
		k->id = json_string_value(json_object_get(c, "id"));
	}
	k->family = json_string_value(json_object_get(c, "family"));
	if (!k->family)
		k->family = json_string_value(json_object_get(c, "class"));
	if (!k->family)
		k->family = "?";
	k->accept = expect ? !strcmp(expect, "accept") : json_is_true(json_object_get(c, "valid"));
	k->kind = json_string_value(json_object_get(c, "kind"));
	if (!k->kind)
		k->kind = k->accept ? "valid" : "structural";
	k->code = json_string_value(json_object_get(c, "code"));
	k->path = json_string_value(json_object_get(c, "path"));
	k->has_offset = json_is_integer(off);
	k->offset = k->has_offset ? json_integer_value(off) : -1;
	k->shape = json_object_get(c, "input_shape");
	k->run = json_object_get(c, "run");
	return 1;
}

/* Asks op of the testee (unless it does not offer it); req is taken. */
static asked_t ask(kit_t *k, const char *op, json_t *req)
{
	asked_t a = { .offered = conf_testee_offers(&k->t, op) };
	if (!a.offered) {
		json_decref(req);
		a.result = CONF_ANSWERED;
		snprintf(a.why, sizeof a.why, "the testee does not offer `%s` (not in its hello's ops)", op);
		return a;
	}
	json_object_set_new(req, "op", json_string(op));
	a.result = conf_testee_ask(&k->t, req, &a.ans, a.why, sizeof a.why);
	if (a.result == CONF_ANSWERED && json_is_true(json_object_get(a.ans, "unsupported")))
		a.offered = 0, snprintf(a.why, sizeof a.why, "the testee answered `%s` as unsupported: %s", op,
		                        json_string_value(json_object_get(a.ans, "message")) ?
		                        json_string_value(json_object_get(a.ans, "message")) : "(no message)");
	return a;
}

static void check(json_t *checks, const char *name, const char *result, const char *why)
{
	json_t *c = json_pack("{s:s}", "result", result);
	if (why)
		json_object_set_new(c, "why", json_string(why));
	json_object_set_new(checks, name, c);
}

/* The failure a check inherits from its request, when there is one: 1. */
static int unanswered(json_t *checks, const char *name, const asked_t *a)
{
	if (a->result != CONF_ANSWERED)
		check(checks, name, RESULT[a->result], a->why);
	else if (!a->offered)
		check(checks, name, "fail", a->why);
	return a->result != CONF_ANSWERED || !a->offered;
}

/* "E_TRUNCATED at layers[0].bias, offset 12: message" of an answer's first problem. */
static const char *problem(const json_t *ans, char *buf, size_t size)
{
	const char *code = json_string_value(json_object_get(ans, "code"));
	const char *path = json_string_value(json_object_get(ans, "path"));
	const char *msg = json_string_value(json_object_get(ans, "message"));
	json_t *off = json_object_get(ans, "offset");
	char at[32] = "unknown";
	if (json_is_integer(off))
		snprintf(at, sizeof at, "%lld", (long long)json_integer_value(off));
	snprintf(buf, size, "%s at %s%s, offset %s%s%s", code ? code : "(no code)", path && path[0] ? "" : "the file",
	         path ? path : "", at, msg ? ": " : "", msg ? msg : "");
	return buf;
}

/* "E_TRUNCATED at magic, offset 0": the problem a case is about. */
static const char *expected(const kcase_t *c, char *buf, size_t size)
{
	snprintf(buf, size, "%s at %s%s, offset %lld", c->code ? c->code : "?", c->path && c->path[0] ? "" : "the file",
	         c->path ? c->path : "", c->offset);
	return buf;
}

/* decode and verdict: refused exactly when `refuse`. */
static void verdict(json_t *checks, const char *name, const kcase_t *c, const asked_t *a, int refuse)
{
	char buf[1200], exp[700], why[WHY];
	if (unanswered(checks, name, a))
		return;
	int ok = json_is_true(json_object_get(a->ans, "ok"));
	if (ok != refuse)
		return check(checks, name, "pass", NULL);
	if (ok)
		snprintf(why, sizeof why, "accepted a file it must refuse (the case is about %s)", expected(c, exp, sizeof exp));
	else
		snprintf(why, sizeof why, "refused a file it must accept: %s", problem(a->ans, buf, sizeof buf));
	check(checks, name, "fail", why);
}

/* Whether problem p (an answer or one of its problems) is the case's. */
static int same_problem(const kcase_t *c, const json_t *p)
{
	const char *code = json_string_value(json_object_get(p, "code"));
	const char *path = json_string_value(json_object_get(p, "path"));
	json_t *off = json_object_get(p, "offset");
	return code && c->code && !strcmp(code, c->code) && !strcmp(path ? path : "", c->path ? c->path : "") &&
	       (!c->has_offset || (json_is_integer(off) && json_integer_value(off) == c->offset));
}

/* Whether the case's problem is among an answer's (the first alone when
 * `first`, or when it lists no problems). */
static int reports(const kcase_t *c, const json_t *ans, int first)
{
	size_t i;
	json_t *p, *all = json_object_get(ans, "problems");
	if (same_problem(c, ans))
		return 1;
	json_array_foreach(all, i, p) {
		if (!first && same_problem(c, p))
			return 1;
	}
	return 0;
}

/* error (an invalid case): validate, and for a structural case decode too,
 * report the case's problem (first, for a structural case). */
static void error_check(json_t *checks, const kcase_t *c, const asked_t *dec, const asked_t *val)
{
	char buf[1200], exp[700], why[WHY];
	int structural = !strcmp(c->kind, "structural");
	const asked_t *a[2] = { val, dec };
	const char *op[2] = { "validate", "decode" };
	for (int i = 0; i < 1 + structural; i++) {
		if (unanswered(checks, "error", a[i]))
			return;
		if (json_is_true(json_object_get(a[i]->ans, "ok"))) {
			snprintf(why, sizeof why, "%s accepted it; expected %s", op[i], expected(c, exp, sizeof exp));
			return check(checks, "error", "fail", why);
		}
		if (!reports(c, a[i]->ans, structural)) {
			snprintf(why, sizeof why, "%s reported %s; expected %s%s", op[i], problem(a[i]->ans, buf, sizeof buf),
			         expected(c, exp, sizeof exp), structural ? " first" : " among its problems");
			return check(checks, "error", "fail", why);
		}
	}
	check(checks, "error", "pass", NULL);
}

/* A whole file in memory (free it), or NULL with errno. */
static unsigned char *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	unsigned char *b = NULL;
	long len;
	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
	    (b = malloc((size_t)len + 1)) != NULL && fread(b, 1, (size_t)len, f) != (size_t)len) {
		free(b);
		b = NULL;
		errno = EIO;
	}
	*n = b ? (size_t)len : 0;
	fclose(f);
	return b;
}

/* roundtrip: the file encode wrote is the case's, byte for byte. */
static void roundtrip(json_t *checks, const kcase_t *c, const asked_t *a, const char *out)
{
	char buf[1200], why[WHY];
	size_t n_got, n_want, i;
	if (unanswered(checks, "roundtrip", a))
		return;
	if (!json_is_true(json_object_get(a->ans, "ok"))) {
		snprintf(why, sizeof why, "encode refused it: %s", problem(a->ans, buf, sizeof buf));
		return check(checks, "roundtrip", "fail", why);
	}
	unsigned char *got = slurp(out, &n_got), *want = slurp(c->file, &n_want);
	if (!got || !want)
		snprintf(why, sizeof why, "cannot read %s: %s", got ? c->file : out, strerror(errno));
	for (i = 0; got && want && i < n_got && i < n_want && got[i] == want[i]; i++)
		;
	if (got && want && i < n_got && i < n_want)
		snprintf(why, sizeof why, "first difference at byte offset %zu: 0x%02x, expected 0x%02x (%zu bytes written, "
		         "the case has %zu)", i, got[i], want[i], n_got, n_want);
	else if (got && want && n_got != n_want)
		snprintf(why, sizeof why, "first difference at byte offset %zu: %zu bytes written, the case has %zu", i,
		         n_got, n_want);
	check(checks, "roundtrip", got && want && n_got == n_want && i == n_got ? "pass" : "fail",
	      got && want && n_got == n_want && i == n_got ? NULL : why);
	free(got);
	free(want);
}

/* run: the testee's output has the expected shape and values. */
static void run_check(json_t *checks, const asked_t *a, const char *out, const char *want_path, double tol)
{
	char buf[NNN_PATH_MAX + NNN_MSG_MAX + 512], s1[256], s2[256], at[256], why[WHY];
	nnn_npy_t got = { 0 }, want = { 0 };
	nnn_diags_t d;
	double max_err = 0;
	int pass = 0;
	if (unanswered(checks, "run", a))
		return;
	if (!json_is_true(json_object_get(a->ans, "ok"))) {
		snprintf(why, sizeof why, "run refused it: %s", problem(a->ans, buf, sizeof buf));
		return check(checks, "run", "fail", why);
	}
	nnn_diags_init(&d);
	if (nnn_npy_read_file(out, &got, &d) != NNN_OK) {
		snprintf(why, sizeof why, "its output is not a float32 .npy nnnkit reads: %s",
		         d.n ? nnn_diag_format(&d.v[0], buf, sizeof buf) : "?");
	} else if (nnn_npy_read_file(want_path, &want, &d) != NNN_OK) {
		snprintf(why, sizeof why, "the kit's expected output cannot be read (make the kit again): %s",
		         d.n ? nnn_diag_format(&d.v[0], buf, sizeof buf) : "?");
	} else if (got.shape.rank != want.shape.rank ||
	           memcmp(got.shape.dims, want.shape.dims, sizeof got.shape.dims[0] * (size_t)got.shape.rank)) {
		snprintf(why, sizeof why, "its output has shape %s, expected %s", nnn_shape_format(&got.shape, s1, sizeof s1),
		         nnn_shape_format(&want.shape, s2, sizeof s2));
	} else {
		int64_t bad = conf_mismatch(got.data, want.data, (int64_t)got.count, tol, &max_err), odd = 0;
		char more[96] = "";
		pass = bad < 0;
		/* NaN or infinity where a number is expected: no error to measure, say how many */
		for (size_t i = 0; !pass && i < got.count; i++)
			odd += !isfinite(got.data[i]) && isfinite(want.data[i]);
		if (odd)
			snprintf(more, sizeof more, " (of the finite values; %lld NaN or infinite where a number is expected)",
			         (long long)odd);
		if (!pass)
			snprintf(why, sizeof why, "max abs error %.3g%s; first mismatch at %s: %.9g, expected %.9g (tolerance "
			         "%g * (1 + |expected|))", max_err, more, conf_place(&got.shape, bad, at, sizeof at),
			         (double)got.data[bad], (double)want.data[bad], tol);
	}
	check(checks, "run", pass ? "pass" : "fail", pass ? NULL : why);
	nnn_npy_free(&got);
	nnn_npy_free(&want);
	nnn_diags_free(&d);
}

/* "DIR/rel" of a manifest's relative path, in buf. */
static const char *in_kit(const kit_t *k, const char *rel, char *buf, size_t size)
{
	snprintf(buf, size, "%s/%s", k->o->kit, rel ? rel : "(none)");
	return buf;
}

/* A valid case's roundtrip and run checks. */
static void valid_checks(kit_t *k, json_t *checks, const kcase_t *c)
{
	char out[4400], in[4400], want[4400];
	snprintf(out, sizeof out, "%s/encoded-%d.nnn", k->o->tmpdir, k->n_out++);
	asked_t a = ask(k, "encode", json_pack("{s:s, s:s}", "file", c->file, "output", out));
	roundtrip(checks, c, &a, out);
	json_decref(a.ans);
	unlink(out);
	if (!json_is_object(c->run))
		return;
	json_t *tol = json_object_get(c->run, "tolerance");
	snprintf(out, sizeof out, "%s/output-%d.npy", k->o->tmpdir, k->n_out++);
	in_kit(k, json_string_value(json_object_get(c->run, "input")), in, sizeof in);
	in_kit(k, json_string_value(json_object_get(c->run, "output")), want, sizeof want);
	a = ask(k, "run", json_pack("{s:s, s:s, s:s}", "file", c->file, "input", in, "output", out));
	run_check(checks, &a, out, want, json_is_number(tol) ? json_number_value(tol) : 1e-4);
	json_decref(a.ans);
	unlink(out);
}

static void one_case(kit_t *k, json_t *mc)
{
	kcase_t c;
	if (!read_case(k->o, mc, &c))
		return;
	json_t *checks = json_object(), *vreq = json_pack("{s:s}", "file", c.file);
	asked_t dec = ask(k, "decode", json_pack("{s:s}", "file", c.file));
	verdict(checks, "decode", &c, &dec, !strcmp(c.kind, "structural"));
	if (c.accept && json_is_array(c.shape))
		json_object_set(vreq, "input_shape", c.shape);
	asked_t val = ask(k, "validate", vreq);
	verdict(checks, "verdict", &c, &val, !c.accept);
	if (c.accept)
		valid_checks(k, checks, &c);
	else
		error_check(checks, &c, &dec, &val);
	json_decref(dec.ans);
	json_decref(val.ans);
	json_array_append_new(k->cases, json_pack("{s:s, s:s, s:o, s:n}", "id", c.id, "family", c.family, "checks", checks,
	                                          "known"));
}

/* ---- scoring ---- */

static const char *const LEVEL[2] = { "required", "recommended" };

static int level_of(const char *check)
{
	return !strcmp(check, "error");
}

/* Adds a check's outcome to {"required": {passed, failed, total}, ...}. */
static void tally(json_t *levels, int level, int pass)
{
	json_t *l = json_object_get(levels, LEVEL[level]);
	const char *key[3] = { pass ? "passed" : "failed", "total", NULL };
	for (int i = 0; key[i]; i++)
		json_object_set_new(l, key[i], json_integer(json_integer_value(json_object_get(l, key[i])) + 1));
}

static json_t *new_levels(void)
{
	json_t *l = json_object();
	for (int i = 0; i < 2; i++)
		json_object_set_new(l, LEVEL[i], json_pack("{s:i, s:i, s:i}", "passed", 0, "failed", 0, "total", 0));
	return l;
}

/* The first failing check that counts, or NULL when the case passes. */
static const char *failing(const kit_t *k, json_t *checks, json_t **chk)
{
	const char *name;
	json_t *v;
	json_object_foreach(checks, name, v) {
		if ((!k->o->required_only || !level_of(name)) &&
		    strcmp(json_string_value(json_object_get(v, "result")), "pass")) {
			*chk = v;
			return name;
		}
	}
	return NULL;
}

/* Scores k->cases against the known list into the results. */
static void score(kit_t *k, json_t *known, json_t *res)
{
	json_t *levels = new_levels(), *families = json_object(), *uf = json_array(), *up = json_array(), *c;
	size_t i;
	json_array_foreach(k->cases, i, c) {
		const char *fam = json_string_value(json_object_get(c, "family")), *name, *id;
		json_t *v, *checks = json_object_get(c, "checks"), *first;
		if (!json_object_get(families, fam))
			json_object_set_new(families, fam, new_levels());
		json_object_foreach(checks, name, v) {
			int pass = !strcmp(json_string_value(json_object_get(v, "result")), "pass");
			tally(levels, level_of(name), pass);
			tally(json_object_get(families, fam), level_of(name), pass);
		}
		id = json_string_value(json_object_get(c, "id"));
		json_t *reason = json_object_get(known, id);
		if (reason)
			json_object_set(c, "known", reason);
		if (failing(k, checks, &first) && !reason) {
			json_object_foreach(checks, name, v) {
				if ((!k->o->required_only || !level_of(name)) &&
				    strcmp(json_string_value(json_object_get(v, "result")), "pass"))
					json_array_append_new(uf, json_pack("{s:s, s:s, s:O, s:O*}", "id", id, "check", name, "result",
					                                    json_object_get(v, "result"), "why",
					                                    json_object_get(v, "why")));
			}
		} else if (!failing(k, checks, &first) && reason) {
			json_array_append_new(up, json_pack("{s:s, s:O}", "id", id, "known", reason));
		}
	}
	json_object_set_new(res, "level", json_string(LEVEL[!k->o->required_only]));
	json_object_set_new(res, "levels", levels);
	json_object_set_new(res, "families", families);
	json_object_set(res, "cases", k->cases);
	json_object_set_new(res, "unexpected_failures", uf);
	json_object_set_new(res, "unexpected_passes", up);
	json_object_set_new(res, "ok", json_boolean(!json_array_size(uf) && !json_array_size(up)));
}

/* ---- the known failures ---- */

/* s with its leading and trailing blanks cut (in place). */
static char *trim(char *s)
{
	char *e;
	while (*s == ' ' || *s == '\t')
		s++;
	for (e = s + strlen(s); e > s && strchr(" \t\r\n", e[-1]); e--)
		;
	*e = '\0';
	return s;
}

/* The list as {id: reason} ("" when a line gives none; none at all when
 * it does not exist yet and `fix` will write it), or NULL after saying on
 * stderr why it cannot be used. */
static json_t *read_known(const char *path, int fix, cli_env_t *env)
{
	char line[4096];
	FILE *f = fopen(path, "r");
	if (!f && errno == ENOENT && fix)
		return json_object(); /* --fix makes it */
	if (!f) {
		cli_fail_text(env, path, EXIT_USAGE, "%s (--known-failures: one case id a line, '# reason' after it)",
		              strerror(errno));
		return NULL;
	}
	json_t *known = json_object();
	while (fgets(line, sizeof line, f)) {
		char *s = trim(line), *hash = strchr(s, '#');
		if (hash)
			*hash = '\0';
		char *id = trim(s), *end = id + strcspn(id, " \t");
		if (!id[0])
			continue;
		*end = '\0';
		json_object_set_new(known, id, json_string(hash ? trim(hash + 1) : ""));
	}
	fclose(f);
	return known;
}

/* Whether the manifest's cases hold one with this id. */
static int has_case(const json_t *cases, const char *id)
{
	size_t i;
	json_t *c;
	json_array_foreach(cases, i, c) {
		const char *cid = json_string_value(json_object_get(c, "id"));
		if (cid && !strcmp(cid, id))
			return 1;
	}
	return 0;
}

/* Ids of the list that are no case of the kit: the first few said on
 * stderr; their count. */
static int strangers(json_t *known, const json_t *cases, const char *path)
{
	const char *id;
	json_t *v;
	int n = 0;
	json_object_foreach(known, id, v) {
		if (!has_case(cases, id) && n++ < 5)
			cli_say(stderr, "nnnkit: %s: '%s' is no case of the kit (a list for another kit? remove it, or "
			        "--fix)\n", path, id);
	}
	return n;
}

/* The list's leading comment and blank lines, which --fix keeps (a header
 * of our own for a new list) into text; their length. */
static size_t list_header(const char *path, char *text, size_t cap)
{
	char line[1024];
	size_t len = 0;
	FILE *f = fopen(path, "r");
	while (f && fgets(line, sizeof line, f)) {
		const char *s = line + strspn(line, " \t");
		size_t n = strlen(line);
		if ((*s != '#' && *s != '\n' && *s) || len + n + 1 > cap)
			break;
		memcpy(text + len, line, n), len += n;
	}
	if (f)
		fclose(f);
	if (!len)
		len = (size_t)snprintf(text, cap, "# Known failures: one case id a line, then '# reason'.\n"
		                                  "# Written by nnnkit conformance --fix.\n");
	return len;
}

/* Rewrites the list to exactly the failing cases, in the kit's order,
 * after its leading comments. */
static int fix(const kit_t *k, const json_t *known, const char *path)
{
	size_t i, cap = 8192, len = 0;
	char *text = malloc(cap);
	json_t *c, *first;
	int n = 0, added = 0;
	if (text)
		len = list_header(path, text, cap);
	json_array_foreach(k->cases, i, c) {
		const char *id = json_string_value(json_object_get(c, "id"));
		const char *name = failing(k, json_object_get(c, "checks"), &first);
		if (!name || !text)
			continue;
		json_t *r = json_object_get(known, id);
		const char *why = json_string_value(json_object_get(first, "why"));
		char line[2400];
		int m = r ? snprintf(line, sizeof line, "%s%s%s\n", id, json_string_length(r) ? "  # " : "",
		                     json_string_value(r))
		          : snprintf(line, sizeof line, "%s  # %s: %s%s%s\n", id, name,
		                     json_string_value(json_object_get(first, "result")), why ? ": " : "", why ? why : "");
		m = m < (int)sizeof line ? m : (int)sizeof line - 1;
		for (int j = 0; j < m - 1; j++)
			line[j] = line[j] == '\n' || line[j] == '\r' ? ' ' : line[j];
		line[m - 1] = '\n';
		while (text && len + (size_t)m + 1 > cap) {
			char *t = realloc(text, cap *= 2);
			if (!t)
				free(text);
			text = t;
		}
		if (text)
			memcpy(text + len, line, (size_t)m), len += (size_t)m;
		n++, added += !r;
	}
	nnn_diags_t d;
	nnn_diags_init(&d);
	nnn_status_t st = text ? nnn_write_atomic_bytes(path, text, len, &d) : NNN_E_NOMEM;
	free(text);
	if (st == NNN_OK)
		cli_say(stderr, "nnnkit: %s: rewritten: %d failing case%s (%d added, %d removed)\n", path, n, n == 1 ? "" : "s",
		        added, (int)json_object_size(known) - (n - added));
	else
		cli_report(NULL, path, &d, st);
	nnn_diags_free(&d);
	return st == NNN_OK;
}

/* ---- the report ---- */

static void score_cell(json_t *l, char *buf, size_t size)
{
	long p = (long)json_integer_value(json_object_get(l, "passed")), t = (long)json_integer_value(json_object_get(l, "total"));
	if (t)
		snprintf(buf, size, "%ld/%ld %ld.%ld%%", p, t, 1000 * p / t / 10, 1000 * p / t % 10); /* floored: 99.96 % is not 100.0 % */
	else
		snprintf(buf, size, "-");
}

static void report(const kit_t *k, json_t *res)
{
	const json_t *h = json_object_get(res, "testee"), *lv = json_object_get(res, "levels");
	json_t *v, *uf = json_object_get(res, "unexpected_failures"), *up = json_object_get(res, "unexpected_passes");
	const char *name;
	char cell[2][64];
	size_t i;
	char *ops = json_dumps(json_object_get(h, "ops"), JSON_COMPACT);
	cli_say(stdout, "testee: %s: %s %s, ops %s\n", k->o->testee, json_string_value(json_object_get(h, "name")),
	        json_string_value(json_object_get(h, "version")), ops ? ops : "?");
	free(ops);
	cli_say(stdout, "kit: %s%s\n\n", k->o->kit, k->o->required_only ? " (--level required: recommended checks not counted)" : "");
	printf("%-12s %8s %8s %8s\n", "level", "passed", "total", "percent");
	for (int l = 0; l < 2; l++) {
		json_t *s = json_object_get(lv, LEVEL[l]);
		long p = (long)json_integer_value(json_object_get(s, "passed")), t = (long)json_integer_value(json_object_get(s, "total"));
		printf("%-12s %8ld %8ld %7.1f%%\n", LEVEL[l], p, t, t ? 100.0 * (double)p / (double)t : 100.0);
	}
	printf("\n%-12s %-20s %-20s\n", "family", "required", "recommended");
	json_object_foreach(json_object_get(res, "families"), name, v) {
		score_cell(json_object_get(v, "required"), cell[0], sizeof cell[0]);
		score_cell(json_object_get(v, "recommended"), cell[1], sizeof cell[1]);
		cli_say(stdout, "%-12s %-20s %-20s\n", name, cell[0], cell[1]);
	}
	printf("\nunexpected failures: %zu\n", json_array_size(uf));
	json_array_foreach(uf, i, v) {
		if (i < 20)
			cli_say(stdout, "  %s: %s: %s%s%s\n", json_string_value(json_object_get(v, "id")),
			        json_string_value(json_object_get(v, "check")), json_string_value(json_object_get(v, "result")),
			        json_object_get(v, "why") ? ": " : "", json_object_get(v, "why") ? json_string_value(json_object_get(v, "why")) : "");
	}
	if (json_array_size(uf) > 20)
		printf("  ... and %zu more (--results FILE or --json lists all)\n", json_array_size(uf) - 20);
	printf("unexpected passes: %zu\n", json_array_size(up));
	json_array_foreach(up, i, v)
		cli_say(stdout, "  %s: listed as a known failure but passes: remove it (or --fix)\n",
		        json_string_value(json_object_get(v, "id")));
	for (int l = 0; l < 2; l++) {
		json_t *s = json_object_get(lv, LEVEL[l]);
		snprintf(cell[l], sizeof cell[l], "%lld/%lld", json_integer_value(json_object_get(s, "passed")),
		         json_integer_value(json_object_get(s, "total")));
	}
	printf("required %s, recommended %s: %s\n", cell[0], cell[1],
	       json_is_true(json_object_get(res, "ok")) ? "ok" : "FAILED");
}

/* The results' head: kit, schema and testee. */
static json_t *results_head(const kit_t *k, const json_t *m)
{
	const json_t *h = k->t.hello;
	json_t *kit = json_object_get(m, "kit"), *schema = json_object_get(m, "schema");
	return json_pack("{s:s, s:O, s:O, s:{s:s, s:O, s:O, s:O}}", "runner", "nnnkit conformance", "kit",
	                 kit ? kit : json_null(), "schema",
	                 schema ? schema : json_null(), "testee", "command", k->o->testee, "name",
	                 json_object_get(h, "name") ? json_object_get(h, "name") : json_null(), "version",
	                 json_object_get(h, "version") ? json_object_get(h, "version") : json_null(), "ops",
	                 json_object_get(h, "ops"));
}

static int write_results(const char *path, const json_t *res)
{
	char *text = json_dumps(res, JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII);
	size_t n = text ? strlen(text) : 0;
	char *t = text ? realloc(text, n + 2) : NULL;
	nnn_status_t st = NNN_E_NOMEM;
	nnn_diags_t d;
	nnn_diags_init(&d);
	if (t) {
		text = t;
		text[n] = '\n', text[n + 1] = '\0';
		st = nnn_write_atomic_bytes(path, text, n + 1, &d);
	}
	free(text);
	if (st != NNN_OK)
		cli_report(NULL, path, &d, st);
	nnn_diags_free(&d);
	return st == NNN_OK;
}

int conf_kit_run(const conf_kit_opts_t *o, json_t *m, cli_env_t *env)
{
	kit_t k = { .o = o, .t = { .cmd = o->testee, .timeout = o->timeout, .next_id = 0 } };
	json_t *cases = json_object_get(m, "cases"), *c, *known = NULL;
	char why[2048];
	size_t i;
	kcase_t kc;
	json_array_foreach(cases, i, c)
		read_case(o, c, &kc); /* every case gets its id: the list is checked against them */
	if (o->known && !(known = read_known(o->known, o->fix, env)))
		return EXIT_USAGE;
	if (known && !o->fix && strangers(known, cases, o->known)) {
		json_decref(known);
		return EXIT_USAGE;
	}
	snprintf(k.t.err, sizeof k.t.err, "%s/testee.stderr", o->tmpdir);
	if (conf_testee_start(&k.t, why, sizeof why) != CONF_ANSWERED) {
		cli_fail_text(env, "conformance", EXIT_USAGE, "the testee cannot be used: %s: %s", o->testee, why);
		json_decref(known);
		conf_testee_stop(&k.t);
		unlink(k.t.err);
		return EXIT_USAGE;
	}
	k.cases = json_array();
	cli_progress_t pr;
	cli_progress_start(&pr, cli_progress_wanted(env->progress), "conformance", "cases", json_array_size(cases));
	json_array_foreach(cases, i, c) {
		one_case(&k, c);
		cli_progress_update(&pr, i + 1);
	}
	cli_progress_end(&pr);
	json_t *res = results_head(&k, m);
	if (!known)
		known = json_object();
	score(&k, known, res);
	conf_testee_stop(&k.t);
	unlink(k.t.err);
	int ok = json_is_true(json_object_get(res, "ok"));
	if (o->json) {
		json_dumpf(res, stdout, JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII);
		putchar('\n');
		env->json_done = 1;
	} else {
		report(&k, res);
	}
	int written = (!o->results || write_results(o->results, res)) && (!o->fix || fix(&k, known, o->known));
	json_decref(res);
	json_decref(k.cases);
	json_decref(known);
	return !written ? EXIT_USAGE : ok ? EXIT_VALID : EXIT_INVALID;
}
