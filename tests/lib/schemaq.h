/* schemaq.h: what the schema says, for tests that take their expectations
 * from it (IDs, names, indices, counts) instead of restating today's schema,
 * so that a compatible growth of schema/nnn.lua leaves them passing. */
#ifndef NNN_TEST_SCHEMAQ_H
#define NNN_TEST_SCHEMAQ_H

#include <stdint.h>

#include <nnn/status.h>

/* The value of a Lua expression (printf-style) over schema/nnn.lua, with the
 * helpers of tests/tools/schemaq.lua (index, value, unused, next_free, ...;
 * the IDs of the tree's plugin fragments, examples/x/schema.lua, count as
 * taken). A list comes back one element a line. The test fails when the
 * query does. Returned in a ring of 8 static buffers. */
const char *sq(const char *fmt, ...) NNN_PRINTF(1, 2);
/* The same, as an integer (the test fails when it is not one). */
long long sq_int(const char *fmt, ...) NNN_PRINTF(1, 2);

/* The lowest value >= from that `name` (a generated nnn_<enum>_name) knows
 * nothing of: a value the codec does not define. */
int64_t t_undefined(const char *(*name)(int64_t), int64_t from);
/* The highest value <= from that `name` knows nothing of (-1: none): far
 * from the small numbers a test file holds as data. */
int64_t t_undefined_down(const char *(*name)(int64_t), int64_t from);

#endif
