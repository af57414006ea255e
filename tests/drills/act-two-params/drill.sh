# shellcheck shell=bash disable=SC2034 # (sourced by tests/drills/lib.sh)
# A new activation with two parameters (SELU: alpha, lambda), with a record
# of its own at the next free activation ID, and its kernel in the builtin
# plugin. Proves: one make -j builds it in; the lock and the suite take it
# with no test edited; build, validate, run, convert and the conformance
# corpus know it; run agrees with NumPy.
DRILL_KIND=compatible
DRILL_LAYOUT=moves # a new record in a union of the structs plugins see

grow() {
	drill_edit
	drill_add selu.c plugins/builtin/selu.c
	insert_after plugins/builtin/builtin.h '/* ---- act.c' \
		'nnn_status_t bi_selu(const nnn_activation_t *act, const void *params, const nnn_shape_t *shape, float *x, int threads);'
	append_after plugins/builtin/entry.c 'ACT(NNN_ACTIVATION_ID_' \
		'	ACT(NNN_ACTIVATION_ID_SELU, "selu", bi_selu),'
}

ALPHA=1.6732632
LAMBDA=1.050701

# A Dense layer with SELU, from a spec and .npy files (docs/from-numpy.md).
check_built() {
	cd "$DRILL_OUT" || exit 1
	"$PY" -c '
import numpy as np
r = np.random.default_rng(7)
np.save("w.npy", r.standard_normal((4, 3)).astype(np.float32))
np.save("b.npy", r.standard_normal(3).astype(np.float32))
np.save("x.npy", r.standard_normal((5, 4)).astype(np.float32))'
	cat > spec.json <<-JSON
	{"description": "selu drill", "layers": [{"id": "dense", "weights": "w.npy", "bias": "b.npy",
	  "activation": {"id": "selu", "alpha": $ALPHA, "lambda": $LAMBDA}}]}
	JSON
	nnnkit build --input-shape 1,4 spec.json m.nnn
}

check() {
	local out root=$PWD
	corpus_mentions valid selu
	corpus_mentions invalid selu alpha
	corpus_mentions invalid selu lambda
	contains "$(cat "$DRILL_OUT/compat.log")" "enums \"activation_id\" value $ACT_ID \"selu\", records \"selu\""
	cd "$DRILL_OUT" || exit 1
	out=$(nnnkit validate --input-shape 5,4 m.nnn)
	echo "$out"
	contains "$out" "valid, output shape [5, 3]"
	out=$(nnnkit dump m.nnn)
	contains "$out" "$ACT_ID (selu)"
	out=$(nnnkit convert m.nnn -)
	contains "$out" '"selu"'
	contains "$out" '"alpha": 1.6732632'
	contains "$out" '"lambda": 1.050701'
	roundtrip m.nnn
	nnnkit run m.nnn --input x.npy --output y.npy
	"$PY" -c '
import numpy as np, sys
alpha, lam = np.float32(sys.argv[1]), np.float32(sys.argv[2])
x, w, b, y = (np.load(f + ".npy").astype(np.float64) for f in "xwby")
z = x @ w + b
want = lam * np.where(z > 0, z, alpha * np.expm1(z))
err = np.abs(y - want).max()
print("largest difference from NumPy:", err)
sys.exit(0 if err < 1e-5 else 1)' "$ALPHA" "$LAMBDA"
	# The Python package, unchanged, knows the new activation and its fields
	# (from the record descriptors): reads, builds, runs and writes it.
	NNN_BUILD=$root/build PYTHONPATH=$root/python PYTHONDONTWRITEBYTECODE=1 "$PY" -c '
import sys
import numpy as np
import nnnkit
m = nnnkit.load("m.nnn")
act = m.layers[0].activation
print(act)
assert act.id == "selu" and list(act.keys()) == ["id", "alpha", "lambda"], act
assert np.float32(act.alpha) == np.float32(sys.argv[1]) and np.float32(act["lambda"]) == np.float32(sys.argv[2])
x = np.load("x.npy")
assert m.run(x).tobytes() == np.load("y.npy").tobytes()
again = nnnkit.Model.from_layers([layer.to_dict() for layer in m.layers], description=m.description)
assert again.encode() == open("m.nnn", "rb").read()
built = nnnkit.Model.from_layers([{"id": "dense", "weights": np.load("w.npy"), "bias": np.load("b.npy"),
                                   "activation": {"id": "selu", "alpha": float(sys.argv[1]), "lambda": float(sys.argv[2])}}],
                                  description=m.description)
assert built.encode() == again.encode()
print("python: selu read, run, built and written")' "$ALPHA" "$LAMBDA"
}
