/* finite.c: the one check that reads tensor data: NaN and infinities.
 *
 * A float is NaN or infinite exactly when its 8 exponent bits are all ones.
 * The fast pass looks at fixed blocks of 32-bit words with integer
 * operations only, so the compiler vectorises it (a constant trip count is
 * what GCC's -O2 cost model asks for) and it runs at memory speed; only a
 * block that holds a non-finite value is read again, word by word, to say
 * where.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <nnn/validate.h>

#define BLOCK 1024 /* words: 4 KiB */

/* Element i of a little-endian float array as its bits. */
static uint32_t word(const unsigned char *p, size_t i)
{
	uint32_t w;
	memcpy(&w, p + 4 * i, 4);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	w = __builtin_bswap32(w);
#endif
	return w;
}

/* Adding one to an all-ones exponent carries into the sign bit, and only
 * then: bit 31 of the result says "not finite". */
static uint32_t nonfinite_bit(uint32_t w)
{
	return (w & 0x7f800000u) + 0x00800000u;
}

/* Whether any of the BLOCK words at p is not finite. */
#define BLOCK_SCAN(p)                                              \
	do {                                                       \
		uint32_t acc = 0;                                  \
		for (size_t i = 0; i < BLOCK; i++)                 \
			acc |= nonfinite_bit(word(p, i));          \
		return acc >> 31;                                  \
	} while (0)

static bool block_has_nonfinite(const unsigned char *p)
{
	BLOCK_SCAN(p);
}

/* The same loop compiled for AVX2 as well: in cache, 32-byte vectors read
 * twice as fast as the baseline's 16-byte ones. Chosen per call from what
 * the CPU reports. */
#if defined(__x86_64__) && defined(__GNUC__)
#define HAVE_AVX2_CLONE 1
__attribute__((target("avx2"))) static bool block_has_nonfinite_avx2(const unsigned char *p)
{
	BLOCK_SCAN(p);
}
#endif

/* What one tensor's scan found. */
typedef struct found {
	uint64_t nan, pinf, ninf;
} found_t;

/* The words [from, to) of one tensor, one by one: counts and reports. */
static void scan_words(const nnn_tensor_t *t, const char *path, size_t from, size_t to, found_t *f,
                       nnn_diags_t *diags)
{
	uint64_t at = t->at[NNN_AT_TENSOR_DATA];
	for (size_t i = from; i < to; i++) {
		uint32_t w = word(t->data.bytes, i);
		if (!(nonfinite_bit(w) >> 31))
			continue;
		bool nan = (w & 0x007fffffu) != 0;
		uint64_t k = f->nan + f->pinf + f->ninf;
		if (k < NNN_FINITE_SHOWN) {
			char p[NNN_PATH_MAX];
			snprintf(p, sizeof p, "%s[%zu]", path, i);
			nnn_diags_add(diags, NNN_E_RANGE, at ? at + 4 + 4 * (uint64_t)i : NNN_NO_OFFSET, p,
			              "found %s (bits 0x%08" PRIx32 "), expected a finite number",
			              nan ? "NaN" : w >> 31 ? "-inf" : "+inf", w);
		}
		if (nan)
			f->nan++;
		else if (w >> 31)
			f->ninf++;
		else
			f->pinf++;
	}
}

/* One tensor; returns its count of non-finite values. */
static uint64_t check_tensor(const nnn_tensor_t *t, const char *path, nnn_diags_t *diags)
{
	size_t n = t->data.n > 0 ? (size_t)t->data.n : 0, i = 0;
	found_t f = { 0, 0, 0 };
	bool (*has)(const unsigned char *) = block_has_nonfinite;
#ifdef HAVE_AVX2_CLONE
	if (__builtin_cpu_supports("avx2"))
		has = block_has_nonfinite_avx2;
#endif
	for (; n - i >= BLOCK; i += BLOCK)
		if (has(t->data.bytes + 4 * i))
			scan_words(t, path, i, i + BLOCK, &f, diags);
	scan_words(t, path, i, n, &f, diags);
	uint64_t total = f.nan + f.pinf + f.ninf;
	if (total > NNN_FINITE_SHOWN) {
		uint64_t at = t->at[NNN_AT_TENSOR_DATA];
		nnn_diags_add(diags, NNN_E_RANGE, at ? at : NNN_NO_OFFSET, path,
		              "%" PRIu64 " of %zu values are not finite (%" PRIu64 " NaN, %" PRIu64 " +inf, %" PRIu64
		              " -inf); the first %d are listed above",
		              total, n, f.nan, f.pinf, f.ninf, NNN_FINITE_SHOWN);
	}
	return total;
}

/* A layer's tensors, however many its type has. */
static uint64_t check_layer(const nnn_layer_t *L, int32_t index, nnn_diags_t *diags)
{
	nnn_named_tensor_t some[8], *ts = some;
	int n = nnn_layer_tensors(L, some, 8);
	uint64_t total = 0;
	if (n > 8) { /* a plugin type with many tensors */
		if (!(ts = malloc((size_t)n * sizeof *ts))) {
			nnn_diags_add(diags, NNN_E_NOMEM, NNN_NO_OFFSET, "", "cannot list %d tensors", n);
			return 0;
		}
		n = nnn_layer_tensors(L, ts, n);
	}
	for (int k = 0; k < n; k++) {
		char path[NNN_PATH_MAX];
		snprintf(path, sizeof path, "layers[%d].%s.data", (int)index, ts[k].name);
		total += check_tensor(ts[k].tensor, path, diags);
	}
	if (ts != some)
		free(ts);
	return total;
}

nnn_status_t nnn_model_check_finite(const nnn_model_t *m, uint64_t *nonfinite, nnn_diags_t *diags)
{
	uint64_t total = 0;
	size_t first = diags ? diags->n + diags->dropped : 0;
	for (int32_t i = 0; i < m->layer_count; i++)
		total += check_layer(&m->layers[i], i, diags);
	if (nonfinite)
		*nonfinite = total;
	if (total)
		return NNN_E_RANGE;
	/* Only an allocation failure can report without finding anything. */
	return diags && diags->n + diags->dropped > first ? NNN_E_NOMEM : NNN_OK;
}
