/* conformance_kit.h: `nnnkit conformance --testee CMD`: the kit's cases
 * asked of a testee (conformance_testee.c) and scored (conformance_kit.c),
 * as docs/conformance.md says. */
#ifndef NNN_CLI_CONFORMANCE_KIT_H
#define NNN_CLI_CONFORMANCE_KIT_H

#include <jansson.h>

#include "conformance.h"

/* What a request gave: an answer, or the testee's failure. */
enum { CONF_ANSWERED, CONF_TIMEOUT, CONF_CRASHED, CONF_PROTOCOL };

typedef struct conf_testee {
	const char *cmd;   /* the shell command */
	char err[4200];    /* the file its stderr goes to */
	double timeout;    /* seconds per request */
	conf_child_t ch;
	int running, to, from; /* to: its stdin; from: its stdout */
	char *buf;         /* what it wrote and was not read as a line yet */
	size_t len, cap;
	long long next_id;
	json_t *hello;     /* its first answer to hello */
	int starts;        /* times started */
} conf_testee_t;

/* Starts it and says hello: CONF_ANSWERED (t->hello set), or the failure
 * with why (the testee then is not running). */
int conf_testee_start(conf_testee_t *t, char *why, size_t size);
/* Sends req (taken: an "id" is added) and reads the answer into *ans
 * (json_decref it); starts the testee again first when it is not running.
 * Any failure kills its whole group: why says what happened and how its
 * stderr ends. */
int conf_testee_ask(conf_testee_t *t, json_t *req, json_t **ans, char *why, size_t size);
/* Whether hello listed op. */
int conf_testee_offers(const conf_testee_t *t, const char *op);
/* Kills its group if it runs, and frees what t holds. */
void conf_testee_stop(conf_testee_t *t);

typedef struct conf_kit_opts {
	const char *kit;     /* the kit's folder, absolute */
	const char *testee;  /* the command */
	double timeout;
	const char *known;   /* --known-failures FILE, or NULL */
	const char *results; /* --results FILE, or NULL */
	int fix, required_only, json, verbose;
	const char *tmpdir;  /* an empty folder of ours */
} conf_kit_opts_t;

/* Runs every case of the manifest through the testee, reports and writes
 * what was asked: the exit code. */
int conf_kit_run(const conf_kit_opts_t *o, json_t *manifest, cli_env_t *env);

#endif
