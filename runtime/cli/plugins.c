/* plugins.c: `nnnkit plugins`: every candidate, what happened to it, why. */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"

static int run(int argc, char **argv, cli_env_t *env);

const cli_cmd_t cmd_plugins = {
	"plugins", "list the plugins found, what each provides, and why any failed",
	"usage: nnnkit [--plugin FILE]... plugins [-v] [--check FILE]\n"
	"Tries every plugin the search finds (--plugin files, then NNN_PLUGIN_PATH, then the installed\n"
	"folder) and prints one line per candidate: its file, what happened and the IDs it provides.\n"
	"  -v            also show each failure's full message, each ID's name, and each warning (an ID\n"
	"                outside the third-party range that the schema does not record as taken)\n"
	"  --check FILE  load FILE in a child process first, so a plugin that crashes while loading is\n"
	"                reported with its signal instead of taking nnnkit down; then list it\n"
	"Exit: 0 when every candidate loaded, 3 when any failed.\n",
	run,
};

/* A plugin's own text (name, version, type names), escaped (cli_esc). */
static void say(const char *s)
{
	cli_esc_print(stdout, s ? s : "", s ? strlen(s) : 0, CLI_ESC_MSG);
}

static void print_ids(const nnn_ctx_t *ctx, const nnn_plugin_report_t *r, int verbose)
{
	for (int i = 0; i < r->nlayers; i++) {
		const nnn_layer_type_t *t = nnn_ctx_layer(ctx, r->layer_ids[i], NULL);
		printf("%slayer %d%s", i ? ", " : "    provides ", r->layer_ids[i], verbose && t ? " " : "");
		say(verbose && t ? t->name : "");
	}
	for (int i = 0; i < r->nactivations; i++) {
		const nnn_activation_type_t *t = nnn_ctx_activation(ctx, r->activation_ids[i], NULL);
		printf("%sactivation %d%s", i || r->nlayers ? ", " : "    provides ", r->activation_ids[i],
		       verbose && t ? " " : "");
		say(verbose && t ? t->name : "");
	}
	if (r->nlayers || r->nactivations)
		putchar('\n');
}

/* Loads `path` in a child process; 0 when it loaded there, else prints why. */
static int check_in_child(const char *path)
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		perror("nnnkit: fork");
		return -1;
	}
	if (pid == 0) {
		nnn_ctx_t *ctx;
		nnn_diags_t d;
		nnn_diags_init(&d);
		int code = nnn_ctx_new(&ctx, &d) == NNN_OK && nnn_plugin_load(ctx, path, &d) == NNN_OK ? 0 : EXIT_PLUGIN;
		cli_report("plugins --check", &d, code ? NNN_E_PLUGIN : NNN_OK);
		/* No cleanup: the parent only wants to know the plugin survives loading. */
		_exit(code);
	}
	int status;
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	if (WIFSIGNALED(status)) {
		int sig = WTERMSIG(status);
		fprintf(stderr, "nnnkit: %s: crashed while loading (signal %d, %s): its entry point or a library it "
		        "loads is broken; report it to the plugin's authors, and do not put it on NNN_PLUGIN_PATH\n",
		        path, sig, strsignal(sig));
		return -1;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) != 0 && WEXITSTATUS(status) != EXIT_PLUGIN) {
		/* Not our exit code: something in the plugin ended the process. */
		fprintf(stderr, "nnnkit: %s: crashed while loading (exit status %d): its entry point or a library it "
		        "loads is broken; report it to the plugin's authors, and do not put it on NNN_PLUGIN_PATH\n",
		        path, WEXITSTATUS(status));
		return -1;
	}
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

static int run(int argc, char **argv, cli_env_t *env)
{
	int verbose = 0, failed = 0;
	char dir[4096];
	for (int i = 1; i < argc; i++) {
		if (cli_is_help(argv[i])) {
			fputs(cmd_plugins.help, stdout);
			return EXIT_VALID;
		} else if (!strcmp(argv[i], "-v") || !strcmp(argv[i], "--verbose")) {
			verbose = 1;
		} else if (!strcmp(argv[i], "--check") && i + 1 < argc) {
			if (check_in_child(argv[++i]) != 0)
				return EXIT_PLUGIN;
			env->plugins[env->nplugins++] = argv[i];
		} else {
			return cli_usage(&cmd_plugins, "unexpected argument %s", argv[i]);
		}
	}
	nnn_ctx_t *ctx = cli_ctx(env);
	if (!ctx)
		return EXIT_USAGE;
	printf("search: --plugin files, NNN_PLUGIN_PATH, %s\n", cli_plugin_dir(env, dir, sizeof dir));
	size_t n = nnn_ctx_report(ctx, 0, NULL);
	for (size_t i = 0; i < n; i++) {
		nnn_plugin_report_t r;
		nnn_ctx_report(ctx, i, &r);
		printf("%s: %s", r.path, r.stage);
		if (r.name) {
			printf(" (");
			say(r.name);
			putchar(' ');
			say(r.version);
			putchar(')');
		}
		putchar('\n');
		if (r.status != NNN_OK) {
			failed = 1;
			if (verbose)
				printf("    %s\n", r.message);
		} else if (!strcmp(r.stage, "loaded")) {
			print_ids(ctx, &r, verbose);
			if (verbose)
				cli_print_warnings(stdout, "    ", &r);
		} else if (verbose) {
			printf("    %s\n", r.message);
		}
	}
	if (n == 0)
		printf("no plugins found\n");
	return failed || env->plugin_failed ? EXIT_PLUGIN : EXIT_VALID;
}
