/* nnn/status.h: status codes and diagnostics, shared by every libnnn module.
 *
 * Every fallible function returns an nnn_status_t and, when given one, fills
 * an nnn_diags_t with what went wrong: code, byte offset, field path, what was
 * found, what was expected and what to do about it. Codes have pinned numbers:
 * they are part of the ABI and of the conformance manifest.
 */
#ifndef NNN_STATUS_H
#define NNN_STATUS_H

#include <stddef.h>
#include <stdint.h>

#include <nnn/api.h>
#include <nnn/status_codes.h> /* the codes, NNN_MSG_MAX, NNN_PATH_MAX, NNN_NO_OFFSET */

/* Short description of a code ("file ends early"); "unknown status" for others. */
NNN_API const char *nnn_status_str(nnn_status_t s);
/* Symbolic name without the prefix ("E_TRUNCATED"). */
NNN_API const char *nnn_status_name(nnn_status_t s);
/* What a user can do about it; "" for NNN_OK. */
NNN_API const char *nnn_status_remedy(nnn_status_t s);

/* One problem: where (byte offset or line and column, and field path), what,
 * and why. */
typedef struct nnn_diag {
	nnn_status_t code;
	uint64_t offset;            /* byte offset in the file; UINT64_MAX when none applies */
	char path[NNN_PATH_MAX];    /* "layers[2].weights.dims[1]"; "" for the whole file */
	char msg[NNN_MSG_MAX];      /* "found -3, expected >= 0" */
	uint32_t line, column;      /* in a text input (JSON), from 1; 0 when none applies */
} nnn_diag_t;

/* A list of problems, in the order found. Owned by the caller: initialise with
 * nnn_diags_init (or zero it), release with nnn_diags_free. At most `limit`
 * entries are kept (0 means NNN_DIAGS_DEFAULT_LIMIT); `dropped` counts the rest. */
typedef struct nnn_diags {
	nnn_diag_t *v;
	size_t n, cap, limit, dropped;
} nnn_diags_t;

#define NNN_DIAGS_DEFAULT_LIMIT 1000

NNN_API void nnn_diags_init(nnn_diags_t *d);
NNN_API void nnn_diags_free(nnn_diags_t *d);
NNN_API void nnn_diags_clear(nnn_diags_t *d);
/* Appends a problem; `d` may be NULL (the problem is then only returned). */
NNN_API nnn_status_t nnn_diags_add(nnn_diags_t *d, nnn_status_t code, uint64_t offset, const char *path,
                                   const char *fmt, ...) NNN_PRINTF(5, 6);
/* Formats "path @0xOFFSET: description: msg (remedy)" into buf, or with a
 * line "LINE:COLUMN: path: description: msg (remedy)"; returns buf. */
NNN_API char *nnn_diag_format(const nnn_diag_t *d, char *buf, size_t size);

#endif
