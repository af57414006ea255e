/* esc.c: see nnn/esc.h. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "utf8.h"
#include <nnn/esc.h>

static uint32_t utf8_cp(const unsigned char *s, size_t k)
{
	static const unsigned char lead[5] = { 0, 0x7f, 0x1f, 0x0f, 0x07 };
	uint32_t cp = s[0] & lead[k];
	for (size_t i = 1; i < k; i++)
		cp = cp << 6 | (s[i] & 0x3fu);
	return cp;
}

/* The escape of one code point (cp) or byte (k == 0), or NULL: as is. */
static const char *esc_one(uint32_t cp, size_t k, nnn_esc_t style, char *tmp, size_t size)
{
	bool quoted = style != NNN_ESC_MSG, json = style == NNN_ESC_JSON, page = style == NNN_ESC_PAGE;
	if (k == 1 && quoted && (cp == '"' || cp == '\\')) {
		snprintf(tmp, size, "\\%c", (char)cp);
		return tmp;
	}
	if (k == 1 && cp == '\n' && style != NNN_ESC_DOT)
		return style == NNN_ESC_MSG ? NULL : "\\n";
	if (k == 1 && cp == '\t' && (style == NNN_ESC_MSG || page))
		return page ? "\\t" : NULL; /* a page shows a tab as a message does */
	if (k == 1 && page && (cp == '<' || cp == '>' || cp == '&')) {
		snprintf(tmp, size, "\\u%04x", (unsigned)cp);
		return tmp;
	}
	if (k && !nnn_cp_unsafe(cp))
		return NULL;
	if (style == NNN_ESC_DOT)
		return "?";
	/* The visible escape; in a page's JSON string its backslash is one too,
	 * so that the page shows the escape, never the character. */
	const char *bs = page ? "\\\\" : "\\";
	if (!k && json) /* not UTF-8: in JSON the replacement character, else the byte */
		snprintf(tmp, size, "\\ufffd");
	else if (!k || (cp < 0x80 && !json))
		snprintf(tmp, size, "%sx%02x", bs, (unsigned)cp);
	else
		snprintf(tmp, size, "%su%04x", bs, (unsigned)cp);
	return tmp;
}

/* The escape of the code point or byte at p (n >= 1 bytes left), or NULL:
 * its *k bytes as is (*k 1 for a byte that is not UTF-8). */
static const char *esc_at(const unsigned char *p, size_t n, nnn_esc_t style, char *tmp, size_t size, size_t *k)
{
	size_t seq = nnn_utf8_seq(p, n);
	*k = seq ? seq : 1;
	return esc_one(seq ? utf8_cp(p, seq) : p[0], seq, style, tmp, size);
}

size_t nnn_esc(char *dst, size_t size, const char *s, size_t n, nnn_esc_t style)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t at = 0, k;
	char tmp[16];
	if (!size)
		return 0;
	for (size_t i = 0; i < n; i += k) {
		const char *e = esc_at(p + i, n - i, style, tmp, sizeof tmp, &k);
		const char *from = e ? e : s + i;
		size_t len = e ? strlen(e) : k;
		if (at + len >= size)
			break;
		memcpy(dst + at, from, len);
		at += len;
	}
	dst[at] = '\0';
	return at;
}

void nnn_esc_put(const char *s, size_t n, nnn_esc_t style, void (*put)(void *arg, const char *p, size_t len),
                 void *arg)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t run = 0, k; /* text as is from s + run */
	char tmp[16];
	for (size_t i = 0; i < n; i += k) {
		const char *e = esc_at(p + i, n - i, style, tmp, sizeof tmp, &k);
		if (!e)
			continue;
		if (i > run)
			put(arg, s + run, i - run);
		put(arg, e, strlen(e));
		run = i + k;
	}
	if (n > run)
		put(arg, s + run, n - run);
}

size_t nnn_utf8_seq(const unsigned char *s, size_t n)
{
	size_t len;
	uint32_t cp, min;
	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0)
		len = 2, cp = s[0] & 0x1fu, min = 0x80;
	else if ((s[0] & 0xf0) == 0xe0)
		len = 3, cp = s[0] & 0x0fu, min = 0x800;
	else if ((s[0] & 0xf8) == 0xf0)
		len = 4, cp = s[0] & 0x07u, min = 0x10000;
	else
		return 0;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3fu);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

size_t nnn_edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), row[33];
	if (la > 32 || lb > 32)
		return SIZE_MAX;
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j], best = diag + (a[i - 1] != b[j - 1]);
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			diag = up;
			row[j] = best;
		}
	}
	return row[lb];
}
