#!/usr/bin/python3
"""narrow_models.py: the models of nnnbench's "narrow" section: the example
classifier's Dense layers (6400 -> 128 relu -> 10 softmax: 3.3 MB of float32
weights, which a batch-1 call streams from cache every time) as a network of
their own, three times over:

  dense-f32.nnn  as the example has them (Dense, float32 weights)
  dense-f16.nnn  DenseF16: the weights rounded to float16
  dense-i8.nnn   DenseI8: int8 weights and a float32 scale per neuron
                 (scale = largest |w| of the neuron / 127, w8 = round(w / scale))

  narrow_models.py NNNKIT EXAMPLE.nnn OUTDIR

NNNKIT is an nnnkit whose schema has DenseF16 and DenseI8: the tree that
bench/grow.sh grows with the drills tests/drills/dense-f16 and dense-i8 (the
real schema has neither). The models are written as JSON and converted by
it. Prints one line: "features=F weights=W neurons=N" (the first layer's
inputs, the weights and neurons of all the layers); on failure "err WHY".
Use /usr/bin/python3 (numpy).
"""
import json
import os
import subprocess
import sys


def variant(m, dense, kind):
    import numpy as np
    out = dict(m)
    out["layers"] = []
    count = 0
    for L in dense:
        L = dict(L, weights=dict(L["weights"]))
        w = np.array(L["weights"]["data"], np.float32).reshape(L["weights"]["dims"])
        if kind == "f16":
            L["id"] = "dense_f16"
            L["weights"]["data"] = [float(v) for v in w.astype(np.float16).ravel()]
        elif kind == "i8":
            s = (np.abs(w).max(axis=0) / 127).astype(np.float32)
            s[s == 0] = 1
            L["id"] = "dense_i8"
            L["weights"]["data"] = [int(v) for v in np.clip(np.rint(w / s), -128, 127).astype(np.int8).ravel()]
            L["scales"] = {"dims": [w.shape[1]], "requires_grad": False, "data": [float(v) for v in s]}
            count += w.shape[1]
        count += w.size + len(L["bias"]["data"])
        out["layers"].append(L)
    out["param_count"] = count
    return out


def main(nnnkit, example, outdir):
    src = os.path.join(outdir, "narrow-example.json")
    subprocess.run([nnnkit, "convert", example, src], check=True, capture_output=True)
    m = json.load(open(src))
    dense = [L for L in m["layers"] if L["id"] == "dense"]
    if not dense:
        raise ValueError(example + " has no Dense layer")
    for kind in ("f32", "f16", "i8"):
        j = os.path.join(outdir, "dense-%s.json" % kind)
        json.dump(variant(m, dense, kind), open(j, "w"))
        r = subprocess.run([nnnkit, "convert", j, os.path.join(outdir, "dense-%s.nnn" % kind)],
                           capture_output=True, text=True)
        if r.returncode:
            raise ValueError("nnnkit convert %s: %s" % (j, r.stderr.strip()))
        os.remove(j)
    os.remove(src)
    print("features=%d weights=%d neurons=%d" % (dense[0]["weights"]["dims"][0],
          sum(len(L["weights"]["data"]) for L in dense), sum(L["neurons"] for L in dense)))


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit("usage: narrow_models.py NNNKIT EXAMPLE.nnn OUTDIR")
    try:
        main(*sys.argv[1:])
    except (OSError, ValueError, subprocess.CalledProcessError) as e:
        print("err", str(e).replace("\n", " "))
        sys.exit(1)
