/* test_forms.c: every command that reads a model reads it in each form, told
 * by its bytes and never by its name (issue 33: info and validate read ONNX
 * but not JSON, dump, map and graph only .nnn, and a refused file got "not a
 * .nnn file: found 101844744"): the example as .nnn, as JSON, as ONNX and as
 * safetensors, each under a name that says nothing (.bin); a .npy array
 * given as the model is refused, saying what it is. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include <nnn/npy.h>

#include "ctx.h"
#include "shell.h"
#include "tmpdir.h"

#define PFX "nnnform."

/* Four forms by twelve commands: about 90 s on a loaded 2-core machine. */
TestSuite(forms, .fini = t_tmpdir_remove, .timeout = 300);

/* Every command that reads a model, M where it goes. */
static const char *const cmds[] = {
	"info M",
	"validate M",
	"dump M",
	"map M -o page.html",
	"graph M -o g.dot",
	"stats M",
	"run M --input x.npy -o y.npy",
	"eval M --inputs x.npy --labels labels.npy",
	"convert M out.nnn --to nnn",
	"export M dir",
	"diff M m.nnn",
	"edit M -o edited.nnn --description edited",
};
#define NCMDS (sizeof cmds / sizeof cmds[0])

/* cmd with M replaced by model, in dir; rc, stdout and stderr in out. */
static int run_cmd(const char *dir, const char *cmd, const char *model, char *out, size_t size)
{
	const char *at = strstr(cmd, "M");
	return t_sh(out, size, "cd %s && rm -rf dir && %s %.*s%s%s 2>&1", dir, nnnkit_bin(), (int)(at - cmd), cmd,
	            model, at + 1);
}

/* The example, its JSON, ONNX and safetensors forms under names that say
 * nothing, its input (two samples), labels for eval, and the input again as array.bin. */
static const char *setup(void)
{
	const char *dir = t_tmpdir(PFX);
	cr_assert_eq(t_sh(NULL, 0,
	                  "cd %s && %s/mkexample m.nnn x.npy >/dev/null && %s convert m.nnn json.bin --to json && "
	                  "%s convert m.nnn onnx.bin --to onnx && %s convert m.nnn st.bin --to safetensors && "
	                  "cp x.npy array.bin",
	                  dir, t_build_dir(), nnnkit_bin(), nnnkit_bin(), nnnkit_bin()),
	             0);
	nnn_shape_t s = { .rank = 1, .dims = { 2 } };
	float labels[2] = { 3.0f, 7.0f };
	cr_assert_eq(nnn_npy_write_file(t_tmppath(PFX, "labels.npy"), &s, labels, NULL), NNN_OK);
	return dir;
}

Test(forms, every_command_reads_every_form_by_its_bytes)
{
	char out[16384];
	const char *dir = setup();
	const char *forms[] = { "m.nnn", "json.bin", "onnx.bin", "st.bin" };
	for (size_t i = 0; i < NCMDS; i++)
		for (size_t k = 0; k < 4; k++) {
			int rc = run_cmd(dir, cmds[i], forms[k], out, sizeof out);
			cr_assert_eq(rc, 0, "nnnkit %s with M = %s: exit %d: %s", cmds[i], forms[k], rc, out);
		}
	/* The same model whatever its form: the same outputs. */
	for (size_t k = 1; k < 4; k++) {
		cr_assert_eq(t_sh(out, sizeof out,
		                  "cd %s && %s run %s --input x.npy -o y%zu.npy && %s run m.nnn --input x.npy -o y.npy && "
		                  "cmp y.npy y%zu.npy",
		                  dir, nnnkit_bin(), forms[k], k, nnnkit_bin(), k),
		             0, "%s: %s", forms[k], out);
	}
}

/* What shows offsets says whose they are; an array is not a model. */
Test(forms, offsets_and_arrays_said_as_such)
{
	char out[16384];
	const char *dir = setup();
	cr_assert_eq(run_cmd(dir, "dump M", "json.bin", out, sizeof out), 0, "%s", out);
	cr_assert(strstr(out, "json.bin: a JSON model: offsets are those of the .nnn file it converts to"), "%s", out);
	cr_assert_eq(run_cmd(dir, "validate M", "onnx.bin", out, sizeof out), 0, "%s", out);
	cr_assert(strstr(out, "onnx.bin: an ONNX model: offsets are those of the .nnn file it converts to"), "%s", out);
	cr_assert_eq(run_cmd(dir, "dump M", "st.bin", out, sizeof out), 0, "%s", out);
	cr_assert(strstr(out, "st.bin: a safetensors model: offsets are those of the .nnn file it converts to"), "%s",
	          out);
	for (size_t i = 0; i < NCMDS; i++) {
		int rc = run_cmd(dir, cmds[i], "array.bin", out, sizeof out);
		cr_assert(rc != 0 && strstr(out, "this is a .npy array, not a model"), "nnnkit %s with a .npy: exit %d: %s",
		          cmds[i], rc, out);
	}
}

/* A Conv model of two 1x1 filters over 1 channel, as JSON: the edits below
 * each make one problem. */
static const char CONV[] = "{\n"
                           "  \"description\": \"\",\n"
                           "  \"param_count\": 4,\n"
                           "  \"layers\": [\n"
                           "    {\n"
                           "      \"id\": \"conv\",\n"
                           "      \"activation\": {\"id\": \"linear\"},\n"
                           "      \"dropout\": 0.0,\n"
                           "      \"bias\": {\"dims\": [2], \"requires_grad\": false, \"data\": [0.5, 1.0]},\n"
                           "      \"filters\": 2,\n"
                           "      \"kernels\": {\"dims\": [2, 1, 1, 1], \"requires_grad\": false, \"data\": [1.0, 2.0]},\n"
                           "      \"padding_type\": \"valid\",\n"
                           "      \"padding_dims\": [0, 0, 0, 0]\n"
                           "    }\n"
                           "  ]\n"
                           "}\n";

/* CONV with `from` replaced by `to`, written as NAME in dir; *line and
 * *column: where in it the first byte of `to` is. */
static void write_edit(const char *dir, const char *name, const char *from, const char *to, int *line, int *column)
{
	const char *at = strstr(CONV, from);
	cr_assert_not_null(at, "%s", from);
	FILE *f = fopen(t_fmt("%s/%s", dir, name), "w");
	cr_assert_not_null(f);
	fprintf(f, "%.*s%s%s", (int)(at - CONV), CONV, to, at + strlen(from));
	cr_assert_eq(fclose(f), 0);
	*line = 1, *column = 1;
	for (const char *p = CONV; p < at; p++) {
		if (*p == '\n')
			*line += 1, *column = 1;
		else
			*column += 1;
	}
}

/* Every problem of a model read from JSON, from its decoding, its validation
 * or its shapes, says FILE:LINE:COLUMN: path, at the value of its field (the
 * issue: "ps.json: layers[0].strides @0x0"), in text and in --json. */
Test(forms, json_problems_at_line_and_column)
{
	static const struct {
		const char *cmd, *from, *to, *path;
		int skip; /* bytes of `to` before the value the problem is about */
	} cases[] = {
#define SAME(text) text, text
		/* validation: a rule of the layer (the bias's shape), then the padding rule */
		{ "validate M", "[2], \"requires_grad\": false, \"data\": [0.5, 1.0]",
		  "[3], \"requires_grad\": false, \"data\": [0.5, 1.0, 0.0]", "layers[0].bias.dims[0]", 1 },
		{ "convert M out.nnn", "[0, 0, 0, 0]", "[0, 0, 0]", "layers[0].padding_dims", 0 },
		{ "validate M", "\"param_count\": 4", "\"param_count\": 5", "param_count", 15 },
		/* decoding: an enum's name */
		{ "info M", "\"valid\"", "\"vald\"", "layers[0].padding_type", 0 },
		/* shapes: an input the first layer does not take, at the kernels' channels */
		{ "validate M --input-shape 1,4,4,3", SAME("1], \"requires_grad\": false, \"data\": [1.0, 2.0]"),
		  "layers[0].kernels.dims[3]", 0 },
		{ "run M --input x.npy --input-shape 1,14,14,4", SAME("1], \"requires_grad\": false, \"data\": [1.0, 2.0]"),
		  "layers[0].kernels.dims[3]", 0 },
	};
#undef SAME
	char out[16384], want[512];
	const char *dir = setup();
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		int line, column;
		write_edit(dir, "bad.json", cases[i].from, cases[i].to, &line, &column);
		run_cmd(dir, cases[i].cmd, "bad.json", out, sizeof out);
		column += cases[i].skip;
		snprintf(want, sizeof want, "bad.json:%d:%d: %s: ", line, column, cases[i].path);
		cr_expect(strstr(out, want), "case %zu (%s): expected \"%s\" in:\n%s", i, cases[i].cmd, want, out);
		cr_expect(!strstr(out, "@0x"), "case %zu: an offset of the .nnn encoding shown: %s", i, out);
		if (strncmp(cases[i].cmd, "validate", 8))
			continue;
		run_cmd(dir, t_fmt("%s --json", cases[i].cmd), "bad.json", out, sizeof out);
		snprintf(want, sizeof want, "\"path\": \"%s\", \"offset\": null, \"line\": %d, \"column\": %d", cases[i].path,
		         line, column);
		cr_expect(strstr(out, want), "case %zu --json: expected %s in:\n%s", i, want, out);
	}
}
