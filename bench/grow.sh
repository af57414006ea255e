#!/usr/bin/env bash
# bench/grow.sh: the grown tree `make bench` measures the narrow-weight
# Dense layers on. The real schema has no DenseF16 or DenseI8: the growth
# drills tests/drills/dense-f16 and dense-i8 add them (schema edit and
# kernel file). This applies those drills' own grow steps (tests/drills/
# lib.sh in its grow mode, as the drills' combined suite does) to a copy of
# the tracked tree, and builds the grown nnnkit, builtin plugin and nnnbench
# there:
#
#   [SEED=BUILD] bench/grow.sh OUT DRILL...   the grown tree is OUT/tree, its build OUT/tree/build
#
# Incremental, as a maintainer's tree is: the copy is made afresh in
# OUT/stage each time, and only the files whose bytes differ are copied
# into OUT/tree (their times kept); the first time, OUT/tree/build starts as
# a copy of the real build folder (SEED, default build), so make rebuilds what the growths change and
# little else.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=$1
shift
MAKE=${MAKE:-make}
export MAKEFLAGS='' MAKELEVEL='' MFLAGS='' # a make of its own, in another tree

rm -rf "$OUT/stage" "$OUT/drill-out"
mkdir -p "$OUT/stage" "$OUT/tree" "$OUT/drill-out"
git ls-files -z --cached --others --exclude-standard |
	while IFS= read -r -d '' f; do if [ -e "$f" ]; then printf '%s\0' "$f"; fi; done |
	tar --null -T - -cf - | tar -xf - -C "$OUT/stage"
for d in "$@"; do
	mkdir -p "$OUT/drill-out/$d"
	(cd "$OUT/stage" && DRILL_NAME=$d DRILL_DIR=$PWD/tests/drills/$d DRILL_OUT=$OUT/drill-out/$d DRILL_JOBS=2 \
		DRILL_MODE=grow MAKE=$MAKE bash tests/drills/lib.sh) > "$OUT/drill-out/$d.log" 2>&1 ||
		{ echo "bench/grow.sh: the growth $d failed (log: $OUT/drill-out/$d.log)" >&2; tail -n 20 "$OUT/drill-out/$d.log" >&2; exit 1; }
done

SEED=${SEED:-build} # the real tree's build folder
if [ ! -d "$OUT/tree/build" ] && [ -d "$SEED" ]; then
	mkdir -p "$OUT/tree/build"
	tar -C "$SEED" --exclude=./san --exclude=./asan --exclude=./fuzz --exclude=./valgrind --exclude=./test-reports \
		--exclude=./bench --exclude=./bench-grown --exclude=./ort -cf - . | tar -xf - -C "$OUT/tree/build"
fi
# The staged files into the tree: changed or new ones copied (times kept),
# ones the stage no longer has removed (build/ is the tree's own).
/usr/bin/python3 - "$OUT/stage" "$OUT/tree" <<-'EOF'
	import filecmp, os, shutil, sys
	stage, tree = sys.argv[1], sys.argv[2]
	have = set()
	for root, dirs, files in os.walk(stage):
	    for f in files:
	        rel = os.path.relpath(os.path.join(root, f), stage)
	        have.add(rel)
	        dst = os.path.join(tree, rel)
	        if not os.path.exists(dst) or not filecmp.cmp(os.path.join(root, f), dst, shallow=False):
	            os.makedirs(os.path.dirname(dst), exist_ok=True)
	            shutil.copy2(os.path.join(root, f), dst)
	for root, dirs, files in os.walk(tree):
	    dirs[:] = [d for d in dirs if not (root == tree and d == "build")]
	    for f in files:
	        rel = os.path.relpath(os.path.join(root, f), tree)
	        if rel not in have:
	            os.remove(os.path.join(tree, rel))
	EOF
rm -rf "$OUT/stage"
cd "$OUT/tree"
$MAKE -j2 build/nnnkit build/nnnbench build/plugins/builtin.so
