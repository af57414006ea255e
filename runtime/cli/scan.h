/* scan.h: a model file read for pictures (`nnnkit map`, `nnnkit graph`):
 * every field the decoder visits, the layers and tensors they form, every
 * problem, and each layer's input and output shapes.
 *
 * An invalid file is scanned too: the scan then holds what was decoded
 * before the problem (decoding keeps going past problems that leave the
 * framing intact), and the problems say what is wrong.
 */
#ifndef NNN_CLI_SCAN_H
#define NNN_CLI_SCAN_H

#include "cli.h"

#define CLI_BINS 32

/* One field as the decoder visited it. */
typedef struct cli_field {
	uint64_t offset, size;
	char *path;        /* "layers[0].bias.data" */
	char *value;       /* as `nnnkit dump` shows it */
	const char *kind;  /* the enum's name, else the primitive's: "layer_id", "f32_array" */
	int32_t layer;     /* index of its layer; -1 for the header */
} cli_field_t;

/* A float array's values: counts, statistics and a histogram. */
typedef struct cli_tensor {
	size_t field;           /* its data field */
	const char *dims;       /* "[3, 2]" (from its dims field), or "?" */
	cli_vstats_t st;        /* counts and statistics, as `nnnkit stats` gives them */
	uint64_t bins[CLI_BINS]; /* the finite values over [min, max] */
} cli_tensor_t;

typedef struct cli_layer {
	size_t first, end;  /* its fields: [first, end) */
	int id, act_id;     /* -1 while not read */
	char *type;         /* "Dense", a plugin type's name, or "unknown layer ID 7" */
	const char *kernel; /* file name of the plugin that runs it; NULL when none */
	char *act;          /* "Leaky ReLU(tau=0.1)" */
	char *summary;      /* the type's own fields: "neurons=2 flatten=false" */
	char *in, *out;     /* shapes; '?' where unknown */
} cli_layer_t;

/* Owned: fill with cli_scan, release with cli_scan_free (also after a
 * failed cli_scan). Strings are owned by the scan. */
typedef struct cli_scan {
	size_t size;                   /* file bytes */
	cli_field_t *fields;
	size_t nfields, fcap;
	cli_tensor_t *tensors;
	size_t ntensors, tcap;
	cli_layer_t *layers;
	size_t nlayers, lcap;
	char *desc;                    /* the description's bytes (at most CLI_DESC_MAX) */
	size_t desc_len;
	int desc_cut;                  /* the description was longer */
	uint64_t decoded_end;          /* one past the last byte decoded */
	nnn_diags_t problems;          /* every problem, as `nnnkit validate` finds them */
	nnn_status_t status;           /* NNN_OK for a valid model */
	int have_input;                /* shapes follow from an --input-shape */
	nnn_shape_t input;
	int oom;                       /* an allocation failed: the scan is incomplete */
} cli_scan_t;

#define CLI_DESC_MAX 4096

/* Reads `path` (plugins from ctx, which may be NULL) and fills *s. Returns
 * NNN_OK when the file could be read and scanned (the model itself may be
 * invalid: see s->status and s->problems); otherwise the problem is in
 * diags. */
nnn_status_t cli_scan(cli_scan_t *s, const char *path, const nnn_ctx_t *ctx, const nnn_shape_t *input,
                      nnn_diags_t *diags);
void cli_scan_free(cli_scan_t *s);

/* The field path relative to its layer ("bias.data"), or the whole path. */
const char *cli_scan_rel(const cli_field_t *f);

/* The whole of a picture command (`nnnkit map`, `nnnkit graph`): the
 * scan of MODEL (with --input-shape), `render` into memory, then the
 * output written atomically to --output (or to stdout for "-" or when it
 * is not given). An invalid model is still rendered; its problems go to
 * stderr and the exit code is 1. cli_opts_picture are its options. */
int cli_picture(const cli_args_t *a, cli_env_t *env, void (*render)(FILE *out, const cli_scan_t *s, const char *path));
extern const cli_pos_t cli_picture_pos[];

#endif
