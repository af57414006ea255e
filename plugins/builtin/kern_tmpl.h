/* kern_tmpl.h: the micro-kernels kern.c dispatches to, written once and
 * included once per instruction set (kern_avx2.c, kern_avx512.c), inside a
 * `#pragma GCC target` region, with these macros defined (the including
 * file defines them; this file undefines them at its end). Its three
 * entry points, named with KT_SFX, are declared in kern_isa.h:
 *
 *   KT_SFX         name suffix (avx512, avx2)
 *   KT_VEC         the vector type; KT_V its lanes
 *   KT_LOAD(p)     full load; KT_BCAST(p) one float to every lane
 *   KT_FMA(a,b,c)  a*b + c, fused; KT_STORE(p,v) full store; KT_ZERO()
 *   KT_ADD(a,b)    a + b
 *   KT_SPLIT_RMAX1 the most rows of the split order with one vector a row
 *   KT_JMAX        the most vectors per row (2 or 4)
 *   KT_RMAX1..     the most rows a kernel with 1.. vectors per row keeps
 *                  in registers (at most 12), up to KT_RMAX<KT_JMAX>
 *
 * Not a header of its own: it has no include guard, on purpose.
 */

#define KT_CAT2(a, b) a##_##b
#define KT_CAT(a, b) KT_CAT2(a, b)
#define KT_NAME(base) KT_CAT(base, KT_SFX)

/* Stores the first n (1..KT_V) lanes of v. */
static inline __attribute__((always_inline)) void KT_NAME(store_part)(float *p, KT_VEC v, int n)
{
	if (n >= KT_V) {
		KT_STORE(p, v);
	} else {
		float t[KT_V];
		KT_STORE(t, v);
		memcpy(p, t, (size_t)n * sizeof *p);
	}
}

/* Loads the first n (1..KT_V) floats at p into a vector, the rest 0. */
static inline __attribute__((always_inline)) KT_VEC KT_NAME(load_part)(const float *p, int n)
{
	if (n >= KT_V)
		return KT_LOAD(p);
	float t[KT_V] = { 0 };
	memcpy(t, p, (size_t)n * sizeof *p);
	return KT_LOAD(t);
}

/* y[r][0..cols) = init[r] + sum over q < nq, t < len of
 *     x[r * xs + off[q] + t] * w[(q * len + t) * J * V + 0..cols)
 * for r < R: R rows of a J-vector panel, every sum in the same order
 * (q, then t) whatever R and J are, so any split of the rows gives the same
 * bits. init[r] is bias (ins == 0: J*V floats, zero padded, for every row)
 * or init + r * ins (cols floats). pf (or NULL): cache lines to prefetch
 * meanwhile (bi_pf_t), a share before each run q. */
static inline __attribute__((always_inline)) void KT_NAME(ukr_body)(
	const int R, const int J, const float *x, ptrdiff_t xs, const ptrdiff_t *off, int64_t nq, int64_t len,
	const float *w, const float *init, ptrdiff_t ins, float *y, ptrdiff_t ys, int cols, const bi_pf_t *pf)
{
	KT_VEC acc[12][4];
	if (ins == 0) {
BI_UNROLL(4)
		for (int j = 0; j < J; j++) {
			KT_VEC b = KT_LOAD(init + j * KT_V);
BI_UNROLL(16)
			for (int r = 0; r < R; r++)
				acc[r][j] = b;
		}
	} else {
BI_UNROLL(16)
		for (int r = 0; r < R; r++)
BI_UNROLL(4)
			for (int j = 0; j < J; j++) {
				int n = cols - j * KT_V;
				acc[r][j] = n >= KT_V ? KT_LOAD(init + r * ins + j * KT_V)
				                      : n > 0 ? KT_NAME(load_part)(init + r * ins + j * KT_V, n) : KT_ZERO();
			}
	}
	/* pf's lines, per0 and per1 of them before each run: a few at a time
	 * among the multiply-adds (no division in the loop: one costs as much
	 * as several of its steps) */
	const float *pf0 = pf ? pf->p[0] : NULL, *pf1 = pf ? pf->p[1] : NULL;
	int64_t left0 = pf ? pf->n[0] : 0, left1 = pf ? pf->n[1] : 0;
	const int64_t per0 = left0 ? (left0 + nq - 1) / nq : 0, per1 = left1 ? (left1 + nq - 1) / nq : 0;
	for (int64_t q = 0; q < nq; q++) {
		const float *xq = x + off[q];
		for (int64_t i = 0; i < per0 && left0 > 0; i++, left0--, pf0 += 16)
			__builtin_prefetch(pf0, 1, 3);
		for (int64_t i = 0; i < per1 && left1 > 0; i++, left1--, pf1 += 16)
			__builtin_prefetch(pf1, 0, 2);
		for (int64_t t = 0; t < len; t++, w += J * KT_V) {
			KT_VEC wv[4];
BI_UNROLL(4)
			for (int j = 0; j < J; j++)
				wv[j] = KT_LOAD(w + j * KT_V);
BI_UNROLL(16)
			for (int r = 0; r < R; r++) {
				KT_VEC b = KT_BCAST(xq + r * xs + t);
BI_UNROLL(4)
				for (int j = 0; j < J; j++)
					acc[r][j] = KT_FMA(b, wv[j], acc[r][j]);
			}
		}
	}
BI_UNROLL(16)
	for (int r = 0; r < R; r++)
BI_UNROLL(4)
		for (int j = 0; j < J; j++) {
			int n = cols - j * KT_V;
			if (n > 0)
				KT_NAME(store_part)(y + r * ys + j * KT_V, acc[r][j], n);
		}
}

/* One row of P panels at once (panel i's weights at w + i * pw, J vectors
 * a tap; all but the last whole): P times the chains of multiply-adds in
 * flight at batch 1, where one panel's chains wait on their latency. Each
 * sum is the plain kernel's, in its order. */
static inline __attribute__((always_inline)) void KT_NAME(panels_body)(
	const int P, const int J, const float *x, int64_t len, const float *w, ptrdiff_t pw, const float *bias,
	float *y, int cols)
{
	KT_VEC acc[4][4];
BI_UNROLL(4)
	for (int i = 0; i < P; i++)
BI_UNROLL(4)
		for (int j = 0; j < J; j++)
			acc[i][j] = KT_LOAD(bias + (i * J + j) * KT_V);
	for (int64_t t = 0; t < len; t++, w += J * KT_V) {
		const KT_VEC b = KT_BCAST(x + t);
BI_UNROLL(4)
		for (int i = 0; i < P; i++)
BI_UNROLL(4)
			for (int j = 0; j < J; j++)
				acc[i][j] = KT_FMA(b, KT_LOAD(w + i * pw + j * KT_V), acc[i][j]);
	}
BI_UNROLL(4)
	for (int i = 0; i < P; i++)
BI_UNROLL(4)
		for (int j = 0; j < J; j++) {
			int n = cols - (i * J + j) * KT_V;
			if (n > 0)
				KT_NAME(store_part)(y + (i * J + j) * KT_V, acc[i][j], n);
		}
}

#define KP_CASE(P, J)                                                                                        \
	case P:                                                                                                  \
		KT_NAME(panels_body)(P, J, x, len, w, pw, bias, y, cols);                                           \
		break;

/* P (2..KT_PANELS) panels of J vectors; cols valid columns in all. */
void KT_NAME(bi_ukr_panels)(int p, int j, const float *x, int64_t len, const float *w, ptrdiff_t pw,
                            const float *bias, float *y, int cols)
{
	if (j == 1) {
		switch (p) {
		KP_CASE(2, 1) KP_CASE(3, 1) KP_CASE(4, 1)
		default:
			break;
		}
	} else if (j == 2) {
		switch (p) {
		KP_CASE(2, 2) KP_CASE(3, 2) KP_CASE(4, 2)
		default:
			break;
		}
	}
#if KT_JMAX >= 4
	else if (j == 3) {
		switch (p) {
		KP_CASE(2, 3) KP_CASE(3, 3) KP_CASE(4, 3)
		default:
			break;
		}
	} else if (j == 4) {
		switch (p) {
		KP_CASE(2, 4) KP_CASE(3, 4) KP_CASE(4, 4)
		default:
			break;
		}
	}
#endif
}
#undef KP_CASE

/* The split order (bi_pack_t.split, a narrow Dense over many inputs):
 * row r's sum over taps t < len (global tap k0 + t, k0 a multiple of 4)
 * is four partial sums, P[s] over the taps t = s (mod 4) in order, P[0]
 * starting from the bias and the others from 0, and y = ((P[0] + P[1]) +
 * P[2]) + P[3]. Four chains of multiply-adds instead of one: at batch 1 a
 * single chain waits on the latency of each of its thousands of steps.
 * Tap t's weights are J vectors at w + t * ws (bi_pack_split: the layer's
 * own rows of n floats, so lanes past n hold the next row's, never stored).
 * first: start the partial sums (else read them from part); last: store y
 * (else store them to part, 4 * J * V floats a row). */
static inline __attribute__((always_inline)) void KT_NAME(split_body)(
	const int R, const int J, const float *x, ptrdiff_t xs, int64_t len, const float *w, ptrdiff_t ws,
	const float *bias, bool first, bool last, float *part, float *y, ptrdiff_t ys, int cols)
{
	KT_VEC acc[6][2][4];
BI_UNROLL(6)
	for (int r = 0; r < R; r++)
BI_UNROLL(2)
		for (int j = 0; j < J; j++)
BI_UNROLL(4)
			for (int s = 0; s < 4; s++)
				acc[r][j][s] = !first ? KT_LOAD(part + ((r * 4 + s) * J + j) * KT_V)
				               : s == 0 ? KT_LOAD(bias + j * KT_V) : KT_ZERO();
	int64_t t = 0;
	for (; t + 4 <= len; t += 4)
BI_UNROLL(4)
		for (int s = 0; s < 4; s++) {
			KT_VEC wv[2];
BI_UNROLL(2)
			for (int j = 0; j < J; j++)
				wv[j] = KT_LOAD(w + (t + s) * ws + j * KT_V);
BI_UNROLL(6)
			for (int r = 0; r < R; r++) {
				KT_VEC b = KT_BCAST(x + r * xs + t + s);
BI_UNROLL(2)
				for (int j = 0; j < J; j++)
					acc[r][j][s] = KT_FMA(b, wv[j], acc[r][j][s]);
			}
		}
	/* the last taps (up to 3), each in its own partial sum; s is known when
	 * compiled, so that acc stays in registers (indexed at run time, GCC
	 * kept it on the stack and stored it in every step of the loop above) */
BI_UNROLL(3)
	for (int s = 0; s < 3; s++)
		if (t + s < len)
BI_UNROLL(6)
			for (int r = 0; r < R; r++) {
				KT_VEC b = KT_BCAST(x + r * xs + t + s);
BI_UNROLL(2)
				for (int j = 0; j < J; j++)
					acc[r][j][s] = KT_FMA(b, KT_LOAD(w + (t + s) * ws + j * KT_V), acc[r][j][s]);
			}
BI_UNROLL(6)
	for (int r = 0; r < R; r++)
BI_UNROLL(2)
		for (int j = 0; j < J; j++) {
			if (!last) {
BI_UNROLL(4)
				for (int s = 0; s < 4; s++)
					KT_STORE(part + ((r * 4 + s) * J + j) * KT_V, acc[r][j][s]);
				continue;
			}
			const int n = cols - j * KT_V;
			if (n > 0)
				KT_NAME(store_part)(y + r * ys + j * KT_V,
				                    KT_ADD(KT_ADD(KT_ADD(acc[r][j][0], acc[r][j][1]), acc[r][j][2]), acc[r][j][3]),
				                    n);
		}
}

#define KS_CASE(R, J)                                                                                        \
	case R:                                                                                                  \
		KT_NAME(split_body)(R, J, x, xs, len, w, ws, bias, first, last, part, y, ys, cols);                  \
		break;

/* The split order for R rows (1..KT_SPLIT_RMAX1, or 1 when J is 2). */
void KT_NAME(bi_ukr_split)(int r, int j, const float *x, ptrdiff_t xs, int64_t len, const float *w,
                           ptrdiff_t ws, const float *bias, bool first, bool last, float *part, float *y,
                           ptrdiff_t ys, int cols)
{
	if (j == 2) {
		KT_NAME(split_body)(1, 2, x, xs, len, w, ws, bias, first, last, part, y, ys, cols);
		return;
	}
	switch (r) {
	KS_CASE(1, 1) KS_CASE(2, 1) KS_CASE(3, 1)
#if KT_SPLIT_RMAX1 >= 6
	KS_CASE(4, 1) KS_CASE(5, 1) KS_CASE(6, 1)
#endif
	default:
		break;
	}
}
#undef KS_CASE

#define KT_ARGS                                                                                              \
	const float *x, ptrdiff_t xs, const ptrdiff_t *off, int64_t nq, int64_t len, const float *w,             \
		const float *init, ptrdiff_t ins, float *y, ptrdiff_t ys, int cols, const bi_pf_t *pf
#define KT_PASS x, xs, off, nq, len, w, init, ins, y, ys, cols, pf
#define KT_CASE(R, J)                                                                                        \
	case R:                                                                                                  \
		KT_NAME(ukr_body)(R, J, KT_PASS);                                                                    \
		break;

/* One function per J (vectors per row), switching on R (rows). */
static void KT_NAME(ukr_j1)(int r, KT_ARGS)
{
	switch (r) {
	KT_CASE(1, 1) KT_CASE(2, 1) KT_CASE(3, 1) KT_CASE(4, 1)
#if KT_RMAX1 >= 6
	KT_CASE(5, 1) KT_CASE(6, 1)
#endif
#if KT_RMAX1 >= 8
	KT_CASE(7, 1) KT_CASE(8, 1)
#endif
#if KT_RMAX1 >= 12
	KT_CASE(9, 1) KT_CASE(10, 1) KT_CASE(11, 1) KT_CASE(12, 1)
#endif
	default:
		break;
	}
}

static void KT_NAME(ukr_j2)(int r, KT_ARGS)
{
	switch (r) {
	KT_CASE(1, 2) KT_CASE(2, 2) KT_CASE(3, 2) KT_CASE(4, 2)
#if KT_RMAX2 >= 6
	KT_CASE(5, 2) KT_CASE(6, 2)
#endif
#if KT_RMAX2 >= 8
	KT_CASE(7, 2) KT_CASE(8, 2)
#endif
#if KT_RMAX2 >= 12
	KT_CASE(9, 2) KT_CASE(10, 2) KT_CASE(11, 2) KT_CASE(12, 2)
#endif
	default:
		break;
	}
}

#if KT_JMAX >= 4
static void KT_NAME(ukr_j3)(int r, KT_ARGS)
{
	switch (r) {
	KT_CASE(1, 3) KT_CASE(2, 3)
#if KT_RMAX3 >= 4
	KT_CASE(3, 3) KT_CASE(4, 3)
#endif
#if KT_RMAX3 >= 6
	KT_CASE(5, 3) KT_CASE(6, 3)
#endif
#if KT_RMAX3 >= 8
	KT_CASE(7, 3) KT_CASE(8, 3)
#endif
	default:
		break;
	}
}

static void KT_NAME(ukr_j4)(int r, KT_ARGS)
{
	switch (r) {
	KT_CASE(1, 4) KT_CASE(2, 4)
#if KT_RMAX4 >= 4
	KT_CASE(3, 4) KT_CASE(4, 4)
#endif
#if KT_RMAX4 >= 6
	KT_CASE(5, 4) KT_CASE(6, 4)
#endif
	default:
		break;
	}
}

#endif

/* The kernel for R rows (1..KT_RMAX(J)) and J vectors (1..KT_JMAX). */
void KT_NAME(bi_ukr)(int r, int j, KT_ARGS)
{
	switch (j) {
	case 1:
		KT_NAME(ukr_j1)(r, KT_PASS);
		break;
	case 2:
		KT_NAME(ukr_j2)(r, KT_PASS);
		break;
#if KT_JMAX >= 4
	case 3:
		KT_NAME(ukr_j3)(r, KT_PASS);
		break;
	case 4:
		KT_NAME(ukr_j4)(r, KT_PASS);
		break;
#endif
	default:
		break;
	}
}

#undef KT_ARGS
#undef KT_PASS
#undef KT_CASE
#undef KT_NAME
#undef KT_CAT
#undef KT_CAT2
#undef KT_SFX
#undef KT_ADD
#undef KT_SPLIT_RMAX1
#undef KT_VEC
#undef KT_V
#undef KT_LOAD
#undef KT_BCAST
#undef KT_FMA
#undef KT_STORE
#undef KT_ZERO
#undef KT_JMAX
#undef KT_RMAX1
#undef KT_RMAX2
#undef KT_RMAX3
#undef KT_RMAX4
