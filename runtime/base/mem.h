/* mem.h (internal): large buffers. */
#ifndef NNN_MEM_H
#define NNN_MEM_H

#include <stddef.h>

/* malloc(n) for a buffer that may be large, on a 64-byte boundary (a cache
 * line); from 2 MiB on, on a 2 MiB one, and the kernel is asked to back it
 * with huge pages (a hint: nothing changes where transparent huge pages are
 * off). Free it with free(); NULL when out of memory. */
void *nnn_mem_big(size_t n);

#endif
