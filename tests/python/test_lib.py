"""Where the package finds libnnn and the builtin plugins (api.md):
$NNN_LIBRARY, next to the package, the install prefix the package sits in
(PREFIX/lib/python3*/site-packages/nnnkit -> PREFIX/lib/libnnn.so.1, its
plugins in PREFIX/lib/nnnkit/plugins), then the build tree. Each case in a
fresh interpreter, with a prefix laid out as make install lays it out."""

import os
import shutil
import subprocess
import sys

import pytest

from conftest import BUILD, ROOT

PROBE = """
import nnnkit, nnnkit._lib as L
m = nnnkit.Model.from_layers([{"id": "dense", "weights": [[1.0]], "bias": [0.5]}])
print(L.path)
print(L.plugin_dir())
print(float(m.run([[2.0]])[0, 0]))
"""


def probe(tmp_path, pythonpath, **env):
    e = {k: v for k, v in os.environ.items() if k not in ("NNN_LIBRARY", "NNN_BUILD", "PYTHONPATH")}
    e.update(env, PYTHONPATH=pythonpath, PYTHONDONTWRITEBYTECODE="1",
             NNN_PLUGIN_CACHE=str(tmp_path / "scan.cache"))
    r = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=e, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    return r.stdout.split("\n")[:3]


@pytest.fixture
def prefix(tmp_path):
    """A prefix as make install makes it: lib/libnnn.so.1, lib/nnnkit/ (scanner,
    plugins) and the package under lib/python3.X/site-packages."""
    p = tmp_path / "prefix"
    lib = p / "lib"
    site = lib / f"python3.{sys.version_info.minor}" / "site-packages"
    (lib / "nnnkit" / "plugins").mkdir(parents=True)
    shutil.copy(os.path.join(BUILD, "libnnn.so.1"), lib)
    shutil.copy(os.path.join(BUILD, "nnn-plugin-scan"), lib / "nnnkit")
    shutil.copy(os.path.join(BUILD, "plugins", "builtin.so"), lib / "nnnkit" / "plugins")
    shutil.copytree(os.path.join(ROOT, "python", "nnnkit"), site / "nnnkit",
                    ignore=shutil.ignore_patterns("__pycache__", "*.so*"))
    for d in (tmp_path, p, lib, lib / "nnnkit", lib / "nnnkit" / "plugins"):
        os.chmod(d, 0o755)  # plugin loading refuses folders others can write
    return p, str(site)


def test_install_prefix(tmp_path, prefix):
    p, site = prefix
    lib, plugins, y = probe(tmp_path, site)
    assert lib == str(p / "lib" / "libnnn.so.1")
    assert plugins == str(p / "lib" / "nnnkit" / "plugins")
    assert y == "2.5"


def test_nnn_library_comes_first(tmp_path, prefix):
    p, site = prefix
    built = os.path.join(BUILD, "libnnn.so.1")
    lib, plugins, y = probe(tmp_path, site, NNN_LIBRARY=built)
    assert lib == built and plugins == os.path.join(BUILD, "plugins") and y == "2.5"


def test_next_to_the_package(tmp_path, prefix):
    """A self-contained package: the build tree's layout inside nnnkit/."""
    p, site = prefix
    pkg = os.path.join(site, "nnnkit")
    for f in ("libnnn.so.1", "nnn-plugin-scan", "plugins"):
        (shutil.copytree if f == "plugins" else shutil.copy)(os.path.join(BUILD, f), os.path.join(pkg, f))
    lib, plugins, y = probe(tmp_path, site)
    assert lib == os.path.join(pkg, "libnnn.so.1") and plugins == os.path.join(pkg, "plugins") and y == "2.5"


def test_the_build_tree(tmp_path):
    lib, plugins, y = probe(tmp_path, os.path.join(ROOT, "python"), NNN_BUILD=BUILD)
    assert lib == os.path.join(BUILD, "libnnn.so.1") and plugins == os.path.join(BUILD, "plugins") and y == "2.5"


def test_no_library_says_where_it_looked(tmp_path):
    e = {k: v for k, v in os.environ.items() if k != "NNN_LIBRARY"}
    e.update(NNN_BUILD=str(tmp_path / "nowhere"), PYTHONPATH=os.path.join(ROOT, "python"),
             PYTHONDONTWRITEBYTECODE="1")
    r = subprocess.run([sys.executable, "-c", "import nnnkit"], capture_output=True, text=True, env=e)
    assert r.returncode != 0 and "libnnn not found" in r.stderr and str(tmp_path / "nowhere") in r.stderr


# Each constant _lib.py mirrors, with the C expression that defines it (the
# headers are the one source: a header change the package missed fails here).
MIRRORED = {
    "NO_OFFSET": "NNN_NO_OFFSET", "PATH_MAX": "NNN_PATH_MAX", "MSG_MAX": "NNN_MSG_MAX",
    "MAX_RANK": "NNN_MAX_RANK", "DIM_UNKNOWN": "NNN_DIM_UNKNOWN", "DECODE_COPY": "NNN_DECODE_COPY",
    "JSON_SPEC": "NNN_JSON_SPEC", "COMPAT_CONV_ORIGINAL": "NNN_COMPAT_CONV_ORIGINAL",
    "INFO_SAY_PYTHON": "NNN_INFO_SAY_PYTHON", "RUN_BATCH": "NNN_RUN_BATCH",
    "PRIM_F32_ARRAY": "NNN_PRIM_F32_ARRAY", "FK_VARIANT": "NNN_FK_VARIANT",
    "FX_ACTIVATION": "NNN_FX_ACTIVATION", "FD_TOTAL": "NNN_FD_TOTAL",
}


def test_mirrored_constants_are_the_headers(tmp_path):
    import nnnkit._lib as L
    prog = tmp_path / "consts.c"
    prog.write_text("#include <stdio.h>\n#include <nnn/json.h>\n#include <nnn/info.h>\n#include <nnn/run.h>\n"
                    "#include <nnn/validate.h>\nint main(void)\n{\n" +
                    "".join(f'\tprintf("{py} %lld\\n", (long long)({c}));\n' for py, c in MIRRORED.items()) +
                    "\treturn 0;\n}\n")
    exe = tmp_path / "consts"
    subprocess.run(["cc", "-std=c11", "-Werror", "-I", os.path.join(ROOT, "runtime", "include"),
                    "-I", os.path.join(BUILD, "gen"), str(prog), "-o", str(exe)], check=True)
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        name, value = line.split()
        mine = getattr(L, name)
        # NO_OFFSET is UINT64_MAX, printed through long long as -1.
        assert mine == int(value) or (name == "NO_OFFSET" and mine == 2**64 + int(value)), \
            f"nnnkit/_lib.py {name} = {mine}, the headers say {value}"


def test_run_batches_as_the_cli_does():
    """Model.run's default rows per call is nnnkit run's --batch default
    (all rows at once was several times slower on a large input)."""
    import inspect
    import re
    import nnnkit
    from conftest import cli
    said = re.search(r"--batch N\s+samples per batch \(default (\d+)\)", cli("run", "--help"))
    assert said, "nnnkit run --help no longer says its --batch default"
    assert inspect.signature(nnnkit.Model.run).parameters["batch"].default == int(said.group(1))
