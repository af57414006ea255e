/* tmpdir.h: one temp folder per test, made on first use and removed by the
 * suite's fini even when an assertion fails. Criterion runs each test in its
 * own process, so each test gets its own folder. */
#ifndef NNN_TEST_TMPDIR_H
#define NNN_TEST_TMPDIR_H

/* The test's temp folder, /tmp/<prefix>XXXXXX made by mkdtemp on the first
 * call (so a skipped test, whose fini Criterion does not run, leaves nothing
 * behind); later calls return the same folder. Fails the test when it cannot
 * be made. */
const char *t_tmpdir(const char *prefix);

/* "<t_tmpdir(prefix)>/<name>" in a ring of 16 static buffers, so a few can be
 * live at once; fails the test when one does not fit. */
const char *t_tmppath(const char *prefix, const char *name);

/* Removes the folder and everything in it, when one was made: a suite's
 * .fini. */
void t_tmpdir_remove(void);

#endif
