/* blackbox.h: what the suites that run the project's Lua tools as a black
 * box (compat, gen) share: whole files in and out, and shell commands with
 * their exit status, stdout and stderr apart. Run from the project root. */
#ifndef NNN_TEST_BLACKBOX_H
#define NNN_TEST_BLACKBOX_H

#include <stddef.h>

#include <nnn/status.h>

/* T_ASAN: 1 in a build with AddressSanitizer, where tests that limit the
 * address space skip (ASan reserves terabytes of it). gcc says so with
 * __SANITIZE_ADDRESS__, clang (the sanitizer tree) with __has_feature. */
#if defined(__SANITIZE_ADDRESS__)
#define T_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define T_ASAN 1
#endif
#endif
#ifndef T_ASAN
#define T_ASAN 0
#endif

/* Whether this process runs under valgrind (make valgrind): tests that time
 * processes, race a writer or limit the address space scale down or skip
 * there. Which tests run under valgrind at all is the Makefile's choice, by
 * tier (tests/tests.mk). */
int t_under_valgrind(void);

/* Fails the test unless it runs from the project root. */
void t_require_root(void);

/* The whole file, NUL-terminated (*size, when given, excludes the NUL);
 * NULL if unreadable. Free it. */
char *t_slurp(const char *path, size_t *size);

/* Writes the file (the test fails when it cannot). */
void t_spit(const char *path, const void *data, size_t len);
void t_spit_str(const char *path, const char *text);

/* Copies schema/nnn.lua into dir, so schemas written there can import it. */
void t_copy_schema(const char *dir);

/* A shell command's exit status (128 + signal when killed, -1 when it could
 * not be run) and everything it wrote. Free with t_run_free. */
typedef struct t_run {
	int status;
	char *out, *err;
} t_run_t;

void t_run_free(t_run_t *r);

/* Runs `{ CMD\n}` (made printf-style) through the shell with stdin from
 * /dev/null, its stdout and stderr captured in dir/.out and dir/.err. */
t_run_t t_run_in(const char *dir, const char *fmt, ...) NNN_PRINTF(2, 3);

#endif
