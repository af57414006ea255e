"""pytest setup for the nnnkit Python package: runs against the build tree
(NNN_BUILD, else ./build; NNNKIT, else build/nnnkit), from the project root
or anywhere (make test-python runs it with the suite's environment)."""

import json
import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.path.abspath(os.environ.get("NNN_BUILD") or os.path.join(ROOT, "build"))
os.environ["NNN_BUILD"] = BUILD
# The suite's plugin scans are cached in the build folder, never in ~/.cache.
os.environ.setdefault("NNN_PLUGIN_CACHE", os.path.join(BUILD, "plugin-scan.cache"))
sys.path.insert(0, os.path.join(ROOT, "python"))

NNNKIT = os.path.abspath(os.environ.get("NNNKIT") or os.path.join(BUILD, "nnnkit"))
REAL = os.environ.get("NNN_REAL_CORPUS") or os.path.join(ROOT, "..", "shared", "corpus", "real")
REAL_FILES = ("tictactoedemo.nnn", "2dmovedemo.nnn")


def cli(*args, check=True, input=None):
    """Runs the C CLI (build/nnnkit), with `input` (bytes) on its standard
    input; returns its stdout as text."""
    r = subprocess.run([NNNKIT, *args], capture_output=True, input=input, env=os.environ)
    r.stdout, r.stderr = r.stdout.decode(), r.stderr.decode()
    if check and r.returncode != 0:
        raise AssertionError(f"nnnkit {' '.join(args)}: exit {r.returncode}: {r.stderr}")
    return r.stdout


@pytest.fixture(scope="session")
def real():
    """The real corpus folder and its expected.json, or a skip saying why."""
    if not os.path.isfile(os.path.join(REAL, "expected.json")):
        pytest.skip(f"real corpus not found at {REAL}: skipped (set NNN_REAL_CORPUS to run it)")
    with open(os.path.join(REAL, "expected.json")) as f:
        return REAL, json.load(f)


@pytest.fixture(scope="session")
def manifest():
    """The conformance corpus (build/conformance) and its manifest's cases."""
    path = os.path.join(BUILD, "conformance", "manifest.json")
    if not os.path.isfile(path):
        pytest.skip(f"no conformance corpus at {path}: make test-build writes it")
    with open(path) as f:
        return os.path.dirname(path), json.load(f)["cases"]


PLUGIN = os.path.join(ROOT, "examples", "plugin-pool-swish")


@pytest.fixture(scope="session")
def poolswish(tmp_path_factory):
    """The example plugin (examples/plugin-pool-swish), built against this
    tree's headers and generator: its .so."""
    for tool in ("lua5.4", os.environ.get("CC", "cc")):
        if not shutil.which(tool):
            pytest.skip(f"{tool} not found: the example plugin cannot be built")
    out = tmp_path_factory.mktemp("poolswish")
    os.chmod(out, 0o700)  # nnn_plugin_load refuses a folder others can write
    gen = ["lua5.4", "gen/nnngen.lua", "--plugin", os.path.join(PLUGIN, "schema.lua"),
           "--c", str(out / "poolswish_gen.c"), "--h", str(out / "poolswish_gen.h")]
    cc = [os.environ.get("CC", "cc"), "-std=c11", "-O1", "-fPIC", "-shared", "-fvisibility=hidden",
          "-Iruntime/include", f"-I{BUILD}/gen", f"-I{out}", "-o", str(out / "poolswish.so"),
          os.path.join(PLUGIN, "poolswish.c"), str(out / "poolswish_gen.c"), "-lm"]
    for cmd in (gen, cc):
        r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        assert r.returncode == 0, f"{' '.join(cmd)}: {r.stdout}{r.stderr}"
    return str(out / "poolswish.so")
