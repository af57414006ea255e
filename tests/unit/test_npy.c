/* test_npy.c: the .npy reader and writer (nnn/npy.h).
 *
 *   npy/header_*          the writer's bytes against headers written out by
 *                         hand from numpy/lib/format.py's rules
 *   npy/roundtrip_*       write -> read, every bit pattern, rank 0 to 32
 *   npy/reads_*           hand-built files of every accepted dtype and
 *                         version, tolerant whitespace and key order
 *   npy/rejects_*         every error: code, field path, byte offset, message
 *   npy/write_rejects_*   bad arguments to the writer
 *   npy/stdin_*, stdout   "-" as the path
 *   npy/numpy_*           cross-checks with NumPy; skipped when python3 cannot
 *                         import numpy, and under `make valgrind`
 */
#define _XOPEN_SOURCE 700
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include <nnn/npy.h>

#include "tmpdir.h"

/* ---- temp dir per test, removed by the suite's fini ---- */

#define TMP "nnn-npy-"

static const char *tmp(void)
{
	return t_tmpdir(TMP);
}

TestSuite(npy, .fini = t_tmpdir_remove);

static const char *tpath(const char *name)
{
	return t_tmppath(TMP, name);
}

/* ---- helpers ---- */

#define SP10 "          "
#define ANY_OFFSET (UINT64_MAX - 1)

static nnn_shape_t shp(int32_t rank, const int64_t *dims)
{
	nnn_shape_t s;
	memset(&s, 0, sizeof s);
	s.rank = rank;
	for (int32_t i = 0; i < rank; i++)
		s.dims[i] = dims[i];
	return s;
}
#define SHAPE(...) shp((int32_t)(sizeof((int64_t[]){ __VA_ARGS__ }) / sizeof(int64_t)), (int64_t[]){ __VA_ARGS__ })
static const nnn_shape_t SCALAR = { 0 };

static unsigned char *slurp(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	unsigned char *b;
	long n;
	cr_assert_not_null(f, "cannot open %s", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	b = malloc((size_t)n + 1);
	cr_assert_eq(fread(b, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*size = (size_t)n;
	return b;
}

static void spit(const char *path, const void *b, size_t n)
{
	FILE *f = fopen(path, "wb");
	cr_assert_not_null(f);
	cr_assert_eq(fwrite(b, 1, n, f), n);
	cr_assert_eq(fclose(f), 0);
}

/* A .npy file built by hand. */
typedef struct npyb {
	unsigned char *b;
	size_t n;
} npyb_t;

static void npyb_put(npyb_t *f, const void *p, size_t n)
{
	f->b = realloc(f->b, f->n + n + 1);
	cr_assert_not_null(f->b);
	if (n)
		memcpy(f->b + f->n, p, n);
	f->n += n;
}

/* Magic, version major.minor, the header exactly as given (its length in 2
 * bytes for 1.x, 4 otherwise), then `dlen` data bytes. */
static npyb_t npy_raw(unsigned major, unsigned minor, const char *header, const void *data, size_t dlen)
{
	npyb_t f = { 0 };
	size_t h = strlen(header);
	unsigned char pre[12] = { 0x93, 'N', 'U', 'M', 'P', 'Y', (unsigned char)major, (unsigned char)minor,
	                          (unsigned char)h, (unsigned char)(h >> 8), (unsigned char)(h >> 16),
	                          (unsigned char)(h >> 24) };
	npyb_put(&f, pre, major == 1 ? 10 : 12);
	npyb_put(&f, header, h);
	npyb_put(&f, data, dlen);
	return f;
}

/* A version 1.0 file with `dict` padded as numpy pads it. */
static npyb_t npy_v1(const char *dict, const void *data, size_t dlen)
{
	char h[4096];
	size_t n = (size_t)snprintf(h, sizeof h, "%s", dict);
	do
		h[n++] = ' ';
	while ((10 + n + 1) % 64);
	h[n++] = '\n';
	h[n] = '\0';
	return npy_raw(1, 0, h, data, dlen);
}

/* The file offset of the first `needle` in the header of a v1 file. */
static uint64_t at(const npyb_t *f, const char *needle)
{
	size_t k = strlen(needle);
	for (size_t i = 10; i + k <= f->n; i++)
		if (!memcmp(f->b + i, needle, k))
			return i;
	cr_assert_fail("%s not in the header", needle);
	return 0;
}

/* Reads the bytes, which must fail with exactly one diagnostic: `code` at
 * `path` and `offset`, its message containing `frag` and `frag2`. */
static void fails(const npyb_t *f, nnn_status_t code, const char *path, uint64_t offset, const char *frag,
                  const char *frag2)
{
	nnn_npy_t a;
	nnn_diags_t d;
	nnn_status_t st;
	char line[1024];

	memset(&a, 0xab, sizeof a);
	nnn_diags_init(&d);
	st = nnn_npy_read_mem(f->b, f->n, &a, &d);
	cr_assert_eq(st, code, "got %s, expected %s: %s", nnn_status_name(st), nnn_status_name(code),
	             d.n ? nnn_diag_format(&d.v[0], line, sizeof line) : "(no diagnostic)");
	cr_assert_eq(d.n, 1, "%zu diagnostics", d.n);
	nnn_diag_format(&d.v[0], line, sizeof line);
	cr_assert_eq(d.v[0].code, code);
	cr_assert_str_eq(d.v[0].path, path, "%s", line);
	if (offset != ANY_OFFSET)
		cr_assert_eq(d.v[0].offset, offset, "offset %llu, expected %llu: %s", (unsigned long long)d.v[0].offset,
		             (unsigned long long)offset, line);
	cr_assert_not_null(strstr(d.v[0].msg, frag), "message lacks \"%s\": %s", frag, line);
	if (frag2)
		cr_assert_not_null(strstr(d.v[0].msg, frag2), "message lacks \"%s\": %s", frag2, line);
	cr_assert_null(a.data);
	cr_assert_eq(a.count, 0);
	cr_assert_eq(a.shape.rank, 0);

	/* From a file, the reader takes another path first (the header, then
	 * read(2) into the array); it must fail exactly the same way. */
	nnn_diags_t df;
	nnn_diags_init(&df);
	spit(tpath("fails.npy"), f->b, f->n);
	cr_assert_eq(nnn_npy_read_file(tpath("fails.npy"), &a, &df), code, "from a file: %s", line);
	cr_assert_eq(df.n, 1, "from a file: %zu diagnostics", df.n);
	cr_assert_str_eq(df.v[0].path, d.v[0].path);
	cr_assert_eq(df.v[0].offset, d.v[0].offset);
	cr_assert_str_eq(df.v[0].msg, d.v[0].msg);
	cr_assert_null(a.data);
	nnn_diags_free(&df);
	nnn_diags_free(&d);
	free(f->b);
}

/* Reads the bytes, which must succeed with `shape`; returns the array. */
static nnn_npy_t reads(npyb_t *f, nnn_shape_t shape)
{
	nnn_npy_t a;
	nnn_diags_t d;
	char line[1024];
	nnn_diags_init(&d);
	nnn_status_t st = nnn_npy_read_mem(f->b, f->n, &a, &d);
	cr_assert_eq(st, NNN_OK, "%s", d.n ? nnn_diag_format(&d.v[0], line, sizeof line) : "");
	cr_assert_eq(d.n, 0);
	cr_assert_eq(a.shape.rank, shape.rank);
	for (int32_t i = 0; i < shape.rank; i++)
		cr_assert_eq(a.shape.dims[i], shape.dims[i], "dims[%d]", (int)i);
	cr_assert_not_null(a.data);

	/* From a file (read(2) straight into the array for '<f4'): the same. */
	nnn_npy_t b;
	spit(tpath("reads.npy"), f->b, f->n);
	cr_assert_eq(nnn_npy_read_file(tpath("reads.npy"), &b, &d), NNN_OK);
	cr_assert_eq(b.count, a.count);
	cr_assert_eq(b.shape.rank, a.shape.rank);
	cr_assert_eq(memcmp(b.data, a.data, a.count * sizeof *a.data), 0);
	nnn_npy_free(&b);
	free(f->b);
	f->b = NULL;
	nnn_diags_free(&d);
	return a;
}

static uint32_t bits(float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof u);
	return u;
}

static void same_floats(const float *got, const float *want, size_t n)
{
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(bits(got[i]), bits(want[i]), "element %zu: %a, expected %a", i, (double)got[i],
		             (double)want[i]);
}

/* ---- the writer's bytes ---- */

/* numpy.save(f, np.arange(6, dtype='<f4').reshape(2, 3)) writes exactly
 * this: the dict with sorted keys and a ", " after each item, 21 - 1 spaces
 * of room for shape[0] to grow (GROWTH_AXIS_MAX_DIGITS), then spaces and
 * '\n' to a multiple of 64 bytes: 10 + 59 + 20 + 38 + 1 = 128. */
static const char hdr_2x3[] = "\x93NUMPY\x01\x00"
                              "\x76\x00"
                              "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }" /* 59 */
                              SP10 SP10 /* 20: growth room */
                              SP10 SP10 SP10 "        " /* 38: padding */
                              "\n";

Test(npy, header_is_numpys_for_2x3)
{
	const float v[6] = { 0, 1, 2, 3, 4, 5 };
	static const unsigned char data[24] = { 0, 0, 0, 0,    0, 0, 0x80, 0x3f, 0, 0, 0, 0x40,
	                                        0, 0, 0x40, 0x40, 0, 0, 0x80, 0x40, 0, 0, 0xa0, 0x40 };
	nnn_shape_t s = SHAPE(2, 3);
	unsigned char *b, *fb;
	size_t n, fn;

	cr_assert_eq(sizeof hdr_2x3 - 1, 128);
	cr_assert_eq(nnn_npy_encode(&s, v, &b, &n, NULL), NNN_OK);
	cr_assert_eq(n, 128 + 24);
	cr_assert_eq(memcmp(b, hdr_2x3, 128), 0, "header: %.118s", (const char *)b + 10);
	cr_assert_eq(memcmp(b + 128, data, 24), 0);

	cr_assert_eq(nnn_npy_write_file(tpath("a.npy"), &s, v, NULL), NNN_OK);
	fb = slurp(tpath("a.npy"), &fn);
	cr_assert_eq(fn, n);
	cr_assert_eq(memcmp(fb, b, n), 0);
	free(fb);
	free(b);
}

static void header_is(const nnn_shape_t *s, const char *want, size_t want_len)
{
	unsigned char *b;
	size_t n;
	cr_assert_eq(nnn_npy_encode(s, NULL, &b, &n, NULL), NNN_OK); /* count 0 or data NULL: see below */
	cr_assert_eq(n, want_len, "length %zu, expected %zu", n, want_len);
	cr_assert_eq(memcmp(b, want, want_len), 0, "header: %.*s", (int)n - 10, (const char *)b + 10);
	free(b);
}

Test(npy, header_is_numpys_for_other_shapes)
{
	/* () has no growth room; (5,) keeps Python's 1-tuple comma. */
	static const char scalar[] = "\x93NUMPY\x01\x00"
	                             "\x76\x00"
	                             "{'descr': '<f4', 'fortran_order': False, 'shape': (), }" /* 55 */
	                             SP10 SP10 SP10 SP10 SP10 SP10 "  "                     /* 62 */
	                             "\n";
	static const char one[] = "\x93NUMPY\x01\x00"
	                          "\x76\x00"
	                          "{'descr': '<f4', 'fortran_order': False, 'shape': (0,), }" /* 57 */
	                          SP10 SP10                                                  /* 20 */
	                          SP10 SP10 SP10 SP10                                        /* 40 */
	                          "\n";
	/* A 7-digit shape[0] leaves 14 spaces of growth room. */
	static const char big0[] = "\x93NUMPY\x01\x00"
	                           "\x76\x00"
	                           "{'descr': '<f4', 'fortran_order': False, 'shape': (1000000, 0), }" /* 65 */
	                           SP10 "    "                                                       /* 14 */
	                           SP10 SP10 SP10 "        "                                         /* 38 */
	                           "\n";
	/* When dict + growth room + '\n' already end on a 64-byte boundary,
	 * numpy still pads: 64 more spaces (padlen is 64 - x % 64, never 0). */
	static const char full_pad[] =
		"\x93NUMPY\x01\x00"
		"\xb6\x00"
		"{'descr': '<f4', 'fortran_order': False, 'shape': (0, 300, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1), }" /* 97 */
		SP10 SP10                                                                                            /* 20 */
		SP10 SP10 SP10 SP10 SP10 SP10 "    "                                                                 /* 64 */
		"\n";
	nnn_shape_t s1 = SHAPE(0), s2 = SHAPE(1000000, 0), s3 = SHAPE(0, 300, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1);
	float one_float = 1.5f;
	unsigned char *b;
	size_t n;

	cr_assert_eq(nnn_npy_encode(&SCALAR, &one_float, &b, &n, NULL), NNN_OK);
	cr_assert_eq(n, 128 + 4);
	cr_assert_eq(memcmp(b, scalar, 128), 0, "header: %.118s", (const char *)b + 10);
	cr_assert_eq(memcmp(b + 128, "\x00\x00\xc0\x3f", 4), 0);
	free(b);
	header_is(&s1, one, sizeof one - 1);
	header_is(&s2, big0, sizeof big0 - 1);
	header_is(&s3, full_pad, sizeof full_pad - 1);
}

/* Every rank: aligned to 64, '\n' last, at least one space of padding, and
 * header_len consistent; big dims too. */
Test(npy, header_aligned_at_every_rank)
{
	const float one = 1.0f; /* the data of rank 0; the other shapes have a 0 */
	for (int32_t rank = 0; rank <= NNN_MAX_RANK; rank++) {
		for (int big = 0; big < 2; big++) {
			nnn_shape_t s = { .rank = rank };
			unsigned char *b;
			size_t n;
			for (int32_t i = 0; i < rank; i++)
				s.dims[i] = big ? (i == rank - 1 ? 0 : i == 0 ? INT64_MAX : 1) : (i == 0 ? 0 : i % 4 == 1 ? 17 : 2);
			cr_assert_eq(nnn_npy_encode(&s, &one, &b, &n, NULL), NNN_OK, "rank %d", (int)rank);
			size_t hl = (size_t)b[8] | (size_t)b[9] << 8;
			cr_assert_eq(n, 10 + hl + (rank == 0 ? 4 : 0));
			cr_assert_eq((10 + hl) % 64, 0, "rank %d: %zu bytes", (int)rank, 10 + hl);
			cr_assert_eq(b[10 + hl - 1], '\n');
			cr_assert_eq(b[10 + hl - 2], ' ');
			cr_assert_eq(memcmp(b, "\x93NUMPY\x01\x00", 8), 0);

			npyb_t f = { b, n };
			nnn_npy_t a = reads(&f, s);
			cr_assert_eq(a.count, rank == 0 ? 1u : 0u);
			nnn_npy_free(&a);
		}
	}
}

/* ---- round trips ---- */

Test(npy, roundtrip_shapes)
{
	static const struct {
		int32_t rank;
		int64_t dims[4];
		size_t count;
	} cases[] = {
		{ 0, { 0 }, 1 },        { 1, { 0 }, 0 },       { 1, { 5 }, 5 },          { 2, { 2, 3 }, 6 },
		{ 3, { 2, 0, 3 }, 0 },  { 4, { 1, 1, 1, 1 }, 1 }, { 3, { 3, 4, 5 }, 60 }, { 1, { 70000 }, 70000 },
	};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		nnn_shape_t s = shp(cases[c].rank, cases[c].dims);
		float *v = malloc((cases[c].count + 1) * sizeof *v);
		nnn_npy_t a;
		nnn_diags_t d;
		char line[1024];
		for (size_t i = 0; i < cases[c].count; i++)
			v[i] = (float)i * 0.25f - 7.0f;
		nnn_diags_init(&d);
		cr_assert_eq(nnn_npy_write_file(tpath("r.npy"), &s, v, &d), NNN_OK, "case %zu", c);
		cr_assert_eq(nnn_npy_read_file(tpath("r.npy"), &a, &d), NNN_OK, "case %zu: %s", c,
		             d.n ? nnn_diag_format(&d.v[0], line, sizeof line) : "");
		cr_assert_eq(a.shape.rank, s.rank);
		for (int32_t i = 0; i < s.rank; i++)
			cr_assert_eq(a.shape.dims[i], s.dims[i]);
		cr_assert_eq(a.count, cases[c].count, "case %zu", c);
		cr_assert_not_null(a.data);
		same_floats(a.data, v, a.count);
		nnn_npy_free(&a);
		cr_assert_null(a.data);
		free(v);
		nnn_diags_free(&d);
	}
}

/* NaN payloads, -0, subnormals and infinities survive bit for bit; rank 32. */
Test(npy, roundtrip_bit_patterns_rank_32)
{
	static const uint32_t odd[8] = { 0x7fa00001u, 0xffc12345u, 0x80000000u, 0x00000001u,
	                                 0x807fffffu, 0x7f800000u, 0xff800000u, 0x3eaaaaabu };
	float v[8];
	nnn_shape_t s = { .rank = NNN_MAX_RANK };
	nnn_npy_t a;
	memcpy(v, odd, sizeof v);
	for (int32_t i = 0; i < NNN_MAX_RANK; i++)
		s.dims[i] = i < 3 ? 2 : 1;
	cr_assert_eq(nnn_npy_write_file(tpath("b.npy"), &s, v, NULL), NNN_OK);
	cr_assert_eq(nnn_npy_read_file(tpath("b.npy"), &a, NULL), NNN_OK);
	cr_assert_eq(a.shape.rank, NNN_MAX_RANK);
	cr_assert_eq(a.count, 8);
	same_floats(a.data, v, 8);
	nnn_npy_free(&a);
	nnn_npy_free(NULL);
}

/* The written file keeps the mode of the one it replaces; no temp files left. */
Test(npy, write_replaces_atomically)
{
	float v[2] = { 1, 2 };
	nnn_shape_t s = SHAPE(2);
	nnn_npy_t a;
	struct stat sb;
	spit(tpath("m.npy"), "old", 3);
	cr_assert_eq(chmod(tpath("m.npy"), 0640), 0);
	cr_assert_eq(nnn_npy_write_file(tpath("m.npy"), &s, v, NULL), NNN_OK);
	cr_assert_eq(stat(tpath("m.npy"), &sb), 0);
	cr_assert_eq(sb.st_mode & 0777, 0640);
	cr_assert_eq(nnn_npy_read_file(tpath("m.npy"), &a, NULL), NNN_OK);
	same_floats(a.data, v, 2);
	nnn_npy_free(&a);
	char cmd[320];
	snprintf(cmd, sizeof cmd, "test $(ls -A %s | wc -l) -eq 1", tmp());
	cr_assert_eq(system(cmd), 0, "temporary files left in %s", tmp());
}

/* ---- reading every accepted dtype ---- */

Test(npy, reads_f4)
{
	static const unsigned char d[12] = { 0, 0, 0xc0, 0x3f, 0, 0, 0, 0xc0, 0xcd, 0xcc, 0xcc, 0x3d };
	npyb_t f = npy_v1("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", d, sizeof d);
	nnn_npy_t a = reads(&f, SHAPE(3));
	same_floats(a.data, (const float[]){ 1.5f, -2.0f, 0.1f }, 3);
	nnn_npy_free(&a);
}

Test(npy, reads_f8)
{
	const double v[6] = { 0.5, -1e10, 0.1, 1e-50, -INFINITY, 3.4028235e38 /* FLT_MAX + less than half an ulp */ };
	unsigned char d[48];
	memcpy(d, v, sizeof d); /* little-endian host */
	npyb_t f = npy_v1("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", d, sizeof d);
	nnn_npy_t a = reads(&f, SHAPE(2, 3));
	same_floats(a.data, (const float[]){ 0.5f, -1e10f, (float)0.1, 0.0f, -INFINITY, 3.40282347e38f }, 6);
	nnn_npy_free(&a);

	/* NaN stays NaN. */
	const double nan1 = NAN;
	f = npy_v1("{'descr': '<f8', 'fortran_order': False, 'shape': (), }", &nan1, 8);
	a = reads(&f, SCALAR);
	cr_assert_eq(a.count, 1);
	cr_assert(isnan(a.data[0]));
	nnn_npy_free(&a);
}

Test(npy, reads_i4)
{
	const int32_t v[4] = { INT32_MIN, 0, 7, 16777217 };
	npyb_t f = npy_v1("{'descr': '<i4', 'fortran_order': False, 'shape': (4,), }", v, sizeof v);
	nnn_npy_t a = reads(&f, SHAPE(4));
	same_floats(a.data, (const float[]){ -2147483648.0f, 0.0f, 7.0f, 16777216.0f }, 4);
	nnn_npy_free(&a);
}

Test(npy, reads_i8)
{
	const int64_t v[4] = { INT64_MIN, -1, (int64_t)1 << 53, 42 };
	npyb_t f = npy_v1("{'descr': '<i8', 'fortran_order': False, 'shape': (2, 2), }", v, sizeof v);
	nnn_npy_t a = reads(&f, SHAPE(2, 2));
	same_floats(a.data, (const float[]){ -9223372036854775808.0f, -1.0f, 9007199254740992.0f, 42.0f }, 4);
	nnn_npy_free(&a);
}

Test(npy, reads_u1_and_b1)
{
	const unsigned char u[3] = { 0, 1, 255 }, b[4] = { 0, 1, 1, 0 };
	npyb_t f = npy_v1("{'descr': '|u1', 'fortran_order': False, 'shape': (3,), }", u, sizeof u);
	nnn_npy_t a = reads(&f, SHAPE(3));
	same_floats(a.data, (const float[]){ 0.0f, 1.0f, 255.0f }, 3);
	nnn_npy_free(&a);
	f = npy_v1("{'descr': '|b1', 'fortran_order': False, 'shape': (2, 2), }", b, sizeof b);
	a = reads(&f, SHAPE(2, 2));
	same_floats(a.data, (const float[]){ 0.0f, 1.0f, 1.0f, 0.0f }, 4);
	nnn_npy_free(&a);
	/* Byte order means nothing for one byte: '<u1' is the same dtype. */
	f = npy_v1("{'descr': '<u1', 'fortran_order': False, 'shape': (3,), }", u, sizeof u);
	a = reads(&f, SHAPE(3));
	same_floats(a.data, (const float[]){ 0.0f, 1.0f, 255.0f }, 3);
	nnn_npy_free(&a);
}

Test(npy, reads_versions_2_and_3)
{
	const float v[2] = { 3.0f, -0.5f };
	/* 2.0 and 3.0 have a 4-byte header_len; padded to 64 with 12 bytes before. */
	char h[128];
	size_t n = (size_t)snprintf(h, sizeof h, "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2), }");
	while ((12 + n + 1) % 64)
		h[n++] = ' ';
	h[n++] = '\n';
	h[n] = '\0';
	for (unsigned major = 2; major <= 3; major++) {
		npyb_t f = npy_raw(major, 0, h, v, sizeof v);
		cr_assert_eq(f.n, 128 + 8);
		nnn_npy_t a = reads(&f, SHAPE(1, 2));
		same_floats(a.data, v, 2);
		nnn_npy_free(&a);
	}
}

Test(npy, reads_any_key_order_and_whitespace)
{
	const float v[6] = { 1, 2, 3, 4, 5, 6 };
	static const char *const hdrs[] = {
		"{\"shape\":(2,3),\"fortran_order\":False,\"descr\":\"<f4\"}",
		" {\n  'fortran_order' : False ,\n  'shape' : ( 2 ,\t3 , ) ,\n  'descr' : '<f4'\n}\n\n",
		"{'descr':'<f4','shape':(+2,3),'fortran_order':False,}  \r\n",
		"{'descr': '<f4', 'fortran_order': False, 'shape': (2L, 3L), }\n", /* Python 2 */
	};
	for (size_t i = 0; i < sizeof hdrs / sizeof hdrs[0]; i++) {
		npyb_t f = npy_raw(1, 0, hdrs[i], v, sizeof v);
		nnn_npy_t a = reads(&f, SHAPE(2, 3));
		same_floats(a.data, v, 6);
		nnn_npy_free(&a);
	}
}

Test(npy, reads_scalar_and_empty)
{
	const float v = 42.0f;
	npyb_t f = npy_v1("{'descr': '<f4', 'fortran_order': False, 'shape': (), }", &v, 4);
	nnn_npy_t a = reads(&f, SCALAR);
	cr_assert_eq(a.count, 1);
	cr_assert_eq(a.data[0], 42.0f);
	nnn_npy_free(&a);
	f = npy_v1("{'descr': '<f8', 'fortran_order': False, 'shape': (0, 3), }", NULL, 0);
	a = reads(&f, SHAPE(0, 3));
	cr_assert_eq(a.count, 0);
	nnn_npy_free(&a);
}

/* ---- every error ---- */

Test(npy, rejects_bad_magic)
{
	npyb_t f = npy_v1("{'descr': '<f4', 'fortran_order': False, 'shape': (), }", "\0\0\0\0", 4);
	f.b[5] = 'Z';
	fails(&f, NNN_E_NPY, "magic", 0, "NUMPZ", "expected \"\\x93NUMPY\"");
	f = npy_raw(1, 0, "", NULL, 0);
	memcpy(f.b, "PK\x03\x04\x14\x00\x00\x00\x08\x00", 10);
	fails(&f, NNN_E_NPY, "magic", 0, "zip archive", ".npz");
	f = npy_raw(1, 0, "", NULL, 0);
	memcpy(f.b, "NNN.", 4);
	fails(&f, NNN_E_NPY, "magic", 0, ".nnn model", NULL);
	f = npy_raw(1, 0, "", NULL, 0);
	f.n = 3;
	f.b[2] = 'X';
	fails(&f, NNN_E_NPY, "magic", 0, "expected", NULL);
}

Test(npy, rejects_bad_version)
{
	npyb_t f = npy_v1("{'descr': '<f4', 'fortran_order': False, 'shape': (), }", "\0\0\0\0", 4);
	f.b[6] = 4;
	fails(&f, NNN_E_NPY, "version", 6, "version 4.0", "expected 1.0, 2.0 or 3.0");
	f = npy_v1("{'descr': '<f4', 'fortran_order': False, 'shape': (), }", "\0\0\0\0", 4);
	f.b[7] = 1;
	fails(&f, NNN_E_NPY, "version", 6, "version 1.1", NULL);
}

Test(npy, rejects_truncated_preamble)
{
	npyb_t f = npy_raw(1, 0, "", NULL, 0);
	f.n = 0;
	fails(&f, NNN_E_TRUNCATED, "version", 0, "ends after 0 bytes", NULL);
	f = npy_raw(1, 0, "", NULL, 0);
	f.n = 9;
	fails(&f, NNN_E_TRUNCATED, "header_len", 9, "ends after 9 bytes", NULL);
	f = npy_raw(2, 0, "", NULL, 0);
	f.n = 11;
	fails(&f, NNN_E_TRUNCATED, "header_len", 11, "version 2.0", NULL);
}

Test(npy, rejects_truncated_header)
{
	npyb_t f = npy_v1("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", NULL, 0);
	f.n = 50;
	fails(&f, NNN_E_TRUNCATED, "header", 50, "header_len is 118", "40 bytes into the header");
	/* A 2.0 header_len of 4 GiB - 1 in a small file. */
	f = npy_raw(2, 0, "{}", NULL, 0);
	memset(f.b + 8, 0xff, 4);
	fails(&f, NNN_E_TRUNCATED, "header", 14, "header_len is 4294967295", NULL);
}

Test(npy, rejects_truncated_data)
{
	unsigned char d[24] = { 0 };
	npyb_t f = npy_v1("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", d, 20);
	fails(&f, NNN_E_TRUNCATED, "data", 128 + 20, "shape (2, 3) of '<f4' needs 6 elements of 4 bytes",
	      "ends 20 bytes after the header");
	f = npy_v1("{'descr': '<f4', 'fortran_order': False, 'shape': (), }", NULL, 0);
	fails(&f, NNN_E_TRUNCATED, "data", 128, "shape () of '<f4' needs 1 elements", NULL);
}

Test(npy, rejects_trailing_data)
{
	unsigned char d[28] = { 0 };
	npyb_t f = npy_v1("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", d, 28);
	fails(&f, NNN_E_DIM_MISMATCH, "data", 128 + 24, "4 bytes after the data",
	      "shape (2, 3) of '<f4' takes 24 bytes");
	f = npy_v1("{'descr': '|u1', 'fortran_order': False, 'shape': (0,), }", d, 1);
	fails(&f, NNN_E_DIM_MISMATCH, "data", 128, "1 bytes after the data", "shape (0,)");
}

Test(npy, rejects_fortran_order)
{
	npyb_t f = npy_v1("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", "", 0);
	uint64_t o = at(&f, "True");
	fails(&f, NNN_E_ENUM, "fortran_order", o, "fortran_order is True", "np.ascontiguousarray(x, dtype='<f4')");
	f = npy_v1("{'descr': '<f4', 'fortran_order': 0, 'shape': (2, 3), }", "", 0);
	o = at(&f, "0, 's");
	fails(&f, NNN_E_NPY, "fortran_order", o, "fortran_order: found \"0, 'shape'", "expected False");
}

Test(npy, rejects_big_endian)
{
	static const char *const be[] = { "'>f4'", "'>f8'", "'>i4'", "'>i8'" };
	for (size_t i = 0; i < 4; i++) {
		char dict[128], want[64];
		snprintf(dict, sizeof dict, "{'descr': %s, 'fortran_order': False, 'shape': (1,), }", be[i]);
		npyb_t f = npy_v1(dict, "\0\0\0\0\0\0\0\0", be[i][3] - '0');
		snprintf(want, sizeof want, "expected little-endian '<%c%c'", be[i][2], be[i][3]);
		fails(&f, NNN_E_ENUM, "descr", at(&f, be[i]), "big-endian", want);
	}
	npyb_t f = npy_v1("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }", "\0\0\0\0", 4);
	fails(&f, NNN_E_ENUM, "descr", 20, "descr is \">f4\", big-endian float32",
	      "save it with np.save(path, np.ascontiguousarray(x, dtype='<f4'))");
	f = npy_v1("{'descr': '=f4', 'fortran_order': False, 'shape': (1,), }", "\0\0\0\0", 4);
	fails(&f, NNN_E_ENUM, "descr", 20, "byte order '='", NULL);
}

Test(npy, rejects_unknown_dtype)
{
	static const char *const bad[] = { "'<c8'", "'<u3'", "'|V4'", "'<m8'", "'<U5'", "'|O'", "'float32'", "''", "'<f16'" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char dict[128];
		snprintf(dict, sizeof dict, "{'descr': %s, 'fortran_order': False, 'shape': (1,), }", bad[i]);
		npyb_t f = npy_v1(dict, "\0\0\0\0\0\0\0\0", 4);
		fails(&f, NNN_E_ENUM, "descr", 20, "expected '<f2', '<f4', '<f8', '|i1', '|u1', '<i2', '<u2', '<i4', '<u4', '<i8', '<u8' or '|b1'",
		      "dtype='<f4'");
	}
	npyb_t f = npy_v1("{'descr': [('x', '<f4'), ('y', '<i4')], 'fortran_order': False, 'shape': (1,), }", "", 0);
	fails(&f, NNN_E_ENUM, "descr", 20, "structured", "expected '<f2', '<f4'");
	f = npy_v1("{'descr': None, 'fortran_order': False, 'shape': (1,), }", "", 0);
	fails(&f, NNN_E_NPY, "descr", 20, "found \"None", "expected a dtype string");
}

Test(npy, rejects_negative_dims)
{
	npyb_t f = npy_v1("{'descr': '<f4', 'fortran_order': False, 'shape': (2, -3), }", "", 0);
	fails(&f, NNN_E_DIM_NEGATIVE, "shape[1]", at(&f, "-3"), "shape[1]: found \"-3\"", "expected an integer >= 0");
	f = npy_v1("{'descr': '<f4', 'fortran_order': False, 'shape': (- 1,), }", "", 0);
	fails(&f, NNN_E_DIM_NEGATIVE, "shape[0]", at(&f, "- 1"), "found \"- 1\"", NULL);
}

Test(npy, rejects_non_integer_dims)
{
	static const struct {
		const char *shape, *found;
	} bad[] = {
		{ "(2, 2.5)", "\"2.5\"" }, { "(2, 3e2)", "\"3e2\"" }, { "(2, 0x10)", "\"0x10\"" }, { "(2, None)", "\"None\"" },
		{ "(2, '3')", "\"'3'\"" }, { "(2, (3,))", "\"(3\"" }, { "(2, 3j)", "\"3j\"" },    { "(2, -)", "\"-\"" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char dict[128];
		snprintf(dict, sizeof dict, "{'descr': '<f4', 'fortran_order': False, 'shape': %s, }", bad[i].shape);
		npyb_t f = npy_v1(dict, "", 0);
		char want[64];
		snprintf(want, sizeof want, "found %s", bad[i].found);
		fails(&f, NNN_E_NPY, "shape[1]", at(&f, bad[i].shape) + 4, want, "expected a non-negative integer");
	}
}

Test(npy, rejects_shape_not_a_tuple)
{
	npyb_t f = npy_v1("{'descr': '<f4', 'fortran_order': False, 'shape': (5), }", "", 0);
	fails(&f, NNN_E_NPY, "shape", at(&f, "(5)"), "shape is (5), which Python reads as a number", "(5,)");
	f = npy_v1("{'descr': '<f4', 'fortran_order': False, 'shape': [2, 3], }", "", 0);
	fails(&f, NNN_E_NPY, "shape", at(&f, "[2"), "expected a tuple", NULL);
	f = npy_v1("{'descr': '<f4', 'fortran_order': False, 'shape': 6, }", "", 0);
	fails(&f, NNN_E_NPY, "shape", at(&f, "6, }"), "expected a tuple", NULL);
	f = npy_v1("{'descr': '<f4', 'fortran_order': False, 'shape': (2 3), }", "", 0);
	fails(&f, NNN_E_NPY, "shape", at(&f, "3)"), "expected ',' or ')'", NULL);
	f = npy_v1("{'descr': '<f4', 'fortran_order': False, 'shape': (2,, 3), }", "", 0);
	fails(&f, NNN_E_NPY, "shape[1]", at(&f, ", 3)"), "found \", 3), }", NULL);
}

Test(npy, rejects_dims_that_overflow)
{
	/* 2^32 * 2^32 = 2^64. */
	npyb_t f = npy_v1("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", "", 0);
	fails(&f, NNN_E_DIM_OVERFLOW, "shape[1]", at(&f, "4294967296)"), "passes 2^63 - 1 at shape[1]",
	      "(4294967296, 4294967296)");
	/* A zero elsewhere does not excuse it (numpy refuses these too). */
	f = npy_v1("{'descr': '<f4', 'fortran_order': False, 'shape': (0, 4294967296, 4294967296), }", "", 0);
	fails(&f, NNN_E_DIM_OVERFLOW, "shape[2]", at(&f, "4294967296)"), "passes 2^63 - 1", NULL);
	/* One dim past int64. */
	f = npy_v1("{'descr': '<f4', 'fortran_order': False, 'shape': (9223372036854775808,), }", "", 0);
	fails(&f, NNN_E_DIM_OVERFLOW, "shape[0]", at(&f, "9223"), "shape[0] is \"9223372036854775808\"",
	      "more than 2^63 - 1");
	/* 2^63 - 1 itself parses, and is then too large for the file. */
	f = npy_v1("{'descr': '|u1', 'fortran_order': False, 'shape': (9223372036854775807,), }", "", 0);
	fails(&f, NNN_E_TRUNCATED, "data", 128, "needs 9223372036854775807 elements", NULL);
}

Test(npy, rejects_too_many_dims)
{
	char dict[512];
	size_t n = (size_t)snprintf(dict, sizeof dict, "{'descr': '<f4', 'fortran_order': False, 'shape': (");
	for (int i = 0; i < NNN_MAX_RANK + 1; i++)
		n += (size_t)snprintf(dict + n, sizeof dict - n, "1, ");
	snprintf(dict + n, sizeof dict - n, "), }");
	npyb_t f = npy_v1(dict, "\0\0\0\0", 4);
	fails(&f, NNN_E_LIMIT, "shape", at(&f, "(") + 3 * NNN_MAX_RANK + 1, "more than 32 dimensions", NULL);
}

/* The count is checked against the bytes left before anything is
 * allocated: if the reader tried to allocate 2^62 floats first, malloc would
 * fail and the code would be NNN_E_NOMEM, not NNN_E_TRUNCATED. */
Test(npy, rejects_huge_claim_without_allocating)
{
	static const char h[] = "{'descr':'<f4','fortran_order':False,'shape':(1048576,1048576)}\n"; /* 64 */
	unsigned char d[100] = { 0 };
	npyb_t f = npy_raw(1, 0, h, d, 100 - 10 - (sizeof h - 1));
	cr_assert_eq(f.n, 100);
	fails(&f, NNN_E_TRUNCATED, "data", 100, "needs 1099511627776 elements of 4 bytes",
	      "ends 26 bytes after the header");
	f = npy_v1("{'descr': '<f4', 'fortran_order': False, 'shape': (2147483648, 2147483648), }", d, 4);
	fails(&f, NNN_E_TRUNCATED, "data", 132, "needs 4611686018427387904 elements", NULL);
	/* count * itemsize passes 2^64: 2^62 doubles. */
	f = npy_v1("{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904,), }", d, 16);
	fails(&f, NNN_E_TRUNCATED, "data", 144, "4611686018427387904 elements of 8 bytes", NULL);
}

Test(npy, rejects_malformed_header)
{
	static const struct {
		const char *dict, *path, *where, *msg;
	} bad[] = {
		{ "{'descr': '<f4', 'shape': (1,), }", "header", NULL, "no 'fortran_order' key" },
		{ "{'fortran_order': False, 'shape': (1,), }", "header", NULL, "no 'descr' key" },
		{ "{'descr': '<f4', 'fortran_order': False, }", "header", NULL, "no 'shape' key" },
		{ "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'extra': 1, }", "header", "'extra'",
		  "the key \"extra\"; expected only 'descr', 'fortran_order' and 'shape'" },
		{ "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", "descr", "'descr': '<f4', 'f",
		  "the key 'descr' twice" },
		{ "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), } x", "header", "x", "found \"x  " },
		{ "{'descr': '<f4', 'fortran_order': False, 'shape': (1,) ", "header", NULL, "expected ',' or '}'" },
		{ "{'descr': '<f4' 'fortran_order': False, 'shape': (1,), }", "header", "'fortran_order'",
		  "expected ',' or '}'" },
		{ "{'descr' '<f4', 'fortran_order': False, 'shape': (1,), }", "descr", "'<f4'", "expected ':'" },
		{ "{descr: '<f4', 'fortran_order': False, 'shape': (1,), }", "header", "descr:", "expected a key in quotes" },
		{ "{'descr: '<f4', 'fortran_order': False, 'shape': (1,), }", "header", "'descr:", "the key \"descr: \"" },
		{ "['descr', '<f4']", "header", "[", "expected a dict" },
		{ "", "header", NULL, "found the end of the header" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		npyb_t f = npy_v1(bad[i].dict, "\0\0\0\0", 4);
		uint64_t o = bad[i].where ? at(&f, bad[i].where) : ANY_OFFSET;
		if (!bad[i].where && strstr(bad[i].msg, "no '"))
			o = 10;
		fails(&f, NNN_E_NPY, bad[i].path, o, bad[i].msg, NULL);
	}
	/* Without padding, the unterminated dict ends at the end of the header. */
	npyb_t f = npy_raw(1, 0, "{'descr': '<f4'", NULL, 0);
	fails(&f, NNN_E_NPY, "header", 10 + 15, "found the end of the header", NULL);
}

Test(npy, rejects_bad_element_values)
{
	const unsigned char b[3] = { 1, 2, 0 };
	npyb_t f = npy_v1("{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }", b, 3);
	fails(&f, NNN_E_BOOL, "data[1]", 129, "data[1] is the byte 2", "expected 0 or 1");
	const double v[2] = { 1.0, -1e300 };
	f = npy_v1("{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }", v, sizeof v);
	fails(&f, NNN_E_RANGE, "data[1]", 136, "data[1] is -1e+300, outside float32's range", NULL);
	/* FLT_MAX + half an ulp rounds to infinity (ties to even). */
	const double h = 0x1.ffffffp127;
	f = npy_v1("{'descr': '<f8', 'fortran_order': False, 'shape': (), }", &h, 8);
	fails(&f, NNN_E_RANGE, "data[0]", 128, "outside float32's range", NULL);
}

Test(npy, rejects_null_arguments)
{
	nnn_npy_t a;
	nnn_diags_t d;
	nnn_diags_init(&d);
	cr_assert_eq(nnn_npy_read_mem(NULL, 10, &a, &d), NNN_E_USAGE);
	cr_assert_eq(nnn_npy_read_mem("", 0, NULL, &d), NNN_E_USAGE);
	cr_assert_eq(nnn_npy_read_file(NULL, &a, &d), NNN_E_USAGE);
	cr_assert_eq(nnn_npy_read_file("x", NULL, &d), NNN_E_USAGE);
	cr_assert_eq(d.n, 4);
	nnn_diags_free(&d);
}

/* ---- files ---- */

Test(npy, read_file_errors)
{
	nnn_npy_t a;
	nnn_diags_t d;
	nnn_diags_init(&d);
	cr_assert_eq(nnn_npy_read_file(tpath("missing.npy"), &a, &d), NNN_E_IO);
	cr_assert_not_null(strstr(d.v[0].msg, "missing.npy"));
	cr_assert_not_null(strstr(d.v[0].msg, "No such file"));
	cr_assert_eq(nnn_npy_read_file(tmp(), &a, &d), NNN_E_IO);
	cr_assert_not_null(strstr(d.v[1].msg, "is a directory"), "%s", d.v[1].msg);
	spit(tpath("empty.npy"), "", 0);
	cr_assert_eq(nnn_npy_read_file(tpath("empty.npy"), &a, &d), NNN_E_TRUNCATED);
	spit(tpath("bad.npy"), "\x93NUMPY\x01\x00\x02\x00{}", 12);
	cr_assert_eq(nnn_npy_read_file(tpath("bad.npy"), &a, &d), NNN_E_NPY);
	cr_assert_null(a.data);
	nnn_diags_free(&d);
}

/* ---- nnn_npy_map: in place when it can be, the same values either way ---- */

static nnn_npy_view_t maps(const char *path, nnn_shape_t shape)
{
	nnn_npy_view_t v;
	nnn_diags_t d;
	char line[1024];
	nnn_diags_init(&d);
	nnn_status_t st = nnn_npy_map(path, &v, &d);
	cr_assert_eq(st, NNN_OK, "%s", d.n ? nnn_diag_format(&d.v[0], line, sizeof line) : "");
	cr_assert_eq(v.shape.rank, shape.rank);
	for (int32_t i = 0; i < shape.rank; i++)
		cr_assert_eq(v.shape.dims[i], shape.dims[i], "dims[%d]", (int)i);
	nnn_diags_free(&d);
	return v;
}

Test(npy, map_f4_in_place)
{
	const float x[6] = { 1.5f, -2, 0.1f, 0, -0.0f, 3e38f };
	nnn_shape_t s = SHAPE(2, 3);
	cr_assert_eq(nnn_npy_write_file(tpath("m.npy"), &s, x, NULL), NNN_OK);
	nnn_npy_view_t v = maps(tpath("m.npy"), s);
	cr_assert_eq(v.in_place, 1);
	cr_assert_eq(v.count, 6);
	cr_assert_str_eq(v.dtype, "float32");
	cr_assert_eq(v.kind, 'f');
	same_floats(v.data, x, 6);
	nnn_npy_unmap(&v);
	cr_assert_null(v.data);
	nnn_npy_unmap(&v); /* twice, and NULL: harmless */
	nnn_npy_unmap(NULL);

	/* Empty arrays map too, with data not NULL. */
	s = SHAPE(0, 3);
	cr_assert_eq(nnn_npy_write_file(tpath("e.npy"), &s, NULL, NULL), NNN_OK);
	v = maps(tpath("e.npy"), s);
	cr_assert_not_null(v.data);
	cr_assert_eq(v.count, 0);
	nnn_npy_unmap(&v);
}

Test(npy, map_converts_other_dtypes_and_unaligned_data)
{
	const int32_t i4[3] = { -7, 0, 16777217 };
	npyb_t f = npy_v1("{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }", i4, sizeof i4);
	spit(tpath("i.npy"), f.b, f.n);
	free(f.b);
	nnn_npy_view_t v = maps(tpath("i.npy"), SHAPE(3));
	cr_assert_eq(v.in_place, 0);
	cr_assert_str_eq(v.dtype, "int32", "the file's dtype, not float32");
	cr_assert_eq(v.kind, 'i');
	same_floats(v.data, (const float[]){ -7.0f, 0.0f, 16777216.0f }, 3);
	nnn_npy_unmap(&v);

	/* A header that leaves the data at an odd offset: copied, not misread. */
	const float x[2] = { 0.25f, -8 };
	f = npy_raw(1, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), } \n", x, sizeof x);
	cr_assert_neq((10 + strlen("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), } \n")) % 4, 0);
	spit(tpath("odd.npy"), f.b, f.n);
	free(f.b);
	v = maps(tpath("odd.npy"), SHAPE(2));
	cr_assert_eq(v.in_place, 0);
	same_floats(v.data, x, 2);
	nnn_npy_unmap(&v);
}

Test(npy, map_errors_leave_a_zeroed_view)
{
	nnn_npy_view_t v;
	nnn_diags_t d;
	nnn_diags_init(&d);
	memset(&v, 0xab, sizeof v);
	cr_assert_eq(nnn_npy_map(tpath("missing.npy"), &v, &d), NNN_E_IO);
	cr_assert_null(v.data);
	cr_assert_not_null(strstr(d.v[0].msg, "missing.npy"));
	const float x[4] = { 1, 2, 3, 4 };
	npyb_t f = npy_v1("{'descr': '<f4', 'fortran_order': False, 'shape': (5,), }", x, sizeof x);
	spit(tpath("short.npy"), f.b, f.n);
	free(f.b);
	memset(&v, 0xab, sizeof v);
	cr_assert_eq(nnn_npy_map(tpath("short.npy"), &v, &d), NNN_E_TRUNCATED);
	cr_assert_null(v.data);
	cr_assert_eq(v.count, 0);
	const unsigned char b1[2] = { 1, 2 };
	f = npy_v1("{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }", b1, sizeof b1);
	spit(tpath("bool.npy"), f.b, f.n);
	free(f.b);
	cr_assert_eq(nnn_npy_map(tpath("bool.npy"), &v, &d), NNN_E_BOOL);
	cr_assert_null(v.data);
	cr_assert_eq(nnn_npy_map(NULL, &v, &d), NNN_E_USAGE);
	cr_assert_eq(nnn_npy_map(tpath("bool.npy"), NULL, &d), NNN_E_USAGE);
	nnn_diags_free(&d);
}

Test(npy, write_rejects_bad_arguments)
{
	float v[4] = { 0 };
	nnn_shape_t neg = SHAPE(2, -1), big = SHAPE(4294967296, 4294967296), ok = SHAPE(2, 2);
	nnn_shape_t deep = { .rank = NNN_MAX_RANK + 1 }, minus = { .rank = -1 };
	unsigned char *b = (unsigned char *)1;
	size_t n = 1;
	nnn_diags_t d;
	nnn_diags_init(&d);
	cr_assert_eq(nnn_npy_encode(&neg, v, &b, &n, &d), NNN_E_DIM_NEGATIVE);
	cr_assert_null(b);
	cr_assert_eq(n, 0);
	cr_assert_str_eq(d.v[0].path, "shape[1]");
	cr_assert_eq(nnn_npy_encode(&big, v, &b, &n, &d), NNN_E_DIM_OVERFLOW);
	cr_assert_str_eq(d.v[1].path, "shape[1]");
	cr_assert_eq(nnn_npy_encode(&deep, v, &b, &n, &d), NNN_E_LIMIT);
	cr_assert_eq(nnn_npy_encode(&minus, v, &b, &n, &d), NNN_E_NPY);
	cr_assert_eq(nnn_npy_encode(&ok, NULL, &b, &n, &d), NNN_E_USAGE);
	cr_assert_eq(nnn_npy_encode(NULL, v, &b, &n, &d), NNN_E_USAGE);
	cr_assert_eq(nnn_npy_encode(&ok, v, NULL, &n, &d), NNN_E_USAGE);
	cr_assert_eq(nnn_npy_write_file(tpath("w.npy"), &neg, v, &d), NNN_E_DIM_NEGATIVE);
	cr_assert_eq(nnn_npy_write_file(NULL, &ok, v, &d), NNN_E_USAGE);
	cr_assert_eq(d.n, 9);
	cr_assert_eq(access(tpath("w.npy"), F_OK), -1);
	/* A folder that does not exist. */
	cr_assert_eq(nnn_npy_write_file(tpath("no/such/dir.npy"), &ok, v, &d), NNN_E_IO);
	nnn_diags_free(&d);
}

/* ---- "-": standard input and output ---- */

/* Runs reader on `path` as stdin and restores stdin. */
static nnn_status_t read_stdin_from(int fd, nnn_npy_t *a, nnn_diags_t *d)
{
	int saved = dup(STDIN_FILENO);
	cr_assert_geq(saved, 0);
	cr_assert_eq(dup2(fd, STDIN_FILENO), STDIN_FILENO);
	close(fd);
	nnn_status_t st = nnn_npy_read_file("-", a, d);
	dup2(saved, STDIN_FILENO);
	close(saved);
	return st;
}

Test(npy, stdin_regular_file)
{
	float v[3] = { 1, 2, 3 };
	nnn_shape_t s = SHAPE(3);
	nnn_npy_t a;
	cr_assert_eq(nnn_npy_write_file(tpath("in.npy"), &s, v, NULL), NNN_OK);
	cr_assert_eq(read_stdin_from(open(tpath("in.npy"), O_RDONLY), &a, NULL), NNN_OK);
	same_floats(a.data, v, 3);
	nnn_npy_free(&a);
}

/* A pipe cannot be mapped: the bytes read are used in place instead. */
Test(npy, map_stdin_pipe)
{
	const float v[3] = { 1, -2, 0.5f };
	nnn_shape_t s = SHAPE(3, 1);
	unsigned char *b;
	size_t n;
	int fds[2];
	nnn_npy_view_t a;
	cr_assert_eq(nnn_npy_encode(&s, v, &b, &n, NULL), NNN_OK);
	cr_assert_eq(pipe(fds), 0);
	cr_assert_eq(write(fds[1], b, n), (ssize_t)n); /* smaller than the pipe buffer */
	close(fds[1]);
	free(b);
	int saved = dup(STDIN_FILENO);
	cr_assert_eq(dup2(fds[0], STDIN_FILENO), STDIN_FILENO);
	close(fds[0]);
	nnn_status_t st = nnn_npy_map("-", &a, NULL);
	dup2(saved, STDIN_FILENO);
	close(saved);
	cr_assert_eq(st, NNN_OK);
	cr_assert_eq(a.in_place, 1);
	same_floats(a.data, v, 3);
	nnn_npy_unmap(&a);
}

/* Through a pipe, larger than the pipe buffer and the first read buffer. */
Test(npy, stdin_pipe)
{
	enum { N = 100000 };
	float *v = malloc(N * sizeof *v);
	nnn_shape_t s = SHAPE(N / 4, 4);
	unsigned char *b;
	size_t n;
	int fds[2], status;
	nnn_npy_t a;
	for (size_t i = 0; i < N; i++)
		v[i] = (float)i / 3.0f;
	cr_assert_eq(nnn_npy_encode(&s, v, &b, &n, NULL), NNN_OK);
	cr_assert_eq(pipe(fds), 0);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		close(fds[0]);
		for (size_t k = 0; k < n;) {
			ssize_t w = write(fds[1], b + k, n - k);
			if (w <= 0)
				_exit(1);
			k += (size_t)w;
		}
		free(b); /* valgrind checks the child for leaks too */
		free(v);
		_exit(0);
	}
	close(fds[1]);
	cr_assert_eq(read_stdin_from(fds[0], &a, NULL), NNN_OK);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	cr_assert_eq(a.count, N);
	cr_assert_eq(a.shape.dims[0], N / 4);
	same_floats(a.data, v, N);
	nnn_npy_free(&a);
	free(b);
	free(v);
}

Test(npy, stdin_pipe_error_is_reported)
{
	int fds[2];
	nnn_npy_t a;
	nnn_diags_t d;
	nnn_diags_init(&d);
	cr_assert_eq(pipe(fds), 0);
	cr_assert_eq(write(fds[1], "\x93NUMPY\x01", 7), 7);
	close(fds[1]);
	cr_assert_eq(read_stdin_from(fds[0], &a, &d), NNN_E_TRUNCATED);
	cr_assert_eq(d.v[0].offset, 7);
	nnn_diags_free(&d);
}

Test(npy, stdout)
{
	float v[6] = { 6, 5, 4, 3, 2, 1 };
	nnn_shape_t s = SHAPE(3, 2);
	unsigned char *b, *fb;
	size_t n, fn;
	int fd = open(tpath("out.npy"), O_WRONLY | O_CREAT | O_TRUNC, 0644), saved = dup(STDOUT_FILENO);
	cr_assert_geq(fd, 0);
	fflush(stdout);
	cr_assert_eq(dup2(fd, STDOUT_FILENO), STDOUT_FILENO);
	close(fd);
	nnn_status_t st = nnn_npy_write_file("-", &s, v, NULL);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	cr_assert_eq(st, NNN_OK);
	cr_assert_eq(nnn_npy_encode(&s, v, &b, &n, NULL), NNN_OK);
	fb = slurp(tpath("out.npy"), &fn);
	cr_assert_eq(fn, n);
	cr_assert_eq(memcmp(fb, b, n), 0);
	free(fb);
	free(b);
}

/* ---- NumPy itself ---- */

static void need_numpy(void)
{
	if (system("python3 -c 'import numpy' >/dev/null 2>&1") != 0)
		cr_skip_test("python3 with numpy is not available (python3 -c 'import numpy' failed)");
}

static int python(const char *code)
{
	char cmd[4096];
	snprintf(cmd, sizeof cmd, "cd %s && python3 -c \"%s\"", tmp(), code);
	return system(cmd);
}

/* NumPy writes, we read: every accepted dtype, C order, odd shapes. */
Test(npy, numpy_writes_we_read)
{
	need_numpy();
	cr_assert_eq(python("import numpy as np\n"
	                    "x = np.arange(24).reshape(2, 3, 4)\n"
	                    "np.save('f4.npy', (x * 0.5 - 3).astype('<f4'))\n"
	                    "np.save('f8.npy', x / 3.0)\n"
	                    "np.save('i4.npy', (x - 12).astype('<i4'))\n"
	                    "np.save('i8.npy', (x * 1000000).astype('<i8'))\n"
	                    "np.save('u1.npy', (x * 10).astype('|u1'))\n"
	                    "np.save('b1.npy', x % 3 == 0)\n"
	                    "np.save('scalar.npy', np.float32(2.5))\n"
	                    "np.save('empty.npy', np.zeros((0, 5), dtype='<f4'))\n"
	                    "np.save('fortran.npy', np.asfortranarray(x.astype('<f4')))\n"
	                    "np.save('be.npy', x.astype('>f4'))\n"),
	             0);
	static const char *const names[] = { "f4", "f8", "i4", "i8", "u1", "b1" };
	for (size_t k = 0; k < 6; k++) {
		char name[16];
		nnn_npy_t a;
		snprintf(name, sizeof name, "%s.npy", names[k]);
		cr_assert_eq(nnn_npy_read_file(tpath(name), &a, NULL), NNN_OK, "%s", name);
		cr_assert_eq(a.shape.rank, 3);
		cr_assert_eq(a.count, 24);
		for (int i = 0; i < 24; i++) {
			float want = k == 0   ? (float)i * 0.5f - 3.0f
			             : k == 1 ? (float)(i / 3.0)
			             : k == 2 ? (float)(i - 12)
			             : k == 3 ? (float)((int64_t)i * 1000000)
			             : k == 4 ? (float)(i * 10)
			                      : (float)(i % 3 == 0);
			cr_assert_eq(bits(a.data[i]), bits(want), "%s[%d]: %a, expected %a", name, i, (double)a.data[i],
			             (double)want);
		}
		nnn_npy_free(&a);
	}
	nnn_npy_t a;
	cr_assert_eq(nnn_npy_read_file(tpath("scalar.npy"), &a, NULL), NNN_OK);
	cr_assert_eq(a.shape.rank, 0);
	cr_assert_eq(a.data[0], 2.5f);
	nnn_npy_free(&a);
	cr_assert_eq(nnn_npy_read_file(tpath("empty.npy"), &a, NULL), NNN_OK);
	cr_assert_eq(a.count, 0);
	nnn_npy_free(&a);
	cr_assert_eq(nnn_npy_read_file(tpath("fortran.npy"), &a, NULL), NNN_E_ENUM);
	cr_assert_eq(nnn_npy_read_file(tpath("be.npy"), &a, NULL), NNN_E_ENUM);
}

/* We write, NumPy reads; and NumPy's own np.save of the same array is the
 * same bytes as ours (an older NumPy, without GROWTH_AXIS_MAX_DIGITS,
 * leaves no growth room in the header: then the dict and data must match). */
Test(npy, numpy_reads_what_we_write)
{
	need_numpy();
	float v[24];
	for (int i = 0; i < 24; i++)
		v[i] = (float)i * 0.25f - 1.0f;
	static const struct {
		int32_t rank;
		int64_t dims[3];
		const char *py;
	} cases[] = {
		{ 2, { 4, 6 }, "(4, 6)" },   { 1, { 24 }, "(24,)" }, { 3, { 2, 3, 4 }, "(2, 3, 4)" },
		{ 0, { 0 }, "()" },          { 2, { 0, 7 }, "(0, 7)" }, { 1, { 1 }, "(1,)" },
	};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		nnn_shape_t s = shp(cases[c].rank, cases[c].dims);
		char code[1024];
		cr_assert_eq(nnn_npy_write_file(tpath("ours.npy"), &s, v, NULL), NNN_OK);
		snprintf(code, sizeof code,
		         "import numpy as np\n"
		         "a = np.load('ours.npy')\n"
		         "assert a.dtype == np.dtype('<f4') and a.shape == %s, (a.dtype, a.shape)\n"
		         "want = (np.arange(24, dtype='<f4') * 0.25 - 1)[:a.size].reshape(%s)\n"
		         "assert np.array_equal(a, want), a\n"
		         "np.save('theirs.npy', want)\n"
		         "o, t = open('ours.npy', 'rb').read(), open('theirs.npy', 'rb').read()\n"
		         "ho, ht = 10 + o[8] + 256 * o[9], 10 + t[8] + 256 * t[9]\n"
		         "assert o[:8] == t[:8] and o[10:ho].rstrip() == t[10:ht].rstrip(), (o[:ho], t[:ht])\n"
		         "assert o[ho:] == t[ht:], 'data differs'\n"
		         "import numpy.lib.format as F\n"
		         "assert o == t or not hasattr(F, 'GROWTH_AXIS_MAX_DIGITS'), (o[:ho], t[:ht])\n",
		         cases[c].py, cases[c].py);
		cr_assert_eq(python(code), 0, "shape %s", cases[c].py);
	}
}

/* ---- typed arrays ---- */

/* Every element type: written with its dtype's header, read back with the
 * same kind, width and bytes (NaN payloads, -0, the extremes), and the
 * float32 reader takes the same file as the values converted. */
Test(npy, typed_roundtrip_every_element_type)
{
	static const struct {
		nnn_ekind_t kind;
		int width;
		const char *descr, *name;
	} types[] = {
		{ NNN_EK_FLOAT, 2, "<f2", "float16" }, { NNN_EK_FLOAT, 4, "<f4", "float32" },
		{ NNN_EK_FLOAT, 8, "<f8", "float64" }, { NNN_EK_INT, 1, "|i1", "int8" },
		{ NNN_EK_UINT, 1, "|u1", "uint8" },    { NNN_EK_INT, 2, "<i2", "int16" },
		{ NNN_EK_UINT, 2, "<u2", "uint16" },   { NNN_EK_INT, 4, "<i4", "int32" },
		{ NNN_EK_UINT, 4, "<u4", "uint32" },   { NNN_EK_INT, 8, "<i8", "int64" },
		{ NNN_EK_UINT, 8, "<u8", "uint64" },   { NNN_EK_BFLOAT, 2, "<u2", "bfloat16" },
	};
	/* 6 elements of up to 8 bytes: arbitrary patterns (a float16 NaN with a payload, -0, ...) */
	static const unsigned char bytes[48] = { 0x01, 0x7e, 0x00, 0x80, 0xff, 0x7b, 0x00, 0xfc, 0x12, 0x34, 0x80, 0x00,
	                                         0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0xff, 0xff, 0xff, 0x7f,
	                                         0x00, 0x00, 0x00, 0x80, 0x55, 0xaa, 0x55, 0xaa, 0x01, 0x00, 0x00, 0x00,
	                                         0x00, 0x00, 0xf8, 0x7f, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xf0, 0xff };
	nnn_shape_t s = { .rank = 2, .dims = { 2, 3 } };
	for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
		unsigned char *buf;
		size_t len;
		char want[128];
		nnn_diags_t d;
		nnn_diags_init(&d);
		cr_assert_str_eq(nnn_npy_descr(types[t].kind, types[t].width), types[t].descr);
		cr_assert_str_eq(nnn_npy_dtype_name(types[t].kind, types[t].width), types[t].name);
		cr_assert_eq(nnn_npy_encode_typed(&s, types[t].kind, types[t].width, bytes, &buf, &len, &d), NNN_OK, "%s",
		             types[t].name);
		snprintf(want, sizeof want, "{'descr': '%s', 'fortran_order': False, 'shape': (2, 3), }", types[t].descr);
		cr_assert_eq(memcmp(buf + 10, want, strlen(want)), 0, "%s: %.60s", types[t].name, (const char *)buf + 10);
		cr_assert_eq(len % 64, (6u * (unsigned)types[t].width) % 64, "%s: the header is padded to 64", types[t].name);
		cr_assert_eq(memcmp(buf + len - 6 * (size_t)types[t].width, bytes, 6 * (size_t)types[t].width), 0);
		/* the same bytes through a file */
		cr_assert_eq(nnn_npy_write_typed_file(tpath("t.npy"), &s, types[t].kind, types[t].width, bytes, &d), NNN_OK);
		size_t flen;
		unsigned char *fb = slurp(tpath("t.npy"), &flen);
		cr_assert(flen == len && !memcmp(fb, buf, len), "%s: the file differs from the encoded bytes", types[t].name);
		free(fb);
		nnn_npy_typed_t a;
		cr_assert_eq(nnn_npy_read_typed_file(tpath("t.npy"), &a, &d), NNN_OK);
		cr_assert_eq(a.kind, types[t].kind == NNN_EK_BFLOAT ? NNN_EK_UINT : types[t].kind, "%s", types[t].name);
		cr_assert_eq(a.width, types[t].width);
		cr_assert_str_eq(a.dtype, types[t].kind == NNN_EK_BFLOAT ? "uint16" : types[t].name);
		cr_assert(a.count == 6 && a.shape.rank == 2 && a.shape.dims[0] == 2 && a.shape.dims[1] == 3);
		cr_assert_eq(memcmp(a.bytes, bytes, 6 * (size_t)a.width), 0, "%s: bytes changed", types[t].name);
		/* into a field of the type written: byte for byte ('<u2' into bfloat16 too) */
		unsigned char out[48];
		cr_assert_eq(nnn_npy_typed_as(&a, types[t].kind, types[t].width, out, "w", &d), NNN_OK, "%s", types[t].name);
		cr_assert_eq(memcmp(out, bytes, 6 * (size_t)a.width), 0);
		nnn_npy_typed_free(&a);
		cr_assert_null(a.bytes);
		/* the float32 reader converts (float16, int8, ... exactly) */
		nnn_npy_t f = { 0 };
		if (types[t].width <= 2)
			cr_assert_eq(nnn_npy_read_mem(buf, len, &f, &d), NNN_OK, "%s", types[t].name);
		for (size_t i = 0; i < 6 && types[t].kind != NNN_EK_BFLOAT && types[t].width <= 2; i++) {
			double v = nnn_elems_get((nnn_elems_t){ bytes, 6 }, types[t].kind, types[t].width, (int64_t)i);
			cr_assert((isnan(v) && isnan(f.data[i])) || (float)v == f.data[i], "%s[%zu]: %g, expected %g",
			          types[t].name, i, (double)f.data[i], v);
		}
		nnn_npy_free(&f);
		free(buf);
		cr_assert_eq(d.n, 0);
		nnn_diags_free(&d);
	}
}

/* A field takes its own dtype and exact widenings only; anything else is
 * refused with the field's path, the dtype found and the one expected. */
Test(npy, typed_as_refuses_what_changes_values)
{
	static const unsigned char h[6] = { 0x00, 0x3c, 0x01, 0x7e, 0x01, 0x00 }; /* float16 1, a NaN, 2^-24 */
	nnn_shape_t s = SHAPE(3);
	unsigned char *buf, out[24];
	size_t len;
	nnn_npy_typed_t a;
	nnn_diags_t d;
	nnn_diags_init(&d);
	cr_assert_eq(nnn_npy_encode_typed(&s, NNN_EK_FLOAT, 2, h, &buf, &len, NULL), NNN_OK);
	cr_assert_eq(nnn_npy_read_typed_mem(buf, len, &a, NULL), NNN_OK);
	free(buf);
	/* float16 into float32: exact */
	cr_assert_eq(nnn_npy_typed_as(&a, NNN_EK_FLOAT, 4, out, "layers[0].weights.data", &d), NNN_OK);
	float f[3];
	memcpy(f, out, sizeof f);
	cr_assert(f[0] == 1.0f && isnan(f[1]) && f[2] == 0x1p-24f);
	cr_assert_eq(nnn_f32_to_f16(f[1]), 0x7e01, "the NaN payload survives widening");
	/* a signaling NaN stays signaling: its bits, not a register's conversion */
	static const unsigned char snan[2] = { 0x01, 0xfc }; /* -sNaN, payload 1 */
	unsigned char *sb;
	size_t sl;
	nnn_shape_t s1 = SHAPE(1);
	nnn_npy_typed_t sn;
	cr_assert_eq(nnn_npy_encode_typed(&s1, NNN_EK_FLOAT, 2, snan, &sb, &sl, NULL), NNN_OK);
	cr_assert_eq(nnn_npy_read_typed_mem(sb, sl, &sn, NULL), NNN_OK);
	free(sb);
	cr_assert_eq(nnn_npy_typed_as(&sn, NNN_EK_FLOAT, 4, out, "x", NULL), NNN_OK);
	cr_assert_eq(nnn_le_u32(out), 0xff802000u, "0x%08x", nnn_le_u32(out));
	cr_assert_eq(nnn_npy_typed_as(&sn, NNN_EK_FLOAT, 8, out, "x", NULL), NNN_OK);
	cr_assert_eq(nnn_le_bits(out, 8), 0xfff0040000000000ull);
	nnn_npy_typed_free(&sn);
	cr_assert_eq(nnn_npy_typed_as(&a, NNN_EK_FLOAT, 8, out, "x", &d), NNN_OK);
	double g;
	memcpy(&g, out + 16, 8);
	cr_assert_eq(g, 0x1p-24);
	/* float16 into bfloat16, int8, float16 into uint16: refused */
	static const struct {
		nnn_ekind_t kind;
		int width;
		const char *want;
	} no[] = { { NNN_EK_BFLOAT, 2, "expected '<u2' (bfloat16's raw bits)" }, { NNN_EK_INT, 1, "expected '|i1'" },
	           { NNN_EK_UINT, 2, "expected '<u2'" } };
	for (size_t i = 0; i < sizeof no / sizeof no[0]; i++) {
		cr_assert_eq(nnn_npy_typed_as(&a, no[i].kind, no[i].width, out, "layers[0].weights.data", &d), NNN_E_ENUM);
		cr_assert_eq(d.n, 1);
		cr_assert_str_eq(d.v[0].path, "layers[0].weights.data");
		cr_assert_not_null(strstr(d.v[0].msg, "holds '<f2' (float16)"), "%s", d.v[0].msg);
		cr_assert_not_null(strstr(d.v[0].msg, no[i].want), "%s", d.v[0].msg);
		cr_assert_not_null(strstr(d.v[0].msg, "np.save"), "%s", d.v[0].msg);
		nnn_diags_free(&d);
		nnn_diags_init(&d);
	}
	nnn_npy_typed_free(&a);
	/* int8 -1 into int16 and int64 sign-extended; uint8 255 into int16; int8 into uint16 refused */
	static const unsigned char i8[2] = { 0xff, 0x80 };
	nnn_shape_t s2 = SHAPE(2);
	cr_assert_eq(nnn_npy_encode_typed(&s2, NNN_EK_INT, 1, i8, &buf, &len, NULL), NNN_OK);
	cr_assert_eq(nnn_npy_read_typed_mem(buf, len, &a, NULL), NNN_OK);
	free(buf);
	cr_assert_eq(nnn_npy_typed_as(&a, NNN_EK_INT, 8, out, "x", NULL), NNN_OK);
	int64_t w[2];
	memcpy(w, out, sizeof w);
	cr_assert(w[0] == -1 && w[1] == -128);
	cr_assert_eq(nnn_npy_typed_as(&a, NNN_EK_UINT, 2, out, "x", NULL), NNN_E_ENUM);
	cr_assert_eq(nnn_npy_typed_as(&a, NNN_EK_FLOAT, 4, out, "x", NULL), NNN_E_ENUM, "int into float is refused");
	a.kind = NNN_EK_UINT; /* the same bytes as uint8 */
	cr_assert_eq(nnn_npy_typed_as(&a, NNN_EK_INT, 2, out, "x", NULL), NNN_OK);
	cr_assert(out[0] == 0xff && out[1] == 0 && out[2] == 0x80 && out[3] == 0);
	cr_assert_eq(nnn_npy_typed_as(&a, NNN_EK_INT, 1, out, "x", NULL), NNN_E_ENUM, "uint8 into int8 is refused");
	nnn_npy_typed_free(&a);
	nnn_diags_free(&d);
	/* no dtype for a width of 3 */
	cr_assert_null(nnn_npy_descr(NNN_EK_INT, 3));
	cr_assert_eq(nnn_npy_write_typed_file(tpath("x.npy"), &s, NNN_EK_FLOAT, 3, h, NULL), NNN_E_USAGE);
}
