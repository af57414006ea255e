# shellcheck shell=bash disable=SC2034 # (sourced by tests/drills/lib.sh)
# Stores an enum in another integer type. check-compat and make lock must
# refuse it as "enum storage type changed", naming the enum, and leave the
# lock as it was.
DRILL_KIND=breaking
