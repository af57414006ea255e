/* isa.c: see isa.h. */
#define _POSIX_C_SOURCE 200809L
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isa.h"

const char *const t_isas[T_NISAS] = { NULL, "avx2", "generic" };

void t_use_isa(const char *isa)
{
	const bool avx512 = isa && !strncmp(isa, "avx512", 6);
	if (isa && !avx512)
		setenv("NNN_BUILTIN_ISA", isa, 1);
	else
		unsetenv("NNN_BUILTIN_ISA");
	if (avx512)
		setenv("NNN_BUILTIN_ZMM", strcmp(isa, "avx512-half") ? "full" : "half", 1);
	else
		unsetenv("NNN_BUILTIN_ZMM");
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

/* AVX-512VL, which the plugin's half-width kernels need besides AVX-512F
 * (plugins/builtin/kern.c, bi_zmm_half). */
static bool cpu_vl(void)
{
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx512vl");
#else
	return false;
#endif
}

const char *t_isa_runs(const char *isa)
{
	const char *best = cpu_best();
	if (isa && strcmp(isa, "generic") == 0)
		return "generic";
	if (isa && strcmp(isa, "avx2") == 0 && strcmp(best, "avx512") == 0)
		return "avx2";
	if (isa && strcmp(isa, "avx512-half") == 0 && strcmp(best, "avx512") == 0)
		return cpu_vl() ? "avx512-half" : "avx512";
	return best;
}

const char *const t_paths[T_NPATHS] = { "avx512", "avx512-half", "avx2", "generic" };

bool t_path_here(const char *name, char *why, size_t size)
{
	const char *runs = t_isa_runs(name);
	if (strcmp(runs, name) == 0)
		return true;
	/* The plugin's own test (kern.c, bi_isa): AVX-512F for the AVX-512
	 * kernels, AVX2 and FMA for the AVX2 ones; valgrind reports no AVX-512. */
	const char *needs = !strcmp(name, "avx512") ? "AVX-512F" : !strcmp(name, "avx512-half") ? "AVX-512F and VL" : "AVX2 and FMA";
	snprintf(why, size, "this CPU has no %s%s (the builtin plugin runs its %s path instead): the %s kernels are not "
	         "checked here; run the suite on a CPU with %s to check them",
	         needs, strncmp(name, "avx512", 6) == 0 ? ", or valgrind hides it" : "", runs, name, needs);
	return false;
}

void t_path_specs(t_pathspec_t v[T_NPATHS])
{
	for (int i = 0; i < T_NPATHS; i++)
		snprintf(v[i].name, sizeof v[i].name, "%s", t_paths[i]);
}
