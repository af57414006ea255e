/* origconv.c: the note validate and info give for a layer the original
 * Neural Network Notions framework computes differently from the spec
 * (nnn/compat.h, docs/original-framework.md). */
#include <inttypes.h>
#include <stdlib.h>

#include <nnn/compat.h>
#include <nnn/shape.h>

#include "cli.h"

/* "2x3" into buf. */
static const char *sizes(const nnn_layer_window_t *w, char *buf, size_t size)
{
	size_t k = 0;
	buf[0] = 0;
	for (int32_t j = 0; j < w->n && k < size; j++)
		k += (size_t)snprintf(buf + k, size - k, "%s%d", j ? "x" : "", (int)w->k[j]);
	return buf;
}

/* Whether the original computes layer L differently; *used: how many of
 * its *taps spatial taps it sums. */
static bool differs(const nnn_layer_window_t *w, int64_t *taps, int64_t *used)
{
	uint32_t *mult;
	*taps = 1;
	for (int32_t j = 0; j < w->n; j++) {
		if (w->k[j] < 1 || *taps > INT32_MAX / w->k[j])
			return false; /* the layer's own rules say what is wrong */
		*taps *= w->k[j];
	}
	if (!(mult = malloc((size_t)*taps * sizeof *mult)))
		return false;
	*used = *taps - nnn_conv_original_taps(w->n, w->k, mult);
	free(mult);
	return *used != *taps;
}

int cli_conv_notes(const char *path, const nnn_model_t *m)
{
	int notes = 0;
	for (int32_t i = 0; m && i < m->layer_count; i++) {
		const nnn_layer_t *L = &m->layers[i];
		nnn_layer_window_t w;
		int64_t taps, used;
		char k[160], at[32] = "";
		/* Sliding windows are the Conv's: the schema's io says which layers
		 * slide one and over which dims, and nnn/compat.h what the original
		 * did with them. */
		if (!nnn_layer_window(L, &w) || !differs(&w, &taps, &used))
			continue;
		if (!notes)
			fflush(stdout); /* after the report it belongs to, on a terminal */
		if (w.at != NNN_NO_OFFSET)
			snprintf(at, sizeof at, " @0x%" PRIx64, w.at);
		fprintf(stderr,
		        "nnnkit: %s: note: layers[%d].%s%s: %s kernel of spatial size %s: the original Neural Network "
		        "Notions framework computes such a kernel differently (it sums %" PRId64 " of its %" PRId64
		        " taps, some more than once); if the file was trained there, run it with --conv-compat original "
		        "(docs/original-framework.md)\n",
		        path, (int)i, w.field ? w.field : "", at, nnn_layer_title(L), sizes(&w, k, sizeof k), used, taps);
		notes++;
	}
	return notes;
}
