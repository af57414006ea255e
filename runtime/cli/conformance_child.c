/* conformance_child.c: the processes `nnnkit conformance` starts (a
 * decoder or reference command through /bin/sh, a case run in a fork), one
 * at a time, each in a process group of its own that is killed whole. A
 * shell command's children are re-parented to init when the shell dies:
 * killing the shell's pid alone left them running (issue 28). The group is
 * killed at the timeout, after the child ended (what it left in the
 * background), and when nnnkit is interrupted or terminated meanwhile. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "conformance.h"

/* The signals that end nnnkit and must take the running child's group with
 * it. One ignored when nnnkit started (nohup) is discarded by the kernel,
 * never pending: it stays ignored. */
static void ending_signals(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGHUP);
}

pid_t conf_fork(conf_child_t *c)
{
	sigset_t ending;
	ending_signals(&ending);
	/* Blocked until conf_wait takes them: a signal before would leave the
	 * child running. */
	pthread_sigmask(SIG_BLOCK, &ending, &c->was);
	/* A process of the child's that leaves its group (setsid) and outlives
	 * its parent comes to nnnkit, not to init: end_child finds it there. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	fflush(NULL);
	pid_t pid = fork();
	int e = errno;
	if (pid == 0) {
		/* Here and in the parent, whichever runs first: the group exists
		 * before exec and before the parent may kill it. */
		setpgid(0, 0);
		pthread_sigmask(SIG_SETMASK, &c->was, NULL);
		/* A background group reading the terminal would stop (SIGTTIN). */
		int fd = open("/dev/null", O_RDONLY);
		if (fd < 0 || dup2(fd, 0) < 0)
			_exit(127);
		if (fd != 0)
			close(fd);
		return 0;
	}
	if (pid > 0)
		setpgid(pid, pid);
	else
		pthread_sigmask(SIG_SETMASK, &c->was, NULL);
	c->pid = pid;
	errno = e;
	return pid;
}

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* The children of nnnkit but `skip` (/proc/PID/stat's parent field), at
 * most n: their count. */
static int orphans(pid_t skip, pid_t *out, int n)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int k = 0;
	while (d && k < n && (e = readdir(d)) != NULL) {
		char path[300], buf[512];
		int ppid;
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
		FILE *f = fopen(path, "r");
		if (!f)
			continue; /* ended meanwhile */
		buf[fread(buf, 1, sizeof buf - 1, f)] = '\0';
		fclose(f);
		/* "pid (comm) state ppid ...": comm ends at the last ')' */
		char *p = strrchr(buf, ')');
		pid_t pid = (pid_t)atol(e->d_name);
		if (p && sscanf(p + 1, " %*c %d", &ppid) == 1 && ppid == getpid() && pid != skip)
			out[k++] = pid;
	}
	if (d)
		closedir(d);
	return k;
}

/* What left the child's group (setsid, setpgid) and outlived it came to
 * nnnkit, the subreaper (conf_fork): killed and reaped, until none is left
 * (each one's own children come next). */
static void sweep(pid_t skip)
{
	pid_t left[64];
	int n;
	while ((n = orphans(skip, left, 64)) > 0) {
		for (int i = 0; i < n; i++) {
			kill(left[i], SIGKILL);
			while (waitpid(left[i], NULL, 0) < 0 && errno == EINTR)
				;
		}
	}
}

/* Kills the child's group, reaps the child and gives nnnkit its signal
 * mask back. The child is not reaped before the kill, so its pid still
 * holds the group's number and no other group can have taken it. */
static int end_child(conf_child_t *c)
{
	int status = 0;
	kill(-c->pid, SIGKILL);
	while (waitpid(c->pid, &status, 0) < 0 && errno == EINTR)
		;
	sweep(c->pid);
	pthread_sigmask(SIG_SETMASK, &c->was, NULL);
	return status;
}

/* Waits up to `wait` for an ending signal; when one comes, the group goes,
 * then nnnkit, by that signal. */
static void take_ending(conf_child_t *c, const struct timespec *wait)
{
	sigset_t ending;
	ending_signals(&ending);
	int sig = sigtimedwait(&ending, NULL, wait);
	if (sig > 0) {
		end_child(c);
		signal(sig, SIG_DFL);
		raise(sig);
		_exit(128 + sig); /* not reached: the signal's default ends nnnkit */
	}
}

int conf_wait(conf_child_t *c, double timeout, char *why, size_t size)
{
	const struct timespec tick = { 0, 1000000 };
	double end = now() + timeout;
	for (;;) {
		siginfo_t info;
		info.si_pid = 0;
		/* WNOWAIT: ended, but left unreaped for end_child. */
		int r = waitid(P_PID, (id_t)c->pid, &info, WEXITED | WNOHANG | WNOWAIT);
		if (r == 0 && info.si_pid == c->pid)
			break;
		if (r < 0 && errno != EINTR) {
			/* not ours any more: its number may be another group's */
			pthread_sigmask(SIG_SETMASK, &c->was, NULL);
			snprintf(why, size, "lost the child process: %s", strerror(errno));
			return -1;
		}
		if (now() > end) {
			end_child(c);
			snprintf(why, size, "timed out after %g s (--timeout)", timeout);
			return -1;
		}
		/* The wait between two looks at the child, and where an ending
		 * signal is taken. */
		take_ending(c, &tick);
	}
	int status = end_child(c);
	if (WIFSIGNALED(status)) {
		snprintf(why, size, "killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
		return -1;
	}
	return WEXITSTATUS(status);
}

int conf_shell(const char *cmd, const char *err, double timeout, char *why, size_t size)
{
	conf_child_t c;
	pid_t pid = conf_fork(&c);
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
	return conf_wait(&c, timeout, why, size);
}

double conf_now(void)
{
	return now();
}

/* Our end of a pipe: not inherited by the next child, never blocking. */
static void our_end(int fd)
{
	fcntl(fd, F_SETFD, FD_CLOEXEC);
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

int conf_spawn(conf_child_t *c, const char *cmd, const char *err, int *to, int *from)
{
	int in[2], out[2];
	if (pipe(in) < 0)
		return -1;
	if (pipe(out) < 0) {
		close(in[0]), close(in[1]);
		return -1;
	}
	pid_t pid = conf_fork(c);
	if (pid == 0) {
		if (dup2(in[0], 0) < 0 || dup2(out[1], 1) < 0 || !freopen(err, "w", stderr))
			_exit(127);
		close(in[0]), close(in[1]), close(out[0]), close(out[1]);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	int e = errno;
	close(in[0]), close(out[1]);
	if (pid < 0) {
		close(in[1]), close(out[0]);
		errno = e;
		return -1;
	}
	our_end(in[1]), our_end(out[0]);
	/* A write to a testee that died is an EPIPE to report, not a SIGPIPE
	 * that ends nnnkit: blocked until conf_end (conf_put drops it). */
	sigset_t pipe_sig;
	sigemptyset(&pipe_sig);
	sigaddset(&pipe_sig, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_sig, NULL);
	*to = in[1], *from = out[0];
	return 0;
}

void conf_drop_sigpipe(void)
{
	const struct timespec zero = { 0, 0 };
	sigset_t pipe_sig;
	sigemptyset(&pipe_sig);
	sigaddset(&pipe_sig, SIGPIPE);
	while (sigtimedwait(&pipe_sig, NULL, &zero) > 0)
		;
}

int conf_poll(conf_child_t *c, int fd, short events, double deadline)
{
	const struct timespec zero = { 0, 0 };
	for (;;) {
		double left = deadline - now();
		if (left <= 0)
			return 0;
		/* A few milliseconds at a time: an ending signal is taken between. */
		struct pollfd p = { .fd = fd, .events = events };
		int r = poll(&p, 1, left < 0.005 ? (int)(left * 1000) + 1 : 5);
		if (r > 0)
			return 1;
		if (r < 0 && errno != EINTR)
			return -1;
		take_ending(c, &zero);
	}
}

int conf_end(conf_child_t *c, char *why, size_t size)
{
	conf_drop_sigpipe();
	int status = end_child(c);
	if (WIFSIGNALED(status)) {
		snprintf(why, size, "killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
		return -1;
	}
	snprintf(why, size, "exited with status %d", WEXITSTATUS(status));
	return WEXITSTATUS(status);
}
