/* test_example_plugin.c: a third-party plugin proven out of tree. nnnkit is
 * installed once into a temporary prefix; examples/plugin-pool-swish is
 * built against that prefix only (pkg-config, installed headers and
 * generator); a model using its layer ID 2 and activation ID 6 fails before
 * the plugin is on the path and loads, validates, re-encodes byte for byte,
 * converts to JSON and back, and runs after, while the installed files stay
 * byte-identical. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nnn/npy.h>

#include "builder.h"
#include "shell.h"

static char tmp[64], prefix[128], plugdir[128];

/* One MaxPool layer (2x2 windows, stride 2, bias [1] = 0.5) with Swish beta 1. */
static void model(bb_t *b)
{
	int32_t bias_dims[1] = { 1 }, two[2] = { 2, 2 };
	bb_header(b, "pool + swish", 1, 1);
	bb_u8(b, 2);    /* layer ID 2: maxpool */
	bb_u8(b, 6);    /* activation ID 6: swish */
	bb_f32(b, 1.0f); /* beta */
	bb_f32(b, 0.0f); /* dropout */
	bb_i32s(b, 1, bias_dims);
	bb_u8(b, 0);
	bb_i32(b, 1);
	bb_f32(b, 0.5f);
	bb_i32s(b, 2, two); /* pool */
	bb_i32s(b, 2, two); /* stride */
}

static void teardown(void)
{
	char cmd[256];
	if (tmp[0]) {
		snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", tmp);
	}
}

Test(example_plugin, out_of_tree_plugin_adds_ids, .fini = teardown, .timeout = 300)
{
	char out[65536], sums[8192], sums2[8192], path[256], in[256], copy[256];
	const char *build = getenv("NNN_BUILD") ? getenv("NNN_BUILD") : "build";

	if (getenv("NNN_UNDER_VALGRIND"))
		cr_skip_test("builds and installs with make: run by make test and make test-asan, not under valgrind");
	snprintf(tmp, sizeof tmp, "/tmp/nnnext.XXXXXX");
	cr_assert_not_null(mkdtemp(tmp));
	snprintf(prefix, sizeof prefix, "%s/prefix", tmp);
	snprintf(plugdir, sizeof plugdir, "%s/plugin", tmp);

	/* The core, installed once. */
	cr_assert_eq(t_sh(out, sizeof out, "make -s install O=%s PREFIX=%s", build, prefix), 0, "%s", out);
#define SUMS "cd %s && find . -type f | sort | xargs sha256sum"
	cr_assert_eq(t_sh(sums, sizeof sums, SUMS, prefix), 0);

	/* The plugin, built against the installed files only. */
	cr_assert_eq(t_sh(out, sizeof out, "PKG_CONFIG_PATH=%s/lib/pkgconfig make -s -C examples/plugin-pool-swish OUT=%s",
	                prefix, plugdir), 0, "%s", out);
	cr_assert_eq(t_sh(out, sizeof out, "nm -D --defined-only %s/poolswish.so | awk '$2 ~ /[TtDdBb]/ {print $3}'", plugdir),
	             0);
	cr_assert_str_eq(out, "nnn_plugin_entry\n");
	cr_assert_eq(t_sh(out, sizeof out, "ldd %s/poolswish.so", plugdir), 0);
	cr_assert_null(strstr(out, "libnnn"), "%s", out);

	bb_t b = { 0 };
	model(&b);
	snprintf(path, sizeof path, "%s/model.nnn", tmp);
	FILE *f = fopen(path, "wb");
	fwrite(b.b, 1, b.n, f);
	fclose(f);

	/* Before the plugin is on the path: the unknown-ID error, with its remedies. */
	cr_assert_eq(t_sh(out, sizeof out, "env -u NNN_PLUGIN_PATH %s/bin/nnnkit validate %s", prefix, path), 1, "%s", out);
	cr_assert(strstr(out, "layers[0].id @0x20: unknown ID: layer ID 2"), "%s", out);
	cr_assert(strstr(out, "no loaded plugin provides it (plugins loaded: builtin ("), "%s", out);
	cr_assert(strstr(out, "--plugin FILE or NNN_PLUGIN_PATH"), "%s", out);

	/* With it: validates, re-encodes byte for byte, runs. */
	cr_assert_eq(t_sh(out, sizeof out, "NNN_PLUGIN_PATH=%s %s/bin/nnnkit validate --input-shape 1,4,4,1 %s", plugdir,
	                prefix, path), 0, "%s", out);
	cr_assert(strstr(out, "valid, output shape [1, 2, 2, 1]"), "%s", out);
	snprintf(copy, sizeof copy, "%s/copy.nnn", tmp);
	cr_assert_eq(t_sh(out, sizeof out, "NNN_PLUGIN_PATH=%s %s/bin/nnnkit convert %s %s && cmp %s %s", plugdir, prefix,
	                path, copy, path, copy), 0, "%s", out);
	cr_assert_eq(t_sh(out, sizeof out, "NNN_PLUGIN_PATH=%s %s/bin/nnnkit info %s", plugdir, prefix, path), 0, "%s", out);
	cr_assert(strstr(out, "maxpool"), "%s", out);
	cr_assert(strstr(out, "swish(beta=1)"), "%s", out);
	cr_assert(strstr(out, "poolswish.so"), "%s", out);

	float x[16];
	for (int i = 0; i < 16; i++)
		x[i] = (float)i;
	nnn_shape_t s = { .rank = 4, .dims = { 1, 4, 4, 1 } };
	snprintf(in, sizeof in, "%s/x.npy", tmp);
	cr_assert_eq(nnn_npy_write_file(in, &s, x, NULL), NNN_OK);
	cr_assert_eq(t_sh(out, sizeof out, "NNN_PLUGIN_PATH=%s %s/bin/nnnkit run %s --input %s", plugdir, prefix, path, in),
	             0, "%s", out);
	/* Windows of 0..15 as 4x4: maxima 5, 7, 13, 15; + 0.5; then x * sigmoid(x). */
	const double pooled[4] = { 5.5, 7.5, 13.5, 15.5 };
	char *p = out;
	for (int i = 0; i < 4; i++) {
		double want = pooled[i] / (1.0 + exp(-pooled[i]));
		double got = strtod(p, &p);
		cr_assert(fabs(got - want) <= 1e-6 * want, "output %d: %.9g, expected %.9g (%s)", i, got, want, out);
	}

	/* Its fields have a JSON form, both ways, from the generated descriptors. */
	snprintf(copy, sizeof copy, "%s/back.nnn", tmp);
	cr_assert_eq(t_sh(out, sizeof out, "NNN_PLUGIN_PATH=%s %s/bin/nnnkit convert %s %s/model.json && "
	                "NNN_PLUGIN_PATH=%s %s/bin/nnnkit convert %s/model.json %s && cmp %s %s && cat %s/model.json",
	                plugdir, prefix, path, tmp, plugdir, prefix, tmp, copy, path, copy, tmp), 0, "%s", out);
	cr_assert(strstr(out, "\"id\": \"maxpool\""), "%s", out);
	cr_assert(strstr(out, "\"activation\": {\"id\": \"swish\", \"beta\": 1.0}"), "%s", out);
	cr_assert(strstr(out, "\"pool\": [2, 2],\n      \"stride\": [2, 2]"), "%s", out);

	/* The core never changed. */
	cr_assert_eq(t_sh(sums2, sizeof sums2, SUMS, prefix), 0);
	cr_assert_str_eq(sums, sums2);
	bb_free(&b);
}
