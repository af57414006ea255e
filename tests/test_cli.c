/* test_cli.c: nnnkit as a user meets it: exit codes, messages on stderr as
 * "nnnkit: FILE: message", --help everywhere, --json. Runs $NNNKIT (set by
 * make test), or build/nnnkit. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nnn/npy.h>

#include "builder.h"

typedef struct run {
	int code;
	char out[65536];
	char err[16384];
} run_t;

static void slurp(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "rb");
	size_t n = 0;
	if (f) {
		n = fread(buf, 1, size - 1, f);
		fclose(f);
	}
	buf[n] = '\0';
	unlink(path);
}

/* Runs `nnnkit ARGS` through the shell; fills exit code, stdout, stderr. */
static void nnnkit(run_t *r, const char *args)
{
	const char *bin = getenv("NNNKIT") ? getenv("NNNKIT") : "build/nnnkit";
	char out[] = "/tmp/nnncli.out.XXXXXX", err[] = "/tmp/nnncli.err.XXXXXX", cmd[4096];
	close(mkstemp(out));
	close(mkstemp(err));
	snprintf(cmd, sizeof cmd, "%s %s >%s 2>%s </dev/null", bin, args, out, err);
	int st = system(cmd);
	cr_assert(WIFEXITED(st), "nnnkit %s: did not exit normally", args);
	r->code = WEXITSTATUS(st);
	slurp(out, r->out, sizeof r->out);
	slurp(err, r->err, sizeof r->err);
}

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
	static const char *cmds[] = { "info", "validate", "dump", "convert", "export", "build" };
	run_t r;
	nnnkit(&r, "--help");
	cr_assert_eq(r.code, 0);
	cr_assert(strstr(r.out, "Exit codes"), "%s", r.out);
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

	/* Without plugins there is no kernel: the error says so and what to do. */
	cr_assert_eq(nnn_npy_write_file(in, &s, x, NULL), NNN_OK);
	snprintf(args, sizeof args, "--no-default-plugins run %s --input %s", model, in);
	nnnkit(&r, args);
	cr_assert_eq(r.code, 1);
	cr_assert(strstr(r.err, "layers[0] @0x18: unknown ID: Dense: no loaded plugin provides a kernel for layer ID 0"),
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
	cr_assert(strstr(r.out, "layer 0 dense, layer 1 conv, activation 0 linear"), "%s", r.out);
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
	const char *b = getenv("NNN_BUILD") ? getenv("NNN_BUILD") : "build";

	snprintf(args, sizeof args, "conformance --corpus %s", dir);
	nnnkit(&r, args);
	cr_assert_eq(r.code, 0, "%s%s", r.out, r.err);
	cr_assert(strstr(r.out, "\n4 passed, 0 failed\n"), "%s", r.out);

	/* nnnkit itself as an external decoder. */
	snprintf(args, sizeof args, "conformance --corpus %s --decoder '%s validate {file}'",
	         dir, getenv("NNNKIT") ? getenv("NNNKIT") : "build/nnnkit");
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
