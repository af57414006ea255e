#!/usr/bin/python3
"""onnx_goldens.py: scores nnnkit's ONNX import and run against the backend tests of ONNX
(Debian's libonnx-testdata: per test a model.onnx and test_data_set_*/input_*.pb, output_*.pb):
its `node` folder (a test per op and attribute) and `pytorch-converted` (PyTorch's layers as
PyTorch exported them).

  onnx_goldens.py [--nnnkit PATH] [--data DIR] [--set NAME].. [--markdown FILE] [--json FILE]
                  [--doc docs/onnx.md] [--quiet]

Every test whose every node's op nnnkit's import maps (the ops nnnkit lists when it refuses one;
the other tests are counted only) is converted (`nnnkit convert model.onnx m.nnn`), and when that
imports, each data set's inputs are run (`nnnkit run m.nnn --input x.npy -o y.npy`) and compared
with the expected outputs at the tolerance of ONNX's backend tests (numpy.testing.assert_allclose
with rtol 1e-3, atol 1e-7; NaN equals NaN). A channels-first graph is fed and read as nnnkit's
note on stderr says (its x.transpose(..) and y.transpose(..)). Each test is scored as:

  shipped   the model as ONNX ships it. Node tests take an op's weights as graph inputs (Gemm's B
            and C, Conv's W), which a .nnn model, of one input, keeps in its layers.
  frozen    the same with every graph input after the first made an initializer holding the
            test's own values (one model per data set), as a trained model holds its weights.
            Only for tests of more than one input whose others are tensors.
  upgraded  a model nnnkit refuses for its opset, converted to opset 13 by onnx.version_converter
            as nnnkit's message says (and frozen, as above, when it has more than one input).

Each score is: pass (imported, every output of every data set within tolerance), refused (nnnkit
convert exits 1 naming why), fail (imported, but run fails or an output is off), or n/a (the
variant does not apply).

--markdown writes the tables (markdown, '-' for stdout); --doc replaces, for each set, the text
between the markers "<!-- onnx_goldens SET: begin -->" and "<!-- onnx_goldens SET: end -->" of
that file with its table; --json writes the scores. Without any of them the tables are printed. --out-of-scope converts the
other tests instead and counts nnnkit's exit codes (each should be 1, a refusal).
tests/python/test_onnx_goldens.py checks that docs/onnx.md's tables are what nnnkit does now.
Exit 0, 1 when an imported test is off, 2 for a usage error or a missing tool. Run with Debian's
/usr/bin/python3 (python3-onnx, python3-numpy).
"""
import argparse
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DATA_ROOT = "/usr/share/libonnx-testdata/data"
# The folders scored by default: ONNX's node tests, and PyTorch's layers as it exported them.
SETS = ("node", "pytorch-converted")
DATA = os.path.join(DATA_ROOT, "node")
# The opset the upgraded variant converts a model nnnkit refuses for its opset to, as nnnkit's
# message says (onnx.version_converter.convert_version(m, 13)).
UPGRADE_TO = 13
RTOL, ATOL = 1e-3, 1e-7
# The line of nnnkit's refusal that lists the ops its import maps.
OPS_LINE = "the ops nnnkit converts:"


def markers(name):
    """The lines a document's table of set `name` stands between."""
    return f"<!-- onnx_goldens {name}: begin -->", f"<!-- onnx_goldens {name}: end -->"


def need():
    """onnx and numpy, or exit 2 saying what to install."""
    try:
        import numpy  # noqa: F401
        import onnx  # noqa: F401
    except ImportError as e:
        print(f"onnx_goldens: cannot import {e.name}: apt-get install python3-onnx python3-numpy", file=sys.stderr)
        sys.exit(2)


def data_sets(test_dir):
    return sorted((d for d in os.listdir(test_dir) if d.startswith("test_data_set_")),
                  key=lambda d: int(d.rsplit("_", 1)[1]))


def read_pbs(folder, kind):
    """The TensorProtos folder/kind_K.pb in K order, as arrays (None where one does not read as a
    tensor: a sequence's or an optional's, which no test nnnkit imports takes)."""
    import onnx
    from onnx import numpy_helper
    names = sorted((f for f in os.listdir(folder) if f.startswith(kind + "_") and f.endswith(".pb")),
                   key=lambda f: int(f[len(kind) + 1:-3]))
    out = []
    for f in names:
        t = onnx.TensorProto()
        try:
            with open(os.path.join(folder, f), "rb") as fh:
                t.ParseFromString(fh.read())
            out.append(numpy_helper.to_array(t))
        except Exception:  # noqa: BLE001 - whatever onnx raises for bytes that are no tensor
            out.append(None)
    return out


def graph_inputs(model):
    inits = {t.name for t in model.graph.initializer}
    return [i for i in model.graph.input if i.name not in inits]


def freeze(model, values):
    """A copy of model whose graph inputs after the first are initializers holding values."""
    import onnx
    from onnx import numpy_helper
    m = onnx.ModelProto()
    m.CopyFrom(model)
    ins = graph_inputs(m)
    for vi, v in zip(ins[1:], values):
        m.graph.initializer.append(numpy_helper.from_array(v, vi.name))
    keep = [i for i in m.graph.input if i.name == ins[0].name]
    del m.graph.input[:]
    m.graph.input.extend(keep)
    return m


def nnnkit(exe, *args):
    r = subprocess.run([exe, *args], capture_output=True, text=True)
    return r.returncode, r.stderr


def axes_after(text, what):
    """The axes of nnnkit's note 'what.transpose(a, b, ..)', or None."""
    m = re.search(re.escape(what) + r"\.transpose\(([0-9, ]+)\)", text)
    return tuple(int(a) for a in m.group(1).split(",")) if m else None


def reason_of(stderr, path):
    """nnnkit's refusal, one line per diagnostic, without 'nnnkit: PATH: ' and the trailing
    pointer to the docs every diagnostic carries."""
    lines = []
    for ln in stderr.strip().splitlines():
        ln = ln.replace(f"nnnkit: {path}: ", "")
        ln = re.sub(r" \((docs/onnx\.md lists every op and attribute nnnkit maps|the message says what to change; "
                    r"docs/onnx\.md says what nnnkit reads)\)$", "", ln)
        lines.append(ln)
    return " / ".join(lines)


def close(got, want):
    """None when got matches want at the backend tests' tolerance, else why not."""
    import numpy as np
    if got.shape != want.shape:
        return f"shape {list(got.shape)}, expected {list(want.shape)}"
    g, w = got.astype(np.float64), want.astype(np.float64)
    bad = ~((np.abs(g - w) <= ATOL + RTOL * np.abs(w)) | (np.isnan(g) & np.isnan(w)) | (g == w))
    if not bad.any():
        return None
    k = int(np.argmax(bad.ravel()))
    return (f"{int(bad.sum())} of {bad.size} values off, first at flat index {k}: {g.ravel()[k]!r}, "
            f"expected {w.ravel()[k]!r}")


def run_model(exe, onnx_path, sets, work):
    """Converts onnx_path and runs each (inputs, outputs) of sets: (score, detail)."""
    import numpy as np
    nnn = os.path.join(work, "m.nnn")
    rc, err = nnnkit(exe, "convert", onnx_path, nnn)
    if rc != 0:
        return ("refused" if rc == 1 else "fail"), reason_of(err, onnx_path)
    to_last, back = axes_after(err, "x"), axes_after(err, "y")
    for k, (ins, outs) in enumerate(sets):
        if len(outs) != 1 or outs[0] is None or ins[0] is None:
            return "fail", f"data set {k}: {len(outs)} outputs (imported a model of one)"
        x = ins[0] if to_last is None else ins[0].transpose(to_last)
        xp, yp = os.path.join(work, "x.npy"), os.path.join(work, "y.npy")
        np.save(xp, np.ascontiguousarray(x.astype(np.float32)))
        rc, rerr = nnnkit(exe, "run", nnn, "--input", xp, "-o", yp)
        if rc != 0:
            return "fail", f"data set {k}: nnnkit run exit {rc}: {reason_of(rerr, nnn)}"
        y = np.load(yp)
        why = close(y if back is None else y.transpose(back), outs[0])
        if why:
            return "fail", f"data set {k}: {why}"
    return "pass", ""


def run_frozen(exe, model, sets, work):
    """run_model of model with its inputs after the first frozen, one model per data set."""
    import onnx
    score = ("n/a", "")
    for k, (ins, outs) in enumerate(sets):
        path = os.path.join(work, f"frozen_{k}.onnx")
        onnx.save(freeze(model, ins[1:]), path)
        score = run_model(exe, path, [(ins[:1], outs)], work)
        if score[0] != "pass":
            break
    return score


def score_test(exe, test_dir, work):
    """{variant: [score, detail]} of one test (VARIANTS)."""
    import onnx
    from onnx import version_converter
    model_path = os.path.join(test_dir, "model.onnx")
    sets = [(read_pbs(os.path.join(test_dir, d), "input"), read_pbs(os.path.join(test_dir, d), "output"))
            for d in data_sets(test_dir)]
    model = onnx.load(model_path)
    many = len(graph_inputs(model)) > 1 and all(v is not None for ins, _ in sets for v in ins[1:])
    out = {"shipped": run_model(exe, model_path, sets, work),
           "frozen": run_frozen(exe, model, sets, work) if many else ("n/a", ""),
           "upgraded": ("n/a", "")}
    if out["shipped"][0] == "refused" and out["shipped"][1].startswith("opset_import:"):
        try:
            up = version_converter.convert_version(model, UPGRADE_TO)
        except Exception as e:  # noqa: BLE001 - onnx's converter, not nnnkit, failed
            out["upgraded"] = ("n/a", f"onnx.version_converter: {e}")
        else:
            path = os.path.join(work, "upgraded.onnx")
            onnx.save(up, path)
            out["upgraded"] = run_frozen(exe, up, sets, work) if many else run_model(exe, path, sets, work)
    return {v: list(r) for v, r in out.items()}


def vocabulary(exe, work):
    """The op types nnnkit's import maps, as its refusal of an unknown op lists them (asked, not
    restated here)."""
    import onnx
    from onnx import TensorProto, helper
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2])
    g = helper.make_graph([helper.make_node("NnnGoldensNoSuchOp", ["x"], ["y"])], "probe", [x], [y])
    path = os.path.join(work, "probe.onnx")
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)
    _, err = nnnkit(exe, "convert", path, os.path.join(work, "probe.nnn"))
    line = next((ln for ln in err.splitlines() if OPS_LINE in ln), None)
    if line is None:
        raise RuntimeError(f"{exe} convert did not list the ops it converts (no '{OPS_LINE}'): {err.strip()}")
    return set(re.findall(r"\b[A-Z][A-Za-z]+\b", line.split(OPS_LINE, 1)[1].split("(docs/")[0]))


def node_tests(data):
    """{test name: its graph's op types, in order} of every node test in data."""
    import onnx
    out = {}
    for t in sorted(os.listdir(data)):
        path = os.path.join(data, t, "model.onnx")
        if os.path.isfile(path):
            out[t] = [n.op_type for n in onnx.load(path, load_external_data=False).graph.node]
    return out


def score_all(exe, data, progress=None):
    """The scores: {'total': tests, 'ops': the vocabulary, 'tests': {name: {'ops': [..], variant:
    [score, detail], ..}}} for the tests in data whose every node's op is in nnnkit's vocabulary
    (the others are counted only)."""
    tests = node_tests(data)
    out = {"total": len(tests), "tests": {}}
    with tempfile.TemporaryDirectory(prefix="onnx_goldens.") as work:
        voc = vocabulary(exe, work)
        out["ops"] = sorted(voc)
        todo = [t for t, ops in tests.items() if ops and all(op in voc for op in ops)]

        def one(t):
            own = os.path.join(work, t)
            os.mkdir(own)
            return t, {"ops": tests[t], **score_test(exe, os.path.join(data, t), own)}

        # Each test in a folder of its own, a few at once: the time is nnnkit's start-up.
        with concurrent.futures.ThreadPoolExecutor(max_workers=min(4, os.cpu_count() or 1)) as pool:
            for t, r in pool.map(one, todo):
                out["tests"][t] = r
                if progress:
                    progress(t, r)
    return out


def out_of_scope(exe, data):
    """The tests of data with an op nnnkit does not map, converted: {exit code: [test, ..]} (each
    should be refused, exit 1: a crash or an import would be a bug)."""
    tests = node_tests(data)
    with tempfile.TemporaryDirectory(prefix="onnx_goldens.") as work:
        voc = vocabulary(exe, work)
        todo = [t for t, ops in tests.items() if not ops or any(op not in voc for op in ops)]

        def one(t):
            return t, nnnkit(exe, "convert", os.path.join(data, t, "model.onnx"), os.path.join(work, t + ".nnn"))[0]

        out = {}
        with concurrent.futures.ThreadPoolExecutor(max_workers=min(4, os.cpu_count() or 1)) as pool:
            for t, rc in pool.map(one, todo):
                out.setdefault(rc, []).append(t)
    return out


def data_version():
    """libonnx-testdata's version, as dpkg knows it ('' when not known)."""
    try:
        r = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "libonnx-testdata"], capture_output=True,
                           text=True)
        return r.stdout.strip() if r.returncode == 0 else ""
    except OSError:
        return ""


SCORES = ("pass", "refused", "fail", "n/a")
ROW_NAMES = {"pass": "imported and passing", "refused": "refused", "fail": "imported but failing",
             "n/a": "not applicable"}
VARIANTS = (("shipped", "as shipped"), ("frozen", "weights as initializers"),
            ("upgraded", f"opset {UPGRADE_TO} (onnx.version_converter)"))


def reason_key(why):
    """A refusal with what differs between tests of one kind (names, numbers, lists, the op) left
    out: the table numbers reasons by it."""
    why = re.sub(r"'[^']*'(, '[^']*')*(, \.\.\.)?", "'~'", why)
    why = re.sub(r"\[[^\]]*\]", "[~]", why)
    why = re.sub(r"\(([A-Z][A-Za-z]+)\)", "(~)", why)
    return re.sub(r"-?\b\d+(\.\d+)?(e[-+]?\d+)?\b", "~", why)


def markdown(res, name, version=""):
    """The table of set `name`: counts, one row per test (by op), and the reasons, numbered, each
    shown as the first test of its kind has it. A variant no test has is left out."""
    tests = res["tests"]
    rows = sorted(tests, key=lambda t: (" ".join(tests[t]["ops"]), t))
    variants = [(v, n) for v, n in VARIANTS if v == "shipped" or any(tests[t][v][0] != "n/a" for t in rows)]
    reasons = {}  # key: [number, first text, first test, count]
    for t in rows:
        for v, _ in variants:
            s, why = tests[t][v]
            if s in ("refused", "fail"):
                r = reasons.setdefault(reason_key(why), [len(reasons) + 1, why, t, 0])
                r[3] += 1

    def cell(v):
        s, why = v
        return f"{s} (R{reasons[reason_key(why)][0]})" if s in ("refused", "fail") else s

    out = [f"Scored by `tests/tools/onnx_goldens.py` on the {res['total']} tests of libonnx-testdata"
           f"{' ' + version if version else ''}'s `{name}` folder: {len(tests)} use only ops nnnkit's import maps "
           f"({', '.join(res['ops'])}); the other {res['total'] - len(tests)} have an op it does not map.", "",
           "| | " + " | ".join(n for _, n in variants) + " |", "|---|" + "---|" * len(variants)]
    for s in SCORES:
        counts = [sum(tests[t][v][0] == s for t in rows) for v, _ in variants]
        out.append(f"| {ROW_NAMES[s]} | " + " | ".join(str(c) for c in counts) + " |")
    out += ["", "| ops | test | " + " | ".join(n for _, n in variants) + " |", "|---|---|" + "---|" * len(variants)]
    for t in rows:
        out.append(f"| {' '.join(tests[t]['ops'])} | {t} | " + " | ".join(cell(tests[t][v]) for v, _ in variants)
                   + " |")
    out += ["", "The reasons, as nnnkit gives them (without `nnnkit: FILE: ` and the pointer to this page), each "
            "as the first test of its kind has it (other tests' names and numbers differ):", ""]
    for num, why, first, n in reasons.values():
        out.append(f"- R{num} ({n}; {first}): {why}")
    return "\n".join(out) + "\n"


def doc_section(path, name):
    """The text between the markers of set `name` in path, or None."""
    begin, end = markers(name)
    with open(path) as f:
        text = f.read()
    if begin not in text or end not in text:
        return None
    return text.split(begin, 1)[1].split(end, 1)[0].strip("\n") + "\n"


def write_doc(path, name, md):
    begin, end = markers(name)
    with open(path) as f:
        text = f.read()
    if begin not in text or end not in text:
        raise RuntimeError(f"{path}: no '{begin}' ... '{end}' markers to put the table of {name} between")
    head, rest = text.split(begin, 1)
    with open(path, "w") as f:
        f.write(head + begin + "\n" + md + end + rest.split(end, 1)[1])


def main(argv):
    ap = argparse.ArgumentParser(prog="onnx_goldens.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("--nnnkit", default=os.environ.get("NNNKIT") or os.path.join(ROOT, "build", "nnnkit"))
    ap.add_argument("--data", default=DATA_ROOT, help=f"libonnx-testdata's data folder (default {DATA_ROOT})")
    ap.add_argument("--set", action="append", help=f"a folder of it to score (default: {', '.join(SETS)})")
    ap.add_argument("--markdown", help="write the tables there ('-': stdout)")
    ap.add_argument("--json", help="write the scores there as JSON")
    ap.add_argument("--doc", help="put each set's table between its markers in this file (docs/onnx.md)")
    ap.add_argument("--quiet", action="store_true", help="no line per test on stderr")
    ap.add_argument("--out-of-scope", action="store_true",
                    help="only convert the tests with an op nnnkit does not map and count the exit codes "
                         "(exit 1 unless every one is refused, exit 1)")
    a = ap.parse_args(argv[1:])
    need()
    sets = a.set or list(SETS)
    for name in sets:
        if not os.path.isdir(os.path.join(a.data, name)):
            print(f"onnx_goldens: no tests at {os.path.join(a.data, name)}: apt-get install libonnx-testdata",
                  file=sys.stderr)
            return 2
    if not os.access(a.nnnkit, os.X_OK):
        print(f"onnx_goldens: {a.nnnkit} is not an executable nnnkit: build it (make) or give --nnnkit",
              file=sys.stderr)
        return 2

    if a.out_of_scope:
        odd = 0
        for name in sets:
            codes = out_of_scope(a.nnnkit, os.path.join(a.data, name))
            print(f"{name}: " + ", ".join(f"{len(ts)} exit {rc}" for rc, ts in sorted(codes.items())))
            for rc, ts in sorted(codes.items()):
                if rc != 1:
                    odd += len(ts)
                    print(f"  exit {rc}: {' '.join(ts)}")
        return 1 if odd else 0

    def say(t, r):
        if not a.quiet:
            print(f"{t}: " + ", ".join(f"{v} {r[v][0]}" for v, _ in VARIANTS), file=sys.stderr)

    res = {name: score_all(a.nnnkit, os.path.join(a.data, name), say) for name in sets}
    mds = {name: markdown(r, name, data_version()) for name, r in res.items()}
    text = "".join(f"### {name}\n\n{md}\n" for name, md in mds.items())
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1, sort_keys=True)
    if a.markdown == "-" or not (a.markdown or a.json or a.doc):
        sys.stdout.write(text)
    elif a.markdown:
        with open(a.markdown, "w") as f:
            f.write(text)
    if a.doc:
        for name, md in mds.items():
            write_doc(a.doc, name, md)
    failing = [t for r in res.values() for t, s in r["tests"].items() for v, _ in VARIANTS if s[v][0] == "fail"]
    return 1 if failing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
