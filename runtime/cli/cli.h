/* cli.h: what the nnnkit commands share. */
#ifndef NNN_CLI_H
#define NNN_CLI_H

#include <stdio.h>

#include <nnn/context.h>
#include <nnn/file.h>
#include <nnn/npy.h>
#include <nnn/run.h>
#include <nnn/shape.h>
#include <nnn/validate.h>

#include <nnn/esc.h>

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
	int json;             /* --json was given: stdout holds one JSON object, a failure's too */
	int json_done;        /* that object is printed (a report, or the error object) */
	/* The text of each JSON model read (cli_model_open, cli_file_open), by
	 * the name it was given: a problem found later in the model (validation,
	 * shapes) is shown at the line and column of its field (cli_locate). */
	struct cli_json_src {
		const char *path;
		char *text;
		size_t len;
	} json_src[4];
	int njson_src;
} cli_env_t;

/* ---- One option parser for every command (runtime/cli/opts.c) ----
 *
 * A command declares what it takes as tables; main() parses argv with them
 * before the command runs, and the same tables make the command's --help
 * (OPTIONS, EXIT STATUS), the man page (nnnkit help --man), the bash
 * completion (nnnkit help --completion) and the listing the tests walk
 * (nnnkit help --json). The conventions live in the parser, not in the
 * commands:
 *   --opt VALUE, --opt=VALUE, -o VALUE, -oVALUE; -h/--help anywhere; `--`
 *   ends the options (a file named -x works after it); an unknown option
 *   (with a "did you mean"), a missing value, numeric junk, a value out of
 *   range or an option given twice (flags excepted) is a usage error: one
 *   line "nnnkit CMD: PROBLEM" and "see 'nnnkit CMD --help'", exit 2;
 *   `-` is stdin for a file read and stdout for a file written where the
 *   entry has CLI_DASH, and refused (saying why: the entry's `nodash`)
 *   where it has not; stdin is read once: a pipe is read whole (up to
 *   CLI_STDIN_MAX bytes, and no further than 64 KiB when those do not
 *   start like a model) into memory, a redirected file is used in place,
 *   and a .npy reader (CLI_DASH_LIB) gets "-" and reads the stream itself;
 *   binary output (CLI_BINARY) to a terminal is refused unless --force.
 *
 * How a command declares its options (see run.c for a full one):
 *
 *   static const cli_opt_t my_opts[] = {
 *       { "values", 0, CLI_NUM, 0, "N", "float values shown per array (default 4)", .max = INT32_MAX },
 *       { "output", 'o', CLI_OUT, CLI_DASH | CLI_BINARY, "FILE", .help = "write the result to FILE" },
 *       { NULL } };
 *   static const cli_pos_t my_pos[] = { { "MODEL", CLI_IN, CLI_DASH, .help = "the model" }, { NULL } };
 *   static int my_main(const cli_args_t *a, cli_env_t *env)
 *   {
 *       const char *model = cli_arg(a, "MODEL"), *out = cli_str(a, "output");
 *       int values = (int)cli_num(a, "values", 4);
 *       ...
 *   }
 *   const cli_cmd_t cmd_mine = {
 *       .name = "mine", .summary = "one line for nnnkit --help",
 *       .help = "usage: nnnkit mine [OPTIONS] MODEL\nWhat it does, by hand.\n",
 *       .main = my_main,
 *       .opts = CLI_OPTS(my_opts, cli_opts_force, cli_opts_input_shape),
 *       .pos = my_pos,
 *       .exits = CLI_EXITS_MODEL,
 *   };
 * (an entry names its first fields in order and the rest by designator:
 * -Wmissing-field-initializers refuses a short positional list), and its
 * address goes into `commands` in main.c. Shared fragments:
 * cli_opts_run (--batch, --threads, --max-tensor-bytes: read them with
 * cli_run_args), cli_opts_input_shape, cli_opts_force (needed by any
 * command with a CLI_BINARY output), cli_opts_json. A fragment's option
 * that a command does not declare cannot be asked for (cli_str and the
 * like abort, naming it: the conventions test runs every command).
 * An option every model-running command shares (such as a --conv-compat
 * for run and eval) goes into cli_opts_run in opts.c and is read into
 * cli_run_args_t by cli_run_args in common.c: one place for both.
 * A usage problem found after parsing: cli_usage(cmd, fmt, ...).
 * A command with only .run (the old form: it parses argv itself) still
 * runs, but follows none of the conventions: port it. */

/* What an option's or positional's value is. */
typedef enum cli_kind {
	CLI_FLAG,   /* no value */
	CLI_NUM,    /* a whole number from .min to .max, digits only */
	CLI_REAL,   /* a decimal number from .rmin to .rmax */
	CLI_STR,    /* any text */
	CLI_CHOICE, /* one of the words in .choices ("json nnn") */
	CLI_SHAPE,  /* an input shape: whole numbers separated by commas, 1,28,28,1 */
	CLI_IN,     /* a file read */
	CLI_OUT,    /* a file written */
	CLI_DIR_IN, /* a folder read */
	CLI_DIR_OUT /* a folder written */
} cli_kind_t;

/* Flags of an option or positional. */
enum {
	CLI_DASH = 1u,     /* '-' is stdin (CLI_IN) or stdout (CLI_OUT) */
	CLI_BINARY = 2u,   /* binary output: '-' to a terminal is refused unless --force */
	CLI_REQUIRED = 4u, /* an option that must be given */
	CLI_OPTIONAL = 8u, /* a positional that may be left out (the last ones only) */
	CLI_REPEAT = 16u,  /* may be given more than once (cli_str gives the last) */
	CLI_HIDDEN = 32u,  /* left out of help, man page and completion (old spellings) */
	CLI_DASH_LIB = 64u /* with CLI_DASH: the library reads "-" itself, as a bounded stream (.npy) */
};

typedef struct cli_opt {
	const char *name;     /* long name, without "--"; NULL ends a table */
	char short_name;      /* 'o' for -o, or 0 */
	cli_kind_t kind;
	unsigned flags;
	const char *metavar;  /* the value's name in help: "N", "FILE"; NULL for a flag */
	const char *help;     /* one line, what it does and its default */
	uint64_t min, max;    /* CLI_NUM */
	double rmin, rmax;    /* CLI_REAL */
	const char *choices;  /* CLI_CHOICE: the words, space-separated */
	const char *nodash;   /* CLI_IN/CLI_OUT without CLI_DASH: why '-' cannot work */
	const char *alias;    /* a second long name (another command's spelling) */
} cli_opt_t;

typedef struct cli_pos {
	const char *name;     /* "MODEL"; NULL ends the table */
	cli_kind_t kind;      /* CLI_IN, CLI_OUT, CLI_DIR_OUT... */
	unsigned flags;       /* CLI_DASH, CLI_BINARY, CLI_OPTIONAL */
	const char *help;     /* one line */
	const char *nodash;   /* why '-' cannot work here (without CLI_DASH) */
	const char *option;   /* an option naming the same thing ("output"): either may be given */
} cli_pos_t;

#define CLI_MAX_VALS 40
#define CLI_MAX_POS 4
/* What every command that reads a model reads (cli_file_open,
 * cli_model_open): one phrase for every --help. */
#define CLI_MODEL_FORMS                                                                   \
	"a .nnn file, its JSON form, an ONNX model or a safetensors file nnnkit wrote (told by its bytes, not its " \
	"name)"
#define CLI_MODEL_HELP "the model: " CLI_MODEL_FORMS
/* The most bytes `-` reads from a pipe on stdin (a model or an array). */
/* A numeric macro as a string literal, for help texts that say a default. */
#define CLI_STR_(x) #x
#define CLI_STR(x) CLI_STR_(x)
#define CLI_STDIN_MAX ((uint64_t)1 << 30)

/* The most values a CLI_REPEAT option keeps (cli_strs). */
#define CLI_MAX_REPEAT 64

typedef struct cli_val {
	const cli_opt_t *opt;
	const char *text;     /* as given; for CLI_IN '-', the path stdin is read from */
	const char *texts[CLI_MAX_REPEAT]; /* CLI_REPEAT: every value, in order */
	int given;            /* times given */
	uint64_t n;
	double r;
	nnn_shape_t shape;
} cli_val_t;

struct cli_cmd;
/* What the parser found. */
typedef struct cli_args {
	const struct cli_cmd *cmd;
	int nvals;
	cli_val_t val[CLI_MAX_VALS]; /* every option the command declares, given or not */
	const char *pos[CLI_MAX_POS]; /* positionals, by the index of the table's entry; NULL when not given */
	int help;                     /* -h or --help was given */
	cli_env_t *env;               /* the run's environment (usage errors go to its JSON too) */
} cli_args_t;

/* The exit codes (one table: cli_exit_table in opts.c prints their
 * meanings in every command's --help, the man page and README). */
#define CLI_EXIT(c) (1u << (c))
#define CLI_EXITS_MODEL (CLI_EXIT(0) | CLI_EXIT(1) | CLI_EXIT(2) | CLI_EXIT(3))
#define CLI_OPTS(...) ((const cli_opt_t *const[]){ __VA_ARGS__, NULL })

typedef struct cli_cmd {
	const char *name;
	const char *summary;
	const char *help; /* usage line(s) and description, by hand; OPTIONS and EXIT STATUS are generated */
	/* Old form: parses its own argv (argv[0] is the command's name). */
	int (*run)(int argc, char **argv, cli_env_t *env);
	/* New form: runs with what the parser found in argv per opts and pos. */
	int (*main)(const cli_args_t *a, cli_env_t *env);
	const cli_opt_t *const *opts; /* table fragments, NULL-terminated (CLI_OPTS) */
	const cli_pos_t *pos;         /* positionals, NULL-name-terminated */
	unsigned exits;               /* CLI_EXIT bits of the codes it can return */
	const char *exit_what[4];     /* what a code means for this command, when more precise than the table */
	int own_plugins;              /* loads plugins itself: main() does not before it runs */
} cli_cmd_t;

/* Shared fragments. */
extern const cli_opt_t cli_opts_run[], cli_opts_input_shape[], cli_opts_force[], cli_opts_json[];
/* The options main() takes before any command (and anywhere on the line). */
extern const cli_opt_t cli_opts_global[];

/* Parses argv (argv[0] is the command's name) by cmd's tables into *a.
 * EXIT_VALID, or EXIT_USAGE after printing the one-line problem. */
int cli_parse(const cli_cmd_t *cmd, int argc, char **argv, cli_args_t *a, cli_env_t *env);
/* The values of declared options: a flag's count; a text (NULL when not
 * given); a number (dflt when not given); a shape (NULL when not given). */
int cli_flag(const cli_args_t *a, const char *name);
const char *cli_str(const cli_args_t *a, const char *name);
/* Every value of a CLI_REPEAT option, in order (*out borrows them): the count. */
int cli_strs(const cli_args_t *a, const char *name, const char *const **out);
uint64_t cli_num(const cli_args_t *a, const char *name, uint64_t dflt);
double cli_real(const cli_args_t *a, const char *name, double dflt);
const nnn_shape_t *cli_shape(const cli_args_t *a, const char *name);
/* A positional by its table name ("MODEL"); NULL when not given. */
const char *cli_arg(const cli_args_t *a, const char *name);
/* Whether `path` (an output) may get binary data: a file, or stdout when it
 * is not a terminal or --force was given; else prints why (EXIT_USAGE).
 * For outputs whose form is known only late (convert --to nnn). */
int cli_binary_ok(const cli_args_t *a, const char *path, const char *what);
/* The name to show for a path: "stdin" for what '-' read. */
const char *cli_name(const char *path);
/* The name to show for an output: "stdout" for '-'. */
const char *cli_out_name(const char *path);

/* A command's help: its text, OPTIONS from its tables, EXIT STATUS. */
void cli_help(FILE *f, const cli_cmd_t *cmd);
/* nnnkit help --man: the man page's OPTIONS, COMMANDS, ENVIRONMENT, EXIT
 * STATUS and FILES sections (roff); --completion: the bash completion;
 * --json: every table, for the tests. */
void cli_man(FILE *f, const cli_cmd_t *const *cmds, size_t n);
void cli_completion(FILE *f, const cli_cmd_t *const *cmds, size_t n);
void cli_dump(FILE *f, const cli_cmd_t *const *cmds, size_t n);
/* The exit-code table's lines, "  0  success...", for the general help. */
void cli_exit_lines(FILE *f, const cli_cmd_t *cmd);
/* NNNKIT_PROGRESS, when set, must be 0 or 1: EXIT_USAGE (printed) otherwise. */
int cli_check_env(void);

extern const cli_cmd_t cmd_info, cmd_validate, cmd_dump, cmd_map, cmd_graph, cmd_convert, cmd_export, cmd_build, cmd_run,
	cmd_eval, cmd_plugins, cmd_conformance, cmd_testee, cmd_diff, cmd_stats, cmd_edit;

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

/* Prints "nnnkit: FILE: message" for every problem ("FILE:LINE:COLUMN: path:
 * message" in a JSON model, cli_locate); returns the exit code the first
 * problem's status calls for. env may be NULL. */
int cli_report(const cli_env_t *env, const char *file, const nnn_diags_t *d, nnn_status_t st);
/* Problem g as found in FILE: in a JSON model env kept (env->json_src), at the
 * line and column of the value of g's field path (or of its nearest ancestor
 * there), its offset (that of the model's .nnn encoding) dropped; else as it is.
 * env may be NULL. Returns out. */
nnn_diag_t *cli_locate(const cli_env_t *env, const char *file, const nnn_diag_t *g, nnn_diag_t *out);
/* Frees the texts cli_locate reads. */
void cli_env_free_sources(cli_env_t *env);
/* The one way a failure reaches a user: cli_report's text on stderr and,
 * with --json (env->json), the error object on stdout (cli_json_error).
 * Returns the exit code. */
int cli_fail(cli_env_t *env, const char *file, const nnn_diags_t *d, nnn_status_t st);
/* With --json, unless a JSON object is printed already: one line on stdout,
 *   {"error": {"code": "E_...", "exit": N, "file": F|null, "path": P|null,
 *    "offset": N|null, "message": M, "remedy": R}, "problems": [...]}
 * from d's first problem (else from st, else from the exit code alone:
 * E_INVALID, E_USAGE, E_PLUGIN), every problem listed (docs/cli-json.md). */
void cli_json_error(cli_env_t *env, const char *file, const nnn_diags_t *d, nnn_status_t st, int code);
/* A failure said in words, not diagnostics: "nnnkit: FILE: message" on
 * stderr and, with --json, the error object with that message (code
 * E_INVALID, E_USAGE or E_PLUGIN from `code`). Returns code. */
int cli_fail_text(cli_env_t *env, const char *file, int code, const char *fmt, ...) NNN_PRINTF(4, 5);
/* The error object's value alone ({"code": ...}), for a report that carries it. */
void cli_json_error_obj(FILE *f, const cli_env_t *env, const char *file, const nnn_diags_t *d, nnn_status_t st,
                        int code);
/* The problems of d, found in FILE, as a JSON array: [{code, number, path,
 * offset or line and column (cli_locate), what, message, remedy}]. */
void cli_json_problems(FILE *f, const cli_env_t *env, const char *file, const nnn_diags_t *d);
/* Prints "nnnkit CMD: message" and "see 'nnnkit CMD --help'" and, with
 * --json (env given), the error object with that message (E_USAGE);
 * returns EXIT_USAGE. */
int cli_usage(cli_env_t *env, const cli_cmd_t *cmd, const char *fmt, ...) NNN_PRINTF(3, 4);
/* The error object of a usage error whose message is msg (cli_usage). */
void cli_json_usage(cli_env_t *env, const char *msg);
/* True when argv[i] is -h or --help. */
int cli_is_help(const char *arg);
/* Text from a file, a plugin or the command line on its way to a terminal,
 * escaped (nnn_esc, nnn/esc.h): NNN_ESC_MSG unquoted (names, messages), NNN_ESC_C
 * in quotes. */
void cli_esc_print(FILE *f, const char *s, size_t n, nnn_esc_t style);
/* printf with the whole text escaped as a message (NNN_ESC_MSG): for a line
 * whose arguments hold such text (a file name, a plugin's names, a
 * message). nnnkit's own words, newlines and text already escaped pass as
 * they are. */
void cli_say(FILE *f, const char *fmt, ...) NNN_PRINTF(2, 3);
/* Prints s as a JSON string (with quotes) of n bytes (NNN_ESC_JSON). */
void cli_json_str(FILE *f, const char *s, size_t n);
/* Exit code for a status. */
int cli_exit_code(nnn_status_t st);
/* Prints a field's value as `nnnkit dump` shows it: the number and its enum
 * name (a plugin's ID: its name and the plugin's file, from ctx), a
 * string's length and escaped text, an array's count and its first elements
 * (`values` of a float array, 16 of an int array). */
void cli_field_value(FILE *out, const nnn_field_t *f, int values, const nnn_ctx_t *ctx);
/* cli_field_value of an NNN_PRIM_NUM or NNN_PRIM_NUMS field (f16, i8, ...). */
void cli_num_value(FILE *out, const nnn_field_t *f, int values);
/* A value `id` of the layer or activation ID enum `type` that a plugin in
 * ctx provides: its name, title (the name when the plugin gives none) and
 * the plugin's file name. False when `type` is neither enum, or no plugin
 * provides that ID. */
bool cli_plugin_type(const nnn_ctx_t *ctx, const nnn_type_t *type, int64_t id, const char **name, const char **title,
                     const char **file);
/* Writes n bytes to `path` atomically, or to stdout when path is "-";
 * prints what failed. Returns an exit code. */
int cli_emit(const char *path, const void *buf, size_t n);
/* After m was written to `out` ("-": stdout): its rules checked. EXIT_VALID,
 * or, when it breaks one, "written, but it is not a valid model" and its
 * problems, under `blame` (the file whose offsets they give), printed, and
 * EXIT_INVALID: a copy of an invalid model is made as asked (to mend it),
 * never silently. d is cleared first. */
int cli_written_check(const cli_env_t *env, const char *out, const char *blame, const nnn_model_t *m, nnn_diags_t *d);

/* The options of the commands that run a model: --batch N, --threads N,
 * --max-tensor-bytes N, --conv-compat spec|original. */
typedef struct cli_run_args {
	long batch, threads;
	unsigned long long max_bytes; /* 0: the library's default */
	uint32_t compat;              /* nnn_run_opts_t.compat */
} cli_run_args_t;

/* Fills r from the cli_opts_run fragment's options (defaults: batch 256,
 * threads 1, the library's tensor limit). An option added to that fragment
 * (a shared run option) is read here, for every command that runs a model. */
void cli_run_args(const cli_args_t *a, cli_run_args_t *r);
nnn_run_opts_t cli_run_opts(const cli_run_args_t *r);
/* The samples of an input array of shape *x (count values) as the model's
 * input: [samples, ...] with at least one sample; with --input-shape
 * (want), reshaped to it (same values per sample). EXIT_VALID, or
 * EXIT_INVALID printed, naming the file and --input-shape. */
int cli_samples(cli_env_t *env, const char *file, nnn_shape_t *x, uint64_t count, const nnn_shape_t *want);
/* The input array of a command that runs a model (run, eval): FILE mapped
 * into *x (nnn_npy_map: release with nnn_npy_unmap, also on failure), its
 * samples checked and reshaped (cli_samples), and a warning when its
 * values look unscaled (cli_unscaled). EXIT_VALID, or the exit code of the
 * problem printed. */
int cli_inputs(cli_env_t *env, const char *file, const nnn_shape_t *want, nnn_npy_view_t *x);
/* The rule for inputs that look unscaled: an integer dtype (the file's,
 * before conversion to float32) holding a value over 1. nnnkit uses input
 * values as they are, and a model is usually trained on inputs scaled to
 * [0, 1] (MNIST's uint8 pixels unscaled score 9908 of 10000 instead of
 * 9919), so this warns on stderr, saying how to scale; it never changes
 * the exit code. Returns whether it warned. */
int cli_unscaled(const char *file, const nnn_npy_view_t *x);
/* Reports a failure to plan or run MODEL on samples of shape *x from
 * INPUT: blamed on INPUT and --input-shape when it is the input's shape
 * that does not fit the first layer, else on MODEL. */
int cli_report_input(cli_env_t *env, const char *model, const char *input, const nnn_shape_t *x, int reshaped,
                     const nnn_diags_t *d, nnn_status_t st);

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
/* Runs m over every sample of x (`shape`, dims[0] samples, at least one),
 * in batches of r->batch, with a progress bar on stderr when `progress`
 * (run, testee). The outputs go to *y, allocated here (free it, also on
 * failure), and their shape, dims[0] the samples, to *out_shape. */
NNN_NODISCARD nnn_status_t cli_run_all(const nnn_ctx_t *ctx, const nnn_model_t *m, const nnn_shape_t *shape,
                                       const float *x, const cli_run_args_t *r, int progress, float **y,
                                       nnn_shape_t *out_shape, nnn_diags_t *d);

/* For every layer the original Neural Network Notions framework computes
 * differently from the spec (a Conv kernel of unequal spatial sizes, whose
 * taps its strides count wrongly: nnn/compat.h), a note on stderr,
 * "nnnkit: PATH: note: ...", naming the layer, its kernel sizes and
 * --conv-compat. Not a problem: the command's exit code stays. Returns the
 * number of notes. */
int cli_conv_notes(const char *path, const nnn_model_t *m);
/* The same notes as a JSON array (docs/cli-json.md, "notes"):
 * [{"path", "offset", "kernel", "taps", "taps_summed", "message"}]. */
void cli_conv_notes_json(FILE *f, const nnn_model_t *m);

/* The forms of a model. */
typedef enum cli_form { CLI_UNKNOWN, CLI_NNN, CLI_JSON, CLI_ONNX, CLI_NPY, CLI_SAFETENSORS } cli_form_t;
/* A file's form: from its first n bytes at b ('NNN.'; \x93NUMPY; a
 * safetensors header length then '{'; ONNX's leading ir_version; '{' after
 * white space), whatever its name; with no bytes (a file to write), from
 * its extension (.nnn, .json, .onnx, .safetensors). */
cli_form_t cli_form(const char *path, const unsigned char *b, size_t n);

/* A model read from either form: `m` is `own`, which holds its bytes (a
 * .nnn file is read whole with checked reads, for commands that read every
 * tensor value). Release with cli_model_close. */
typedef struct cli_model {
	nnn_file_t *file;
	nnn_model_t *own;
	const nnn_model_t *m;
	cli_form_t form; /* the form it was read from (convert --verify's default) */
} cli_model_t;
/* Reads MODEL in the form cli_form finds; problems go to d. */
nnn_status_t cli_model_open(cli_env_t *env, const char *path, cli_model_t *out, nnn_diags_t *d);
void cli_model_close(cli_model_t *cm);
/* MODEL for the commands that read a .nnn file's bytes (info, run, eval,
 * validate, dump, graph, map): nnn_file_open (with opts) or nnn_file_map
 * (NULL); a JSON, ONNX or safetensors model (by its bytes) is read as cli_model_open
 * reads it and its .nnn encoding given as the file's bytes (without opts,
 * saying so on stderr: offsets are the encoding's). */
nnn_status_t cli_file_open(cli_env_t *env, const char *path, const nnn_decode_opts_t *opts, nnn_file_t **out,
                           nnn_diags_t *d);

/* ---- convert --verify (verify.c) ---- */

/* How convert checks its output: off, on by default (ONNX in or out: what
 * cannot be checked is a note), or asked for (--verify, --verify-tol: what
 * cannot be checked fails). */
typedef enum cli_verify_mode { CLI_VERIFY_OFF, CLI_VERIFY_DEFAULT, CLI_VERIFY_ASKED } cli_verify_mode_t;
typedef struct cli_verify_args {
	cli_verify_mode_t mode;
	double tol;               /* the largest relative error accepted */
	const nnn_shape_t *shape; /* --input-shape, the ONNX graph's input (declared), or NULL */
	int declared;             /* shape is the input an ONNX IN declares */
	const char *in, *out;     /* the files, as named on the command line */
} cli_verify_args_t;
/* The input the ONNX graph at `path` declares, channels-last, into *out
 * (its batch as it is, 1 when named): false when a dim past the batch is
 * named, or the file is not read (the shape engine decides then). */
bool cli_onnx_input(cli_env_t *env, const char *path, nnn_shape_t *out);
/* Runs src (IN as read) and dst (OUT read back from its bytes) on seeded
 * inputs (nnn/verify.h) and prints one line on stderr with the largest
 * absolute and relative errors. EXIT_VALID; or, when an error is over
 * v->tol, EXIT_INVALID with what, where and what to do printed; or, when
 * the check cannot run (no input shape, no kernel), a note and EXIT_VALID
 * by default, the problem and its exit code when asked. */
int cli_verify(cli_env_t *env, const cli_verify_args_t *v, const nnn_model_t *src, const nnn_model_t *dst);
/* OUT's bytes did not read back (st, d: why): as cli_verify's "cannot
 * run", a note by default, the problem when asked. A plugin's ONNX export
 * hooks may write ops nnnkit's import does not map. */
int cli_verify_unread(const cli_verify_args_t *v, const nnn_diags_t *d, nnn_status_t st);

/* ---- tensors by path (tensor.c), for stats, diff and edit ---- */

/* A parameter tensor of a model and its field path ("layers[2].weights",
 * as errors print it). */
typedef struct cli_param {
	char path[NNN_PATH_MAX];
	const nnn_tensor_t *t; /* borrowed from the model; NULL for another element type */
	/* Any tensor: its dims and data, of element type `prim` (its data
	 * field's: NNN_PRIM_F32_ARRAY when t is set). */
	const nnn_i32s_t *dims;
	nnn_elems_t data;
	nnn_prim_t prim;
	const nnn_elems_t *at; /* the data member in the model (edit --set replaces it) */
} cli_param_t;
/* Every parameter tensor of m in file order (nnn_layer_params, a plugin's
 * included): returned in *out (free it), *n of them. NNN_E_NOMEM in d.
 * With `any`, also the tensors of the layers' own records whose data are of
 * another element type (f16, i8, ...: a param field of a record with a
 * dims_product rule, found by the layer's descriptor), after the layer's
 * float32 ones; those have t NULL. */
nnn_status_t cli_params(const nnn_model_t *m, bool any, cli_param_t **out, size_t *n, nnn_diags_t *d);
/* A note on stderr when a .npy file `file` was written for tensor `path`
 * of dtype "bfloat16" (NumPy has none: the file holds the raw bits as
 * '<u2'), saying how to read it; nothing for any other dtype. */
void cli_npy_note(const char *path, const char *file, const char *dtype);
/* The tensor of list ts whose path is `path` (a trailing ".data" is
 * allowed), or NULL. */
const cli_param_t *cli_param_find(const cli_param_t *ts, size_t n, const char *path);
/* A tensor's dims as a shape; false when they are not one (rank too high). */
bool cli_tensor_shape(const nnn_tensor_t *t, nnn_shape_t *s);
/* The same of any dims. */
bool cli_dims_shape(const nnn_i32s_t *dims, nnn_shape_t *s);
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
/* The same over an array of any element type (values as doubles). */
void cli_elems_stats(nnn_elems_t a, nnn_prim_t prim, cli_vstats_t *s);
/* Prints x as a JSON number with 9 significant digits (float32 round
 * trips); NaN and infinities as the strings "nan", "inf", "-inf", as the
 * JSON form of a model writes them (docs/json.md, docs/cli-json.md). */
void cli_json_num(FILE *f, double x);
/* Prints a shape as a JSON array of integers. */
void cli_json_shape(FILE *f, const nnn_shape_t *s);
/* A partial shape: the array with null for each unknown dim, or null when
 * the rank is unknown. */
void cli_json_pshape(FILE *f, const nnn_pshape_t *s);

/* The text of a field the schema fixes (const) at the root of the model,
 * `path`, whose four bytes b (file order) are printable ASCII: a signature
 * ("NNN."), shown beside its number by dump and map. Which field that is,
 * the schema says. */
bool cli_const_text(const char *path, const unsigned char b[4], char text[5]);

#endif
