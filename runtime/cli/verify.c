/* verify.c: convert --verify: the source as read and the output read back
 * from its bytes, run on the same seeded inputs (nnn/verify.h), their
 * largest errors reported on one line. */
#include <stdlib.h>

#include <nnn/onnx.h>
#include <nnn/verify.h>

#include "cli.h"

/* What cannot be checked: a note when verify is only the ONNX default (the
 * conversion stands), the problem and its code when it was asked for. */
static int cannot(const cli_verify_args_t *v, const char *file, const nnn_diags_t *d,
                  nnn_status_t st, const char *hint)
{
	if (v->mode == CLI_VERIFY_ASKED) {
		int code = cli_report(NULL, file, d, st);
		cli_say(stderr, "nnnkit: verify: %s not verified, nor written%s\n", cli_out_name(v->out), hint);
		return st == NNN_E_INPUT_SHAPE ? EXIT_USAGE : code;
	}
	char buf[NNN_MSG_MAX + NNN_PATH_MAX + 64];
	cli_say(stderr, "nnnkit: %s: note: not verified: %s%s (or --no-verify)\n", cli_name(file),
	        d->n ? nnn_diag_format(&d->v[0], buf, sizeof buf) : "the model does not run", hint);
	return EXIT_VALID;
}

int cli_verify_unread(const cli_verify_args_t *v, const nnn_diags_t *d, nnn_status_t st)
{
	return cannot(v, v->out, d, st, "; nnnkit cannot read the output back (a plugin's export may write what "
	              "nnnkit does not read)");
}

bool cli_onnx_input(cli_env_t *env, const char *path, nnn_shape_t *out)
{
	nnn_file_t *f = NULL;
	nnn_model_t *m = NULL;
	nnn_pshape_t p = { .rank = NNN_DIM_UNKNOWN };
	unsigned char *buf = NULL;
	size_t size = 0;
	nnn_onnx_read_opts_t o = { .ctx = cli_ctx(env) };
	/* Read again with checked reads, as cli_model_open read it. */
	if (nnn_file_map(path, &f, NULL) == NNN_OK) {
		nnn_file_bytes(f, &size);
		if ((buf = malloc(size + 1)) && nnn_file_read(f, 0, buf, size, NULL) == NNN_OK &&
		    nnn_onnx_decode_input(buf, size, &o, &m, &p, NULL) == NNN_OK)
			nnn_model_free(m);
		free(buf);
		nnn_file_close(f);
	}
	*out = (nnn_shape_t){ .rank = p.rank > 0 ? p.rank : 0, .dims = { 1 } };
	for (int32_t k = 1; k < out->rank; k++)
		if ((out->dims[k] = p.dims[k]) < 0)
			return false;
	return out->rank > 0;
}

/* " (row R, output I)" where an error is not 0. */
static const char *where(double e, int64_t row, int64_t index, char *buf, size_t size)
{
	if (e == 0)
		return "";
	snprintf(buf, size, " (row %lld, output %lld)", (long long)row, (long long)index);
	return buf;
}

static void report(const cli_verify_args_t *v, const nnn_shape_t *in, bool opened, const nnn_verify_result_t *r)
{
	char si[160], so[160], wa[64], wr[64];
	cli_say(stderr,
	        "nnnkit: verify: %s against %s on %lld seeded inputs %s%s: max abs error %.3g%s, max rel error %.3g%s "
	        "(outputs %s)\n",
	        cli_out_name(v->out), cli_name(v->in), (long long)in->dims[0], nnn_shape_format(in, si, sizeof si),
	        opened        ? " (the smallest size the model takes on its open axes; --input-shape gives another)"
	        : v->declared ? " (the ONNX graph's input)"
	                      : "",
	        r->max_abs, where(r->max_abs, r->abs_row, r->abs_index, wa, sizeof wa), r->max_rel,
	        where(r->max_rel, r->rel_row, r->rel_index, wr, sizeof wr), nnn_shape_format(&r->output, so, sizeof so));
}

int cli_verify(cli_env_t *env, const cli_verify_args_t *v, const nnn_model_t *src, const nnn_model_t *dst)
{
	nnn_diags_t d;
	nnn_shape_t in;
	nnn_verify_result_t r;
	bool opened = false;
	int code = EXIT_VALID;
	nnn_run_opts_t ro = { .size = sizeof ro, .threads = 1 };
	nnn_verify_opts_t o = { .size = sizeof o, .run = &ro };
	nnn_diags_init(&d);
	nnn_status_t st = nnn_verify_input(src, v->shape, NNN_VERIFY_ROWS, &in, &opened, &d);
	if (st != NNN_OK)
		code = cannot(v, v->in, &d, st, "; give its input shape with --input-shape 1,D1,...");
	else if ((st = nnn_verify(cli_ctx(env), src, dst, &in, &o, &r, &d)) != NNN_OK)
		code = cannot(v, r.failed == 2 ? cli_out_name(v->out) : v->in, &d, st, "");
	else
		report(v, &in, opened, &r);
	if (st == NNN_OK && r.max_rel > v->tol) {
		cli_say(stderr,
		        "nnnkit: verify: %s computes differently from %s: relative error %.3g at row %lld, output %lld is "
		        "over the tolerance %g (|out - in| / (1 + |in|)); %s is not written: report the conversion as "
		        "a bug with both files, or accept it with --verify-tol (or --no-verify)\n",
		        cli_out_name(v->out), cli_name(v->in), r.max_rel, (long long)r.rel_row, (long long)r.rel_index,
		        v->tol, cli_out_name(v->out));
		code = EXIT_INVALID;
	}
	nnn_diags_free(&d);
	return code;
}
