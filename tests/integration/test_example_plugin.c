/* test_example_plugin.c: a third-party plugin proven out of tree. nnnkit is
 * installed once into a temporary prefix; examples/plugin-pool-swish is
 * built against that prefix only (pkg-config, installed headers and
 * generator); a model using its layer ID 2 and activation ID 6 fails before
 * the plugin is on the path and loads, validates, re-encodes byte for byte,
 * converts to JSON and back, and runs after, while the installed files stay
 * byte-identical.
 *
 * example_plugin/conformance_kit: the plugin's conformance corpus, from the
 * installed nnngen, run by the installed nnnkit with the plugin's kernels
 * and compared with its numpy reference (reference.py); wrong references
 * and a wrong kernel fail it.
 *
 * example_plugin/survives_schema_growth: that plugin, built against today's
 * headers, then nnnkit rebuilt from grown copies of the schema (make O=DIR
 * SCHEMA=FILE): grown by a layer type with a record of its own, the struct
 * layout moves, and the new nnnkit refuses the old .so at the ABI stage,
 * saying what changed; grown by a parameterless activation, it does not
 * move, and the old .so loads and runs unchanged. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nnn/model.h>
#include <nnn/npy.h>
#include <nnn/plugin.h>

#include "builder.h"
#include "ctx.h"
#include "kit.h"
#include "onnxtools.h"
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

#define SUMS "cd %s && find . -type f | sort | xargs sha256sum"

static void teardown(void)
{
	char cmd[256];
	if (tmp[0]) {
		snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", tmp);
	}
}

/* A temp dir with nnnkit installed in <tmp>/prefix and the example plugin
 * built against it alone in <tmp>/plugin; `sums` (optional) gets the
 * installed files' checksums. */
static void install_and_build_plugin(char *sums, size_t size)
{
	char out[65536];
	const char *build = t_build_dir();

	snprintf(tmp, sizeof tmp, "/tmp/nnnext.XXXXXX");
	cr_assert_not_null(mkdtemp(tmp));
	snprintf(prefix, sizeof prefix, "%s/prefix", tmp);
	snprintf(plugdir, sizeof plugdir, "%s/plugin", tmp);

	/* The core, installed once. */
	cr_assert_eq(t_sh(out, sizeof out, "make -s install O=%s PREFIX=%s", build, prefix), 0, "%s", out);
	if (sums)
		cr_assert_eq(t_sh(sums, size, SUMS, prefix), 0);

	/* The plugin, built against the installed files only. */
	cr_assert_eq(t_sh(out, sizeof out, "PKG_CONFIG_PATH=%s/lib/pkgconfig make -s -C examples/plugin-pool-swish OUT=%s",
	                prefix, plugdir), 0, "%s", out);
}

static void write_model(char *path, size_t size)
{
	bb_t b = { 0 };
	model(&b);
	snprintf(path, size, "%s/model.nnn", tmp);
	FILE *f = fopen(path, "wb");
	cr_assert_not_null(f);
	fwrite(b.b, 1, b.n, f);
	fclose(f);
	bb_free(&b);
}

/* x.npy: 0..15 as [1, 4, 4, 1]. */
static void write_input(char *in, size_t size)
{
	float x[16];
	for (int i = 0; i < 16; i++)
		x[i] = (float)i;
	nnn_shape_t s = { .rank = 4, .dims = { 1, 4, 4, 1 } };
	snprintf(in, size, "%s/x.npy", tmp);
	cr_assert_eq(nnn_npy_write_file(in, &s, x, NULL), NNN_OK);
}

/* The output of `run` on the model over x.npy, as printed. */
static void expect_output(const char *out)
{
	/* Windows of 0..15 as 4x4: maxima 5, 7, 13, 15; + 0.5; then x * sigmoid(x). */
	const double pooled[4] = { 5.5, 7.5, 13.5, 15.5 };
	const char *p = out;
	for (int i = 0; i < 4; i++) {
		double want = pooled[i] / (1.0 + exp(-pooled[i]));
		char *end;
		double got = strtod(p, &end);
		cr_assert(end != p && fabs(got - want) <= 1e-6 * want, "output %d: %.9g, expected %.9g (%s)", i, got,
		          want, out);
		p = end;
	}
}

Test(example_plugin, out_of_tree_plugin_adds_ids, .fini = teardown, .timeout = 300)
{
	char out[65536], sums[8192], sums2[8192], path[256], in[256], copy[256];

	install_and_build_plugin(sums, sizeof sums);
	cr_assert_eq(t_sh(out, sizeof out, "nm -D --defined-only %s/poolswish.so | awk '$2 ~ /[TtDdBb]/ {print $3}'", plugdir),
	             0);
	cr_assert_str_eq(out, NNN_PLUGIN_ENTRY_NAME "\n");
	cr_assert_eq(t_sh(out, sizeof out, "ldd %s/poolswish.so", plugdir), 0);
	cr_assert_null(strstr(out, "libnnn"), "%s", out);

	write_model(path, sizeof path);

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
	/* The fragment's titles, not "unknown" nor the bare names. */
	cr_assert(strstr(out, "MaxPool"), "%s", out);
	cr_assert(strstr(out, "Swish(beta=1)"), "%s", out);
	cr_assert(strstr(out, "poolswish.so"), "%s", out);
	cr_assert_eq(t_sh(out, sizeof out, "NNN_PLUGIN_PATH=%s %s/bin/nnnkit graph %s", plugdir, prefix, path), 0, "%s",
	             out);
	cr_assert(strstr(out, "MaxPool") && strstr(out, "Swish"), "%s", out);
	/* dump and map name the plugin's IDs, and the plugin. */
	cr_assert_eq(t_sh(out, sizeof out, "NNN_PLUGIN_PATH=%s %s/bin/nnnkit dump %s", plugdir, prefix, path), 0, "%s", out);
	cr_assert(strstr(out, "(maxpool, from poolswish.so)"), "%s", out);
	cr_assert(strstr(out, "(swish, from poolswish.so)"), "%s", out);
	cr_assert_null(strstr(out, "not a "), "%s", out);
	cr_assert_eq(t_sh(out, sizeof out, "NNN_PLUGIN_PATH=%s %s/bin/nnnkit map %s -o %s/m.html && "
	                "grep -o -e '(maxpool, from poolswish.so)' -e MaxPool -e 'not a [a-z_]*' %s/m.html | sort -u",
	                plugdir, prefix, path, tmp, tmp), 0, "%s", out);
	cr_assert_str_eq(out, "(maxpool, from poolswish.so)\nMaxPool\n");

	write_input(in, sizeof in);
	cr_assert_eq(t_sh(out, sizeof out, "NNN_PLUGIN_PATH=%s %s/bin/nnnkit run %s --input %s", plugdir, prefix, path, in),
	             0, "%s", out);
	expect_output(out);

	/* Its fields have a JSON form, both ways, from the generated descriptors. */
	snprintf(copy, sizeof copy, "%s/back.nnn", tmp);
	cr_assert_eq(t_sh(out, sizeof out, "NNN_PLUGIN_PATH=%s %s/bin/nnnkit convert %s %s/model.json && "
	                "NNN_PLUGIN_PATH=%s %s/bin/nnnkit convert %s/model.json %s && cmp %s %s && cat %s/model.json",
	                plugdir, prefix, path, tmp, plugdir, prefix, tmp, copy, path, copy, tmp), 0, "%s", out);
	cr_assert(strstr(out, "\"id\": \"maxpool\""), "%s", out);
	cr_assert(strstr(out, "\"activation\": {\"id\": \"swish\", \"beta\": 1.0}"), "%s", out);
	cr_assert(strstr(out, "\"pool\": [2, 2],\n      \"stride\": [2, 2]"), "%s", out);

	/* Its ONNX export hooks (ABI 1.5): MaxPool between Transposes with its
	 * bias, and Swish, computing in ONNX Runtime what nnnkit computes. */
	char why[512], onnx[256], y[256];
	snprintf(onnx, sizeof onnx, "%s/model.onnx", tmp);
	snprintf(y, sizeof y, "%s/y.npy", tmp);
	cr_assert_eq(t_sh(out, sizeof out, "NNN_PLUGIN_PATH=%s %s/bin/nnnkit convert --input-shape 1,4,4,1 %s %s", plugdir,
	                prefix, path, onnx), 0, "%s", out);
	/* Its ONNX import hooks (ABI 1.7) read back what the export hooks
	 * wrote: convert verifies the export, and .nnn -> .onnx -> .nnn gives
	 * the same bytes. */
	cr_assert(strstr(out, "nnnkit: verify: ") && strstr(out, "max abs error 0"), "%s", out);
	snprintf(copy, sizeof copy, "%s/from-onnx.nnn", tmp);
	cr_assert_eq(t_sh(out, sizeof out, "NNN_PLUGIN_PATH=%s %s/bin/nnnkit convert %s %s && cmp %s %s", plugdir, prefix,
	                  onnx, copy, path, copy), 0, "%s", out);
	/* Without the plugin, the graph's MaxPool is refused, named. */
	cr_assert_neq(t_sh(out, sizeof out, "env -u NNN_PLUGIN_PATH %s/bin/nnnkit convert %s %s/none.nnn", prefix, onnx, tmp),
	              0, "%s", out);
	cr_assert(strstr(out, "MaxPool"), "%s", out);
	if (!onnx_checker_ready(why, sizeof why)) {
		cr_log_warn("%s: the export is not checked by onnx.checker, nor read without its metadata", why);
	} else {
		cr_assert_eq(onnx_check(onnx, out, sizeof out), 0, "%s", out);
		/* Without "nnn.fields", from the graph alone: the hooks' fields make
		 * a model that computes the same. */
		cr_assert_eq(t_sh(out, sizeof out, "/usr/bin/python3 -c 'import onnx; m = onnx.load(\"%s\"); "
		                  "del m.metadata_props[:]; onnx.save(m, \"%s/bare.onnx\")' && NNN_PLUGIN_PATH=%s %s/bin/nnnkit "
		                  "convert %s/bare.onnx %s/bare.nnn", onnx, tmp, plugdir, prefix, tmp, tmp), 0, "%s", out);
		cr_assert_eq(t_sh(out, sizeof out, "NNN_PLUGIN_PATH=%s %s/bin/nnnkit run %s/bare.nnn --input %s", plugdir, prefix,
		                  tmp, in), 0, "%s", out);
		expect_output(out);
	}
	if (!ort_ready(why, sizeof why)) {
		cr_log_warn("%s: the plugin's export is not run", why);
	} else {
		cr_assert_eq(ort_run(onnx, in, y, 1, out, sizeof out), 0, "%s", out);
		cr_assert_eq(t_sh(out, sizeof out, "/usr/bin/python3 -c 'import numpy as np; print(*np.load(\"%s\").ravel())'",
		                y), 0, "%s", out);
		expect_output(out);
	}

	/* The core never changed. */
	cr_assert_eq(t_sh(sums2, sizeof sums2, SUMS, prefix), 0);
	cr_assert_str_eq(sums, sums2);
}

/* ---- the plugin ABI across a schema growth ---- */

/* Grown copies of the schema, in the temp dir beside copies of schema/nnn.lua
 * and the plugin's fragment: each takes the next ID that neither the core
 * nor the plugin uses, in the enum that holds the layer IDs or the
 * activation IDs (whichever the schema marks `unknown = "layer"` or
 * "activation"). A layer type gets a record of its own, first in the list
 * (before anything that could select it), in the section of the records the
 * layer IDs select. */
static const char GROW[] =
	"local s = import(\"nnn.lua\")\n"
	"local ext = import(\"poolswish.lua\")\n"
	"local function enum(kind)\n"
	"  for _, e in ipairs(s.enums) do if e.unknown == kind then return e end end\n"
	"  error(\"no enum marked unknown = \" .. kind)\n"
	"end\n"
	"local function free(e, taken)\n"
	"  local used = {}\n"
	"  for _, v in ipairs(e.values) do used[v.value] = true end\n"
	"  for _, v in ipairs(taken or {}) do used[v.value] = true end\n"
	"  local n = 0\n"
	"  while used[n] do n = n + 1 end\n"
	"  return n\n"
	"end\n"
	"local function section(e)\n"
	"  for _, r in ipairs(s.records) do if r.name == e.values[1].record then return r.section end end\n"
	"end\n";

static const char GROW_LAYER[] =
	"local e = enum(\"layer\")\n"
	"table.insert(s.records, 1, { name = \"abi_probe\", section = section(e), doc = \"A probe of the plugin ABI.\",\n"
	"  fields = { { name = \"gain\", type = \"f32\", doc = \"A gain.\" } } })\n"
	"table.insert(e.values, { value = free(e, ext.layers), name = \"abi_probe\", title = \"AbiProbe\",\n"
	"  record = \"abi_probe\", doc = \"A layer type with a record of its own.\" })\n"
	"return s\n";

static const char GROW_ACT[] =
	"local e = enum(\"activation\")\n"
	"table.insert(e.values, { value = free(e, ext.activations), name = \"abi_probe\", title = \"AbiProbe\",\n"
	"  doc = \"An activation without parameters.\" })\n"
	"return s\n";

static void write_text(const char *name, const char *a, const char *b)
{
	char path[256];
	snprintf(path, sizeof path, "%s/%s", tmp, name);
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f, "%s", path);
	fputs(a, f);
	fputs(b, f);
	fclose(f);
}

/* nnnkit built in <tmp>/<name> from <tmp>/<name>.lua, with its own copy of
 * the lock (<tmp>/<name>.lock) and format reference, as a maintainer would
 * after editing the schema: `make check-compat` is run first and its
 * status returned (its output in `out`); when it fails for want of the
 * struct layout, `make lock` records it. Only what the test needs is built
 * (the nnnkit binary), from a make of its own (not the suite's). */
static int grown_nnnkit(const char *name, char *out, size_t size)
{
	char vars[1024], more[65536];
	int check;
#define MAKE "env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s"
	snprintf(vars, sizeof vars, "O=%s/%s SCHEMA=%s/%s.lua LOCK=%s/%s.lock DOC=%s/%s/format.md", tmp, name, tmp, name,
	         tmp, name, tmp, name);
	cr_assert_eq(t_sh(more, sizeof more, "cp schema/nnn.lock %s/%s.lock && mkdir -p %s/%s", tmp, name, tmp, name), 0,
	             "%s", more);
	check = t_sh(out, size, MAKE " %s check-compat", vars);
	if (check != 0)
		cr_assert_eq(t_sh(more, sizeof more, MAKE " %s lock && " MAKE " %s check-compat", vars, vars), 0, "%s", more);
	cr_assert_eq(t_sh(more, sizeof more, MAKE " -j2 %s %s/%s/nnnkit", vars, tmp, name), 0, "%s", more);
	return check;
}

Test(example_plugin, survives_schema_growth, .fini = teardown, .timeout = 600)
{
	char out[65536], path[256], in[256], want[256], want2[512], newplug[256];
	uint32_t layout;

	if (t_sh(NULL, 0, "command -v cc") != 0)
		cr_skip_test("no C compiler (cc) on this machine: the test builds nnnkit and a plugin");
	install_and_build_plugin(NULL, 0);
	write_model(path, sizeof path);
	write_input(in, sizeof in);
	cr_assert_eq(t_sh(out, sizeof out, "cp schema/nnn.lua %s/nnn.lua && cp examples/plugin-pool-swish/schema.lua "
	                  "%s/poolswish.lua", tmp, tmp), 0, "%s", out);
	write_text("layer.lua", GROW, GROW_LAYER);
	write_text("act.lua", GROW, GROW_ACT);

	/* Grown by a layer type with a record: the `body` union gains a member, so
	 * the structs a plugin reads move. check-compat says so until make lock
	 * records the new layout. */
	cr_assert_eq(grown_nnnkit("layer", out, sizeof out), 2, "check-compat should fail before make lock:\n%s", out);
	cr_assert(strstr(out, "check-layout: "), "%s", out);
	cr_assert(strstr(out, "nnn_layer_t.body gained nnn_abi_probe_t abi_probe"), "%s", out);
	cr_assert(strstr(out, "run make lock"), "%s", out);
	cr_assert_eq(t_sh(out, sizeof out, "sed -n 's/^#define NNN_SCHEMA_LAYOUT 0x\\([0-9a-f]*\\)u$/\\1/p' "
	                  "%s/layer/gen/nnn/records_gen.h", tmp), 0);
	layout = (uint32_t)strtoul(out, NULL, 16);
	cr_assert_neq(layout, NNN_SCHEMA_LAYOUT, "the layout did not move: %s", out);
	/* The lock keeps the old layout and adds the new one, with what changed. */
	cr_assert_eq(t_sh(out, sizeof out, "cat %s/layer.lock", tmp), 0);
	snprintf(want, sizeof want, "{ fingerprint = 0x%08x, change = ", (unsigned)NNN_SCHEMA_LAYOUT);
	cr_assert(strstr(out, want), "the lock lost the old layout:\n%s", out);
	snprintf(want, sizeof want, "{ fingerprint = 0x%08x, change = \"nnn_layer_t.body gained nnn_abi_probe_t "
	         "abi_probe\" },\n    },", (unsigned)layout);
	cr_assert(strstr(out, want), "no '%s' in the lock:\n%s", want, out);

	/* The old plugin, into the new nnnkit: refused at the ABI stage, with the
	 * layout it has, how far back, what changed and what to do. */
	cr_assert_eq(t_sh(out, sizeof out, "%s/layer/nnnkit plugins --check %s/poolswish.so", tmp, plugdir), 3, "%s", out);
	snprintf(want, sizeof want, "poolswish.so: ABI stage: built against schema layout 0x%08x (1 layout ago)",
	         (unsigned)NNN_SCHEMA_LAYOUT);
	cr_assert(strstr(out, want), "no '%s' in:\n%s", want, out);
	snprintf(want2, sizeof want2, "(1 layout ago): rebuild the plugin and its codec against this nnnkit's headers, "
	         "whose generated records have moved since (now 0x%08x: nnn_layer_t.body gained nnn_abi_probe_t "
	         "abi_probe)", (unsigned)layout);
	cr_assert(strstr(out, want2), "no '%s' in:\n%s", want2, out);
	cr_assert_eq(t_sh(out, sizeof out, "%s/layer/nnnkit --plugin %s/poolswish.so plugins", tmp, plugdir), 3, "%s",
	             out);
	cr_assert(strstr(out, want), "no '%s' in:\n%s", want, out);
	/* It never ran: the model's layer stays unknown (exit 3: a plugin failed). */
	cr_assert_eq(t_sh(out, sizeof out, "%s/layer/nnnkit --plugin %s/poolswish.so info %s", tmp, plugdir, path), 3,
	             "%s", out);
	cr_assert(strstr(out, want), "no '%s' in:\n%s", want, out);
	cr_assert(strstr(out, "unknown ID"), "%s", out);
	/* A plugin built for ABI 1.0 declares no layout: it counts as built
	 * against the first one recorded. (The suite's fixture of that kind,
	 * built here without the suite's sanitizer flags, which a host built
	 * without them could not load.) */
	/* (the grown nnnkit has this one's layouts and one more) */
	snprintf(want, sizeof want, "oldabi.so: ABI stage: built for plugin ABI 1.0, so against schema layout 0x%08x "
	         "(%d layout%s ago)", (unsigned)NNN_SCHEMA_LAYOUT_FIRST, (int)NNN_SCHEMA_LAYOUTS,
	         NNN_SCHEMA_LAYOUTS == 1 ? "" : "s");
	cr_assert_eq(t_sh(out, sizeof out, "cc -std=c11 -fPIC -fvisibility=hidden -shared -DFIX_OLD_ABI -DFIX_LAYER=7 "
	                  "-I%s/include tests/plugins/fixture.c -o %s/oldabi.so && %s/layer/nnnkit plugins --check "
	                  "%s/oldabi.so", prefix, tmp, tmp, tmp), 3, "%s", out);
	cr_assert(strstr(out, want), "no '%s' in:\n%s", want, out);
	/* every change since the first layout, this growth's last */
	cr_assert(strstr(out, "nnn_layer_t.body gained nnn_abi_probe_t abi_probe)"), "%s", out);

	/* Rebuilt against the new headers, as the message says, it loads and runs. */
	snprintf(newplug, sizeof newplug, "%s/newplug", tmp);
	cr_assert_eq(t_sh(out, sizeof out, "mkdir -p %s && lua5.4 gen/nnngen.lua --schema %s/layer.lua --plugin "
	                  "examples/plugin-pool-swish/schema.lua --c %s/poolswish_gen.c --h %s/poolswish_gen.h && "
	                  "cc -std=c11 -Wall -Wextra -Werror -fPIC -fvisibility=hidden -shared -Iruntime/include "
	                  "-I%s/layer/gen -I%s -o %s/poolswish.so examples/plugin-pool-swish/poolswish.c "
	                  "%s/poolswish_gen.c -lm",
	                  newplug, tmp, newplug, newplug, tmp, newplug, newplug, newplug), 0, "%s", out);
	cr_assert_eq(t_sh(out, sizeof out, "NNN_PLUGIN_PATH=%s %s/layer/nnnkit run %s --input %s", newplug, tmp, path, in),
	             0, "%s", out);
	expect_output(out);

	/* Grown by an activation without parameters: an enum value only, no
	 * struct moves, so the lock needs no new layout and the old plugin
	 * loads and runs unchanged. */
	cr_assert_eq(grown_nnnkit("act", out, sizeof out), 0, "%s", out);
	snprintf(want, sizeof want, "at layout 0x%08x, the last of %d recorded", (unsigned)NNN_SCHEMA_LAYOUT,
	         (int)NNN_SCHEMA_LAYOUTS);
	cr_assert(strstr(out, want), "no '%s' in:\n%s", want, out);
	cr_assert_eq(t_sh(out, sizeof out, "grep -c NNN_ACTIVATION_ID_ABI_PROBE %s/act/gen/nnn/records_gen.h", tmp), 0,
	             "the grown nnnkit lacks the new activation: %s", out);
	cr_assert_eq(t_sh(out, sizeof out, "%s/act/nnnkit plugins --check %s/poolswish.so", tmp, plugdir), 0, "%s", out);
	cr_assert_eq(t_sh(out, sizeof out, "NNN_PLUGIN_PATH=%s %s/act/nnnkit run %s --input %s", plugdir, tmp, path, in),
	             0, "%s", out);
	expect_output(out);
}

/* The conformance kit of a third-party plugin, from the installed prefix:
 * nnngen --conformance --plugin writes cases its shape rules accept (every
 * valid case validates with its recorded input shape), nnnkit conformance
 * runs them all with the plugin's kernels and agrees with the numpy
 * reference (examples/plugin-pool-swish/reference.py). A reference off by a
 * factor fails, naming the error; a plugin whose Swish has the wrong sign
 * passes without a reference (finite, right shape) and fails with it. */
Test(example_plugin, conformance_kit, .fini = teardown, .timeout = 900)
{
	char out[65536], corpus[192], small[192], bad[192];
	const char *ref = "/usr/bin/python3 examples/plugin-pool-swish/reference.py {json} {input} {output}";
	json_t *r;
	if (t_sh(NULL, 0, "/usr/bin/python3 -c 'import numpy'") != 0)
		cr_skip_test("no numpy for /usr/bin/python3 (apt-get install python3-numpy)");
	install_and_build_plugin(NULL, 0);
	snprintf(corpus, sizeof corpus, "%s/corpus", tmp);
	cr_assert_eq(t_sh(out, sizeof out, "%s/bin/nnngen --conformance %s --plugin examples/plugin-pool-swish/schema.lua",
	                  prefix, corpus), 0, "%s", out);
	long valid = t_kit_valid_cases(corpus);

	/* Every case, in process with the plugin: validated with its input
	 * shape and run (the kit below compares the outputs). */
	cr_assert_eq(t_kit(&r, "%s/bin/nnnkit --plugin %s/poolswish.so conformance --corpus %s", prefix, plugdir, corpus), 0,
	             "%s", json_dumps(json_object_get(r, "failures"), 0));
	cr_assert_eq(t_kit_count(r, "validated_with_input_shape"), valid);
	cr_assert_eq(t_kit_count(r, "run"), valid);
	json_decref(r);

	/* The plugin's two types, each in a case of its own, for the runs
	 * below (the kit further down compares every case). */
	snprintf(small, sizeof small, "%s/small", tmp);
	cr_assert_eq(t_sh(out, sizeof out, "mkdir %s && /usr/bin/python3 -c \"import json,sys; m=json.load(open(sys.argv[1]));"
	                  " m['cases']=[dict(c, file='../corpus/'+c['file']) for c in m['cases'] if c['file'] in"
	                  " ('valid/maxpool-swish.nnn', 'valid/maxpool-linear.nnn')]; json.dump(m, open(sys.argv[2], 'w'))\" "
	                  "%s/manifest.json %s/manifest.json", small, corpus, small), 0, "%s", out);

	/* Compared with the reference: every case checked, but those it
	 * declines for a type it does not know (the growth drills run this test
	 * on schemas with more types); the plugin's own types always. */
	cr_assert_eq(t_kit(&r, "%s/bin/nnnkit --plugin %s/poolswish.so conformance --corpus %s --reference '%s'", prefix,
	                   plugdir, small, ref), 0, "%s", json_dumps(json_object_get(r, "failures"), 0));
	cr_assert_eq(t_kit_count(r, "compared") + t_kit_count(r, "reference_declined"), t_kit_count(r, "checked_finite"));
	size_t i;
	json_t *run;
	int own = 0;
	json_array_foreach(json_object_get(json_object_get(r, "valid_cases"), "runs"), i, run) {
		const char *file = json_string_value(json_object_get(run, "file"));
		const char *why = json_string_value(json_object_get(run, "why"));
		cr_assert(!why || !strstr(why, "declined") || strstr(why, "is not one this reference knows"), "%s: %s", file,
		          why);
		if (!strcmp(file, "../corpus/valid/maxpool-swish.nnn") || !strcmp(file, "../corpus/valid/maxpool-linear.nnn"))
			own += json_is_real(json_object_get(run, "max_error"));
	}
	cr_assert_eq(own, 2, "the plugin's own MaxPool and Swish were not compared");
	json_decref(r);
	cr_assert_eq(t_kit(&r, "%s/bin/nnnkit --plugin %s/poolswish.so conformance --corpus %s --reference "
	                   "'%s && /usr/bin/python3 -c \"import numpy,sys; numpy.save(sys.argv[1], numpy.load(sys.argv[1]) * 1.5)\" {output}'",
	                   prefix, plugdir, small, ref), 1);
	const char *why = t_kit_why(r, "../corpus/valid/maxpool-swish.nnn");
	cr_assert(why && strstr(why, "differs from the reference: max abs error ") && strstr(why, "first mismatch at [0, "),
	          "%s", why ? why : "(passed)");
	json_decref(r);

	/* Swish with the wrong sign: y = x * sigmoid(-beta * x). */
	snprintf(bad, sizeof bad, "%s/bad", tmp);
	cr_assert_eq(t_sh(out, sizeof out, "mkdir %s && sed 's/expf(-s->beta \\* x\\[i\\])/expf(s->beta * x[i])/' "
	                  "examples/plugin-pool-swish/poolswish.c > %s/poolswish.c && ! cmp -s %s/poolswish.c "
	                  "examples/plugin-pool-swish/poolswish.c && cp examples/plugin-pool-swish/schema.lua "
	                  "examples/plugin-pool-swish/Makefile %s/ && PKG_CONFIG_PATH=%s/lib/pkgconfig make -s -C %s OUT=%s",
	                  bad, bad, bad, bad, prefix, bad, bad), 0, "%s", out);
	cr_assert_eq(t_kit(&r, "%s/bin/nnnkit --plugin %s/poolswish.so conformance --corpus %s", prefix, bad, small), 0,
	             "without a reference nothing shows the wrong sign");
	json_decref(r);
	cr_assert_eq(t_kit(&r, "%s/bin/nnnkit --plugin %s/poolswish.so conformance --corpus %s --reference '%s'", prefix, bad,
	                   small, ref), 1);
	why = t_kit_why(r, "../corpus/valid/maxpool-swish.nnn");
	cr_assert(why && strstr(why, "differs from the reference"), "%s", why ? why : "(passed)");
	cr_assert_null(t_kit_why(r, "../corpus/valid/maxpool-linear.nnn"), "MaxPool itself is right");
	json_decref(r);

	/* The plugin's kit (docs/conformance.md): the core's cases and the
	 * fragment's, the expected outputs of the plugin's types from its
	 * reference (the core's from the kit's own); nnnkit's testee with the
	 * plugin scores 100 % on it, and with the wrong Swish fails the runs of
	 * the cases with a Swish, and only those. */
	char kit[192];
	snprintf(kit, sizeof kit, "%s/kit", tmp);
	cr_assert_eq(t_sh(out, sizeof out, "%s/bin/nnngen --plugin examples/plugin-pool-swish/schema.lua --conformance %s "
	                  "--kit-version 0.0.1 --reference \"NNNKIT='%s/bin/nnnkit --plugin %s/poolswish.so' "
	                  "/usr/bin/python3 examples/plugin-pool-swish/reference.py {model} {input} {output}\"",
	                  prefix, kit, prefix, plugdir), 0, "%s", out);
	/* every valid case runs, but those with parameters too large to compare */
	cr_assert_eq(t_sh(out, sizeof out, "/usr/bin/python3 -c \"import json,sys; m=json.load(open(sys.argv[1])); "
	                  "why=[c['id'] + ': ' + c['run_why'] for c in m['cases'] if c['valid'] and not c['run'] and "
	                  "not c['run_why'].startswith('its parameters are not ordinary')]; "
	                  "print(sum(1 for c in m['cases'] if c['run'] and ('maxpool' in c['id'] or 'swish' in c['id'])), "
	                  "*why)\" %s/manifest.json", kit), 0, "%s", out);
	long plugin_runs = 0;
	cr_assert(sscanf(out, "%ld", &plugin_runs) == 1 && plugin_runs >= 2 && !strchr(out, ':'), "%s", out);
	cr_assert_eq(t_kit(&r, "%s/bin/nnnkit conformance --corpus %s --testee '%s/bin/nnnkit --plugin %s/poolswish.so testee'",
	                   prefix, kit, prefix, plugdir), 0, "%s", json_dumps(json_object_get(r, "unexpected_failures"), 0));
	json_decref(r);
	cr_assert_eq(t_kit(&r, "%s/bin/nnnkit conformance --corpus %s --testee '%s/bin/nnnkit --plugin %s/poolswish.so testee'",
	                   prefix, kit, prefix, bad), 1);
	size_t n = 0;
	json_t *u;
	json_array_foreach(json_object_get(r, "unexpected_failures"), i, u) {
		const char *id = json_string_value(json_object_get(u, "id"));
		cr_assert_str_eq(json_string_value(json_object_get(u, "check")), "run", "%s", id);
		cr_assert_eq(t_sh(out, sizeof out, "%s/bin/nnnkit --plugin %s/poolswish.so info %s/%s.nnn | grep -c Swish",
		                  prefix, plugdir, kit, id), 0, "%s has no Swish, and failed", id);
		n += !strcmp(id, "valid/maxpool-swish");
	}
	cr_assert_eq(n, 1, "valid/maxpool-swish was not caught");
	json_decref(r);
}
