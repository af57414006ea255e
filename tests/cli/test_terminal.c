/* test_terminal.c: text from a file, a plugin or the command line never
 * reaches a terminal, a page or a graph raw. A description with C0 (ESC,
 * BEL), DEL, C1 (U+009B, the 8-bit CSI; U+0085) and bidirectional controls
 * (U+202E, U+2066, U+200F, U+061C), and line separators (U+2028), through
 * every command that shows it; then the sweep (suite escape): every command
 * that prints text, on a hostile model, plugin and file names. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nnn/npy.h>

#include "builder.h"
#include "clirun.h"
#include "ctx.h"
#include "shell.h"

static const char evil[] = "a\x1b[31m b\xc2\x9b" "31m c\xe2\x80\xae" "d e\xe2\x81\xa6" "f g\xe2\x80\x8f" "h "
                           "i\xd8\x9cj k\x07l\x7fm n\xc2\x85o p\xe2\x80\xa8q \"r\\";

/* The raw forms: none may appear in any output. */
static void no_raw(const char *what, const char *text)
{
	static const char *const raw[] = { "\x1b", "\x07", "\x7f", "\xc2\x9b", "\xc2\x85", "\xe2\x80\xae",
	                                   "\xe2\x81\xa6", "\xe2\x80\x8f", "\xd8\x9c", "\xe2\x80\xa8" };
	for (size_t i = 0; i < sizeof raw / sizeof raw[0]; i++)
		cr_assert(!strstr(text, raw[i]), "%s: the control %zu reaches the terminal raw", what, i);
}

static const char *evil_file(void)
{
	static char path[512];
	bb_t b = { 0 };
	bb_header(&b, evil, 11, 2);
	bb_dense(&b, 4, 3, 2, 0);
	bb_dense(&b, 0, 2, 1, 0);
	snprintf(path, sizeof path, "%s", bb_to_file(&b, "evil.nnn"));
	bb_free(&b);
	return path;
}

static void rm_dir_of(const char *path)
{
	char dir[512];
	snprintf(dir, sizeof dir, "%s", path);
	*strrchr(dir, '/') = '\0';
	cr_assert_eq(t_sh(NULL, 0, "rm -rf %s", dir), 0);
}

Test(terminal, info_escapes_the_description)
{
	run_t r;
	const char *f = evil_file();
	nnnkit(&r, t_fmt("info %s", f));
	cr_assert_eq(r.code, 0, "%s", r.err);
	no_raw("info", r.out);
	cr_assert(strstr(r.out, "description:  \"a\\x1b[31m b\\u009b31m c\\u202ed e\\u2066f g\\u200fh i\\u061cj "
	                        "k\\x07l\\x7fm n\\u0085o p\\u2028q \\\"r\\\\\"\n"), "%s", r.out);
	rm_dir_of(f);
}

Test(terminal, graph_dump_map_convert_escape_the_description)
{
	run_t r;
	char html[1 << 16];
	const char *f = evil_file();
	nnnkit(&r, t_fmt("graph %s", f));
	cr_assert_eq(r.code, 0, "%s", r.err);
	no_raw("graph", r.out);
	cr_assert(strstr(r.out, "label=\"a?[31m b?31m c?d e?f g?h i?j k?l?m n?o p?q \\\"r\\\\\\n"), "%s", r.out);
	nnnkit(&r, t_fmt("dump %s", f));
	cr_assert_eq(r.code, 0, "%s", r.err);
	no_raw("dump", r.out);
	cr_assert(strstr(r.out, "\"a\\u001b[31m b\\u009b31m c\\u202ed e\\u2066f g\\u200fh i\\u061cj k\\u0007l\\u007fm "
	                        "n\\u0085o p\\u2028q \\\"r\\\\\""), "%s", r.out);
	nnnkit(&r, t_fmt("map %s -o %s.html", f, f));
	cr_assert_eq(r.code, 0, "%s", r.err);
	slurp_keep(t_fmt("%s.html", f), html, sizeof html);
	no_raw("map", html);
	/* in the page's data as the text of the escape: the page shows \u202e */
	cr_assert(strstr(html, "\"description\": \"a\\\\x1b[31m b\\\\u009b31m c\\\\u202ed"),
	          "map: the description is not escaped");
	/* the JSON form: escaped too, and it reads back to the same bytes */
	nnnkit(&r, t_fmt("convert %s - --to json", f));
	cr_assert_eq(r.code, 0, "%s", r.err);
	no_raw("convert --to json", r.out);
	cr_assert_eq(t_sh(NULL, 0, "%s convert %s %s.json && %s build %s.json %s.back.nnn && cmp %s %s.back.nnn",
	                  nnnkit_bin(), f, f, nnnkit_bin(), f, f, f, f), 0);
	rm_dir_of(f);
}

/* A message that quotes the file's own text (an unknown JSON key). */
Test(terminal, messages_escape_quoted_file_text)
{
	run_t r;
	const char *f = evil_file();
	FILE *j = fopen(t_fmt("%s.json", f), "w");
	cr_assert_not_null(j);
	fprintf(j, "{\"description\": \"x\", \"param_count\": 0, \"layers\": [], \"\xc2\x9b" "31m\xe2\x80\xae\": 1}\n");
	fclose(j);
	nnnkit(&r, t_fmt("build %s.json %s.out.nnn", f, f));
	cr_assert_eq(r.code, 1, "%s", r.err);
	no_raw("build's message", r.err);
	cr_assert(strstr(r.err, "\\u009b31m\\u202e"), "%s", r.err);
	rm_dir_of(f);
}

/* ---- the sweep: every command that prints text, on hostile text from a
 * model file, a plugin and the command line ---- */

/* What every hostile text here holds: C0 (ESC, BEL), C1 (U+009B, the 8-bit
 * CSI) and bidirectional controls (U+202E, U+2066); the fixture plugin
 * "hostile" gives the host the same in every text (tests/plugins/fixture.c). */
#define EVIL "\x1b[31m\x07\xc2\x9b" "1m\xe2\x80\xae" "evil\xe2\x81\xa6"
/* How it shows: in a message or on a terminal (NNN_ESC_MSG and _C), in
 * JSON, in DOT, and in the map page's data (shown as the message form). */
#define EVIL_SHOWN "\\x1b[31m\\x07\\u009b1m\\u202eevil\\u2066"
#define EVIL_JSON "\\u001b[31m\\u0007\\u009b1m\\u202eevil\\u2066"
#define EVIL_DOT "?[31m??1m?evil?"
#define EVIL_PAGE "\\\\x1b[31m\\\\x07\\\\u009b1m\\\\u202eevil\\\\u2066"

/* The first character of s no output may carry raw, or NULL: C0 but
 * newline and tab, DEL, C1 (U+0080..U+009F), the bidirectional controls
 * (U+061C, U+200E, U+200F, U+202A..U+202E, U+2066..U+2069) and U+2028,
 * U+2029. JSON output too: docs/cli-json.md promises \uXXXX for each. */
static const char *raw_control(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		unsigned cp = p[0];
		if (cp < 0x20 ? cp != '\n' && cp != '\t' : cp == 0x7f)
			return (const char *)p;
		if (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f)
			return (const char *)p;
		if (p[0] == 0xd8 && p[1] == 0x9c)
			return (const char *)p;
		if (p[0] == 0xe2 && p[1] == 0x80 && ((p[2] >= 0x8e && p[2] <= 0x8f) || (p[2] >= 0xa8 && p[2] <= 0xae)))
			return (const char *)p;
		if (p[0] == 0xe2 && p[1] == 0x81 && p[2] >= 0xa6 && p[2] <= 0xa9)
			return (const char *)p;
	}
	return NULL;
}

static void no_raw_in(const char *what, const char *where, const char *text)
{
	const char *at = raw_control(text);
	cr_assert_null(at, "%s: %s has a raw control at byte %td (0x%02x), after: %.60s", what, where, at - text,
	               at ? (unsigned char)*at : 0, at ? (at - text > 60 ? at - 60 : text) : "");
}

/* Hostile files in one folder, every name holding EVIL: the plugin, a valid
 * model (a description and a plugin layer), the same made invalid by its
 * plugin's check (a message of the plugin's text), and cut short in the
 * plugin's field (a decoding problem at a path of the plugin's text); a
 * Conv model the original framework computes differently (a note); an
 * input array, the same as uint8 (a warning), labels, a JSON model, a
 * conformance corpus. */
typedef struct hostile {
	char dir[64], plugin[256], model[256], bad[256], cut[256], conv[256], x[256], u8[256], y[256], json[256],
		corpus[256];
} hostile_t;

static hostile_t H;

static void hostile_model(const char *path, int knob, size_t cut)
{
	bb_t b = { 0 };
	int32_t dims[1] = { 3 };
	bb_header(&b, "desc" EVIL, 18, 2);
	bb_dense(&b, 0, 4, 3, 0);
	bb_u8(&b, 128); /* the fixture's layer and activation: third-party IDs */
	bb_u8(&b, 128);
	bb_f32(&b, 0.0f);
	bb_tensor(&b, 1, dims);
	bb_u8(&b, (uint8_t)knob);
	FILE *f = fopen(path, "wb");
	cr_assert_not_null(f, "%s", path);
	cr_assert_eq(fwrite(b.b, 1, b.n - cut, f), b.n - cut);
	fclose(f);
	bb_free(&b);
}

/* Conv: 1 filter of 2x3 over 1 channel (unequal sizes: a note). */
static void hostile_conv(const char *path)
{
	bb_t b = { 0 };
	int32_t k[2] = { 2, 3 }, pads[4] = { 0, 0, 0, 0 };
	bb_header(&b, "conv" EVIL, 2 * 3 + 1, 1);
	bb_conv(&b, 0, 1, 2, k, 1, 0 /* Valid */, 4, pads);
	FILE *f = fopen(path, "wb");
	cr_assert_not_null(f, "%s", path);
	cr_assert_eq(fwrite(b.b, 1, b.n, f), b.n);
	fclose(f);
	bb_free(&b);
}

/* A [2, 4] uint8 array 1..8, written by hand (nnnkit writes float32 only):
 * .npy 1.0, its header padded to 128 bytes. */
static void hostile_u8(const char *path)
{
	static const char dict[] = "{'descr': '|u1', 'fortran_order': False, 'shape': (2, 4), }";
	char head[128];
	memcpy(head, "\x93NUMPY\x01\x00\x76\x00", 10);
	memset(head + 10, ' ', sizeof head - 10);
	memcpy(head + 10, dict, sizeof dict - 1);
	head[sizeof head - 1] = '\n';
	FILE *f = fopen(path, "wb");
	cr_assert_not_null(f, "%s", path);
	fwrite(head, 1, sizeof head, f);
	fwrite("\x01\x02\x03\x04\x05\x06\x07\x08", 1, 8, f);
	fclose(f);
}

static void hostile_npy(const char *path, int32_t rank, int64_t d0, int64_t d1, const float *v)
{
	nnn_shape_t s = { .rank = rank, .dims = { d0, d1 } };
	nnn_diags_t d;
	nnn_diags_init(&d);
	cr_assert_eq(nnn_npy_write_file(path, &s, v, &d), NNN_OK, "%s", path);
	nnn_diags_free(&d);
}

static void hostile_setup(void)
{
	static const float x[8] = { 1, 2, 3, 4, 5, 6, 7, 8 }, y[2] = { 0, 1 };
	char cmd[4096];
	snprintf(H.dir, sizeof H.dir, "/tmp/nnnesc.XXXXXX");
	cr_assert_not_null(mkdtemp(H.dir));
	snprintf(H.plugin, sizeof H.plugin, "%s/p" EVIL ".so", H.dir);
	snprintf(H.model, sizeof H.model, "%s/m" EVIL ".nnn", H.dir);
	snprintf(H.bad, sizeof H.bad, "%s/b" EVIL ".nnn", H.dir);
	snprintf(H.cut, sizeof H.cut, "%s/c" EVIL ".nnn", H.dir);
	snprintf(H.conv, sizeof H.conv, "%s/n" EVIL ".nnn", H.dir);
	snprintf(H.x, sizeof H.x, "%s/x" EVIL ".npy", H.dir);
	snprintf(H.u8, sizeof H.u8, "%s/u" EVIL ".npy", H.dir);
	snprintf(H.y, sizeof H.y, "%s/y" EVIL ".npy", H.dir);
	snprintf(H.json, sizeof H.json, "%s/j" EVIL ".json", H.dir);
	snprintf(H.corpus, sizeof H.corpus, "%s/k" EVIL, H.dir);
	snprintf(cmd, sizeof cmd, "cp '%s' '%s' && mkdir '%s'", t_fixture("hostile"), H.plugin, H.corpus);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
	hostile_model(H.model, 0, 0);
	hostile_model(H.bad, 1, 0);
	hostile_model(H.cut, 0, 1);
	hostile_conv(H.conv);
	hostile_npy(H.x, 2, 2, 4, x);
	hostile_u8(H.u8);
	hostile_npy(H.y, 1, 2, 0, y);
	FILE *j = fopen(H.json, "w");
	cr_assert_not_null(j);
	fprintf(j, "{\"description\": \"%s\", \"param_count\": 0, \"layers\": []}\n", EVIL_JSON);
	fclose(j);
	/* A corpus of the three models, one of each verdict, in a class of its own. */
	snprintf(cmd, sizeof cmd, "cp '%s' '%s' '%s' '%s'/", H.model, H.bad, H.cut, H.corpus);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
	j = fopen(t_fmt("%s/manifest.json", H.corpus), "w");
	cr_assert_not_null(j);
	fprintf(j, "{\"cases\": [{\"file\": \"m%s.nnn\", \"class\": \"v%s\", \"valid\": true, \"input_shape\": [1, 4]},\n"
	           "{\"file\": \"b%s.nnn\", \"class\": \"i%s\", \"valid\": true},\n"
	           "{\"file\": \"c%s.nnn\", \"class\": \"i%s\", \"valid\": false, \"code\": \"E_RANGE\"}]}\n",
	        EVIL_JSON, EVIL_JSON, EVIL_JSON, EVIL_JSON, EVIL_JSON, EVIL_JSON);
	fclose(j);
}

static void hostile_teardown(void)
{
	char cmd[128];
	if (H.dir[0]) {
		snprintf(cmd, sizeof cmd, "rm -rf '%s'", H.dir);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", H.dir);
	}
}

/* nnnkit with the builtin plugin and the hostile one only, and the
 * printf-made arguments (paths go in single quotes); no output may carry a
 * raw control, stdout being JSON's when `form` is JSON and not text at all
 * when BINARY. Exit codes up to 3 only: the command ran and chose one. */
enum { TEXT, JSON, BINARY };
static void hrun(run_t *r, int form, const char *fmt, ...) NNN_PRINTF(3, 4);

static void hrun(run_t *r, int form, const char *fmt, ...)
{
	char args[4096];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(args, sizeof args, fmt, ap);
	va_end(ap);
	cr_assert(n > 0 && (size_t)n < sizeof args);
	nnnkitf(r, "--no-default-plugins --plugin '%s/plugins/builtin.so' --plugin '%s' %s", t_build_dir(), H.plugin,
	        args);
	cr_assert(r->code >= 0 && r->code <= 3, "nnnkit %s: exit %d\n%s", args, r->code, r->err);
	if (form != BINARY)
		no_raw_in(args, "stdout", r->out);
	no_raw_in(args, "stderr", r->err);
}

/* The text shown (escaped) is in out or err: the command did print it. */
#define SHOWS(r, what) cr_assert(strstr((r)->out, what) || strstr((r)->err, what), \
                                 "%s not shown:\n%s\n%s", what, (r)->out, (r)->err)

TestSuite(escape, .init = hostile_setup, .fini = hostile_teardown, .timeout = 120);

Test(escape, reports)
{
	run_t r;
	hrun(&r, TEXT, "info '%s'", H.model);
	cr_assert_eq(r.code, 0, "%s", r.err);
	SHOWS(&r, "m" EVIL_SHOWN ".nnn");
	SHOWS(&r, "Fixture" EVIL_SHOWN);
	hrun(&r, JSON, "info --json '%s'", H.model);
	SHOWS(&r, "FixtureAct" EVIL_JSON);
	hrun(&r, TEXT, "info --input-shape 1,5 '%s'", H.model);
	hrun(&r, TEXT, "validate '%s'", H.model);
	cr_assert_eq(r.code, 0, "%s", r.err);
	SHOWS(&r, "m" EVIL_SHOWN ".nnn: valid");
	hrun(&r, TEXT, "validate --check-finite --input-shape 1,4 '%s'", H.model);
	hrun(&r, TEXT, "validate '%s'", H.bad);
	cr_assert_eq(r.code, 1, "%s", r.err);
	SHOWS(&r, "knob 1 is not 0 " EVIL_SHOWN);
	hrun(&r, JSON, "validate --json '%s'", H.bad);
	hrun(&r, TEXT, "validate '%s'", H.cut);
	hrun(&r, TEXT, "validate '%s'", H.conv);
	cr_assert_eq(r.code, 0, "%s", r.err);
	SHOWS(&r, "n" EVIL_SHOWN ".nnn: note: layers[0]");
	hrun(&r, TEXT, "info '%s'", H.conv);
	hrun(&r, TEXT, "dump '%s'", H.model);
	SHOWS(&r, "fixture" EVIL_SHOWN ", from p" EVIL_SHOWN ".so");
	hrun(&r, TEXT, "dump '%s'", H.cut);
	cr_assert_eq(r.code, 1, "%s", r.err);
	SHOWS(&r, "!! layers[1].knob" EVIL_SHOWN);
	SHOWS(&r, "c" EVIL_SHOWN ".nnn: not a valid model");
	hrun(&r, JSON, "dump --json '%s'", H.cut);
	hrun(&r, TEXT, "stats '%s'", H.model);
	hrun(&r, JSON, "stats --json '%s'", H.model);
	hrun(&r, TEXT, "diff '%s' '%s'", H.model, H.bad);
	cr_assert_eq(r.code, 1, "%s", r.err);
	SHOWS(&r, "~ layers[1].knob");
	hrun(&r, JSON, "diff --json '%s' '%s'", H.model, H.bad);
	hrun(&r, TEXT, "diff '%s' '%s'", H.model, H.cut);
}

Test(escape, pictures)
{
	run_t r;
	static char text[1 << 16];
	const char *html = t_fmt("%s/o" EVIL ".html", H.dir), *dot = t_fmt("%s/g" EVIL ".dot", H.dir);
	const char *models[] = { H.model, H.bad, H.cut };
	for (int i = 0; i < 3; i++) {
		hrun(&r, TEXT, "map -o '%s' '%s'", html, models[i]);
		slurp(html, text, sizeof text);
		cr_assert(strstr(text, "</html>"), "map %s: no page", models[i]);
		no_raw_in(models[i], "the map page", text);
		cr_assert(strstr(text, "Fixture" EVIL_PAGE), "map: the plugin's title is not shown escaped");
		hrun(&r, TEXT, "graph -o '%s' '%s'", dot, models[i]);
		slurp(dot, text, sizeof text);
		no_raw_in(models[i], "the DOT graph", text);
		cr_assert(strstr(text, "Fixture" EVIL_DOT), "graph: %s", text);
	}
	hrun(&r, TEXT, "map '%s'", H.model);
	cr_assert(strstr(r.out, "desc" EVIL_PAGE), "map: the description is not shown escaped");
	cr_assert(strstr(r.out, "m" EVIL_PAGE ".nnn"), "map: the file name is not shown escaped");
	hrun(&r, TEXT, "graph '%s'", H.bad);
}

Test(escape, runs_and_writes)
{
	run_t r;
	hrun(&r, TEXT, "run '%s' --input '%s'", H.model, H.x);
	cr_assert_eq(r.code, 0, "%s", r.err);
	hrun(&r, TEXT, "run '%s' --input '%s' -o '%s/r" EVIL ".npy'", H.model, H.x, H.dir);
	hrun(&r, TEXT, "run '%s' --input '%s'", H.model, H.u8);
	cr_assert_eq(r.code, 0, "%s", r.err);
	SHOWS(&r, "u" EVIL_SHOWN ".npy: warning: uint8 values");
	hrun(&r, TEXT, "run '%s' --input '%s' --input-shape 1,3", H.model, H.x);
	SHOWS(&r, "x" EVIL_SHOWN ".npy");
	hrun(&r, TEXT, "eval '%s' --inputs '%s' --labels '%s'", H.model, H.x, H.y);
	cr_assert_eq(r.code, 0, "%s", r.err);
	SHOWS(&r, "y" EVIL_SHOWN ".npy");
	hrun(&r, JSON, "eval --json '%s' --inputs '%s' --labels '%s'", H.model, H.x, H.y);
	hrun(&r, TEXT, "eval '%s' --inputs '%s' --labels '%s'", H.model, H.y, H.x);
	hrun(&r, TEXT, "edit '%s' --get 'layers[1].bias' -o '%s/e" EVIL ".npy'", H.model, H.dir);
	hrun(&r, TEXT, "edit '%s' --get 'no" EVIL "' -o '%s/e" EVIL ".npy'", H.model, H.dir);
	hrun(&r, TEXT, "edit '%s' --set 'layers[1].bias=%s' -o '%s/e" EVIL ".nnn'", H.model, H.x, H.dir);
	hrun(&r, TEXT, "edit '%s' --description '" EVIL "' -o '%s/e" EVIL ".nnn'", H.model, H.dir);
	hrun(&r, TEXT, "info '%s/e" EVIL ".nnn'", H.dir);
	hrun(&r, TEXT, "convert '%s' '%s/v" EVIL ".json'", H.model, H.dir);
	hrun(&r, TEXT, "convert '%s' '%s/v" EVIL ".nnn'", H.json, H.dir);
	hrun(&r, TEXT, "convert '%s' '%s/v" EVIL ".onnx'", H.model, H.dir);
	hrun(&r, TEXT, "build '%s' '%s/w" EVIL ".nnn'", H.json, H.dir);
	cr_assert_eq(r.code, 0, "%s", r.err);
	SHOWS(&r, "w" EVIL_SHOWN ".nnn: ");
	hrun(&r, BINARY, "build '%s' -", H.json);
	SHOWS(&r, "stdout: ");
	hrun(&r, TEXT, "export '%s' '%s/x" EVIL "'", H.model, H.dir);
	hrun(&r, TEXT, "export '%s' '%s'", H.model, H.corpus);
}

Test(escape, plugins_and_conformance)
{
	run_t r;
	hrun(&r, TEXT, "plugins");
	hrun(&r, TEXT, "plugins -v");
	SHOWS(&r, "fixture" EVIL_SHOWN);
	hrun(&r, JSON, "plugins --json");
	hrun(&r, TEXT, "plugins -v --check '%s'", H.plugin);
	hrun(&r, TEXT, "plugins --check '%s/none" EVIL ".so'", H.dir);
	hrun(&r, TEXT, "conformance -v --corpus '%s'", H.corpus);
	SHOWS(&r, "b" EVIL_SHOWN ".nnn");
	hrun(&r, JSON, "conformance --json --corpus '%s'", H.corpus);
	hrun(&r, TEXT, "conformance --corpus '%s' --decoder 'test -e {file} # " EVIL "'", H.corpus);
	hrun(&r, TEXT, "conformance --corpus '%s/none" EVIL "'", H.dir);
	hrun(&r, TEXT, "--plugin '%s/none" EVIL ".so' info '%s'", H.dir, H.model);
}

Test(escape, command_line)
{
	run_t r;
	hrun(&r, TEXT, "'" EVIL "'");
	hrun(&r, TEXT, "'inf" EVIL "'");
	hrun(&r, TEXT, "help '" EVIL "'");
	hrun(&r, TEXT, "dump --values '" EVIL "' '%s'", H.model);
	hrun(&r, TEXT, "dump --" EVIL " '%s'", H.model);
	hrun(&r, TEXT, "info '%s' '" EVIL "'", H.model);
	hrun(&r, TEXT, "info '%s/none" EVIL ".nnn'", H.dir);
	hrun(&r, JSON, "info --json '%s/none" EVIL ".nnn'", H.dir);
	hrun(&r, TEXT, "validate --input-shape '1," EVIL "' '%s'", H.model);
	hrun(&r, TEXT, "convert '%s' '%s/v" EVIL "'", H.model, H.dir);
}
