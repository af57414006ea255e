/* verifyline.h: the figures of nnnkit convert --verify's line, read from a
 * command's standard error, for the tests of every ONNX round trip. */
#ifndef NNN_TEST_VERIFYLINE_H
#define NNN_TEST_VERIFYLINE_H

#include <stdbool.h>

typedef struct t_verify {
	long long rows;   /* "on N seeded inputs" */
	char input[128];  /* the input shape, "[4, 28, 28, 1]" */
	double abs, rel;  /* max abs error, max rel error */
	bool opened;      /* the line says the shape is the smallest the model takes */
} t_verify_t;

/* The line "nnnkit: verify: OUT against IN on N seeded inputs [..]...: max
 * abs error A..., max rel error R..." in text; false when there is none
 * (or it does not parse). */
bool t_verify_line(const char *text, const char *out, const char *in, t_verify_t *v);

#endif
