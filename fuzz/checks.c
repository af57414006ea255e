/* fuzz/checks.c: see checks.h. Compiled into every harness, and included by
 * tests/unit/test_regress.c into the normal test build. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memfd_create */
#endif
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <nnn/file.h>
#include <nnn/json.h>
#include <nnn/model.h>
#include <nnn/npy.h>
#include <nnn/onnx.h>
#include <nnn/run.h>
#include <nnn/validate.h>

#include "checks.h"

/* ---- helpers ---- */

static int fz_fail(char *why, size_t size, const char *fmt, ...) NNN_PRINTF(3, 4);

static int fz_fail(char *why, size_t size, const char *fmt, ...)
{
	va_list ap;
	if (why && size) {
		va_start(ap, fmt);
		vsnprintf(why, size, fmt, ap);
		va_end(ap);
	}
	return 1;
}

/* a * b, saturating at UINT64_MAX. */
static uint64_t fz_mul(uint64_t a, uint64_t b)
{
	if (a && b > UINT64_MAX / a)
		return UINT64_MAX;
	return a * b;
}

static uint64_t fz_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* Element count of a shape, saturating; UINT64_MAX for a negative dim or a
 * rank outside 0..NNN_MAX_RANK. 0 for rank 0, as nnn_shape_numel. */
static uint64_t fz_numel(const nnn_shape_t *s)
{
	uint64_t n = 1;
	if (s->rank < 0 || s->rank > NNN_MAX_RANK)
		return UINT64_MAX;
	if (s->rank == 0)
		return 0;
	for (int32_t i = 0; i < s->rank; i++) {
		if (s->dims[i] < 0)
			return UINT64_MAX;
		n = fz_mul(n, (uint64_t)s->dims[i]);
	}
	for (int32_t i = 0; i < s->rank; i++)
		if (s->dims[i] == 0)
			return 0;
	return n;
}

static bool fz_terminated(const char *s, size_t size)
{
	return memchr(s, '\0', size) != NULL;
}

/* Decoding an input with an unknown ID, with diags, probes for the framing
 * of the rest (runtime/codec/probe.c, nnn_probe_unknowns): thousands of decode
 * attempts (PROBE_BUDGET, PROBE_WORK), about a second per input under the
 * sanitizers, against milliseconds for any other input. The harnesses set
 * fz_probe_every (from NNN_FUZZ_PROBE_EVERY,
 * default 256) so that only that fraction of such inputs, chosen by a hash of
 * their bytes (deterministic for libFuzzer), is decoded with diags; the rest
 * is decoded without, which does not probe. The replay keeps 1: all. */
unsigned fz_probe_every = 1;

void fz_harness_init(void)
{
	const char *e = getenv("NNN_FUZZ_PROBE_EVERY");
	long v = e && e[0] ? strtol(e, NULL, 10) : 256;
	fz_probe_every = v >= 1 && v <= 1000000 ? (unsigned)v : 256;
}

/* The inputs probed lately (hash and length). libFuzzer runs one input
 * again and again (a mutation that changed nothing, a cross-over with
 * itself), most often the probed ones, whose probe coverage is rare: by the
 * end of a minute from the corpus, 1 in 58 inputs with an unknown ID was
 * probed, not 1 in 256, and probing took half the time. Probing each input
 * once keeps it near 1 in 256 (measured: 1 in 270). Harness state: one
 * process, one thread. */
#define FZ_PROBED_RECENT 256
static struct {
	uint32_t hash;
	uint32_t len;
} fz_probed[FZ_PROBED_RECENT];
static unsigned fz_probed_next;

static bool fz_probed_before(uint32_t h, size_t len)
{
	for (unsigned i = 0; i < FZ_PROBED_RECENT; i++)
		if (fz_probed[i].hash == h && fz_probed[i].len == (uint32_t)len)
			return true;
	fz_probed[fz_probed_next].hash = h;
	fz_probed[fz_probed_next].len = (uint32_t)len;
	fz_probed_next = (fz_probed_next + 1) % FZ_PROBED_RECENT;
	return false;
}

static bool fz_probe(const uint8_t *data, size_t len)
{
	uint32_t h = 2166136261u; /* FNV-1a */
	if (fz_probe_every <= 1)
		return true;
	for (size_t i = 0; i < len; i++)
		h = (h ^ data[i]) * 16777619u;
	/* FNV-1a's low byte is an 8-bit state machine over the bytes (the
	 * multiply carries nothing down), so similar inputs share it; finish
	 * with murmur3's avalanche before taking the low bits. */
	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	h ^= h >> 16;
	return h % fz_probe_every == 0 && !fz_probed_before(h, len);
}

/* The diags to decode an input with: NULL when it has an unknown ID and is
 * not one of those picked to probe. */
static nnn_diags_t *fz_diags_for(const uint8_t *data, size_t len, nnn_diags_t *d)
{
	nnn_model_t *m = NULL;
	nnn_status_t st;
	if (fz_probe_every <= 1)
		return d;
	st = nnn_model_decode(data, len, NULL, &m, NULL);
	nnn_model_free(m);
	return st != NNN_E_UNKNOWN_ID || fz_probe(data, len) ? d : NULL;
}

/* The invariants of a list of problems for an input of `len` bytes: every
 * entry has a code, a terminated path and message, an offset inside the
 * input (or none), and formats. A failed call (st != NNN_OK) left at least
 * one problem. */
static int fz_diags_ok(const char *what, const nnn_diags_t *d, nnn_status_t st, size_t len, char *why,
                       size_t size)
{
	char buf[NNN_PATH_MAX + NNN_MSG_MAX + 512];
	if (st != NNN_OK && d->n + d->dropped == 0)
		return fz_fail(why, size, "%s failed with %s (%d) but recorded no problem", what, nnn_status_name(st),
		               (int)st);
	if (d->n > d->cap && d->cap)
		return fz_fail(why, size, "%s: diags hold %zu entries in room for %zu", what, d->n, d->cap);
	for (size_t i = 0; i < d->n; i++) {
		const nnn_diag_t *g = &d->v[i];
		if (!fz_terminated(g->path, sizeof g->path) || !fz_terminated(g->msg, sizeof g->msg))
			return fz_fail(why, size, "%s: problem %zu has an unterminated path or message", what, i);
		if (g->code == NNN_OK)
			return fz_fail(why, size, "%s: problem %zu has code OK: %s", what, i, g->msg);
		if (g->offset != NNN_NO_OFFSET && g->offset > len)
			return fz_fail(why, size, "%s: problem %zu (%s at %s) has offset %" PRIu64 ", past the %zu-byte input",
			               what, i, nnn_status_name(g->code), g->path, g->offset, len);
		nnn_diag_format(g, buf, sizeof buf);
		if (!fz_terminated(buf, sizeof buf))
			return fz_fail(why, size, "%s: nnn_diag_format left its buffer unterminated", what);
	}
	return 0;
}

/* Exercises what `nnnkit info` reads of an accepted model. */
static void fz_describe(const nnn_model_t *m)
{
	char buf[512];
	nnn_named_tensor_t t[16];
	volatile size_t sink = 0;
	for (int32_t i = 0; i < m->layer_count; i++) {
		const nnn_layer_t *L = &m->layers[i];
		const char *title = nnn_layer_title(L);
		sink += title ? strlen(title) : 0;
		title = nnn_activation_title(&L->activation);
		sink += title ? strlen(title) : 0;
		sink += nnn_layer_format(L, buf, sizeof buf);
		sink += nnn_activation_format(&L->activation, buf, sizeof buf);
		int k = nnn_layer_tensors(L, t, 16);
		for (int j = 0; j < k && j < 16; j++)
			sink += (size_t)nnn_tensor_numel(t[j].tensor);
	}
	(void)sink;
}

/* Encodes m and compares with the input it was decoded from. */
static int fz_roundtrip(const char *what, const nnn_model_t *m, const uint8_t *data, size_t len, char *why,
                        size_t size)
{
	unsigned char *buf = NULL;
	size_t n = 0;
	nnn_diags_t d;
	nnn_status_t st;
	int bad = 0;

	nnn_diags_init(&d);
	st = nnn_model_encode(m, &buf, &n, &d);
	if (st != NNN_OK) {
		char msg[NNN_PATH_MAX + NNN_MSG_MAX + 512] = "";
		if (d.n)
			nnn_diag_format(&d.v[0], msg, sizeof msg);
		bad = fz_fail(why, size, "%s: the decoder accepted %zu bytes the encoder cannot write back: %s", what, len,
		              msg);
	} else if (n != len) {
		bad = fz_fail(why, size, "%s: encode(decode(x)) is %zu bytes, x is %zu", what, n, len);
	} else if (len && memcmp(buf, data, len) != 0) {
		size_t i = 0;
		while (i < len && buf[i] == data[i])
			i++;
		bad = fz_fail(why, size, "%s: encode(decode(x)) differs from x at byte %zu (0x%zx): 0x%02x, x has 0x%02x",
		              what, i, i, buf[i], data[i]);
	} else if (nnn_model_encoded_size(m) != len) {
		bad = fz_fail(why, size, "%s: nnn_model_encoded_size says %" PRIu64 ", the encoding is %zu bytes", what,
		              nnn_model_encoded_size(m), len);
	}
	free(buf);
	nnn_diags_free(&d);
	return bad;
}

/* ---- input shapes for a model ---- */

/* What the input shape is derived from: the first layer's ID, its weights'
 * or kernels' dims, and its flatten flag. */
typedef struct fz_first {
	int32_t layers;  /* -1 when unknown */
	int id;          /* -1 when unknown */
	int32_t ndims;   /* -1 when unknown */
	int32_t dims[NNN_MAX_RANK];
	bool flatten;
} fz_first_t;

/* Small input shapes the first layer should take (at most FZ_SHAPES). */
#define FZ_SHAPES 5
static int fz_shapes(const fz_first_t *L, nnn_shape_t *out)
{
	int n = 0;
	memset(out, 0, FZ_SHAPES * sizeof *out);
	if (L->layers == 0) {
		out[n].rank = 2, out[n].dims[0] = 1, out[n].dims[1] = 4, n++;
		return n;
	}
	if (L->id == NNN_LAYER_ID_DENSE) {
		int64_t in = L->ndims >= 1 && L->dims[0] > 0 ? L->dims[0] : 1;
		out[n].rank = 2, out[n].dims[0] = 1, out[n].dims[1] = in, n++;
		out[n].rank = 3, out[n].dims[0] = 2, out[n].dims[1] = 1, out[n].dims[2] = in, n++;
		/* rows enough for the kernels' blocked paths */
		out[n].rank = 2, out[n].dims[0] = 37, out[n].dims[1] = in, n++;
		if (L->flatten && in % 2 == 0)
			out[n].rank = 3, out[n].dims[0] = 1, out[n].dims[1] = 2, out[n].dims[2] = in / 2, n++;
		return n;
	}
	if (L->id == NNN_LAYER_ID_CONV) {
		int32_t sp = L->ndims - 2;
		if (sp >= 1 && sp <= NNN_MAX_RANK - 2) {
			int64_t ch = L->dims[L->ndims - 1] > 0 ? L->dims[L->ndims - 1] : 1;
			/* [1, k1+2, .., kn+2, c], [2, k1, .., kn, c], [1, 1, .., 1, c], and
			 * [1, k1+2, .., kn+45, c]: a long last axis, for the blocked paths */
			for (int v = 0; v < 4; v++) {
				out[n].rank = sp + 2;
				out[n].dims[0] = v == 1 ? 2 : 1;
				for (int32_t j = 0; j < sp; j++) {
					int64_t kj = L->dims[1 + j] > 0 ? L->dims[1 + j] : 1;
					out[n].dims[1 + j] = v == 0 ? kj + 2 : v == 1 ? kj : v == 2 ? 1 : kj + (j == sp - 1 ? 45 : 2);
				}
				out[n].dims[sp + 1] = ch;
				n++;
			}
			return n;
		}
	}
	out[n].rank = 2, out[n].dims[0] = 1, out[n].dims[1] = 1, n++;
	return n;
}

static void fz_first_of_model(const nnn_model_t *m, fz_first_t *L)
{
	memset(L, 0, sizeof *L);
	L->layers = m->layer_count;
	L->id = -1;
	L->ndims = -1;
	if (m->layer_count < 1 || m->layers[0].body_ext.type)
		return;
	const nnn_layer_t *l = &m->layers[0];
	const nnn_i32s_t *d = l->id == NNN_LAYER_ID_DENSE ? &l->body.dense.weights.dims
	                      : l->id == NNN_LAYER_ID_CONV ? &l->body.conv.kernels.dims : NULL;
	L->id = l->id;
	L->flatten = l->id == NNN_LAYER_ID_DENSE && l->body.dense.flatten;
	if (d && d->n <= NNN_MAX_RANK) {
		L->ndims = d->n;
		if (d->n)
			memcpy(L->dims, d->v, (size_t)d->n * sizeof d->v[0]);
	}
}

/* The same from the fields of a decode that may have failed: the problems
 * that leave the framing intact still leave a model to validate. */
static void fz_first_field(void *ctx, const nnn_field_t *f)
{
	fz_first_t *L = ctx;
	if (!strcmp(f->path, "layer_count")) {
		L->layers = (int32_t)f->i;
	} else if (!strcmp(f->path, "layers[0].id")) {
		L->id = (int)f->i;
	} else if (!strcmp(f->path, "layers[0].flatten")) {
		L->flatten = f->i != 0;
	} else if ((!strcmp(f->path, "layers[0].weights.dims") || !strcmp(f->path, "layers[0].kernels.dims")) &&
	           f->count <= NNN_MAX_RANK) {
		L->ndims = f->count;
		for (int32_t i = 0; i < f->count; i++)
			L->dims[i] = (int32_t)nnn_le_u32(f->bytes + 4 * i);
	}
}

static void fz_first_of_bytes(const uint8_t *data, size_t len, fz_first_t *L)
{
	nnn_visitor_t vis = { fz_first_field, NULL, L };
	nnn_decode_opts_t opts = { .flags = NNN_DECODE_KEEP_GOING, .visit = &vis };
	nnn_model_t *m = NULL;
	memset(L, 0, sizeof *L);
	L->layers = -1;
	L->id = -1;
	L->ndims = -1;
	if (nnn_model_decode(data, len, &opts, &m, NULL) == NNN_OK)
		nnn_model_free(m);
}

/* ---- decode + validate ---- */

/* nnn_file_open of the bytes written to a file, which reads the structure
 * with pread rather than through the mapping: the status strict decoding
 * from memory gave (s1), and the same bytes when encoded again. The file is
 * a memfd, opened by its /proc name: a regular file that costs no file
 * system work, which was a tenth of the harness's time. */
static int file_agrees(const uint8_t *data, size_t len, nnn_status_t s1, char *why, size_t size)
{
	char path[64];
	nnn_file_t *f;
	int bad = 0;
	int fd = memfd_create("fz_file", MFD_CLOEXEC);
	if (fd < 0)
		return fz_fail(why, size, "cannot create a memfd");
	if (len && write(fd, data, len) != (ssize_t)len) {
		close(fd);
		return fz_fail(why, size, "cannot write %zu bytes to a memfd", len);
	}
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	nnn_status_t sf = nnn_file_open(path, NULL, &f, NULL);
	if (sf != s1)
		bad = fz_fail(why, size, "nnn_file_open gives %s where decoding from memory gives %s",
		              nnn_status_name(sf), nnn_status_name(s1));
	else if (sf == NNN_OK)
		bad = fz_roundtrip("nnn_file_open", nnn_file_model(f), data, len, why, size);
	nnn_file_close(f);
	close(fd);
	return bad;
}

int fz_check_decode(const uint8_t *data, size_t len, char *why, size_t size)
{
	nnn_diags_t d1, d2, dv, db;
	nnn_model_t *m1 = NULL, *m2 = NULL, *m3 = NULL;
	nnn_status_t s1, s2, s3, sv = NNN_OK, sb;
	nnn_decode_opts_t copy = { .flags = NNN_DECODE_COPY }, keep = { .flags = NNN_DECODE_KEEP_GOING };
	nnn_diags_t *pd1, *pdb;
	unsigned char *dup;
	int bad = 0;

	nnn_diags_init(&d1);
	nnn_diags_init(&d2);
	nnn_diags_init(&dv);
	nnn_diags_init(&db);
	pd1 = fz_diags_for(data, len, &d1);
	pdb = pd1 ? &db : NULL;

	/* Strict, zero-copy: the model borrows `data`. */
	s1 = nnn_model_decode(data, len, NULL, &m1, pd1);
	if ((s1 == NNN_OK) != (m1 != NULL)) {
		bad = fz_fail(why, size, "nnn_model_decode returned %s with model %p", nnn_status_name(s1), (void *)m1);
		goto out;
	}
	if ((bad = fz_diags_ok("nnn_model_decode", &d1, pd1 ? s1 : NNN_OK, len, why, size)))
		goto out;

	/* NNN_DECODE_COPY, from a copy that is gone before the model is used:
	 * anything the model still borrows is a use after free. */
	dup = malloc(len ? len : 1);
	if (!dup) {
		bad = fz_fail(why, size, "out of memory for %zu bytes", len);
		goto out;
	}
	if (len)
		memcpy(dup, data, len);
	s2 = nnn_model_decode(dup, len, &copy, &m2, s1 == NNN_E_UNKNOWN_ID ? NULL : &d2);
	free(dup);
	if (s2 != s1) {
		bad = fz_fail(why, size, "NNN_DECODE_COPY changed the result: %s without it, %s with it",
		              nnn_status_name(s1), nnn_status_name(s2));
		goto out;
	}

	if ((bad = file_agrees(data, len, s1, why, size)))
		goto out;

	/* Keeping going accepts exactly what strict decoding accepts. (Its
	 * problems are checked by fuzz_dump; without diags an unknown ID is not
	 * probed for once more.) */
	s3 = nnn_model_decode(data, len, &keep, &m3, NULL);
	if ((s3 == NNN_OK) != (s1 == NNN_OK)) {
		bad = fz_fail(why, size, "NNN_DECODE_KEEP_GOING gives %s where strict decoding gives %s",
		              nnn_status_name(s3), nnn_status_name(s1));
		goto out;
	}

	if (s1 == NNN_OK) {
		if ((bad = fz_roundtrip("decode", m1, data, len, why, size)) ||
		    (bad = fz_roundtrip("decode(COPY)", m2, data, len, why, size)) ||
		    (bad = fz_roundtrip("decode(KEEP_GOING)", m3, data, len, why, size)))
			goto out;
		if (nnn_model_param_total(m1) != nnn_model_param_total(m2))
			bad = fz_fail(why, size, "param totals differ with NNN_DECODE_COPY");
		fz_describe(m1);
		fz_describe(m2);
		sv = nnn_model_validate(m1, NULL, NULL, &dv);
		if (!bad)
			bad = fz_diags_ok("nnn_model_validate", &dv, sv, len, why, size);
		if (bad)
			goto out;
	}

	/* nnn_validate_bytes: valid exactly when the file decodes and validates. */
	sb = nnn_validate_bytes(data, len, NULL, NULL, pdb);
	if ((bad = fz_diags_ok("nnn_validate_bytes", &db, pdb ? sb : NNN_OK, len, why, size)))
		goto out;
	if ((sb == NNN_OK) != (s1 == NNN_OK && sv == NNN_OK)) {
		bad = fz_fail(why, size, "nnn_validate_bytes gives %s, but decode gives %s and validate %s",
		              nnn_status_name(sb), nnn_status_name(s1), nnn_status_name(sv));
		goto out;
	}

	/* With input shapes the first layer takes (`nnnkit validate --input-shape`),
	 * on whatever the decoder could frame, soft problems and all. */
	{
		fz_first_t first;
		nnn_shape_t shapes[FZ_SHAPES];
		int n;
		fz_first_of_bytes(data, len, &first);
		n = fz_shapes(&first, shapes);
		/* (an unknown ID was probed for above: not again for each shape) */
		nnn_diags_t *pds = s1 == NNN_E_UNKNOWN_ID ? NULL : pdb;
		for (int i = 0; i < n && !bad; i++) {
			nnn_diags_clear(&db);
			sb = nnn_validate_bytes(data, len, NULL, &shapes[i], pds);
			bad = fz_diags_ok("nnn_validate_bytes(input)", &db, pds ? sb : NNN_OK, len, why, size);
			if (!bad && s1 == NNN_OK) {
				/* the same verdict as validating the decoded model for that input */
				nnn_diags_clear(&dv);
				sv = nnn_model_validate(m1, &shapes[i], NULL, &dv);
				if ((sv == NNN_OK) != (sb == NNN_OK))
					bad = fz_fail(why, size, "input %d: nnn_validate_bytes gives %s, nnn_model_validate %s", i,
					              nnn_status_name(sb), nnn_status_name(sv));
			}
		}
	}

out:
	nnn_model_free(m1);
	nnn_model_free(m2);
	nnn_model_free(m3);
	nnn_diags_free(&d1);
	nnn_diags_free(&d2);
	nnn_diags_free(&dv);
	nnn_diags_free(&db);
	return bad;
}

/* ---- the annotated dump ---- */

static const char *const FZ_PRIM_NAME[] = { "u8", "i32", "u64", "f32", "bool", "string", "i32_array", "f32_array" };

typedef struct fz_dump {
	const uint8_t *data;
	size_t len;
	uint64_t next;      /* one past the previous field */
	size_t fields, problems;
	int values;         /* float values shown per array, as `nnnkit dump` (default 4) */
	int bad;
	char *why;
	size_t size;
	char line[4096];
} fz_dump_t;

/* Appends to the dump line, as `nnnkit dump` prints. */
static void fz_put(fz_dump_t *c, size_t *k, const char *fmt, ...) NNN_PRINTF(3, 4);

static void fz_put(fz_dump_t *c, size_t *k, const char *fmt, ...)
{
	va_list ap;
	int n;
	if (*k >= sizeof c->line)
		return;
	va_start(ap, fmt);
	n = vsnprintf(c->line + *k, sizeof c->line - *k, fmt, ap);
	va_end(ap);
	if (n > 0)
		*k += (size_t)n;
}

/* The field's bytes, width and place, before anything reads them. */
static int fz_field_ok(fz_dump_t *c, const nnn_field_t *f)
{
	uint64_t want;
	if (!f->path || !fz_terminated(f->path, NNN_PATH_MAX))
		return fz_fail(c->why, c->size, "field %zu has no terminated path", c->fields);
	if ((unsigned)f->prim > NNN_PRIM_F32_ARRAY)
		return fz_fail(c->why, c->size, "field %s has primitive %d", f->path, (int)f->prim);
	if (f->size > c->len || f->offset > c->len - f->size)
		return fz_fail(c->why, c->size,
		               "field %s at offset %" PRIu64 " of %" PRIu64 " bytes ends past the %zu-byte input", f->path,
		               f->offset, f->size, c->len);
	if (f->offset < c->next)
		return fz_fail(c->why, c->size,
		               "field %s at offset %" PRIu64 " overlaps or precedes the previous field, which ends at %" PRIu64,
		               f->path, f->offset, c->next);
	if (f->offset != c->next)
		return fz_fail(c->why, c->size,
		               "field %s at offset %" PRIu64 " leaves bytes %" PRIu64 "..%" PRIu64 " unexplained", f->path,
		               f->offset, c->next, f->offset - 1);
	switch (f->prim) {
	case NNN_PRIM_U8:
	case NNN_PRIM_BOOL:
		want = 1;
		break;
	case NNN_PRIM_I32:
	case NNN_PRIM_F32:
		want = 4;
		break;
	case NNN_PRIM_U64:
		want = 8;
		break;
	case NNN_PRIM_STRING:
	case NNN_PRIM_I32_ARRAY:
	case NNN_PRIM_F32_ARRAY:
		if (f->count < 0)
			return fz_fail(c->why, c->size, "field %s has count %d", f->path, (int)f->count);
		want = 4 + (uint64_t)f->count * (f->prim == NNN_PRIM_STRING ? 1 : 4);
		if (f->count && f->bytes != c->data + f->offset + 4)
			return fz_fail(c->why, c->size, "field %s: its bytes are not the input's bytes after its count",
			               f->path);
		break;
	default:
		want = f->size;
		break;
	}
	if (f->size != want)
		return fz_fail(c->why, c->size, "field %s (%s) is %" PRIu64 " bytes, expected %" PRIu64, f->path,
		               FZ_PRIM_NAME[f->prim], f->size, want);
	if ((f->prim == NNN_PRIM_U8 || f->prim == NNN_PRIM_BOOL) && f->i != c->data[f->offset])
		return fz_fail(c->why, c->size, "field %s has value %" PRId64 ", its byte is %u", f->path, f->i,
		               c->data[f->offset]);
	return 0;
}

static void fz_on_field(void *ctx, const nnn_field_t *f)
{
	fz_dump_t *c = ctx;
	char type[64];
	const char *name;
	size_t k = 0;

	if (c->bad)
		return;
	if ((c->bad = fz_field_ok(c, f)) != 0)
		return;
	c->fields++;
	c->next = f->offset + f->size;

	/* What `nnnkit dump` prints for it (runtime/cli/dump.c). */
	if (f->type)
		snprintf(type, sizeof type, "%s(%s)", f->type->name, FZ_PRIM_NAME[f->prim]);
	else
		snprintf(type, sizeof type, "%s", FZ_PRIM_NAME[f->prim]);
	fz_put(c, &k, "0x%08" PRIx64 " %9" PRIu64 "  %-36s %-18s ", f->offset, f->size, f->path, type);
	switch (f->prim) {
	case NNN_PRIM_U8:
	case NNN_PRIM_I32:
		fz_put(c, &k, "%" PRId64, f->i);
		if (f->type && (name = f->type->value_name(f->i)) != NULL)
			fz_put(c, &k, " (%s)", name);
		else if (f->type)
			fz_put(c, &k, " (not a %s)", f->type->name);
		break;
	case NNN_PRIM_U64:
		fz_put(c, &k, "%" PRIu64, f->u);
		break;
	case NNN_PRIM_F32: {
		uint32_t bits;
		memcpy(&bits, &f->f, 4);
		fz_put(c, &k, "%.9g (0x%08" PRIx32 ")", (double)f->f, bits);
		break;
	}
	case NNN_PRIM_BOOL:
		if (f->i == 0 || f->i == 1)
			fz_put(c, &k, "%s", f->i ? "true" : "false");
		else
			fz_put(c, &k, "invalid byte %" PRId64, f->i);
		break;
	case NNN_PRIM_STRING: {
		int32_t n = f->count < 72 ? f->count : 72;
		fz_put(c, &k, "%d bytes \"", (int)f->count);
		for (int32_t i = 0; i < n; i++) {
			unsigned char ch = f->bytes[i];
			if (ch == '"' || ch == '\\')
				fz_put(c, &k, "\\%c", ch);
			else if (ch < 0x20 || ch == 0x7f)
				fz_put(c, &k, "\\u%04x", ch);
			else
				fz_put(c, &k, "%c", ch);
		}
		fz_put(c, &k, "\"%s", n < f->count ? "..." : "");
		break;
	}
	case NNN_PRIM_I32_ARRAY:
		fz_put(c, &k, "%d: [", (int)f->count);
		for (int32_t i = 0; i < f->count && i < 16; i++)
			fz_put(c, &k, "%s%d", i ? ", " : "", (int)(int32_t)nnn_le_u32(f->bytes + 4 * i));
		fz_put(c, &k, "%s]", f->count > 16 ? ", ..." : "");
		break;
	case NNN_PRIM_F32_ARRAY: {
		nnn_f32s_t a = { f->bytes, f->count };
		fz_put(c, &k, "%d: [", (int)f->count);
		for (int32_t i = 0; i < f->count && i < c->values; i++)
			fz_put(c, &k, "%s%.9g", i ? ", " : "", (double)nnn_f32s_get(a, i));
		fz_put(c, &k, "%s]", f->count > c->values ? ", ..." : "");
		break;
	}
	case NNN_PRIM_NUM: /* element types the core schema does not declare */
	case NNN_PRIM_NUMS:
	default:
		break;
	}
	if (f->doc && !fz_terminated(f->doc, 4096))
		c->bad = fz_fail(c->why, c->size, "field %s has an unterminated doc string", f->path);
}

static void fz_on_problem(void *ctx, const nnn_diag_t *d)
{
	fz_dump_t *c = ctx;
	char buf[NNN_PATH_MAX + NNN_MSG_MAX + 512];
	c->problems++;
	if (c->bad)
		return;
	if (!fz_terminated(d->path, sizeof d->path) || !fz_terminated(d->msg, sizeof d->msg)) {
		c->bad = fz_fail(c->why, c->size, "problem %zu has an unterminated path or message", c->problems);
		return;
	}
	if (d->offset != NNN_NO_OFFSET && d->offset > c->len) {
		c->bad = fz_fail(c->why, c->size, "problem %s at %s has offset %" PRIu64 ", past the %zu-byte input",
		                 nnn_status_name(d->code), d->path, d->offset, c->len);
		return;
	}
	snprintf(c->line, sizeof c->line, "!! %s", nnn_diag_format(d, buf, sizeof buf));
}

int fz_check_dump(const uint8_t *data, size_t len, char *why, size_t size)
{
	static fz_dump_t c; /* its line buffer is large: not on the stack */
	nnn_visitor_t vis = { fz_on_field, fz_on_problem, &c };
	nnn_decode_opts_t opts = { .flags = NNN_DECODE_KEEP_GOING, .visit = &vis };
	nnn_decode_opts_t plain = { .flags = NNN_DECODE_KEEP_GOING };
	nnn_model_t *m = NULL, *m2 = NULL;
	nnn_diags_t d, d2, *pd;
	nnn_status_t st, st2;
	int bad = 0;

	memset(&c, 0, sizeof c);
	c.data = data;
	c.len = len;
	c.values = 4;
	c.why = why;
	c.size = size;
	nnn_diags_init(&d);
	nnn_diags_init(&d2);

	pd = fz_diags_for(data, len, &d);
	st = nnn_model_decode(data, len, &opts, &m, pd);
	if (c.bad) {
		bad = 1;
		goto out;
	}
	if ((bad = fz_diags_ok("dump decode", &d, pd ? st : NNN_OK, len, why, size)))
		goto out;
	if (st != NNN_OK && c.problems == 0) {
		bad = fz_fail(why, size, "decode failed with %s but the visitor saw no problem", nnn_status_name(st));
		goto out;
	}
	if (pd && st != NNN_E_UNKNOWN_ID && c.problems != d.n + d.dropped) {
		/* (an unknown ID adds problems found by probing, which the visitor does not see) */
		bad = fz_fail(why, size, "the visitor saw %zu problems, the diags hold %zu", c.problems, d.n + d.dropped);
		goto out;
	}
	if (st == NNN_OK && c.next != len) {
		bad = fz_fail(why, size, "an accepted file of %zu bytes, but its fields end at %" PRIu64, len, c.next);
		goto out;
	}
	/* The end-of-dump line: what was not decoded. */
	if (c.next < len && st != NNN_OK)
		snprintf(c.line, sizeof c.line, "0x%08" PRIx64 " %9" PRIu64 "  (not decoded)", c.next,
		         (uint64_t)len - c.next);
	/* A visitor only watches: the same decode without one agrees (with the
	 * same problems, unless an unknown ID makes it probe for more). */
	st2 = nnn_model_decode(data, len, &plain, &m2, st == NNN_E_UNKNOWN_ID ? NULL : &d2);
	if (st2 != st)
		bad = fz_fail(why, size, "decode with a visitor gives %s, without one %s", nnn_status_name(st),
		              nnn_status_name(st2));
	else if (pd && st != NNN_E_UNKNOWN_ID && d2.n != d.n)
		bad = fz_fail(why, size, "decode with a visitor records %zu problems, without one %zu", d.n, d2.n);
	else if (st == NNN_OK)
		bad = fz_roundtrip("dump decode", m, data, len, why, size);

out:
	nnn_model_free(m);
	nnn_model_free(m2);
	nnn_diags_free(&d);
	nnn_diags_free(&d2);
	return bad;
}

/* ---- shape inference and a run ---- */

const nnn_ctx_t *fz_run_ctx(char *why, size_t size)
{
	static nnn_ctx_t *ctx;
	static bool tried;
	static char err[FZ_WHY_MAX];
	char path[1024], msg[NNN_PATH_MAX + NNN_MSG_MAX + 512];
	const char *build;
	nnn_diags_t d;

	if (tried) {
		if (!ctx)
			snprintf(why, size, "%s", err);
		return ctx;
	}
	tried = true;
	/* One BLAS thread: deterministic, and no thread pool per process. */
	setenv("OPENBLAS_NUM_THREADS", "1", 0);
	build = getenv("NNN_BUILD");
	snprintf(path, sizeof path, "%s/plugins/builtin.so", build && build[0] ? build : "build");
	nnn_diags_init(&d);
	if (nnn_ctx_new(&ctx, &d) != NNN_OK || nnn_plugin_load(ctx, path, &d) != NNN_OK) {
		snprintf(err, sizeof err, "cannot load the builtin plugin %.600s (set NNN_BUILD to the build folder): %.1200s", path,
		         d.n ? nnn_diag_format(&d.v[0], msg, sizeof msg) : "no reason given");
		snprintf(why, size, "%s", err);
		nnn_ctx_free(ctx);
		ctx = NULL;
	}
	nnn_diags_free(&d);
	return ctx;
}

/* Multiply-adds of one forward pass of a plan, saturating. */
static uint64_t fz_macs(const nnn_model_t *m, const nnn_plan_t *p)
{
	uint64_t total = 0;
	for (int32_t i = 0; i < m->layer_count; i++) {
		const nnn_layer_t *L = &m->layers[i];
		const nnn_shape_t *out = nnn_plan_shape(p, i);
		uint64_t per = 1;
		if (!out)
			return UINT64_MAX;
		if (L->body_ext.type) {
			per = 16;
		} else if (L->id == NNN_LAYER_ID_DENSE) {
			per = L->body.dense.weights.dims.n >= 1 ? (uint64_t)(uint32_t)L->body.dense.weights.dims.v[0] : 1;
		} else if (L->id == NNN_LAYER_ID_CONV) {
			const nnn_conv_t *cv = &L->body.conv;
			per = cv->filters > 0 ? (uint64_t)cv->kernels.data.n / (uint64_t)cv->filters : 1;
		}
		total = fz_add(total, fz_mul(fz_numel(out), per + 8));
	}
	return total;
}

/* Plans and runs m for one input shape. */
static int fz_run_shape(const nnn_ctx_t *ctx, const nnn_model_t *m, size_t len, const nnn_shape_t *in, char *why,
                        size_t size)
{
	nnn_run_opts_t opts = { .size = sizeof opts, .threads = 1, .max_tensor_bytes = FZ_RUN_MAX_TENSOR_BYTES };
	nnn_shape_t *vshapes = NULL, oshape;
	nnn_plan_t *p = NULL;
	nnn_diags_t dv, dp, dr;
	nnn_status_t sv, sp, sr;
	float *x = NULL, *y1 = NULL, *y2 = NULL, *y3 = NULL;
	uint64_t nin = fz_numel(in), nout;
	char sh[256], sh2[256], sh3[256];
	int bad = 0;

	if (nin > (uint64_t)FZ_RUN_MAX_INPUT)
		return 0;
	nnn_diags_init(&dv);
	nnn_diags_init(&dp);
	nnn_diags_init(&dr);
	vshapes = calloc((size_t)m->layer_count + 1, sizeof *vshapes);
	if (!vshapes) {
		bad = fz_fail(why, size, "out of memory for %d shapes", (int)m->layer_count);
		goto out;
	}
	/* The validator's shape inference, then the kernels' (nnn_plan_new validates first). */
	sv = nnn_model_validate(m, in, vshapes, &dv);
	if ((bad = fz_diags_ok("nnn_model_validate(input)", &dv, sv, len, why, size)))
		goto out;
	sp = nnn_plan_new(ctx, m, in, &opts, &p, &dp);
	if ((sp == NNN_OK) != (p != NULL)) {
		bad = fz_fail(why, size, "nnn_plan_new returned %s with plan %p", nnn_status_name(sp), (void *)p);
		goto out;
	}
	if ((bad = fz_diags_ok("nnn_plan_new", &dp, sp, len, why, size)))
		goto out;
	if (sp == NNN_OK && sv != NNN_OK) {
		bad = fz_fail(why, size, "nnn_plan_new accepts input %s, which nnn_model_validate rejects with %s",
		              nnn_shape_format(in, sh, sizeof sh), nnn_status_name(sv));
		goto out;
	}
	if (sv == NNN_OK && sp == NNN_E_INPUT_SHAPE) {
		char msg[NNN_PATH_MAX + NNN_MSG_MAX + 512];
		bad = fz_fail(why, size, "nnn_model_validate accepts input %s, but a kernel rejects it: %s",
		              nnn_shape_format(in, sh, sizeof sh), dp.n ? nnn_diag_format(&dp.v[0], msg, sizeof msg) : "");
		goto out;
	}
	if (sp != NNN_OK)
		goto out;

	/* Both inferred every shape: they agree. */
	for (int32_t i = -1; i < m->layer_count; i++) {
		const nnn_shape_t *ps = nnn_plan_shape(p, i);
		const nnn_shape_t *vs = i < 0 ? in : &vshapes[i];
		if (!ps) {
			bad = fz_fail(why, size, "nnn_plan_shape(%d) is NULL for a plan of %d layers", (int)i, (int)m->layer_count);
			goto out;
		}
		if (vs->rank == 0)
			continue; /* not inferred by the validator (a plugin type) */
		if (ps->rank != vs->rank || memcmp(ps->dims, vs->dims, (size_t)vs->rank * sizeof vs->dims[0]) != 0) {
			bad = fz_fail(why, size, "input %s: layers[%d] outputs %s by the validator, %s by the kernels",
			              nnn_shape_format(in, sh, sizeof sh), (int)i, nnn_shape_format(vs, sh2, sizeof sh2),
			              nnn_shape_format(ps, sh3, sizeof sh3));
			goto out;
		}
		if (fz_numel(ps) > FZ_RUN_MAX_TENSOR_BYTES / 4) {
			bad = fz_fail(why, size, "layers[%d] outputs %s, over the max_tensor_bytes of %" PRIu64 " the plan was given",
			              (int)i, nnn_shape_format(ps, sh, sizeof sh), FZ_RUN_MAX_TENSOR_BYTES);
			goto out;
		}
	}
	if (fz_macs(m, p) > FZ_RUN_MAX_MACS)
		goto out; /* too much work for a fuzz input */

	nout = fz_numel(nnn_plan_shape(p, m->layer_count - 1));
	x = malloc((size_t)(nin ? nin : 1) * sizeof *x);
	y1 = malloc((size_t)(nout ? nout : 1) * sizeof *y1);
	y2 = malloc((size_t)(nout ? nout : 1) * sizeof *y2);
	y3 = malloc((size_t)(nout ? nout : 1) * sizeof *y3);
	if (!x || !y1 || !y2 || !y3) {
		bad = fz_fail(why, size, "out of memory for %" PRIu64 " + 3 x %" PRIu64 " floats", nin, nout);
		goto out;
	}
	for (uint64_t i = 0; i < nin; i++)
		x[i] = (float)((int)(i % 7) - 3) * 0.25f + (float)(i % 3) * 0.125f;
	/* Twice with the same plan, then once by nnn_model_run: bit-identical. */
	sr = nnn_plan_run(p, x, y1, &dr);
	if ((bad = fz_diags_ok("nnn_plan_run", &dr, sr, len, why, size)) || sr != NNN_OK)
		goto out;
	sr = nnn_plan_run(p, x, y2, &dr);
	if (sr != NNN_OK) {
		bad = fz_fail(why, size, "nnn_plan_run succeeded once, then failed with %s", nnn_status_name(sr));
		goto out;
	}
	if (nout && memcmp(y1, y2, (size_t)nout * sizeof *y1) != 0) {
		bad = fz_fail(why, size, "input %s: two runs of one plan give different outputs",
		              nnn_shape_format(in, sh, sizeof sh));
		goto out;
	}
	sr = nnn_model_run(ctx, m, in, x, y3, &oshape, &opts, &dr);
	if (sr != NNN_OK) {
		bad = fz_fail(why, size, "nnn_model_run fails with %s where a plan ran", nnn_status_name(sr));
		goto out;
	}
	if (fz_numel(&oshape) != nout || (nout && memcmp(y1, y3, (size_t)nout * sizeof *y1) != 0)) {
		bad = fz_fail(why, size, "input %s: nnn_model_run gives a different output than nnn_plan_run",
		              nnn_shape_format(in, sh, sizeof sh));
		goto out;
	}

	/* The tensor limit: refused exactly when a layer's output, or the
	 * memory its kernel says it will allocate (work_bytes), is over it,
	 * naming the first such layer. */
	{
		nnn_run_opts_t small = opts;
		nnn_plan_t *p2 = NULL;
		int32_t over = -1;
		char want[32];
		small.max_tensor_bytes = 16;
		for (int32_t i = 0; i < m->layer_count && over < 0; i++) {
			const nnn_layer_t *L = &m->layers[i];
			const nnn_layer_type_t *t = L->body_ext.type ? L->body_ext.type : nnn_ctx_layer(ctx, L->id, NULL);
			const void *body = L->body_ext.type ? (const void *)L->body_ext.body : (const void *)&L->body;
			if (fz_numel(nnn_plan_shape(p, i)) > small.max_tensor_bytes / 4 ||
			    (t && t->work_bytes &&
			     t->work_bytes(L, body, nnn_plan_shape(p, i - 1), nnn_plan_shape(p, i), small.threads) >
			         small.max_tensor_bytes))
				over = i;
		}
		nnn_diags_clear(&dr);
		sr = nnn_plan_new(ctx, m, in, &small, &p2, &dr);
		nnn_plan_free(p2);
		snprintf(want, sizeof want, "layers[%d]", (int)over);
		if (over < 0 ? sr != NNN_OK : sr != NNN_E_LIMIT || !dr.n || strcmp(dr.v[dr.n - 1].path, want) != 0)
			bad = fz_fail(why, size, "input %s, max_tensor_bytes 16: nnn_plan_new gives %s at %s, expected %s%s",
			              nnn_shape_format(in, sh, sizeof sh), nnn_status_name(sr), dr.n ? dr.v[dr.n - 1].path : "-",
			              over < 0 ? "OK" : "E_LIMIT at ", over < 0 ? "" : want);
	}

out:
	nnn_plan_free(p);
	free(vshapes);
	free(x);
	free(y1);
	free(y2);
	free(y3);
	nnn_diags_free(&dv);
	nnn_diags_free(&dp);
	nnn_diags_free(&dr);
	return bad;
}

int fz_check_run(const nnn_ctx_t *ctx, const uint8_t *data, size_t len, char *why, size_t size)
{
	nnn_decode_opts_t opts = { .ctx = ctx };
	nnn_model_t *m = NULL;
	nnn_shape_t shapes[FZ_SHAPES];
	fz_first_t first;
	int bad = 0, n;

	if (nnn_model_decode(data, len, &opts, &m, NULL) != NNN_OK)
		return 0;
	if (nnn_model_param_total(m) > FZ_RUN_MAX_PARAMS) {
		nnn_model_free(m);
		return 0;
	}
	/* A mutation that resizes a tensor almost never fixes the header's
	 * parameter count too; repair it so such models still reach the kernels
	 * (the decoded model is the caller's to change). */
	m->param_count = nnn_model_param_total(m);
	fz_first_of_model(m, &first);
	n = fz_shapes(&first, shapes);
	for (int i = 0; i < n && !bad; i++)
		bad = fz_run_shape(ctx, m, len, &shapes[i], why, size);
	nnn_model_free(m);
	return bad;
}

/* ---- .npy ---- */

static int fz_npy_same(const char *what, const nnn_npy_t *a, const nnn_npy_t *b, char *why, size_t size)
{
	if (a->shape.rank != b->shape.rank ||
	    memcmp(a->shape.dims, b->shape.dims, (size_t)a->shape.rank * sizeof a->shape.dims[0]) != 0)
		return fz_fail(why, size, "%s: the shape changed (rank %d -> %d)", what, (int)a->shape.rank,
		               (int)b->shape.rank);
	if (a->count != b->count)
		return fz_fail(why, size, "%s: %zu elements became %zu", what, a->count, b->count);
	if (a->count && memcmp(a->data, b->data, a->count * sizeof *a->data) != 0) {
		size_t i = 0;
		while (memcmp(&a->data[i], &b->data[i], sizeof *a->data) == 0)
			i++;
		return fz_fail(why, size, "%s: element %zu changed its bits", what, i);
	}
	return 0;
}

int fz_check_npy(const uint8_t *data, size_t len, char *why, size_t size)
{
	nnn_npy_t a, b;
	nnn_diags_t d;
	nnn_status_t st;
	unsigned char *buf = NULL, *buf2 = NULL;
	size_t n = 0, n2 = 0;
	uint64_t count = 1;
	int bad = 0;

	memset(&b, 0, sizeof b);
	nnn_diags_init(&d);
	st = nnn_npy_read_mem(data, len, &a, &d);
	if ((bad = fz_diags_ok("nnn_npy_read_mem", &d, st, len, why, size)))
		goto out;
	if (st != NNN_OK) {
		static const nnn_npy_t zero;
		if (memcmp(&a, &zero, sizeof a) != 0)
			bad = fz_fail(why, size, "nnn_npy_read_mem failed with %s but did not zero its output",
			              nnn_status_name(st));
		goto out;
	}
	if (!a.data) {
		bad = fz_fail(why, size, "a successful read left data NULL");
		goto out;
	}
	if (a.shape.rank < 0 || a.shape.rank > NNN_MAX_RANK) {
		bad = fz_fail(why, size, "a successful read gave rank %d", (int)a.shape.rank);
		goto out;
	}
	for (int32_t i = 0; i < a.shape.rank; i++) {
		if (a.shape.dims[i] < 0) {
			bad = fz_fail(why, size, "a successful read gave dim %d = %" PRId64, (int)i, a.shape.dims[i]);
			goto out;
		}
		count = a.shape.dims[i] ? fz_mul(count, (uint64_t)a.shape.dims[i]) : count;
	}
	for (int32_t i = 0; i < a.shape.rank; i++)
		if (a.shape.dims[i] == 0)
			count = 0;
	if (count != a.count) {
		bad = fz_fail(why, size, "a successful read gave %zu elements for a shape of %" PRIu64, a.count, count);
		goto out;
	}
	/* Write it, read it back: the same shape and bits. */
	nnn_diags_clear(&d);
	st = nnn_npy_encode(&a.shape, a.data, &buf, &n, &d);
	if (st != NNN_OK) {
		bad = fz_fail(why, size, "nnn_npy_encode cannot write what nnn_npy_read_mem read: %s",
		              d.n ? d.v[0].msg : nnn_status_name(st));
		goto out;
	}
	if (n < 10 || (10 + ((size_t)buf[8] | (size_t)buf[9] << 8)) % 64 != 0 ||
	    n != 10 + ((size_t)buf[8] | (size_t)buf[9] << 8) + 4 * a.count) {
		bad = fz_fail(why, size, "nnn_npy_encode wrote %zu bytes with a header that is not 64-byte aligned", n);
		goto out;
	}
	st = nnn_npy_read_mem(buf, n, &b, &d);
	if (st != NNN_OK) {
		bad = fz_fail(why, size, "nnn_npy_read_mem rejects what nnn_npy_encode wrote: %s",
		              d.n ? d.v[0].msg : nnn_status_name(st));
		goto out;
	}
	if ((bad = fz_npy_same("write -> read", &a, &b, why, size)))
		goto out;
	/* The writer is a function of shape and bits. */
	st = nnn_npy_encode(&b.shape, b.data, &buf2, &n2, &d);
	if (st != NNN_OK || n2 != n || memcmp(buf, buf2, n) != 0) {
		bad = fz_fail(why, size, "writing what was read back gives different bytes");
		goto out;
	}
	/* An input in the writer's own form is written back byte for byte. */
	if (len == n && len >= 10 && data[6] == 1 && memcmp(data + 10, "{'descr': '<f4', 'fortran_order': False, ", 41) == 0 &&
	    memcmp(data, buf, 10 + ((size_t)buf[8] | (size_t)buf[9] << 8)) == 0 && memcmp(data, buf, n) != 0)
		bad = fz_fail(why, size, "a file with the writer's own header is not written back byte for byte");

out:
	nnn_npy_free(&a);
	nnn_npy_free(&b);
	free(buf);
	free(buf2);
	nnn_diags_free(&d);
	return bad;
}

/* ---- by name ---- */

/* JSON -> model -> bytes, and model -> JSON -> model -> the same bytes. */
static int fz_json_once(const uint8_t *data, size_t len, unsigned flags, char *why, size_t size)
{
	nnn_json_read_opts_t o = { .flags = flags, .base_dir = "/nonexistent-nnn-fuzz" };
	nnn_model_t *m = NULL, *m2 = NULL;
	nnn_diags_t d;
	unsigned char *b1 = NULL, *b2 = NULL;
	char *text = NULL;
	size_t n1 = 0, n2 = 0, tn = 0;
	int bad = 0;
	const char *mode = flags ? "spec" : "strict";

	nnn_diags_init(&d);
	nnn_status_t st = nnn_json_decode((const char *)data, len, &o, &m, &d);
	if ((bad = fz_diags_ok("nnn_json_decode", &d, st, (size_t)-1, why, size)))
		goto out;
	if (st != NNN_OK) {
		if (m || d.n != 1 || d.v[0].code != st || d.v[0].line == 0 || d.v[0].column == 0)
			bad = fz_fail(why, size, "%s: failed with %s but left a model, %zu problems, or a problem without its "
			              "code or line", mode, nnn_status_name(st), d.n);
		goto out;
	}
	fz_describe(m);
	if (nnn_model_encode(m, &b1, &n1, &d) != NNN_OK) {
		bad = fz_fail(why, size, "%s: an accepted model does not encode: %s", mode, d.n ? d.v[d.n - 1].msg : "");
		goto out;
	}
	if (nnn_json_encode(m, NULL, &text, &tn, &d) != NNN_OK) {
		bad = fz_fail(why, size, "%s: an accepted model has no JSON form: %s", mode, d.n ? d.v[d.n - 1].msg : "");
		goto out;
	}
	o.flags = 0;
	if (nnn_json_decode(text, tn, &o, &m2, &d) != NNN_OK) {
		bad = fz_fail(why, size, "%s: the JSON written does not read back: %s", mode, d.n ? d.v[d.n - 1].msg : "");
		goto out;
	}
	if (nnn_model_encode(m2, &b2, &n2, &d) != NNN_OK || n1 != n2 || memcmp(b1, b2, n1) != 0)
		bad = fz_fail(why, size, "%s: JSON -> model -> JSON -> model changed the bytes (%zu, then %zu)", mode, n1, n2);
out:
	free(b1);
	free(b2);
	free(text);
	nnn_model_free(m);
	nnn_model_free(m2);
	nnn_diags_free(&d);
	return bad;
}

int fz_check_json(const uint8_t *data, size_t len, char *why, size_t size)
{
	return fz_json_once(data, len, 0, why, size) || fz_json_once(data, len, NNN_JSON_SPEC, why, size);
}

int fz_check_onnx(const uint8_t *data, size_t len, char *why, size_t size)
{
	nnn_model_t *m = NULL, *m2 = NULL;
	nnn_diags_t d;
	unsigned char *b = NULL;
	size_t n = 0;
	unsigned notes = 0;
	char note[256];
	int bad = 0;

	nnn_diags_init(&d);
	memset(note, 'x', sizeof note);
	nnn_onnx_read_opts_t o = { .notes = &notes, .note_text = note, .note_size = sizeof note };
	nnn_status_t st = nnn_onnx_decode(data, len, &o, &m, &d);
	if ((bad = fz_diags_ok("nnn_onnx_decode", &d, st, (size_t)-1, why, size)))
		goto out;
	if (!fz_terminated(note, sizeof note)) {
		bad = fz_fail(why, size, "nnn_onnx_decode left its note unterminated");
		goto out;
	}
	if (st != NNN_OK) {
		if (m)
			bad = fz_fail(why, size, "nnn_onnx_decode failed with %s but left a model", nnn_status_name(st));
		goto out;
	}
	if (notes & ~(unsigned)(NNN_ONNX_NOTE_CHANNELS_FIRST | NNN_ONNX_NOTE_META_IGNORED) || (notes && !note[0])) {
		bad = fz_fail(why, size, "notes 0x%x with the text \"%.100s\"", notes, note);
		goto out;
	}
	fz_describe(m);
	if (nnn_model_encode(m, &b, &n, &d) != NNN_OK) {
		bad = fz_fail(why, size, "an imported model does not encode: %s", d.n ? d.v[d.n - 1].msg : "");
		goto out;
	}
	if (nnn_model_decode(b, n, NULL, &m2, &d) != NNN_OK) {
		bad = fz_fail(why, size, "an imported model's bytes do not decode: %s", d.n ? d.v[d.n - 1].msg : "");
		goto out;
	}
	bad = fz_roundtrip("onnx", m2, b, n, why, size);
out:
	nnn_model_free(m2);
	free(b);
	nnn_model_free(m);
	nnn_diags_free(&d);
	return bad;
}

int fz_check(const char *name, const uint8_t *data, size_t len, char *why, size_t size)
{
	if (!strcmp(name, "fuzz_onnx"))
		return fz_check_onnx(data, len, why, size);
	if (!strcmp(name, "fuzz_json"))
		return fz_check_json(data, len, why, size);
	if (!strcmp(name, "fuzz_decode"))
		return fz_check_decode(data, len, why, size);
	if (!strcmp(name, "fuzz_dump"))
		return fz_check_dump(data, len, why, size);
	if (!strcmp(name, "fuzz_npy"))
		return fz_check_npy(data, len, why, size);
	if (!strcmp(name, "fuzz_run")) {
		const nnn_ctx_t *ctx = fz_run_ctx(why, size);
		return ctx ? fz_check_run(ctx, data, len, why, size) : -1;
	}
	snprintf(why, size, "no harness named %s", name);
	return -1;
}

void fz_harness_input(const char *name, const uint8_t *data, size_t len)
{
	char why[FZ_WHY_MAX];
	if (fz_check(name, data, len, why, sizeof why)) {
		fprintf(stderr, "%s: invariant broken on a %zu-byte input: %s\n", name, len, why);
		abort();
	}
}
