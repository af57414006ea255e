/* test_plugins.c: the loader against fixture plugins broken in every way
 * (tests/plugins/fixture.c), the search rules, the unknown-ID message, and
 * the host table's range checks. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nnn/context.h>
#include <nnn/json.h>
#include <nnn/npy.h>
#include <signal.h>
#include <sys/wait.h>

#include "blackbox.h"
#include "builder.h"
#include "codec.h"
#include "ctx.h"
#include "shell.h"
#include "schemaq.h"

static const char *fixture(const char *name)
{
	static char path[4][1024];
	static int k;
	char *p = path[k++ % 4];
	snprintf(p, sizeof path[0], "%s/fixtures/%s.so", t_build_dir(), name);
	cr_assert_eq(access(p, R_OK), 0, "missing fixture %s: run make", p);
	return p;
}

/* A fresh private folder holding a copy of a fixture. */
static const char *copy_to_tmp(const char *name, char *dir, size_t size)
{
	static char dst[1024];
	char cmd[2300];
	snprintf(dir, size, "/tmp/nnnplug.XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	snprintf(dst, sizeof dst, "%s/%s.so", dir, name);
	snprintf(cmd, sizeof cmd, "cp %s %s", fixture(name), dst);
	cr_assert_eq(system(cmd), 0);
	chmod(dst, 0755);
	return dst;
}

static nnn_ctx_t *ctx_new(void)
{
	nnn_ctx_t *c;
	cr_assert_eq(nnn_ctx_new(&c, NULL), NNN_OK);
	return c;
}

/* Loads and expects failure at `stage`, with every piece of `want` in the message. */
static void expect_refused(nnn_ctx_t *c, const char *path, const char *stage, const char *const *want)
{
	nnn_diags_t d;
	char buf[2048], st[64];
	nnn_diags_init(&d);
	cr_assert_eq(nnn_plugin_load(c, path, &d), NNN_E_PLUGIN, "%s loaded", path);
	cr_assert_eq(d.n, 1);
	nnn_diag_format(&d.v[0], buf, sizeof buf);
	snprintf(st, sizeof st, "%s stage: ", stage);
	cr_assert(strstr(buf, st), "no '%s' in: %s", st, buf);
	for (; *want; want++)
		cr_assert(strstr(buf, *want), "no '%s' in: %s", *want, buf);
	nnn_plugin_report_t r;
	size_t n = nnn_ctx_report(c, 0, NULL);
	nnn_ctx_report(c, n - 1, &r);
	cr_assert_str_eq(r.stage, stage);
	cr_assert_eq(r.status, NNN_E_PLUGIN);
	nnn_diags_free(&d);
}

Test(plugins, good_fixture_registers)
{
	nnn_ctx_t *c = ctx_new();
	const char *path = NULL;
	nnn_plugin_report_t r;
	cr_assert_eq(nnn_plugin_load(c, fixture("good"), NULL), NNN_OK);
	const nnn_layer_type_t *t = nnn_ctx_layer(c, 0, &path);
	cr_assert_not_null(t);
	cr_assert_str_eq(t->name, "fixture");
	cr_assert(strstr(path, "/fixtures/good.so"), "%s", path);
	cr_assert_not_null(nnn_ctx_activation(c, 3, NULL));
	cr_assert_null(nnn_ctx_layer(c, 1, NULL));
	cr_assert_eq(nnn_ctx_report(c, 0, &r), 1);
	cr_assert_str_eq(r.stage, "loaded");
	cr_assert_str_eq(r.name, "fixture");
	cr_assert_eq(r.nlayers, 1);
	cr_assert_eq(r.nactivations, 1);
	nnn_ctx_free(c);
}

/* A plugin that ignores the host's answers and declares 700 more of each:
 * the first repeat is the refusal, and nothing is written past the
 * declaration's room (ASan and valgrind watch the suite). */
Test(plugins, flood_of_declarations_is_refused_at_the_first_repeat)
{
	nnn_ctx_t *c = ctx_new();
	const char *dup[] = { "flood.so", "layer ID 0 is declared twice", NULL };
	expect_refused(c, fixture("flood"), "validation", dup);
	cr_assert_null(nnn_ctx_layer(c, 0, NULL));
	cr_assert_null(nnn_ctx_activation(c, 3, NULL));
	nnn_ctx_free(c);
}

/* A byte holds 256 IDs, and a plugin may declare every one of them. */
Test(plugins, all_256_ids_of_a_byte)
{
	nnn_ctx_t *c = ctx_new();
	nnn_diags_t d;
	nnn_plugin_report_t r;
	char buf[2048] = "";
	nnn_diags_init(&d);
	nnn_status_t st = nnn_plugin_load(c, fixture("allids"), &d);
	if (d.n)
		nnn_diag_format(&d.v[0], buf, sizeof buf);
	cr_assert_eq(st, NNN_OK, "%s", buf);
	cr_assert_eq(nnn_ctx_report(c, 0, &r), 1);
	cr_assert_eq(r.nlayers, 256);
	cr_assert_eq(r.nactivations, 256);
	for (int id = 0; id < 256; id++) {
		cr_assert_not_null(nnn_ctx_layer(c, id, NULL), "layer ID %d", id);
		cr_assert_not_null(nnn_ctx_activation(c, id, NULL), "activation ID %d", id);
		cr_assert_eq(r.layer_ids[id], id);
	}
	nnn_diags_free(&d);
	nnn_ctx_free(c);
}

Test(plugins, every_failure_names_file_and_stage)
{
	nnn_ctx_t *c = ctx_new();
	char dir[64], bad[128];
	const char *missing[] = { "/nonexistent/plugin.so", "cannot resolve", NULL };
	expect_refused(c, "/nonexistent/plugin.so", "open", missing);
	const char *bare[] = { "bare name", "NNN_PLUGIN_PATH", NULL };
	expect_refused(c, "good.so", "open", bare);

	/* Not an ELF file: dlopen's own words come through. */
	copy_to_tmp("good", dir, sizeof dir);
	snprintf(bad, sizeof bad, "%s/text.so", dir);
	FILE *f = fopen(bad, "w");
	for (int i = 0; i < 20; i++) /* longer than an ELF header */
		fputs("this is not a shared object\n", f);
	fclose(f);
	chmod(bad, 0644);
	const char *notelf[] = { bad, "dlopen failed", "invalid ELF header", NULL };
	expect_refused(c, bad, "open", notelf);

	const char *dep[] = { "missingdep.so", "libfixdep.so", "cannot open shared object file", NULL };
	expect_refused(c, fixture("missingdep"), "open", dep);
	const char *entry[] = { "noentry.so", "nnn_plugin_entry", "undefined symbol", NULL };
	expect_refused(c, fixture("noentry"), "entry point", entry);
	const char *init[] = { "initfail.so", "deliberate failure in init", NULL };
	expect_refused(c, fixture("initfail"), "init", init);
	char here[32], newer_major[32], newer_minor[32];
	snprintf(here, sizeof here, "provides %d.%d", NNN_ABI_MAJOR, NNN_ABI_MINOR);
	snprintf(newer_major, sizeof newer_major, "ABI %d.%d", NNN_ABI_MAJOR + 1, NNN_ABI_MINOR);
	snprintf(newer_minor, sizeof newer_minor, "ABI %d.%d", NNN_ABI_MAJOR, NNN_ABI_MINOR + 1);
	const char *major[] = { "abimajor.so", newer_major, here, "rebuild the plugin", NULL };
	expect_refused(c, fixture("abimajor"), "ABI", major);
	const char *minor[] = { "abiminor.so", newer_minor, here, NULL };
	expect_refused(c, fixture("abiminor"), "ABI", minor);
	const char *dup[] = { "layer ID 0", "declared twice", NULL };
	expect_refused(c, fixture("dupwithin"), "validation", dup);
	const char *fwd[] = { "lacks forward", NULL };
	expect_refused(c, fixture("noforward"), "validation", fwd);
	const char *fit[] = { "badrecord.so", "layer ID 7 (fixture)", "record descriptor does not fit its codec",
		              "regenerate the codec", NULL };
	expect_refused(c, fixture("badrecord"), "validation", fit);
	const char *core[] = { "corerecord.so", "layer ID 0 (fixture)", "the schema defines that ID",
		               "leave it NULL", NULL };
	expect_refused(c, fixture("corerecord"), "validation", core);

	/* Nothing of the failed plugins was registered, and the context still works. */
	cr_assert_null(nnn_ctx_layer(c, 0, NULL));
	cr_assert_null(nnn_ctx_activation(c, 3, NULL));
	cr_assert_eq(nnn_plugin_load(c, fixture("good"), NULL), NNN_OK);
	cr_assert_not_null(nnn_ctx_layer(c, 0, NULL));
	nnn_ctx_free(c);
}

/* The schema layout a plugin declares (ABI 1.2) must be the host's; one this
 * host never had, or none, is refused at the ABI stage with what to do. A
 * plugin built for 1.0 or 1.1 declares none and counts as built against the
 * first layout the lock records (here the host's own, so it loads). */
Test(plugins, schema_layout_checked)
{
	nnn_ctx_t *c = ctx_new();
	char here[64];
	snprintf(here, sizeof here, "this nnnkit (layout 0x%08x) never had", (unsigned)NNN_SCHEMA_LAYOUT);
	const char *unknown[] = { "layout.so", "built against schema layout 0x5eed1234", here,
		                  "rebuild the plugin against this nnnkit's headers", NULL };
	expect_refused(c, fixture("layout"), "ABI", unknown);
	const char *none[] = { "nolayout.so", "declares no schema layout (schema_layout is 0)", "NNN_SCHEMA_LAYOUT",
		               "NNN_PLUGIN_INFO(name, version)", NULL };
	expect_refused(c, fixture("nolayout"), "ABI", none);
	cr_assert_null(nnn_ctx_layer(c, 0, NULL));

	cr_assert_eq(NNN_SCHEMA_LAYOUT_FIRST, nnn_schema_layouts[0].fingerprint);
	cr_assert_eq(NNN_SCHEMA_LAYOUT, nnn_schema_layouts[NNN_SCHEMA_LAYOUTS - 1].fingerprint);
	if (NNN_SCHEMA_LAYOUT_FIRST == NNN_SCHEMA_LAYOUT) {
		cr_assert_eq(nnn_plugin_load(c, fixture("abi10"), NULL), NNN_OK);
	} else {
		const char *old[] = { "abi10.so", "built for plugin ABI 1.0, so against schema layout", "ago",
			              "rebuild the plugin and its codec", NULL };
		expect_refused(c, fixture("abi10"), "ABI", old);
	}
	nnn_ctx_free(c);
}

Test(plugins, duplicate_across_plugins_registers_nothing)
{
	nnn_ctx_t *c = ctx_new();
	cr_assert_eq(nnn_plugin_load(c, fixture("good"), NULL), NNN_OK);
	const char *want[] = { "dupacross.so", "layer ID 0", "already provided by", "/fixtures/good.so", NULL };
	expect_refused(c, fixture("dupacross"), "registration", want);
	/* Its activation 5 was free, but all or nothing. */
	cr_assert_null(nnn_ctx_activation(c, 5, NULL));
	const char *path;
	nnn_ctx_layer(c, 0, &path);
	cr_assert(strstr(path, "good.so"));
	nnn_ctx_free(c);
}

Test(plugins, same_file_twice_loads_once)
{
	nnn_ctx_t *c = ctx_new();
	char dir[64], link[128];
	nnn_plugin_report_t r;
	const char *copy = copy_to_tmp("good", dir, sizeof dir);
	snprintf(link, sizeof link, "%s/alias.so", dir);
	cr_assert_eq(symlink(copy, link), 0);
	cr_assert_eq(nnn_plugin_load(c, copy, NULL), NNN_OK);
	cr_assert_eq(nnn_plugin_load(c, link, NULL), NNN_OK);
	cr_assert_eq(nnn_ctx_report(c, 1, &r), 2);
	cr_assert_str_eq(r.stage, "already loaded");
	char text[512];
	nnn_ctx_plugins_text(c, text, sizeof text);
	cr_assert(strstr(text, "fixture (") && !strstr(strstr(text, "fixture (") + 1, "fixture ("), "loaded twice: %s", text);
	nnn_ctx_free(c);
}

Test(plugins, refuses_files_and_folders_others_can_write)
{
	nnn_ctx_t *c = ctx_new();
	char dir[64];
	const char *copy = copy_to_tmp("good", dir, sizeof dir);
	cr_assert_eq(chmod(copy, 0666), 0);
	const char *file[] = { copy, "writable by group or others", "mode 0666", "NNN_PLUGIN_ALLOW_INSECURE", NULL };
	expect_refused(c, copy, "open", file);
	cr_assert_eq(chmod(copy, 0755), 0);
	cr_assert_eq(chmod(dir, 0777), 0);
	const char *folder[] = { "its folder", "mode 0777", "NNN_PLUGIN_ALLOW_INSECURE", NULL };
	expect_refused(c, copy, "open", folder);
	setenv("NNN_PLUGIN_ALLOW_INSECURE", "1", 1);
	cr_assert_eq(nnn_plugin_load(c, copy, NULL), NNN_OK);
	unsetenv("NNN_PLUGIN_ALLOW_INSECURE");
	chmod(dir, 0700);
	nnn_ctx_free(c);
}

Test(plugins, search_path_but_never_the_current_folder)
{
	nnn_ctx_t *c = ctx_new();
	char dir[64];
	copy_to_tmp("good", dir, sizeof dir);
	cr_assert_eq(chdir(dir), 0);
	/* Relative entries, "." included, are never searched. */
	setenv("NNN_PLUGIN_PATH", ".:plugins::", 1);
	cr_assert_eq(nnn_plugin_load_default(c, NULL, NULL), NNN_OK);
	cr_assert_eq(nnn_ctx_report(c, 0, NULL), 0);
	cr_assert_eq(nnn_plugin_load_default(c, "relative/dir", NULL), NNN_OK);
	cr_assert_eq(nnn_ctx_report(c, 0, NULL), 0);
	setenv("NNN_PLUGIN_PATH", dir, 1);
	cr_assert_eq(nnn_plugin_load_default(c, NULL, NULL), NNN_OK);
	cr_assert_not_null(nnn_ctx_layer(c, 0, NULL));
	unsetenv("NNN_PLUGIN_PATH");
	nnn_ctx_free(c);
}

Test(plugins, nothing_loads_unless_asked)
{
	bb_t b = { 0 };
	nnn_model_t *m;
	nnn_ctx_t *c = ctx_new();
	nnn_decode_opts_t o = { .ctx = c };
	bb_tiny(&b);
	b.b[24] = 200;
	cr_assert_eq(nnn_model_decode(b.b, b.n, NULL, &m, NULL), NNN_E_UNKNOWN_ID);
	cr_assert_eq(nnn_model_decode(b.b, b.n, &o, &m, NULL), NNN_E_UNKNOWN_ID);
	cr_assert_eq(nnn_ctx_report(c, 0, NULL), 0);
	/* No fixture was mapped into the process. */
	FILE *f = fopen("/proc/self/maps", "r");
	char line[1024];
	while (fgets(line, sizeof line, f))
		cr_assert_null(strstr(line, "/fixtures/"), "%s", line);
	fclose(f);
	nnn_ctx_free(c);
	bb_free(&b);
}

Test(plugins, unknown_id_message_piece_by_piece)
{
	bb_t b = { 0 };
	nnn_model_t *m;
	nnn_diags_t d;
	char buf[2048];
	nnn_ctx_t *c = ctx_new();
	nnn_decode_opts_t o = { .ctx = c };
	cr_assert_eq(nnn_plugin_load(c, fixture("good"), NULL), NNN_OK);
	bb_tiny(&b);
	int64_t undef = t_undefined(nnn_activation_id_name, 0);
	char id_text[64];
	b.b[102] = (unsigned char)undef; /* layers[1].activation.id */
	snprintf(id_text, sizeof id_text, "activation ID %d", (int)undef);
	nnn_diags_init(&d);
	cr_assert_eq(nnn_model_decode(b.b, b.n, &o, &m, &d), NNN_E_UNKNOWN_ID);
	cr_assert_eq(d.n, 1);
	cr_assert_str_eq(d.v[0].path, "layers[1].activation.id");
	cr_assert_eq(d.v[0].offset, 102);
	nnn_diag_format(&d.v[0], buf, sizeof buf);
	const char *const pieces[] = {
		"layers[1].activation.id @0x66",
		id_text,
		"no loaded plugin provides it",
		"plugins loaded: fixture (",
		"/fixtures/good.so)",
		"nothing after it can be read",
		"load a plugin that provides this ID (--plugin FILE or NNN_PLUGIN_PATH)",
		"regenerate the codec from a schema that defines it",
	};
	for (size_t i = 0; i < sizeof pieces / sizeof pieces[0]; i++)
		cr_assert(strstr(buf, pieces[i]), "no '%s' in: %s", pieces[i], buf);
	nnn_diags_free(&d);
	nnn_ctx_free(c);
	bb_free(&b);
}

static float run_forward(const nnn_layer_type_t *t)
{
	nnn_shape_t s = { .rank = 2, .dims = { 1, 1 } };
	float x = 0, y = 0;
	nnn_kernel_args_t a = { .size = sizeof a, .in = &s, .out = &s, .x = &x, .y = &y, .threads = 1 };
	char msg[64];
	cr_assert_eq(t->forward(&a, msg, sizeof msg), NNN_OK);
	return y;
}

Test(plugins, same_named_functions_stay_private)
{
	nnn_ctx_t *c = ctx_new();
	cr_assert_eq(nnn_plugin_load(c, fixture("good"), NULL), NNN_OK);
	cr_assert_eq(nnn_plugin_load(c, fixture("tag2"), NULL), NNN_OK);
	cr_assert_eq(run_forward(nnn_ctx_layer(c, 0, NULL)), 1.0f);
	cr_assert_eq(run_forward(nnn_ctx_layer(c, 1, NULL)), 2.0f);
	nnn_ctx_free(c);
}

static void *load_one(void *arg)
{
	void **a = arg;
	return (void *)(intptr_t)nnn_plugin_load(a[0], a[1], NULL);
}

Test(plugins, concurrent_loading_into_one_context)
{
	nnn_ctx_t *c = ctx_new();
	pthread_t t1, t2;
	void *a1[2] = { c, (void *)fixture("good") }, *a2[2] = { c, (void *)fixture("tag2") };
	void *r1, *r2;
	cr_assert_eq(pthread_create(&t1, NULL, load_one, a1), 0);
	cr_assert_eq(pthread_create(&t2, NULL, load_one, a2), 0);
	pthread_join(t1, &r1);
	pthread_join(t2, &r2);
	cr_assert_eq((intptr_t)r1, NNN_OK);
	cr_assert_eq((intptr_t)r2, NNN_OK);
	cr_assert_not_null(nnn_ctx_layer(c, 0, NULL));
	cr_assert_not_null(nnn_ctx_layer(c, 1, NULL));
	cr_assert_eq(nnn_ctx_report(c, 0, NULL), 2);
	nnn_ctx_free(c);
}

/* Every unknown ID of a file is listed, once each: after the first, by
 * framing the rest of the file. Layer 0 uses activation A (4 bytes of
 * parameters), layer 1 is layer ID L (12 bytes of fields), layer 2 uses
 * activation A again, layer 3 activation B (no parameters): A, B and L are
 * IDs the schema does not define, high enough that no other byte of the
 * file has their value (which would make another framing plausible). */
Test(plugins, every_unknown_id_listed_once)
{
	int32_t b2[1] = { 2 }, b1[1] = { 1 }, w32[2] = { 3, 2 }, w22[2] = { 2, 2 }, w21[2] = { 2, 1 };
	int64_t A = t_undefined_down(nnn_activation_id_name, 254), B = t_undefined_down(nnn_activation_id_name, A - 1),
		L = t_undefined_down(nnn_layer_id_name, 254);
	char want[64];
	bb_t b = { 0 };
	nnn_diags_t d;
	nnn_model_t *m;
	bb_header(&b, "test", 0, 4);
	bb_u8(&b, 0), bb_u8(&b, (uint8_t)A), bb_f32(&b, 1.5f), bb_f32(&b, 0);
	bb_tensor(&b, 1, b2), bb_i32(&b, 2), bb_tensor(&b, 2, w32), bb_u8(&b, 0);
	size_t l1 = b.n;
	bb_u8(&b, (uint8_t)L), bb_u8(&b, 0), bb_f32(&b, 0);
	bb_tensor(&b, 1, b2), bb_i32(&b, 7), bb_i32(&b, 8), bb_i32(&b, 9);
	bb_u8(&b, 0), bb_u8(&b, (uint8_t)A), bb_f32(&b, 2.0f), bb_f32(&b, 0);
	bb_tensor(&b, 1, b2), bb_i32(&b, 2), bb_tensor(&b, 2, w22), bb_u8(&b, 0);
	size_t l3 = b.n;
	bb_u8(&b, 0), bb_u8(&b, (uint8_t)B), bb_f32(&b, 0);
	bb_tensor(&b, 1, b1), bb_i32(&b, 1), bb_tensor(&b, 2, w21), bb_u8(&b, 0);

	nnn_diags_init(&d);
	cr_assert_eq(nnn_model_decode(b.b, b.n, NULL, &m, &d), NNN_E_UNKNOWN_ID);
	cr_assert_eq(d.n, 3, "%zu problems", d.n);
	cr_assert_str_eq(d.v[0].path, "layers[0].activation.id");
	snprintf(want, sizeof want, "activation ID %d", (int)A);
	cr_assert(strstr(d.v[0].msg, want), "%s", d.v[0].msg);
	cr_assert_str_eq(d.v[1].path, "layers[1].id");
	cr_assert_eq(d.v[1].offset, l1);
	snprintf(want, sizeof want, "layer ID %d is not defined either", (int)L);
	cr_assert(strstr(d.v[1].msg, want), "%s", d.v[1].msg);
	cr_assert_str_eq(d.v[2].path, "layers[3].activation.id");
	cr_assert_eq(d.v[2].offset, l3 + 1);
	snprintf(want, sizeof want, "activation ID %d", (int)B);
	cr_assert(strstr(d.v[2].msg, want), "%s", d.v[2].msg);
	cr_assert(strstr(d.v[2].msg, "take 4, 12 and 4 bytes"), "%s", d.v[2].msg);
	nnn_diags_free(&d);
	bb_free(&b);
}

Test(plugins, same_file_from_two_threads_loads_once)
{
	nnn_ctx_t *c = ctx_new();
	pthread_t t1, t2;
	void *a[2] = { c, (void *)fixture("good") }, *r1, *r2;
	char text[512];
	cr_assert_eq(pthread_create(&t1, NULL, load_one, a), 0);
	cr_assert_eq(pthread_create(&t2, NULL, load_one, a), 0);
	pthread_join(t1, &r1);
	pthread_join(t2, &r2);
	cr_assert_eq((intptr_t)r1, NNN_OK);
	cr_assert_eq((intptr_t)r2, NNN_OK);
	nnn_ctx_plugins_text(c, text, sizeof text);
	cr_assert(strstr(text, "fixture (") && !strstr(strstr(text, "fixture (") + 1, "fixture ("), "%s", text);
	nnn_ctx_free(c);
}

/* A plugin built for ABI 1.0 (no record descriptor, a shorter descriptor)
 * loads and works as before; only the JSON form of its type is missing, and
 * the errors both ways say why and what to do. */
Test(plugins, abi_1_0_loads_without_json_form)
{
	nnn_ctx_t *c = ctx_new();
	nnn_diags_t d;
	nnn_model_t *m;
	char *json;
	size_t n;
	nnn_diags_init(&d);
	if (NNN_SCHEMA_LAYOUT != NNN_SCHEMA_LAYOUT_FIRST) {
		/* a grown schema moved the structs an ABI 1.0 plugin was built against */
		cr_assert_eq(nnn_plugin_load(c, fixture("oldabi"), &d), NNN_E_PLUGIN);
		cr_assert(strstr(d.v[0].msg, "ABI stage") && strstr(d.v[0].msg, "layout"), "%s", d.v[0].msg);
		nnn_diags_free(&d);
		nnn_ctx_free(c);
		return;
	}
	cr_assert_eq(nnn_plugin_load(c, fixture("oldabi"), &d), NNN_OK, "%s", d.n ? d.v[0].msg : "");
	const nnn_layer_type_t *t = nnn_ctx_layer(c, 7, NULL);
	cr_assert_not_null(t);
	cr_assert_null(t->record, "the host's copy is zero past the plugin's size");
	cr_assert_null(t->title, "no title before ABI 1.3");

	bb_t b = { 0 };
	int32_t one[1] = { 1 };
	bb_header(&b, "old", 1, 1);
	bb_u8(&b, 7), bb_u8(&b, 3), bb_f32(&b, 0);
	bb_tensor(&b, 1, one);
	nnn_decode_opts_t o = { .ctx = c };
	cr_assert_eq(nnn_model_decode(b.b, b.n, &o, &m, &d), NNN_OK, "%s", d.n ? d.v[0].msg : "");
	cr_assert_str_eq(nnn_layer_title(&m->layers[0]), "fixture", "without a title, the name");
	cr_assert_eq(nnn_json_encode(m, NULL, &json, &n, &d), NNN_E_PLUGIN);
	cr_assert(strstr(d.v[0].msg, "layer fixture comes from a plugin built for ABI 1.0"), "%s", d.v[0].msg);
	cr_assert(strstr(d.v[0].msg, "rebuild the plugin with nnngen --plugin"), "%s", d.v[0].msg);
	cr_assert_str_eq(d.v[0].path, "layers[0]");
	nnn_model_free(m);

	static const char text[] = "{\"description\": \"old\", \"param_count\": 1, \"layers\": [{\"id\": \"fixture\",\n"
	                           " \"activation\": {\"id\": \"relu\"}, \"dropout\": 0.0,\n"
	                           " \"bias\": {\"dims\": [1], \"requires_grad\": false, \"data\": [0.5]}}]}";
	nnn_json_read_opts_t ro = { .ctx = c };
	nnn_diags_clear(&d);
	cr_assert_eq(nnn_json_decode(text, strlen(text), &ro, &m, &d), NNN_E_PLUGIN);
	cr_assert(strstr(d.v[0].msg, "cannot be read from JSON"), "%s", d.v[0].msg);
	cr_assert_eq(d.v[0].line, 1);
	nnn_diags_free(&d);
	bb_free(&b);
	nnn_ctx_free(c);
}

/* The host's range checks: rule_range, which plugins built before ABI 1.2
 * call, keeps its place and meaning; rule_bounds (1.2), which generated
 * code calls now, follows the older fields and takes open and absent bounds. */
Test(plugins, host_range_rules)
{
	static const struct {
		double value, min, max;
		unsigned flags;
		const char *msg; /* NULL: no problem */
	} cases[] = {
		{ 0, 0, 0, NNN_BOUND_MIN | NNN_BOUND_MIN_OPEN, "found 0, expected > 0" },
		{ 1e-30, 0, 0, NNN_BOUND_MIN | NNN_BOUND_MIN_OPEN, NULL },
		{ -1, 0, 0, NNN_BOUND_MIN, "found -1, expected >= 0" },
		{ 0, 0, 0, NNN_BOUND_MIN, NULL },
		{ 2, 0, 1, NNN_BOUND_MAX, "found 2, expected <= 1" },
		{ 1, 0, 1, NNN_BOUND_MAX | NNN_BOUND_MAX_OPEN, "found 1, expected < 1" },
		{ -1e30, 0, 1, NNN_BOUND_MAX, NULL },
		{ 0, 0, 1, NNN_BOUND_MIN | NNN_BOUND_MIN_OPEN | NNN_BOUND_MAX, "found 0, expected in (0, 1]" },
		{ 1, 0, 1, NNN_BOUND_MIN | NNN_BOUND_MIN_OPEN | NNN_BOUND_MAX, NULL },
		{ 1, 0, 1, NNN_BOUND_MIN | NNN_BOUND_MAX | NNN_BOUND_MAX_OPEN, "found 1, expected in [0, 1)" },
		{ NAN, 0, 0, NNN_BOUND_MAX, "found nan, expected <= 0" },
	};
	const nnn_host_t *h = nnn_host_table();
	nnn_diags_t d;
	nnn_vctx_t v = { .diags = &d };

	cr_assert_geq(h->size, offsetof(nnn_host_t, rule_bounds) + sizeof h->rule_bounds);
	cr_assert_gt(offsetof(nnn_host_t, rule_bounds), offsetof(nnn_host_t, v_problem), "the table grows at the end");
	nnn_diags_init(&d);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		nnn_diags_clear(&d);
		h->rule_bounds(&v, "x", cases[i].value, cases[i].min, cases[i].max, cases[i].flags, 7);
		if (!cases[i].msg) {
			cr_expect_eq(d.n, 0, "case %zu: %s", i, d.n ? d.v[0].msg : "");
			continue;
		}
		cr_assert_eq(d.n, 1, "case %zu: %zu problems", i, d.n);
		cr_expect_eq(d.v[0].code, NNN_E_RANGE);
		cr_expect_str_eq(d.v[0].msg, cases[i].msg, "case %zu", i);
		cr_expect_str_eq(d.v[0].path, "x");
		cr_expect_eq(d.v[0].offset, 7);
	}
	/* The 1.0 entry: [min, max] or [min, max), as before. */
	nnn_diags_clear(&d);
	h->rule_range(&v, "x", 1, 0, 1, true, 7);
	h->rule_range(&v, "x", 1, 0, 1, false, 7);
	h->rule_range(&v, "x", NAN, 0, 1, false, 7);
	cr_assert_eq(d.n, 2);
	cr_expect_str_eq(d.v[0].msg, "found 1, expected in [0, 1)");
	cr_expect_str_eq(d.v[1].msg, "found nan, expected in [0, 1]");
	nnn_diags_free(&d);
}

/* The message of the last report of a context loading `name` alone. */
static char *loaded_message(const char *name)
{
	nnn_ctx_t *c = ctx_new();
	nnn_diags_t d;
	nnn_plugin_report_t r;
	char *msg;
	nnn_diags_init(&d);
	cr_assert_eq(nnn_plugin_load(c, fixture(name), &d), NNN_OK, "%s: %s", name, d.n ? d.v[0].msg : "");
	cr_assert_eq(d.n, 0, "%s: a warning is no problem: %s", name, d.v[0].msg);
	cr_assert_eq(nnn_ctx_report(c, 0, &r), 1);
	cr_assert_str_eq(r.stage, "loaded");
	cr_assert_eq(r.status, NNN_OK);
	msg = strdup(r.message);
	nnn_ctx_free(c);
	nnn_diags_free(&d);
	return msg;
}

/* The schema's ID policy (NNN_*_ID_* from the generated header): a new ID in
 * the core range that the schema does not record as taken, or in the never
 * range, loads with a warning naming it and the third-party range to move
 * to; a third-party ID or one the schema records as taken loads quietly, as
 * does a kernel for a core ID. */
Test(plugins, id_policy_warnings)
{
	char want[4][256];
	char *m = loaded_message("freecore");
	snprintf(want[0], sizeof want[0], "layer ID %d (fixture) is in the core range %d..%d", NNN_LAYER_ID_NEXT_CORE,
	         NNN_LAYER_ID_CORE_MIN, NNN_LAYER_ID_CORE_MAX);
	snprintf(want[1], sizeof want[1], "move it to the third-party range %d..%d", NNN_LAYER_ID_THIRD_PARTY_MIN,
	         NNN_LAYER_ID_THIRD_PARTY_MAX);
	snprintf(want[2], sizeof want[2], "\nactivation ID %d (fixture-act) is in the core range %d..%d",
	         NNN_ACTIVATION_ID_NEXT_CORE, NNN_ACTIVATION_ID_CORE_MIN, NNN_ACTIVATION_ID_CORE_MAX);
	snprintf(want[3], sizeof want[3], "move it to the third-party range %d..%d", NNN_ACTIVATION_ID_THIRD_PARTY_MIN,
	         NNN_ACTIVATION_ID_THIRD_PARTY_MAX);
	const char *second = strchr(m, '\n');
	cr_assert_not_null(second, "not two warnings, one a line:\n%s", m);
	for (int i = 0; i < 4; i++)
		cr_expect(strstr(i < 2 ? m : second, want[i]), "no '%s' in:\n%s", want[i], m);
	cr_expect(strstr(m, "ids.layer_id.taken in schema/nnn.lua does not record it"), "%s", m);
	cr_expect(strstr(m, "files written with this plugin would then be misread"), "%s", m);
	free(m);

	m = loaded_message("thirdparty");
	cr_expect_str_empty(m, "a third-party ID was warned about: %s", m);
	free(m);
	m = loaded_message("good");
	cr_expect_str_empty(m, "a kernel for core IDs was warned about: %s", m);
	free(m);
#define COUNT_(id, by, name) +1
	if (0 NNN_LAYER_ID_TAKEN(COUNT_) && 0 NNN_ACTIVATION_ID_TAKEN(COUNT_)) {
		m = loaded_message("taken");
		cr_expect_str_empty(m, "an ID the schema records as taken was warned about: %s", m);
		free(m);
	}
#ifdef NNN_LAYER_ID_NEVER_MIN
	m = loaded_message("never");
	snprintf(want[0], sizeof want[0], "layer ID %d (fixture) is one the schema never uses", NNN_LAYER_ID_NEVER_MIN);
	cr_expect(strstr(m, want[0]) && !strchr(m, '\n'), "no '%s' alone in:\n%s", want[0], m);
	free(m);
#endif
}

/* The same warning from the tool: on stderr for every command, and under
 * the plugin in `nnnkit plugins -v`. */
Test(plugins, id_policy_warnings_in_the_tool)
{
	char out[8192], want[512];
	const char *kit = nnnkit_bin();
	const char *path = fixture("freecore");

	cr_assert_eq(t_sh(out, sizeof out, "%s --no-default-plugins --plugin %s plugins -v 2>/dev/null", kit, path), 0, "%s",
	             out);
	snprintf(want, sizeof want, "freecore.so: loaded (fixture 1)\n    provides layer %d fixture, activation %d "
	         "fixture-act\n    warning: layer ID %d (fixture) is in the core range",
	         NNN_LAYER_ID_NEXT_CORE, NNN_ACTIVATION_ID_NEXT_CORE, NNN_LAYER_ID_NEXT_CORE);
	cr_expect(strstr(out, want), "no '%s' in:\n%s", want, out);
	snprintf(want, sizeof want, "\n    warning: activation ID %d (fixture-act)", NNN_ACTIVATION_ID_NEXT_CORE);
	cr_expect(strstr(out, want), "no '%s' in:\n%s", want, out);

	cr_assert_eq(t_sh(out, sizeof out, "%s --no-default-plugins --plugin %s plugins 2>&1 >/dev/null", kit, path), 0,
	             "%s", out);
	/* (The loader names the file by its real path.) */
	snprintf(want, sizeof want, "/fixtures/freecore.so: warning: layer ID %d (fixture) is in the core range",
	         NNN_LAYER_ID_NEXT_CORE);
	cr_expect(!strncmp(out, "nnnkit: /", 9) && strstr(out, want), "no '%s' in:\n%s", want, out);
	snprintf(want, sizeof want, "warning: activation ID %d (fixture-act) is in the core range",
	         NNN_ACTIVATION_ID_NEXT_CORE);
	cr_expect(strstr(out, want), "no '%s' in:\n%s", want, out);

	/* A quiet plugin prints nothing on stderr. */
	cr_assert_eq(t_sh(out, sizeof out, "%s --no-default-plugins --plugin %s plugins -v 2>&1 >/dev/null", kit,
	                  fixture("thirdparty")),
	             0, "%s", out);
	cr_expect_str_empty(out, "%s", out);
}

/* ---- discovery: every candidate scanned in a child first (discover.c) ---- */

/* The scan limit for fixtures that hang: short, but generous under valgrind,
 * which runs the scanner too. */
static int scan_ms(void)
{
	return t_under_valgrind() ? 30000 : 1000;
}

/* A private folder for one test (removed by rm_tree), with `sub` made in it. */
static void mk_tree(char *root, size_t size)
{
	snprintf(root, size, "/tmp/nnndisc.XXXXXX");
	cr_assert_not_null(mkdtemp(root));
}

static void rm_tree(const char *root)
{
	char cmd[300];
	snprintf(cmd, sizeof cmd, "chmod -R u+rwx %s; rm -rf %s", root, root);
	cr_assert_eq(system(cmd), 0);
}

/* Copies fixture `name` to DIR/AS (DIR made 0700 when missing). */
static void place(const char *dir, const char *name, const char *as)
{
	char cmd[2300];
	snprintf(cmd, sizeof cmd, "mkdir -p %s && chmod 700 %s && cp %s %s/%s && chmod 755 %s/%s", dir, dir,
	         fixture(name), dir, as, dir, as);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
}

/* The tiny model (input [n, 3]) and one input row for it, in root. */
static void tiny_model(const char *root, char *model, char *input, size_t size)
{
	bb_t b = { 0 };
	float x[3] = { 1, 2, 3 };
	nnn_shape_t s = { .rank = 2, .dims = { 1, 3 } };
	bb_tiny(&b);
	snprintf(model, size, "%s/tiny.nnn", root);
	FILE *f = fopen(model, "wb");
	cr_assert_not_null(f);
	cr_assert_eq(fwrite(b.b, 1, b.n, f), b.n);
	fclose(f);
	bb_free(&b);
	snprintf(input, size, "%s/x.npy", root);
	cr_assert_eq(nnn_npy_write_file(input, &s, x, NULL), NNN_OK);
}

/* What each broken fixture's scan says: its stage and how it ended. */
static const struct {
	const char *name, *says;
} broken[] = {
#if T_ASAN
	{ "initcrash", "initcrash.so: entry point stage: exited with status 1 during its entry point" },
#else
	{ "initcrash", "initcrash.so: entry point stage: crashed with SIGSEGV (Segmentation fault) during its entry point" },
#endif
	{ "initexit", "initexit.so: entry point stage: exited with status 0 during its entry point (a plugin must return "
	              "from its entry point, never end the process)" },
	{ "inithang", "inithang.so: entry point stage: did not finish loading in " },
	{ "initspin", "initspin.so: entry point stage: did not finish loading in " },
};

/* A plugin that crashes, exits or hangs in its entry point, on the search
 * path: `plugins -v`, `info` and `run` of a model still work (exit 3: a
 * plugin failed), and name the file and the stage. No cache: fresh scans. */
Test(discovery, bad_plugin_on_the_search_path_leaves_commands_working, .timeout = 300)
{
	char root[64], dir[128], model[256], input[256], out[16384], env[512];
	mk_tree(root, sizeof root);
	tiny_model(root, model, input, sizeof model);
	for (size_t i = 0; i < sizeof broken / sizeof broken[0]; i++) {
		snprintf(dir, sizeof dir, "%s/%s", root, broken[i].name);
		place(dir, broken[i].name, t_fmt("%s.so", broken[i].name));
		snprintf(env, sizeof env, "NNN_PLUGIN_CACHE= NNN_PLUGIN_SCAN_TIMEOUT_MS=%d NNN_PLUGIN_PATH=%s", scan_ms(), dir);

		cr_assert_eq(t_sh(out, sizeof out, "%s %s plugins -v 2>&1", env, nnnkit_bin()), 3, "%s", out);
		cr_expect(strstr(out, broken[i].says), "%s: no '%s' in:\n%s", broken[i].name, broken[i].says, out);
		cr_expect(strstr(out, "/plugins/builtin.so: loaded (builtin"), "%s", out);

		cr_assert_eq(t_sh(out, sizeof out, "%s %s info %s 2>&1", env, nnnkit_bin(), model), 3, "%s", out);
		cr_expect(strstr(out, broken[i].says), "%s: no '%s' in:\n%s", broken[i].name, broken[i].says, out);
		cr_expect(strstr(out, "layers:       2"), "%s", out);

		cr_assert_eq(t_sh(out, sizeof out, "%s %s run %s --input %s 2>/dev/null", env, nnnkit_bin(), model, input), 3, "%s",
		             out);
		cr_expect(out[0] >= '-' && out[0] <= '9', "no output row: %s", out);
	}
	rm_tree(root);
}

/* `plugins --check` of each fails with exit 3 and says how, never hangs,
 * and a plugin's exit(0) is no pass. */
Test(discovery, check_fails_for_every_bad_plugin, .timeout = 300)
{
	char out[8192];
	for (size_t i = 0; i < sizeof broken / sizeof broken[0]; i++) {
		cr_assert_eq(t_sh(out, sizeof out, "NNN_PLUGIN_CACHE= NNN_PLUGIN_SCAN_TIMEOUT_MS=%d %s --no-default-plugins "
		                  "plugins --check %s 2>&1", scan_ms(), nnnkit_bin(), fixture(broken[i].name)), 3, "%s", out);
		cr_expect(strstr(out, broken[i].says), "no '%s' in:\n%s", broken[i].says, out);
		cr_expect(strstr(out, "nothing of it was loaded"), "%s", out);
	}
	/* With a bad plugin on the search path, checking a good one is unaffected. */
	cr_assert_eq(t_sh(out, sizeof out, "NNN_PLUGIN_CACHE= NNN_PLUGIN_PATH=%s/.. %s plugins --check %s 2>&1",
	                  fixture("initcrash"), nnnkit_bin(), fixture("good")), 0, "%s", out);
	cr_expect(strstr(out, "good.so: loaded (fixture 1)"), "%s", out);
}

/* The scanner is killed with its parent: a hanging plugin does not outlive
 * a killed nnnkit. */
Test(discovery, scanner_dies_with_its_parent, .timeout = 120)
{
	char out[256], children[128];
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		setenv("NNN_PLUGIN_CACHE", "", 1);
		setenv("NNN_PLUGIN_SCAN_TIMEOUT_MS", "600000", 1);
		execl(nnnkit_bin(), "nnnkit", "--no-default-plugins", "plugins", "--check", fixture("inithang"), (char *)NULL);
		_exit(127);
	}
	/* Wait (at most about a minute) for the scanner to start. */
	long child = 0;
	for (int i = 0; i < 6000 && child == 0; i++) {
		snprintf(children, sizeof children, "/proc/%d/task/%d/children", (int)pid, (int)pid);
		FILE *f = fopen(children, "r");
		if (f) {
			if (fscanf(f, "%ld", &child) != 1)
				child = 0;
			fclose(f);
		}
		if (!child)
			usleep(10000);
	}
	cr_assert_gt(child, 0, "the scanner never started");
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	/* Gone, or a zombie waiting for init: either way, not running. */
	int alive = 1;
	for (int i = 0; i < 6000 && alive; i++) {
		snprintf(children, sizeof children, "/proc/%ld/stat", child);
		FILE *f = fopen(children, "r");
		char state = 'Z';
		if (f) {
			if (fscanf(f, "%*d (%*[^)]) %c", &state) != 1)
				state = 'Z';
			fclose(f);
		}
		alive = f && state != 'Z' && state != 'X';
		if (alive)
			usleep(10000);
	}
	snprintf(out, sizeof out, "scanner %ld outlived its parent", child);
	cr_assert(!alive, "%s", out);
}

/* Verdicts are cached by the file's identity: a hit uses the verdict
 * (here one edited in the cache, to tell a hit from a scan), touching or
 * replacing the file scans again, and a cache others can write is ignored. */
Test(discovery, cache_hits_misses_and_changes, .timeout = 120)
{
	char root[64], dir[128], cache[160], out[8192], cmd[1024];
	mk_tree(root, sizeof root);
	snprintf(dir, sizeof dir, "%s/p", root);
	snprintf(cache, sizeof cache, "%s/cache/scan.cache", root);
	place(dir, "initfail", "x.so");
#define RUN_X "NNN_PLUGIN_CACHE=%s %s --no-default-plugins --plugin %s/x.so plugins -v 2>&1"
	cr_assert_eq(t_sh(out, sizeof out, RUN_X, cache, nnnkit_bin(), dir), 3, "%s", out);
	cr_assert(strstr(out, "deliberate failure in init (fixture)"), "%s", out);
	cr_assert_eq(access(cache, R_OK), 0, "no cache written at %s", cache);
	/* Hit: the cached verdict, edited (same length), is what is reported. */
	snprintf(cmd, sizeof cmd, "sed -i 's/init (fixture)/init (cached!)/' %s", cache);
	cr_assert_eq(system(cmd), 0);
	cr_assert_eq(t_sh(out, sizeof out, RUN_X, cache, nnnkit_bin(), dir), 3, "%s", out);
	cr_assert(strstr(out, "deliberate failure in init (cached!)"), "not a hit:\n%s", out);
	/* A cache others can write is not read. */
	cr_assert_eq(chmod(cache, 0666), 0);
	cr_assert_eq(t_sh(out, sizeof out, RUN_X, cache, nnnkit_bin(), dir), 3, "%s", out);
	cr_assert(strstr(out, "init (fixture)"), "a cache others can write was used:\n%s", out);
	/* (the scan rewrote it, privately) */
	struct stat st;
	cr_assert_eq(stat(cache, &st), 0);
	cr_assert_eq(st.st_mode & 077, 0, "mode %o", st.st_mode & 0777);
	cr_assert_eq(system(cmd), 0);
	cr_assert_eq(t_sh(out, sizeof out, RUN_X, cache, nnnkit_bin(), dir), 3, "%s", out);
	cr_assert(strstr(out, "(cached!)"), "%s", out);
	/* Touched: scanned again. */
	cr_assert_eq(t_sh(NULL, 0, "touch %s/x.so", dir), 0);
	cr_assert_eq(t_sh(out, sizeof out, RUN_X, cache, nnnkit_bin(), dir), 3, "%s", out);
	cr_assert(strstr(out, "init (fixture)"), "a touched file was not scanned again:\n%s", out);
	/* Replaced by a good plugin (same path, new contents): the new verdict. */
	cr_assert_eq(system(cmd), 0);
	cr_assert_eq(t_sh(NULL, 0, "cp %s %s/x.so", fixture("good"), dir), 0);
	cr_assert_eq(t_sh(out, sizeof out, RUN_X, cache, nnnkit_bin(), dir), 0, "%s", out);
	cr_assert(strstr(out, "x.so: loaded (fixture 1)"), "%s", out);
	/* And back to a crashing one: the changed verdict is noticed. */
	cr_assert_eq(t_sh(NULL, 0, "cp %s %s/x.so", fixture("initcrash"), dir), 0);
	cr_assert_eq(t_sh(out, sizeof out, RUN_X, cache, nnnkit_bin(), dir), 3, "%s", out);
	cr_assert(strstr(out, "x.so: entry point stage: "), "%s", out);
	/* NNN_PLUGIN_CACHE= means none: nothing is written. */
	cr_assert_eq(t_sh(out, sizeof out, "XDG_CACHE_HOME=%s/xdg HOME=%s NNN_PLUGIN_CACHE= %s --no-default-plugins "
	                  "--plugin %s plugins 2>&1", root, root, nnnkit_bin(), fixture("good")), 0, "%s", out);
	cr_assert_neq(access(t_fmt("%s/xdg/nnnkit", root), F_OK), 0);
	/* Unset: the per-user cache under XDG_CACHE_HOME, made private. */
	cr_assert_eq(t_sh(out, sizeof out, "XDG_CACHE_HOME=%s/xdg env -u NNN_PLUGIN_CACHE %s --no-default-plugins "
	                  "--plugin %s plugins 2>&1", root, nnnkit_bin(), fixture("good")), 0, "%s", out);
	cr_assert_eq(stat(t_fmt("%s/xdg/nnnkit/plugin-scan.cache", root), &st), 0, "no per-user cache");
	cr_assert_eq(st.st_mode & 077, 0);
	rm_tree(root);
#undef RUN_X
}

/* Who provides an ID (fixtures good: layer 0 + activation 3; dupacross:
 * layer 0 + activation 5): the first source claiming it; two of one source
 * conflict, whatever their names' order, and neither gets it. */
Test(discovery, one_rule_for_duplicate_ids, .timeout = 120)
{
	char root[64], a[128], b[128], out[16384];
	mk_tree(root, sizeof root);
	snprintf(a, sizeof a, "%s/a", root);
	snprintf(b, sizeof b, "%s/b", root);
	place(a, "good", "good.so");
	place(b, "dupacross", "dup.so");
	/* Two --plugin files, either order: conflict, both named, exit 3. */
	for (int order = 0; order < 2; order++) {
		cr_assert_eq(t_sh(out, sizeof out, "%s --no-default-plugins --plugin %s/%s --plugin %s/%s plugins -v 2>&1",
		                  nnnkit_bin(), order ? b : a, order ? "dup.so" : "good.so", order ? a : b,
		                  order ? "good.so" : "dup.so"), 3, "%s", out);
		cr_expect(strstr(out, t_fmt("%s/good.so: conflict stage: layer ID 0 (%s) is also claimed by %s/dup.so", a,
		                            nnn_layer_id_name(0), b)), "%s", out);
		cr_expect(strstr(out, t_fmt("%s/dup.so: conflict stage: layer ID 0 (%s) is also claimed by %s/good.so", b,
		                            nnn_layer_id_name(0), a)), "%s", out);
		cr_expect(strstr(out, "provides layer 0 (provided by none: see the conflict), activation"), "%s", out);
		cr_expect(strstr(out, "activation 3 fixture-act,") || strstr(out, "activation 3 fixture-act\n"), "%s", out);
	}
	/* Two files of one NNN_PLUGIN_PATH folder, named either way round: the same. */
	for (int order = 0; order < 2; order++) {
		char both[128];
		snprintf(both, sizeof both, "%s/both%d", root, order);
		place(both, "good", order ? "z.so" : "a.so");
		place(both, "dupacross", order ? "a.so" : "z.so");
		cr_assert_eq(t_sh(out, sizeof out, "NNN_PLUGIN_PATH=%s %s plugins -v 2>&1", both, nnnkit_bin()), 3, "%s", out);
		cr_expect(strstr(out, t_fmt("conflict stage: layer ID 0 (%s) is also claimed by", nnn_layer_id_name(0))), "%s",
		          out);
		cr_expect(strstr(out, "from the same source (NNN_PLUGIN_PATH folder"), "%s", out);
		/* the builtin plugin (later) does not get it either */
		cr_expect(strstr(out, "layer 0 (provided by none"), "%s", out);
	}
	/* --plugin before NNN_PLUGIN_PATH: it wins the ID; the other keeps the rest. */
	cr_expect_eq(t_sh(out, sizeof out, "NNN_PLUGIN_PATH=%s %s --plugin %s/good.so plugins 2>&1", b, nnnkit_bin(), a), 0,
	             "%s", out);
	cr_expect(strstr(out, t_fmt("provides layer 0 (shadowed by %s/good.so), activation 5\n", a)), "%s", out);
	/* Folders in order: the first wins, either way round. */
	for (int order = 0; order < 2; order++) {
		cr_assert_eq(t_sh(out, sizeof out, "NNN_PLUGIN_PATH=%s:%s %s plugins 2>&1",
		                  order ? b : a, order ? a : b, nnnkit_bin()), 0, "%s", out);
		cr_expect(strstr(out, t_fmt("%s: loaded (fixture 1)\n    provides layer 0 (shadowed by %s)",
		                            order ? t_fmt("%s/good.so", a) : t_fmt("%s/dup.so", b),
		                            order ? t_fmt("%s/dup.so", b) : t_fmt("%s/good.so", a))), "%s", out);
	}
	/* NNN_PLUGIN_PATH before the installed folder: a Dense kernel there
	 * overrides the builtin plugin's, which still provides the rest. */
	cr_assert_eq(t_sh(out, sizeof out, "NNN_PLUGIN_PATH=%s %s plugins 2>&1", a, nnnkit_bin()), 0, "%s", out);
	cr_expect(strstr(out, t_fmt("provides layer 0 (shadowed by %s/good.so), layer 1,", a)), "%s", out);
	cr_expect(strstr(out, t_fmt("activation 3 (shadowed by %s/good.so)", a)), "%s", out);
	/* The same through the library, the installed folder given. */
	nnn_ctx_t *c = ctx_new();
	const char *path = NULL;
	nnn_discover_opts_t o = { .size = sizeof o, .installed_dir = b, .cache = "" };
	setenv("NNN_PLUGIN_PATH", a, 1);
	o.search = true;
	cr_assert_eq(nnn_plugin_discover(c, &o, NULL), NNN_OK);
	unsetenv("NNN_PLUGIN_PATH");
	cr_assert_not_null(nnn_ctx_layer(c, 0, &path));
	cr_assert(strstr(path, "/a/good.so"), "%s", path);
	cr_assert_not_null(nnn_ctx_activation(c, 5, &path));
	cr_assert(strstr(path, "/b/dup.so"), "%s", path);
	nnn_ctx_free(c);
	rm_tree(root);
}

/* Exit 3 for a plugin that fails, in every command. */
Test(discovery, every_command_exits_3_for_a_bad_plugin, .timeout = 120)
{
	char root[64], model[256], input[256], pic[256], out[8192];
	mk_tree(root, sizeof root);
	tiny_model(root, model, input, sizeof model);
	snprintf(pic, sizeof pic, "%s/pic.png", root);
	FILE *f = fopen(pic, "w");
	for (int i = 0; i < 64; i++)
		fputs("\x89PNG not a shared object\n", f);
	fclose(f);
	chmod(pic, 0644);
	const char *plugins[] = { "/nonexistent.so", pic };
	const char *cmds[] = { t_fmt("info %s", model), t_fmt("validate %s", model), t_fmt("dump %s", model),
		               t_fmt("graph %s", model), t_fmt("map %s -o %s/map.html", model, root),
		               t_fmt("convert %s %s/m.json", model, root), t_fmt("run %s --input %s", model, input), "plugins" };
	for (size_t p = 0; p < 2; p++) {
		for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
			const char *args = cmds[i];
			cr_expect_eq(t_sh(out, sizeof out, "%s --plugin %s %s 2>&1", nnnkit_bin(), plugins[p], args), 3, "%s: %s\n%s",
			             plugins[p], args, out);
			cr_expect(strstr(out, t_fmt("%s: open stage: ", plugins[p])), "%s", out);
		}
	}
	rm_tree(root);
}

/* Every folder from the plugin up to the root: a folder above it that others
 * can write must be sticky; its own folder may not be writable by others at
 * all; and the remedy is one the user can apply (never chmod of a shared
 * sticky folder such as /tmp). */
Test(discovery, every_folder_up_to_the_root_checked)
{
	char root[64], dir[128], so[160];
	nnn_ctx_t *c = ctx_new();
	mk_tree(root, sizeof root);
	snprintf(dir, sizeof dir, "%s/mid/p", root);
	cr_assert_eq(t_sh(NULL, 0, "mkdir -p %s", dir), 0);
	place(dir, "good", "good.so");
	snprintf(so, sizeof so, "%s/good.so", dir);
	cr_assert_eq(chmod(t_fmt("%s/mid", root), 0777), 0);
	const char *above[] = { t_fmt("the folder %s/mid above it is writable by group or others and not sticky", root),
		                "mode 0777", t_fmt("fix it with chmod go-w %s/mid", root), "NNN_PLUGIN_ALLOW_INSECURE", NULL };
	expect_refused(c, so, "open", above);
	/* Sticky above: fine, as /tmp is. */
	cr_assert_eq(chmod(t_fmt("%s/mid", root), 01777), 0);
	cr_assert_eq(nnn_plugin_load(c, so, NULL), NNN_OK);
	nnn_ctx_free(c);
	c = ctx_new();
	/* Its own folder sticky and writable by others: refused, and the remedy
	 * is to move the plugin, not to chmod a shared folder. */
	cr_assert_eq(chmod(t_fmt("%s/mid", root), 0755), 0);
	cr_assert_eq(chmod(dir, 01777), 0);
	const char *own[] = { t_fmt("its folder %s is writable by group or others (mode 1777", dir),
		              "anyone could add a plugin there", "move the plugin to a folder only you can write", NULL };
	expect_refused(c, so, "open", own);
	nnn_diags_t d;
	nnn_diags_init(&d);
	cr_assert_eq(nnn_plugin_load(c, so, &d), NNN_E_PLUGIN);
	cr_assert_null(strstr(d.v[0].msg, "chmod"), "%s", d.v[0].msg);
	nnn_diags_free(&d);
	/* The same check in discovery, before any scan. */
	nnn_discover_opts_t o = { .size = sizeof o, .files = (const char *[]){ so }, .nfiles = 1, .cache = "" };
	nnn_diags_init(&d);
	cr_assert_eq(nnn_plugin_discover(c, &o, &d), NNN_E_PLUGIN);
	cr_assert(strstr(d.v[0].msg, "open stage: its folder"), "%s", d.v[0].msg);
	nnn_diags_free(&d);
	nnn_ctx_free(c);
	rm_tree(root);
}
