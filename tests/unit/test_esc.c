/* test_esc.c: nnn_esc, the one escaping of text from a file, a plugin or
 * the command line, in each of its styles (nnn/esc.h): what each output of
 * nnnkit shows for C0, C1 and bidirectional controls, quotes, backslashes,
 * newlines, tabs, '<' and a byte that is not UTF-8. */
#include <criterion/criterion.h>
#include <string.h>

#include <nnn/esc.h>

/* ESC, quote, backslash, newline, tab, '<', U+009B (8-bit CSI), U+202E, 0xff. */
static const char text[] = "a\x1b\"\\\n\t<\xc2\x9b\xe2\x80\xae\xff";

static void expect(nnn_esc_t style, const char *want)
{
	char out[256];
	size_t n = nnn_esc(out, sizeof out, text, sizeof text - 1, style);
	cr_assert_str_eq(out, want, "style %d", (int)style);
	cr_assert_eq(n, strlen(want));
}

Test(esc, every_style)
{
	expect(NNN_ESC_C, "a\\x1b\\\"\\\\\\n\\x09<\\u009b\\u202e\\xff");
	expect(NNN_ESC_JSON, "a\\u001b\\\"\\\\\\n\\u0009<\\u009b\\u202e\\ufffd");
	expect(NNN_ESC_MSG, "a\\x1b\"\\\n\t<\\u009b\\u202e\\xff");
	expect(NNN_ESC_DOT, "a?\\\"\\\\??" "<???"); /* split: no trigraph */
	/* a JSON string whose text is the message form: the page shows \u202e */
	expect(NNN_ESC_PAGE, "a\\\\x1b\\\"\\\\\\n\\t\\u003c\\\\u009b\\\\u202e\\\\xff");
}

/* nnn_esc_put gives the same text, piece by piece. */
static void append(void *arg, const char *p, size_t n)
{
	strncat(arg, p, n);
}

Test(esc, put_gives_the_same_text)
{
	for (int style = NNN_ESC_C; style <= NNN_ESC_PAGE; style++) {
		char whole[256], pieces[256] = "";
		nnn_esc(whole, sizeof whole, text, sizeof text - 1, (nnn_esc_t)style);
		nnn_esc_put(text, sizeof text - 1, (nnn_esc_t)style, append, pieces);
		cr_assert_str_eq(pieces, whole, "style %d", style);
	}
}

/* Cut on a whole escape, never inside one. */
Test(esc, cut_on_a_whole_escape)
{
	char out[8];
	cr_assert_eq(nnn_esc(out, sizeof out, "ab\xe2\x80\xae", 5, NNN_ESC_C), 2);
	cr_assert_str_eq(out, "ab");
}

/* nnn_utf8_seq: the length of one valid sequence, 0 for anything else. */
Test(esc, utf8_seq)
{
	cr_assert_eq(nnn_utf8_seq((const unsigned char *)"a", 1), 1);
	cr_assert_eq(nnn_utf8_seq((const unsigned char *)"\xc3\xa9", 2), 2);        /* U+00E9 */
	cr_assert_eq(nnn_utf8_seq((const unsigned char *)"\xe2\x80\xae", 3), 3);    /* U+202E: valid, if unsafe */
	cr_assert_eq(nnn_utf8_seq((const unsigned char *)"\xf0\x9f\x98\x80", 4), 4);
	cr_assert_eq(nnn_utf8_seq((const unsigned char *)"\xe2\x80\xae", 2), 0);    /* cut short */
	cr_assert_eq(nnn_utf8_seq((const unsigned char *)"\xc0\xaf", 2), 0);        /* overlong */
	cr_assert_eq(nnn_utf8_seq((const unsigned char *)"\xed\xa0\x80", 3), 0);    /* surrogate */
	cr_assert_eq(nnn_utf8_seq((const unsigned char *)"\xf4\x90\x80\x80", 4), 0); /* above U+10FFFF */
	cr_assert_eq(nnn_utf8_seq((const unsigned char *)"\x80", 1), 0);            /* continuation byte */
}
