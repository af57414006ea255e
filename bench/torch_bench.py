#!/usr/bin/python3
"""torch_bench.py: the contender. Runs a .nnn model in PyTorch (CPU) with the
file's own weights, for nnnbench (bench/suite/) to set nnnkit against.

It reads the .nnn file itself (a minimal reader: Dense, and Conv with two
spatial axes; the activations of the core schema) and builds the equivalent
torch module. Layouts differ and are converted once, at load time:
  nnn input [b, h, w, c] (channels last)  -> torch [b, c, h, w]
  nnn kernels [f, k1, k2, c]              -> torch weight [f, c, k1, k2]
  nnn Dense weights [in, out]             -> torch Linear weight [out, in]
  Dense with flatten after a Conv: nnn flattens [h, w, c] (channels last),
  torch flattens [c, h, w], so the weight rows are permuted to torch's order.

  torch_bench.py --worker --threads T --shape 28,28,1 MODEL
      one line per request on stdin, one answer per line on stdout:
        net B N        -> seconds for N forward calls on a [B, 1, h, w] batch
        check X Y      -> largest |torch(X) - Y| (X, Y: .npy files of nnnkit run)
        quit
  torch_bench.py --classify --threads T [--batch B] MODEL X.npy
      the whole-process figure: load, then classify every sample of X
Use /usr/bin/python3 (Debian's python3-torch); set OMP_NUM_THREADS and
OPENBLAS_NUM_THREADS to T as well, as nnnbench does.
"""
import struct
import sys
import time

MAGIC = 776883790
DENSE, CONV = 0, 1
LINEAR, SIGMOID, TANH, RELU, LEAKY_RELU, SOFTMAX = range(6)


class Reader:
    """Bounds-checked little-endian reads over the file's bytes."""

    def __init__(self, data):
        self.data, self.pos = data, 0

    def take(self, n):
        if self.pos + n > len(self.data):
            raise ValueError("file ends early at byte %d" % self.pos)
        b = self.data[self.pos:self.pos + n]
        self.pos += n
        return b

    def u8(self):
        return self.take(1)[0]

    def i32(self):
        return struct.unpack("<i", self.take(4))[0]

    def u64(self):
        return struct.unpack("<Q", self.take(8))[0]

    def f32(self):
        return struct.unpack("<f", self.take(4))[0]

    def i32s(self):
        n = self.i32()
        return list(struct.unpack("<%di" % n, self.take(4 * n)))

    def tensor(self):
        import numpy as np
        dims = self.i32s()
        self.u8()  # requires_grad
        n = self.i32()
        data = np.frombuffer(self.take(4 * n), dtype="<f4").astype(np.float32)
        return data.reshape(dims)


def read_model(path):
    """The layers of a .nnn file as dicts of their fields."""
    with open(path, "rb") as f:
        r = Reader(f.read())
    if r.i32() != MAGIC:
        raise ValueError("%s: not a .nnn file" % path)
    r.take(r.i32())  # description
    r.u64()  # param_count
    layers = []
    for _ in range(r.i32()):
        L = {"id": r.u8(), "act": r.u8(), "tau": 0.0}
        if L["act"] == LEAKY_RELU:
            L["tau"] = r.f32()
        elif L["act"] > SOFTMAX:
            raise ValueError("activation ID %d is not in the core schema" % L["act"])
        r.f32()  # dropout: ignored at inference
        L["bias"] = r.tensor()
        if L["id"] == DENSE:
            L["neurons"] = r.i32()
            L["weights"] = r.tensor()
            L["flatten"] = r.u8() == 1
        elif L["id"] == CONV:
            L["filters"] = r.i32()
            L["kernels"] = r.tensor()
            r.i32()  # padding_type: padding_dims say it all
            L["pads"] = r.i32s()
        else:
            raise ValueError("layer ID %d is not in the core schema" % L["id"])
        layers.append(L)
    return layers


def build(layers, in_shape):
    """A torch.nn.Sequential equal to the model for inputs [b] + in_shape
    (channels last, as nnnkit takes them); torch gets [b, c, h, w]."""
    import torch
    from torch import nn

    class Act(nn.Module):
        def __init__(self, act, tau, spatial):
            super().__init__()
            self.act, self.tau, self.dim = act, tau, 1 if spatial else -1

        def forward(self, x):
            if self.act == RELU:
                return torch.relu(x)
            if self.act == SIGMOID:
                return torch.sigmoid(x)
            if self.act == TANH:
                return torch.tanh(x)
            if self.act == LEAKY_RELU:
                return nn.functional.leaky_relu(x, self.tau)
            if self.act == SOFTMAX:
                return torch.softmax(x, dim=self.dim)
            return x

    mods, shape = [], list(in_shape)  # shape: nnn's, without the batch
    for i, L in enumerate(layers):
        if L["id"] == CONV:
            k = L["kernels"]
            if k.ndim != 4 or len(shape) != 3:
                raise ValueError("layers[%d]: only 2-D convolutions are supported here" % i)
            p = L["pads"]
            if any(p):
                mods.append(nn.ZeroPad2d((p[2], p[3], p[0], p[1])))
            conv = nn.Conv2d(k.shape[3], k.shape[0], (k.shape[1], k.shape[2]))
            conv.weight.data = torch.from_numpy(k.transpose(0, 3, 1, 2).copy())
            conv.bias.data = torch.from_numpy(L["bias"].copy())
            mods.append(conv)
            shape = [shape[0] + p[0] + p[1] - k.shape[1] + 1, shape[1] + p[2] + p[3] - k.shape[2] + 1, k.shape[0]]
            mods.append(Act(L["act"], L["tau"], True))
        else:
            w = L["weights"]
            if len(shape) == 3:
                if not L["flatten"]:
                    raise ValueError("layers[%d]: Dense without flatten on a spatial input" % i)
                h, wd, c = shape
                # nnn's row (y*w + x)*c + ch is torch's row ch*h*w + y*w + x.
                w = w.reshape(h, wd, c, -1).transpose(2, 0, 1, 3).reshape(h * wd * c, -1)
                mods.append(nn.Flatten())
            lin = nn.Linear(w.shape[0], w.shape[1])
            lin.weight.data = torch.from_numpy(w.T.copy())
            lin.bias.data = torch.from_numpy(L["bias"].copy())
            mods.append(lin)
            shape = [w.shape[1]]
            mods.append(Act(L["act"], L["tau"], False))
    # Channels-last memory (nnnkit's layout): the faster one for oneDNN's
    # convolutions here, and the input needs no copy.
    return nn.Sequential(*mods).eval().to(memory_format=torch.channels_last)


def to_torch(x):
    """[b, h, w, c] numpy (nnnkit's layout) as a [b, c, h, w] tensor in
    channels-last memory: the same bytes, no copy."""
    import torch
    t = torch.from_numpy(x)
    return t.permute(0, 3, 1, 2) if t.dim() == 4 else t


def setup(threads):
    import torch
    torch.set_num_threads(threads)
    torch.set_grad_enabled(False)
    return torch


def worker(model_path, in_shape, threads):
    import numpy as np
    torch = setup(threads)
    net = build(read_model(model_path), in_shape)
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
                    if not inputs[b].is_contiguous(memory_format=torch.channels_last) and inputs[b].dim() == 4:
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
                print("%.6g" % float(np.max(np.abs(out.numpy() - y))), flush=True)
            else:
                print("err unknown request %s" % w[0], flush=True)
        except Exception as e:  # the driver shows it and goes on without torch
            print("err %s" % str(e).replace("\n", " "), flush=True)


def classify(model_path, x_path, threads, batch):
    import numpy as np
    torch = setup(threads)
    x = np.load(x_path)
    net = build(read_model(model_path), list(x.shape[1:]))
    with torch.inference_mode():
        out = [net(to_torch(x[i:i + batch])) for i in range(0, len(x), batch)]
    y = torch.cat(out)
    print("classified %d samples, class 0: %d" % (len(y), int((y.argmax(dim=1) == 0).sum())))


def main(argv):
    threads, batch, mode, files, shape = 1, 256, None, [], [28, 28, 1]
    i = 1
    while i < len(argv):
        a = argv[i]
        if a in ("--worker", "--classify"):
            mode = a[2:]
        elif a in ("--threads", "--batch", "--shape") and i + 1 < len(argv):
            i += 1
            if a == "--threads":
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
        worker(files[0], shape, threads)
    elif mode == "classify" and len(files) == 2:
        classify(files[0], files[1], threads, batch)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
