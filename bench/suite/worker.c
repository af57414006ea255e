/* worker.c: a worker process (nnnbench --worker, bench/torch_bench.py,
 * bench/ort_bench.js) seen from the driver: one request a line on its
 * stdin, one answer a line on its stdout, a "ready ..." line first. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

bool bn_w_spawn(worker_t *w, const char *name, char *const argv[], char **env)
{
	int in[2], out[2];
	memset(w, 0, sizeof *w);
	snprintf(w->name, sizeof w->name, "%s", name);
	/* Close-on-exec: no other child keeps this worker's pipes open. */
	if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0)
		return false;
	fflush(NULL);
	w->pid = fork();
	if (w->pid < 0)
		return false;
	if (w->pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[0]);
		close(in[1]);
		close(out[0]);
		close(out[1]);
		execve(argv[0], argv, env);
		printf("err cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	w->to = fdopen(in[1], "w");
	w->from = fdopen(out[0], "r");
	return w->to && w->from;
}

bool bn_w_ready(worker_t *w)
{
	if (!w->from)
		return false;
	w->up = fgets(w->hello, sizeof w->hello, w->from) && !strncmp(w->hello, "ready", 5);
	w->hello[strcspn(w->hello, "\n")] = '\0';
	if (!w->up)
		fprintf(stderr, "nnnbench: %s did not start: %s\n", w->name, w->hello[0] ? w->hello : "no answer");
	return w->up;
}

double bn_w_ask(worker_t *w, const char *req, char *reply, size_t size)
{
	char *end;
	if (!bn_w_send(w, req) || !bn_w_answer(w, reply, size)) {
		snprintf(reply, size, "no answer");
		w->up = false;
		return -1;
	}
	double v = strtod(reply, &end);
	if (end == reply || v < 0) {
		w->up = false;
		return -1;
	}
	return v;
}

double bn_w_time(worker_t *w, const char *fmt, ...)
{
	char req[2 * BN_PATH + 64], reply[512] = "";
	va_list ap;
	if (!w->up)
		return -1;
	va_start(ap, fmt);
	vsnprintf(req, sizeof req, fmt, ap);
	va_end(ap);
	double t = bn_w_ask(w, req, reply, sizeof reply);
	if (t < 0 && strcmp(reply, "no answer") == 0)
		fprintf(stderr, "nnnbench: %s stopped answering\n", w->name);
	else if (t < 0)
		fprintf(stderr, "nnnbench: %s: %s\n", w->name, reply);
	return t;
}

bool bn_w_send(worker_t *w, const char *req)
{
	if (!w->up)
		return false;
	fprintf(w->to, "%s\n", req);
	return fflush(w->to) == 0;
}

bool bn_w_answer(worker_t *w, char *reply, size_t size)
{
	if (!w->up || !fgets(reply, (int)size, w->from))
		return false;
	reply[strcspn(reply, "\n")] = '\0';
	return true;
}

void bn_w_quit(worker_t *w)
{
	if (w->to) {
		/* A worker given up may have exited: writing to it would raise
		 * SIGPIPE here. Closing its stdin stops it all the same. */
		if (w->up)
			fprintf(w->to, "quit\n");
		fclose(w->to);
		w->to = NULL;
	}
}

void bn_w_reap(worker_t *w)
{
	bn_w_quit(w);
	if (w->from)
		fclose(w->from);
	if (w->pid > 0)
		while (waitpid(w->pid, NULL, 0) < 0 && errno == EINTR)
			;
	memset(w, 0, sizeof *w);
}
