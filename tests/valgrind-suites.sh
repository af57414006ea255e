#!/bin/sh
# valgrind-suites.sh: the Criterion filter for one share in three of a tier's
# suites (make valgrind; tests/tests.mk).
#
#   tests/valgrind-suites.sh TIER-PROGRAM SHARE
#
# The tier's suites, sorted by name, are dealt out to shares 0, 1, 2, 0, 1,
# ...; prints the filter of share SHARE (0-2), e.g. '@(cli|map)/*'. A share
# with no suite prints a filter that matches nothing.
set -eu
[ $# = 2 ] || { echo "usage: $0 TIER-PROGRAM SHARE" >&2; exit 2; }
case $2 in 0 | 1 | 2) ;; *) echo "$0: SHARE must be 0, 1 or 2, not '$2'" >&2; exit 2 ;; esac
# --list prints "SUITE: N tests" and then one line per test.
suites=$("$1" --list 2>&1 | sed -n 's/^\([A-Za-z0-9_]*\): [0-9]* tests\{0,1\}$/\1/p' | LC_ALL=C sort -u)
[ -n "$suites" ] || { echo "$0: $1 --list named no suite" >&2; exit 2; }
pick=$(echo "$suites" | awk -v s="$2" '(NR - 1) % 3 == s' | paste -sd'|' -)
echo "@(${pick:-no suite in this share})/*"
