/* test_cli_json.c: the --json output of every command that declares it.
 * The commands come from the binary's own tables (`nnnkit help --json`),
 * the keys each must print from the examples in docs/cli-json.md: a
 * command given --json gains these checks, and a key the doc promises and
 * the output lacks fails. Success and failure both give exactly one JSON
 * object on stdout; a failure's has the error object, whose exit is the
 * process's and one the command declares. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nnn/npy.h>

#include "builder.h"
#include "clirun.h"
#include "shell.h"

static json_t *load_text(const char *what, const char *text)
{
	json_error_t e;
	json_t *j = json_loads(text, 0, &e);
	cr_assert_not_null(j, "%s: not one JSON value (line %d: %s):\n%.3000s", what, e.line, e.text, text);
	return j;
}

static const char *str(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

/* The commands that declare --json, from the binary's tables. */
static json_t *json_commands(void)
{
	static char out[1 << 17];
	cr_assert_eq(t_sh(out, sizeof out, "'%s' help --json", nnnkit_bin()), 0, "%s", out);
	json_t *all = load_text("help --json", out), *mine = json_array(), *cmd, *o;
	size_t i, k;
	json_array_foreach(json_object_get(all, "commands"), i, cmd)
		json_array_foreach(json_object_get(cmd, "options"), k, o)
			if (!strcmp(str(o, "name"), "json"))
				json_array_append(mine, cmd);
	json_decref(all);
	cr_assert_geq(json_array_size(mine), 8, "fewer commands declare --json than issue 15 asks for");
	return mine;
}

/* The example object of docs/cli-json.md's section "## NAME". */
static json_t *doc_example(const char *name)
{
	static char doc[1 << 17];
	/* the suite runs from the tree's root, as make test runs it */
	slurp_keep("docs/cli-json.md", doc, sizeof doc);
	cr_assert(doc[0], "no docs/cli-json.md in the working folder");
	const char *sec = strstr(doc, t_fmt("\n## %s\n", name));
	cr_assert_not_null(sec, "docs/cli-json.md has no section '## %s'", name);
	const char *start = strstr(sec, "```json\n"), *next = strstr(sec + 4, "\n## ");
	cr_assert(start && (!next || start < next), "docs/cli-json.md: '## %s' has no ```json example", name);
	start += 8;
	const char *end = strstr(start, "```");
	cr_assert_not_null(end);
	char *text = strndup(start, (size_t)(end - start));
	json_t *j = load_text(t_fmt("docs/cli-json.md, the example of %s", name), text);
	free(text);
	return j;
}

/* Every top-level key of the doc's example is in the output. */
static void has_doc_keys(const char *section, const json_t *out, const char *args)
{
	json_t *ex = doc_example(section), *v;
	const char *key;
	json_object_foreach(ex, key, v)
		cr_assert_not_null(json_object_get(out, key), "%s: no \"%s\", which docs/cli-json.md (%s) promises", args, key,
		                   section);
	json_decref(ex);
}

/* The entry of the command `name` among cmds. */
static const json_t *find(const json_t *cmds, const char *name)
{
	size_t i;
	json_t *cmd;
	json_array_foreach(cmds, i, cmd)
		if (!strcmp(str(cmd, "name"), name))
			return cmd;
	cr_assert_fail("no %s among the commands that declare --json", name);
	return NULL;
}

static void declared(const json_t *cmd, int code, const char *args)
{
	size_t i;
	json_t *c;
	json_array_foreach(json_object_get(cmd, "exits"), i, c)
		if (json_integer_value(c) == code)
			return;
	cr_assert_fail("%s: exit %d is not in the command's exit table", args, code);
}

/* A failure: one JSON object on stdout with the error object (its keys
 * from the doc's "errors" example), its exit the process's. */
static json_t *failed(const json_t *cmd, const run_t *r, const char *args)
{
	cr_assert_neq(r->code, 0, "%s: exit 0\n%s", args, r->out);
	declared(cmd, r->code, args);
	json_t *j = load_text(args, r->out);
	json_t *e = json_object_get(j, "error");
	cr_assert(json_is_object(e), "%s: no error object:\n%s", args, r->out);
	has_doc_keys("errors", j, args);
	json_t *ex = doc_example("errors"), *v;
	const char *key;
	json_object_foreach(json_object_get(ex, "error"), key, v)
		cr_assert_not_null(json_object_get(e, key), "%s: the error object has no \"%s\"", args, key);
	json_decref(ex);
	cr_assert_eq(json_integer_value(json_object_get(e, "exit")), r->code, "%s: error.exit is not the exit code", args);
	cr_assert(str(e, "code") && !strncmp(str(e, "code"), "E_", 2), "%s: error.code: %s", args, r->out);
	cr_assert(str(e, "message") && str(e, "message")[0], "%s", args);
	return j;
}

/* The files of the command lines, in one temporary folder. */
typedef struct fx {
	char dir[64], model[128], clf[128], x[128], y[128], text[128], count[128];
} fx_t;

static void put(const char *path, const bb_t *b)
{
	FILE *o = fopen(path, "wb");
	cr_assert_not_null(o);
	cr_assert_eq(fwrite(b->b, 1, b->n, o), b->n);
	fclose(o);
}

static void fx_make(fx_t *f)
{
	bb_t b = { 0 };
	snprintf(f->dir, sizeof f->dir, "/tmp/nnnjson.XXXXXX");
	cr_assert_not_null(mkdtemp(f->dir));
	bb_tiny(&b);
	snprintf(f->model, sizeof f->model, "%s/m.nnn", f->dir);
	put(f->model, &b);
	/* the header's parameter count one off: E_PARAM_COUNT */
	b.b[12] = 12;
	snprintf(f->count, sizeof f->count, "%s/count.nnn", f->dir);
	put(f->count, &b);
	bb_free(&b);
	/* a classifier: 3 inputs, 2 classes (softmax), for eval */
	bb_header(&b, "clf", 8, 1);
	bb_dense(&b, 5, 3, 2, 0);
	snprintf(f->clf, sizeof f->clf, "%s/clf.nnn", f->dir);
	put(f->clf, &b);
	bb_free(&b);
	nnn_shape_t xs = { .rank = 2, .dims = { 2, 3 } }, ys = { .rank = 1, .dims = { 2 } };
	const float x[6] = { 1, 0, 0, 0, 1, 0 }, y[2] = { 0, 1 };
	snprintf(f->x, sizeof f->x, "%s/x.npy", f->dir);
	snprintf(f->y, sizeof f->y, "%s/y.npy", f->dir);
	cr_assert_eq(nnn_npy_write_file(f->x, &xs, x, NULL), NNN_OK);
	cr_assert_eq(nnn_npy_write_file(f->y, &ys, y, NULL), NNN_OK);
	snprintf(f->text, sizeof f->text, "%s/notes.txt", f->dir);
	FILE *o = fopen(f->text, "w");
	fputs("these are notes, not a model\n", o);
	fclose(o);
}

static void fx_free(fx_t *f)
{
	char out[256];
	t_sh(out, sizeof out, "rm -rf '%s'", f->dir);
}

/* A good file for an entry: X.npy, Y.npy, or a model (the classifier for
 * eval, whose outputs must be classes). */
static const char *good(const fx_t *f, const json_t *cmd, const json_t *entry)
{
	const char *m = str(entry, "metavar") ? str(entry, "metavar") : "";
	if (strstr(m, "X.npy"))
		return f->x;
	if (strstr(m, "Y.npy"))
		return f->y;
	return !strcmp(str(cmd, "name"), "eval") ? f->clf : f->model;
}

/* The files a command line needs (positionals and required options that
 * read a file), each given its good value, but `which` given `value`. */
static const char *line(const fx_t *f, const json_t *cmd, const char *which, const char *value)
{
	static char buf[4096];
	size_t k = (size_t)snprintf(buf, sizeof buf, "%s --json", str(cmd, "name"));
	size_t i;
	json_t *o;
	json_array_foreach(json_object_get(cmd, "options"), i, o) {
		if (!json_is_true(json_object_get(o, "required")))
			continue;
		int is = which && !strcmp(str(o, "name"), which);
		k += (size_t)snprintf(buf + k, sizeof buf - k, " --%s '%s'", str(o, "name"), is ? value : good(f, cmd, o));
	}
	/* the fixtures' models take 3 values per sample: shapes to report */
	json_array_foreach(json_object_get(cmd, "options"), i, o)
		if (!strcmp(str(o, "name"), "input-shape"))
			k += (size_t)snprintf(buf + k, sizeof buf - k, " --input-shape 1,3");
	k += (size_t)snprintf(buf + k, sizeof buf - k, " --");
	json_array_foreach(json_object_get(cmd, "positionals"), i, o) {
		int is = which && !strcmp(str(o, "name"), which);
		k += (size_t)snprintf(buf + k, sizeof buf - k, " '%s'", is ? value : good(f, cmd, o));
	}
	return buf;
}

/* The entries (positionals, required options) that read a file. */
static size_t file_entries(const json_t *cmd, const json_t **out, size_t max)
{
	size_t n = 0, i;
	json_t *o;
	json_array_foreach(json_object_get(cmd, "positionals"), i, o)
		if (!strcmp(str(o, "kind"), "file-in") && n < max)
			out[n++] = o;
	json_array_foreach(json_object_get(cmd, "options"), i, o)
		if (!strcmp(str(o, "kind"), "file-in") && json_is_true(json_object_get(o, "required")) && n < max)
			out[n++] = o;
	return n;
}

Test(cli_json, success_is_one_object_with_the_documented_keys, .timeout = 120)
{
	json_t *cmds = json_commands(), *cmd;
	fx_t f;
	run_t r;
	size_t i;
	fx_make(&f);
	json_array_foreach(cmds, i, cmd) {
		const char *args = line(&f, cmd, NULL, NULL);
		nnnkit(&r, args);
		cr_assert_eq(r.code, 0, "%s: exit %d\n%s", args, r.code, r.err);
		json_t *j = load_text(args, r.out);
		cr_assert(json_is_object(j), "%s: not an object", args);
		cr_assert_null(json_object_get(j, "error"), "%s: an error object on success", args);
		has_doc_keys(str(cmd, "name"), j, args);
		json_decref(j);
	}
	fx_free(&f);
	json_decref(cmds);
}

/* The dump example is the tool's own output for the model it shows (the
 * builder's tiny model, 154 bytes): every field row the doc lists is a row
 * `dump --json` prints, path, offset, size and value alike. A doc that
 * invents a path (`activation.params.tau` for `activation.tau`) fails. */
Test(cli_json, dump_example_rows_are_the_tools)
{
	fx_t f;
	run_t r;
	fx_make(&f);
	nnnkitf(&r, "dump --json '%s'", f.model);
	cr_assert_eq(r.code, 0, "dump --json: exit %d\n%s", r.code, r.err);
	json_t *out = load_text("dump --json", r.out), *ex = doc_example("dump"), *row, *mine;
	const json_t *rows = json_object_get(out, "fields");
	size_t i, k;
	cr_assert_eq(json_integer_value(json_object_get(ex, "bytes")), json_integer_value(json_object_get(out, "bytes")),
	             "docs/cli-json.md's dump example is not of the tiny model the test dumps");
	json_array_foreach(json_object_get(ex, "fields"), i, row) {
		bool found = false;
		json_array_foreach(rows, k, mine)
			found = found || json_equal(row, mine);
		char *text = json_dumps(row, JSON_COMPACT);
		cr_assert(found, "docs/cli-json.md, dump: the row %s is not one dump --json prints", text);
		free(text);
	}
	json_decref(ex);
	json_decref(out);
	fx_free(&f);
}

Test(cli_json, missing_and_wrong_files_give_the_error_object, .timeout = 120)
{
	json_t *cmds = json_commands(), *cmd;
	fx_t f;
	run_t r;
	size_t i;
	int tried = 0;
	fx_make(&f);
	char missing[128];
	snprintf(missing, sizeof missing, "%s/no-such-file", f.dir);
	json_array_foreach(cmds, i, cmd) {
		const json_t *entries[8];
		size_t n = file_entries(cmd, entries, 8);
		for (size_t k = 0; k < n; k++) {
			const char *name = str(entries[k], "name");
			const char *args = line(&f, cmd, name, missing);
			nnnkit(&r, args);
			cr_assert_eq(r.code, 2, "%s: exit %d\n%s", args, r.code, r.err);
			json_t *j = failed(cmd, &r, args);
			cr_assert_str_eq(str(json_object_get(j, "error"), "file"), missing, "%s: %s", args, r.out);
			json_decref(j);
			/* A text file where a model or array goes: 1 (diff: 2, as diff(1)). */
			args = line(&f, cmd, name, f.text);
			nnnkit(&r, args);
			cr_assert_eq(r.code, strcmp(str(cmd, "name"), "diff") ? 1 : 2, "%s: exit %d\n%s", args, r.code, r.err);
			j = failed(cmd, &r, args);
			cr_assert_str_eq(str(json_object_get(j, "error"), "file"), f.text, "%s: %s", args, r.out);
			json_decref(j);
			tried++;
		}
		/* A usage error, from the parser or found after it. */
		const char *args = t_fmt("%s --json --bogus-option", str(cmd, "name"));
		nnnkit(&r, args);
		cr_assert_eq(r.code, 2, "%s", args);
		json_t *j = failed(cmd, &r, args);
		cr_assert_str_eq(str(json_object_get(j, "error"), "code"), "E_USAGE");
		cr_assert(strstr(r.err, "unknown option --bogus-option"), "%s: %s", args, r.err);
		/* The message is the one stderr gives, not only "see stderr". */
		cr_assert(strstr(str(json_object_get(j, "error"), "message"), "unknown option --bogus-option"), "%s: %s",
		          args, r.out);
		json_decref(j);
	}
	cr_assert_geq(tried, 6, "too few commands read files");
	/* A usage error a command finds after the parser: its message too. */
	nnnkit(&r, t_fmt("eval --json '%s' --inputs x.npy --labels y.npy --misclassified -", f.model));
	cr_assert_eq(r.code, 2, "%s", r.err);
	json_t *j = failed(find(cmds, "eval"), &r, "eval --misclassified -");
	cr_assert_str_eq(str(json_object_get(j, "error"), "code"), "E_USAGE");
	cr_assert(strstr(str(json_object_get(j, "error"), "message"), "both write to stdout"), "%s", r.out);
	json_decref(j);
	/* Those without a model to read: a missing corpus, a plugin that is not there. */
	char others[3][2][256] = { { "conformance", "" }, { "plugins", "" },
		                   { "conformance", "conformance --json --decoder 'true'" } };
	snprintf(others[0][1], sizeof others[0][1], "conformance --json --corpus '%s'", missing);
	snprintf(others[1][1], sizeof others[1][1], "plugins --json --check '%s'", missing);
	for (size_t k = 0; k < 3; k++) {
		nnnkit(&r, others[k][1]);
		json_decref(failed(find(cmds, others[k][0]), &r, others[k][1]));
	}
	fx_free(&f);
	json_decref(cmds);
}

Test(cli_json, validate_invalid_model_has_the_error_and_its_problems)
{
	fx_t f;
	run_t r;
	fx_make(&f);
	const char *args = t_fmt("validate --json '%s'", f.count);
	nnnkit(&r, args);
	cr_assert_eq(r.code, 1, "%s: %s", args, r.err);
	json_t *cmds = json_commands();
	json_t *j = failed(find(cmds, "validate"), &r, args), *e = json_object_get(j, "error");
	cr_assert_str_eq(str(e, "code"), "E_PARAM_COUNT");
	cr_assert_str_eq(str(e, "path"), "param_count");
	cr_assert_eq(json_integer_value(json_object_get(e, "offset")), 12);
	cr_assert(json_is_false(json_object_get(j, "valid")));
	cr_assert_str_eq(str(json_array_get(json_object_get(j, "problems"), 0), "code"), "E_PARAM_COUNT");
	json_decref(j);
	json_decref(cmds);
	fx_free(&f);
}

static void int_array(const json_t *a, const char *what)
{
	size_t i;
	json_t *v;
	cr_assert(json_is_array(a) && json_array_size(a) > 0, "%s is not an array: %s", what,
	          json_dumps(a, JSON_ENCODE_ANY));
	json_array_foreach(a, i, v)
		cr_assert(json_is_integer(v), "%s[%zu] is not an integer", what, i);
}

Test(cli_json, shapes_are_arrays_of_integers)
{
	fx_t f;
	run_t r;
	size_t i, k;
	json_t *l, *t;
	fx_make(&f);
	nnnkit(&r, t_fmt("validate --json --input-shape 4,3 '%s'", f.model));
	cr_assert_eq(r.code, 0, "%s", r.err);
	json_t *j = load_text("validate", r.out);
	int_array(json_object_get(j, "output_shape"), "validate output_shape");
	cr_assert_eq(json_integer_value(json_array_get(json_object_get(j, "output_shape"), 0)), 4);
	cr_assert_eq(json_integer_value(json_array_get(json_object_get(j, "output_shape"), 1)), 1);
	cr_assert_eq(json_array_size(json_object_get(j, "layers")), 2, "%s", r.out);
	json_array_foreach(json_object_get(j, "layers"), i, l) {
		cr_assert_eq(json_integer_value(json_object_get(l, "index")), (json_int_t)i);
		cr_assert(str(l, "type"), "%s", r.out);
		int_array(json_object_get(l, "output_shape"), "validate layers[].output_shape");
	}
	/* layers[0] is Dense 3 -> 2 */
	cr_assert_eq(json_integer_value(json_array_get(json_object_get(json_array_get(json_object_get(j, "layers"), 0),
	                                                               "output_shape"), 1)), 2, "%s", r.out);
	json_decref(j);
	/* Without an input shape: no shapes to give. */
	nnnkit(&r, t_fmt("validate --json '%s'", f.model));
	j = load_text("validate", r.out);
	cr_assert_null(json_object_get(j, "output_shape"));
	json_decref(j);
	nnnkit(&r, t_fmt("info --json '%s'", f.model));
	cr_assert_eq(r.code, 0, "%s", r.err);
	j = load_text("info", r.out);
	json_array_foreach(json_object_get(j, "layers"), i, l)
		json_array_foreach(json_object_get(l, "tensors"), k, t)
			int_array(json_object_get(t, "shape"), "info layers[].tensors[].shape");
	cr_assert_eq(json_array_size(json_object_get(j, "layers")), 2);
	/* The shapes the layers fix: Dense 3 -> 2 -> 1, a batch of 1. */
	int_array(json_object_get(j, "input_shape"), "info input_shape");
	int_array(json_object_get(j, "output_shape"), "info output_shape");
	cr_assert_eq(json_integer_value(json_array_get(json_object_get(j, "input_shape"), 1)), 3, "%s", r.out);
	cr_assert_eq(json_integer_value(json_array_get(json_object_get(j, "output_shape"), 1)), 1, "%s", r.out);
	cr_assert_str_eq(json_string_value(json_object_get(j, "shapes_from")), "layers");
	json_array_foreach(json_object_get(j, "layers"), i, l) {
		int_array(json_object_get(l, "input_shape"), "info layers[].input_shape");
		int_array(json_object_get(l, "output_shape"), "info layers[].output_shape");
	}
	json_decref(j);
	fx_free(&f);
}

/* A description with controls, quotes and U+202E: escaped in the output
 * (no raw ESC or RLO reaches a terminal), and the same text once parsed. */
Test(cli_json, file_strings_round_trip_through_json_escaping)
{
	const char desc[] = "a\x01\x1b[31mred\t\"q\" \\ \xe2\x80\xae evil\x7f end";
	bb_t b = { 0 };
	run_t r;
	bb_header(&b, desc, 11, 2);
	bb_dense(&b, 4, 3, 2, 0);
	bb_dense(&b, 0, 2, 1, 0);
	const char *path = bb_to_file(&b, "d.nnn");
	const char *cmds[][2] = { { "info", "description" }, { "dump", NULL } };
	for (size_t i = 0; i < 2; i++) {
		nnnkit(&r, t_fmt("%s --json '%s'", cmds[i][0], path));
		cr_assert_eq(r.code, 0, "%s: %s", cmds[i][0], r.err);
		cr_assert_null(strchr(r.out, '\x1b'), "%s: a raw ESC on stdout", cmds[i][0]);
		cr_assert_null(strstr(r.out, "\xe2\x80\xae"), "%s: a raw U+202E on stdout", cmds[i][0]);
		cr_assert_not_null(strstr(r.out, "\\u202e"), "%s: %s", cmds[i][0], r.out);
		json_t *j = load_text(cmds[i][0], r.out), *v;
		if (cmds[i][1]) {
			v = json_object_get(j, cmds[i][1]);
		} else {
			size_t k;
			json_t *fl;
			v = NULL;
			json_array_foreach(json_object_get(j, "fields"), k, fl)
				if (!strcmp(str(fl, "path"), "description"))
					v = json_object_get(fl, "value");
		}
		cr_assert(json_is_string(v), "%s: no description", cmds[i][0]);
		cr_assert_eq(json_string_length(v), strlen(desc));
		cr_assert(!memcmp(json_string_value(v), desc, strlen(desc)), "%s: the description changed: %s", cmds[i][0],
		          json_string_value(v));
		json_decref(j);
	}
	bb_free(&b);
}
