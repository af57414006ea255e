/* convert.c: `nnnkit convert IN OUT`: between the binary form and the JSON
 * form (nnn/json.h), or re-encoding; every output is written atomically. */
#include <stdlib.h>
#include <string.h>

#include <nnn/json.h>

#include "cli.h"

static int run(int argc, char **argv, cli_env_t *env);

const cli_cmd_t cmd_convert = {
	"convert", "convert a model between .nnn and JSON (byte for byte both ways)",
	"usage: nnnkit convert [--to json|nnn] [--tensors DIR [--tensors-min N]] IN OUT\n"
	"Reads IN in either form (told by its content) and writes OUT in the form --to names, else the\n"
	"one its extension (.json or .nnn) names: a .nnn file, or its JSON form (docs/json.md), whose\n"
	"fields follow docs/format.md. .nnn -> JSON -> .nnn gives back the same bytes. OUT '-' writes\n"
	"JSON to standard output; any other OUT is written atomically (a temporary file beside it,\n"
	"flushed, then renamed), so it is never half-written.\n"
	"  --tensors DIR     write float arrays of at least N values as .npy files in DIR (made if\n"
	"                    missing), referenced from the JSON relative to its folder\n"
	"  --tensors-min N   the N of --tensors (default 64)\n",
	run,
};

typedef struct conv_args {
	const char *in, *out, *tensors;
	cli_form_t to;
	long long tensors_min;
} conv_args_t;

static int parse(int argc, char **argv, conv_args_t *a)
{
	int nfiles = 0;
	for (int i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (cli_is_help(argv[i])) {
			fputs(cmd_convert.help, stdout);
			return -1;
		} else if (!strcmp(argv[i], "--to") && v) {
			if (strcmp(v, "json") && strcmp(v, "nnn"))
				return cli_usage(&cmd_convert, "--to takes json or nnn, not '%s'", v);
			a->to = v[0] == 'j' ? CLI_JSON : CLI_NNN;
			i++;
		} else if (!strcmp(argv[i], "--tensors") && v) {
			a->tensors = v;
			i++;
		} else if (!strcmp(argv[i], "--tensors-min") && v) {
			uint64_t n;
			int code = cli_number(&cmd_convert, "--tensors-min", v, 0, INT32_MAX, &n);
			if (code != EXIT_VALID)
				return code;
			a->tensors_min = (long long)n;
			i++;
		} else if (!strcmp(argv[i], "--to") || !strcmp(argv[i], "--tensors") || !strcmp(argv[i], "--tensors-min")) {
			return cli_usage(&cmd_convert, "%s needs a value", argv[i]);
		} else if (argv[i][0] == '-' && argv[i][1]) {
			return cli_usage(&cmd_convert, "unknown option %s", argv[i]);
		} else if (nfiles == 2) {
			return cli_usage(&cmd_convert, "expected two files");
		} else {
			*(nfiles++ ? &a->out : &a->in) = argv[i];
		}
	}
	if (nfiles != 2)
		return cli_usage(&cmd_convert, "expected IN and OUT");
	if (!a->to)
		a->to = strcmp(a->out, "-") ? cli_form(a->out, NULL, 0) : CLI_JSON;
	if (!a->to)
		return cli_usage(&cmd_convert, "%s: cannot tell the output form from its name: end it in .json or .nnn, or "
		                 "give --to json or --to nnn", a->out);
	if (a->to == CLI_NNN && !strcmp(a->out, "-"))
		return cli_usage(&cmd_convert, "a .nnn model is not written to standard output: name a file");
	if (a->to == CLI_NNN && a->tensors)
		return cli_usage(&cmd_convert, "--tensors is for JSON output");
	return 0;
}

static int run(int argc, char **argv, cli_env_t *env)
{
	conv_args_t a = { .tensors_min = 64 };
	cli_model_t cm;
	nnn_diags_t d;
	int code = parse(argc, argv, &a);
	if (code)
		return code < 0 ? EXIT_VALID : code;

	nnn_diags_init(&d);
	nnn_status_t st = cli_model_open(env, a.in, &cm, &d);
	if (st != NNN_OK) {
		code = cli_report(a.in, &d, st);
	} else {
		if (a.to == CLI_JSON) {
			nnn_json_write_opts_t o = { .tensors_dir = a.tensors, .tensors_min = a.tensors_min };
			st = nnn_json_write_file(cm.m, a.out, &o, &d);
		} else {
			st = nnn_model_write_file(cm.m, a.out, &d);
		}
		if (st != NNN_OK)
			code = cli_report(a.out, &d, st);
		cli_model_close(&cm);
	}
	nnn_diags_free(&d);
	return code;
}
