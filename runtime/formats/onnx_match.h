/* onnx_match.h (internal): the host table's functions an onnx_import hook
 * (nnn/plugin.h, ABI 1.7) reads a graph with. Each forwards to the reader
 * the match starts with, ONNX import's (runtime/formats/onnx/
 * import_plugin.c): so the host table (runtime/plugin/host.c) names no
 * protobuf code, and a program linked with libnnn.a that never imports
 * ONNX does not link protobuf-c. */
#ifndef NNN_ONNX_MATCH_H
#define NNN_ONNX_MATCH_H

#include <nnn/plugin.h>

typedef struct nnn_om_reader {
	const char *(*op)(const nnn_onnx_match_t *m, int k);
	int (*input)(const nnn_onnx_match_t *m, int k, int in);
	int (*attr_ints)(const nnn_onnx_match_t *m, int k, const char *name, int64_t *v, int max);
	int (*attr_float)(const nnn_onnx_match_t *m, int k, const char *name, float *v);
	int64_t (*cst)(const nnn_onnx_match_t *m, int k, int in, int64_t *dims, int *rank, const float **data);
	nnn_status_t (*set_tensor)(nnn_onnx_match_t *m, const char *field, const int64_t *dims, int rank,
	                           const float *data);
	nnn_status_t (*set_number)(nnn_onnx_match_t *m, const char *field, double v);
	nnn_status_t (*set_ints)(nnn_onnx_match_t *m, const char *field, const int64_t *v, int n);
	/* ABI 1.8 */
	int64_t (*cst_elems)(const nnn_onnx_match_t *m, int k, int in, int64_t *dims, int *rank, int32_t *dtype,
	                     const void **bytes);
	nnn_status_t (*set_tensor_const)(nnn_onnx_match_t *m, const char *field, int k, int in);
} nnn_om_reader_t;

/* What every nnn_onnx_match_t starts with. */
typedef struct nnn_om_head {
	const nnn_om_reader_t *r;
} nnn_om_head_t;

const char *nnn_om_op(const nnn_onnx_match_t *m, int k);
int nnn_om_input(const nnn_onnx_match_t *m, int k, int in);
int nnn_om_attr_ints(const nnn_onnx_match_t *m, int k, const char *name, int64_t *v, int max);
int nnn_om_attr_float(const nnn_onnx_match_t *m, int k, const char *name, float *v);
int64_t nnn_om_const(const nnn_onnx_match_t *m, int k, int in, int64_t *dims, int *rank, const float **data);
nnn_status_t nnn_om_set_tensor(nnn_onnx_match_t *m, const char *field, const int64_t *dims, int rank,
                               const float *data);
nnn_status_t nnn_om_set_number(nnn_onnx_match_t *m, const char *field, double v);
nnn_status_t nnn_om_set_ints(nnn_onnx_match_t *m, const char *field, const int64_t *v, int n);
int64_t nnn_om_const_elems(const nnn_onnx_match_t *m, int k, int in, int64_t *dims, int *rank, int32_t *dtype,
                           const void **bytes);
nnn_status_t nnn_om_set_tensor_const(nnn_onnx_match_t *m, const char *field, int k, int in);

#endif
