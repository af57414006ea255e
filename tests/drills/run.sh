#!/usr/bin/env bash
# run.sh: the growth drills (`make drills`). Each drill grows or breaks the
# schema the way a maintainer would, on its own, in a copy of the tree, and
# checks that the project follows:
#
#   compatible drills: edit, `make -j2` once (the new thing must be in that
#   one build), `make check-compat`, `make lock`, `make -j2 test` (no test
#   edited), the conformance corpus and `nnnkit conformance`, then the
#   drill's own checks through the CLI;
#   breaking drills: edit, then `make check-compat` and `make lock` must both
#   refuse with the drill's expected lines, and the lock must stay as it was.
#
#   tests/drills/run.sh [DRILL...]     default: every tests/drills/*/drill.sh
#
# A drill is one folder: drill.sh (its kind and checks), grow.lua (its schema
# edit, run by tests/drills/edit.lua) and any files it adds to the tree; see
# docs/growing-the-format.md. The real tree is only read. The copies live in
# a temporary folder, removed when every drill passes and kept (its path is
# printed) when one fails, or with DRILLS_KEEP=1.
#
# Compatible drills start from a copy of a tree built once with `make -j2
# all test-build` (the base), as a maintainer's tree is when they edit the
# schema after a `make test`: so each drill's `make -j2` is the incremental
# build whose dependencies are under test, and the base's build is paid once.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
JOBS=${DRILLS_JOBS:-2}
MAKE=${MAKE:-make}
export MAKEFLAGS='' MAKELEVEL='' MFLAGS='' # the drills' makes are their own, not the caller's sub-makes

# Tests in the copies read the real files from the tree's usual place.
if [ -z "${NNN_REAL_CORPUS:-}" ] && [ -d "$ROOT/../shared/corpus/real" ]; then
	NNN_REAL_CORPUS=$(cd "$ROOT/../shared/corpus/real" && pwd)
	export NNN_REAL_CORPUS
fi

kind_of() { sed -n 's/^DRILL_KIND=\([a-z]*\).*/\1/p' "tests/drills/$1/drill.sh"; }

# The breaking drills first: they need no build, and fail fast.
if [ $# -gt 0 ]; then
	DRILLS=("$@")
else
	DRILLS=()
	for k in breaking compatible; do
		for d in tests/drills/*/drill.sh; do
			d=$(basename "$(dirname "$d")")
			if [ "$(kind_of "$d")" = $k ]; then DRILLS+=("$d"); fi
		done
	done
fi
for d in "${DRILLS[@]}"; do
	[ -f "tests/drills/$d/drill.sh" ] || { echo "drills: no drill $d (tests/drills/$d/drill.sh)" >&2; exit 2; }
done

git rev-parse --is-inside-work-tree > /dev/null 2>&1 ||
	{ echo "drills: $ROOT is not a git work tree: the drills copy the files git tracks" >&2; exit 2; }
TMP=$(mktemp -d "${TMPDIR:-/tmp}/nnn-drills.XXXXXX")
trap 'echo "drills: stopped; the copies are in $TMP" >&2; exit 130' INT TERM
SUMMARY=$TMP/summary
: > "$SUMMARY"
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
T0=$(now)

# The tracked tree as it is in the working tree (modified and new files
# included, deleted ones left out), with its file times.
copy_tree() {
	mkdir -p "$1"
	git ls-files -z --cached --others --exclude-standard |
		while IFS= read -r -d '' f; do if [ -e "$f" ]; then printf '%s\0' "$f"; fi; done |
		tar --null -T - -cf - | tar -xf - -C "$1"
}

need_base=0
for d in "${DRILLS[@]}"; do
	case "$(kind_of "$d")" in
	compatible) need_base=1 ;;
	breaking) ;;
	*) echo "drills: tests/drills/$d/drill.sh: DRILL_KIND must be compatible or breaking" >&2; exit 2 ;;
	esac
done

fail_out() {
	echo "drills: FAILED: $1 (log: $2)" >&2
	tail -n 40 "$2" >&2 || true
	echo "drills: the copies are kept in $TMP" >&2
	exit 1
}

if [ $need_base = 1 ]; then
	t=$(now)
	echo "drills: base: a copy of the tree, built with $MAKE -j$JOBS all test-build"
	copy_tree "$TMP/base"
	(cd "$TMP/base" && $MAKE -j"$JOBS" all test-build) > "$TMP/base.log" 2>&1 ||
		fail_out "base: make -j$JOBS all test-build" "$TMP/base.log"
	printf '%-28s %-10s %7ss  %s\n' base build "$(secs "$t" "$(now)")" "make -j$JOBS all test-build of the unchanged tree" \
		>> "$SUMMARY"
fi

for d in "${DRILLS[@]}"; do
	t=$(now)
	kind=$(kind_of "$d")
	work=$TMP/$d
	echo "drills: $d ($kind)"
	if [ "$kind" = compatible ]; then
		cp -a "$TMP/base" "$work"
	else
		copy_tree "$work"
	fi
	mkdir -p "$TMP/$d.out"
	log=$TMP/$d.log
	if ! (cd "$work" && DRILL_NAME=$d DRILL_DIR=$work/tests/drills/$d DRILL_OUT=$TMP/$d.out DRILL_LOG=$log \
		DRILL_JOBS=$JOBS MAKE=$MAKE bash tests/drills/lib.sh) > "$log" 2>&1; then
		fail_out "$d" "$log"
	fi
	sed -n 's/^drill-step: //p' "$log" | tr '\n' ' ' > "$TMP/$d.steps"
	printf '%-28s %-10s %7ss  %s\n' "$d" "$kind" "$(secs "$t" "$(now)")" "$(cat "$TMP/$d.steps")" >> "$SUMMARY"
	rm -rf "$work"
done

echo "drills: all ${#DRILLS[@]} passed in $(secs "$T0" "$(now)")s"
cat "$SUMMARY"
if [ "${DRILLS_KEEP:-0}" = 1 ]; then echo "drills: kept in $TMP"; else rm -rf "$TMP"; fi
