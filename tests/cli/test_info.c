/* test_info.c: `nnnkit info` shows the model's input and output shapes,
 * and each layer's output, from the shape engine: exact when the layers
 * fix the input (a Dense first layer: [1, its inputs]) or --input-shape
 * gives it; else '?' where unknown and how to give it (issue 15). The
 * expected shapes are worked out by hand from the layers' dims. The text
 * comes from libnnn (nnn_model_info): its own tests are at the end. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <dirent.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nnn/file.h>
#include <nnn/info.h>

#include "builder.h"
#include "clirun.h"
#include "ctx.h"
#include "shell.h"
#include "tmpdir.h"

/* tiny: Dense 3 -> 2, Dense 2 -> 1. */
Test(info, dense_model_shapes_from_its_first_layer)
{
	bb_t b = { 0 };
	run_t r;
	bb_tiny(&b);
	const char *path = bb_to_file(&b, "tiny.nnn");
	bb_free(&b);
	nnnkit(&r, t_fmt("info %s", path));
	cr_assert_eq(r.code, 0, "%s", r.err);
	cr_assert(strstr(r.out, "\nshapes:       input [1, 3] -> output [1, 1] (the input the layers fix, with a batch "
	                        "of 1)\n"), "%s", r.out);
	/* The output column, aligned with its heading. */
	const char *head = strstr(r.out, "\n#  "), *row0 = strstr(r.out, "\n0  "), *row1 = strstr(r.out, "\n1  ");
	cr_assert(head && row0 && row1, "%s", r.out);
	cr_assert(strstr(row0, "  [1, 2]  "), "%s", r.out);
	cr_assert_eq(strstr(head, "output") - head, strstr(row0, "[1, 2]") - row0, "%s", r.out);
	cr_assert_eq(strstr(head, "output") - head, strstr(row1, "[1, 1]") - row1, "%s", r.out);

	/* A batch of 5 given. */
	nnnkit(&r, t_fmt("info --input-shape 5,3 %s", path));
	cr_assert_eq(r.code, 0, "%s", r.err);
	cr_assert(strstr(r.out, "shapes:       input [5, 3] -> output [5, 1] (from --input-shape)\n"), "%s", r.out);
	/* One that does not fit: the problem, the option named, exit 1. */
	nnnkit(&r, t_fmt("info --input-shape 1,4 %s", path));
	cr_assert_eq(r.code, 1, "%s", r.err);
	cr_assert(strstr(r.err, "layers[0]"), "%s", r.err);
	cr_assert(strstr(r.err, "--input-shape [1, 4] does not fit the model"), "%s", r.err);
	cr_assert(strstr(r.out, "(--input-shape does not fit: see above)"), "%s", r.out);
}

/* --markdown: the same facts as a list and the same table as Markdown; what
 * the file says is escaped so that it shows as written (no emphasis, link,
 * HTML or extra cell), and the shapes stay readable. */
Test(info, markdown)
{
	bb_t b = { 0 };
	run_t r;
	/* the header: 4 + 4 + 30 + 8 + 4 = 50 bytes, the layer the other 73 */
	bb_header(&b, "a *b* | <x> [l](u) `t` _u_ ~s~", 3 * 2 + 2, 1);
	bb_dense(&b, 0, 3, 2, 0);
	const char *path = bb_to_file(&b, "md.nnn");
	bb_free(&b);
	nnnkit(&r, t_fmt("info --markdown %s", path));
	cr_assert_eq(r.code, 0, "%s", r.err);
	char want[2048];
	snprintf(want, sizeof want,
	         "- **file**: %s (123 bytes)\n"
	         "- **description**: \"a \\*b\\* \\| \\<x> [l]\\(u) \\`t\\` \\_u\\_ \\~s\\~\"\n"
	         "- **parameters**: 8\n"
	         "- **layers**: 1\n"
	         "- **shapes**: input [1, 3] -> output [1, 2] (the input the layers fix, with a batch of 1)\n"
	         "\n"
	         "| # | type | fields | activation | dropout | output | tensors | params | bytes | kernel |\n"
	         "|--:|:--|:--|:--|:--|:--|:--|--:|--:|:--|\n"
	         "| 0 | Dense | neurons=2 flatten=false | Linear | 0 | [1, 2] | bias [2], weights [3,2] | 8 | 73 | builtin.so |\n",
	         path);
	cr_assert_str_eq(r.out, want);
	nnnkit(&r, t_fmt("info --markdown --json %s", path));
	cr_assert_eq(r.code, 2, "%s", r.err);
	cr_assert(strstr(r.err, "--json and --markdown are two forms of the same report: give one"), "%s", r.err);
}

/* Conv: 2 filters of 3x3 over 1 channel, valid padding, then a Dense of
 * 3 * 3 * 2 = 18 inputs (a 5x5 input) flattened to 4. */
static const char *conv_model(void)
{
	bb_t b = { 0 };
	int32_t k[2] = { 3, 3 }, pads[4] = { 0, 0, 0, 0 };
	bb_header(&b, "conv", 2 * 3 * 3 * 1 + 2 + 18 * 4 + 4, 2);
	bb_conv(&b, 0, 2, 2, k, 1, 0 /* Valid */, 4, pads);
	bb_dense(&b, 0, 18, 4, 1);
	const char *path = bb_to_file(&b, "conv.nnn");
	bb_free(&b);
	return path;
}

Test(info, conv_model_needs_an_input_shape)
{
	const char *path = conv_model();
	run_t r;
	nnnkit(&r, t_fmt("validate %s", path));
	cr_assert_eq(r.code, 0, "the model is valid: %s", r.err);
	nnnkit(&r, t_fmt("info %s", path));
	cr_assert_eq(r.code, 0, "%s", r.err);
	cr_assert(strstr(r.out, "shapes:       input [?, ?, ?, 1] -> output [?, 4]\n"
	                        "              the layers do not fix the whole input (?: unknown); give it with "
	                        "--input-shape 1,D1,D2,1 (D1...: the sizes of your inputs)\n"), "%s", r.out);
	cr_assert(strstr(r.out, "  [?, ?, ?, 2]  "), "%s", r.out);
	nnnkit(&r, t_fmt("info --input-shape 1,5,5,1 %s", path));
	cr_assert_eq(r.code, 0, "%s", r.err);
	cr_assert(strstr(r.out, "shapes:       input [1, 5, 5, 1] -> output [1, 4] (from --input-shape)\n"), "%s", r.out);
	cr_assert(strstr(r.out, "  [1, 3, 3, 2]  "), "%s", r.out);
	/* 4x4: the Conv gives 2 * 2 * 2 = 8 values, the Dense takes 18. */
	nnnkit(&r, t_fmt("info --input-shape 1,4,4,1 %s", path));
	cr_assert_eq(r.code, 1, "%s", r.err);
	cr_assert(strstr(r.err, "layers[1]"), "%s", r.err);
	cr_assert(strstr(r.err, "--input-shape [1, 4, 4, 1] does not fit the model"), "%s", r.err);
	nnnkit(&r, t_fmt("info --input-shape 1,4,x %s", path));
	cr_assert_eq(r.code, 2, "%s", r.err);

	/* The same in JSON: unknown dims are null (docs/cli-json.md, "info"). */
	nnnkit(&r, t_fmt("info --json %s", path));
	cr_assert_eq(r.code, 0, "%s", r.err);
	cr_assert(strstr(r.out, "\"input_shape\": [null, null, null, 1], \"output_shape\": [null, 4], "
	                        "\"shapes_from\": null, "), "%s", r.out);
	cr_assert(strstr(r.out, "\"input_shape\": [null, null, null, 1], \"output_shape\": [null, null, null, 2], "
	                        "\"tensors\""), "layers[0]: %s", r.out);
	nnnkit(&r, t_fmt("info --json --input-shape 1,5,5,1 %s", path));
	cr_assert_eq(r.code, 0, "%s", r.err);
	cr_assert(strstr(r.out, "\"input_shape\": [1, 5, 5, 1], \"output_shape\": [1, 4], "
	                        "\"shapes_from\": \"--input-shape\", "), "%s", r.out);
	cr_assert(strstr(r.out, "\"input_shape\": [1, 3, 3, 2], \"output_shape\": [1, 4], \"tensors\""), "%s", r.out);
	nnnkit(&r, t_fmt("info --json --input-shape 1,4,4,1 %s", path));
	cr_assert_eq(r.code, 1, "%s", r.err);
	cr_assert(strncmp(r.out, "{\"error\": {\"code\": \"E_CHAIN\"", 28) == 0, "the error object alone: %s", r.out);
	cr_assert(strstr(r.out, "\"exit\": 1, \"file\": "), "%s", r.out);
	cr_assert(strstr(r.out, "\"path\": \"layers[1]"), "%s", r.out);
	cr_assert_null(strstr(r.out, "\"layers\": ["), "no report for a shape that does not fit: %s", r.out);
}

/* The files of the original framework (../shared/corpus/real, or
 * $NNN_REAL_CORPUS, as test_real.c finds them): Dense chains of 10 -> 9
 * and 4 -> 4 (test_real.c checks their widths). */
Test(info, real_corpus_files)
{
	static const struct {
		const char *file, *shapes;
	} real[] = {
		{ "tictactoedemo.nnn", "shapes:       input [1, 10] -> output [1, 9] " },
		{ "2dmovedemo.nnn", "shapes:       input [1, 4] -> output [1, 4] " },
	};
	const char *dir = getenv("NNN_REAL_CORPUS") ? getenv("NNN_REAL_CORPUS") : "../shared/corpus/real";
	for (size_t i = 0; i < sizeof real / sizeof real[0]; i++) {
		const char *path = t_fmt("%s/%s", dir, real[i].file);
		run_t r;
		if (access(path, R_OK) != 0)
			cr_skip_test("real corpus not found at %s: skipped (set NNN_REAL_CORPUS to run it)", path);
		nnnkit(&r, t_fmt("info %s", path));
		cr_assert_eq(r.code, 0, "%s", r.err);
		cr_assert(strstr(r.out, real[i].shapes), "%s", r.out);
	}
}

/* ---- nnn_model_info (nnn/info.h): the text, from the library ---- */

#define TMP "nnn-info-"

/* The example model (mkexample: Conv 5x5 1->8, Conv 5x5 8->16, Dense
 * 6400->128, Dense 128->10), opened with the builtin plugins the CLI loads. */
typedef struct example {
	char path[512];
	nnn_ctx_t *ctx;
	nnn_file_t *f;
	const nnn_model_t *m;
	size_t size;
} example_t;

static void example_open(example_t *e)
{
	const char *b = t_build_dir();
	char out[4096];
	nnn_diags_t d;
	nnn_diags_init(&d);
	snprintf(e->path, sizeof e->path, "%s", t_tmppath(TMP, "example.nnn"));
	cr_assert_eq(t_sh(out, sizeof out, "'%s/mkexample' '%s'", b, e->path), 0, "%s", out);
	cr_assert_eq(nnn_ctx_new(&e->ctx, &d), NNN_OK);
	cr_assert_eq(nnn_plugin_load(e->ctx, t_fmt("%s/plugins/builtin.so", b), &d), NNN_OK, "%s", d.n ? d.v[0].msg : "");
	nnn_decode_opts_t o = { .ctx = e->ctx };
	cr_assert_eq(nnn_file_open(e->path, &o, &e->f, &d), NNN_OK, "%s", d.n ? d.v[0].msg : "");
	e->m = nnn_file_model(e->f);
	nnn_file_bytes(e->f, &e->size);
	nnn_diags_free(&d);
}

static void example_close(example_t *e)
{
	nnn_file_close(e->f);
	nnn_ctx_free(e->ctx);
}

/* The whole text (free it), in a buffer of exactly the length the sizing
 * call returns, plus the NUL. */
static char *info_text(const nnn_ctx_t *ctx, const nnn_model_t *m, const nnn_info_opts_t *o)
{
	size_t n = nnn_model_info(ctx, m, o, NULL, 0);
	char *t = malloc(n + 2);
	cr_assert_not_null(t);
	memset(t, 'X', n + 2);
	cr_assert_eq(nnn_model_info(ctx, m, o, t, n + 1), n);
	cr_assert_eq(t[n], '\0', "the text is NUL-terminated");
	cr_assert_eq(t[n + 1], 'X', "nothing is written past size");
	cr_assert_eq(strlen(t), n, "the length returned is the text's: %s", t);
	return t;
}

/* The CLI's stdout for `nnnkit info ARGS`, with the exit code expected. */
static const char *cli_info(const char *args, int code)
{
	static run_t r;
	nnnkit(&r, args);
	cr_assert_eq(r.code, code, "nnnkit info %s: %s", args, r.err);
	return r.out;
}

Test(info, model_info_is_the_clis_text, .fini = t_tmpdir_remove)
{
	example_t e;
	example_open(&e);
	nnn_info_opts_t o = { .size = sizeof o, .file = e.path, .file_size = e.size };
	char *t = info_text(e.ctx, e.m, &o);
	cr_assert_str_eq(t, cli_info(t_fmt("info '%s'", e.path), 0));
	/* The spatial sizes are the input's: the hint, worked out by hand. */
	cr_assert(strstr(t, "\nshapes:       input [?, ?, ?, 1] -> output [?, 10]\n              the layers do not fix the "
	                    "whole input (?: unknown); give it with --input-shape 1,D1,D2,1 (D1...: the sizes of your "
	                    "inputs)\n\n#  type"), "%s", t);
	free(t);

	/* Given: 28 - 4 = 24, 24 - 4 = 20, 20 * 20 * 16 = 6400 for the Dense. */
	nnn_shape_t in = { .rank = 4, .dims = { 1, 28, 28, 1 } };
	o.input = &in;
	t = info_text(e.ctx, e.m, &o);
	cr_assert_str_eq(t, cli_info(t_fmt("info --input-shape 1,28,28,1 '%s'", e.path), 0));
	cr_assert(strstr(t, "\nshapes:       input [1, 28, 28, 1] -> output [1, 10] (from --input-shape)\n"), "%s", t);
	cr_assert(strstr(t, "  [1, 24, 24, 8]  ") && strstr(t, "  [1, 20, 20, 16]  "), "%s", t);
	free(t);
	/* 27: 19 * 19 * 16 = 5776 values reach the Dense, which takes 6400. */
	in.dims[1] = in.dims[2] = 27;
	t = info_text(e.ctx, e.m, &o);
	cr_assert_str_eq(t, cli_info(t_fmt("info --input-shape 1,27,27,1 '%s'", e.path), 1));
	cr_assert(strstr(t, "input [1, 27, 27, 1] -> output [1, 10] (--input-shape does not fit: see above)\n"), "%s", t);
	free(t);
	example_close(&e);
}

/* As snprintf: the length of the whole text whatever the size; a buffer too
 * small gets a NUL-terminated prefix; size 0 writes nothing. */
Test(info, model_info_sizes_like_snprintf, .fini = t_tmpdir_remove)
{
	example_t e;
	char small[64];
	example_open(&e);
	nnn_info_opts_t o = { .size = sizeof o, .file = e.path, .file_size = e.size };
	char *t = info_text(e.ctx, e.m, &o);
	size_t n = strlen(t);
	cr_assert_gt(n, sizeof small);
	for (size_t size = 0; size < 48; size++) {
		memset(small, 'X', sizeof small);
		cr_assert_eq(nnn_model_info(e.ctx, e.m, &o, small, size), n, "size %zu", size);
		if (size) {
			cr_assert_eq(small[size - 1], '\0', "size %zu: NUL-terminated", size);
			cr_assert_eq(memcmp(small, t, size - 1), 0, "size %zu: the text's first bytes", size);
		}
		for (size_t k = size; k < sizeof small; k++)
			cr_assert_eq(small[k], 'X', "size %zu: byte %zu written", size, k);
	}
	cr_assert_eq(nnn_model_info(e.ctx, e.m, &o, NULL, 0), n);
	free(t);
	example_close(&e);
}

/* The Python package's case: a model in memory (its encoded size, no bytes
 * per layer), the hint naming input_shape; and an older caller's options. */
Test(info, model_info_in_memory_and_its_words, .fini = t_tmpdir_remove)
{
	example_t e;
	example_open(&e);
	nnn_info_opts_t o = { .size = sizeof o, .say = NNN_INFO_SAY_PYTHON };
	char *t = info_text(e.ctx, e.m, &o);
	/* Encoded again, the file mkexample wrote: its size. */
	const char *head = t_fmt("file:         (in memory, %zu bytes encoded)\ndescription:  \"nnnkit example: ", e.size);
	cr_assert(!strncmp(t, head, strlen(head)), "%s", t);
	cr_assert(strstr(t, "give it with input_shape=(1, D1, D2, 1) (D1...: the sizes of your inputs)\n"), "%s", t);
	int rows = 0;
	for (const char *p = t; (p = strstr(p, "  -  builtin.so\n")); p++)
		rows++;
	cr_assert_eq(rows, 4, "every layer's bytes unknown: %s", t);
	nnn_shape_t in = { .rank = 4, .dims = { 1, 28, 28, 1 } };
	o.input = &in;
	free(t);
	t = info_text(e.ctx, e.m, &o);
	cr_assert(strstr(t, "output [1, 10] (from input_shape)\n"), "%s", t);
	free(t);

	/* No options: in memory, nnnkit's words; no context: no kernels. */
	t = info_text(NULL, e.m, NULL);
	cr_assert(!strncmp(t, "file:         (in memory, ", 26), "%s", t);
	cr_assert(strstr(t, "give it with --input-shape 1,D1,D2,1 (D1"), "%s", t);
	rows = 0;
	for (const char *p = t; (p = strstr(p, "  -  none\n")); p++)
		rows++;
	cr_assert_eq(rows, 4, "%s", t);
	free(t);

	/* One layer's kernel, as the table and `info --json` name it. */
	char k[32];
	cr_assert_eq(nnn_layer_kernel_name(e.ctx, &e.m->layers[2], k, sizeof k), strlen("builtin.so"));
	cr_assert_str_eq(k, "builtin.so");
	cr_assert_eq(nnn_layer_kernel_name(NULL, &e.m->layers[2], k, sizeof k), 4);
	cr_assert_str_eq(k, "none");
	cr_assert_eq(nnn_layer_kernel_name(e.ctx, &e.m->layers[2], k, 4), strlen("builtin.so"), "the whole length");
	cr_assert_str_eq(k, "bui", "cut to size, NUL-terminated");
	cr_assert(strstr(cli_info(t_fmt("info --json '%s'", e.path), 0), "\"kernel\": \"builtin.so\"}"),
	          "--json names it so");

	/* A caller built before `file` existed: what lies past its size is not read. */
	o = (nnn_info_opts_t){ .size = offsetof(nnn_info_opts_t, file), .file = e.path, .file_size = 1 };
	t = info_text(e.ctx, e.m, &o);
	cr_assert(!strncmp(t, "file:         (in memory, ", 26), "%s", t);
	free(t);
	example_close(&e);
}

/* ---- every field kind in the fields column ---- */

/* The record descriptor of layer L's own fields (its body), or NULL. */
static const nnn_rdesc_t *body_desc(const nnn_layer_t *L, size_t *at)
{
	const nnn_rdesc_t *r = &nnn_layer_desc;
	for (int32_t i = 0; i < r->nfields; i++) {
		const nnn_fdesc_t *f = (const nnn_fdesc_t *)((const char *)r->fields + (size_t)i * r->field_size);
		for (int32_t k = 0; f->kind == NNN_FK_VARIANT && k < f->nvariants; k++)
			if (f->variants[k].value == L->id) {
				*at = f->offset;
				return f->variants[k].rec;
			}
	}
	return NULL;
}

static const nnn_fdesc_t *fdesc(const nnn_rdesc_t *r, int32_t i)
{
	return (const nnn_fdesc_t *)((const char *)r->fields + (size_t)i * r->field_size);
}

/* What the fields column must say of an i32 array: its first 8 values. */
static const char *i32s_text(const char *name, nnn_i32s_t a)
{
	char buf[512];
	size_t k = (size_t)snprintf(buf, sizeof buf, "%s=[", name);
	for (int32_t i = 0; i < a.n && i < 8; i++)
		k += (size_t)snprintf(buf + k, sizeof buf - k, "%s%d", i ? ", " : "", (int)a.v[i]);
	snprintf(buf + k, sizeof buf - k, a.n > 8 ? ", ..., %d in all]" : "]", (int)a.n);
	return t_fmt("%s", buf);
}

/* Every field of every layer of the conformance corpus's valid files but its
 * tensors is in info's fields column, arrays with their values (issue 30:
 * Conv's padding_dims was not): the fields come from the descriptors. */
Test(info, fields_column_shows_every_field_kind)
{
	const char *dir = t_fmt("%s/conformance/valid", t_build_dir());
	DIR *dp = opendir(dir);
	cr_assert_not_null(dp, "%s", dir);
	int arrays = 0;
	for (struct dirent *de; (de = readdir(dp));) {
		if (!strstr(de->d_name, ".nnn"))
			continue;
		nnn_file_t *f;
		if (nnn_file_open(t_fmt("%s/%s", dir, de->d_name), NULL, &f, NULL) != NNN_OK)
			continue; /* a plugin's type: not the core's descriptors */
		const nnn_model_t *m = nnn_file_model(f);
		for (int32_t i = 0; i < m->layer_count; i++) {
			char text[1024];
			size_t at = 0;
			const nnn_rdesc_t *r = body_desc(&m->layers[i], &at);
			nnn_layer_format(&m->layers[i], text, sizeof text);
			for (int32_t k = 0; r && k < r->nfields; k++) {
				const nnn_fdesc_t *fd = fdesc(r, k);
				const void *v = (const char *)&m->layers[i] + at + fd->offset;
				if (fd->kind == NNN_FK_RECORD || fd->kind == NNN_FK_ARRAY || (fd->flags & NNN_FD_PARAM))
					continue;
				const char *want = fd->prim == NNN_PRIM_I32_ARRAY ? i32s_text(fd->name, *(const nnn_i32s_t *)v)
				                                                   : t_fmt("%s=", fd->name);
				arrays += fd->prim == NNN_PRIM_I32_ARRAY;
				cr_expect(strstr(text, want), "%s layers[%d]: \"%s\" not in \"%s\"", de->d_name, (int)i, want, text);
			}
		}
		nnn_file_close(f);
	}
	closedir(dp);
	cr_assert_gt(arrays, 0, "no array field in the corpus: nothing was shown");
}

/* A long array is cut after 8 values, saying how many there are; text, JSON
 * and Markdown show the same fields. */
Test(info, long_arrays_shortened_and_every_form, .fini = t_tmpdir_remove)
{
	nnn_layer_t L;
	int32_t vals[10] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 };
	char text[1024];
	const nnn_fdesc_t *fd = NULL;
	size_t at = 0;
	/* The first layer type with an i32 array of its own. */
	for (int64_t id = 0; id < 256 && !fd; id++) {
		memset(&L, 0, sizeof L);
		L.id = (uint8_t)id;
		const nnn_rdesc_t *r = body_desc(&L, &at);
		for (int32_t k = 0; r && k < r->nfields && !fd; k++)
			if (fdesc(r, k)->prim == NNN_PRIM_I32_ARRAY && fdesc(r, k)->kind == NNN_FK_PRIM)
				fd = fdesc(r, k);
	}
	cr_assert_not_null(fd, "no layer type has an i32 array");
	*(nnn_i32s_t *)((char *)&L + at + fd->offset) = (nnn_i32s_t){ vals, 10 };
	nnn_layer_format(&L, text, sizeof text);
	cr_assert(strstr(text, t_fmt("%s=[0, 1, 2, 3, 4, 5, 6, 7, ..., 10 in all]", fd->name)), "%s", text);
	/* As snprintf: the whole length whatever the size. */
	size_t n = strlen(text);
	cr_assert_eq(nnn_layer_format(&L, text, 5), n);
	cr_assert_eq(strlen(text), 4);
	cr_assert_eq(nnn_layer_format(&L, NULL, 0), n);

	example_t e;
	example_open(&e);
	char want[1024];
	for (int32_t i = 0; i < e.m->layer_count; i++) {
		nnn_layer_format(&e.m->layers[i], want, sizeof want);
		if (!strchr(want, '['))
			continue;
		cr_assert(strstr(cli_info(t_fmt("info '%s'", e.path), 0), t_fmt("  %s  ", want)), "%s", want);
		cr_assert(strstr(cli_info(t_fmt("info --json '%s'", e.path), 0), t_fmt("\"fields\": \"%s\"", want)), "%s",
		          want);
		/* Markdown escapes the names' underscores, not the values. */
		cr_assert(strstr(cli_info(t_fmt("info --markdown '%s'", e.path), 0), strchr(want, '[')), "%s", want);
	}
	example_close(&e);
}
