/* test_shares.c: tests/share.sh deals a tier's tests into shares whose
 * filters Criterion itself runs as meant.
 *
 * The repeated runs (valgrind, the sanitizer tree, the growth drills'
 * suite) pass share.sh's filter to a tier program. A filter of 109 names
 * once overflowed Criterion's pattern compiler (an assertion in CI's
 * valgrind stage). Here each tier's test names, as its --list prints them,
 * become a program of empty tests of the same names; every share of 1 to 4
 * runs through it, and exactly the tests dealt to that share (share.sh
 * --deal, by the tests' measured times) must run; the deal must be a
 * partition whose shares differ by at most one test's weight. Synthetic tiers too large for one flat filter
 * (one suite of 150 tests, 40 suites of 4) run the same way, and a tier
 * that would need more groups than Criterion holds is refused with the
 * remedy. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctx.h"
#include "shell.h"

static char tmp[64];
static char root[4096]; /* the source tree, where the suite runs */

static void setup(void)
{
	cr_assert_not_null(getcwd(root, sizeof root));
	/* Criterion's worker was told through BXFI_MAP that it is one; a tier
	 * program started from it with that set aborts at start-up. */
	cr_assert_eq(unsetenv("BXFI_MAP"), 0);
	snprintf(tmp, sizeof tmp, "/tmp/nnnshares.XXXXXX");
	cr_assert_not_null(mkdtemp(tmp));
}

static void teardown(void)
{
	if (tmp[0] && t_sh(NULL, 0, "rm -rf %s", tmp) != 0)
		fprintf(stderr, "could not remove %s\n", tmp);
}

/* Builds NAME in tmp from NAME.list (SUITE/TEST per line, sorted): one
 * empty Criterion test per line, and a hook that, once Criterion has applied
 * the filter, prints the tests it would run and exits before running any. */
static void build_stub(const char *name)
{
	char out[4096];
	cr_assert_eq(t_sh(out, sizeof out, "cd %s && awk -F/ 'BEGIN { print \"#include <criterion/criterion.h>\"; "
	                  "print \"#include <criterion/hooks.h>\"; print \"#include <criterion/internal/ordered-set.h>\"; "
	                  "print \"#include <stdio.h>\"; print \"#include <stdlib.h>\" } "
	                  "{ printf \"Test(%%s, %%s) {}\\n\", $1, $2 } "
	                  "END { print \"ReportHook(PRE_ALL)(struct criterion_test_set *set) {\"; "
	                  "print \"FOREACH_SET(struct criterion_suite_set *s, set->suites)\"; "
	                  "print \"FOREACH_SET(struct criterion_test *t, s->tests)\"; "
	                  "print \"if (!t->data->disabled) printf(\\\"%%s/%%s\\\\n\\\", t->category, t->name);\"; "
	                  "print \"exit(fflush(stdout) != 0); }\" }' %s.list > %s.c && "
	                  "cc -std=c11 -o %s %s.c -lcriterion", tmp, name, name, name, name),
	             0, "%s", out);
}

/* Every share of 1 to 4 of the stub NAME runs exactly its dealt tests; the
 * deal puts each test in one share, and no share outweighs another by more
 * than the heaviest test (weights: KIND's in tests/share-weights.tsv, the
 * median for a test it does not list, as share.sh says). */
static void check_shares(const char *name, const char *kind)
{
	char out[8192];
	for (int n = 1; n <= 4; n++) {
		cr_assert_eq(t_sh(out, sizeof out,
		                  "cd %s && %s/tests/share.sh --deal --weights %s ./%s %d > deal && "
		                  "cut -d' ' -f2 deal | LC_ALL=C sort | cmp -s - %s.list && "
		                  "awk -v tier=%s -v kind=%s -v n=%d '"
		                  "FNR == NR { if ($1 == kind && $2 == tier) w[$3] = $4; next } "
		                  "{ s[$2] = $1 } "
		                  "END { for (t in s) if (t in w) v[++m] = w[t]; "
		                  "  for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (v[j] < v[i]) { x = v[i]; v[i] = v[j]; v[j] = x } "
		                  "  med = m ? v[int((m + 1) / 2)] : 1; "
		                  "  for (t in s) { x = t in w ? w[t] : med; load[s[t]] += x; if (x > top) top = x } "
		                  "  lo = hi = load[0]; for (k = 1; k < n; k++) { if (load[k] < lo) lo = load[k]; if (load[k] > hi) hi = load[k] } "
		                  "  if (hi - lo > top + 1e-9) { print \"shares from \" lo \" to \" hi \" s, heaviest test \" top; exit 1 } }' "
		                  "FS='\t' %s/tests/share-weights.tsv FS=' ' deal",
		                  tmp, root, kind, name, n, name, name, kind, n, root),
		             0, "%s: the deal into %d shares is not a balanced partition of the tests: %s", name, n, out);
		for (int s = 0; s < n; s++) {
			cr_assert_eq(t_sh(out, sizeof out,
			                  "cd %s && %s/tests/share.sh --deal --weights %s ./%s %d | awk -v s=%d '$1 == s { print $2 }' | "
			                  "LC_ALL=C sort > want && "
			                  "f=$(%s/tests/share.sh --weights %s ./%s %d %d) && "
			                  "./%s --filter \"$f\" | LC_ALL=C sort > got && "
			                  "{ cmp -s want got || { diff want got | head -20; exit 1; }; }",
			                  tmp, root, kind, name, n, s, root, kind, name, s, n, name),
			             0, "%s: share %d of %d does not run exactly its tests (diff want got): %s", name, s, n, out);
		}
	}
}

Test(shares, every_tier_runs_each_share_exactly, .init = setup, .fini = teardown, .timeout = 300)
{
	static const char *const tiers[] = { "unit", "gen", "cli", "integration" };
	char out[4096];
	for (size_t i = 0; i < sizeof tiers / sizeof *tiers; i++) {
		const char *t = tiers[i];
		/* The names as share.sh deals them. */
		cr_assert_eq(t_sh(out, sizeof out, "tests/share.sh --names %s/test-%s > %s/%s.list && "
		                  "test $(wc -l < %s/%s.list) -gt 0",
		                  t_build_dir(), t, tmp, t, tmp, t),
		             0, "test-%s --list: %s", t, out);
		build_stub(t);
		check_shares(t, "plain");
		check_shares(t, "valgrind");
	}
}

Test(shares, tiers_beyond_one_flat_filter, .init = setup, .fini = teardown, .timeout = 120)
{
	char out[4096];
	cr_assert_eq(t_sh(out, sizeof out, "cd %s && for i in $(seq 100 249); do echo big/t$i; done > wide.list && "
	                  "for s in $(seq 10 49); do for i in 1 2 3 4; do echo s$s/t$i; done; done > many.list",
	                  tmp),
	             0, "%s", out);
	build_stub("wide");
	check_shares("wide", "plain");
	build_stub("many");
	check_shares("many", "plain");
}

Test(shares, refuses_a_share_criterion_cannot_hold, .init = setup, .fini = teardown, .timeout = 60)
{
	char out[4096];
	cr_assert_eq(t_sh(out, sizeof out, "cd %s && for s in $(seq 100 199); do echo s$s/t; done > flat.list", tmp), 0,
	             "%s", out);
	build_stub("flat");
	/* 100 suites of one test: one share would need 100 groups, two 50. */
	cr_assert_eq(t_sh(out, sizeof out, "%s/tests/share.sh %s/flat 0 1", root, tmp), 2, "%s", out);
	cr_assert_not_null(strstr(out, "share 0 of 1 needs 100 groups of names, more than the 50"), "%s", out);
	cr_assert_not_null(strstr(out, "deal the tier into more shares"), "%s", out);
	cr_assert_eq(t_sh(out, sizeof out, "%s/tests/share.sh %s/flat 1 2 > /dev/null", root, tmp), 0, "%s",
	             out);
}
