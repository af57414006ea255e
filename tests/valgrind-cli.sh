#!/usr/bin/env bash
# valgrind-cli.sh: every nnnkit command under valgrind, on the example model
# and the conformance corpus (and kit: its runner and testee) (make valgrind-cli; SHARE_SEED picks the share
# of the corpus `dump` runs on). `make valgrind` does not
# trace the nnnkit processes its CLI tests start (hundreds of them, each a
# valgrind start-up: most of that run's time); those tests run against an
# ASan+UBSan nnnkit in `make test-asan`, and each command's paths, good and
# bad, run here under memcheck once.
#   tests/valgrind-cli.sh BUILD_DIR CONFORMANCE_DIR
set -euo pipefail
B=$(cd "$1" && pwd)
C=$(cd "$2" && pwd)
K=$B/nnnkit
T=$(mktemp -d "${TMPDIR:-/tmp}/nnn-vgcli.XXXXXX")
trap 'rm -rf "$T"' EXIT
VG=(valgrind -q --error-exitcode=9 --leak-check=full --errors-for-leak-kinds=definite,indirect
	--show-possibly-lost=no --trace-children=no)
n=0
# vg EXPECTED_EXIT ARGS...: nnnkit ARGS under valgrind must exit EXPECTED_EXIT
# (valgrind's own 9 means a memory error or a leak).
vg() {
	local want=$1 rc=0
	shift
	"${VG[@]}" "$K" "$@" > "$T/out" 2> "$T/err" || rc=$?
	n=$((n + 1))
	if [ "$rc" -ne "$want" ]; then
		echo "valgrind-cli: nnnkit $* exited $rc, expected $want" >&2
		cat "$T/err" >&2
		exit 1
	fi
}

vg 0 conformance --corpus "$C"
# dump over one valid case in three, by the commit (SHARE_SEED, as
# tests/tests.mk's shares): every case at least every third commit.
i=0
for f in "$C"/valid/*.nnn; do
	[ $((i % 3)) != $((${SHARE_SEED:-0} % 3)) ] || vg 0 dump "$f"
	i=$((i + 1))
done

"$B/mkexample" "$T/m.nnn" "$T/x.npy" > /dev/null
M=$T/m.nnn
/usr/bin/python3 -c '
import numpy as np, sys
x = np.load(sys.argv[1])[:8]
np.save(sys.argv[1], x)
np.save(sys.argv[2], (np.arange(len(x)) % 10).astype(np.int64))' "$T/x.npy" "$T/y.npy"
# S: the example with its first Dense cut from 128 neurons to 8 (the same
# kinds of layer: Conv, a flattening Dense, Dense), for the conversions
# whose work is per value: on the example's 850,000 values, JSON out and
# ONNX both ways took 3 of this script's 4 minutes under memcheck, for the
# same code paths that 56,000 values take.
"$K" convert "$M" "$T/big.json"
/usr/bin/python3 - "$T/big.json" "$T/small.json" <<'EOF'
import json, sys
import numpy as np
m = json.load(open(sys.argv[1]))
d1, d2 = m["layers"][2], m["layers"][3]
w1 = np.array(d1["weights"]["data"]).reshape(d1["weights"]["dims"])[:, :8]
w2 = np.array(d2["weights"]["data"]).reshape(d2["weights"]["dims"])[:8]
d1["neurons"], d1["weights"]["dims"], d1["weights"]["data"] = 8, list(w1.shape), w1.ravel().tolist()
d1["bias"]["dims"], d1["bias"]["data"] = [8], d1["bias"]["data"][:8]
d2["weights"]["dims"], d2["weights"]["data"] = list(w2.shape), w2.ravel().tolist()
json.dump(m, open(sys.argv[2], "w"))
EOF
"$K" edit "$T/small.json" --fix-param-count -o "$T/s.nnn" > /dev/null
S=$T/s.nnn
vg 0 --version
vg 0 help
vg 0 info "$M"
vg 0 info --json --input-shape 1,28,28,1 "$M"
vg 0 validate --check-finite --input-shape 2,28,28,1 "$M"
vg 0 validate --json "$M"
vg 0 dump --values 3 --json "$M"
vg 0 map --input-shape 1,28,28,1 -o "$T/m.html" "$M"
vg 0 graph --input-shape 1,28,28,1 "$M"
vg 0 stats --json "$M"
vg 0 convert "$S" "$T/s.json"
vg 0 convert "$T/s.json" "$T/s-back.nnn"
vg 0 convert --tensors "$T/t" "$M" "$T/mt.json"
vg 0 convert "$T/mt.json" "$T/back.nnn"
vg 0 convert --to onnx "$S" "$T/s.onnx"
vg 0 convert "$T/s.onnx" "$T/from-onnx.nnn"
vg 0 convert "$M" "$T/m.safetensors"
vg 0 dump "$T/m.safetensors"
vg 0 export "$M" "$T/exp"
vg 0 build "$T/exp/model.json" "$T/built.nnn"
vg 0 diff "$M" "$T/built.nnn"
vg 0 run "$M" --input "$T/x.npy" -o "$T/out.npy" --batch 3 --threads 2
vg 0 eval "$M" --inputs "$T/x.npy" --labels "$T/y.npy" --json --top-k 2 --misclassified "$T/mis.csv"
vg 0 edit "$M" -o "$T/d.nnn" --description "edited under valgrind" --fix-param-count
vg 0 edit "$M" --get 'layers[0].bias' -o "$T/b.npy"
vg 0 edit "$M" -o "$T/e.nnn" --set "layers[0].bias=$T/b.npy"
vg 0 plugins -v
# The kit: nnnkit's runner (its testee, not traced, is nnnkit too) over the
# first four cases of each family (every check, every path of the runner, in
# a fifth of the corpus's time under memcheck), and a testee session of every
# op, good and bad, under memcheck.
mkdir "$T/kit" && ln -s "$C/valid" "$C/invalid" "$C/io" "$T/kit/"
/usr/bin/python3 - "$C/manifest.json" "$T/kit/manifest.json" <<'EOF'
import collections, json, sys
m = json.load(open(sys.argv[1]))
seen = collections.Counter()
m["cases"] = [c for c in m["cases"] if seen.update([c["family"]]) or seen[c["family"]] <= 4]
json.dump(m, open(sys.argv[2], "w"))
EOF
vg 0 conformance --corpus "$T/kit" --testee "$K testee" --results "$T/kit.json" --known-failures "$T/known" --fix
# (globs, not `ls | head`: under pipefail, ls killed by head's early exit would end the script)
valid=("$C"/valid/*.nnn) invalid=("$C"/invalid/*.nnn)
V=${valid[0]} I=${invalid[0]}
R=$(/usr/bin/python3 -c 'import json,sys; print(next(c["run"]["input"] for c in json.load(open(sys.argv[1]))["cases"] if c["run"]))' "$C/manifest.json")
RF=$C/$(/usr/bin/python3 -c 'import json,sys; print(next(c["file"] for c in json.load(open(sys.argv[1]))["cases"] if c["run"]))' "$C/manifest.json")
cat > "$T/requests" <<EOF2
{"id": 1, "op": "hello", "protocol": 1}
{"id": 2, "op": "decode", "file": "$V"}
{"id": 3, "op": "decode", "file": "$I"}
{"id": 4, "op": "validate", "file": "$I"}
{"id": 5, "op": "validate", "file": "$RF", "input_shape": [1, 99]}
{"id": 6, "op": "encode", "file": "$V", "output": "$T/enc.nnn"}
{"id": 7, "op": "run", "file": "$RF", "input": "$C/$R", "output": "$T/run.npy"}
{"id": 8, "op": "run", "file": "$RF", "input": "$V", "output": "$T/no.npy"}
not json
{"id": 9, "op": "frobnicate"}
EOF2
vg 0 testee < "$T/requests"
[ "$(grep -c '"ok": true' "$T/out")" = 4 ] && [ "$(wc -l < "$T/out")" = 10 ] || { echo "valgrind-cli: testee answered:" >&2; cat "$T/out" >&2; exit 1; }
# Failures: each command's error path.
vg 1 diff "$M" "$T/d.nnn"
vg 2 info --bogus "$M"
vg 2 run "$M" --input "$T/x.npy" --batch 0
vg 1 validate "$I"
vg 1 run "$I" --input "$T/x.npy"
echo "valgrind-cli: $n nnnkit commands under valgrind: no errors, no leaks"
