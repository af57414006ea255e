/* test_stats_diff_edit.c: `nnnkit stats`, `nnnkit diff` and `nnnkit edit`, run as a
 * user runs them, on models built byte by byte (builder.h) with values
 * whose statistics and differences are worked out by hand here, and on the
 * real corpus when it is there. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <dirent.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nnn/file.h>
#include <nnn/npy.h>
#include <nnn/validate.h>

#include "builder.h"
#include "clirun.h"
#include "shell.h"

/* Each test's own folder, removed at its end. */
static char dir[64];

static void make_dir(void)
{
	snprintf(dir, sizeof dir, "/tmp/nnnsde.XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
}

static void remove_dir(void)
{
	if (dir[0])
		t_sh(NULL, 0, "rm -rf '%s'", dir);
	dir[0] = '\0';
}

TestSuite(stats_diff_edit, .init = make_dir, .fini = remove_dir);

static const char *in_dir(const char *name)
{
	return t_fmt("%s/%s", dir, name);
}

static void put_file(const char *name, const bb_t *b)
{
	FILE *f = fopen(in_dir(name), "wb");
	cr_assert_not_null(f);
	cr_assert_eq(fwrite(b->b, 1, b->n, f), b->n);
	cr_assert_eq(fclose(f), 0);
}

/* The whole of a file; *n its size. Free it. */
static unsigned char *get_file(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	cr_assert_not_null(f, "cannot open %s", path);
	cr_assert_eq(fseek(f, 0, SEEK_END), 0);
	long len = ftell(f);
	rewind(f);
	unsigned char *b = malloc((size_t)len + 1);
	cr_assert_not_null(b);
	cr_assert_eq(fread(b, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	*n = (size_t)len;
	return b;
}

static json_t *parse_json(const run_t *r)
{
	json_error_t e;
	json_t *j = json_loads(r->out, 0, &e);
	cr_assert_not_null(j, "stdout is not JSON (%s): %s", e.text, r->out);
	return j;
}

/* The entry of list `key` of j whose "path" is `path`, or NULL. */
static json_t *entry(json_t *j, const char *key, const char *path)
{
	size_t i;
	json_t *e;
	json_array_foreach(json_object_get(j, key), i, e)
		if (!strcmp(json_string_value(json_object_get(e, "path")), path))
			return e;
	return NULL;
}

static double num(json_t *e, const char *key)
{
	json_t *v = json_object_get(e, key);
	cr_assert(json_is_number(v), "%s is not a number", key);
	return json_number_value(v);
}

/* The tiny model (builder.h), with the values this file's tests use. */
static void tiny(bb_t *b)
{
	bb_tiny(b);
	/* layers[0].bias [2] @47: -inf, 0 */
	bb_put_f32(b, 47, -INFINITY);
	bb_put_f32(b, 51, 0.0f);
	/* layers[0].weights [3,2] @76: 0, 1, -2, NaN, +inf, 3 */
	const float w[6] = { 0.0f, 1.0f, -2.0f, NAN, INFINITY, 3.0f };
	for (int i = 0; i < 6; i++)
		bb_put_f32(b, 76 + 4 * (size_t)i, w[i]);
	/* layers[1].bias [1], its value @120: NaN. layers[1].weights [2,1] @145 keep
	 * bb_tensor's -1 and -0.5. */
	bb_put_f32(b, 120, NAN);
}

Test(stats_diff_edit, stats_by_hand)
{
	bb_t b = { 0 };
	run_t r;
	tiny(&b);
	put_file("t.nnn", &b);
	bb_free(&b);
	nnnkitf(&r, "stats --json %s", in_dir("t.nnn"));
	cr_assert_eq(r.code, 0, "%s", r.err);
	json_t *j = parse_json(&r);
	cr_assert_eq(json_array_size(json_object_get(j, "tensors")), 4);
	cr_assert_eq(num(j, "values"), 11);
	cr_assert_eq(num(j, "bytes"), 44);

	/* 0, 1, -2, NaN, +inf, 3: finite 0, 1, -2, 3; mean 0.5; squared
	 * deviations 0.25 + 0.25 + 6.25 + 6.25 = 13, over 4. */
	json_t *w = entry(j, "tensors", "layers[0].weights");
	cr_assert_not_null(w, "%s", r.out);
	cr_assert_eq(json_integer_value(json_array_get(json_object_get(w, "shape"), 0)), 3);
	cr_assert_eq(json_integer_value(json_array_get(json_object_get(w, "shape"), 1)), 2);
	cr_assert_eq(num(w, "count"), 6);
	cr_assert_eq(num(w, "bytes"), 24);
	cr_assert_eq(num(w, "min"), -2);
	cr_assert_eq(num(w, "max"), 3);
	cr_assert_eq(num(w, "mean"), 0.5);
	cr_assert_float_eq(num(w, "std"), sqrt(13.0 / 4), 1e-8);
	cr_assert_eq(num(w, "zeros"), 1);
	cr_assert_eq(num(w, "nan"), 1);
	cr_assert_eq(num(w, "posinf"), 1);
	cr_assert_eq(num(w, "neginf"), 0);

	/* -inf, 0: one finite value. */
	json_t *bias = entry(j, "tensors", "layers[0].bias");
	cr_assert_eq(num(bias, "min"), 0);
	cr_assert_eq(num(bias, "std"), 0);
	cr_assert_eq(num(bias, "zeros"), 1);
	cr_assert_eq(num(bias, "neginf"), 1);

	/* NaN alone: no statistic. */
	json_t *nan1 = entry(j, "tensors", "layers[1].bias");
	cr_assert(json_is_null(json_object_get(nan1, "min")) && json_is_null(json_object_get(nan1, "std")), "%s",
	          r.out);
	cr_assert_eq(num(nan1, "nan"), 1);

	/* -1, -0.5 */
	json_t *w1 = entry(j, "tensors", "layers[1].weights");
	cr_assert_eq(num(w1, "mean"), -0.75);
	cr_assert_eq(num(w1, "std"), 0.25);
	json_decref(j);

	nnnkitf(&r, "stats %s", in_dir("t.nnn"));
	cr_assert_eq(r.code, 0, "%s", r.err);
	cr_assert(strstr(r.out, "layers[0].weights        [3,2]"), "%s", r.out);
	cr_assert(strstr(r.out, "4 tensors, 11 values, 44 bytes"), "%s", r.out);
	nnnkitf(&r, "stats");
	cr_assert_eq(r.code, 2);
	nnnkitf(&r, "stats %s", in_dir("missing.nnn"));
	cr_assert_eq(r.code, 2);
	cr_assert(strstr(r.err, "missing.nnn"), "%s", r.err);
}

/* tiny() in A, and in B with layers[1].weights[1,0] (-0.5) made -0.25. */
static void two_tinies(void)
{
	bb_t b = { 0 };
	tiny(&b);
	put_file("a.nnn", &b);
	bb_put_f32(&b, 149, -0.25f);
	put_file("b.nnn", &b);
	bb_free(&b);
}

Test(stats_diff_edit, diff_equal_and_one_value)
{
	run_t r;
	two_tinies();
	nnnkitf(&r, "diff %s %s", in_dir("a.nnn"), in_dir("a.nnn"));
	cr_assert_eq(r.code, 0, "%s%s", r.out, r.err);
	cr_assert(strstr(r.out, "are equal"), "%s", r.out);
	/* The same model in its JSON form: NaN and infinities included. */
	nnnkitf(&r, "convert %s %s", in_dir("a.nnn"), in_dir("a.json"));
	cr_assert_eq(r.code, 0, "%s", r.err);
	nnnkitf(&r, "diff %s %s", in_dir("a.nnn"), in_dir("a.json"));
	cr_assert_eq(r.code, 0, "%s%s", r.out, r.err);

	nnnkitf(&r, "diff %s %s", in_dir("a.nnn"), in_dir("b.nnn"));
	cr_assert_eq(r.code, 1, "%s%s", r.out, r.err);
	cr_assert(strstr(r.out, "~ layers[1].weights [2,1]: 1 of 2 values differ; max abs diff 0.25 at [1,0] (index 1): "
	                        "-0.5 -> -0.25; max rel diff 1 at [1,0]\n"),
	          "%s", r.out);
	cr_assert(strstr(r.out, "differ: 0 fields, 1 tensor"), "%s", r.out);

	/* |a - b| = 0.25, |b| = 0.25: equal at the boundary, different past it. */
	nnnkitf(&r, "diff --atol 0.25 %s %s", in_dir("a.nnn"), in_dir("b.nnn"));
	cr_assert_eq(r.code, 0, "%s", r.out);
	nnnkitf(&r, "diff --atol 0.2499 %s %s", in_dir("a.nnn"), in_dir("b.nnn"));
	cr_assert_eq(r.code, 1, "%s", r.out);
	nnnkitf(&r, "diff --rtol 1 %s %s", in_dir("a.nnn"), in_dir("b.nnn"));
	cr_assert_eq(r.code, 0, "%s", r.out);
	nnnkitf(&r, "diff --rtol 0.99 %s %s", in_dir("a.nnn"), in_dir("b.nnn"));
	cr_assert_eq(r.code, 1, "%s", r.out);

	nnnkitf(&r, "diff --json %s %s", in_dir("a.nnn"), in_dir("b.nnn"));
	cr_assert_eq(r.code, 1);
	json_t *j = parse_json(&r);
	cr_assert(json_is_false(json_object_get(j, "equal")));
	cr_assert_eq(json_array_size(json_object_get(j, "fields")), 0, "%s", r.out);
	json_t *t = entry(j, "tensors", "layers[1].weights");
	cr_assert_not_null(t, "%s", r.out);
	cr_assert_eq(num(t, "differ"), 1);
	cr_assert_eq(num(t, "max_abs_diff"), 0.25);
	cr_assert_eq(num(t, "max_abs_index"), 1);
	cr_assert_eq(json_integer_value(json_array_get(json_object_get(t, "max_abs_at"), 0)), 1);
	cr_assert_eq(json_integer_value(json_array_get(json_object_get(t, "max_abs_at"), 1)), 0);
	cr_assert_eq(num(t, "a"), -0.5);
	cr_assert_eq(num(t, "b"), -0.25);
	cr_assert_eq(num(entry(j, "tensors", "layers[0].weights"), "differ"), 0, "NaN equals NaN: %s", r.out);
	json_decref(j);

	nnnkitf(&r, "diff --rtol abc %s %s", in_dir("a.nnn"), in_dir("b.nnn"));
	cr_assert_eq(r.code, 2);
	cr_assert(strstr(r.err, "--rtol"), "%s", r.err);
	nnnkitf(&r, "diff %s", in_dir("a.nnn"));
	cr_assert_eq(r.code, 2);
	nnnkitf(&r, "diff %s %s", in_dir("a.nnn"), in_dir("missing.nnn"));
	cr_assert_eq(r.code, 2);
	cr_assert(strstr(r.err, "missing.nnn"), "%s", r.err);
}

Test(stats_diff_edit, diff_structure)
{
	bb_t b = { 0 };
	run_t r;
	bb_tiny(&b);
	put_file("a.nnn", &b);
	b.b[11] = 'z'; /* the description "tiny" -> "tinz" */
	put_file("b.nnn", &b);
	bb_free(&b);
	nnnkitf(&r, "diff %s %s", in_dir("a.nnn"), in_dir("b.nnn"));
	cr_assert_eq(r.code, 1, "%s%s", r.out, r.err);
	cr_assert(strstr(r.out, "~ description: 4 bytes \"tiny\" -> 4 bytes \"tinz\"\n"), "%s", r.out);
	cr_assert(strstr(r.out, "differ: 1 field, 0 tensors"), "%s", r.out);

	/* A third layer, and the count that goes with it. */
	bb_header(&b, "tiny", 13, 3);
	bb_dense(&b, 4, 3, 2, 0);
	bb_dense(&b, 0, 2, 1, 0);
	bb_dense(&b, 0, 1, 1, 0);
	put_file("c.nnn", &b);
	bb_free(&b);
	nnnkitf(&r, "diff --json %s %s", in_dir("a.nnn"), in_dir("c.nnn"));
	cr_assert_eq(r.code, 1, "%s", r.err);
	json_t *j = parse_json(&r);
	json_t *f = json_object_get(j, "fields");
	cr_assert_eq(json_array_size(f), 3, "layer_count, param_count, layers[2]: %s", r.out);
	cr_assert_eq(num(entry(j, "fields", "layer_count"), "a"), 2);
	cr_assert_eq(num(entry(j, "fields", "layer_count"), "b"), 3);
	cr_assert_eq(num(entry(j, "fields", "param_count"), "b"), 13);
	cr_assert_str_eq(json_string_value(json_object_get(entry(j, "fields", "layers[2]"), "change")), "only_b");
	cr_assert_eq(num(j, "tensors_compared"), 4);
	json_decref(j);
	nnnkitf(&r, "diff %s %s", in_dir("c.nnn"), in_dir("a.nnn"));
	cr_assert(strstr(r.out, "- layers[2]: only in "), "%s", r.out);
}

/* The tiny model with its values unchanged; its param count when given. */
static void tiny_file(const char *name)
{
	bb_t b = { 0 };
	bb_tiny(&b);
	put_file(name, &b);
	bb_free(&b);
}

Test(stats_diff_edit, edit_description)
{
	run_t r;
	tiny_file("m.nnn");
	nnnkitf(&r, "edit %s --description 'a new one' -o %s", in_dir("m.nnn"), in_dir("d.nnn"));
	cr_assert_eq(r.code, 0, "%s", r.err);
	nnn_file_t *f;
	cr_assert_eq(nnn_file_open(in_dir("d.nnn"), NULL, &f, NULL), NNN_OK);
	const nnn_model_t *m = nnn_file_model(f);
	cr_assert_eq(m->description.len, 9);
	cr_assert(!memcmp(m->description.ptr, "a new one", 9));
	nnn_file_close(f);
	/* Nothing else changed. */
	nnnkitf(&r, "diff --json %s %s", in_dir("m.nnn"), in_dir("d.nnn"));
	json_t *j = parse_json(&r);
	cr_assert_eq(json_array_size(json_object_get(j, "fields")), 1, "%s", r.out);
	cr_assert_not_null(entry(j, "fields", "description"));
	json_decref(j);
	/* And back. */
	nnnkitf(&r, "edit %s --description tiny -o %s", in_dir("d.nnn"), in_dir("d.nnn"));
	cr_assert_eq(r.code, 0, "%s", r.err);
	nnnkitf(&r, "diff %s %s", in_dir("m.nnn"), in_dir("d.nnn"));
	cr_assert_eq(r.code, 0, "%s", r.out);

	nnnkitf(&r, "edit %s --description x", in_dir("m.nnn"));
	cr_assert_eq(r.code, 2);
	cr_assert(strstr(r.err, "-o"), "%s", r.err);
	nnnkitf(&r, "edit %s -o %s", in_dir("m.nnn"), in_dir("x.nnn"));
	cr_assert_eq(r.code, 2);
	cr_assert(access(in_dir("x.nnn"), F_OK) != 0);
}

Test(stats_diff_edit, edit_set_get)
{
	run_t r;
	const float v[6] = { 1.5f, -2.25f, 0.0f, 1e-3f, 7.0f, -0.125f };
	const nnn_shape_t s32 = { 2, { 3, 2 } }, s23 = { 2, { 2, 3 } };
	tiny_file("m.nnn");
	cr_assert_eq(nnn_npy_write_file(in_dir("w.npy"), &s32, v, NULL), NNN_OK);
	cr_assert_eq(nnn_npy_write_file(in_dir("w23.npy"), &s23, v, NULL), NNN_OK);

	nnnkitf(&r, "edit %s --set 'layers[0].weights=%s' -o %s", in_dir("m.nnn"), in_dir("w.npy"), in_dir("s.nnn"));
	cr_assert_eq(r.code, 0, "%s", r.err);
	nnn_file_t *f;
	cr_assert_eq(nnn_file_open(in_dir("s.nnn"), NULL, &f, NULL), NNN_OK);
	const nnn_tensor_t *t = &nnn_file_model(f)->layers[0].body.dense.weights;
	cr_assert_eq(t->data.n, 6);
	for (int i = 0; i < 6; i++)
		cr_assert_eq(nnn_f32s_get(t->data, i), v[i]);
	nnn_file_close(f);

	nnnkitf(&r, "edit %s --get 'layers[0].weights' -o %s", in_dir("s.nnn"), in_dir("back.npy"));
	cr_assert_eq(r.code, 0, "%s", r.err);
	size_t n1, n2;
	unsigned char *a = get_file(in_dir("w.npy"), &n1), *b = get_file(in_dir("back.npy"), &n2);
	cr_assert(n1 == n2 && !memcmp(a, b, n1), "the .npy given and the one taken differ");
	free(a);
	free(b);
	/* The data field's path names the tensor too. */
	nnnkitf(&r, "edit %s --get 'layers[0].weights.data' -o %s", in_dir("s.nnn"), in_dir("back2.npy"));
	cr_assert_eq(r.code, 0, "%s", r.err);

	/* The wrong shape: refused, both shapes named, nothing written. */
	nnnkitf(&r, "edit %s --set 'layers[0].weights=%s' -o %s", in_dir("m.nnn"), in_dir("w23.npy"), in_dir("x.nnn"));
	cr_assert_eq(r.code, 1);
	cr_assert(strstr(r.err, "w23.npy") && strstr(r.err, "the array is [2,3], but layers[0].weights of ") &&
	              strstr(r.err, " is [3,2]"),
	          "%s", r.err);
	cr_assert(access(in_dir("x.nnn"), F_OK) != 0);
	/* A path with no tensor: the tensors are listed. */
	nnnkitf(&r, "edit %s --set 'layers[5].weights=%s' -o %s", in_dir("m.nnn"), in_dir("w.npy"), in_dir("x.nnn"));
	cr_assert_eq(r.code, 2);
	cr_assert(strstr(r.err, "layers[5].weights") && strstr(r.err, "layers[1].bias"), "%s", r.err);
	nnnkitf(&r, "edit %s --set 'layers[0].weights' -o %s", in_dir("m.nnn"), in_dir("x.nnn"));
	cr_assert_eq(r.code, 2);
}

Test(stats_diff_edit, edit_fix_param_count)
{
	bb_t b = { 0 };
	run_t r;
	bb_tiny(&b);
	bb_put_i32(&b, 12, 5); /* the header says 5; the tensors hold 11 */
	put_file("bad.nnn", &b);
	nnnkitf(&r, "validate %s", in_dir("bad.nnn"));
	cr_assert_eq(r.code, 1);
	cr_assert(strstr(r.err, "nnnkit edit --fix-param-count"), "the remedy names the fix: %s", r.err);

	nnnkitf(&r, "edit %s --fix-param-count -o %s", in_dir("bad.nnn"), in_dir("fixed.nnn"));
	cr_assert_eq(r.code, 0, "%s", r.err);
	nnnkitf(&r, "validate %s", in_dir("fixed.nnn"));
	cr_assert_eq(r.code, 0, "%s", r.err);
	/* Only the count's bytes changed, to what an honest writer writes. */
	size_t n;
	unsigned char *fixed = get_file(in_dir("fixed.nnn"), &n);
	cr_assert_eq(n, b.n);
	for (size_t i = 0; i < n; i++)
		if (fixed[i] != b.b[i])
			cr_assert(i >= 12 && i < 16, "byte %zu changed", i);
	bb_free(&b);
	bb_tiny(&b);
	cr_assert(!memcmp(fixed, b.b, n));
	free(fixed);
	bb_free(&b);

	/* Another edit of the bad file is written, but said to be invalid. */
	nnnkitf(&r, "edit %s --description x -o %s", in_dir("bad.nnn"), in_dir("still.nnn"));
	cr_assert_eq(r.code, 1);
	cr_assert(strstr(r.err, "written, but it is not a valid model") && strstr(r.err, "param_count"), "%s", r.err);
}

/* convert and export copy an invalid model as asked (to mend it), but say
 * so and exit 1, as edit does; a valid one exits 0 without a word. */
Test(stats_diff_edit, copies_of_an_invalid_model_are_said_to_be)
{
	bb_t b = { 0 };
	run_t r;
	const char *cmds[] = { "convert", "convert --to json", "export" };
	const char *outs[] = { "copy.nnn", "copy.json", "copydir" };
	bb_tiny(&b);
	put_file("good.nnn", &b);
	bb_put_i32(&b, 12, 5); /* the header says 5; the tensors hold 11 */
	put_file("bad.nnn", &b);
	for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
		nnnkitf(&r, "%s %s %s", cmds[i], in_dir("bad.nnn"), in_dir(outs[i]));
		cr_assert_eq(r.code, 1, "%s: exit %d: %s", cmds[i], r.code, r.err);
		cr_assert(strstr(r.err, t_fmt("%s: written, but it is not a valid model", in_dir(outs[i]))), "%s", r.err);
		cr_assert(strstr(r.err, t_fmt("%s: param_count @0xc", in_dir("bad.nnn"))), "%s", r.err);
		struct stat st;
		cr_assert_eq(stat(in_dir(outs[i]), &st), 0, "%s: nothing written", cmds[i]);
		cr_assert_eq(t_sh(NULL, 0, "rm -rf %s", in_dir(outs[i])), 0);
		nnnkitf(&r, "%s %s %s", cmds[i], in_dir("good.nnn"), in_dir(outs[i]));
		cr_assert_eq(r.code, 0, "%s: exit %d: %s", cmds[i], r.code, r.err);
		cr_assert_str_eq(r.err, "", "%s", cmds[i]);
	}
	bb_free(&b);
}

Test(stats_diff_edit, edit_in_place_is_atomic)
{
	run_t r;
	tiny_file("m.nnn");
	/* A hard link keeps the old contents when the file is replaced by a
	 * rename, never when it is rewritten where it is. */
	cr_assert_eq(link(in_dir("m.nnn"), in_dir("old.nnn")), 0);
	nnnkitf(&r, "edit %s --description edited -o %s", in_dir("m.nnn"), in_dir("m.nnn"));
	cr_assert_eq(r.code, 0, "%s", r.err);
	nnnkitf(&r, "diff --json %s %s", in_dir("old.nnn"), in_dir("m.nnn"));
	json_t *j = parse_json(&r);
	cr_assert_eq(json_array_size(json_object_get(j, "fields")), 1, "%s", r.out);
	cr_assert_str_eq(json_string_value(json_object_get(entry(j, "fields", "description"), "b")), "edited");
	json_decref(j);
	/* No temporary left beside it. */
	DIR *d = opendir(dir);
	struct dirent *e;
	int files = 0;
	while ((e = readdir(d)) != NULL)
		files += e->d_name[0] != '.';
	closedir(d);
	cr_assert_eq(files, 2);
}

static const char *corpus_file(const char *name)
{
	const char *d = getenv("NNN_REAL_CORPUS");
	const char *path = t_fmt("%s/%s", d ? d : "../shared/corpus/real", name);
	if (access(path, R_OK) != 0)
		cr_skip_test("real corpus not found at %s: skipped (set NNN_REAL_CORPUS to run it)", path);
	return path;
}

Test(stats_diff_edit, real_corpus)
{
	static const char *files[] = { "tictactoedemo.nnn", "2dmovedemo.nnn" };
	for (size_t k = 0; k < 2; k++) {
		const char *path = corpus_file(files[k]);
		run_t r;
		nnn_file_t *f;
		cr_assert_eq(nnn_file_open(path, NULL, &f, NULL), NNN_OK);
		uint64_t params = nnn_file_model(f)->param_count;
		nnn_file_close(f);
		nnnkitf(&r, "stats --json %s", path);
		cr_assert_eq(r.code, 0, "%s", r.err);
		json_t *j = parse_json(&r);
		cr_assert_eq(json_array_size(json_object_get(j, "tensors")), 8);
		cr_assert_eq((uint64_t)num(j, "values"), params);
		json_decref(j);
		nnnkitf(&r, "diff --json %s %s", path, path);
		cr_assert_eq(r.code, 0, "%s", r.err);
		j = parse_json(&r);
		cr_assert(json_is_true(json_object_get(j, "equal")));
		cr_assert_eq(num(j, "tensors_compared"), 8);
		json_decref(j);
	}
}
