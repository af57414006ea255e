#!/usr/bin/python3
"""onnx_refusals.py OUTDIR: ONNX graphs nnnkit's import refuses or must hint on, as PyTorch
writes them, for the refusal tests (tests/integration/test_onnx_refusals.c).

  gelu.onnx        Linear(4, 3), GELU (erf form: Div, Erf, Add, Mul, Mul), Linear(3, 2)
  gelu_tanh.onnx   the same with GELU(approximate='tanh') (Mul, Pow, .., Tanh, Add, Mul, Mul)
  two_ops.onnx     Conv2d, MaxPool2d, ReLU, Conv2d, then + 1: two unsupported nodes (MaxPool, and
                   an Add that is no Dense's bias) with supported ones between them
  double.onnx      a float64 net (no model.float()): input and weights DOUBLE
  conv_fixed.onnx  Conv2d(3, 4, 3), ReLU, Flatten, Linear on a fixed [1, 3, 8, 6] input
                   (no dynamic axes: the graph fixes the spatial size)
  conv_fixed.nchw.npy  a [1, 3, 8, 6] float32 input as PyTorch takes it (channels-first)
  conv_fixed.nhwc.npy  the same transposed to [1, 8, 6, 3], as the imported model takes it
  conv_fixed.labels.npy  a class index for it (for eval)

Seeds are fixed. Exported at opset 13 by Debian's python3-torch (run with /usr/bin/python3).
Exit 0, or 1 with the reason on stderr.
"""
import os
import sys
import warnings

try:
    import numpy as np
    import torch
    from torch import nn
except ImportError as e:
    print(f"onnx_refusals: cannot import {e.name} ({e}): apt-get install python3-torch python3-numpy",
          file=sys.stderr)
    sys.exit(1)

OPSET = 13


class PlusOne(nn.Module):
    def forward(self, x):
        return x + 1.0


def export(net, x, path, dynamic=True):
    axes = {"x": {0: "N"}, "y": {0: "N"}} if dynamic else None
    torch.onnx.export(net.eval(), x, path, opset_version=OPSET, input_names=["x"], output_names=["y"],
                      dynamic_axes=axes, do_constant_folding=True)


def main(argv):
    if len(argv) != 2:
        print("usage: onnx_refusals.py OUTDIR", file=sys.stderr)
        return 2
    out = argv[1]
    os.makedirs(out, exist_ok=True)
    warnings.filterwarnings("ignore")
    torch.set_num_threads(1)
    torch.manual_seed(33)
    export(nn.Sequential(nn.Linear(4, 3), nn.GELU(), nn.Linear(3, 2)), torch.zeros(2, 4),
           os.path.join(out, "gelu.onnx"))
    export(nn.Sequential(nn.Linear(4, 3), nn.GELU(approximate="tanh"), nn.Linear(3, 2)), torch.zeros(2, 4),
           os.path.join(out, "gelu_tanh.onnx"))
    export(nn.Sequential(nn.Conv2d(2, 4, 3), nn.MaxPool2d(2), nn.ReLU(), nn.Conv2d(4, 4, 1), PlusOne()),
           torch.zeros(1, 2, 10, 10), os.path.join(out, "two_ops.onnx"))
    export(nn.Sequential(nn.Linear(4, 3), nn.ReLU()).double(), torch.zeros(2, 4, dtype=torch.float64),
           os.path.join(out, "double.onnx"))
    net = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 6 * 4, 2))
    x = np.random.default_rng(33).standard_normal((1, 3, 8, 6)).astype(np.float32)
    export(net, torch.from_numpy(x), os.path.join(out, "conv_fixed.onnx"), dynamic=False)
    np.save(os.path.join(out, "conv_fixed.nchw.npy"), x)
    np.save(os.path.join(out, "conv_fixed.nhwc.npy"), np.ascontiguousarray(x.transpose(0, 2, 3, 1)))
    np.save(os.path.join(out, "conv_fixed.labels.npy"), np.array([1], np.int64))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
