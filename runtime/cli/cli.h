/* cli.h: what the nnnkit commands share. */
#ifndef NNN_CLI_H
#define NNN_CLI_H

#include <stdio.h>

#include <nnn/context.h>
#include <nnn/file.h>
#include <nnn/run.h>
#include <nnn/validate.h>

/* Exit codes, documented in nnnkit --help and README.md. */
enum {
	EXIT_VALID = 0,   /* success; the model is valid */
	EXIT_INVALID = 1, /* the input is not a valid model */
	EXIT_USAGE = 2,   /* bad command line, or a system error (I/O, memory) */
	EXIT_PLUGIN = 3   /* a plugin failed: a candidate from any source did not load, two
	                     conflict, or no plugin provides a kernel the model needs */
};

/* What every command shares: the plugins asked for, and the context that
 * holds them, made on first use. */
typedef struct cli_env {
	const char **plugins; /* --plugin FILE, in order */
	int nplugins;
	int no_default;       /* --no-default-plugins */
	const char *exe_dir;  /* folder of the nnnkit executable */
	nnn_ctx_t *ctx;
	int plugin_failed;    /* a plugin candidate failed, from any source */
	int progress;         /* --progress 1, --no-progress 0, neither -1 */
} cli_env_t;

typedef struct cli_cmd {
	const char *name;
	const char *summary;
	const char *help; /* full usage text */
	int (*run)(int argc, char **argv, cli_env_t *env);
} cli_cmd_t;

extern const cli_cmd_t cmd_info, cmd_validate, cmd_dump, cmd_map, cmd_graph, cmd_convert, cmd_export, cmd_build, cmd_run,
	cmd_eval, cmd_plugins, cmd_conformance, cmd_diff, cmd_stats, cmd_edit;

/* The context with the plugins loaded (nnn_plugin_discover): --plugin files
 * first, then (unless --no-default-plugins) NNN_PLUGIN_PATH and the
 * installed folder. Failures and warnings are printed; NULL only when even
 * the context cannot be made. main() calls it before any command that
 * reads a model runs, so what loads never depends on a file's contents. */
nnn_ctx_t *cli_ctx(cli_env_t *env);
/* A command's exit code, made EXIT_PLUGIN when any plugin failed. */
int cli_exit(const cli_env_t *env, int code);
/* "<prefix>warning: <line>" for each line of a loaded plugin's warnings. */
void cli_print_warnings(FILE *f, const char *prefix, const nnn_plugin_report_t *r);
/* A folder of nnnkit's own, found from the executable, never the current
 * folder: installed, PREFIX/<installed> beside PREFIX/bin/nnnkit, when it
 * exists; else the build tree's, build/<built> beside build/nnnkit. In buf;
 * NULL when the executable's folder is unknown. */
const char *cli_own_dir(const cli_env_t *env, const char *installed, const char *built, char *buf, size_t size);
/* The installed plugin folder (cli_own_dir: lib/nnnkit/plugins, or plugins). */
const char *cli_plugin_dir(const cli_env_t *env, char *buf, size_t size);

/* Prints "nnnkit: FILE: message" for every problem; returns the exit code
 * the first problem's status calls for. */
int cli_report(const char *file, const nnn_diags_t *d, nnn_status_t st);
/* Prints "nnnkit: CMD: message" and the usage hint; returns EXIT_USAGE. */
int cli_usage(const cli_cmd_t *cmd, const char *fmt, ...) NNN_PRINTF(2, 3);
/* An argument no option of cmd took: an unknown option or a second model
 * is a usage error (printed, EXIT_USAGE); else it is the model (*model). */
int cli_model_arg(const cli_cmd_t *cmd, const char *arg, const char **model);
/* True when argv[i] is -h or --help. */
int cli_is_help(const char *arg);
/* Text from a file on its way to a terminal: the one escaping of nnnkit.
 * Printable UTF-8 passes; C0 controls, DEL, C1 controls (U+0080..U+009F,
 * U+009B being the 8-bit CSI), bidirectional controls (U+061C, U+200E,
 * U+200F, U+202A..U+202E, U+2066..U+2069), U+2028, U+2029 and bytes that
 * are not UTF-8 are escaped, each style its own way:
 *   CLI_ESC_C     "\x1b", "\u202e", a byte "\xff"; quote, backslash, \n escaped
 *   CLI_ESC_JSON  "\u001b", "\u202e", a byte as "\ufffd"; valid JSON
 *   CLI_ESC_SCRIPT as JSON, and '<', '>', '&' as "\u003c"...: JSON inside <script>
 *   CLI_ESC_MSG   as C, but quotes, backslashes, newlines and tabs pass
 *                 (messages, which quote file strings themselves)
 *   CLI_ESC_DOT   '?' for each; quote and backslash escaped (graph)
 * cli_esc writes into dst (size bytes, NUL-terminated, cut on a whole
 * escape) and returns the length written. */
typedef enum cli_esc { CLI_ESC_C, CLI_ESC_JSON, CLI_ESC_SCRIPT, CLI_ESC_MSG, CLI_ESC_DOT } cli_esc_t;
size_t cli_esc(char *dst, size_t size, const char *s, size_t n, cli_esc_t style);
void cli_esc_print(FILE *f, const char *s, size_t n, cli_esc_t style);
/* Prints s as a JSON string (with quotes) of n bytes (CLI_ESC_JSON). */
void cli_json_str(FILE *f, const char *s, size_t n);
/* Exit code for a status. */
int cli_exit_code(nnn_status_t st);
/* Length (1-4) of the valid UTF-8 sequence at s (n >= 1 bytes left), or 0
 * when the bytes there are not one (overlong, surrogate, cut short...). */
size_t cli_utf8_seq(const unsigned char *s, size_t n);
/* Prints a field's value as `nnnkit dump` shows it: the number and its enum
 * name (a plugin's ID: its name and the plugin's file, from ctx), a
 * string's length and escaped text, an array's count and its first elements
 * (`values` of a float array, 16 of an int array). */
void cli_field_value(FILE *out, const nnn_field_t *f, int values, const nnn_ctx_t *ctx);
/* A value `id` of the layer or activation ID enum `type` that a plugin in
 * ctx provides: its name, title (the name when the plugin gives none) and
 * the plugin's file name. False when `type` is neither enum, or no plugin
 * provides that ID. */
bool cli_plugin_type(const nnn_ctx_t *ctx, const nnn_type_t *type, int64_t id, const char **name, const char **title,
                     const char **file);
/* The --input-shape option (a separate or an '=' value) at argv[*i], for
 * commands that take one: -1 when argv[*i] is something else; 0 when it
 * parsed into *out (*i moved past its value); else the exit code after the
 * usage message. */
int cli_input_shape(const cli_cmd_t *cmd, int argc, char **argv, int *i, nnn_shape_t *out);
/* Writes n bytes to `path` atomically, or to stdout when path is "-";
 * prints what failed. Returns an exit code. */
int cli_emit(const char *path, const void *buf, size_t n);

/* The value v of option opt: a whole number in [min, max], digits only, or
 * EXIT_USAGE (printed, naming the option and the range). */
int cli_number(const cli_cmd_t *cmd, const char *opt, const char *v, uint64_t min, uint64_t max, uint64_t *out);

/* The options of the commands that run a model: --batch N, --threads N,
 * --max-tensor-bytes N, --conv-compat spec|original. */
typedef struct cli_run_args {
	long batch, threads;
	unsigned long long max_bytes; /* 0: the library's default */
	uint32_t compat;              /* nnn_run_opts_t.compat */
} cli_run_args_t;

/* --conv-compat in the help of every command that takes cli_run_option. */
#define CLI_CONV_COMPAT_HELP                                                                                  \
	"  --conv-compat original|spec  original: Conv layers compute what the original Neural Network\n"      \
	"                        Notions framework computes (its strides count some taps of a kernel with\n"    \
	"                        unequal spatial sizes twice and others never), for files trained there;\n"   \
	"                        spec (default): the format's convolution (docs/original-framework.md)\n"

/* When argv[*i] is one of those options with a value, parses the value
 * into r and steps *i past it: EXIT_VALID, or EXIT_USAGE (printed) for a
 * bad value. -1 when argv[*i] is something else. */
int cli_run_option(const cli_cmd_t *cmd, int argc, char **argv, int *i, cli_run_args_t *r);
nnn_run_opts_t cli_run_opts(const cli_run_args_t *r);

/* A one-line progress bar on stderr: "LABEL [####....] done/total UNIT
 * pct% rate/s ETA t", redrawn at most 10 times a second, erased by
 * cli_progress_end. The caller owns the struct; nothing is allocated. */
typedef struct cli_progress {
	int on;
	const char *label, *unit; /* borrowed */
	uint64_t total, done;
	double start, last;       /* CLOCK_MONOTONIC seconds: start, last redraw */
	int width;                /* columns the bar covers now; 0 when none is shown */
	int cols;                 /* the terminal's width */
} cli_progress_t;

/* Seconds on CLOCK_MONOTONIC, for durations. */
double cli_seconds(void);
/* Whether to draw: `flag` (env->progress) when 0 or 1, else NNNKIT_PROGRESS
 * when "0" or "1", else whether stderr is a terminal and TERM is not "dumb". */
int cli_progress_wanted(int flag);
/* Starts (and, when on, draws at once) a bar for `total` steps. */
void cli_progress_start(cli_progress_t *p, int on, const char *label, const char *unit, uint64_t total);
void cli_progress_update(cli_progress_t *p, uint64_t done);
/* Erases the bar; call before printing anything else. Idempotent. */
void cli_progress_end(cli_progress_t *p);

/* A model run over the samples of an array in batches of one size: one
 * plan for the full batches, one more for a shorter last batch. The caller
 * owns the struct (start, next until done, end). */
typedef struct cli_batches {
	const nnn_ctx_t *ctx;
	const nnn_model_t *m;
	nnn_run_opts_t opts;
	const float *x;       /* the samples, `per` floats each (borrowed) */
	nnn_shape_t in;       /* the current plan's input shape; dims[0] is its batch size */
	int64_t total, per;   /* samples, floats per sample */
	nnn_plan_t *plan;
	nnn_shape_t out;      /* a full batch's output shape */
	int64_t out_per;      /* output floats per sample */
	int64_t from, n;      /* the batch last run: samples [from, from + n) */
	float *y;             /* its outputs, when next() was given no destination */
} cli_batches_t;

/* Plans for batches of min(batch, samples) of `shape` (dims[0] = samples,
 * at least 1), whose floats are x. */
NNN_NODISCARD nnn_status_t cli_batches_start(cli_batches_t *b, const nnn_ctx_t *ctx, const nnn_model_t *m,
                                             const nnn_shape_t *shape, const float *x, int64_t batch,
                                             const nnn_run_opts_t *opts, nnn_diags_t *d);
/* True while samples are left. */
int cli_batches_more(const cli_batches_t *b);
/* Runs the next batch; b->from and b->n say which samples it held. Its
 * outputs go to their place in dst (total * out_per floats) or, when dst
 * is NULL, to b->y. */
NNN_NODISCARD nnn_status_t cli_batches_next(cli_batches_t *b, float *dst, nnn_diags_t *d);
/* Frees the plan and b->y. */
void cli_batches_end(cli_batches_t *b);

/* For every layer the original Neural Network Notions framework computes
 * differently from the spec (a Conv kernel of unequal spatial sizes, whose
 * taps its strides count wrongly: nnn/compat.h), a note on stderr,
 * "nnnkit: PATH: note: ...", naming the layer, its kernel sizes and
 * --conv-compat. Not a problem: the command's exit code stays. Returns the
 * number of notes. */
int cli_conv_notes(const char *path, const nnn_model_t *m);

/* The two forms of a model. */
typedef enum cli_form { CLI_UNKNOWN, CLI_NNN, CLI_JSON } cli_form_t;
/* A file's form: from its first n bytes at b ('NNN.', or '{' after white
 * space), else from its extension (.nnn, .json). */
cli_form_t cli_form(const char *path, const unsigned char *b, size_t n);

/* A model read from either form: `m` is `own`, which holds its bytes (a
 * .nnn file is read whole with checked reads, for commands that read every
 * tensor value). Release with cli_model_close. */
typedef struct cli_model {
	nnn_file_t *file;
	nnn_model_t *own;
	const nnn_model_t *m;
} cli_model_t;
/* Reads MODEL in the form cli_form finds; problems go to d. */
nnn_status_t cli_model_open(cli_env_t *env, const char *path, cli_model_t *out, nnn_diags_t *d);
void cli_model_close(cli_model_t *cm);

/* ---- tensors by path (tensor.c), for stats, diff and edit ---- */

/* A parameter tensor of a model and its field path ("layers[2].weights",
 * as errors print it). */
typedef struct cli_param {
	char path[NNN_PATH_MAX];
	const nnn_tensor_t *t; /* borrowed from the model */
} cli_param_t;
/* Every parameter tensor of m in file order (nnn_layer_tensors, a plugin's
 * included): returned in *out (free it), *n of them. NNN_E_NOMEM in d. */
nnn_status_t cli_params(const nnn_model_t *m, cli_param_t **out, size_t *n, nnn_diags_t *d);
/* The tensor of list ts whose path is `path` (a trailing ".data" is
 * allowed), or NULL. */
const cli_param_t *cli_param_find(const cli_param_t *ts, size_t n, const char *path);
/* A tensor's dims as a shape; false when they are not one (rank too high). */
bool cli_tensor_shape(const nnn_tensor_t *t, nnn_shape_t *s);
/* "[2,3]": a shape without spaces, as `info` prints tensor shapes. */
char *cli_shape_text(const nnn_shape_t *s, char *buf, size_t size);
/* One pass over an array's values: counts, and min, max, mean and
 * population standard deviation of the finite values (Welford's update in
 * double, so a large tensor with a large mean loses nothing to
 * cancellation; all 0 when no value is finite). */
typedef struct cli_vstats {
	uint64_t count, finite, zeros, nan, pinf, ninf;
	double min, max, mean, std;
} cli_vstats_t;
void cli_values_stats(nnn_f32s_t a, cli_vstats_t *s);
/* Prints x as a JSON number with 9 significant digits (float32 round
 * trips); NaN and infinities as the strings "nan", "inf", "-inf", as the
 * JSON form of a model writes them (docs/json.md, docs/cli-json.md). */
void cli_json_num(FILE *f, double x);
/* Prints a shape as a JSON array of integers. */
void cli_json_shape(FILE *f, const nnn_shape_t *s);
/* A non-negative finite decimal number (such as 1e-5) for option opt, or
 * EXIT_USAGE (printed, naming the option). */
int cli_real(const cli_cmd_t *cmd, const char *opt, const char *v, double *out);

#endif
