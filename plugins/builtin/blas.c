/* blas.c: the portable path's sgemm, from a CBLAS library loaded when a
 * layer's state first needs it, not linked. Linked, OpenBLAS started up in
 * every process that loaded the plugin (its threads; under a small
 * address-space limit, a spin that never ended), `nnnkit info` included,
 * though the AVX2 and AVX-512 kernels never call it. dlopen counts
 * references, so every state opens its own handle and closes it when
 * freed: there is no global state. */
#define _GNU_SOURCE /* secure_getenv */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "builtin.h"

/* The type is spelled out so that no cblas_sgemm symbol is referenced;
 * this checks it against the header's declaration (not evaluated). */
_Static_assert(_Generic(&cblas_sgemm, bi_sgemm_fn: 1, default: 0), "bi_sgemm_fn is not cblas_sgemm's type");

#define DEFAULT_BLAS "libopenblas.so.0"

nnn_status_t bi_blas_open(bi_blas_t *b, char *msg, size_t msg_size)
{
	const char *name = secure_getenv("NNN_BUILTIN_BLAS");
	void (*set_threads)(int);
	void *sym;
	memset(b, 0, sizeof *b);
	name = name && *name ? name : DEFAULT_BLAS;
	if (!(b->lib = dlopen(name, RTLD_NOW | RTLD_LOCAL)))
		return bi_fail(msg, msg_size, NNN_E_KERNEL,
		               "cannot load %s, the BLAS library of the portable path (NNN_BUILTIN_ISA=generic, or a CPU "
		               "without AVX2 and FMA): %s; install it (apt-get install libopenblas0), or leave "
		               "NNN_BUILTIN_ISA unset on a CPU with AVX2",
		               name, dlerror());
	dlerror();
	if (!(sym = dlsym(b->lib, "cblas_sgemm"))) {
		const char *e = dlerror();
		bi_fail(msg, msg_size, NNN_E_KERNEL,
		        "%s has no cblas_sgemm (%s): set NNN_BUILTIN_BLAS to a CBLAS library, or unset it for %s", name,
		        e ? e : "NULL", DEFAULT_BLAS);
		bi_blas_close(b);
		return NNN_E_KERNEL;
	}
	memcpy(&b->sgemm, &sym, sizeof b->sgemm); /* object to function pointer, as POSIX allows */
	/* The portable path splits its rows over threads itself, each calling
	 * sgemm: OpenBLAS's own threads would only fight them. Its thread
	 * count is one setting for the whole process, so this also holds for
	 * other OpenBLAS calls of the host. */
	if ((sym = dlsym(b->lib, "openblas_set_num_threads")) != NULL) {
		memcpy(&set_threads, &sym, sizeof set_threads);
		set_threads(1);
	}
	return NNN_OK;
}

void bi_blas_close(bi_blas_t *b)
{
	if (b->lib)
		dlclose(b->lib);
	memset(b, 0, sizeof *b);
}
