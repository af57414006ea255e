"""ONNX's own backend tests (Debian's libonnx-testdata: its node tests and PyTorch's converted
layers) through nnnkit's ONNX import and run, scored by tests/tools/onnx_goldens.py: every test
whose ops nnnkit maps is converted, run and compared with ONNX's expected outputs (rtol 1e-3,
atol 1e-7), as shipped, with its weights made initializers, and at opset 13. The tables in
docs/onnx.md ("ONNX's own node tests") must be what the scorer finds now: a passing test that
fails, a refused one that imports, or a refusal whose message changed fails here, so the tables
never go stale. Skipped when libonnx-testdata is not installed."""

import difflib
import os
import sys

import pytest

from conftest import NNNKIT, ROOT

np = pytest.importorskip("numpy")
pytest.importorskip("onnx", reason="python3-onnx is not installed: the ONNX node tests need it")
sys.path.insert(0, os.path.join(ROOT, "tests", "tools"))
import onnx_goldens as og  # noqa: E402

DOC = os.path.join(ROOT, "docs", "onnx.md")
REGEN = "/usr/bin/python3 tests/tools/onnx_goldens.py --doc docs/onnx.md"


@pytest.fixture(scope="module")
def data():
    if not os.path.isdir(og.DATA):
        pytest.skip(f"no ONNX node tests at {og.DATA}: apt-get install libonnx-testdata (scripts/deps.sh does)")
    return og.DATA


@pytest.fixture(scope="module")
def scores(data):
    return {name: og.score_all(NNNKIT, os.path.join(og.DATA_ROOT, name)) for name in og.SETS}


@pytest.mark.parametrize("name", og.SETS)
def test_the_table_in_docs_is_what_nnnkit_does_now(scores, name):
    want = og.doc_section(DOC, name)
    assert want is not None, f"{DOC}: no '{og.markers(name)[0]}' ... '{og.markers(name)[1]}' section"
    got = og.markdown(scores[name], name, og.data_version())
    if got != want:
        diff = "\n".join(difflib.unified_diff(want.splitlines(), got.splitlines(), "docs/onnx.md", "now", n=0,
                                              lineterm=""))
        pytest.fail(f"ONNX's {name} tests no longer score as docs/onnx.md says (a test that passed fails, a "
                    f"refused one imports, or a message changed): fix nnnkit, or when the change is meant, run "
                    f"{REGEN}\n{diff}")


def test_no_imported_test_fails(scores):
    failing = {(name, t, v): r[v][1] for name, res in scores.items() for t, r in res["tests"].items()
               for v, _ in og.VARIANTS if r[v][0] == "fail"}
    assert not failing, f"imported but off ONNX's expected outputs: {failing}"


def test_some_tests_pass(scores):
    # The tables are only worth keeping while they check outputs: Gemm and Conv at least run, and
    # PyTorch's channels-first Conv2d and Linear.
    passing = {t for res in scores.values() for t, r in res["tests"].items()
               if "pass" in (r[v][0] for v, _ in og.VARIANTS)}
    want = {"test_gemm_default_vector_bias", "test_basic_conv_with_padding", "test_Conv2d", "test_Linear"}
    assert want <= passing, sorted(passing)


def test_close_is_the_backend_tolerance():
    want = np.array([1.0, 0.0, np.nan, -2.0], np.float32)
    assert og.close(want.copy(), want) is None
    assert og.close(want * (1 + 9e-4), want) is None  # within rtol 1e-3
    assert og.close(want + np.float32([0, 5e-8, 0, 0]), want) is None  # within atol 1e-7 of 0
    assert "flat index 1" in og.close(want + np.float32([0, 2e-7, 0, 0]), want)
    assert "flat index 3" in og.close(want * np.float32([1, 1, 1, 1.002]), want)
    assert "flat index 2" in og.close(np.float32([1, 0, 0, -2]), want)  # NaN only equals NaN
    assert "shape [2, 2], expected [4]" == og.close(want.reshape(2, 2), want)


def test_a_wrong_golden_is_caught(data, tmp_path):
    """The scorer's own check: test_gemm_default_vector_bias with its weights frozen passes, and
    fails once one expected value is moved by 1 %."""
    import onnx
    test = os.path.join(data, "test_gemm_default_vector_bias")
    ins = og.read_pbs(os.path.join(test, "test_data_set_0"), "input")
    outs = og.read_pbs(os.path.join(test, "test_data_set_0"), "output")
    path = str(tmp_path / "frozen.onnx")
    onnx.save(og.freeze(onnx.load(os.path.join(test, "model.onnx")), ins[1:]), path)
    assert og.run_model(NNNKIT, path, [(ins[:1], outs)], str(tmp_path)) == ("pass", "")
    bad = outs[0].copy()
    bad.flat[5] *= 1.01
    score, why = og.run_model(NNNKIT, path, [(ins[:1], [bad])], str(tmp_path))
    assert score == "fail" and "first at flat index 5" in why, why
