/* isa.h: the instruction sets the builtin plugin can be held to, for the
 * suites that run its kernels under each (kernels, fastpaths). The plugin
 * reads NNN_BUILTIN_ISA when a layer is prepared (or run without state). */
#ifndef NNN_TEST_ISA_H
#define NNN_TEST_ISA_H

#include <stdbool.h>

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

#endif
