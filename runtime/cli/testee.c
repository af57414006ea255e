/* testee.c: `nnnkit testee`: libnnn behind the conformance kit's testee
 * protocol (docs/conformance.md, "The testee protocol"): one JSON request a
 * line on stdin, one JSON answer a line on stdout, in order, flushed. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include <nnn/context.h>

#include "cli.h"

#define TESTEE_PROTOCOL 1

static int testee(const cli_args_t *a, cli_env_t *env);

const cli_cmd_t cmd_testee = {
	.name = "testee",
	.summary = "speak the conformance kit's testee protocol with libnnn (JSON lines)",
	.main = testee,
	.opts = CLI_OPTS(cli_opts_run),
	.exits = CLI_EXIT(0) | CLI_EXIT(2) | CLI_EXIT(3),
	.exit_what = { [0] = "stdin ended: every request was answered",
		       [2] = "stdin could not be read or stdout written (said on stderr)" },
	.help = "usage: nnnkit testee [--batch N] [--threads N] [--max-tensor-bytes N] [--conv-compat original|spec]\n"
	"Speaks the testee protocol of the conformance kit (docs/conformance.md) with libnnn, for a runner\n"
	"(nnn_conformance.py run --testee 'nnnkit testee'): reads one JSON request a line on stdin and\n"
	"answers each with one JSON object on one line on stdout, flushed, until stdin ends. The ops:\n"
	"hello; decode (the strict decoder: the file's first problem); validate (every rule, and the\n"
	"shapes with the request's input_shape: every problem); encode (the model read, written to\n"
	"`output` atomically, as convert writes it); run (a float32 .npy `input` through the model in\n"
	"batches, as run does, with the options above; the outputs written to `output` as .npy). A\n"
	"request that cannot be read (not JSON, no id, an unknown op, a field missing) is answered with\n"
	"ok false, code E_USAGE and a message saying what to send, and the next is read. Nothing else\n"
	"goes to stdout; diagnostics, of plugins too, go to stderr.\n",
};

/* The session: the answers' stream (the real stdout: file descriptor 1
 * points at stderr meanwhile, so that nothing else, a plugin's printf say,
 * can put a line between two answers). */
typedef struct session {
	cli_env_t *env;
	const nnn_ctx_t *ctx;
	cli_run_args_t run;
	FILE *out;
} session_t;

/* A request read: its object, and its id when it had one. */
typedef struct req {
	json_t *j;
	json_int_t id;
	int has_id;
} req_t;

/* ---- answers ---- */

static void put_str(FILE *f, const char *s)
{
	if (s)
		cli_json_str(f, s, strlen(s)); /* as validate --json writes text */
	else
		fputs("null", f);
}

static void put_head(const session_t *t, const req_t *r, int ok)
{
	if (r->has_id)
		fprintf(t->out, "{\"id\": %" JSON_INTEGER_FORMAT ", \"ok\": %s", r->id, ok ? "true" : "false");
	else
		fprintf(t->out, "{\"id\": null, \"ok\": %s", ok ? "true" : "false");
}

/* "code", "path", "offset", "message" of one problem. */
static void put_problem(FILE *f, const nnn_diag_t *e)
{
	fprintf(f, "\"code\": \"%s\", \"path\": ", nnn_status_name(e->code));
	put_str(f, e->path);
	if (e->offset != NNN_NO_OFFSET)
		fprintf(f, ", \"offset\": %" PRIu64 ", \"message\": ", e->offset);
	else
		fputs(", \"offset\": null, \"message\": ", f);
	put_str(f, e->msg);
}

static void answer_ok(const session_t *t, const req_t *r)
{
	put_head(t, r, 1);
	fputs("}\n", t->out);
}

/* A request that cannot be served as sent: E_USAGE, no path, no offset;
 * `unsupported` for an op this testee does not offer. */
static void answer_usage(const session_t *t, const req_t *r, int unsupported, const char *fmt, ...)
	NNN_PRINTF(4, 5);
static void answer_usage(const session_t *t, const req_t *r, int unsupported, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	put_head(t, r, 0);
	fputs(unsupported ? ", \"unsupported\": true" : "", t->out);
	fputs(", \"code\": \"E_USAGE\", \"path\": null, \"offset\": null, \"message\": ", t->out);
	put_str(t->out, msg);
	fputs("}\n", t->out);
}

/* The verdict of an op on a file: ok, or its first problem at the top and
 * every problem in "problems", as libnnn gave them. */
static void answer(const session_t *t, const req_t *r, nnn_status_t st, const nnn_diags_t *d)
{
	if (st == NNN_OK) {
		answer_ok(t, r);
		return;
	}
	nnn_diag_t none = { .code = st, .offset = NNN_NO_OFFSET };
	snprintf(none.msg, sizeof none.msg, "%s", nnn_status_str(st));
	put_head(t, r, 0);
	fputs(", ", t->out);
	put_problem(t->out, d->n ? &d->v[0] : &none);
	fputs(", \"problems\": [", t->out);
	for (size_t i = 0; i < d->n; i++) {
		fputs(i ? ", {" : "{", t->out);
		put_problem(t->out, &d->v[i]);
		fputc('}', t->out);
	}
	fputs("]}\n", t->out);
}

/* ---- request fields ---- */

/* The path in field `name`, or NULL after answering why not: `what` says
 * what the file is. */
static const char *path_field(const session_t *t, const req_t *r, const char *name, const char *what)
{
	json_t *v = json_object_get(r->j, name);
	const char *s = json_string_value(v);
	if (!v)
		answer_usage(t, r, 0, "%s: missing; send \"%s\": the absolute path of %s", name, name, what);
	else if (!s || !*s)
		answer_usage(t, r, 0, "%s: not a path; send \"%s\": the absolute path of %s, as a string", name, name,
		             what);
	else if (!strcmp(s, "-")) /* stdin and stdout carry the protocol */
		answer_usage(t, r, 0, "%s: '-' cannot work here (stdin and stdout carry the requests and answers); send "
		             "the absolute path of %s", name, what);
	else
		return s;
	return NULL;
}

/* validate's optional input_shape into *in (have: whether given), or false
 * after answering why it cannot be used. */
static int shape_field(const session_t *t, const req_t *r, nnn_shape_t *in, int *have)
{
	json_t *v = json_object_get(r->j, "input_shape"), *x;
	size_t i;
	*have = v && !json_is_null(v);
	if (!*have)
		return 1;
	int good = json_is_array(v) && json_array_size(v) >= 1 && json_array_size(v) <= NNN_MAX_RANK;
	json_array_foreach(v, i, x) {
		good &= json_is_integer(x) && json_integer_value(x) >= 1 && json_integer_value(x) <= INT32_MAX;
		if (good)
			in->dims[i] = json_integer_value(x);
	}
	if (!good) {
		answer_usage(t, r, 0, "input_shape: expected null or an array of 1 to %d whole numbers from 1 to %d, "
		             "batch first, such as [1, 28, 28, 1]", NNN_MAX_RANK, INT32_MAX);
		return 0;
	}
	in->rank = (int32_t)json_array_size(v);
	return 1;
}

/* ---- the ops ---- */

static void op_hello(const session_t *t, const req_t *r)
{
	json_t *p = json_object_get(r->j, "protocol");
	if (p && !(json_is_integer(p) && json_integer_value(p) == TESTEE_PROTOCOL)) {
		answer_usage(t, r, 0, "protocol: this testee speaks protocol %d; send \"protocol\": %d", TESTEE_PROTOCOL,
		             TESTEE_PROTOCOL);
		return;
	}
	put_head(t, r, 1);
	fputs(", \"name\": \"libnnn\", \"version\": ", t->out);
	put_str(t->out, nnn_version());
	fprintf(t->out, ", \"protocol\": %d, \"ops\": [\"decode\", \"validate\", \"encode\", \"run\"]}\n",
	        TESTEE_PROTOCOL);
}

static void op_decode(const session_t *t, const req_t *r)
{
	const char *file = path_field(t, r, "file", "the .nnn file to decode");
	nnn_decode_opts_t o = { .ctx = t->ctx };
	nnn_file_t *f = NULL;
	nnn_diags_t d;
	if (!file)
		return;
	nnn_diags_init(&d);
	answer(t, r, nnn_file_open(file, &o, &f, &d), &d);
	nnn_file_close(f);
	nnn_diags_free(&d);
}

static void op_validate(const session_t *t, const req_t *r)
{
	const char *file = path_field(t, r, "file", "the .nnn file to validate");
	nnn_shape_t in = { 0 };
	nnn_file_t *f = NULL;
	nnn_diags_t d;
	int have;
	if (!file || !shape_field(t, r, &in, &have))
		return;
	nnn_diags_init(&d);
	/* As nnnkit validate checks a .nnn file: mapped, read with pread. */
	nnn_status_t st = nnn_file_map(file, &f, &d);
	if (st == NNN_OK)
		st = nnn_file_validate(f, t->ctx, have ? &in : NULL, &d);
	answer(t, r, st, &d);
	nnn_file_close(f);
	nnn_diags_free(&d);
}

static void op_encode(const session_t *t, const req_t *r)
{
	const char *file = path_field(t, r, "file", "the .nnn file to re-encode");
	const char *out = file ? path_field(t, r, "output", "the .nnn file to write") : NULL;
	/* As convert reads a model it re-encodes: a copy read with checked reads. */
	nnn_decode_opts_t o = { .ctx = t->ctx, .flags = NNN_DECODE_COPY };
	nnn_file_t *f = NULL;
	unsigned char *buf = NULL;
	size_t n = 0;
	nnn_diags_t d;
	if (!out)
		return;
	nnn_diags_init(&d);
	nnn_status_t st = nnn_file_open(file, &o, &f, &d);
	if (st == NNN_OK)
		st = nnn_model_encode(nnn_file_model(f), &buf, &n, &d);
	if (st == NNN_OK)
		st = nnn_write_atomic_bytes(out, buf, n, &d);
	answer(t, r, st, &d);
	free(buf);
	nnn_file_close(f);
	nnn_diags_free(&d);
}

/* The model at f run on the samples of the .npy `input`, the outputs
 * written to `output`. */
static nnn_status_t run_file(const session_t *t, const nnn_file_t *f, const char *input, const char *output,
                             nnn_diags_t *d)
{
	nnn_npy_view_t x = { 0 };
	nnn_shape_t shape = { 0 };
	float *y = NULL;
	char buf[256];
	nnn_status_t st = nnn_npy_map(input, &x, d);
	if (st == NNN_OK && (x.shape.rank < 1 || x.shape.dims[0] < 1))
		st = nnn_diags_add(d, NNN_E_INPUT_SHAPE, NNN_NO_OFFSET, "",
		                   "%s: shape %s: no samples; expected an array [samples, ...] with at least one", input,
		                   nnn_shape_format(&x.shape, buf, sizeof buf));
	if (st == NNN_OK)
		st = cli_run_all(t->ctx, nnn_file_model(f), &x.shape, x.data, &t->run, 0, &y, &shape, d);
	if (st == NNN_OK)
		st = nnn_npy_write_file(output, &shape, y, d);
	free(y);
	nnn_npy_unmap(&x);
	return st;
}

static void op_run(const session_t *t, const req_t *r)
{
	const char *file = path_field(t, r, "file", "the .nnn model to run");
	const char *input = file ? path_field(t, r, "input", "the float32 .npy input, samples first") : NULL;
	const char *output = input ? path_field(t, r, "output", "the .npy file to write the outputs to") : NULL;
	nnn_decode_opts_t o = { .ctx = t->ctx };
	nnn_file_t *f = NULL;
	nnn_diags_t d;
	if (!output)
		return;
	nnn_diags_init(&d);
	nnn_status_t st = nnn_file_open(file, &o, &f, &d);
	if (st == NNN_OK)
		st = run_file(t, f, input, output, &d);
	answer(t, r, st, &d);
	nnn_file_close(f);
	nnn_diags_free(&d);
}

static const struct op {
	const char *name;
	void (*serve)(const session_t *t, const req_t *r);
} ops[] = {
	{ "hello", op_hello }, { "decode", op_decode }, { "validate", op_validate },
	{ "encode", op_encode }, { "run", op_run },
};

/* ---- the session ---- */

/* One line: parsed, checked, served, answered. */
static void serve_line(const session_t *t, const char *line, size_t n)
{
	json_error_t e;
	req_t r = { .j = json_loadb(line, n, JSON_REJECT_DUPLICATES, &e) };
	json_t *id = json_object_get(r.j, "id");
	const char *op = json_string_value(json_object_get(r.j, "op"));
	if (json_is_integer(id))
		r.id = json_integer_value(id), r.has_id = 1;
	if (!r.j)
		answer_usage(t, &r, 0, "not JSON (%s, at character %d): send one JSON object a line, such as "
		             "{\"id\": 1, \"op\": \"hello\", \"protocol\": 1}", e.text, e.position);
	else if (!json_is_object(r.j))
		answer_usage(t, &r, 0, "not a JSON object: send one object a line, with \"id\" and \"op\"");
	else if (!r.has_id)
		answer_usage(t, &r, 0, "id: %s; send \"id\": an integer, which the answer repeats",
		             id ? "not an integer" : "missing");
	else if (!op)
		answer_usage(t, &r, 0, "op: %s; send \"op\": one of hello, decode, validate, encode, run",
		             json_object_get(r.j, "op") ? "not a string" : "missing");
	else {
		size_t k = 0;
		while (k < sizeof ops / sizeof ops[0] && strcmp(ops[k].name, op))
			k++;
		if (k < sizeof ops / sizeof ops[0])
			ops[k].serve(t, &r);
		else
			answer_usage(t, &r, 1, "op: unknown op '%.64s'; send one of hello, decode, validate, encode, run", op);
	}
	json_decref(r.j);
}

static int blank(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strchr(" \t\r\n", s[i]))
			return 0;
	return 1;
}

/* Requests until stdin ends. A blank line is no request: not answered. */
static int serve(const session_t *t)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int code = EXIT_VALID;
	while (code == EXIT_VALID && (n = getline(&line, &cap, stdin)) > 0) {
		if (blank(line, (size_t)n))
			continue;
		serve_line(t, line, (size_t)n);
		if (fflush(t->out) != 0)
			code = cli_fail_text(t->env, "stdout", EXIT_USAGE, "cannot write the answer: %s", strerror(errno));
	}
	if (code == EXIT_VALID && ferror(stdin))
		code = cli_fail_text(t->env, "stdin", EXIT_USAGE, "cannot read the requests: %s", strerror(errno));
	free(line);
	return code;
}

static int testee(const cli_args_t *a, cli_env_t *env)
{
	session_t t = { .env = env, .ctx = cli_ctx(env) };
	cli_run_args(a, &t.run);
	/* The answers keep the real stdout; whatever else writes to file
	 * descriptor 1 from now on reaches stderr. */
	fflush(stdout);
	int fd = dup(STDOUT_FILENO);
	if (fd < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0 || !(t.out = fdopen(fd, "w"))) {
		if (fd >= 0)
			close(fd);
		return cli_fail_text(env, "stdout", EXIT_USAGE, "cannot keep it for the answers: %s", strerror(errno));
	}
	int code = serve(&t);
	if (fclose(t.out) != 0 && code == EXIT_VALID)
		code = cli_fail_text(env, "stdout", EXIT_USAGE, "cannot write the answers: %s", strerror(errno));
	return code;
}
