/* manifest.c: see manifest.h. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include <nnn/validate.h>

#include "manifest.h"

/* The value of key in case i, of the JSON type want (or null, when
 * nullable); the test fails when it is not. */
static json_t *get(const char *path, size_t i, json_t *c, const char *key, json_type want, bool nullable)
{
	json_t *v = json_object_get(c, key);
	cr_assert(v && (json_typeof(v) == want || (nullable && json_is_null(v))),
	          "%s: case %zu: \"%s\" missing or of the wrong type", path, i, key);
	return v;
}

static const char *str(const char *path, size_t i, json_t *c, const char *key)
{
	return json_string_value(get(path, i, c, key, JSON_STRING, false));
}

/* input_shape, an array of dims or null, into c->input and c->input_text. */
static void shape(const char *path, size_t i, json_t *j, t_mcase_t *c)
{
	json_t *a = get(path, i, j, "input_shape", JSON_ARRAY, true), *d;
	size_t k;
	c->has_input = !json_is_null(a);
	if (!c->has_input) {
		snprintf(c->input_text, sizeof c->input_text, "null");
		return;
	}
	cr_assert_leq(json_array_size(a), NNN_MAX_RANK, "%s: case %zu: input_shape has more than %d dims", path, i,
	              NNN_MAX_RANK);
	json_array_foreach(a, k, d) {
		cr_assert(json_is_integer(d), "%s: case %zu: input_shape[%zu] is not an integer", path, i, k);
		c->input.dims[c->input.rank++] = (int64_t)json_integer_value(d);
	}
	/* nnn_shape_format writes it as gen/corpus/cases.lua does: "[1, 6, 6, 3]" */
	nnn_shape_format(&c->input, c->input_text, sizeof c->input_text);
}

t_manifest_t t_manifest_load(const char *dir)
{
	t_manifest_t m = { 0 };
	char path[1024];
	json_error_t err;
	json_t *cases, *j;
	size_t i;
	int len = snprintf(path, sizeof path, "%s/manifest.json", dir);
	cr_assert(len > 0 && (size_t)len < sizeof path, "manifest path too long: %s/manifest.json", dir);
	m.json = json_load_file(path, 0, &err);
	/* no line: the file could not be read ("unable to open ...: No such file ...") */
	cr_assert(m.json || err.line > 0, "no conformance manifest: %s", err.text);
	cr_assert_not_null(m.json, "%s: not JSON, line %d: %s", path, err.line, err.text);
	cases = json_object_get(m.json, "cases");
	cr_assert(json_is_array(cases), "%s: no \"cases\" array", path);
	m.n = json_array_size(cases);
	/* zeroed: input.rank starts at 0; one at least, as calloc(0) may give NULL */
	m.cases = calloc(m.n ? m.n : 1, sizeof *m.cases);
	cr_assert_not_null(m.cases);
	json_array_foreach(cases, i, j) {
		t_mcase_t *c = &m.cases[i];
		json_t *v;
		cr_assert(json_is_object(j), "%s: case %zu is not an object", path, i);
		c->file = str(path, i, j, "file");
		v = json_object_get(j, "valid");
		cr_assert(json_is_boolean(v), "%s: case %zu: \"valid\" missing or of the wrong type", path, i);
		c->valid = json_is_true(v);
		c->klass = str(path, i, j, "class");
		c->kind = str(path, i, j, "kind");
		c->code = str(path, i, j, "code");
		c->number = (long)json_integer_value(get(path, i, j, "number", JSON_INTEGER, false));
		v = get(path, i, j, "path", JSON_STRING, true);
		c->path = json_is_null(v) ? "" : json_string_value(v);
		v = get(path, i, j, "offset", JSON_INTEGER, true);
		c->offset = json_is_null(v) ? -1 : (long long)json_integer_value(v);
		c->tests = str(path, i, j, "tests");
		shape(path, i, j, c);
	}
	return m;
}

void t_manifest_free(t_manifest_t *m)
{
	free(m->cases);
	json_decref(m->json);
	m->cases = NULL;
	m->n = 0;
	m->json = NULL;
}
