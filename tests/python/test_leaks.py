"""No leaks: load, run, plan and close in a loop; Python's allocations
(tracemalloc) do not grow, and neither does the process's resident memory
beyond a small bound (a leaked model, mapping, plan or plugin context per
iteration would add far more)."""

import gc
import os
import tracemalloc

import numpy as np

import nnnkit


def rss():
    """Resident set size in bytes (/proc/self/statm)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_load_run_close_does_not_grow(tmp_path):
    r = np.random.default_rng(0)
    # 256 KiB of weights: a leaked mapping or model per iteration shows.
    w = r.standard_normal((256, 256), dtype=np.float32)
    path = tmp_path / "m.nnn"
    nnnkit.Model.from_layers([{"id": "dense", "activation": "relu", "weights": w,
                               "bias": np.zeros(256, np.float32)}]).save(path)
    x = r.standard_normal((4, 256), dtype=np.float32)

    def cycle(i):
        m = nnnkit.load(path, copy=bool(i % 2))
        y = m.run(x, threads=1 + i % 2)
        with m.plan(x.shape) as p:
            p.run(x)
        try:
            m.run(np.zeros((1, 3)))
        except nnnkit.ValidationError:
            pass
        _ = m.layers[0].weights.data.sum(), repr(m), m.validate()
        m.close()
        return y

    for i in range(20):  # warm up: caches, allocator pools, lazy imports
        cycle(i)
    gc.collect()
    tracemalloc.start()
    before, base = tracemalloc.take_snapshot(), rss()
    for i in range(200):
        cycle(i)
    gc.collect()
    after, grown = tracemalloc.take_snapshot(), rss() - base
    tracemalloc.stop()
    python = sum(s.size_diff for s in after.compare_to(before, "filename"))
    assert python < 64 * 1024, f"Python allocations grew by {python} bytes over 200 iterations"
    assert grown < 8 * 1024 * 1024, f"resident memory grew by {grown} bytes over 200 iterations"
