/* scan.h: a model file read for pictures (`nnnkit map`, `nnnkit graph`):
 * every field the decoder visits, the layers they form, every float
 * array's statistics, every problem, and each layer's input and output
 * shapes.
 *
 * Memory follows the file, not what is drawn: fields and tensors are handed
 * to the caller one at a time (map writes each as it comes), and only the
 * layers are kept, each as a small record whose texts are shared with every
 * other layer that says the same. A page is written as it is made, never
 * held whole. What stays is the decoded model while a pass runs (the
 * decoder's own, a few hundred bytes a layer) and about 100 bytes a layer.
 *
 * An invalid file is scanned too: the scan then holds what was decoded
 * before the problem (decoding keeps going past problems that leave the
 * framing intact), and the problems say what is wrong.
 */
#ifndef NNN_CLI_SCAN_H
#define NNN_CLI_SCAN_H

#include "cli.h"

#define CLI_BINS 32

/* One field as the decoder visited it; the strings are valid during the
 * call that hands it over. */
typedef struct cli_field {
	size_t index;      /* its place among the file's fields, from 0 */
	uint64_t offset, size;
	const char *path;  /* "layers[0].bias.data" */
	const char *value; /* as `nnnkit dump` shows it */
	const char *kind;  /* the enum's name, else the primitive's: "layer_id", "f32_array" (static) */
	int32_t layer;     /* index of its layer; -1 for the header */
} cli_field_t;

/* A float array's values: counts, statistics and a histogram; `dims` is
 * valid during the call that hands it over. */
typedef struct cli_tensor {
	size_t field;            /* its data field */
	const char *dims;        /* "[3, 2]" (from its dims field), or "?" */
	cli_vstats_t st;         /* counts and statistics, as `nnnkit stats` gives them */
	uint64_t bins[CLI_BINS]; /* the finite values over [min, max] */
} cli_tensor_t;

/* A layer as kept: its texts are offsets into the scan's text
 * (cli_scan_str; 0 for none). */
typedef struct cli_layer {
	size_t first, end;  /* its fields: [first, end) */
	int id, act_id;     /* -1 while not read */
	const char *kernel; /* file name of the plugin that runs it (the context's); NULL when none */
	size_t type;        /* "Dense", a plugin type's name, or "unknown layer ID 7" */
	size_t act;         /* "Leaky ReLU(tau=0.1)" */
	size_t summary;     /* the type's own fields: "neurons=2 flatten=false" */
	size_t in, out;     /* shapes; '?' where unknown */
} cli_layer_t;

/* Owned: fill with cli_scan_open (then cli_scan_layers, cli_scan_tensors),
 * release with cli_scan_free (also after a failure). */
/* Where a scan's input shape came from. */
enum { CLI_INPUT_GIVEN = 1, /* --input-shape */
       CLI_INPUT_FIXED = 2  /* the layers fix it, with a batch of 1 (nnn_model_fixed_input) */ };

typedef struct cli_scan {
	size_t size;          /* file bytes */
	size_t nfields;       /* fields visited by cli_scan_layers */
	cli_layer_t *layers;  /* by cli_scan_layers */
	size_t nlayers, lcap;
	char *desc;           /* the description's bytes (at most CLI_DESC_MAX) */
	size_t desc_len;
	int desc_cut;         /* the description was longer */
	uint64_t decoded_end; /* one past the last byte decoded */
	nnn_diags_t problems; /* every problem, as `nnnkit validate` finds them */
	nnn_status_t status;  /* NNN_OK for a valid model */
	int have_input;       /* shapes follow from `input`: CLI_INPUT_GIVEN, CLI_INPUT_FIXED or 0 */
	nnn_shape_t input;
	int oom;              /* an allocation failed: the scan is incomplete */
	/* private */
	nnn_file_t *file;
	const nnn_ctx_t *ctx;
	char *text;           /* the layers' texts, each once, NUL-terminated; offset 0 is "" */
	size_t tlen, tcap;
	size_t *slots;        /* the texts by hash: offsets, 0 free */
	size_t nslots, ntexts;
} cli_scan_t;

#define CLI_DESC_MAX 4096

/* Opens `path` as every command opens a model (cli_file_open; plugins from
 * env's context) and finds its problems (s->status, s->problems). NNN_OK
 * when the file could be read (the model itself may be invalid); otherwise
 * the problem is in diags. */
nnn_status_t cli_scan_open(cli_scan_t *s, cli_env_t *env, const char *path, const nnn_shape_t *input,
                           nnn_diags_t *diags);

/* Decodes the file, handing each field to on_field (may be NULL), and
 * keeps its layers, description and decoded end; then the layers' shapes.
 * NNN_E_NOMEM in diags when they cannot be held. */
nnn_status_t cli_scan_layers(cli_scan_t *s, void (*on_field)(void *arg, const cli_field_t *f), void *arg,
                             nnn_diags_t *diags);

/* Decodes the file again, handing each float array's statistics to
 * on_tensor, in file order (a second pass: map writes the fields, then the
 * tensors, and keeps neither). */
nnn_status_t cli_scan_tensors(cli_scan_t *s, void (*on_tensor)(void *arg, const cli_tensor_t *t), void *arg,
                              nnn_diags_t *diags);

/* A layer's text; NULL for 0 (none). Valid until cli_scan_free. */
const char *cli_scan_str(const cli_scan_t *s, size_t at);

void cli_scan_free(cli_scan_t *s);
/* The scanned file decoded once more, whole (each layer's window and
 * tensors for map and graph); NULL when it does not decode. Owned: free
 * with nnn_model_free. */
nnn_model_t *cli_scan_model(const cli_scan_t *s);

/* The whole of a picture command (`nnnkit map`, `nnnkit graph`): the scan
 * of MODEL (with --input-shape) opened, then `render` writing straight to
 * --output, atomically (or to stdout for "-" or when it is not given), as
 * it goes: render calls cli_scan_layers (and cli_scan_tensors) itself, and
 * returns their status, or NNN_OK. An invalid model is still rendered; its
 * problems go to stderr and the exit code is 1. A failure while rendering
 * leaves no file (stdout may have part of the output). */
int cli_picture(const cli_args_t *a, cli_env_t *env,
                nnn_status_t (*render)(FILE *out, cli_scan_t *s, const char *path, nnn_diags_t *diags));
extern const cli_pos_t cli_picture_pos[];

#endif
