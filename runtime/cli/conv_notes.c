/* conv_notes.c: the note validate and info give for a layer the original
 * Neural Network Notions framework computes differently from the spec
 * (nnn/compat.h, docs/original-framework.md). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

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

/* The note on one layer: where, and what the original does with it. */
typedef struct note {
	nnn_layer_window_t w;
	int64_t taps, used;
	char path[64];   /* "layers[2].kernels" */
	char msg[512];   /* what follows "PATH @0x..: " */
} note_t;

/* Sliding windows are the Conv's: the schema's io says which layers slide
 * one and over which dims, and nnn/compat.h what the original did with them. */
static bool note_of(const nnn_model_t *m, int32_t i, note_t *n)
{
	const nnn_layer_t *L = &m->layers[i];
	char k[160];
	if (!nnn_layer_window(L, &n->w) || !differs(&n->w, &n->taps, &n->used))
		return false;
	snprintf(n->path, sizeof n->path, "layers[%d]%s%s", (int)i, n->w.field ? "." : "", n->w.field ? n->w.field : "");
	snprintf(n->msg, sizeof n->msg,
	         "%s kernel of spatial size %s: the original Neural Network Notions framework computes such a kernel "
	         "differently (it sums %" PRId64 " of its %" PRId64 " taps, some more than once); if the file was "
	         "trained there, run it with --conv-compat original (docs/original-framework.md)",
	         nnn_layer_title(L), sizes(&n->w, k, sizeof k), n->used, n->taps);
	return true;
}

int cli_conv_notes(const char *path, const nnn_model_t *m)
{
	int notes = 0;
	note_t n;
	for (int32_t i = 0; m && i < m->layer_count; i++) {
		if (!note_of(m, i, &n))
			continue;
		if (!notes)
			fflush(stdout); /* after the report it belongs to, on a terminal */
		char at[32] = "";
		if (n.w.at != NNN_NO_OFFSET)
			snprintf(at, sizeof at, " @0x%" PRIx64, n.w.at);
		cli_say(stderr, "nnnkit: %s: note: %s%s: %s\n", cli_name(path), n.path, at, n.msg);
		notes++;
	}
	return notes;
}

void cli_conv_notes_json(FILE *f, const nnn_model_t *m)
{
	int notes = 0;
	note_t n;
	fputc('[', f);
	for (int32_t i = 0; m && i < m->layer_count; i++) {
		if (!note_of(m, i, &n))
			continue;
		fprintf(f, "%s\n  {\"path\": ", notes++ ? "," : "");
		cli_json_str(f, n.path, strlen(n.path));
		if (n.w.at != NNN_NO_OFFSET)
			fprintf(f, ", \"offset\": %" PRIu64, n.w.at);
		fputs(", \"kernel\": [", f);
		for (int32_t j = 0; j < n.w.n; j++)
			fprintf(f, "%s%d", j ? ", " : "", (int)n.w.k[j]);
		fprintf(f, "], \"taps\": %" PRId64 ", \"taps_summed\": %" PRId64 ", \"message\": ", n.taps, n.used);
		cli_json_str(f, n.msg, strlen(n.msg));
		fputc('}', f);
	}
	fputs(notes ? "\n]" : "]", f);
}
