/* peak.c: see peak.h. */
#define _DEFAULT_SOURCE /* wait4 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "peak.h"

/* The child's exit status and its peak resident set in KiB. */
static long reap(pid_t pid, int *status)
{
	struct rusage ru;
	int st;
	cr_assert_eq(wait4(pid, &st, 0, &ru), pid, "wait4");
	*status = WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : -1;
	return ru.ru_maxrss;
}

long t_peak_fn_kib(void (*fn)(void *arg), void *arg)
{
	int fds[2], status;
	long added = -1;
	fflush(NULL);
	cr_assert_eq(pipe(fds), 0);
	pid_t pid = fork();
	cr_assert_geq(pid, 0, "fork");
	if (pid == 0) {
		/* A forked child's peak starts at its resident set, whatever the
		 * parent's peak was: what fn adds is the difference. */
		struct rusage before, after;
		close(fds[0]);
		getrusage(RUSAGE_SELF, &before);
		fn(arg);
		getrusage(RUSAGE_SELF, &after);
		added = after.ru_maxrss - before.ru_maxrss;
		_exit(write(fds[1], &added, sizeof added) == (ssize_t)sizeof added ? 0 : 125);
	}
	close(fds[1]);
	ssize_t got = read(fds[0], &added, sizeof added);
	close(fds[0]);
	reap(pid, &status);
	cr_assert_eq(status, 0, "the measured child exited %d", status);
	cr_assert_eq(got, (ssize_t)sizeof added, "the measured child sent no figure");
	return added;
}

long t_peak_cmd_kib(int *status, const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(cmd, sizeof cmd, fmt, ap);
	va_end(ap);
	cr_assert(n > 0 && (size_t)n < sizeof cmd, "command too long");
	fflush(NULL);
	pid_t pid = fork();
	cr_assert_geq(pid, 0, "fork");
	if (pid == 0) {
		char line[4200];
		int fd = open("/dev/null", O_RDONLY);
		if (fd < 0 || dup2(fd, STDIN_FILENO) < 0)
			_exit(126);
		snprintf(line, sizeof line, "exec %s", cmd);
		execl("/bin/sh", "sh", "-c", line, (char *)NULL);
		_exit(127);
	}
	return reap(pid, status);
}
