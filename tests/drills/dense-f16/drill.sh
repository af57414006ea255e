# A new element type declared in the schema alone (float16: f16 and
# f16_array), a tensor record of it and DenseF16, a Dense layer with float16
# weights, at the next free layer ID, with its kernel in the builtin
# plugin. Proves: the codec reads, validates and writes an element type no
# C names (one make -j builds it in); JSON keeps every float16 bit (edge
# values, NaN payloads); the file's weights take half the bytes of float32
# ones; dump and the parameter count see them; run agrees with NumPy on the
# dequantized weights on every instruction set; the conformance corpus
# cases come from the schema.
DRILL_KIND=compatible
DRILL_LAYOUT=moves # a new record in a union of the structs plugins see

grow() {
	drill_edit
	drill_add dense_f16.c plugins/builtin/dense_f16.c
	insert_after plugins/builtin/builtin.h '/* ---- act.c' \
		'extern const nnn_layer_type_t bi_dense_f16_type; /* dense_f16.c */'
	sed -i 's/^\(static const nnn_layer_type_t \*const layer_types\[\] = {.*\) };$/\1, \&bi_dense_f16_type };/' \
		plugins/builtin/entry.c
	grep -q '&bi_dense_f16_type }' plugins/builtin/entry.c || die "entry.c has no layer_types table to add the kernel to"
}

# A Dense model of float32 weights (m32.nnn), and the same network with the
# weights rounded to float16 as a DenseF16 in JSON (f16.json): 24 inputs,
# 40 neurons, then a plain Dense to 3.
check_built() {
	cd "$DRILL_OUT"
	"$PY" -c '
import numpy as np
r = np.random.default_rng(7)
np.save("w.npy", r.standard_normal((24, 40)).astype(np.float32))
np.save("b.npy", r.standard_normal(40).astype(np.float32))
np.save("w2.npy", r.standard_normal((40, 3)).astype(np.float32))
np.save("b2.npy", r.standard_normal(3).astype(np.float32))
np.save("x.npy", r.standard_normal((5, 24)).astype(np.float32))'
	cat > spec.json <<-JSON
	{"description": "dense f16 drill", "layers": [
	  {"id": "dense", "activation": "tanh", "weights": "w.npy", "bias": "b.npy", "flatten": false},
	  {"id": "dense", "activation": "linear", "weights": "w2.npy", "bias": "b2.npy", "flatten": false}]}
	JSON
	nnnkit build --input-shape 1,24 spec.json m32.nnn
	nnnkit convert m32.nnn m32.json
	"$PY" -c '
import json, numpy as np
m = json.load(open("m32.json"))
L = m["layers"][0]
w = np.float16(np.load("w.npy"))
L["id"] = "dense_f16"
# every float16 value is a float: written as its shortest float text
L["weights"]["data"] = [float(v) for v in w.ravel()]
json.dump(m, open("f16.json", "w"))
np.save("w16.npy", w.astype(np.float64))
# edge values: -0, subnormals, the largest, infinities, NaN payloads
e = dict(m)
e["layers"] = [dict(L)]
e["param_count"] = 2 * 40 + 40
e["layers"][0]["weights"] = {"dims": [2, 40], "requires_grad": False, "data":
    [-0.0, 5.960464477539063e-08, 6.097555160522461e-05, 65504.0, -65504.0, "inf", "-inf", "nan",
     "nan:0x7e01", "nan:0xfc01", "nan:0x7dff"] + [0.5] * 69}
json.dump(e, open("edges.json", "w"))'
	nnnkit convert f16.json m16.nnn
	cd - > /dev/null
}

check() {
	check_npy
	local out s16 s32 root=$PWD
	cd "$DRILL_OUT"
	out=$(nnnkit validate --input-shape 5,24 m16.nnn)
	echo "$out"
	contains "$out" "valid, output shape [5, 3]"
	out=$(nnnkit info m16.nnn)
	contains "$out" "DenseF16"
	# param_count counts the float16 weights like any others: 24*40 + 40 + 40*3 + 3
	contains "$(nnnkit convert m16.nnn -)" '"param_count": 1123'
	# the float16 weights take 2 bytes each: the file is the float32 one less 24*40*2 bytes
	s16=$(stat -c %s m16.nnn)
	s32=$(stat -c %s m32.nnn)
	echo "sizes: float16 $s16 bytes, float32 $s32 bytes"
	[ $((s32 - s16)) -eq $((24 * 40 * 2)) ] || die "m16.nnn is $s16 bytes, expected $((s32 - 24 * 40 * 2))"
	# stats reads the float16 weights as numbers: 2 bytes each (160 + 1920 + 12 + 480)
	out=$(nnnkit stats m16.nnn)
	echo "$out"
	contains "$out" "layers[0].weights        [24,40]            960       1920"
	contains "$out" "4 tensors, 1123 values, 2572 bytes"
	out=$(nnnkit dump m16.nnn)
	contains "$out" "$LAYER_ID (dense_f16)"
	contains "$out" "f16_array"
	contains "$(nnnkit dump --json m16.nnn)" '"prim": "f16_array"'
	roundtrip m16.nnn
	# every float16 bit survives JSON: edge values and NaN payloads, each
	# number with the fewest digits that give its bits back
	nnnkit convert edges.json edges.nnn
	nnnkit convert edges.nnn edges2.json
	nnnkit convert edges2.json edges2.nnn
	cmp edges.nnn edges2.nnn || die "edges.nnn: JSON changed the float16 bits"
	out=$(cat edges2.json)
	contains "$out" '-0.0, 6e-08, 6.1e-05, 6.55e+04, -6.55e+04, "inf", "-inf", "nan", "nan:0x7e01"'
	contains "$out" '"nan:0xfc01", "nan:0x7dff"'
	"$PY" -c '
import numpy as np, sys
b = open("edges.nnn", "rb").read()
want = np.array([0x8000, 0x0001, 0x03ff, 0x7bff, 0xfbff, 0x7c00, 0xfc00, 0x7e00, 0x7e01, 0xfc01, 0x7dff], np.uint16)
sys.exit(0 if want.tobytes() in b else 1)' || die "edges.nnn does not hold the float16 bits written"
	# a float16 out of range is refused, not rounded to infinity
	sed 's/65504.0, -65504.0/65520.0, -65504.0/' edges.json > big.json
	if out=$(nnnkit convert big.json big.nnn 2>&1); then die "convert took 65520 as a float16"; fi
	contains "$out" "outside float16's range"
	# Python sees the weights as a read-only float16 view of the file, shaped by dims
	NNN_BUILD=$root/build PYTHONPATH=$root/python "$PY" -c '
import nnnkit, numpy as np, sys
d = nnnkit.load("m16.nnn").layers[0].weights.data
print("python:", d.dtype, d.shape, "writeable" if d.flags.writeable else "read-only")
sys.exit(0 if d.dtype == np.float16 and d.shape == (24, 40) and not d.flags.writeable
         and np.array_equal(d.astype(np.float64), np.load("w16.npy")) else 1)'
	# the vector paths and the plain one (narrow.c), one row and five
	"$PY" -c 'import numpy as np; np.save("x1.npy", np.load("x.npy")[:1])'
	for isa in "" avx2 generic; do
		for x in x x1; do
			NNN_BUILTIN_ISA=$isa nnnkit run m16.nnn --input $x.npy --output y.npy
			"$PY" -c '
import numpy as np, sys
x, w, b, w2, b2, y = (np.load(f + ".npy").astype(np.float64) for f in (sys.argv[1], "w16", "b", "w2", "b2", "y"))
want = np.tanh(x @ w + b) @ w2 + b2
print(sys.argv[2], "output", y.shape, "largest difference from NumPy:", np.abs(y - want).max())
sys.exit(0 if y.shape == want.shape and np.abs(y - want).max() < 1e-4 else 1)' $x "${isa:-best}"
		done
	done
	# ONNX: the float16 weights are a FLOAT16 initializer holding the file's
	# bytes (edge values and NaN payloads kept); BFLOAT16 ones are refused
	check_onnx "$root" m16 FLOAT16 BFLOAT16
	"$PY" -c '
import numpy as np, sys
b = open("edges.onnx", "rb").read()
want = np.array([0x8000, 0x0001, 0x03ff, 0x7bff, 0xfbff, 0x7c00, 0xfc00, 0x7e00, 0x7e01, 0xfc01, 0x7dff], np.uint16)
sys.exit(0 if want.tobytes() in b else 1)' || die "edges.onnx does not hold the float16 bits as raw_data"
	# safetensors: the float16 weights are an F16 tensor [24, 40] of the file's bytes
	nnnkit convert edges.nnn edges.safetensors
	contains "$(head -c 4096 edges.safetensors | tr -d '\0')" '"layers.0.weights": {"dtype": "F16", "shape": [2, 40]'
	nnnkit convert edges.safetensors edges_st.nnn
	cmp edges.nnn edges_st.nnn || die "edges.nnn: .nnn -> safetensors -> .nnn changed the bytes"
	cd - > /dev/null
	corpus_mentions valid dense_f16
	corpus_mentions invalid dense_f16 data
}

# The float16 weights through .npy ('<f2') both ways, byte for byte:
# convert --tensors, export and build, edit --get/--set, a wrong dtype
# refused with the field's path; info and diff see the element type;
# Python builds the same file from a float16 array and refuses a float32 one.
check_npy() {
	local out root=$PWD
	cd "$DRILL_OUT"
	nnnkit convert m16.nnn --tensors t16 m16t.json
	contains "$(cat m16t.json)" '"dtype": "float16"'
	nnnkit convert m16t.json m16t.nnn
	cmp m16.nnn m16t.nnn || die "m16.nnn -> JSON with .npy tensors -> .nnn changed the bytes"
	rm -rf e16
	nnnkit export m16.nnn e16
	contains "$(cat e16/index.json)" '"dtype": "float16"'
	nnnkit build e16/model.json m16e.nnn
	cmp m16.nnn m16e.nnn || die "export -> build changed the bytes"
	"$PY" -c '
import json, numpy as np, sys
w = np.load("t16/layers.0.weights.npy")
e = np.load("e16/" + next(t["file"] for t in json.load(open("e16/index.json"))["tensors"] if t["path"] == "layers[0].weights"))
print("npy:", w.dtype, w.shape)
ok = w.dtype == np.float16 and w.shape == (24, 40) and e.dtype == np.float16
ok = ok and np.array_equal(w.astype(np.float64), np.load("w16.npy")) and w.tobytes() == e.tobytes()
np.save("w16h.npy", w)
np.save("w16x2.npy", (w * np.float16(2)).astype(np.float16))
np.save("w32.npy", w.astype(np.float32))
sys.exit(0 if ok else 1)' || die "the float16 .npy files are not the weights"
	# a spec naming a float16 file builds the same model; a float32 one is refused
	sed 's/"id": "dense", "activation": "tanh", "weights": "w.npy"/"id": "dense_f16", "activation": "tanh", "weights": "w16h.npy"/' \
		spec.json > spec16.json
	nnnkit build --input-shape 1,24 spec16.json m16b.nnn
	cmp m16.nnn m16b.nnn || die "build from a float16 .npy gave other bytes"
	sed 's/w16h.npy/w32.npy/' spec16.json > spec16bad.json
	if out=$(nnnkit build --input-shape 1,24 spec16bad.json bad.nnn 2>&1); then die "build took a float32 .npy into float16 weights"; fi
	echo "$out"
	contains "$out" "layers[0].weights.data"
	contains "$out" "holds '<f4' (float32), the field holds float16: expected '<f2'"
	# edit: --get writes '<f2', --set takes one back (and refuses '<f4')
	nnnkit edit m16.nnn --get layers[0].weights -o g16.npy
	cmp g16.npy t16/layers.0.weights.npy || die "edit --get wrote other bytes than convert --tensors"
	nnnkit edit m16.nnn --set layers[0].weights=w16x2.npy -o m16x2.nnn
	nnnkit edit m16x2.nnn --get layers[0].weights -o g16x2.npy
	cmp g16x2.npy w16x2.npy || die "edit --set then --get changed the float16 bits"
	if out=$(nnnkit edit m16.nnn --set layers[0].weights=w32.npy -o bad.nnn 2>&1); then die "edit --set took '<f4' into float16"; fi
	contains "$out" "expected '<f2'"
	# info and diff see the float16 tensor
	contains "$(nnnkit info m16.nnn)" "weights [24,40] float16"
	contains "$(nnnkit info --json m16.nnn)" '"name": "weights", "shape": [24, 40], "dtype": "float16"'
	nnnkit diff m16.nnn m16t.nnn
	contains "$(nnnkit diff --json m16.nnn m16x2.nnn || true)" '"bits_equal": false, "bits_differ": '
	out=$(nnnkit diff --json m32.nnn m16.nnn || true)
	contains "$out" '"path": "layers[0].weights", "shape": [24, 40], "count": 960'
	contains "$out" '"bits_equal": null'
	# Python: the same model from a float16 array; a float32 array refused
	NNN_BUILD=$root/build PYTHONPATH=$root/python "$PY" -c '
import nnnkit, numpy as np, sys
w, b, w2, b2 = np.load("w16h.npy"), np.load("b.npy"), np.load("w2.npy"), np.load("b2.npy")
L = [{"id": "dense_f16", "activation": "tanh", "weights": w, "bias": b, "flatten": False},
     {"id": "dense", "activation": "linear", "weights": w2, "bias": b2, "flatten": False}]
nnnkit.Model.from_layers(L, description="dense f16 drill").save("m16py.nnn")
L[0]["weights"] = w.astype(np.float32)
try:
    nnnkit.Model.from_layers(L)
    sys.exit("python took a float32 array into float16 weights")
except TypeError as e:
    print("python:", e)
    assert str(e).startswith("weights: the field holds float16, the array is float32"), e
m = nnnkit.load("m16.nnn")  # its layers (float16 views) back into a model
nnnkit.Model.from_layers(list(m.layers), description=m.description).save("m16rt.nnn")'
	cmp m16.nnn m16py.nnn || die "Python built other bytes from the float16 array"
	cmp m16.nnn m16rt.nnn || die "Python changed the bytes rebuilding a loaded float16 model"
	cd - > /dev/null
}
