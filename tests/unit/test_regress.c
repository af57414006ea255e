/* test_regress.c: every input the fuzzers saved, replayed by the normal build.
 *
 *   regress/replay   each file under tests/regress/<harness>/ (crash, leak,
 *                    timeout and invariant-breaking inputs libFuzzer wrote
 *                    with `make fuzz`), through the checks of that harness
 *   regress/seeds    each seed under fuzz/seeds/<harness>/, the same way
 *
 * The checks are the harnesses' own (fuzz/checks.c, included here so that
 * nothing is duplicated): decode, validate and encode(decode(x)) == x; the
 * dump visitor's invariants; shape inference and runs with the builtin plugin
 * ($NNN_BUILD/plugins/builtin.so); the .npy reader and writer round trip.
 * `make test-asan` replays them under AddressSanitizer and UBSan as well.
 * A replay slower than the fuzzers' -timeout (10 s; 100 s in a sanitized
 * build) fails too: libFuzzer saves hangs as timeout-* and slow-unit-*.
 * Each file is its own parameterized test; every message names the file, and
 * so does a line on stderr when replaying it crashes.
 */
#define _GNU_SOURCE /* fuzz/checks.c, included below, uses memfd_create */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include "../../fuzz/checks.c"
#include "blackbox.h"

static const char *const HARNESSES[] = { "fuzz_decode", "fuzz_dump", "fuzz_run", "fuzz_npy", "fuzz_json",
	                                         "fuzz_onnx" };
#define NHARNESSES (sizeof HARNESSES / sizeof HARNESSES[0])

typedef struct regress_case {
	char harness[32];
	char path[480];
} regress_case_t;

static int case_cmp(const void *a, const void *b)
{
	const regress_case_t *x = a, *y = b;
	int c = strcmp(x->harness, y->harness);
	return c ? c : strcmp(x->path, y->path);
}

/* The files of root/<harness>/ for every harness, sorted; fills out[0..max)
 * and returns how many there are. Hidden files are not cases. */
static size_t scan(const char *root, regress_case_t *out, size_t max)
{
	size_t n = 0;
	for (size_t h = 0; h < NHARNESSES; h++) {
		char dir[256];
		DIR *d;
		struct dirent *e;
		snprintf(dir, sizeof dir, "%s/%s", root, HARNESSES[h]);
		if (!(d = opendir(dir)))
			continue;
		while ((e = readdir(d)) != NULL) {
			regress_case_t c;
			struct stat sb;
			if (e->d_name[0] == '.')
				continue;
			snprintf(c.harness, sizeof c.harness, "%s", HARNESSES[h]);
			if ((size_t)snprintf(c.path, sizeof c.path, "%s/%s", dir, e->d_name) >= sizeof c.path)
				continue;
			if (stat(c.path, &sb) != 0 || !S_ISREG(sb.st_mode))
				continue;
			if (n < max)
				out[n] = c;
			n++;
		}
		closedir(d);
	}
	if (out && n <= max)
		qsort(out, n, sizeof *out, case_cmp);
	return n;
}

static struct criterion_test_params cases(const char *root, void (*cleanup)(struct criterion_test_params *))
{
	size_t n = scan(root, NULL, 0);
	regress_case_t *v = cr_calloc(n ? n : 1, sizeof *v);
	if (v)
		n = scan(root, v, n);
	return cr_make_param_array(regress_case_t, v, v ? n : 0, cleanup);
}

static void free_cases(struct criterion_test_params *p)
{
	cr_free(p->params);
}

static unsigned char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	unsigned char *b = NULL;
	long n;
	*len = 0;
	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
		/* Exactly n bytes (1 for an empty file): a read past the input is a heap overflow under ASan. */
		b = malloc(n ? (size_t)n : 1);
		if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
			free(b);
			b = NULL;
		}
		*len = (size_t)n;
	}
	fclose(f);
	return b;
}

/* The fuzzers' -timeout, for the whole check of one input: slower means a
 * hang was found (libFuzzer names those inputs timeout-* or slow-unit-*).
 * Sanitized builds get ten times as long. */
#define REPLAY_SECONDS 10.0
#if T_ASAN
#define REPLAY_SLOWDOWN 10.0
#else
#define REPLAY_SLOWDOWN 1.0
#endif

/* A crash names the file being replayed, then goes on as it would have
 * (to the sanitizer's handler when there is one, else the default). */
static const char *g_replaying;
static struct sigaction g_old[32]; /* SIGSEGV, SIGBUS, SIGFPE, SIGILL and SIGABRT are below 32 */

static void on_crash(int sig, siginfo_t *info, void *uc)
{
	char msg[600];
	int n = snprintf(msg, sizeof msg, "\nregress: signal %d while replaying %s\n", sig,
	                 g_replaying ? g_replaying : "?");
	if (n > 0 && write(2, msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1) < 0)
		n = 0;
	if ((g_old[sig].sa_flags & SA_SIGINFO) && g_old[sig].sa_sigaction) {
		g_old[sig].sa_sigaction(sig, info, uc);
	} else if (g_old[sig].sa_handler != SIG_DFL && g_old[sig].sa_handler != SIG_IGN && g_old[sig].sa_handler) {
		g_old[sig].sa_handler(sig);
	} else {
		signal(sig, SIG_DFL);
		raise(sig);
	}
}

static void name_crashes(const char *path)
{
	static const int sigs[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT };
	struct sigaction sa;
	g_replaying = path;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_crash;
	sa.sa_flags = SA_SIGINFO | SA_RESETHAND | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
		sigaction(sigs[i], &sa, &g_old[sigs[i]]);
}

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void replay(const regress_case_t *c)
{
	char why[FZ_WHY_MAX] = "";
	const char *base = strrchr(c->path, '/') + 1;
	size_t len;
	unsigned char *data;
	double t0, took, limit = REPLAY_SECONDS * REPLAY_SLOWDOWN;
	int rc;

	/* Under valgrind a hang input takes many minutes and proves nothing
	 * about memory: the normal and ASan runs time it. */
	if (t_under_valgrind() && (!strncmp(base, "timeout-", 8) || !strncmp(base, "slow-unit-", 10)))
		cr_skip_test("%s: a hang input, timed by make test and make test-asan, not under valgrind", c->path);
	name_crashes(c->path);
	data = slurp(c->path, &len);
	cr_assert_not_null(data, "%s: cannot read: %s", c->path, strerror(errno));
	t0 = now();
	rc = fz_check(c->harness, data, len, why, sizeof why);
	took = now() - t0;
	free(data);
	cr_assert_neq(rc, -1, "%s: cannot replay: %s", c->path, why);
	cr_assert_eq(rc, 0, "%s (%zu bytes, %s): %s", c->path, len, c->harness, why);
	if (!t_under_valgrind())
		cr_expect_leq(took, limit, "%s (%zu bytes, %s): took %.1f s, over the %.0f s limit of the fuzzers' -timeout",
		              c->path, len, c->harness, took, limit);
}

ParameterizedTestParameters(regress, replay)
{
	return cases("tests/regress", free_cases);
}

ParameterizedTest(regress_case_t *c, regress, replay)
{
	replay(c);
}

ParameterizedTestParameters(regress, seeds)
{
	return cases("fuzz/seeds", free_cases);
}

ParameterizedTest(regress_case_t *c, regress, seeds)
{
	replay(c);
}
