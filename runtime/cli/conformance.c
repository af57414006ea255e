/* conformance.c: `nnnkit conformance`: run a decoder, nnnkit's own or any
 * other program, over the generated conformance corpus (make conformance)
 * and tabulate passed, failed and crashed cases by class. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

static int run(int argc, char **argv, cli_env_t *env);

const cli_cmd_t cmd_conformance = {
	"conformance", "run a .nnn decoder over the conformance corpus",
	"usage: nnnkit conformance [--corpus DIR] [--decoder 'CMD {file}'] [--timeout S] [--json]\n"
	"Runs every case of the corpus (DIR/manifest.json; default: the corpus installed beside nnnkit,\n"
	"written by `make conformance`) through a decoder and prints passed, failed and crashed cases\n"
	"by class, then a line such as '412 passed, 3 failed'.\n"
	"  --decoder CMD  a shell command; {file} is replaced by the case's path. Exit 0 means the\n"
	"                 file was accepted, any other exit rejected; a signal or a timeout is a crash.\n"
	"                 Without it nnnkit's own library is checked, and rejections must also carry\n"
	"                 the expected error code.\n"
	"  --timeout S    seconds a case may take (default 10)\n"
	"  --json         machine-readable results\n"
	"  --progress, --no-progress  a progress bar on stderr, per case (default: only when stderr is\n"
	"                 a terminal and TERM is not dumb; NNNKIT_PROGRESS=0/1 sets the default)\n"
	"Exit: 0 when every case passed, 1 otherwise, 2 on usage errors.\n",
	run,
};

enum { PASS, FAIL, CRASH };

typedef struct tally {
	char cls[32];
	int n[3];
} tally_t;

typedef struct conf {
	const char *corpus, *decoder;
	double timeout;
	int json;
	tally_t t[16];
	int nt;
	json_t *failures; /* [{file, class, why}] */
} conf_t;

static tally_t *tally_for(conf_t *c, const char *cls)
{
	for (int i = 0; i < c->nt; i++)
		if (!strcmp(c->t[i].cls, cls))
			return &c->t[i];
	if (c->nt == 16)
		return &c->t[15]; /* more classes than expected share the last row */
	snprintf(c->t[c->nt].cls, sizeof c->t[0].cls, "%s", cls);
	return &c->t[c->nt++];
}

/* The command with {file} replaced by the single-quoted path. */
static char *command(const char *tmpl, const char *path)
{
	size_t n = strlen(tmpl) + 4 * strlen(path) + 16;
	char *out = malloc(n), *o = out;
	if (!out)
		return NULL;
	for (const char *p = tmpl; *p;) {
		if (!strncmp(p, "{file}", 6)) {
			*o++ = '\'';
			for (const char *q = path; *q; q++) {
				if (*q == '\'') {
					memcpy(o, "'\\''", 4);
					o += 4;
				} else {
					*o++ = *q;
				}
			}
			*o++ = '\'';
			p += 6;
		} else {
			*o++ = *p++;
		}
	}
	*o = '\0';
	return out;
}

/* Runs the decoder on one file: PASS-able outcome 0 accept, 1 reject, CRASH. */
static int external(const conf_t *c, const char *path, char *why, size_t size)
{
	char *cmd = command(c->decoder, path);
	if (!cmd)
		return snprintf(why, size, "out of memory"), CRASH;
	pid_t pid = fork();
	if (pid == 0) {
		/* The decoder's own output is not ours to show. */
		if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr))
			_exit(127);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	free(cmd);
	if (pid < 0)
		return snprintf(why, size, "cannot fork: %s", strerror(errno)), CRASH;
	struct timespec tick = { 0, 1000000 };
	int status = 0;
	for (double waited = 0;; waited += 0.001) {
		pid_t r = waitpid(pid, &status, WNOHANG);
		if (r == pid)
			break;
		if (waited > c->timeout) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			snprintf(why, size, "timed out after %g s", c->timeout);
			return CRASH;
		}
		nanosleep(&tick, NULL);
	}
	if (WIFSIGNALED(status)) {
		snprintf(why, size, "killed by signal %d", WTERMSIG(status));
		return CRASH;
	}
	return WEXITSTATUS(status) == 0 ? 0 : 1;
}

/* nnnkit's own verdict, with the code it gave. */
static int internal(const nnn_ctx_t *ctx, const char *path, nnn_status_t *code)
{
	nnn_file_t *f;
	nnn_diags_t d;
	nnn_diags_init(&d);
	*code = nnn_file_map(path, &f, &d);
	if (*code == NNN_OK) {
		*code = nnn_file_validate(f, ctx, NULL, &d);
		nnn_file_close(f);
	}
	nnn_diags_free(&d);
	return *code == NNN_OK ? 0 : 1;
}

static void one_case(conf_t *c, const nnn_ctx_t *ctx, json_t *cs)
{
	const char *file = json_string_value(json_object_get(cs, "file"));
	const char *cls = json_string_value(json_object_get(cs, "class"));
	const char *want_code = json_string_value(json_object_get(cs, "code"));
	int valid = json_is_true(json_object_get(cs, "valid"));
	char path[4096], why[256] = "";
	nnn_status_t code = NNN_OK;
	int outcome, verdict;

	if (!file || !cls)
		return;
	snprintf(path, sizeof path, "%s/%s", c->corpus, file);
	outcome = c->decoder ? external(c, path, why, sizeof why) : internal(ctx, path, &code);
	if (outcome == CRASH) {
		verdict = CRASH;
	} else if (outcome == 0) {
		verdict = valid ? PASS : FAIL;
		if (!valid)
			snprintf(why, sizeof why, "accepted an invalid file (expected %s)", want_code ? want_code : "rejection");
	} else if (valid) {
		verdict = FAIL;
		snprintf(why, sizeof why, "rejected a valid file%s%s", c->decoder ? "" : ": ",
		         c->decoder ? "" : nnn_status_name(code));
	} else if (!c->decoder && want_code && strcmp(nnn_status_name(code), want_code)) {
		verdict = FAIL;
		snprintf(why, sizeof why, "rejected with %s, expected %s", nnn_status_name(code), want_code);
	} else {
		verdict = PASS;
	}
	tally_for(c, cls)->n[verdict]++;
	if (verdict != PASS)
		json_array_append_new(c->failures, json_pack("{s:s, s:s, s:s, s:s}", "file", file, "class", cls, "result",
		                                             verdict == CRASH ? "crashed" : "failed", "why", why));
}

static void report(const conf_t *c, int total[3])
{
	if (c->json) {
		json_t *classes = json_array();
		for (int i = 0; i < c->nt; i++)
			json_array_append_new(classes, json_pack("{s:s, s:i, s:i, s:i}", "class", c->t[i].cls, "passed",
			                                         c->t[i].n[PASS], "failed", c->t[i].n[FAIL], "crashed",
			                                         c->t[i].n[CRASH]));
		json_t *out = json_pack("{s:s, s:s, s:o, s:O, s:i, s:i, s:i}", "corpus", c->corpus, "decoder",
		                        c->decoder ? c->decoder : "libnnn (in process)", "classes", classes, "failures",
		                        c->failures, "passed", total[PASS], "failed", total[FAIL], "crashed",
		                        total[CRASH]);
		json_dumpf(out, stdout, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
		putchar('\n');
		json_decref(out);
		return;
	}
	printf("decoder: %s\n\n", c->decoder ? c->decoder : "libnnn (in process, codes checked too)");
	printf("%-12s %8s %8s %8s %8s\n", "class", "cases", "passed", "failed", "crashed");
	for (int i = 0; i < c->nt; i++) {
		const int *n = c->t[i].n;
		printf("%-12s %8d %8d %8d %8d\n", c->t[i].cls, n[0] + n[1] + n[2], n[PASS], n[FAIL], n[CRASH]);
	}
	size_t nf = json_array_size(c->failures);
	for (size_t i = 0; i < nf && i < 20; i++) {
		json_t *f = json_array_get(c->failures, i);
		printf("%s %s: %s\n", json_string_value(json_object_get(f, "result")),
		       json_string_value(json_object_get(f, "file")), json_string_value(json_object_get(f, "why")));
	}
	if (nf > 20)
		printf("... and %zu more (--json lists all)\n", nf - 20);
	if (total[CRASH])
		printf("%d crashed\n", total[CRASH]);
	printf("%d passed, %d failed\n", total[PASS], total[FAIL] + total[CRASH]);
}

static const char *default_corpus(const cli_env_t *env, char *buf, size_t size)
{
	if (!env->exe_dir)
		return NULL;
	snprintf(buf, size, "%s/../share/nnnkit/conformance", env->exe_dir);
	if (access(buf, F_OK) == 0)
		return buf;
	snprintf(buf, size, "%s/conformance", env->exe_dir);
	return buf;
}

static int run(int argc, char **argv, cli_env_t *env)
{
	conf_t c = { .timeout = 10 };
	char dflt[4096], manifest[4200];
	for (int i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (cli_is_help(argv[i])) {
			fputs(cmd_conformance.help, stdout);
			return EXIT_VALID;
		} else if (!strcmp(argv[i], "--corpus") && v) {
			c.corpus = v, i++;
		} else if (!strcmp(argv[i], "--decoder") && v) {
			if (!strstr(v, "{file}"))
				return cli_usage(&cmd_conformance, "--decoder needs {file} where the case's path goes");
			c.decoder = v, i++;
		} else if (!strcmp(argv[i], "--timeout") && v) {
			c.timeout = strtod(v, NULL), i++;
			if (!(c.timeout > 0))
				return cli_usage(&cmd_conformance, "--timeout needs a number of seconds > 0");
		} else if (!strcmp(argv[i], "--json")) {
			c.json = 1;
		} else {
			return cli_usage(&cmd_conformance, "unknown option or missing value: %s", argv[i]);
		}
	}
	if (!c.corpus && !(c.corpus = default_corpus(env, dflt, sizeof dflt)))
		return cli_usage(&cmd_conformance, "no --corpus given");
	snprintf(manifest, sizeof manifest, "%s/manifest.json", c.corpus);
	json_error_t err;
	json_t *m = json_load_file(manifest, 0, &err);
	if (!m) {
		fprintf(stderr, "nnnkit: %s: line %d: %s (write a corpus with `make conformance`, or give --corpus DIR)\n",
		        manifest, err.line, err.text);
		return EXIT_USAGE;
	}
	json_t *cases = json_object_get(m, "cases");
	if (!json_is_array(cases)) {
		fprintf(stderr, "nnnkit: %s: no \"cases\" array\n", manifest);
		json_decref(m);
		return EXIT_USAGE;
	}
	const nnn_ctx_t *ctx = c.decoder ? NULL : cli_ctx(env);
	c.failures = json_array();
	size_t i;
	json_t *cs;
	cli_progress_t pr;
	cli_progress_start(&pr, cli_progress_wanted(env->progress), "conformance", "cases", json_array_size(cases));
	json_array_foreach(cases, i, cs) {
		one_case(&c, ctx, cs);
		cli_progress_update(&pr, i + 1);
	}
	cli_progress_end(&pr);
	int total[3] = { 0, 0, 0 };
	for (int k = 0; k < c.nt; k++)
		for (int r = 0; r < 3; r++)
			total[r] += c.t[k].n[r];
	report(&c, total);
	json_decref(c.failures);
	json_decref(m);
	return total[FAIL] || total[CRASH] ? EXIT_INVALID : EXIT_VALID;
}
