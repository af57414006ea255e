"""Writes the nnnkit wheel: the Python package with libnnn, the plugin scanner
and the builtin plugin inside it, so `pip install` of the one file gives a
package that needs no environment variable (docs/python.md, "Installing").

    python3 scripts/wheel.py OUT_DIR VERSION LIBNNN SCANNER PLUGIN...

The package's loader (_lib.py) looks for libnnn.so* in its own folder first,
and libnnn finds its scanner and plugins/ beside itself: the wheel lays them
out that way. Metadata comes from python/pyproject.toml, the files from
python/nnnkit/. Deterministic: sorted entries, fixed timestamps, so the same
build gives the same bytes (pip checks each file against RECORD).

The tag is py3-none-PLATFORM (linux_x86_64 here): the files are this
machine's build, linked against Debian's libjansson and libprotobuf-c, not a
manylinux build."""
import base64
import hashlib
import os
import re
import sys
import sysconfig
import tomllib
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON_DIR = os.path.join(HERE, "..", "python")
STAMP = (2020, 1, 1, 0, 0, 0)  # zip cannot say 1970; any fixed date will do


def metadata(project, version):
    """METADATA (core metadata 2.1) from pyproject.toml's [project]."""
    lines = ["Metadata-Version: 2.1", "Name: " + project["name"], "Version: " + version,
             "Summary: " + project["description"], "Requires-Python: " + project["requires-python"]]
    lines += ["Requires-Dist: " + d for d in project.get("dependencies", [])]
    for extra, deps in sorted(project.get("optional-dependencies", {}).items()):
        lines.append("Provides-Extra: " + extra)
        lines += ['Requires-Dist: %s ; extra == "%s"' % (d, extra) for d in deps]
    with open(os.path.join(PYTHON_DIR, project["readme"]), encoding="utf-8") as f:
        readme = f.read()
    return "\n".join(lines + ["Description-Content-Type: text/markdown", "", readme])


def record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d" % (name, digest, len(data))


def main(argv):
    if len(argv) < 6:
        sys.exit("usage: wheel.py OUT_DIR VERSION LIBNNN SCANNER PLUGIN...")
    out_dir, version, lib, scanner, plugins = argv[1], argv[2], argv[3], argv[4], argv[5:]
    with open(os.path.join(PYTHON_DIR, "pyproject.toml"), "rb") as f:
        project = tomllib.load(f)["project"]
    if project["version"] != version:
        sys.exit("wheel.py: pyproject.toml says version %s, the Makefile %s: make them equal"
                 % (project["version"], version))
    name = project["name"]
    platform = re.sub(r"[-.]", "_", sysconfig.get_platform())
    tag = "py3-none-" + platform
    dist_info = "%s-%s.dist-info" % (name, version)

    # (name in the wheel, bytes, executable)
    files = []
    pkg = os.path.join(PYTHON_DIR, name)
    for f in sorted(os.listdir(pkg)):
        if f.endswith(".py"):
            with open(os.path.join(pkg, f), "rb") as src:
                files.append(("%s/%s" % (name, f), src.read(), False))
    for path, where in [(lib, ""), (scanner, "")] + [(p, "plugins/") for p in plugins]:
        with open(path, "rb") as src:
            files.append(("%s/%s%s" % (name, where, os.path.basename(path)), src.read(), True))
    files.append((dist_info + "/METADATA", metadata(project, version).encode(), False))
    files.append((dist_info + "/WHEEL", ("Wheel-Version: 1.0\nGenerator: nnnkit scripts/wheel.py\n"
                                         "Root-Is-Purelib: false\nTag: %s\n" % tag).encode(), False))
    record = [record_line(n, d) for n, d, _ in files] + [dist_info + "/RECORD,,"]
    files.append((dist_info + "/RECORD", ("\n".join(record) + "\n").encode(), False))

    wheel = os.path.join(out_dir, "%s-%s-%s.whl" % (name, version, tag))
    tmp = wheel + ".tmp"
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
        for n, data, executable in files:
            info = zipfile.ZipInfo(n, STAMP)
            info.external_attr = (0o100755 if executable else 0o100644) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
    os.replace(tmp, wheel)
    print(wheel)


if __name__ == "__main__":
    main(sys.argv)
