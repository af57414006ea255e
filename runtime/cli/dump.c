/* dump.c: `nnnkit dump MODEL`: what every byte of a file means. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static int run(int argc, char **argv, cli_env_t *env);

const cli_cmd_t cmd_dump = {
	"dump", "annotated byte map: every field with offset, size, path and value",
	"usage: nnnkit dump [--values N] MODEL\n"
	"Prints every field of the file in order: offset, size, field path, type and value.\n"
	"Float arrays show their first N values (default 4). Problems are marked with '!!' where\n"
	"they occur; decoding goes on past them where the framing allows, and bytes that cannot be\n"
	"decoded are listed at the end.\n",
	run,
};

typedef struct dump_ctx {
	uint64_t end;   /* one past the last byte decoded */
	int values;     /* float values shown per array */
	const nnn_ctx_t *ctx; /* plugins, to name the IDs they provide */
} dump_ctx_t;

static const char *PRIM_NAME[] = { "u8", "i32", "u64", "f32", "bool", "string", "i32_array", "f32_array" };

static void on_field(void *ctx, const nnn_field_t *f)
{
	dump_ctx_t *c = ctx;
	char type[48];
	if (f->type)
		snprintf(type, sizeof type, "%s(%s)", f->type->name, PRIM_NAME[f->prim]);
	else
		snprintf(type, sizeof type, "%s", PRIM_NAME[f->prim]);
	printf("0x%08" PRIx64 " %9" PRIu64 "  %-36s %-18s ", f->offset, f->size, f->path, type);
	cli_field_value(stdout, f, c->values, c->ctx);
	putchar('\n');
	if (f->offset + f->size > c->end)
		c->end = f->offset + f->size;
}

static void on_problem(void *ctx, const nnn_diag_t *d)
{
	char buf[NNN_PATH_MAX + NNN_MSG_MAX + 512];
	(void)ctx;
	printf("!! %s\n", nnn_diag_format(d, buf, sizeof buf));
}

static int run(int argc, char **argv, cli_env_t *env)
{
	const char *path = NULL;
	dump_ctx_t c = { 0, 4, NULL };
	nnn_visitor_t vis = { on_field, on_problem, &c };
	nnn_decode_opts_t opts = { .flags = NNN_DECODE_KEEP_GOING, .visit = &vis };
	nnn_file_t *f;
	size_t size;
	nnn_diags_t d;
	nnn_model_t *m = NULL;
	nnn_status_t st;

	for (int i = 1; i < argc; i++) {
		if (cli_is_help(argv[i])) {
			fputs(cmd_dump.help, stdout);
			return EXIT_VALID;
		} else if (!strcmp(argv[i], "--values") && i + 1 < argc) {
			uint64_t n;
			int code = cli_number(&cmd_dump, "--values", argv[++i], 0, INT32_MAX, &n);
			if (code != EXIT_VALID)
				return code;
			c.values = (int)n;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			return cli_usage(&cmd_dump, "unknown option %s", argv[i]);
		} else if (path) {
			return cli_usage(&cmd_dump, "one model at a time");
		} else {
			path = argv[i];
		}
	}
	if (!path)
		return cli_usage(&cmd_dump, "no model given");
	nnn_diags_init(&d);
	st = nnn_file_map(path, &f, &d);
	if (st != NNN_OK) {
		int code = cli_report(path, &d, st);
		nnn_diags_free(&d);
		return code;
	}
	printf("%-10s %9s  %-36s %-18s %s\n", "offset", "size", "path", "type", "value");
	opts.ctx = c.ctx = cli_ctx(env);
	nnn_file_bytes(f, &size);
	st = nnn_file_decode(f, &opts, &m, NULL);
	if (c.end < size && st != NNN_OK)
		printf("0x%08" PRIx64 " %9" PRIu64 "  (not decoded)\n", c.end, (uint64_t)size - c.end);
	printf("%zu bytes, %s\n", size, st == NNN_OK ? "no problems" : "problems marked with !!");
	nnn_model_free(m);
	nnn_file_close(f);
	nnn_diags_free(&d);
	return cli_exit_code(st);
}
