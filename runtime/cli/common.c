/* common.c: reporting and small helpers shared by the commands. */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

#include <nnn/json.h>

#include "cli.h"

int cli_exit_code(nnn_status_t st)
{
	switch (st) {
	case NNN_OK:
		return EXIT_VALID;
	case NNN_E_IO:
	case NNN_E_NOMEM:
	case NNN_E_USAGE:
		return EXIT_USAGE;
	default:
		return EXIT_INVALID;
	}
}

int cli_report(const char *file, const nnn_diags_t *d, nnn_status_t st)
{
	char buf[NNN_PATH_MAX + NNN_MSG_MAX + 512];
	/* A problem with a line reads "FILE:LINE:COLUMN: path: ...", as compilers say it. */
	for (size_t i = 0; d && i < d->n; i++)
		fprintf(stderr, "nnnkit: %s%s%s\n", file, d->v[i].line ? ":" : ": ",
		        nnn_diag_format(&d->v[i], buf, sizeof buf));
	if (d && d->dropped)
		fprintf(stderr, "nnnkit: %s: %zu more problems not shown\n", file, d->dropped);
	if ((!d || !d->n) && st != NNN_OK)
		fprintf(stderr, "nnnkit: %s: %s\n", file, nnn_status_str(st));
	return cli_exit_code(st);
}

int cli_usage(const cli_cmd_t *cmd, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "nnnkit: %s: ", cmd->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n%s", cmd->help);
	return EXIT_USAGE;
}

int cli_is_help(const char *arg)
{
	return !strcmp(arg, "-h") || !strcmp(arg, "--help");
}

void cli_json_str(FILE *f, const char *s, size_t n)
{
	fputc('"', f);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c < 0x20 || c == 0x7f)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

const char *cli_plugin_dir(const cli_env_t *env, char *buf, size_t size)
{
	char probe[4096];
	if (!env->exe_dir)
		return NULL;
	/* Installed: PREFIX/bin/nnnkit and PREFIX/lib/nnnkit/plugins. Build tree:
	 * build/nnnkit and build/plugins. */
	snprintf(probe, sizeof probe, "%s/../lib/nnnkit/plugins", env->exe_dir);
	if (access(probe, F_OK) == 0) {
		snprintf(buf, size, "%s", probe);
		return buf;
	}
	snprintf(buf, size, "%s/plugins", env->exe_dir);
	return buf;
}

nnn_ctx_t *cli_ctx(cli_env_t *env)
{
	nnn_diags_t d;
	char dir[4096];
	if (env->ctx)
		return env->ctx;
	nnn_diags_init(&d);
	if (nnn_ctx_new(&env->ctx, &d) != NNN_OK) {
		cli_report("nnnkit", &d, NNN_E_NOMEM);
		nnn_diags_free(&d);
		return NULL;
	}
	for (int i = 0; i < env->nplugins; i++) {
		if (nnn_plugin_load(env->ctx, env->plugins[i], &d) != NNN_OK)
			env->plugin_failed = 1;
	}
	/* A plugin found by the search that fails is reported, not fatal. */
	if (!env->no_default && nnn_plugin_load_default(env->ctx, cli_plugin_dir(env, dir, sizeof dir), &d) != NNN_OK)
		fprintf(stderr, "nnnkit: some plugins found by the search were not loaded (nnnkit plugins -v)\n");
	for (size_t i = 0; i < d.n; i++) {
		char buf[NNN_PATH_MAX + NNN_MSG_MAX + 512];
		fprintf(stderr, "nnnkit: %s\n", nnn_diag_format(&d.v[i], buf, sizeof buf));
	}
	nnn_diags_free(&d);
	return env->ctx;
}

static int has_suffix(const char *s, const char *suf)
{
	size_t n = strlen(s), k = strlen(suf);
	return n >= k && !strcmp(s + n - k, suf);
}

cli_form_t cli_form(const char *path, int sniff)
{
	unsigned char b[64];
	FILE *f = sniff && strcmp(path, "-") ? fopen(path, "rb") : NULL;
	size_t n = f ? fread(b, 1, sizeof b, f) : 0, i = 0;
	if (f)
		fclose(f);
	if (n >= 4 && !memcmp(b, "NNN.", 4))
		return CLI_NNN;
	while (i < n && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r'))
		i++;
	if (i < n && b[i] == '{')
		return CLI_JSON;
	if (has_suffix(path, ".nnn"))
		return CLI_NNN;
	if (has_suffix(path, ".json"))
		return CLI_JSON;
	return CLI_UNKNOWN;
}

nnn_status_t cli_model_open(cli_env_t *env, const char *path, cli_model_t *out, nnn_diags_t *d)
{
	nnn_status_t st;
	memset(out, 0, sizeof *out);
	if (cli_form(path, 1) == CLI_JSON) {
		nnn_json_read_opts_t o = { .ctx = cli_ctx(env) };
		st = nnn_json_read_file(path, &o, &out->own, d);
		out->m = out->own;
	} else {
		nnn_decode_opts_t o = { .ctx = cli_ctx(env) };
		st = nnn_file_open(path, &o, &out->file, d);
		if (st == NNN_OK)
			out->m = nnn_file_model(out->file);
	}
	return st;
}

void cli_model_close(cli_model_t *cm)
{
	nnn_file_close(cm->file);
	nnn_model_free(cm->own);
	memset(cm, 0, sizeof *cm);
}
