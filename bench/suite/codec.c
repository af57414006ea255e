/* codec.c: the models, and what libnnn does with their bytes.
 *
 * Four models of 1 MiB, 3 MiB (the example classifier, written by
 * mkexample), 64 MiB and 1 GiB. The other three are four Dense layers
 * [w, w] each, so that only the tensor bytes differ. They stay in
 * build/bench/ between runs and are written again only when missing.
 *
 * Every figure runs on a warm page cache, its runs interleaved with its
 * reference's:
 *   open      nnn_file_open (mmap, zero-copy views)  vs. open + fstat + mmap
 *             + a read of each page the decoder reads; close vs. munmap
 *   validate  nnn_validate_bytes                     vs. reading every byte
 *   finite    nnn_model_check_finite                 vs. a plain read loop
 *   copy      NNN_DECODE_COPY, from memory and from the file, vs. memcpy to
 *             memory that is already faulted in
 *   encode    nnn_model_write_file                   vs. write(2) + fsync
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <nnn/file.h>
#include <nnn/validate.h>

#include "bench.h"
#include "cursor.h"

#define NMODELS 4
#define MAX_READS 4096
#define MODEL_TAG "nnnbench model v1: four Dense layers, sawtooth weights"

/* Where reads go so that they are not optimised out. */
static volatile uint64_t sink;
/* Called through a pointer the compiler cannot see through: a copy into
 * memory that is never read must still happen. */
static void *(*volatile copy_fn)(void *, const void *, size_t) = memcpy;

typedef struct bmodel {
	const char *name;
	int32_t width; /* four Dense [width, width]; 0: the example */
	char path[BN_PATH];
	size_t bytes, tensor_bytes;
	bool present;
	int fast, slow; /* runs of the microsecond figures, of those that move every byte */
	size_t reads[MAX_READS][2], window; /* nnn_file_open's preads (offset, bytes); the window's end */
	int nreads;
	series_t open, open_floor, close, close_floor, validate, scan;
	series_t finite, finite_ref, copy, copy_file, copy_fresh, copy_ref, enc, enc_ref;
} bmodel_t;

static bool fail(const char *what, nnn_status_t st, nnn_diags_t *d)
{
	char buf[1024];
	fprintf(stderr, "nnnbench: %s: %s\n", what, nnn_status_str(st));
	for (size_t i = 0; d && i < d->n; i++)
		fprintf(stderr, "nnnbench:   %s\n", nnn_diag_format(&d->v[i], buf, sizeof buf));
	if (d)
		nnn_diags_clear(d);
	return false;
}

static bool sys_fail(const char *what, const char *path)
{
	fprintf(stderr, "nnnbench: %s %s: %s\n", what, path, strerror(errno));
	return false;
}

/* n bytes faulted in, on huge pages where the kernel allows: a reference
 * must not pay page faults on the clock. Free with big_free. */
static void *big(size_t n)
{
	void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
#ifdef MADV_HUGEPAGE
	madvise(p, n, MADV_HUGEPAGE);
#endif
	memset(p, 1, n);
	return p;
}

static void big_free(void *p, size_t n)
{
	if (p)
		munmap(p, n);
}

/* ---- the models ---- */

/* Four Dense layers [w, w] of sawtooth weights. Every layer points at the
 * same values: only the byte count matters here. */
static bool write_dense(const bmodel_t *bm, nnn_diags_t *d)
{
	size_t n = (size_t)bm->width * (size_t)bm->width;
	int32_t dims[3] = { bm->width, bm->width, bm->width };
	float *v = big(n * sizeof *v);
	nnn_layer_t layers[4];
	nnn_model_t m;
	bool good;

	if (!v) {
		fprintf(stderr, "nnnbench: cannot allocate %zu floats\n", n);
		return false;
	}
	for (size_t i = 0; i < n; i++)
		v[i] = (float)((i * 2654435761u) & 1023u) / 1024.0f - 0.5f;
	memset(layers, 0, sizeof layers);
	memset(&m, 0, sizeof m);
	for (int i = 0; i < 4; i++) {
		nnn_layer_t *L = &layers[i];
		L->id = NNN_LAYER_ID_DENSE;
		L->activation.id = NNN_ACTIVATION_ID_RELU;
		L->body.dense.neurons = bm->width;
		L->body.dense.weights.dims = (nnn_i32s_t){ dims, 2 };
		L->body.dense.weights.data = nnn_f32s_view(v, bm->width * bm->width);
		L->bias.dims = (nnn_i32s_t){ &dims[2], 1 };
		L->bias.data = nnn_f32s_view(v, bm->width);
	}
	m.description = (nnn_str_t){ MODEL_TAG, (int32_t)strlen(MODEL_TAG) };
	m.layer_count = 4;
	m.layers = layers;
	m.param_count = nnn_model_param_total(&m);
	nnn_status_t st = nnn_model_write_file(&m, bm->path, d);
	good = st == NNN_OK || fail("writing a model", st, d);
	big_free(v, n * sizeof *v);
	return good;
}

/* Whether the file at bm->path is this model already. */
static bool up_to_date(const bmodel_t *bm)
{
	nnn_file_t *f;
	bool same = false;
	if (nnn_file_open(bm->path, NULL, &f, NULL) != NNN_OK)
		return false;
	const nnn_model_t *m = nnn_file_model(f);
	same = m->layer_count == 4 && m->description.len == (int32_t)strlen(MODEL_TAG) &&
	       !memcmp(m->description.ptr, MODEL_TAG, strlen(MODEL_TAG)) &&
	       m->layers[0].body.dense.neurons == bm->width;
	nnn_file_close(f);
	return same;
}

static double free_bytes(const char *dir)
{
	struct statvfs sv;
	return statvfs(dir, &sv) == 0 ? (double)sv.f_bavail * (double)sv.f_frsize : 0;
}

/* Writes what is missing; says when the disk is too small for the 1 GiB model. */
static bool prepare(const config_t *c, bmodel_t *ms, table_t *t, nnn_diags_t *d)
{
	for (int i = 0; i < NMODELS; i++) {
		bmodel_t *bm = &ms[i];
		if (bm->width == 0) {
			snprintf(bm->path, sizeof bm->path, "%s", c->example);
			bm->present = true;
			continue;
		}
		snprintf(bm->path, sizeof bm->path, "%s/dense%d.nnn", c->dir, (int)bm->width);
		if (c->quick && bm->width > 4096) {
			bn_note(t, "%s model: skipped (--quick)", bm->name);
			continue;
		}
		/* The model, then an encoded copy and a write(2) copy of it at once. */
		bool there = up_to_date(bm);
		double model = 4.0 * 4 * (double)bm->width * bm->width;
		double need = (there ? 2.1 : 3.1) * model, have = free_bytes(c->dir);
		if (there && have >= need) {
			bm->present = true;
			continue;
		}
		if (have < need) {
			bn_note(t, "%s model: skipped: %.1f GiB free in %s (df), %.1f GiB needed", bm->name,
			        have / (1 << 30), c->dir, need / (1 << 30));
			continue;
		}
		fprintf(stderr, "nnnbench: writing %s (%s)\n", bm->path, bm->name);
		if (!write_dense(bm, d))
			return false;
		bm->present = true;
	}
	return true;
}

/* ---- open and validate ---- */

/* The decoder reads [at, at + n) of the file: through its window,
 * refilled by a pread from `at` when the bytes lie outside it; more than
 * the window holds, by a pread of their own. */
#define WINDOW NNN_WINDOW_BYTES
static void add_read(bmodel_t *bm, uint64_t at, uint64_t n)
{
	if (n == 0 || (n <= WINDOW && at >= bm->window - WINDOW && at + n <= bm->window && bm->window))
		return;
	if (bm->nreads < MAX_READS) {
		bm->reads[bm->nreads][0] = (size_t)at;
		bm->reads[bm->nreads++][1] = n > WINDOW ? (size_t)n : WINDOW;
	}
	if (n <= WINDOW)
		bm->window = (size_t)at + WINDOW;
}

/* What the decoder reads of each field: all of a scalar; the count of an
 * array or string, then the bytes of a string or int32 array (a float
 * array's values are never read). */
static void see_field(void *ctx, const nnn_field_t *f)
{
	bmodel_t *bm = ctx;
	bool counted = f->prim == NNN_PRIM_STRING || f->prim == NNN_PRIM_I32_ARRAY || f->prim == NNN_PRIM_F32_ARRAY;
	add_read(bm, f->offset, counted ? 4 : f->size);
	if (counted && f->prim != NNN_PRIM_F32_ARRAY)
		add_read(bm, f->offset + 4, f->size - 4);
}

static bool find_reads(bmodel_t *bm, nnn_diags_t *d)
{
	nnn_visitor_t vis = { .field = see_field, .ctx = bm };
	nnn_decode_opts_t opts = { .visit = &vis };
	nnn_file_t *f;
	struct stat sb;
	if (stat(bm->path, &sb) != 0)
		return sys_fail("cannot stat", bm->path);
	bm->bytes = (size_t)sb.st_size; /* before the visitor needs it */
	bm->nreads = 0;
	bm->window = 0;
	nnn_status_t st = nnn_file_open(bm->path, &opts, &f, d);
	if (st != NNN_OK)
		return fail(bm->path, st, d);
	const nnn_model_t *m = nnn_file_model(f);
	bm->tensor_bytes = 0;
	for (int32_t i = 0; i < m->layer_count; i++) {
		nnn_named_tensor_t ts[8];
		int n = nnn_layer_tensors(&m->layers[i], ts, 8);
		for (int k = 0; k < n && k < 8; k++)
			bm->tensor_bytes += 4 * (size_t)ts[k].tensor->data.n;
	}
	nnn_file_close(f);
	return true;
}

/* The floor under nnn_file_open: the same system calls (the same preads),
 * nothing decoded. */
static bool floor_open(bmodel_t *bm, bool record)
{
	double t0 = bn_now();
	long f0 = bn_faults();
	struct stat sb;
	int fd = open(bm->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &sb) != 0)
		return sys_fail("cannot open", bm->path);
	const unsigned char *p = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED) {
		close(fd);
		return sys_fail("cannot map", bm->path);
	}
	unsigned char w[WINDOW];
	uint64_t sum = 0;
	for (int i = 0; i < bm->nreads; i++) {
		size_t at = bm->reads[i][0], n = bm->reads[i][1];
		unsigned char *to = n > WINDOW ? malloc(n) : w;
		if (n > (size_t)sb.st_size - at)
			n = (size_t)sb.st_size - at;
		if (!to || pread(fd, to, n, (off_t)at) != (ssize_t)n) {
			close(fd);
			return sys_fail("cannot read", bm->path);
		}
		sum += to[0];
		if (to != w)
			free(to);
	}
	close(fd);
	sink += sum;
	double t1 = bn_now();
	long f1 = bn_faults();
	munmap((void *)p, (size_t)sb.st_size);
	double t2 = bn_now();
	if (record) {
		bn_add(&bm->open_floor, t1 - t0, f1 - f0);
		bn_add(&bm->close_floor, t2 - t1, bn_faults() - f1);
	}
	return true;
}

/* Reads every byte: the sum of the 64-bit words, four sums at once so
 * that the adds never wait on each other (GCC's -O2 does not vectorise a
 * 64-bit sum; four scalar loads a cycle are still more than memory gives). */
static uint64_t read_all(const unsigned char *p, size_t n)
{
	uint64_t s[4] = { 0, 0, 0, 0 };
	size_t i = 0;
	for (; n - i >= 32; i += 32)
		for (int k = 0; k < 4; k++) {
			uint64_t w;
			memcpy(&w, p + i + 8 * (size_t)k, 8);
			s[k] += w;
		}
	for (; i < n; i++)
		s[0] += p[i];
	return s[0] + s[1] + s[2] + s[3];
}

static bool bench_open(bmodel_t *bm, nnn_diags_t *d)
{
	nnn_shape_t in = { .rank = 4, .dims = { 1, 28, 28, 1 } };
	if (bm->width)
		in = (nnn_shape_t){ .rank = 2, .dims = { 1, bm->width } };
	for (int run = -1; run < bm->fast; run++) {
		bool rec = run >= 0;
		nnn_file_t *f;
		if ((run & 1) && !floor_open(bm, rec)) /* the two take turns to go first */
			return false;
		double t0 = bn_now();
		long f0 = bn_faults();
		nnn_status_t st = nnn_file_open(bm->path, NULL, &f, d);
		double t1 = bn_now();
		long f1 = bn_faults();
		if (st != NNN_OK)
			return fail("nnn_file_open", st, d);
		st = nnn_model_validate(nnn_file_model(f), &in, NULL, d);
		double t2 = bn_now();
		if (st != NNN_OK) {
			nnn_file_close(f);
			return fail("nnn_model_validate", st, d);
		}
		nnn_file_close(f);
		double t3 = bn_now();
		if (rec) {
			bn_add(&bm->open, t1 - t0, f1 - f0);
			bn_add(&bm->validate, t2 - t1, 0);
			bn_add(&bm->close, t3 - t2, 0);
		}
		if (!(run & 1) && !floor_open(bm, rec))
			return false;
	}
	return true;
}

/* ---- what moves every byte ---- */

static bool write_plain(const char *path, const unsigned char *p, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return sys_fail("cannot create", path);
	while (n) {
		ssize_t k = write(fd, p, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			close(fd);
			return sys_fail("cannot write", path);
		}
		p += k;
		n -= (size_t)k;
	}
	if (fsync(fd) != 0 || close(fd) != 0)
		return sys_fail("cannot flush", path);
	return true;
}

/* Check-finite and the read loop, on the same mapped bytes, each going
 * first in turn: on this kind of host one pass over 64 MiB can find the
 * bytes in a cache that the next pass does not. */
static bool bench_finite(bmodel_t *bm, const nnn_model_t *m, const unsigned char *src, nnn_diags_t *d)
{
	for (int run = -1; run < bm->slow; run++)
		for (int k = 0; k < 2; k++) {
			uint64_t bad = 0;
			nnn_status_t st = NNN_OK;
			bool check = (k + run) & 1;
			double t0 = bn_now();
			if (check)
				st = nnn_model_check_finite(m, &bad, d);
			else
				sink += read_all(src, bm->bytes);
			double t = bn_now() - t0;
			if (st != NNN_OK)
				return fail("nnn_model_check_finite", st, d);
			if (run >= 0)
				bn_add(check ? &bm->finite : &bm->finite_ref, t, 0);
		}
	return true;
}

/* The memory a copy gets: 2 MiB-aligned, advised to be huge pages (as
 * libnnn's own). */
static void *fresh(size_t n)
{
	const size_t huge = (size_t)2 << 20;
	void *p = NULL;
	if (posix_memalign(&p, huge, (n + huge - 1) / huge * huge) != 0)
		return NULL;
#ifdef MADV_HUGEPAGE
	madvise(p, (n + huge - 1) / huge * huge, MADV_HUGEPAGE);
#endif
	return p;
}

enum { C_DECODE, C_FILE, C_FRESH, C_REF, NCOPY };

/* One copy of the model's bytes to owned memory (dst: the reference's),
 * timed into *t, the freeing of the copy not included. C_FRESH is the
 * floor under any copy the caller owns: memcpy into memory never touched
 * before. With few page faults, what is left is the kernel zeroing each
 * new page (and, in a VM, the host backing it). */
static bool copy_once(int k, bmodel_t *bm, const unsigned char *src, unsigned char *dst, double *t, long *faults,
                      nnn_diags_t *d)
{
	nnn_decode_opts_t copy = { .flags = NNN_DECODE_COPY };
	nnn_status_t st = NNN_OK;
	nnn_model_t *m = NULL;
	nnn_file_t *f = NULL;
	void *p = NULL;
	double t0 = bn_now();
	long f0 = bn_faults();
	if (k == C_DECODE)
		st = nnn_model_decode(src, bm->bytes, &copy, &m, d);
	else if (k == C_FILE)
		st = nnn_file_open(bm->path, &copy, &f, d);
	else if (k == C_FRESH && (p = fresh(bm->bytes)) != NULL)
		copy_fn(p, src, bm->bytes);
	else if (k == C_REF)
		copy_fn(dst, src, bm->bytes);
	*t = bn_now() - t0;
	*faults = bn_faults() - f0;
	nnn_model_free(m);
	nnn_file_close(f);
	free(p);
	if (k == C_FRESH && !p)
		fprintf(stderr, "nnnbench: cannot allocate %zu bytes\n", bm->bytes);
	return (st == NNN_OK || fail(k == C_FILE ? "nnn_file_open (copy)" : "nnn_model_decode (copy)", st, d)) &&
	       (k != C_FRESH || p);
}

/* Copies to owned memory: from the mapping, from the file, plain memcpy
 * into fresh memory, and into memory already faulted in; the four take
 * turns to go first. */
static bool bench_copy(bmodel_t *bm, const unsigned char *src, nnn_diags_t *d)
{
	series_t *out[NCOPY] = { &bm->copy, &bm->copy_file, &bm->copy_fresh, &bm->copy_ref };
	unsigned char *dst = big(bm->bytes);
	bool good = dst != NULL;
	if (!dst)
		fprintf(stderr, "nnnbench: cannot allocate %zu bytes\n", bm->bytes);
	for (int run = -1; run < bm->slow && good; run++)
		for (int i = 0; i < NCOPY && good; i++) {
			int k = (i + run + 1) % NCOPY;
			double t;
			long faults;
			good = copy_once(k, bm, src, dst, &t, &faults, d);
			if (good && run >= 0)
				bn_add(out[k], t, faults);
		}
	big_free(dst, bm->bytes);
	return good;
}

/* Both write a new file each run; the old ones are removed off the clock. */
static bool bench_encode(const config_t *c, bmodel_t *bm, const nnn_model_t *m, const unsigned char *src,
                         nnn_diags_t *d)
{
	char enc[4200], ref[4200];
	bool good = true;
	snprintf(enc, sizeof enc, "%s/encoded.nnn", c->dir);
	snprintf(ref, sizeof ref, "%s/written.bin", c->dir);
	for (int run = -1; run < bm->slow && good; run++) {
		unlink(enc);
		unlink(ref);
		double t0 = bn_now();
		nnn_status_t st = nnn_model_write_file(m, enc, d);
		double t1 = bn_now();
		good = st == NNN_OK ? write_plain(ref, src, bm->bytes) : fail("nnn_model_write_file", st, d);
		double t2 = bn_now();
		if (good && run >= 0) {
			bn_add(&bm->enc, t1 - t0, 0);
			bn_add(&bm->enc_ref, t2 - t1, 0);
		}
	}
	unlink(enc);
	unlink(ref);
	return good;
}

static bool bench_bytes(const config_t *c, bmodel_t *bm, nnn_diags_t *d)
{
	nnn_file_t *f;
	nnn_status_t st = nnn_file_open(bm->path, NULL, &f, d);
	if (st != NNN_OK)
		return fail("nnn_file_open", st, d);
	size_t size;
	const unsigned char *src = nnn_file_bytes(f, &size);
	sink += read_all(src, size); /* every page mapped once, off the clock */
	bool good = bench_finite(bm, nnn_file_model(f), src, d) && bench_copy(bm, src, d) &&
	            bench_encode(c, bm, nnn_file_model(f), src, d);
	nnn_file_close(f);
	return good;
}

/* ---- rows ---- */

static void rows_open(table_t *t, const bmodel_t *ms)
{
	for (int i = 0; i < NMODELS; i++) {
		const bmodel_t *bm = &ms[i];
		char ref[96];
		if (!bm->open.n)
			continue;
		snprintf(ref, sizeof ref, "open+mmap, the same %d preads", bm->nreads);
		row_t *r = bn_row(t, "open (zero-copy, warm page cache)", "nnn_file_open", bm->name, U_US);
		if (!r)
			return;
		r->fig = bn_stats(&bm->open, U_US, 0);
		r->show_faults = true;
		bn_ref(r, ref, bn_stats(&bm->open_floor, U_US, 0));
		bn_target(r, T_BELOW, bm->bytes > ((size_t)4 << 20) ? 100 : 50);
	}
	for (int i = 0; i < NMODELS; i++) {
		const bmodel_t *bm = &ms[i];
		row_t *r = bm->close.n ? bn_row(t, "open (zero-copy, warm page cache)", "nnn_file_close", bm->name, U_US)
		                       : NULL;
		if (!r)
			continue;
		r->fig = bn_stats(&bm->close, U_US, 0);
		bn_ref(r, "munmap of the same mapping", bn_stats(&bm->close_floor, U_US, 0));
	}
	for (int i = 0; i < NMODELS; i++) {
		const bmodel_t *bm = &ms[i];
		row_t *r = bm->validate.n ? bn_row(t, "validate (no tensor data read)", "nnn_model_validate, input shape",
		                                   bm->name, U_US)
		                          : NULL;
		if (!r)
			continue;
		r->fig = bn_stats(&bm->validate, U_US, 0);
		bn_ref(r, "reading every byte (sum of u64)", bn_stats(&bm->finite_ref, U_US, 0));
		bn_target(r, T_BELOW, 20);
	}
}

static void rows_bytes(table_t *t, const bmodel_t *ms)
{
	for (int i = 0; i < NMODELS; i++) {
		const bmodel_t *bm = &ms[i];
		row_t *r = bm->finite.n ? bn_row(t, "check-finite (reads every value)", "nnn_model_check_finite", bm->name,
		                                 U_GBS)
		                        : NULL;
		if (!r)
			continue;
		r->fig = bn_stats(&bm->finite, U_GBS, (double)bm->tensor_bytes);
		bn_ref(r, "read loop, sum of u64, same bytes", bn_stats(&bm->finite_ref, U_GBS, (double)bm->bytes));
		bn_target(r, T_RATIO_MIN, 0.5);
	}
	static const char *copies[3] = { "nnn_model_decode, from memory", "nnn_file_open, from the file",
		                         "memcpy to fresh memory (the floor)" };
	for (int k = 0; k < 3; k++)
		for (int i = 0; i < NMODELS; i++) {
			const bmodel_t *bm = &ms[i];
			const series_t *s = k == 0 ? &bm->copy : k == 1 ? &bm->copy_file : &bm->copy_fresh;
			row_t *r = s->n ? bn_row(t, "decode to owned memory (NNN_DECODE_COPY)", copies[k], bm->name, U_GBS)
			                : NULL;
			if (!r)
				continue;
			r->fig = bn_stats(s, U_GBS, (double)bm->bytes);
			r->show_faults = true;
			bn_ref(r, "memcpy to memory already faulted in", bn_stats(&bm->copy_ref, U_GBS, (double)bm->bytes));
			/* A bandwidth target where the issue sets it, on 1 GiB: the
			 * smaller models show how much of it fresh pages cost (the floor
			 * row: memcpy itself into such memory), and read(2) from the
			 * page cache adds a lookup per 4 KiB page. */
			if (k < 2 && bm->bytes > ((size_t)512 << 20))
				bn_target(r, T_RATIO_MIN, 0.5);
		}
	for (int i = 0; i < NMODELS; i++) {
		const bmodel_t *bm = &ms[i];
		row_t *r = bm->enc.n ? bn_row(t, "encode to a file", "nnn_model_write_file (atomic)", bm->name, U_GBS)
		                     : NULL;
		if (!r)
			continue;
		r->fig = bn_stats(&bm->enc, U_GBS, (double)bm->bytes);
		bn_ref(r, "write(2) + fsync, same bytes", bn_stats(&bm->enc_ref, U_GBS, (double)bm->bytes));
		/* A bandwidth target: small files cost the rename and the second
		 * fsync (of the folder) that make the write atomic and durable. */
		if (bm->bytes > ((size_t)32 << 20))
			bn_target(r, T_RATIO_MIN, 0.7);
	}
}

bool bn_codec(const config_t *c, table_t *t)
{
	static bmodel_t ms[NMODELS] = {
		{ .name = "1 MiB", .width = 256 },
		{ .name = "3 MiB", .width = 0 },
		{ .name = "64 MiB", .width = 2048 },
		{ .name = "1 GiB", .width = 8192 },
	};
	nnn_diags_t d;
	bool good;

	nnn_diags_init(&d);
	good = prepare(c, ms, t, &d);
	for (int i = 0; i < NMODELS && good; i++) {
		bmodel_t *bm = &ms[i];
		if (!bm->present)
			continue;
		bm->fast = c->quick ? 5 : 15;
		bm->slow = c->quick ? 3 : bm->width > 4096 ? 5 : bm->width > 1024 ? 7 : 11;
		fprintf(stderr, "nnnbench: codec, %s\n", bm->name);
		good = find_reads(bm, &d) && bench_open(bm, &d) && bench_bytes(c, bm, &d);
	}
	nnn_diags_free(&d);
	if (good) {
		rows_open(t, ms);
		rows_bytes(t, ms);
	}
	return good;
}
