/* clirun.h: runs the nnnkit executable as a user would, for the CLI tests.
 * The binary is nnnkit_bin() (shell.h): $NNNKIT, or build/nnnkit. */
#ifndef NNN_TEST_CLIRUN_H
#define NNN_TEST_CLIRUN_H

#include <stddef.h>

#include <nnn/status.h>

#include "shell.h"

typedef struct run {
	int code;
	char out[65536];
	char err[16384];
} run_t;

/* A file's text into buf (NUL-terminated, cut to size; empty when it
 * cannot be read); slurp then removes the file. */
void slurp_keep(const char *path, char *buf, size_t size);
void slurp(const char *path, char *buf, size_t size);

/* Runs `env PRE nnnkit ARGS` through the shell (PRE such as
 * "NNNKIT_PROGRESS=1" or "-u TERM"; "" runs nnnkit directly) with stdin
 * from /dev/null; fills the exit code, stdout and stderr (each cut to its
 * buffer). */
void nnnkit_env(run_t *r, const char *pre, const char *args);
#define nnnkit(r, args) nnnkit_env((r), "", (args))

/* nnnkit with printf-formatted arguments; fails the test when they do not
 * fit in 4 KiB. */
void nnnkitf(run_t *r, const char *fmt, ...) NNN_PRINTF(2, 3);

#endif
