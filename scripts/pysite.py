"""Prints where the Python running it finds packages, relative to an installation prefix.

    /usr/bin/python3 scripts/pysite.py        e.g. lib/python3.11/dist-packages

make install puts the nnnkit package in PREFIX/<that>. The folder is the
interpreter's own, as sysconfig gives it for its default scheme, taken relative
to the prefix that scheme installs under (Debian's python3:
/usr/local/lib/python3.11/dist-packages under /usr/local; a venv's python:
lib/python3.11/site-packages under the venv). For that prefix it is exactly the
folder on sys.path; for any other, PYTHONPATH=PREFIX/<that> finds the package.
"""
import os
import sys
import sysconfig

purelib = sysconfig.get_path("purelib")
base = sysconfig.get_path("data")
rel = os.path.relpath(purelib, base)
if os.path.isabs(rel) or rel.split(os.sep)[0] == os.pardir:
    sys.exit("pysite.py: %s is not under %s: no folder to install the package into" % (purelib, base))
print(rel)
