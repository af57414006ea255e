# shellcheck shell=bash disable=SC2034 # (sourced by tests/drills/lib.sh)
# Inserts a field in the middle of a record that files already hold.
# check-compat and make lock must refuse it as "field added", naming the
# record and the field's place, and leave the lock as it was.
DRILL_KIND=breaking
