# shellcheck shell=bash disable=SC2034 # (sourced by tests/drills/lib.sh)
# Swaps the last two fields of a record that files already hold, which make
# once built without a word (every file written before then misread).
# make -j2, check-compat and make lock must refuse it as "field reordered",
# naming the field and the old order, and leave the tree and the lock as
# they were.
DRILL_KIND=breaking
