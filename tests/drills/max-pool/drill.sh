# A new layer type with window and stride (MaxPool: pool, strides and
# padding dims per spatial axis, its channels, and a bias that is [channels]
# or empty), at the next free layer ID, added as a core kernel is
# (docs/growing-the-format.md, "Adding a core kernel"): one schema edit, one
# kernel file with its forward and ONNX hook, their prototypes in builtin.h,
# the descriptor in entry.c. Proves: the schema's `window` io alone gives its
# shapes to validate, info, graph and run; validate refuses an inconsistent
# chain after it that run would refuse; an optional dims rule takes the
# bias both ways and refuses a wrong one at its path; one make -j builds it
# in; the lock and the suite take it with no test edited; run agrees with
# NumPy with and without the bias; convert (JSON both ways, ONNX) and the
# conformance corpus know it.
DRILL_KIND=compatible
DRILL_LAYOUT=moves # a new record in a union of the structs plugins see

grow() {
	drill_edit
	# 1. the kernel file: forward and ONNX hook
	drill_add max_pool.c plugins/builtin/max_pool.c
	# 2. their prototypes, a section of builtin.h
	insert_before plugins/builtin/builtin.h '/* ---- act.c' \
		'/* ---- max_pool.c: NNN_LAYER_ID_MAX_POOL ---- */\n\nnnn_status_t bi_max_pool_forward(const nnn_kernel_args_t *a, char *msg, size_t msg_size);\nnnn_status_t bi_max_pool_onnx(const nnn_host_t *h, nnn_onnx_graph_t *g, const nnn_layer_t *layer, const void *body,\n                              const nnn_pshape_t *in, const char *x, const char **y);\n'
	# 3. the descriptor in entry.c, and in its table
	insert_before plugins/builtin/entry.c '/* A new layer kernel adds its descriptor here' \
		'static const nnn_layer_type_t max_pool_type = {\n\t.size = sizeof(nnn_layer_type_t),\n\t.id = NNN_LAYER_ID_MAX_POOL,\n\t.name = "max_pool",\n\t.forward = bi_max_pool_forward,\n\t.onnx_export = bi_max_pool_onnx,\n};\n'
	sed -i 's/^\(static const nnn_layer_type_t \*const layer_types\[\] = {.*\) };$/\1, \&max_pool_type };/' \
		plugins/builtin/entry.c
	grep -q '&max_pool_type }' plugins/builtin/entry.c || die "entry.c has no layer_types table to add the kernel to"
}

# MaxPool 3x2 over 3 channels, stride 2, one column of padding each side,
# then a Dense layer with flatten: [2, 7, 8, 3] -> [2, 3, 5, 3] -> [2, 4].
# $1: the Dense's weights; $2: the pool's bias (default pb.npy, [3]).
spec() {
	cat <<-JSON
	{"description": "max pool drill", "layers": [
	  {"id": "max_pool", "activation": "linear", "channels": 3, "pool": [3, 2], "strides": [2, 2],
	   "padding_dims": [0, 0, 1, 1], "bias": ${2:-\"pb.npy\"}},
	  {"id": "dense", "activation": "tanh", "weights": "$1", "bias": "b.npy", "flatten": true}]}
	JSON
}

# The empty bias the optional dims rule allows.
EMPTY='{"dims": [0], "requires_grad": false, "data": []}'

check_built() {
	cd "$DRILL_OUT"
	"$PY" -c '
import numpy as np
r = np.random.default_rng(5)
np.save("pb.npy", r.standard_normal(3).astype(np.float32))
np.save("wb.npy", r.standard_normal(2).astype(np.float32))
np.save("w.npy", r.standard_normal((45, 4)).astype(np.float32))
np.save("w48.npy", r.standard_normal((48, 4)).astype(np.float32))
np.save("b.npy", r.standard_normal(4).astype(np.float32))
np.save("x.npy", r.standard_normal((2, 7, 8, 3)).astype(np.float32))'
	spec w.npy > spec.json
	nnnkit build --input-shape 1,7,8,3 spec.json m.nnn
	spec w.npy "$EMPTY" > spec0.json
	nnnkit build --input-shape 1,7,8,3 spec0.json m0.nnn
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
	contains "$out" '[?, ?, ?, 3] -> [?, ?, ?, 3]' # the layer's channels fix the last axis
	out=$(nnnkit graph --input-shape 2,7,8,3 m.nnn)
	contains "$out" '[2, 7, 8, 3] -> [2, 3, 5, 3]'
	# a Dense layer that takes 48 inputs (a multiple of the 3 channels, as the layer fixes them) after a pool that gives 45: both refuse
	spec w48.npy > bad.json
	if out=$(nnnkit build --input-shape 1,7,8,3 bad.json bad.nnn 2>&1); then
		die "build took a Dense of 48 inputs after a pool that gives 45"
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
	roundtrip m0.nnn
	# the bias: [channels] or empty, both valid; [2] refused at its path, by build and validate
	out=$(nnnkit validate --input-shape 2,7,8,3 m0.nnn)
	contains "$out" "valid, output shape [2, 4]"
	spec w.npy '"wb.npy"' > wb.json
	if out=$(nnnkit build wb.json wb.nnn 2>&1); then die "build took a bias of 2 values for 3 channels"; fi
	contains "$out" "wb.json:3:42: layers[0].bias.dims[0]: " # at "wb.npy", where the dims came from
	contains "$out" "found 2, expected channels = 3"
	# the same as a model: its JSON form with the bias cut to 2 values, written as .nnn (convert says
	# it is not valid), which validate refuses
	nnnkit convert m.nnn m.json
	"$PY" -c '
import json
m = json.load(open("m.json"))
m["layers"][0]["bias"].update(dims=[2], data=m["layers"][0]["bias"]["data"][:2])
m["param_count"] -= 1
json.dump(m, open("wb-model.json", "w"), indent=1)'
	if nnnkit convert wb-model.json wb.nnn; then die "convert said nothing of a bias of 2 values for 3 channels"; fi
	if out=$(nnnkit validate wb.nnn 2>&1); then die "validate took a bias of 2 values for 3 channels"; fi
	contains "$out" "layers[0].bias.dims[0] @0x"
	contains "$out" "found 2, expected channels = 3"
	# ONNX: the hook exports it (MaxPool, and Add for the bias)
	nnnkit convert m.nnn m.onnx
	nnnkit run m.nnn --input x.npy --output y.npy
	nnnkit run m0.nnn --input x.npy --output y0.npy
	"$PY" -c '
import numpy as np, sys
x, pb, w, b, y, y0 = (np.load(f + ".npy").astype(np.float64) for f in ("x", "pb", "w", "b", "y", "y0"))
xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (0, 0)), constant_values=-np.inf)
p = np.zeros((2, 3, 5, 3))
for i in range(3):
    for j in range(5):
        p[:, i, j, :] = xp[:, 2 * i:2 * i + 3, 2 * j:2 * j + 2, :].max(axis=(1, 2))
want = np.tanh((p + pb).reshape(2, -1) @ w + b)
want0 = np.tanh(p.reshape(2, -1) @ w + b)  # an empty bias adds nothing
print("output", y.shape, "largest difference from NumPy:", np.abs(y - want).max(), "without the bias:",
      np.abs(y0 - want0).max())
sys.exit(0 if y.shape == want.shape and np.abs(y - want).max() < 1e-5 and np.abs(y0 - want0).max() < 1e-5 else 1)'
	cd - > /dev/null
	corpus_mentions valid max_pool
	corpus_mentions valid max_pool "bias.dims empty"
	corpus_mentions invalid max_pool strides
	corpus_mentions invalid max_pool bias.dims
}
