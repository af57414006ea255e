/* model.c: the public face of the codec: decode, free, validate, open. */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* MADV_HUGEPAGE */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#include <nnn/file.h>
#include <nnn/validate.h>

#include "codec.h"
#include "fileio.h"
#include "mem.h"

/* A decoded model and the memory it owns; `model` comes first so that a
 * pointer to it is a pointer to the whole. */
typedef struct decoded {
	nnn_model_t model;
	nnn_arena_t arena;
	unsigned char *copy; /* NNN_DECODE_COPY: the whole input, which the views point into */
} decoded_t;

/* Layers carry no length, so nothing after an unknown ID can be read with
 * certainty. To still list every unknown ID of a file, once each, search for
 * the lengths of the unknown elements under which the rest of the file
 * decodes exactly to its end (depth first, shortest first, within a budget),
 * and report the further unknown IDs that framing reveals. */
#define PROBE_BUDGET 20000
/* ...and at most PROBE_WORK_MIN + PROBE_WORK_PER_BYTE bytes per byte of the
 * file decoded in all (each attempt counted as PROBE_ATTEMPT bytes more), so
 * that the search costs at most a small multiple of decoding the file once,
 * whatever the file: it is an extra, not a promise. An attempt costs the
 * bytes it decodes and no more, since its large arrays are fresh zero pages
 * (nnn_cur_array), whatever the counts it reads. */
#define PROBE_WORK_MIN ((uint64_t)1 << 20)
#define PROBE_WORK_PER_BYTE 1
#define PROBE_ATTEMPT 64

/* A framing is only believed when every layer it reads passes every rule
 * but the parameter count (the unknown layers may hold tensors). Random
 * bytes framed as layers almost never do. */
static bool plausible(const nnn_model_t *m)
{
	nnn_diags_t d;
	nnn_vctx_t v = { .diags = &d };
	bool ok = true;
	nnn_diags_init(&d);
	nnn_gen_validate(&v, m, NULL, NULL);
	for (size_t i = 0; i < d.n; i++)
		ok &= d.v[i].code == NNN_E_PARAM_COUNT;
	if (d.dropped)
		ok = false;
	nnn_diags_free(&d);
	return ok;
}

/* Where the probe reads and what it may spend. */
typedef struct probe_src {
	const void *buf;
	size_t len;
	nnn_window_t *win; /* NULL: from buf */
	const nnn_ctx_t *ctx;
	long budget;       /* attempts left */
	uint64_t work, max_work;
} probe_src_t;

/* One attempt under the current guesses: its status (NNN_E_SHAPE for a
 * framing that decodes but is not plausible). */
static nnn_status_t probe_attempt(probe_src_t *s, nnn_probe_t *p)
{
	decoded_t d = { 0 };
	nnn_cur_t c = { .buf = s->buf, .len = s->len, .win = s->win, .ctx = s->ctx, .probe = p, .arena = &d.arena };
	p->nhits = p->applied = 0;
	p->pruned = false;
	nnn_status_t st = nnn_gen_decode(&c, &d.model);
	s->work += c.pos + PROBE_ATTEMPT;
	if (st == NNN_OK && !plausible(&d.model))
		st = NNN_E_SHAPE;
	nnn_arena_free(&d.arena);
	nnn_probe_release(p);
	return st;
}

/* One depth-first search for framings with at most p->max_distinct distinct
 * unknown IDs, shortest lengths first. True when one was found. */
static bool probe_search(probe_src_t *s, nnn_probe_t *p)
{
	p->nguess = 0;
	for (; s->budget > 0 && s->work < s->max_work; s->budget--) {
		nnn_status_t st = probe_attempt(s, p);
		if (st == NNN_OK)
			return true;
		if (st == NNN_E_IO || st == NNN_E_NOMEM) /* the file changed, or no memory: no framing can be trusted */
			return false;
		if (st == NNN_E_UNKNOWN_ID && !p->pruned && p->nhits > p->nguess) {
			if (p->nguess == NNN_PROBE_MAX)
				return false;
			p->guess[p->nguess++] = 0; /* one more unknown: try its shortest length */
			continue;
		}
		/* A wrong guess: the failure came after the last guess applied (one
		 * that ran past the end was not applied), so drop the guesses after
		 * it and lengthen it. */
		p->nguess = p->applied < p->nguess ? p->applied : p->nguess;
		if (p->nguess == 0)
			return false;
		p->guess[p->nguess - 1]++;
	}
	return false;
}

/* Reads through the file's window when there is one (fd >= 0), as the
 * decode did: the probe never touches the mapping either. */
static void probe_unknowns(const void *buf, size_t len, int fd, const nnn_ctx_t *ctx, nnn_diags_t *diags)
{
	nnn_probe_t p = { .nguess = 0 };
	nnn_window_t win = { .fd = fd };
	probe_src_t s = { buf, len, fd >= 0 ? &win : NULL, ctx, PROBE_BUDGET, 0,
		          PROBE_WORK_MIN + PROBE_WORK_PER_BYTE * (uint64_t)len };
	bool found = false;
	/* Fewest distinct unknown IDs first: a framing that needs one more
	 * invented ID is less likely than one that reuses those already seen. */
	for (p.max_distinct = 1; !found && p.max_distinct <= NNN_PROBE_MAX && s.budget > 0 && s.work < s.max_work;
	     p.max_distinct++)
		found = probe_search(&s, &p);
	if (!found)
		return;
	for (size_t i = 1; i < p.nhits; i++) {
		bool seen = false;
		for (size_t j = 0; j < i; j++)
			seen |= p.hits[j].kind == p.hits[i].kind && p.hits[j].id == p.hits[i].id;
		if (seen)
			continue;
		char lens[160] = "";
		for (size_t j = 0, k = 0; j < i && k < sizeof lens; j++)
			k += (size_t)snprintf(lens + k, sizeof lens - k, "%s%zu", j == 0 ? "" : j + 1 == i ? " and " : ", ",
			                      p.guess[j]);
		nnn_diags_add(diags, NNN_E_UNKNOWN_ID, p.hits[i].at, p.hits[i].path,
		              "%s ID %" PRId64 " is not defined either, and no loaded plugin provides it (found by framing "
		              "the rest of the file, assuming the fields of the unknown IDs before it take %s bytes: a "
		              "guess, since nothing after an unknown ID is certain)",
		              p.hits[i].kind == NNN_EXT_LAYER ? "layer" : "activation", p.hits[i].id, lens);
	}
}

nnn_status_t nnn_decode_windowed(const void *buf, size_t len, int fd, const nnn_decode_opts_t *opts,
                                 nnn_model_t **out, nnn_diags_t *diags)
{
	decoded_t *d = calloc(1, sizeof *d);
	nnn_window_t win; /* its bytes are written before they are read */
	nnn_cur_t c = { .buf = buf, .len = len, .diags = diags, .win = fd >= 0 ? &win : NULL };
	nnn_status_t st;

	win.fd = fd;
	win.off = win.n = 0;

	*out = NULL;
	if (!d)
		return nnn_diags_add(diags, NNN_E_NOMEM, NNN_NO_OFFSET, "", "cannot allocate a model");
	if (opts) {
		c.flags = opts->flags & ~(unsigned)NNN_DECODE_COPY;
		c.vis = opts->visit;
		c.ctx = opts->ctx;
	}
	c.arena = &d->arena;
	if (len && !buf)
		st = nnn_diags_add(diags, NNN_E_USAGE, NNN_NO_OFFSET, "", "no buffer for %zu bytes", len);
	else
		st = nnn_gen_decode(&c, &d->model);
	if (st == NNN_E_UNKNOWN_ID && diags)
		probe_unknowns(buf, len, fd, c.ctx, diags);
	free(c.scratch);
	if (c.first_soft)
		st = c.first_soft; /* kept going past problems: the first one's code */
	if (st != NNN_OK) {
		nnn_model_free(&d->model);
		return st;
	}
	*out = &d->model;
	return NNN_OK;
}

nnn_status_t nnn_model_adopt(unsigned char *copy, size_t len, const nnn_decode_opts_t *opts, nnn_model_t **out,
                             nnn_diags_t *diags)
{
	nnn_status_t st = nnn_decode_windowed(copy, len, -1, opts, out, diags);
	if (st != NNN_OK) {
		free(copy);
		return st;
	}
	((decoded_t *)*out)->copy = copy;
	return NNN_OK;
}

const unsigned char *nnn_model_copy(const nnn_model_t *m)
{
	return ((const decoded_t *)m)->copy;
}

nnn_status_t nnn_model_decode(const void *buf, size_t len, const nnn_decode_opts_t *opts, nnn_model_t **out,
                              nnn_diags_t *diags)
{
	nnn_decode_opts_t again = { 0 };
	unsigned char *copy;
	nnn_status_t st;

	if (!opts || !(opts->flags & NNN_DECODE_COPY))
		return nnn_decode_windowed(buf, len, -1, opts, out, diags);
	/* A copy is one allocation of the whole input, filled by one memcpy:
	 * much cheaper than an allocation per tensor, whose fresh pages each
	 * fault. The bytes are checked where they are first, so that a bad
	 * input costs no copy; the second decode, from the copy, then only
	 * sets up the views (the visitor has seen every field already). */
	st = nnn_decode_windowed(buf, len, -1, opts, out, diags);
	nnn_model_free(*out);
	*out = NULL;
	if (st != NNN_OK)
		return st;
	if (!(copy = nnn_mem_big(len)))
		return nnn_diags_add(diags, NNN_E_NOMEM, NNN_NO_OFFSET, "", "cannot allocate %zu bytes for a copy", len);
	if (len)
		memcpy(copy, buf, len);
	again.flags = opts->flags;
	again.ctx = opts->ctx;
	return nnn_model_adopt(copy, len, &again, out, diags);
}

nnn_model_t *nnn_model_new_arena(nnn_arena_t **arena)
{
	decoded_t *d = calloc(1, sizeof *d);
	*arena = d ? &d->arena : NULL;
	return d ? &d->model : NULL;
}

void nnn_model_free(nnn_model_t *m)
{
	decoded_t *d = (decoded_t *)m;
	if (!d)
		return;
	nnn_arena_free(&d->arena);
	free(d->copy);
	free(d);
}

uint64_t nnn_model_param_total(const nnn_model_t *m)
{
	return nnn_gen_params(m);
}

void nnn_f32s_copy(nnn_f32s_t a, float *out)
{
	nnn_f32s_read(a, out); /* one definition, header-only for plugins */
}

void nnn_tensor_copy(const nnn_tensor_t *t, float *out)
{
	nnn_f32s_copy(t->data, out);
}

/* ---- validation ---- */

nnn_status_t nnn_model_validate(const nnn_model_t *m, const nnn_shape_t *input, nnn_shape_t *out_shapes,
                                nnn_diags_t *diags)
{
	nnn_vctx_t v = { .diags = diags };
	size_t first = diags ? diags->n : 0;
	nnn_gen_validate(&v, m, input, out_shapes);
	return nnn_v_result(&v, first);
}

nnn_status_t nnn_validate_windowed(const void *buf, size_t len, int fd, const nnn_ctx_t *ctx,
                                   const nnn_shape_t *input, nnn_diags_t *diags)
{
	nnn_window_t win = { .fd = fd };
	nnn_cur_t c = { .buf = buf, .len = len, .diags = diags, .flags = NNN_DECODE_KEEP_GOING, .ctx = ctx };
	decoded_t d = { 0 };
	nnn_status_t st;

	c.win = fd >= 0 ? &win : NULL;
	c.arena = &d.arena;
	st = nnn_gen_decode(&c, &d.model);
	if (st == NNN_E_UNKNOWN_ID && diags)
		probe_unknowns(buf, len, fd, ctx, diags);
	if (st == NNN_OK) /* framed: every semantic rule can run, even past soft problems */
		st = nnn_model_validate(&d.model, input, NULL, diags);
	if (c.first_soft)
		st = c.first_soft; /* the code of the first problem, found while decoding */
	nnn_arena_free(&d.arena);
	return st;
}

nnn_status_t nnn_validate_bytes(const void *buf, size_t len, const nnn_ctx_t *ctx, const nnn_shape_t *input,
                                nnn_diags_t *diags)
{
	return nnn_validate_windowed(buf, len, -1, ctx, input, diags);
}

nnn_status_t nnn_shape_parse(const char *text, nnn_shape_t *out, nnn_diags_t *diags)
{
	const char *p = text;
	out->rank = 0;
	while (*p) {
		char *end;
		errno = 0;
		long long x = strtoll(p, &end, 10);
		if (end == p || errno || x < 1 || x > INT32_MAX)
			return nnn_diags_add(diags, NNN_E_USAGE, NNN_NO_OFFSET, "", "bad input shape \"%s\": expected "
			                     "positive integers separated by commas, such as 1,28,28,1", text);
		if (out->rank == NNN_MAX_RANK)
			return nnn_diags_add(diags, NNN_E_USAGE, NNN_NO_OFFSET, "", "input shape \"%s\" has more than %d dims",
			                     text, NNN_MAX_RANK);
		out->dims[out->rank++] = x;
		p = end;
		if (*p == ',' || *p == 'x')
			p++;
		else if (*p)
			return nnn_diags_add(diags, NNN_E_USAGE, NNN_NO_OFFSET, "", "bad input shape \"%s\": unexpected '%c'",
			                     text, *p);
	}
	if (out->rank < 2)
		return nnn_diags_add(diags, NNN_E_USAGE, NNN_NO_OFFSET, "", "input shape \"%s\" needs a batch axis and "
		                     "at least one more, such as 1,10", text);
	return NNN_OK;
}


