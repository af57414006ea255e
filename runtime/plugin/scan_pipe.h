/* scan_pipe.h (internal): the plugin scanner's protocol, spoken on its
 * pipe (scanner.c writes it, scan_run.c reads it) and kept in the scan
 * cache (scan_cache.c): a growable byte buffer, and verdicts (a loader's
 * report whose strings are owned) written and read back. */
#ifndef NNN_SCAN_PIPE_H
#define NNN_SCAN_PIPE_H

#include <stdbool.h>
#include <stddef.h>

#include <nnn/context.h>

/* The scanner's program name, beside libnnn or nnnkit (scan_run.c). */
#define SCANNER_NAME "nnn-plugin-scan"
/* The most bytes of a reply read. */
#define REPLY_MAX (256u << 10)

/* A growable byte buffer, NUL-terminated; failed: out of memory (then
 * nothing more is added). Zero it to start; free p. */
typedef struct buf {
	char *p;
	size_t n, cap;
	bool failed;
} buf_t;

void nnn_buf_put(buf_t *b, const void *s, size_t n);
void nnn_buf_putf(buf_t *b, const char *fmt, ...) NNN_PRINTF(2, 3);
/* "KEY LEN:BYTES\n": strings may hold anything, newlines included. */
void nnn_buf_put_str(buf_t *b, const char *key, const char *s);

/* A report whose strings this module owns. */
typedef struct verdict {
	nnn_plugin_report_t r;
	char *stage; /* r.stage points here */
} verdict_t;

/* Frees its strings and zeroes it. */
void nnn_verdict_free(verdict_t *v);
/* A report as a record, up to its "end" line. */
void nnn_verdict_put(buf_t *b, const nnn_plugin_report_t *r);

/* A reader over bytes that may be cut anywhere. */
typedef struct rd {
	const char *p, *e;
} rd_t;

/* The next line's key (up to a space or newline) into key; *val, *len get
 * its value: "LEN:BYTES" strings by their length, anything else to the
 * end of the line. False at the end or on anything malformed. */
bool nnn_rd_field(rd_t *r, char *key, size_t ksize, const char **val, size_t *len);
/* Reads one record up to its "end": true when it was complete. Fields it
 * does not know are skipped (a later version may add some). */
bool nnn_verdict_read(rd_t *r, verdict_t *v);

/* The scanner's first line: this nnnkit's version, ABI and schema layout
 * (a scanner of another build is not believed). */
void nnn_scan_host_line(buf_t *b);

#endif
