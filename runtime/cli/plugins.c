/* plugins.c: `nnnkit plugins`: every candidate, what happened to it, why. */
#define _POSIX_C_SOURCE 200809L
#include <string.h>

#include "cli.h"

static int run(const cli_args_t *a, cli_env_t *env);

static const cli_opt_t plugins_opts[] = {
	{ "verbose", 'v', CLI_FLAG, 0, NULL,
	  .help = "also show each failure's full message, each ID's name, and each warning (an ID outside the third-party "
	  "range that the schema does not record as taken)" },
	{ "check", 0, CLI_IN, 0, "FILE",
	  "scan FILE alone (in a child process) and load it if it passed: what would happen to it on the search path, "
	  "without the other plugins", .nodash = "a plugin is loaded from a file" },
	{ NULL },
};

const cli_cmd_t cmd_plugins = {
	.name = "plugins",
	.summary = "list the plugins found, what each provides, and why any failed",
	.main = run,
	.opts = CLI_OPTS(plugins_opts, cli_opts_json),
	.exits = CLI_EXIT(0) | CLI_EXIT(2) | CLI_EXIT(3),
	.exit_what = { [0] = "every candidate loaded", [3] = "a candidate failed to load, or two conflict" },
	.own_plugins = 1,
	.help = "usage: nnnkit [--plugin FILE]... plugins [-v] [--check FILE] [--json]\n"
	"Tries every plugin the search finds (--plugin files, then NNN_PLUGIN_PATH, then the installed\n"
	"folder) and prints one line per candidate: its file, what happened and the IDs it provides.\n"
	"Each candidate is loaded in a child process first, so one that crashes, exits or hangs while\n"
	"loading is reported with its stage and never loaded (NNN_PLUGIN_SCAN_TIMEOUT_MS, 5000 by\n"
	"default, limits each; verdicts are cached in NNN_PLUGIN_CACHE, by default\n"
	"~/.cache/nnnkit/plugin-scan.cache, and NNN_PLUGIN_CACHE= turns the cache off).\n"
	"An ID goes to the first source that has it; a later one's is 'shadowed by' it; two plugins\n"
	"of one source with one ID conflict, and neither provides it.\n"
	"--json: one JSON object, every candidate with every field (docs/cli-json.md).\n",
};

/* A plugin's own text (name, version, type names, messages), escaped (cli_esc). */
static void say(const char *s)
{
	cli_esc_print(stdout, s ? s : "", s ? strlen(s) : 0, NNN_ESC_MSG);
}

static void say_line(const char *indent, const char *s)
{
	fputs(indent, stdout);
	say(s);
	putchar('\n');
}

/* Who provides layer (or activation) ID `id` in ctx, for the text and the
 * JSON listing alike: returns the registered type's name and puts the
 * providing plugin's file in *path, each NULL when there is none. */
static const char *provider(const nnn_ctx_t *ctx, int layer, int id, const char **path)
{
	*path = NULL;
	if (layer) {
		const nnn_layer_type_t *t = nnn_ctx_layer(ctx, id, path);
		return t ? t->name : NULL;
	}
	const nnn_activation_type_t *t = nnn_ctx_activation(ctx, id, path);
	return t ? t->name : NULL;
}

/* The IDs a candidate declared: who provides each, when not this one. */
static void print_ids(const nnn_ctx_t *ctx, const nnn_plugin_report_t *r, int verbose)
{
	for (int i = 0; i < r->nlayers + r->nactivations; i++) {
		int layer = i < r->nlayers, id = layer ? r->layer_ids[i] : r->activation_ids[i - r->nlayers];
		const char *path, *name = provider(ctx, layer, id, &path);
		printf("%s%s %d", i ? ", " : "    provides ", layer ? "layer" : "activation", id);
		if (verbose && name) {
			putchar(' ');
			say(name);
		}
		if (!path)
			printf(" (provided by none: see the conflict)");
		else if (strcmp(path, r->path)) {
			printf(" (shadowed by ");
			say(path);
			putchar(')');
		}
	}
	if (r->nlayers || r->nactivations)
		putchar('\n');
}

static void list(const nnn_ctx_t *ctx, int verbose)
{
	size_t n = nnn_ctx_report(ctx, 0, NULL);
	for (size_t i = 0; i < n; i++) {
		nnn_plugin_report_t r;
		nnn_ctx_report(ctx, i, &r);
		say(r.path);
		printf(": %s", r.stage);
		if (r.name) {
			printf(" (");
			say(r.name);
			putchar(' ');
			say(r.version);
			putchar(')');
		}
		putchar('\n');
		if (r.status != NNN_OK) {
			if (verbose)
				say_line("    ", r.message);
		} else if (!strcmp(r.stage, "loaded")) {
			print_ids(ctx, &r, verbose);
			if (verbose)
				cli_print_warnings(stdout, "    ", &r);
		} else if (verbose) {
			say_line("    ", r.message);
		}
	}
	if (n == 0)
		printf("no plugins found\n");
}

static void json_text(const char *s)
{
	if (s)
		cli_json_str(stdout, s, strlen(s));
	else
		fputs("null", stdout);
}

/* The IDs of one kind a candidate declared, and who provides each. */
static void json_ids(const nnn_ctx_t *ctx, const nnn_plugin_report_t *r, int layer)
{
	int n = layer ? r->nlayers : r->nactivations;
	printf("[");
	for (int i = 0; i < n; i++) {
		int id = layer ? r->layer_ids[i] : r->activation_ids[i];
		const char *path, *name = provider(ctx, layer, id, &path);
		printf("%s{\"id\": %d, \"name\": ", i ? ", " : "", id);
		json_text(name);
		printf(", \"provided_by\": ");
		json_text(path);
		putchar('}');
	}
	printf("]");
}

/* docs/cli-json.md, "plugins". */
static void list_json(const nnn_ctx_t *ctx, const char *installed, const nnn_diags_t *d, int code)
{
	size_t n = nnn_ctx_report(ctx, 0, NULL);
	printf("{\"installed_dir\": ");
	json_text(installed);
	printf(", \"candidates\": [");
	for (size_t i = 0; i < n; i++) {
		nnn_plugin_report_t r;
		nnn_ctx_report(ctx, i, &r);
		printf("%s\n  {\"path\": ", i ? "," : "");
		json_text(r.path);
		printf(", \"stage\": ");
		json_text(r.stage);
		printf(", \"ok\": %s, \"code\": \"%s\", \"name\": ", r.status == NNN_OK ? "true" : "false",
		       nnn_status_name(r.status));
		json_text(r.name);
		printf(", \"version\": ");
		json_text(r.version);
		printf(", \"message\": ");
		json_text(r.message);
		printf(", \"layers\": ");
		json_ids(ctx, &r, 1);
		printf(", \"activations\": ");
		json_ids(ctx, &r, 0);
		putchar('}');
	}
	printf("%s]", n ? "\n" : "");
	if (code != EXIT_VALID) {
		printf(", \"error\": ");
		cli_json_error_obj(stdout, NULL, NULL, d, code == EXIT_PLUGIN ? NNN_E_PLUGIN : NNN_OK, code);
		printf(", \"problems\": ");
		cli_json_problems(stdout, NULL, NULL, d);
	}
	printf("}\n");
}

/* FILE alone, through the same discovery as every command. */
static int check(cli_env_t *env, const char *file, int verbose)
{
	nnn_ctx_t *ctx;
	nnn_diags_t d;
	const char *files[1] = { file };
	nnn_discover_opts_t o = { .size = sizeof o, .files = files, .nfiles = 1 };
	nnn_diags_init(&d);
	if (nnn_ctx_new(&ctx, &d) != NNN_OK) {
		int code = cli_fail(env, "plugins --check", &d, NNN_E_NOMEM);
		nnn_diags_free(&d);
		return code;
	}
	nnn_status_t st = nnn_plugin_discover(ctx, &o, &d);
	int code = cli_report(env, "plugins --check", &d, st);
	if (env->json)
		list_json(ctx, NULL, &d, code), env->json_done = 1;
	else
		list(ctx, verbose);
	nnn_diags_free(&d);
	nnn_ctx_free(ctx);
	return code;
}

static int run(const cli_args_t *a, cli_env_t *env)
{
	int verbose = cli_flag(a, "verbose");
	const char *checked = cli_str(a, "check");
	char dir[4096];
	if (checked)
		return check(env, checked, verbose);
	nnn_ctx_t *ctx = cli_ctx(env);
	if (!ctx)
		return EXIT_USAGE;
	int code = env->plugin_failed ? EXIT_PLUGIN : EXIT_VALID;
	if (env->json) {
		list_json(ctx, cli_plugin_dir(env, dir, sizeof dir), NULL, code);
		env->json_done = 1;
		return code;
	}
	cli_say(stdout, "search: --plugin files, NNN_PLUGIN_PATH, %s\n", cli_plugin_dir(env, dir, sizeof dir));
	list(ctx, verbose);
	return code;
}
