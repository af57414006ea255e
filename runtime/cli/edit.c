/* edit.c: `nnnkit edit MODEL -o OUT`: the description, one tensor's values,
 * or the header's parameter count changed without a JSON round trip; or one
 * tensor taken out as .npy. The output is written atomically. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <nnn/json.h>
#include <nnn/npy.h>
#include <nnn/onnx.h>
#include <nnn/safetensors.h>

#include "cli.h"

static int run(const cli_args_t *args, cli_env_t *env);

static const cli_opt_t edit_opts[] = {
	{ "output", 'o', CLI_OUT, CLI_DASH | CLI_BINARY | CLI_REQUIRED, "OUT",
	  .help = "the file written (the edited model; or the tensor with --get, '-' for stdout)" },
	{ "description", 0, CLI_STR, 0, "TEXT", .help = "the model's description (UTF-8)" },
	{ "set", 0, CLI_STR, CLI_REPEAT, "PATH=FILE.npy",
	  .help = "the values of the tensor at PATH (as errors and `nnnkit stats` name it: layers[2].weights) from a .npy "
	  "file of exactly its shape (repeatable): a float32 tensor takes any dtype, converted; one of another element "
	  "type its own dtype (bfloat16: '<u2', the raw bits) or one that widens to it exactly ('<f2' into float64)" },
	{ "fix-param-count", 0, CLI_FLAG, 0, NULL,
	  .help = "the header's parameter count recomputed from the tensors (what `nnnkit validate` reports as "
	          "E_PARAM_COUNT)" },
	{ "get", 0, CLI_STR, 0, "PATH",
	  .help = "write the tensor at PATH to -o FILE.npy (its element type's dtype: '<f2' for float16, '<u2' for "
	  "bfloat16's raw bits) instead of editing" },
	{ NULL },
};
static const cli_pos_t edit_pos[] = { { "MODEL", CLI_IN, CLI_DASH, .help = CLI_MODEL_HELP }, { NULL } };

const cli_cmd_t cmd_edit = {
	.name = "edit",
	.summary = "edit the description, a tensor or the parameter count; get a tensor",
	.main = run,
	.opts = CLI_OPTS(edit_opts, cli_opts_force),
	.pos = edit_pos,
	.exits = CLI_EXITS_MODEL,
	.exit_what = { [1] = "the model or a .npy is invalid, or the edited model still breaks a rule (it is written)" },
	.help = "usage: nnnkit edit MODEL -o OUT [--description TEXT] [--set PATH=FILE.npy]... [--fix-param-count]\n"
		"       nnnkit edit MODEL --get PATH -o FILE.npy\n"
		"Reads MODEL (.nnn, JSON or ONNX), applies the edits and writes OUT atomically (a temporary\n"
		"file beside it, flushed, then renamed: OUT may be MODEL). OUT is JSON when its name ends in\n"
		".json, ONNX in .onnx, else .nnn. Every other field is kept as it is.\n"
		"The result is validated: when it breaks a rule of the format (one the edit did not fix), it\n"
		"is still written, its problems are printed and the exit code is 1.\n",
};

typedef struct edit_opts {
	const char *model, *out;
	const char *description; /* NULL: unchanged */
	const char *const *set;  /* PATH=FILE.npy, nset of them (argv's strings) */
	int nset;
	const char *get;
	int fix_count;
	const nnn_ctx_t *ctx; /* plugins: an ONNX output's export hooks */
} edit_opts_t;

static int utf8_ok(const char *s)
{
	size_t n = strlen(s), k;
	for (size_t i = 0; i < n; i += k)
		if (!(k = nnn_utf8_seq((const unsigned char *)s + i, n - i)))
			return 0;
	return 1;
}

/* The checks the option tables cannot make: 0 to go on, else the exit
 * code after the usage message. */
static int check(const edit_opts_t *o, cli_env_t *env)
{
	int edits = o->description || o->nset || o->fix_count;
	if (!edits && !o->get)
		return cli_usage(env, &cmd_edit, "nothing to do: give --description, --set, --fix-param-count or --get");
	if (edits && o->get)
		return cli_usage(env, &cmd_edit, "--get extracts a tensor and writes no model: give it alone");
	if (o->get && !strcmp(o->out, o->model))
		return cli_usage(env, &cmd_edit, "--get writes a .npy file: -o %s would replace the model with it", o->out);
	if (o->description && !utf8_ok(o->description))
		return cli_usage(env, &cmd_edit, "--description is not valid UTF-8, which a description must be");
	for (int k = 0; k < o->nset; k++)
		if (!strchr(o->set[k], '=') || o->set[k][0] == '=' || !strchr(o->set[k], '=')[1])
			return cli_usage(env, &cmd_edit, "--set takes PATH=FILE.npy, such as layers[0].weights=w.npy, not '%s'",
			                 o->set[k]);
	return 0;
}

/* The tensor at `path`, or NULL after saying which paths there are. */
static const cli_param_t *find(const char *model, const cli_param_t *ts, size_t n, const char *path,
                               nnn_diags_t *d)
{
	const cli_param_t *t = cli_param_find(ts, n, path);
	char list[NNN_MSG_MAX / 2] = "";
	size_t k = 0;
	if (t)
		return t;
	for (size_t i = 0; i < n && k + 1 < sizeof list; i++)
		k += (size_t)snprintf(list + k, sizeof list - k, "%s%s", i ? ", " : "", ts[i].path);
	(void)model; /* cli_report names it */
	nnn_diags_add(d, NNN_E_USAGE, NNN_NO_OFFSET, path, "no tensor at this path; the model's tensors are: %s%s", list,
	              k + 1 >= sizeof list ? "..." : "");
	return NULL;
}

/* The tensor as a .npy file of its element type's dtype (bfloat16: the
 * raw bits as '<u2', said on stderr). */
static int get(const edit_opts_t *o, const cli_param_t *ts, size_t n, nnn_diags_t *d)
{
	const cli_param_t *t = find(o->model, ts, n, o->get, d);
	nnn_shape_t shape;
	if (!t)
		return cli_report(NULL, o->model, d, NNN_E_USAGE);
	if (!cli_dims_shape(t->dims, &shape))
		return cli_report(NULL, o->model, d, nnn_diags_add(d, NNN_E_LIMIT, NNN_NO_OFFSET, t->path,
		                                               "%d dims: a .npy holds at most %d", (int)t->dims->n,
		                                               NNN_MAX_RANK));
	nnn_ekind_t kind = nnn_prim_ekind(t->prim);
	int width = nnn_prim_ewidth(t->prim);
	nnn_status_t st = nnn_npy_write_typed_file(o->out, &shape, kind, width, t->data.bytes, d);
	if (st == NNN_OK)
		cli_npy_note(t->path, cli_out_name(o->out), nnn_npy_dtype_name(kind, width));
	return cli_report(NULL, cli_out_name(o->out), d, st);
}

/* A .npy file's elements as tensor t takes them, into a new buffer (*out):
 * a float32 tensor any dtype converted (nnn/npy.h), another the same dtype
 * or an exact widening (nnn_npy_typed_as), else refused. */
static nnn_status_t take(const cli_param_t *t, const nnn_npy_typed_t *a, void **out, nnn_diags_t *d)
{
	int width = nnn_prim_ewidth(t->prim);
	if (!(*out = malloc(a->count ? a->count * (size_t)width : 1)))
		return nnn_diags_add(d, NNN_E_NOMEM, NNN_NO_OFFSET, t->path, "no memory");
	if (t->prim == NNN_PRIM_F32_ARRAY)
		return nnn_npy_typed_f32(a, *out, d); /* little-endian hosts: host floats are the tensor's bytes */
	return nnn_npy_typed_as(a, nnn_prim_ekind(t->prim), width, *out, t->path, d);
}

/* Replaces one tensor's values with a .npy file's (kept in *vals, which the
 * model then borrows until it is written). */
static int set(const edit_opts_t *o, const char *arg, const cli_param_t *ts, size_t n, void **vals, nnn_diags_t *d)
{
	char path[NNN_PATH_MAX], want[256], got[256];
	const char *eq = strchr(arg, '='), *file = eq + 1;
	nnn_shape_t shape;
	snprintf(path, sizeof path, "%.*s", (int)(eq - arg), arg);
	const cli_param_t *t = find(o->model, ts, n, path, d);
	if (!t)
		return cli_report(NULL, o->model, d, NNN_E_USAGE);
	nnn_npy_typed_t a;
	nnn_status_t st = nnn_npy_read_typed_file(file, &a, d);
	if (st != NNN_OK)
		return cli_report(NULL, file, d, st);
	/* Exactly its shape: a reshaped array is most often the wrong array. */
	bool fits = cli_dims_shape(t->dims, &shape) && shape.rank == a.shape.rank;
	for (int32_t i = 0; fits && i < shape.rank; i++)
		fits = shape.dims[i] == a.shape.dims[i];
	if (!fits)
		st = nnn_diags_add(d, NNN_E_SHAPE, NNN_NO_OFFSET, "shape",
		                   "the array is %s, but %s of %s is %s: save an array of that shape",
		                   cli_shape_text(&a.shape, got, sizeof got), t->path, o->model,
		                   cli_shape_text(&shape, want, sizeof want));
	if (st == NNN_OK)
		st = take(t, &a, vals, d);
	/* The model is ours (cli_model_open decoded it into memory it owns):
	 * its tensor now views the .npy's values, little-endian on every host
	 * nnnkit runs on (nnn_f32s_view). */
	if (st == NNN_OK)
		*(nnn_elems_t *)t->at = (nnn_elems_t){ *vals, t->data.n };
	nnn_npy_typed_free(&a);
	return st == NNN_OK ? EXIT_VALID : cli_report(NULL, file, d, st);
}

/* The edited model, written in the form OUT's name asks for, then
 * validated. */
static int write_out(const edit_opts_t *o, const nnn_model_t *m, nnn_diags_t *d)
{
	nnn_status_t st;
	cli_form_t form = cli_form(o->out, NULL, 0);
	if (form == CLI_JSON) {
		st = nnn_json_write_file(m, o->out, NULL, d);
	} else if (form == CLI_ONNX) {
		nnn_onnx_write_opts_t w = { .ctx = o->ctx };
		st = nnn_onnx_write_file(m, o->out, &w, d);
	} else if (form == CLI_SAFETENSORS) {
		st = nnn_safetensors_write_file(m, o->ctx, o->out, d);
	} else
		st = nnn_model_write_file(m, o->out, d);
	if (st != NNN_OK)
		return cli_report(NULL, cli_out_name(o->out), d, st);
	return cli_written_check(NULL, o->out, cli_out_name(o->out), m, d);
}

static int edit(const edit_opts_t *o, nnn_model_t *m, const cli_param_t *ts, size_t n, nnn_diags_t *d)
{
	void **vals = calloc((size_t)o->nset + 1, sizeof *vals);
	int code = EXIT_VALID;
	if (!vals)
		return cli_report(NULL, o->model, d, nnn_diags_add(d, NNN_E_NOMEM, NNN_NO_OFFSET, "", "no memory"));
	for (int k = 0; k < o->nset && code == EXIT_VALID; k++)
		code = set(o, o->set[k], ts, n, &vals[k], d);
	if (code == EXIT_VALID) {
		if (o->description)
			m->description = (nnn_str_t){ o->description, (int32_t)strlen(o->description) };
		/* The schema's param_count rule, computed by the generated code:
		 * the same total `nnnkit validate` compares the header with. */
		if (o->fix_count)
			m->param_count = nnn_model_param_total(m);
		code = write_out(o, m, d);
	}
	for (int k = 0; k < o->nset; k++)
		free(vals[k]);
	free(vals);
	return code;
}

static int run(const cli_args_t *args, cli_env_t *env)
{
	edit_opts_t o = { .model = cli_arg(args, "MODEL"), .out = cli_str(args, "output"),
		          .description = cli_str(args, "description"), .get = cli_str(args, "get"),
		          .fix_count = cli_flag(args, "fix-param-count"), .ctx = cli_ctx(env) };
	cli_model_t cm;
	cli_param_t *ts = NULL;
	size_t n = 0;
	nnn_diags_t d;
	int code;
	o.nset = cli_strs(args, "set", &o.set);
	if ((code = check(&o, env)) != 0)
		return code;
	nnn_diags_init(&d);
	/* A wrong parameter count is a validation rule, never a decoding one
	 * (schema/nnn.lua: param_count has stage "validate"), so such a file
	 * is read as any other and --fix-param-count needs no special path. */
	nnn_status_t st = cli_model_open(env, o.model, &cm, &d);
	if (st == NNN_OK)
		st = cli_params(cm.m, true, &ts, &n, &d);
	if (st != NNN_OK)
		code = cli_report(env, o.model, &d, st);
	else if (o.get)
		code = get(&o, ts, n, &d);
	else
		code = edit(&o, cm.own, ts, n, &d);
	free(ts);
	cli_model_close(&cm);
	nnn_diags_free(&d);
	return code;
}
