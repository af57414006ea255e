/* act.c: the six core activations, in place over a whole tensor. */
#include <math.h>

#include "builtin.h"

/* Element count of an activation's tensor, or -1 when the shape is bad. */
static int64_t act_numel(const nnn_shape_t *shape, const float *x)
{
	int64_t n = shape ? bi_numel(shape) : -1;
	return n > 0 && !x ? -1 : n;
}

nnn_status_t bi_linear(const nnn_activation_t *act, const void *params, const nnn_shape_t *shape, float *x,
                       int threads)
{
	(void)act, (void)params, (void)threads;
	return act_numel(shape, x) < 0 ? NNN_E_KERNEL : NNN_OK;
}

nnn_status_t bi_sigmoid(const nnn_activation_t *act, const void *params, const nnn_shape_t *shape, float *x,
                        int threads)
{
	int64_t n = act_numel(shape, x);
	(void)act, (void)params, (void)threads;
	if (n < 0)
		return NNN_E_KERNEL;
	/* exp of a non-positive number only: no overflow for any x. */
	for (int64_t i = 0; i < n; i++) {
		if (x[i] >= 0) {
			x[i] = 1.0f / (1.0f + expf(-x[i]));
		} else {
			float e = expf(x[i]);
			x[i] = e / (1.0f + e);
		}
	}
	return NNN_OK;
}

nnn_status_t bi_tanh(const nnn_activation_t *act, const void *params, const nnn_shape_t *shape, float *x,
                     int threads)
{
	int64_t n = act_numel(shape, x);
	(void)act, (void)params, (void)threads;
	if (n < 0)
		return NNN_E_KERNEL;
	for (int64_t i = 0; i < n; i++)
		x[i] = tanhf(x[i]);
	return NNN_OK;
}

nnn_status_t bi_relu(const nnn_activation_t *act, const void *params, const nnn_shape_t *shape, float *x,
                     int threads)
{
	int64_t n = act_numel(shape, x);
	(void)act, (void)params, (void)threads;
	if (n < 0)
		return NNN_E_KERNEL;
	for (int64_t i = 0; i < n; i++)
		x[i] = x[i] > 0 ? x[i] : 0.0f;
	return NNN_OK;
}

nnn_status_t bi_leaky_relu(const nnn_activation_t *act, const void *params, const nnn_shape_t *shape, float *x,
                           int threads)
{
	int64_t n = act_numel(shape, x);
	float tau;
	(void)threads;
	/* core ID: the host decoded tau into act; params is the same struct */
	if (act)
		tau = act->params.leaky_relu.tau;
	else if (params)
		tau = ((const nnn_leaky_relu_t *)params)->tau;
	else
		return NNN_E_KERNEL;
	if (n < 0)
		return NNN_E_KERNEL;
	for (int64_t i = 0; i < n; i++)
		x[i] = x[i] > 0 ? x[i] : tau * x[i];
	return NNN_OK;
}

nnn_status_t bi_softmax(const nnn_activation_t *act, const void *params, const nnn_shape_t *shape, float *x,
                        int threads)
{
	int64_t n = act_numel(shape, x), len;
	(void)act, (void)params, (void)threads;
	if (n < 0)
		return NNN_E_KERNEL;
	len = shape->rank > 0 ? shape->dims[shape->rank - 1] : 1; /* a scalar is one row of one */
	if (n == 0)
		return NNN_OK;
	for (float *row = x; row < x + n; row += len) {
		float max = row[0];
		double sum = 0;
		for (int64_t i = 1; i < len; i++)
			max = row[i] > max ? row[i] : max;
		/* exp(x - max) <= 1: no overflow, and the largest term is exactly 1. */
		for (int64_t i = 0; i < len; i++) {
			row[i] = expf(row[i] - max);
			sum += row[i];
		}
		for (int64_t i = 0; i < len; i++)
			row[i] = (float)(row[i] / sum);
	}
	return NNN_OK;
}
