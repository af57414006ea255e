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
	  "write float arrays of at least N values as .npy files in DIR (made if missing), referenced from the JSON "
	  "relative to its folder", .nodash = "the tensors are files in a folder" },
	{ "tensors-min", 0, CLI_NUM, 0, "N", "the N of --tensors (default 64)", .max = INT32_MAX },
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
	.exit_what = { [1] = "the model is invalid: not read, or read and written but breaking a rule (said so)" },
	.help = "usage: nnnkit convert [--to json|nnn|onnx|safetensors] [--tensors DIR [--tensors-min N]]\n"
		"       [--input-shape S] IN [-o] OUT\n"
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
		"beside it, flushed, then renamed), so it is never half-written.\n",
};

typedef struct conv_args {
	const char *in, *out, *tensors;
	cli_form_t to;
	long long tensors_min;
} conv_args_t;

static int run(const cli_args_t *args, cli_env_t *env)
{
	conv_args_t a = { .in = cli_arg(args, "IN"), .out = cli_arg(args, "OUT"), .tensors = cli_str(args, "tensors"),
		          .tensors_min = (long long)cli_num(args, "tensors-min", 64) };
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
	if (a.to != CLI_ONNX && cli_shape(args, "input-shape"))
		return cli_usage(env, &cmd_convert, "--input-shape is for ONNX output");
	if (a.to != CLI_JSON &&
	    (code = cli_binary_ok(args, a.out, a.to == CLI_NNN    ? "a binary .nnn model"
	                                       : a.to == CLI_ONNX ? "a binary ONNX model"
	                                                          : "a binary safetensors model")) !=
	            EXIT_VALID)
		return code;
	nnn_diags_init(&d);
	nnn_status_t st = cli_model_open(env, a.in, &cm, &d);
	if (st != NNN_OK) {
		code = cli_report(a.in, &d, st);
	} else {
		if (a.to == CLI_JSON) {
			nnn_json_write_opts_t o = { .tensors_dir = a.tensors, .tensors_min = a.tensors_min };
			st = nnn_json_write_file(cm.m, a.out, &o, &d);
		} else if (a.to == CLI_ONNX) {
			nnn_onnx_write_opts_t o = { .ctx = cli_ctx(env), .input_shape = cli_shape(args, "input-shape") };
			st = nnn_onnx_write_file(cm.m, a.out, &o, &d);
		} else if (a.to == CLI_SAFETENSORS) {
			st = nnn_safetensors_write_file(cm.m, cli_ctx(env), a.out, &d);
		} else {
			st = nnn_model_write_file(cm.m, a.out, &d);
		}
		if (st != NNN_OK)
			code = cli_report(cli_out_name(a.out), &d, st);
		else
			code = cli_written_check(a.out, a.in, cm.m, &d);
		cli_model_close(&cm);
	}
	nnn_diags_free(&d);
	return code;
}
