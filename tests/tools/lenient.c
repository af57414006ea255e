/* lenient: a deliberately lenient .nnn reader for the conformance tests.
 * It is libnnn with one check switched off: a file whose only problems are
 * dims that do not multiply to the data count (NNN_E_DIM_MISMATCH) or a
 * header's parameter count that disagrees with the tensors
 * (NNN_E_PARAM_COUNT) is accepted. A conformance run must catch it.
 *   lenient FILE       exit 0 accepts, 1 rejects (nnnkit conformance --decoder)
 *   lenient --testee   the testee protocol of docs/conformance.md on stdin
 *                      and stdout: decode and validate forgive those two
 *                      codes; encode and run are libnnn's
 * It links libnnn.a and its public headers only (and jansson): a testee
 * as another implementer would write one. */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include <nnn/context.h>
#include <nnn/esc.h>
#include <nnn/file.h>
#include <nnn/npy.h>
#include <nnn/run.h>
#include <nnn/validate.h>

/* Whether every problem is one this reader forgives (and there is one). */
static bool forgiven(const nnn_diags_t *d)
{
	bool all = d->n > 0;
	for (size_t i = 0; i < d->n; i++)
		all &= d->v[i].code == NNN_E_DIM_MISMATCH || d->v[i].code == NNN_E_PARAM_COUNT;
	return all;
}

/* ---- the exit-code mode ---- */

static int decoder(const char *file)
{
	nnn_file_t *f = NULL;
	nnn_diags_t d;
	nnn_diags_init(&d);
	nnn_status_t st = nnn_file_map(file, &f, &d);
	bool accept = st == NNN_OK && (nnn_file_validate(f, NULL, NULL, &d) == NNN_OK || forgiven(&d));
	nnn_file_close(f);
	nnn_diags_free(&d);
	return accept ? 0 : 1;
}

/* ---- the testee ---- */

/* A JSON string of s: bytes that are not UTF-8 become U+FFFD, as nnnkit's
 * JSON output writes them. */
static json_t *text(const char *s)
{
	size_t n = strlen(s), k = 0;
	char *u = malloc(3 * n + 1);
	for (size_t i = 0; u && i < n;) {
		size_t len = nnn_utf8_seq((const unsigned char *)s + i, n - i);
		if (len) {
			memcpy(u + k, s + i, len);
			k += len, i += len;
		} else {
			memcpy(u + k, "\xef\xbf\xbd", 3);
			k += 3, i++;
		}
	}
	json_t *j = u ? json_stringn(u, k) : NULL;
	free(u);
	return j;
}

static json_t *problem(const nnn_diag_t *e)
{
	return json_pack("{s:s, s:o, s:o, s:o}", "code", nnn_status_name(e->code), "path", text(e->path), "offset",
	                 e->offset == NNN_NO_OFFSET ? json_null() : json_integer((json_int_t)e->offset), "message",
	                 text(e->msg));
}

/* An op's answer on a file: ok, or the first problem and every problem. */
static json_t *verdict(nnn_status_t st, const nnn_diags_t *d, bool lenient)
{
	if (st == NNN_OK || (lenient && forgiven(d)))
		return json_pack("{s:b}", "ok", 1);
	nnn_diag_t none = { .code = st, .offset = NNN_NO_OFFSET };
	snprintf(none.msg, sizeof none.msg, "%s", nnn_status_str(st));
	json_t *a = problem(d->n ? &d->v[0] : &none), *all = json_array();
	for (size_t i = 0; i < d->n; i++)
		json_array_append_new(all, problem(&d->v[i]));
	json_object_set_new(a, "ok", json_false());
	json_object_set_new(a, "problems", all);
	return a;
}

static json_t *usage(const char *fmt, ...) NNN_PRINTF(1, 2);
static json_t *usage(const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return json_pack("{s:b, s:s, s:n, s:n, s:s}", "ok", 0, "code", "E_USAGE", "path", "offset", "message", msg);
}

/* The path in the request's field `name`; NULL with *err the answer. */
static const char *path(json_t *req, const char *name, json_t **err)
{
	const char *s = json_string_value(json_object_get(req, name));
	if (*err)
		return NULL;
	if (!s || !*s || !strcmp(s, "-"))
		*err = usage("%s: missing or not a path; send \"%s\": an absolute path", name, name);
	return *err ? NULL : s;
}

static json_t *op_decode(const nnn_ctx_t *ctx, json_t *req)
{
	json_t *err = NULL;
	const char *file = path(req, "file", &err);
	nnn_decode_opts_t o = { .ctx = ctx };
	nnn_file_t *f = NULL;
	nnn_diags_t d;
	if (err)
		return err;
	nnn_diags_init(&d);
	json_t *a = verdict(nnn_file_open(file, &o, &f, &d), &d, true);
	nnn_file_close(f);
	nnn_diags_free(&d);
	return a;
}

static json_t *op_validate(const nnn_ctx_t *ctx, json_t *req)
{
	json_t *err = NULL, *v = json_object_get(req, "input_shape"), *x;
	const char *file = path(req, "file", &err);
	nnn_shape_t in = { .rank = (int32_t)json_array_size(v) };
	nnn_file_t *f = NULL;
	nnn_diags_t d;
	size_t i;
	if (err)
		return err;
	if (v && !json_is_null(v) && (in.rank < 1 || in.rank > NNN_MAX_RANK))
		return usage("input_shape: expected null or an array of whole numbers, batch first");
	json_array_foreach(v, i, x)
		if ((in.dims[i] = json_integer_value(x)) < 1)
			return usage("input_shape: expected whole numbers from 1");
	nnn_diags_init(&d);
	nnn_status_t st = nnn_file_map(file, &f, &d);
	if (st == NNN_OK)
		st = nnn_file_validate(f, ctx, in.rank ? &in : NULL, &d);
	json_t *a = verdict(st, &d, true);
	nnn_file_close(f);
	nnn_diags_free(&d);
	return a;
}

static json_t *op_encode(const nnn_ctx_t *ctx, json_t *req)
{
	json_t *err = NULL;
	const char *file = path(req, "file", &err), *out = path(req, "output", &err);
	nnn_decode_opts_t o = { .ctx = ctx, .flags = NNN_DECODE_COPY };
	nnn_file_t *f = NULL;
	unsigned char *buf = NULL;
	size_t n = 0;
	nnn_diags_t d;
	if (err)
		return err;
	nnn_diags_init(&d);
	nnn_status_t st = nnn_file_open(file, &o, &f, &d);
	if (st == NNN_OK)
		st = nnn_model_encode(nnn_file_model(f), &buf, &n, &d);
	if (st == NNN_OK)
		st = nnn_write_atomic_bytes(out, buf, n, &d);
	json_t *a = verdict(st, &d, false);
	free(buf);
	nnn_file_close(f);
	nnn_diags_free(&d);
	return a;
}

/* The model run on every sample of `in` at once, into `out`. */
static nnn_status_t run(const nnn_ctx_t *ctx, const nnn_file_t *f, const char *in, const char *out, nnn_diags_t *d)
{
	nnn_run_opts_t o = { .size = sizeof o, .threads = 1 };
	nnn_npy_view_t x = { 0 };
	nnn_plan_t *p = NULL;
	float *y = NULL;
	const nnn_model_t *m = nnn_file_model(f);
	nnn_status_t st = nnn_npy_map(in, &x, d);
	if (st == NNN_OK)
		st = nnn_plan_new(ctx, m, &x.shape, &o, &p, d);
	const nnn_shape_t *s = st == NNN_OK ? nnn_plan_shape(p, m->layer_count - 1) : NULL;
	if (s && !(y = malloc((size_t)nnn_shape_numel(s) * sizeof *y + 1)))
		st = nnn_diags_add(d, NNN_E_NOMEM, NNN_NO_OFFSET, "", "no memory for the outputs");
	if (st == NNN_OK)
		st = nnn_plan_run(p, x.data, y, d);
	if (st == NNN_OK)
		st = nnn_npy_write_file(out, s, y, d);
	free(y);
	nnn_plan_free(p);
	nnn_npy_unmap(&x);
	return st;
}

static json_t *op_run(const nnn_ctx_t *ctx, json_t *req)
{
	json_t *err = NULL;
	const char *file = path(req, "file", &err), *in = path(req, "input", &err), *out = path(req, "output", &err);
	nnn_decode_opts_t o = { .ctx = ctx };
	nnn_file_t *f = NULL;
	nnn_diags_t d;
	if (err)
		return err;
	nnn_diags_init(&d);
	nnn_status_t st = nnn_file_open(file, &o, &f, &d);
	if (st == NNN_OK)
		st = run(ctx, f, in, out, &d);
	json_t *a = verdict(st, &d, false);
	nnn_file_close(f);
	nnn_diags_free(&d);
	return a;
}

static json_t *op_hello(const nnn_ctx_t *ctx, json_t *req)
{
	json_t *p = json_object_get(req, "protocol");
	(void)ctx;
	if (p && json_integer_value(p) != 1)
		return usage("protocol: this testee speaks protocol 1");
	return json_pack("{s:b, s:s, s:s, s:i, s:[ssss]}", "ok", 1, "name", "lenient", "version", nnn_version(),
	                 "protocol", 1, "ops", "decode", "validate", "encode", "run");
}

/* One request line's answer, "id" first. */
static json_t *serve(const nnn_ctx_t *ctx, const char *line, size_t n)
{
	static const struct {
		const char *name;
		json_t *(*fn)(const nnn_ctx_t *ctx, json_t *req);
	} ops[] = { { "hello", op_hello }, { "decode", op_decode }, { "validate", op_validate },
		    { "encode", op_encode }, { "run", op_run } };
	json_t *req = json_loadb(line, n, 0, NULL), *id = json_object_get(req, "id"), *a = NULL;
	const char *op = json_string_value(json_object_get(req, "op"));
	json_t *ans = json_pack("{s:O}", "id", json_is_integer(id) ? id : json_null());
	for (size_t k = 0; op && json_is_integer(id) && !a && k < sizeof ops / sizeof ops[0]; k++)
		if (!strcmp(op, ops[k].name))
			a = ops[k].fn(ctx, req);
	if (!a && op && json_is_integer(id)) {
		a = usage("op: unknown; send one of hello, decode, validate, encode, run");
		json_object_set_new(a, "unsupported", json_true());
	}
	if (!a)
		a = !json_is_object(req) ? usage("not a JSON object: send one a line")
		    : !json_is_integer(id) ? usage("id: missing or not an integer; send \"id\": an integer")
		                           : usage("op: missing; send one of hello, decode, validate, encode, run");
	json_object_update(ans, a);
	json_decref(a);
	json_decref(req);
	return ans;
}

static nnn_ctx_t *context(void)
{
	char dir[4096];
	nnn_ctx_t *ctx = NULL;
	nnn_diags_t d;
	ssize_t n = readlink("/proc/self/exe", dir, sizeof dir - 16);
	nnn_diags_init(&d);
	/* The kernels: the plugins built beside this program, as nnnkit finds them. */
	if (n > 0 && (dir[n] = '\0', strrchr(dir, '/')))
		strcpy(strrchr(dir, '/'), "/plugins");
	nnn_discover_opts_t o = { .size = sizeof o, .search = true, .installed_dir = n > 0 ? dir : NULL };
	if (nnn_ctx_new(&ctx, &d) == NNN_OK && nnn_plugin_discover(ctx, &o, &d) != NNN_OK)
		for (size_t i = 0; i < d.n; i++)
			fprintf(stderr, "lenient: %s: %s\n", d.v[i].path, d.v[i].msg);
	nnn_diags_free(&d);
	return ctx;
}

static int testee(void)
{
	nnn_ctx_t *ctx = context();
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int code = ctx ? 0 : 2;
	while (code == 0 && (n = getline(&line, &cap, stdin)) > 0) {
		if (strspn(line, " \t\r\n") == (size_t)n)
			continue;
		json_t *a = serve(ctx, line, (size_t)n);
		if (!a || json_dumpf(a, stdout, JSON_COMPACT) != 0 || putchar('\n') == EOF || fflush(stdout) != 0)
			code = 2;
		json_decref(a);
	}
	free(line);
	nnn_ctx_free(ctx);
	return code;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "--testee"))
		return testee();
	return argc == 2 ? decoder(argv[1]) : 2;
}
