#!/usr/bin/python3
"""torch_export.py OUTDIR [NET...]: ONNX graphs as PyTorch writes them, with PyTorch's
own outputs, for the ONNX import tests (tests/integration/test_onnx_ort.c, through
tests/lib/onnxtools.c).

Builds small nn.Sequential nets with fixed seeds, one per import case of the
vocabulary (Conv1d/2d/3d with padding 0, 'same' with odd and with even
kernels, explicit symmetric padding; Linear, Flatten, ReLU, Sigmoid, Tanh,
LeakyReLU(0.2), Softmax(dim=-1), Dropout (eval), Identity; an MNIST-like
CNN), and exports each with torch.onnx.export at opsets 11, 13 and 17:

  nchw  the net as PyTorch users write it: a channels-first input [N, C, d..]
        (an importer must permute the weights to give a channels-last model);
  nhwc  the net inside a wrapper that takes the channels-last input
        [N, d.., C] and permutes it, and permutes a spatial output back: the
        graph has Transposes at its boundaries;
  flat  nets without spatial dims (Linear and activations): one form.

For each case it writes OUTDIR/CASE.onnx, CASE.in.npy (a channels-last input,
float32, batch 3), CASE.out.npy (PyTorch's output for that input,
channels-last where it has spatial dims) and OUTDIR/manifest.json listing the
cases, one per line. NET...: only the nets whose names start with one of
these (conv2d, linear_relu, mnist...). Exit 0, or 1 with the reason on stderr.

Two things torch 1.13 (Debian's python3-torch) does differently from later
versions, handled here so the graphs are those PyTorch users meet:
  - padding='same' does not export (no symbolic for aten::_convolution_mode):
    this registers the one torch 2.x has, a Conv with auto_pad SAME_UPPER
    (or VALID), kernel_shape, strides, dilations and group;
  - Dropout in eval mode is dropped from the graph, as in every version. The
    "dropout_node" cases add a Dropout node (ratio 0.25, not training) after
    the first Relu with onnx.helper, where the net's Dropout is, as graphs
    from other exporters have it: from opset 12 its ratio is an input, and
    linear_relu's also has the optional training_mode input, a constant
    false (inference, as when it is absent).
Run with /usr/bin/python3 (Debian's python3-torch, python3-onnx, numpy).
"""
import json
import os
import sys
import warnings
import zlib

OPSETS = (11, 13, 17)
BATCH = 3


def fail(msg):
    print(f"torch_export: {msg}", file=sys.stderr)
    sys.exit(1)


try:
    import numpy as np
    import torch
    from torch import nn
    import onnx
    from onnx import helper, numpy_helper
except ImportError as e:
    fail(f"cannot import {e.name} ({e}): apt-get install python3-torch python3-onnx python3-numpy")


def register_same_padding():
    """aten::_convolution_mode (padding='same' or 'valid') as torch 2.x exports it."""
    from torch.onnx import symbolic_helper

    @symbolic_helper.parse_args("v", "v", "v", "is", "s", "is", "i")
    def convolution_mode(g, x, weight, bias, stride, padding, dilation, groups):
        kernel = symbolic_helper._get_tensor_sizes(weight)[2:]
        args = [x, weight]
        if not symbolic_helper._is_none(bias):
            args.append(bias)
        auto_pad = {"same": "SAME_UPPER", "valid": "VALID"}[padding]
        return g.op("Conv", *args, kernel_shape_i=kernel, strides_i=stride, auto_pad_s=auto_pad,
                    dilations_i=dilation, group_i=groups)

    for opset in OPSETS:
        torch.onnx.register_custom_op_symbolic("aten::_convolution_mode", convolution_mode, opset)


class ChannelsLast(nn.Module):
    """Takes [N, d.., C], gives the net [N, C, d..]; a spatial output back to [N, d.., C]."""

    def __init__(self, net, rank):
        super().__init__()
        self.net = net
        self.to_first = [0, rank - 1] + list(range(1, rank - 1))

    def forward(self, x):
        y = self.net(x.permute(*self.to_first))
        if y.dim() > 2:
            y = y.permute(0, *range(2, y.dim()), 1)
        return y


def conv(rank):
    return (nn.Conv1d, nn.Conv2d, nn.Conv3d)[rank - 1]


def cases():
    """(name, builder of the net, channels-last input shape without the batch)."""
    out = []
    # Spatial sizes differ per axis, kernels too: a swapped axis shows.
    sizes = {1: (7,), 2: (6, 5), 3: (5, 4, 6)}
    kernels = {
        "valid": {1: 3, 2: (3, 2), 3: (3, 2, 2)},
        "same_odd": {1: 3, 2: (3, 5), 3: (3, 1, 3)},
        "same_even": {1: 2, 2: (2, 4), 3: (2, 2, 4)},
        "explicit": {1: 5, 2: (3, 5), 3: (3, 1, 3)},
    }
    for rank in (1, 2, 3):
        for pad, ks in kernels.items():
            k = ks[rank]
            kt = (k,) if isinstance(k, int) else k
            if pad == "valid":
                padding = 0
            elif pad == "explicit":
                padding = tuple(x // 2 for x in kt) if rank > 1 else kt[0] // 2
            else:
                padding = "same"
            out.append((f"conv{rank}d_{pad}",
                        lambda rank=rank, k=k, padding=padding: nn.Sequential(
                            conv(rank)(2, 4, k, padding=padding), nn.ReLU()),
                        sizes[rank] + (2,)))
    acts = {
        "relu": nn.ReLU, "sigmoid": nn.Sigmoid, "tanh": nn.Tanh,
        "leakyrelu": lambda: nn.LeakyReLU(0.2), "softmax": lambda: nn.Softmax(dim=-1),
        "dropout": lambda: nn.Dropout(0.3), "identity": nn.Identity,
    }
    for name, act in acts.items():
        out.append((f"linear_{name}", lambda act=act: nn.Sequential(nn.Linear(6, 5), act()), (6,)))
        if name != "softmax":  # over the last axis: the width in NCHW, the channels in NHWC
            out.append((f"conv2d_{name}", lambda act=act: nn.Sequential(nn.Conv2d(2, 3, 3), act()), (5, 4, 2)))
    out.append(("linear", lambda: nn.Sequential(nn.Linear(6, 5)), (6,)))
    out.append(("mlp", lambda: nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Dropout(0.3), nn.Linear(8, 8), nn.Tanh(),
                                             nn.Identity(), nn.Linear(8, 4), nn.Softmax(dim=-1)), (6,)))
    # Flatten then Linear: the rows of the Linear follow the channels-first order.
    for rank in (1, 2, 3):
        n = {1: 2 * 5, 2: 2 * 4 * 3, 3: 2 * 3 * 2 * 4}[rank]
        out.append((f"conv{rank}d_flatten_linear",
                    lambda rank=rank, n=n: nn.Sequential(conv(rank)(2, 2, 3), nn.LeakyReLU(0.2), nn.Flatten(),
                                                         nn.Linear(n, 4), nn.Sigmoid()),
                    sizes[rank] + (2,)))
    out.append(("mnist", lambda: nn.Sequential(nn.Conv2d(1, 8, 3), nn.ReLU(), nn.Conv2d(8, 16, 3), nn.ReLU(), nn.Flatten(),
                                               nn.Linear(16 * 24 * 24, 10), nn.Softmax(dim=-1)),
                (28, 28, 1)))
    return out


def add_dropout_node(model, opset, training_mode):
    """A Dropout (ratio 0.25, inference) after the graph's first Relu: it takes over the Relu's output name."""
    g = model.graph
    at = next(i for i, n in enumerate(g.node) if n.op_type == "Relu")
    relu = g.node[at]
    after = relu.output[0]
    relu.output[0] = after + "_before_dropout"
    if opset < 12:
        node = helper.make_node("Dropout", [relu.output[0]], [after], name="Dropout_added", ratio=0.25)
    else:
        g.initializer.append(numpy_helper.from_array(np.array(0.25, np.float32), "dropout_ratio"))
        inputs = [relu.output[0], "dropout_ratio"]
        if training_mode:
            g.initializer.append(numpy_helper.from_array(np.array(False), "dropout_training"))
            inputs.append("dropout_training")
        node = helper.make_node("Dropout", inputs, [after], name="Dropout_added")
    g.node.insert(at + 1, node)
    onnx.checker.check_model(model, full_check=True)
    return model


def main(argv):
    if len(argv) < 2:
        print("usage: torch_export.py OUTDIR [NET...]", file=sys.stderr)
        return 2
    outdir, only = argv[1], argv[2:]
    os.makedirs(outdir, exist_ok=True)
    warnings.filterwarnings("ignore")
    torch.set_num_threads(1)
    register_same_padding()
    lines = []
    for name, build, shape in cases():
        if only and not any(name.startswith(p) for p in only):
            continue
        seed = zlib.crc32(name.encode())
        torch.manual_seed(seed)
        net = build().eval()
        x = np.random.default_rng(seed).standard_normal((BATCH,) + shape).astype(np.float32)
        spatial = len(shape) > 1
        forms = ("nchw", "nhwc") if spatial else ("flat",)
        for form in forms:
            to_first = [0, len(shape)] + list(range(1, len(shape)))
            module = ChannelsLast(net, len(shape) + 1).eval() if form == "nhwc" else net
            feed = x if form != "nchw" else np.ascontiguousarray(x.transpose(to_first))
            with torch.no_grad():
                y = module(torch.from_numpy(feed)).numpy()
            if form == "nchw" and y.ndim > 2:
                y = y.transpose([0] + list(range(2, y.ndim)) + [1])
            y = np.ascontiguousarray(y, dtype=np.float32)
            for opset in OPSETS:
                variants = [""]
                if name == "mlp" or name == "linear_relu":
                    variants.append("_dropout_node")
                for variant in variants:
                    case = f"{name}{variant}_{form}_op{opset}"
                    path = os.path.join(outdir, case + ".onnx")
                    try:
                        torch.onnx.export(module, torch.from_numpy(feed), path, opset_version=opset,
                                          input_names=["x"], output_names=["y"],
                                          dynamic_axes={"x": {0: "N"}, "y": {0: "N"}},
                                          do_constant_folding=True)
                    except Exception as e:  # noqa: BLE001 - the case is named in the message
                        fail(f"{case}: torch.onnx.export failed: {e}")
                    if variant:
                        onnx.save(add_dropout_node(onnx.load(path), opset, name == "linear_relu"), path)
                    np.save(os.path.join(outdir, case + ".in.npy"), x)
                    np.save(os.path.join(outdir, case + ".out.npy"), y)
                    lines.append(json.dumps({
                        "case": case, "net": name, "form": form, "opset": opset,
                        "channels_first": form == "nchw",
                        "onnx": case + ".onnx", "input": case + ".in.npy", "output": case + ".out.npy",
                        "input_shape": list(x.shape), "output_shape": list(y.shape),
                        "layers": " ".join(type(m).__name__ for m in net),
                    }))
    if not lines:
        fail(f"no net's name starts with {' or '.join(only)}")
    with open(os.path.join(outdir, "manifest.json"), "w") as f:
        f.write('{\n  "generated_by": "tests/tools/torch_export.py",\n')
        f.write(f'  "torch": "{torch.__version__}", "onnx": "{onnx.__version__}",\n  "cases": [\n')
        f.write(",\n".join("    " + line for line in lines))
        f.write("\n  ]\n}\n")
    print(f"torch_export: {len(lines)} cases in {outdir} (torch {torch.__version__}, opsets "
          f"{', '.join(map(str, OPSETS))})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
