/* export.c: `nnnkit export MODEL DIR`: every tensor as a .npy file, the
 * model as JSON referencing them, and a flat index of the tensors. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <nnn/json.h>

#include "cli.h"

static int run(int argc, char **argv, cli_env_t *env);

const cli_cmd_t cmd_export = {
	"export", "write every tensor as .npy, with the model as JSON and an index",
	"usage: nnnkit export MODEL DIR\n"
	"Writes into DIR (made if missing) one .npy file (float32) per float array of MODEL (a .nnn\n"
	"file or its JSON form), named after its field path (layers.0.weights.npy), and\n"
	"  DIR/model.json  the JSON form (docs/json.md), every array a reference to its file:\n"
	"                  nnnkit build DIR/model.json OUT.nnn gives MODEL back, byte for byte\n"
	"  DIR/index.json  {\"model\": \"model.json\", \"tensors\": [{\"path\", \"file\", \"shape\",\n"
	"                  \"dtype\"}, ...]}, one entry per file, in file order\n"
	"In Python: {t['path']: np.load(DIR + '/' + t['file']) for t in json.load(f)['tensors']}.\n",
	run,
};

/* The index, made as the JSON writer reports each file. */
typedef struct index {
	FILE *f;
	char *text;
	size_t len;
	int n;
} index_t;

static void on_npy(void *ctx, const char *path, const char *file, const nnn_shape_t *shape)
{
	index_t *x = ctx;
	fprintf(x->f, "%s\n    {\"path\": ", x->n++ ? "," : "");
	cli_json_str(x->f, path, strlen(path));
	fprintf(x->f, ", \"file\": ");
	cli_json_str(x->f, file, strlen(file));
	fprintf(x->f, ", \"shape\": [");
	for (int32_t i = 0; i < shape->rank; i++)
		fprintf(x->f, "%s%" PRId64, i ? ", " : "", shape->dims[i]);
	fprintf(x->f, "], \"dtype\": \"float32\"}");
}

static int run(int argc, char **argv, cli_env_t *env)
{
	const char *files[2] = { NULL, NULL };
	int nfiles = 0, code = EXIT_VALID;
	char model[4096], index[4096];
	cli_model_t cm;
	nnn_diags_t d;

	for (int i = 1; i < argc; i++) {
		if (cli_is_help(argv[i])) {
			fputs(cmd_export.help, stdout);
			return EXIT_VALID;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			return cli_usage(&cmd_export, "unknown option %s", argv[i]);
		} else if (nfiles == 2) {
			return cli_usage(&cmd_export, "expected MODEL and DIR");
		}
		files[nfiles++] = argv[i];
	}
	if (nfiles != 2)
		return cli_usage(&cmd_export, "expected MODEL and DIR");
	snprintf(model, sizeof model, "%s/model.json", files[1]);
	snprintf(index, sizeof index, "%s/index.json", files[1]);

	index_t x = { 0 };
	x.f = open_memstream(&x.text, &x.len);
	if (!x.f) {
		fprintf(stderr, "nnnkit: export: no memory\n");
		return EXIT_USAGE;
	}
	fprintf(x.f, "{\n  \"model\": \"model.json\",\n  \"tensors\": [");
	nnn_diags_init(&d);
	nnn_status_t st = cli_model_open(env, files[0], &cm, &d);
	const char *blame = files[0];
	if (st == NNN_OK) {
		nnn_json_write_opts_t o = { .tensors_dir = files[1], .json_path = model, .on_npy = on_npy, .ctx = &x };
		blame = model;
		st = nnn_json_write_file(cm.m, model, &o, &d);
		cli_model_close(&cm);
	}
	fprintf(x.f, "%s]\n}\n", x.n ? "\n  " : "");
	if (fclose(x.f) != 0 && st == NNN_OK)
		st = nnn_diags_add(&d, NNN_E_NOMEM, NNN_NO_OFFSET, "", "no memory for the index");
	if (st == NNN_OK) {
		blame = index;
		st = nnn_write_atomic_bytes(index, x.text, x.len, &d);
	}
	if (st != NNN_OK)
		code = cli_report(blame, &d, st);
	free(x.text);
	nnn_diags_free(&d);
	return code;
}
