/* test_testee.c: the testees of the conformance kit written in C, `nnnkit
 * testee` (libnnn) and `lenient --testee` (a reader that forgives two
 * problems), each in one session over the conformance corpus
 * (build/conformance): requests in a file on stdin, one answer a line.
 * The cases come from the corpus's manifest; the truth from the manifest
 * (code, path, offset), the corpus's bytes (encode), `nnnkit run` (run)
 * and `nnnkit validate --json` (every problem), never from the testee. */
#define _DEFAULT_SOURCE /* realpath */
#include <criterion/criterion.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nnn/npy.h>
#include <nnn/run.h>
#include <nnn/validate.h>

#include "blackbox.h"
#include "ctx.h"
#include "manifest.h"
#include "shell.h"
#include "tmpdir.h"

#define PFX "nnntestee."

TestSuite(testee, .fini = t_tmpdir_remove, .timeout = 300);

/* The corpus, by its absolute path (requests name absolute paths). */
static const char *corpus(void)
{
	static char dir[PATH_MAX];
	cr_assert_not_null(realpath(t_fmt("%s/conformance", t_build_dir()), dir), "no conformance corpus in %s",
	                   t_build_dir());
	return dir;
}

static const char *case_path(const t_mcase_t *c)
{
	return t_fmt("%s/%s", corpus(), c->file);
}

/* ---- a session: requests written to a file, then one testee run ---- */

typedef struct session {
	FILE *req;
	char path[PATH_MAX];
	int n; /* lines that get an answer */
} session_t;

static session_t open_session(const char *name)
{
	session_t s = { .req = NULL };
	snprintf(s.path, sizeof s.path, "%s", t_tmppath(PFX, name));
	s.req = fopen(s.path, "w");
	cr_assert_not_null(s.req, "%s", s.path);
	return s;
}

/* A request (taken), on its line. */
static void ask(session_t *s, json_t *req)
{
	char *text = json_dumps(req, JSON_COMPACT);
	cr_assert_not_null(text);
	fprintf(s->req, "%s\n", text);
	free(text);
	json_decref(req);
	s->n++;
}

/* A line as it is; `answered`: whether it gets an answer. */
static void ask_raw(session_t *s, const char *line, int answered)
{
	fprintf(s->req, "%s\n", line);
	s->n += answered;
}

/* Runs CMD (a testee) with the session's requests on stdin: the answers, one
 * a line, parsed (free with free_answers); the testee must have exited 0 at
 * the end of stdin, answering every request that gets an answer. */
static json_t **run_session(session_t *s, const char *cmd)
{
	if (s->req)
		cr_assert_eq(fclose(s->req), 0);
	s->req = NULL; /* the same requests may go to another testee */
	t_run_t r = t_run_in(t_tmpdir(PFX), "%s < '%s'", cmd, s->path);
	cr_assert_eq(r.status, 0, "%s: exit %d at the end of stdin\n%s", cmd, r.status, r.err);
	json_t **a = calloc((size_t)s->n + 1, sizeof *a);
	int k = 0;
	cr_assert_not_null(a);
	for (char *save = NULL, *line = strtok_r(r.out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		json_error_t e;
		cr_assert_lt(k, s->n, "%s: more answers than the %d requests: %s", cmd, s->n, line);
		a[k] = json_loads(line, 0, &e);
		cr_assert(json_is_object(a[k]), "%s: answer %d is not one JSON object (%s): %s", cmd, k + 1, e.text, line);
		k++;
	}
	cr_assert_eq(k, s->n, "%s: %d answers to %d requests\n%s", cmd, k, s->n, r.err);
	t_run_free(&r);
	return a;
}

static void free_answers(json_t **a, int n)
{
	for (int i = 0; i < n; i++)
		json_decref(a[i]);
	free(a);
}

static const char *str(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

/* The answer to request `id`: it is answers[id - 1], repeating the id. */
static const json_t *answer(json_t **a, int id)
{
	const json_t *x = a[id - 1];
	cr_assert_eq(json_integer_value(json_object_get(x, "id")), id, "answer %d has id %s", id,
	             json_dumps(json_object_get(x, "id"), JSON_ENCODE_ANY));
	return x;
}

static int ok(const json_t *x)
{
	cr_assert(json_is_boolean(json_object_get(x, "ok")), "no \"ok\" in %s", json_dumps(x, 0));
	return json_is_true(json_object_get(x, "ok"));
}

/* A refusal as protocol 1 says it: the first problem on top, equal to
 * problems[0] when problems are given. */
static void refusal(const json_t *x, const char *what)
{
	char *text = json_dumps(x, 0);
	cr_assert(!ok(x), "%s: accepted: %s", what, text);
	cr_assert(str(x, "code") && str(x, "message") && *str(x, "message"), "%s: no code or message: %s", what, text);
	cr_assert(json_object_get(x, "path") && json_object_get(x, "offset"), "%s: no path or offset: %s", what, text);
	json_t *p = json_object_get(x, "problems");
	if (p) {
		json_t *first = json_array_get(p, 0);
		cr_assert_not_null(first, "%s: problems empty: %s", what, text);
		const char *keys[] = { "code", "path", "offset", "message" };
		for (size_t k = 0; k < 4; k++)
			cr_assert(json_equal(json_object_get(first, keys[k]), json_object_get(x, keys[k])),
			          "%s: %s on top is not problems[0]'s: %s", what, keys[k], text);
	}
	free(text);
}

/* Whether problem p is at code, path, offset (-1: null). */
static int at(const json_t *p, const char *code, const char *path, long long offset)
{
	const json_t *o = json_object_get(p, "offset");
	return !strcmp(str(p, "code"), code) && !strcmp(str(p, "path"), path) &&
	       (offset < 0 ? json_is_null(o) : json_integer_value(o) == offset);
}

static json_t *req(int id, const char *op, const char *file)
{
	return json_pack("{s:i, s:s, s:s}", "id", id, "op", op, "file", file);
}

static json_t *shape_json(const nnn_shape_t *s)
{
	json_t *a = json_array();
	for (int32_t i = 0; i < s->rank; i++)
		json_array_append_new(a, json_integer(s->dims[i]));
	return a;
}

/* An input of 3 samples of the case's input shape, values from a formula. */
static const char *write_input(const t_mcase_t *c, int id)
{
	nnn_shape_t s = c->input;
	s.dims[0] = 3;
	int64_t n = nnn_shape_numel(&s);
	float *x = malloc((size_t)n * sizeof *x + 1);
	cr_assert_not_null(x);
	for (int64_t i = 0; i < n; i++)
		x[i] = (float)sin(0.37 * (double)i + id) * 1.5f;
	const char *path = t_tmppath(PFX, t_fmt("in%d.npy", id));
	cr_assert_eq(nnn_npy_write_file(path, &s, x, NULL), NNN_OK);
	free(x);
	return path;
}

/* Every problem nnnkit validate --json reports for each of n files (the
 * "problems" array of each report, in order), from one shell. */
static json_t *validate_json(const char *const *files, size_t n, const char *shape)
{
	char list[PATH_MAX], out[PATH_MAX];
	snprintf(list, sizeof list, "%s", t_tmppath(PFX, "list"));
	snprintf(out, sizeof out, "%s", t_tmppath(PFX, "reports"));
	FILE *f = fopen(list, "w");
	cr_assert_not_null(f);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s\n", files[i]);
	fclose(f);
	t_run_t r = t_run_in(t_tmpdir(PFX), "while read -r f; do '%s' validate --json %s%s \"$f\"; done < '%s' > '%s'",
	                     nnnkit_bin(), shape ? "--input-shape " : "", shape ? shape : "", list, out);
	t_run_free(&r);
	size_t len, pos = 0;
	char *text = t_slurp(out, &len);
	cr_assert_not_null(text);
	json_t *all = json_array();
	for (size_t i = 0; i < n; i++) {
		json_error_t e;
		json_t *rep = json_loadb(text + pos, len - pos, JSON_DISABLE_EOF_CHECK, &e);
		cr_assert_not_null(rep, "nnnkit validate --json %s: not JSON (%s)", files[i], e.text);
		cr_assert_str_eq(str(rep, "file"), files[i]);
		json_array_append(all, json_object_get(rep, "problems"));
		json_decref(rep);
		pos += e.position;
	}
	free(text);
	return all;
}

/* The testee's problems are validate --json's: code, path, offset, message. */
static void same_problems(const json_t *got, const json_t *want, const char *file)
{
	size_t i;
	const json_t *w;
	cr_assert_eq(json_array_size(got), json_array_size(want), "%s: %zu problems, validate --json %zu", file,
	             json_array_size(got), json_array_size(want));
	json_array_foreach(want, i, w) {
		const json_t *g = json_array_get(got, i), *wo = json_object_get(w, "offset");
		cr_assert(at(g, str(w, "code"), str(w, "path"), wo ? json_integer_value(wo) : -1) &&
		                  !strcmp(str(g, "message"), str(w, "message")),
		          "%s: problem %zu is %s, validate --json says %s", file, i, json_dumps(g, 0), json_dumps(w, 0));
	}
}

static void same_bytes(const char *got, const char *want, const char *what)
{
	size_t n1, n2;
	char *a = t_slurp(got, &n1), *b = t_slurp(want, &n2);
	cr_assert(a && b && n1 == n2 && !memcmp(a, b, n1), "%s: %s is not %s byte for byte", what, got, want);
	free(a);
	free(b);
}

/* `nnnkit run MODEL --input X -o Y` for each line "MODEL X Y" of the file
 * `runs` (closed here), from one shell: the exit codes, in order. */
static int *reference_runs(FILE *runs)
{
	char list[PATH_MAX];
	cr_assert_eq(fflush(runs), 0);
	snprintf(list, sizeof list, "%s", t_tmppath(PFX, "runs"));
	rewind(runs);
	size_t n = 0;
	for (int ch; (ch = fgetc(runs)) != EOF;)
		n += ch == '\n';
	fclose(runs);
	t_run_t r = t_run_in(t_tmpdir(PFX), "while read -r m x y; do '%s' run \"$m\" --input \"$x\" -o \"$y\" 2>/dev/null; "
	                     "echo $?; done < '%s'", nnnkit_bin(), list);
	int *codes = calloc(n + 1, sizeof *codes);
	size_t k = 0;
	cr_assert_not_null(codes);
	for (char *save = NULL, *t = strtok_r(r.out, "\n", &save); t && k < n; t = strtok_r(NULL, "\n", &save))
		codes[k++] = atoi(t);
	cr_assert_eq(k, n, "nnnkit run: %zu exit codes for %zu runs\n%s", k, n, r.err);
	t_run_free(&r);
	return codes;
}

/* ---- nnnkit testee over the corpus ---- */

/* hello; every structural case decoded (the manifest's code, path and
 * offset, first); every semantic case decoded (accepted) and validated
 * (its problem among them); every valid case validated with its input
 * shape, encoded (the case's bytes) and run (nnnkit run's bytes). */
Test(testee, libnnn_over_the_corpus)
{
	t_manifest_t m = t_manifest_load(corpus());
	session_t s = open_session("corpus.req");
	char runs_path[PATH_MAX];
	snprintf(runs_path, sizeof runs_path, "%s", t_tmppath(PFX, "runs"));
	FILE *runs = fopen(runs_path, "w+");
	cr_assert_not_null(runs);
	int id = 0, first_id[3] = { 0 }; /* each kind's first request */
	const char *kinds[3] = { "structural", "semantic", "valid" };
	ask(&s, json_pack("{s:i, s:s, s:i}", "id", ++id, "op", "hello", "protocol", 1));
	for (int k = 0; k < 3; k++) {
		first_id[k] = id + 1;
		for (size_t i = 0; i < m.n; i++) {
			const t_mcase_t *c = &m.cases[i];
			if (strcmp(c->kind, kinds[k]))
				continue;
			ask(&s, req(++id, "decode", case_path(c)));
			if (k == 0)
				continue;
			json_t *v = req(++id, "validate", case_path(c));
			if (k == 2)
				json_object_set_new(v, "input_shape", shape_json(&c->input));
			ask(&s, v);
			if (k == 1)
				continue;
			json_t *e = req(++id, "encode", case_path(c));
			json_object_set_new(e, "output", json_string(t_tmppath(PFX, t_fmt("enc%d.nnn", id))));
			ask(&s, e);
			json_t *r = req(++id, "run", case_path(c));
			json_object_set_new(r, "input", json_string(write_input(c, id)));
			json_object_set_new(r, "output", json_string(t_tmppath(PFX, t_fmt("out%d.npy", id))));
			ask(&s, r);
			fprintf(runs, "%s %s %s\n", case_path(c), t_tmppath(PFX, t_fmt("in%d.npy", id)),
			        t_tmppath(PFX, t_fmt("ref%d.npy", id)));
		}
	}
	json_t **a = run_session(&s, t_fmt("'%s' testee", nnnkit_bin()));
	int *ref = reference_runs(runs), nref = 0;

	const json_t *hello = answer(a, 1);
	cr_assert(ok(hello) && !strcmp(str(hello, "name"), "libnnn") &&
	          json_integer_value(json_object_get(hello, "protocol")) == 1, "%s", json_dumps(hello, 0));
	char version[256];
	cr_assert_eq(t_sh(version, sizeof version, "'%s' --version", nnnkit_bin()), 0);
	cr_assert(!strncmp(version + 7, str(hello, "version"), strlen(str(hello, "version"))) &&
	          version[7 + strlen(str(hello, "version"))] == ' ', "hello's version %s is not nnnkit's: %s",
	          str(hello, "version"), version);
	json_t *ops = json_pack("[ssss]", "decode", "validate", "encode", "run");
	cr_assert(json_equal(json_object_get(hello, "ops"), ops), "%s", json_dumps(hello, 0));
	json_decref(ops);

	int counts[3] = { 0 };
	for (int k = 0; k < 3; k++) {
		id = first_id[k];
		for (size_t i = 0; i < m.n; i++) {
			const t_mcase_t *c = &m.cases[i];
			if (strcmp(c->kind, kinds[k]))
				continue;
			counts[k]++;
			const json_t *d = answer(a, id++);
			if (k == 0) {
				refusal(d, c->file);
				cr_assert(at(d, c->code, c->path, c->offset), "decode %s: %s; the manifest says %s at \"%s\" @%lld",
				          c->file, json_dumps(d, 0), c->code, c->path, c->offset);
				continue;
			}
			cr_assert(ok(d), "decode %s: %s", c->file, json_dumps(d, 0));
			const json_t *v = answer(a, id++);
			if (k == 1) {
				refusal(v, c->file);
				size_t j, found = 0;
				const json_t *p;
				json_array_foreach(json_object_get(v, "problems"), j, p)
					found += at(p, c->code, c->path, c->offset);
				cr_assert_eq(found, 1, "validate %s: %s; the manifest says %s at \"%s\" @%lld", c->file,
				             json_dumps(v, 0), c->code, c->path, c->offset);
				continue;
			}
			cr_assert(ok(v), "validate %s --input-shape %s: %s", c->file, c->input_text, json_dumps(v, 0));
			/* encode: exactly the case's bytes */
			const json_t *e = answer(a, id);
			cr_assert(ok(e), "encode %s: %s", c->file, json_dumps(e, 0));
			same_bytes(t_tmppath(PFX, t_fmt("enc%d.nnn", id)), case_path(c), t_fmt("encode %s", c->file));
			id++;
			/* run: nnnkit run's bytes, or its failure */
			const json_t *r = answer(a, id);
			int st = ref[nref++];
			cr_assert_eq(ok(r), st == 0, "run %s: %s; nnnkit run exits %d", c->file, json_dumps(r, 0), st);
			if (st == 0)
				same_bytes(t_tmppath(PFX, t_fmt("out%d.npy", id)), t_tmppath(PFX, t_fmt("ref%d.npy", id)),
				           t_fmt("run %s: the output is not nnnkit run's", c->file));
			id++;
		}
	}
	cr_assert(counts[0] > 100 && counts[1] > 5 && counts[2] > 5, "too few cases: %d structural, %d semantic, %d valid",
	          counts[0], counts[1], counts[2]);
	free(ref);
	free_answers(a, s.n);
	t_manifest_free(&m);
}

/* A wrong input shape: what nnnkit validate --json --input-shape says. */
static void wrong_shape(session_t *s, int id, const t_mcase_t *c, nnn_shape_t *bad)
{
	*bad = c->input;
	bad->dims[bad->rank - 1] += 1;
	json_t *v = req(id, "validate", case_path(c));
	json_object_set_new(v, "input_shape", shape_json(bad));
	ask(s, v);
}

/* Requests that cannot be served are answered, with a message, and the
 * session goes on; so are files that are missing or not what they should
 * be; a wrong input shape is libnnn's problem. Both testees. */
Test(testee, bad_requests_are_answered_and_the_session_goes_on)
{
	t_manifest_t m = t_manifest_load(corpus());
	const t_mcase_t *valid = NULL;
	for (size_t i = 0; i < m.n && !valid; i++)
		valid = !strcmp(m.cases[i].kind, "valid") ? &m.cases[i] : NULL;
	cr_assert_not_null(valid);
	/* copies: t_fmt's buffers are a ring */
	char model[PATH_MAX], missing[PATH_MAX], out[PATH_MAX];
	snprintf(model, sizeof model, "%s", case_path(valid));
	snprintf(missing, sizeof missing, "%s", t_tmppath(PFX, "no-such.nnn"));
	snprintf(out, sizeof out, "%s", t_tmppath(PFX, "y.npy"));
	session_t s = open_session("bad.req");
	nnn_shape_t bad;
	ask_raw(&s, "this is not JSON", 1);                                   /* 1 */
	ask_raw(&s, "", 0);                                                   /* a blank line: no answer */
	ask_raw(&s, "[1, 2, 3]", 1);                                          /* 2 */
	ask_raw(&s, "{\"op\": \"hello\", \"protocol\": 1}", 1);               /* 3: no id */
	ask(&s, json_pack("{s:i, s:s}", "id", 4, "op", "frobnicate"));        /* 4 */
	ask(&s, json_pack("{s:i, s:s}", "id", 5, "op", "decode"));            /* 5: no file */
	ask(&s, req(6, "validate", missing));                                 /* 6 */
	json_t *r = req(7, "run", model);                                     /* 7: a model where the .npy goes */
	json_object_set_new(r, "input", json_string(model));
	json_object_set_new(r, "output", json_string(out));
	ask(&s, r);
	ask(&s, req(8, "encode", model));                                     /* 8: no output */
	json_t *v = req(9, "validate", model);                                /* 9: a shape that is none */
	json_object_set_new(v, "input_shape", json_pack("[i, s]", 1, "x"));
	ask(&s, v);
	wrong_shape(&s, 10, valid, &bad);                                     /* 10 */
	ask(&s, json_pack("{s:i, s:s, s:i}", "id", 11, "op", "hello", "protocol", 1));
	/* The wrong shape: every problem nnnkit validate --json gives for it. */
	char text[256];
	nnn_shape_format(&bad, text, sizeof text);
	size_t k = 0;
	for (size_t i = 0; i < strlen(text); i++)
		if (text[i] != ' ' && text[i] != '[' && text[i] != ']')
			text[k++] = text[i];
	text[k] = '\0';
	const char *one = model;
	json_t *want = validate_json(&one, 1, text);
	cr_assert(json_array_size(json_array_get(want, 0)) > 0, "nnnkit validate --json --input-shape %s: no problem", text);

	/* nnnkit testee; lenient --testee answers the same, in its own words */
	for (int ours = 1; ours >= 0; ours--) {
		json_t **a = run_session(&s, ours ? t_fmt("'%s' testee", nnnkit_bin())
		                                  : t_fmt("'%s/lenient' --testee", t_build_dir()));
		for (int i = 1; i <= 3; i++) {
			refusal(a[i - 1], t_fmt("line %d", i));
			cr_assert(json_is_null(json_object_get(a[i - 1], "id")), "%s", json_dumps(a[i - 1], 0));
			cr_assert_str_eq(str(a[i - 1], "code"), "E_USAGE");
		}
		cr_assert(!ours || strstr(str(a[0], "message"), "not JSON"), "%s", str(a[0], "message"));
		cr_assert(!strncmp(str(a[2], "message"), "id:", 3), "%s", str(a[2], "message"));
		const json_t *x = answer(a, 4);
		refusal(x, "an unknown op");
		cr_assert(!strcmp(str(x, "code"), "E_USAGE") && json_is_true(json_object_get(x, "unsupported")) &&
		          (!ours || strstr(str(x, "message"), "frobnicate")), "%s", json_dumps(x, 0));
		const char *fields[][2] = { { "5", "file:" }, { "8", "output:" }, { "9", "input_shape:" } };
		for (size_t i = 0; i < 3; i++) {
			x = answer(a, atoi(fields[i][0]));
			refusal(x, fields[i][1]);
			cr_assert(!strcmp(str(x, "code"), "E_USAGE") &&
			          !strncmp(str(x, "message"), fields[i][1], strlen(fields[i][1])), "%s", json_dumps(x, 0));
		}
		x = answer(a, 6);
		refusal(x, "a missing file");
		cr_assert(!strcmp(str(x, "code"), "E_IO") && json_array_size(json_object_get(x, "problems")) == 1, "%s",
		          json_dumps(x, 0));
		x = answer(a, 7);
		refusal(x, "a model as the input");
		cr_assert_str_eq(str(x, "code"), "E_NPY", "%s", json_dumps(x, 0));
		cr_assert(strstr(str(x, "message"), ".npy"), "%s", json_dumps(x, 0));
		cr_assert_null(t_slurp(out, NULL), "an output was written for a run that failed");
		x = answer(a, 10);
		refusal(x, "a wrong input shape");
		same_problems(json_object_get(x, "problems"), json_array_get(want, 0), model);
		cr_assert_str_eq(str(x, "code"), "E_INPUT_SHAPE", "%s", json_dumps(x, 0));
		cr_assert(ok(answer(a, 11)), "the session did not go on");
		free_answers(a, s.n);
	}
	json_decref(want);
	t_manifest_free(&m);
}

/* ---- validate against nnnkit validate --json; lenient's verdicts ---- */

static int forgivable(const char *code)
{
	return !strcmp(code, "E_DIM_MISMATCH") || !strcmp(code, "E_PARAM_COUNT");
}

/* The invalid cases nnnkit validate --json is asked about: those whose
 * manifest code lenient forgives, every semantic case and each class's
 * first. A case whose every problem is forgiven has its manifest code
 * among them (the manifest's problem is one of the case's: the unit tier's
 * conformance test checks it), so the rest need no process of their own:
 * their first problem is the manifest's, and lenient must refuse them. */
static int asked(const t_mcase_t *c, const t_manifest_t *m)
{
	const t_mcase_t *first = m->cases;
	while (strcmp(first->klass, c->klass))
		first++;
	return forgivable(c->code) || !strcmp(c->kind, "semantic") || first == c;
}

/* Every invalid case through nnnkit testee's validate and lenient
 * --testee's validate and decode. nnnkit testee gives every problem
 * nnnkit validate --json gives, in order, to the byte of each message (a
 * structural case not asked about: the manifest's problem first); lenient
 * accepts exactly the cases whose problems are all E_DIM_MISMATCH or
 * E_PARAM_COUNT, per validate --json, in validate, and in decode the
 * structural cases whose first problem (the manifest's) is one of those
 * and every case a strict decoder accepts. */
Test(testee, validate_is_nnnkit_validate_and_lenient_forgives_two_codes)
{
	t_manifest_t m = t_manifest_load(corpus());
	const char **files = calloc(m.n + 1, sizeof *files);
	const t_mcase_t **cases = calloc(m.n + 1, sizeof *cases);
	size_t n = 0, nasked = 0;
	cr_assert(files && cases);
	for (size_t i = 0; i < m.n; i++)
		if (strcmp(m.cases[i].kind, "valid") && asked(&m.cases[i], &m)) {
			cases[n] = &m.cases[i];
			files[n++] = strdup(case_path(&m.cases[i]));
		}
	nasked = n;
	for (size_t i = 0; i < m.n; i++)
		if (strcmp(m.cases[i].kind, "valid") && !asked(&m.cases[i], &m)) {
			cases[n] = &m.cases[i];
			files[n++] = strdup(case_path(&m.cases[i]));
		}
	json_t *want = validate_json(files, nasked, NULL);
	session_t s = open_session("validate.req"), l = open_session("lenient.req");
	ask(&l, json_pack("{s:i, s:s, s:i}", "id", 1, "op", "hello", "protocol", 1));
	for (size_t i = 0; i < n; i++) {
		ask(&s, req((int)i + 1, "validate", files[i]));
		ask(&l, req(2 * (int)i + 2, "validate", files[i]));
		ask(&l, req(2 * (int)i + 3, "decode", files[i]));
	}
	json_t **a = run_session(&s, t_fmt("'%s' testee", nnnkit_bin()));
	json_t **b = run_session(&l, t_fmt("'%s/lenient' --testee", t_build_dir()));
	cr_assert(ok(b[0]) && !strcmp(str(b[0], "name"), "lenient"), "%s", json_dumps(b[0], 0));
	size_t forgiven = 0, structural = 0;
	for (size_t i = 0; i < n; i++) {
		const t_mcase_t *c = cases[i];
		const json_t *x = answer(a, (int)i + 1), *w = json_array_get(want, i), *p;
		size_t j;
		int all = 0;
		refusal(x, files[i]);
		if (i < nasked) {
			same_problems(json_object_get(x, "problems"), w, files[i]);
			all = json_array_size(w) > 0;
			json_array_foreach(w, j, p)
				all &= forgivable(str(p, "code"));
		} else if (!strcmp(c->kind, "structural")) {
			cr_assert(at(x, c->code, c->path, c->offset), "validate %s: %s; the manifest says %s at \"%s\" @%lld",
			          c->file, json_dumps(x, 0), c->code, c->path, c->offset);
		}
		x = answer(b, 2 * (int)i + 2);
		cr_assert_eq(ok(x), all, "lenient validate %s: %s; nnnkit validate --json: %s", c->file, json_dumps(x, 0),
		             w ? json_dumps(w, 0) : "(not asked: a problem it does not forgive)");
		if (!all)
			refusal(x, files[i]);
		forgiven += all;
		/* decode: a structural case's first problem is the manifest's */
		int strict = !strcmp(c->kind, "structural"), accept = !strict || forgivable(c->code);
		x = answer(b, 2 * (int)i + 3);
		cr_assert_eq(ok(x), accept, "lenient decode %s (%s %s): %s", c->file, c->kind, c->code, json_dumps(x, 0));
		structural += strict && accept;
	}
	/* It is caught: the corpus has cases of both kinds that it accepts. */
	cr_assert(forgiven > 1 && structural > 1, "lenient accepts %zu cases in validate, %zu structural in decode",
	          forgiven, structural);
	cr_log_info("%zu invalid cases (%zu checked against nnnkit validate --json): lenient accepts %zu in validate, "
	            "%zu structural ones in decode", n, nasked, forgiven, structural);
	free_answers(a, s.n);
	free_answers(b, l.n);
	json_decref(want);
	for (size_t i = 0; i < n; i++)
		free((void *)files[i]);
	free(files);
	free(cases);
	t_manifest_free(&m);
}
