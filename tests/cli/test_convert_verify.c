/* test_convert_verify.c: nnnkit convert --verify (issue 33): every ONNX
 * conversion, either way, runs the source and the output read back from
 * its bytes on seeded inputs and reports the largest errors on one line
 * (0 for the example's byte-exact round trip); other forms only when asked;
 * a model whose input shape cannot be found is a note by default and a
 * failure, with nothing written, when asked; the options are checked. The
 * figures of a conversion that differs are test_verify.c's (unit). */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <string.h>
#include <unistd.h>

#include "builder.h"
#include "ctx.h"
#include "shell.h"
#include "tmpdir.h"
#include "verifyline.h"

#define PFX "nnnverify."

TestSuite(convert_verify, .fini = t_tmpdir_remove, .timeout = 300);

static const char *setup(void)
{
	const char *dir = t_tmpdir(PFX);
	cr_assert_eq(t_sh(NULL, 0, "cd %s && %s/mkexample m.nnn x.npy >/dev/null", dir, t_build_dir()), 0);
	return dir;
}

/* Runs nnnkit ARGS in dir, stderr and stdout into out; the exit code. */
static int kit(const char *dir, char *out, size_t size, const char *args)
{
	return t_sh(out, size, "cd %s && exec 2>&1 && %s %s", dir, nnnkit_bin(), args);
}

static void zero_line(const char *text, const char *out, const char *in, const char *shape)
{
	t_verify_t v;
	cr_assert(t_verify_line(text, out, in, &v), "no verify line for %s: %s", out, text);
	cr_assert_eq(v.rows, 4, "%s", text);
	cr_assert_str_eq(v.input, shape, "%s", text);
	cr_assert_eq(v.abs, 0, "%s", text);
	cr_assert_eq(v.rel, 0, "%s", text);
}

Test(convert_verify, onnx_round_trip_reports_zero_both_ways)
{
	char out[8192];
	const char *dir = setup();
	cr_assert_eq(kit(dir, out, sizeof out, "convert m.nnn m.onnx"), 0, "%s", out);
	zero_line(out, "m.onnx", "m.nnn", "[4, 28, 28, 1]");
	cr_assert(strstr(out, "(the smallest size the model takes on its open axes; --input-shape gives another)"), "%s",
	          out);
	cr_assert_eq(kit(dir, out, sizeof out, "convert m.onnx back.nnn && cmp m.nnn back.nnn"), 0, "%s", out);
	zero_line(out, "back.nnn", "m.onnx", "[4, 28, 28, 1]");
	cr_assert_eq(kit(dir, out, sizeof out, "convert --input-shape 1,28,28,1 m.nnn - --to onnx >s.onnx"), 0, "%s", out);
	zero_line(out, "stdout", "m.nnn", "[4, 28, 28, 1]");
	cr_assert(!strstr(out, "smallest"), "%s", out);
	cr_assert_eq(kit(dir, out, sizeof out, "convert --verify-tol 0 s.onnx s.nnn && cmp m.nnn s.nnn"), 0, "%s", out);
	zero_line(out, "s.nnn", "s.onnx", "[4, 28, 28, 1]");
}

/* Off by default between nnnkit's own forms; --verify turns it on. */
Test(convert_verify, other_forms_when_asked)
{
	char out[8192];
	const char *dir = setup();
	cr_assert_eq(kit(dir, out, sizeof out, "convert m.nnn m.json"), 0, "%s", out);
	cr_assert(!strstr(out, "verify"), "%s", out);
	cr_assert_eq(kit(dir, out, sizeof out, "convert m.nnn m.st --to safetensors"), 0, "%s", out);
	cr_assert(!strstr(out, "verify"), "%s", out);
	cr_assert_eq(kit(dir, out, sizeof out, "convert --no-verify m.nnn n.onnx"), 0, "%s", out);
	cr_assert(!strstr(out, "verify"), "%s", out);
	cr_assert_eq(kit(dir, out, sizeof out, "convert --verify m.nnn v.json"), 0, "%s", out);
	zero_line(out, "v.json", "m.nnn", "[4, 28, 28, 1]");
	cr_assert_eq(kit(dir, out, sizeof out, "convert --verify m.json v.st --to safetensors"), 0, "%s", out);
	zero_line(out, "v.st", "m.json", "[4, 28, 28, 1]");
	cr_assert_eq(kit(dir, out, sizeof out, "convert --verify --tensors t --tensors-min 1000 m.nnn sub.json"), 0,
	             "%s", out);
	zero_line(out, "sub.json", "m.nnn", "[4, 28, 28, 1]");
}

Test(convert_verify, options_are_checked)
{
	char out[8192];
	const char *dir = setup();
	cr_assert_eq(kit(dir, out, sizeof out, "convert --verify --no-verify m.nnn a.onnx"), 2, "%s", out);
	cr_assert(strstr(out, "--no-verify with --verify or --verify-tol: give one"), "%s", out);
	cr_assert_eq(kit(dir, out, sizeof out, "convert --verify-tol x m.nnn a.onnx"), 2, "%s", out);
	cr_assert_eq(kit(dir, out, sizeof out, "convert --verify-tol -1 m.nnn a.onnx"), 2, "%s", out);
	cr_assert_eq(kit(dir, out, sizeof out, "convert --input-shape 1,28,28,1 m.nnn a.json"), 2, "%s", out);
	cr_assert(strstr(out, "--input-shape is for ONNX output and for --verify"), "%s", out);
	cr_assert_neq(access(t_fmt("%s/a.onnx", dir), F_OK), 0);
	cr_assert_eq(kit(dir, out, sizeof out, "convert --help"), 0, "%s", out);
	cr_assert(strstr(out, "--verify-tol") && strstr(out, "|out - in| / (1 + |in|)"), "%s", out);
}

/* A 1x1 Conv then a Dense of 67 inputs: only 1x67 and 67x1 fit, past the
 * sizes verify tries, so the shape is not found: a note when verify
 * is the ONNX default (written), a failure saying --input-shape when asked
 * (nothing written). */
Test(convert_verify, a_shape_not_found_is_said)
{
	char out[8192];
	bb_t c = { 0 };
	int32_t one[2] = { 1, 1 }, pads[4] = { 0 };
	bb_header(&c, "nothing fits", 1 + 1 + 67 + 1, 2);
	bb_conv(&c, 0, 1, 2, one, 1, 0, 4, pads);
	bb_dense(&c, 0, 67, 1, 1);
	const char *model = bb_to_file(&c, "sq.nnn");
	const char *dir = t_tmpdir(PFX);
	bb_free(&c);
	cr_assert_eq(kit(dir, out, sizeof out, t_fmt("convert %s d.onnx", model)), 0, "%s", out);
	cr_assert(strstr(out, "sq.nnn: note: not verified: ") && strstr(out, "--input-shape 1,D1,... (or --no-verify)"),
	          "%s", out);
	cr_assert_eq(access(t_fmt("%s/d.onnx", dir), F_OK), 0);
	cr_assert_eq(kit(dir, out, sizeof out, t_fmt("convert --verify %s e.onnx", model)), 2, "%s", out);
	cr_assert(strstr(out, "verify: e.onnx not verified, nor written; give its input shape with --input-shape"), "%s",
	          out);
	cr_assert_neq(access(t_fmt("%s/e.onnx", dir), F_OK), 0);
	cr_assert_eq(kit(dir, out, sizeof out, t_fmt("convert --no-verify %s e.onnx", model)), 0, "%s", out);
	cr_assert(!out[0], "%s", out);
}
