"""The package installed: `make install` into a temporary prefix puts it where
the prefix's Python finds it, and from there it finds the prefix's libnnn and
plugins with no help from the environment; NNN_LIBRARY overrides; `make
uninstall` removes it all (its compiled files included); `pip install
./python` (offline, Debian's setuptools) installs a package that imports; the
wheel (`make wheel`) installs into a fresh venv offline and runs as it is."""
import glob
import os
import re
import shutil
import subprocess
import sys

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.path.abspath(os.environ.get("NNN_BUILD") or os.path.join(REPO, "build"))
PYTHON = "/usr/bin/python3"

SHOW = ("import nnnkit, nnnkit._lib as l; m = nnnkit.load('mnistdemo.nnn'); print(m); "
        "print('library', l.path); print('plugins', l.plugin_dir()); print('package', nnnkit.__file__)")


def run(args, **kw):
    p = subprocess.run(args, capture_output=True, text=True, **kw)
    assert p.returncode == 0, "%s: exit %d\n%s%s" % (args, p.returncode, p.stdout, p.stderr)
    return p.stdout


def clean_env(home, **extra):
    """No NNN_BUILD, NNN_LIBRARY, NNN_PLUGIN_PATH or PYTHONPATH unless given."""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8"}
    env.update(extra)
    return env


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(tmp, prefix, the package's folder) after make install."""
    tmp = tmp_path_factory.mktemp("inst")
    prefix = tmp / "prefix"
    run(["make", "-s", "install", "O=" + BUILD, "PREFIX=" + str(prefix), "PYTHON=" + PYTHON], cwd=REPO)
    run([os.path.join(BUILD, "mkexample"), str(tmp / "mnistdemo.nnn")])
    site = run([PYTHON, os.path.join(REPO, "scripts", "pysite.py")]).strip()
    return tmp, prefix, prefix / site


def table(text):
    """The layer table of `nnnkit info` (or of print(model)): from its header on."""
    lines = text.splitlines()
    start = [i for i, line in enumerate(lines) if line.startswith("#  type")]
    assert start, text
    return lines[start[0]:start[0] + 5]


def test_the_site_folder_is_the_interpreters_own():
    # For the prefix the interpreter installs under, the folder is on its sys.path.
    out = run([PYTHON, "-c", "import sys, sysconfig; print(sysconfig.get_path('data')); print(sys.path)"])
    data, path = out.splitlines()
    site = run([PYTHON, os.path.join(REPO, "scripts", "pysite.py")]).strip()
    assert os.path.join(data, site) in eval(path)


def test_installed_package_finds_the_prefix_library_and_plugins(installed):
    tmp, prefix, site = installed
    assert (site / "nnnkit" / "__init__.py").is_file()
    out = run([PYTHON, "-c", SHOW], cwd=tmp, env=clean_env(tmp, PYTHONPATH=str(site)))
    info = run([str(prefix / "bin" / "nnnkit"), "info", "mnistdemo.nnn"], cwd=tmp, env=clean_env(tmp))
    assert table(out) == table(info)
    assert "library %s\n" % (prefix / "lib" / "libnnn.so.1") in out
    assert "plugins %s\n" % (prefix / "lib" / "nnnkit" / "plugins") in out
    assert "package %s\n" % (site / "nnnkit" / "__init__.py") in out


def test_nnn_library_overrides(installed, tmp_path):
    tmp, prefix, site = installed
    other = tmp_path / "libnnn.so.1"
    shutil.copy(os.path.join(BUILD, "libnnn.so.1"), other)
    out = run([PYTHON, "-c", SHOW], cwd=tmp, env=clean_env(tmp, PYTHONPATH=str(site), NNN_LIBRARY=str(other)))
    assert "library %s\n" % other in out
    # Naming a file that is not there is an error, not a quiet fall back on the prefix's.
    p = subprocess.run([PYTHON, "-c", "import nnnkit"], cwd=tmp, capture_output=True, text=True,
                       env=clean_env(tmp, PYTHONPATH=str(site), NNN_LIBRARY=str(tmp_path / "none.so")))
    assert p.returncode == 1 and "NNN_LIBRARY names %s" % (tmp_path / "none.so") in p.stderr, p.stderr


def test_uninstall_removes_the_package_and_its_compiled_files(installed, tmp_path):
    tmp, prefix, site = installed
    # Importing again writes nothing install did not (the .pyc are installed, hash-checked).
    before = sorted(p.relative_to(site) for p in site.rglob("*"))
    assert any(p.suffix == ".pyc" for p in before), before
    run([PYTHON, "-c", "import nnnkit, nnnkit.dask"], cwd=tmp, env=clean_env(tmp, PYTHONPATH=str(site)))
    assert sorted(p.relative_to(site) for p in site.rglob("*")) == before
    record = (prefix / "share" / "nnnkit" / "installed-files").read_text()
    for p in before:
        if (site / p).is_file():
            assert "f %s\n" % (site / p).relative_to(prefix) in record
    run(["make", "-s", "uninstall", "O=" + BUILD, "PREFIX=" + str(prefix)], cwd=REPO)
    assert not (site / "nnnkit").exists()
    assert not site.exists(), "the folders install made stay: %s" % list(site.rglob("*"))


def test_pip_install_offline_imports(tmp_path):
    # (Each on its own: pip imports distutils, which setuptools then refuses.)
    has = "import importlib.util as u; assert u.find_spec('pip') and u.find_spec('setuptools')"
    if subprocess.run([PYTHON, "-c", has], capture_output=True).returncode != 0:
        pytest.skip("needs Debian's python3-pip and python3-setuptools")
    # A copy: setuptools writes build/ and *.egg-info beside the sources.
    src = tmp_path / "python"
    shutil.copytree(os.path.join(REPO, "python"), src, ignore=shutil.ignore_patterns("__pycache__", "build",
                                                                                     "*.egg-info"))
    target = tmp_path / "site"
    run([PYTHON, "-m", "pip", "install", "-q", "--no-build-isolation", "--no-deps", "--no-index",
         "--target", str(target), str(src)], env=clean_env(tmp_path, PIP_NO_CACHE_DIR="1",
                                                            PIP_ROOT_USER_ACTION="ignore"))
    assert (target / "nnnkit" / "dask.py").is_file()
    run([os.path.join(BUILD, "mkexample"), str(tmp_path / "mnistdemo.nnn")])
    lib = os.path.join(BUILD, "libnnn.so.1")
    out = run([PYTHON, "-c", SHOW], cwd=tmp_path, env=clean_env(tmp_path, PYTHONPATH=str(target), NNN_LIBRARY=lib))
    assert "library %s\n" % lib in out
    assert "package %s\n" % (target / "nnnkit" / "__init__.py") in out
    # Without NNN_LIBRARY nothing says where libnnn is: a clear ImportError.
    p = subprocess.run([PYTHON, "-c", "import nnnkit"], cwd=tmp_path, capture_output=True, text=True,
                       env=clean_env(tmp_path, PYTHONPATH=str(target)))
    assert p.returncode == 1 and "ImportError" in p.stderr and "NNN_LIBRARY" in p.stderr, p.stderr

    # pip into a prefix that holds libnnn and its plugins: found there, as make install's are
    # (Debian's pip puts it under PREFIX/local: its scheme for /usr/local).
    prefix = tmp_path / "prefix"
    run([PYTHON, "-m", "pip", "install", "-q", "--no-build-isolation", "--no-deps", "--no-index",
         "--prefix", str(prefix), str(src)], env=clean_env(tmp_path, PIP_NO_CACHE_DIR="1",
                                                            PIP_ROOT_USER_ACTION="ignore"))
    (site,) = prefix.glob("**/lib/python3*/*-packages")
    libdir = site.parent.parent
    shutil.copy(lib, libdir)
    (libdir / "nnnkit" / "plugins").mkdir(parents=True)
    shutil.copy(os.path.join(BUILD, "plugins", "builtin.so"), libdir / "nnnkit" / "plugins")
    shutil.copy(os.path.join(BUILD, "nnn-plugin-scan"), libdir / "nnnkit")  # as make install lays them out
    out = run([PYTHON, "-c", SHOW], cwd=tmp_path, env=clean_env(tmp_path, PYTHONPATH=str(site)))
    assert "library %s\n" % (libdir / "libnnn.so.1") in out
    assert "plugins %s\n" % (libdir / "nnnkit" / "plugins") in out


def test_wheel_installs_into_a_fresh_venv_offline(tmp_path, poolswish):
    """make wheel, then pip of that one file into a new venv, offline (Debian 12 refuses pip
    outside a venv: PEP 668): the package imports with no environment variable, uses the libnnn,
    scanner and builtin plugin it carries, computes what the CLI computes, finds a third-party
    plugin on NNN_PLUGIN_PATH as the CLI does, and pip uninstall removes every file."""
    run(["make", "-s", "wheel", "O=" + BUILD], cwd=REPO)
    (wheel,) = glob.glob(os.path.join(BUILD, "nnnkit-*-py3-none-*.whl"))
    venv = tmp_path / "venv"
    # NumPy is Debian's python3-numpy: the venv sees the system's packages.
    run([PYTHON, "-m", "venv", "--system-site-packages", str(venv)])
    py = str(venv / "bin" / "python")
    pip_env = clean_env(tmp_path, PIP_NO_CACHE_DIR="1", PIP_ROOT_USER_ACTION="ignore")
    run([py, "-m", "pip", "install", "-q", "--no-index", wheel], env=pip_env)
    (pkg,) = venv.glob("lib/python3*/site-packages/nnnkit")

    run([os.path.join(BUILD, "mkexample"), str(tmp_path / "m.nnn"), str(tmp_path / "x.npy")])
    code = ("import nnnkit, nnnkit._lib as l, numpy as np; m = nnnkit.load('m.nnn'); "
            "np.save('py.npy', m.run(np.load('x.npy'), batch=256)); "
            "print('library', l.path); print('plugins', l.plugin_dir()); print(m)")
    out = run([py, "-c", code], cwd=tmp_path, env=clean_env(tmp_path))
    assert "library %s\n" % (pkg / "libnnn.so.1") in out
    assert "plugins %s\n" % (pkg / "plugins") in out
    assert table(out)[1].endswith("builtin.so"), out
    run([os.path.join(BUILD, "nnnkit"), "run", "m.nnn", "--input", "x.npy", "-o", "cli.npy"], cwd=tmp_path,
        env=clean_env(tmp_path))
    assert (tmp_path / "py.npy").read_bytes() == (tmp_path / "cli.npy").read_bytes()

    # A third-party plugin in a folder of NNN_PLUGIN_PATH: its layer type decodes and runs.
    plugdir = tmp_path / "plugins"
    plugdir.mkdir(mode=0o700)
    shutil.copy(poolswish, plugdir)
    code = ("import nnnkit, numpy as np; m = nnnkit.Model.from_layers([{'id': 'maxpool', "
            "'bias': np.zeros(1, np.float32), 'pool': [2], 'stride': [1]}]); "
            "print(m.run(np.arange(3, dtype=np.float32).reshape(1, 3, 1)).ravel().tolist())")
    out = run([py, "-c", code], cwd=tmp_path, env=clean_env(tmp_path, NNN_PLUGIN_PATH=str(plugdir)))
    assert out == "[1.0, 2.0]\n", out

    run([py, "-m", "pip", "uninstall", "-q", "-y", "nnnkit"], env=pip_env)
    assert not pkg.exists(), list(pkg.rglob("*"))


def test_pyproject_version_is_the_makefiles():
    with open(os.path.join(REPO, "Makefile")) as f:
        make = re.search(r"^VERSION\s*:=\s*(\S+)", f.read(), re.M).group(1)
    with open(os.path.join(REPO, "python", "pyproject.toml")) as f:
        py = re.search(r'^version\s*=\s*"([^"]+)"', f.read(), re.M).group(1)
    assert py == make
