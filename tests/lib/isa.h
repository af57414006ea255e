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

/* Holds the plugin to isa: NULL (the CPU's best, as the plugin picks
 * it), "avx2" or "generic" (NNN_BUILTIN_ISA), or one of the two AVX-512
 * paths of t_paths, "avx512" or "avx512-half" (NNN_BUILTIN_ZMM full or
 * half: the kernels for CPUs whose 512-bit units are full or half width). */
void t_use_isa(const char *isa);

/* Whether isa runs the plugin's own micro-kernels, whose sums are in one
 * fixed order whatever the instruction set and the thread count. */
bool t_isa_is_fast(const char *isa);

/* What isa runs on this CPU, as the plugin picks it: "avx512" (for NULL,
 * whichever AVX-512 path the CPU prefers), "avx512-half", "avx2" or
 * "generic". */
const char *t_isa_runs(const char *isa);

/* The plugin's paths by name (each also a value for t_use_isa), for the
 * suites that check each on its own and skip, saying so, the ones this CPU
 * cannot run (issue 34): */
#define T_NPATHS 4
extern const char *const t_paths[T_NPATHS]; /* "avx512", "avx512-half", "avx2", "generic" */

/* Whether this CPU runs path `name` (under valgrind, which hides AVX-512,
 * neither AVX-512 path; "avx512-half" needs AVX-512VL too); when not, why,
 * in words for cr_skip_test. */
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
