/* shell.h: running shell commands from tests. */
#ifndef NNN_TEST_SHELL_H
#define NNN_TEST_SHELL_H

#include <stddef.h>

#include <nnn/status.h>

/* Runs a shell command made printf-style, its stdout and stderr captured
 * into out (optional; NUL-terminated, cut to size). Returns its exit
 * status, or 128 + the signal that ended it. */
int t_sh(char *out, size_t size, const char *fmt, ...) NNN_PRINTF(3, 4);

/* printf into a ring of 16 static buffers, so a few results can be live at
 * once (a test's expected messages); fails the test when one does not fit. */
const char *t_fmt(const char *fmt, ...) NNN_PRINTF(1, 2);

/* The path of the nnnkit executable: $NNNKIT (set by make test) when set
 * and not empty, else build/nnnkit. */
const char *nnnkit_bin(void);

#endif
