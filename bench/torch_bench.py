#!/usr/bin/python3
"""torch_bench.py: the contender. Runs a .nnn model in PyTorch (CPU) with the
file's own weights, for nnnbench (bench/suite/) to set nnnkit against.

It reads the model through nnnkit itself: `nnnkit export MODEL DIR` writes the
JSON form (docs/json.md), every type by its schema name ("dense", "conv",
"relu", ...), and every tensor as a .npy file. So no ID of the format is
restated here. It builds the equivalent torch module: Dense (with or without
flatten), Conv with 1, 2 or 3 spatial axes and any padding dims (asymmetric
ones too), and the activations of the core schema. Layouts differ and are
converted once, at load time (n spatial axes s1..sn):
  nnn input [b, s1..sn, c] (channels last) -> torch [b, c, s1..sn]
  nnn kernels [f, k1..kn, c]               -> torch weight [f, c, k1..kn]
  nnn Dense weights [in, out]              -> torch Linear weight [out, in]
  Dense with flatten after a Conv: nnn flattens [s1..sn, c] (channels last),
  torch flattens [c, s1..sn], so the weight rows are permuted to torch's order.
  Dense without flatten on [b, s1..sn, c] mixes c, as nnn's does.
Torch holds 2-D and 3-D activations in channels-last memory (nnnkit's layout;
torch.channels_last, channels_last_3d), so the input needs no copy; 1-D ones
have no such format in torch.

  torch_bench.py --worker --threads T --shape 28,28,1 [--nnnkit FILE] MODEL
      one line per request on stdin, one answer per line on stdout:
        net B N        -> seconds for N forward calls on a batch of B inputs
        check X Y      -> largest |torch(X) - Y| (X, Y: .npy files of nnnkit run)
        quit
  torch_bench.py --classify --threads T [--batch B] [--nnnkit FILE] MODEL X.npy
      the whole-process figure: load, then classify every sample of X
--nnnkit: the nnnkit that reads MODEL (default: $NNNKIT, else nnnkit on PATH).
Use /usr/bin/python3 (Debian's python3-torch); set OMP_NUM_THREADS and
OPENBLAS_NUM_THREADS to T as well, as nnnbench does.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time


def load_tensor(t, folder, path):
    """A tensor of the JSON form as a float32 numpy array of its dims."""
    import numpy as np
    data = t["data"]
    if isinstance(data, dict):
        a = np.load(os.path.join(folder, data["npy"]))
    else:
        a = np.array([float(v) for v in data], dtype=np.float32)
    if a.size != int(np.prod(t["dims"])):
        raise ValueError("%s: %d values for dims %s" % (path, a.size, t["dims"]))
    return np.ascontiguousarray(a.astype(np.float32).reshape(t["dims"]))


def read_model(path, nnnkit):
    """The layers of a model as dicts of their fields, types by name, as
    `nnnkit export` writes them (docs/json.md)."""
    tmp = tempfile.mkdtemp(prefix="torch_bench.")
    try:
        out = os.path.join(tmp, "model")
        r = subprocess.run([nnnkit, "export", path, out], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if r.returncode != 0:
            raise ValueError("%s export %s: %s" % (nnnkit, path, r.stderr.decode(errors="replace").strip()))
        with open(os.path.join(out, "model.json")) as f:
            model = json.load(f)
        layers = []
        for i, L in enumerate(model["layers"]):
            at = "layers[%d]" % i
            for field in ("bias", "weights", "kernels"):
                if field in L:
                    L[field] = load_tensor(L[field], out, "%s.%s" % (at, field))
            layers.append(L)
        return layers
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def memory_format(torch, spatial):
    """Channels-last for n spatial axes, where torch has one."""
    return {2: torch.channels_last, 3: torch.channels_last_3d}.get(spatial)


def build(layers, in_shape):
    """A torch.nn.Sequential equal to the model for inputs [b] + in_shape
    (channels last, as nnnkit takes them); torch gets [b, c, s1..sn]."""
    import torch
    from torch import nn
    F = nn.functional
    acts = ("linear", "sigmoid", "tanh", "relu", "leaky_relu", "softmax")

    class Act(nn.Module):
        def __init__(self, act, tau, spatial):
            super().__init__()
            self.act, self.tau, self.dim = act, tau, 1 if spatial else -1

        def forward(self, x):
            if self.act == "relu":
                return torch.relu(x)
            if self.act == "sigmoid":
                return torch.sigmoid(x)
            if self.act == "tanh":
                return torch.tanh(x)
            if self.act == "leaky_relu":
                return F.leaky_relu(x, self.tau)
            if self.act == "softmax":
                return torch.softmax(x, dim=self.dim)
            return x

    class Pad(nn.Module):
        """Zero padding, before and after per axis (F.pad takes the last axis first)."""

        def __init__(self, pads):
            super().__init__()
            n = len(pads) // 2
            self.pads = tuple(v for i in reversed(range(n)) for v in (pads[2 * i], pads[2 * i + 1]))

        def forward(self, x):
            return F.pad(x, self.pads)

    class ChannelsDense(nn.Module):
        """nnn's Dense without flatten on [b, s1..sn, c]: mixes c alone."""

        def __init__(self, lin):
            super().__init__()
            self.lin = lin

        def forward(self, x):
            return self.lin(x.movedim(1, -1)).movedim(-1, 1)

    convs = {1: nn.Conv1d, 2: nn.Conv2d, 3: nn.Conv3d}
    mods, shape = [], list(in_shape)  # shape: nnn's, without the batch
    for i, L in enumerate(layers):
        at = "layers[%d]" % i
        act = L["activation"]["id"]
        if act not in acts:
            raise ValueError("%s.activation.id: %s is not in the core schema" % (at, act))
        tau = float(L["activation"].get("tau", 0.0))
        spatial = len(shape) - 1
        if L["id"] == "conv":
            k, p = L["kernels"], [int(v) for v in L["padding_dims"]]
            n = k.ndim - 2
            if n != spatial or n not in convs or len(p) != 2 * n:
                raise ValueError("%s: a %d-D conv on an input of shape %s: this script runs 1-D to 3-D ones"
                                 % (at, n, shape))
            if any(p):
                mods.append(Pad(p))
            conv = convs[n](k.shape[-1], k.shape[0], tuple(k.shape[1:-1]))
            conv.weight.data = torch.from_numpy(k.transpose([0, n + 1] + list(range(1, n + 1))).copy())
            conv.bias.data = torch.from_numpy(L["bias"].copy())
            mods.append(conv)
            shape = [shape[a] + p[2 * a] + p[2 * a + 1] - k.shape[a + 1] + 1 for a in range(n)] + [k.shape[0]]
            mods.append(Act(act, tau, True))
        elif L["id"] == "dense":
            w = L["weights"]
            lin = nn.Linear(w.shape[0], w.shape[1])
            if spatial > 0 and L["flatten"]:
                # nnn's row (s1..sn, c), channels last, is torch's row (c, s1..sn).
                w = w.reshape(shape + [-1]).transpose([spatial] + list(range(spatial)) + [spatial + 1])
                w = w.reshape(-1, w.shape[-1])
                mods.append(nn.Flatten())
                shape = [w.shape[1]]
            else:
                shape = shape[:-1] + [w.shape[1]]
            lin.weight.data = torch.from_numpy(w.T.copy())
            lin.bias.data = torch.from_numpy(L["bias"].copy())
            mods.append(ChannelsDense(lin) if len(shape) > 1 else lin)
            mods.append(Act(act, tau, len(shape) > 1))
        else:
            raise ValueError("%s.id: %s is not a layer type of the core schema" % (at, L["id"]))
    net = nn.Sequential(*mods).eval()
    fmt = memory_format(torch, len(in_shape) - 1)
    return net.to(memory_format=fmt) if fmt is not None else net


def to_torch(x):
    """[b, s1..sn, c] numpy (nnnkit's layout) as a [b, c, s1..sn] tensor in
    channels-last memory: the same bytes, no copy."""
    import torch
    t = torch.from_numpy(x)
    return t.permute(0, t.dim() - 1, *range(1, t.dim() - 1)) if t.dim() >= 3 else t


def from_torch(t):
    """A [b, c, s1..sn] output back in nnnkit's layout, [b, s1..sn, c]."""
    return t.movedim(1, -1).contiguous() if t.dim() >= 3 else t


def setup(threads):
    import torch
    torch.set_num_threads(threads)
    torch.set_grad_enabled(False)
    return torch


def worker(model_path, in_shape, threads, nnnkit):
    import numpy as np
    torch = setup(threads)
    net = build(read_model(model_path, nnnkit), in_shape)
    fmt = memory_format(torch, len(in_shape) - 1)
    inputs = {}
    print("ready torch %s threads %d" % (torch.__version__, torch.get_num_threads()), flush=True)
    for line in sys.stdin:
        w = line.split()
        if not w or w[0] == "quit":
            break
        try:
            if w[0] == "net":
                b, n = int(w[1]), int(w[2])
                if b not in inputs:
                    gen = torch.Generator().manual_seed(b)
                    inputs[b] = to_torch(torch.rand([b] + in_shape, generator=gen).numpy())
                    if fmt is not None and not inputs[b].is_contiguous(memory_format=fmt):
                        raise ValueError("input is not channels-last")
                x = inputs[b]
                with torch.inference_mode():
                    t0 = time.perf_counter()
                    for _ in range(n):
                        net(x)
                    t = time.perf_counter() - t0
                print("%.9f" % t, flush=True)
            elif w[0] == "check":
                x, y = np.load(w[1]), np.load(w[2])
                with torch.inference_mode():
                    out = torch.cat([net(to_torch(x[i:i + 1024])) for i in range(0, len(x), 1024)])
                out = from_torch(out).numpy()
                if out.shape != y.shape:
                    raise ValueError("torch gives %s, nnnkit %s" % (list(out.shape), list(y.shape)))
                print("%.6g" % float(np.max(np.abs(out - y))), flush=True)
            else:
                print("err unknown request %s" % w[0], flush=True)
        except Exception as e:  # the driver shows it and goes on without torch
            print("err %s" % str(e).replace("\n", " "), flush=True)


def classify(model_path, x_path, threads, batch, nnnkit):
    import numpy as np
    torch = setup(threads)
    x = np.load(x_path)
    net = build(read_model(model_path, nnnkit), list(x.shape[1:]))
    with torch.inference_mode():
        out = [net(to_torch(x[i:i + batch])) for i in range(0, len(x), batch)]
    y = torch.cat(out)
    print("classified %d samples, class 0: %d" % (len(y), int((y.argmax(dim=1) == 0).sum())))


def main(argv):
    threads, batch, mode, files, shape = 1, 256, None, [], [28, 28, 1]
    nnnkit = os.environ.get("NNNKIT") or shutil.which("nnnkit") or "nnnkit"
    i = 1
    while i < len(argv):
        a = argv[i]
        if a in ("--worker", "--classify"):
            mode = a[2:]
        elif a in ("--threads", "--batch", "--shape", "--nnnkit") and i + 1 < len(argv):
            i += 1
            if a == "--nnnkit":
                nnnkit = argv[i]
            elif a == "--threads":
                threads = int(argv[i])
            elif a == "--batch":
                batch = int(argv[i])
            else:
                shape = [int(d) for d in argv[i].split(",")]
        elif a.startswith("-"):
            sys.exit("torch_bench.py: unknown option %s\n%s" % (a, __doc__))
        else:
            files.append(a)
        i += 1
    if mode == "worker" and len(files) == 1:
        worker(files[0], shape, threads, nnnkit)
    elif mode == "classify" and len(files) == 2:
        classify(files[0], files[1], threads, batch, nnnkit)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
