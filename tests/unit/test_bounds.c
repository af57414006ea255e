/* test_bounds.c: sizes from files and arguments stay in range: a kernel's
 * working memory counts against --max-tensor-bytes, options refuse values
 * out of their range, shapes that overflow are refused, and running out of
 * memory is reported as such. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nnn/file.h>
#include <nnn/json.h>
#include <nnn/npy.h>

#include "blackbox.h"
#include "builder.h"
#include "clirun.h"
#include "shell.h"

/* The folder of a path from bb_to_file. */
static const char *dir_of(const char *path)
{
	static char dir[512];
	snprintf(dir, sizeof dir, "%s", path);
	*strrchr(dir, '/') = '\0';
	return dir;
}

/* One Conv of a 1 x k x k x 1 kernel padded SAME, on a 1x1x1x1 input: a
 * file of 4 k^2 bytes whose kernel, packed and padded, asks for far more. */
static const char *conv_bomb(int32_t k, char *npy, size_t size)
{
	bb_t b = { 0 };
	int32_t ks[2] = { k, k }, pads[4] = { k / 2, k / 2, k / 2, k / 2 };
	nnn_shape_t in = { .rank = 4, .dims = { 1, 1, 1, 1 } };
	float x = 1;
	bb_header(&b, "conv bomb", 1 + (uint64_t)k * k, 1);
	bb_conv(&b, 0, 1, 2, ks, 1, NNN_PADDING_TYPE_SAME, 4, pads);
	const char *model = bb_to_file(&b, "bomb.nnn");
	snprintf(npy, size, "%s/x.npy", dir_of(model));
	cr_assert_eq(nnn_npy_write_file(npy, &in, &x, NULL), NNN_OK);
	bb_free(&b);
	return model;
}

/* The kernel's packed weights and padded copies count: refused before
 * anything is allocated, naming the layer; the same file runs under a
 * limit that holds them. */
Test(bounds, conv_scratch_counts_against_the_limit)
{
	char npy[600], args[2048];
	run_t r;
	const char *model = conv_bomb(301, npy, sizeof npy);
	snprintf(args, sizeof args, "run %s --input %s --max-tensor-bytes 100000", model, npy);
	nnnkit(&r, args);
	cr_assert_eq(r.code, 1, "exit %d: %s", r.code, r.err);
	cr_assert(strstr(r.err, "bomb.nnn: layers[0] @0x1d: a resource limit was reached: Conv: its kernel would "
	                        "allocate "), "%s", r.err);
	cr_assert(strstr(r.err, " bytes (packed weights and scratch, on 1 thread) for this input, over the limit of "
	                        "100000 bytes"), "%s", r.err);
	snprintf(args, sizeof args, "run %s --input %s --max-tensor-bytes 1000000000", model, npy);
	nnnkit(&r, args);
	cr_assert_eq(r.code, 0, "%s", r.err);
	cr_assert_eq(t_sh(NULL, 0, "rm -rf %s", dir_of(model)), 0);
}

/* Every numeric option: digits only, within its stated range, named when
 * refused. */
Test(bounds, options_refuse_out_of_range_and_garbage)
{
	static const struct {
		const char *args, *msg;
	} bad[] = {
		{ "--max-tensor-bytes 18446744073709551616",
		  "--max-tensor-bytes needs a whole number from 1 to 9223372036854775807, not '18446744073709551616'" },
		{ "--max-tensor-bytes 9223372036854775808", "not '9223372036854775808'" },
		{ "--max-tensor-bytes -1", "--max-tensor-bytes needs a whole number from 1 to" },
		{ "--max-tensor-bytes ' 12'", "not ' 12'" },
		{ "--max-tensor-bytes +12", "not '+12'" },
		{ "--max-tensor-bytes 12k", "not '12k'" },
		{ "--max-tensor-bytes ''", "not ''" },
		{ "--max-tensor-bytes 0", "not '0'" },
		{ "--threads 99999999999999999999", "--threads needs a whole number from 1 to 1048576" },
		{ "--batch 0x10", "--batch needs a whole number from 1 to 1048576, not '0x10'" },
	};
	char npy[600], args[2048];
	run_t r;
	bb_t b = { 0 };
	bb_tiny(&b);
	const char *model = bb_to_file(&b, "tiny.nnn");
	snprintf(npy, sizeof npy, "%s/x.npy", dir_of(model));
	nnn_shape_t in = { .rank = 2, .dims = { 1, 3 } };
	float x[3] = { 1, 2, 3 };
	cr_assert_eq(nnn_npy_write_file(npy, &in, x, NULL), NNN_OK);
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		snprintf(args, sizeof args, "run %s --input %s %s", model, npy, bad[i].args);
		nnnkit(&r, args);
		cr_assert_eq(r.code, 2, "%s: exit %d", bad[i].args, r.code);
		cr_assert(strstr(r.err, bad[i].msg), "%s: %s", bad[i].args, r.err);
	}
	snprintf(args, sizeof args, "run %s --input %s --max-tensor-bytes 9223372036854775807", model, npy);
	nnnkit(&r, args);
	cr_assert_eq(r.code, 0, "%s", r.err);
	snprintf(args, sizeof args, "dump --values 4294967296 %s", model);
	nnnkit(&r, args);
	cr_assert_eq(r.code, 2);
	cr_assert(strstr(r.err, "--values needs a whole number from 0 to 2147483647, not '4294967296'"), "%s", r.err);
	snprintf(args, sizeof args, "convert %s %s/t.json --tensors %s/t --tensors-min x", model, dir_of(model),
	         dir_of(model));
	nnnkit(&r, args);
	cr_assert_eq(r.code, 2);
	cr_assert(strstr(r.err, "--tensors-min needs a whole number from 0 to 2147483647, not 'x'"), "%s", r.err);
	bb_free(&b);
	cr_assert_eq(t_sh(NULL, 0, "rm -rf %s", dir_of(model)), 0);
}

/* An input shape whose output would have more than 2^63 - 1 elements is
 * refused, with the shape, never printed as a negative count. */
Test(bounds, output_shape_overflow_is_refused_clearly)
{
	char args[1024];
	run_t r;
	bb_t b = { 0 };
	bb_tiny(&b);
	const char *model = bb_to_file(&b, "tiny.nnn");
	snprintf(args, sizeof args, "validate --input-shape 2147483647,2147483647,2147483647,3 %s", model);
	nnnkit(&r, args);
	cr_assert_eq(r.code, 1, "%s%s", r.out, r.err);
	cr_assert(strstr(r.err, "the output [2147483647, 2147483647, 2147483647, 2] would have more than 2^63 - 1 "
	                        "elements"), "%s", r.err);
	cr_assert(!strstr(r.out, "-1") && !strstr(r.err, "-1"), "%s%s", r.out, r.err);
	bb_free(&b);
	cr_assert_eq(t_sh(NULL, 0, "rm -rf %s", dir_of(model)), 0);
}

/* A JSON model read under a sweep of address-space limits: each run
 * succeeds or says it ran out of memory; none calls the text invalid. */
Test(bounds, json_out_of_memory_is_out_of_memory, .timeout = 120)
{
#if T_ASAN
	cr_skip_test("ASan reserves terabytes of address space: the memory limit runs in make test");
#endif
	if (t_under_valgrind())
		cr_skip_test("valgrind needs address space of its own: the memory limit runs in make test");
	char dir[] = "/tmp/nnnoom.XXXXXX", out[8192];
	bb_t b = { 0 };
	nnn_model_t *m;
	cr_assert_not_null(mkdtemp(dir));
	/* a Dense of 256K weights: about 3 MB of JSON */
	int32_t bias[1] = { 4 }, w[2] = { 1 << 16, 4 };
	bb_header(&b, "big", 4 + 4 * (1 << 16), 1);
	bb_u8(&b, 0), bb_u8(&b, 0), bb_f32(&b, 0);
	bb_i32s(&b, 1, bias), bb_u8(&b, 1), bb_i32(&b, 4);
	for (int i = 0; i < 4; i++)
		bb_f32(&b, 1.0f);
	bb_i32(&b, 4);
	bb_i32s(&b, 2, w), bb_u8(&b, 1), bb_i32(&b, 4 << 16);
	for (int32_t i = 0; i < 4 << 16; i++)
		bb_f32(&b, 0.123456789f * (float)(i % 1000));
	bb_u8(&b, 0);
	cr_assert_eq(nnn_model_decode(b.b, b.n, NULL, &m, NULL), NNN_OK);
	cr_assert_eq(nnn_json_write_file(m, t_fmt("%s/m.json", dir), NULL, NULL), NNN_OK);
	int oom = 0, ok = 0;
	for (int mb = 8; mb <= 64; mb += 4) {
		int st = t_sh(out, sizeof out, "ulimit -v %d && %s --no-default-plugins convert %s/m.json %s/m.nnn",
		              mb * 1024, nnnkit_bin(), dir, dir);
		cr_assert(!strstr(out, "not valid JSON"), "under %d MiB: %s", mb, out);
		oom += st == 2 && strstr(out, "out of memory") != NULL;
		ok += st == 0;
	}
	cr_log_info("json under limits: %d out of memory, %d converted", oom, ok);
	cr_assert_gt(oom, 0, "no limit made reading run out of memory");
	cr_assert_gt(ok, 0, "no limit let the conversion through");
	nnn_model_free(m);
	bb_free(&b);
	cr_assert_eq(t_sh(NULL, 0, "rm -rf %s", dir), 0);
}
