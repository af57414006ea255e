/* convert.c: `nnnkit convert IN OUT`: between the binary form, the JSON
 * form (nnn/json.h), ONNX (nnn/onnx.h) and safetensors (nnn/safetensors.h),
 * or re-encoding; every output is written atomically. */
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include <nnn/json.h>
#include <nnn/onnx.h>
#include <nnn/safetensors.h>

#include "cli.h"

static int run(const cli_args_t *a, cli_env_t *env);

static const cli_opt_t convert_opts[] = {
	{ "output", 'o', CLI_OUT, CLI_DASH, "OUT", .help = "the converted model (or give OUT after IN)" },
	{ "to", 0, CLI_CHOICE, 0, "FORM", "the output's form (default: from OUT's extension; JSON for '-')",
	  .choices = "json nnn onnx safetensors" },
	{ "tensors", 0, CLI_DIR_OUT, 0, "DIR",
	  "write arrays of numbers of at least N values as .npy files in DIR (made if missing), referenced from the "
	  "JSON relative to its folder, each of its element type's dtype ('<f4', '<f2', '|i1', ...; bfloat16 as its "
	  "raw bits, '<u2', with a note on stderr)", .nodash = "the tensors are files in a folder" },
	{ "tensors-min", 0, CLI_NUM, 0, "N", "the N of --tensors (default 64)", .max = INT32_MAX },
	{ "verify", 0, CLI_FLAG, 0, NULL,
	  .help = "run IN and OUT (read back from its bytes) on 4 seeded inputs and report the largest errors "
	          "(default for ONNX in or out)" },
	{ "no-verify", 0, CLI_FLAG, 0, NULL, .help = "do not, even for ONNX" },
	{ "verify-tol", 0, CLI_REAL, 0, "T",
	  "the largest relative error |out - in| / (1 + |in|) --verify accepts (default 1e-5; implies --verify)",
	  .rmin = 0, .rmax = 1e30 },
	{ NULL },
};
static const cli_pos_t convert_pos[] = {
	{ "IN", CLI_IN, CLI_DASH, .help = CLI_MODEL_HELP },
	{ "OUT", CLI_OUT, CLI_DASH, "where the result goes", .option = "output" },
	{ NULL },
};

const cli_cmd_t cmd_convert = {
	.name = "convert",
	.summary = "convert a model between .nnn, JSON, ONNX and safetensors (byte for byte both ways)",
	.main = run,
	.opts = CLI_OPTS(convert_opts, cli_opts_input_shape, cli_opts_force),
	.pos = convert_pos,
	.exits = CLI_EXITS_MODEL,
	.exit_what = { [1] = "the model is invalid (not read, or written but breaking a rule: said so), or "
	                     "--verify found OUT computes otherwise (not written)" },
	.help = "usage: nnnkit convert [--to json|nnn|onnx|safetensors] [--tensors DIR [--tensors-min N]]\n"
		"       [--input-shape S] [--verify [--verify-tol T] | --no-verify] IN [-o] OUT\n"
		"Reads IN in any form (.nnn, JSON, ONNX or safetensors, told by its content) and writes OUT in\n"
		"the form --to names, else the one its extension (.json, .nnn, .onnx or .safetensors) names: a\n"
		".nnn file, its JSON form (docs/json.md), whose fields follow docs/format.md, an ONNX model\n"
		"(docs/onnx.md: opset 13; --input-shape fixes the dims the graph declares) or a safetensors\n"
		"file (docs/safetensors.md: a tensor per float array, the rest in its metadata). .nnn -> JSON\n"
		"-> .nnn, .nnn -> ONNX -> .nnn and .nnn -> safetensors -> .nnn give back the same bytes. A\n"
		"safetensors file nnnkit did not write (a Hugging Face checkpoint) is refused, its tensors\n"
		"listed. An ONNX graph from PyTorch or Keras/tf2onnx is read into a channels-last model (said\n"
		"so when the graph was channels-first); one with nodes outside docs/onnx.md's table is\n"
		"refused, every such node listed. OUT '-' writes to standard output (JSON unless --to; binary\n"
		"forms to a terminal need --force); any other OUT is written atomically (a temporary file\n"
		"beside it, flushed, then renamed), so it is never half-written.\n"
		"--verify (the default when IN or OUT is ONNX) reads OUT back from the bytes about to be\n"
		"written, runs IN and it with the kernels run uses on 4 seeded inputs in [-1, 1] and prints\n"
		"the largest absolute error and the largest relative one, |out - in| / (1 + |in|), with their\n"
		"row and output. The input shape is --input-shape's, else the one an ONNX IN declares, else\n"
		"the one the layers fix, else the smallest the model takes on its open axes (said so). An\n"
		"error over --verify-tol writes nothing and exits 1; a model it cannot run, or an OUT nnnkit\n"
		"cannot read back (a plugin's ONNX export), is a note by default, a failure (nothing\n"
		"written) when asked.\n",
};

typedef struct conv_args {
	const char *in, *out, *tensors;
	cli_form_t to;
	long long tensors_min;
	const nnn_shape_t *shape;
	cli_verify_args_t verify;
} conv_args_t;

static void on_npy(void *ctx, const char *path, const char *file, const nnn_shape_t *shape, const char *dtype)
{
	(void)ctx, (void)shape;
	cli_npy_note(path, file, dtype);
}

/* m in OUT's form, into memory: what convert writes is these bytes, and
 * what --verify reads back. */
static nnn_status_t encode(cli_env_t *env, const conv_args_t *a, const nnn_model_t *m, unsigned char **buf,
                           size_t *n, nnn_diags_t *d)
{
	if (a->to == CLI_JSON) {
		nnn_json_write_opts_t o = { .tensors_dir = a->tensors, .tensors_min = a->tensors_min,
			                    .json_path = strcmp(a->out, "-") ? a->out : NULL, .on_npy_typed = on_npy };
		char *text = NULL;
		nnn_status_t st = nnn_json_encode(m, &o, &text, n, d);
		*buf = (unsigned char *)text;
		return st;
	}
	if (a->to == CLI_ONNX) {
		nnn_onnx_write_opts_t o = { .ctx = cli_ctx(env), .input_shape = a->shape };
		return nnn_onnx_encode(m, &o, buf, n, d);
	}
	if (a->to == CLI_SAFETENSORS)
		return nnn_safetensors_encode(m, cli_ctx(env), buf, n, d);
	return nnn_model_encode(m, buf, n, d);
}

/* The bytes encode() made, read back as nnnkit reads OUT's form (a JSON
 * form's .npy references from OUT's folder). */
static nnn_status_t decode(cli_env_t *env, const conv_args_t *a, const unsigned char *buf, size_t n,
                           nnn_model_t **m, nnn_diags_t *d)
{
	if (a->to == CLI_JSON) {
		char dir[4096];
		const char *slash = strrchr(a->out, '/');
		snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - a->out) + 1 : 1, slash ? a->out : ".");
		nnn_json_read_opts_t o = { .ctx = cli_ctx(env), .base_dir = dir };
		return nnn_json_decode((const char *)buf, n, &o, m, d);
	}
	if (a->to == CLI_ONNX) {
		nnn_onnx_read_opts_t o = { .ctx = cli_ctx(env) };
		return nnn_onnx_decode(buf, n, &o, m, d);
	}
	nnn_decode_opts_t o = { .ctx = cli_ctx(env), .flags = NNN_DECODE_COPY };
	return a->to == CLI_SAFETENSORS ? nnn_safetensors_decode(buf, n, &o, m, d) : nnn_model_decode(buf, n, &o, m, d);
}

/* Encodes, verifies when on (the bytes read back, before anything is
 * written: a conversion that fails it leaves OUT as it was), writes. */
static int convert(cli_env_t *env, conv_args_t *a, const cli_model_t *cm, nnn_diags_t *d)
{
	unsigned char *buf = NULL;
	size_t n = 0;
	nnn_model_t *back = NULL;
	int code = EXIT_VALID;
	/* On by default where the model crosses to another framework's
	 * graph: ONNX, either way (issue 33). */
	if (a->verify.mode == CLI_VERIFY_DEFAULT && cm->form != CLI_ONNX && a->to != CLI_ONNX)
		a->verify.mode = CLI_VERIFY_OFF;
	nnn_shape_t declared;
	if (a->verify.mode != CLI_VERIFY_OFF && !a->shape && cm->form == CLI_ONNX &&
	    (a->verify.declared = cli_onnx_input(env, a->in, &declared)))
		a->verify.shape = &declared;
	nnn_status_t st = encode(env, a, cm->m, &buf, &n, d);
	if (st == NNN_OK && a->verify.mode != CLI_VERIFY_OFF) {
		nnn_diags_t rd; /* why OUT did not read back, said by verify, not as convert's failure */
		nnn_diags_init(&rd);
		nnn_status_t rs = decode(env, a, buf, n, &back, &rd);
		code = rs == NNN_OK ? cli_verify(env, &a->verify, cm->m, back) : cli_verify_unread(&a->verify, &rd, rs);
		nnn_diags_free(&rd);
	}
	if (st == NNN_OK && code == EXIT_VALID)
		st = nnn_write_atomic_bytes(a->out, buf, n, d);
	if (st != NNN_OK)
		code = cli_report(env, cli_out_name(a->out), d, st);
	else if (code == EXIT_VALID)
		code = cli_written_check(env, a->out, a->in, cm->m, d);
	nnn_model_free(back);
	free(buf);
	return code;
}

/* --verify, --no-verify, --verify-tol: the mode before the forms are known. */
static int verify_args(const cli_args_t *args, cli_env_t *env, conv_args_t *a)
{
	bool asked = cli_flag(args, "verify") || cli_real(args, "verify-tol", -1) >= 0;
	if (asked && cli_flag(args, "no-verify"))
		return cli_usage(env, &cmd_convert, "--no-verify with --verify or --verify-tol: give one");
	a->verify = (cli_verify_args_t){ .mode = cli_flag(args, "no-verify") ? CLI_VERIFY_OFF
		                                 : asked                   ? CLI_VERIFY_ASKED
		                                                           : CLI_VERIFY_DEFAULT,
		                         .tol = cli_real(args, "verify-tol", 1e-5), .shape = a->shape,
		                         .in = a->in, .out = a->out };
	return EXIT_VALID;
}

static int run(const cli_args_t *args, cli_env_t *env)
{
	conv_args_t a = { .in = cli_arg(args, "IN"), .out = cli_arg(args, "OUT"), .tensors = cli_str(args, "tensors"),
		          .tensors_min = (long long)cli_num(args, "tensors-min", 64),
		          .shape = cli_shape(args, "input-shape") };
	cli_model_t cm;
	nnn_diags_t d;
	int code = 0;
	const char *to = cli_str(args, "to");
	if (!a.out)
		return cli_usage(env, &cmd_convert, "no OUT given (or --output)");
	a.to = to ? (to[0] == 'j' ? CLI_JSON : to[0] == 'n' ? CLI_NNN : to[0] == 's' ? CLI_SAFETENSORS : CLI_ONNX)
	          : strcmp(a.out, "-") ? cli_form(a.out, NULL, 0) : CLI_JSON;
	if (!a.to)
		return cli_usage(env, &cmd_convert, "%s: cannot tell the output form from its name: end it in .json, .nnn, "
		                 ".onnx or .safetensors, or give --to json, --to nnn, --to onnx or --to safetensors", a.out);
	if (a.to != CLI_JSON && a.tensors)
		return cli_usage(env, &cmd_convert, "--tensors is for JSON output");
	if ((code = verify_args(args, env, &a)) != EXIT_VALID)
		return code;
	if (a.to != CLI_JSON &&
	    (code = cli_binary_ok(args, a.out, a.to == CLI_NNN    ? "a binary .nnn model"
	                                       : a.to == CLI_ONNX ? "a binary ONNX model"
	                                                          : "a binary safetensors model")) !=
	            EXIT_VALID)
		return code;
	nnn_diags_init(&d);
	nnn_status_t st = cli_model_open(env, a.in, &cm, &d);
	if (st != NNN_OK)
		code = cli_report(env, a.in, &d, st);
	else if (a.shape && a.to != CLI_ONNX && cm.form != CLI_ONNX && a.verify.mode != CLI_VERIFY_ASKED)
		code = cli_usage(env, &cmd_convert, "--input-shape is for ONNX output and for --verify");
	else
		code = convert(env, &a, &cm, &d);
	if (st == NNN_OK)
		cli_model_close(&cm);
	nnn_diags_free(&d);
	return code;
}
