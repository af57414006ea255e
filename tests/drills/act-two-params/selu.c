/* selu.c: SELU, y = lambda * (x > 0 ? x : alpha * (exp(x) - 1)), in place
 * (added by the growth drill tests/drills/act-two-params). */
#include <math.h>

#include "builtin.h"

nnn_status_t bi_selu(const nnn_activation_t *act, const void *params, const nnn_shape_t *shape, float *x,
                     int threads)
{
	/* a core ID: the host decoded the parameters into act */
	const nnn_selu_t *p = act ? &act->params.selu : params;
	int64_t n = shape ? bi_numel(shape) : -1;
	(void)threads;
	if (!p || n < 0 || (n > 0 && !x))
		return NNN_E_KERNEL;
	for (int64_t i = 0; i < n; i++)
		x[i] = p->lambda * (x[i] > 0 ? x[i] : p->alpha * expm1f(x[i]));
	return NNN_OK;
}
