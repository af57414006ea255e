# shellcheck shell=bash disable=SC2034 # (sourced by tests/drills/lib.sh)
# Renumbers an existing ID. check-compat and make lock must refuse it as
# "ID renumbered", naming the enum value, and leave the lock as it was.
DRILL_KIND=breaking
