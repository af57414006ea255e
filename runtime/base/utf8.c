/* utf8.c: see utf8.h. */
#include <nnn/esc.h>

#include "utf8.h"

bool nnn_cp_unsafe(uint32_t cp)
{
	return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp == 0x061c || cp == 0x200e || cp == 0x200f ||
	       (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

/* One definition of a valid sequence: nnn_utf8_seq's (esc.c). */
size_t nnn_utf8_bad(const unsigned char *s, size_t len)
{
	size_t i = 0, k;
	for (; i < len; i += k)
		if (!(k = nnn_utf8_seq(s + i, len - i)))
			return i;
	return len;
}
