/* export.c: `nnnkit export MODEL DIR`: every tensor as a .npy file, the
 * model as JSON referencing them, and a flat index of the tensors. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nnn/json.h>

#include "cli.h"

static int run(const cli_args_t *a, cli_env_t *env);

static const cli_opt_t export_opts[] = {
	{ "output", 'o', CLI_DIR_OUT, 0, "DIR", "the new folder (or give DIR after MODEL)",
	  .nodash = "export writes a folder of files" },
	{ NULL },
};
static const cli_pos_t export_pos[] = {
	{ "MODEL", CLI_IN, CLI_DASH, .help = CLI_MODEL_HELP },
	{ "DIR", CLI_DIR_OUT, 0, "the folder to write: new, or empty", .nodash = "export writes a folder of files",
	  .option = "output" },
	{ NULL },
};

const cli_cmd_t cmd_export = {
	.name = "export",
	.summary = "write every tensor as .npy, with the model as JSON and an index",
	.main = run,
	.opts = CLI_OPTS(export_opts),
	.pos = export_pos,
	.exits = CLI_EXITS_MODEL,
	.exit_what = { [1] = "the model is invalid: not read, or read and written but breaking a rule (said so)" },
	.help = "usage: nnnkit export MODEL [-o] DIR\n"
	"Writes a new folder DIR (or fills an empty one), all or nothing: one .npy file per array of\n"
	"numbers of MODEL (a .nnn file or its JSON form), of its element type's dtype ('<f4', '<f2',\n"
	"'|i1', ...; a bfloat16 tensor as its raw bits, '<u2', with a note on stderr), named after its\n"
	"field path (layers.0.weights.npy), and\n"
	"  DIR/model.json  the JSON form (docs/json.md), every array a reference to its file:\n"
	"                  nnnkit build DIR/model.json OUT.nnn gives MODEL back, byte for byte\n"
	"  DIR/index.json  {\"model\": \"model.json\", \"tensors\": [{\"path\", \"file\", \"shape\",\n"
	"                  \"dtype\"}, ...]}, one entry per file, in file order (dtype: the tensor's\n"
	"                  element type, \"float32\", \"float16\", ..., \"bfloat16\")\n"
	"In Python: {t['path']: np.load(DIR + '/' + t['file']) for t in json.load(f)['tensors']}.\n"
	"Everything is written into DIR.tmp.XXXXXX beside DIR, renamed to DIR at the end: a failure\n"
	"leaves no DIR. A DIR that exists and is not an empty folder is refused.\n",
};

/* The index, made as the JSON writer reports each file. */
typedef struct index {
	FILE *f;
	char *text;
	size_t len;
	int n;
} index_t;

static void on_npy(void *ctx, const char *path, const char *file, const nnn_shape_t *shape, const char *dtype)
{
	index_t *x = ctx;
	fprintf(x->f, "%s\n    {\"path\": ", x->n++ ? "," : "");
	cli_json_str(x->f, path, strlen(path));
	fprintf(x->f, ", \"file\": ");
	cli_json_str(x->f, file, strlen(file));
	fprintf(x->f, ", \"shape\": ");
	cli_json_shape(x->f, shape);
	fprintf(x->f, ", \"dtype\": \"%s\"}", dtype);
	cli_npy_note(path, file, dtype);
}

/* Whether `dir` may become the export: missing, or an empty folder. */
static bool free_name(const char *dir)
{
	struct stat s;
	DIR *d;
	struct dirent *e;
	bool empty = true;
	if (lstat(dir, &s) != 0)
		return errno == ENOENT;
	if (!S_ISDIR(s.st_mode) || !(d = opendir(dir)))
		return false;
	while (empty && (e = readdir(d)) != NULL)
		empty = !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..");
	closedir(d);
	return empty;
}

/* Writes the model's .npy files, model.json and index.json into tmp. */
static nnn_status_t write_all(const nnn_model_t *m, const char *tmp, const char **blame, nnn_diags_t *d)
{
	char model[4400], index[4400];
	snprintf(model, sizeof model, "%s/model.json", tmp);
	snprintf(index, sizeof index, "%s/index.json", tmp);
	index_t x = { 0 };
	x.f = open_memstream(&x.text, &x.len);
	if (!x.f)
		return nnn_diags_add(d, NNN_E_NOMEM, NNN_NO_OFFSET, "", "no memory for the index");
	fprintf(x.f, "{\n  \"model\": \"model.json\",\n  \"tensors\": [");
	nnn_json_write_opts_t o = { .tensors_dir = tmp, .json_path = model, .on_npy_typed = on_npy, .ctx = &x };
	*blame = "model.json";
	nnn_status_t st = nnn_json_write_file(m, model, &o, d);
	fprintf(x.f, "%s]\n}\n", x.n ? "\n  " : "");
	if (fclose(x.f) != 0 && st == NNN_OK)
		st = nnn_diags_add(d, NNN_E_NOMEM, NNN_NO_OFFSET, "", "no memory for the index");
	if (st == NNN_OK) {
		*blame = "index.json";
		st = nnn_write_atomic_bytes(index, x.text, x.len, d);
	}
	free(x.text);
	return st;
}

static int run(const cli_args_t *a, cli_env_t *env)
{
	const char *files[2] = { cli_arg(a, "MODEL"), cli_arg(a, "DIR") };
	int code = EXIT_VALID;
	char dir[4096], tmp[4200], where[4400];
	nnn_diags_t d;

	/* DIR/ and DIR name the same folder; the temporary goes beside it. */
	snprintf(dir, sizeof dir, "%s", files[1]);
	for (size_t n = strlen(dir); n > 1 && dir[n - 1] == '/'; n--)
		dir[n - 1] = '\0';
	if (!free_name(dir)) {
		cli_say(stderr, "nnnkit: %s: exists and is not an empty folder: export writes a new folder; "
		        "name another, or remove this one first\n", dir);
		return EXIT_USAGE;
	}
	int lock = nnn_tmp_dir_make(dir, tmp, sizeof tmp);
	if (lock < 0) {
		cli_say(stderr, "nnnkit: %s: cannot create a temporary folder beside it: %s\n", dir, strerror(errno));
		return EXIT_USAGE;
	}
	nnn_diags_init(&d);
	const char *blame = files[0];
	cli_model_t cm;
	nnn_status_t st = cli_model_open(env, files[0], &cm, &d);
	int opened = st == NNN_OK;
	if (opened)
		st = write_all(cm.m, tmp, &blame, &d);
	/* Into place only when whole: over a missing name or an empty folder. */
	if (st == NNN_OK && rename(tmp, dir) != 0) {
		blame = "";
		st = nnn_diags_add(&d, NNN_E_IO, NNN_NO_OFFSET, "", "cannot rename %s to %s: %s", tmp, dir, strerror(errno));
	}
	if (st != NNN_OK)
		nnn_tmp_dir_remove(tmp, lock);
	else
		close(lock);
	if (st != NNN_OK) {
		if (blame == files[0])
			snprintf(where, sizeof where, "%s", files[0]);
		else
			snprintf(where, sizeof where, "%s%s%s", dir, *blame ? "/" : "", blame);
		code = cli_report(env, where, &d, st);
	} else {
		code = cli_written_check(env, dir, files[0], cm.m, &d);
	}
	if (opened)
		cli_model_close(&cm);
	nnn_diags_free(&d);
	return code;
}
