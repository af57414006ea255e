/* verify.c: two models run on the same seeded inputs, their outputs
 * compared (nnn/verify.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <nnn/run.h>
#include <nnn/shape.h>
#include <nnn/validate.h>
#include <nnn/verify.h>

void nnn_verify_inputs(uint32_t seed, float *x, size_t n)
{
	uint32_t s = seed ? seed : NNN_VERIFY_SEED;
	for (size_t i = 0; i < n; i++) {
		s ^= s << 13;
		s ^= s >> 17;
		s ^= s << 5;
		/* 24 bits: every value a float holds exactly, in [-1, 1]. */
		x[i] = (float)((double)(s >> 8) / (double)0xffffff * 2.0 - 1.0);
	}
}

static void first_in(void *ctx, int32_t i, const nnn_layer_shapes_t *s)
{
	if (i == 0)
		*(nnn_pshape_t *)ctx = s->in;
}

static void no_op(void *ctx, int32_t i, const nnn_layer_shapes_t *s)
{
	(void)ctx, (void)i, (void)s;
}

/* Tries of the search below: enough for two open axes up to 64 and three
 * up to 40, and a bound on the time a model that takes none costs. */
#define MAX_TRIES (1 << 16)

/* The next sizes of the n open axes s[] whose largest is `most` (an
 * odometer over 1..most, skipping those under it); false past the last. */
static bool next_sizes(int64_t *s, int n, int64_t most)
{
	for (;;) {
		int k = n - 1;
		while (k >= 0 && s[k] == most)
			s[k--] = 1;
		if (k < 0)
			return false;
		s[k]++;
		for (k = 0; k < n && s[k] != most; k++)
			;
		if (k < n)
			return true;
	}
}

/* The shape of partial input p with sizes s[] on its open axes, in order. */
static nnn_shape_t fill(const nnn_pshape_t *p, int64_t rows, const int64_t *s)
{
	nnn_shape_t in = { .rank = p->rank, .dims = { rows } };
	for (int32_t k = 1, j = 0; k < p->rank; k++)
		in.dims[k] = p->dims[k] >= 0 ? p->dims[k] : s[j++];
	return in;
}

/* The smallest input of the form p the shape engine takes: the smallest
 * largest size on its open axes, then the first in order. */
static bool smallest(const nnn_model_t *m, const nnn_pshape_t *p, int64_t rows, nnn_shape_t *out, int *tries)
{
	int64_t s[NNN_MAX_RANK];
	int n = 0;
	for (int32_t k = 1; k < p->rank; k++)
		n += p->dims[k] < 0;
	for (int64_t most = 1; most <= NNN_VERIFY_MAX_SIDE && *tries < MAX_TRIES; most++) {
		for (int j = 0; j < n; j++)
			s[j] = j == n - 1 ? most : 1;
		do {
			*out = fill(p, rows, s);
			++*tries;
			if (nnn_model_shapes_each(m, out, no_op, NULL, NULL) == NNN_OK)
				return true;
		} while (n > 0 && *tries < MAX_TRIES && next_sizes(s, n, most));
		if (n == 0)
			return false;
	}
	return false;
}

/* The form of the first layer's input (its rank open: a Dense layer's
 * [batch, ..., features], tried at rank 2, then up to 5) and the smallest
 * input of it the engine takes. */
static bool find_input(const nnn_model_t *m, nnn_pshape_t *p, int64_t rows, nnn_shape_t *out, bool *open, int *tries)
{
	*open = false;
	if (p->rank >= 1) {
		for (int32_t k = 1; k < p->rank; k++)
			*open = *open || p->dims[k] < 0;
		return smallest(m, p, rows, out, tries);
	}
	int64_t last = p->last;
	for (p->rank = 2; p->rank <= 5; p->rank++) {
		for (int32_t k = 0; k < p->rank; k++)
			p->dims[k] = k == p->rank - 1 ? last : NNN_DIM_UNKNOWN;
		*open = p->rank > 2 || last < 0;
		if (smallest(m, p, rows, out, tries))
			return true;
	}
	*p = (nnn_pshape_t){ .rank = NNN_DIM_UNKNOWN, .last = last };
	return false;
}

nnn_status_t nnn_verify_input(const nnn_model_t *m, const nnn_shape_t *given, int64_t rows, nnn_shape_t *out,
                              bool *opened, nnn_diags_t *diags)
{
	nnn_pshape_t p = { .rank = NNN_DIM_UNKNOWN, .last = NNN_DIM_UNKNOWN };
	int tries = 0;
	bool open = false;
	char buf[160];
	if (opened)
		*opened = false;
	if (given) {
		*out = *given;
		if (out->rank > 0)
			out->dims[0] = rows;
		return NNN_OK;
	}
	if (m->layer_count < 1) { /* no layer gives its input back: any shape */
		*out = (nnn_shape_t){ .rank = 2, .dims = { rows, 1 } };
		return NNN_OK;
	}
	if (nnn_model_shapes_each(m, NULL, first_in, &p, diags) != NNN_OK)
		return nnn_diags_add(diags, NNN_E_INPUT_SHAPE, NNN_NO_OFFSET, "", "the layers do not say the input shape");
	if (!find_input(m, &p, rows, out, &open, &tries))
		return nnn_diags_add(diags, NNN_E_INPUT_SHAPE, NNN_NO_OFFSET, "layers[0]",
		                     "the layers fix the input as %s, and the model takes no input of that form with sizes "
		                     "up to %d on its open axes (%d tried)",
		                     nnn_pshape_format(&p, buf, sizeof buf), NNN_VERIFY_MAX_SIDE, tries);
	if (opened)
		*opened = open;
	return NNN_OK;
}

/* Plans m for `input`, runs x, returns its outputs in *y (free it). */
static nnn_status_t run_one(const nnn_ctx_t *ctx, const nnn_model_t *m, const nnn_shape_t *input, const float *x,
                            const nnn_run_opts_t *ro, float **y, nnn_shape_t *out, nnn_diags_t *diags)
{
	nnn_plan_t *p = NULL;
	*y = NULL;
	nnn_status_t st = nnn_plan_new(ctx, m, input, ro, &p, diags);
	if (st != NNN_OK)
		return st;
	*out = *nnn_plan_shape(p, m->layer_count - 1);
	int64_t n = nnn_shape_numel(out);
	if (n < 0 || (uint64_t)n > SIZE_MAX / sizeof **y - 1 || !(*y = malloc(((size_t)n + 1) * sizeof **y)))
		st = nnn_diags_add(diags, NNN_E_NOMEM, NNN_NO_OFFSET, "", "no memory for %lld outputs", (long long)n);
	else
		st = nnn_plan_run(p, x, *y, diags);
	nnn_plan_free(p);
	return st;
}

/* |b - a| and |b - a| / (1 + |a|); equal floats (NaN with NaN too) differ by 0. */
static void diff(float a, float b, double *abs_, double *rel)
{
	if (a == b || (isnan(a) && isnan(b))) {
		*abs_ = *rel = 0;
	} else if (!isfinite(a) || !isfinite(b)) {
		*abs_ = *rel = INFINITY;
	} else {
		*abs_ = fabs((double)b - (double)a);
		*rel = *abs_ / (1 + fabs((double)a));
	}
}

static void compare(const float *ya, const float *yb, nnn_verify_result_t *r)
{
	int64_t rows = r->output.rank > 0 ? r->output.dims[0] : 1, n = nnn_shape_numel(&r->output);
	int64_t per = rows > 0 ? n / rows : 0;
	for (int64_t i = 0; i < n; i++) {
		double e, q;
		diff(ya[i], yb[i], &e, &q);
		if (e > r->max_abs) {
			r->max_abs = e;
			r->abs_row = i / per, r->abs_index = i % per;
		}
		if (q > r->max_rel) {
			r->max_rel = q;
			r->rel_row = i / per, r->rel_index = i % per;
		}
	}
}

nnn_status_t nnn_verify(const nnn_ctx_t *ctx, const nnn_model_t *a, const nnn_model_t *b, const nnn_shape_t *input,
                        const nnn_verify_opts_t *opts, nnn_verify_result_t *r, nnn_diags_t *diags)
{
	nnn_verify_opts_t o = opts ? *opts : (nnn_verify_opts_t){ .size = sizeof o };
	int64_t n = nnn_shape_numel(input);
	float *x = NULL, *ya = NULL, *yb = NULL;
	nnn_shape_t ob = { 0 };
	memset(r, 0, sizeof *r);
	if (n < 1 || (uint64_t)n > SIZE_MAX / sizeof *x || !(x = malloc((size_t)n * sizeof *x)))
		return nnn_diags_add(diags, n < 1 ? NNN_E_INPUT_SHAPE : NNN_E_NOMEM, NNN_NO_OFFSET, "",
		                     "no room for %lld input values", (long long)n);
	nnn_verify_inputs(o.seed, x, (size_t)n);
	nnn_status_t st = run_one(ctx, a, input, x, o.run, &ya, &r->output, diags);
	r->failed = st != NNN_OK ? 1 : 0;
	if (st == NNN_OK && (st = run_one(ctx, b, input, x, o.run, &yb, &ob, diags)) != NNN_OK)
		r->failed = 2;
	if (st == NNN_OK && (ob.rank != r->output.rank ||
	                     memcmp(ob.dims, r->output.dims, (size_t)ob.rank * sizeof ob.dims[0]))) {
		char sa[128], sb[128];
		st = nnn_diags_add(diags, NNN_E_SHAPE, NNN_NO_OFFSET, "", "the outputs differ in shape: %s against %s",
		                   nnn_shape_format(&ob, sb, sizeof sb), nnn_shape_format(&r->output, sa, sizeof sa));
		r->failed = 2;
	}
	if (st == NNN_OK)
		compare(ya, yb, r);
	free(x), free(ya), free(yb);
	return st;
}
