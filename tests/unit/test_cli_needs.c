/* test_cli_needs.c: what nnnkit needs of libnnn beyond decoding and
 * running, public since the CLI is built on the public headers alone
 * (Makefile, CLI_OBJ): a file made of bytes in memory, the temporary folder
 * of an all-or-nothing export, the shapes one layer at a time, and shapes
 * joined with a separator. (Escaping is test_esc.c's.) Only public headers
 * are included here, as in the CLI. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nnn/file.h>
#include <nnn/shape.h>
#include <nnn/validate.h>

#include "builder.h"
#include "tmpdir.h"

TestSuite(cli_needs, .fini = t_tmpdir_remove);

/* The tiny model's bytes in a malloc'd buffer, as nnn_model_encode gives one. */
static unsigned char *tiny_copy(size_t *n)
{
	bb_t b = { 0 };
	bb_tiny(&b);
	unsigned char *copy = malloc(b.n);
	cr_assert_not_null(copy);
	memcpy(copy, b.b, b.n);
	*n = b.n;
	bb_free(&b);
	return copy;
}

Test(cli_needs, file_of_copy_reads_as_a_file)
{
	size_t n, size;
	unsigned char *copy = tiny_copy(&n), layers[4];
	nnn_file_t *f;
	nnn_model_t *m;
	cr_assert_eq(nnn_file_of_copy(copy, n, NULL, &f, NULL), NNN_OK);
	cr_assert_null(nnn_file_model(f), "without opts nothing is decoded");
	cr_assert_eq(nnn_file_bytes(f, &size), copy, "the bytes are the copy, adopted");
	cr_assert_eq(size, TINY_SIZE);
	cr_assert_eq(nnn_file_read(f, 20, layers, 4, NULL), NNN_OK);
	cr_assert_eq(layers[0], 2, "layer_count at 20");
	cr_assert_eq(nnn_file_read(f, TINY_SIZE - 2, layers, 4, NULL), NNN_E_TRUNCATED);
	cr_assert_eq(nnn_file_validate(f, NULL, NULL, NULL), NNN_OK);
	cr_assert_eq(nnn_file_decode(f, NULL, &m, NULL), NNN_OK);
	cr_assert_eq(m->layer_count, 2);
	nnn_model_free(m);
	nnn_file_close(f);
}

Test(cli_needs, file_of_copy_decodes_with_opts)
{
	size_t n;
	unsigned char *copy = tiny_copy(&n);
	nnn_decode_opts_t opts = { .flags = NNN_DECODE_KEEP_GOING };
	nnn_file_t *f;
	cr_assert_eq(nnn_file_of_copy(copy, n, &opts, &f, NULL), NNN_OK);
	const nnn_model_t *m = nnn_file_model(f);
	cr_assert_not_null(m);
	cr_assert_eq(m->layer_count, 2);
	cr_assert_eq(m->description.len, 4);
	cr_assert_eq(memcmp(m->description.ptr, "tiny", 4), 0);
	nnn_file_close(f);
}

/* A copy that does not decode is freed at once (valgrind's unit run sees a
 * leak otherwise), and nothing is returned. */
Test(cli_needs, file_of_copy_fails_on_bad_bytes)
{
	size_t n;
	unsigned char *copy = tiny_copy(&n);
	nnn_decode_opts_t opts = { 0 };
	nnn_file_t *f = (nnn_file_t *)&opts;
	nnn_diags_t d;
	nnn_diags_init(&d);
	cr_assert_eq(nnn_file_of_copy(copy, 100, &opts, &f, &d), NNN_E_TRUNCATED);
	cr_assert_null(f);
	cr_assert_geq(d.n, 1);
	nnn_diags_free(&d);
}

Test(cli_needs, tmp_dir_made_beside_its_target_and_removed)
{
	const char *target = t_tmppath("nnnclineeds", "out");
	char tmp[4096], file[4200];
	struct stat st;
	int fd = nnn_tmp_dir_make(target, tmp, sizeof tmp);
	cr_assert_geq(fd, 0, "%s", strerror(errno));
	cr_assert_eq(strncmp(tmp, target, strlen(target)), 0, "%s", tmp);
	cr_assert_eq(strncmp(tmp + strlen(target), ".tmp.", 5), 0, "%s", tmp);
	cr_assert_eq(stat(tmp, &st), 0);
	cr_assert(S_ISDIR(st.st_mode));
	snprintf(file, sizeof file, "%s/a.npy", tmp);
	FILE *w = fopen(file, "w");
	cr_assert_not_null(w);
	fclose(w);
	nnn_tmp_dir_remove(tmp, fd);
	cr_assert_neq(stat(tmp, &st), 0, "the folder and its file are gone");
	cr_assert_neq(stat(target, &st), 0, "the target was never made");
}

Test(cli_needs, tmp_dir_name_that_does_not_fit)
{
	char tmp[8];
	errno = 0;
	cr_assert_eq(nnn_tmp_dir_make(t_tmppath("nnnclineeds", "out"), tmp, sizeof tmp), -1);
	cr_assert_eq(errno, ENAMETOOLONG);
}

typedef struct seen {
	int calls;
	nnn_layer_shapes_t s[4];
} seen_t;

static void each(void *ctx, int32_t i, const nnn_layer_shapes_t *s)
{
	seen_t *seen = ctx;
	cr_assert_eq(i, seen->calls, "layers in order");
	seen->s[seen->calls++] = *s;
}

/* The shapes one layer at a time are nnn_model_shapes' own. */
Test(cli_needs, model_shapes_each_as_model_shapes)
{
	bb_t b = { 0 };
	nnn_model_t *m;
	nnn_layer_shapes_t all[2];
	nnn_shape_t in = { .rank = 2, .dims = { 1, 3 } };
	seen_t seen = { 0 };
	char text[64];
	bb_tiny(&b);
	cr_assert_eq(nnn_model_decode(b.b, b.n, NULL, &m, NULL), NNN_OK);
	cr_assert_eq(nnn_model_shapes_each(m, &in, each, &seen, NULL), NNN_OK);
	cr_assert_eq(nnn_model_shapes(m, &in, all, NULL), NNN_OK);
	cr_assert_eq(seen.calls, 2);
	for (int i = 0; i < 2; i++)
		cr_assert_eq(memcmp(&seen.s[i], &all[i], sizeof all[i]), 0, "layer %d", i);
	cr_assert_str_eq(nnn_pshape_format(&seen.s[1].out, text, sizeof text), "[1, 1]");
	/* a misfit: the first problem's code, each still called for every layer */
	in.dims[1] = 5;
	seen.calls = 0;
	cr_assert_eq(nnn_model_shapes_each(m, &in, each, &seen, NULL), NNN_E_SHAPE);
	cr_assert_eq(seen.calls, 2);
	nnn_model_free(m);
	bb_free(&b);
}

Test(cli_needs, shape_format_as)
{
	nnn_shape_t s = { .rank = 3, .dims = { 2, 30, 4 } };
	const nnn_dims_style_t tight = { "[", ",", "]", NULL, NULL, 0 }, by = { "[", " x ", "]", NULL, NULL, 0 };
	char buf[32];
	cr_assert_str_eq(nnn_shape_format_as(&s, &tight, buf, sizeof buf), "[2,30,4]");
	cr_assert_str_eq(nnn_shape_format_as(&s, &by, buf, sizeof buf), "[2 x 30 x 4]");
	cr_assert_str_eq(nnn_shape_format_as(&s, &tight, buf, 5), "[2,3", "cut to size, terminated");
	s.rank = 0;
	cr_assert_str_eq(nnn_shape_format_as(&s, &tight, buf, sizeof buf), "[]");
}
