/* cli.h: what the nnnkit commands share. */
#ifndef NNN_CLI_H
#define NNN_CLI_H

#include <stdio.h>

#include <nnn/context.h>
#include <nnn/file.h>
#include <nnn/validate.h>

/* Exit codes, documented in nnnkit --help and README.md. */
enum {
	EXIT_VALID = 0,   /* success; the model is valid */
	EXIT_INVALID = 1, /* the input is not a valid model */
	EXIT_USAGE = 2,   /* bad command line, or a system error (I/O, memory) */
	EXIT_PLUGIN = 3   /* a plugin failed to load */
};

/* What every command shares: the plugins asked for, and the context that
 * holds them, made on first use. */
typedef struct cli_env {
	const char **plugins; /* --plugin FILE, in order */
	int nplugins;
	int no_default;       /* --no-default-plugins */
	const char *exe_dir;  /* folder of the nnnkit executable */
	nnn_ctx_t *ctx;
	int plugin_failed;    /* an explicitly named plugin failed */
} cli_env_t;

typedef struct cli_cmd {
	const char *name;
	const char *summary;
	const char *help; /* full usage text */
	int (*run)(int argc, char **argv, cli_env_t *env);
} cli_cmd_t;

extern const cli_cmd_t cmd_info, cmd_validate, cmd_dump, cmd_convert, cmd_export, cmd_build, cmd_run, cmd_plugins,
	cmd_conformance;

/* The context with the plugins loaded: explicit ones first, then (unless
 * --no-default-plugins) NNN_PLUGIN_PATH and the installed folder. Failures
 * are printed; NULL only when even the context cannot be made. */
nnn_ctx_t *cli_ctx(cli_env_t *env);
/* The installed plugin folder, relative to the executable (buf). */
const char *cli_plugin_dir(const cli_env_t *env, char *buf, size_t size);

/* Prints "nnnkit: FILE: message" for every problem; returns the exit code
 * the first problem's status calls for. */
int cli_report(const char *file, const nnn_diags_t *d, nnn_status_t st);
/* Prints "nnnkit: CMD: message" and the usage hint; returns EXIT_USAGE. */
int cli_usage(const cli_cmd_t *cmd, const char *fmt, ...) NNN_PRINTF(2, 3);
/* True when argv[i] is -h or --help. */
int cli_is_help(const char *arg);
/* Prints s as a JSON string (with quotes) of n bytes. */
void cli_json_str(FILE *f, const char *s, size_t n);
/* Exit code for a status. */
int cli_exit_code(nnn_status_t st);

/* The two forms of a model. */
typedef enum cli_form { CLI_UNKNOWN, CLI_NNN, CLI_JSON } cli_form_t;
/* A file's form: from its first bytes ('NNN.', or '{' after white space)
 * when `sniff` and it can be read, else from its extension (.nnn, .json). */
cli_form_t cli_form(const char *path, int sniff);

/* A model read from either form: `m` is borrowed from `file` (.nnn) or
 * owned (`own`, JSON). Release with cli_model_close. */
typedef struct cli_model {
	nnn_file_t *file;
	nnn_model_t *own;
	const nnn_model_t *m;
} cli_model_t;
/* Reads MODEL in the form cli_form finds; problems go to d. */
nnn_status_t cli_model_open(cli_env_t *env, const char *path, cli_model_t *out, nnn_diags_t *d);
void cli_model_close(cli_model_t *cm);

#endif
