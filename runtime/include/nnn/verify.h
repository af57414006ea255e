/* nnn/verify.h: whether two models compute the same function, measured:
 * both run with the context's kernels on the same seeded pseudo-random
 * inputs, and the largest differences between their outputs reported.
 * `nnnkit convert --verify` checks a conversion with it (the source as
 * read against the output read back from the bytes written).
 */
#ifndef NNN_VERIFY_H
#define NNN_VERIFY_H

#include <nnn/api.h>
#include <nnn/context.h>
#include <nnn/run.h>

/* Rows of inputs and their seed when the caller gives none: a few rows
 * exercise the batch axis; a fixed seed makes every report reproducible. */
#define NNN_VERIFY_ROWS 4
#define NNN_VERIFY_SEED 20260521u
/* The largest size tried on an axis the model leaves open (nnn_verify_input). */
#define NNN_VERIFY_MAX_SIDE 64

typedef struct nnn_verify_opts {
	uint32_t size;             /* sizeof(nnn_verify_opts_t) */
	uint32_t seed;             /* 0: NNN_VERIFY_SEED */
	const nnn_run_opts_t *run; /* may be NULL: one thread, the default limits */
} nnn_verify_opts_t;

typedef struct nnn_verify_result {
	nnn_shape_t output;        /* the outputs' shape, [rows, ...] */
	/* The largest |b - a| over every output value, and the largest
	 * relative error |b - a| / (1 + |a|) (a: the first model's value; the
	 * rule of nnnkit conformance --tolerance, so outputs near 0 are
	 * compared absolutely). Values equal as floats (NaN with NaN, an
	 * infinity with itself) differ by 0; any other non-finite pair by
	 * infinity. */
	double max_abs, max_rel;
	/* Where each maximum first occurs: the row, and the flat index of the
	 * value in that row's outputs. 0, 0 when every value is equal. */
	int64_t abs_row, abs_index, rel_row, rel_index;
	int32_t failed;            /* on a failure: 1 when the first model's, 2 the second's, else 0 */
} nnn_verify_result_t;

/* The seeded inputs: n floats uniform in [-1, 1], the same for a seed on
 * every machine (a 32-bit xorshift; 0 means NNN_VERIFY_SEED). */
NNN_API void nnn_verify_inputs(uint32_t seed, float *x, size_t n);

/* The input shape to run m on, with `rows` rows (dims[0]): `given` (its
 * batch replaced by rows) when not NULL; else what the layers fix (as
 * nnnkit info shows it); else, when they leave axes open (a Conv's spatial
 * sizes), the smallest size up to NNN_VERIFY_MAX_SIDE, the same on every
 * open axis, that the shape engine takes, and *opened (may be NULL) set.
 * NNN_E_INPUT_SHAPE in diags, saying why, when none is found. */
NNN_API NNN_NODISCARD nnn_status_t nnn_verify_input(const nnn_model_t *m, const nnn_shape_t *given, int64_t rows,
                                                    nnn_shape_t *out, bool *opened, nnn_diags_t *diags);

/* Runs a and b (both borrowed) on the same seeded inputs of shape `input`
 * and fills *r (opts may be NULL). A model that does not plan or run on
 * that input returns its problem (r->failed says which model's); outputs of different shapes are
 * NNN_E_SHAPE, both shapes said. */
NNN_API NNN_NODISCARD nnn_status_t nnn_verify(const nnn_ctx_t *ctx, const nnn_model_t *a, const nnn_model_t *b,
                                              const nnn_shape_t *input, const nnn_verify_opts_t *opts,
                                              nnn_verify_result_t *r, nnn_diags_t *diags);

#endif
