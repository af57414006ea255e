/* main.c: nnnkit's entry point: options every command shares, then the
 * command. */
#define _POSIX_C_SOURCE 200809L
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nnn/plugin.h>

#include <nnn/esc.h>

#include "cli.h"

#ifndef NNNKIT_VERSION
#define NNNKIT_VERSION "unknown"
#endif

static const cli_cmd_t *const commands[] = {
	&cmd_info, &cmd_validate, &cmd_dump, &cmd_map, &cmd_graph, &cmd_convert, &cmd_export, &cmd_build, &cmd_run,
	&cmd_eval, &cmd_plugins, &cmd_conformance, &cmd_testee, &cmd_diff, &cmd_stats, &cmd_edit,
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static int usage(FILE *f, int code)
{
	fprintf(f, "usage: nnnkit [GLOBAL OPTIONS] COMMAND [OPTIONS] [--] ARGS...\n"
	           "       nnnkit help [COMMAND]\n"
	           "       nnnkit --version\n\ncommands:\n");
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(f, "  %-12s %s\n", commands[i]->name, commands[i]->summary);
	fprintf(f, "\nGlobal options (before or after the command, anywhere before --):\n");
	for (const cli_opt_t *o = cli_opts_global; o->name; o++) {
		char lead[64];
		snprintf(lead, sizeof lead, "  --%s%s%s", o->name, o->metavar ? " " : "", o->metavar ? o->metavar : "");
		fprintf(f, "%-24s %s\n", lead, o->help);
	}
	/* From the generated codec, so this never disagrees with the schema. */
	fprintf(f, "\nFormat (the schema's types; plugins add more, see nnnkit plugins -v):\n"
	           "  layer types: %s\n  activations: %s\n",
	        nnn_type_layer_id.names, nnn_type_activation_id.names);
	fprintf(f, "\nRun 'nnnkit COMMAND --help' or 'nnnkit help COMMAND' for a command's options.\n"
	           "Conventions: '-' is standard input for a file read and standard output for a file written\n"
	           "where that can work (each command's help says where); -o/--output names what a command\n"
	           "writes; -- ends the options; binary output (.nnn, .npy) to a terminal needs --force.\n"
	           "Plugins: files given with --plugin (anywhere on the line), then every *.so in the folders of\n"
	           "NNN_PLUGIN_PATH (colon-separated), then the installed plugin folder.\n"
	           "Progress: run, eval and conformance draw a progress bar on stderr when it is a terminal\n"
	           "and TERM is not dumb; --progress or NNNKIT_PROGRESS=1 forces it on, --no-progress or\n"
	           "NNNKIT_PROGRESS=0 off (the option wins over the variable; any other value is an error).\n"
	           "Every command that reads a model loads these first, whatever the model holds. An ID is\n"
	           "provided by the first source that has it (a --plugin file, then the folders in order, then\n"
	           "the installed one); two plugins of one source with one ID conflict, and neither provides it.\n"
	           "Errors go to stderr as 'nnnkit: FILE: message'; usage errors as 'nnnkit COMMAND: problem'.\n"
	           "\nExit codes:\n");
	cli_exit_lines(f, NULL);
	return code;
}

static const cli_cmd_t *find_command(const char *name)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (!strcmp(name, commands[i]->name))
			return commands[i];
	return NULL;
}

/* The command a mistyped or abbreviated word most likely meant, or NULL. */
static const char *suggest(const char *word)
{
	const char *best = NULL;
	size_t best_d = 3; /* more than two edits away is no longer a typo */
	int prefixes = 0;
	for (size_t i = 0; i < NCOMMANDS; i++) {
		const char *name = commands[i]->name;
		size_t d = strncmp(name, word, strlen(word)) == 0 ? 0 : nnn_edit_distance(word, name);
		prefixes += d == 0;
		if (d < best_d) {
			best_d = d;
			best = name;
		}
	}
	/* "con" could be convert or conformance: the full list says more. */
	return prefixes > 1 ? NULL : best;
}

/* The global option argv[*i] is (from cli_opts_global), or NULL; *value
 * gets its value (from "--name=VALUE" or the next word; for a flag, what
 * follows '=', which is wrong), else NULL. */
static const cli_opt_t *global_option(int argc, char **argv, int *i, const char **value)
{
	const char *arg = argv[*i];
	*value = NULL;
	if (strncmp(arg, "--", 2))
		return NULL;
	for (const cli_opt_t *o = cli_opts_global; o->name; o++) {
		size_t n = strlen(o->name);
		if (strncmp(arg + 2, o->name, n) || (arg[2 + n] && arg[2 + n] != '='))
			continue;
		if (o->kind == CLI_FLAG) {
			*value = arg[2 + n] ? arg + 3 + n : NULL;
			return o;
		}
		*value = arg[2 + n] == '=' ? arg + 3 + n : *i + 1 < argc ? argv[++*i] : NULL;
		return o;
	}
	return NULL;
}

/* Takes the shared options (cli_opts_global) out of argv, wherever they
 * are before `--`. */
static int shared_options(int *argc, char **argv, cli_env_t *env)
{
	int k = 0;
	for (int i = 0; i < *argc; i++) {
		const char *v;
		const cli_opt_t *o = global_option(*argc, argv, &i, &v);
		if (!o) {
			if (!strcmp(argv[i], "--"))
				while (i < *argc)
					argv[k++] = argv[i++];
			else
				argv[k++] = argv[i];
			continue;
		}
		if (o->kind == CLI_FLAG && v) {
			fprintf(stderr, "nnnkit: --%s takes no value\nsee 'nnnkit --help'\n", o->name);
			return -1;
		}
		if (o->kind != CLI_FLAG && (!v || !*v || !strcmp(v, "-"))) {
			fprintf(stderr, "nnnkit: --%s needs %s%s%s%s\nsee 'nnnkit --help'\n", o->name,
			        o->kind == CLI_IN ? "a file" : "a value", v && !strcmp(v, "-") ? " ('-' cannot work: " : "",
			        v && !strcmp(v, "-") ? o->nodash : "", v && !strcmp(v, "-") ? ")" : "");
			return -1;
		}
		if (!strcmp(o->name, "plugin"))
			env->plugins[env->nplugins++] = v;
		else if (!strcmp(o->name, "no-default-plugins"))
			env->no_default = 1;
		else /* progress, no-progress */
			env->progress = !strcmp(o->name, "progress");
	}
	*argc = k;
	argv[k] = NULL;
	return 0;
}

/* `nnnkit help [COMMAND]`, and the hidden forms the build and the tests
 * use: --man (the man page's generated sections), --completion (bash),
 * --json (every table). */
static int help(int argc, char **argv)
{
	if (argc < 2)
		return usage(stdout, EXIT_VALID);
	if (argc > 2) {
		fprintf(stderr, "nnnkit help: one command at a time\nsee 'nnnkit --help'\n");
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--man"))
		cli_man(stdout, commands, NCOMMANDS);
	else if (!strcmp(argv[1], "--completion"))
		cli_completion(stdout, commands, NCOMMANDS);
	else if (!strcmp(argv[1], "--json"))
		cli_dump(stdout, commands, NCOMMANDS);
	else if (cli_is_help(argv[1]))
		return usage(stdout, EXIT_VALID);
	else if (find_command(argv[1]))
		cli_help(stdout, find_command(argv[1]));
	else {
		const char *guess = suggest(argv[1]);
		cli_say(stderr, "nnnkit help: unknown command '%s'%s%s%s\nsee 'nnnkit --help'\n", argv[1],
		        guess ? "; did you mean '" : "", guess ? guess : "", guess ? "'?" : "");
		return EXIT_USAGE;
	}
	return EXIT_VALID;
}

/* Whether cmd declares --json and argv asks for it (before any `--`):
 * known even when the rest of the line does not parse. */
static int wants_json(const cli_cmd_t *cmd, int argc, char **argv)
{
	int declared = 0;
	for (const cli_opt_t *const *frag = cmd->opts; frag && *frag; frag++)
		for (const cli_opt_t *o = *frag; o->name; o++)
			declared |= !strcmp(o->name, "json");
	for (int k = 1; declared && k < argc && strcmp(argv[k], "--"); k++)
		if (!strcmp(argv[k], "--json"))
			return 1;
	return 0;
}

/* One command: its arguments parsed by its tables, the plugins loaded,
 * then its work. With --json, a failure that printed no JSON object gets
 * the error object (cli_json_error): one object on stdout, always. */
static int command(const cli_cmd_t *cmd, int argc, char **argv, cli_env_t *env)
{
	cli_args_t *a;
	int code;
	if (!cmd->main) {
		/* The old form parses its own argv. */
		int help = 0;
		for (int k = 1; k < argc && strcmp(argv[k], "--"); k++)
			help |= cli_is_help(argv[k]);
		if (!help && (code = cli_check_env()) != EXIT_VALID)
			return code;
		if (!cmd->own_plugins && !help && !cli_ctx(env))
			return EXIT_USAGE;
		return cli_exit(env, cmd->run(argc, argv, env));
	}
	if (!(a = malloc(sizeof *a))) {
		fprintf(stderr, "nnnkit %s: out of memory\n", cmd->name);
		return EXIT_USAGE;
	}
	env->json = wants_json(cmd, argc, argv);
	code = cli_parse(cmd, argc, argv, a, env);
	for (int i = 0; code == EXIT_VALID && i < a->nvals; i++)
		if (!strcmp(a->val[i].opt->name, "json")) /* parsed: "--json" was no other option's value */
			env->json = a->val[i].given > 0;
	if (code == EXIT_VALID && a->help)
		cli_help(stdout, cmd);
	else if (code == EXIT_VALID && (code = cli_check_env()) == EXIT_VALID) {
		/* The one loading rule: every command that reads a model loads
		 * the configured plugins first, whatever the files hold.
		 * `plugins` lists (or checks) them its own way. */
		if (!cmd->own_plugins && !cli_ctx(env))
			code = EXIT_USAGE;
		else
			code = cli_exit(env, cmd->main(a, env));
	}
	if (!a->help)
		cli_json_error(env, NULL, NULL, NNN_OK, code);
	free(a);
	return code;
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
		code = help(argc - 1, argv + 1);
	} else if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		printf("nnnkit %s (plugin ABI %d.%d, schema layout 0x%08x)\n", NNNKIT_VERSION, NNN_ABI_MAJOR, NNN_ABI_MINOR,
		       (unsigned)NNN_SCHEMA_LAYOUT);
		code = EXIT_VALID;
	} else if (find_command(argv[1])) {
		code = command(find_command(argv[1]), argc - 1, argv + 1, &env);
	} else {
		const char *guess = suggest(argv[1]);
		if (guess) {
			cli_say(stderr, "nnnkit: unknown command '%s'; did you mean '%s'? (nnnkit --help lists them)\n",
			        argv[1], guess);
			code = EXIT_USAGE;
		} else {
			cli_say(stderr, "nnnkit: unknown command '%s'\nsee 'nnnkit --help' for the commands\n", argv[1]);
			code = EXIT_USAGE;
		}
	}
	nnn_ctx_free(env.ctx);
	cli_env_free_sources(&env);
	free(env.plugins);
	return code;
}
