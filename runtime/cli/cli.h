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

extern const cli_cmd_t cmd_info, cmd_validate, cmd_dump, cmd_convert, cmd_run, cmd_plugins, cmd_conformance, cmd_map,
	cmd_graph;

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
/* Length (1-4) of the valid UTF-8 sequence at s (n >= 1 bytes left), or 0
 * when the bytes there are not one (overlong, surrogate, cut short...). */
size_t cli_utf8_seq(const unsigned char *s, size_t n);
/* Prints a field's value as `nnnkit dump` shows it: the number and its enum
 * name, a string's length and escaped text, an array's count and its first
 * elements (`values` of a float array, 16 of an int array). */
void cli_field_value(FILE *out, const nnn_field_t *f, int values);
/* The --input-shape option (a separate or an '=' value) at argv[*i], for
 * commands that take one: -1 when argv[*i] is something else; 0 when it
 * parsed into *out (*i moved past its value); else the exit code after the
 * usage message. */
int cli_input_shape(const cli_cmd_t *cmd, int argc, char **argv, int *i, nnn_shape_t *out);
/* Writes n bytes to `path` atomically, or to stdout when path is "-";
 * prints what failed. Returns an exit code. */
int cli_emit(const char *path, const void *buf, size_t n);

#endif
