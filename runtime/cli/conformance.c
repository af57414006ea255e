/* conformance.c: `nnnkit conformance`: run a decoder, nnnkit's own or any
 * other program, over the generated conformance corpus (make conformance)
 * and tabulate passed, failed and crashed cases by class. With nnnkit's own
 * library, every valid case is also validated with its recorded input shape
 * and run, in a child process (conformance_run.c). */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* realpath */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conformance_kit.h"

static int run(const cli_args_t *a, cli_env_t *env);

static const cli_opt_t conformance_opts[] = {
	{ "corpus", 0, CLI_DIR_IN, 0, "DIR", "the corpus (DIR/manifest.json; default: the one installed beside nnnkit)",
	  .nodash = "the corpus is a folder" },
	{ "reference", 0, CLI_STR, 0, "CMD",
	  .help = "a shell command that computes the same model: {model} (or {json}), {input}, {output} are replaced" },
	{ "tolerance", 0, CLI_REAL, 0, "T", "|nnnkit - reference| <= T * (1 + |reference|) per value (default 1e-4)",
	  .rmin = 0, .rmax = 1e30 },
	{ "decoder", 0, CLI_STR, 0, "CMD", .help = "a shell command; {file} is replaced by the case's path" },
	{ "timeout", 0, CLI_REAL, 0, "S", "seconds a case (and a reference command) may take (default 10)",
	  .rmin = 0.001, .rmax = 86400 },
	{ "verbose", 'v', CLI_FLAG, 0, NULL, .help = "one line per valid case: run, not run and why, max error" },
	{ "testee", 0, CLI_STR, 0, "CMD", .help = "a shell command speaking the testee protocol (docs/conformance.md)" },
	/* CLI_STR: a list read and, with --fix, written, which any text is */
	{ "known-failures", 0, CLI_STR, 0, "FILE", .help = "with --testee: the cases known to fail, one id a line "
	  "('# reason' after it)" },
	{ "fix", 0, CLI_FLAG, 0, NULL, .help = "with --known-failures: rewrite FILE to exactly the failing cases" },
	{ "level", 0, CLI_CHOICE, 0, "LEVEL", "with --testee: the checks that count, required or recommended (default: "
	  "recommended, which counts both)", .choices = "required recommended" },
	{ "results", 0, CLI_OUT, 0, "FILE", "with --testee: write the results JSON to FILE",
	  .nodash = "--json writes the results to stdout" },
	{ NULL },
};

const cli_cmd_t cmd_conformance = {
	.name = "conformance",
	.summary = "run a .nnn decoder over the conformance corpus",
	.main = run,
	.opts = CLI_OPTS(conformance_opts, cli_opts_json),
	.exits = CLI_EXITS_MODEL,
	.exit_what = { [0] = "every case passed (or failed as --known-failures lists)",
		       [1] = "a case failed or crashed (or a listed one passed)" },
	.help = "usage: nnnkit [--plugin FILE] conformance [--corpus DIR] [--reference 'CMD {model} {input} {output}']\n"
		"                 [--tolerance T] [--decoder 'CMD {file}'] [--timeout S] [-v] [--json]\n"
		"       nnnkit conformance [--corpus KIT] --testee CMD [--known-failures FILE [--fix]]\n"
		"                 [--level required|recommended] [--results FILE] [--timeout S] [--json]\n"
	"Runs every case of the corpus (DIR/manifest.json, written by `make conformance` or\n"
	"`nnngen --conformance DIR [--plugin FRAGMENT]`; default: the corpus installed beside nnnkit)\n"
	"through a decoder and prints passed, failed and crashed cases by class, what was run, then a\n"
	"line such as '412 passed, 3 failed'.\n"
	"Without --decoder, nnnkit's own library (with the plugins loaded) decodes and validates every\n"
	"case, and a rejection must carry the expected error code. Then every valid case is validated\n"
	"with the input shape the manifest records for it and, when every layer and activation in it\n"
	"has a kernel, run in a child process (a crash or a hang fails that case only): batch 1 on two\n"
	"inputs and batch 2 on both with 2 threads, over small finite values. A case fails when a\n"
	"kernel fails or crashes, leaves an output value unwritten or writes past the output, the\n"
	"batches disagree, or, when every parameter is finite and at most 1e4 in magnitude, an output\n"
	"is NaN or infinite.\n"
	"--reference CMD: a shell command that computes the same model (the plugin author's own\n"
	"implementation): {model} is replaced by the case's .nnn file, {json} by its\n"
	"JSON form, {input} by a float32 .npy of the batch-2 input, {output} by the\n"
	".npy it must write (paths single-quoted; files removed afterwards). Every run\n"
	"case with ordinary parameters is compared: a failing command, a missing or\n"
	"unreadable output, another shape or a value off by more than the tolerance\n"
	"fails the case, naming the max abs error and the first mismatching element.\n"
	"A reference that exits 77 declines the case (a type it does not compute):\n"
	"counted, not compared, not failed\n"
	"--decoder CMD: exit 0 means the file was accepted, any other exit rejected; a signal or a\n"
	"timeout is a crash. Nothing is run.\n"
	"--testee CMD: the implementation under test, one program speaking the testee protocol of\n"
	"docs/conformance.md (JSON lines on stdin and stdout), started once and asked every case's\n"
	"checks: decode, verdict, roundtrip and run (required), error: the exact code, path and offset\n"
	"(recommended). A request not answered within --timeout, a testee that dies or answers with\n"
	"anything but one JSON object with the request's id: its process group is killed, the check\n"
	"recorded as timeout, crashed or protocol with the end of its stderr, and the testee started\n"
	"again. The report gives each level and family passed/total, the unexpected failures and\n"
	"passes; --results FILE (or --json, on stdout) the results JSON.\n"
	"--known-failures FILE: cases known to fail, one id a line ('# reason' after it): such a case\n"
	"failing does not fail the run, and passing does (the list must not go stale); --fix rewrites\n"
	"FILE to exactly the failing cases, keeping the reasons given. --level required: only the\n"
	"required checks count for the verdict and the list.\n"
	"Each command, and each case's run, is a process group of its own, killed whole when it ends or\n"
	"times out, or when nnnkit gets SIGINT, SIGTERM or SIGHUP; what left the group (setsid) and\n"
	"outlived it is killed too.\n",
};

enum { PASS, FAIL, CRASH };

typedef struct tally {
	char cls[32];
	int n[3];
} tally_t;

typedef struct conf {
	const char *corpus, *decoder;
	conf_run_opts_t run;
	int json, verbose;
	tally_t t[16];
	int nt;
	json_t *failures; /* [{file, class, why}] */
	json_t *runs;     /* [{file, input_shape, result, why, max_error}], one per valid case */
	/* valid cases; validated with their input shape; run; outputs checked
	 * finite; compared with the reference; not run (no shape, no kernel) */
	int n_valid, n_shaped, n_run, n_finite, n_compared, n_declined, n_skipped;
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

/* Runs the decoder on one file: PASS-able outcome 0 accept, 1 reject, CRASH. */
static int external(const conf_t *c, const char *path, char *why, size_t size)
{
	const char *names[] = { "file" }, *values[] = { path };
	char *cmd = conf_command(c->decoder, names, values, 1);
	if (!cmd)
		return snprintf(why, size, "out of memory"), CRASH;
	/* The decoder's own output is not ours to show. */
	int status = conf_shell(cmd, NULL, c->run.timeout, why, size);
	free(cmd);
	return status < 0 ? CRASH : status == 0 ? 0 : 1;
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

/* The manifest's input shape of a case ([1, 6, 6, 3]), or 0. */
static int shape_of(json_t *a, nnn_shape_t *s)
{
	size_t i;
	json_t *v;
	if (!json_is_array(a) || json_array_size(a) < 1 || json_array_size(a) > NNN_MAX_RANK)
		return 0;
	s->rank = (int32_t)json_array_size(a);
	json_array_foreach(a, i, v) {
		if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > INT32_MAX)
			return 0;
		s->dims[i] = json_integer_value(v);
	}
	return 1;
}

/* A valid case that decoded and validated: validated with its input shape
 * and run (conformance_run.c). Returns the case's verdict. */
static int run_valid(conf_t *c, const nnn_ctx_t *ctx, const char *file, const char *path, json_t *shape, char *why,
                     size_t size)
{
	nnn_shape_t in;
	conf_run_t r = { .outcome = CONF_RUN_SKIPPED };
	c->n_valid++;
	if (!shape_of(shape, &in))
		snprintf(r.why, sizeof r.why, "the manifest records no input shape for it (a corpus from an older nnngen)");
	else
		conf_run_case(ctx, path, &in, &c->run, &r);
	c->n_shaped += r.validated;
	c->n_run += r.ran;
	c->n_finite += r.finite_check;
	c->n_compared += r.compared;
	c->n_declined += r.declined;
	c->n_skipped += r.outcome == CONF_RUN_SKIPPED;
	const char *result = r.outcome == CONF_RUN_OK ? "run" : r.outcome == CONF_RUN_SKIPPED ? "not run"
	                     : r.outcome == CONF_RUN_FAILED ? "failed" : "crashed";
	json_t *e = json_pack("{s:s, s:O, s:s}", "file", file, "input_shape", shape ? shape : json_null(), "result", result);
	if (r.why[0])
		json_object_set_new(e, "why", json_string(r.why));
	if (r.compared)
		json_object_set_new(e, "max_error", json_real(r.max_err));
	json_array_append_new(c->runs, e);
	snprintf(why, size, "%s", r.why);
	return r.outcome == CONF_RUN_FAILED ? FAIL : r.outcome == CONF_RUN_CRASHED ? CRASH : PASS;
}

static void one_case(conf_t *c, const nnn_ctx_t *ctx, json_t *cs)
{
	const char *file = json_string_value(json_object_get(cs, "file"));
	const char *cls = json_string_value(json_object_get(cs, "class"));
	const char *want_code = json_string_value(json_object_get(cs, "code"));
	int valid = json_is_true(json_object_get(cs, "valid"));
	char path[4096], why[1024] = "";
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
	if (valid && verdict == PASS && !c->decoder)
		verdict = run_valid(c, ctx, file, path, json_object_get(cs, "input_shape"), why, sizeof why);
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
		if (!c->decoder)
			json_object_set_new(out, "valid_cases",
			                    json_pack("{s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:s?, s:f, s:O}", "cases", c->n_valid,
			                              "validated_with_input_shape", c->n_shaped, "run", c->n_run,
			                              "checked_finite", c->n_finite, "compared", c->n_compared,
			                              "reference_declined", c->n_declined, "not_run",
			                              c->n_skipped, "reference", c->run.reference, "tolerance",
			                              c->run.tolerance, "runs", c->runs));
		/* ASCII: C1 and bidirectional controls as \uXXXX, as docs/cli-json.md promises */
		json_dumpf(out, stdout, JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII);
		putchar('\n');
		json_decref(out);
		return;
	}
	/* The command line's text, the corpus's names and every why (which quote
	 * files and plugins): escaped, as in any message. */
	cli_say(stdout, "decoder: %s\n\n", c->decoder ? c->decoder : "libnnn (in process, codes checked too)");
	printf("%-12s %8s %8s %8s %8s\n", "class", "cases", "passed", "failed", "crashed");
	for (int i = 0; i < c->nt; i++) {
		const int *n = c->t[i].n;
		cli_say(stdout, "%-12s %8d %8d %8d %8d\n", c->t[i].cls, n[0] + n[1] + n[2], n[PASS], n[FAIL], n[CRASH]);
	}
	if (!c->decoder) {
		printf("\nvalid cases %d: validated with their input shape %d, run %d (outputs checked finite %d, "
		       "compared with the reference %d, declined by it %d), not run %d\n",
		       c->n_valid, c->n_shaped, c->n_run, c->n_finite, c->n_compared, c->n_declined, c->n_skipped);
		if (c->run.reference)
			cli_say(stdout, "reference: %s (tolerance %g * (1 + |reference|))\n", c->run.reference, c->run.tolerance);
	}
	for (size_t i = 0; c->verbose && i < json_array_size(c->runs); i++) {
		json_t *r = json_array_get(c->runs, i), *e = json_object_get(r, "max_error");
		char *sh = json_dumps(json_object_get(r, "input_shape"), JSON_COMPACT | JSON_ENCODE_ANY);
		cli_say(stdout, "%-8s %s %s", json_string_value(json_object_get(r, "result")),
		       json_string_value(json_object_get(r, "file")), sh ? sh : "");
		if (e)
			printf(" max error %.3g", json_real_value(e));
		if (json_object_get(r, "why"))
			cli_say(stdout, ": %s", json_string_value(json_object_get(r, "why")));
		putchar('\n');
		free(sh);
	}
	size_t nf = json_array_size(c->failures);
	for (size_t i = 0; i < nf && i < 20; i++) {
		json_t *f = json_array_get(c->failures, i);
		cli_say(stdout, "%s %s: %s\n", json_string_value(json_object_get(f, "result")),
		       json_string_value(json_object_get(f, "file")), json_string_value(json_object_get(f, "why")));
	}
	if (nf > 20)
		printf("... and %zu more (--json lists all)\n", nf - 20);
	if (total[CRASH])
		printf("%d crashed\n", total[CRASH]);
	printf("%d passed, %d failed\n", total[PASS], total[FAIL] + total[CRASH]);
}

/* Where the corpus lives beside nnnkit (cli_own_dir): installed by `make
 * install`, or written by `make conformance` in the build folder. */
#define CORPUS_INSTALLED "share/nnnkit/conformance"
#define CORPUS_BUILT "conformance"

/* The manifest of --corpus DIR or, without it, of the corpus beside nnnkit
 * (c->corpus is set to it). NULL, said on stderr, when there is none: where
 * nnnkit looked and how to get one. */
static json_t *load_manifest(conf_t *c, cli_env_t *env, char *dflt, size_t size)
{
	char manifest[4200];
	const char *given = c->corpus;
	if (!given && !(c->corpus = cli_own_dir(env, CORPUS_INSTALLED, CORPUS_BUILT, dflt, size))) {
		cli_usage(env, &cmd_conformance, "cannot tell where nnnkit is installed (no /proc/self/exe): give --corpus DIR");
		return NULL;
	}
	snprintf(manifest, sizeof manifest, "%s/manifest.json", c->corpus);
	if (access(manifest, F_OK) != 0) {
		int e = errno;
		if (given)
			cli_say(stderr, "nnnkit: %s: %s (--corpus needs a folder written by `make conformance` or "
			        "`nnngen --conformance DIR`)\n", manifest, strerror(e));
		else
			cli_say(stderr, "nnnkit: conformance: no corpus: looked for %s/../" CORPUS_INSTALLED "/manifest.json "
			        "(installed by `make install`) and %s/" CORPUS_BUILT "/manifest.json (written by `make "
			        "conformance` in the build folder): %s; install nnnkit again, run `make conformance`, or give "
			        "--corpus DIR (`nnngen --conformance DIR` writes one)\n", env->exe_dir, env->exe_dir, strerror(e));
		return NULL;
	}
	json_error_t err;
	json_t *m = json_load_file(manifest, 0, &err);
	if (!m) {
		cli_say(stderr, "nnnkit: %s:%d:%d: %s (write the corpus again: `make conformance` or `nnngen "
		        "--conformance DIR`)\n", manifest, err.line, err.column, err.text);
	} else if (!json_is_array(json_object_get(m, "cases"))) {
		cli_say(stderr, "nnnkit: %s: no \"cases\" array (write the corpus again: `make conformance` or `nnngen "
		        "--conformance DIR`)\n", manifest);
		json_decref(m);
		m = NULL;
	}
	return m;
}

/* The options that go with --testee alone, and those that do not go with
 * it: a usage error naming them, or 0. */
static int testee_usage(const cli_args_t *a, cli_env_t *env)
{
	static const char *const only[] = { "known-failures", "fix", "level", "results" };
	static const char *const never[] = { "decoder", "reference", "tolerance" };
	const char *const *v;
	int testee = cli_str(a, "testee") != NULL;
	for (size_t i = 0; i < sizeof only / sizeof only[0]; i++)
		if (!testee && cli_strs(a, only[i], &v))
			return cli_usage(env, &cmd_conformance, "--%s goes with --testee only", only[i]);
	for (size_t i = 0; testee && i < sizeof never / sizeof never[0]; i++)
		if (cli_strs(a, never[i], &v))
			return cli_usage(env, &cmd_conformance, "--%s does not go with --testee (%s)", never[i],
			                 i == 2 ? "the kit gives each case's tolerance" : "the testee is the implementation scored");
	if (cli_flag(a, "fix") && !cli_str(a, "known-failures"))
		return cli_usage(env, &cmd_conformance, "--fix rewrites the list of --known-failures FILE: give it");
	if (testee && cli_flag(a, "verbose"))
		return cli_usage(env, &cmd_conformance, "--verbose shows nnnkit's own runs: with --testee, --results FILE "
		                                   "or --json gives every check");
	return 0;
}

/* A folder of ours for a run's files (a case's input and outputs, a
 * testee's answers), under $TMPDIR or /tmp, into buf; 0, or EXIT_USAGE
 * said on stderr. */
static int make_tmpdir(char *buf, size_t size)
{
	const char *t = getenv("TMPDIR");
	snprintf(buf, size, "%s/nnnconf.XXXXXX", t && t[0] == '/' ? t : "/tmp");
	if (mkdtemp(buf))
		return 0;
	cli_say(stderr, "nnnkit: conformance: cannot make a temporary folder %s: %s (set TMPDIR)\n", buf, strerror(errno));
	return EXIT_USAGE;
}

/* --testee: the kit's cases asked of it (conformance_kit.c). */
static int with_testee(const cli_args_t *a, cli_env_t *env, conf_t *c, json_t *m)
{
	char kit[4096], tmpdir[4096];
	if (!realpath(c->corpus, kit)) {
		cli_say(stderr, "nnnkit: %s: %s\n", c->corpus, strerror(errno));
		json_decref(m);
		return EXIT_USAGE;
	}
	if (make_tmpdir(tmpdir, sizeof tmpdir)) {
		json_decref(m);
		return EXIT_USAGE;
	}
	const char *level = cli_str(a, "level");
	conf_kit_opts_t o = { .kit = kit, .testee = cli_str(a, "testee"), .timeout = c->run.timeout,
		              .known = cli_str(a, "known-failures"), .results = cli_str(a, "results"),
		              .fix = cli_flag(a, "fix"), .required_only = level && !strcmp(level, "required"),
		              .json = c->json, .tmpdir = tmpdir };
	int code = conf_kit_run(&o, m, env);
	rmdir(tmpdir);
	json_decref(m);
	return code;
}

static int run(const cli_args_t *a, cli_env_t *env)
{
	conf_t c = { .run = { .timeout = cli_real(a, "timeout", 10), .tolerance = cli_real(a, "tolerance", 1e-4),
		              .reference = cli_str(a, "reference") },
		     .corpus = cli_str(a, "corpus"), .decoder = cli_str(a, "decoder"), .json = cli_flag(a, "json"),
		     .verbose = cli_flag(a, "verbose") };
	char dflt[4096], tmpdir[4096];
	const char *v;
	if ((v = c.decoder) && !strstr(v, "{file}"))
		return cli_usage(env, &cmd_conformance, "--decoder needs {file} where the case's path goes");
	if ((v = c.run.reference) &&
	    (!strstr(v, "{output}") || !strstr(v, "{input}") || !(strstr(v, "{model}") || strstr(v, "{json}"))))
		return cli_usage(env, &cmd_conformance, "--reference needs {model} (or {json}), {input} and {output} "
		                                   "where those paths go");
	if (c.decoder && c.run.reference)
		return cli_usage(env, &cmd_conformance, "--reference compares nnnkit's own runs: it does not go with --decoder");
	int bad = testee_usage(a, env);
	if (bad)
		return bad;
	json_t *m = load_manifest(&c, env, dflt, sizeof dflt);
	if (!m)
		return EXIT_USAGE;
	json_t *cases = json_object_get(m, "cases");
	if (cli_str(a, "testee"))
		return with_testee(a, env, &c, m);
	const nnn_ctx_t *ctx = c.decoder ? NULL : cli_ctx(env);
	if (!c.decoder) {
		/* The files of a run case (its input, outputs, JSON form) go here. */
		if (make_tmpdir(tmpdir, sizeof tmpdir)) {
			json_decref(m);
			return EXIT_USAGE;
		}
		c.run.tmpdir = tmpdir;
	}
	c.failures = json_array();
	c.runs = json_array();
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
	env->json_done = c.json;
	if (c.run.tmpdir)
		rmdir(c.run.tmpdir);
	json_decref(c.runs);
	json_decref(c.failures);
	json_decref(m);
	return total[FAIL] || total[CRASH] ? EXIT_INVALID : EXIT_VALID;
}
