/* conformance_child.c: the processes `nnnkit conformance` starts (a
 * decoder or reference command through /bin/sh, a case run in a fork), one
 * at a time, each in a process group of its own that is killed whole. A
 * shell command's children are re-parented to init when the shell dies:
 * killing the shell's pid alone left them running (issue 28). The group is
 * killed at the timeout, after the child ended (what it left in the
 * background), and when nnnkit is interrupted or terminated. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "conformance.h"

/* The process group of the running child, or 0. Global because the signal
 * handler must reach it and can be given nothing else; one child at a time. */
static volatile sig_atomic_t g_group;

static const int caught[] = { SIGINT, SIGTERM, SIGHUP };
#define NCAUGHT (sizeof caught / sizeof caught[0])
_Static_assert(NCAUGHT == sizeof ((conf_sigs_t *)0)->old / sizeof(struct sigaction), "conf_sigs_t: one per signal");

static void on_signal(int sig)
{
	if (g_group > 0)
		kill(-(pid_t)g_group, SIGKILL);
	/* SA_RESETHAND put the default back: nnnkit ends by this signal, as it
	 * would have without us. */
	raise(sig);
}

void conf_catch(conf_sigs_t *old)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESETHAND;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < NCAUGHT; i++) {
		sigaction(caught[i], NULL, &old->old[i]);
		/* Ignored (nohup, a background job's SIGINT): it stays so. */
		if (old->old[i].sa_handler != SIG_IGN)
			sigaction(caught[i], &sa, NULL);
	}
}

void conf_uncatch(const conf_sigs_t *old)
{
	for (size_t i = 0; i < NCAUGHT; i++)
		sigaction(caught[i], &old->old[i], NULL);
}

pid_t conf_fork(void)
{
	sigset_t block, was;
	sigemptyset(&block);
	for (size_t i = 0; i < NCAUGHT; i++)
		sigaddset(&block, caught[i]);
	/* Blocked until g_group names the child: a signal in between would
	 * leave it running. */
	pthread_sigmask(SIG_BLOCK, &block, &was);
	fflush(NULL);
	pid_t pid = fork();
	int e = errno;
	if (pid == 0) {
		/* Here and in the parent, whichever runs first: the group exists
		 * before exec and before the parent may kill it. */
		setpgid(0, 0);
		for (size_t i = 0; i < NCAUGHT; i++) {
			struct sigaction sa;
			if (sigaction(caught[i], NULL, &sa) == 0 && sa.sa_handler == on_signal)
				signal(caught[i], SIG_DFL);
		}
		pthread_sigmask(SIG_SETMASK, &was, NULL);
		/* A background group reading the terminal would stop (SIGTTIN). */
		int fd = open("/dev/null", O_RDONLY);
		if (fd < 0 || dup2(fd, 0) < 0)
			_exit(127);
		if (fd != 0)
			close(fd);
		return 0;
	}
	if (pid > 0) {
		setpgid(pid, pid);
		g_group = pid;
	}
	pthread_sigmask(SIG_SETMASK, &was, NULL);
	errno = e;
	return pid;
}

/* Kills the child's group; the child is not reaped yet, so its pid still
 * holds the group's number and no other group can have taken it. */
static void kill_group(pid_t pid)
{
	kill(-pid, SIGKILL);
	g_group = 0;
}

int conf_wait(pid_t pid, double timeout, char *why, size_t size)
{
	struct timespec tick = { 0, 1000000 };
	int status = 0, timed_out = 0;
	for (double waited = 0;; waited += 0.001) {
		siginfo_t info;
		info.si_pid = 0;
		/* WNOWAIT: ended, but left unreaped for kill_group. */
		int r = waitid(P_PID, (id_t)pid, &info, WEXITED | WNOHANG | WNOWAIT);
		if (r == 0 && info.si_pid == pid)
			break;
		if (r < 0 && errno != EINTR) {
			g_group = 0; /* not ours any more: its number may be reused */
			snprintf(why, size, "lost the child process: %s", strerror(errno));
			return -1;
		}
		if (waited > timeout) {
			timed_out = 1;
			break;
		}
		nanosleep(&tick, NULL);
	}
	kill_group(pid);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (timed_out) {
		snprintf(why, size, "timed out after %g s (--timeout)", timeout);
		return -1;
	}
	if (WIFSIGNALED(status)) {
		snprintf(why, size, "killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
		return -1;
	}
	return WEXITSTATUS(status);
}

int conf_shell(const char *cmd, const char *err, double timeout, char *why, size_t size)
{
	pid_t pid = conf_fork();
	if (pid == 0) {
		/* Its stdout is not ours to show; its stderr goes to err or nowhere. */
		if (!freopen("/dev/null", "w", stdout) || !freopen(err ? err : "/dev/null", "w", stderr))
			_exit(127);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	if (pid < 0) {
		snprintf(why, size, "cannot fork: %s", strerror(errno));
		return -1;
	}
	return conf_wait(pid, timeout, why, size);
}
