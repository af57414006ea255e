#!/usr/bin/env bash
# suite.sh: in a copy of the tree that growths were applied to (run.sh), the
# tiers a growth can affect, with no test edited: one `make -j$JOBS`, `make
# lock` (a growth may move the layouts plugins see), check-gen and
# check-compat (the C# codec regenerated too), the unit, gen, python and
# csharp tiers (the python tier without its install tests), a third of the cli tier
# (the share of SHARE_SEED, as tests/tests.mk deals them: most CLI tests
# do not read what a growth adds, and `make test` runs them all on the real
# schema), and the conformance corpus run by nnnkit. The python tier
# scores the grown tool on the kit regenerated from the grown schema
# (tests/kit: every shipped testee, both runners). The integration tier
# (install, SDK, ONNX Runtime) runs once per CI on the unchanged tree: a
# growth reaches it only through what these tiers test.
set -euo pipefail
MAKE=${MAKE:-make}
JOBS=${JOBS:-2}
step() { echo "== $*"; "$@"; }
step $MAKE -j"$JOBS"
step $MAKE -s lock
step $MAKE -s check-gen check-compat
step $MAKE -j"$JOBS" test-build
CLI_SHARES=3
share=$((${SHARE_SEED:-0} % CLI_SHARES))
cli_filter=$(tests/share.sh build/test-cli "$share" "$CLI_SHARES")
echo "== cli: share $share of $CLI_SHARES"
failed=
for t in unit gen cli python csharp; do
	args=
	[ $t != cli ] || args="--filter '$cli_filter'" # make puts TEST_ARGS in a shell line
	# The install tests (wheel, pip, a prefix: a third of the tier's time)
	# package what the plain tree's run installs; a growth reaches them only
	# through the package's tests, which run here.
	step $MAKE --no-print-directory test-$t TEST_ARGS="$args" PYTEST_ARGS="--ignore=tests/python/test_install.py" ||
		failed="$failed $t"
done
step $MAKE -s conformance
step build/nnnkit conformance --corpus build/conformance --no-progress || failed="$failed conformance"
if [ -n "$failed" ]; then
	echo "suite: FAILED:$failed"
	exit 1
fi
echo "suite: passed: unit gen cli python csharp conformance"
