/* roundtrip.h: .nnn -> JSON -> .nnn, for the tests of every corpus. */
#ifndef NNN_TEST_ROUNDTRIP_H
#define NNN_TEST_ROUNDTRIP_H

#include <stdbool.h>
#include <stddef.h>

#include <nnn/json.h>

/* Decodes `len` bytes (with ctx's plugins), writes the model as JSON (float
 * arrays of at least `min` values as .npy files in `dir` when dir is not
 * NULL), reads the JSON back and encodes it: true when that gives the same
 * bytes. Otherwise writes why into `why`. With `json` non-NULL, the JSON text
 * is returned there (free it). */
bool json_roundtrip(const void *buf, size_t len, const nnn_ctx_t *ctx, const char *dir, int64_t min, char **json,
                    char *why, size_t size);

#endif
