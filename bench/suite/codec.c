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

#define NMODELS 4
#define MAX_PAGES 4096
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
	size_t pages[MAX_PAGES];
	int npages;
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
		if (up_to_date(bm)) {
			bm->present = true;
			continue;
		}
		/* The model, then an encoded copy and a write(2) copy of it at once. */
		double need = 3.0 * 4 * (double)bm->width * bm->width * 4 * 1.05, have = free_bytes(c->dir);
		if (c->quick && bm->width > 4096) {
			bn_note(t, "%s model: skipped (--quick)", bm->name);
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

static void add_page(bmodel_t *bm, uint64_t at)
{
	size_t pg = (size_t)(at / 4096);
	for (int i = 0; i < bm->npages; i++)
		if (bm->pages[i] == pg)
			return;
	if (bm->npages < MAX_PAGES)
		bm->pages[bm->npages++] = pg;
}

/* The pages the decoder reads: each field's first and last byte, but only
 * the count of a float array (its values are never read). */
static void see_field(void *ctx, const nnn_field_t *f)
{
	bmodel_t *bm = ctx;
	add_page(bm, f->offset);
	if (f->prim != NNN_PRIM_F32_ARRAY && f->size > 0)
		add_page(bm, f->offset + f->size - 1);
}

static bool find_pages(bmodel_t *bm, nnn_diags_t *d)
{
	nnn_visitor_t vis = { .field = see_field, .ctx = bm };
	nnn_decode_opts_t opts = { .visit = &vis };
	nnn_file_t *f;
	nnn_status_t st = nnn_file_open(bm->path, &opts, &f, d);
	if (st != NNN_OK)
		return fail(bm->path, st, d);
	const nnn_model_t *m = nnn_file_model(f);
	nnn_file_bytes(f, &bm->bytes);
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

/* The floor under nnn_file_open: the same system calls and the same pages
 * read, nothing decoded. */
static bool floor_open(bmodel_t *bm, bool record)
{
	double t0 = bn_now();
	long f0 = bn_faults();
	struct stat sb;
	int fd = open(bm->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &sb) != 0)
		return sys_fail("cannot open", bm->path);
	const unsigned char *p = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return sys_fail("cannot map", bm->path);
	uint64_t sum = 0;
	for (int i = 0; i < bm->npages; i++)
		sum += p[bm->pages[i] * 4096];
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
		size_t size;
		const unsigned char *bytes = nnn_file_bytes(f, &size);
		st = nnn_validate_bytes(bytes, size, NULL, &in, d);
		double t2 = bn_now();
		if (st != NNN_OK) {
			nnn_file_close(f);
			return fail("nnn_validate_bytes", st, d);
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

/* Check-finite and the read loop, on the same mapped bytes. */
static bool bench_finite(bmodel_t *bm, const nnn_model_t *m, const unsigned char *src, nnn_diags_t *d)
{
	for (int run = -1; run < bm->slow; run++) {
		uint64_t bad = 0;
		double t0 = bn_now();
		nnn_status_t st = nnn_model_check_finite(m, &bad, d);
		double t1 = bn_now();
		sink += read_all(src, bm->bytes);
		double t2 = bn_now();
		if (st != NNN_OK)
			return fail("nnn_model_check_finite", st, d);
		if (run >= 0) {
			bn_add(&bm->finite, t1 - t0, 0);
			bn_add(&bm->finite_ref, t2 - t1, 0);
		}
	}
	return true;
}

/* memcpy into memory as fresh as a copy's: 2 MiB-aligned, advised to be
 * huge pages, never touched before. The floor under any copy that the
 * caller owns: what is left after page faults are made few is the kernel
 * zeroing each new page (and, in a VM, the host backing it). */
static double fresh_copy(const unsigned char *src, size_t n, long *faults)
{
	const size_t huge = (size_t)2 << 20;
	size_t size = (n + huge - 1) / huge * huge;
	void *p = NULL;
	double t0 = bn_now();
	long f0 = bn_faults();
	if (posix_memalign(&p, huge, size) != 0)
		return -1;
#ifdef MADV_HUGEPAGE
	madvise(p, size, MADV_HUGEPAGE);
#endif
	copy_fn(p, src, n);
	double t = bn_now() - t0;
	*faults = bn_faults() - f0;
	free(p);
	return t;
}

/* Copies to owned memory: from the mapping, from the file, and memcpy. */
static bool bench_copy(bmodel_t *bm, const unsigned char *src, nnn_diags_t *d)
{
	nnn_decode_opts_t copy = { .flags = NNN_DECODE_COPY };
	unsigned char *dst = big(bm->bytes);
	if (!dst) {
		fprintf(stderr, "nnnbench: cannot allocate %zu bytes\n", bm->bytes);
		return false;
	}
	for (int run = -1; run < bm->slow; run++) {
		nnn_model_t *m;
		nnn_file_t *f;
		double t0 = bn_now();
		long f0 = bn_faults();
		nnn_status_t st = nnn_model_decode(src, bm->bytes, &copy, &m, d);
		double t1 = bn_now();
		long f1 = bn_faults();
		nnn_model_free(m);
		if (st != NNN_OK) {
			big_free(dst, bm->bytes);
			return fail("nnn_model_decode (copy)", st, d);
		}
		double t2 = bn_now();
		copy_fn(dst, src, bm->bytes);
		double t3 = bn_now();
		long f3 = bn_faults();
		st = nnn_file_open(bm->path, &copy, &f, d);
		double t4 = bn_now();
		long f4 = bn_faults();
		nnn_file_close(f);
		if (st != NNN_OK) {
			big_free(dst, bm->bytes);
			return fail("nnn_file_open (copy)", st, d);
		}
		long ff;
		double tf = fresh_copy(src, bm->bytes, &ff);
		if (tf < 0) {
			big_free(dst, bm->bytes);
			fprintf(stderr, "nnnbench: cannot allocate %zu bytes\n", bm->bytes);
			return false;
		}
		if (run >= 0) {
			bn_add(&bm->copy, t1 - t0, f1 - f0);
			bn_add(&bm->copy_ref, t3 - t2, 0);
			bn_add(&bm->copy_file, t4 - t3, f4 - f3);
			bn_add(&bm->copy_fresh, tf, ff);
		}
	}
	big_free(dst, bm->bytes);
	return true;
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
		snprintf(ref, sizeof ref, "open+mmap, read the %d pages it reads", bm->npages);
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
		row_t *r = bm->validate.n ? bn_row(t, "validate (no tensor data read)", "nnn_validate_bytes, input shape",
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
			if (k < 2)
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
		good = find_pages(bm, &d) && bench_open(bm, &d) && bench_bytes(c, bm, &d);
	}
	nnn_diags_free(&d);
	if (good) {
		rows_open(t, ms);
		rows_bytes(t, ms);
	}
	return good;
}
