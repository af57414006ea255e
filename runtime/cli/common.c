/* common.c: reporting and small helpers shared by the commands. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nnn/json.h>
#include <nnn/onnx.h>
#include <nnn/safetensors.h>

#include "cli.h"

/* The one table from a status to an exit code (README.md, "Exit codes"). */
int cli_exit_code(nnn_status_t st)
{
	switch (st) {
	case NNN_OK:
		return EXIT_VALID;
	case NNN_E_IO:
	case NNN_E_NOMEM:
	case NNN_E_USAGE:
		return EXIT_USAGE;
	case NNN_E_PLUGIN: /* a candidate failed, two conflict, or no plugin provides a kernel */
		return EXIT_PLUGIN;
	default:
		return EXIT_INVALID;
	}
}

int cli_exit(const cli_env_t *env, int code)
{
	/* Any plugin failure wins: it is reported first and is often why the
	 * command failed (an ID no plugin provides). */
	return env->plugin_failed ? EXIT_PLUGIN : code;
}

nnn_diag_t *cli_locate(const cli_env_t *env, const char *file, const nnn_diag_t *g, nnn_diag_t *out)
{
	*out = *g;
	for (int i = 0; env && file && i < env->njson_src && !out->line && out->path[0]; i++) {
		const struct cli_json_src *src = &env->json_src[i];
		if (strcmp(src->path, file))
			continue;
		nnn_json_locate(src->text, src->len, &(nnn_diags_t){ .v = out, .n = 1, .cap = 1 }, 0);
		if (out->line)
			out->offset = NNN_NO_OFFSET;
	}
	return out;
}

int cli_report(const cli_env_t *env, const char *file, const nnn_diags_t *d, nnn_status_t st)
{
	const char *name = cli_name(file);
	char buf[NNN_PATH_MAX + NNN_MSG_MAX + 512];
	/* A problem with a line reads "FILE:LINE:COLUMN: path: ...", as compilers say it. */
	/* Messages quote what the file says (names, keys, text): escaped. */
	for (size_t i = 0; d && i < d->n; i++) {
		nnn_diag_t g;
		cli_locate(env, file, &d->v[i], &g);
		cli_say(stderr, "nnnkit: %s%s%s\n", name, g.line ? ":" : ": ", nnn_diag_format(&g, buf, sizeof buf));
	}
	if (d && d->dropped)
		cli_say(stderr, "nnnkit: %s: %zu more problem%s not shown\n", name, d->dropped, d->dropped > 1 ? "s" : "");
	if ((!d || !d->n) && st != NNN_OK)
		cli_say(stderr, "nnnkit: %s: %s\n", name, nnn_status_str(st));
	return cli_exit_code(st);
}

int cli_fail(cli_env_t *env, const char *file, const nnn_diags_t *d, nnn_status_t st)
{
	int code = cli_report(env, file, d, st);
	cli_json_error(env, file, d, st, cli_exit(env, code));
	return code;
}

static void json_text(FILE *f, const char *s)
{
	if (s)
		cli_json_str(f, s, strlen(s));
	else
		fputs("null", f);
}

/* ", \"line\": L, \"column\": C" of a problem in a text model. */
static void json_line(FILE *f, const nnn_diag_t *e)
{
	if (e->line)
		fprintf(f, ", \"line\": %" PRIu32 ", \"column\": %" PRIu32, e->line, e->column);
}

void cli_json_problems(FILE *f, const cli_env_t *env, const char *file, const nnn_diags_t *d)
{
	fputc('[', f);
	for (size_t i = 0; d && i < d->n; i++) {
		nnn_diag_t g;
		const nnn_diag_t *e = cli_locate(env, file, &d->v[i], &g);
		fprintf(f, "%s\n  {\"code\": \"%s\", \"number\": %d, \"path\": ", i ? "," : "", nnn_status_name(e->code),
		        (int)e->code);
		cli_json_str(f, e->path, strlen(e->path));
		if (e->offset != NNN_NO_OFFSET)
			fprintf(f, ", \"offset\": %" PRIu64, e->offset);
		json_line(f, e);
		fputs(", \"what\": ", f);
		json_text(f, nnn_status_str(e->code));
		fputs(", \"message\": ", f);
		cli_json_str(f, e->msg, strlen(e->msg));
		fputs(", \"remedy\": ", f);
		json_text(f, nnn_status_remedy(e->code));
		fputc('}', f);
	}
	fputs(d && d->n ? "\n]" : "]", f);
}

static void error_obj(FILE *f, const cli_env_t *env, const char *file, const nnn_diags_t *d, nnn_status_t st,
                      int code, const char *text);

void cli_json_error_obj(FILE *f, const cli_env_t *env, const char *file, const nnn_diags_t *d, nnn_status_t st,
                        int code)
{
	error_obj(f, env, file, d, st, code, NULL);
}

/* The error object; `text`, when given, is its message. */
static void error_obj(FILE *f, const cli_env_t *env, const char *file, const nnn_diags_t *d, nnn_status_t st,
                      int code, const char *text)
{
	static const char *const by_exit[] = { "E_INVALID", "E_INVALID", "E_USAGE", "E_PLUGIN" };
	nnn_diag_t g;
	const nnn_diag_t *e = d && d->n ? cli_locate(env, file, &d->v[0], &g) : NULL;
	char msg[NNN_PATH_MAX + NNN_MSG_MAX + 512];
	if (e)
		st = e->code;
	if (text)
		snprintf(msg, sizeof msg, "%s", text);
	else if (e)
		nnn_diag_format(e, msg, sizeof msg);
	else if (st != NNN_OK)
		snprintf(msg, sizeof msg, "%s", nnn_status_str(st));
	else /* said on stderr only (a usage problem, data that do not fit) */
		snprintf(msg, sizeof msg, "failed with exit code %d: stderr says why", code);
	fprintf(f, "{\"code\": \"%s\", \"exit\": %d, \"file\": ",
	        st != NNN_OK ? nnn_status_name(st) : by_exit[code >= 0 && code < 4 ? code : 1], code);
	json_text(f, file ? cli_name(file) : NULL);
	fputs(", \"path\": ", f);
	json_text(f, e && e->path[0] ? e->path : NULL);
	if (e && e->offset != NNN_NO_OFFSET)
		fprintf(f, ", \"offset\": %" PRIu64, e->offset);
	else
		fputs(", \"offset\": null", f);
	if (e)
		json_line(f, e);
	fputs(", \"message\": ", f);
	cli_json_str(f, msg, strlen(msg));
	fputs(", \"remedy\": ", f);
	json_text(f, st != NNN_OK ? nnn_status_remedy(st) : NULL);
	fputc('}', f);
}

static void json_error(cli_env_t *env, const char *file, const nnn_diags_t *d, nnn_status_t st, int code,
                       const char *text)
{
	if (!env->json || env->json_done || code == EXIT_VALID)
		return;
	env->json_done = 1;
	fputs("{\"error\": ", stdout);
	error_obj(stdout, env, file, d, st, code, text);
	fputs(", \"problems\": ", stdout);
	cli_json_problems(stdout, env, file, d);
	fputs("}\n", stdout);
	fflush(stdout);
}

void cli_json_error(cli_env_t *env, const char *file, const nnn_diags_t *d, nnn_status_t st, int code)
{
	json_error(env, file, d, st, code, NULL);
}

void cli_json_usage(cli_env_t *env, const char *msg)
{
	json_error(env, NULL, NULL, NNN_OK, EXIT_USAGE, msg);
}

int cli_fail_text(cli_env_t *env, const char *file, int code, const char *fmt, ...)
{
	char msg[NNN_PATH_MAX + NNN_MSG_MAX + 512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	file = cli_name(file);
	cli_say(stderr, "nnnkit: %s: %s\n", file, msg);
	json_error(env, file, NULL, NNN_OK, cli_exit(env, code), msg);
	return code;
}

int cli_is_help(const char *arg)
{
	return !strcmp(arg, "-h") || !strcmp(arg, "--help");
}

static void put_file(void *f, const char *p, size_t n)
{
	fwrite(p, 1, n, f);
}

void cli_esc_print(FILE *f, const char *s, size_t n, nnn_esc_t style)
{
	nnn_esc_put(s, n, style, put_file, f);
}

void cli_say(FILE *f, const char *fmt, ...)
{
	char buf[1024], *text = buf;
	va_list ap, again;
	va_start(ap, fmt);
	va_copy(again, ap);
	int n = vsnprintf(buf, sizeof buf, fmt, ap);
	if (n >= (int)sizeof buf && (text = malloc((size_t)n + 1)) != NULL)
		vsnprintf(text, (size_t)n + 1, fmt, again);
	va_end(again);
	va_end(ap);
	if (!text) /* no memory for a long line: its start */
		text = buf, n = (int)sizeof buf - 1;
	if (n > 0)
		cli_esc_print(f, text, (size_t)n, NNN_ESC_MSG);
	if (text != buf)
		free(text);
}

void cli_json_str(FILE *f, const char *s, size_t n)
{
	fputc('"', f);
	cli_esc_print(f, s, n, NNN_ESC_JSON);
	fputc('"', f);
}

bool cli_plugin_type(const nnn_ctx_t *ctx, const nnn_type_t *type, int64_t id, const char **name, const char **title,
                     const char **file)
{
	const char *path = NULL, *n = NULL, *t = NULL;
	if (!ctx || id < 0 || id > 255)
		return false;
	if (type == &nnn_type_layer_id) {
		const nnn_layer_type_t *lt = nnn_ctx_layer(ctx, (int)id, &path);
		if (lt)
			n = lt->name, t = lt->title; /* the registry's copy: NULL title before ABI 1.3 */
	} else if (type == &nnn_type_activation_id) {
		const nnn_activation_type_t *at = nnn_ctx_activation(ctx, (int)id, &path);
		if (at)
			n = at->name, t = at->title;
	}
	if (!n)
		return false;
	*name = n;
	*title = t && t[0] ? t : n;
	*file = path && strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	return true;
}

void cli_field_value(FILE *out, const nnn_field_t *f, int values, const nnn_ctx_t *ctx)
{
	const char *name, *title, *file;
	switch (f->prim) {
	case NNN_PRIM_U8:
	case NNN_PRIM_I32:
		fprintf(out, "%" PRId64, f->i);
		/* A plugin's names and file, as any name: escaped. */
		if (f->type && (name = f->type->value_name(f->i)) != NULL)
			cli_say(out, " (%s)", name);
		else if (f->type && cli_plugin_type(ctx, f->type, f->i, &name, &title, &file))
			cli_say(out, " (%s, from %s)", name, file ? file : "a plugin");
		else if (f->type)
			cli_say(out, " (not a %s)", f->type->name);
		break;
	case NNN_PRIM_U64:
		fprintf(out, "%" PRIu64, f->u);
		break;
	case NNN_PRIM_F32: {
		uint32_t bits;
		memcpy(&bits, &f->f, 4);
		fprintf(out, "%.9g (0x%08" PRIx32 ")", (double)f->f, bits);
		break;
	}
	case NNN_PRIM_BOOL:
		fprintf(out, f->i == 0 ? "false" : f->i == 1 ? "true" : "invalid byte %" PRId64, f->i);
		break;
	case NNN_PRIM_STRING: {
		int32_t n = f->count < 72 ? f->count : 72;
		fprintf(out, "%d bytes ", (int)f->count);
		cli_json_str(out, (const char *)f->bytes, (size_t)n);
		if (n < f->count)
			fprintf(out, "...");
		break;
	}
	case NNN_PRIM_I32_ARRAY:
		fprintf(out, "%d: [", (int)f->count);
		for (int32_t i = 0; i < f->count && i < 16; i++)
			fprintf(out, "%s%d", i ? ", " : "", (int)(int32_t)nnn_le_u32(f->bytes + 4 * i));
		fprintf(out, "%s]", f->count > 16 ? ", ..." : "");
		break;
	case NNN_PRIM_F32_ARRAY: {
		nnn_f32s_t a = { f->bytes, f->count };
		fprintf(out, "%d: [", (int)f->count);
		for (int32_t i = 0; i < f->count && i < values; i++)
			fprintf(out, "%s%.9g", i ? ", " : "", (double)nnn_f32s_get(a, i));
		fprintf(out, "%s]", f->count > values ? ", ..." : "");
		break;
	}
	default: /* another element type: by its kind and width */
		cli_num_value(out, f, values);
		break;
	}
}

/* A number of an element type without a named reader (f16, i8, ...): ints
 * in decimal; floats as %.9g, a scalar with its bits, as float32s are. */
void cli_num_value(FILE *out, const nnn_field_t *f, int values)
{
	nnn_ekind_t k = nnn_prim_ekind(f->prim);
	int w = nnn_prim_ewidth(f->prim);
	bool real = k == NNN_EK_FLOAT || k == NNN_EK_BFLOAT;
	if (!(f->prim & NNN_PRIM_NUMS)) {
		if (real)
			fprintf(out, "%.*g (0x%0*" PRIx64 ")", w == 8 ? 17 : 9, nnn_num_double(k, w, f->u), 2 * w, f->u);
		else if (k == NNN_EK_INT)
			fprintf(out, "%" PRId64, f->i);
		else
			fprintf(out, "%" PRIu64, f->u);
		return;
	}
	nnn_elems_t a = { f->bytes, f->count };
	int32_t show = real ? values : 16;
	fprintf(out, "%d: [", (int)f->count);
	for (int32_t i = 0; i < f->count && i < show; i++)
		fprintf(out, "%s%.*g", i ? ", " : "", w == 8 ? 17 : 9, nnn_elems_get(a, k, w, i));
	fprintf(out, "%s]", f->count > show ? ", ..." : "");
}

int cli_written_check(const cli_env_t *env, const char *out, const char *blame, const nnn_model_t *m, nnn_diags_t *d)
{
	const char *name = cli_out_name(out);
	nnn_status_t st;
	nnn_diags_clear(d);
	if ((st = nnn_model_validate(m, NULL, NULL, d)) == NNN_OK)
		return EXIT_VALID;
	cli_say(stderr, "nnnkit: %s: written, but it is not a valid model (nnnkit edit can mend a parameter count; the "
	        "rest needs the JSON form or the writer):\n", name);
	return cli_report(env, blame, d, st);
}

int cli_emit(const char *path, const void *buf, size_t n)
{
	nnn_diags_t d;
	nnn_status_t st;
	int code;
	nnn_diags_init(&d);
	st = nnn_write_atomic_bytes(path, buf, n, &d);
	code = cli_report(NULL, cli_out_name(path), &d, st);
	nnn_diags_free(&d);
	return code;
}

const char *cli_own_dir(const cli_env_t *env, const char *installed, const char *built, char *buf, size_t size)
{
	char probe[4096];
	if (!env->exe_dir)
		return NULL;
	snprintf(probe, sizeof probe, "%s/../%s", env->exe_dir, installed);
	if (access(probe, F_OK) == 0) {
		snprintf(buf, size, "%s", probe);
		return buf;
	}
	snprintf(buf, size, "%s/%s", env->exe_dir, built);
	return buf;
}

const char *cli_plugin_dir(const cli_env_t *env, char *buf, size_t size)
{
	return cli_own_dir(env, "lib/nnnkit/plugins", "plugins", buf, size);
}

nnn_ctx_t *cli_ctx(cli_env_t *env)
{
	nnn_diags_t d;
	char dir[4096];
	if (env->ctx)
		return env->ctx;
	nnn_diags_init(&d);
	if (nnn_ctx_new(&env->ctx, &d) != NNN_OK) {
		cli_report(env, "plugin registry", &d, NNN_E_NOMEM);
		nnn_diags_free(&d);
		return NULL;
	}
	/* Every source through one discovery: scanned in a child first, one
	 * rule for who provides an ID, every failure an exit code 3. */
	nnn_discover_opts_t o = {
		.size = sizeof o,
		.files = env->plugins,
		.nfiles = env->nplugins,
		.search = !env->no_default,
		.installed_dir = env->no_default ? NULL : cli_plugin_dir(env, dir, sizeof dir),
	};
	if (nnn_plugin_discover(env->ctx, &o, &d) != NNN_OK)
		env->plugin_failed = 1;
	for (size_t i = 0; i < d.n; i++) {
		char buf[NNN_PATH_MAX + NNN_MSG_MAX + 512];
		/* A plugin's messages are its own text: escaped like a file's. */
		cli_say(stderr, "nnnkit: %s\n", nnn_diag_format(&d.v[i], buf, sizeof buf));
	}
	if (d.dropped)
		fprintf(stderr, "nnnkit: %zu more plugin problems not shown (nnnkit plugins -v)\n", d.dropped);
	nnn_diags_free(&d);
	/* Plugins that loaded with warnings (IDs outside the schema's ID policy). */
	for (size_t i = 0, n = nnn_ctx_report(env->ctx, 0, NULL); i < n; i++) {
		nnn_plugin_report_t r;
		nnn_ctx_report(env->ctx, i, &r);
		if (r.status == NNN_OK && !strcmp(r.stage, "loaded")) {
			char prefix[4200];
			snprintf(prefix, sizeof prefix, "nnnkit: %s: ", r.path);
			cli_print_warnings(stderr, prefix, &r);
		}
	}
	return env->ctx;
}

void cli_print_warnings(FILE *f, const char *prefix, const nnn_plugin_report_t *r)
{
	for (const char *p = r->message; p && *p;) {
		int n = (int)strcspn(p, "\n");
		cli_say(f, "%swarning: %.*s\n", prefix, n, p); /* the prefix names the plugin's file */
		p += n + (p[n] == '\n');
	}
}

void cli_run_args(const cli_args_t *a, cli_run_args_t *r)
{
	r->batch = (long)cli_num(a, "batch", NNN_RUN_BATCH);
	r->threads = (long)cli_num(a, "threads", 1);
	r->max_bytes = cli_num(a, "max-tensor-bytes", 0);
	const char *compat = cli_str(a, "conv-compat");
	r->compat = compat && !strcmp(compat, "original") ? NNN_COMPAT_CONV_ORIGINAL : 0;
}

nnn_run_opts_t cli_run_opts(const cli_run_args_t *r)
{
	nnn_run_opts_t o = { .size = sizeof o, .threads = (int)r->threads, .max_tensor_bytes = r->max_bytes,
		             .compat = r->compat };
	return o;
}

static int has_suffix(const char *s, const char *suf)
{
	size_t n = strlen(s), k = strlen(suf);
	return n >= k && !strcmp(s + n - k, suf);
}

/* ONNX (protobuf) has no magic bytes, but every writer puts ModelProto's
 * ir_version first: field 1, a varint (tag 0x08), a small number. */
static bool onnx_head(const unsigned char *b, size_t n)
{
	return n >= 2 && b[0] == 0x08 && b[1] >= 1 && b[1] < 0x80;
}

/* safetensors: a little-endian u64 header length within the format's cap
 * (so its high bytes are zero, which no JSON or ONNX file starts with),
 * then the JSON header's '{'. Tested before ONNX: a length of 0x108 starts
 * with the bytes ONNX's ir_version would. */
static bool safetensors_head(const unsigned char *b, size_t n)
{
	uint64_t len = 0;
	for (int i = 0; i < 8 && (size_t)i < n; i++)
		len |= (uint64_t)b[i] << 8 * i;
	return n >= 9 && b[8] == '{' && len >= 2 && len <= NNN_ST_HEADER_MAX;
}

cli_form_t cli_form(const char *path, const unsigned char *b, size_t n)
{
	size_t i = 0;
	if (n == 0) { /* a file to write: its name is all there is */
		if (has_suffix(path, ".json"))
			return CLI_JSON;
		if (has_suffix(path, ".onnx"))
			return CLI_ONNX;
		if (has_suffix(path, ".safetensors"))
			return CLI_SAFETENSORS;
		return has_suffix(path, ".nnn") ? CLI_NNN : CLI_UNKNOWN;
	}
	if (n >= 4 && !memcmp(b, "NNN.", 4))
		return CLI_NNN;
	if (n >= 6 && !memcmp(b, "\x93NUMPY", 6))
		return CLI_NPY;
	if (safetensors_head(b, n))
		return CLI_SAFETENSORS;
	if (onnx_head(b, n))
		return CLI_ONNX;
	while (i < n && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r'))
		i++;
	return i < n && b[i] == '{' ? CLI_JSON : CLI_UNKNOWN;
}

/* Maps path and tells its form from its first bytes, read with a checked
 * read: opened once, without blocking. */
static nnn_status_t open_form(const char *path, nnn_file_t **f, cli_form_t *form, nnn_diags_t *d)
{
	unsigned char head[64];
	size_t size;
	nnn_status_t st = nnn_file_map(path, f, d);
	if (st != NNN_OK)
		return st;
	nnn_file_bytes(*f, &size);
	size = size < sizeof head ? size : sizeof head;
	if ((st = nnn_file_read(*f, 0, head, size, d)) != NNN_OK) {
		nnn_file_close(*f);
		*f = NULL;
		return st;
	}
	*form = cli_form(path, head, size);
	return NNN_OK;
}

/* A model in another form than .nnn, read whole: JSON, ONNX, safetensors; a .npy array
 * is refused, saying where it goes. */
static nnn_status_t read_other(cli_env_t *env, const char *path, cli_form_t form, nnn_model_t **m, nnn_diags_t *d)
{
	if (form == CLI_JSON) {
		nnn_json_read_opts_t o = { .ctx = cli_ctx(env) };
		return nnn_json_read_file(path, &o, m, d);
	}
	if (form == CLI_NPY)
		return nnn_diags_add(d, NNN_E_MAGIC, 0, "",
		                     "this is a .npy array, not a model: a model is a .nnn file, its JSON form, an "
		                     "ONNX file or a safetensors file nnnkit wrote; give arrays to run or eval (--input, "
		                     "--inputs)");
	if (form == CLI_SAFETENSORS) {
		nnn_decode_opts_t o = { .ctx = cli_ctx(env) };
		return nnn_safetensors_read_file(path, &o, m, d);
	}
	/* What the importer did that changes how the model is fed (a
	 * channels-first graph) is said on stderr, whatever the command. */
	char note[768] = "";
	nnn_onnx_read_opts_t o = { .ctx = cli_ctx(env), .note_text = note, .note_size = sizeof note };
	nnn_status_t st = nnn_onnx_read_file(path, &o, m, d);
	if (st == NNN_OK && note[0])
		cli_say(stderr, "nnnkit: %s: %s\n", cli_name(path), note);
	return st;
}

/* Keeps the text of JSON model f, read as `path`, for cli_locate; without
 * memory or a free slot, its problems keep their offsets. */
static void keep_json(cli_env_t *env, const char *path, const nnn_file_t *f)
{
	size_t len;
	nnn_file_bytes(f, &len);
	if (env->njson_src >= (int)(sizeof env->json_src / sizeof env->json_src[0]))
		return;
	char *text = malloc(len ? len : 1);
	if (!text || nnn_file_read(f, 0, text, len, NULL) != NNN_OK) {
		free(text);
		return;
	}
	env->json_src[env->njson_src++] = (struct cli_json_src){ path, text, len };
}

void cli_env_free_sources(cli_env_t *env)
{
	for (int i = 0; i < env->njson_src; i++)
		free(env->json_src[i].text);
	env->njson_src = 0;
}

nnn_status_t cli_model_open(cli_env_t *env, const char *path, cli_model_t *out, nnn_diags_t *d)
{
	nnn_file_t *f;
	cli_form_t form;
	memset(out, 0, sizeof *out);
	nnn_status_t st = open_form(path, &f, &form, d);
	if (st != NNN_OK)
		return st;
	if (form == CLI_NNN || form == CLI_UNKNOWN) {
		/* Whoever opens a model this way reads every tensor value (convert,
		 * export): so from a copy read with checked reads, never from the
		 * mapping, which would raise SIGBUS if the file were cut short. An
		 * unknown form is the decoder's to name. */
		nnn_decode_opts_t o = { .ctx = cli_ctx(env), .flags = NNN_DECODE_COPY };
		st = nnn_file_decode(f, &o, &out->own, d);
	} else {
		if (form == CLI_JSON)
			keep_json(env, path, f);
		st = read_other(env, path, form, &out->own, d);
	}
	nnn_file_close(f);
	out->m = out->own;
	out->form = form;
	return st;
}

nnn_status_t cli_file_open(cli_env_t *env, const char *path, const nnn_decode_opts_t *opts, nnn_file_t **out,
                           nnn_diags_t *d)
{
	nnn_file_t *f;
	cli_form_t form;
	nnn_model_t *m = NULL;
	unsigned char *buf = NULL;
	size_t len = 0;
	*out = NULL;
	nnn_status_t st = open_form(path, &f, &form, d);
	if (st != NNN_OK)
		return st;
	if (form == CLI_NNN || form == CLI_UNKNOWN) {
		if (!opts) {
			*out = f;
			return NNN_OK;
		}
		nnn_file_close(f);
		return nnn_file_open(path, opts, out, d);
	}
	if (form == CLI_JSON)
		keep_json(env, path, f);
	nnn_file_close(f);
	st = read_other(env, path, form, &m, d);
	if (st == NNN_OK)
		st = nnn_model_encode(m, &buf, &len, d);
	nnn_model_free(m);
	if (st != NNN_OK)
		return st;
	/* What shows bytes and offsets shows those of the .nnn form. */
	if (!opts)
		cli_say(stderr, "nnnkit: %s: %s model: offsets are those of the .nnn file it converts to (nnnkit convert "
		                "%s OUT.nnn writes it)\n",
		        cli_name(path), form == CLI_JSON ? "a JSON" : form == CLI_ONNX ? "an ONNX" : "a safetensors",
		        cli_name(path));
	return nnn_file_of_copy(buf, len, opts, out, d);
}

void cli_model_close(cli_model_t *cm)
{
	nnn_file_close(cm->file);
	nnn_model_free(cm->own);
	memset(cm, 0, sizeof *cm);
}

int cli_samples(cli_env_t *env, const char *file, nnn_shape_t *x, uint64_t count, const nnn_shape_t *want)
{
	char sh[256], s2[256];
	file = cli_name(file);
	if (x->rank < 1 || x->dims[0] == 0) {
		return cli_fail_text(env, file, EXIT_INVALID,
		                     "shape %s: no samples; expected an array [samples, ...] with at least one",
		                     nnn_shape_format(x, sh, sizeof sh));
	}
	int64_t n = x->dims[0], per = (int64_t)count / n;
	if (!want) {
		if (x->rank < 2) {
			return cli_fail_text(env, file, EXIT_INVALID,
			                     "shape %s: one value per sample; expected [samples, ...] (or give --input-shape)",
			                     nnn_shape_format(x, sh, sizeof sh));
		}
		return EXIT_VALID;
	}
	nnn_shape_t w = *want;
	w.dims[0] = 1;
	if (nnn_shape_numel(&w) != per) {
		return cli_fail_text(env, file, EXIT_INVALID,
		                     "shape %s: %" PRId64 " values per sample, but --input-shape %s takes %" PRId64
		                     "; expected the model's input shape with any batch size, as for validate",
		                     nnn_shape_format(x, sh, sizeof sh), per, nnn_shape_format(want, s2, sizeof s2),
		                     nnn_shape_numel(&w));
	}
	w.dims[0] = n;
	*x = w;
	return EXIT_VALID;
}

int cli_unscaled(const char *file, const nnn_npy_view_t *x)
{
	float max = 0;
	if (x->kind != 'i' && x->kind != 'u')
		return 0;
	for (size_t i = 0; i < x->count; i++)
		max = x->data[i] > max ? x->data[i] : max;
	if (!(max > 1))
		return 0;
	/* uint8 is scaled by its range; wider integers by the largest value found. */
	double by = x->kind == 'u' && !strcmp(x->dtype, "uint8") ? 255.0 : (double)max;
	cli_say(stderr, "nnnkit: %s: warning: %s values (up to %.9g) are used as they are: nnnkit does not scale "
	                "inputs; if the model was trained on inputs scaled to [0, 1], save them scaled, e.g. with numpy: "
	                "np.save(path, x.astype('float32') / %.9g)\n",
	        cli_name(file), x->dtype, (double)max, by);
	return 1;
}

int cli_inputs(cli_env_t *env, const char *file, const nnn_shape_t *want, nnn_npy_view_t *x)
{
	nnn_diags_t d;
	nnn_diags_init(&d);
	nnn_status_t st = nnn_npy_map(file, x, &d);
	int code = st == NNN_OK ? cli_samples(env, file, &x->shape, x->count, want) : cli_fail(env, file, &d, st);
	nnn_diags_free(&d);
	if (code == EXIT_VALID)
		cli_unscaled(file, x);
	return code;
}

int cli_report_input(cli_env_t *env, const char *model, const char *input, const nnn_shape_t *x, int reshaped,
                     const nnn_diags_t *d, nnn_status_t st)
{
	char sh[256];
	/* A plan fails on its input's shape at the first layer: the input file
	 * is what is wrong (or --input-shape), not the model's tensors. */
	if (st == NNN_E_INPUT_SHAPE || (d && d->n && !strncmp(d->v[0].path, "layers[0]", 9) && st != NNN_E_NOMEM &&
	                                st != NNN_E_PLUGIN && st != NNN_E_IO && st != NNN_E_KERNEL)) {
		char buf[NNN_PATH_MAX + NNN_MSG_MAX + 512];
		/* Data that look channels-first: the shape engine's message says
		 * how to transpose them, and --input-shape would not help. */
		bool first = !reshaped && d && d->n && strstr(d->v[0].msg, "channels-first");
		nnn_diag_t g = { .line = 0 };
		if (d && d->n)
			cli_locate(env, model, &d->v[0], &g);
		cli_say(stderr, "nnnkit: %s: samples of shape %s do not fit the model's input (%s%s%s); %s\n",
		        cli_name(input), nnn_shape_format(x, sh, sizeof sh), cli_name(model), g.line ? ":" : ": ",
		        d && d->n ? nnn_diag_format(&g, buf, sizeof buf) : nnn_status_str(st),
		        first      ? "save them channels-last, transposed as said"
		        : reshaped ? "check --input-shape against 'nnnkit validate MODEL --input-shape ...'"
		                   : "give --input-shape with the model's input shape (nnnkit info MODEL shows its layers)");
		cli_json_error(env, cli_name(input), d, st, cli_exit(env, EXIT_INVALID));
		return EXIT_INVALID;
	}
	return cli_fail(env, model, d, st);
}

bool cli_const_text(const char *path, const unsigned char b[4], char text[5])
{
	const nnn_rdesc_t *r = &nnn_model_desc;
	for (int32_t i = 0; i < r->nfields; i++) {
		const nnn_fdesc_t *d = (const nnn_fdesc_t *)((const char *)r->fields + (size_t)i * r->field_size);
		if (!(d->flags & NNN_FD_CONST) || strcmp(d->name, path) || d->prim != NNN_PRIM_I32)
			continue;
		for (int k = 0; k < 4; k++)
			if (b[k] < 0x20 || b[k] > 0x7e)
				return false;
		memcpy(text, b, 4);
		text[4] = '\0';
		return true;
	}
	return false;
}
