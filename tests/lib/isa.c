/* isa.c: see isa.h. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "isa.h"

const char *const t_isas[T_NISAS] = { NULL, "avx2", "generic" };

void t_use_isa(const char *isa)
{
	if (isa)
		setenv("NNN_BUILTIN_ISA", isa, 1);
	else
		unsetenv("NNN_BUILTIN_ISA");
}

/* The CPU's best, as plugins/builtin/kern.c's bi_isa() sees it. */
static const char *cpu_best(void)
{
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
		return __builtin_cpu_supports("avx512f") ? "avx512" : "avx2";
#endif
	return "generic";
}

bool t_isa_is_fast(const char *isa)
{
	return strcmp(t_isa_runs(isa), "generic") != 0;
}

const char *t_isa_runs(const char *isa)
{
	const char *best = cpu_best();
	if (isa && strcmp(isa, "generic") == 0)
		return "generic";
	if (isa && strcmp(isa, "avx2") == 0 && strcmp(best, "avx512") == 0)
		return "avx2";
	return best;
}
