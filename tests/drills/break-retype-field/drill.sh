# shellcheck shell=bash disable=SC2034 # (sourced by tests/drills/lib.sh)
# Changes the type of a field that files already hold. check-compat and
# make lock must refuse it as "field retyped", naming the field and both
# types, and leave the lock as it was.
DRILL_KIND=breaking
