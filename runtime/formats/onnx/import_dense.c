/* import_dense: Gemm, MatMul and Add as a Dense layer.
 * The driver and the shared types: import.c, import.h. */
#define _POSIX_C_SOURCE 200809L
#include "import.h"

/* A Dense layer from weights B ([K, M], or [M, K] transposed) times
 * alpha and a bias times beta: Gemm's alpha (x B) + beta C is
 * x (alpha B) + beta C, equal up to rounding. Scaled only when not 1, so
 * that the values (NaN payloads included) of a graph nnnkit wrote come
 * back as they were. */
static void dense(imp_t *im, int i, const cst_t *B, int trans, const cst_t *bias, int matmul, float alpha,
                  float beta)
{
	int64_t K = B->dims[trans ? 1 : 0], M = B->dims[trans ? 0 : 1];
	if (K < 1 || M < 1 || K > INT32_MAX || M > INT32_MAX || K * M > INT32_MAX) {
		imp_bad(im, i, "weights '%.60s' are [%" PRId64 ", %" PRId64 "]: a Dense layer needs 1..2^31-1 values, "
		    "inputs and outputs >= 1", B->name, B->dims[0], B->dims[1]);
		return;
	}
	int64_t F = im->rank >= 1 ? im->shape[im->rank - 1] : -1;
	if (F >= 0 && F != K) {
		imp_bad(im, i, "weights '%.60s' take %" PRId64 " inputs, the value before has %" PRId64, B->name, K, F);
		return;
	}
	if (!im->flat_perm && !imp_perm_ident(im->perm, im->rank) && im->perm[im->rank - 1] != im->rank - 1) {
		imp_bad(im, i, "it multiplies over an axis that is not the channels axis of the model's value: nnn's Dense "
		    "works on the last (channels) axis");
		return;
	}
	float *w = malloc((size_t)(K * M) * sizeof *w);
	float *b = imp_bias_of(im, i, bias, M);
	layer_t *L = w && b ? imp_new_layer(im, NNN_LAYER_ID_DENSE, i) : NULL;
	if (!L) {
		free(w);
		free(b);
		im->oom |= !w;
		return;
	}
	/* Row r of nnn's weights is input feature r of the channels-last
	 * value; after a flatten of another layout (channels-first: feature
	 * r = s * C + c is the graph's feature c * S + s), the graph's feature
	 * at the same place. */
	int n = im->fl_rank;
	int64_t nd[NNN_MAX_RANK], ost[NNN_MAX_RANK];
	if (im->flat_perm) {
		/* nnn's dims: ONNX axis k (1..n) is nnn axis fl_p[k]. */
		for (int k = 1; k <= n; k++)
			nd[im->fl_p[k]] = im->fl_d[k];
		ost[n] = 1;
		for (int k = n; k > 1; k--)
			ost[k - 1] = ost[k] * im->fl_d[k];
	}
	for (int64_t r = 0; r < K; r++) {
		int64_t src = r;
		if (im->flat_perm) {
			int64_t idx[NNN_MAX_RANK], q = r;
			for (int a = n; a >= 1; a--) {
				idx[a] = q % nd[a];
				q /= nd[a];
			}
			src = 0;
			for (int k = 1; k <= n; k++)
				src += idx[im->fl_p[k]] * ost[k];
		}
		for (int64_t m = 0; m < M; m++)
			w[r * M + m] = trans ? B->f[m * K + src] : B->f[src * M + m];
	}
	for (int64_t k = 0; alpha != 1.0f && k < K * M; k++)
		w[k] *= alpha;
	for (int64_t k = 0; bias && beta != 1.0f && k < M; k++)
		b[k] *= beta;
	L->w = w;
	L->wdims[0] = (int32_t)K;
	L->wdims[1] = (int32_t)M;
	L->wrank = 2;
	L->bias = b;
	L->nbias = (int32_t)M;
	L->flatten = im->flat_pending;
	L->in_rank = im->flat_pending ? im->flat_from_rank : im->rank;
	L->bias_open = matmul && !bias;
	/* The other axes keep their layout (a MatMul of rank > 2). */
	im->flat_pending = 0;
	im->flat_perm = 0;
	im->shape[im->rank - 1] = M;
}

void imp_op_gemm(imp_t *im, int i)
{
	const Onnx__NodeProto *nd = im->g->node[i];
	int64_t ta, tb;
	float alpha, beta;
	if (!imp_attrs_known(im, i, "alpha,beta,transA,transB"))
		return;
	/* Folded into the weights and the bias (dense). */
	if (!imp_attr_float(nd, "alpha", 1.0f, &alpha) || !isfinite(alpha)) {
		imp_bad(im, i, "attribute alpha = %g: expected a finite float (it scales the weights)", alpha);
		return;
	}
	if (!imp_attr_float(nd, "beta", 1.0f, &beta) || !isfinite(beta)) {
		imp_bad(im, i, "attribute beta = %g: expected a finite float (it scales the bias)", beta);
		return;
	}
	if (!imp_attr_int(nd, "transA", 0, &ta) || ta != 0) {
		imp_bad(im, i, "attribute transA = %" PRId64 ": the input is the batch of rows, so transA must be 0", ta);
		return;
	}
	if (!imp_attr_int(nd, "transB", 0, &tb) || (tb != 0 && tb != 1)) {
		imp_bad(im, i, "attribute transB = %" PRId64 ": expected 0 or 1", tb);
		return;
	}
	const cst_t *B = imp_float_input(im, i, 1, "weights B");
	if (!B)
		return;
	if (B->rank != 2) {
		imp_bad(im, i, "weights B '%.60s' have rank %zu, expected 2", B->name, B->rank);
		return;
	}
	const cst_t *C = NULL;
	if (nd->n_input > 2 && *nd->input[2] && !(C = imp_float_input(im, i, 2, "bias C")))
		return;
	if (im->lost)
		return;
	if (im->rank != 2) {
		imp_bad(im, i, "its input has rank %d: Gemm takes rank 2 (a Flatten before it makes one)", im->rank);
		return;
	}
	dense(im, i, B, (int)tb, C, 0, alpha, beta);
}

void imp_op_matmul(imp_t *im, int i)
{
	const Onnx__NodeProto *nd = im->g->node[i];
	if (!imp_attrs_known(im, i, ""))
		return;
	const cst_t *B = imp_float_input(im, i, 1, "weights");
	if (!B)
		return;
	if (B->rank != 2) {
		imp_bad(im, i, "weights '%.60s' have rank %zu, expected 2 ([inputs, outputs])", B->name, B->rank);
		return;
	}
	if (im->lost)
		return;
	if (im->rank < 2) {
		imp_bad(im, i, "its input has rank %d: nnnkit reads MatMul of a rank >= 2 value by a 2-D weight", im->rank);
		return;
	}
	if (im->perm[im->rank - 1] != im->rank - 1) {
		imp_bad(im, i, "it multiplies over the last axis of a value whose last axis is not its channels (a "
		    "channels-first value): nnn's Dense works on the channels axis");
		return;
	}
	(void)nd;
	dense(im, i, B, 0, NULL, 1, 1.0f, 1.0f);
}

/* An Add right after a MatMul: the Dense layer's bias. */
void imp_op_add(imp_t *im, int i)
{
	const Onnx__NodeProto *nd = im->g->node[i];
	layer_t *L = im->nl ? &im->L[im->nl - 1] : NULL;
	if (!imp_attrs_known(im, i, ""))
		return;
	/* After a refused node its layers are unknown, but an Add after
	 * anything other than a MatMul is no bias whatever they are. */
	const char *before = im->cur_node >= 0 ? im->g->node[im->cur_node]->op_type : NULL;
	int after_matmul = before && !strcmp(before, "MatMul");
	if (im->lost && after_matmul)
		return;
	if (im->lost || !L || !L->bias_open) {
		imp_bad(im, i, "nnnkit reads Add only as the bias right after a MatMul (a Dense layer); here it follows "
		    "%s%.60s%s%.40s%s", before ? "node '" : "the graph's input", before ? imp_node_name(im->g->node[im->cur_node]) : "",
		    before ? "' (" : "", before ? before : "", before ? ")" : "");
		return;
	}
	if (nd->n_input != 2) {
		imp_bad(im, i, "%zu inputs, expected 2", nd->n_input);
		return;
	}
	size_t k = !strcmp(nd->input[0], im->cur) ? 1 : 0;
	const cst_t *b = imp_float_input(im, i, k, "bias");
	if (!b)
		return;
	for (size_t d = 0; d + 1 < b->rank; d++) {
		if (b->dims[d] != 1) {
			imp_bad(im, i, "bias '%.60s' has dims[%zu] = %" PRId64 ": a Dense bias is one value per output", b->name,
			    d, b->dims[d]);
			return;
		}
	}
	float *v = imp_bias_of(im, i, b, L->nbias);
	if (!v)
		return;
	free(L->bias);
	L->bias = v;
	L->bias_open = 0;
}
