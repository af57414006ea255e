/* common.c: reporting and small helpers shared by the commands. */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
	for (size_t i = 0; d && i < d->n; i++)
		fprintf(stderr, "nnnkit: %s: %s\n", file, nnn_diag_format(&d->v[i], buf, sizeof buf));
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

int cli_model_arg(const cli_cmd_t *cmd, const char *arg, const char **model)
{
	if (arg[0] == '-' && arg[1])
		return cli_usage(cmd, "unknown option or missing value: %s", arg);
	if (*model)
		return cli_usage(cmd, "one model at a time");
	*model = arg;
	return EXIT_VALID;
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

int cli_run_option(const cli_cmd_t *cmd, int argc, char **argv, int *i, cli_run_args_t *r)
{
	const char *opt = argv[*i], *v = *i + 1 < argc ? argv[*i + 1] : NULL;
	char *end;
	if (!v)
		return -1;
	if (!strcmp(opt, "--batch") || !strcmp(opt, "--threads")) {
		long n = strtol(v, &end, 10);
		if (*end || n < 1 || n > 1 << 20)
			return cli_usage(cmd, "%s needs a count from 1 to 1048576, not '%s'", opt, v);
		*(opt[2] == 'b' ? &r->batch : &r->threads) = n;
	} else if (!strcmp(opt, "--max-tensor-bytes")) {
		r->max_bytes = strtoull(v, &end, 10);
		if (*end || r->max_bytes == 0 || *v == '-')
			return cli_usage(cmd, "--max-tensor-bytes needs a byte count > 0, not '%s'", v);
	} else {
		return -1;
	}
	++*i;
	return EXIT_VALID;
}

nnn_run_opts_t cli_run_opts(const cli_run_args_t *r)
{
	nnn_run_opts_t o = { .size = sizeof o, .threads = (int)r->threads, .max_tensor_bytes = r->max_bytes };
	return o;
}
