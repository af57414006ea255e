#!/bin/sh
# share.sh: the Criterion filter for one share of a tier's tests, for the
# runs that take a share per commit rather than the whole tier (valgrind,
# the sanitizer tree's cli tier, the growth drills' suite: tests/tests.mk,
# docs/testing.md).
#
#   tests/share.sh TIER-PROGRAM SHARE COUNT
#
# The tier's tests, as SUITE/TEST sorted by name, are dealt out to shares
# 0, 1, ..., COUNT-1, 0, 1, ... (tests, not suites: a suite of slow tests
# is spread over the shares); prints the filter of share SHARE, e.g.
# '@(cli/a|map/b)'. A share with no test prints a filter that matches
# nothing. A parameterized test is one name: its cases go together.
set -eu
[ $# = 3 ] || { echo "usage: $0 TIER-PROGRAM SHARE COUNT" >&2; exit 2; }
case $3 in '' | *[!0-9]* | 0) echo "$0: COUNT must be a number from 1 on, not '$3'" >&2; exit 2 ;; esac
case $2 in '' | *[!0-9]*) echo "$0: SHARE must be a number, not '$2'" >&2; exit 2 ;; esac
[ "$2" -lt "$3" ] || { echo "$0: SHARE must be below COUNT ($3), not '$2'" >&2; exit 2; }
# --list prints "SUITE: N tests" and then one line per test ("├── NAME",
# the last "└── NAME").
tests=$("$1" --list 2>&1 | awk '
	/^[A-Za-z0-9_]+: [0-9]+ tests?$/ { suite = substr($1, 1, length($1) - 1); next }
	suite != "" && NF == 2 && $2 ~ /^[A-Za-z0-9_]+$/ { print suite "/" $2 }' | LC_ALL=C sort -u)
[ -n "$tests" ] || { echo "$0: $1 --list named no test" >&2; exit 2; }
pick=$(echo "$tests" | awk -v s="$2" -v n="$3" '(NR - 1) % n == s' | paste -sd'|' -)
echo "@(${pick:-no test in this share})"
