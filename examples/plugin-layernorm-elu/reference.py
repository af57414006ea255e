#!/usr/bin/python3
"""The whole model in NumPy: what nnnkit with the lnelu plugin must compute.

    reference.py [--plugin FILE]... MODEL INPUT.npy OUTPUT.npy

Reads MODEL through `nnnkit export` (every tensor as .npy, the fields as
JSON; $NNNKIT names the nnnkit to use, default `nnnkit` on PATH; the plugin
comes from --plugin or NNN_PLUGIN_PATH), runs INPUT.npy through its layers
and writes OUTPUT.npy (float32). It knows the core schema's Dense and Conv
layers and activations, and this plugin's LayerNorm, ELU and GELU, each written
from docs/format.md and schema.lua, not from nnnkit's kernels; anything else
it declines (exit 77, which `nnnkit conformance --reference` counts as
declined, not failed). The form fits the conformance kit's
--reference 'CMD {model} {input} {output}'.
"""
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view


def decline(why):
    """Not a model this reference computes: exit 77, which nnnkit conformance
    --reference counts as declined, not failed."""
    print("reference.py: " + why, file=sys.stderr)
    sys.exit(77)


def load(model, plugins):
    """The model's layers as exported, with every tensor's data as an array."""
    tmp = tempfile.mkdtemp(prefix="lnelu-ref.")
    out = os.path.join(tmp, "export")
    cmd = [os.environ.get("NNNKIT", "nnnkit")]
    for p in plugins:
        cmd += ["--plugin", p]
    subprocess.run(cmd + ["export", model, out], check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(out, "model.json")) as f:
        m = json.load(f)

    def arrays(v):
        if isinstance(v, dict) and "npy" in v:
            return np.load(os.path.join(out, v["npy"])).astype(np.float64)
        if isinstance(v, dict):
            return {k: arrays(x) for k, x in v.items()}
        if isinstance(v, list):
            return [arrays(x) for x in v]
        return v

    layers = arrays(m["layers"])
    shutil.rmtree(tmp)
    return layers


def activation(a, x):
    kind = a["id"]
    if kind == "linear":
        return x
    if kind == "sigmoid":
        return 1 / (1 + np.exp(-x))
    if kind == "tanh":
        return np.tanh(x)
    if kind == "relu":
        return np.maximum(x, 0)
    if kind == "leaky_relu":
        return np.where(x > 0, x, a["tau"] * x)
    if kind == "softmax":
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)
    if kind == "elu":
        return np.where(x > 0, x, a["alpha"] * np.expm1(x))
    if kind == "gelu":
        return 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))
    decline("activation %r is not one it knows" % kind)


def layer(lay, x):
    kind = lay["id"]
    if kind == "dense":
        if lay["flatten"]:
            x = x.reshape(x.shape[0], -1)
        w = lay["weights"]["data"].reshape(lay["weights"]["dims"])
        y = x @ w
    elif kind == "conv":
        # N-D cross-correlation, stride 1, zero padding [before1, after1, ...], channels last.
        k = lay["kernels"]["data"].reshape(lay["kernels"]["dims"])  # [filters, k1..kn, channels]
        n = k.ndim - 2
        pads = lay["padding_dims"]
        x = np.pad(x, [(0, 0)] + [(pads[2 * j], pads[2 * j + 1]) for j in range(n)] + [(0, 0)])
        win = sliding_window_view(x, k.shape[1:-1], axis=tuple(range(1, n + 1)))  # [b, o.., c, k..]
        y = np.tensordot(win, np.moveaxis(k, -1, 1), axes=(list(range(n + 1, 2 * n + 2)), list(range(1, n + 2))))
    elif kind == "layer_norm":
        mean = x.mean(axis=-1, keepdims=True)
        var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
        y = (x - mean) / np.sqrt(var + lay["epsilon"]) * lay["gamma"]["data"] + lay["beta"]["data"]
    else:
        decline("layer type %r is not one it knows" % kind)
    if lay["bias"]["data"].size:
        y = y + lay["bias"]["data"]
    return activation(lay["activation"], y)


def main(argv):
    plugins = []
    while len(argv) >= 2 and argv[0] == "--plugin":
        plugins.append(argv[1])
        argv = argv[2:]
    if len(argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    model, inp, outp = argv
    x = np.load(inp).astype(np.float64)
    for lay in load(model, plugins):
        x = layer(lay, x)
    np.save(outp, x.astype(np.float32))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
