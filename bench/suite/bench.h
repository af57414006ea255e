/* bench.h: nnnbench, the one benchmark of `make bench`.
 *
 * Every figure is measured beside a reference in the same run (memcpy, a
 * plain read loop, write(2), an empty process, OpenBLAS sgemm, PyTorch),
 * their runs interleaved so that the load of a shared machine hits both
 * alike, and lands as one row of one table: median, min..max, reference,
 * ratio, target, met. Inference rows have a second reference too (ONNX
 * Runtime is their reference, PyTorch the second), with its own median
 * and ratio; the target is always for the first reference's ratio.
 *
 *   codec.c   models, open, validate, check-finite, decode, encode
 *   procs.c   whole nnnkit processes: info, validate, run (time, peak RSS)
 *   infer.c   inference against ONNX Runtime and PyTorch: worker processes, interleaved;
 *             the example classifier and every other network of mkexample --list
 *   peak.c    the core's FMA peak, measured: what "% of peak" is of
 *   worker.c  the driver's side of a worker process (infer.c, tiny.c)
 *   tiny.c    tiny models at batch 1: nnn_plan_run against ONNX Runtime's C API Run
 *   py.c      the Python package's Plan.run at batch 1 against nnn_plan_run (bench/py_bench.py)
 *   narrow.c  Dense layers of float16 and int8 weights against float32 ones, at batch 1 (grown tree)
 *   table.c   rows, statistics, text / Markdown / JSON output
 *   main.c    options, order, the machine
 */
#ifndef NNNBENCH_H
#define NNNBENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <nnn/model.h>
#include <nnn/run.h>

#define MAX_RUNS 64 /* the FMA peak is measured in every round of every inference section */
#define BN_PATH 4352 /* a folder of up to 4095 bytes and a file name */

/* ---- measurements (table.c) ---- */

double bn_now(void);
/* Seconds for n calls of nnn_plan_run(p, x, y); -1 when a call fails. */
double bn_time_plan(nnn_plan_t *p, const float *x, float *y, long n);
/* Minor page faults of this process so far. */
long bn_faults(void);
/* Sleeps `seconds`. */
void bn_sleep(double seconds);

/* Raw samples of one figure: seconds (or bytes, or images per second:
 * whatever the row's unit is computed from), one per run. */
typedef struct series {
	double v[MAX_RUNS];
	long faults[MAX_RUNS];
	int n;
} series_t;

void bn_add(series_t *s, double v, long faults);

/* How samples become the row's unit. */
typedef enum unit {
	U_US,     /* seconds -> microseconds */
	U_MS,     /* seconds -> milliseconds */
	U_S,      /* seconds */
	U_GBS,    /* seconds for `per` bytes -> GB/s */
	U_IMGS,   /* seconds for `per` images -> images/s */
	U_GFLOPS, /* seconds for `per` FLOPs -> GFLOP/s */
	U_MIB,    /* bytes -> MiB */
} unit_t;

typedef struct stats {
	double med, min, max; /* in the row's unit */
	long faults;          /* median faults per run */
	int n;
} stats_t;

stats_t bn_stats(const series_t *s, unit_t u, double per);
/* Whether bigger is better in this unit. */
bool bn_unit_rate(unit_t u);

/* ---- the table (table.c) ---- */

typedef enum target_kind {
	T_NONE,
	T_BELOW,     /* median < value, in the row's unit */
	T_RATIO_MIN, /* median / reference >= value */
	T_RATIO_MAX, /* median / reference <= value */
} target_kind_t;

typedef struct row {
	char section[64];  /* "open", "inference, 1 thread", ... */
	char figure[96];
	char what[32];     /* the model, batch, or case */
	unit_t unit;
	stats_t fig;
	char ref_name[96]; /* "" when there is none */
	stats_t ref;       /* ref.n == 0: not measured (not installed, skipped) */
	char ref2_name[96]; /* a second reference (ONNX Runtime), "" when none; no target */
	stats_t ref2;
	target_kind_t target; /* of the ratio to the first reference */
	double target_value;
	bool show_faults;
	bool percent;         /* the ratio (and a ratio target) shown as a percentage: "% of peak" */
} row_t;

typedef struct table {
	row_t *rows;
	int n, cap;
	char **notes; /* lines printed above the table */
	int nnotes, notes_cap;
} table_t;

/* Appends a row (copied); returns it for filling in, or NULL when out of memory. */
row_t *bn_row(table_t *t, const char *section, const char *figure, const char *what, unit_t u);
void bn_ref(row_t *r, const char *name, stats_t ref);
void bn_ref2(row_t *r, const char *name, stats_t ref);
void bn_target(row_t *r, target_kind_t k, double value);
void bn_note(table_t *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void bn_table_free(table_t *t);

typedef enum format { F_TEXT, F_MARKDOWN, F_JSON } format_t;
void bn_print(const table_t *t, format_t f, FILE *out);

/* ---- shared settings ---- */

typedef struct config {
	const char *build;  /* the build folder: nnnkit, plugins/builtin.so, mkexample */
	const char *dir;    /* where the models go: BUILD/bench */
	const char *torch;  /* bench/torch_bench.py */
	const char *python; /* /usr/bin/python3 */
	const char *pybench; /* bench/py_bench.py: the Python package's worker */
	const char *ort;    /* bench/ort_bench.js */
	const char *node;   /* node: --node, else the first on PATH */
	const char *real;   /* the real corpus: --real, else $NNN_REAL_CORPUS, else ../shared/corpus/real */
	const char *grown;  /* --grown: the build folder of a tree with DenseF16 and DenseI8 (bench/grow.sh), or NULL */
	const char *narrow_py; /* bench/narrow_models.py: writes the narrow section's models */
	bool quick;         /* fewer runs, no 1 GiB model: for trying the benchmark out */
	bool keep_env;      /* leave OPENBLAS_CORETYPE, OPENBLAS_L2_SIZE, OMP_WAIT_POLICY as they are */
	char nnnkit[BN_PATH], plugin[BN_PATH], mkexample[BN_PATH], example[BN_PATH], inputs[BN_PATH];
	char onnx[BN_PATH];    /* BUILD/bench/example.onnx: nnnkit convert of the example */
	char ort_dir[BN_PATH]; /* BUILD/ort: make ort's npm ci (node_modules/, or `missing` saying why) */
	/* found out on the way */
	bool torch_ok;      /* PyTorch runs, and agrees with nnnkit */
	bool ort_ok;        /* ONNX Runtime runs the exported model, and agrees with nnnkit */
	double info_rss;    /* peak RSS of `nnnkit info` on the example, bytes */
} config_t;

/* The environment every contender runs in: environ with every thread
 * count set to `threads` and (unless keep_env) without OPENBLAS_CORETYPE
 * and OPENBLAS_L2_SIZE, with OMP_WAIT_POLICY=PASSIVE. Returned: free with
 * bn_env_free. */
char **bn_env(const config_t *c, int threads);
void bn_env_free(char **env);

/* ---- the sections ---- */

/* codec.c: writes the models (the example through mkexample), measures. */
bool bn_codec(const config_t *c, table_t *t);
/* procs.c: nnnkit info and validate as whole processes (sets info_rss);
 * nnnkit run over 10,000 images against PyTorch. */
bool bn_procs(config_t *c, table_t *t);
bool bn_runs(const config_t *c, table_t *t);
/* infer.c: nnn_plan_run against PyTorch and ONNX Runtime (sets torch_ok,
 * ort_ok); the worker side. */
bool bn_infer(config_t *c, table_t *t);
int bn_worker_main(int argc, char **argv);

/* worker.c: a worker process, seen from the driver. */
typedef struct worker {
	char name[48];
	pid_t pid;
	FILE *to, *from;
	char hello[256];
	bool up;
} worker_t;
/* Starts argv with env; bn_w_ready then waits for its "ready" line, so
 * that workers start side by side (PyTorch takes seconds to import). */
bool bn_w_spawn(worker_t *w, const char *name, char *const argv[], char **env);
bool bn_w_ready(worker_t *w);
/* A request and its answer as a number (>= 0); -1, the answer (or "no
 * answer") in reply and the worker given up, when it is not one. */
double bn_w_ask(worker_t *w, const char *req, char *reply, size_t size);
/* Seconds the request took, or -1 (said on stderr; the worker given up). */
double bn_w_time(worker_t *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A request that is not timed; bn_w_answer reads its answer line. Apart,
 * so that several workers can be asked at once. */
bool bn_w_send(worker_t *w, const char *req);
bool bn_w_answer(worker_t *w, char *reply, size_t size);
/* Tells the worker to stop; bn_w_reap waits for it. */
void bn_w_quit(worker_t *w);
void bn_w_reap(worker_t *w);
/* Calls per run of `what` ("net 64", "gemm", "fma") so that a run lasts
 * about `seconds`, after a warm-up (a call longer than a run is its own
 * warm-up); *run (when not NULL) the seconds a run of them will last. 0
 * when the worker failed. (infer.c) */
long bn_calibrate(worker_t *w, const char *what, double seconds, double *run);
/* The first line of `file` into buf ("" when there is none). (infer.c) */
void bn_first_line(const char *file, char *buf, size_t size);
/* Whether `file` is missing or older than `than`. (infer.c) */
bool bn_stale(const char *file, const char *than);
/* "28,28,1" as the shape of one input: [1, 28, 28, 1]; false when it is not one. */
bool bn_parse_shape(const char *text, nnn_shape_t *in);
/* tiny.c: the real corpus's demo files and an identity-like model, one
 * call at batch 1, against ONNX Runtime's C API (dlopen) and node. */
bool bn_tiny(const config_t *c, table_t *t);
/* py.c: nnnkit.Plan.run (the Python package) against nnn_plan_run, batch 1. */
bool bn_python(const config_t *c, table_t *t);
/* narrow.c: the example's Dense layers with float16 and int8 weights
 * against float32 ones, batch 1, in the grown tree (c->grown). */
bool bn_narrow(const config_t *c, table_t *t);

/* Calls each(layer, its output shape, ctx) for every layer of the example
 * at `batch` images of 28x28x1; false when it cannot be read. */
typedef void (*bn_layer_fn)(const nnn_layer_t *L, const nnn_shape_t *out, void *ctx);
bool bn_example_layers(const config_t *c, int batch, bn_layer_fn each, void *ctx);
/* The same for any model and input shape (batch included). */
bool bn_model_layers(const char *model, const nnn_shape_t *in, bn_layer_fn each, void *ctx);

/* peak.c: which FMA loop: the CPU's best (AVX-512, else AVX2), or the AVX2
 * one whatever the CPU has beyond it (what the plugin's AVX2 path is set
 * against). */
typedef enum bn_fma { BN_FMA_BEST, BN_FMA_AVX2 } bn_fma_t;
/* The instruction set of that loop on this CPU ("AVX-512", "AVX2"), or NULL
 * when there is none (then no peak, and no "% of peak"); its independent
 * chains (accumulators); FLOPs of one call of one thread; seconds for
 * `calls` calls on each of `threads` threads at once, or -1. */
const char *bn_fma_name(bn_fma_t which);
int bn_fma_chains(bn_fma_t which);
double bn_fma_flop(bn_fma_t which);
double bn_fma_run(bn_fma_t which, int threads, long calls);

/* The example model's input for whole runs: 10,000 images, [10000, 28, 28, 1]. */
#define BN_IMAGES 10000
bool bn_write_inputs(const config_t *c);

/* Runs argv with env, stdout and stderr to /dev/null (or stdout to `out`
 * when non-NULL); seconds and peak RSS (bytes) of the child. False when it
 * could not run or did not exit 0. */
bool bn_spawn(char *const argv[], char **env, const char *out, double *seconds, double *maxrss);

#endif
