#!/bin/sh
# fuzz/make_seeds.sh: (re)writes the seed corpora of the fuzz harnesses.
#
#   fuzz/make_seeds.sh [CORPUS_DIR [OUT_DIR]]
#
# Always writes the hand-made seeds (fuzz/gen_seeds.py, python3; and
# fuzz/gen_onnx_seeds.py for fuzz_onnx, with python3-onnx) into OUT_DIR
# (default fuzz/seeds). Given a conformance corpus (`make conformance` writes
# build/conformance/{valid,invalid}/*.nnn), also copies its cases: valid ones
# to fuzz_decode, fuzz_dump and fuzz_run, invalid ones to fuzz_decode and
# fuzz_dump, as conf-valid-NAME and conf-invalid-NAME. Cases over MAX_BYTES
# (default 4096, the harnesses' -max_len) are skipped: libFuzzer would only
# see their first bytes. `make fuzz` also reads build/conformance/ directly
# when it exists; copying freezes a selection into the committed seeds.
set -eu
here=$(dirname "$0")
corpus=${1:-}
out=${2:-$here/seeds}
max=${MAX_BYTES:-4096}

python3 "$here/gen_seeds.py" "$out"
echo "make_seeds: hand-made seeds in $out"
# fuzz_onnx's seeds need Debian's python3-onnx (onnx.helper).
if /usr/bin/python3 -c 'import onnx' 2>/dev/null; then
	/usr/bin/python3 "$here/gen_onnx_seeds.py" "$out"
else
	echo "make_seeds: python3-onnx is missing: fuzz_onnx's seeds are left as they are" >&2
fi

[ -n "$corpus" ] || exit 0
if [ ! -d "$corpus/valid" ] && [ ! -d "$corpus/invalid" ]; then
	echo "make_seeds: $corpus has neither valid/ nor invalid/ (run make conformance)" >&2
	exit 2
fi
n=0
skipped=0
for class in valid invalid; do
	[ -d "$corpus/$class" ] || continue
	if [ "$class" = valid ]; then harnesses="fuzz_decode fuzz_dump fuzz_run"; else harnesses="fuzz_decode fuzz_dump"; fi
	for f in "$corpus/$class"/*.nnn; do
		[ -f "$f" ] || continue
		if [ "$(wc -c < "$f")" -gt "$max" ]; then
			skipped=$((skipped + 1))
			continue
		fi
		for h in $harnesses; do
			mkdir -p "$out/$h"
			cp "$f" "$out/$h/conf-$class-$(basename "$f")"
		done
		n=$((n + 1))
	done
done
echo "make_seeds: copied $n conformance cases from $corpus ($skipped over $max bytes skipped)"
