"""The kit's standalone runner (conformance/nnn_conformance.py), run as a user
runs it, against fake testees (oracle_testee.py, with faults switched on) over
a tiny kit written here: its five cases give, per docs/conformance.md's
checks, 13 required checks (valid/alpha: decode, verdict, roundtrip, run;
valid/beta: no run; three invalid cases: decode, verdict) and 3 recommended
(error, one per invalid case). Then one run over the generated kit, when
there is one. `/usr/bin/python3 -m pytest -q tests/kit`."""

import contextlib
import html
import importlib.util
import io
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
RUNNER = os.path.join(ROOT, "conformance", "nnn_conformance.py")
ORACLE = os.path.join(HERE, "oracle_testee.py")
BUILD = os.path.abspath(os.environ.get("NNN_BUILD") or os.path.join(ROOT, "build"))
HOSTILE = "invalid/<img src=x onerror=alert(1)>&\"q'"


def case(cid, family, kind, code, path=None, offset=None, run=None, shape=None):
    return {"id": cid, "family": family, "expect": "accept" if kind == "valid" else "reject", "kind": kind,
            "code": code, "number": 0, "path": path, "offset": offset, "input_shape": shape,
            "tests": "a test case", "run": run, "run_why": None if run else "not runnable"}


def write_kit(folder, hostile=False):
    """Five cases: two valid (one runnable, with a NaN expected), three invalid."""
    out = np.array([[0.5, -1.25, np.nan, 3.0], [1e3, 0.0, -2.5, 7.0]], np.float32)
    run = {"input": "io/alpha.in.npy", "output": "io/alpha.out.npy", "tolerance": 1e-5}
    cases = [case("valid/alpha", "valid", "valid", "OK", run=run, shape=[2, 3]),
             case("valid/beta", "valid", "valid", "OK", shape=[1, 2]),
             case("invalid/trailing-0", "trailing", "structural", "E_A", "", 9),
             case("invalid/truncation-3", "truncation", "structural", "E_B", "layers[0].weights", 3),
             case(HOSTILE if hostile else "invalid/semantic-x", "semantic", "semantic", "E_C",
                  "param_count", 12)]
    for sub in ("valid", "invalid", "io"):
        os.makedirs(os.path.join(folder, sub), exist_ok=True)
    for i, c in enumerate(cases):
        c["file"] = f"{c['id'].split('/')[0]}/case{i}.nnn"
        with open(os.path.join(folder, c["file"]), "wb") as f:
            f.write(bytes(range(i, i + 40)))
    np.save(os.path.join(folder, run["input"]), np.ones((2, 3), np.float32))
    np.save(os.path.join(folder, run["output"]), out)
    manifest = {"kit": {"format": 1, "version": "9.9.9", "protocol": 1},
                "schema": {"name": "nnn", "version": 1, "hash": "sha256:00", "generator": "test"},
                "cases": cases}
    with open(os.path.join(folder, "manifest.json"), "w") as f:
        json.dump(manifest, f)
    return folder


@pytest.fixture
def kit(tmp_path):
    return write_kit(str(tmp_path / "kit"))


def oracle(kit, *faults, prefix=""):
    return prefix + shlex.join([sys.executable, ORACLE, "--kit", kit, *faults])


def load_runner():
    """The runner as a module, leaving no byte code beside it (conformance/ ships as is)."""
    spec = importlib.util.spec_from_file_location("nnn_conformance", RUNNER)
    mod = importlib.util.module_from_spec(spec)
    keep, sys.dont_write_bytecode = sys.dont_write_bytecode, True
    try:
        spec.loader.exec_module(mod)
    finally:
        sys.dont_write_bytecode = keep
    return mod


RUNNER_MODULE = load_runner()


def run(kit, testee, *opts, json_out=True):
    """Runs the runner (in this process: a process per run would cost more
    than the run, in NumPy's import); returns (exit status, stdout + stderr,
    results or None). main() sets SIGINT and SIGTERM handlers: put back after."""
    handlers = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    out = io.StringIO()
    with tempfile.TemporaryDirectory() as d:
        res = os.path.join(d, "results.json")
        args = ["run", "--kit", kit, "--testee", testee, "--timeout", "5", *opts] + \
            (["--json", res] if json_out else [])
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
                rc = RUNNER_MODULE.main(args)
        except SystemExit as e:  # argparse's usage errors
            rc = e.code
        finally:
            for s, h in handlers.items():
                signal.signal(s, h)
        data = json.load(open(res)) if json_out and os.path.exists(res) else None
    return rc, out.getvalue(), data


def bad(results):
    """{(case id, check, result)} of every check that did not pass."""
    return {(c["id"], k, r["result"]) for c in results["cases"]
            for k, r in c["checks"].items() if r["result"] != "pass"}


def test_the_oracle_scores_100_percent(kit, tmp_path, monkeypatch):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    rc, out, res = run(kit, oracle(kit))
    assert rc == 0, out
    assert res["levels"] == {"required": {"passed": 13, "failed": 0, "total": 13},
                             "recommended": {"passed": 3, "failed": 0, "total": 3}}
    assert res["families"]["valid"]["required"]["total"] == 7
    assert res["families"]["trailing"] == {"required": {"passed": 2, "failed": 0, "total": 2},
                                           "recommended": {"passed": 1, "failed": 0, "total": 1}}
    assert [c["id"] for c in res["cases"]] == ["valid/alpha", "valid/beta", "invalid/trailing-0",
                                               "invalid/truncation-3", "invalid/semantic-x"]
    assert list(res["cases"][0]["checks"]) == ["decode", "verdict", "roundtrip", "run"]
    assert res["ok"] and res["unexpected_failures"] == [] and res["unexpected_passes"] == []
    assert res["testee"]["name"] == "oracle" and res["testee"]["ops"][-1] == "run"
    assert res["kit"]["version"] == "9.9.9"
    assert "13/13" in out and "100.0%" in out and out.rstrip().splitlines()[-1].startswith("PASS")
    assert os.listdir(tmp) == [], "the runner's temp folder was left behind"


FAULTS = [
    (["--wrong-code", "invalid/truncation-3"], {("invalid/truncation-3", "error", "fail")},
     "reported E_WRONG at 'layers[0].weights', offset 3 first; expected E_B"),
    (["--wrong-offset", "invalid/semantic-x"], {("invalid/semantic-x", "error", "fail")},
     "validate reported E_C at 'param_count', offset 13; expected E_C at 'param_count', offset 12 "
     "among them"),
    (["--wrong-encode", "valid/beta"], {("valid/beta", "roundtrip", "fail")},
     "encode wrote 40 bytes, the case has 40: first difference at offset 5 (wrote 0xf9, "
     "expected 0x06)"),
    (["--accept-trailing"], {("invalid/trailing-0", "decode", "fail"),
                             ("invalid/trailing-0", "verdict", "fail"),
                             ("invalid/trailing-0", "error", "fail")},
     "decode accepted the file; expected it refused with E_A at '', offset 9"),
    (["--wrong-output", "valid/alpha"], {("valid/alpha", "run", "fail")},
     "1 of 8 values out of tolerance 1e-05; max abs error 1; first at index [1, 3]: got 8.0"),
    (["--crash-on", "invalid/semantic-x:validate"], {("invalid/semantic-x", "verdict", "crashed"),
                                                    ("invalid/semantic-x", "error", "crashed")},
     "exited with status 3"),
    (["--garbage-on", "valid/beta:decode"], {("valid/beta", "decode", "protocol")},
     "'this is not JSON': not one JSON object"),
    (["--wrong-id-on", "valid/beta:validate"], {("valid/beta", "verdict", "protocol")},
     "expected a JSON object with \"id\""),
    (["--no-run"], {("valid/alpha", "run", "fail")}, "the testee does not offer `run`"),
]


@pytest.mark.parametrize("fault,expect,why", FAULTS, ids=[f[0][0] for f in FAULTS])
def test_each_fault_is_caught_and_named(kit, fault, expect, why):
    rc, out, res = run(kit, oracle(kit, *fault))
    assert rc == 1, out
    assert bad(res) == expect
    # one unexpected failure per failing check, in the order they are made
    order = ["decode", "verdict", "roundtrip", "run", "error"]
    uf = res["unexpected_failures"]
    assert [(u["id"], u["check"], u["result"]) for u in uf] == sorted(expect, key=lambda e: order.index(e[1]))
    first = (uf[0]["id"], uf[0]["check"], uf[0]["result"])
    assert why in uf[0]["why"], uf[0]["why"]
    assert f"  {first[0]}  {first[1]}: {first[2]}: " in out and why in out, out
    assert not res["ok"] and out.rstrip().splitlines()[-1].startswith("FAIL")


def test_compare_by_hand():
    compare = RUNNER_MODULE.compare
    f = lambda *v: np.array(v, np.float32)
    assert compare(f(1000.0, np.nan, np.inf), f(1000.009, np.nan, np.inf), 1e-5) is None
    assert compare(f(0.0, 1.0), f(0.0, 1.0 + 3e-5), 1e-5) == \
        ("1 of 2 values out of tolerance 1e-05; max abs error 3.00407e-05; first at index [1]: "
         "got 1.0, expected 1.0000300407409668")
    assert "first at index [0]: got 0.0, expected nan" in compare(f(0.0, 1.0), f(np.nan, 1.0), 1e-5)
    assert "first at index [1]: got nan, expected 1.0" in compare(f(0.0, np.nan), f(0.0, 1.0), 1e-5)
    assert compare(f(1.0).reshape(1, 1), f(1.0), 1e-5) == "output shape [1, 1], expected [1]"
    assert compare(np.ones(1), f(1.0), 1e-5) == "output dtype float64, expected float32"
    assert RUNNER_MODULE.first_difference(b"abc", b"abcd") == 3
    assert RUNNER_MODULE.first_difference(b"abc", b"abd") == 2


def test_a_crashed_testee_is_restarted_and_its_stderr_shown(kit):
    rc, out, res = run(kit, oracle(kit, "--crash-on", "invalid/trailing-0"))
    # every request of the case crashes it; every other case passes, on a new testee each time
    assert bad(res) == {("invalid/trailing-0", k, "crashed") for k in ("decode", "verdict", "error")}
    assert "stderr| oracle: crashing on invalid/trailing-0 decode" in out
    assert "oracle: crashing on invalid/trailing-0 validate" in res["cases"][2]["checks"]["verdict"]["why"]


def alive(pid):
    """Whether the process exists and is not a zombie (a zombie's reaper may be slow in a container)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def group_members(pgids):
    found = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[0] != "Z" and int(fields[2]) in pgids:
                found.append(int(d))
    return found


def hanging_with_children(kit, tmp_path, *faults):
    """A testee that starts two sleeping children first, recording their pids and its pgid."""
    pids, pg = tmp_path / "pids", tmp_path / "pgids"
    prefix = (f"echo $$ >> {pg}; sleep 300 & echo $! >> {pids}; sleep 300 & echo $! >> {pids}; "
              "exec ")
    return oracle(kit, *faults, prefix=prefix), pids, pg


def test_a_hanging_testee_is_killed_whole_and_the_run_goes_on(kit, tmp_path):
    testee, pids, pg = hanging_with_children(kit, tmp_path, "--hang-on", "invalid/truncation-3:decode")
    start = time.monotonic()
    rc, out, res = run(kit, testee, "--timeout", "1.5")
    assert time.monotonic() - start < 20
    assert bad(res) == {("invalid/truncation-3", "decode", "timeout"),
                        ("invalid/truncation-3", "error", "timeout")}
    assert "did not answer within 1.5 s" in res["cases"][3]["checks"]["decode"]["why"]
    assert "oracle: hanging on invalid/truncation-3 decode" in out
    children = [int(p) for p in pids.read_text().split()]
    groups = {int(p) for p in pg.read_text().split()}
    assert len(children) == 4 and len(groups) == 2, "expected the testee started twice"
    assert [p for p in children if alive(p)] == []
    assert group_members(groups) == []


def test_sigterm_kills_the_testee_group_and_cleans_up(kit, tmp_path):
    testee, pids, pg = hanging_with_children(kit, tmp_path, "--hang-on", "valid/alpha:decode")
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    p = subprocess.Popen([sys.executable, RUNNER, "run", "--kit", kit, "--testee", testee,
                          "--timeout", "60"], env=dict(os.environ, TMPDIR=str(tmp)),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    end = time.monotonic() + 10
    while time.monotonic() < end and not (pids.exists() and len(pids.read_text().split()) == 2):
        time.sleep(0.05)
    time.sleep(0.3)
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=20)
    assert p.returncode == 128 + signal.SIGTERM, err
    assert "interrupted by SIGTERM" in err
    assert group_members({int(x) for x in pg.read_text().split()}) == []
    assert [x for x in pids.read_text().split() if alive(int(x))] == []
    assert os.listdir(tmp) == []


def write(path, text):
    with open(path, "w") as f:
        f.write(text)
    return str(path)


def test_a_listed_failing_case_passes_the_run(kit, tmp_path):
    kf = write(tmp_path / "known", "# ours\ninvalid/trailing-0   # we accept trailing bytes\n\n")
    rc, out, res = run(kit, oracle(kit, "--accept-trailing"), "--known-failures", kf)
    assert rc == 0, out
    assert res["ok"] and res["cases"][2]["known"] == "we accept trailing bytes"
    assert res["levels"]["required"]["passed"] == 11  # the scores still count it as failed
    assert "known failures: 1 failing as listed" in out


def test_a_listed_case_that_passes_fails_the_run(kit, tmp_path):
    kf = write(tmp_path / "known", "valid/beta  # was broken\n")
    rc, out, res = run(kit, oracle(kit), "--known-failures", kf)
    assert rc == 1, out
    assert res["unexpected_passes"] == [{"id": "valid/beta", "known": "was broken"}]
    assert "valid/beta  listed as a known failure, and passes: remove it" in out


def test_a_list_for_another_kit_is_a_usage_error(kit, tmp_path):
    kf = write(tmp_path / "known", "valid/beta  # was broken\ninvalid/gone  # removed case\n")
    rc, out, _ = run(kit, oracle(kit), "--known-failures", kf)
    assert rc == 2 and "'invalid/gone' is no case of this kit" in out and "--fix" in out, out


def test_fix_rewrites_the_list_keeping_reasons(kit, tmp_path):
    kf = write(tmp_path / "known", "# header kept\n\ninvalid/trailing-0  # our reason\n"
               "valid/beta  # stale\ninvalid/gone  # removed case\n")
    testee = oracle(kit, "--accept-trailing", "--wrong-code", "invalid/truncation-3")
    rc, out, res = run(kit, testee, "--known-failures", kf, "--fix")
    # judged against the list as it was: the new failure and the stale entry
    assert rc == 1, out
    assert [u["id"] for u in res["unexpected_failures"]] == ["invalid/truncation-3"]
    assert res["unexpected_passes"] == [{"id": "valid/beta", "known": "stale"}]
    assert "1 added, 2 removed" in out
    lines = open(kf).read().splitlines()
    assert lines[:3] == ["# header kept", "", "invalid/trailing-0  # our reason"]
    assert lines[3].startswith("invalid/truncation-3  # error: fail: validate reported E_WRONG")
    assert len(lines) == 4
    rc, out, _ = run(kit, testee, "--known-failures", kf)
    assert rc == 0, out
    # a new list: --fix writes it
    new = str(tmp_path / "new")
    rc, out, _ = run(kit, testee, "--known-failures", new, "--fix")
    assert rc == 1 and [l.split()[0] for l in open(new) if not l.startswith("#")] == \
        ["invalid/trailing-0", "invalid/truncation-3"]
    rc, out, _ = run(kit, testee, "--known-failures", new)
    assert rc == 0, out


def test_level_required_ignores_recommended_checks(kit, tmp_path):
    testee = oracle(kit, "--wrong-code", "invalid/truncation-3")
    rc, out, res = run(kit, testee, "--level", "required")
    assert rc == 0, out
    assert res["levels"]["recommended"] == {"passed": 2, "failed": 1, "total": 3}
    assert res["level"] == "required" and res["ok"]
    # and for the list: a case failing only a recommended check passes at this level
    kf = write(tmp_path / "known", "invalid/truncation-3  # wrong code\n")
    rc, out, res = run(kit, testee, "--level", "required", "--known-failures", kf)
    assert rc == 1 and [u["id"] for u in res["unexpected_passes"]] == ["invalid/truncation-3"]
    rc, _, _ = run(kit, testee, "--known-failures", kf)
    assert rc == 0


def test_only_and_the_default_kit_folder(kit):
    shutil.copy(RUNNER, kit)  # as shipped: the kit is the script's folder
    p = subprocess.run([sys.executable, os.path.join(kit, "nnn_conformance.py"), "run", "--testee",
                        oracle(kit, "--accept-trailing"), "--only", "valid/*", "--only", "*-3"],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "9/9" in p.stdout  # alpha 4, beta 3, truncation-3 2


USAGE = [
    (["--kit", "/nonexistent"], "--kit /nonexistent: cannot read manifest.json"),
    (["--known-failures", "/nonexistent/list"], "--known-failures /nonexistent/list: no such file"),
    (["--fix"], "--fix: rewrites the --known-failures FILE"),
    (["--only", "nothing/*"], "--only nothing/*: matches no case id"),
    (["--timeout", "0"], "--timeout 0: give a positive number"),
    (["--level", "optional"], "invalid choice: 'optional'"),
]


@pytest.mark.parametrize("opts,message", USAGE, ids=[u[0][0] for u in USAGE])
def test_usage_errors_exit_2_and_say_which(kit, opts, message):
    rc, out, _ = run(kit, oracle(kit), *opts, json_out=False)
    assert rc == 2 and message in out, out


@pytest.mark.parametrize("testee,message", [
    ("exit 1", "(exited with status 1)"),
    ("echo '{\"id\": 1, \"ok\": true, \"protocol\": 2, \"ops\": []}'; cat >/dev/null",
     "the testee speaks protocol 2, this runner 1"),
])
def test_an_unusable_testee_exits_2(kit, testee, message):
    rc, out, _ = run(kit, testee, json_out=False)
    assert rc == 2 and "--testee" in out and message in out, out


def test_a_bad_kit_exits_2(tmp_path):
    kit = str(tmp_path)
    write(tmp_path / "manifest.json", json.dumps({"cases": []}))
    rc, out, _ = run(kit, "true", json_out=False)
    assert rc == 2 and "no \"kit\" entry" in out


def test_the_matrix_page(tmp_path):
    kit = write_kit(str(tmp_path / "kit"), hostile=True)
    a = os.path.join(kit, "a.json")
    b = os.path.join(kit, "b.json")
    run(kit, oracle(kit, "--name", "good<i>"), "--json", a, json_out=False)
    run(kit, oracle(kit, "--accept-trailing", "--crash-on", "valid/beta:encode"), "--json", b,
        json_out=False)
    page_path = str(tmp_path / "m.html")
    p = subprocess.run([sys.executable, RUNNER, "matrix", a, b, "-o", page_path],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    page = open(page_path).read()
    assert HOSTILE not in page and "<i>" not in page
    assert page.count('<tr class="case"') == 5
    ids = [c["id"] for c in json.load(open(a))["cases"]]
    for cid in ids:
        assert f"<td>{html.escape(cid)}</td>" in page
    assert "<th>good&lt;i&gt; 1.0<br>" in page
    assert "<td>13/13 (100.0%)</td><td>10/13 (76.9%)</td>" in page  # summary, required
    fam = page.split('<tr class="fam"><th>trailing (1)</th>')[1].split("</tr>")[0]
    assert fam == "\n<td>req. 2/2 (100.0%) &middot; rec. 1/1 (100.0%)</td>\n" \
                  "<td>req. 0/2 (0.0%) &middot; rec. 0/1 (0.0%)</td>\n"
    row = page.split('data-id="invalid/trailing-0"')[1].split("</tr>")[0]
    assert '<td class="pass"' in row and '<td class="fail" title="decode: fail: decode accepted' in row
    row = page.split('data-id="valid/beta"')[1].split("</tr>")[0]
    assert '<td class="broken" title="roundtrip: crashed: the testee closed its stdout' in row
    assert "http://" not in page and "https://" not in page and "<link" not in page


def test_the_matrix_refuses_a_file_that_is_not_results(tmp_path):
    bad_file = write(tmp_path / "x.json", "{}")
    p = subprocess.run([sys.executable, RUNNER, "matrix", bad_file, "-o", str(tmp_path / "m.html")],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and f"{bad_file}: not a results file" in p.stderr


def test_the_generated_kit_scores_the_oracle_100_percent():
    """Over build/conformance (make conformance), with the totals the contract's
    checks table gives from the manifest."""
    folder = os.path.join(BUILD, "conformance")
    try:
        manifest = json.load(open(os.path.join(folder, "manifest.json")))
    except OSError:
        pytest.skip(f"no kit at {folder}: run make conformance")
    if "kit" not in manifest:
        pytest.skip(f"{folder}/manifest.json has no \"kit\" entry yet (the kit's manifest "
                    "comes with make conformance-kit's branch)")
    cases = manifest["cases"]
    valid = [c for c in cases if c["expect"] == "accept"]
    required = 2 * len(cases) + len(valid) + sum(1 for c in valid if c.get("run"))
    rc, out, res = run(folder, oracle(folder))
    assert rc == 0, out
    assert res["levels"]["required"] == {"passed": required, "failed": 0, "total": required}
    n = len(cases) - len(valid)
    assert res["levels"]["recommended"] == {"passed": n, "failed": 0, "total": n}
    assert set(res["families"]) == {c["family"] for c in cases}
