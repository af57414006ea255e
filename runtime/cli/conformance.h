/* conformance.h: what `nnnkit conformance` (conformance.c) and its runner
 * of valid cases (conformance_run.c) share. */
#ifndef NNN_CLI_CONFORMANCE_H
#define NNN_CLI_CONFORMANCE_H

#include <signal.h>
#include <sys/types.h>

#include "cli.h"

/* What running one valid case gave. */
enum { CONF_RUN_OK, CONF_RUN_SKIPPED, CONF_RUN_FAILED, CONF_RUN_CRASHED };

/* A reference command's exit status for "I do not compute this model" (a
 * type it does not know): the case is then not compared, and not failed.
 * 77, as test harnesses (automake, meson) mean "skipped". */
#define CONF_REFERENCE_DECLINED 77

typedef struct conf_run_opts {
	const char *reference; /* 'CMD {model} {input} {output}' (or {json}), or NULL */
	double tolerance;      /* |nnnkit - other| <= tolerance * (1 + |other|) */
	double timeout;        /* seconds the child may take, and the reference command */
	const char *tmpdir;    /* an empty folder of ours for the case's files */
} conf_run_opts_t;

typedef struct conf_run {
	int outcome;      /* CONF_RUN_* */
	int validated;    /* the case validated with its input shape */
	int ran;          /* its kernels were called */
	int finite_check; /* its outputs were checked for NaN and infinities */
	int compared;     /* its outputs were compared with the reference */
	int declined;     /* the reference exited CONF_REFERENCE_DECLINED: it does not compute this case */
	double max_err;   /* the largest |nnnkit - reference| when compared */
	char why[1024];   /* not OK: what happened, or why it was not run */
} conf_run_t;

/* Validates the case at `path` with `input` (batch 1), and when every layer
 * and activation has a kernel, runs it (batch 1 twice, batch 2 on two
 * threads), all in a child process, then compares with the reference
 * command when one is given. */
void conf_run_case(const nnn_ctx_t *ctx, const char *path, const nnn_shape_t *input, const conf_run_opts_t *o,
                   conf_run_t *out);

/* The children (conformance_child.c): one at a time, each in a process
 * group of its own, killed whole when it ends, times out, or nnnkit gets
 * SIGINT, SIGTERM or SIGHUP while it runs (nnnkit then ends by that signal).
 * From conf_fork to conf_wait those signals are blocked in nnnkit, and
 * conf_wait takes them: no handler, nothing global. */
typedef struct conf_child {
	pid_t pid;
	sigset_t was; /* nnnkit's signal mask before conf_fork */
} conf_child_t;

/* fork(), the child in a new process group with stdin from /dev/null and
 * nnnkit's signal mask: 0 in the child, its pid in the parent (wait for it
 * with conf_wait before the next), -1 with errno. */
pid_t conf_fork(conf_child_t *c);

/* Waits for c's child at most `timeout` seconds, then kills its group,
 * whatever happened: its exit status, or -1 with why (a signal, the
 * timeout) written to `why`. */
int conf_wait(conf_child_t *c, double timeout, char *why, size_t size);

/* Runs `sh -c cmd` as conf_fork's child, stdout to /dev/null and stderr to
 * the file `err` (NULL: /dev/null), and waits for it (conf_wait). */
int conf_shell(const char *cmd, const char *err, double timeout, char *why, size_t size);

/* The testee of --testee (conformance_testee.c): `sh -c cmd` as conf_fork's
 * child, its stdin and stdout pipes whose other ends go to *to and *from
 * (non-blocking, not inherited), stderr to the file `err`. SIGPIPE stays
 * blocked in nnnkit until conf_end. 0, or -1 with errno. */
int conf_spawn(conf_child_t *c, const char *cmd, const char *err, int *to, int *from);
/* Waits until fd has `events` (poll) or the monotonic time `deadline`
 * (conf_now) passes, taking an ending signal as conf_wait does: 1 ready,
 * 0 timed out, -1 with errno. */
int conf_poll(conf_child_t *c, int fd, short events, double deadline);
/* Discards a SIGPIPE a write to a dead testee left pending. */
void conf_drop_sigpipe(void);
/* Kills c's group, reaps it, gives nnnkit its signal mask back: the exit
 * status, or -1; either said in `why` ("exited with status 3"). */
int conf_end(conf_child_t *c, char *why, size_t size);
/* Seconds on the monotonic clock. */
double conf_now(void);

/* The first index where got and want differ by more than tol * (1 + |want|)
 * (a NaN matches a NaN, an infinity the same infinity), or -1; *max_err:
 * the largest difference between finite pairs (conformance_run.c). */
int64_t conf_mismatch(const float *got, const float *want, int64_t n, double tol, double *max_err);
/* "[0, 3, 1]": the place of flat index i in shape s, in buf. */
const char *conf_place(const nnn_shape_t *s, int64_t i, char *buf, size_t size);

/* tmpl with each "{name}" of names[] replaced by the single-quoted
 * values[i]; returned, free() it (NULL when out of memory). */
char *conf_command(const char *tmpl, const char *const *names, const char *const *values, int n);

#endif
