/* main.c: nnnkit's entry point: options every command shares, then the
 * command. */
#define _POSIX_C_SOURCE 200809L
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nnn/plugin.h>

#include "cli.h"

#ifndef NNNKIT_VERSION
#define NNNKIT_VERSION "unknown"
#endif

static const cli_cmd_t *const commands[] = {
	&cmd_info, &cmd_validate, &cmd_dump, &cmd_map, &cmd_graph, &cmd_convert, &cmd_export, &cmd_build, &cmd_run,
	&cmd_eval, &cmd_plugins, &cmd_conformance, &cmd_diff, &cmd_stats, &cmd_edit,
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static int usage(FILE *f, int code)
{
	fprintf(f, "usage: nnnkit [--plugin FILE]... [--no-default-plugins] [--[no-]progress] COMMAND [OPTIONS] ...\n"
	           "       nnnkit --version\n\ncommands:\n");
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(f, "  %-12s %s\n", commands[i]->name, commands[i]->summary);
	/* From the generated codec, so this never disagrees with the schema. */
	fprintf(f, "\nFormat (the schema's types; plugins add more, see nnnkit plugins -v):\n"
	           "  layer types: %s\n  activations: %s\n",
	        nnn_type_layer_id.names, nnn_type_activation_id.names);
	fprintf(f, "\nRun 'nnnkit COMMAND --help' for a command's options.\n"
	           "Plugins: files given with --plugin (anywhere on the line), then every *.so in the folders of\n"
	           "NNN_PLUGIN_PATH (colon-separated), then the installed plugin folder.\n"
	           "Progress: run, eval and conformance draw a progress bar on stderr when it is a terminal\n"
	           "and TERM is not dumb; --progress or NNNKIT_PROGRESS=1 forces it on, --no-progress or\n"
	           "NNNKIT_PROGRESS=0 off (the option wins over the variable).\n"
	           "Every command that reads a model loads these first, whatever the model holds. An ID is\n"
	           "provided by the first source that has it (a --plugin file, then the folders in order, then\n"
	           "the installed one); two plugins of one source with one ID conflict, and neither provides it.\n"
	           "Exit codes: 0 success, 1 invalid model or data, 2 usage or system error, 3 plugin error (any\n"
	           "plugin that fails to load, from any source, or a kernel no plugin provides).\n"
	           "Errors go to stderr as 'nnnkit: FILE: message'.\n");
	return code;
}

/* Edit distance of two short words (insertions, deletions, substitutions). */
static size_t distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), row[32];
	if (la >= 32 || lb >= 32)
		return 32;
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j];
			size_t best = diag + (a[i - 1] != b[j - 1]);
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

/* The command a mistyped or abbreviated word most likely meant, or NULL. */
static const char *suggest(const char *word)
{
	const char *best = NULL;
	size_t best_d = 3; /* more than two edits away is no longer a typo */
	int prefixes = 0;
	for (size_t i = 0; i < NCOMMANDS; i++) {
		const char *name = commands[i]->name;
		size_t d = strncmp(name, word, strlen(word)) == 0 ? 0 : distance(word, name);
		prefixes += d == 0;
		if (d < best_d) {
			best_d = d;
			best = name;
		}
	}
	/* "con" could be convert or conformance: the full list says more. */
	return prefixes > 1 ? NULL : best;
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
		} else if (!strcmp(argv[i], "--progress") || !strcmp(argv[i], "--no-progress")) {
			env->progress = argv[i][2] == 'p';
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
	cli_env_t env = { .progress = -1 };
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
	} else if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		printf("nnnkit %s (plugin ABI %d.%d, schema layout 0x%08x)\n", NNNKIT_VERSION, NNN_ABI_MAJOR, NNN_ABI_MINOR,
		       (unsigned)NNN_SCHEMA_LAYOUT);
		code = EXIT_VALID;
	} else {
		size_t i;
		for (i = 0; i < NCOMMANDS; i++)
			if (!strcmp(argv[1], commands[i]->name))
				break;
		int help = 0;
		for (int k = 2; k < argc; k++)
			help |= cli_is_help(argv[k]);
		if (i < NCOMMANDS) {
			/* The one loading rule: every command that reads a model loads
			 * the configured plugins first, whatever the files hold.
			 * `plugins` lists (or checks) them its own way. */
			if (commands[i] != &cmd_plugins && !help && !cli_ctx(&env))
				code = EXIT_USAGE;
			else
				code = cli_exit(&env, commands[i]->run(argc - 1, argv + 1, &env));
		} else {
			const char *guess = suggest(argv[1]);
			if (guess) {
				fprintf(stderr, "nnnkit: unknown command '%s'; did you mean '%s'? (nnnkit --help lists them)\n",
				        argv[1], guess);
				code = EXIT_USAGE;
			} else {
				fprintf(stderr, "nnnkit: unknown command '%s'\n", argv[1]);
				code = usage(stderr, EXIT_USAGE);
			}
		}
	}
	nnn_ctx_free(env.ctx);
	free(env.plugins);
	return code;
}
