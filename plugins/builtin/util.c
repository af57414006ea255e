/* util.c: messages, shape arithmetic and weight packing shared by the
 * builtin kernels. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builtin.h"

_Static_assert(sizeof(float) == 4, "nnn data is binary32");

nnn_status_t bi_fail(char *msg, size_t msg_size, nnn_status_t code, const char *fmt, ...)
{
	if (msg && msg_size) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(msg, msg_size, fmt, ap);
		va_end(ap);
	}
	return code;
}

const char *bi_shape_str(const nnn_shape_t *s, char *buf, size_t size)
{
	size_t n = 0;
	int32_t rank = s->rank < 0 ? 0 : s->rank > NNN_MAX_RANK ? NNN_MAX_RANK : s->rank;
	if (!size)
		return buf;
	buf[0] = '\0';
	n += (size_t)snprintf(buf, size, "[");
	for (int32_t i = 0; i < rank && n < size; i++)
		n += (size_t)snprintf(buf + n, size - n, "%s%lld", i ? ", " : "", (long long)s->dims[i]);
	if (n < size)
		snprintf(buf + n, size - n, "]");
	return buf;
}

int64_t bi_numel(const nnn_shape_t *s)
{
	int64_t n = 1;
	if (s->rank < 0 || s->rank > NNN_MAX_RANK)
		return -1;
	for (int32_t i = 0; i < s->rank; i++) {
		if (s->dims[i] < 0)
			return -1;
		if (s->dims[i] && n > INT64_MAX / s->dims[i])
			return -1;
		n *= s->dims[i];
	}
	return n;
}

nnn_status_t bi_check_input(const nnn_shape_t *in, char *msg, size_t msg_size)
{
	char buf[128];
	if (in->rank < 2 || in->rank > NNN_MAX_RANK)
		return bi_fail(msg, msg_size, NNN_E_INPUT_SHAPE,
		               "input rank %d, expected 2 to %d: [batch, ..., features]", (int)in->rank, NNN_MAX_RANK);
	for (int32_t i = 0; i < in->rank; i++)
		if (in->dims[i] < 0)
			return bi_fail(msg, msg_size, NNN_E_INPUT_SHAPE, "input shape %s has a negative dimension",
			               bi_shape_str(in, buf, sizeof buf));
	if (bi_numel(in) < 0)
		return bi_fail(msg, msg_size, NNN_E_INPUT_SHAPE, "input shape %s has more than 2^63 elements",
		               bi_shape_str(in, buf, sizeof buf));
	return NNN_OK;
}

bool bi_tensor_ok(const nnn_tensor_t *t)
{
	int64_t n = 1;
	if (t->dims.n < 0 || (t->dims.n && !t->dims.v) || t->data.n < 0 || (t->data.n && !t->data.bytes))
		return false;
	for (int32_t i = 0; i < t->dims.n; i++) {
		if (t->dims.v[i] < 0)
			return false;
		n *= t->dims.v[i]; /* each factor < 2^31 and the product is checked against an i32 below */
		if (n > INT32_MAX)
			return false;
	}
	return n == t->data.n;
}

static bool same_shape(const nnn_shape_t *a, const nnn_shape_t *b)
{
	if (a->rank != b->rank)
		return false;
	for (int32_t i = 0; i < a->rank; i++) /* a few dims: a call to memcmp costs more */
		if (a->dims[i] != b->dims[i])
			return false;
	return true;
}

nnn_status_t bi_check_args(const nnn_kernel_args_t *a, bi_expect_fn infer, char *msg, size_t msg_size)
{
	nnn_shape_t o;
	char want[128], got[128];
	nnn_status_t st;
	if (!a || a->size < offsetof(nnn_kernel_args_t, threads) + sizeof a->threads || !a->layer || !a->in ||
	    !a->out)
		return bi_fail(msg, msg_size, NNN_E_KERNEL, "kernel arguments are missing or too short");
	const bi_state_t *s = a->state;
	if (s && s->layer == a->layer && same_shape(&s->in, a->in) && same_shape(&s->out, a->out))
		return (s->in_n && !a->x) || (s->out_n && !a->y)
		               ? bi_fail(msg, msg_size, NNN_E_KERNEL, "input or output buffer is NULL")
		               : NNN_OK;
	st = infer(a->layer, a->body, a->in, &o, msg, msg_size);
	if (st != NNN_OK)
		return st;
	if (!same_shape(&o, a->out))
		return bi_fail(msg, msg_size, NNN_E_KERNEL,
		               "output shape %s given, but this kernel computes %s for that input (it does not run "
		               "this layer's io)",
		               bi_shape_str(a->out, got, sizeof got), bi_shape_str(&o, want, sizeof want));
	if ((bi_numel(a->in) && !a->x) || (bi_numel(&o) && !a->y))
		return bi_fail(msg, msg_size, NNN_E_KERNEL, "input or output buffer is NULL");
	return NNN_OK;
}

/* Little-endian bytes to host floats; a plain copy on little-endian hosts. */
static void f32s_to_host(nnn_f32s_t a, float *out)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (a.n > 0)
		memcpy(out, a.bytes, (size_t)a.n * sizeof *out);
#else
	for (int32_t i = 0; i < a.n; i++)
		out[i] = nnn_f32s_get(a, i);
#endif
}

bi_params_t *bi_params_new(const nnn_tensor_t *w, const nnn_tensor_t *b)
{
	int64_t nw = w->data.n, nb = b->data.n;
	bi_params_t *p;
	if ((uint64_t)(nw + nb) > (SIZE_MAX - sizeof *p) / sizeof(float))
		return NULL;
	p = bi_host()->mem_big(sizeof *p + (size_t)(nw + nb) * sizeof(float));
	if (!p)
		return NULL;
	p->nw = nw;
	p->nb = nb;
	p->w = p->v;
	p->b = p->v + nw;
	f32s_to_host(w->data, p->w);
	f32s_to_host(b->data, p->b);
	return p;
}

void bi_params_free(bi_params_t *p)
{
	bi_host()->mem_free(p);
}

nnn_status_t bi_state_new(const nnn_tensor_t *w, const nnn_tensor_t *b, const bi_layout_t *lay, bi_state_t **out,
                          char *msg, size_t msg_size)
{
	bi_state_t *st = calloc(1, sizeof *st);
	*out = NULL;
	if (!st || !(st->plain = bi_params_new(w, b))) {
		free(st);
		return bi_fail(msg, msg_size, NNN_E_NOMEM, "out of memory copying %lld weights",
		               (long long)w->data.n + b->data.n);
	}
	if (lay->mult) /* Conv kernels [filters, taps, channels]: k = taps * c per filter */
		for (int64_t e = 0; e < w->data.n; e++)
			st->plain->w[e] *= (float)lay->mult[e % lay->k / lay->c];
	st->nw = w->data.n;
	st->nb = b->data.n;
	st->n = lay->n;
	st->k = lay->k;
	st->isa = bi_isa();
	st->cpus = bi_host()->cpus();
	if (st->isa == BI_ISA_GENERIC) {
		nnn_status_t s = bi_blas_open(&st->blas, msg, msg_size);
		if (s != NNN_OK) {
			bi_state_free(st);
			return s;
		}
	} else {
		bool split = lay->c == 0 && lay->sn == 1 && lay->sk == lay->n && bi_split_order(lay->n, lay->k);
		if (split ? !bi_pack_split(&st->pack, st->isa, lay->n, lay->k, st->plain->w, st->plain->b)
		          : !bi_pack_init(&st->pack, st->isa, lay->n, lay->k, st->plain->w, lay->sk, lay->sn, st->plain->b)) {
			bi_state_free(st);
			return bi_fail(msg, msg_size, NNN_E_NOMEM, "out of memory packing %lld weights",
			               (long long)w->data.n);
		}
		if (lay->c > 0)
			bi_pack_group(&st->group, st->isa, lay->n, lay->c, lay->nq, lay->len, st->plain->w, st->plain->b);
		bi_params_free(st->plain); /* the panels are all the kernels read */
		st->plain = NULL;
	}
	*out = st;
	return NNN_OK;
}

double bi_state_bytes(const bi_layout_t *lay, int64_t nw, int64_t nb)
{
	bi_isa_t isa = bi_isa();
	double b = sizeof(bi_state_t) + sizeof(bi_params_t) + ((double)nw + (double)nb) * sizeof(float);
	/* the copy is freed once packed, but both are held while packing */
	b += bi_pack_bytes(isa, lay->n, lay->k);
	if (lay->c > 0)
		b += bi_group_bytes(isa, lay->n, lay->c, lay->nq, lay->len);
	return b;
}

uint64_t bi_bytes(double b)
{
	return b >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)b;
}

nnn_status_t bi_state_get(const nnn_kernel_args_t *a, const nnn_tensor_t *w, const bi_layout_t *lay, bi_state_t **st,
                          bi_state_t **tmp, char *msg, size_t msg_size)
{
	*tmp = NULL;
	if (a->state) {
		*st = a->state;
		if ((*st)->nw != w->data.n || (*st)->nb != a->layer->bias.data.n || (*st)->n != lay->n ||
		    (*st)->k != lay->k)
			return bi_fail(msg, msg_size, NNN_E_KERNEL, "the state from prepare is not this layer's");
		return NNN_OK;
	}
	nnn_status_t s = bi_state_new(w, &a->layer->bias, lay, tmp, msg, msg_size);
	*st = *tmp;
	return s;
}

void bi_state_shaped(bi_state_t *st, const nnn_layer_t *layer, const nnn_shape_t *in, const nnn_shape_t *out)
{
	st->layer = layer;
	st->in = *in;
	st->out = *out;
	st->in_n = bi_numel(in);
	st->out_n = bi_numel(out);
}

void bi_state_free(void *state)
{
	bi_state_t *st = state;
	if (!st)
		return;
	bi_host()->pool_free(st->pool);
	bi_blas_close(&st->blas);
	bi_pack_free(&st->pack);
	bi_pack_free(&st->group);
	bi_params_free(st->plain);
	bi_scratch_free(atomic_load(&st->scratch));
	free(st);
}

void bi_fill_bias(float *y, int64_t rows, int64_t n, const float *b)
{
	for (int64_t r = 0; r < rows; r++)
		memcpy(y + r * n, b, (size_t)n * sizeof *y);
}
