/* convert.c: `nnnkit convert IN OUT`: decode, then encode atomically. */
#include <string.h>

#include "cli.h"

static int run(int argc, char **argv, cli_env_t *env);

const cli_cmd_t cmd_convert = {
	"convert", "re-encode a model (.nnn to .nnn)",
	"usage: nnnkit convert IN.nnn OUT.nnn\n"
	"Decodes IN and writes it to OUT byte for byte as the format defines it. OUT is written\n"
	"atomically: a temporary file beside it, flushed, then renamed, so OUT is never half-written.\n",
	run,
};

static int has_suffix(const char *s, const char *suf)
{
	size_t n = strlen(s), k = strlen(suf);
	return n >= k && !strcmp(s + n - k, suf);
}

static int run(int argc, char **argv, cli_env_t *env)
{
	const char *files[2] = { NULL, NULL };
	int nfiles = 0, code = EXIT_VALID;
	nnn_diags_t d;
	nnn_file_t *f;
	nnn_status_t st;

	for (int i = 1; i < argc; i++) {
		if (cli_is_help(argv[i])) {
			fputs(cmd_convert.help, stdout);
			return EXIT_VALID;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			return cli_usage(&cmd_convert, "unknown option %s", argv[i]);
		} else if (nfiles == 2) {
			return cli_usage(&cmd_convert, "expected two files");
		}
		files[nfiles++] = argv[i];
	}
	if (nfiles != 2)
		return cli_usage(&cmd_convert, "expected IN and OUT");
	if (!has_suffix(files[1], ".nnn"))
		return cli_usage(&cmd_convert, "%s: only .nnn output is supported so far", files[1]);
	nnn_diags_init(&d);
	nnn_decode_opts_t opts = { .ctx = cli_ctx(env) };
	st = nnn_file_open(files[0], &opts, &f, &d);
	if (st != NNN_OK) {
		code = cli_report(files[0], &d, st);
	} else {
		st = nnn_model_write_file(nnn_file_model(f), files[1], &d);
		if (st != NNN_OK)
			code = cli_report(files[1], &d, st);
		nnn_file_close(f);
	}
	nnn_diags_free(&d);
	return code;
}
