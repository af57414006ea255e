/* cli.h: what the nnnkit commands share. */
#ifndef NNN_CLI_H
#define NNN_CLI_H

#include <stdio.h>

#include <nnn/file.h>
#include <nnn/validate.h>

/* Exit codes, documented in nnnkit --help and README.md. */
enum {
	EXIT_VALID = 0,   /* success; the model is valid */
	EXIT_INVALID = 1, /* the input is not a valid model */
	EXIT_USAGE = 2,   /* bad command line, or a system error (I/O, memory) */
	EXIT_PLUGIN = 3   /* a plugin failed to load */
};

typedef struct cli_cmd {
	const char *name;
	const char *summary;
	const char *help; /* full usage text */
	int (*run)(int argc, char **argv);
} cli_cmd_t;

extern const cli_cmd_t cmd_info, cmd_validate, cmd_dump, cmd_convert;

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

#endif
