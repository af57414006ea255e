#!/usr/bin/env bash
# suite.sh: in a copy of the tree that growths were applied to (run.sh), the
# tiers a growth can affect, with no test edited: one `make -j$JOBS`, `make
# lock` (a growth may move the layouts plugins see), check-gen and
# check-compat, the unit, gen, cli and python tiers, and the conformance
# corpus run by nnnkit. The integration tier (install, SDK, ONNX Runtime)
# runs once per CI on the unchanged tree: a growth reaches it only through
# what these tiers test.
set -euo pipefail
MAKE=${MAKE:-make}
JOBS=${JOBS:-2}
step() { echo "== $*"; "$@"; }
step $MAKE -j"$JOBS"
step $MAKE -s lock
step $MAKE -s check-gen check-compat
step $MAKE -j"$JOBS" test-build
failed=
for t in unit gen cli python; do
	step $MAKE --no-print-directory test-$t || failed="$failed $t"
done
step $MAKE -s conformance
step build/nnnkit conformance --corpus build/conformance --no-progress || failed="$failed conformance"
if [ -n "$failed" ]; then
	echo "suite: FAILED:$failed"
	exit 1
fi
echo "suite: passed: unit gen cli python conformance"
