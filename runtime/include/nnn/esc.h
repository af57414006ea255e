/* nnn/esc.h: text from a file, a plugin or the command line on its way to
 * a terminal, a page or a graph: the one escaping of nnnkit (libnnn's info
 * text and the CLI's every output). Pure functions of their inputs: nothing
 * is allocated, no error is possible (a short buffer cuts the text).
 */
#ifndef NNN_ESC_H
#define NNN_ESC_H

#include <stddef.h>

#include <nnn/api.h>

/* Printable UTF-8 passes; C0 controls, DEL, C1 controls (U+0080..U+009F,
 * U+009B being the 8-bit CSI), bidirectional controls (U+061C, U+200E,
 * U+200F, U+202A..U+202E, U+2066..U+2069), U+2028, U+2029 and bytes that
 * are not UTF-8 are escaped (nnn_cp_unsafe), each style its own way:
 *   NNN_ESC_C      "\x1b", "\u202e", a byte "\xff"; quote, backslash, \n escaped
 *   NNN_ESC_JSON   "\u001b", "\u202e", a byte as "\ufffd"; valid JSON
 *   NNN_ESC_MSG    as C, but quotes, backslashes, newlines and tabs pass
 *                  (messages, which quote file strings themselves; a file
 *                  name or a plugin's name, unquoted)
 *   NNN_ESC_DOT    '?' for each; quote and backslash escaped (graph)
 *   NNN_ESC_PAGE   a JSON string safe inside <script> ('<', '>', '&' as
 *                  "\u003c"...) that holds NNN_ESC_MSG's text: "\\u202e",
 *                  which the page's script shows as the text \u202e (map)
 * Every output of nnnkit that shows such text uses one of these. */
typedef enum nnn_esc { NNN_ESC_C, NNN_ESC_JSON, NNN_ESC_MSG, NNN_ESC_DOT, NNN_ESC_PAGE } nnn_esc_t;

/* The n bytes at s (any bytes, NUL included) escaped into dst (size bytes,
 * NUL-terminated when size > 0, cut on a whole escape); returns the length
 * written, without the NUL. dst is the caller's. */
NNN_API size_t nnn_esc(char *dst, size_t size, const char *s, size_t n, nnn_esc_t style);

/* The same, whole, handed to put piece by piece (text as is, or one
 * escape), with arg; the pieces are valid during the call only. */
NNN_API void nnn_esc_put(const char *s, size_t n, nnn_esc_t style, void (*put)(void *arg, const char *p, size_t len),
                         void *arg);

/* Length (1-4) of the valid UTF-8 sequence at s (n >= 1 bytes left), or 0
 * when the bytes there are not one (overlong, surrogate, cut short...). */
NNN_API size_t nnn_utf8_seq(const unsigned char *s, size_t n);

/* The edit distance (insertions, deletions, substitutions) between two
 * names of at most 32 bytes, for "did you mean"; SIZE_MAX when either is
 * longer. Used by libnnn's JSON reader and nnnkit's option parser alike. */
NNN_API size_t nnn_edit_distance(const char *a, const char *b);

#endif
