/* test_cli.c: nnnkit as a user meets it: exit codes, messages on stderr as
 * "nnnkit: FILE: message", --help everywhere, --json. Runs $NNNKIT (set by
 * make test), or build/nnnkit. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nnn/model.h>
#include <nnn/npy.h>
#include <nnn/schema_gen.h>

#include "builder.h"
#include "clirun.h"
#include "ctx.h"
#include "shell.h"

static const char *tiny_file(void)
{
	static char path[512];
	bb_t b = { 0 };
	bb_tiny(&b);
	snprintf(path, sizeof path, "%s", bb_to_file(&b, "tiny.nnn"));
	bb_free(&b);
	return path;
}

Test(cli, help_and_usage_errors)
{
	static const char *cmds[] = { "info", "validate", "dump", "convert", "map", "graph", "export", "build" };
	run_t r;
	nnnkit(&r, "--help");
	cr_assert_eq(r.code, 0);
	cr_assert(strstr(r.out, "Exit codes"), "%s", r.out);
	/* The schema's types, from the generated codec; the man page repeats them. */
	{
		static char man[65536];
		char types[1024];
		const char *b = t_build_dir();
		snprintf(types, sizeof types, "\n  layer types: %s\n  activations: %s\n", nnn_type_layer_id.names,
		         nnn_type_activation_id.names);
		cr_assert(strstr(r.out, types), "no '%s' in:\n%s", types, r.out);
		snprintf(types, sizeof types, "%s/nnnkit.1", b);
		slurp_keep(types, man, sizeof man);
		snprintf(types, sizeof types, ".nf\n  layer types: %s\n  activations: %s\n.fi\n", nnn_type_layer_id.names,
		         nnn_type_activation_id.names);
		cr_expect(strstr(man, types), "the man page lacks '%s'", types);
	}
	for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
		char args[64];
		snprintf(args, sizeof args, "%s --help", cmds[i]);
		nnnkit(&r, args);
		cr_assert_eq(r.code, 0, "%s", args);
		cr_assert(strstr(r.out, "usage: nnnkit"), "%s: %s", args, r.out);
		snprintf(args, sizeof args, "%s --bogus", cmds[i]);
		nnnkit(&r, args);
		cr_assert_eq(r.code, 2, "%s", args);
		cr_assert(strstr(r.err, "unknown option --bogus"), "%s", r.err);
	}
	nnnkit(&r, "frobnicate");
	cr_assert_eq(r.code, 2);
	/* One line and where to look, not the whole help. */
	cr_assert_str_eq(r.err, "nnnkit: unknown command 'frobnicate'\nsee 'nnnkit --help' for the commands\n");
	/* Global options come from their table: a flag takes no value, FILE is needed. */
	nnnkit(&r, "--progress=1 info tiny.nnn");
	cr_assert_eq(r.code, 2);
	cr_assert_str_eq(r.err, "nnnkit: --progress takes no value\nsee 'nnnkit --help'\n");
	nnnkit(&r, "info tiny.nnn --plugin");
	cr_assert_eq(r.code, 2);
	cr_assert(strstr(r.err, "nnnkit: --plugin needs a file\n"), "%s", r.err);
	nnnkit(&r, "--plugin - info tiny.nnn");
	cr_assert_eq(r.code, 2);
	cr_assert(strstr(r.err, "'-' cannot work: a plugin is loaded from a file"), "%s", r.err);
	nnnkit(&r, "valdiate tiny.nnn");
	cr_assert_eq(r.code, 2);
	cr_assert(strstr(r.err, "unknown command 'valdiate'; did you mean 'validate'?"), "%s", r.err);
	nnnkit(&r, "conf");
	cr_assert(strstr(r.err, "did you mean 'conformance'?"), "%s", r.err);
	nnnkit(&r, "--version");
	cr_assert_eq(r.code, 0);
	cr_assert(!strncmp(r.out, "nnnkit ", 7) && strstr(r.out, " (plugin ABI 1."), "%s", r.out);
	{
		char layout[64];
		snprintf(layout, sizeof layout, ", schema layout 0x%08x)\n", (unsigned)NNN_SCHEMA_LAYOUT);
		cr_assert(strstr(r.out, layout), "no '%s' in %s", layout, r.out);
	}
	nnnkit(&r, "");
	cr_assert_eq(r.code, 2);
	nnnkit(&r, "validate --input-shape 1,x tiny.nnn");
	cr_assert_eq(r.code, 2);
}

Test(cli, info_table)
{
	run_t r;
	char args[600];
	snprintf(args, sizeof args, "info %s", tiny_file());
	nnnkit(&r, args);
	cr_assert_eq(r.code, 0, "%s", r.err);
	cr_assert(strstr(r.out, "\"tiny\""), "%s", r.out);
	cr_assert(strstr(r.out, "parameters:   11"), "%s", r.out);
	cr_assert(strstr(r.out, "Leaky ReLU(tau=0.1)"), "%s", r.out);
	cr_assert(strstr(r.out, "weights [3,2]"), "%s", r.out);
	cr_assert(strstr(r.out, "neurons=2 flatten=false"), "%s", r.out);
	/* Columns line up: each heading starts where its values do. */
	const char *head = strstr(r.out, "\n#  "), *row0 = strstr(r.out, "\n0  "), *row1 = strstr(r.out, "\n1  ");
	cr_assert(head && row0 && row1, "%s", r.out);
	cr_assert_eq(strstr(head, "activation") - head, strstr(row0, "Leaky ReLU") - row0, "%s", r.out);
	cr_assert_eq(strstr(head, "activation") - head, strstr(row1, "Linear") - row1, "%s", r.out);
	cr_assert_eq(strstr(head, "kernel") - head, strstr(row1, "builtin.so") - row1, "%s", r.out);
}

Test(cli, validate_text_and_json)
{
	run_t r;
	char args[700];
	const char *path = tiny_file();
	snprintf(args, sizeof args, "validate --input-shape 5,3 %s", path);
	nnnkit(&r, args);
	cr_assert_eq(r.code, 0, "%s", r.err);
	cr_assert(strstr(r.out, "output shape [5, 1]"), "%s", r.out);

	/* Two problems, one per line, each "nnnkit: FILE: path @0xOFF: ...". */
	bb_t b = { 0 };
	bb_tiny(&b);
	bb_put_i32(&b, 12, 5);
	b.b[100] = 7;
	path = bb_to_file(&b, "bad.nnn");
	snprintf(args, sizeof args, "validate %s", path);
	nnnkit(&r, args);
	cr_assert_eq(r.code, 1);
	char want[600];
	snprintf(want, sizeof want, "nnnkit: %s: layers[0].flatten @0x64: boolean byte not 0 or 1: found 7", path);
	cr_assert(strstr(r.err, want), "%s", r.err);
	snprintf(want, sizeof want, "nnnkit: %s: param_count @0xc: parameter count", path);
	cr_assert(strstr(r.err, want), "%s", r.err);
	int lines = 0;
	for (const char *p = r.err; *p; p++)
		lines += *p == '\n';
	cr_assert_eq(lines, 2, "%s", r.err);

	snprintf(args, sizeof args, "validate --json %s", path);
	nnnkit(&r, args);
	cr_assert_eq(r.code, 1);
	cr_assert(strstr(r.out, "\"valid\": false"), "%s", r.out);
	cr_assert(strstr(r.out, "\"code\": \"E_BOOL\", \"number\": 14, \"path\": \"layers[0].flatten\", \"offset\": 100"),
	          "%s", r.out);
	cr_assert(strstr(r.out, "\"code\": \"E_PARAM_COUNT\""), "%s", r.out);
	cr_assert_str_eq(r.err, "");
	bb_free(&b);

	nnnkit(&r, "validate /nonexistent.nnn");
	cr_assert_eq(r.code, 2);
	cr_assert(strstr(r.err, "nnnkit: /nonexistent.nnn: "), "%s", r.err);
}

Test(cli, validate_check_finite)
{
	run_t r;
	char args[700], want[700];
	bb_t b = { 0 };
	bb_tiny(&b);
	bb_put_f32(&b, 76 + 4 * 2, NAN); /* layers[0].weights.data[2] */
	const char *path = bb_to_file(&b, "nan.nnn");

	/* Validation alone never reads tensor data: the file is valid. */
	snprintf(args, sizeof args, "validate %s", path);
	nnnkit(&r, args);
	cr_assert_eq(r.code, 0, "%s", r.err);

	snprintf(args, sizeof args, "validate --check-finite %s", path);
	nnnkit(&r, args);
	cr_assert_eq(r.code, 1);
	snprintf(want, sizeof want, "nnnkit: %s: layers[0].weights.data[2] @0x54: value out of range: found NaN", path);
	cr_assert(strstr(r.err, want), "%s", r.err);

	snprintf(args, sizeof args, "validate --check-finite --json %s", path);
	nnnkit(&r, args);
	cr_assert_eq(r.code, 1);
	cr_assert(strstr(r.out, "\"path\": \"layers[0].weights.data[2]\", \"offset\": 84"), "%s", r.out);
	cr_assert(strstr(r.out, "\"values\": 11, \"nonfinite\": 1}"), "%s", r.out);

	snprintf(args, sizeof args, "validate --check-finite %s", tiny_file());
	nnnkit(&r, args);
	cr_assert_eq(r.code, 0, "%s", r.err);
	cr_assert(strstr(r.out, "valid, all 11 parameter values finite"), "%s", r.out);
	bb_free(&b);
}

Test(cli, dump_names_every_byte_and_marks_problems)
{
	run_t r;
	char args[600];
	bb_t b = { 0 };
	bb_tiny(&b);
	b.b[42] = 9;
	b.n -= 3; /* cut inside the last weights */
	snprintf(args, sizeof args, "dump %s", bb_to_file(&b, "cut.nnn"));
	nnnkit(&r, args);
	cr_assert_eq(r.code, 1);
	cr_assert(strstr(r.out, "0x0000001a         4  layers[0].activation.tau"), "%s", r.out);
	cr_assert(strstr(r.out, "0x0000002a         1  layers[0].bias.requires_grad "), "%s", r.out);
	cr_assert(strstr(r.out, " bool               invalid byte 9\n"), "%s", r.out);
	cr_assert(strstr(r.out, "!! layers[0].bias.requires_grad @0x2a: boolean byte"), "%s", r.out);
	cr_assert(strstr(r.out, "!! layers[1].weights.data @0x8d: file ends early"), "%s", r.out);
	cr_assert(strstr(r.out, "0x0000008d        10  (not decoded)"), "%s", r.out);
	bb_free(&b);
}

Test(cli, convert_roundtrip)
{
	run_t r;
	char args[1200], out[600];
	const char *in = tiny_file();
	snprintf(out, sizeof out, "%s.copy.nnn", in);
	snprintf(args, sizeof args, "convert %s %s", in, out);
	nnnkit(&r, args);
	cr_assert_eq(r.code, 0, "%s", r.err);
	snprintf(args, sizeof args, "cmp -s %s %s", in, out);
	cr_assert_eq(system(args), 0);
	snprintf(args, sizeof args, "convert %s %s.txt", in, in);
	nnnkit(&r, args);
	cr_assert_eq(r.code, 2);
	cr_assert(strstr(r.err, "cannot tell the output form"), "%s", r.err);
	unlink(out);
}

/* The tiny model by hand: layer 0 is x @ [[-1,-0.5],[0,0.5],[1,1.5]] + [-1,-0.5]
 * with Leaky ReLU 0.1, layer 1 is h @ [[-1],[-0.5]] - 1. For x = [1,2,3]:
 * h = [1, 4.5], y = -1 - 2.25 - 1 = -4.25. For x = [0,0,-1]: h = leaky([-2,-2])
 * = [-0.2,-0.2], y = 0.2 + 0.1 - 1 = -0.7. */
Test(cli, run_computes_by_hand_values)
{
	run_t r;
	char args[2048], in[600], out[600];
	const float x[6] = { 1, 2, 3, 0, 0, -1 };
	nnn_shape_t s = { .rank = 2, .dims = { 2, 3 } };
	const char *model = tiny_file();
	snprintf(in, sizeof in, "%s.x.npy", model);
	snprintf(out, sizeof out, "%s.y.npy", model);
	cr_assert_eq(nnn_npy_write_file(in, &s, x, NULL), NNN_OK);
	snprintf(args, sizeof args, "run %s --input %s", model, in);
	nnnkit(&r, args);
	cr_assert_eq(r.code, 0, "%s", r.err);
	cr_assert_str_eq(r.out, "-4.25\n-0.699999988\n");
	snprintf(args, sizeof args, "run %s --input %s --output %s --batch 1", model, in, out);
	nnnkit(&r, args);
	cr_assert_eq(r.code, 0, "%s", r.err);
	nnn_npy_t y;
	cr_assert_eq(nnn_npy_read_file(out, &y, NULL), NNN_OK);
	cr_assert_eq(y.shape.rank, 2);
	cr_assert_eq(y.shape.dims[0], 2);
	cr_assert_eq(y.shape.dims[1], 1);
	cr_assert_eq(y.data[0], -4.25f);
	cr_assert_eq(y.data[1], -0.7f);
	nnn_npy_free(&y);

	/* A wrong input width is named with the layer. */
	nnn_shape_t s2 = { .rank = 2, .dims = { 3, 2 } };
	cr_assert_eq(nnn_npy_write_file(in, &s2, x, NULL), NNN_OK);
	snprintf(args, sizeof args, "run %s --input %s", model, in);
	nnnkit(&r, args);
	cr_assert_eq(r.code, 1);
	cr_assert(strstr(r.err, "layers[0].weights.dims[0]"), "%s", r.err);
	cr_assert(strstr(r.err, "found 3 inputs, but the incoming last axis has 2"), "%s", r.err);

	/* Without plugins there is no kernel: a plugin situation (exit 3); the
	 * error says so and what to do. */
	cr_assert_eq(nnn_npy_write_file(in, &s, x, NULL), NNN_OK);
	snprintf(args, sizeof args, "--no-default-plugins run %s --input %s", model, in);
	nnnkit(&r, args);
	cr_assert_eq(r.code, 3);
	cr_assert(strstr(r.err, "layers[0] @0x18: plugin not loaded: Dense: no loaded plugin provides a kernel for layer ID 0"),
	          "%s", r.err);
	cr_assert(strstr(r.err, "--plugin FILE or NNN_PLUGIN_PATH"), "%s", r.err);
	unlink(in);
	unlink(out);
}

Test(cli, plugins_lists_candidates)
{
	run_t r;
	nnnkit(&r, "plugins -v");
	cr_assert_eq(r.code, 0, "%s%s", r.out, r.err);
	cr_assert(strstr(r.out, "/plugins/builtin.so: loaded (builtin 1.0)"), "%s", r.out);
	/* today's core types among what it provides, as the schema names them */
	static const struct {
		const char *kind;
		int id;
		const char *(*name)(int64_t);
	} core[] = { { "layer", NNN_LAYER_ID_DENSE, nnn_layer_id_name },
		     { "layer", NNN_LAYER_ID_CONV, nnn_layer_id_name },
		     { "activation", NNN_ACTIVATION_ID_LINEAR, nnn_activation_id_name },
		     { "activation", NNN_ACTIVATION_ID_SOFTMAX, nnn_activation_id_name } };
	for (size_t i = 0; i < sizeof core / sizeof core[0]; i++) {
		char want[64];
		snprintf(want, sizeof want, " %s %d %s", core[i].kind, core[i].id, core[i].name(core[i].id));
		cr_assert(strstr(r.out, want), "no '%s' in %s", want, r.out);
	}
	nnnkit(&r, "--plugin /nonexistent/x.so plugins");
	cr_assert_eq(r.code, 3, "%s", r.out);
	cr_assert(strstr(r.err, "/nonexistent/x.so: open stage: cannot resolve the path"), "%s", r.err);
	cr_assert(strstr(r.out, "/nonexistent/x.so: open"), "%s", r.out);
}

/* A small corpus by hand: the runner's behaviour does not depend on how
 * many cases there are. */
static const char *mini_corpus(void)
{
	static char dir[64];
	char path[256];
	bb_t b = { 0 };
	snprintf(dir, sizeof dir, "/tmp/nnnconf.XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	static const struct {
		const char *file, *cls, *code;
		int at, value;
	} cases[] = {
		{ "valid.nnn", "valid", "OK", -1, 0 },
		{ "dims.nnn", "semantic", "E_DIM_MISMATCH", -2, 0 }, /* bias [2] with 3 values */
		{ "bool.nnn", "bool", "E_BOOL", 42, 2 },
		{ "magic.nnn", "magic", "E_MAGIC", 0, 0x4e4e4e2f },
	};
	snprintf(path, sizeof path, "%s/manifest.json", dir);
	FILE *m = fopen(path, "w");
	fprintf(m, "{\"schema\": \"nnn\", \"cases\": [\n");
	for (size_t i = 0; i < 4; i++) {
		if (cases[i].at == -2) {
			/* Only the dims product is wrong: shapes and counts agree otherwise. */
			int32_t bias[1] = { 2 }, w[2] = { 3, 2 };
			bb_header(&b, "dims", 3 + 6, 1);
			bb_u8(&b, 0), bb_u8(&b, 0), bb_f32(&b, 0);
			bb_i32s(&b, 1, bias), bb_u8(&b, 1), bb_i32(&b, 3);
			bb_f32(&b, 1), bb_f32(&b, 2), bb_f32(&b, 3);
			bb_i32(&b, 2), bb_tensor(&b, 2, w), bb_u8(&b, 0);
		} else {
			bb_tiny(&b);
		}
		if (cases[i].at >= 0 && !strcmp(cases[i].cls, "bool"))
			b.b[cases[i].at] = (unsigned char)cases[i].value;
		else if (cases[i].at >= 0)
			bb_put_i32(&b, (size_t)cases[i].at, cases[i].value);
		snprintf(path, sizeof path, "%s/%s", dir, cases[i].file);
		FILE *f = fopen(path, "wb");
		fwrite(b.b, 1, b.n, f);
		fclose(f);
		bb_free(&b);
		fprintf(m, " {\"file\": \"%s\", \"valid\": %s, \"class\": \"%s\", \"code\": \"%s\"}%s\n", cases[i].file,
		        i ? "false" : "true", cases[i].cls, cases[i].code, i < 3 ? "," : "");
	}
	fprintf(m, "]}\n");
	fclose(m);
	return dir;
}

Test(cli, conformance_runner_catches_lenient_and_crashing_decoders)
{
	run_t r;
	char args[1024];
	const char *dir = mini_corpus();
	const char *b = t_build_dir();

	snprintf(args, sizeof args, "conformance --corpus %s", dir);
	nnnkit_env(&r, "-u NNNKIT_PROGRESS", args);
	cr_assert_eq(r.code, 0, "%s%s", r.out, r.err);
	cr_assert(strstr(r.out, "\n4 passed, 0 failed\n"), "%s", r.out);
	cr_assert_str_eq(r.err, ""); /* no progress bar on a pipe */
	char quiet[sizeof r.out];
	memcpy(quiet, r.out, sizeof quiet);
	snprintf(args, sizeof args, "--progress conformance --corpus %s", dir);
	nnnkit(&r, args);
	cr_assert_eq(r.code, 0, "%s%s", r.out, r.err);
	cr_assert_str_eq(r.out, quiet);
	cr_assert(!strncmp(r.err, "\rconformance [", 14) && strstr(r.err, " 0/4 cases   0%"), "%s", r.err);
	cr_assert_eq(r.err[strlen(r.err) - 1], '\r', "the bar is not erased: %s", r.err);

	/* nnnkit itself as an external decoder. */
	snprintf(args, sizeof args, "conformance --corpus %s --decoder '%s validate {file}'",
	         dir, nnnkit_bin());
	nnnkit(&r, args);
	cr_assert_eq(r.code, 0, "%s", r.out);

	/* One that skips the dims product check is caught. */
	snprintf(args, sizeof args, "conformance --corpus %s --decoder '%s/lenient {file}'", dir, b);
	nnnkit(&r, args);
	cr_assert_eq(r.code, 1, "%s", r.out);
	cr_assert(strstr(r.out, "semantic            1        0        1        0"), "%s", r.out);
	cr_assert(strstr(r.out, "failed dims.nnn: accepted an invalid file (expected E_DIM_MISMATCH)"), "%s", r.out);
	cr_assert(strstr(r.out, "\n3 passed, 1 failed\n"), "%s", r.out);

	/* Signals and timeouts are crashes. */
	snprintf(args, sizeof args, "conformance --corpus %s --decoder 'kill -SEGV $$ # {file}' --json", dir);
	nnnkit(&r, args);
	cr_assert_eq(r.code, 1);
	cr_assert(strstr(r.out, "\"crashed\": 4"), "%s", r.out);
	cr_assert(strstr(r.out, "killed by signal 11"), "%s", r.out);
	snprintf(args, sizeof args, "conformance --corpus %s --decoder 'sleep 5 # {file}' --timeout 0.2", dir);
	nnnkit(&r, args);
	cr_assert_eq(r.code, 1);
	cr_assert(strstr(r.out, "timed out after 0.2 s"), "%s", r.out);
	cr_assert(strstr(r.out, "\n0 passed, 4 failed\n"), "%s", r.out);

	snprintf(args, sizeof args, "rm -rf %s", dir);
	cr_assert_eq(system(args), 0);
}

/* ---- the JSON form, export, build ---- */

/* Files are handled here rather than with sed, grep or test: under `make
 * valgrind` every child process is traced, and those leak. */
static char *file_text(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	size_t n = 0, cap = 4096;
	char *b = malloc(cap + 1);
	cr_assert_not_null(f, "cannot open %s", path);
	cr_assert_not_null(b);
	for (size_t k; (k = fread(b + n, 1, cap - n, f)) > 0;) {
		n += k;
		if (n == cap) {
			b = realloc(b, (cap *= 2) + 1);
			cr_assert_not_null(b);
		}
	}
	fclose(f);
	b[n] = '\0';
	if (len)
		*len = n;
	return b;
}

static void file_put(const char *path, const char *text)
{
	FILE *f = fopen(path, "wb");
	cr_assert_not_null(f, "cannot create %s", path);
	cr_assert_eq(fputs(text, f) >= 0, 1);
	cr_assert_eq(fclose(f), 0);
}

/* `text` with the first `from` replaced by `to` (returned: free it). */
static char *replaced(const char *text, const char *from, const char *to)
{
	const char *at = strstr(text, from);
	cr_assert_not_null(at, "no %s in %s", from, text);
	char *s = malloc(strlen(text) + strlen(to) + 1);
	cr_assert_not_null(s);
	sprintf(s, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
	return s;
}

static bool same_files(const char *a, const char *b)
{
	size_t na, nb;
	char *x = file_text(a, &na), *y = file_text(b, &nb);
	bool same = na == nb && !memcmp(x, y, na);
	free(x);
	free(y);
	return same;
}

Test(cli, json_convert_both_ways)
{
	run_t r;
	char dir[600];
	const char *in = tiny_file();
	snprintf(dir, sizeof dir, "%s", in);
	*strrchr(dir, '/') = '\0';

	/* By extension, by --to, and by content (a JSON file named .txt). */
	nnnkitf(&r, "convert %s %s/t.json", in, dir);
	cr_assert_eq(r.code, 0, "%s", r.err);
	cr_assert_str_eq(r.out, "");
	nnnkitf(&r, "convert --to json %s %s/t.txt", in, dir);
	cr_assert_eq(r.code, 0, "%s", r.err);
	char a[700], b[700];
	snprintf(a, sizeof a, "%s/t.json", dir);
	snprintf(b, sizeof b, "%s/t.txt", dir);
	cr_assert(same_files(a, b));
	nnnkitf(&r, "convert %s/t.txt %s/back.nnn", dir, dir);
	cr_assert_eq(r.code, 0, "%s", r.err);
	snprintf(b, sizeof b, "%s/back.nnn", dir);
	cr_assert(same_files(in, b), "not byte for byte");
	nnnkitf(&r, "convert %s/t.json --to nnn %s/back2", dir, dir);
	cr_assert_eq(r.code, 0, "%s", r.err);
	snprintf(b, sizeof b, "%s/back2", dir);
	cr_assert(same_files(in, b));

	/* To standard output; tensors of 6 values and more as .npy files. */
	nnnkitf(&r, "convert %s -", in);
	cr_assert_eq(r.code, 0, "%s", r.err);
	cr_assert(strstr(r.out, "\"description\": \"tiny\",\n  \"param_count\": 11,\n  \"layers\": [\n"), "%s", r.out);
	nnnkitf(&r, "convert --tensors %s/npy --tensors-min 6 %s %s/t2.json", dir, in, dir);
	cr_assert_eq(r.code, 0, "%s", r.err);
	snprintf(a, sizeof a, "%s/npy/layers.0.weights.npy", dir);
	cr_assert_eq(access(a, R_OK), 0);
	snprintf(a, sizeof a, "%s/npy/layers.1.weights.npy", dir);
	cr_assert_neq(access(a, F_OK), 0, "2 values are fewer than 6");
	snprintf(a, sizeof a, "%s/t2.json", dir);
	char *text = file_text(a, NULL);
	cr_assert(strstr(text, "\"data\": {\"npy\": \"npy/layers.0.weights.npy\""), "%s", text);
	free(text);
	nnnkitf(&r, "convert %s/t2.json %s/back3.nnn", dir, dir);
	cr_assert_eq(r.code, 0, "%s", r.err);
	snprintf(b, sizeof b, "%s/back3.nnn", dir);
	cr_assert(same_files(in, b));

	/* A mistake: FILE:LINE:COLUMN, path, what, the remedy. */
	snprintf(a, sizeof a, "%s/t.json", dir);
	text = file_text(a, NULL);
	char *bad = replaced(text, "\"dims\": [3, 2]", "\"dims\": [3, \"two\"]");
	snprintf(a, sizeof a, "%s/bad.json", dir);
	file_put(a, bad);
	free(bad);
	free(text);
	nnnkitf(&r, "convert %s/bad.json %s/bad.nnn", dir, dir);
	cr_assert_eq(r.code, 1);
	char want[1024];
	snprintf(want, sizeof want, "nnnkit: %s/bad.json:11:31: layers[0].weights.dims[1]: value of the wrong kind: "
	         "expected an integer in -2147483648..2147483647, found \"two\" (write it as", dir);
	cr_assert(strstr(r.err, want), "%s", r.err);
	snprintf(a, sizeof a, "%s/bad.nnn", dir);
	cr_assert_neq(access(a, F_OK), 0, "nothing written");

	nnnkitf(&r, "convert --tensors x %s %s/x.nnn", in, dir);
	cr_assert_eq(r.code, 2);
	cr_assert(strstr(r.err, "--tensors is for JSON output"), "%s", r.err);
	cr_assert_eq(t_sh(NULL, 0, "rm -rf %s", dir), 0);
}

Test(cli, export_and_build_back)
{
	run_t r;
	char dir[600];
	const char *in = tiny_file();
	snprintf(dir, sizeof dir, "%s", in);
	*strrchr(dir, '/') = '\0';
	nnnkitf(&r, "export %s %s/out", in, dir);
	cr_assert_eq(r.code, 0, "%s", r.err);
	char index[4096], path[700];
	snprintf(path, sizeof path, "%s/out/index.json", dir);
	slurp(path, index, sizeof index);
	cr_assert(strstr(index, "{\n  \"model\": \"model.json\",\n  \"tensors\": [\n    {\"path\": \"layers[0].bias\", "
	                        "\"file\": \"layers.0.bias.npy\", \"shape\": [2], \"dtype\": \"float32\"},\n"), "%s", index);
	cr_assert(strstr(index, "{\"path\": \"layers[1].weights\", \"file\": \"layers.1.weights.npy\", \"shape\": [2, 1], "
	                        "\"dtype\": \"float32\"}\n  ]\n}\n"), "%s", index);
	nnnkitf(&r, "build %s/out/model.json %s/rebuilt.nnn", dir, dir);
	cr_assert_eq(r.code, 0, "%s", r.err);
	snprintf(path, sizeof path, "%s/rebuilt.nnn", dir);
	cr_assert(same_files(in, path), "export, then build: not byte for byte");
	cr_assert_eq(t_sh(NULL, 0, "rm -rf %s", dir), 0);
}

/* A model from a hand-written spec and .npy files; a wrong one is refused
 * with the validator's message at the spec's line, and OUT is left alone. */
Test(cli, build_from_spec)
{
	run_t r;
	char dir[64] = "/tmp/nnnbuild.XXXXXX", path[256];
	cr_assert_not_null(mkdtemp(dir));
	static const float w1[12] = { 1, 0, 0, 1, 0, 1, 0, 1, 0, 0, 1, 1 }, b1[4] = { 0, 0, 0, -1 },
	                   w2[8] = { 1, -1, 1, -1, 1, -1, 1, -1 }, b2[2] = { 0.5f, 0 };
	const struct {
		const char *name;
		int32_t rank;
		int64_t dims[2];
		const float *v;
	} t[] = { { "w1", 2, { 3, 4 }, w1 }, { "b1", 1, { 4 }, b1 }, { "w2", 2, { 4, 2 }, w2 }, { "b2", 1, { 2 }, b2 },
		  { "b3", 1, { 3 }, w1 } };
	for (size_t i = 0; i < 5; i++) {
		nnn_shape_t s = { .rank = t[i].rank, .dims = { t[i].dims[0], t[i].dims[1] } };
		snprintf(path, sizeof path, "%s/%s.npy", dir, t[i].name);
		cr_assert_eq(nnn_npy_write_file(path, &s, t[i].v, NULL), NNN_OK);
	}
	static const char spec[] =
		"{\"description\": \"built\", \"layers\": [\n"
		"  {\"activation\": {\"id\": \"leaky_relu\", \"tau\": 0.5}, \"weights\": \"w1.npy\", \"bias\": \"b1.npy\"},\n"
		"  {\"id\": \"dense\", \"weights\": \"w2.npy\", \"bias\": \"b2.npy\"}]}\n";
	char *wrong = replaced(spec, "b2.npy", "b3.npy"), *nobias = replaced(spec, ", \"bias\": \"b2.npy\"", "");
	const char *const files[][2] = { { "spec.json", spec }, { "wrong.json", wrong }, { "nobias.json", nobias },
		                         { "out.nnn", "old\n" } };
	for (size_t i = 0; i < 4; i++) {
		snprintf(path, sizeof path, "%s/%s", dir, files[i][0]);
		file_put(path, files[i][1]);
	}
	free(wrong);
	free(nobias);
	nnnkitf(&r, "build --input-shape 5,3 %s/spec.json %s/model.nnn", dir, dir);
	cr_assert_eq(r.code, 0, "%s", r.err);
	cr_assert(strstr(r.out, "model.nnn: "), "%s", r.out);
	nnnkitf(&r, "info %s/model.nnn", dir);
	cr_assert(strstr(r.out, "parameters:   26"), "filled in: %s", r.out);
	cr_assert(strstr(r.out, "Leaky ReLU(tau=0.5)"), "%s", r.out);
	cr_assert(strstr(r.out, "neurons=4 flatten=false"), "from w1.npy: %s", r.out);

	/* b3 has 3 values; the second layer has 2 neurons. */
	nnnkitf(&r, "build %s/wrong.json %s/out.nnn", dir, dir);
	cr_assert_eq(r.code, 1, "%s", r.err);
	char want[512];
	snprintf(want, sizeof want, "nnnkit: %s/wrong.json:3:48: layers[1].bias.dims[0]: tensor shape does not fit the "
	         "layer: found 3, expected neurons = 2", dir);
	cr_assert(strstr(r.err, want), "the line of \"b3.npy\", which gave the dims: %s", r.err);
	nnnkitf(&r, "build %s/nobias.json %s/out.nnn", dir, dir);
	cr_assert_eq(r.code, 1, "%s", r.err);
	snprintf(want, sizeof want, "nnnkit: %s/nobias.json:3:3: layers[1].bias: required field missing", dir);
	cr_assert(strstr(r.err, want), "%s", r.err);
	/* Atomic: the old file is intact, and no temporary file is left. */
	snprintf(path, sizeof path, "%s/out.nnn", dir);
	char old[64];
	slurp_keep(path, old, sizeof old);
	cr_assert_str_eq(old, "old\n");
	DIR *d = opendir(dir);
	for (struct dirent *e; (e = readdir(d)) != NULL;)
		cr_assert_null(strstr(e->d_name, ".tmp"), "a temporary file was left: %s", e->d_name);
	closedir(d);
	cr_assert_eq(t_sh(NULL, 0, "rm -rf %s", dir), 0);
}

/* A spec that leaves a Conv's padding_dims out gets what its padding type
 * implies for each kernel size (format.md: same pads k - 1 in all, before
 * (k - 1) / 2, after the rest; valid pads none); a list given is kept, and
 * checked. Kernels 3x2: same gives [1, 1, 0, 1]. */
Test(cli, build_fills_padding_from_its_type)
{
	static const char *const cases[][2] = {
		{ "\"same\"", "4: [1, 1, 0, 1]" },
		{ "\"valid\"", "4: [0, 0, 0, 0]" },
		{ "\"same\", \"padding_dims\": [1, 1, 0, 1]", "4: [1, 1, 0, 1]" },
	};
	char dir[64] = "/tmp/nnnpads.XXXXXX", path[256], spec[512];
	run_t r;
	cr_assert_not_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/spec.json", dir);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		snprintf(spec, sizeof spec, "{\"layers\": [{\"id\": \"conv\", \"padding_type\": %s, \"kernels\": "
		         "{\"dims\": [2, 3, 2, 1], \"data\": [0,1,2,3,4,5,6,7,8,9,10,11]}, \"bias\": {\"dims\": [2], \"data\": [0, 0]}}]}\n", cases[i][0]);
		file_put(path, spec);
		nnnkitf(&r, "build --input-shape 1,4,4,1 %s %s/m.nnn", path, dir);
		cr_assert_eq(r.code, 0, "%s: %s", spec, r.err);
		nnnkitf(&r, "dump %s/m.nnn", dir);
		char *line = strstr(r.out, "layers[0].padding_dims");
		cr_assert(line && strstr(line, cases[i][1]) && strchr(line, '\n') > strstr(line, cases[i][1]), "%s: %s", spec,
		          r.out);
	}
	/* given, the list is the spec's: a wrong one is refused where it is */
	file_put(path, "{\"layers\": [{\"id\": \"conv\", \"padding_type\": \"same\", \"padding_dims\": [0, 0, 0, 0],\n"
	               " \"kernels\": {\"dims\": [2, 3, 2, 1], \"data\": [0,1,2,3,4,5,6,7,8,9,10,11]}, \"bias\": {\"dims\": [2], \"data\": [0, 0]}}]}\n");
	nnnkitf(&r, "build %s %s/m.nnn", path, dir);
	cr_assert_eq(r.code, 1, "%s", r.err);
	cr_assert(strstr(r.err, "layers[0].padding_dims[0]: padding dims do not match the padding type: found 0, expected 1 "
	                        "(before of axis 1 for kernel size 3)"), "%s", r.err);
	cr_assert_eq(t_sh(NULL, 0, "rm -rf %s", dir), 0);
}

/* docs/from-numpy.md's example: NumPy trains, nnnkit builds and runs, and
 * agrees with NumPy within 1e-5. */
Test(cli, from_numpy_example, .timeout = 120)
{
	if (t_sh(NULL, 0, "/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") != 0)
		cr_skip_test("numpy is not installed for /usr/bin/python3 (Debian: apt-get install python3-numpy): skipped");
	char dir[64] = "/tmp/nnnnumpy.XXXXXX", path[256];
	cr_assert_not_null(mkdtemp(dir));
	const char *bin = nnnkit_bin();
	cr_assert_eq(t_sh(NULL, 0, "NNNKIT=%s /usr/bin/python3 examples/from-numpy/train.py %s/out > %s/log 2>&1", bin, dir, dir),
	             0, "the example failed: see %s/log", dir);
	nnn_npy_t y, want;
	snprintf(path, sizeof path, "%s/out/y.npy", dir);
	cr_assert_eq(nnn_npy_read_file(path, &y, NULL), NNN_OK);
	snprintf(path, sizeof path, "%s/out/expected.npy", dir);
	cr_assert_eq(nnn_npy_read_file(path, &want, NULL), NNN_OK);
	cr_assert_eq(y.count, want.count);
	cr_assert_eq(y.shape.rank, 2);
	for (size_t i = 0; i < y.count; i++)
		cr_assert(fabsf(y.data[i] - want.data[i]) <= 1e-5f, "output %zu: nnnkit %.9g, NumPy %.9g", i,
		          (double)y.data[i], (double)want.data[i]);
	nnn_npy_free(&y);
	nnn_npy_free(&want);
	cr_assert_eq(t_sh(NULL, 0, "rm -rf %s", dir), 0);
}
