/* ctx.h: the build folder the tests use ($NNN_BUILD, which make sets to its
 * own, else "build" from the project root), libnnn contexts with one of
 * its plugins loaded, and the fixture plugins. */
#ifndef NNN_TEST_CTX_H
#define NNN_TEST_CTX_H

#include <nnn/context.h>

/* $NNN_BUILD, or "build" when it is unset or empty. */
const char *t_build_dir(void);

/* A new context with the plugin t_build_dir()/rel loaded ("plugins/builtin.so",
 * "fixtures/good.so"); the test fails when either step does. Free it with
 * nnn_ctx_free. */
nnn_ctx_t *t_ctx_with(const char *rel);

/* A new empty context (the test fails when it cannot be made). */
nnn_ctx_t *t_ctx_new(void);

/* The path of the fixture plugin t_build_dir()/fixtures/NAME.so (make builds
 * them from tests/plugins/fixture.c); the test fails when it is missing. The
 * four latest paths stay valid. */
const char *t_fixture(const char *name);

/* Loads PATH into C and expects a refusal at STAGE, with every string of
 * WANT (NULL-terminated) in the message and the context's report. */
void t_expect_refused(nnn_ctx_t *c, const char *path, const char *stage, const char *const *want);

#endif
