/* build.c: `nnnkit build SPEC.json OUT.nnn`: a model from a short JSON
 * description and .npy tensors, validated before it is written. */
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include <nnn/json.h>

#include "cli.h"

/* The spec's text, read with checked reads (nnn_file_read): a spec cut
 * short while it is read is an error, never SIGBUS. */
static nnn_status_t read_text(const char *path, char **text, size_t *len, nnn_diags_t *d)
{
	nnn_file_t *f;
	nnn_status_t st = nnn_file_map(path, &f, d);
	if (st != NNN_OK)
		return st;
	nnn_file_bytes(f, len);
	if (!(*text = malloc(*len ? *len : 1)))
		st = nnn_diags_add(d, NNN_E_NOMEM, NNN_NO_OFFSET, "", "cannot allocate %zu bytes for the spec", *len);
	else
		st = nnn_file_read(f, 0, *text, *len, d);
	nnn_file_close(f);
	return st;
}

static int run(const cli_args_t *a, cli_env_t *env);

static const cli_opt_t build_opts[] = {
	{ "output", 'o', CLI_OUT, CLI_DASH | CLI_BINARY, "OUT.nnn", .help = "the model (or give OUT.nnn after SPEC.json)" },
	{ NULL },
};
static const cli_pos_t build_pos[] = {
	{ "SPEC.json", CLI_IN, CLI_DASH,
	  .help = "the spec (from stdin, its tensor files are relative to the current folder)" },
	{ "OUT.nnn", CLI_OUT, CLI_DASH | CLI_BINARY, "the model, written only when valid", .option = "output" },
	{ NULL },
};

const cli_cmd_t cmd_build = {
	.name = "build",
	.summary = "assemble a model from a JSON spec and .npy tensors, validated",
	.main = run,
	.opts = CLI_OPTS(build_opts, cli_opts_input_shape, cli_opts_force),
	.pos = build_pos,
	.exits = CLI_EXITS_MODEL,
	.help = "usage: nnnkit build [--input-shape 1,4] SPEC.json [-o] OUT.nnn\n"
	"Reads SPEC, the JSON form (docs/json.md) with friendly defaults: any field but a tensor may be\n"
	"left out (numbers 0, booleans false, strings \"\", enums their first value); the parameter\n"
	"count is computed; a tensor may be the name of its .npy file (relative to SPEC's folder),\n"
	"whose shape gives its dims; a Dense layer's neurons (and the like) come from its tensor, a\n"
	"Conv's padding_dims from its padding_type and kernel sizes; an activation may be its name.\n"
	"For example:\n"
	"  {\"description\": \"2-16-3 classifier\", \"layers\": [\n"
	"    {\"id\": \"dense\", \"activation\": \"relu\", \"weights\": \"w1.npy\", \"bias\": \"b1.npy\"},\n"
	"    {\"id\": \"dense\", \"activation\": \"softmax\", \"weights\": \"w2.npy\", \"bias\": \"b2.npy\"}]}\n"
	"The model is validated (every rule; with --input-shape, every layer's shape too) and OUT is\n"
	"written atomically only when it is valid: on any problem OUT is left as it was. Problems name\n"
	"SPEC's line and column.\n",
};

/* Spec -> model -> bytes, validated as a file (the offsets are OUT's). */
static nnn_status_t assemble(cli_env_t *env, const char *spec, const char *text, size_t len,
                             const nnn_shape_t *input, unsigned char **buf, size_t *n, nnn_diags_t *d)
{
	char dir[4096];
	const char *slash = strrchr(spec, '/');
	if (strcmp(cli_name(spec), spec)) /* stdin: tensors relative to the current folder */
		slash = NULL;
	snprintf(dir, sizeof dir, "%.*s", slash ? (slash == spec ? 1 : (int)(slash - spec)) : 1, slash ? spec : ".");
	nnn_json_read_opts_t o = { .flags = NNN_JSON_SPEC, .ctx = cli_ctx(env), .base_dir = dir };
	nnn_model_t *m;
	nnn_status_t st = nnn_json_decode(text, len, &o, &m, d);
	if (st != NNN_OK)
		return st;
	st = nnn_model_encode(m, buf, n, d);
	nnn_model_free(m);
	if (st != NNN_OK)
		return st;
	size_t before = d->n;
	st = nnn_validate_bytes(*buf, *n, o.ctx, input, d);
	nnn_json_locate(text, len, d, before);
	return st;
}

static int run(const cli_args_t *a, cli_env_t *env)
{
	const char *files[2] = { cli_arg(a, "SPEC.json"), cli_arg(a, "OUT.nnn") };
	const nnn_shape_t *input = cli_shape(a, "input-shape");
	int code;
	nnn_diags_t d;
	if (!files[1])
		return cli_usage(env, &cmd_build, "no OUT.nnn given (or --output)");
	nnn_diags_init(&d);
	char *text = NULL;
	size_t len = 0;
	unsigned char *buf = NULL;
	size_t n = 0;
	const char *blame = files[0];
	nnn_status_t st = read_text(files[0], &text, &len, &d);
	if (st == NNN_OK)
		st = assemble(env, files[0], text, len, input, &buf, &n, &d);
	free(text);
	if (st == NNN_OK) {
		blame = files[1];
		st = nnn_write_atomic_bytes(files[1], buf, n, &d);
	}
	code = cli_report(env, cli_out_name(blame), &d, st);
	if (st == NNN_OK)
		cli_say(strcmp(files[1], "-") ? stdout : stderr, "%s: %zu bytes, valid\n",
		        cli_out_name(files[1]), n);
	free(buf);
	nnn_diags_free(&d);
	return code;
}
