# A new layer type with window and stride (MaxPool: pool, strides and
# padding dims per spatial axis), at the next free layer ID, with its kernel
# in the builtin plugin. Proves: the schema's `window` io alone gives its
# shapes to validate, info, graph and run; validate refuses an inconsistent
# chain after it that run would refuse; one make -j builds it in; the lock
# and the suite take it with no test edited; run agrees with NumPy; convert
# and the conformance corpus know it.
DRILL_KIND=compatible
DRILL_LAYOUT=moves # a new record in a union of the structs plugins see

grow() {
	drill_edit
	drill_add max_pool.c plugins/builtin/max_pool.c
	insert_after plugins/builtin/builtin.h '/* ---- act.c' \
		'extern const nnn_layer_type_t bi_max_pool_type; /* max_pool.c */'
	sed -i 's/^\(static const nnn_layer_type_t \*const layer_types\[\] = {.*\) };$/\1, \&bi_max_pool_type };/' \
		plugins/builtin/entry.c
	grep -q '&bi_max_pool_type }' plugins/builtin/entry.c || die "entry.c has no layer_types table to add the kernel to"
}

# MaxPool 3x2, stride 2, one column of padding each side, then a Dense
# layer with flatten: [2, 7, 8, 3] -> [2, 3, 5, 3] -> [2, 4].
spec() {
	cat <<-JSON
	{"description": "max pool drill", "layers": [
	  {"id": "max_pool", "activation": "linear", "pool": [3, 2], "strides": [2, 2], "padding_dims": [0, 0, 1, 1],
	   "bias": "pb.npy"},
	  {"id": "dense", "activation": "tanh", "weights": "$1", "bias": "b.npy", "flatten": true}]}
	JSON
}

check_built() {
	cd "$DRILL_OUT"
	"$PY" -c '
import numpy as np
r = np.random.default_rng(5)
np.save("pb.npy", r.standard_normal(3).astype(np.float32))
np.save("w.npy", r.standard_normal((45, 4)).astype(np.float32))
np.save("w46.npy", r.standard_normal((46, 4)).astype(np.float32))
np.save("b.npy", r.standard_normal(4).astype(np.float32))
np.save("x.npy", r.standard_normal((2, 7, 8, 3)).astype(np.float32))'
	spec w.npy > spec.json
	nnnkit build --input-shape 1,7,8,3 spec.json m.nnn
	cd - > /dev/null
}

check() {
	local out
	cd "$DRILL_OUT"
	out=$(nnnkit validate --input-shape 2,7,8,3 m.nnn)
	echo "$out"
	contains "$out" "valid, output shape [2, 4]"
	contains "$out" "layers[0] -> [2, 3, 5, 3]"
	# without an input shape: what the layers' own fields fix
	out=$(nnnkit info m.nnn)
	contains "$out" "MaxPool"
	out=$(nnnkit graph m.nnn)
	contains "$out" '[?, ?, ?, ?] -> [?, ?, ?, ?]'
	out=$(nnnkit graph --input-shape 2,7,8,3 m.nnn)
	contains "$out" '[2, 7, 8, 3] -> [2, 3, 5, 3]'
	# a Dense layer that takes 46 inputs after a pool that gives 45: both refuse
	spec w46.npy > bad.json
	if out=$(nnnkit build --input-shape 1,7,8,3 bad.json bad.nnn 2>&1); then
		die "build took a Dense of 46 inputs after a pool that gives 45"
	fi
	contains "$out" "flattens to 45"
	nnnkit build bad.json bad.nnn # without an input shape nothing disagrees
	if out=$(nnnkit validate --input-shape 2,7,8,3 bad.nnn 2>&1); then die "validate took bad.nnn"; fi
	contains "$out" "layers[1].weights.dims[0]"
	if out=$(nnnkit run bad.nnn --input x.npy --output y.npy 2>&1); then die "run took bad.nnn"; fi
	contains "$out" "flattens to 45"
	out=$(nnnkit dump m.nnn)
	contains "$out" "$LAYER_ID (max_pool)"
	out=$(nnnkit convert m.nnn -)
	contains "$out" '"max_pool"'
	contains "$out" '"strides": [2, 2]'
	roundtrip m.nnn
	nnnkit run m.nnn --input x.npy --output y.npy
	"$PY" -c '
import numpy as np, sys
x, pb, w, b, y = (np.load(f + ".npy").astype(np.float64) for f in ("x", "pb", "w", "b", "y"))
xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (0, 0)), constant_values=-np.inf)
p = np.zeros((2, 3, 5, 3))
for i in range(3):
    for j in range(5):
        p[:, i, j, :] = xp[:, 2 * i:2 * i + 3, 2 * j:2 * j + 2, :].max(axis=(1, 2))
want = np.tanh((p + pb).reshape(2, -1) @ w + b)
print("output", y.shape, "largest difference from NumPy:", np.abs(y - want).max())
sys.exit(0 if y.shape == want.shape and np.abs(y - want).max() < 1e-5 else 1)'
	cd - > /dev/null
	corpus_mentions valid max_pool
	corpus_mentions invalid max_pool strides
}
