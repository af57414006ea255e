/* vctx.h (internal): the validation context and the rule kinds the schema
 * names (rules.c), which generated validators call. */
#ifndef NNN_VCTX_H
#define NNN_VCTX_H

#include <nnn/plugin.h>

#include "path.h"

typedef struct nnn_vctx {
	nnn_diags_t *diags;
	nnn_path_t path;
	size_t problems; /* found so far, including any dropped from diags */
	/* A model made in memory (JSON, a spec, an import): no byte offsets,
	 * which its records hold as zeros, are said (not "@0x0"). */
	bool no_offsets;
} nnn_vctx_t;

void nnn_v_problem(nnn_vctx_t *v, nnn_status_t code, const char *name, uint64_t at,
                   const char *fmt, ...) NNN_PRINTF(5, 6);

/* A checking pass's result: NNN_OK without problems, else the code of the
 * first one it added to diags after `first` (NNN_E_SHAPE when diags kept none). */
static inline nnn_status_t nnn_v_result(const nnn_vctx_t *v, size_t first)
{
	if (!v->problems)
		return NNN_OK;
	return v->diags && v->diags->n > first ? v->diags->v[first].code : NNN_E_SHAPE;
}

void nnn_rule_min(nnn_vctx_t *v, const char *name, int64_t value, int64_t min, uint64_t at);
/* value within the bounds `flags` (enum nnn_bound) names; NaN fails. */
void nnn_rule_bounds(nnn_vctx_t *v, const char *name, double value, double min, double max, unsigned flags,
                     uint64_t at);
/* The ABI 1.0 form, for plugins built before rule_bounds: [min, max] or [min, max). */
void nnn_rule_range(nnn_vctx_t *v, const char *name, double value, double min, double max,
                    bool max_open, uint64_t at);
void nnn_rule_finite(nnn_vctx_t *v, const char *name, float value, uint64_t at);
/* `dims` is the array field `name` (at `at`); entries are checked against pat. */
void nnn_rule_dims(nnn_vctx_t *v, const char *name, nnn_i32s_t dims, uint64_t at,
                   const nnn_pat_t *pat, size_t npat);
/* The padding formulas of one padding type value, generated from the schema. */
typedef bool (*nnn_pad_fn)(int64_t type, int64_t k, int64_t *before, int64_t *after);
void nnn_rule_padding(nnn_vctx_t *v, const char *name, nnn_i32s_t pads, uint64_t pads_at,
                      nnn_i32s_t kernel_dims, int64_t type, nnn_pad_fn formulas);
void nnn_rule_param_count(nnn_vctx_t *v, const char *name, uint64_t found, uint64_t total,
                          uint64_t at);

/* nnn_i32s_pick and nnn_i32s_pick_at (an element of an array, and its
 * offset) are header-only in <nnn/types.h>: plugins' generated code uses
 * them too. */

/* Index i counted from the end when negative. */
static inline int64_t nnn_i32s_resolve(nnn_i32s_t a, int64_t i)
{
	return i < 0 ? i + a.n : i;
}

#endif
