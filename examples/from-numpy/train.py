#!/usr/bin/env python3
"""Train a tiny classifier with plain NumPy, hand it to nnnkit, check nnnkit agrees.

    python3 train.py [OUT_DIR]        (NumPy only; nnnkit from $NNNKIT, else PATH)

Writes into OUT_DIR (default from-numpy-out): the weights as .npy files, spec.json,
the model built from them (model.nnn), test inputs x.npy, NumPy's outputs expected.npy
and nnnkit's y.npy. Exits 1 when the two differ by more than 1e-5. See docs/from-numpy.md.
"""
import json
import os
import subprocess
import sys

import numpy as np

out = sys.argv[1] if len(sys.argv) > 1 else "from-numpy-out"
nnnkit = os.environ.get("NNNKIT", "nnnkit")
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(7)

# Synthetic data: three blobs in the plane, one per class.
centers = np.array([[0, 2], [-2, -1], [2, -1]], dtype=np.float32)
def blobs(n):
    y = rng.integers(0, 3, n)
    return (centers[y] + rng.normal(scale=0.6, size=(n, 2))).astype(np.float32), y
x, y = blobs(600)

# 2 inputs -> 16 ReLU -> 3 softmax, trained by full-batch gradient descent on cross-entropy.
w1 = rng.normal(scale=0.5, size=(2, 16)).astype(np.float32)
b1 = np.zeros(16, np.float32)
w2 = rng.normal(scale=0.5, size=(16, 3)).astype(np.float32)
b2 = np.zeros(3, np.float32)

def forward(x):
    h = np.maximum(x @ w1 + b1, 0)
    z = h @ w2 + b2
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return h, e / e.sum(axis=1, keepdims=True)

onehot = np.eye(3, dtype=np.float32)[y]
for step in range(300):
    h, p = forward(x)
    g = (p - onehot) / len(x)               # d(loss)/dz
    gh = (g @ w2.T) * (h > 0)               # back through the ReLU
    w2 -= np.float32(0.5) * (h.T @ g)
    b2 -= np.float32(0.5) * g.sum(axis=0)
    w1 -= np.float32(0.5) * (x.T @ gh)
    b1 -= np.float32(0.5) * gh.sum(axis=0)
print("training accuracy: %.3f" % (forward(x)[1].argmax(axis=1) == y).mean())

# nnnkit's Dense computes x @ W + b with W of shape [inputs, neurons], as above:
# the arrays go out as they are, and the spec names them.
for name, a in (("w1", w1), ("b1", b1), ("w2", w2), ("b2", b2)):
    np.save(os.path.join(out, name + ".npy"), a)
spec = {
    "description": "2-16-3 blob classifier, trained with NumPy",
    "layers": [
        {"id": "dense", "activation": "relu", "weights": "w1.npy", "bias": "b1.npy"},
        {"id": "dense", "activation": "softmax", "weights": "w2.npy", "bias": "b2.npy"},
    ],
}
with open(os.path.join(out, "spec.json"), "w") as f:
    json.dump(spec, f, indent=2)

def path(name):
    return os.path.join(out, name)

# nnnkit assembles the model (checking every shape), then runs it on new points.
subprocess.run([nnnkit, "build", "--input-shape", "1,2", path("spec.json"), path("model.nnn")], check=True)
test, _ = blobs(20)
np.save(path("x.npy"), test)
np.save(path("expected.npy"), forward(test)[1])
subprocess.run([nnnkit, "run", path("model.nnn"), "--input", path("x.npy"), "--output", path("y.npy")], check=True)
diff = np.abs(np.load(path("y.npy")) - np.load(path("expected.npy"))).max()
print("largest difference between nnnkit and NumPy: %.2g" % diff)
sys.exit(0 if diff <= 1e-5 else 1)
