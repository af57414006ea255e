/* peak.h: how much memory a child process took at its peak (wait4's
 * ru_maxrss), for tests that bound memory without timing anything. Under
 * AddressSanitizer (shadow memory, quarantine) and valgrind the figures
 * mean nothing: tests that use them skip there (T_ASAN, blackbox.h;
 * t_under_valgrind). */
#ifndef NNN_TEST_PEAK_H
#define NNN_TEST_PEAK_H

#include <nnn/status.h>

/* Runs fn(arg) in a forked child: the KiB by which fn raised the child's
 * peak resident set. The test fails when the child does not exit 0. */
long t_peak_fn_kib(void (*fn)(void *arg), void *arg);

/* Runs a shell command made printf-style, as `exec COMMAND` (so the child
 * measured is the command itself), with stdin from /dev/null: its peak
 * resident set in KiB. Its exit status (128 + signal when killed) goes to
 * *status. */
long t_peak_cmd_kib(int *status, const char *fmt, ...) NNN_PRINTF(2, 3);

#endif
