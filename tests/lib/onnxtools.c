/* onnxtools.c: see onnxtools.h. Every tool runs through the shell (t_sh),
 * its paths single-quoted. */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctx.h"
#include "onnxtools.h"
#include "shell.h"

#define PYTHON "/usr/bin/python3"
#define TOOLS "tests/tools"

/* s single-quoted for sh into out; false when it does not fit. */
static bool sq(const char *s, char *out, size_t n)
{
	size_t k = 0;
	if (n < 3)
		return false;
	out[k++] = '\'';
	for (; *s; s++) {
		const char *piece = *s == '\'' ? "'\\''" : NULL;
		size_t len = piece ? 4 : 1;
		if (k + len + 2 > n)
			return false;
		if (piece)
			memcpy(out + k, piece, len);
		else
			out[k] = *s;
		k += len;
	}
	out[k++] = '\'';
	out[k] = '\0';
	return true;
}

static void say(char *buf, size_t n, const char *fmt, ...) NNN_PRINTF(3, 4);
static void say(char *buf, size_t n, const char *fmt, ...)
{
	va_list ap;
	if (!buf || !n)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, n, fmt, ap);
	va_end(ap);
}

/* The last non-empty line of text, into out (for a one-line why). */
static void last_line(const char *text, char *out, size_t n)
{
	const char *end = text + strlen(text);
	while (end > text && (end[-1] == '\n' || end[-1] == '\r' || end[-1] == ' '))
		end--;
	const char *start = end;
	while (start > text && start[-1] != '\n')
		start--;
	snprintf(out, n, "%.*s", (int)(end - start), start);
}

/* The tool script, found from the current folder. */
static bool tool(const char *name, char *path, size_t n, char *why, size_t wn)
{
	snprintf(path, n, TOOLS "/%s", name);
	if (access(path, R_OK) == 0)
		return true;
	char cwd[512];
	say(why, wn, "%s not found from %s: run the tests from the project root (make test does)", path,
	    getcwd(cwd, sizeof cwd) ? cwd : "the current folder");
	return false;
}

/* "<build>/ort/node_modules", absolute (NODE_PATH is read from any folder). */
static void node_path(char *out, size_t n)
{
	const char *b = t_build_dir();
	char cwd[512];
	if (b[0] == '/' || !getcwd(cwd, sizeof cwd))
		snprintf(out, n, "%s/ort/node_modules", b);
	else
		snprintf(out, n, "%s/%s/ort/node_modules", cwd, b);
}

bool ort_ready(char *why, size_t n)
{
	char script[256], modules[1024], marker[1200], text[2048], line[1024], q[1200];
	FILE *f;
	if (!tool("ort_run.js", script, sizeof script, why, n))
		return false;
	if (t_sh(NULL, 0, "command -v node") != 0) {
		say(why, n, "ONNX Runtime not installed: node not found on PATH (scripts/deps.sh installs nodejs)");
		return false;
	}
	snprintf(marker, sizeof marker, "%s/ort/missing", t_build_dir());
	if ((f = fopen(marker, "r")) != NULL) {
		size_t got = fread(text, 1, sizeof text - 1, f);
		fclose(f);
		text[got] = '\0';
		last_line(text, line, sizeof line);
		say(why, n, "ONNX Runtime not installed: %s", line);
		return false;
	}
	node_path(modules, sizeof modules);
	snprintf(marker, sizeof marker, "%s/onnxruntime-node/package.json", modules);
	if (access(marker, R_OK) != 0) {
		say(why, n, "ONNX Runtime not installed: no %s (make installs it into %s/ort: tests/ort/install.sh)", marker,
		    t_build_dir());
		return false;
	}
	if (!sq(modules, q, sizeof q)) {
		say(why, n, "ONNX Runtime: path too long: %s", modules);
		return false;
	}
	int st = t_sh(text, sizeof text, "NODE_PATH=%s node %s --version", q, script);
	if (st != 0) {
		last_line(text, line, sizeof line);
		say(why, n, "ONNX Runtime not installed: onnxruntime-node in %s does not load (status %d): %s", modules, st,
		    line);
		return false;
	}
	return true;
}

int ort_run(const char *model, const char *in_npy, const char *out_npy, int threads, char *err, size_t n)
{
	char script[256], modules[1024], qm[1200], qa[1200], qb[1200], qc[1200];
	if (!tool("ort_run.js", script, sizeof script, err, n))
		return -1;
	node_path(modules, sizeof modules);
	if (!sq(modules, qm, sizeof qm) || !sq(model, qa, sizeof qa) || !sq(in_npy, qb, sizeof qb) ||
	    !sq(out_npy, qc, sizeof qc)) {
		say(err, n, "ort_run: a path is too long");
		return -1;
	}
	return t_sh(err, n, "NODE_PATH=%s node %s %s %s %s %d", qm, script, qa, qb, qc, threads);
}

/* /usr/bin/python3 importing `modules`; else why, naming the packages. */
static bool python_has(const char *modules, const char *packages, char *why, size_t n)
{
	char text[2048], line[1024];
	if (access(PYTHON, X_OK) != 0) {
		say(why, n, "%s not found (apt-get install python3 %s; scripts/deps.sh installs them)", PYTHON, packages);
		return false;
	}
	int st = t_sh(text, sizeof text, PYTHON " -c 'import %s'", modules);
	if (st != 0) {
		last_line(text, line, sizeof line);
		say(why, n, "%s cannot import %s: %s (apt-get install %s; scripts/deps.sh installs them)", PYTHON, modules,
		    line, packages);
		return false;
	}
	return true;
}

bool onnx_checker_ready(char *why, size_t n)
{
	char script[256];
	return tool("onnx_check.py", script, sizeof script, why, n) && python_has("onnx", "python3-onnx", why, n);
}

int onnx_check(const char *model, char *out, size_t n)
{
	char script[256], q[1200];
	if (!tool("onnx_check.py", script, sizeof script, out, n))
		return -1;
	if (!sq(model, q, sizeof q)) {
		say(out, n, "onnx_check: path too long: %s", model);
		return -1;
	}
	return t_sh(out, n, PYTHON " %s %s", script, q);
}

bool torch_ready(char *why, size_t n)
{
	char script[256];
	return tool("torch_export.py", script, sizeof script, why, n) &&
	       python_has("torch, onnx, numpy", "python3-torch python3-onnx python3-numpy", why, n);
}

int onnx_refusal_graphs(const char *outdir, char *out, size_t n)
{
	char script[256], q[1200];
	if (!tool("onnx_refusals.py", script, sizeof script, out, n))
		return -1;
	if (!sq(outdir, q, sizeof q)) {
		say(out, n, "onnx_refusals: path too long: %s", outdir);
		return -1;
	}
	return t_sh(out, n, PYTHON " %s %s", script, q);
}

int torch_export_cases(const char *outdir, const char *nets, char *out, size_t n)
{
	char script[256], q[1200];
	if (!tool("torch_export.py", script, sizeof script, out, n))
		return -1;
	if (!sq(outdir, q, sizeof q)) {
		say(out, n, "torch_export: path too long: %s", outdir);
		return -1;
	}
	/* The net names are plain words: no quoting needed, and none allowed. */
	for (const char *p = nets ? nets : ""; *p; p++)
		if (!(*p == ' ' || *p == '_' || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9'))) {
			say(out, n, "torch_export: net names are [a-z0-9_] words: '%s'", nets);
			return -1;
		}
	return t_sh(out, n, PYTHON " %s %s %s", script, q, nets ? nets : "");
}
