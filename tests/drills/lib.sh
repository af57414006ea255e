#!/usr/bin/env bash
# lib.sh: runs one growth drill in a copy of the tree (tests/drills/run.sh
# starts it there, with DRILL_NAME, DRILL_DIR, DRILL_OUT, DRILL_JOBS and
# DRILL_MODE set), and gives the drill's drill.sh its helpers.
#
# drill.sh sets DRILL_KIND=compatible or DRILL_KIND=breaking (on a line of
# its own: run.sh reads it) and may define:
#   grow         the edit (default: drill_edit, which runs grow.lua)
#   check_built  after the one `make -j2` of the grown tree: the new thing
#                must already be there (compatible)
#   check        after make lock and the conformance run (compatible): the
#                drill's own checks through the CLI
# and may set DRILL_SUITE=no when its edit cannot change what any test sees
# (doc-only): it then takes no part in the search for the growth that broke
# the combined suite (run.sh).
#
# DRILL_MODE says what to run:
#   own    (default) the drill's own steps: compatible, the edit, the one
#          build and a second make that finds nothing to do, check-compat,
#          make lock, the conformance corpus and run, check; breaking,
#          `make -j2`, check-compat and make lock refused (the build with
#          nothing generated or built from the schema) and the lock kept
#   grow   the edit alone (compatible): run.sh applies every compatible
#          growth to one tree this way, then builds it and runs the suite
#          there once (tests/drills/suite.sh)
# Each step's output goes to the drill's log; a step that fails stops it.
set -euo pipefail

NNNKIT=$PWD/build/nnnkit
PY=/usr/bin/python3 # Debian's, which has numpy (scripts/deps.sh installs it)

# ---- helpers for drill.sh ----

# Runs the drill's grow.lua on schema/nnn.lua (tests/drills/edit.lua); the
# shell variables it sets with var() are there in the later steps.
drill_edit() {
	local frags
	mapfile -t frags < <(plugin_fragments)
	DRILL_OUT=$DRILL_OUT lua5.4 tests/drills/edit.lua "$DRILL_DIR/grow.lua" schema/nnn.lua "${frags[@]}"
}

# The tree's plugin fragments, whose IDs a core growth must not take.
plugin_fragments() { ls examples/*/schema.lua 2>/dev/null || true; }

# Copies a file of the drill's folder into the tree.
drill_add() { mkdir -p "$(dirname "$2")" && cp "$DRILL_DIR/$1" "$2"; }

# Inserts LINE after (insert_after) or before (insert_before) the first line
# of FILE that contains ANCHOR (a fixed string), or after the last such line
# (append_after: a new entry at the end of a table); fails, naming both, when
# there is none: the drill then needs updating to the file.
insert_at() {
	local where=$1 file=$2 anchor=$3 line=$4 at
	at=$(grep -nF -- "$anchor" "$file" | sed -n "$([ "$where" = last ] && echo '$' || echo 1)s/:.*//p")
	[ -n "$at" ] || die "$file has no line with '$anchor' to put '$line' $where"
	[ "$where" = before ] || at=$((at + 1))
	awk -v at="$at" -v l="$line" 'NR == at { print l } { print } END { if (NR < at) print l }' "$file" > "$file.tmp"
	mv "$file.tmp" "$file"
}
insert_after() { insert_at after "$@"; }
insert_before() { insert_at before "$@"; }
append_after() { insert_at last "$@"; }

die() { echo "drill $DRILL_NAME: $*" >&2; exit 1; }

# Runs nnnkit, echoing the command into the log.
nnnkit() { echo "+ nnnkit $*" >&2; "$NNNKIT" "$@"; }

# Asserts OUTPUT (a string) contains TEXT.
contains() { case "$1" in *"$2"*) ;; *) die "expected '$2' in: $1" ;; esac; }

# .nnn -> JSON -> .nnn must give the same bytes.
roundtrip() {
	nnnkit convert "$1" "$DRILL_OUT/rt.json"
	nnnkit convert "$DRILL_OUT/rt.json" "$DRILL_OUT/rt.nnn"
	cmp "$1" "$DRILL_OUT/rt.nnn" || die "$1: .nnn -> JSON -> .nnn changed the bytes"
}

# The conformance corpus has a case of class CLASS (valid or invalid) whose
# description, path and file name mention every WORD; says how many.
corpus_mentions() {
	local n
	n=$("$PY" - "$@" <<-'EOF'
		import json, sys
		want_valid, words = sys.argv[1] == "valid", sys.argv[2:]
		cases = json.load(open("build/conformance/manifest.json"))["cases"]
		text = lambda c: " ".join(str(c.get(k) or "") for k in ("tests", "path", "file"))
		print(sum(1 for c in cases if c["valid"] == want_valid and all(w in text(c) for w in words)))
	EOF
	)
	local class=$1
	shift
	[ "$n" -gt 0 ] || die "the conformance corpus has no $class case that mentions: $*"
	echo "corpus: $n $class cases mention: $*"
}

# ONNX for a drill whose first layer's weights ([24, 40], a Dense of
# another element type) its kernel exports as an initializer of ONNX type
# TYPE (FLOAT16, INT8) cast to float, in $DRILL_OUT: check_onnx ROOT MODEL
# TYPE WRONG. MODEL.nnn and edges.nnn go .nnn -> .onnx -> .nnn byte for
# byte (MODEL.onnx and edges.onnx stay for the drill's own looks); the
# weights stored as WRONG instead of TYPE are refused, naming the node, the
# initializer and both types; the graph alone (nnn.fields renamed away)
# imports to a model that gives run's output of MODEL.nnn on x.npy (y.npy,
# the best path's) bit for bit; and ONNX Runtime (from ROOT/build/ort, else
# skipped, saying so) runs MODEL.onnx to that output within 1e-5. With its
# first layer flattening, MODEL exported for an input [1, 4, 6] comes back
# byte for byte and runs x as [N, 4, 6] to the same output.
check_onnx() {
	local root=$1 model=$2 type=$3 wrong=$4 f out
	for f in "$model" edges; do
		nnnkit convert "$f.nnn" "$f.onnx"
		nnnkit convert "$f.onnx" "${f}_onnx.nnn"
		cmp "$f.nnn" "${f}_onnx.nnn" || die "$f.nnn: .nnn -> ONNX -> .nnn changed the bytes"
	done
	# TensorProto: dims 24 and 40 (field 1), then data_type (field 2)
	"$PY" - "$model" "$type" "$wrong" <<-'EOF' || die "$model.onnx has no weights [24, 40] of type $type to retype to $wrong"
		import sys
		types = {"FLOAT": 1, "UINT8": 2, "INT8": 3, "UINT16": 4, "INT16": 5, "INT32": 6, "INT64": 7,
		         "FLOAT16": 10, "DOUBLE": 11, "UINT32": 12, "UINT64": 13, "BFLOAT16": 16}
		model, want, wrong = sys.argv[1], types[sys.argv[2]], types[sys.argv[3]]
		b = open(model + ".onnx", "rb").read()
		old = bytes([8, 24, 8, 40, 16, want])
		if b.count(old) != 1:
		    sys.exit(1)
		open("wrongtype.onnx", "wb").write(b.replace(old, bytes([8, 24, 8, 40, 16, wrong])))
	EOF
	if out=$(nnnkit convert wrongtype.onnx wrongtype.nnn 2>&1); then die "import took $wrong weights for $type ones"; fi
	echo "$out"
	contains "$out" "node 'layers.0/weights_float' (Cast): initializer 'layers.0/weights' is $wrong, expected $type"
	# from the graph alone: the hook's fields make the same network
	"$PY" - "$model" <<-'EOF' || die "$model.onnx has no one nnn.fields key to rename"
		import sys
		b = open(sys.argv[1] + ".onnx", "rb").read()
		sys.exit(1 if b.count(b"nnn.fields") != 1 else open("graph.onnx", "wb").write(b.replace(b"nnn.fields", b"nnn.fieldx")) and 0)
	EOF
	nnnkit convert graph.onnx graph.nnn
	nnnkit run "$model.nnn" --input x.npy --output y.npy
	nnnkit run graph.nnn --input x.npy --output y_graph.npy
	"$PY" -c '
import numpy as np, sys
sys.exit(0 if np.load("y_graph.npy").tobytes() == np.load("y.npy").tobytes() else 1)' ||
		die "graph.nnn (imported without nnn.fields) does not give run's output of $model.nnn"
	# flattening a rank-3 input ([N, 4, 6] -> [N, 24]): the Flatten the
	# hook takes leaves rank 2, so the float32 Dense after it imports too
	nnnkit convert "$model.nnn" flat.json
	"$PY" - <<-'EOF' || die "flat.json: no layers[0].flatten to set"
		import json, numpy as np
		m = json.load(open("flat.json"))
		m["layers"][0]["flatten"] = True
		json.dump(m, open("flat.json", "w"))
		x = np.load("x.npy")
		np.save("x3.npy", x.reshape(x.shape[0], 4, 6))
	EOF
	nnnkit convert flat.json flat.nnn
	nnnkit convert --input-shape 1,4,6 flat.nnn flat.onnx
	nnnkit convert flat.onnx flat_onnx.nnn
	cmp flat.nnn flat_onnx.nnn || die "flat.nnn: .nnn -> ONNX (input [1, 4, 6]) -> .nnn changed the bytes"
	nnnkit run flat.nnn --input x3.npy --output y_flat.npy
	"$PY" -c '
import numpy as np, sys
sys.exit(0 if np.load("y_flat.npy").tobytes() == np.load("y.npy").tobytes() else 1)' ||
		die "flat.nnn on x as [N, 4, 6] does not give $model.nnn's output on [N, 24]"
	if [ ! -d "$root/build/ort/node_modules/onnxruntime-node" ]; then
		echo "ONNX Runtime: skipped, $root/build/ort has no onnxruntime-node (make test-build installs it when npm can)"
		return
	fi
	out=$(NODE_PATH=$root/build/ort/node_modules node "$root/tests/tools/ort_run.js" "$model.onnx" x.npy y_ort.npy 2>&1) ||
		die "ONNX Runtime did not run $model.onnx: $out"
	"$PY" -c '
import numpy as np, sys
y, o = np.load("y.npy"), np.load("y_ort.npy")
print("ONNX Runtime", o.shape, "largest difference from nnnkit run:", np.abs(o - y).max())
sys.exit(0 if o.shape == y.shape and np.abs(o - y).max() < 1e-5 else 1)' || die "ONNX Runtime and nnnkit run disagree on $model.onnx"
}

# ---- the steps ----

# Runs a step in a subshell, so that `set -e` holds inside the drill's
# functions, with the variables grow.lua set.
step() {
	local name=$1 t0 t1 rc
	shift
	echo "== $name: $*"
	t0=$(date +%s.%N)
	set +e
	(
		set -e
		# shellcheck disable=SC1091
		. "$DRILL_OUT/drill.vars"
		"$@"
	)
	rc=$?
	set -e
	[ $rc = 0 ] || die "step $name failed"
	t1=$(date +%s.%N)
	echo "drill-step: $name $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')s"
}

grow() { drill_edit; }
check_built() { :; }
check() { :; }

# shellcheck disable=SC1091
. "$DRILL_DIR/drill.sh"
: > "$DRILL_OUT/drill.vars"
: > "$DRILL_OUT/drill.expect"

# The first build after the edit: one `make -j`, never a second. Every
# object made from the generated code is rebuilt in it (the linked tools
# know the new thing: check_built) and nothing else needs it.
one_build() {
	$MAKE -j"$DRILL_JOBS" 2>&1 | tee "$DRILL_OUT/make.log"
	grep -q '^  CC     build/obj/gen/schema_gen.o$' "$DRILL_OUT/make.log" ||
		die "make -j$DRILL_JOBS did not rebuild build/obj/gen/schema_gen.o after the schema edit"
	( check_built )
	# and a second make finds nothing left to do
	$MAKE -j"$DRILL_JOBS" > "$DRILL_OUT/make2.log" 2>&1
	if grep -E '^  (CC|AR|GEN|XXD) ' "$DRILL_OUT/make2.log"; then
		die "a second make -j$DRILL_JOBS still rebuilt the lines above: the first one missed them"
	fi
}

# The format check must say compatible. The struct layout plugins see moves
# with a new record in a union (DRILL_LAYOUT=moves in drill.sh): then
# check-compat fails on check-layout alone, asking for make lock, which
# lock_ok runs; otherwise it passes as it is.
compat_ok() {
	local rc=0
	$MAKE -s check-compat > "$DRILL_OUT/compat.log" 2>&1 || rc=$?
	cat "$DRILL_OUT/compat.log"
	grep -q '^check-compat: .*: compatible, ' "$DRILL_OUT/compat.log" || die "check-compat did not say compatible"
	if [ "${DRILL_LAYOUT:-kept}" = moves ]; then
		[ $rc -ne 0 ] || die "check-compat passed, but the layout plugins see should have moved"
		grep -q '^check-layout: .*run make lock' "$DRILL_OUT/compat.log" || die "check-layout did not ask for make lock"
	elif [ $rc -ne 0 ]; then
		die "check-compat failed (set DRILL_LAYOUT=moves if the growth moves the layout plugins see)"
	fi
}

lock_ok() {
	local out
	$MAKE -s lock
	out=$($MAKE -s check-compat 2>&1) || die "check-compat after make lock: $out"
	contains "$out" ': compatible, no additions'
}

conformance_ok() {
	$MAKE -s conformance conformance-kit
	nnnkit conformance --corpus build/conformance --no-progress
	# the kit regenerated from the grown schema, scored as an implementer
	# scores theirs: the kit's runner, nnnkit's testee
	echo "+ conformance/nnn_conformance.py run --kit build/conformance --testee 'nnnkit testee'" >&2
	"$PY" -I conformance/nnn_conformance.py run --kit build/conformance --testee "$NNNKIT testee"
	# and the C# codec regenerated by the same make: every case read,
	# validated and written in C#, with libnnn's codes, paths and offsets
	echo "+ nnnkit conformance --testee 'mono build/csharp/nnn-cs.exe testee' --level recommended" >&2
	"$NNNKIT" conformance --corpus build/conformance --testee "mono build/csharp/nnn-cs.exe testee" --level recommended
}

# check-compat's refusal in the output $1 of `make $2`: its verdict, with
# the remedy, and each expected line.
refusal_in() {
	local out=$1 what=$2
	if grep -q 'schema error' "$out"; then die "make $what failed on a schema error, not with a refusal"; fi
	grep -q '^check-compat: .* incompatible change.*: make the change the safe way' "$out" ||
		die "make $what: no check-compat verdict with its remedy"
	[ -s "$DRILL_OUT/drill.expect" ] || die "grow.lua gave no expect() lines"
	while IFS= read -r line; do
		cut -c1-${#line} "$out" | grep -qxF -- "$line" || die "make $what: expected a line starting with: $line"
	done < "$DRILL_OUT/drill.expect"
}

# A breaking change: check-compat and lock refuse it with each expected
# line, the lock stays as it was.
refused() {
	local what=$1 out=$DRILL_OUT/$1.log
	if $MAKE -s "$what" > "$out" 2>&1; then cat "$out"; die "make $what accepted a breaking change"; fi
	cat "$out"
	refusal_in "$out" "$what"
}

# The build refuses it too, before the generator makes anything of it: no
# file of the tree is rewritten (docs/format.md) and build/ gets nothing
# made from the schema. What -j2 may start beside the check and needs no
# schema (protoc-c's ONNX codec, the map page, nnngen's man page, the C#
# tool's version and library map) may be there.
build_refused() {
	local out=$DRILL_OUT/build.log made
	touch "$DRILL_OUT/before-build"
	sleep 1 # file times in whole seconds on some file systems
	if $MAKE -j"$DRILL_JOBS" > "$out" 2>&1; then cat "$out"; die "make -j$DRILL_JOBS built a breaking change"; fi
	cat "$out"
	refusal_in "$out" "-j$DRILL_JOBS"
	grep -q '^nnngen: .*: nothing generated: it breaks files written under ' "$out" ||
		die "make -j$DRILL_JOBS: no line saying nothing was generated"
	made=$(find . -newer "$DRILL_OUT/before-build" -type f | sed 's|^\./||' |
		grep -Ev '^build/(gen/onnx/|gen/map_page\.h$|obj/gen/onnx\.pb-c\.[od]$|nnngen\.1$|csharp/(Version\.g\.cs|Nnn\.dll\.config)$)' || true)
	[ -z "$made" ] || die "make -j$DRILL_JOBS refused, but made or rewrote from the broken schema: $made"
}

lock_kept() { cmp schema/nnn.lock "$DRILL_OUT/nnn.lock.before" || die "make lock rewrote the lock"; }

cp schema/nnn.lock "$DRILL_OUT/nnn.lock.before"
case "$DRILL_KIND:${DRILL_MODE:-own}" in
compatible:own)
	step grow grow
	step make one_build
	step check-compat compat_ok
	step lock lock_ok
	step conformance conformance_ok
	step check check
	;;
compatible:grow)
	step grow grow
	;;
breaking:own)
	step grow grow
	step make build_refused
	step check-compat refused check-compat
	step lock refused lock
	step lock-kept lock_kept
	;;
*) die "DRILL_KIND must be compatible or breaking, not '${DRILL_KIND:-}', and DRILL_MODE own or grow (grow: compatible only), not '${DRILL_MODE:-}'" ;;
esac
