/* nnn-plugin-scan: loads one plugin candidate in a process of its own and
 * reports what happened on a pipe (scan_pipe.h), for nnn_plugin_discover
 * (discover.c, which runs it through scan_run.c). A program of its own, not
 * part of libnnn: it links libnnn.a for the loader. */
#define _GNU_SOURCE /* dladdr, struct stat's times, pthread */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "loader.h"
#include "scan_pipe.h"

static void write_all_fd(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t k = write(fd, p, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return;
		p += k;
		n -= (size_t)k;
	}
}

static void scanner_stage(void *arg, const char *stage)
{
	char line[64];
	int n = snprintf(line, sizeof line, "at %zu:%s\n", strlen(stage), stage);
	/* write(2), never stdio: a buffer flushed by an exit() inside the
	 * plugin must not look like progress. */
	write_all_fd(*(int *)arg, line, (size_t)n);
}

int main(int argc, char **argv)
{
	/* Dies with the parent; the parent may already be gone (then we were
	 * reparented and getppid no longer names it). */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (argc != 6 || strcmp(argv[1], "--fd") || strcmp(argv[3], "--parent")) {
		fprintf(stderr, "usage: " SCANNER_NAME " --fd FD --parent PID FILE\n"
		                "nnnkit runs it to load one plugin candidate in a process of its own; see nnnkit plugins.\n");
		return 2;
	}
	int fd = atoi(argv[2]);
	if ((pid_t)atol(argv[4]) != getppid())
		_exit(125);
	buf_t b = { 0 };
	nnn_scan_host_line(&b);
	write_all_fd(fd, b.p, b.n);
	b.n = 0;
	nnn_ctx_t *ctx;
	nnn_diags_t d;
	nnn_plugin_report_t r;
	nnn_diags_init(&d);
	if (nnn_ctx_new(&ctx, &d) != NNN_OK)
		_exit(124);
	nnn_load_ex_t x = { .stage = scanner_stage, .arg = &fd };
	(void)nnn_plugin_load_ex(ctx, argv[5], &x, &d);
	if (nnn_ctx_report(ctx, 0, &r) < 1)
		_exit(124);
	nnn_verdict_put(&b, &r);
	if (b.failed)
		_exit(124);
	write_all_fd(fd, b.p, b.n);
	/* No unloading: the plugin's destructors are not our business. */
	_exit(0);
}
