"""The conformance kit as an implementer gets it (docs/conformance.md): the
tarball `make` builds, unpacked in a folder of its own and scored by its
own runner with python3 -I (no nnnkit package, no PYTHONPATH), against
every testee nnnkit ships and the deliberately broken ones; nnnkit's runner
must give the same results; the results page is drawn in Chromium.

What each testee must fail is taken from the kit's own files, not listed by
hand: the lenient reader's cases are those whose only problems (as libnnn
reports them) are the two it forgives; the broken testees' are found from
the models (a Softmax case with large logits, the trailing family, a Same
Conv whose before and after differ)."""

import glob
import json
import os
import struct
import subprocess
import sys
import tarfile
import zlib

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.path.abspath(os.environ.get("NNN_BUILD") or os.path.join(ROOT, "build"))
NNNKIT = os.path.abspath(os.environ.get("NNNKIT") or os.path.join(BUILD, "nnnkit"))
PY = "/usr/bin/python3"
PKG = f"PYTHONPATH={ROOT}/python NNN_BUILD={BUILD}"
TESTEES = {
    "libnnn": f"{NNNKIT} testee",
    "python": f"{PKG} {PY} -m nnnkit.testee",
    "lenient": f"{BUILD}/lenient --testee",
}
# What lenient forgives (tests/tools/lenient.c).
FORGIVEN = {"E_DIM_MISMATCH", "E_PARAM_COUNT"}


BUGS = ("softmax", "trailing", "same-padding", "none")


def broken(bug):
    return f"{PY} {ROOT}/tests/tools/broken_testee.py --bug {bug}"


@pytest.fixture(scope="module")
def kit(tmp_path_factory):
    """The tarball, unpacked where nothing of nnnkit is: the kit's folder."""
    tars = glob.glob(os.path.join(BUILD, "nnn-conformance-*.tar.gz"))
    if len(tars) != 1:
        pytest.fail(f"expected one kit tarball in {BUILD} (make conformance-kit), found {tars}")
    where = tmp_path_factory.mktemp("unpacked")
    with tarfile.open(tars[0]) as t:
        names = t.getnames()
        t.extractall(where)
    top = os.path.basename(tars[0])[: -len(".tar.gz")]
    assert all(n == top or n.startswith(top + "/") for n in names), "the tarball has one folder"
    folder = os.path.join(where, top)
    for f in ("manifest.json", "nnn_conformance.py", "README.md"):
        assert os.path.isfile(os.path.join(folder, f)), f
    return folder


@pytest.fixture(scope="module")
def manifest(kit):
    with open(os.path.join(kit, "manifest.json")) as f:
        m = json.load(f)
    assert m["kit"]["version"] in os.path.basename(kit)
    assert m["schema"]["hash"].startswith("sha256:") and len(m["schema"]["hash"]) == 71
    return m


def score_start(kit, testee, *args):
    """The standalone runner, as an implementer runs it, started: (process, results path)."""
    out = os.path.join(os.path.dirname(kit), f"results-{abs(hash((testee,) + args))}.json")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "NNN"))}
    p = subprocess.Popen([PY, "-I", os.path.join(kit, "nnn_conformance.py"), "run", "--testee", testee,
                          "--json", out, *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         cwd=os.path.dirname(kit), env=env)
    return p, out


def score_end(started):
    """(exit status, text, results) of a run score_start started."""
    p, out = started
    text = p.communicate(timeout=600)[0]
    return p.returncode, text, json.load(open(out)) if os.path.exists(out) else None


def score(kit, testee, *args):
    return score_end(score_start(kit, testee, *args))


@pytest.fixture(scope="module")
def results(kit):
    """Each shipped and each broken testee's results, scored once; the runs
    side by side (each is mostly one process waiting on the other)."""
    runs = dict(TESTEES, **{bug: broken(bug) for bug in BUGS})
    started = {name: score_start(kit, cmd) for name, cmd in runs.items()}
    return {name: score_end(s) for name, s in started.items()}


def failing(res):
    """{(case id, check)} of the unexpected failures."""
    return {(u["id"], u["check"]) for u in res["unexpected_failures"]}


def computed(res):
    """The broken testee's results without the runs it declines: a layer kind
    or activation its own forward pass does not know (a growth drill's)."""
    declined = lambda u: u["check"] == "run" and "not supported by this testee" in u["why"]
    return dict(res, unexpected_failures=[u for u in res["unexpected_failures"] if not declined(u)])


@pytest.mark.parametrize("name", ["libnnn", "python"])
def test_strict_testees_score_100_percent(results, manifest, name):
    rc, out, res = results[name]
    assert rc == 0, out
    for level in ("required", "recommended"):
        lv = res["levels"][level]
        assert lv["passed"] == lv["total"] > 0, (level, lv)
    assert "100.0%" in out and out.rstrip().splitlines()[-1].startswith("PASS")
    # every case was asked what the contract asks of it
    want = {c["id"]: {"decode", "verdict"} | ({"roundtrip"} | ({"run"} if c["run"] else set())
                                             if c["expect"] == "accept" else {"error"})
            for c in manifest["cases"]}
    assert {c["id"]: set(c["checks"]) for c in res["cases"]} == want
    assert sum(1 for c in manifest["cases"] if c["run"]) > 50


def test_lenient_fails_what_it_forgives(results, kit, manifest):
    """The lenient reader fails exactly the invalid cases whose every problem
    is one it forgives: in decode (a structural case refused by the strict
    decoder for those only) or in validate; --fix writes that list, and then
    the run passes."""
    sys.path.insert(0, os.path.join(ROOT, "python"))
    import nnnkit

    def decode_codes(path):
        try:
            nnnkit.load(path).close()
            return set()
        except nnnkit.FormatError as e:
            return {p.code for p in e.problems}

    forgiven = {}
    for c in manifest["cases"]:
        path = os.path.join(kit, c["file"])
        if c["kind"] == "structural" and decode_codes(path) <= FORGIVEN:
            forgiven[c["id"]] = "decode"
        if c["expect"] == "reject" and {p.code for p in nnnkit.validate(path)} <= FORGIVEN:
            forgiven[c["id"]] = "verdict"
    rc, out, res = results["lenient"]
    assert rc == 1, out
    assert forgiven and {i for i, _ in failing(res)} == set(forgiven)
    assert {(i, ch) for i, ch in forgiven.items()} <= failing(res)
    assert {ch for _, ch in failing(res)} <= {"decode", "verdict", "error"}
    listed = os.path.join(os.path.dirname(kit), "lenient.known")
    rc, out, _ = score(kit, TESTEES["lenient"], "--known-failures", listed, "--fix")
    ids = [line.split()[0] for line in open(listed) if line.strip() and not line.startswith("#")]
    assert set(ids) == set(forgiven) and len(ids) == len(forgiven)
    rc, out, res = score(kit, TESTEES["lenient"], "--known-failures", listed)
    assert rc == 0 and res["ok"], out
    assert f"known failures: {len(forgiven)} failing as listed" in out


def cases_with(manifest, kit, pred):
    """Ids of the valid cases with a run whose model the broken testee
    computes (on a grown schema, not those of the types it added) and
    satisfies pred(model)."""
    sys.path.insert(0, os.path.join(ROOT, "python"))
    sys.path.insert(0, os.path.join(ROOT, "tests", "tools"))
    import nnnkit
    from broken_testee import unsupported
    ids = set()
    for c in manifest["cases"]:
        if c["run"]:
            with nnnkit.load(os.path.join(kit, c["file"])) as m:
                if not unsupported(m) and pred(m):
                    ids.add(c["id"])
    return ids


def asymmetric_same(m):
    """A Conv with Same padding whose before and after differ on an axis."""
    return any(getattr(layer, "padding_type", None) == "same"
               and any(a != b for a, b in zip(layer.padding_dims[::2], layer.padding_dims[1::2]))
               for layer in m.layers)


@pytest.mark.parametrize("bug", BUGS[:3])
def test_each_broken_testee_is_caught_by_name(results, kit, manifest, bug):
    rc, out, res = results[bug]
    assert rc == 1, out
    for u in res["unexpected_failures"][:20]:  # named in the report (the first 20 are shown)
        assert f"  {u['id']}  {u['check']}: " in out, u["id"]
    res = computed(res)
    bad = failing(res)
    ids = {i for i, _ in bad}
    if bug == "softmax":
        # only runs fail, and among them every large-logit Softmax case
        assert {ch for _, ch in bad} == {"run"}
        large = {c["id"] for c in manifest["cases"] if c["run"] and c["id"].startswith("valid/large-logits")}
        softmax = cases_with(manifest, kit, lambda m: any(layer.activation.id == "softmax" for layer in m.layers))
        assert large & softmax and large & softmax <= ids <= softmax
        assert all("NaN" in u["why"] for u in res["unexpected_failures"])
    elif bug == "trailing":
        # every case whose strict decode stops at the trailing bytes, and only those
        trailing = {c["id"] for c in manifest["cases"] if c["code"] == "E_TRAILING"}
        assert {c["id"] for c in manifest["cases"] if c["family"] == "trailing"} <= trailing == ids
        assert {ch for _, ch in bad} <= {"decode", "verdict", "error"}
    else:
        assert {ch for _, ch in bad} == {"run"}
        assert ids and ids <= cases_with(manifest, kit, asymmetric_same)
        even = {c["id"] for c in manifest["cases"] if "same" in c["id"] and c["id"].endswith("-even")}
        assert even and even & cases_with(manifest, kit, lambda m: True) <= ids


def test_broken_testee_without_a_bug_passes(results):
    """So what the three above catch is their bug, not the testee (on a
    grown schema, it may decline to run the types it does not know)."""
    rc, out, res = results["none"]
    assert not computed(res)["unexpected_failures"] and not res["unexpected_passes"], out


def test_nnnkit_runner_gives_the_same_results(results, kit):
    """nnnkit conformance --testee over the same kit: the same checks, the
    same scores, the same unexpected failures, for a testee that passes and
    for one that fails."""
    for name in ("libnnn", "lenient"):
        out = os.path.join(os.path.dirname(kit), f"nnnkit-{name}.json")
        p = subprocess.run([NNNKIT, "conformance", "--corpus", kit, "--testee", TESTEES[name], "--results", out,
                            "--no-progress"], capture_output=True, text=True, timeout=600)
        mine, theirs = json.load(open(out)), results[name][2]
        assert p.returncode == results[name][0], p.stdout + p.stderr
        assert (mine["runner"], theirs["runner"]) == ("nnnkit conformance", "nnn_conformance.py")
        for key in ("kit", "schema", "testee", "level", "levels", "families", "ok", "unexpected_passes"):
            assert mine[key] == theirs[key], key
        results_of = lambda r: [(c["id"], c["family"], c["known"], {k: v["result"] for k, v in c["checks"].items()})
                                for c in r["cases"]]
        assert results_of(mine) == results_of(theirs)
        assert [(u["id"], u["check"], u["result"]) for u in mine["unexpected_failures"]] == \
            [(u["id"], u["check"], u["result"]) for u in theirs["unexpected_failures"]]


def png_pixels(path):
    """(width, height, rows of RGB(A) bytes) of an 8-bit RGB or RGBA PNG."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, ihdr = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    w, h, depth, colour = ihdr[:4]
    assert depth == 8 and colour in (2, 6), ihdr
    bpp = 3 if colour == 2 else 4
    raw, rows, prev = zlib.decompress(idat), [], bytearray(w * bpp)
    for y in range(h):
        f, line = raw[y * (w * bpp + 1)], bytearray(raw[y * (w * bpp + 1) + 1:(y + 1) * (w * bpp + 1)])
        for i in range(len(line)):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return w, h, bpp, rows


def test_matrix_page_in_chromium(results, kit, manifest, tmp_path):
    """The results of four testees on one page: every case a row, the page
    self-contained, and drawn by headless Chromium with passing and failing
    cells both on screen."""
    files = []
    for name in ("libnnn", "python", "lenient"):
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(results[name][2]))
        files.append(str(path))
    (tmp_path / "softmax.json").write_text(json.dumps(results["softmax"][2]))
    files.append(str(tmp_path / "softmax.json"))
    page = tmp_path / "matrix.html"
    p = subprocess.run([PY, "-I", os.path.join(kit, "nnn_conformance.py"), "matrix", *files, "-o", str(page)],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    html = page.read_text()
    assert "http://" not in html and "https://" not in html and "<link" not in html
    for c in manifest["cases"]:
        assert c["id"] in html, c["id"]
    chromium = subprocess.run(["sh", "-c", "command -v chromium"], capture_output=True, text=True).stdout.strip()
    if not chromium:
        pytest.skip("chromium is not installed (apt-get install chromium, or make deps): the page was not drawn")
    shot = tmp_path / "matrix.png"
    dom = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom",
                          f"file://{page}"], capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0 and dom.stdout.count("<tr") >= len(manifest["cases"]), dom.stderr[-2000:]
    p = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                        f"--screenshot={shot}", "--window-size=1280,1600", f"file://{page}"],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and shot.exists(), p.stderr[-2000:]
    w, h, bpp, rows = png_pixels(shot)
    assert (w, h) == (1280, 1600)
    # the verdicts of the summary, above the legend: a passing testee's cell and a failing one's
    rows = rows[:700]
    colours = {row[i:i + 3] for row in rows[::4] for i in range(0, w * bpp, 4 * bpp)}
    greenish = [c for c in colours if c[1] > c[0] + 20 and c[1] > c[2] + 20]
    reddish = [c for c in colours if c[0] > c[1] + 30 and c[0] > c[2] + 30]
    assert len(colours) > 8 and greenish and reddish, sorted(colours)[:40]
