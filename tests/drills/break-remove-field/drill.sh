# shellcheck shell=bash disable=SC2034 # (sourced by tests/drills/lib.sh)
# Removes a field that files already hold. check-compat and make lock must
# refuse it as "field removed", naming the field, and leave the lock as it was.
DRILL_KIND=breaking
