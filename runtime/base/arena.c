/* arena.c: see arena.h. */
#include <stdint.h>
#include <stdlib.h>

#include "arena.h"

struct nnn_arena_block {
	nnn_arena_block_t *next;
	max_align_t data[];
};

#define ARENA_CHUNK ((size_t)64 * 1024)

void *nnn_arena_alloc(nnn_arena_t *a, size_t size)
{
	size_t align = sizeof(max_align_t);
	size_t need = (size + align - 1) / align * align;
	nnn_arena_block_t *b;

	if (need < size)
		return NULL;
	if (!a->head || a->cap - a->used < need) {
		/* Big requests get a block of their own so small ones keep packing. */
		size_t cap = need > ARENA_CHUNK / 4 ? need : ARENA_CHUNK;
		if (cap > SIZE_MAX - sizeof *b)
			return NULL;
		b = malloc(sizeof *b + cap);
		if (!b)
			return NULL;
		if (cap == need && a->head) {
			/* Keep the current block open for small requests. */
			b->next = a->head->next;
			a->head->next = b;
			return b->data;
		}
		b->next = a->head;
		a->head = b;
		a->used = 0;
		a->cap = cap;
	}
	b = a->head;
	a->used += need;
	return (char *)b->data + a->used - need;
}

void nnn_arena_free(nnn_arena_t *a)
{
	nnn_arena_block_t *b = a->head;
	while (b) {
		nnn_arena_block_t *next = b->next;
		free(b);
		b = next;
	}
	a->head = NULL;
	a->used = a->cap = 0;
}
