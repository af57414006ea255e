/* build.c: `nnnkit build SPEC.json OUT.nnn`: a model from a short JSON
 * description and .npy tensors, validated before it is written. */
#include <stdlib.h>
#include <string.h>

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

static int run(int argc, char **argv, cli_env_t *env);

const cli_cmd_t cmd_build = {
	"build", "assemble a model from a JSON spec and .npy tensors, validated",
	"usage: nnnkit build [--input-shape 1,4] SPEC.json OUT.nnn\n"
	"Reads SPEC, the JSON form (docs/json.md) with friendly defaults: any field but a tensor may be\n"
	"left out (numbers 0, booleans false, strings \"\", enums their first value); the parameter\n"
	"count is computed; a tensor may be the name of its .npy file (relative to SPEC's folder),\n"
	"whose shape gives its dims; a Dense layer's neurons (and the like) come from its tensor; an\n"
	"activation may be its name. For example:\n"
	"  {\"description\": \"2-16-3 classifier\", \"layers\": [\n"
	"    {\"id\": \"dense\", \"activation\": \"relu\", \"weights\": \"w1.npy\", \"bias\": \"b1.npy\"},\n"
	"    {\"id\": \"dense\", \"activation\": \"softmax\", \"weights\": \"w2.npy\", \"bias\": \"b2.npy\"}]}\n"
	"The model is validated (every rule; with --input-shape, every layer's shape too) and OUT is\n"
	"written atomically only when it is valid: on any problem OUT is left as it was. Problems name\n"
	"SPEC's line and column.\n",
	run,
};

/* Spec -> model -> bytes, validated as a file (the offsets are OUT's). */
static nnn_status_t assemble(cli_env_t *env, const char *spec, const char *text, size_t len,
                             const nnn_shape_t *input, unsigned char **buf, size_t *n, nnn_diags_t *d)
{
	char dir[4096];
	const char *slash = strrchr(spec, '/');
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

static int run(int argc, char **argv, cli_env_t *env)
{
	const char *files[2] = { NULL, NULL };
	int nfiles = 0, code;
	nnn_shape_t shape, *input = NULL;
	nnn_diags_t d;

	nnn_diags_init(&d);
	for (int i = 1; i < argc; i++) {
		if (cli_is_help(argv[i])) {
			fputs(cmd_build.help, stdout);
			return EXIT_VALID;
		} else if (!strcmp(argv[i], "--input-shape") && i + 1 < argc) {
			if (nnn_shape_parse(argv[++i], &shape, &d) != NNN_OK) {
				code = cli_usage(&cmd_build, "%s", d.v[0].msg);
				nnn_diags_free(&d);
				return code;
			}
			input = &shape;
		} else if (!strcmp(argv[i], "--input-shape")) {
			return cli_usage(&cmd_build, "--input-shape needs a shape, such as 1,4");
		} else if (argv[i][0] == '-' && argv[i][1]) {
			return cli_usage(&cmd_build, "unknown option %s", argv[i]);
		} else if (nfiles == 2) {
			return cli_usage(&cmd_build, "expected SPEC.json and OUT.nnn");
		} else {
			files[nfiles++] = argv[i];
		}
	}
	if (nfiles != 2)
		return cli_usage(&cmd_build, "expected SPEC.json and OUT.nnn");

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
	code = cli_report(blame, &d, st);
	if (st == NNN_OK)
		printf("%s: %zu bytes, valid\n", files[1], n);
	free(buf);
	nnn_diags_free(&d);
	return code;
}
