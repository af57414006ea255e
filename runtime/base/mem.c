/* mem.c: large buffers (mem.h).
 *
 * The first touch of every 4 KiB page of a fresh buffer is a page fault,
 * and in a virtual machine a fault can cost more than the work done on the
 * page: filling a 30 MiB input took ~100 ms of faults, ~10 ms in 2 MiB
 * pages. In THP's "madvise" mode (Debian's default) memory gets huge pages
 * only when asked, and only in whole 2 MiB-aligned blocks. */
#define _DEFAULT_SOURCE /* madvise, MADV_HUGEPAGE */
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "mem.h"

#define BIG ((size_t)2 << 20)
#define HUGE_PAGE ((size_t)2 << 20)

void *nnn_mem_big(size_t n)
{
	void *p;
	if (n > SIZE_MAX - HUGE_PAGE)
		return NULL;
	if (n < BIG) /* aligned_alloc wants a multiple of the alignment */
		return aligned_alloc(64, n ? (n + 63) / 64 * 64 : 64);
	n = (n + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
	p = aligned_alloc(HUGE_PAGE, n);
#ifdef MADV_HUGEPAGE
	if (p)
		(void)madvise(p, n, MADV_HUGEPAGE);
#endif
	return p;
}
