/* onnx_match.c: the host table's onnx_import functions (ABI 1.7), each
 * forwarding to the reader of the match (onnx_match.h says why). */
#include "onnx_match.h"

#define R(m) (((const nnn_om_head_t *)(const void *)(m))->r)

const char *nnn_om_op(const nnn_onnx_match_t *m, int k)
{
	return R(m)->op(m, k);
}

int nnn_om_input(const nnn_onnx_match_t *m, int k, int in)
{
	return R(m)->input(m, k, in);
}

int nnn_om_attr_ints(const nnn_onnx_match_t *m, int k, const char *name, int64_t *v, int max)
{
	return R(m)->attr_ints(m, k, name, v, max);
}

int nnn_om_attr_float(const nnn_onnx_match_t *m, int k, const char *name, float *v)
{
	return R(m)->attr_float(m, k, name, v);
}

int64_t nnn_om_const(const nnn_onnx_match_t *m, int k, int in, int64_t *dims, int *rank, const float **data)
{
	return R(m)->cst(m, k, in, dims, rank, data);
}

nnn_status_t nnn_om_set_tensor(nnn_onnx_match_t *m, const char *field, const int64_t *dims, int rank,
                               const float *data)
{
	return R(m)->set_tensor(m, field, dims, rank, data);
}

nnn_status_t nnn_om_set_number(nnn_onnx_match_t *m, const char *field, double v)
{
	return R(m)->set_number(m, field, v);
}

nnn_status_t nnn_om_set_ints(nnn_onnx_match_t *m, const char *field, const int64_t *v, int n)
{
	return R(m)->set_ints(m, field, v, n);
}

int64_t nnn_om_const_elems(const nnn_onnx_match_t *m, int k, int in, int64_t *dims, int *rank, int32_t *dtype,
                           const void **bytes)
{
	return R(m)->cst_elems(m, k, in, dims, rank, dtype, bytes);
}

nnn_status_t nnn_om_set_tensor_const(nnn_onnx_match_t *m, const char *field, int k, int in)
{
	return R(m)->set_tensor_const(m, field, k, in);
}
