/* utf8.h (internal): the checks of text from a file (utf8.c). */
#ifndef NNN_UTF8_H
#define NNN_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Strict UTF-8 (no overlongs, no surrogates, nothing above U+10FFFF): the
 * offset of the first bad byte, or len when all are good. */
size_t nnn_utf8_bad(const unsigned char *s, size_t len);

/* A code point no terminal may receive raw from a file's text: C0 and C1
 * controls, DEL, and those that reorder what follows (bidirectional
 * controls, U+2028, U+2029). Every writer of text escapes these. */
bool nnn_cp_unsafe(uint32_t cp);

#endif
