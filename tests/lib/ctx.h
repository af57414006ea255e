/* ctx.h: the build folder the tests use ($NNN_BUILD, which make sets to its
 * own, else "build" from the project root) and libnnn contexts with one of
 * its plugins loaded. */
#ifndef NNN_TEST_CTX_H
#define NNN_TEST_CTX_H

#include <nnn/context.h>

/* $NNN_BUILD, or "build" when it is unset or empty. */
const char *t_build_dir(void);

/* A new context with the plugin t_build_dir()/rel loaded ("plugins/builtin.so",
 * "fixtures/good.so"); the test fails when either step does. Free it with
 * nnn_ctx_free. */
nnn_ctx_t *t_ctx_with(const char *rel);

#endif
