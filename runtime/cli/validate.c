/* validate.c: `nnnkit validate MODEL`: every problem, one per line. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static int run(int argc, char **argv, cli_env_t *env);

const cli_cmd_t cmd_validate = {
	"validate", "check a model against every rule of the format",
	"usage: nnnkit validate [--input-shape 1,28,28,1] [--json] MODEL\n"
	"Checks the structure and every semantic rule, reporting every problem on its own line.\n"
	"With --input-shape, infers each layer's output shape and checks the whole chain exactly.\n"
	"  --json   one JSON object on stdout instead of text\n"
	"Exit: 0 valid, 1 invalid, 2 usage or system error.\n",
	run,
};

/* Output shapes of a valid model, for the report. */
static nnn_shape_t *infer(const nnn_ctx_t *ctx, const unsigned char *data, size_t size, const nnn_shape_t *in,
                          int32_t *n)
{
	nnn_model_t *m;
	nnn_shape_t *out = NULL;
	*n = 0;
	nnn_decode_opts_t opts = { .ctx = ctx };
	if (nnn_model_decode(data, size, &opts, &m, NULL) != NNN_OK)
		return NULL;
	if (m->layer_count > 0 && (out = calloc((size_t)m->layer_count, sizeof *out)) != NULL &&
	    nnn_model_validate(m, in, out, NULL) == NNN_OK)
		*n = m->layer_count;
	nnn_model_free(m);
	return out;
}

static void print_json(const char *path, const nnn_diags_t *d, nnn_status_t st, const nnn_shape_t *shapes,
                       int32_t n)
{
	char buf[256];
	printf("{\"file\": ");
	cli_json_str(stdout, path, strlen(path));
	printf(", \"valid\": %s, \"problems\": [", st == NNN_OK ? "true" : "false");
	for (size_t i = 0; i < d->n; i++) {
		const nnn_diag_t *e = &d->v[i];
		printf("%s\n  {\"code\": \"%s\", \"number\": %d, \"path\": ", i ? "," : "", nnn_status_name(e->code),
		       (int)e->code);
		cli_json_str(stdout, e->path, strlen(e->path));
		if (e->offset != NNN_NO_OFFSET)
			printf(", \"offset\": %" PRIu64, e->offset);
		printf(", \"what\": ");
		cli_json_str(stdout, nnn_status_str(e->code), strlen(nnn_status_str(e->code)));
		printf(", \"message\": ");
		cli_json_str(stdout, e->msg, strlen(e->msg));
		printf(", \"remedy\": ");
		cli_json_str(stdout, nnn_status_remedy(e->code), strlen(nnn_status_remedy(e->code)));
		printf("}");
	}
	printf("%s]", d->n ? "\n" : "");
	if (n > 0)
		printf(", \"output_shape\": \"%s\"", nnn_shape_format(&shapes[n - 1], buf, sizeof buf));
	printf("}\n");
}

static int run(int argc, char **argv, cli_env_t *env)
{
	const char *path = NULL;
	nnn_shape_t in, *shapes = NULL;
	int have_in = 0, json = 0, code;
	int32_t n = 0;
	nnn_diags_t d;
	const unsigned char *data;
	size_t size;
	nnn_status_t st;

	nnn_diags_init(&d);
	for (int i = 1; i < argc; i++) {
		if (cli_is_help(argv[i])) {
			fputs(cmd_validate.help, stdout);
			return EXIT_VALID;
		} else if (!strcmp(argv[i], "--json")) {
			json = 1;
		} else if ((code = cli_input_shape(&cmd_validate, argc, argv, &i, &in)) >= 0) {
			if (code)
				return code;
			have_in = 1;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			return cli_usage(&cmd_validate, "unknown option %s", argv[i]);
		} else if (path) {
			return cli_usage(&cmd_validate, "one model at a time");
		} else {
			path = argv[i];
		}
	}
	if (!path)
		return cli_usage(&cmd_validate, "no model given");
	st = nnn_map(path, &data, &size, &d);
	if (st != NNN_OK) {
		code = cli_report(path, &d, st);
		nnn_diags_free(&d);
		return code;
	}
	st = nnn_validate_bytes(data, size, cli_ctx(env), have_in ? &in : NULL, &d);
	if (st == NNN_OK && have_in)
		shapes = infer(env->ctx, data, size, &in, &n);
	if (json) {
		print_json(path, &d, st, shapes, n);
		code = cli_exit_code(st);
	} else if (st != NNN_OK) {
		code = cli_report(path, &d, st);
	} else {
		char buf[256];
		printf("%s: valid", path);
		if (n > 0)
			printf(", output shape %s", nnn_shape_format(&shapes[n - 1], buf, sizeof buf));
		printf("\n");
		for (int32_t i = 0; i < n; i++)
			printf("  layers[%d] -> %s\n", (int)i, nnn_shape_format(&shapes[i], buf, sizeof buf));
		code = EXIT_VALID;
	}
	free(shapes);
	nnn_unmap(data, size);
	nnn_diags_free(&d);
	return code;
}
