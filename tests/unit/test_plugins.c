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
#include "host.h"
#include "vctx.h"
#include "ctx.h"
#include "shell.h"
#include "schemaq.h"

/* A fresh private folder holding a copy of a fixture. */
static const char *copy_to_tmp(const char *name, char *dir, size_t size)
{
	static char dst[1024];
	char cmd[2300];
	snprintf(dir, size, "/tmp/nnnplug.XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	snprintf(dst, sizeof dst, "%s/%s.so", dir, name);
	snprintf(cmd, sizeof cmd, "cp %s %s", t_fixture(name), dst);
	cr_assert_eq(system(cmd), 0);
	chmod(dst, 0755);
	return dst;
}

Test(plugins, good_fixture_registers)
{
	nnn_ctx_t *c = t_ctx_new();
	const char *path = NULL;
	nnn_plugin_report_t r;
	cr_assert_eq(nnn_plugin_load(c, t_fixture("good"), NULL), NNN_OK);
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
	nnn_ctx_t *c = t_ctx_new();
	const char *dup[] = { "flood.so", "layer ID 0 is declared twice", NULL };
	t_expect_refused(c, t_fixture("flood"), "validation", dup);
	cr_assert_null(nnn_ctx_layer(c, 0, NULL));
	cr_assert_null(nnn_ctx_activation(c, 3, NULL));
	nnn_ctx_free(c);
}

/* A byte holds 256 IDs, and a plugin may declare every one of them. */
Test(plugins, all_256_ids_of_a_byte)
{
	nnn_ctx_t *c = t_ctx_new();
	nnn_diags_t d;
	nnn_plugin_report_t r;
	char buf[2048] = "";
	nnn_diags_init(&d);
	nnn_status_t st = nnn_plugin_load(c, t_fixture("allids"), &d);
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
	nnn_ctx_t *c = t_ctx_new();
	char dir[64], bad[128];
	const char *missing[] = { "/nonexistent/plugin.so", "cannot resolve", NULL };
	t_expect_refused(c, "/nonexistent/plugin.so", "open", missing);
	const char *bare[] = { "bare name", "NNN_PLUGIN_PATH", NULL };
	t_expect_refused(c, "good.so", "open", bare);

	/* Not an ELF file: dlopen's own words come through. */
	copy_to_tmp("good", dir, sizeof dir);
	snprintf(bad, sizeof bad, "%s/text.so", dir);
	FILE *f = fopen(bad, "w");
	for (int i = 0; i < 20; i++) /* longer than an ELF header */
		fputs("this is not a shared object\n", f);
	fclose(f);
	chmod(bad, 0644);
	const char *notelf[] = { bad, "dlopen failed", "invalid ELF header", NULL };
	t_expect_refused(c, bad, "open", notelf);

	const char *dep[] = { "missingdep.so", "libfixdep.so", "cannot open shared object file", NULL };
	t_expect_refused(c, t_fixture("missingdep"), "open", dep);
	const char *entry[] = { "noentry.so", NNN_PLUGIN_ENTRY_NAME, "nor the nnn_plugin_entry of a plugin built before",
		                NULL };
	t_expect_refused(c, t_fixture("noentry"), "entry point", entry);
	const char *init[] = { "initfail.so", "deliberate failure in init", NULL };
	t_expect_refused(c, t_fixture("initfail"), "init", init);
	char here[32], newer_major[32], newer_minor[32];
	snprintf(here, sizeof here, "provides %d.%d", NNN_ABI_MAJOR, NNN_ABI_MINOR);
	snprintf(newer_major, sizeof newer_major, "ABI %d.%d", NNN_ABI_MAJOR + 1, NNN_ABI_MINOR);
	snprintf(newer_minor, sizeof newer_minor, "ABI %d.%d", NNN_ABI_MAJOR, NNN_ABI_MINOR + 1);
	const char *major[] = { "abimajor.so", newer_major, here, "rebuild the plugin", NULL };
	t_expect_refused(c, t_fixture("abimajor"), "ABI", major);
	const char *minor[] = { "abiminor.so", newer_minor, here, NULL };
	t_expect_refused(c, t_fixture("abiminor"), "ABI", minor);
	const char *dup[] = { "layer ID 0", "declared twice", NULL };
	t_expect_refused(c, t_fixture("dupwithin"), "validation", dup);
	const char *fwd[] = { "lacks forward", NULL };
	t_expect_refused(c, t_fixture("noforward"), "validation", fwd);
	const char *fit[] = { "badrecord.so", "layer ID 7 (fixture)", "record descriptor does not fit its codec",
		              "regenerate the codec", NULL };
	t_expect_refused(c, t_fixture("badrecord"), "validation", fit);
	const char *core[] = { "corerecord.so", "layer ID 0 (fixture)", "the schema defines that ID",
		               "leave it NULL", NULL };
	t_expect_refused(c, t_fixture("corerecord"), "validation", core);

	/* Nothing of the failed plugins was registered, and the context still works. */
	cr_assert_null(nnn_ctx_layer(c, 0, NULL));
	cr_assert_null(nnn_ctx_activation(c, 3, NULL));
	cr_assert_eq(nnn_plugin_load(c, t_fixture("good"), NULL), NNN_OK);
	cr_assert_not_null(nnn_ctx_layer(c, 0, NULL));
	nnn_ctx_free(c);
}

/* The schema layout a plugin declares (ABI 1.2) must be the host's; one this
 * host never had, or none, is refused at the ABI stage with what to do. A
 * plugin built for 1.0 or 1.1 declares none and counts as built against the
 * first layout the lock records (here the host's own, so it loads). */
Test(plugins, schema_layout_checked)
{
	nnn_ctx_t *c = t_ctx_new();
	char here[64];
	snprintf(here, sizeof here, "this nnnkit (layout 0x%08x) never had", (unsigned)NNN_SCHEMA_LAYOUT);
	const char *unknown[] = { "layout.so", "built against schema layout 0x5eed1234", here,
		                  "rebuild the plugin against this nnnkit's headers", NULL };
	t_expect_refused(c, t_fixture("layout"), "ABI", unknown);
	const char *none[] = { "nolayout.so", "declares no schema layout (schema_layout is 0)",
		               "exports the unstamped nnn_plugin_entry", "rebuild it against this nnnkit's headers",
		               "NNN_PLUGIN_INFO(name, version)", NULL };
	t_expect_refused(c, t_fixture("nolayout"), "ABI", none);
	/* ABI 1.7: an entry point stamped with a layout this host never had. */
	const char *other[] = { "stampedother.so", "no " NNN_PLUGIN_ENTRY_NAME " function",
		                "rebuilt against this one's", NULL };
	t_expect_refused(c, t_fixture("stampedother"), "entry point", other);
	cr_assert_null(nnn_ctx_layer(c, 0, NULL));
	/* Its info leaves the layout 0, but its entry point's name stamps it. */
	cr_assert_eq(nnn_plugin_load(c, t_fixture("stamped"), NULL), NNN_OK);
	cr_assert_not_null(nnn_ctx_layer(c, 0, NULL));
	nnn_ctx_free(c);
	c = t_ctx_new();

	cr_assert_eq(NNN_SCHEMA_LAYOUT_FIRST, nnn_schema_layouts[0].fingerprint);
	cr_assert_eq(NNN_SCHEMA_LAYOUT, nnn_schema_layouts[NNN_SCHEMA_LAYOUTS - 1].fingerprint);
	if (NNN_SCHEMA_LAYOUT_FIRST == NNN_SCHEMA_LAYOUT) {
		cr_assert_eq(nnn_plugin_load(c, t_fixture("abi10"), NULL), NNN_OK);
	} else {
		const char *old[] = { "abi10.so", "built for plugin ABI 1.0, so against schema layout", "ago",
			              "rebuild the plugin and its codec", NULL };
		t_expect_refused(c, t_fixture("abi10"), "ABI", old);
	}
	nnn_ctx_free(c);
}

Test(plugins, duplicate_across_plugins_registers_nothing)
{
	nnn_ctx_t *c = t_ctx_new();
	cr_assert_eq(nnn_plugin_load(c, t_fixture("good"), NULL), NNN_OK);
	const char *want[] = { "dupacross.so", "layer ID 0", "already provided by", "/fixtures/good.so", NULL };
	t_expect_refused(c, t_fixture("dupacross"), "registration", want);
	/* Its activation 5 was free, but all or nothing. */
	cr_assert_null(nnn_ctx_activation(c, 5, NULL));
	const char *path;
	nnn_ctx_layer(c, 0, &path);
	cr_assert(strstr(path, "good.so"));
	nnn_ctx_free(c);
}

Test(plugins, same_file_twice_loads_once)
{
	nnn_ctx_t *c = t_ctx_new();
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
	nnn_ctx_t *c = t_ctx_new();
	char dir[64];
	const char *copy = copy_to_tmp("good", dir, sizeof dir);
	cr_assert_eq(chmod(copy, 0666), 0);
	const char *file[] = { copy, "writable by group or others", "mode 0666", "NNN_PLUGIN_ALLOW_INSECURE", NULL };
	t_expect_refused(c, copy, "open", file);
	cr_assert_eq(chmod(copy, 0755), 0);
	cr_assert_eq(chmod(dir, 0777), 0);
	const char *folder[] = { "its folder", "mode 0777", "NNN_PLUGIN_ALLOW_INSECURE", NULL };
	t_expect_refused(c, copy, "open", folder);
	setenv("NNN_PLUGIN_ALLOW_INSECURE", "1", 1);
	cr_assert_eq(nnn_plugin_load(c, copy, NULL), NNN_OK);
	unsetenv("NNN_PLUGIN_ALLOW_INSECURE");
	chmod(dir, 0700);
	nnn_ctx_free(c);
}

Test(plugins, search_path_but_never_the_current_folder)
{
	nnn_ctx_t *c = t_ctx_new();
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
	nnn_ctx_t *c = t_ctx_new();
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
	nnn_ctx_t *c = t_ctx_new();
	nnn_decode_opts_t o = { .ctx = c };
	cr_assert_eq(nnn_plugin_load(c, t_fixture("good"), NULL), NNN_OK);
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
		"load a plugin that provides this ID (--plugin FILE or NNN_PLUGIN_PATH; nnnkit plugins lists",
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
	nnn_ctx_t *c = t_ctx_new();
	cr_assert_eq(nnn_plugin_load(c, t_fixture("good"), NULL), NNN_OK);
	cr_assert_eq(nnn_plugin_load(c, t_fixture("tag2"), NULL), NNN_OK);
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
	nnn_ctx_t *c = t_ctx_new();
	pthread_t t1, t2;
	void *a1[2] = { c, (void *)t_fixture("good") }, *a2[2] = { c, (void *)t_fixture("tag2") };
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
	nnn_ctx_t *c = t_ctx_new();
	pthread_t t1, t2;
	void *a[2] = { c, (void *)t_fixture("good") }, *r1, *r2;
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
	nnn_ctx_t *c = t_ctx_new();
	nnn_diags_t d;
	nnn_model_t *m;
	char *json;
	size_t n;
	nnn_diags_init(&d);
	if (NNN_SCHEMA_LAYOUT != NNN_SCHEMA_LAYOUT_FIRST) {
		/* a grown schema moved the structs an ABI 1.0 plugin was built against */
		cr_assert_eq(nnn_plugin_load(c, t_fixture("oldabi"), &d), NNN_E_PLUGIN);
		cr_assert(strstr(d.v[0].msg, "ABI stage") && strstr(d.v[0].msg, "layout"), "%s", d.v[0].msg);
		nnn_diags_free(&d);
		nnn_ctx_free(c);
		return;
	}
	cr_assert_eq(nnn_plugin_load(c, t_fixture("oldabi"), &d), NNN_OK, "%s", d.n ? d.v[0].msg : "");
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
	nnn_ctx_t *c = t_ctx_new();
	nnn_diags_t d;
	nnn_plugin_report_t r;
	char *msg;
	nnn_diags_init(&d);
	cr_assert_eq(nnn_plugin_load(c, t_fixture(name), &d), NNN_OK, "%s: %s", name, d.n ? d.v[0].msg : "");
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
	if ((0 NNN_LAYER_ID_TAKEN(COUNT_)) > 0 && (0 NNN_ACTIVATION_ID_TAKEN(COUNT_)) > 0) {
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
	const char *path = t_fixture("freecore");

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
	                  t_fixture("thirdparty")),
	             0, "%s", out);
	cr_expect_str_empty(out, "%s", out);
}

/* ABI 1.6: plugins print shapes with the host's one printer. */
Test(plugins, host_table_gives_the_shape_printer)
{
	const nnn_host_t *h = nnn_host_table();
	char buf[64];
	nnn_shape_t s = { .rank = 2, .dims = { 1, 10 } };
	cr_assert_geq(h->size, offsetof(nnn_host_t, shape_format) + sizeof h->shape_format);
	cr_assert_gt(offsetof(nnn_host_t, shape_format), offsetof(nnn_host_t, onnx_fail), "the table grows at the end");
	cr_assert_str_eq(h->shape_format(&s, &(nnn_dims_style_t){ "[", ", ", "]", NULL, NULL, 0 }, buf, sizeof buf),
	                 "[1, 10]");
	cr_assert_str_eq(h->shape_format(&s, &(nnn_dims_style_t){ "(", ", ", ")", ",)", NULL, 0 }, buf, sizeof buf),
	                 "(1, 10)");
}
