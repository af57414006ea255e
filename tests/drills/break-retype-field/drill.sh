# shellcheck shell=bash disable=SC2034 # (sourced by tests/drills/lib.sh)
# Retypes a float field that files already hold (and a range rule bounds) to
# the int of its width: layer.dropout f32 -> i32 today. make -j2,
# check-compat and make lock must refuse it as "field retyped", naming the
# field and both types (make: before the corpus generator sees it), and
# leave the tree and the lock as they were.
DRILL_KIND=breaking
