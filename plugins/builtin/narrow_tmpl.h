/* narrow_tmpl.h: the vector kernels of narrow.c, written once and included
 * once per instruction set, inside a `#pragma GCC target` region, with these
 * macros defined (narrow.c defines them; this file undefines them at its
 * end):
 *
 *   NT_SFX          name suffix (avx512, avx2)
 *   NT_VEC          the vector type; NT_V its lanes
 *   NT_ZERO() NT_BCAST(f) NT_FMA(a,b,c) NT_ADD(a,b) NT_STORE(p,v)
 *   NT_LOADF(p)     NT_V floats at p (bytes, any alignment)
 *   NT_I8(p)        NT_V int8 at p, widened to floats
 *   NT_F16(p)       NT_V float16 at p, widened to floats
 *   NT_RMAX         the most rows a block keeps in registers with 4 vectors
 *
 * Not a header of its own: it has no include guard, on purpose.
 */

#define NT_CAT2(a, b) a##_##b
#define NT_CAT(a, b) NT_CAT2(a, b)
#define NT_NAME(base) NT_CAT(base, NT_SFX)

/* R rows x J vectors of sums from column c on, T the element type: always
 * inlined with constant R, J and T, so the sums live in registers. Every
 * sum is input after input, as the plain path's. The scale and bias are
 * read in place: x86 is little-endian. */
static inline __attribute__((always_inline)) void NT_NAME(narrow_body)(const narrow_job_t *j, const int T,
                                                                     const int R, const int J, int64_t r0,
                                                                     int64_t c)
{
	const bi_narrow_t *w = j->w;
	const int64_t k = w->k, n = w->n, width = T == BI_NARROW_I8 ? 1 : 2;
	const float *x = j->x + r0 * k;
	const unsigned char *wi = w->data + c * width;
	NT_VEC acc[4][8];
BI_UNROLL(4)
	for (int r = 0; r < R; r++)
BI_UNROLL(8)
		for (int v = 0; v < J; v++)
			acc[r][v] = NT_ZERO();
	for (int64_t i = 0; i < k; i++, wi += n * width) {
BI_UNROLL(8)
		for (int v = 0; v < J; v++) {
			const NT_VEC wv = T == BI_NARROW_I8 ? NT_I8(wi + NT_V * v) : NT_F16(wi + 2 * NT_V * v);
BI_UNROLL(4)
			for (int r = 0; r < R; r++)
				acc[r][v] = NT_FMA(NT_BCAST(x[r * k + i]), wv, acc[r][v]);
		}
	}
BI_UNROLL(8)
	for (int v = 0; v < J; v++) {
		const NT_VEC b = NT_LOADF(w->bias.bytes + 4 * (c + NT_V * v));
		const NT_VEC s = w->scale.n ? NT_LOADF(w->scale.bytes + 4 * (c + NT_V * v)) : NT_ZERO();
BI_UNROLL(4)
		for (int r = 0; r < R; r++)
			NT_STORE(j->y + (r0 + r) * n + c + NT_V * v, w->scale.n ? NT_FMA(acc[r][v], s, b) : NT_ADD(acc[r][v], b));
	}
}

#define NT_CASE(T, R, J)                                          \
	case (T) * 100 + (R) * 10 + (J):                          \
		NT_NAME(narrow_body)(j, T, R, J, r0, c);          \
		break;
#define NT_ROWS(T, R) NT_CASE(T, R, 4) NT_CASE(T, R, 2) NT_CASE(T, R, 1)
#define NT_TYPE(T) NT_CASE(T, 1, 8) NT_ROWS(T, 1) NT_ROWS(T, 2) NT_ROWS(T, 3)

/* Columns c .. end of rr (<= NT_RMAX) rows: blocks of 8 vectors (one row),
 * 4, 2 or 1 while a vector fills, then the plain path for the rest. */
static void NT_NAME(narrow_block)(const narrow_job_t *j, int64_t r0, int rr, int64_t c, int64_t end)
{
	const int t = (int)j->w->type;
	while (end - c >= NT_V) {
		const int64_t nv = (end - c) / NT_V;
		const int jv = rr == 1 && nv >= 8 ? 8 : nv >= 4 ? 4 : nv >= 2 ? 2 : 1;
		switch (t * 100 + rr * 10 + jv) {
			NT_TYPE(BI_NARROW_I8)
			NT_TYPE(BI_NARROW_F16)
#if NT_RMAX > 3
			NT_ROWS(BI_NARROW_I8, 4)
			NT_ROWS(BI_NARROW_F16, 4)
#endif
		default: /* no other row count: the chunks have at most NT_RMAX */
			narrow_plain(j, r0, rr, c, c + (int64_t)NT_V * jv);
		}
		c += (int64_t)NT_V * jv;
	}
	if (c < end)
		narrow_plain(j, r0, rr, c, end);
}

#undef NT_TYPE
#undef NT_ROWS
#undef NT_CASE
#undef NT_NAME
#undef NT_CAT
#undef NT_CAT2
#undef NT_SFX
#undef NT_VEC
#undef NT_V
#undef NT_ZERO
#undef NT_BCAST
#undef NT_FMA
#undef NT_ADD
#undef NT_STORE
#undef NT_LOADF
#undef NT_I8
#undef NT_F16
#undef NT_RMAX
