"""close() in one thread while another thread is inside a call (issue 28,
item 6). The semantics (docs/python.md, "Threads and close()"): close()
never raises and never waits; a call already in progress completes with
its result, and the native memory it uses (the plan, the model) is freed
when the last call holding it returns; calls started after close() raise
UsageError.

Each race runs 100 times. Most are made deterministic by standing in for a
libnnn function (nnnkit._lib.lib.nnn_plan_run or nnn_plan_new) with a
Python wrapper: the calling thread stops there, with every argument taken,
until the other thread's close() has returned, then the real function runs
on those arguments. test_plan_close_during_a_real_run races without any
stand-in, on a run long enough (milliseconds) to be closed in its middle."""

import threading
import time

import numpy as np
import pytest

import nnnkit
from nnnkit import _lib

ROUNDS = 100
WAIT = 10  # seconds any one step may take before the test gives up


def dense_model(n=16, layers=2, seed=0):
    r = np.random.default_rng(seed)
    return nnnkit.Model.from_layers([{"id": "dense", "activation": "tanh",
                                      "weights": r.standard_normal((n, n), dtype=np.float32) / np.sqrt(n),
                                      "bias": r.standard_normal(n, dtype=np.float32)} for _ in range(layers)])


class Gate:
    """Stands in for a libnnn function (an attribute of _lib.lib): the
    thread that calls it sets .inside, waits for .go (cleared when a round
    arms the gate, set once close() has returned), checks that no
    nnn_plan_free freed the plan it was given while it waited, then calls
    the real function. Every nnn_plan_free of the round is in .freed."""

    def __init__(self, monkeypatch, name):
        self.real = getattr(_lib.lib, name)
        self.real_free = _lib.lib.nnn_plan_free
        self.inside, self.go = threading.Event(), threading.Event()
        self.freed, self.ptrs = [], []
        self.go.set()  # open until a round arms it
        monkeypatch.setattr(_lib.lib, name, self)
        monkeypatch.setattr(_lib.lib, "nnn_plan_free", self.free)

    def arm(self):
        # A new round: an address freed before may be a new plan's now.
        self.inside.clear()
        self.go.clear()
        self.freed.clear()
        self.ptrs.clear()

    def free(self, ptr):
        self.freed.append(ptr)
        self.real_free(ptr)

    def __call__(self, *args):
        before = len(self.freed)
        self.inside.set()
        assert self.go.wait(WAIT), "close() did not return"
        if self.real.__name__ == "nnn_plan_run":
            ptr = args[0]
            self.ptrs.append(ptr)
            assert ptr not in self.freed[before:], "the plan was freed under a run in progress"
        return self.real(*args)


def race(call, close, gate):
    """Runs call() in a thread; once it is inside the gate, close() here.
    Returns (what close returned or raised, what call returned or raised)."""
    got = {}

    def work():
        try:
            got["call"] = call()
        except BaseException as e:  # noqa: B036: reported to the test
            got["call"] = e
    gate.arm()
    t = threading.Thread(target=work)
    t.start()
    try:
        assert gate.inside.wait(WAIT), "the call never reached libnnn"
        try:
            closed = close()
        except BaseException as e:  # noqa: B036
            closed = e
    finally:
        gate.go.set()
        t.join(WAIT)
    assert not t.is_alive(), "the call did not return"
    return closed, got.get("call")


def test_plan_close_while_run_is_inside_libnnn(monkeypatch):
    m = dense_model()
    x = np.random.default_rng(1).standard_normal((8, 16)).astype(np.float32)
    want = m.run(x)
    gate = Gate(monkeypatch, "nnn_plan_run")
    for i in range(ROUNDS):
        p = m.plan(x.shape, threads=1 + i % 2)
        closed, y = race(lambda: p.run(x), p.close, gate)
        assert closed is None, f"round {i}: close() raised {closed!r}"
        assert isinstance(y, np.ndarray), f"round {i}: the run gave {y!r}"
        assert y.tobytes() == want.tobytes(), f"round {i}: wrong outputs"
        # Freed once, when the run returned; later runs are refused.
        assert gate.freed.count(gate.ptrs[-1]) == 1, f"round {i}: the plan was not freed after the run"
        with pytest.raises(nnnkit.UsageError, match="closed"):
            p.run(x)
        p.close()  # a second close is harmless


def test_model_close_while_a_plan_of_it_runs(monkeypatch):
    x = np.random.default_rng(2).standard_normal((8, 16)).astype(np.float32)
    gate = Gate(monkeypatch, "nnn_plan_run")
    for i in range(ROUNDS):
        m = dense_model(seed=i % 3)
        want = m.run(x)
        p = m.plan(x.shape)
        closed, y = race(lambda: p.run(x), m.close, gate)
        assert closed is None and isinstance(y, np.ndarray), f"round {i}: {closed!r} {y!r}"
        assert y.tobytes() == want.tobytes(), f"round {i}: wrong outputs"
        assert p.run(x).tobytes() == want.tobytes()  # the plan keeps the model's memory
        with pytest.raises(nnnkit.UsageError, match="closed"):
            m.plan(x.shape)
        p.close()


@pytest.mark.parametrize("stop", ["nnn_plan_new", "nnn_plan_run"])
def test_model_close_during_model_run(monkeypatch, stop):
    # Stopped while planning (the model's fields read after it) or in the
    # first of several batches (more plans made after it): the run completes.
    x = np.random.default_rng(3).standard_normal((10, 16)).astype(np.float32)
    ref = dense_model()
    want = ref.run(x)
    data = ref.encode()
    gate = Gate(monkeypatch, stop)
    for i in range(ROUNDS):
        m = nnnkit.Model.from_bytes(data)
        closed, y = race(lambda: m.run(x, batch=4), m.close, gate)
        assert closed is None, f"round {i}: close() raised {closed!r}"
        assert isinstance(y, np.ndarray), f"round {i}: the run gave {y!r}"
        assert y.tobytes() == want.tobytes(), f"round {i}: wrong outputs"
        with pytest.raises(nnnkit.UsageError, match="closed"):
            m.run(x)


def test_plan_close_during_a_real_run():
    # No stand-in: libnnn's own call, a few milliseconds long on two
    # threads, closed from here once it has begun. Before the fix this
    # killed the interpreter (SIGFPE: the plan's pool freed under it).
    m = dense_model(n=512, layers=2, seed=4)
    x = np.random.default_rng(4).standard_normal((512, 512)).astype(np.float32)
    want = m.run(x, threads=2)
    overlapped = 0
    for i in range(ROUNDS):
        p = m.plan(x.shape, threads=2)
        started, got = threading.Event(), {}

        def work():
            started.set()
            try:
                got["y"] = p.run(x)
            except BaseException as e:  # noqa: B036
                got["y"] = e
            got["end"] = time.perf_counter()
        t = threading.Thread(target=work)
        t.start()
        assert started.wait(WAIT)
        time.sleep(0.0002)
        p.close()
        closed_at = time.perf_counter()
        t.join(WAIT)
        assert not t.is_alive()
        y = got["y"]
        if isinstance(y, nnnkit.UsageError):
            continue  # closed before run() began: refused, as documented
        assert isinstance(y, np.ndarray), f"round {i}: the run gave {y!r}"
        assert y.tobytes() == want.tobytes(), f"round {i}: wrong outputs"
        overlapped += closed_at < got["end"]
    # Most rounds closed the plan while its run was under way.
    assert overlapped >= ROUNDS // 2, f"only {overlapped} of {ROUNDS} rounds closed during the run"
    print(f"{overlapped} of {ROUNDS} rounds closed the plan during its run")
