"""docs/python.md says what the package does: its worked example prints what
the page shows, its API reference is what the docstrings say (every public
name of nnnkit, nnnkit.dask and nnnkit.torch, with its signature), and the
README lists the page."""
import contextlib
import io
import os
import re
import subprocess
import sys

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DOC = os.path.join(REPO, "docs", "python.md")


def text():
    with open(DOC, encoding="utf-8") as f:
        return f.read()


def blocks(part):
    """The fenced blocks of a part of the page: [(language, body)]."""
    return re.findall(r"^```(\w*)\n(.*?)^```$", part, re.S | re.M)


def test_worked_example_prints_what_the_page_shows(tmp_path, monkeypatch):
    run_part("example", 5, tmp_path, monkeypatch)


@pytest.mark.filterwarnings("ignore:make_current is deprecated")
def test_dask_example_runs_as_written(tmp_path, monkeypatch):
    """The Dask block, run on the worked example's model and scope (it once
    named an invented scheduler and zarr, and could not run)."""
    pytest.importorskip("distributed", reason="the example needs python3-distributed")
    scope = run_part("example", 5, tmp_path, monkeypatch)
    run_part("dask", 1, tmp_path, monkeypatch, scope)


def test_from_torch_example_prints_what_the_page_shows(tmp_path, monkeypatch):
    pytest.importorskip("torch", reason="the example needs python3-torch")
    run_part("torch", 1, tmp_path, monkeypatch)


def run_part(name, least, tmp_path, monkeypatch, scope=None):
    """Runs the python blocks between <!-- NAME: begin --> and end in one
    scope (`scope`, to go on from another part); each must print exactly the
    text block that follows it. Returns the scope."""
    page = text()
    part = page[page.index("<!-- %s: begin -->" % name):page.index("<!-- %s: end -->" % name)]
    monkeypatch.chdir(tmp_path)
    scope = scope if scope is not None else {"__name__": "__doc_example__"}
    shown = blocks(part)
    assert sum(lang == "python" for lang, _ in shown) >= least
    for i, (lang, body) in enumerate(shown):
        if lang != "python":
            continue
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(body, "docs/python.md block %d" % i, "exec"), scope)
        follows = shown[i + 1] if i + 1 < len(shown) else ("", "")
        if follows[0] == "text":
            assert out.getvalue() == follows[1], "block %d printed:\n%s" % (i, out.getvalue())
        else:
            assert out.getvalue() == "", "block %d printed what the page does not show:\n%s" % (i, out.getvalue())
    return scope


def test_api_reference_is_what_the_docstrings_say():
    pytest.importorskip("dask.array", reason="the reference documents nnnkit.dask: needs python3-dask")
    pytest.importorskip("torch", reason="the reference documents nnnkit.torch: needs python3-torch")
    p = subprocess.run([sys.executable, os.path.join(REPO, "scripts", "pyapi.py"), "--check", DOC],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr


def test_every_public_name_is_in_the_reference():
    # Independent of the generator: each name of each module's __all__ has a
    # heading with its signature.
    import importlib
    import inspect

    page = text()
    for modname in ("nnnkit", "nnnkit.dask", "nnnkit.torch"):
        try:
            module = importlib.import_module(modname)
        except ModuleNotFoundError as e:
            if e.name == modname:
                continue  # not written yet
            pytest.skip("%s needs %s" % (modname, e.name))
        assert "### `%s`" % modname in page
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.isclass(obj):
                assert re.search(r"^#### `class %s\.%s[(`]" % (re.escape(modname), name), page, re.M), name
            elif callable(obj):
                assert "#### `%s.%s%s`" % (modname, name, inspect.signature(obj)) in page, name
            else:
                assert "#### `%s.%s`" % (modname, name) in page, name


def test_readme_lists_the_page():
    with open(os.path.join(REPO, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    assert "docs/python.md" in readme
