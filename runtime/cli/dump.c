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
	{ "MODEL", CLI_IN, CLI_DASH, .help = CLI_MODEL_HELP },
	{ NULL },
};

const cli_cmd_t cmd_dump = {
	.name = "dump",
	.summary = "annotated byte map: every field with offset, size, path and value",
	.main = run,
	.opts = CLI_OPTS(dump_opts, cli_opts_json),
	.pos = dump_pos,
	.exits = CLI_EXITS_MODEL,
	.help = "usage: nnnkit dump [--values N] [--json] MODEL\n"
	"Prints every field of the file in order: offset, size, field path, type and value.\n"
	"Float arrays show their first N values (default 4). Problems are marked with '!!' where\n"
	"they occur; decoding goes on past them where the framing allows, and bytes that cannot be\n"
	"decoded are listed at the end. --json: one JSON object (docs/cli-json.md).\n",
};

typedef struct dump_ctx {
	uint64_t end;   /* one past the last byte decoded */
	int values;     /* float values shown per array */
	const nnn_ctx_t *ctx; /* plugins, to name the IDs they provide */
	int json, nfields;
	nnn_diags_t problems; /* --json: listed after the fields */
} dump_ctx_t;

static const char *PRIM_NAME[] = { "u8", "i32", "u64", "f32", "bool", "string", "i32_array", "f32_array" };

/* A primitive's name: the named ones', else made of its kind and bits as
 * the schema's convention has it ("f16", "bf16", "i8", "u16_array"). */
static const char *prim_name(nnn_prim_t p, char *buf, size_t size)
{
	static const char *const kind[] = { "?", "i", "u", "f", "bf", "b" };
	nnn_ekind_t k = nnn_prim_ekind(p);
	if ((unsigned)p < sizeof PRIM_NAME / sizeof *PRIM_NAME)
		return PRIM_NAME[p];
	snprintf(buf, size, "%s%d%s", kind[(unsigned)k < 6 ? k : 0], 8 * nnn_prim_ewidth(p),
	         (p & NNN_PRIM_NUMS) ? "_array" : "");
	return buf;
}

/* A number of another element type (f16, i8, ...) in the dump's JSON:
 * "value" (floats as float32s are; float64 with 17 digits) and, for a
 * float scalar, "bits". */
static void json_num(const nnn_field_t *f, int values)
{
	nnn_ekind_t k = nnn_prim_ekind(f->prim);
	int w = nnn_prim_ewidth(f->prim);
	bool real = k == NNN_EK_FLOAT || k == NNN_EK_BFLOAT;
	if (!(f->prim & NNN_PRIM_NUMS)) {
		printf("\"value\": ");
		if (real)
			cli_json_num(stdout, nnn_num_double(k, w, f->u));
		else if (k == NNN_EK_INT)
			printf("%" PRId64, f->i);
		else
			printf("%" PRIu64, f->u);
		if (real)
			printf(", \"bits\": %" PRIu64, f->u);
		return;
	}
	int32_t show = real ? values : 16;
	printf("\"count\": %d, \"value\": [", (int)f->count);
	for (int32_t i = 0; i < f->count && i < show; i++) {
		printf("%s", i ? ", " : "");
		cli_json_num(stdout, nnn_elems_get((nnn_elems_t){ f->bytes, f->count }, k, w, i));
	}
	printf("]");
}

/* A field's value in JSON (docs/cli-json.md, "dump"): "value", and "name",
 * "bits", "count" where they apply; arrays up to `values` (float) or 16. */
static void json_value(const nnn_field_t *f, int values, const nnn_ctx_t *ctx)
{
	const char *name = NULL, *title, *file;
	uint32_t bits;
	int32_t show = f->prim == NNN_PRIM_F32_ARRAY ? values : 16;
	switch (f->prim) {
	case NNN_PRIM_U8:
	case NNN_PRIM_I32:
		printf("\"value\": %" PRId64, f->i);
		if (f->type && !(name = f->type->value_name(f->i)))
			cli_plugin_type(ctx, f->type, f->i, &name, &title, &file);
		if (f->type) {
			printf(", \"name\": ");
			if (name)
				cli_json_str(stdout, name, strlen(name));
			else
				fputs("null", stdout);
		}
		break;
	case NNN_PRIM_U64:
		printf("\"value\": %" PRIu64, f->u);
		break;
	case NNN_PRIM_F32:
		memcpy(&bits, &f->f, 4);
		printf("\"value\": ");
		cli_json_num(stdout, f->f);
		printf(", \"bits\": %" PRIu32, bits);
		break;
	case NNN_PRIM_BOOL:
		if (f->i == 0 || f->i == 1)
			printf("\"value\": %s", f->i ? "true" : "false");
		else
			printf("\"value\": %" PRId64, f->i); /* the invalid byte, as found */
		break;
	case NNN_PRIM_STRING:
		printf("\"value\": ");
		cli_json_str(stdout, (const char *)f->bytes, (size_t)f->count);
		printf(", \"count\": %d", (int)f->count);
		break;
	case NNN_PRIM_I32_ARRAY:
	case NNN_PRIM_F32_ARRAY:
		printf("\"count\": %d, \"value\": [", (int)f->count);
		for (int32_t i = 0; i < f->count && i < show; i++) {
			printf("%s", i ? ", " : "");
			if (f->prim == NNN_PRIM_I32_ARRAY)
				printf("%d", (int)(int32_t)nnn_le_u32(f->bytes + 4 * i));
			else
				cli_json_num(stdout, nnn_f32s_get((nnn_f32s_t){ f->bytes, f->count }, i));
		}
		printf("]");
		break;
	default:
		json_num(f, values);
		break;
	}
}

/* cli_const_text of a decoded i32 field (its little-endian bytes). */
static bool const_text(const nnn_field_t *f, char text[5])
{
	unsigned char b[4];
	for (int k = 0; k < 4; k++)
		b[k] = (unsigned char)((uint32_t)f->i >> (8 * k));
	return f->prim == NNN_PRIM_I32 && cli_const_text(f->path, b, text);
}

static void on_field(void *ctx, const nnn_field_t *f)
{
	char text[5];
	dump_ctx_t *c = ctx;
	char type[48], path[NNN_PATH_MAX * 4], pn[24];
	if (c->json) {
		printf("%s\n  {\"offset\": %" PRIu64 ", \"size\": %" PRIu64 ", \"path\": ", c->nfields++ ? "," : "",
		       f->offset, f->size);
		cli_json_str(stdout, f->path, strlen(f->path));
		printf(", \"prim\": \"%s\", \"type\": ", prim_name(f->prim, pn, sizeof pn));
		if (f->type)
			cli_json_str(stdout, f->type->name, strlen(f->type->name));
		else
			fputs("null", stdout);
		fputs(", ", stdout);
		json_value(f, c->values, c->ctx);
		if (const_text(f, text)) {
			fputs(", \"text\": ", stdout);
			cli_json_str(stdout, text, 4);
		}
		putchar('}');
		if (f->offset + f->size > c->end)
			c->end = f->offset + f->size;
		return;
	}
	if (f->type)
		snprintf(type, sizeof type, "%s(%s)", f->type->name, prim_name(f->prim, pn, sizeof pn));
	else
		snprintf(type, sizeof type, "%s", prim_name(f->prim, pn, sizeof pn));
	/* A plugin's field names are in the path: escaped, as stats and diff
	 * show paths (a newline too: one line per field). */
	nnn_esc(path, sizeof path, f->path, strlen(f->path), NNN_ESC_C);
	printf("0x%08" PRIx64 " %9" PRIu64 "  %-36s %-18s ", f->offset, f->size, path, type);
	if (const_text(f, text))
		printf("\"%s\" ", text); /* printable ASCII: the signature as a hex viewer shows it */
	cli_field_value(stdout, f, c->values, c->ctx);
	putchar('\n');
	if (f->offset + f->size > c->end)
		c->end = f->offset + f->size;
}

static void on_problem(void *ctx, const nnn_diag_t *d)
{
	char buf[NNN_PATH_MAX + NNN_MSG_MAX + 512];
	dump_ctx_t *c = ctx;
	if (c->json) {
		nnn_diags_add(&c->problems, d->code, d->offset, d->path, "%s", d->msg);
		return;
	}
	cli_say(stdout, "!! %s\n", nnn_diag_format(d, buf, sizeof buf));
}

static int run(const cli_args_t *a, cli_env_t *env)
{
	const char *path = cli_arg(a, "MODEL");
	dump_ctx_t c = { 0, (int)cli_num(a, "values", 4), NULL, cli_flag(a, "json"), 0, { 0 } };
	nnn_visitor_t vis = { on_field, on_problem, &c };
	nnn_decode_opts_t opts = { .flags = NNN_DECODE_KEEP_GOING, .visit = &vis };
	nnn_file_t *f;
	size_t size;
	nnn_diags_t d;
	nnn_model_t *m = NULL;
	nnn_status_t st;

	nnn_diags_init(&d);
	st = cli_file_open(env, path, NULL, &f, &d);
	if (st != NNN_OK) {
		int code = cli_fail(env, path, &d, st);
		nnn_diags_free(&d);
		return code;
	}
	nnn_diags_init(&c.problems);
	if (c.json) {
		printf("{\"file\": ");
		cli_json_str(stdout, cli_name(path), strlen(cli_name(path)));
		printf(", \"fields\": [");
	} else {
		printf("%-10s %9s  %-36s %-18s %s\n", "offset", "size", "path", "type", "value");
	}
	opts.ctx = c.ctx = cli_ctx(env);
	nnn_file_bytes(f, &size);
	st = nnn_file_decode(f, &opts, &m, NULL);
	if (c.json) {
		int code = cli_exit(env, cli_exit_code(st));
		printf("%s], \"bytes\": %zu, \"undecoded\": ", c.nfields ? "\n" : "", size);
		if (c.end < size && st != NNN_OK)
			printf("{\"offset\": %" PRIu64 ", \"bytes\": %" PRIu64 "}", c.end, (uint64_t)size - c.end);
		else
			fputs("null", stdout);
		printf(", \"valid\": %s", st == NNN_OK ? "true" : "false");
		if (code != EXIT_VALID) {
			printf(", \"error\": ");
			cli_json_error_obj(stdout, NULL, path, &c.problems, st, code);
		}
		printf(", \"problems\": ");
		cli_json_problems(stdout, NULL, path, &c.problems);
		printf("}\n");
		env->json_done = 1;
	} else {
		if (c.end < size && st != NNN_OK)
			printf("0x%08" PRIx64 " %9" PRIu64 "  (not decoded)\n", c.end, (uint64_t)size - c.end);
		printf("%zu bytes, %s\n", size, st == NNN_OK ? "no problems" : "problems marked with !!");
	}
	if (st != NNN_OK) {
		fflush(stdout);
		cli_say(stderr, "nnnkit: %s: not a valid model: %s (its problems are %s on stdout)\n", cli_name(path),
		        nnn_status_str(st), c.json ? "listed in the JSON" : "marked with !!");
	}
	nnn_model_free(m);
	nnn_file_close(f);
	nnn_diags_free(&d);
	nnn_diags_free(&c.problems);
	return cli_exit_code(st);
}
