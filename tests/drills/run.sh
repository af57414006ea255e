#!/usr/bin/env bash
# run.sh: the growth drills (`make drills`). Each drill grows or breaks the
# schema the way a maintainer would, in a copy of the tree, and checks that
# the project follows:
#
#   compatible drills, each on its own: edit, `make -j2` once (the new thing
#   must be in that one build) and a second make with nothing to do, `make
#   check-compat`, `make lock`, the conformance corpus and `nnnkit
#   conformance`, then the drill's own checks through the CLI;
#   every compatible growth together, on one tree: one `make -j2`, `make
#   lock`, check-gen, check-compat and the tiers a growth can affect (unit,
#   gen, cli, python: no test edited) and the conformance run, once
#   (tests/drills/suite.sh); only when that fails, each growth again on its
#   own with the same suite, to name the one that broke it;
#   breaking drills: edit, then `make -j2`, `make check-compat` and `make
#   lock` must each refuse with the drill's expected lines (make before it
#   generates or builds anything from the schema), and the lock must stay as
#   it was.
#
#   tests/drills/run.sh [DRILL...]     default: every tests/drills/*/drill.sh
#
# A drill is one folder: drill.sh (its kind and checks), grow.lua (its schema
# edit, run by tests/drills/edit.lua) and any files it adds to the tree; see
# docs/growing-the-format.md. The real tree is only read. The copies live in
# a temporary folder, removed when every drill passes and kept (its path is
# printed) when one fails, or with DRILLS_KEEP=1.
#
# Compatible drills start from a copy of the tree as built by `make test`
# (the base: the tracked files and build/, without the sanitizer, fuzz and
# valgrind folders), as a maintainer's tree is when they edit the schema
# after a `make test`: so each drill's `make -j2` is the incremental build
# whose dependencies are under test, and no build of the unchanged tree is
# paid again. When build/ is missing or stale, the base's `make -j2 all
# test-build` builds what is left.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
JOBS=${DRILLS_JOBS:-2}
MAKE=${MAKE:-make}
export MAKEFLAGS='' MAKELEVEL='' MFLAGS='' # the drills' makes are their own, not the caller's sub-makes
# The copies have no git history: the suite's share of the cli tier is this
# tree's (tests/tests.mk, "Shares").
SHARE_SEED=${SHARE_SEED:-$(git rev-list --count HEAD 2>/dev/null || echo 0)}
export SHARE_SEED

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

# The tree with build/ as `make test` left it; file times kept, so make
# sees what is up to date.
copy_built() {
	copy_tree "$1"
	if [ -d build ]; then
		tar --exclude=build/san --exclude=build/asan --exclude=build/fuzz --exclude=build/valgrind \
			--exclude=build/test-reports --exclude=build/plugin-scan.cache --exclude=build/bench-grown -cf - build | tar -xf - -C "$1"
	fi
}

if [ $need_base = 1 ]; then
	t=$(now)
	echo "drills: base: a copy of the built tree, brought up to date with $MAKE -j$JOBS all test-build"
	copy_built "$TMP/base"
	(cd "$TMP/base" && $MAKE -j"$JOBS" all test-build) > "$TMP/base.log" 2>&1 ||
		fail_out "base: make -j$JOBS all test-build" "$TMP/base.log"
	printf '%-28s %-10s %7ss  %s\n' base build "$(secs "$t" "$(now)")" \
		"$(grep -c '^  CC ' "$TMP/base.log" || true) files compiled to bring the copy up to date" >> "$SUMMARY"
fi

# Runs drill $1 in a fresh copy, $2 (own: its own steps, or grow), log $TMP/$1.$2.log.
run_drill() {
	local d=$1 mode=$2 work=$3 log=$TMP/$1.$2.log
	mkdir -p "$TMP/$d.$mode.out"
	(cd "$work" && DRILL_NAME=$d DRILL_DIR=$work/tests/drills/$d DRILL_OUT=$TMP/$d.$mode.out DRILL_LOG=$log \
		DRILL_JOBS=$JOBS DRILL_MODE=$mode MAKE=$MAKE bash tests/drills/lib.sh) > "$log" 2>&1 || fail_out "$d ($mode)" "$log"
}

COMPATIBLE=()
for d in "${DRILLS[@]}"; do
	t=$(now)
	kind=$(kind_of "$d")
	work=$TMP/$d
	echo "drills: $d ($kind)"
	if [ "$kind" = compatible ]; then
		cp -a "$TMP/base" "$work"
		COMPATIBLE+=("$d")
	else
		copy_tree "$work"
	fi
	run_drill "$d" own "$work"
	steps=$(sed -n 's/^drill-step: //p' "$TMP/$d.own.log" | tr '\n' ' ')
	printf '%-28s %-10s %7ss  %s\n' "$d" "$kind" "$(secs "$t" "$(now)")" "$steps" >> "$SUMMARY"
	rm -rf "$work"
done

# Every compatible growth in one tree, the suite once; on a failure, each
# growth on its own (those whose edit can change what a test sees) to name
# the one that broke it.
suite_of() { # suite_of NAME DRILL...: the growths applied to a copy of the base, then the suite
	local name=$1 t log=$TMP/$1.suite.log
	shift
	t=$(now)
	cp -a "$TMP/base" "$TMP/$name"
	for d in "$@"; do run_drill "$d" grow "$TMP/$name"; done
	if (cd "$TMP/$name" && JOBS=$JOBS MAKE=$MAKE bash tests/drills/suite.sh) > "$log" 2>&1; then
		printf '%-28s %-10s %7ss  %s\n' "$name" suite "$(secs "$t" "$(now)")" "$*" >> "$SUMMARY"
		rm -rf "${TMP:?}/$name"
		return 0
	fi
	return 1
}
if [ ${#COMPATIBLE[@]} -gt 0 ]; then
	echo "drills: every compatible growth together (${COMPATIBLE[*]}): the suite, once"
	if ! suite_of together "${COMPATIBLE[@]}"; then
		echo "drills: the suite failed on the growths together (log: $TMP/together.suite.log); each on its own:" >&2
		tail -n 40 "$TMP/together.suite.log" >&2 || true
		culprits=()
		for d in "${COMPATIBLE[@]}"; do
			grep -q '^DRILL_SUITE=no' "tests/drills/$d/drill.sh" && continue
			echo "drills: $d alone: the suite"
			suite_of "$d-alone" "$d" || culprits+=("$d")
		done
		if [ ${#culprits[@]} -gt 0 ]; then
			echo "drills: FAILED: the suite fails after: ${culprits[*]} (logs: $TMP/<drill>-alone.suite.log)" >&2
		else
			echo "drills: FAILED: the suite fails with the growths together, and passes after each on its own" >&2
		fi
		echo "drills: the copies are kept in $TMP" >&2
		exit 1
	fi
fi

echo "drills: all ${#DRILLS[@]} passed in $(secs "$T0" "$(now)")s"
cat "$SUMMARY"
if [ "${DRILLS_KEEP:-0}" = 1 ]; then echo "drills: kept in $TMP"; else rm -rf "$TMP"; fi
