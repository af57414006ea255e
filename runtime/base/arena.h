/* arena.h (internal): memory owned by one decoded model, freed at once
 * (arena.c). */
#ifndef NNN_ARENA_H
#define NNN_ARENA_H

#include <stddef.h>

typedef struct nnn_arena_block nnn_arena_block_t;
typedef struct nnn_arena {
	nnn_arena_block_t *head;
	size_t used, cap; /* of head */
} nnn_arena_t;

void *nnn_arena_alloc(nnn_arena_t *a, size_t size);
void nnn_arena_free(nnn_arena_t *a);

#endif
