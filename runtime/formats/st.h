/* st.h (internal): what the safetensors writer and reader share
 * (nnn/safetensors.h). */
#ifndef NNN_ST_H
#define NNN_ST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nnn/types.h>

/* A growing byte buffer; after a failed allocation it stays as it was and
 * `oom` is set, so a writer checks once at the end. */
typedef struct st_buf {
	unsigned char *b;
	size_t n, cap;
	bool oom;
} st_buf_t;

void st_put(st_buf_t *o, const void *p, size_t n);
void st_puts(st_buf_t *o, const char *s);
/* s as a JSON string, quotes included: '"', '\\' and control bytes escaped. */
void st_put_jstr(st_buf_t *o, const char *s, size_t n);
/* The n bytes at p in base64 (RFC 4648, padded). */
void st_put_b64(st_buf_t *o, const unsigned char *p, size_t n);

/* Decodes base64 text into out (at least n / 4 * 3 bytes); returns the
 * decoded length, or SIZE_MAX with *bad the index of the first character
 * that is no base64 there (n itself when the length is no multiple of 4). */
size_t st_b64_decode(const char *s, size_t n, unsigned char *out, size_t *bad);

/* The bytes one element of a safetensors dtype takes ("F32" -> 4); 0 for a
 * name the format does not define. */
size_t st_dtype_size(const char *name);
/* The same, and the .nnn element kind of its elements (NNN_EK_NONE for
 * F8_E5M2 and F8_E4M3, which .nnn has not). */
size_t st_dtype_kind(const char *name, nnn_ekind_t *kind);
/* The dtype of elements of kind and width ("F16", "BF16", "I8"...); NULL
 * when the format has none. */
const char *st_dtype_name(nnn_ekind_t kind, int width);

#endif
