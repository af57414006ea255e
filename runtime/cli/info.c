/* info.c: `nnnkit info MODEL`: what a model is, in one screen. */
#include <inttypes.h>
#include <string.h>

#include "cli.h"

static int run(int argc, char **argv, cli_env_t *env);

const cli_cmd_t cmd_info = {
	"info", "describe a model: description, parameters, a table of layers",
	"usage: nnnkit info MODEL\n"
	"Prints the description, the parameter count and one row per layer: type, its own fields,\n"
	"activation and its parameters, dropout, tensor shapes, parameter count, bytes, and the plugin\n"
	"whose kernel runs it ('+' when another plugin runs its activation; 'none' when no plugin does).\n",
	run,
};

static void shape_text(const nnn_tensor_t *t, char *buf, size_t size)
{
	size_t k = (size_t)snprintf(buf, size, "[");
	for (int32_t i = 0; i < t->dims.n && k < size; i++)
		k += (size_t)snprintf(buf + k, size - k, "%s%d", i ? "," : "", (int)t->dims.v[i]);
	if (k < size)
		snprintf(buf + k, size - k, "]");
}

/* Printable description: control bytes shown as escapes. */
static void print_text(const nnn_str_t *s)
{
	putchar('"');
	for (int32_t i = 0; i < s->len; i++) {
		unsigned char c = (unsigned char)s->ptr[i];
		if (c < 0x20 || c == 0x7f)
			printf("\\x%02x", c);
		else
			putchar(c);
	}
	putchar('"');
}

/* Which plugin's kernel runs a layer and its activation: "builtin". */
static const char *kernel_of(const nnn_ctx_t *ctx, const nnn_layer_t *L, char *buf, size_t size)
{
	const char *lp = NULL, *ap = NULL;
	nnn_ctx_layer(ctx, L->id, &lp);
	nnn_ctx_activation(ctx, L->activation.id, &ap);
	if (!lp)
		snprintf(buf, size, "none");
	else
		snprintf(buf, size, "%s%s", strrchr(lp, '/') + 1, ap && strcmp(ap, lp) ? "+" : "");
	return buf;
}

static void print_layer(const nnn_ctx_t *ctx, const nnn_model_t *m, int32_t i, size_t file_size)
{
	char kern[128];
	const nnn_layer_t *L = &m->layers[i];
	nnn_named_tensor_t ts[8];
	char fields[128], act[128], params[64], tens[256] = "";
	int n = nnn_layer_tensors(L, ts, 8);
	uint64_t count = 0;
	uint64_t end = i + 1 < m->layer_count ? m->layers[i + 1].at[NNN_AT_LAYER_ID] : file_size;
	size_t k = 0;

	nnn_layer_format(L, fields, sizeof fields);
	nnn_activation_format(&L->activation, params, sizeof params);
	snprintf(act, sizeof act, "%s%s%s%s", nnn_activation_title(&L->activation), params[0] ? "(" : "", params,
	         params[0] ? ")" : "");
	for (int t = 0; t < n && t < 8; t++) {
		char shape[96];
		shape_text(ts[t].tensor, shape, sizeof shape);
		k += (size_t)snprintf(tens + k, sizeof tens - k, "%s%s %s", t ? ", " : "", ts[t].name, shape);
		if (k >= sizeof tens)
			break;
		count += (uint64_t)ts[t].tensor->data.n;
	}
	printf("%3d  %-6s %-28s %-24s %-8g %-40s %10" PRIu64 " %10" PRIu64 "  %s\n", (int)i, nnn_layer_title(L), fields,
	       act, (double)L->dropout, tens, count, end - L->at[NNN_AT_LAYER_ID],
	       kernel_of(ctx, L, kern, sizeof kern));
}

static int run(int argc, char **argv, cli_env_t *env)
{
	const char *path = NULL;
	nnn_diags_t d;
	nnn_file_t *f;
	nnn_status_t st;

	for (int i = 1; i < argc; i++) {
		if (cli_is_help(argv[i])) {
			fputs(cmd_info.help, stdout);
			return EXIT_VALID;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			return cli_usage(&cmd_info, "unknown option %s", argv[i]);
		} else if (path) {
			return cli_usage(&cmd_info, "one model at a time");
		}
		path = argv[i];
	}
	if (!path)
		return cli_usage(&cmd_info, "no model given");
	nnn_diags_init(&d);
	nnn_decode_opts_t opts = { .ctx = cli_ctx(env) };
	st = nnn_file_open(path, &opts, &f, &d);
	if (st != NNN_OK) {
		int code = cli_report(path, &d, st);
		nnn_diags_free(&d);
		return code;
	}
	const nnn_model_t *m = nnn_file_model(f);
	size_t size;
	uint64_t total = nnn_model_param_total(m);
	nnn_file_bytes(f, &size);
	printf("file:         %s (%zu bytes)\n", path, size);
	printf("description:  ");
	print_text(&m->description);
	printf("\nparameters:   %" PRIu64, total);
	if (total != m->param_count)
		printf(" (the header says %" PRIu64 ": run nnnkit validate)", m->param_count);
	printf("\nlayers:       %d\n\n", (int)m->layer_count);
	printf("%3s  %-6s %-28s %-24s %-8s %-40s %10s %10s  %s\n", "#", "type", "fields", "activation", "dropout",
	       "tensors", "params", "bytes", "kernel");
	for (int32_t i = 0; i < m->layer_count; i++)
		print_layer(opts.ctx, m, i, size);
	nnn_file_close(f);
	nnn_diags_free(&d);
	return EXIT_VALID;
}
