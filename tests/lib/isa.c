/* isa.c: see isa.h. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
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

const char *const t_paths[T_NPATHS] = { "avx512", "avx2", "generic" };

const char *t_path_cap(const char *name)
{
	return strcmp(name, "avx512") == 0 ? NULL : name;
}

bool t_path_here(const char *name, char *why, size_t size)
{
	const char *runs = t_isa_runs(t_path_cap(name));
	if (strcmp(runs, name) == 0)
		return true;
	/* The plugin's own test (kern.c, bi_isa): AVX-512F for the AVX-512
	 * kernels, AVX2 and FMA for the AVX2 ones; valgrind reports no AVX-512. */
	snprintf(why, size, "this CPU has no %s%s (the builtin plugin runs its %s path instead): the %s kernels are not "
	         "checked here; run the suite on a CPU with %s to check them",
	         strcmp(name, "avx512") == 0 ? "AVX-512F" : "AVX2 with FMA",
	         strcmp(name, "avx512") == 0 ? ", or valgrind hides it" : "", runs, name,
	         strcmp(name, "avx512") == 0 ? "AVX-512F" : "AVX2 and FMA");
	return false;
}

void t_path_specs(t_pathspec_t v[T_NPATHS])
{
	for (int i = 0; i < T_NPATHS; i++)
		snprintf(v[i].name, sizeof v[i].name, "%s", t_paths[i]);
}
