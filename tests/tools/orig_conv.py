#!/usr/bin/python3
"""The original Neural Network Notions framework's Conv, term by term, as a
reference for `nnnkit run --conv-compat original` (tests/unit/test_origconv.c).

    orig_conv.py KERNELS.npy BIAS.npy X.npy PADS OUT.npy

KERNELS is [F, k0..k(n-1), C], X is [B, d0..d(n-1), C], PADS is
"before0,after0,before1,..." (zeros of padding the original adds first, as it
does for padding type Same with the stored padding dims). Written apart from
nnnkit and the other way round: nnnkit scales each tap's weights by how often
the original sums it, this walks the original's loop over every term, in
float64, reading the kernel data by flat index.
"""
import sys

import numpy as np


def original_conv(w, b, x):
    F, ks, C = w.shape[0], w.shape[1:-1], w.shape[-1]
    n = len(ks)
    outs = [x.shape[1 + d] - ks[d] + 1 for d in range(n)]
    taps = int(np.prod(ks))
    # The original's spatial strides: kernel_dims[i + 1] of [F, k0.., C] is
    # k[i], the axis' own size, where k[i + 1] would be right.
    s = [1] * n
    for i in range(n - 2, -1, -1):
        s[i] = s[i + 1] * ks[i]
    # the kernel tensor's true strides (elements), row-major [F, k0.., C]
    kst = [C * int(np.prod(ks[d + 1:])) for d in range(n)]
    flat = w.astype(np.float64).reshape(-1)
    y = np.zeros((x.shape[0], *outs, F))
    for bi in range(x.shape[0]):
        for o in np.ndindex(*outs):
            for f in range(F):
                acc = float(b[f])
                for k in range(taps * C):
                    q, c = divmod(k, C)
                    coord = [(q // s[d]) % ks[d] for d in range(n)]
                    at = f * taps * C + sum(coord[d] * kst[d] for d in range(n)) + c
                    acc += float(x[(bi, *[o[d] + coord[d] for d in range(n)], c)]) * flat[at]
                y[(bi, *o, f)] = acc
    return y


def main():
    w, b, x = (np.load(p) for p in sys.argv[1:4])
    pads = [int(v) for v in sys.argv[4].split(",")]
    x = np.pad(x.astype(np.float64), [(0, 0)] + [(pads[2 * d], pads[2 * d + 1]) for d in range(x.ndim - 2)] + [(0, 0)])
    np.save(sys.argv[5], original_conv(w, b, x).astype(np.float32))


if __name__ == "__main__":
    main()
