/* opts.c: the one option parser of nnnkit, and what its tables make: each
 * command's help, the man page's generated sections, the bash completion
 * and the listing the tests walk (cli.h says how a command declares its
 * options). */
#define _GNU_SOURCE /* memfd_create */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nnn/esc.h>

#include "cli.h"

/* ---- the tables every command shares ---- */

const cli_opt_t cli_opts_run[] = {
	{ "batch", 0, CLI_NUM, 0, "N", "samples per batch (default " CLI_STR(NNN_RUN_BATCH) ")", .min = 1, .max = 1 << 20 },
	{ "threads", 0, CLI_NUM, 0, "N", "threads for the kernels (default 1)", .min = 1, .max = 1 << 20 },
	{ "max-tensor-bytes", 0, CLI_NUM, 0, "N",
	  "refuse, naming the layer, an intermediate tensor or a kernel's working memory over N bytes (default 4 GiB)",
	  .min = 1, .max = INT64_MAX }, /* sizes are int64_t inside */
	{ "conv-compat", 0, CLI_CHOICE, 0, "original|spec",
	  .help = "original: Conv layers compute what the original Neural Network Notions framework computes (its "
	  "strides count some taps of a kernel with unequal spatial sizes twice and others never), for files "
	  "trained there; spec (default): the format's convolution (docs/original-framework.md)",
	  .choices = "original spec" },
	{ NULL },
};

const cli_opt_t cli_opts_input_shape[] = {
	{ "input-shape", 0, CLI_SHAPE, 0, "1,28,28,1",
	  .help = "the model's input shape, batch axis first (whole numbers separated by commas)" },
	{ NULL },
};

const cli_opt_t cli_opts_force[] = {
	{ "force", 0, CLI_FLAG, 0, NULL, .help = "write binary output to standard output even when it is a terminal" },
	{ NULL },
};

const cli_opt_t cli_opts_json[] = {
	{ "json", 0, CLI_FLAG, 0, NULL,
	  .help = "one JSON object on stdout instead of text, a failure's too (docs/cli-json.md)" },
	{ NULL },
};

/* main.c takes these out of argv wherever they are (before `--`). */
const cli_opt_t cli_opts_global[] = {
	{ "plugin", 0, CLI_IN, CLI_REPEAT, "FILE", "load the plugin FILE first (repeatable; before NNN_PLUGIN_PATH)",
	  .nodash = "a plugin is loaded from a file" },
	{ "no-default-plugins", 0, CLI_FLAG, 0, NULL,
	  .help = "load only --plugin files: not NNN_PLUGIN_PATH, not the installed folder" },
	{ "progress", 0, CLI_FLAG, 0, NULL,
	  .help = "draw a progress bar on stderr (run, eval, conformance) even when it is not a terminal" },
	{ "no-progress", 0, CLI_FLAG, 0, NULL, .help = "never draw a progress bar (the option wins over NNNKIT_PROGRESS)" },
	{ NULL },
};

/* The one exit-code table (cli.h's enum gives the numbers). */
static const struct {
	int code;
	const char *meaning;
} exit_table[] = {
	{ EXIT_VALID, "success (the model is valid)" },
	{ EXIT_INVALID, "a model or data file is invalid, or they do not fit together (the message names the file)" },
	{ EXIT_USAGE, "a usage error (the option or file to fix is named) or a system error (I/O, memory)" },
	{ EXIT_PLUGIN, "a plugin failed to load, two conflict, or no plugin provides a kernel the model needs" },
};

/* Every variable nnnkit, libnnn and the builtin plugin read (the suite
 * checks this list against the sources' getenv calls). */
static const struct {
	const char *name, *doc;
} env_table[] = {
	{ "NNN_PLUGIN_PATH", "Colon-separated absolute folders whose *.so files are loaded as plugins, after those given "
	                     "with --plugin and before the installed plugin folder. Relative folders are ignored." },
	{ "NNN_PLUGIN_ALLOW_INSECURE", "Set to 1 to load plugins from files or folders that other users can write." },
	{ "NNN_PLUGIN_CACHE", "The file where plugin scan verdicts are cached (default "
	                      "$XDG_CACHE_HOME/nnnkit/plugin-scan.cache, else ~/.cache/nnnkit/plugin-scan.cache); "
	                      "empty turns the cache off." },
	{ "XDG_CACHE_HOME", "The cache folder's parent, when NNN_PLUGIN_CACHE is not set (an absolute path)." },
	{ "HOME", "Where ~/.cache is, when neither NNN_PLUGIN_CACHE nor XDG_CACHE_HOME is set." },
	{ "NNN_PLUGIN_SCAN_TIMEOUT_MS", "Milliseconds a plugin candidate may take to load in its scanning child process "
	                                "(default 5000)." },
	{ "NNN_BUILTIN_ISA", "Caps the instruction set of the builtin kernels: generic (portable code and OpenBLAS) or "
	                     "avx2. Unset, the best the CPU offers is used." },
	{ "NNN_BUILTIN_ZMM", "half or full: whether the CPU's 512-bit multiply-adds run at half rate (then the builtin "
	                     "kernels that gain from it use 256-bit vectors) or full rate. Unset, the CPU's family "
	                     "decides (AMD family 19h, Zen 4: half)." },
	{ "NNN_BUILTIN_BLAS", "The CBLAS library the builtin kernels load (default libopenblas.so.0)." },
	{ "NNNKIT_PROGRESS", "1 draws progress bars, 0 never does; unset or empty: only when stderr is a terminal and "
	                     "TERM is not dumb. Any other value is a usage error (exit 2). --progress and --no-progress "
	                     "win over it." },
	{ "TERM", "A terminal named dumb gets no progress bar." },
	{ "TMPDIR", "Where nnnkit conformance makes its temporary folder (default /tmp)." },
};

static const struct {
	const char *path, *doc;
} file_table[] = {
	{ "PREFIX/lib/nnnkit/plugins/", "The installed plugin folder, found from the executable's own location (never "
	                                "the current directory); the builtin kernels live there." },
	{ "PREFIX/lib/nnnkit/nnn-plugin-scan", "Loads each plugin candidate in a child process before nnnkit does." },
	{ "PREFIX/share/nnnkit/schema/nnn.lua", "The format's grammar, from which the codec is generated." },
	{ "PREFIX/share/doc/nnnkit/", "README.md, and in docs/ the format, the schema language, plugins, security, "
	                              "JSON, building models from NumPy, growing the format and performance." },
	{ "PREFIX/share/bash-completion/completions/nnnkit", "The bash completion, generated from the option tables." },
};

/* ---- small helpers ---- */

int cli_usage(cli_env_t *env, const cli_cmd_t *cmd, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	/* msg quotes the command line: escaped as any message. */
	cli_say(stderr, "nnnkit %s: %s\nsee 'nnnkit %s --help'\n", cmd->name, msg, cmd->name);
	if (env)
		cli_json_usage(env, msg);
	return EXIT_USAGE;
}

const char *cli_name(const char *path)
{
	/* Only '-' makes nnnkit read a /proc/self/fd path (read_stdin); the
	 * .npy reader takes '-' itself. Outputs to '-' are cli_out_name's. */
	return path && (!strncmp(path, "/proc/self/fd/", 14) || !strcmp(path, "-")) ? "stdin" : path;
}

const char *cli_out_name(const char *path)
{
	return path && !strcmp(path, "-") ? "stdout" : path;
}

int cli_check_env(void)
{
	const char *v = getenv("NNNKIT_PROGRESS");
	if (v && v[0] && strcmp(v, "0") && strcmp(v, "1")) {
		fprintf(stderr, "nnnkit: NNNKIT_PROGRESS must be 0 or 1 (or unset), not '");
		cli_esc_print(stderr, v, strlen(v), NNN_ESC_C);
		fprintf(stderr, "'\n");
		return EXIT_USAGE;
	}
	return EXIT_VALID;
}

/* Calls f(opt, ctx) for each option of cmd, fragments in order. */
#define EACH_OPT(cmd, o)                                                                                               \
	for (const cli_opt_t *const *frag_ = (cmd)->opts; frag_ && *frag_; frag_++)                                   \
		for (const cli_opt_t *o = *frag_; o->name; o++)

static const char *kind_name(cli_kind_t k)
{
	static const char *const names[] = { "flag", "number", "real", "text", "choice", "shape",
		                             "file-in", "file-out", "dir-in", "dir-out" };
	return names[k];
}

/* "--batch" or "-o/--output": how a message names an option. */
static const char *opt_name(const cli_opt_t *o, char *buf, size_t size)
{
	snprintf(buf, size, "--%s", o->name);
	return buf;
}

/* What values an option takes, for messages and help. */
static void range_text(const cli_opt_t *o, char *buf, size_t size)
{
	buf[0] = '\0';
	if (o->kind == CLI_NUM)
		snprintf(buf, size, "a whole number from %" PRIu64 " to %" PRIu64, o->min, o->max);
	else if (o->kind == CLI_REAL)
		snprintf(buf, size, "a number from %g to %g", o->rmin, o->rmax);
	else if (o->kind == CLI_CHOICE)
		snprintf(buf, size, "one of: %s", o->choices);
	else if (o->kind == CLI_SHAPE)
		snprintf(buf, size, "whole numbers from 1 separated by commas, such as %s", o->metavar);
}

/* ---- parsing ---- */

static cli_val_t *find_val(const cli_args_t *a, const char *name)
{
	for (int i = 0; i < a->nvals; i++)
		if (!strcmp(a->val[i].opt->name, name))
			return (cli_val_t *)&a->val[i];
	/* A command asking for an option it does not declare: a bug, caught by
	 * the conventions test, which runs every command. */
	fprintf(stderr, "nnnkit %s: internal error: no option --%s in its table\n", a->cmd->name, name);
	abort();
}

int cli_flag(const cli_args_t *a, const char *name)
{
	return find_val(a, name)->given;
}

const char *cli_str(const cli_args_t *a, const char *name)
{
	const cli_val_t *v = find_val(a, name);
	return v->given ? v->text : NULL;
}

int cli_strs(const cli_args_t *a, const char *name, const char *const **out)
{
	const cli_val_t *v = find_val(a, name);
	*out = v->texts;
	return v->given;
}

uint64_t cli_num(const cli_args_t *a, const char *name, uint64_t dflt)
{
	const cli_val_t *v = find_val(a, name);
	return v->given ? v->n : dflt;
}

double cli_real(const cli_args_t *a, const char *name, double dflt)
{
	const cli_val_t *v = find_val(a, name);
	return v->given ? v->r : dflt;
}

const nnn_shape_t *cli_shape(const cli_args_t *a, const char *name)
{
	const cli_val_t *v = find_val(a, name);
	return v->given ? &v->shape : NULL;
}

const char *cli_arg(const cli_args_t *a, const char *name)
{
	for (int i = 0; a->cmd->pos && a->cmd->pos[i].name; i++)
		if (!strcmp(a->cmd->pos[i].name, name))
			return a->pos[i];
	fprintf(stderr, "nnnkit %s: internal error: no argument %s in its table\n", a->cmd->name, name);
	abort();
}

/* Digits only: strtoull would take spaces, a sign, and wrap around. */
static int whole(const char *v, uint64_t *out)
{
	uint64_t n = 0;
	if (!v[0])
		return 0;
	for (const char *p = v; *p; p++) {
		unsigned d = (unsigned)(*p - '0');
		if (d > 9 || n > (UINT64_MAX - d) / 10)
			return 0;
		n = n * 10 + d;
	}
	*out = n;
	return 1;
}

/* A value into v per its option's kind; EXIT_USAGE (printed) when bad. */
static int convert(const cli_args_t *a, cli_val_t *v, const char *text)
{
	const cli_cmd_t *cmd = a->cmd;
	const cli_opt_t *o = v->opt;
	char name[64], range[160];
	opt_name(o, name, sizeof name);
	range_text(o, range, sizeof range);
	v->text = text;
	switch (o->kind) {
	case CLI_NUM:
		if (!whole(text, &v->n) || v->n < o->min || v->n > o->max)
			return cli_usage(a->env, cmd, "%s needs %s, not '%s'", name, range, text);
		break;
	case CLI_REAL: {
		char *end;
		errno = 0;
		v->r = strtod(text, &end);
		/* Decimal only: no hex, inf or nan, no leading space. */
		if (!text[0] || *end || errno || strpbrk(text, "xXnN \t") || !(v->r >= o->rmin && v->r <= o->rmax))
			return cli_usage(a->env, cmd, "%s needs %s, not '%s'", name, range, text);
		break;
	}
	case CLI_CHOICE: {
		size_t n = strlen(text);
		const char *p = n ? strstr(o->choices, text) : NULL;
		while (p && !((p == o->choices || p[-1] == ' ') && (p[n] == ' ' || !p[n])))
			p = strstr(p + 1, text);
		if (!p)
			return cli_usage(a->env, cmd, "%s needs %s, not '%s'", name, range, text);
		break;
	}
	case CLI_SHAPE: {
		/* Stricter than nnn_shape_parse: commas only, none trailing. */
		int ok = text[0] != '\0', digit = 0;
		for (const char *p = text; ok && *p; p++) {
			if (*p >= '0' && *p <= '9')
				digit = 1;
			else if (*p == ',' && digit)
				digit = 0;
			else
				ok = 0;
		}
		nnn_diags_t d;
		nnn_diags_init(&d);
		if (!ok || !digit)
			return nnn_diags_free(&d), cli_usage(a->env, cmd, "%s needs %s, not '%s'", name, range, text);
		if (nnn_shape_parse(text, &v->shape, &d) != NNN_OK) {
			int code = cli_usage(a->env, cmd, "%s: %s", name, d.n ? d.v[0].msg : "bad shape");
			nnn_diags_free(&d);
			return code;
		}
		nnn_diags_free(&d);
		break;
	}
	default:
		if (!text[0])
			return cli_usage(a->env, cmd, "%s needs a %s, not an empty word", name, o->metavar ? o->metavar : "value");
		break;
	}
	return EXIT_VALID;
}

/* The option named by s (after "--", up to '=' or its end), or NULL. */
static cli_val_t *long_opt(cli_args_t *a, const char *s, size_t n)
{
	for (int i = 0; i < a->nvals; i++) {
		const cli_opt_t *o = a->val[i].opt;
		if ((strlen(o->name) == n && !strncmp(o->name, s, n)) ||
		    (o->alias && strlen(o->alias) == n && !strncmp(o->alias, s, n)))
			return &a->val[i];
	}
	return NULL;
}

static cli_val_t *short_opt(cli_args_t *a, char c)
{
	for (int i = 0; i < a->nvals; i++)
		if (c && a->val[i].opt->short_name == c)
			return &a->val[i];
	return NULL;
}

/* The declared option nearest to a mistyped one, or NULL. */
static const char *suggest(const cli_args_t *a, const char *word)
{
	const char *best = NULL;
	size_t best_d = 3;
	for (int i = 0; i < a->nvals; i++) {
		const cli_opt_t *o = a->val[i].opt;
		size_t d = nnn_edit_distance(word, o->name);
		if (!strncmp(o->name, word, strlen(word)) && word[0])
			d = 1;
		if (d < best_d && !(o->flags & CLI_HIDDEN))
			best_d = d, best = o->name;
	}
	if (!best && (!strcmp(word, "help") || !strcmp(word, "h")))
		best = "help";
	return best;
}

static int unknown(const cli_args_t *a, const char *arg)
{
	char word[64];
	snprintf(word, sizeof word, "%.*s", (int)strcspn(arg, "="), arg + strspn(arg, "-"));
	const char *s = suggest(a, word);
	if (s)
		return cli_usage(a->env, a->cmd, "unknown option %.*s; did you mean --%s?", (int)strcspn(arg, "="), arg, s);
	return cli_usage(a->env, a->cmd, "unknown option %.*s", (int)strcspn(arg, "="), arg);
}

/* '-' where the entry allows it, else why not. */
static int check_dash(const cli_args_t *a, const char *what, cli_kind_t kind, unsigned flags, const char *nodash)
{
	if (flags & CLI_DASH)
		return EXIT_VALID;
	if (nodash)
		return cli_usage(a->env, a->cmd, "%s cannot be '-': %s", what, nodash);
	return cli_usage(a->env, a->cmd, "%s cannot be '-' (%s): name a file", what,
	                 kind == CLI_IN || kind == CLI_DIR_IN ? "standard input is not read here"
	                                                      : "standard output is not written here");
}

/* stdin as a path every reader takes: a redirected regular file in place,
 * else (a pipe, a terminal) read whole into a memory file, up to
 * CLI_STDIN_MAX bytes. The descriptor stays open until exit. */
static int read_stdin(const cli_args_t *a, const char **path)
{
	static char buf[32]; /* set once per process, before any command runs */
	struct stat st;
	if (isatty(STDIN_FILENO))
		return cli_usage(a->env, a->cmd, "'-' reads standard input, which is a terminal: redirect a file or a pipe to it");
	if (fstat(STDIN_FILENO, &st) == 0 && S_ISREG(st.st_mode)) {
		snprintf(buf, sizeof buf, "/proc/self/fd/%d", STDIN_FILENO);
		*path = buf;
		return EXIT_VALID;
	}
	int fd = memfd_create("nnnkit-stdin", MFD_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "nnnkit %s: cannot hold standard input in memory: %s\n", a->cmd->name, strerror(errno));
		return EXIT_USAGE;
	}
	char chunk[65536];
	uint64_t total = 0;
	unsigned char head[64];
	size_t hn = 0;
	int sniffed = 0;
	for (;;) {
		ssize_t n = read(STDIN_FILENO, chunk, sizeof chunk);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			fprintf(stderr, "nnnkit: stdin: cannot read: %s\n", strerror(errno));
			close(fd);
			return EXIT_USAGE;
		}
		if (n == 0)
			break;
		total += (uint64_t)n;
		/* Bytes that do not start like a model (.nnn or JSON) are not read
		 * on: the decoder names what it found in the first ones. */
		for (ssize_t k = 0; k < n && hn < sizeof head; k++)
			head[hn++] = (unsigned char)chunk[k];
		int garbage = 0;
		if (!sniffed && hn == sizeof head) {
			garbage = cli_form("", head, hn) == CLI_UNKNOWN;
			sniffed = 1;
		}
		if (total > CLI_STDIN_MAX) {
			fprintf(stderr, "nnnkit: stdin: more than %" PRIu64 " bytes; give the file's name instead of '-'\n",
			        CLI_STDIN_MAX);
			close(fd);
			return EXIT_USAGE;
		}
		for (ssize_t k = 0; k < n;) {
			ssize_t w = write(fd, chunk + k, (size_t)(n - k));
			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0) {
				fprintf(stderr, "nnnkit: stdin: cannot hold it in memory: %s\n", strerror(errno));
				close(fd);
				return EXIT_USAGE;
			}
			k += w;
		}
		if (garbage)
			break;
	}
	snprintf(buf, sizeof buf, "/proc/self/fd/%d", fd);
	*path = buf;
	return EXIT_VALID;
}

int cli_binary_ok(const cli_args_t *a, const char *path, const char *what)
{
	int forced = 0;
	for (int i = 0; i < a->nvals; i++)
		if (!strcmp(a->val[i].opt->name, "force"))
			forced = a->val[i].given;
	if (!path || strcmp(path, "-") || forced || !isatty(STDOUT_FILENO))
		return EXIT_VALID;
	return cli_usage(a->env, a->cmd, "refusing to write %s to a terminal: redirect standard output, or give --force", what);
}

/* Where the parse of argv stands. */
typedef struct parse {
	int npos, maxpos, dashdash;
	const char *extra; /* the first argument past the positionals */
} parse_t;

/* The option argv[*i] names (with its value: "--opt=V", "-oV", or the next
 * argument), given and converted. */
static int take_option(cli_args_t *a, int argc, char **argv, int *i)
{
	const char *s = argv[*i], *text = NULL;
	cli_val_t *v;
	char name[64];
	int code;
	if (s[1] == '-') {
		size_t n = strcspn(s + 2, "=");
		if (!(v = long_opt(a, s + 2, n)))
			return unknown(a, s);
		if (s[2 + n] == '=') {
			if (v->opt->kind == CLI_FLAG)
				return cli_usage(a->env, a->cmd, "--%s takes no value", v->opt->name);
			text = s + 3 + n;
		}
	} else {
		if (!(v = short_opt(a, s[1])))
			return unknown(a, s);
		if (s[2]) {
			if (v->opt->kind == CLI_FLAG)
				return unknown(a, s); /* no bundling of short flags */
			text = s + 2;
		}
	}
	const cli_opt_t *o = v->opt;
	opt_name(o, name, sizeof name);
	if (v->given && o->kind != CLI_FLAG && !(o->flags & CLI_REPEAT))
		return cli_usage(a->env, a->cmd, "%s given twice", name);
	v->given++;
	if (o->kind == CLI_FLAG)
		return EXIT_VALID;
	if (!text) {
		if (*i + 1 == argc)
			return cli_usage(a->env, a->cmd, "%s needs a value (%s)", name, o->metavar ? o->metavar : "VALUE");
		text = argv[++*i];
	}
	if ((code = convert(a, v, text)) != EXIT_VALID)
		return code;
	if (o->flags & CLI_REPEAT) {
		if (v->given > CLI_MAX_REPEAT)
			return cli_usage(a->env, a->cmd, "%s given more than %d times", name, CLI_MAX_REPEAT);
		v->texts[v->given - 1] = v->text;
	}
	return EXIT_VALID;
}

/* One argument of argv (and the value it takes, if any). */
static int take_word(cli_args_t *a, parse_t *ps, int argc, char **argv, int *i)
{
	const char *s = argv[*i];
	if (ps->dashdash || s[0] != '-' || !s[1]) {
		if (ps->npos == ps->maxpos)
			ps->extra = ps->extra ? ps->extra : s; /* told after the loop: --help may follow */
		else
			a->pos[ps->npos++] = s;
		return EXIT_VALID;
	}
	if (!strcmp(s, "--")) {
		ps->dashdash = 1;
		return EXIT_VALID;
	}
	if (!strcmp(s, "-h") || !strcmp(s, "--help")) {
		a->help = 1;
		return EXIT_VALID;
	}
	return take_option(a, argc, argv, i);
}

/* A positional that names what an option names (OUT and -o): one value for
 * both, given once. */
static int join_positionals(cli_args_t *a, int maxpos)
{
	const cli_cmd_t *cmd = a->cmd;
	for (int k = 0; k < maxpos; k++) {
		const cli_pos_t *p = &cmd->pos[k];
		if (!p->option)
			continue;
		cli_val_t *v = long_opt(a, p->option, strlen(p->option));
		if (a->pos[k] && v->given)
			return cli_usage(a->env, cmd, "%s given twice: as --%s and as %s", p->name, p->option, p->name);
		if (v->given)
			a->pos[k] = v->text;
		else if (a->pos[k])
			v->given = 1, v->text = a->pos[k];
	}
	return EXIT_VALID;
}

/* Every positional and option the command requires is there. */
static int check_required(const cli_args_t *a, int maxpos)
{
	const cli_cmd_t *cmd = a->cmd;
	for (int k = 0; k < maxpos; k++)
		if (!a->pos[k] && !(cmd->pos[k].flags & CLI_OPTIONAL))
			return cli_usage(a->env, cmd, cmd->pos[k].option ? "no %s given (or --%s)" : "no %s given", cmd->pos[k].name,
			                 cmd->pos[k].option);
	for (int i = 0; i < a->nvals; i++)
		if ((a->val[i].opt->flags & CLI_REQUIRED) && !a->val[i].given)
			return cli_usage(a->env, cmd, "no --%s given", a->val[i].opt->name);
	return EXIT_VALID;
}

/* Each '-' allowed or refused; *stdin_users counts the inputs it names,
 * *lib_reads those a .npy reader reads itself. */
static int check_dashes(cli_args_t *a, int maxpos, int *stdin_users, int *lib_reads)
{
	const cli_cmd_t *cmd = a->cmd;
	char name[64];
	int code;
	for (int k = 0; k < maxpos; k++) {
		const cli_pos_t *p = &cmd->pos[k];
		if (!a->pos[k] || strcmp(a->pos[k], "-"))
			continue;
		const cli_opt_t *o = p->option ? long_opt(a, p->option, strlen(p->option))->opt : NULL;
		if ((code = check_dash(a, p->name, p->kind, p->flags | (o ? o->flags & CLI_DASH : 0), p->nodash)) != 0)
			return code;
		*stdin_users += p->kind == CLI_IN;
	}
	for (int i = 0; i < a->nvals; i++) {
		const cli_opt_t *o = a->val[i].opt;
		if (!a->val[i].given || !a->val[i].text || strcmp(a->val[i].text, "-"))
			continue;
		if ((code = check_dash(a, opt_name(o, name, sizeof name), o->kind, o->flags, o->nodash)) != 0)
			return code;
		if (o->flags & CLI_BINARY && (code = cli_binary_ok(a, "-", "binary output")) != 0)
			return code;
		*stdin_users += o->kind == CLI_IN;
		*lib_reads += o->kind == CLI_IN && (o->flags & CLI_DASH_LIB);
	}
	for (int k = 0; k < maxpos; k++)
		if (a->pos[k] && !strcmp(a->pos[k], "-") && cmd->pos[k].flags & CLI_BINARY &&
		    (code = cli_binary_ok(a, "-", "binary output")) != 0)
			return code;
	return EXIT_VALID;
}

/* '-': allowed, refused or read, once for all. */
static int resolve_dashes(cli_args_t *a, int maxpos)
{
	int stdin_users = 0, lib_reads = 0, code;
	const char *path;
	if ((code = check_dashes(a, maxpos, &stdin_users, &lib_reads)) != EXIT_VALID)
		return code;
	if (stdin_users > 1)
		return cli_usage(a->env, a->cmd, "'-' for two inputs: standard input can be read only once");
	if (stdin_users != 1 || lib_reads)
		return EXIT_VALID;
	if ((code = read_stdin(a, &path)) != EXIT_VALID)
		return code;
	for (int k = 0; k < maxpos; k++)
		if (a->pos[k] && !strcmp(a->pos[k], "-") && a->cmd->pos[k].kind == CLI_IN)
			a->pos[k] = path;
	for (int i = 0; i < a->nvals; i++)
		if (a->val[i].given && a->val[i].text && !strcmp(a->val[i].text, "-") && a->val[i].opt->kind == CLI_IN &&
		    !(a->val[i].opt->flags & CLI_DASH_LIB))
			a->val[i].text = path;
	return EXIT_VALID;
}

int cli_parse(const cli_cmd_t *cmd, int argc, char **argv, cli_args_t *a, cli_env_t *env)
{
	parse_t ps = { 0 };
	int code;
	memset(a, 0, sizeof *a);
	a->cmd = cmd;
	a->env = env;
	EACH_OPT(cmd, o) {
		if (a->nvals == CLI_MAX_VALS)
			abort(); /* a table past CLI_MAX_VALS: raise it */
		a->val[a->nvals++].opt = o;
	}
	while (cmd->pos && cmd->pos[ps.maxpos].name)
		ps.maxpos++;
	for (int i = 1; i < argc; i++)
		if ((code = take_word(a, &ps, argc, argv, &i)) != EXIT_VALID)
			return code;
	if (a->help)
		return EXIT_VALID;
	if (ps.extra)
		return cli_usage(a->env, cmd, ps.maxpos ? "unexpected argument '%s' (after %s)" : "unexpected argument '%s'",
		                 ps.extra, ps.maxpos ? cmd->pos[ps.maxpos - 1].name : "");
	if ((code = join_positionals(a, ps.maxpos)) != EXIT_VALID || (code = check_required(a, ps.maxpos)) != EXIT_VALID)
		return code;
	return resolve_dashes(a, ps.maxpos);
}

/* ---- help ---- */

/* "  -o, --output FILE" */
static int opt_lead(char *buf, size_t size, const cli_opt_t *o)
{
	return snprintf(buf, size, "  %c%c%s--%s%s%s", o->short_name ? '-' : ' ', o->short_name ? o->short_name : ' ',
	                o->short_name ? ", " : "  ", o->name, o->metavar ? " " : "", o->metavar ? o->metavar : "");
}

/* An option's help with what values it takes, and '-' where it works. */
static void opt_doc(char *buf, size_t size, const cli_opt_t *o)
{
	char range[160];
	range_text(o, range, sizeof range);
	snprintf(buf, size, "%s%s%s%s%s", o->help, range[0] && o->kind != CLI_SHAPE ? "; " : "",
	         o->kind != CLI_SHAPE ? range : "",
	         o->flags & CLI_DASH ? (o->kind == CLI_IN ? "; '-' reads stdin" : "; '-' writes stdout") : "",
	         o->flags & CLI_REQUIRED ? "; required" : "");
}

void cli_exit_lines(FILE *f, const cli_cmd_t *cmd)
{
	for (size_t i = 0; i < sizeof exit_table / sizeof exit_table[0]; i++) {
		int c = exit_table[i].code;
		if (cmd && !(cmd->exits & CLI_EXIT(c)))
			continue;
		fprintf(f, "  %d  %s\n", c, cmd && cmd->exit_what[c] ? cmd->exit_what[c] : exit_table[i].meaning);
	}
}

/* "LEAD  DOC", DOC wrapped at 100 columns under column 25. */
static void help_line(FILE *f, const char *lead, const char *doc)
{
	int col = fprintf(f, "%s", lead);
	if (col > 24) {
		fputc('\n', f);
		col = 0;
	}
	fprintf(f, "%*s", 25 - col, "");
	col = 25;
	for (const char *p = doc; *p;) {
		size_t n = strcspn(p, " ");
		if (col > 25 && col + 1 + (int)n > 100) {
			fprintf(f, "\n%25s", "");
			col = 25;
		} else if (col > 25) {
			fputc(' ', f);
			col++;
		}
		fwrite(p, 1, n, f);
		col += (int)n;
		p += n;
		p += strspn(p, " ");
	}
	fputc('\n', f);
}

void cli_help(FILE *f, const cli_cmd_t *cmd)
{
	char lead[128], doc[512];
	fputs(cmd->help, f);
	if (!cmd->main)
		return;
	if (cmd->pos && cmd->pos[0].name) {
		fputs("\nArguments:\n", f);
		for (const cli_pos_t *p = cmd->pos; p->name; p++) {
			snprintf(lead, sizeof lead, "  %s", p->name);
			snprintf(doc, sizeof doc, "%s%s", p->help ? p->help : "",
			         p->flags & CLI_DASH ? (p->kind == CLI_IN ? "; '-' reads stdin" : "; '-' writes stdout") : "");
			help_line(f, lead, doc);
		}
	}
	fputs("\nOptions:\n", f);
	EACH_OPT(cmd, o) {
		if (o->flags & CLI_HIDDEN)
			continue;
		int n = opt_lead(lead, sizeof lead, o);
		opt_doc(doc, sizeof doc, o);
		if (o->alias)
			snprintf(lead + n, sizeof lead - (size_t)n, " (or --%s)", o->alias);
		help_line(f, lead, doc);
	}
	help_line(f, "  -h, --help", "this help");
	fprintf(f, "Global options (before or after the command): --plugin FILE, --no-default-plugins,\n"
	           "--progress, --no-progress (nnnkit --help).\n");
	fputs("\nExit status:\n", f);
	cli_exit_lines(f, cmd);
}

/* ---- man page sections (roff) ---- */

/* Text as literal roff: backslashes escaped, '-' as \-, no line read as a
 * request. */
static void roff(FILE *f, const char *s)
{
	int bol = 1;
	for (; *s; s++) {
		if (bol && (*s == '.' || *s == '\''))
			fputs("\\&", f);
		if (*s == '\\')
			fputs("\\e", f);
		else if (*s == '-')
			fputs("\\-", f);
		else
			fputc(*s, f);
		bol = *s == '\n';
	}
}

/* ".TP" and "\fB-o\fR, \fB--output\fR \fIFILE\fR". */
static void man_tag(FILE *f, const cli_opt_t *o)
{
	fputs(".TP\n", f);
	if (o->short_name)
		fprintf(f, "\\fB\\-%c\\fR, ", o->short_name);
	fputs("\\fB\\-\\-", f);
	roff(f, o->name);
	fputs("\\fR", f);
	if (o->alias) {
		fputs(", \\fB\\-\\-", f);
		roff(f, o->alias);
		fputs("\\fR", f);
	}
	if (o->metavar) {
		fputs(" \\fI", f);
		roff(f, o->metavar);
		fputs("\\fR", f);
	}
	fputc('\n', f);
}

void cli_man(FILE *f, const cli_cmd_t *const *cmds, size_t n)
{
	char doc[512];
	fputs(".SH OPTIONS\nThese options go before or after the command, anywhere before\n.BR \\-\\- .\n", f);
	for (const cli_opt_t *o = cli_opts_global; o->name; o++) {
		man_tag(f, o);
		roff(f, o->help);
		fputc('\n', f);
	}
	fputs(".TP\n.B \\-\\-version\nThe version, plugin ABI and schema layout.\n", f);
	fputs(".TP\n.BR \\-h \", \" \\-\\-help\nThe general help; with a command, that command's help\n"
	      "(also\n.BR \"nnnkit help\" \" COMMAND\" ).\n",
	      f);
	fputs(".SH COMMANDS\n", f);
	for (size_t i = 0; i < n; i++) {
		const cli_cmd_t *c = cmds[i];
		fprintf(f, ".SS %s\n.nf\n", c->name);
		roff(f, c->help);
		fputs(".fi\n", f);
		if (!c->main)
			continue;
		for (const cli_pos_t *p = c->pos; p && p->name; p++) {
			fputs(".TP\n.I ", f);
			roff(f, p->name);
			fputc('\n', f);
			roff(f, p->help ? p->help : "");
			fputs(p->flags & CLI_DASH ? (p->kind == CLI_IN ? "; \\- reads stdin" : "; \\- writes stdout") : "", f);
			fputc('\n', f);
		}
		EACH_OPT(c, o) {
			if (o->flags & CLI_HIDDEN)
				continue;
			man_tag(f, o);
			opt_doc(doc, sizeof doc, o);
			roff(f, doc);
			fputc('\n', f);
		}
		fputs(".PP\nExit status:\n.nf\n", f);
		{
			char *text = NULL;
			size_t len = 0;
			FILE *m = open_memstream(&text, &len);
			if (m) {
				cli_exit_lines(m, c);
				fclose(m);
				roff(f, text ? text : "");
				free(text);
			}
		}
		fputs(".fi\n", f);
	}
	fputs(".SH ENVIRONMENT\n", f);
	for (size_t i = 0; i < sizeof env_table / sizeof env_table[0]; i++) {
		fprintf(f, ".TP\n.B %s\n", env_table[i].name);
		roff(f, env_table[i].doc);
		fputc('\n', f);
	}
	fputs(".SH EXIT STATUS\n", f);
	for (size_t i = 0; i < sizeof exit_table / sizeof exit_table[0]; i++) {
		fprintf(f, ".TP\n.B %d\n", exit_table[i].code);
		roff(f, exit_table[i].meaning);
		fputc('\n', f);
	}
	fputs(".SH FILES\n", f);
	for (size_t i = 0; i < sizeof file_table / sizeof file_table[0]; i++) {
		fputs(".TP\n.I ", f);
		roff(f, file_table[i].path);
		fputc('\n', f);
		roff(f, file_table[i].doc);
		fputc('\n', f);
	}
}

/* ---- bash completion ---- */

/* The options of a list of fragments that take a file or folder. */
static void comp_words(FILE *f, const cli_cmd_t *c, int files)
{
	int first = 1;
	EACH_OPT(c, o) {
		if (o->flags & CLI_HIDDEN)
			continue;
		int file = o->kind >= CLI_IN;
		if (files >= 0 && file != files)
			continue;
		fprintf(f, "%s--%s", first ? "" : files >= 0 ? "|" : " ", o->name);
		if (o->alias)
			fprintf(f, "%s--%s", files >= 0 ? "|" : " ", o->alias);
		if (o->short_name)
			fprintf(f, "%s-%c", files >= 0 ? "|" : " ", o->short_name);
		first = 0;
	}
	if (first && files >= 0)
		fputs("--@none@", f);
}

void cli_completion(FILE *f, const cli_cmd_t *const *cmds, size_t n)
{
	fputs("# bash completion for nnnkit, generated by 'nnnkit help --completion' from the option tables\n"
	      "# (runtime/cli/opts.c); do not edit.\n"
	      "_nnnkit()\n{\n\tlocal cur prev cmd i\n\tcur=${COMP_WORDS[COMP_CWORD]}\n"
	      "\tprev=${COMP_WORDS[COMP_CWORD-1]}\n\tcmd=\n"
	      "\tfor ((i = 1; i < COMP_CWORD; i++)); do\n\t\tcase ${COMP_WORDS[i]} in\n"
	      "\t\t--plugin) ((i++)) ;;\n\t\t-*) ;;\n\t\t*) cmd=${COMP_WORDS[i]}; break ;;\n\t\tesac\n\tdone\n"
	      "\tcase $prev in\n\t--plugin)\n"
	      "\t\tCOMPREPLY=($(compgen -f -X '!*.so' -- \"$cur\") $(compgen -d -- \"$cur\"))\n\t\treturn ;;\n\tesac\n"
	      "\tlocal global='",
	      f);
	for (const cli_opt_t *o = cli_opts_global; o->name; o++)
		fprintf(f, "--%s ", o->name);
	fputs("--help'\n\tcase $cmd in\n\t'')\n\t\tif [[ $cur == -* ]]; then\n"
	      "\t\t\tCOMPREPLY=($(compgen -W \"$global --version\" -- \"$cur\"))\n\t\telse\n\t\t\tCOMPREPLY=($(compgen -W '",
	      f);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s ", cmds[i]->name);
	fputs("help' -- \"$cur\"))\n\t\tfi\n\t\treturn ;;\n\thelp)\n\t\tCOMPREPLY=($(compgen -W '", f);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s%s", i ? " " : "", cmds[i]->name);
	fputs("' -- \"$cur\"))\n\t\treturn ;;\n", f);
	for (size_t i = 0; i < n; i++) {
		const cli_cmd_t *c = cmds[i];
		fprintf(f, "\t%s)\n\t\tcase $prev in\n\t\t", c->name);
		comp_words(f, c, 1);
		fputs(")\n\t\t\tCOMPREPLY=($(compgen -f -- \"$cur\")); return ;;\n\t\t", f);
		/* Options with a value that is not a file: nothing to offer. */
		int any = 0;
		EACH_OPT(c, o) {
			if (o->kind == CLI_FLAG || o->kind >= CLI_IN || o->flags & CLI_HIDDEN)
				continue;
			fprintf(f, "%s--%s", any ? "|" : "", o->name);
			if (o->alias)
				fprintf(f, "|--%s", o->alias);
			any = 1;
			if (o->kind == CLI_CHOICE) {
				fprintf(f, ")\n\t\t\tCOMPREPLY=($(compgen -W '%s' -- \"$cur\")); return ;;\n\t\t", o->choices);
				any = 0;
			}
		}
		if (any)
			fputs(")\n\t\t\tCOMPREPLY=(); return ;;\n\t\t", f);
		fputs("esac\n\t\tif [[ $cur == -* ]]; then\n\t\t\tCOMPREPLY=($(compgen -W '", f);
		comp_words(f, c, -1);
		fputs(" --help '\"$global\" -- \"$cur\"))\n\t\t\treturn\n\t\tfi ;;\n", f);
	}
	fputs("\tesac\n\tCOMPREPLY=($(compgen -f -- \"$cur\"))\n}\n"
	      "complete -o filenames -o bashdefault -F _nnnkit nnnkit\n",
	      f);
}

/* ---- the tables as JSON (nnnkit help --json), for the tests ---- */

static void jstr(FILE *f, const char *s)
{
	if (s)
		cli_json_str(f, s, strlen(s));
	else
		fputs("null", f);
}

void cli_dump(FILE *f, const cli_cmd_t *const *cmds, size_t n)
{
	fputs("{\"commands\": [", f);
	for (size_t i = 0; i < n; i++) {
		const cli_cmd_t *c = cmds[i];
		fprintf(f, "%s\n {\"name\": ", i ? "," : "");
		jstr(f, c->name);
		fprintf(f, ", \"parser\": %s, \"own_plugins\": %s, \"exits\": [", c->main ? "true" : "false",
		        c->own_plugins ? "true" : "false");
		for (int k = 0, first = 1; k < 4; k++)
			if (c->exits & CLI_EXIT(k))
				fprintf(f, "%s%d", first ? "" : ", ", k), first = 0;
		fputs("], \"options\": [", f);
		int first = 1;
		EACH_OPT(c, o) {
			fprintf(f, "%s\n  {\"name\": ", first ? "" : ",");
			jstr(f, o->name);
			fprintf(f, ", \"short\": ");
			if (o->short_name)
				fprintf(f, "\"%c\"", o->short_name);
			else
				fputs("null", f);
			fprintf(f, ", \"alias\": ");
			jstr(f, o->alias);
			fprintf(f, ", \"kind\": \"%s\", \"min\": %" PRIu64 ", \"max\": %" PRIu64 ", \"rmin\": %.17g, "
			           "\"rmax\": %.17g, \"dash\": %s, \"binary\": %s, \"required\": %s, \"repeat\": %s, "
			           "\"hidden\": %s, \"metavar\": ",
			        kind_name(o->kind), o->min, o->max, o->rmin, o->rmax, o->flags & CLI_DASH ? "true" : "false",
			        o->flags & CLI_BINARY ? "true" : "false", o->flags & CLI_REQUIRED ? "true" : "false",
			        o->flags & CLI_REPEAT ? "true" : "false", o->flags & CLI_HIDDEN ? "true" : "false");
			jstr(f, o->metavar);
			fputs(", \"choices\": ", f);
			jstr(f, o->choices);
			fputc('}', f);
			first = 0;
		}
		fputs("], \"positionals\": [", f);
		for (int k = 0; c->pos && c->pos[k].name; k++) {
			const cli_pos_t *p = &c->pos[k];
			fprintf(f, "%s\n  {\"name\": ", k ? "," : "");
			jstr(f, p->name);
			fprintf(f, ", \"kind\": \"%s\", \"dash\": %s, \"binary\": %s, \"optional\": %s, \"option\": ",
			        kind_name(p->kind), p->flags & CLI_DASH ? "true" : "false", p->flags & CLI_BINARY ? "true" : "false",
			        p->flags & CLI_OPTIONAL ? "true" : "false");
			jstr(f, p->option);
			fputc('}', f);
		}
		fputs("]}", f);
	}
	fputs("],\n\"global\": [", f);
	for (const cli_opt_t *o = cli_opts_global; o->name; o++) {
		fprintf(f, "%s", o == cli_opts_global ? "" : ", ");
		jstr(f, o->name);
	}
	fputs("],\n\"exits\": [", f);
	for (size_t i = 0; i < sizeof exit_table / sizeof exit_table[0]; i++) {
		fprintf(f, "%s{\"code\": %d, \"meaning\": ", i ? ", " : "", exit_table[i].code);
		jstr(f, exit_table[i].meaning);
		fputc('}', f);
	}
	fputs("],\n\"environment\": [", f);
	for (size_t i = 0; i < sizeof env_table / sizeof env_table[0]; i++) {
		fprintf(f, "%s", i ? ", " : "");
		jstr(f, env_table[i].name);
	}
	fputs("]}\n", f);
}
