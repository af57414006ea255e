/* main.c: nnnkit's entry point: options every command shares, then the
 * command. */
#define _POSIX_C_SOURCE 200809L
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static const cli_cmd_t *const commands[] = {
	&cmd_info, &cmd_validate, &cmd_dump, &cmd_convert, &cmd_export, &cmd_build, &cmd_run, &cmd_plugins,
	&cmd_conformance,
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static int usage(FILE *f, int code)
{
	fprintf(f, "usage: nnnkit [--plugin FILE]... [--no-default-plugins] COMMAND [OPTIONS] ...\n\ncommands:\n");
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(f, "  %-10s %s\n", commands[i]->name, commands[i]->summary);
	fprintf(f, "\nRun 'nnnkit COMMAND --help' for a command's options.\n"
	           "Plugins: files given with --plugin (anywhere on the line), then every *.so in the folders of\n"
	           "NNN_PLUGIN_PATH (colon-separated), then the installed plugin folder.\n"
	           "Exit codes: 0 success, 1 invalid model, 2 usage or system error, 3 plugin error.\n"
	           "Errors go to stderr as 'nnnkit: FILE: message'.\n");
	return code;
}

/* Takes the shared options out of argv, wherever they are. */
static int shared_options(int *argc, char **argv, cli_env_t *env)
{
	int k = 0;
	for (int i = 0; i < *argc; i++) {
		if (!strcmp(argv[i], "--plugin") || !strncmp(argv[i], "--plugin=", 9)) {
			const char *v = argv[i][8] == '=' ? argv[i] + 9 : (i + 1 < *argc ? argv[++i] : NULL);
			if (!v || !*v) {
				fprintf(stderr, "nnnkit: --plugin needs a file\n");
				return -1;
			}
			env->plugins[env->nplugins++] = v;
		} else if (!strcmp(argv[i], "--no-default-plugins")) {
			env->no_default = 1;
		} else if (!strcmp(argv[i], "--")) {
			while (i < *argc)
				argv[k++] = argv[i++];
		} else {
			argv[k++] = argv[i];
		}
	}
	*argc = k;
	argv[k] = NULL;
	return 0;
}

int main(int argc, char **argv)
{
	static char exe[PATH_MAX];
	cli_env_t env = { 0 };
	int code = EXIT_USAGE;

	env.plugins = calloc((size_t)argc + 1, sizeof *env.plugins);
	if (!env.plugins)
		return EXIT_USAGE;
	/* The installed plugin folder is found from the executable, never the cwd. */
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n > 0) {
		exe[n] = '\0';
		*strrchr(exe, '/') = '\0';
		env.exe_dir = exe;
	}
	if (shared_options(&argc, argv, &env) != 0) {
		code = EXIT_USAGE;
	} else if (argc < 2) {
		code = usage(stderr, EXIT_USAGE);
	} else if (cli_is_help(argv[1]) || !strcmp(argv[1], "help")) {
		code = usage(stdout, EXIT_VALID);
	} else {
		size_t i;
		for (i = 0; i < NCOMMANDS; i++)
			if (!strcmp(argv[1], commands[i]->name))
				break;
		if (i < NCOMMANDS) {
			code = commands[i]->run(argc - 1, argv + 1, &env);
		} else {
			fprintf(stderr, "nnnkit: unknown command '%s'\n", argv[1]);
			code = usage(stderr, EXIT_USAGE);
		}
	}
	nnn_ctx_free(env.ctx);
	free(env.plugins);
	return code;
}
