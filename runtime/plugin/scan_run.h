/* scan_run.h (internal): running the plugin scanner (nnn-plugin-scan,
 * scanner.c) on one candidate and judging how it ended (scan_run.c). */
#ifndef NNN_SCAN_RUN_H
#define NNN_SCAN_RUN_H

#include <stdbool.h>
#include <stddef.h>

#include "scan_pipe.h"

/* Room for one message of a verdict. */
#define SCAN_MSG 1024

/* The scanner next to this library (or the executable it is linked into):
 * DIR/nnn-plugin-scan (the build tree), DIR/../lib/nnnkit/ (PREFIX/bin),
 * DIR/nnnkit/ (PREFIX/lib). Never PATH, never the current folder. False
 * when there is none (out then names where it was looked for first). */
bool nnn_scan_find_scanner(char *out, size_t size);
/* Sets v to a failure at `stage` (NNN_E_PLUGIN), freeing what it held. */
void nnn_scan_fail(verdict_t *v, const char *stage, const char *fmt, ...) NNN_PRINTF(3, 4);
/* Runs the scanner on `path` for at most timeout_ms; the verdict in *v. */
void nnn_scan_run(const char *scanner, const char *path, int timeout_ms, verdict_t *v);

#endif
