/* dump.c: `nnnkit dump MODEL`: what every byte of a file means. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static int run(const cli_args_t *a, cli_env_t *env);

static const cli_opt_t dump_opts[] = {
	{ "values", 0, CLI_NUM, 0, "N", "float values shown per array (default 4)", .max = INT32_MAX },
	{ NULL },
};
static const cli_pos_t dump_pos[] = {
	{ "MODEL", CLI_IN, CLI_DASH, .help = "the .nnn file" },
	{ NULL },
};

const cli_cmd_t cmd_dump = {
	.name = "dump",
	.summary = "annotated byte map: every field with offset, size, path and value",
	.main = run,
	.opts = CLI_OPTS(dump_opts),
	.pos = dump_pos,
	.exits = CLI_EXITS_MODEL,
	.help = "usage: nnnkit dump [--values N] MODEL\n"
	"Prints every field of the file in order: offset, size, field path, type and value.\n"
	"Float arrays show their first N values (default 4). Problems are marked with '!!' where\n"
	"they occur; decoding goes on past them where the framing allows, and bytes that cannot be\n"
	"decoded are listed at the end.\n",
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

static int run(const cli_args_t *a, cli_env_t *env)
{
	const char *path = cli_arg(a, "MODEL");
	dump_ctx_t c = { 0, (int)cli_num(a, "values", 4), NULL };
	nnn_visitor_t vis = { on_field, on_problem, &c };
	nnn_decode_opts_t opts = { .flags = NNN_DECODE_KEEP_GOING, .visit = &vis };
	nnn_file_t *f;
	size_t size;
	nnn_diags_t d;
	nnn_model_t *m = NULL;
	nnn_status_t st;

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
	if (st != NNN_OK) {
		fflush(stdout);
		fprintf(stderr, "nnnkit: %s: not a valid model: %s (its problems are marked with !! on stdout)\n",
		        cli_name(path), nnn_status_str(st));
	}
	nnn_model_free(m);
	nnn_file_close(f);
	nnn_diags_free(&d);
	return cli_exit_code(st);
}
