/* conformance_testee.c: the testee of `nnnkit conformance --testee CMD`,
 * one long-running process spoken to in JSON lines (docs/conformance.md,
 * "The testee protocol"). A request that times out, or whose answer is the
 * end of its stdout, not one JSON object, or another request's id, costs
 * the testee its life: its whole process group is killed
 * (conformance_child.c) and the next request starts it again. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conformance_kit.h"

/* An answer longer than this is garbage, not a line to keep reading. */
#define LINE_MAX_BYTES (16u << 20)

/* The last three non-empty lines of the testee's stderr, " | "-joined. */
static void tail(const char *path, char *out, size_t size)
{
	char lines[3][300], line[300];
	int n = 0;
	FILE *f = fopen(path, "r");
	out[0] = '\0';
	while (f && fgets(line, sizeof line, f)) {
		line[strcspn(line, "\r\n")] = '\0';
		if (line[0])
			snprintf(lines[n++ % 3], sizeof lines[0], "%s", line);
	}
	if (f)
		fclose(f);
	for (int i = n > 3 ? n - 3 : 0; i < n; i++)
		snprintf(out + strlen(out), size - strlen(out), "%s%s", strlen(out) ? " | " : "", lines[i % 3]);
}

/* Ends the testee (its whole group); why gets how it ended and its stderr. */
static void stop(conf_testee_t *t, const char *what, char *why, size_t size)
{
	char how[128], err[1000];
	if (!t->running)
		return;
	close(t->to), close(t->from);
	int st = conf_end(&t->ch, how, sizeof how);
	t->running = 0;
	t->len = 0;
	tail(t->err, err, sizeof err);
	if (why)
		snprintf(why, size, "%s (the testee %s%s; its stderr %s%s)", what, st < 0 ? "was " : "", how,
		         err[0] ? "ends: " : "is empty", err);
}

void conf_testee_stop(conf_testee_t *t)
{
	stop(t, "", NULL, 0);
	free(t->buf);
	t->buf = NULL;
	t->cap = 0;
	json_decref(t->hello);
	t->hello = NULL;
}

/* Writes the whole line before the deadline: CONF_ANSWERED or a failure. */
static int put(conf_testee_t *t, const char *s, size_t n, double deadline, char *why, size_t size)
{
	while (n) {
		int r = conf_poll(&t->ch, t->to, POLLOUT, deadline);
		if (r == 0)
			return snprintf(why, size, "took no request in %g s (--timeout)", t->timeout), CONF_TIMEOUT;
		ssize_t w = r > 0 ? write(t->to, s, n) : -1;
		if (w < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (w < 0)
			return snprintf(why, size, "closed its stdin (%s)", strerror(errno)), CONF_CRASHED;
		s += w, n -= (size_t)w;
	}
	return CONF_ANSWERED;
}

/* Reads one line (NUL-terminated, newline dropped) into t->buf. */
static int get(conf_testee_t *t, double deadline, char *why, size_t size)
{
	for (;;) {
		char *nl = t->len ? memchr(t->buf, '\n', t->len) : NULL;
		if (nl) {
			*nl = '\0';
			return CONF_ANSWERED;
		}
		if (t->len + 4096 + 1 > t->cap) {
			if (t->cap >= LINE_MAX_BYTES)
				return snprintf(why, size, "answered more than %u bytes without a newline", LINE_MAX_BYTES),
				       CONF_PROTOCOL;
			char *b = realloc(t->buf, t->cap ? 2 * t->cap : 65536);
			if (!b)
				return snprintf(why, size, "out of memory for its answer"), CONF_PROTOCOL;
			t->buf = b, t->cap = t->cap ? 2 * t->cap : 65536;
		}
		int r = conf_poll(&t->ch, t->from, POLLIN, deadline);
		if (r == 0)
			return snprintf(why, size, "no answer in %g s (--timeout)", t->timeout), CONF_TIMEOUT;
		ssize_t n = r > 0 ? read(t->from, t->buf + t->len, t->cap - t->len - 1) : -1;
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n <= 0)
			return snprintf(why, size, "ended its stdout without an answer"), CONF_CRASHED;
		t->len += (size_t)n;
	}
}

/* Drops the line get() returned from t->buf. */
static void consume(conf_testee_t *t)
{
	size_t n = strlen(t->buf) + 1;
	memmove(t->buf, t->buf + n, t->len - n);
	t->len -= n;
}

/* One request and its answer, no restart: CONF_* and *ans or why. */
static int exchange(conf_testee_t *t, json_t *req, json_t **ans, char *why, size_t size)
{
	long long id = t->next_id++;
	json_object_set_new(req, "id", json_integer(id));
	char *line = json_dumps(req, JSON_COMPACT | JSON_PRESERVE_ORDER);
	if (!line)
		return snprintf(why, size, "out of memory"), CONF_PROTOCOL;
	size_t n = strlen(line);
	line[n] = '\n';
	double deadline = conf_now() + t->timeout;
	int r = put(t, line, n + 1, deadline, why, size);
	free(line);
	/* A testee that answered and ended before the request was written (a
	 * broken pipe) still has its answer on stdout: that is what it said. */
	if (r == CONF_CRASHED) {
		char w[256];
		snprintf(w, sizeof w, "%s", why);
		if ((r = get(t, deadline, why, size)) != CONF_ANSWERED)
			snprintf(why + strlen(why), size - strlen(why), " (it had %s)", w);
	} else if (r == CONF_ANSWERED) {
		r = get(t, deadline, why, size);
	}
	if (r != CONF_ANSWERED)
		return r;
	json_error_t e;
	*ans = json_loads(t->buf, JSON_REJECT_DUPLICATES, &e);
	json_t *got = json_object_get(*ans, "id");
	if (!json_is_object(*ans))
		snprintf(why, size, "answered '%.80s%s': not one JSON object (%s)", t->buf, strlen(t->buf) > 80 ? "..." : "",
		         *ans ? "another JSON value" : e.text);
	else if (!json_is_integer(got) || json_integer_value(got) != id)
		snprintf(why, size, "answered request %lld with the id %lld", id,
		         json_is_integer(got) ? (long long)json_integer_value(got) : -1LL);
	consume(t);
	if (json_is_object(*ans) && json_is_integer(got) && json_integer_value(got) == id)
		return CONF_ANSWERED;
	json_decref(*ans);
	*ans = NULL;
	return CONF_PROTOCOL;
}

/* Starts the testee and says hello: CONF_ANSWERED, or why it cannot be used. */
static int start(conf_testee_t *t, char *why, size_t size)
{
	json_t *ans = NULL;
	if (conf_spawn(&t->ch, t->cmd, t->err, &t->to, &t->from) < 0)
		return snprintf(why, size, "cannot start it: %s", strerror(errno)), CONF_CRASHED;
	t->running = 1;
	t->starts++;
	char w[1024];
	json_t *hello = json_pack("{s:s, s:i}", "op", "hello", "protocol", 1);
	int r = exchange(t, hello, &ans, w, sizeof w);
	json_decref(hello);
	json_t *ops = json_object_get(ans, "ops"), *proto = json_object_get(ans, "protocol");
	if (r == CONF_ANSWERED && (!json_is_true(json_object_get(ans, "ok")) || !json_is_array(ops) ||
	                           !json_is_integer(proto) || json_integer_value(proto) != 1)) {
		r = CONF_PROTOCOL;
		snprintf(w, sizeof w, "answered hello without \"ok\": true, protocol 1 and an \"ops\" array");
	}
	if (r != CONF_ANSWERED) {
		json_decref(ans);
		stop(t, w, why, size);
		return r;
	}
	if (!t->hello)
		t->hello = ans;
	else
		json_decref(ans);
	return CONF_ANSWERED;
}

int conf_testee_start(conf_testee_t *t, char *why, size_t size)
{
	return start(t, why, size);
}

int conf_testee_offers(const conf_testee_t *t, const char *op)
{
	size_t i;
	json_t *v;
	json_array_foreach(json_object_get(t->hello, "ops"), i, v) {
		if (json_is_string(v) && !strcmp(json_string_value(v), op))
			return 1;
	}
	return 0;
}

int conf_testee_ask(conf_testee_t *t, json_t *req, json_t **ans, char *why, size_t size)
{
	char w[1024];
	*ans = NULL;
	if (!t->running) {
		int r = start(t, w, sizeof w);
		if (r != CONF_ANSWERED) {
			json_decref(req);
			snprintf(why, size, "restarted, then %s", w);
			return r;
		}
	}
	int r = exchange(t, req, ans, w, sizeof w);
	json_decref(req);
	if (r != CONF_ANSWERED)
		stop(t, w, why, size);
	return r;
}
