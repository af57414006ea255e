# A signed 8-bit element type declared in the schema alone (i8 and
# i8_array, shared with any growth that declares them too), a tensor record
# of it and DenseI8, a Dense layer with int8 weights and a float32 scale per
# neuron (scales [neurons], a dims rule), at the next free layer ID, with
# its kernel in the builtin plugin. Proves: the codec reads, validates and
# writes it from one make -j; JSON keeps every int8 (edge values) and
# refuses one out of range; scales of the wrong shape are refused at their
# path; the file's weights take a quarter of the bytes of float32 ones;
# dump, stats and the parameter count see them; run agrees with NumPy on
# the dequantized weights on every instruction set and on two threads; the
# conformance corpus cases come from the schema.
DRILL_KIND=compatible
DRILL_LAYOUT=moves # a new record in a union of the structs plugins see

grow() {
	drill_edit
	drill_add dense_i8.c plugins/builtin/dense_i8.c
	insert_after plugins/builtin/builtin.h '/* ---- act.c' \
		'extern const nnn_layer_type_t bi_dense_i8_type; /* dense_i8.c */'
	sed -i 's/^\(static const nnn_layer_type_t \*const layer_types\[\] = {.*\) };$/\1, \&bi_dense_i8_type };/' \
		plugins/builtin/entry.c
	grep -q '&bi_dense_i8_type }' plugins/builtin/entry.c || die "entry.c has no layer_types table to add the kernel to"
}

# A float32 Dense model (m32.nnn) of 24 inputs, 40 neurons, then a plain
# Dense to 3; and i8.json, the same network with the first layer's weights
# quantized per neuron (scale = largest |w| / 127, w8 = round(w / scale)) as
# a DenseI8. wide.json: one DenseI8 of 256 inputs and 200 neurons (vectors
# and a tail), big enough for two threads.
check_built() {
	cd "$DRILL_OUT"
	"$PY" -c '
import numpy as np
r = np.random.default_rng(8)
for name, shape in (("w", (24, 40)), ("b", 40), ("w2", (40, 3)), ("b2", 3), ("x", (5, 24)),
                    ("ww", (256, 200)), ("bw", 200), ("xw", (9, 256))):
    np.save(name + ".npy", r.standard_normal(shape).astype(np.float32))'
	cat > spec.json <<-JSON
	{"description": "dense i8 drill", "layers": [
	  {"id": "dense", "activation": "tanh", "weights": "w.npy", "bias": "b.npy", "flatten": false},
	  {"id": "dense", "activation": "linear", "weights": "w2.npy", "bias": "b2.npy", "flatten": false}]}
	JSON
	cat > wide.spec.json <<-JSON
	{"description": "dense i8 drill, wide", "layers": [
	  {"id": "dense", "activation": "linear", "weights": "ww.npy", "bias": "bw.npy", "flatten": false}]}
	JSON
	nnnkit build --input-shape 1,24 spec.json m32.nnn
	nnnkit build --input-shape 1,256 wide.spec.json wide32.nnn
	nnnkit convert m32.nnn m32.json
	nnnkit convert wide32.nnn wide32.json
	"$PY" -c '
import json, numpy as np
def quantize(path, w, out, deq):
    m = json.load(open(path))
    L = m["layers"][0]
    s = (np.abs(w).max(axis=0) / 127).astype(np.float32)
    q = np.clip(np.rint(w / s), -128, 127).astype(np.int8)
    L["id"] = "dense_i8"
    L["weights"]["data"] = [int(v) for v in q.ravel()]
    L["scales"] = {"dims": [w.shape[1]], "requires_grad": False, "data": [float(v) for v in s]}
    m["param_count"] += w.shape[1]  # the scales count as parameters too
    json.dump(m, open(out, "w"))
    np.save(deq, q.astype(np.float64) * s.astype(np.float64))
    return m, L
m, L = quantize("m32.json", np.load("w.npy"), "i8.json", "w8.npy")
quantize("wide32.json", np.load("ww.npy"), "wide.json", "ww8.npy")
# edge values: the ends of int8 and zero; scales of -0, subnormals (the
# smallest of each sign, the largest), the smallest normal and the largest
e = dict(m)
e["layers"] = [dict(L)]
e["param_count"] = 2 * 40 + 40 + 40
e["layers"][0]["weights"] = {"dims": [2, 40], "requires_grad": False, "data": [-128, 127, 0, -1, 1] + [3] * 75}
se = np.array([0x80000000, 0x00000001, 0x80000001, 0x007fffff, 0x00800000, 0x7f7fffff], np.uint32).view(np.float32)
e["layers"][0]["scales"] = {"dims": [40], "requires_grad": False,
                            "data": [float(v) for v in se] + [float(v) for v in L["scales"]["data"][6:]]}
json.dump(e, open("edges.json", "w"))
# scales of the wrong shape: 39 of them for 40 neurons
e["param_count"] -= 1
e["layers"][0]["scales"] = {"dims": [39], "requires_grad": False, "data": [0.5] * 39}
json.dump(e, open("badscales.json", "w"))'
	nnnkit convert i8.json m8.nnn
	cd - > /dev/null
}

# y of model $1 on x $2 (nnnkit run with the arguments after $4) against
# NumPy's float64 y, $3 (a Python expression of x and L(name), the arrays of
# name.npy: the dequantized weights); $4 says which case it is.
agrees() {
	local model=$1 x=$2 want=$3 label=$4
	shift 4
	nnnkit run "$model" --input "$x" --output y.npy "$@"
	"$PY" -c '
import numpy as np, sys
L = lambda f: np.load(f + ".npy").astype(np.float64)
x, y = L(sys.argv[1]), L("y")
want = eval(sys.argv[2])
print(sys.argv[3], "output", y.shape, "largest difference from NumPy:", np.abs(y - want).max())
sys.exit(0 if y.shape == want.shape and np.abs(y - want).max() < 1e-4 else 1)' "${x%.npy}" "$want" "$label"
}

check() {
	check_npy
	check_onnx_i8
	local out s8 s32 isa root=$PWD
	cd "$DRILL_OUT"
	out=$(nnnkit validate --input-shape 5,24 m8.nnn)
	echo "$out"
	contains "$out" "valid, output shape [5, 3]"
	contains "$(nnnkit info m8.nnn)" "DenseI8"
	# param_count: 24*40 weights + 40 scales + 40 + 40*3 + 3
	contains "$(nnnkit convert m8.nnn -)" '"param_count": 1163'
	# int8 weights take 1 byte each, not 4; the scales tensor (i32 count and
	# one dim, requires_grad, i32 count and 40 floats) is new
	s8=$(stat -c %s m8.nnn)
	s32=$(stat -c %s m32.nnn)
	echo "sizes: int8 $s8 bytes, float32 $s32 bytes"
	[ $((s32 - s8)) -eq $((24 * 40 * 3 - (4 + 4 + 1 + 4 + 40 * 4))) ] ||
		die "m8.nnn is $s8 bytes, expected $((s32 - 24 * 40 * 3 + 4 + 4 + 1 + 4 + 40 * 4))"
	# stats reads the int8 weights as numbers, one byte each (160 + 960 + 160 + 12 + 480)
	out=$(nnnkit stats m8.nnn)
	echo "$out"
	contains "$out" "layers[0].weights        [24,40]            960        960"
	contains "$out" "layers[0].scales         [40]                40        160"
	contains "$out" "5 tensors, 1163 values, 1772 bytes"
	out=$(nnnkit dump m8.nnn)
	contains "$out" "$LAYER_ID (dense_i8)"
	contains "$out" "i8_array"
	contains "$(nnnkit dump --json m8.nnn)" '"prim": "i8_array"'
	roundtrip m8.nnn
	# every int8 survives JSON, the ends of the range included
	nnnkit convert edges.json edges.nnn
	nnnkit convert edges.nnn edges2.json
	nnnkit convert edges2.json edges2.nnn
	cmp edges.nnn edges2.nnn || die "edges.nnn: JSON changed the int8 values"
	contains "$(cat edges2.json)" '-128, 127, 0, -1, 1, 3, 3,'
	"$PY" -c '
import sys
sys.exit(0 if bytes([0x80, 0x7f, 0x00, 0xff, 0x01, 0x03]) in open("edges.nnn", "rb").read() else 1)' ||
		die "edges.nnn does not hold the int8 bytes written"
	# an int8 out of range is refused, not wrapped or clamped
	for v in 128 -129; do
		sed "s/\[-128, 127, 0,/[-128, $v, 0,/" edges.json > big.json
		if out=$(nnnkit convert big.json big.nnn 2>&1); then die "convert took $v as an int8"; fi
		echo "$out"
		contains "$out" "layers[0].weights.data"
	done
	# scales that are not [neurons] are refused at their path
	if out=$(nnnkit convert badscales.json badscales.nnn 2>&1); then die "convert took scales [39] for 40 neurons"; fi
	echo "$out"
	contains "$out" "badscales.json:1:"
	contains "$out" "layers[0].scales.dims[0]: tensor shape does not fit the layer: found 39, expected neurons = 40"
	if out=$(nnnkit validate badscales.nnn 2>&1); then die "validate took scales [39] for 40 neurons"; fi
	echo "$out"
	contains "$out" "layers[0].scales.dims[0]"
	# Python sees the weights as a read-only int8 view of the file, shaped by dims
	NNN_BUILD=$root/build PYTHONPATH=$root/python "$PY" -c '
import nnnkit, numpy as np, sys
d = nnnkit.load("m8.nnn").layers[0].weights.data
print("python:", d.dtype, d.shape, "writeable" if d.flags.writeable else "read-only")
sys.exit(0 if d.dtype == np.int8 and d.shape == (24, 40) and not d.flags.writeable else 1)'
	# the vector paths and the plain one, one row and five (a block of rows
	# and a rest), 40 neurons (vectors and a tail); two threads on the wide one
	"$PY" -c 'import numpy as np; np.save("x1.npy", np.load("x.npy")[:1])'
	for isa in "" avx2 generic; do
		NNN_BUILTIN_ISA=$isa agrees m8.nnn x.npy 'np.tanh(x @ L("w8") + L("b")) @ L("w2") + L("b2")' "${isa:-best}"
		NNN_BUILTIN_ISA=$isa agrees m8.nnn x1.npy 'np.tanh(x @ L("w8") + L("b")) @ L("w2") + L("b2")' "${isa:-best}"
	done
	nnnkit convert wide.json wide.nnn
	agrees wide.nnn xw.npy 'x @ L("ww8") + L("bw")' "two threads" --threads 2
	cd - > /dev/null
	corpus_mentions valid dense_i8
	corpus_mentions invalid dense_i8 data
}

# The int8 weights through .npy ('|i1') both ways, byte for byte: convert
# --tensors, export and build, edit --get/--set (a float32 file refused at
# the field's path); Python builds the same file from an int8 array.
check_npy() {
	local out root=$PWD
	cd "$DRILL_OUT"
	nnnkit convert m8.nnn --tensors t8 m8t.json
	contains "$(cat m8t.json)" '"dtype": "int8"'
	nnnkit convert m8t.json m8t.nnn
	cmp m8.nnn m8t.nnn || die "m8.nnn -> JSON with .npy tensors -> .nnn changed the bytes"
	rm -rf e8
	nnnkit export m8.nnn e8
	nnnkit build e8/model.json m8e.nnn
	cmp m8.nnn m8e.nnn || die "export -> build changed the bytes"
	"$PY" -c '
import numpy as np, sys
w = np.load("t8/layers.0.weights.npy")
print("npy:", w.dtype, w.shape)
np.save("w8neg.npy", (-w.astype(np.int16)).clip(-128, 127).astype(np.int8))
np.save("w8f.npy", w.astype(np.float32))
sys.exit(0 if w.dtype == np.int8 and w.shape == (24, 40) else 1)' || die "the int8 .npy file is not [24, 40] int8"
	nnnkit edit m8.nnn --get 'layers[0].weights' -o g8.npy
	cmp g8.npy t8/layers.0.weights.npy || die "edit --get wrote other bytes than convert --tensors"
	nnnkit edit m8.nnn --set 'layers[0].weights=w8neg.npy' -o m8neg.nnn
	nnnkit edit m8neg.nnn --get 'layers[0].weights' -o g8neg.npy
	cmp g8neg.npy w8neg.npy || die "edit --set then --get changed the int8 values"
	if out=$(nnnkit edit m8.nnn --set 'layers[0].weights=w8f.npy' -o bad.nnn 2>&1); then
		die "edit --set took '<f4' into int8 weights"
	fi
	echo "$out"
	contains "$out" "expected '|i1'"
	# Python: the model rebuilt from its loaded layers (int8 views) is the same file
	NNN_BUILD=$root/build PYTHONPATH=$root/python "$PY" -c '
import nnnkit
m = nnnkit.load("m8.nnn")
nnnkit.Model.from_layers(list(m.layers), description=m.description).save("m8py.nnn")'
	cmp m8.nnn m8py.nnn || die "Python changed the bytes rebuilding a loaded int8 model"
	cd - > /dev/null
}

# ONNX: the int8 weights are an INT8 initializer cast to float, then
# MatMul, Mul by the scales, Add (lib.sh: check_onnx, UINT8 weights
# refused); the edge values (-128, 127; scales of -0 and subnormals) are
# the file's bytes in the .onnx; safetensors keeps them too, the weights
# an I8 tensor.
check_onnx_i8() {
	local root=$PWD
	cd "$DRILL_OUT"
	nnnkit convert edges.json edges.nnn
	check_onnx "$root" m8 INT8 UINT8
	"$PY" -c '
import numpy as np, sys
w = bytes([0x80, 0x7f, 0x00, 0xff, 0x01, 0x03])
s = np.array([0x80000000, 0x00000001, 0x80000001, 0x007fffff, 0x00800000, 0x7f7fffff], "<u4").tobytes()
for f in ("edges.nnn", "edges.onnx"):
    b = open(f, "rb").read()
    if w not in b or s not in b:
        sys.exit(f + " does not hold the int8 weights and the float32 scales written")' ||
		die "the edge values are not the bytes written"
	nnnkit convert edges.nnn edges.safetensors
	contains "$(head -c 4096 edges.safetensors | tr -d '\0')" '"layers.0.weights": {"dtype": "I8", "shape": [2, 40]'
	nnnkit convert edges.safetensors edges_st.nnn
	cmp edges.nnn edges_st.nnn || die "edges.nnn: .nnn -> safetensors -> .nnn changed the bytes"
	cd - > /dev/null
}
