/* test_map.c: `nnnkit map` and `nnnkit graph`. The page is checked twice:
 * as text (self-contained, safely escaped, the numbers the C side computes)
 * and as a browser draws it, in headless Chromium, where its #selftest hook
 * reports what it drew (one graph node per layer, one histogram per tensor,
 * one byte-map region per field, the tooltip of a hovered region) and any
 * script error. Expected counts come from the decoder's visitor in this
 * process, offsets from the builder. The screenshot is kept as
 * $NNN_BUILD/map-screenshot.png. Then the page at 360 to 1920 px, as the
 * browser lays it out: nothing wider than the screen, histograms on a log
 * count axis, zeros and non-finite values counted, byte-map regions as wide
 * as their bytes (zoomed in and back), for a model built here with known
 * counts and for the real corpus files when they are there. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nnn/context.h>
#include <nnn/model.h>

#include "blackbox.h"
#include "builder.h"
#include "ctx.h"
#include "peak.h"
#include "shell.h"

static char g_dir[64];

static void cleanup(void)
{
	char cmd[128];
	if (g_dir[0]) {
		snprintf(cmd, sizeof cmd, "rm -rf %s", g_dir);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", g_dir);
	}
}

static const char *dir(void)
{
	if (!g_dir[0]) {
		strcpy(g_dir, "/tmp/nnnmap.XXXXXX");
		cr_assert_not_null(mkdtemp(g_dir));
	}
	return g_dir;
}

/* A whole file, NUL-terminated (free it); NULL when it cannot be read. */
static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	size_t n = (size_t)ftell(f);
	fseek(f, 0, SEEK_SET);
	char *p = malloc(n + 1);
	cr_assert_not_null(p);
	cr_assert_eq(fread(p, 1, n, f), n);
	p[n] = '\0';
	fclose(f);
	if (len)
		*len = n;
	return p;
}

static const char *write_model(const bb_t *b, const char *name)
{
	static char path[256];
	snprintf(path, sizeof path, "%s/%s", dir(), name);
	FILE *f = fopen(path, "wb");
	cr_assert_not_null(f);
	cr_assert_eq(fwrite(b->b, 1, b->n, f), b->n);
	cr_assert_eq(fclose(f), 0);
	return path;
}

static int count(const char *hay, const char *needle)
{
	int n = 0;
	for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += strlen(needle))
		n++;
	return n;
}

/* What the decoder's visitor sees: fields, float arrays, and the index of
 * the field at `path`. */
typedef struct seen {
	int fields, arrays, at;
	const char *path;
} seen_t;

static void on_field(void *ctx, const nnn_field_t *f)
{
	seen_t *s = ctx;
	if (s->path && !strcmp(f->path, s->path))
		s->at = s->fields;
	s->fields++;
	s->arrays += f->prim == NNN_PRIM_F32_ARRAY;
}

static seen_t visit(const bb_t *b, const nnn_ctx_t *ctx, const char *path)
{
	seen_t s = { 0, 0, -1, path };
	nnn_visitor_t v = { on_field, NULL, &s };
	nnn_decode_opts_t o = { .flags = NNN_DECODE_KEEP_GOING, .visit = &v, .ctx = ctx };
	nnn_model_t *m = NULL;
	if (nnn_model_decode(b->b, b->n, &o, &m, NULL) == NNN_OK)
		nnn_model_free(m);
	return s;
}

/* A page refers to nothing outside itself. */
static void assert_self_contained(const char *html)
{
	static const char *const refs[] = { "http://", "https://", "url(", "@import", "<link", " src=", "<iframe",
	                                     "fetch(", "XMLHttpRequest", "//fonts." };
	for (size_t i = 0; i < sizeof refs / sizeof refs[0]; i++)
		cr_assert_null(strstr(html, refs[i]), "the page refers to something outside itself: %s", refs[i]);
}

#define EVIL "map </script><script>alert(1)</script> & <!-- \xe2\x80\xa8 end"

/* Conv (Same) -> Dense, with a description that tries to end the script. */
static void core_model(bb_t *b)
{
	int32_t k[2] = { 3, 3 }, pads[4] = { 1, 1, 1, 1 };
	bb_header(b, EVIL, 4 + 36 + 3 + 64 * 3, 2);
	bb_conv(b, 3, 4, 2, k, 1, 1, 4, pads);
	bb_dense(b, 4, 64, 3, 1);
}

Test(map, page_is_self_contained_and_escaped, .fini = cleanup)
{
	char out[300], cmd[1024];
	bb_t b = { 0 };
	core_model(&b);
	const char *model = write_model(&b, "core.nnn");
	snprintf(out, sizeof out, "%s/core.html", dir());
	cr_assert_eq(t_sh(NULL, 0, "%s map --input-shape 1,4,4,1 %s -o %s", nnnkit_bin(), model, out), 0);
	char *html = slurp(out, NULL);
	cr_assert_not_null(html);
	assert_self_contained(html);

	/* The description is in the data, escaped: it cannot end or bend the script. */
	cr_assert_null(strstr(html, "<script>alert"));
	cr_assert_null(strstr(html, "<!-- \xe2"));
	cr_assert_null(strstr(html, "\xe2\x80\xa8"), "a raw U+2028");
	/* U+2028 as the text of its escape, which the page shows (as a terminal does). */
	cr_assert(strstr(html, "\"description\": \"map \\u003c/script\\u003e\\u003cscript\\u003ealert(1)"
	                       "\\u003c/script\\u003e \\u0026 \\u003c!-- \\\\u2028 end\""), "%s", html);
	cr_assert_eq(count(html, "</script>"), 4, "only the page's own four scripts end");

	/* One data row per field the decoder visits; exact shapes from the chain. */
	seen_t s = visit(&b, NULL, NULL);
	cr_assert_eq(s.fields, 4 + 12 + 12, "visitor: %d fields", s.fields);
	cr_assert_eq(count(html, "\n["), s.fields);
	cr_assert_eq(count(html, "{\"field\":"), s.arrays);
	cr_assert(strstr(html, "\"in\":\"[1, 4, 4, 1]\",\"out\":\"[1, 4, 4, 4]\""), "%s", html);
	cr_assert(strstr(html, "\"in\":\"[1, 4, 4, 4]\",\"out\":\"[1, 3]\""), "%s", html);
	cr_assert(strstr(html, "\"input\": \"[1, 4, 4, 1]\",\n\"inputFixed\": false"), "%s", html);
	cr_assert(strstr(html, "\"summary\":\"filters=4 padding_type=same padding_dims=[1, 1, 1, 1]\""), "%s", html);
	cr_assert(strstr(html, "\"act\":\"Leaky ReLU(tau=0.1)\""), "%s", html);
	/* Kernels 0.5 i - 1 for i < 36: min -1, max 16.5, mean 7.75; value i in bin floor(32 i / 35),
	 * the last bin closed. */
	cr_assert(strstr(html, "\"dims\":\"[4, 3, 3, 1]\",\"count\":36,\"finite\":36,\"nan\":0,\"pinf\":0,\"ninf\":0,\"zero\":1,"
	                       "\"min\":-1,\"max\":16.5,\"mean\":7.75,"), "%s", html);
	cr_assert(strstr(html, "\"bins\":[2,1,1,1,1,1,1,1,1,1,2,1,1,1,1,1,1,1,1,1,1,2,1,1,1,1,1,1,1,1,1,2]"), "%s", html);

	/* -o - writes the same page to stdout. */
	snprintf(cmd, sizeof cmd, "%s map --input-shape 1,4,4,1 %s -o - > %s.stdout && cmp -s %s %s.stdout", nnnkit_bin(), model,
	         out, out, out);
	cr_assert_eq(t_sh(NULL, 0, "%s", cmd), 0);
	/* Without -o, as graph: stdout. */
	snprintf(cmd, sizeof cmd, "%s map --input-shape 1,4,4,1 %s > %s.default && cmp -s %s %s.default", nnnkit_bin(), model,
	         out, out, out);
	cr_assert_eq(t_sh(NULL, 0, "%s", cmd), 0);
	free(html);
	bb_free(&b);
}

Test(map, invalid_model_is_mapped_up_to_the_problem, .fini = cleanup)
{
	char out[300], err[300];
	bb_t b = { 0 };
	bb_tiny(&b);
	b.b[9] = 0xff;   /* "tiny" -> "t\xffny": not UTF-8, a problem decoding goes past */
	b.n -= 3;            /* cut inside the last weights */
	const char *model = write_model(&b, "cut.nnn");
	snprintf(out, sizeof out, "%s/cut.html", dir());
	snprintf(err, sizeof err, "%s/cut.err", dir());
	cr_assert_eq(t_sh(NULL, 0, "%s map %s -o %s 2>%s", nnnkit_bin(), model, out, err), 1, "an invalid model exits 1");
	char *html = slurp(out, NULL), *msg = slurp(err, NULL);
	cr_assert_not_null(html, "the page is written all the same");
	cr_assert(strstr(msg, "layers[1].weights.data @0x8d: file ends early"), "%s", msg);
	cr_assert(strstr(msg, "description @0x9: string is not valid UTF-8"), "%s", msg);

	seen_t s = visit(&b, NULL, NULL);
	cr_assert_eq(count(html, "\n["), s.fields, "every field decoded before the cut");
	cr_assert_eq(s.fields, 4 + 12 + 9);
	cr_assert(strstr(html, "\"valid\": false"));
	cr_assert(strstr(html, "\"description\": \"t\\\\xffny\""), "%s", html); /* the byte, as info shows it */
	cr_assert(strstr(html, "\"undecoded\": [141,10]"), "%s", html);
	cr_assert(strstr(html, "{\"code\":\"E_TRUNCATED\",\"offset\":141,\"path\":\"layers[1].weights.data\""), "%s", html);
	cr_assert(strstr(html, "\"in\":\"?\",\"out\":\"?\""), "no shapes without a decoded model");
	free(html);
	free(msg);

	/* Nothing to map: no page, a clear error. */
	strcat(out, ".2");
	cr_assert_eq(t_sh(NULL, 0, "%s map /nonexistent.nnn -o %s 2>%s", nnnkit_bin(), out, err), 2);
	msg = slurp(err, NULL);
	cr_assert(strstr(msg, "nnnkit: /nonexistent.nnn: "), "%s", msg);
	cr_assert_neq(access(out, F_OK), 0, "no page for a file that cannot be read");
	free(msg);
	bb_free(&b);
}

/* A model of one Dense layer with `rows` x 1024 weights (4 KiB a row), all 0.5. */
static const char *dense_of(bb_t *b, int32_t rows, const char *name)
{
	int32_t bias[1] = { 1024 }, w[2] = { rows, 1024 };
	bb_header(b, "MiBs of weights", 1024 + (uint64_t)rows * 1024, 1);
	bb_u8(b, 0), bb_u8(b, 0), bb_f32(b, 0);
	bb_tensor(b, 1, bias), bb_i32(b, 1024), bb_tensor(b, 2, w), bb_u8(b, 0);
	return write_model(b, name);
}

/* The page carries at most 65536 values of a tensor (for its value table
 * and pictures: 256 KiB, 350 KiB as base64), so 4 MiB and 8 MiB of
 * weights give pages of the same size, under 64 KiB plus those values. */
Test(map, page_size_does_not_grow_with_tensor_bytes, .fini = cleanup)
{
	char out[300], out2[300];
	size_t n, n2;
	bb_t b = { 0 }, b2 = { 0 };
	snprintf(out, sizeof out, "%s/big.html", dir());
	snprintf(out2, sizeof out2, "%s/big2.html", dir());
	cr_assert_eq(t_sh(NULL, 0, "%s map %s -o %s", nnnkit_bin(), dense_of(&b, 1024, "big.nnn"), out), 0);
	cr_assert_eq(t_sh(NULL, 0, "%s map %s -o %s", nnnkit_bin(), dense_of(&b2, 2048, "big2.nnn"), out2), 0);
	char *html = slurp(out, &n), *html2 = slurp(out2, &n2);
	size_t values = (65536 + 1024) * 4 * 4 / 3 + 8; /* base64 of the floats carried */
	cr_assert_lt(n, 64 * 1024 + values, "%zu bytes for a %zu-byte model", n, b.n);
	cr_assert_lt(n2 > n ? n2 - n : n - n2, 256, "%zu bytes for %zu weight bytes, %zu for %zu", n, b.n, n2, b2.n);
	cr_assert(strstr(html, "\"count\":1048576,\"finite\":1048576,"), "one histogram for the whole tensor");
	cr_assert(strstr(html, "\"shown\":65536}"), "the first 65536 values carried");
	cr_assert(strstr(html, "\"shown\":1024}"), "the bias whole");
	free(html);
	free(html2);
	bb_free(&b);
	bb_free(&b2);
}

Test(graph, dot_of_the_chain, .fini = cleanup)
{
	char out[300], cmd[1024];
	bb_t b = { 0 };
	bb_tiny(&b);
	const char *model = write_model(&b, "tiny.nnn");
	snprintf(out, sizeof out, "%s/tiny.dot", dir());
	cr_assert_eq(t_sh(NULL, 0, "%s graph --input-shape 5,3 %s > %s", nnnkit_bin(), model, out), 0);
	char *dot = slurp(out, NULL);
	cr_assert_not_null(dot);
	cr_assert(!strncmp(dot, "digraph nnn {\n", 14), "%s", dot);
	cr_assert(strstr(dot, "  input [shape=oval, fillcolor=white, label=\"input\\n[5, 3]\"];\n"), "%s", dot);
	/* Each node: type, activation, own fields, tensors by name as Netron shows them, parameters, shapes. */
	cr_assert(strstr(dot, "  layer0 [label=\"#0 Dense\\nLeaky ReLU(tau=0.1)\\nneurons=2 flatten=false\\n"
	                      "bias <2>  weights <3x2>\\n8 parameters\\n[5, 3] -> [5, 2]\"];\n"), "%s", dot);
	cr_assert(strstr(dot, "  layer1 [label=\"#1 Dense\\nLinear\\nneurons=1 flatten=false\\nbias <1>  weights <2x1>\\n"
	                      "3 parameters\\n[5, 2] -> [5, 1]\"];\n"), "%s", dot);
	cr_assert(strstr(dot, "  output [shape=oval, fillcolor=white, label=\"output\\n[5, 1]\"];\n"), "%s", dot);
	cr_assert(strstr(dot, "  input -> layer0 -> layer1 -> output;\n}\n"), "%s", dot);
	cr_assert_eq(count(dot, "{"), count(dot, "}"));
	cr_assert_eq(count(dot, "\"") % 2, 0);
	if (t_sh(NULL, 0, "command -v dot >/dev/null") == 0) {
		snprintf(cmd, sizeof cmd, "dot -Tsvg %s > /dev/null", out);
		cr_assert_eq(t_sh(NULL, 0, "%s", cmd), 0, "graphviz rejects the DOT");
	} else {
		cr_log_info("graphviz is not installed: the DOT's structure was checked, not parsed by dot");
	}
	free(dot);

	/* Without an input shape, the input the layers fix with a batch of 1,
	 * as info says it (one function decides for both); an escaped description. */
	bb_free(&b);
	bb_header(&b, "say \"hi\" \\ bye", 3 * 2 + 2, 1);
	bb_dense(&b, 0, 3, 2, 0);
	model = write_model(&b, "quote.nnn");
	cr_assert_eq(t_sh(NULL, 0, "%s graph %s -o %s", nnnkit_bin(), model, out), 0);
	dot = slurp(out, NULL);
	cr_assert(strstr(dot, "label=\"say \\\"hi\\\" \\\\ bye\\n"), "%s", dot);
	cr_assert(strstr(dot, "label=\"input\\n[1, 3]\\n(the layers fix it, batch 1)\"]"), "%s", dot);
	cr_assert(strstr(dot, "[1, 3] -> [1, 2]"), "%s", dot);
	free(dot);
	char info[4096];
	cr_assert_eq(t_sh(info, sizeof info, "%s info %s", nnnkit_bin(), model), 0);
	cr_assert(strstr(info, "input [1, 3] -> output [1, 2] (the input the layers fix, with a batch of 1)"), "%s", info);
	cr_assert_eq(t_sh(NULL, 0, "%s map %s -o %s.html", nnnkit_bin(), model, out), 0);
	snprintf(cmd, sizeof cmd, "%s.html", out);
	char *page = slurp(cmd, NULL);
	cr_assert(strstr(page, "\"input\": \"[1, 3]\",\n\"inputFixed\": true"), "%s", page);
	cr_assert(strstr(page, "\"in\":\"[1, 3]\",\"out\":\"[1, 2]\""), "%s", page);
	free(page);

	/* An invalid model ends in a node naming its first problem. */
	bb_free(&b);
	bb_tiny(&b);
	b.n -= 3;
	model = write_model(&b, "cut.nnn");
	cr_assert_eq(t_sh(NULL, 0, "%s graph %s > %s 2>/dev/null", nnnkit_bin(), model, out), 1);
	dot = slurp(out, NULL);
	cr_assert(strstr(dot, "problem [shape=octagon"), "%s", dot);
	cr_assert(strstr(dot, "layers[1].weights.data @0x8d: file ends early"), "%s", dot);
	cr_assert(strstr(dot, "  input -> layer0 -> layer1 -> problem;\n"), "%s", dot);
	free(dot);
	bb_free(&b);
}

/* Memory follows the file, not the picture: map, graph and info's table of
 * 100,000 1x1 Dense layers (a 4.9 MB file; its page is 125 MB) each peak
 * under 10 times the file plus 16 MiB (about 9 times plus 3 MB measured:
 * the decoded model and 72 bytes a layer). They took 15 times that (a
 * record per field and per tensor, an nnn_io_t and 544 bytes of shapes per
 * layer, the page held whole: 723 MB and 692 MB for 200,000 layers; info
 * 314 MB: two arrays of shapes). */
Test(map, memory_follows_the_file, .fini = cleanup, .timeout = 120)
{
	int32_t n = 100000, st;
	bb_t b = { 0 };
#if T_ASAN
	cr_skip_test("ASan's shadow memory: the memory bound runs in make test");
#endif
	if (t_under_valgrind())
		cr_skip_test("valgrind: the memory bound runs in make test");
	bb_header(&b, "tiny layers", 2 * (uint64_t)n, n);
	for (int32_t i = 0; i < n; i++)
		bb_dense(&b, 0, 1, 1, 0);
	const char *model = write_model(&b, "many.nnn");
	long bound = (long)(10 * b.n / 1024) + 16 * 1024;
	static const char *const cmds[] = { "map", "graph", "map --input-shape 3,1", "graph --input-shape 3,1", "info",
		                            "info --input-shape 3,1" };
	for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
		long kib = t_peak_cmd_kib(&st, "%s %s %s >/dev/null", nnnkit_bin(), cmds[i], model);
		cr_assert_eq(st, 0, "nnnkit %s: exit %d", cmds[i], st);
		cr_log_info("nnnkit %s of %zu bytes: %ld KiB at the peak (bound %ld KiB)", cmds[i], b.n, kib, bound);
		cr_expect_lt(kib, bound, "nnnkit %s of a %zu-byte file took %ld KiB, more than 10 times the file plus 16 MiB",
		             cmds[i], b.n, kib);
	}
	bb_free(&b);
}

/* Conv (Same) -> MaxPool (the example plugin's layer ID 2, with Swish, ID 6;
 * its bias holds NaN, +inf, -inf and 2) -> Dense (flatten). */
static size_t plugin_model(bb_t *b)
{
	int32_t k[2] = { 3, 3 }, pads[4] = { 1, 1, 1, 1 }, four[1] = { 4 }, two[2] = { 2, 2 };
	bb_header(b, EVIL, 4 + 36 + 4 + 3 + 16 * 3, 3);
	bb_conv(b, 3, 4, 2, k, 1, 1, 4, pads);
	bb_u8(b, 2), bb_u8(b, 6), bb_f32(b, 1.0f), bb_f32(b, 0.0f);
	bb_i32s(b, 1, four), bb_u8(b, 0), bb_i32(b, 4);
	bb_f32(b, NAN), bb_f32(b, INFINITY), bb_f32(b, -INFINITY), bb_f32(b, 2.0f);
	bb_i32s(b, 2, two), bb_i32s(b, 2, two);
	size_t tau = b->n + 2;
	bb_dense(b, 4, 16, 3, 1);
	return tau;
}

/* Builds the example plugin against this tree (as tests/unit/test_conformance.c does). */
static const char *build_plugin(void)
{
	static char so[256];
	const char *cc = getenv("CC") ? getenv("CC") : "cc";
	const char *build = t_build_dir();
	const char *d = dir();
	cr_assert_eq(t_sh(NULL, 0, "lua5.4 gen/nnngen.lua --plugin examples/plugin-pool-swish/schema.lua --c %s/ps_gen.c "
	                "--h %s/poolswish_gen.h && %s -std=c11 -O1 -fPIC -shared -fvisibility=hidden -Iruntime/include "
	                "-I%s/gen -I%s -o %s/poolswish.so examples/plugin-pool-swish/poolswish.c %s/ps_gen.c -lm",
	                d, d, cc, build, d, d, d), 0, "building the example plugin");
	snprintf(so, sizeof so, "%s/poolswish.so", d);
	return so;
}

/* Headless Chromium: as root it needs --no-sandbox; its own profile folder,
 * so that parallel runs do not share one; a time limit. */
#define CHROMIUM "timeout 90 chromium --headless=new --disable-gpu --no-sandbox --no-first-run " \
	"--disable-extensions --disable-background-networking --user-data-dir=%s/profile"

/* Whether this run draws pages in Headless Chromium: not under ASan or
 * valgrind, where Chromium is not instrumented and drawing shows nothing
 * (`nnnkit map` runs there, and what its page holds is checked as text),
 * and was most of the map tests' time; `make test` draws them on every
 * commit. Skips the test when Chromium is missing. */
static bool draws_pages(void)
{
	if (T_ASAN || t_under_valgrind()) {
		cr_log_info("the page is not drawn under ASan or valgrind: make test draws it");
		return false;
	}
	if (t_sh(NULL, 0, "command -v chromium >/dev/null") != 0)
		cr_skip_test("chromium is not installed (apt-get install chromium, or make deps): the page was not drawn");
	return true;
}

Test(map, page_in_chromium, .fini = cleanup, .timeout = 240)
{
	char html_path[300], dom_path[300], shot[512], want[512];
	const char *build = t_build_dir();
	nnn_ctx_t *ctx;
	bb_t b = { 0 };

	const char *so = build_plugin();
	size_t tau = plugin_model(&b);
	const char *model = write_model(&b, "plugin.nnn");
	snprintf(html_path, sizeof html_path, "%s/map.html", dir());
	cr_assert_eq(t_sh(NULL, 0, "%s --plugin %s map --input-shape 1,4,4,1 %s -o %s", nnnkit_bin(), so, model, html_path), 0);

	/* What the page must draw, from this process's own decode. */
	cr_assert_eq(nnn_ctx_new(&ctx, NULL), NNN_OK);
	cr_assert_eq(nnn_plugin_load(ctx, so, NULL), NNN_OK);
	seen_t s = visit(&b, ctx, "layers[2].activation.tau");
	nnn_ctx_free(ctx);
	cr_assert_eq(s.arrays, 5, "%d fields, %d arrays", s.fields, s.arrays);
	cr_assert_geq(s.at, 0);

	char *html = slurp(html_path, NULL);
	assert_self_contained(html);
	cr_assert(strstr(html, "\"type\":\"MaxPool\",\"kernel\":\"poolswish.so\",\"act\":\"Swish(beta=1)\","
	                       "\"summary\":\"pool=[2, 2] stride=[2, 2]\",\"in\":\"[1, 4, 4, 4]\",\"out\":\"[1, 2, 2, 4]\""),
	          "%s", html);
	cr_assert(strstr(html, "\"count\":4,\"finite\":1,\"nan\":1,\"pinf\":1,\"ninf\":1,\"zero\":0,\"min\":2,\"max\":2,\"mean\":2,"
	                       "\"std\":0,\"bins\":[1,0,"), "%s", html);
	free(html);
	if (!draws_pages()) {
		bb_free(&b);
		return;
	}

	snprintf(dom_path, sizeof dom_path, "%s/dom.html", dir());
	cr_assert_eq(t_sh(NULL, 0, CHROMIUM " --dump-dom 'file://%s#selftest=%d' > %s 2>/dev/null", dir(), html_path, s.at, dom_path),
	             0, "chromium --dump-dom failed");
	char *dom = slurp(dom_path, NULL);
	cr_assert_not_null(dom);
	const char *st = strstr(dom, "selftest {\"errors\":");
	cr_assert_not_null(st, "the page's scripts did not run: %.2000s", dom);
	snprintf(want, sizeof want, "selftest {\"errors\":[],\"layers\":3,\"tensors\":%d,\"regions\":%d,\"problems\":0,",
	         s.arrays, s.fields);
	cr_assert(!strncmp(st, want, strlen(want)), "expected %s\ngot %.600s", want, st);
	snprintf(want, sizeof want, "\"tooltip\":\"layers[2].activation.tau | offset 0x%zx (%zu), size 4 bytes, f32 | "
	         "0.100000001 (0x3dcccccd) | layer #2 Dense\",", tau, tau);
	cr_assert(strstr(st, want), "expected %s\ngot %.600s", want, st);
	/* The description drawn as text; NaN and infinities flagged. */
	cr_assert(strstr(dom, "<h1 id=\"title\">map &lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt; &amp; &lt;!--"),
	          "%.3000s", dom);
	cr_assert(strstr(dom, "<td class=\"warn\">NaN 1</td><td class=\"warn\">+inf 1</td>"), "NaN and inf flagged");
	cr_assert(strstr(dom, "<div class=\"t\">#1 MaxPool <span class=\"act\">Swish(beta=1)</span></div>"),
	          "the plugin layer in the graph");
	free(dom);

	/* The screenshot, hovering the same region. */
	snprintf(shot, sizeof shot, "%s/map-screenshot.png", build);
	unlink(shot);
	cr_assert_eq(t_sh(NULL, 0, CHROMIUM " --screenshot=%s --window-size=1400,1000 'file://%s#selftest=%d' >/dev/null 2>&1", dir(),
	                shot, html_path, s.at), 0, "chromium --screenshot failed");
	size_t n;
	char *png = slurp(shot, &n);
	cr_assert_not_null(png, "no screenshot at %s", shot);
	cr_assert(n > 20000 && !memcmp(png, "\x89PNG", 4), "%s: %zu bytes", shot, n);
	free(png);
	bb_free(&b);
}

/* ---- the page at phone to desktop widths ----
 * Headless Chromium keeps its window at least 500 px wide, so each width is
 * a frame of that width in one harness page: a frame is a viewport of its
 * own (its media queries, its scrollWidth). Each frame's #selftest report
 * comes back to the harness by postMessage, URI-encoded one a line, and is
 * read here from the harness's DOM. */
static const int WIDTHS[] = { 360, 390, 768, 1280, 1920 };
#define NWIDTHS (sizeof WIDTHS / sizeof WIDTHS[0])

typedef struct frames {
	json_t *v[16];
	size_t n;
} frames_t;

static void frames_free(frames_t *f)
{
	for (size_t i = 0; i < f->n; i++)
		json_decref(f->v[i]);
	f->n = 0;
}

static int unhex(int c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Draws `html` in one frame per width (and, with zoom >= 0, again at 390 px
 * after clicking byte-map part `zoom`, and at 1280 px after that click and
 * the byte range `range` given), the byte map at `scale` ("bytes": to
 * scale; "fit": every field visible), returning each report. */
static frames_t draw_frames(const char *html, int zoom, const char *range, const char *scale)
{
	char harness[300], dom_path[300];
	frames_t f = { .n = 0 };
	snprintf(harness, sizeof harness, "%s/frames.html", dir());
	snprintf(dom_path, sizeof dom_path, "%s/frames.dom", dir());
	FILE *h = fopen(harness, "w");
	cr_assert_not_null(h);
	fputs("<!DOCTYPE html><html><body style=\"margin:0\"><pre id=\"o\"></pre><script>window.addEventListener('message',"
	      "function (e) { document.getElementById('o').textContent += encodeURIComponent(e.data) + '\\n'; });</script>\n", h);
	for (size_t i = 0; i < NWIDTHS; i++)
		fprintf(h, "<iframe src=\"file://%s#selftest&scale=%s\" style=\"display:block;border:0;width:%dpx;height:900px\">"
		        "</iframe>\n", html, scale, WIDTHS[i]);
	if (zoom >= 0)
		fprintf(h, "<iframe src=\"file://%s#selftest&zoom=%d&scale=%s\" style=\"display:block;border:0;width:390px;"
		        "height:900px\"></iframe>\n<iframe src=\"file://%s#selftest&zoom=%d&range=%s&scale=%s\" style=\"display:block;"
		        "border:0;width:1280px;height:900px\"></iframe>\n", html, zoom, scale, html, zoom, range, scale);
	fputs("</body></html>\n", h);
	cr_assert_eq(fclose(h), 0);
	cr_assert_eq(t_sh(NULL, 0, CHROMIUM " --window-size=1940,1000 --virtual-time-budget=30000 --dump-dom 'file://%s' > %s "
	                  "2>/dev/null", dir(), harness, dom_path), 0, "chromium --dump-dom failed");
	char *dom = slurp(dom_path, NULL);
	cr_assert_not_null(dom);
	char *p = strstr(dom, "<pre id=\"o\">");
	cr_assert_not_null(p, "%.2000s", dom);
	p += strlen("<pre id=\"o\">");
	for (char *line = p; *line && *line != '<'; ) {
		char *end = strchr(line, '\n');
		cr_assert_not_null(end);
		size_t k = 0;
		for (char *c = line; c < end; c++) {
			if (*c == '%' && c + 2 < end && unhex(c[1]) >= 0 && unhex(c[2]) >= 0) {
				line[k++] = (char)(unhex(c[1]) * 16 + unhex(c[2]));
				c += 2;
			} else {
				line[k++] = *c;
			}
		}
		line[k] = '\0';
		cr_assert(!strncmp(line, "selftest ", 9), "%.300s", line);
		json_error_t err;
		cr_assert_lt(f.n, sizeof f.v / sizeof f.v[0]);
		f.v[f.n] = json_loads(line + 9, 0, &err);
		cr_assert_not_null(f.v[f.n], "report %zu is not JSON (%s): %.300s", f.n, err.text, line + 9);
		f.n++;
		line = end + 1;
	}
	free(dom);
	cr_assert_eq(f.n, NWIDTHS + (zoom >= 0 ? 2 : 0), "%zu of the frames reported (a script failed to run?)", f.n);
	return f;
}

static void assert_json(const json_t *v, const char *want)
{
	char *got = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
	char *w = strdup(want), *q = w;
	for (char *c = w; *c; c++) /* compare without the spaces of `want` */
		if (*c != ' ')
			*q++ = *c;
	*q = '\0';
	cr_assert(got && !strcmp(got, w), "got %s, expected %s", got ? got : "(none)", w);
	free(got);
	free(w);
}

static double jnum(const json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	cr_assert(json_is_number(v), "no number %s", key);
	return json_number_value(v);
}

/* What every frame must show: no script error, nothing wider than the
 * viewport, and each width drawn once (unzoomed). */
static void check_widths(frames_t *f)
{
	int seen[NWIDTHS] = { 0 };
	for (size_t i = 0; i < f->n; i++) {
		json_t *r = f->v[i];
		cr_assert_eq(json_array_size(json_object_get(r, "errors")), 0, "script errors: %s",
		             json_dumps(json_object_get(r, "errors"), 0));
		double vw = jnum(r, "viewport"), cw = jnum(r, "clientWidth"), sw = jnum(r, "scrollWidth");
		cr_assert_leq(sw, cw, "at %g px the page is %g px wide (viewport without scrollbar %g): %s", vw, sw, cw,
		              json_dumps(json_object_get(r, "wide"), 0));
		cr_assert_eq(json_array_size(json_object_get(r, "wide")), 0, "at %g px these stick out: %s", vw,
		             json_dumps(json_object_get(r, "wide"), 0));
		cr_log_info("map page at %g px: document %g px wide, viewport %g px less its scrollbar", vw, sw, cw);
		json_t *view = json_object_get(json_object_get(r, "map"), "view");
		int zoomed = json_integer_value(json_array_get(view, 0)) != 0;
		for (size_t w = 0; w < NWIDTHS; w++)
			if (WIDTHS[w] == (int)vw && !zoomed)
				seen[w]++;
	}
	for (size_t w = 0; w < NWIDTHS; w++)
		cr_assert_eq(seen[w], 1, "no report of the page at %d px", WIDTHS[w]);
}

/* A byte-map band's regions, [offset, size, x, width] each in CSS pixels,
 * against the view [a, b) laid over `width` pixels: each region lies where
 * its bytes are and is as wide as they are, within a pixel. `want` (n
 * triples of offset and size) must all be among them. */
static void check_band(const json_t *map, const char *band, const uint64_t (*want)[2], size_t n)
{
	double W = jnum(map, "width");
	json_t *view = json_object_get(map, "view"), *segs = json_object_get(map, band);
	double a = json_number_value(json_array_get(view, 0)), b = json_number_value(json_array_get(view, 1));
	double s = W / (b - a);
	cr_assert_gt(W, 200, "the byte map is %g px wide", W);
	size_t i, found = 0;
	json_t *seg;
	json_array_foreach(segs, i, seg) {
		double o = json_number_value(json_array_get(seg, 0)), sz = json_number_value(json_array_get(seg, 1));
		double x = json_number_value(json_array_get(seg, 2)), w = json_number_value(json_array_get(seg, 3));
		double lo = o > a ? o : a, hi = o + sz < b ? o + sz : b;
		cr_assert(fabs(x - (lo - a) * s) <= 1.0, "%s: bytes %g+%g drawn at x %g, not %g", band, o, sz, x, (lo - a) * s);
		cr_assert(fabs(w - (hi - lo) * s) <= 1.0, "%s: bytes %g+%g drawn %g px wide, not %g", band, o, sz, w, (hi - lo) * s);
		for (size_t k = 0; k < n; k++)
			found += want[k][0] == (uint64_t)o && want[k][1] == (uint64_t)sz;
	}
	cr_assert_eq(found, n, "%s: %zu of the %zu expected regions drawn", band, found, n);
}

static const json_t *hist_named(const json_t *r, const char *prefix)
{
	size_t i;
	json_t *h;
	json_array_foreach(json_object_get(r, "hists"), i, h)
		if (!strncmp(json_string_value(json_object_get(h, "name")), prefix, strlen(prefix)))
			return h;
	cr_assert_fail("no histogram named %s...", prefix);
	return NULL;
}

/* A histogram's count axis is logarithmic: ticks 1, 10, 100, ... equally
 * spaced upwards, labelled, reaching the largest count; each bar's top at
 * the height of its count on that axis (within a pixel); a bar of one
 * value still visible. `bins` (32) are the expected counts. */
static void check_hist(const json_t *h, const uint64_t *bins)
{
	static const char *const labels[] = { "1", "10", "100", "1k", "10k", "100k", "1M", "10M" };
	json_t *ticks = json_object_get(h, "ticks"), *bars = json_object_get(h, "bars");
	size_t nt = json_array_size(ticks);
	uint64_t top = 0;
	for (int i = 0; i < 32; i++)
		top = bins[i] > top ? bins[i] : top;
	cr_assert_geq(nt, 2, "%s", json_dumps(h, 0));
	double y0 = json_number_value(json_array_get(json_array_get(ticks, 0), 2));
	double step = y0 - json_number_value(json_array_get(json_array_get(ticks, 1), 2));
	cr_assert_gt(step, 5, "a decade is %g px", step);
	for (size_t k = 0; k < nt; k++) {
		json_t *t = json_array_get(ticks, k);
		const char *lab = json_string_value(json_array_get(t, 1));
		cr_assert_eq(json_integer_value(json_array_get(t, 0)), (json_int_t)k);
		if (nt <= 6 || k % 2 == 0 || k + 1 == nt)
			cr_assert(lab && k < 8 && !strcmp(lab, labels[k]), "tick %zu labelled %s", k, lab ? lab : "(none)");
		cr_assert(fabs(json_number_value(json_array_get(t, 2)) - (y0 - (double)k * step)) <= 1.0,
		          "tick 10^%zu not on a log axis: %s", k, json_dumps(ticks, 0));
	}
	cr_assert_geq(pow(10, (double)nt - 1), (double)top, "the axis stops below the largest count %" PRIu64, top);
	cr_assert(nt == 2 || pow(10, (double)nt - 2) < (double)top, "an empty decade on top of %" PRIu64, top);
	size_t j = 0;
	for (int i = 0; i < 32; i++) {
		if (!bins[i])
			continue;
		json_t *bar = json_array_get(bars, j++);
		cr_assert_not_null(bar, "bin %d (%" PRIu64 ") not drawn", i, bins[i]);
		cr_assert_eq(json_integer_value(json_array_get(bar, 0)), (json_int_t)bins[i], "bin %d", i);
		double want = y0 - log10((double)bins[i]) * step, at = json_number_value(json_array_get(bar, 1));
		cr_assert(fabs(at - want) <= 1.0, "bin %d (%" PRIu64 "): top at %g, log axis says %g", i, bins[i], at, want);
		cr_assert_geq(json_number_value(json_array_get(bar, 2)), 3.0, "bin %d (%" PRIu64 ") is barely visible", i, bins[i]);
	}
	cr_assert_eq(j, json_array_size(bars), "bars for empty bins");
	cr_assert_geq(json_array_size(json_object_get(h, "values")), 1, "value axis labels: %s",
	              json_dumps(json_object_get(h, "values"), 0));
}

/* The page's histogram of values (the finite ones over [min, max], the last
 * bin closed), computed here. */
static void bins_of(const float *v, size_t n, uint64_t *bins)
{
	double lo = INFINITY, hi = -INFINITY;
	memset(bins, 0, 32 * sizeof *bins);
	for (size_t i = 0; i < n; i++)
		if (isfinite(v[i])) {
			lo = v[i] < lo ? v[i] : lo;
			hi = v[i] > hi ? v[i] : hi;
		}
	for (size_t i = 0; i < n; i++)
		if (isfinite(v[i])) {
			int b = hi > lo ? (int)(((double)v[i] - lo) / (hi - lo) * 32) : 0;
			bins[b < 32 ? b : 31]++;
		}
}

static void counts_text(const json_t *h, const char *want)
{
	char got[256] = "";
	size_t i;
	json_t *c;
	json_array_foreach(json_object_get(h, "counts"), i, c) {
		strcat(got, i ? " | " : "");
		strncat(got, json_string_value(c), sizeof got - strlen(got) - 8);
	}
	cr_assert_str_eq(got, want);
}

#define NW 2000
Test(map, page_fits_360_to_1920_px, .fini = cleanup, .timeout = 300)
{
	char html[300];
	static float w[NW];
	uint64_t bins[32];
	bb_t b = { 0 };
	if (t_sh(NULL, 0, "command -v chromium >/dev/null") != 0)
		cr_skip_test("chromium is not installed (apt-get install chromium, or make deps): the page was not drawn");

	/* Dense 40 -> 50 whose 2000 weights are: 1000 ones (a bin of 1000), 3 zeros (one of them -0),
	 * 2 NaN, 1 +inf, a lone -5 (a bin of 1), and 993 values spread over [2.01, 11.93]; then Dense 50 -> 3. */
	for (int i = 0; i < NW; i++)
		w[i] = i < 1000 ? 1.0f : 2.0f + 0.01f * (float)(i - 1006);
	w[1000] = 0.0f, w[1001] = -0.0f, w[1002] = 0.0f, w[1003] = NAN, w[1004] = NAN, w[1005] = INFINITY, w[1006] = -5.0f;
	bb_header(&b, "counts & <widths>", 50 + NW + 3 + 150, 2);
	size_t l0 = b.n;
	bb_dense(&b, 0, 40, 50, 0);
	size_t l1 = b.n, wdata = l1 - 1 - NW * 4;
	for (int i = 0; i < NW; i++)
		bb_put_f32(&b, wdata + 4 * (size_t)i, w[i]);
	bb_dense(&b, 0, 50, 3, 0);
	size_t end = b.n;
	const char *model = write_model(&b, "counts.nnn");
	snprintf(html, sizeof html, "%s/counts.html", dir());
	cr_assert_eq(t_sh(NULL, 0, "%s map %s -o %s", nnnkit_bin(), model, html), 0);
	char *text = slurp(html, NULL);
	cr_assert(strstr(text, "\"dims\":\"[40, 50]\",\"count\":2000,\"finite\":1997,\"nan\":2,\"pinf\":1,\"ninf\":0,"
	                       "\"zero\":3,"), "the zeros and non-finite values counted");
	free(text);
	bins_of(w, NW, bins);
	cr_assert_eq(bins[0], 1, "the lone -5 in the first bin");

	char range[64];
	snprintf(range, sizeof range, "%zu,%zu", wdata - 4, wdata + NW * 4);
	frames_t f = draw_frames(html, 1, range, "bytes");
	check_widths(&f);
	const uint64_t parts[3][2] = { { 0, l0 }, { l0, l1 - l0 }, { l1, end - l1 } };
	/* A sequence's field starts at its count (nnn_field_t). */
	const uint64_t weights[1][2] = { { wdata - 4, 4 + NW * 4 } };
	for (size_t i = 0; i < f.n; i++) {
		json_t *r = f.v[i], *map = json_object_get(r, "map");
		json_t *view = json_object_get(map, "view");
		if (json_integer_value(json_array_get(view, 0)) == 0) {
			cr_assert_eq(json_integer_value(json_array_get(view, 1)), (json_int_t)end, "the whole file in view");
			check_band(map, "parts", parts, 3);
			check_band(map, "fields", weights, 1);
		} else if (jnum(r, "viewport") < 500) {
			/* A click on layer 0 zoomed into its bytes; back shows the whole file again. */
			cr_assert_eq(json_integer_value(json_array_get(view, 0)), (json_int_t)l0);
			cr_assert_eq(json_integer_value(json_array_get(view, 1)), (json_int_t)l1);
			check_band(map, "parts", parts + 1, 1);
			check_band(map, "fields", weights, 1);
			cr_assert_eq(json_array_size(json_object_get(map, "parts")), 1, "only layer 0 in view");
			assert_json(json_object_get(r, "back"), t_fmt("[0, %zu, true]", end));
		} else {
			/* Then the weights' byte range given: they fill the width; back returns to layer 0. */
			cr_assert_eq(json_integer_value(json_array_get(view, 0)), (json_int_t)wdata - 4);
			cr_assert_eq(json_integer_value(json_array_get(view, 1)), (json_int_t)(wdata + NW * 4));
			check_band(map, "fields", weights, 1);
			cr_assert_eq(json_array_size(json_object_get(map, "fields")), 1, "only the weights in view");
			assert_json(json_object_get(r, "back"), t_fmt("[%zu, %zu, false]", l0, l1));
		}
		cr_assert_eq(jnum(r, "tensors"), 4);
		const json_t *h = hist_named(r, "weights [40, 50]");
		check_hist(h, bins);
		counts_text(h, "zeros 3 | NaN 2 | +inf 1 | \xe2\x88\x92inf 0");
	}
	frames_free(&f);
	bb_free(&b);
}

/* What the decoder sees of a real file: where the header and each layer
 * lie, and each float array's values. */
typedef struct real {
	uint64_t parts[64][2];
	size_t nparts;
	char counts[16][128];
	size_t narrays;
	float *vals[16];
	size_t nvals[16];
} real_t;

static void on_real(void *ctx, const nnn_field_t *f)
{
	real_t *r = ctx;
	int layer = -1;
	if (!strncmp(f->path, "layers[", 7))
		layer = atoi(f->path + 7);
	size_t k = (size_t)(layer + 1);
	cr_assert_lt(k, 64);
	if (k >= r->nparts) {
		r->nparts = k + 1;
		r->parts[k][0] = f->offset;
	}
	r->parts[k][1] = f->offset + f->size - r->parts[k][0];
	if (f->prim == NNN_PRIM_F32_ARRAY) {
		cr_assert_lt(r->narrays, 16, "more arrays than this test keeps");
		int64_t z = 0, nan = 0, pi = 0, ni = 0;
		float *v = malloc((size_t)f->count * sizeof *v + 1);
		cr_assert_not_null(v);
		for (int32_t i = 0; i < f->count; i++) {
			memcpy(&v[i], f->bytes + 4 * (size_t)i, 4); /* little-endian host, as the suite assumes */
			z += v[i] == 0;
			nan += isnan(v[i]);
			pi += isinf(v[i]) && v[i] > 0;
			ni += isinf(v[i]) && v[i] < 0;
		}
		snprintf(r->counts[r->narrays], sizeof r->counts[0],
		         "zeros %" PRId64 " | NaN %" PRId64 " | +inf %" PRId64 " | \xe2\x88\x92inf %" PRId64, z, nan, pi, ni);
		r->vals[r->narrays] = v;
		r->nvals[r->narrays++] = (size_t)f->count;
	}
}

Test(map, real_files_at_phone_to_desktop_widths, .fini = cleanup, .timeout = 300)
{
	static const char *const files[] = { "tictactoedemo.nnn", "2dmovedemo.nnn" };
	const char *corpus = getenv("NNN_REAL_CORPUS") ? getenv("NNN_REAL_CORPUS") : "../shared/corpus/real";
	char path[512], html[300];
	if (t_sh(NULL, 0, "command -v chromium >/dev/null") != 0)
		cr_skip_test("chromium is not installed (apt-get install chromium, or make deps): the page was not drawn");
	snprintf(path, sizeof path, "%s/%s", corpus, files[0]);
	if (access(path, R_OK) != 0)
		cr_skip_test("real corpus not found at %s: skipped (set NNN_REAL_CORPUS to run it)", path);
	for (size_t fi = 0; fi < sizeof files / sizeof files[0]; fi++) {
		size_t len;
		snprintf(path, sizeof path, "%s/%s", corpus, files[fi]);
		char *bytes = slurp(path, &len);
		cr_assert_not_null(bytes, "%s", path);
		real_t *r = calloc(1, sizeof *r);
		cr_assert_not_null(r);
		nnn_visitor_t v = { on_real, NULL, r };
		nnn_decode_opts_t o = { .flags = NNN_DECODE_KEEP_GOING, .visit = &v };
		nnn_model_t *m = NULL;
		cr_assert_eq(nnn_model_decode((const unsigned char *)bytes, len, &o, &m, NULL), NNN_OK, "%s", path);
		nnn_model_free(m);
		free(bytes);

		snprintf(html, sizeof html, "%s/real.html", dir());
		cr_assert_eq(t_sh(NULL, 0, "%s map %s -o %s", nnnkit_bin(), path, html), 0, "%s", path);
		frames_t f = draw_frames(html, -1, NULL, "bytes");
		check_widths(&f);
		for (size_t i = 0; i < f.n; i++) {
			json_t *rep = f.v[i];
			check_band(json_object_get(rep, "map"), "parts", (const uint64_t(*)[2])r->parts, r->nparts);
			cr_assert_eq(jnum(rep, "tensors"), (double)r->narrays, "%s", path);
			json_t *hs = json_object_get(rep, "hists"), *h;
			size_t k;
			cr_assert_eq(json_array_size(hs), r->narrays);
			json_array_foreach(hs, k, h) {
				uint64_t bins[32];
				counts_text(h, r->counts[k]);
				bins_of(r->vals[k], r->nvals[k], bins);
				check_hist(h, bins);
			}
		}
		cr_log_info("%s: map page drawn at 5 widths, %zu parts, %zu histograms", files[fi], r->nparts, r->narrays);
		frames_free(&f);
		for (size_t k = 0; k < r->narrays; k++)
			free(r->vals[k]);
		free(r);
	}
}

/* ---- what the map shows beyond the fields (issue 33: "thinner than Netron") ---- */

/* MNIST-shaped, as docs/example.md's model: Conv 8 5x5 over 1 channel, Conv
 * 16 5x5 over 8, Dense 6400 -> 128 (99.4 % of the file), Dense 128 -> 10. */
static void mnist_like(bb_t *b)
{
	int32_t k[2] = { 5, 5 }, pads[4] = { 0, 0, 0, 0 };
	bb_header(b, "mnist-like", 208 + 3216 + 819328 + 1290, 4);
	bb_conv(b, 3, 8, 2, k, 1, 0, 4, pads);
	bb_conv(b, 3, 16, 2, k, 8, 0, 4, pads);
	bb_dense(b, 3, 6400, 128, 1);
	bb_dense(b, 5, 128, 10, 0);
}

Test(graph, nodes_show_kernel_size_tensors_and_parameters, .fini = cleanup)
{
	char out[300];
	bb_t b = { 0 };
	mnist_like(&b);
	snprintf(out, sizeof out, "%s/mnist.dot", dir());
	cr_assert_eq(t_sh(NULL, 0, "%s graph %s -o %s", nnnkit_bin(), write_model(&b, "mnist.nnn"), out), 0);
	char *dot = slurp(out, NULL);
	cr_assert(strstr(dot, "  layer0 [label=\"#0 Conv 5x5\\nReLU\\nfilters=8 padding_type=valid padding_dims=[0, 0, 0, 0]\\n"
	                      "bias <8>  kernels <8x5x5x1>\\n208 parameters\\n[?, ?, ?, 1] -> [?, ?, ?, 8]\"];\n"), "%s", dot);
	cr_assert(strstr(dot, "#1 Conv 5x5\\n"), "%s", dot);
	cr_assert(strstr(dot, "bias <16>  kernels <16x5x5x8>\\n3216 parameters\\n"), "%s", dot);
	cr_assert(strstr(dot, "#2 Dense\\nReLU\\nneurons=128 flatten=true\\nbias <128>  weights <6400x128>\\n819328 parameters\\n"),
	          "%s", dot);
	cr_assert(strstr(dot, "bias <10>  weights <128x10>\\n1290 parameters\\n"), "%s", dot);
	free(dot);
	bb_free(&b);
}

/* The magic's text beside its number: dump's text and JSON ("text", the
 * other keys as they were), and the map's data; none for bytes that are
 * not printable. */
Test(map, magic_shows_as_text, .fini = cleanup)
{
	char out[300];
	bb_t b = { 0 };
	bb_tiny(&b);
	const char *model = write_model(&b, "tiny.nnn");
	snprintf(out, sizeof out, "%s/dump.txt", dir());
	cr_assert_eq(t_sh(NULL, 0, "%s dump %s > %s", nnnkit_bin(), model, out), 0);
	char *text = slurp(out, NULL);
	cr_assert(strstr(text, "0x00000000         4  magic                                i32                \"NNN.\" 776883790\n"),
	          "%s", text);
	free(text);
	cr_assert_eq(t_sh(NULL, 0, "%s dump --json %s > %s", nnnkit_bin(), model, out), 0);
	text = slurp(out, NULL);
	cr_assert(strstr(text, "{\"offset\": 0, \"size\": 4, \"path\": \"magic\", \"prim\": \"i32\", \"type\": null, "
	                       "\"value\": 776883790, \"text\": \"NNN.\"}"), "%s", text);
	cr_assert_eq(count(text, "\"text\""), 1, "only the magic has a text");
	free(text);
	snprintf(out, sizeof out, "%s/tiny.html", dir());
	cr_assert_eq(t_sh(NULL, 0, "%s map %s -o %s", nnnkit_bin(), model, out), 0);
	text = slurp(out, NULL);
	cr_assert(strstr(text, "\n[0,4,0,-1,\"magic\",\"776883790\",\"NNN.\"],"), "%.400s", strstr(text, "\"fields\""));
	free(text);

	b.b[0] = 0x01; /* not printable: no text, in either */
	model = write_model(&b, "bad.nnn");
	cr_assert_eq(t_sh(NULL, 0, "%s dump --json %s > %s 2>/dev/null", nnnkit_bin(), model, out), 1);
	text = slurp(out, NULL);
	cr_assert_eq(count(text, "\"text\""), 0, "%s", text);
	free(text);
	bb_free(&b);
}

/* What the map's data says of each layer, from the decoded model: the
 * window a Conv slides, its tensors (name, dims, where), its parameters;
 * and each tensor's values (all of them here) in base64. */
Test(map, layer_facts_and_values_in_the_data, .fini = cleanup)
{
	char out[300];
	bb_t b = { 0 };
	core_model(&b);
	snprintf(out, sizeof out, "%s/core.html", dir());
	cr_assert_eq(t_sh(NULL, 0, "%s map %s -o %s", nnnkit_bin(), write_model(&b, "core.nnn"), out), 0);
	char *html = slurp(out, NULL);
	/* Conv: bias dims at 0x4e+..., kernels dims where the window's sizes are (dims[1], dims[2]). */
	const char *conv = strstr(html, "\"window\":[3,3],\"windowAt\":");
	cr_assert_not_null(conv, "%s", html);
	unsigned long wat = strtoul(conv + strlen("\"window\":[3,3],\"windowAt\":"), NULL, 10);
	char want[512];
	snprintf(want, sizeof want, ",\"windowFirst\":1,\"tensors\":[{\"name\":\"bias\",\"dims\":[4],");
	cr_assert(strstr(conv, want), "%.600s", conv);
	snprintf(want, sizeof want, "{\"name\":\"kernels\",\"dims\":[4,3,3,1],\"dimsAt\":%lu,", wat);
	cr_assert(strstr(conv, want), "the window's field is the kernels' dims: %.600s", conv);
	cr_assert(strstr(conv, "\"count\":36}],\"params\":40}"), "%.600s", conv);
	cr_assert(strstr(html, "\"window\":null,\"tensors\":[{\"name\":\"bias\",\"dims\":[3],"), "the Dense layer");
	cr_assert(strstr(html, "{\"name\":\"weights\",\"dims\":[64,3],"), "%s", html);
	cr_assert(strstr(html, "\"count\":192}],\"params\":195}"), "%s", html);
	/* The kernels' 36 values 0.5 i - 1 as base64: -1, -0.5, 0 are 0xbf800000 0xbf000000 0 (little-endian). */
	cr_assert(strstr(html, "\"values\":\"AACAvwAAAL8AAAAA"), "%s", html);
	cr_assert(strstr(html, "\"shown\":36}"), "%s", html);
	free(html);
	bb_free(&b);
}

/* The page's #selftest report from a window `width` px wide (hash: what
 * follows "#selftest"), parsed; the DOM's text is HTML-escaped. */
static json_t *report_at(const char *html, int width, const char *hash)
{
	char dom_path[300];
	snprintf(dom_path, sizeof dom_path, "%s/report.dom", dir());
	cr_assert_eq(t_sh(NULL, 0, CHROMIUM " --window-size=%d,1000 --dump-dom 'file://%s#selftest%s' > %s 2>/dev/null", dir(), width,
	                  html, hash, dom_path), 0, "chromium --dump-dom failed");
	char *dom = slurp(dom_path, NULL), *p = strstr(dom, "selftest {\"errors\""), *q;
	cr_assert_not_null(p, "the page's scripts did not run: %.2000s", dom);
	p += 9;
	cr_assert_not_null(q = strstr(p, "</pre>"));
	*q = '\0';
	static const char *const ent[][2] = { { "&lt;", "<" }, { "&gt;", ">" }, { "&quot;", "\"" }, { "&amp;", "&" } };
	size_t k = 0;
	for (char *c = p; *c; c++) {
		size_t e = 0;
		while (e < 4 && strncmp(c, ent[e][0], strlen(ent[e][0])))
			e++;
		p[k++] = e < 4 ? ent[e][1][0] : *c;
		if (e < 4)
			c += strlen(ent[e][0]) - 1;
	}
	p[k] = '\0';
	json_error_t err;
	json_t *r = json_loads(p, 0, &err);
	cr_assert_not_null(r, "not JSON (%s): %.300s", err.text, p);
	cr_assert_eq(json_array_size(json_object_get(r, "errors")), 0, "script errors: %s", json_dumps(json_object_get(r, "errors"), 0));
	free(dom);
	return r;
}

static const char *jstr_at(const json_t *a, size_t i)
{
	const char *s = json_string_value(json_array_get(a, i));
	cr_assert_not_null(s, "no text %zu in %s", i, json_dumps(a, JSON_ENCODE_ANY));
	return s;
}

/* One node's lines and the tables, pictures and region list, checked. */
static void check_points(const json_t *r, const real_t *v, int width)
{
	json_t *n0 = json_array_get(json_object_get(r, "nodes"), 0), *n2 = json_array_get(json_object_get(r, "nodes"), 2);
	cr_assert_str_eq(jstr_at(n0, 0), "#0 Conv 5\xc3\x97" "5 ReLU");
	cr_assert_str_eq(jstr_at(n0, 2), "bias <8>  kernels <8\xc3\x97" "5\xc3\x97" "5\xc3\x97" "1>");
	cr_assert_str_eq(jstr_at(n0, 3), "208 parameters");
	cr_assert_str_eq(jstr_at(n2, 2), "bias <128>  weights <6400\xc3\x97" "128>");
	cr_assert_str_eq(jstr_at(n2, 3), "819328 parameters");
	/* Value tables: 16 a page, the next page after a click; the big weights carry 65536 values. */
	json_t *tabs = json_object_get(r, "tables"), *k0 = json_array_get(tabs, 1), *w2 = json_array_get(tabs, 5);
	cr_assert_eq(json_array_size(tabs), 8);
	cr_assert_eq(json_integer_value(json_object_get(k0, "rows")), 16);
	cr_assert_str_eq(json_string_value(json_object_get(k0, "info")), "values 0\xe2\x80\x93" "15, page 1 of 13");
	cr_assert_str_eq(json_string_value(json_object_get(k0, "next")), "16");
	json_t *last = json_object_get(k0, "last");
	cr_assert_str_eq(jstr_at(last, 1), "[0, 3, 0, 0]", "row 15 of [8, 5, 5, 1]");
	char want[64];
	snprintf(want, sizeof want, "%.9g", (double)v->vals[1][15]);
	cr_assert_str_eq(jstr_at(last, 2), want);
	cr_assert_str_eq(json_string_value(json_object_get(w2, "info")), "values 0\xe2\x80\x93" "15, page 1 of 4096");
	/* Filters: 8 x 1 and 16 x 8 pictures of 5x5, grey from the tensor's min to its max. */
	json_t *fs = json_object_get(r, "filters"), *f0 = json_array_get(fs, 0);
	cr_assert_eq(json_array_size(fs), 2);
	cr_assert_eq(json_integer_value(json_object_get(f0, "canvases")), 8);
	cr_assert_eq(json_integer_value(json_object_get(json_array_get(fs, 1), "canvases")), 128);
	assert_json(json_object_get(f0, "size"), "[5, 5]");
	float lo = INFINITY, hi = -INFINITY;
	for (size_t i = 0; i < v->nvals[1]; i++)
		lo = v->vals[1][i] < lo ? v->vals[1][i] : lo, hi = v->vals[1][i] > hi ? v->vals[1][i] : hi;
	json_t *grey = json_object_get(f0, "grey");
	cr_assert_eq(json_array_size(grey), 25);
	for (size_t i = 0; i < 25; i++) /* filter 0, channel 0: values 0..24 (one channel) */
		cr_assert_leq(fabs((double)json_integer_value(json_array_get(grey, i)) - (v->vals[1][i] - lo) / (hi - lo) * 255), 1.0,
		              "pixel %zu", i);
	/* The byte map fitted: every field at least 4 px wide; the header and each layer listed. */
	json_t *map = json_object_get(r, "map"), *seg;
	size_t i;
	cr_assert_str_eq(json_string_value(json_object_get(r, "scale")), "fit");
	json_array_foreach(json_object_get(map, "fields"), i, seg)
		cr_assert_geq(json_number_value(json_array_get(seg, 3)), 4.0, "at %d px field %zu is %g px wide", width, i,
		              json_number_value(json_array_get(seg, 3)));
	cr_assert_eq(json_array_size(json_object_get(map, "fields")), 50);
	json_t *rl = json_object_get(r, "regionList");
	cr_assert_eq(json_array_size(rl), 5);
	cr_assert(strstr(jstr_at(rl, 0), "header \xc2\xb7 0x0 \xc2\xb7 30 B"), "%s", jstr_at(rl, 0));
	cr_assert(strstr(jstr_at(rl, 3), "#2 Dense") && strstr(jstr_at(rl, 3), "(99.4 %)"), "%s", jstr_at(rl, 3));
	cr_assert_str_eq(json_string_value(json_object_get(r, "magic")), "\"NNN.\" 776883790");
	/* The graph stays in view with the page scrolled to its last layer. */
	cr_assert_gt(jnum(r, "scrolled"), 500);
	cr_assert(fabs(jnum(r, "graphTop") - 8) <= 1, "the graph's top at %g px", jnum(r, "graphTop"));
}

Test(map, netron_points_in_chromium_at_1280_and_1920, .fini = cleanup, .timeout = 300)
{
	static const int widths[] = { 1280, 1920 };
	char html[300], shot[512];
	bb_t b = { 0 };
	mnist_like(&b);
	const char *model = write_model(&b, "mnist.nnn");
	real_t *v = calloc(1, sizeof *v);
	cr_assert_not_null(v);
	nnn_visitor_t vis = { on_real, NULL, v };
	nnn_decode_opts_t o = { .flags = NNN_DECODE_KEEP_GOING, .visit = &vis };
	nnn_model_t *m = NULL;
	cr_assert_eq(nnn_model_decode(b.b, b.n, &o, &m, NULL), NNN_OK);
	nnn_model_free(m);
	snprintf(html, sizeof html, "%s/mnist.html", dir());
	cr_assert_eq(t_sh(NULL, 0, "%s map %s -o %s", nnnkit_bin(), model, html), 0);
	char *text = slurp(html, NULL);
	assert_self_contained(text);
	free(text);
	bool draw = draws_pages();
	for (size_t w = 0; w < 2 && draw; w++) {
		/* A search by value (layer 0's kernel 7), by offset (in its kernels' data) and by path. */
		char q[64];
		snprintf(q, sizeof q, "&search=%.9g", (double)v->vals[1][7]);
		json_t *r = report_at(html, widths[w], q);
		check_points(r, v, widths[w]);
		json_t *s = json_object_get(r, "search");
		cr_assert_geq(json_array_size(s), 1);
		size_t hit = 0;
		for (size_t k = 0; k < json_array_size(s); k++)
			hit += !strcmp(jstr_at(s, k), t_fmt("layers[0].kernels.data[7] [0, 1, 2, 0] = %.9g", (double)v->vals[1][7]));
		cr_assert_eq(hit, 1, "%s", json_dumps(s, 0));
		assert_json(json_array_get(json_object_get(r, "searchHit"), 0), "\"7\"");
		json_decref(r);
		r = report_at(html, widths[w], "&search=0x7a");
		s = json_object_get(r, "search");
		cr_assert_str_eq(jstr_at(s, 0), "offset 0x7a (122): layers[0].kernels.data, bytes 0x6a+804");
		/* Its data start at 0x6e (after the count): 0x7a is value 3. */
		cr_assert_str_eq(jstr_at(s, 1), t_fmt("offset 0x7a: layers[0].kernels.data[3] [0, 0, 3, 0] = %.9g", (double)v->vals[1][3]));
		/* Fitted, the field is wide enough where it is: no zoom. */
		assert_json(json_object_get(r, "searchView"), t_fmt("[0, %zu]", b.n));
		json_decref(r);
		r = report_at(html, widths[w], "&search=KERNELS.dims");
		s = json_object_get(r, "search");
		cr_assert_eq(json_array_size(s), 2, "%s", json_dumps(s, 0));
		cr_assert_str_eq(jstr_at(s, 1), "layers[1].kernels.dims = 4: [16, 5, 5, 8]");
		json_decref(r);
		snprintf(shot, sizeof shot, "%s/map-%d.png", t_build_dir(), widths[w]);
		unlink(shot);
		cr_assert_eq(t_sh(NULL, 0, CHROMIUM " --screenshot=%s --window-size=%d,1100 'file://%s' >/dev/null 2>&1", dir(), shot,
		                  widths[w], html), 0, "chromium --screenshot failed");
		size_t n;
		char *png = slurp(shot, &n);
		cr_assert(png && n > 20000 && !memcmp(png, "\x89PNG", 4), "%s", shot);
		cr_log_info("the map of an MNIST-shaped model at %d px: %s", widths[w], shot);
		free(png);
		/* At the wider width, for a reader: the whole page in one tall window (tables and filter
		 * pictures), then a search's result. */
		if (w == 0)
			continue;
		snprintf(shot, sizeof shot, "%s/map-%d-full.png", t_build_dir(), widths[w]);
		cr_assert_eq(t_sh(NULL, 0, CHROMIUM " --screenshot=%s --window-size=%d,3600 'file://%s' >/dev/null 2>&1", dir(), shot,
		                  widths[w], html), 0, "chromium --screenshot failed");
		snprintf(shot, sizeof shot, "%s/map-%d-search.png", t_build_dir(), widths[w]);
		cr_assert_eq(t_sh(NULL, 0, CHROMIUM " --screenshot=%s --window-size=%d,1100 'file://%s#selftest&search=0x7a' >/dev/null 2>&1",
		                  dir(), shot, widths[w], html), 0, "chromium --screenshot failed");
	}
	for (size_t k = 0; k < v->narrays; k++)
		free(v->vals[k]);
	free(v);
	bb_free(&b);
}
