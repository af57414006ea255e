/* manifest.h: the manifest of a conformance corpus, DIR/manifest.json as
 * gen/corpus/cases.lua writes it, read with jansson into one struct per
 * case, in the manifest's order. */
#ifndef NNN_TEST_MANIFEST_H
#define NNN_TEST_MANIFEST_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include <nnn/types.h>

/* Room for a shape as text: NNN_MAX_RANK dims of up to 20 characters. */
#define T_SHAPE_TEXT (NNN_MAX_RANK * 22 + 8)

/* One case. Its strings belong to the manifest (t_manifest_t.json). */
typedef struct t_mcase {
	const char *file;  /* relative to DIR: "valid/dense-linear.nnn" */
	bool valid;
	const char *klass; /* "class": valid, truncation, magic, semantic, ... */
	const char *kind;  /* valid, structural or semantic */
	const char *code;  /* the status expected, by name: "OK", "E_CHAIN", ... */
	long number;       /* and by value */
	const char *path;  /* where the expected problem is; "" when null (a valid case) */
	long long offset;  /* and its offset; -1 when null (a valid case) */
	const char *tests; /* what the case tests, in words */
	bool has_input;    /* input_shape is not null (a valid case) */
	nnn_shape_t input; /* the input shape it is recorded with, batch (1) first */
	char input_text[T_SHAPE_TEXT]; /* that shape as the manifest writes it, "[1, 6, 6, 3]", or "null" */
} t_mcase_t;

typedef struct t_manifest {
	t_mcase_t *cases;
	size_t n;
	json_t *json; /* the file, parsed: holds the cases' strings */
} t_manifest_t;

/* Reads DIR/manifest.json. The test fails, naming the file, when it is
 * missing, is not JSON, or a case lacks a key or has one of the wrong type.
 * Free it with t_manifest_free. */
t_manifest_t t_manifest_load(const char *dir);
void t_manifest_free(t_manifest_t *m);

#endif
