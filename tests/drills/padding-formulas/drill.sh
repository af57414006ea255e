# shellcheck shell=bash disable=SC2034 # (sourced by tests/drills/lib.sh)
# A new value of the padding type with formulas of its own ("full": k - 1
# before and after), used by a Conv. Proves: one make -j builds it in; the
# lock and the suite take it with no test edited; validate infers the grown
# output size and refuses padding that breaks the formulas; run agrees with
# NumPy; convert and the conformance corpus know it.
DRILL_KIND=compatible

# A Conv of 3 filters of 3x3 over 2 channels with full padding on a 5x5
# input: 7x7 out. The arrays come from NumPy (docs/from-numpy.md).
spec() {
	cat <<-JSON
	{"description": "full padding drill", "layers": [{"id": "$LAYER", "activation": "linear",
	  "$KERNELS_FIELD": "k.npy", "bias": "b.npy", "$TYPE_FIELD": "full", "$DIMS_FIELD": $1}]}
	JSON
}

check_built() {
	cd "$DRILL_OUT" || exit 1
	"$PY" -c '
import numpy as np
r = np.random.default_rng(11)
np.save("k.npy", r.standard_normal((3, 3, 3, 2)).astype(np.float32))
np.save("b.npy", r.standard_normal(3).astype(np.float32))
np.save("x.npy", r.standard_normal((2, 5, 5, 2)).astype(np.float32))'
	spec "[2, 2, 2, 2]" > spec.json
	nnnkit build --input-shape 1,5,5,2 spec.json m.nnn
}

check() {
	local out
	corpus_mentions valid "$TYPE_FIELD" Full
	corpus_mentions invalid "$DIMS_FIELD" full
	contains "$(cat "$DRILL_OUT/compat.log")" "value $PAD_ID \"full\""
	cd "$DRILL_OUT" || exit 1
	out=$(nnnkit validate --input-shape 2,5,5,2 m.nnn)
	echo "$out"
	contains "$out" "valid, output shape [2, 7, 7, 3]"
	out=$(nnnkit validate --input-shape 1,4,6,2 m.nnn)
	contains "$out" "valid, output shape [1, 6, 8, 3]"
	# the formulas are the new value's: k - 1 = 2, not 1
	spec "[1, 1, 1, 1]" > bad.json
	if out=$(nnnkit build --input-shape 1,5,5,2 bad.json bad.nnn 2>&1); then
		die "build took padding dims [1, 1, 1, 1] with full padding of a 3x3 kernel"
	fi
	echo "$out"
	contains "$out" "$DIMS_FIELD"
	contains "$out" "expected 2"
	out=$(nnnkit dump m.nnn)
	contains "$out" "$PAD_ID (full)"
	out=$(nnnkit convert m.nnn -)
	contains "$out" '"full"'
	roundtrip m.nnn
	nnnkit run m.nnn --input x.npy --output y.npy
	"$PY" -c '
import numpy as np, sys
x, k, b, y = (np.load(f + ".npy").astype(np.float64) for f in "xkby")
xp = np.pad(x, ((0, 0), (2, 2), (2, 2), (0, 0)))
want = np.zeros((2, 7, 7, 3))
for i in range(7):
    for j in range(7):
        want[:, i, j, :] = np.einsum("nabc,fabc->nf", xp[:, i:i + 3, j:j + 3, :], k) + b
print("output", y.shape, "largest difference from NumPy:", np.abs(y - want).max())
sys.exit(0 if y.shape == want.shape and np.abs(y - want).max() < 1e-4 else 1)'
}
