/* test_map.c: `nnnkit map` and `nnnkit graph`. The page is checked twice:
 * as text (self-contained, safely escaped, the numbers the C side computes)
 * and as a browser draws it, in headless Chromium, where its #selftest hook
 * reports what it drew (one graph node per layer, one histogram per tensor,
 * one byte-map region per field, the tooltip of a hovered region) and any
 * script error. Expected counts come from the decoder's visitor in this
 * process, offsets from the builder. The screenshot is kept as
 * $NNN_BUILD/map-screenshot.png. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nnn/context.h>
#include <nnn/model.h>

#include "builder.h"
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

static const char *kit(void)
{
	return getenv("NNNKIT") ? getenv("NNNKIT") : "build/nnnkit";
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
	cr_assert_eq(t_sh(NULL, 0, "%s map --input-shape 1,4,4,1 %s -o %s", kit(), model, out), 0);
	char *html = slurp(out, NULL);
	cr_assert_not_null(html);
	assert_self_contained(html);

	/* The description is in the data, escaped: it cannot end or bend the script. */
	cr_assert_null(strstr(html, "<script>alert"));
	cr_assert_null(strstr(html, "<!-- \xe2"));
	cr_assert_null(strstr(html, "\xe2\x80\xa8"), "a raw U+2028");
	cr_assert(strstr(html, "\"description\": \"map \\u003c/script\\u003e\\u003cscript\\u003ealert(1)"
	                       "\\u003c/script\\u003e \\u0026 \\u003c!-- \\u2028 end\""), "%s", html);
	cr_assert_eq(count(html, "</script>"), 4, "only the page's own four scripts end");

	/* One data row per field the decoder visits; exact shapes from the chain. */
	seen_t s = visit(&b, NULL, NULL);
	cr_assert_eq(s.fields, 4 + 12 + 12, "visitor: %d fields", s.fields);
	cr_assert_eq(count(html, "\n["), s.fields);
	cr_assert_eq(count(html, "{\"field\":"), s.arrays);
	cr_assert(strstr(html, "\"in\":\"[1, 4, 4, 1]\",\"out\":\"[1, 4, 4, 4]\""), "%s", html);
	cr_assert(strstr(html, "\"in\":\"[1, 4, 4, 4]\",\"out\":\"[1, 3]\""), "%s", html);
	cr_assert(strstr(html, "\"summary\":\"filters=4 padding_type=same padding_dims=[1, 1, 1, 1]\""), "%s", html);
	cr_assert(strstr(html, "\"act\":\"Leaky ReLU(tau=0.1)\""), "%s", html);
	/* Kernels 0.5 i - 1 for i < 36: min -1, max 16.5, mean 7.75; value i in bin floor(32 i / 35),
	 * the last bin closed. */
	cr_assert(strstr(html, "\"dims\":\"[4, 3, 3, 1]\",\"count\":36,\"finite\":36,\"nan\":0,\"pinf\":0,\"ninf\":0,"
	                       "\"min\":-1,\"max\":16.5,\"mean\":7.75,"), "%s", html);
	cr_assert(strstr(html, "\"bins\":[2,1,1,1,1,1,1,1,1,1,2,1,1,1,1,1,1,1,1,1,1,2,1,1,1,1,1,1,1,1,1,2]"), "%s", html);

	/* -o - writes the same page to stdout. */
	snprintf(cmd, sizeof cmd, "%s map --input-shape 1,4,4,1 %s -o - > %s.stdout && cmp -s %s %s.stdout", kit(), model,
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
	cr_assert_eq(t_sh(NULL, 0, "%s map %s -o %s 2>%s", kit(), model, out, err), 1, "an invalid model exits 1");
	char *html = slurp(out, NULL), *msg = slurp(err, NULL);
	cr_assert_not_null(html, "the page is written all the same");
	cr_assert(strstr(msg, "layers[1].weights.data @0x8d: file ends early"), "%s", msg);
	cr_assert(strstr(msg, "description @0x9: string is not valid UTF-8"), "%s", msg);

	seen_t s = visit(&b, NULL, NULL);
	cr_assert_eq(count(html, "\n["), s.fields, "every field decoded before the cut");
	cr_assert_eq(s.fields, 4 + 12 + 9);
	cr_assert(strstr(html, "\"valid\": false"));
	cr_assert(strstr(html, "\"description\": \"t\\ufffdny\""), "%s", html);
	cr_assert(strstr(html, "\"undecoded\": [141,10]"), "%s", html);
	cr_assert(strstr(html, "{\"code\":\"E_TRUNCATED\",\"offset\":141,\"path\":\"layers[1].weights.data\""), "%s", html);
	cr_assert(strstr(html, "\"in\":\"?\",\"out\":\"?\""), "no shapes without a decoded model");
	free(html);
	free(msg);

	/* Nothing to map: no page, a clear error. */
	strcat(out, ".2");
	cr_assert_eq(t_sh(NULL, 0, "%s map /nonexistent.nnn -o %s 2>%s", kit(), out, err), 2);
	msg = slurp(err, NULL);
	cr_assert(strstr(msg, "nnnkit: /nonexistent.nnn: "), "%s", msg);
	cr_assert_neq(access(out, F_OK), 0, "no page for a file that cannot be read");
	free(msg);
	cr_assert_eq(t_sh(NULL, 0, "%s map %s 2>%s", kit(), model, err), 2, "-o is required");
	msg = slurp(err, NULL);
	cr_assert(strstr(msg, "nnnkit map: no --output given\nsee 'nnnkit map --help'"), "%s", msg);
	free(msg);
	bb_free(&b);
}

Test(map, page_size_does_not_grow_with_tensor_bytes, .fini = cleanup)
{
	char out[300];
	size_t n;
	int32_t bias[1] = { 1024 }, w[2] = { 1024, 1024 };
	bb_t b = { 0 };
	bb_header(&b, "4 MiB of weights", 1024 + 1024 * 1024, 1);
	bb_u8(&b, 0), bb_u8(&b, 0), bb_f32(&b, 0);
	bb_tensor(&b, 1, bias), bb_i32(&b, 1024), bb_tensor(&b, 2, w), bb_u8(&b, 0);
	snprintf(out, sizeof out, "%s/big.html", dir());
	cr_assert_eq(t_sh(NULL, 0, "%s map %s -o %s", kit(), write_model(&b, "big.nnn"), out), 0);
	char *html = slurp(out, &n);
	cr_assert_lt(n, 64 * 1024, "%zu bytes for a %zu-byte model", n, b.n);
	cr_assert(strstr(html, "\"count\":1048576,\"finite\":1048576,"), "one histogram for the whole tensor");
	free(html);
	bb_free(&b);
}

Test(graph, dot_of_the_chain, .fini = cleanup)
{
	char out[300], cmd[1024];
	bb_t b = { 0 };
	bb_tiny(&b);
	const char *model = write_model(&b, "tiny.nnn");
	snprintf(out, sizeof out, "%s/tiny.dot", dir());
	cr_assert_eq(t_sh(NULL, 0, "%s graph --input-shape 5,3 %s > %s", kit(), model, out), 0);
	char *dot = slurp(out, NULL);
	cr_assert_not_null(dot);
	cr_assert(!strncmp(dot, "digraph nnn {\n", 14), "%s", dot);
	cr_assert(strstr(dot, "  input [shape=oval, fillcolor=white, label=\"input\\n[5, 3]\"];\n"), "%s", dot);
	cr_assert(strstr(dot, "  layer0 [label=\"#0 Dense\\nLeaky ReLU(tau=0.1)\\nneurons=2 flatten=false\\n"
	                      "[5, 3] -> [5, 2]\"];\n"), "%s", dot);
	cr_assert(strstr(dot, "  layer1 [label=\"#1 Dense\\nLinear\\nneurons=1 flatten=false\\n[5, 2] -> [5, 1]\"];\n"),
	          "%s", dot);
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

	/* Without an input shape, the last axis each layer fixes; an escaped description. */
	bb_free(&b);
	bb_header(&b, "say \"hi\" \\ bye", 3 * 2 + 2, 1);
	bb_dense(&b, 0, 3, 2, 0);
	model = write_model(&b, "quote.nnn");
	cr_assert_eq(t_sh(NULL, 0, "%s graph %s -o %s", kit(), model, out), 0);
	dot = slurp(out, NULL);
	cr_assert(strstr(dot, "label=\"say \\\"hi\\\" \\\\ bye\\n"), "%s", dot);
	cr_assert(strstr(dot, "[?, ..., 3] -> [?, ..., 2]"), "%s", dot);
	free(dot);

	/* An invalid model ends in a node naming its first problem. */
	bb_free(&b);
	bb_tiny(&b);
	b.n -= 3;
	model = write_model(&b, "cut.nnn");
	cr_assert_eq(t_sh(NULL, 0, "%s graph %s > %s 2>/dev/null", kit(), model, out), 1);
	dot = slurp(out, NULL);
	cr_assert(strstr(dot, "problem [shape=octagon"), "%s", dot);
	cr_assert(strstr(dot, "layers[1].weights.data @0x8d: file ends early"), "%s", dot);
	cr_assert(strstr(dot, "  input -> layer0 -> layer1 -> problem;\n"), "%s", dot);
	free(dot);
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

/* Builds the example plugin against this tree (as tests/test_conformance.c does). */
static const char *build_plugin(void)
{
	static char so[256];
	const char *cc = getenv("CC") ? getenv("CC") : "cc";
	const char *build = getenv("NNN_BUILD") ? getenv("NNN_BUILD") : "build";
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

Test(map, page_in_chromium, .fini = cleanup, .timeout = 240)
{
	char html_path[300], dom_path[300], shot[512], want[512];
	const char *build = getenv("NNN_BUILD") ? getenv("NNN_BUILD") : "build";
	nnn_ctx_t *ctx;
	bb_t b = { 0 };

	if (getenv("NNN_UNDER_VALGRIND"))
		cr_skip_test("runs Chromium and compiles a plugin: run by make test and make test-asan, not under valgrind");
	if (t_sh(NULL, 0, "command -v chromium >/dev/null") != 0)
		cr_skip_test("chromium is not installed (apt-get install chromium, or make deps): the page was not drawn");

	const char *so = build_plugin();
	size_t tau = plugin_model(&b);
	const char *model = write_model(&b, "plugin.nnn");
	snprintf(html_path, sizeof html_path, "%s/map.html", dir());
	cr_assert_eq(t_sh(NULL, 0, "%s --plugin %s map --input-shape 1,4,4,1 %s -o %s", kit(), so, model, html_path), 0);

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
	cr_assert(strstr(html, "\"count\":4,\"finite\":1,\"nan\":1,\"pinf\":1,\"ninf\":1,\"min\":2,\"max\":2,\"mean\":2,"
	                       "\"std\":0,\"bins\":[1,0,"), "%s", html);
	free(html);

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
	         "0.100000001 (0x3dcccccd) | layer #2 Dense\"}", tau, tau);
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
