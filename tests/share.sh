#!/bin/sh
# share.sh: the Criterion filter for one share of a tier's tests, for the
# runs that take a share per commit rather than the whole tier (valgrind,
# the sanitizer tree's tiers, the growth drills' suite: tests/tests.mk,
# docs/testing.md).
#
#   tests/share.sh [--weights KIND] TIER-PROGRAM SHARE COUNT
#   tests/share.sh --deal [--weights KIND] TIER-PROGRAM COUNT
#                                  every test with its share: "SHARE SUITE/TEST"
#   tests/share.sh --names TIER-PROGRAM     the tier's tests, sorted
#
# The shares cost about the same: each test weighs what it took in a
# measured run of KIND (plain, the default, or valgrind: with each case's
# process start, which memcheck makes most of a test's cost), as
# tests/share-weights.tsv records it (`make share-weights` rewrites it from
# the last runs' reports); a test it does not list weighs the median of
# its tier's. The heaviest test goes first, to the lightest share so far
# (ties: the lower share, then the name), which keeps every share within
# one test's weight of the others. The file is in the tree, so the deal is
# the same on every machine for a commit: `make valgrind SHARE_SEED=1`
# here runs what CI ran. The tier is the program's name without "test-";
# SHARE_WEIGHTS names another weights file.
#
# The filter is grouped by suite, e.g. '@(cli/@(a|b)|map/c)'. A share with
# no test prints a filter that matches nothing. A parameterized test is one
# name: its cases go together.
#
# Criterion compiles a filter on a stack of 100 fragments (ARRAY_SIZE in
# its src/string/extglobmatch.c) that it does not bound: a flat list of
# 109 names overflowed it (an assertion in CI; a filter that does not abort
# may select other tests). So names go in groups of at most 30 per suite,
# and the stack holds the share's groups plus one group's names; a share
# of more than 50 groups is refused with the remedy.
# tests/integration/test_shares.c runs shares through Criterion itself.
set -eu
here=$(dirname "$0")
WEIGHTS=${SHARE_WEIGHTS:-$here/share-weights.tsv}
export LC_ALL=C

# --list prints "SUITE: N tests" and then one line per test ("├── NAME",
# the last "└── NAME").
names() {
	"$1" --list 2>&1 | awk '
		/^[A-Za-z0-9_]+: [0-9]+ tests?$/ { suite = substr($1, 1, length($1) - 1); next }
		suite != "" && NF == 2 && $2 ~ /^[A-Za-z0-9_]+$/ { print suite "/" $2 }' | sort -u
}

# deal PROGRAM COUNT KIND: "SHARE SUITE/TEST" for every test of the tier.
deal() {
	tier=$(basename "$1")
	tier=${tier#test-}
	tests=$(names "$1")
	[ -n "$tests" ] || { echo "$0: $1 --list named no test" >&2; exit 2; }
	[ -r "$WEIGHTS" ] || WEIGHTS=/dev/null
	# weight<TAB>name, "-" where the file has none; then the median fills in.
	known=$(echo "$tests" | awk -v kind="$3" -v tier="$tier" -v file="$WEIGHTS" '
		BEGIN {
			while ((getline line < file) > 0)
				if (split(line, f, "\t") == 4 && f[1] == kind && f[2] == tier) w[f[3]] = f[4]
		}
		{ print ($1 in w ? w[$1] : "-") "\t" $1 }')
	median=$(echo "$known" | awk -F'\t' '$1 != "-" { print $1 }' | sort -g |
		awk '{ v[NR] = $1 } END { print NR ? v[int((NR + 1) / 2)] : 1 }')
	echo "$known" | awk -F'\t' -v m="$median" '{ print ($1 == "-" ? m : $1) "\t" $2 }' |
		sort -t "$(printf '\t')" -k1,1gr -k2,2 | awk -F'\t' -v n="$2" '
		{
			best = 0
			for (s = 1; s < n; s++) if (load[s] < load[best]) best = s
			load[best] += $1
			print best " " $2
		}'
}

count_ok() {
	case $1 in '' | *[!0-9]* | 0) echo "$0: COUNT must be a number from 1 on, not '$1'" >&2; exit 2 ;; esac
}
kind=plain
case ${1:-} in
--names)
	[ $# = 2 ] || { echo "usage: $0 --names TIER-PROGRAM" >&2; exit 2; }
	names "$2"
	exit ;;
--deal)
	shift
	[ "${1:-}" = --weights ] && { kind=${2:-}; shift 2; }
	[ $# = 2 ] || { echo "usage: $0 --deal [--weights KIND] TIER-PROGRAM COUNT" >&2; exit 2; }
	count_ok "$2"
	deal "$1" "$2" "$kind"
	exit ;;
--weights)
	kind=${2:-}
	shift 2 ;;
esac
case $kind in plain | valgrind) ;; *) echo "$0: --weights takes plain or valgrind, not '$kind'" >&2; exit 2 ;; esac
[ $# = 3 ] || { echo "usage: $0 [--weights KIND] TIER-PROGRAM SHARE COUNT | --deal ... | --names TIER-PROGRAM" >&2; exit 2; }
count_ok "$3"
case $2 in '' | *[!0-9]*) echo "$0: SHARE must be a number, not '$2'" >&2; exit 2 ;; esac
[ "$2" -lt "$3" ] || { echo "$0: SHARE must be below COUNT ($3), not '$2'" >&2; exit 2; }
dealt=$(deal "$1" "$3" "$kind")
echo "$dealt" | awk -v s="$2" '$1 == s { print $2 }' | sort | awk -F/ -v s="$2" -v n="$3" -v prog="$0" '
	function close_group() {
		if (k == 0) return
		groups = groups (g++ ? "|" : "") suite "/" (k > 1 ? "@(" names ")" : names)
		k = 0
	}
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
