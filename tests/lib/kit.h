/* kit.h: `nnnkit conformance --json` run from tests, its report read. */
#ifndef NNN_TEST_KIT_H
#define NNN_TEST_KIT_H

#include <jansson.h>

#include <nnn/status.h>

/* Runs the command (printf-style: a whole `nnnkit ... conformance ...`
 * line) with --json appended and its stderr dropped; returns its exit
 * status and parses its stdout into *report (json_decref it). The test
 * fails when stdout is not JSON. */
int t_kit(json_t **report, const char *fmt, ...) NNN_PRINTF(2, 3);
/* valid_cases.<key> of a report ("cases", "run", "compared", ...). */
long t_kit_count(const json_t *report, const char *key);
/* The "why" of case `file`'s failure in a report, or NULL when it passed. */
const char *t_kit_why(const json_t *report, const char *file);
/* The number of valid cases in DIR/manifest.json. */
long t_kit_valid_cases(const char *dir);

#endif
