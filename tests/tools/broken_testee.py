#!/usr/bin/env python3
"""A deliberately broken conformance testee, for the kit's own tests: the
kit must catch each bug by name (docs/conformance.md).

    python3 tests/tools/broken_testee.py --bug softmax|trailing|same-padding|none [--plugin FILE]...

decode, validate and encode are the nnnkit package's (nnnkit.testee);
run is this file's own NumPy forward pass in float32, written from the
format's facts (docs/format.md), reading the layers through the package.
One bug is injected:

  softmax       Softmax as exp(x) / sum(exp(x)), without subtracting the
                maximum first: float32 overflows (inf / inf = NaN) once a
                logit passes about 88.7.
  trailing      bytes after the model (E_TRAILING) are ignored: decode
                accepts the file, validate reports its other problems only
                (and accepts it when there are none).
  same-padding  a Conv with Same padding pads each axis with its (before,
                after) swapped: wrong wherever they differ (an even kernel).
  none          no bug: every check of the kit passes.

A layer kind or activation the forward pass does not know (a plugin's) is
answered ok=false, "unsupported": true in run.
"""

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

import nnnkit  # noqa: E402  (this tree's package, found above)
from nnnkit import testee  # noqa: E402

BUGS = ("softmax", "trailing", "same-padding", "none")
_F32 = np.float32


def dense(layer, x):
    """y = x @ W + b, W [inputs, neurons]; flatten reshapes x to [batch, -1] first."""
    if layer.flatten:
        x = x.reshape(x.shape[0], -1)
    return x @ np.asarray(layer.weights.data, _F32) + np.asarray(layer.bias.data, _F32)


def conv(layer, x, swap):
    """N-D cross-correlation, stride 1, batch first and channels last;
    kernels [filters, k1..kn, channels]; zero padding by padding_dims
    [before1, after1, ...] (each pair swapped when `swap`)."""
    k = np.asarray(layer.kernels.data, _F32)
    n = k.ndim - 2
    pd = layer.padding_dims
    pairs = [(pd[2 * i + 1], pd[2 * i]) if swap else (pd[2 * i], pd[2 * i + 1]) for i in range(n)]
    xp = np.pad(x, [(0, 0)] + pairs + [(0, 0)])
    # windows: [batch, o1..on, channels, k1..kn]; kernels as [channels, k1..kn, filters].
    windows = np.lib.stride_tricks.sliding_window_view(xp, k.shape[1:-1], axis=tuple(range(1, n + 1)))
    kt = np.moveaxis(k, (n + 1, 0), (0, n + 1))
    y = np.tensordot(windows, kt, axes=(list(range(n + 1, 2 * n + 2)), list(range(n + 1))))
    return y + np.asarray(layer.bias.data, _F32)


def activate(act, x, naive_softmax):
    kind = act.id
    if kind == "linear":
        return x
    if kind == "sigmoid":
        return 1 / (1 + np.exp(-x))
    if kind == "tanh":
        return np.tanh(x)
    if kind == "relu":
        return np.maximum(x, 0)
    if kind == "leaky_relu":
        return np.where(x > 0, x, _F32(act.tau) * x)
    e = np.exp(x if naive_softmax else x - x.max(axis=-1, keepdims=True))  # softmax
    return e / e.sum(axis=-1, keepdims=True)


LAYERS = ("dense", "conv")
ACTIVATIONS = ("linear", "sigmoid", "tanh", "relu", "leaky_relu", "softmax")


def unsupported(model):
    """Why this forward pass cannot compute the model (a layer kind or
    activation a growth or a plugin added), or None."""
    for i, layer in enumerate(model.layers):
        if layer.id not in LAYERS:
            return f"layers[{i}]: layer kind {layer.id!r}"
        if layer.activation.id not in ACTIVATIONS:
            return f"layers[{i}]: activation {layer.activation.id!r}"
    return None


def forward(model, x, bug):
    """The model's output for x (float32), layer by layer (unsupported(model) is None)."""
    with np.errstate(all="ignore"):  # overflow is a value here (inf, NaN), as in C
        for layer in model.layers:
            if layer.id == "dense":
                x = dense(layer, x)
            else:
                x = conv(layer, x, bug == "same-padding" and layer.padding_type == "same")
            x = activate(layer.activation, x, bug == "softmax")
            x = x.astype(_F32, copy=False)
    return x


class BrokenTestee(testee.Testee):
    name = "broken-testee"

    def __init__(self, bug, plugins=()):
        super().__init__(plugins)
        self.bug = bug
        self.version = f"{nnnkit.__version__}+bug-{bug}"

    def decode(self, req):
        try:
            return super().decode(req)
        except nnnkit.FormatError as e:
            # A strict decode stops at its first problem, and trailing bytes
            # come last: E_TRAILING means the model itself was read whole.
            if self.bug == "trailing" and e.code == "E_TRAILING":
                return {"ok": True}
            raise

    def validate(self, req):
        a = super().validate(req)
        if self.bug != "trailing" or a["ok"]:
            return a
        rest = [p for p in a["problems"] if p["code"] != "E_TRAILING"]
        return {"ok": False, **rest[0], "problems": rest} if rest else {"ok": True}

    def run(self, req):
        x = testee.read_input(req["input"])
        with nnnkit.load(req["file"], plugins=self.plugins) as m:
            why = unsupported(m)
            if why:
                return {"ok": False, "unsupported": True, "message": f"{why}: not supported by this testee"}
            y = forward(m, x, self.bug)
        testee.write_atomic(req["output"], lambda f: np.save(f, y))
        return {"ok": True}


def main(argv=None):
    ap = argparse.ArgumentParser(description="A conformance testee with one deliberate bug (docs/conformance.md).")
    ap.add_argument("--bug", required=True, choices=BUGS, help="the bug to inject (none: a correct testee)")
    ap.add_argument("--plugin", action="append", default=[], metavar="FILE", help="a plugin .so (repeatable)")
    args = ap.parse_args(argv)
    return testee.serve_stdio(BrokenTestee(args.bug, args.plugin))


if __name__ == "__main__":
    sys.exit(main())
