#!/usr/bin/python3
"""reference.py MODEL INPUT OUTPUT: the poolswish plugin's model, computed
with numpy, for `nnnkit conformance --reference` to compare its kernels with:

    nnnkit --plugin ./build/poolswish.so conformance --corpus DIR \\
        --reference '/usr/bin/python3 reference.py {json} {input} {output}'

MODEL is the model's JSON form (docs/json.md: what {json} gives), or a .nnn
file, which it converts with `$NNNKIT convert MODEL -` (NNNKIT defaults to
`nnnkit`; set it to `nnnkit --plugin ./build/poolswish.so` so that the
plugin's IDs decode). INPUT is a float32 .npy, batch first, channels last;
OUTPUT is where the result goes, float32 .npy.

Besides the plugin's MaxPool and Swish (schema.lua), the corpus chains them
with the core's Dense and Conv and activations, so those are here too, each
written from docs/format.md, not from nnnkit's kernels. Computed in float64.
"""
import json
import math
import os
import shlex
import subprocess
import sys

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view


def decline(why):
    """Not a model this reference computes (a type added to the format since,
    say): exit 77, which nnnkit conformance counts as declined, not failed."""
    print(f"reference.py: {why}", file=sys.stderr)
    sys.exit(77)


def number(v):
    """A float of the JSON form: a number, or "inf", "-inf", "nan", "nan:0x..."."""
    if isinstance(v, str):
        return math.nan if v.startswith("nan") else float(v)
    return float(v)


def tensor(t, folder):
    """A tensor field ({dims, requires_grad, data}) as an array."""
    data = t["data"]
    if isinstance(data, dict):  # a tensor written as a .npy beside the JSON
        return np.load(os.path.join(folder, data["npy"])).astype(np.float64).reshape(t["dims"])
    return np.array([number(v) for v in data], dtype=np.float64).reshape(t["dims"])


def dense(x, layer, folder):
    if layer["flatten"]:
        x = x.reshape(x.shape[0], -1)
    return x @ tensor(layer["weights"], folder)


def conv(x, layer, folder):
    """N-D cross-correlation, stride 1, explicit zero padding, channels last."""
    k = tensor(layer["kernels"], folder)  # [filters, k1..kn, channels]
    n = k.ndim - 2
    pads = layer["padding_dims"]
    x = np.pad(x, [(0, 0)] + [(pads[2 * j], pads[2 * j + 1]) for j in range(n)] + [(0, 0)])
    win = sliding_window_view(x, k.shape[1:-1], axis=tuple(range(1, n + 1)))  # [b, o.., c, k..]
    kc = np.moveaxis(k, -1, 1)  # [filters, c, k..]
    return np.tensordot(win, kc, axes=(list(range(n + 1, 2 * n + 2)), list(range(1, n + 2))))


def maxpool(x, layer, folder):
    """The plugin's MaxPool: window `pool`, step `stride`, no padding."""
    pool, stride = layer["pool"], layer["stride"]
    n = len(pool)
    win = sliding_window_view(x, pool, axis=tuple(range(1, n + 1)))  # [b, s-k+1.., c, k..]
    win = win[(slice(None),) + tuple(slice(None, None, s) for s in stride)]
    return win.max(axis=tuple(range(n + 2, 2 * n + 2)))


LAYERS = {"dense": dense, "conv": conv, "maxpool": maxpool}


def activate(x, act):
    name = act["id"]
    if name == "linear":
        return x
    if name == "sigmoid":
        return 1 / (1 + np.exp(-x))
    if name == "tanh":
        return np.tanh(x)
    if name == "relu":
        return np.maximum(x, 0)
    if name == "leaky_relu":
        return np.where(x > 0, x, number(act["tau"]) * x)
    if name == "softmax":
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)
    if name == "swish":
        return x / (1 + np.exp(-number(act["beta"]) * x))
    decline(f"activation {name!r} is not one this reference knows")


def load(path):
    if path.endswith(".json"):
        with open(path) as f:
            return json.load(f), os.path.dirname(path)
    cmd = shlex.split(os.environ.get("NNNKIT", "nnnkit")) + ["convert", path, "-"]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out), "."


def main(argv):
    if len(argv) != 4:
        raise SystemExit("usage: reference.py MODEL INPUT OUTPUT")
    model, folder = load(argv[1])
    x = np.load(argv[2]).astype(np.float64)
    with np.errstate(over="ignore"):  # exp overflow gives the right limit
        for i, layer in enumerate(model["layers"]):
            if layer["id"] not in LAYERS:
                decline(f"layers[{i}]: layer type {layer['id']!r} is not one this reference knows")
            x = LAYERS[layer["id"]](x, layer, folder)
            bias = tensor(layer["bias"], folder)
            if bias.size:
                x = x + bias
            x = activate(x, layer["activation"])
    np.save(argv[3], x.astype(np.float32))


if __name__ == "__main__":
    main(sys.argv)
