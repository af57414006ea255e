/* bench_codec: codec throughput and latency of libnnn, with the memcpy and
 * write(2) figures of the same machine beside each one.
 *
 * It writes two models of its own (about 3 MiB and 256 MiB, four Dense
 * layers each, so that only the tensor bytes differ) into a temporary
 * folder, measures, and removes everything again. Every figure is the median
 * of several runs with its min..max, a reference measured in the same run
 * and the ratio between them. The page cache is warm throughout: these are
 * CPU and memory figures, except the two that end in fsync.
 *
 *   bench_codec [--json] [--dir DIR]
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <nnn/file.h>
#include <nnn/model.h>
#include <nnn/validate.h>

#define MAX_RUNS 15
#define NLAYERS 4

/* Called through a volatile pointer so the compiler cannot see that the
 * destination is freed unread and drop the copy. */
static void *(*volatile copy_fn)(void *, const void *, size_t) = memcpy;
/* Where page-touching sums go, so the reads are not optimised out. */
static volatile unsigned long sink;

/* ---- measurements ---- */

/* One figure's runs: seconds and minor page faults of each. */
typedef struct series {
	double t[MAX_RUNS];
	long flt[MAX_RUNS];
	int n;
} series_t;

/* A model size and everything measured on it. */
typedef struct result {
	const char *name;   /* "3 MiB" */
	int32_t a, b;       /* layer widths: layers alternate [a, b] and [b, a] */
	int fast_runs;      /* runs of the microsecond figures */
	int slow_runs;      /* runs of the figures that move every byte */
	size_t bytes;       /* encoded size */
	series_t open, close, validate, validate_bytes, decode_view;
	series_t decode, enc_mem, enc_file;
	series_t cp_fresh, cp_reused, wr;
} result_t;

/* Paths the run creates, so that every exit path can remove them. */
typedef struct paths {
	char dir[512];
	char model[600], out[600], ref[600];
} paths_t;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static long minor_faults(void)
{
	struct rusage ru;
	if (getrusage(RUSAGE_SELF, &ru) != 0)
		return 0;
	return ru.ru_minflt;
}

/* A timed region: faults are read outside the clock so they cost nothing. */
typedef struct mark {
	long flt;
	double t;
} mark_t;

static mark_t start(void)
{
	mark_t m;
	m.flt = minor_faults();
	m.t = now();
	return m;
}

static void stop(series_t *s, mark_t m)
{
	double t = now();
	if (s->n < MAX_RUNS) {
		s->t[s->n] = t - m.t;
		s->flt[s->n] = minor_faults() - m.flt;
		s->n++;
	}
}

/* Prints what went wrong and reports failure; the caller cleans up. */
static bool ok(nnn_status_t st, const char *what, nnn_diags_t *d)
{
	char buf[1024];
	if (st == NNN_OK) {
		nnn_diags_clear(d);
		return true;
	}
	fprintf(stderr, "bench_codec: %s: %s (%s)\n", what, nnn_status_str(st), nnn_status_name(st));
	for (size_t i = 0; i < d->n; i++)
		fprintf(stderr, "bench_codec:   %s\n", nnn_diag_format(&d->v[i], buf, sizeof buf));
	nnn_diags_clear(d);
	return false;
}

static bool sys_fail(const char *what, const char *path)
{
	fprintf(stderr, "bench_codec: %s %s: %s\n", what, path, strerror(errno));
	return false;
}

/* Reads one byte of every page so later passes find the pages mapped. */
static void touch_pages(const unsigned char *p, size_t n)
{
	unsigned long sum = 0;
	long pg = sysconf(_SC_PAGESIZE);
	size_t step = pg > 0 ? (size_t)pg : 4096;
	for (size_t i = 0; i < n; i += step)
		sum += p[i];
	sink += sum;
}

/* ---- the models ---- */

/* Cheap and deterministic: a sawtooth in [-0.5, 0.5), no RNG needed. */
static float *weights(int64_t n, unsigned salt)
{
	float *v = malloc((size_t)n * sizeof *v);
	if (!v)
		return NULL;
	for (int64_t i = 0; i < n; i++)
		v[i] = (float)(((uint64_t)i * 2654435761u + salt) & 1023u) / 1024.0f - 0.5f;
	return v;
}

/* Builds the model in memory like tools/mkexample.c and writes it. */
static bool write_model(const result_t *r, const char *path, nnn_diags_t *d)
{
	static const char desc[] = "bench_codec: Dense chain with sawtooth weights";
	int32_t dims[NLAYERS][3]; /* weights [in, out], then bias [out] */
	float *data[2 * NLAYERS] = { NULL };
	nnn_layer_t layers[NLAYERS];
	nnn_model_t m;
	bool good = true;

	memset(layers, 0, sizeof layers);
	memset(&m, 0, sizeof m);
	for (int i = 0; i < NLAYERS && good; i++) {
		int32_t in = i % 2 ? r->b : r->a, out = i % 2 ? r->a : r->b;
		nnn_layer_t *L = &layers[i];
		dims[i][0] = in;
		dims[i][1] = out;
		dims[i][2] = out;
		data[2 * i] = weights((int64_t)in * out, (unsigned)i);
		data[2 * i + 1] = weights(out, (unsigned)i + 100);
		if (!data[2 * i] || !data[2 * i + 1]) {
			fprintf(stderr, "bench_codec: out of memory building the model\n");
			good = false;
			break;
		}
		L->id = NNN_LAYER_ID_DENSE;
		L->activation.id = NNN_ACTIVATION_ID_RELU;
		L->body.dense.neurons = out;
		L->body.dense.weights.dims.v = dims[i];
		L->body.dense.weights.dims.n = 2;
		L->body.dense.weights.requires_grad = true;
		L->body.dense.weights.data = nnn_f32s_view(data[2 * i], in * out);
		L->bias.dims.v = &dims[i][2];
		L->bias.dims.n = 1;
		L->bias.requires_grad = true;
		L->bias.data = nnn_f32s_view(data[2 * i + 1], out);
	}
	if (good) {
		m.description.ptr = desc;
		m.description.len = (int32_t)strlen(desc);
		m.layer_count = NLAYERS;
		m.layers = layers;
		m.param_count = nnn_model_param_total(&m);
		good = ok(nnn_model_write_file(&m, path, d), "writing the model", d);
	}
	for (int i = 0; i < 2 * NLAYERS; i++)
		free(data[i]);
	return good;
}

/* ---- the figures ---- */

/* open, validate (both ways), close: none of them should see tensor bytes. */
static bool bench_open(result_t *r, const char *path, nnn_diags_t *d)
{
	nnn_shape_t in = { .rank = 2, .dims = { 1, r->a } };

	for (int run = -1; run < r->fast_runs; run++) { /* run -1 warms up */
		nnn_file_t *f = NULL;
		const unsigned char *bytes;
		size_t size;
		nnn_status_t st;
		mark_t m;

		m = start();
		st = nnn_file_open(path, NULL, &f, d);
		if (run >= 0)
			stop(&r->open, m);
		if (!ok(st, "nnn_file_open", d))
			return false;

		m = start();
		st = nnn_model_validate(nnn_file_model(f), &in, NULL, d);
		if (run >= 0)
			stop(&r->validate, m);
		if (!ok(st, "nnn_model_validate", d)) {
			nnn_file_close(f);
			return false;
		}

		bytes = nnn_file_bytes(f, &size);
		m = start();
		st = nnn_validate_bytes(bytes, size, NULL, &in, d);
		if (run >= 0)
			stop(&r->validate_bytes, m);
		if (!ok(st, "nnn_validate_bytes", d)) {
			nnn_file_close(f);
			return false;
		}

		m = start();
		nnn_file_close(f);
		if (run >= 0)
			stop(&r->close, m);
	}
	return true;
}

/* Figures whose destination is already mapped: the zero-copy decode and
 * memcpy into a reused buffer. They run as a block before anything that
 * allocates and frees big buffers, because on some hosts (this one is a VM
 * that reclaims freed guest memory) the aftermath of freeing hundreds of MiB
 * slows even copies between mapped pages for seconds. */
static bool bench_reused(result_t *r, const unsigned char *src, size_t size, nnn_diags_t *d)
{
	unsigned char *reused = malloc(size);

	if (!reused) {
		fprintf(stderr, "bench_codec: cannot allocate %zu bytes\n", size);
		return false;
	}
	memset(reused, 0, size); /* pre-faulted: the reused-destination case */
	for (int run = -1; run < r->fast_runs; run++) {
		nnn_model_t *m = NULL;
		nnn_status_t st;
		mark_t t = start();
		st = nnn_model_decode(src, size, NULL, &m, d);
		if (run >= 0)
			stop(&r->decode_view, t);
		nnn_model_free(m);
		if (!ok(st, "nnn_model_decode (zero-copy)", d)) {
			free(reused);
			return false;
		}
	}
	for (int run = -1; run < r->slow_runs; run++) {
		mark_t t = start();
		copy_fn(reused, src, size);
		if (run >= 0)
			stop(&r->cp_reused, t);
	}
	free(reused);
	return true;
}

/* Figures that write into newly allocated memory: decode to owned memory,
 * encode to memory and memcpy into a fresh malloc, run by run in turn so
 * that drift hits all three alike. All read the same pre-faulted mapping. */
static bool bench_fresh(result_t *r, const nnn_model_t *model, const unsigned char *src, size_t size,
                        nnn_diags_t *d)
{
	nnn_decode_opts_t copy = { .flags = NNN_DECODE_COPY, .visit = NULL };

	for (int run = -1; run < r->slow_runs; run++) {
		nnn_model_t *m = NULL;
		unsigned char *buf = NULL;
		size_t len = 0;
		nnn_status_t st;
		bool same;
		mark_t t;

		t = start();
		st = nnn_model_decode(src, size, &copy, &m, d);
		if (run >= 0)
			stop(&r->decode, t);
		nnn_model_free(m);
		if (!ok(st, "nnn_model_decode (copy)", d))
			return false;

		t = start();
		buf = malloc(size);
		if (buf)
			copy_fn(buf, src, size);
		if (run >= 0)
			stop(&r->cp_fresh, t);
		free(buf);
		if (!buf) {
			fprintf(stderr, "bench_codec: cannot allocate %zu bytes\n", size);
			return false;
		}

		t = start();
		st = nnn_model_encode(model, &buf, &len, d);
		if (run >= 0)
			stop(&r->enc_mem, t);
		if (!ok(st, "nnn_model_encode", d))
			return false;
		/* Checked off the clock: the round trip must give the file's bytes. */
		same = len == size && memcmp(buf, src, size) == 0;
		free(buf);
		if (!same) {
			fprintf(stderr, "bench_codec: nnn_model_encode gave %zu bytes that differ from the file's %zu\n",
			        len, size);
			return false;
		}
	}
	return true;
}

/* write(2) of `size` bytes to a new file, then fsync and close. */
static bool write_plain(const char *path, const unsigned char *p, size_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return sys_fail("cannot create", path);
	while (size) {
		ssize_t k = write(fd, p, size);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			if (k == 0)
				errno = EIO;
			sys_fail("cannot write", path);
			close(fd);
			return false;
		}
		p += k;
		size -= (size_t)k;
	}
	if (fsync(fd) != 0) {
		sys_fail("cannot fsync", path);
		close(fd);
		return false;
	}
	if (close(fd) != 0)
		return sys_fail("cannot close", path);
	return true;
}

/* Encode to a file against plain write(2)+fsync of the same bytes. Both
 * create a new file each run (the old one is unlinked off the clock), so
 * neither pays for freeing the previous file's blocks. */
static bool bench_files(result_t *r, const nnn_model_t *model, const unsigned char *src, size_t size,
                        const paths_t *p, nnn_diags_t *d)
{
	for (int run = -1; run < r->slow_runs; run++) {
		nnn_status_t st;
		mark_t t;

		if (unlink(p->out) != 0 && errno != ENOENT)
			return sys_fail("cannot remove", p->out);
		t = start();
		st = nnn_model_write_file(model, p->out, d);
		if (run >= 0)
			stop(&r->enc_file, t);
		if (!ok(st, "nnn_model_write_file", d))
			return false;

		if (unlink(p->ref) != 0 && errno != ENOENT)
			return sys_fail("cannot remove", p->ref);
		t = start();
		if (!write_plain(p->ref, src, size))
			return false;
		if (run >= 0)
			stop(&r->wr, t);
	}
	return true;
}

static bool bench_model(result_t *r, const paths_t *p, nnn_diags_t *d)
{
	nnn_file_t *f = NULL;
	const unsigned char *src;
	bool good;

	if (!write_model(r, p->model, d))
		return false;
	if (!bench_open(r, p->model, d))
		return false;
	/* One zero-copy open serves as the encoders' model and as the source of
	 * every copy; reading it once here pre-faults the mapping. */
	if (!ok(nnn_file_open(p->model, NULL, &f, d), "nnn_file_open", d))
		return false;
	src = nnn_file_bytes(f, &r->bytes);
	touch_pages(src, r->bytes);
	good = bench_reused(r, src, r->bytes, d) && bench_fresh(r, nnn_file_model(f), src, r->bytes, d) &&
	       bench_files(r, nnn_file_model(f), src, r->bytes, p, d);
	nnn_file_close(f);
	return good;
}

/* ---- reporting ---- */

typedef struct stats {
	double med, min, max; /* microseconds, or GB/s for rates */
	long flt;             /* median minor faults per run */
	int n;
} stats_t;

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return (a > b) - (a < b);
}

static int cmp_long(const void *x, const void *y)
{
	long a = *(const long *)x, b = *(const long *)y;
	return (a > b) - (a < b);
}

/* Rates are taken run by run (bytes / seconds), then the median. */
static stats_t summarize(const series_t *s, bool rate, size_t bytes)
{
	double v[MAX_RUNS];
	long f[MAX_RUNS];
	stats_t st = { 0, 0, 0, 0, s->n };
	if (s->n == 0)
		return st;
	for (int i = 0; i < s->n; i++) {
		double t = s->t[i] > 0 ? s->t[i] : 1e-9;
		v[i] = rate ? (double)bytes / t / 1e9 : t * 1e6;
		f[i] = s->flt[i];
	}
	qsort(v, (size_t)s->n, sizeof *v, cmp_double);
	qsort(f, (size_t)s->n, sizeof *f, cmp_long);
	st.min = v[0];
	st.max = v[s->n - 1];
	st.med = s->n % 2 ? v[s->n / 2] : (v[s->n / 2 - 1] + v[s->n / 2]) / 2;
	st.flt = f[s->n / 2];
	return st;
}

/* One line of the table: a figure and up to two references. */
typedef struct row {
	const char *figure;
	bool rate;
	const series_t *s;
	const char *ref_name[2];
	const series_t *ref[2];
} row_t;

#define NROWS 11

/* Latencies are set against copying the file's bytes: far below 1 means
 * the cost does not grow with the tensor bytes. */
static int rows_of(const result_t *r, row_t *out)
{
	static const char *cp_file = "memcpy file bytes, reused dst";
	const row_t rows[NROWS] = {
		{ "open (mmap + zero-copy decode)", false, &r->open, { cp_file, NULL }, { &r->cp_reused, NULL } },
		{ "close (free + munmap)", false, &r->close, { cp_file, NULL }, { &r->cp_reused, NULL } },
		{ "nnn_model_validate", false, &r->validate, { cp_file, NULL }, { &r->cp_reused, NULL } },
		{ "nnn_validate_bytes (mapped)", false, &r->validate_bytes, { cp_file, NULL }, { &r->cp_reused, NULL } },
		{ "decode zero-copy (mapped)", false, &r->decode_view, { cp_file, NULL }, { &r->cp_reused, NULL } },
		{ "decode COPY to owned memory", true, &r->decode, { "memcpy, fresh dst", "memcpy, reused dst" },
		  { &r->cp_fresh, &r->cp_reused } },
		{ "encode to memory", true, &r->enc_mem, { "memcpy, fresh dst", "memcpy, reused dst" },
		  { &r->cp_fresh, &r->cp_reused } },
		{ "encode to file (write_file)", true, &r->enc_file, { "write(2) + fsync", NULL }, { &r->wr, NULL } },
		{ "ref: memcpy, fresh dst", true, &r->cp_fresh, { NULL, NULL }, { NULL, NULL } },
		{ "ref: memcpy, reused dst", true, &r->cp_reused, { NULL, NULL }, { NULL, NULL } },
		{ "ref: write(2) + fsync", true, &r->wr, { NULL, NULL }, { NULL, NULL } },
	};
	memcpy(out, rows, sizeof rows);
	return NROWS;
}

/* A value in the row's unit: GB/s, or a time scaled to us, ms or s. */
static void fmt_value(char *buf, size_t size, double v, bool rate, bool unit)
{
	if (rate)
		snprintf(buf, size, "%.2f%s", v, unit ? " GB/s" : "");
	else if (v < 1e3)
		snprintf(buf, size, "%.1f%s", v, unit ? " us" : "");
	else if (v < 1e6)
		snprintf(buf, size, "%.2f%s", v / 1e3, unit ? " ms" : "");
	else
		snprintf(buf, size, "%.2f%s", v / 1e6, unit ? " s" : "");
}

static void fmt_ratio(char *buf, size_t size, double ratio)
{
	if (ratio < 0.01)
		snprintf(buf, size, "%.2gx", ratio);
	else
		snprintf(buf, size, "%.2fx", ratio);
}

static void print_table(const result_t *res, int nres)
{
	printf("nnnkit codec benchmark: median of N runs [min .. max]; GB = 1e9 bytes; page cache warm;\n"
	       "all copies read the same pre-faulted mapping of the model file; flt = minor page faults per run\n");
	printf("%-8s %-31s %3s %12s %-21s %7s  %-30s %12s %9s\n", "model", "figure", "N", "median", "[min .. max]", "flt",
	       "reference", "ref median", "ratio");
	for (int k = 0; k < nres; k++) {
		const result_t *r = &res[k];
		row_t rows[NROWS];
		int n = rows_of(r, rows);
		char name[48];
		snprintf(name, sizeof name, "%s", r->name);
		for (int i = 0; i < n; i++) {
			const row_t *w = &rows[i];
			stats_t s = summarize(w->s, w->rate, r->bytes);
			char med[32], lo[32], hi[32], spread[72];
			fmt_value(med, sizeof med, s.med, w->rate, true);
			/* Min and max in the median's unit so the columns line up. */
			if (w->rate || s.med < 1e3) {
				fmt_value(lo, sizeof lo, s.min, w->rate, false);
				fmt_value(hi, sizeof hi, s.max, w->rate, false);
			} else {
				double scale = s.med < 1e6 ? 1e3 : 1e6;
				snprintf(lo, sizeof lo, "%.2f", s.min / scale);
				snprintf(hi, sizeof hi, "%.2f", s.max / scale);
			}
			snprintf(spread, sizeof spread, "[%s .. %s]", lo, hi);
			for (int j = 0; j < 2; j++) {
				char refv[32] = "", ratio[32] = "";
				if (j > 0 && !w->ref[j])
					break;
				if (w->ref[j]) {
					stats_t rs = summarize(w->ref[j], w->rate, r->bytes);
					fmt_value(refv, sizeof refv, rs.med, w->rate, true);
					fmt_ratio(ratio, sizeof ratio, rs.med > 0 ? s.med / rs.med : 0);
				}
				if (j == 0)
					printf("%-8s %-31s %3d %12s %-21s %7ld  %-30s %12s %9s\n", i == 0 ? name : "", w->figure, s.n,
					       med, spread, s.flt, w->ref_name[0] ? w->ref_name[0] : "-", refv,
					       ratio[0] ? ratio : "-");
				else
					printf("%-8s %-31s %3s %12s %-21s %7s  %-30s %12s %9s\n", "", "", "", "", "", "", w->ref_name[j],
					       refv, ratio);
			}
		}
		if (k + 1 < nres)
			printf("\n");
	}
}

static void print_stats_json(const stats_t *s, bool rate)
{
	printf("\"unit\": \"%s\", \"runs\": %d, \"median\": %.6g, \"min\": %.6g, \"max\": %.6g, \"minor_faults\": %ld",
	       rate ? "GB/s" : "us", s->n, s->med, s->min, s->max, s->flt);
}

static void print_json(const result_t *res, int nres)
{
	printf("{\n  \"benchmark\": \"nnnkit codec\",\n  \"gb\": 1e9,\n  \"models\": [\n");
	for (int k = 0; k < nres; k++) {
		const result_t *r = &res[k];
		row_t rows[NROWS];
		int n = rows_of(r, rows);
		printf("    {\n      \"model\": \"%s\", \"bytes\": %zu, \"layers\": %d,\n      \"figures\": [\n", r->name,
		       r->bytes, NLAYERS);
		for (int i = 0; i < n; i++) {
			const row_t *w = &rows[i];
			stats_t s = summarize(w->s, w->rate, r->bytes);
			printf("        { \"figure\": \"%s\", ", w->figure);
			print_stats_json(&s, w->rate);
			printf(", \"references\": [");
			for (int j = 0; j < 2 && w->ref[j]; j++) {
				stats_t rs = summarize(w->ref[j], w->rate, r->bytes);
				printf("%s{ \"reference\": \"%s\", ", j ? ", " : "", w->ref_name[j]);
				print_stats_json(&rs, w->rate);
				printf(", \"ratio\": %.6g }", rs.med > 0 ? s.med / rs.med : 0);
			}
			printf("] }%s\n", i + 1 < n ? "," : "");
		}
		printf("      ]\n    }%s\n", k + 1 < nres ? "," : "");
	}
	printf("  ]\n}\n");
}

/* ---- setup and cleanup ---- */

/* A fresh folder under `base` (created if missing), else under /tmp. */
static bool make_dir(paths_t *p, const char *base)
{
	const char *bases[2] = { base, "/tmp" };
	for (int i = 0; i < 2; i++) {
		if (mkdir(bases[i], 0755) != 0 && errno != EEXIST)
			continue;
		snprintf(p->dir, sizeof p->dir, "%s/bench_codec.XXXXXX", bases[i]);
		if (mkdtemp(p->dir)) {
			snprintf(p->model, sizeof p->model, "%s/model.nnn", p->dir);
			snprintf(p->out, sizeof p->out, "%s/encoded.nnn", p->dir);
			snprintf(p->ref, sizeof p->ref, "%s/write.bin", p->dir);
			return true;
		}
	}
	fprintf(stderr, "bench_codec: cannot create a folder under %s or /tmp: %s\n", base, strerror(errno));
	p->dir[0] = '\0';
	return false;
}

static void remove_files(const paths_t *p)
{
	if (!p->dir[0])
		return;
	unlink(p->model);
	unlink(p->out);
	unlink(p->ref);
}

static int usage(FILE *to)
{
	fprintf(to, "usage: bench_codec [--json] [--dir DIR]\n"
	            "  --json     print the figures as JSON instead of a table\n"
	            "  --dir DIR  where to write the temporary models (default build/bench, else /tmp)\n");
	return to == stdout ? 0 : 2;
}

int main(int argc, char **argv)
{
	result_t res[2] = {
		/* 4 x [512, 384] floats: 3 MiB of weights. */
		{ .name = "3 MiB", .a = 512, .b = 384, .fast_runs = 15, .slow_runs = 15 },
		/* 4 x [4096, 4096] floats: 256 MiB of weights. */
		{ .name = "256 MiB", .a = 4096, .b = 4096, .fast_runs = 15, .slow_runs = 5 },
	};
	const char *base = "build/bench";
	bool json = false, good = true;
	paths_t p;
	nnn_diags_t d;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			json = true;
		else if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc)
			base = argv[++i];
		else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
			return usage(stdout);
		else
			return usage(stderr);
	}
	memset(&p, 0, sizeof p);
	if (!make_dir(&p, base))
		return 1;
	nnn_diags_init(&d);
	for (int k = 0; k < 2 && good; k++) {
		good = bench_model(&res[k], &p, &d);
		remove_files(&p); /* frees the disk and page cache before the next size */
	}
	nnn_diags_free(&d);
	if (rmdir(p.dir) != 0) {
		sys_fail("cannot remove", p.dir);
		good = false;
	}
	if (!good)
		return 1;
	if (json)
		print_json(res, 2);
	else
		print_table(res, 2);
	return 0;
}
