/* isa.h: the instruction sets the builtin plugin can be held to, for the
 * suites that run its kernels under each (kernels, fastpaths). The plugin
 * reads NNN_BUILTIN_ISA when a layer is prepared (or run without state). */
#ifndef NNN_TEST_ISA_H
#define NNN_TEST_ISA_H

#include <stdbool.h>
#include <stddef.h>

/* NULL is the best the CPU has (under valgrind, which hides AVX-512, AVX2
 * at best); "avx2" caps it at AVX2; "generic" is the portable im2col +
 * sgemm path. */
#define T_NISAS 3
extern const char *const t_isas[T_NISAS];

/* Sets NNN_BUILTIN_ISA to isa, or unsets it for NULL. */
void t_use_isa(const char *isa);

/* Whether isa runs the plugin's own micro-kernels, whose sums are in one
 * fixed order whatever the instruction set and the thread count. */
bool t_isa_is_fast(const char *isa);

/* What isa runs on this CPU, as the plugin picks it: "avx512", "avx2" or
 * "generic". */
const char *t_isa_runs(const char *isa);

/* The plugin's paths by name, for the suites that check each on its own
 * and skip, saying so, the ones this CPU cannot run (issue 34): */
#define T_NPATHS 3
extern const char *const t_paths[T_NPATHS]; /* "avx512", "avx2", "generic" */

/* The NNN_BUILTIN_ISA value (for t_use_isa) that selects path `name`: NULL
 * (the best) for "avx512", else the name itself. */
const char *t_path_cap(const char *name);

/* Whether this CPU runs path `name` (under valgrind, which hides AVX-512,
 * "avx512" does not); when not, why, in words for cr_skip_test. */
bool t_path_here(const char *name, char *why, size_t size);

/* A path as a Criterion parameter (a test per path), and the parameters:
 * one per entry of t_paths. */
typedef struct t_pathspec {
	char name[16];
} t_pathspec_t;
void t_path_specs(t_pathspec_t v[T_NPATHS]);

/* Skips the running test (Criterion's cr_skip_test: the caller includes
 * criterion.h) when this CPU cannot run path `name`, saying why on stderr
 * too: Criterion shows its own [SKIP] lines only with --verbose. */
#define T_SKIP_UNLESS_PATH(test, name)                                                      \
	do {                                                                                   \
		char why_[400];                                                                \
		if (!t_path_here((name), why_, sizeof why_)) {                                 \
			fprintf(stderr, "[SKIP] %s: %s path: %s\n", (test), (name), why_);      \
			cr_skip_test("%s path: %s", (name), why_);                             \
		}                                                                              \
	} while (0)

#endif
