/* path.h (internal): field paths ("layers[2].weights.dims[1]"), built as
 * the decoder, the validator and the encoder go (path.c). */
#ifndef NNN_PATH_H
#define NNN_PATH_H

#include <stddef.h>
#include <stdint.h>

#include <nnn/status.h>

typedef struct nnn_path {
	char s[NNN_PATH_MAX];
	size_t len;
} nnn_path_t;

/* Each push returns a mark; pop restores the path to that mark. */
size_t nnn_path_push(nnn_path_t *p, const char *name);
size_t nnn_path_index(nnn_path_t *p, int64_t i);
static inline void nnn_path_pop(nnn_path_t *p, size_t mark)
{
	p->len = mark;
	p->s[mark] = '\0';
}

/* The name a float array goes by outside the .nnn file (nnnkit export's
 * .npy files, safetensors' tensors): the first len bytes of its path with
 * indexes as dotted parts, "layers[0].weights" -> "layers.0.weights", so
 * that shells need no quoting. Written to out (cut to size, terminated);
 * returns its length. */
size_t nnn_path_dotted(const char *path, size_t len, char *out, size_t size);

#endif
