"""The conformance testees written in Python (docs/conformance.md): the
package's (python3 -m nnnkit.testee) answers a scripted session over cases
of build/conformance as the manifest says and as the package computes, bad
request lines included, and exits 0 at the end of its input; the broken
testee (tests/tools/broken_testee.py) with --bug none runs every valid case
as Model.run does, and each injected bug shows where it should and nowhere
else. Cases are picked from the manifest and the models, never by name."""

import json
import os
import select
import subprocess
import sys

import numpy as np
import pytest

import nnnkit
from conftest import ROOT
from test_plugins import pool_layers

BROKEN = os.path.join(ROOT, "tests", "tools", "broken_testee.py")
TOLERANCE = 1e-4  # the broken testee's float32 forward pass against libnnn's kernels
GUARD = 60  # seconds: only so that a testee that never answers fails instead of hanging the suite


class Session:
    """One testee process and its requests, answered in order."""

    def __init__(self, args, tmp_path):
        env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
        self.err = open(tmp_path / "testee.stderr", "w+b")
        self.p = subprocess.Popen([sys.executable, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=self.err, env=env)
        self.next = 0

    def line(self, raw):
        """Sends one raw line (bytes, newline added); returns the answer."""
        self.p.stdin.write(raw + b"\n")
        self.p.stdin.flush()
        ready, _, _ = select.select([self.p.stdout], [], [], GUARD)
        assert ready, f"no answer to {raw!r}: {self.stderr()}"
        text = self.p.stdout.readline()
        assert text.endswith(b"\n"), f"the answer to {raw!r} is not one line: {text!r} {self.stderr()}"
        return json.loads(text)

    def ask(self, op, **fields):
        self.next += 1
        a = self.line(json.dumps({"id": self.next, "op": op, **fields}).encode())
        assert a["id"] == self.next and isinstance(a["ok"], bool), a
        return a

    def stderr(self):
        self.err.seek(0)
        return self.err.read().decode(errors="replace")

    def close(self):
        """Ends stdin; returns the exit status."""
        self.p.stdin.close()
        try:
            return self.p.wait(GUARD)
        finally:
            if self.p.poll() is None:
                self.p.kill()


@pytest.fixture
def session(tmp_path):
    made = []

    def start(*args):
        made.append(Session(args, tmp_path))
        return made[-1]
    yield start
    for s in made:
        if s.p.poll() is None:
            s.p.kill()
            s.p.wait()
        s.err.close()


def case_id(c):
    return c.get("id") or c["file"].removesuffix(".nnn")


def where(p):
    return (p["code"], p["path"], p["offset"])


def expected(c):
    return (c["code"], c["path"] or "", c["offset"])


def one_per_kind(cases):
    """A case of each (family, kind, code), in manifest order."""
    seen, out = set(), []
    for c in cases:
        key = (c.get("family", c.get("class")), c["kind"], c["code"])
        if key not in seen:
            seen.add(key)
            out.append(c)
    return out


def runnable(folder, cases):
    """(case, file, input) for every valid case with an input shape: the kit's
    input when the manifest has one, else a fixed random one."""
    out = []
    for c in cases:
        if c["kind"] != "valid" or not c.get("input_shape"):
            continue
        if c.get("run"):
            x = np.load(os.path.join(folder, c["run"]["input"]))
        else:
            x = np.random.default_rng(len(out)).standard_normal(c["input_shape"]).astype(np.float32)
        out.append((c, os.path.join(folder, c["file"]), x))
    return out


def broken_can_run(folder, cases):
    """runnable()'s cases the broken testee's own forward pass computes: on a
    grown schema (the growth drills), not those of the types it added."""
    sys.path.insert(0, os.path.dirname(BROKEN))
    from broken_testee import unsupported
    return [(c, f, x) for c, f, x in runnable(folder, cases) if not unsupported(nnnkit.load(f))]


def run_through(s, file, x, tmp_path):
    """The testee's output for x, or its answer when it refused."""
    xin, yout = tmp_path / "x.npy", tmp_path / "y.npy"
    np.save(xin, x)
    if yout.exists():
        yout.unlink()
    a = s.ask("run", file=file, input=str(xin), output=str(yout))
    return np.load(yout) if a["ok"] else a


def close_enough(got, want):
    """The kit's run check: |got - want| <= tolerance * (1 + |want|), NaN where NaN."""
    if not isinstance(got, np.ndarray) or got.shape != want.shape or got.dtype != np.float32:
        return False
    with np.errstate(invalid="ignore"):
        near = np.abs(got.astype(np.float64) - want) <= TOLERANCE * (1 + np.abs(want.astype(np.float64)))
    same = (got == want) | (np.isnan(got) & np.isnan(want))  # infinities and NaN
    return bool(np.all(near | same))


# ---- the package's testee ----

def test_package_testee_answers_as_the_manifest_says(manifest, session, tmp_path):
    folder, cases = manifest
    s = session("-m", "nnnkit.testee")
    hello = s.ask("hello", protocol=1)
    assert (hello["ok"], hello["name"], hello["version"], hello["protocol"]) == \
        (True, "nnnkit-python", nnnkit.__version__, 1)
    assert sorted(hello["ops"]) == ["decode", "encode", "run", "validate"]
    picked = one_per_kind(cases) + [c for c in cases if c["kind"] == "valid"][1::5]
    kinds = {c["kind"] for c in picked}
    assert {"valid", "structural", "semantic"} <= kinds and len(picked) > 10
    for c in picked:
        file = os.path.join(folder, c["file"])
        dec = s.ask("decode", file=file)
        val = s.ask("validate", file=file, input_shape=c["input_shape"])
        if c["kind"] == "structural":
            assert not dec["ok"] and where(dec) == expected(c), (case_id(c), dec)
            assert not val["ok"] and where(val) == expected(c) == where(val["problems"][0]), (case_id(c), val)
        elif c["kind"] == "semantic":
            assert dec["ok"], (case_id(c), dec)
            assert not val["ok"] and expected(c) in [where(p) for p in val["problems"]], (case_id(c), val)
            assert where(val) == where(val["problems"][0])
        else:
            assert dec["ok"] and val["ok"], (case_id(c), dec, val)
            out = tmp_path / "again.nnn"
            assert s.ask("encode", file=file, output=str(out))["ok"]
            assert out.read_bytes() == open(file, "rb").read(), case_id(c)
    checked = 0
    for c, file, x in runnable(folder, cases)[::5]:
        got = run_through(s, file, x, tmp_path)
        want = nnnkit.load(file).run(x)
        assert isinstance(got, np.ndarray) and got.dtype == np.float32, (case_id(c), got)
        assert got.tobytes() == want.tobytes() and got.shape == want.shape, case_id(c)
        checked += 1
    assert checked >= 5
    assert s.close() == 0 and s.stderr() == ""


def test_package_testee_answers_bad_lines_and_goes_on(manifest, session, tmp_path):
    folder, cases = manifest
    valid = next(c for c in cases if c["kind"] == "valid")
    file = os.path.join(folder, valid["file"])
    s = session("-m", "nnnkit.testee")
    bad = [  # (line, the id the answer must carry)
        (b"this is not JSON", None),
        (b"[1, 2, 3]", None),
        (b'{"op": "decode", "file": "/x.nnn"}', None),
        (b'{"id": true, "op": "hello"}', None),
        (b'{"id": "7", "op": "hello"}', None),
        (b"\xff\xfe{}", None),
        (b'{"id": 41, "op": "frobnicate"}', 41),
        (b'{"id": 42, "op": "decode"}', 42),
        (b'{"id": 43, "op": "encode", "file": 5, "output": "/tmp/x"}', 43),
        (json.dumps({"id": 44, "op": "validate", "file": file, "input_shape": "1x3"}).encode(), 44),
        (json.dumps({"id": 45, "op": "hello", "protocol": 2}).encode(), 45),
    ]
    for line, rid in bad:
        a = s.line(line)
        assert (a["id"], a["ok"], a["code"]) == (rid, False, "E_USAGE"), (line, a)
        assert a["message"] and a["path"] is None and a["offset"] is None, (line, a)
    assert s.line(b'{"id": 41, "op": "frobnicate"}').get("unsupported") is True
    s.p.stdin.write(b"\n   \n")  # skipped: the next answer is the next request's
    # Failures of the op itself: named by libnnn's code, or E_IO for a file.
    missing = s.ask("decode", file=str(tmp_path / "missing.nnn"))
    assert (missing["ok"], missing["code"]) == (False, "E_IO") and missing["message"], missing
    nofolder = s.ask("encode", file=file, output=str(tmp_path / "no" / "such" / "folder.nnn"))
    assert (nofolder["ok"], nofolder["code"]) == (False, "E_IO"), nofolder
    noinput = s.ask("run", file=file, input=str(tmp_path / "none.npy"), output=str(tmp_path / "y.npy"))
    assert (noinput["ok"], noinput["code"]) == (False, "E_IO") and not (tmp_path / "y.npy").exists()
    np.save(tmp_path / "f64.npy", np.zeros(valid["input_shape"]))
    f64 = s.ask("run", file=file, input=str(tmp_path / "f64.npy"), output=str(tmp_path / "y.npy"))
    assert (f64["ok"], f64["code"]) == (False, "E_USAGE") and "float32" in f64["message"]
    wrong = np.zeros([d + 1 for d in valid["input_shape"]], np.float32)
    with pytest.raises(nnnkit.Error) as e:
        nnnkit.load(file).run(wrong)
    got = run_through(s, file, wrong, tmp_path)
    assert isinstance(got, dict) and where(got) == (e.value.code, e.value.path or "", e.value.offset), got
    # Still serving, and the end of its input ends it with 0.
    assert s.ask("hello", protocol=1)["ok"]
    assert s.close() == 0 and s.stderr() == ""  # each answered on purpose, none by the catch-all


def test_package_testee_loads_plugins(poolswish, session, tmp_path):
    """--plugin FILE: a plugin's layers decode, validate, re-encode and run as Model.run does."""
    m = nnnkit.Model.from_layers(pool_layers(), plugins=[poolswish])
    file = str(tmp_path / "pool.nnn")
    m.save(file)
    x = np.random.default_rng(1).standard_normal((2, 5, 4, 2)).astype(np.float32)
    without = session("-m", "nnnkit.testee")
    assert not without.ask("decode", file=file)["ok"]
    s = session("-m", "nnnkit.testee", "--plugin", poolswish)
    assert s.ask("decode", file=file)["ok"] and s.ask("validate", file=file, input_shape=list(x.shape))["ok"]
    assert s.ask("encode", file=file, output=str(tmp_path / "again.nnn"))["ok"]
    assert (tmp_path / "again.nnn").read_bytes() == m.encode()
    assert run_through(s, file, x, tmp_path).tobytes() == m.run(x).tobytes()
    broken = session(BROKEN, "--bug", "none", "--plugin", poolswish)
    a = run_through(broken, file, x, tmp_path)
    assert isinstance(a, dict) and a["ok"] is False and a["unsupported"] is True, a
    assert "maxpool" in a["message"], a
    assert s.close() == 0 and broken.close() == 0


# ---- the broken testee ----

def test_broken_testee_without_a_bug_runs_every_valid_case_as_model_run(manifest, session, tmp_path):
    """Its forward pass is right: so the one bug a run injects is the only one."""
    folder, cases = manifest
    s = session(BROKEN, "--bug", "none")
    hello = s.ask("hello", protocol=1)
    assert hello["ok"] and sorted(hello["ops"]) == ["decode", "encode", "run", "validate"]
    cases = broken_can_run(folder, cases)
    wrong = []
    for c, file, x in cases:
        got, want = run_through(s, file, x, tmp_path), nnnkit.load(file).run(x)
        if not close_enough(got, want):
            wrong.append(f"{case_id(c)}: {got if isinstance(got, dict) else np.max(np.abs(got - want))}")
    assert not wrong, f"{len(wrong)} of {len(cases)} differ from Model.run:\n" + "\n".join(wrong)
    assert len(cases) >= 40
    assert s.close() == 0 and s.stderr() == ""


def layers_of(file):
    return nnnkit.load(file).layers


def test_softmax_bug_overflows_on_large_logits_only(manifest, session, tmp_path):
    """Each valid case ending in Softmax: right on small inputs; on inputs
    of ten thousand (one sign or the other gives a logit past float32's
    exp range) the naive form gives NaN where the right one does not."""
    folder, cases = manifest
    # (the kit's large-logit cases overflow whatever the input: tests/kit/test_kit.py)
    softmax = [(c, f, x) for c, f, x in broken_can_run(folder, cases) if layers_of(f)
               and layers_of(f)[-1].activation.id == "softmax" and not case_id(c).startswith("valid/large-logits")]
    assert softmax
    bug, none = session(BROKEN, "--bug", "softmax"), session(BROKEN, "--bug", "none")
    for c, file, x in softmax:
        small = x / max(1, float(np.abs(x).max()))
        assert close_enough(run_through(bug, file, small, tmp_path), nnnkit.load(file).run(small)), case_id(c)
        caught = 0
        for large in (1e4 * x, -1e4 * x):
            want = nnnkit.load(file).run(large)
            assert not np.isnan(want).any() and close_enough(run_through(none, file, large, tmp_path), want)
            got = run_through(bug, file, large, tmp_path)
            caught += bool(np.isnan(got).any())
        assert caught, case_id(c)
    assert bug.close() == 0 and none.close() == 0


def test_same_padding_bug_differs_where_before_and_after_differ(manifest, session, tmp_path):
    folder, cases = manifest

    def lopsided(layers):
        return any(L.id == "conv" and L.padding_type == "same" and
                   any(a != b for a, b in zip(L.padding_dims[0::2], L.padding_dims[1::2])) for L in layers)
    found = {case_id(c): (f, x, lopsided(layers_of(f))) for c, f, x in broken_can_run(folder, cases)}
    assert sum(v[2] for v in found.values()) >= 2 and not all(v[2] for v in found.values())
    bug = session(BROKEN, "--bug", "same-padding")
    differ = []
    for cid, (file, x, swapped) in found.items():
        if not close_enough(run_through(bug, file, x, tmp_path), nnnkit.load(file).run(x)):
            differ.append(cid)
    # Every difference is a lopsided case; most of those show (one whose
    # filters are all alike and end in Softmax cannot).
    assert differ and all(found[cid][2] for cid in differ), differ
    assert len(differ) * 2 > sum(v[2] for v in found.values()), differ
    assert bug.close() == 0


def test_trailing_bug_ignores_trailing_bytes_only(manifest, session):
    """Every E_TRAILING case: decode accepts it, validate reports its other
    problems (none: accepted); every other structural code is still refused."""
    folder, cases = manifest
    trailing = [c for c in cases if c["code"] == "E_TRAILING"]
    others = one_per_kind(c for c in cases if c["kind"] == "structural" and c["code"] != "E_TRAILING")
    assert trailing and len(others) > 5
    bug, none = session(BROKEN, "--bug", "trailing"), session(BROKEN, "--bug", "none")
    accepted = 0
    for c in trailing:
        file = os.path.join(folder, c["file"])
        assert bug.ask("decode", file=file)["ok"], case_id(c)
        assert where(none.ask("decode", file=file)) == expected(c), case_id(c)
        strict = none.ask("validate", file=file)
        assert where(strict) == expected(c), case_id(c)
        rest = [p for p in strict["problems"] if p["code"] != "E_TRAILING"]
        lenient = bug.ask("validate", file=file)
        assert lenient["ok"] == (not rest) and lenient.get("problems", []) == rest, case_id(c)
        accepted += lenient["ok"]
    assert accepted >= 1
    for c in others:
        file = os.path.join(folder, c["file"])
        for op in ("decode", "validate"):
            assert where(bug.ask(op, file=file)) == expected(c), (op, case_id(c))
    assert bug.close() == 0 and none.close() == 0
