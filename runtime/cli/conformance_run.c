/* conformance_run.c: the valid cases of the conformance corpus, run.
 *
 * Each case runs in a child process (fork, no exec): the plugin's infer,
 * prepare and forward are code the corpus is there to test, and one that
 * crashes or hangs must fail its case, named, not end the run. The child
 * reports through a page shared with the parent, where it also keeps the
 * stage it is in, so a crash says what it interrupted. */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <nnn/json.h>
#include <nnn/npy.h>
#include <nnn/plugin.h>

#include "conformance.h"

/* Floats after an output that no kernel may touch. */
#define GUARD 16
/* A NaN no kernel computes: an output still holding it was never written. */
#define CANARY 0x7fbadbadu
/* Parameters above this (or not finite) make overflow legitimate: such a
 * case's outputs are neither checked for NaN nor compared. */
#define ORDINARY_MAX 1e4f

/* What the child leaves for the parent. */
typedef struct shared {
	int outcome, validated, ran, ordinary;
	char stage[64];
	char why[1024];
} shared_t;

/* Writes tmpl with its placeholders replaced into out (when not NULL);
 * returns the length. */
static size_t substitute(const char *tmpl, const char *const *names, const char *const *values, int n, char *out)
{
	size_t len = 0;
	for (const char *p = tmpl; *p;) {
		int k = 0;
		size_t nl = 0;
		for (; k < n; k++) {
			nl = strlen(names[k]);
			if (p[0] == '{' && !strncmp(p + 1, names[k], nl) && p[1 + nl] == '}')
				break;
		}
		if (k == n) {
			if (out)
				out[len] = *p;
			len++, p++;
			continue;
		}
		/* 'value', each ' written as '\'' */
		const char *parts[3] = { "'", values[k], "'" };
		for (int j = 0; j < 3; j++) {
			for (const char *q = parts[j]; *q; q++) {
				const char *w = j == 1 && *q == '\'' ? "'\\''" : NULL;
				size_t wl = w ? 4 : 1;
				if (out)
					memcpy(out + len, w ? w : q, wl);
				len += wl;
			}
		}
		p += nl + 2;
	}
	return len;
}

char *conf_command(const char *tmpl, const char *const *names, const char *const *values, int n)
{
	size_t len = substitute(tmpl, names, values, n, NULL);
	char *out = malloc(len + 1);
	if (out) {
		substitute(tmpl, names, values, n, out);
		out[len] = '\0';
	}
	return out;
}

static void say(shared_t *sh, int outcome, const char *fmt, ...) NNN_PRINTF(3, 4);
static void say(shared_t *sh, int outcome, const char *fmt, ...)
{
	va_list ap;
	sh->outcome = outcome;
	va_start(ap, fmt);
	vsnprintf(sh->why, sizeof sh->why, fmt, ap);
	va_end(ap);
}

static const char *first_diag(const nnn_diags_t *d, char *buf, size_t size)
{
	if (!d->n)
		return "(no message)";
	return nnn_diag_format(&d->v[0], buf, size);
}

static int ordinary_f32(float v)
{
	return isfinite(v) && fabsf(v) <= ORDINARY_MAX;
}

static int ordinary(double v)
{
	return isfinite(v) && fabs(v) <= ORDINARY_MAX;
}

/* Decoder visitor: clears *ctx when a float field or tensor value (of any
 * element type) is not ordinary. */
static void ordinary_field(void *ctx, const nnn_field_t *f)
{
	int *ord = ctx;
	nnn_ekind_t k = nnn_prim_ekind(f->prim);
	int w = nnn_prim_ewidth(f->prim);
	if (f->prim == NNN_PRIM_F32 && !ordinary_f32(f->f))
		*ord = 0;
	if ((f->prim & NNN_PRIM_NUM) && !ordinary(nnn_num_double(k, w, f->u)))
		*ord = 0;
	if (f->prim & NNN_PRIM_NUMS) {
		nnn_elems_t a = { f->bytes, f->count };
		for (int32_t i = 0; i < f->count && *ord; i++)
			if (!ordinary(nnn_elems_get(a, k, w, i)))
				*ord = 0;
	}
	if (f->prim == NNN_PRIM_F32_ARRAY) {
		nnn_f32s_t a = { f->bytes, f->count };
		for (int32_t i = 0; i < f->count && *ord; i++)
			if (!ordinary_f32(nnn_f32s_get(a, i)))
				*ord = 0;
	}
}

const char *conf_place(const nnn_shape_t *s, int64_t i, char *buf, size_t size)
{
	nnn_shape_t at = *s;
	for (int32_t d = s->rank - 1; d >= 0; d--) {
		at.dims[d] = s->dims[d] ? i % s->dims[d] : 0;
		i = s->dims[d] ? i / s->dims[d] : 0;
	}
	return nnn_shape_format(&at, buf, size);
}

int64_t conf_mismatch(const float *got, const float *want, int64_t n, double tol, double *max_err)
{
	int64_t first = -1;
	*max_err = 0;
	for (int64_t i = 0; i < n; i++) {
		double g = got[i], w = want[i], e = fabs(g - w);
		int same = (isnan(g) && isnan(w)) || (isinf(g) && g == w);
		if (isfinite(g) && isfinite(w) && e > *max_err)
			*max_err = e;
		if (!same && !(e <= tol * (1 + fabs(w))) && first < 0)
			first = i;
	}
	return first;
}

/* Whether every layer and activation of m has a kernel in ctx; else why not. */
static int kernels(const nnn_ctx_t *ctx, const nnn_model_t *m, char *why, size_t size)
{
	for (int32_t i = 0; i < m->layer_count; i++) {
		const nnn_layer_t *L = &m->layers[i];
		const nnn_layer_type_t *lt = nnn_ctx_layer(ctx, L->id, NULL);
		const nnn_activation_type_t *at = nnn_ctx_activation(ctx, L->activation.id, NULL);
		if (!lt || !lt->forward) {
			snprintf(why, size, "no kernel for layers[%d] (layer ID %d) is loaded", (int)i, (int)L->id);
			return 0;
		}
		if (!at || !at->forward) {
			snprintf(why, size, "no kernel for layers[%d].activation (activation ID %d) is loaded", (int)i,
			         (int)L->activation.id);
			return 0;
		}
	}
	return 1;
}

/* One run of plan p on x into y (n outputs, then GUARD more floats):
 * every output written, nothing after it. */
static int run_once(nnn_plan_t *p, const float *x, float *y, int64_t n, const nnn_shape_t *out, const char *what,
                    shared_t *sh)
{
	char buf[NNN_PATH_MAX + NNN_MSG_MAX + 512], at[256];
	uint32_t canary = CANARY;
	nnn_diags_t d;
	for (int64_t i = 0; i < n + GUARD; i++)
		memcpy(&y[i], &canary, 4);
	snprintf(sh->stage, sizeof sh->stage, "running %s", what);
	sh->ran = 1;
	nnn_diags_init(&d);
	nnn_status_t st = nnn_plan_run(p, x, y, &d);
	if (st != NNN_OK)
		say(sh, CONF_RUN_FAILED, "%s failed: %s", what, first_diag(&d, buf, sizeof buf));
	nnn_diags_free(&d);
	if (st != NNN_OK)
		return 0;
	int64_t unwritten = 0, first = -1;
	for (int64_t i = 0; i < n; i++)
		if (!memcmp(&y[i], &canary, 4) && unwritten++ == 0)
			first = i;
	for (int64_t i = n; i < n + GUARD; i++) {
		if (memcmp(&y[i], &canary, 4)) {
			say(sh, CONF_RUN_FAILED, "%s wrote past the end of its output %s (%lld values)", what,
			    nnn_shape_format(out, buf, sizeof buf), (long long)n);
			return 0;
		}
	}
	if (unwritten) {
		say(sh, CONF_RUN_FAILED, "%s left %lld of the %lld values of its output %s unwritten, the first at %s", what,
		    (long long)unwritten, (long long)n, nnn_shape_format(out, buf, sizeof buf),
		    conf_place(out, first, at, sizeof at));
		return 0;
	}
	return 1;
}

static nnn_plan_t *plan(const nnn_ctx_t *ctx, const nnn_model_t *m, const nnn_shape_t *in, int threads,
                        const char *what, shared_t *sh)
{
	char buf[NNN_PATH_MAX + NNN_MSG_MAX + 512], sbuf[256];
	nnn_run_opts_t o = { .size = sizeof o, .threads = threads };
	nnn_plan_t *p = NULL;
	nnn_diags_t d;
	snprintf(sh->stage, sizeof sh->stage, "planning %s", what);
	nnn_diags_init(&d);
	if (nnn_plan_new(ctx, m, in, &o, &p, &d) != NNN_OK) {
		say(sh, CONF_RUN_FAILED, "cannot plan %s for input %s: %s", what, nnn_shape_format(in, sbuf, sizeof sbuf),
		    first_diag(&d, buf, sizeof buf));
		p = NULL;
	}
	nnn_diags_free(&d);
	return p;
}

/* Batch 1 on x0, batch 1 on x1, batch 2 on [x0, x1] with two threads: each
 * output written whole, the two batches agreeing, finite when the
 * parameters are ordinary; with a reference, the files it needs. */
static void run_model(const nnn_ctx_t *ctx, const nnn_model_t *m, const nnn_shape_t *in1, const conf_run_opts_t *o,
                      shared_t *sh)
{
	nnn_shape_t in2 = *in1;
	in2.dims[0] = 2;
	int64_t per_in = nnn_shape_numel(in1);
	nnn_plan_t *p1 = plan(ctx, m, in1, 1, "batch 1", sh), *p2 = p1 ? plan(ctx, m, &in2, 2, "batch 2 on 2 threads", sh) : NULL;
	if (!p2) {
		nnn_plan_free(p1);
		return;
	}
	nnn_shape_t out1 = *nnn_plan_shape(p1, m->layer_count - 1), out2 = *nnn_plan_shape(p2, m->layer_count - 1);
	int64_t per_out = nnn_shape_numel(&out1);
	float *x = malloc((size_t)(2 * per_in + 1) * sizeof *x);
	float *y1 = malloc((size_t)(2 * per_out + GUARD) * sizeof *y1), *y2 = malloc((size_t)(2 * per_out + GUARD) * sizeof *y2);
	char buf[NNN_PATH_MAX + NNN_MSG_MAX + 512], at[256];
	double err;
	if (!x || !y1 || !y2) {
		say(sh, CONF_RUN_FAILED, "out of memory for %lld inputs and %lld outputs", (long long)per_in, (long long)per_out);
		goto done;
	}
	/* Small, varied, exactly representable values (multiples of 1/8 in [-1.375, 1.375]). */
	for (int64_t i = 0; i < 2 * per_in; i++)
		x[i] = (float)((i * 7919) % 23 - 11) / 8.0f;
	if (!run_once(p1, x, y1, per_out, &out1, "batch 1 (first sample)", sh) ||
	    !run_once(p1, x + per_in, y1 + per_out, per_out, &out1, "batch 1 (second sample)", sh) ||
	    !run_once(p2, x, y2, 2 * per_out, &out2, "batch 2 on 2 threads", sh))
		goto done;
	int64_t bad = conf_mismatch(y2, y1, 2 * per_out, o->tolerance, &err);
	if (bad >= 0) {
		say(sh, CONF_RUN_FAILED,
		    "a batch of 2 (2 threads) and batches of 1 disagree at %s: %.9g vs %.9g (max abs error %.3g, tolerance %g)",
		    conf_place(&out2, bad, at, sizeof at), (double)y2[bad], (double)y1[bad], err, o->tolerance);
		goto done;
	}
	if (sh->ordinary) {
		for (int64_t i = 0; i < 2 * per_out; i++) {
			if (!isfinite(y2[i])) {
				say(sh, CONF_RUN_FAILED, "output %s is %.9g, from finite inputs and parameters",
				    conf_place(&out2, i, at, sizeof at), (double)y2[i]);
				goto done;
			}
		}
	}
	if (o->reference && sh->ordinary) {
		char path[4200];
		nnn_diags_t d;
		nnn_diags_init(&d);
		snprintf(sh->stage, sizeof sh->stage, "writing the files for the reference");
		snprintf(path, sizeof path, "%s/input.npy", o->tmpdir);
		nnn_status_t st = nnn_npy_write_file(path, &in2, x, &d);
		snprintf(path, sizeof path, "%s/nnnkit.npy", o->tmpdir);
		if (st == NNN_OK)
			st = nnn_npy_write_file(path, &out2, y2, &d);
		snprintf(path, sizeof path, "%s/model.json", o->tmpdir);
		if (st == NNN_OK && strstr(o->reference, "{json}"))
			st = nnn_json_write_file(m, path, NULL, &d);
		if (st != NNN_OK)
			say(sh, CONF_RUN_FAILED, "cannot write the reference's files: %s", first_diag(&d, buf, sizeof buf));
		nnn_diags_free(&d);
		if (st != NNN_OK)
			goto done;
	}
	sh->outcome = CONF_RUN_OK;
done:
	free(x);
	free(y1);
	free(y2);
	nnn_plan_free(p1);
	nnn_plan_free(p2);
}

/* The child: validate with the input shape, decode, run. */
static void child(const nnn_ctx_t *ctx, const char *path, const nnn_shape_t *in1, const conf_run_opts_t *o, shared_t *sh)
{
	char buf[NNN_PATH_MAX + NNN_MSG_MAX + 512], sbuf[256];
	const unsigned char *data;
	size_t size;
	nnn_model_t *m = NULL;
	nnn_diags_t d;
	nnn_diags_init(&d);
	snprintf(sh->stage, sizeof sh->stage, "reading the file");
	if (nnn_map(path, &data, &size, &d) != NNN_OK) {
		say(sh, CONF_RUN_FAILED, "%s", first_diag(&d, buf, sizeof buf));
		nnn_diags_free(&d);
		return;
	}
	snprintf(sh->stage, sizeof sh->stage, "validating with the input shape");
	if (nnn_validate_bytes(data, size, ctx, in1, &d) != NNN_OK) {
		say(sh, CONF_RUN_FAILED, "rejected with its recorded input shape %s: %s", nnn_shape_format(in1, sbuf, sizeof sbuf),
		    first_diag(&d, buf, sizeof buf));
		goto done;
	}
	sh->validated = 1;
	snprintf(sh->stage, sizeof sh->stage, "decoding");
	nnn_visitor_t visit = { .field = ordinary_field, .ctx = &sh->ordinary };
	nnn_decode_opts_t dopts = { .visit = &visit, .ctx = ctx };
	sh->ordinary = 1;
	if (nnn_model_decode(data, size, &dopts, &m, &d) != NNN_OK) {
		say(sh, CONF_RUN_FAILED, "does not decode: %s", first_diag(&d, buf, sizeof buf));
		goto done;
	}
	if (!kernels(ctx, m, sh->why, sizeof sh->why)) {
		sh->outcome = CONF_RUN_SKIPPED;
		goto done;
	}
	run_model(ctx, m, in1, o, sh);
done:
	nnn_model_free(m);
	nnn_unmap(data, size);
	nnn_diags_free(&d);
}

/* The last non-empty line of a file, at most `size` - 1 bytes of it. */
static void last_line(const char *path, char *out, size_t size)
{
	char line[512];
	FILE *f = fopen(path, "r");
	out[0] = '\0';
	while (f && fgets(line, sizeof line, f)) {
		line[strcspn(line, "\r\n")] = '\0';
		if (line[0]) {
			size_t n = strlen(line) < size - 1 ? strlen(line) : size - 1;
			memcpy(out, line, n);
			out[n] = '\0';
		}
	}
	if (f)
		fclose(f);
}

/* Runs the reference command and compares its output with nnnkit's. */
static void reference(const char *model, const conf_run_opts_t *o, conf_run_t *out)
{
	char in[4200], got[4200], ref[4200], json[4200], err[4200], why[256], line[300];
	snprintf(in, sizeof in, "%s/input.npy", o->tmpdir);
	snprintf(got, sizeof got, "%s/nnnkit.npy", o->tmpdir);
	snprintf(ref, sizeof ref, "%s/reference.npy", o->tmpdir);
	snprintf(json, sizeof json, "%s/model.json", o->tmpdir);
	snprintf(err, sizeof err, "%s/reference.err", o->tmpdir);
	const char *names[] = { "model", "input", "output", "json" }, *values[] = { model, in, ref, json };
	char *cmd = conf_command(o->reference, names, values, 4);
	if (!cmd) {
		out->outcome = CONF_RUN_FAILED;
		snprintf(out->why, sizeof out->why, "out of memory");
		return;
	}
	/* Its stderr is summarized. */
	int status = conf_shell(cmd, err, o->timeout, why, sizeof why);
	free(cmd);
	last_line(err, line, sizeof line);
	if (status == CONF_REFERENCE_DECLINED) {
		out->outcome = CONF_RUN_OK;
		out->declined = 1;
		snprintf(out->why, sizeof out->why, "not compared: the reference declined it%s%s",
		         line[0] ? ": " : "", line);
		return;
	}
	out->outcome = CONF_RUN_FAILED;
	if (status != 0) {
		char st[64];
		snprintf(st, sizeof st, "exited with status %d", status);
		snprintf(out->why, sizeof out->why, "the reference command %s%s%s", status < 0 ? why : st,
		         line[0] ? "; its stderr ends: " : " (nothing on stderr)", line);
		return;
	}
	nnn_npy_t a = { 0 }, b = { 0 };
	nnn_diags_t d;
	char buf[NNN_PATH_MAX + NNN_MSG_MAX + 512], s1[256], s2[256], at[256];
	nnn_diags_init(&d);
	if (nnn_npy_read_file(ref, &b, &d) != NNN_OK) {
		snprintf(out->why, sizeof out->why, "the reference command exited 0 but its output is missing or unreadable: %s%s%s",
		         first_diag(&d, buf, sizeof buf), line[0] ? "; its stderr ends: " : "", line);
	} else if (nnn_npy_read_file(got, &a, &d) != NNN_OK) {
		snprintf(out->why, sizeof out->why, "cannot read nnnkit's own output back: %s", first_diag(&d, buf, sizeof buf));
	} else if (a.shape.rank != b.shape.rank || memcmp(a.shape.dims, b.shape.dims, sizeof a.shape.dims[0] * (size_t)a.shape.rank)) {
		snprintf(out->why, sizeof out->why, "the reference's output has shape %s, nnnkit's %s",
		         nnn_shape_format(&b.shape, s1, sizeof s1), nnn_shape_format(&a.shape, s2, sizeof s2));
	} else {
		int64_t bad = conf_mismatch(a.data, b.data, (int64_t)a.count, o->tolerance, &out->max_err);
		out->compared = 1;
		if (bad >= 0)
			snprintf(out->why, sizeof out->why,
			         "differs from the reference: max abs error %.3g; first mismatch at %s: nnnkit %.9g, reference %.9g "
			         "(tolerance %g * (1 + |reference|))",
			         out->max_err, conf_place(&a.shape, bad, at, sizeof at), (double)a.data[bad], (double)b.data[bad],
			         o->tolerance);
		else
			out->outcome = CONF_RUN_OK;
	}
	nnn_npy_free(&a);
	nnn_npy_free(&b);
	nnn_diags_free(&d);
}

static void clean(const char *tmpdir)
{
	static const char *const files[] = { "input.npy", "nnnkit.npy", "reference.npy", "model.json", "reference.err" };
	char path[4200];
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		snprintf(path, sizeof path, "%s/%s", tmpdir, files[i]);
		unlink(path);
	}
}

void conf_run_case(const nnn_ctx_t *ctx, const char *path, const nnn_shape_t *input, const conf_run_opts_t *o,
                   conf_run_t *out)
{
	char why[256];
	memset(out, 0, sizeof *out);
	shared_t *sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED) {
		out->outcome = CONF_RUN_FAILED;
		snprintf(out->why, sizeof out->why, "cannot share memory with a child: %s", strerror(errno));
		return;
	}
	memset(sh, 0, sizeof *sh);
	sh->outcome = CONF_RUN_CRASHED;
	snprintf(sh->stage, sizeof sh->stage, "starting");
	conf_child_t ch;
	pid_t pid = conf_fork(&ch);
	if (pid == 0) {
		child(ctx, path, input, o, sh);
		_exit(0);
	}
	int status = pid < 0 ? -1 : conf_wait(&ch, o->timeout, why, sizeof why);
	if (pid < 0)
		snprintf(why, sizeof why, "cannot fork: %s", strerror(errno));
	out->validated = sh->validated;
	out->ran = sh->ran;
	if (status != 0 || sh->outcome == CONF_RUN_CRASHED) {
		out->outcome = CONF_RUN_CRASHED;
		if (status == 0)
			snprintf(why, sizeof why, "ended without a result");
		else if (status > 0)
			snprintf(why, sizeof why, "exited with status %d", status);
		snprintf(out->why, sizeof out->why, "%s while %s", why, sh->stage);
	} else {
		out->outcome = sh->outcome;
		out->finite_check = sh->outcome == CONF_RUN_OK && sh->ordinary;
		snprintf(out->why, sizeof out->why, "%s", sh->why);
		if (sh->outcome == CONF_RUN_OK && o->reference && sh->ordinary)
			reference(path, o, out);
	}
	munmap(sh, sizeof *sh);
	clean(o->tmpdir);
}
