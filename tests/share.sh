#!/bin/sh
# share.sh: the Criterion filter for one share of a tier's tests, for the
# runs that take a share per commit rather than the whole tier (valgrind,
# the sanitizer tree's cli tier, the growth drills' suite: tests/tests.mk,
# docs/testing.md).
#
#   tests/share.sh TIER-PROGRAM SHARE COUNT
#   tests/share.sh --names TIER-PROGRAM     the tier's tests, as dealt
#
# The tier's tests, as SUITE/TEST sorted by name, are dealt out to shares
# 0, 1, ..., COUNT-1, 0, 1, ... (tests, not suites: a suite of slow tests
# is spread over the shares); prints the filter of share SHARE, grouped by
# suite, e.g. '@(cli/@(a|b)|map/c)'. A share with no test prints a filter
# that matches nothing. A parameterized test is one name: its cases go
# together.
#
# Criterion compiles a filter on a stack of 100 fragments (ARRAY_SIZE in
# its src/string/extglobmatch.c) that it does not bound: a flat list of
# 109 names overflowed it (an assertion in CI; a filter that does not abort
# may select other tests). So names go in groups of at most 30 per suite,
# and the stack holds the share's groups plus one group's names; a share
# of more than 50 groups is refused with the remedy.
# tests/integration/test_shares.c runs shares through Criterion itself.
set -eu
# --list prints "SUITE: N tests" and then one line per test ("├── NAME",
# the last "└── NAME").
names() {
	"$1" --list 2>&1 | awk '
		/^[A-Za-z0-9_]+: [0-9]+ tests?$/ { suite = substr($1, 1, length($1) - 1); next }
		suite != "" && NF == 2 && $2 ~ /^[A-Za-z0-9_]+$/ { print suite "/" $2 }' | LC_ALL=C sort -u
}
if [ $# = 2 ] && [ "$1" = --names ]; then
	names "$2"
	exit
fi
[ $# = 3 ] || { echo "usage: $0 TIER-PROGRAM SHARE COUNT | --names TIER-PROGRAM" >&2; exit 2; }
case $3 in '' | *[!0-9]* | 0) echo "$0: COUNT must be a number from 1 on, not '$3'" >&2; exit 2 ;; esac
case $2 in '' | *[!0-9]*) echo "$0: SHARE must be a number, not '$2'" >&2; exit 2 ;; esac
[ "$2" -lt "$3" ] || { echo "$0: SHARE must be below COUNT ($3), not '$2'" >&2; exit 2; }
tests=$(names "$1")
[ -n "$tests" ] || { echo "$0: $1 --list named no test" >&2; exit 2; }
echo "$tests" | awk -F/ -v s="$2" -v n="$3" -v prog="$0" '
	function close_group() {
		if (k == 0) return
		groups = groups (g++ ? "|" : "") suite "/" (k > 1 ? "@(" names ")" : names)
		k = 0
	}
	(NR - 1) % n != s { next }
	$1 != suite || k == 30 { close_group(); suite = $1 }
	{ names = (k++ ? names "|" : "") $2 }
	END {
		close_group()
		if (g > 50) {
			printf "%s: share %d of %d needs %d groups of names, more than the 50 that keep Criterion'"'"'s filter in its bounds: deal the tier into more shares\n", prog, s, n, g > "/dev/stderr"
			exit 2
		}
		print "@(" (g ? groups : "no test in this share") ")"
	}'
