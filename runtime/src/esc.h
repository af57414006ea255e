/* esc.h (internal): text from a file on its way to a terminal, the one
 * escaping of nnnkit (libnnn's info text and the CLI's every output).
 */
#ifndef NNN_ESC_H
#define NNN_ESC_H

#include <stddef.h>

/* Internal to libnnn: never exported from libnnn.so (only the public
 * headers' functions are). */
#pragma GCC visibility push(hidden)

/* Printable UTF-8 passes; C0 controls, DEL, C1 controls (U+0080..U+009F,
 * U+009B being the 8-bit CSI), bidirectional controls (U+061C, U+200E,
 * U+200F, U+202A..U+202E, U+2066..U+2069), U+2028, U+2029 and bytes that
 * are not UTF-8 are escaped (nnn_cp_unsafe), each style its own way:
 *   NNN_ESC_C      "\x1b", "\u202e", a byte "\xff"; quote, backslash, \n escaped
 *   NNN_ESC_JSON   "\u001b", "\u202e", a byte as "\ufffd"; valid JSON
 *   NNN_ESC_SCRIPT as JSON, and '<', '>', '&' as "\u003c"...: JSON inside <script>
 *   NNN_ESC_MSG    as C, but quotes, backslashes, newlines and tabs pass
 *                  (messages, which quote file strings themselves)
 *   NNN_ESC_DOT    '?' for each; quote and backslash escaped (graph) */
typedef enum nnn_esc { NNN_ESC_C, NNN_ESC_JSON, NNN_ESC_SCRIPT, NNN_ESC_MSG, NNN_ESC_DOT } nnn_esc_t;

/* The n bytes at s escaped into dst (size bytes, NUL-terminated, cut on a
 * whole escape); returns the length written. */
size_t nnn_esc(char *dst, size_t size, const char *s, size_t n, nnn_esc_t style);

/* The same, whole, handed to put piece by piece (text as is, or one escape). */
void nnn_esc_put(const char *s, size_t n, nnn_esc_t style, void (*put)(void *arg, const char *p, size_t len),
                 void *arg);

/* Length (1-4) of the valid UTF-8 sequence at s (n >= 1 bytes left), or 0
 * when the bytes there are not one (overlong, surrogate, cut short...). */
size_t nnn_utf8_seq(const unsigned char *s, size_t n);

#pragma GCC visibility pop

#endif
