#!/bin/sh
# Installs the Debian packages nnnkit's build and tests need, when any is
# missing. Needs root (apt-get); does nothing when all are present.
#   scripts/deps.sh           the build's packages, and the tools the ONNX
#                             tests check against: python3-onnx (onnx.checker),
#                             python3-torch (torch.onnx.export, and make bench's
#                             contender, and nnnkit.from_torch's tests),
#                             python3-pytest (make test-python),
#                             python3-dask and python3-distributed (the
#                             nnnkit.dask tests), python3-setuptools and
#                             python3-pip (pip install ./python's test),
#                             libonnx-testdata (ONNX's own backend tests,
#                             tests/python/test_onnx_goldens.py), node and npm (make installs ONNX
#                             Runtime from the npm registry into build/ort:
#                             tests/ort/install.sh), mono-devel (make
#                             csharp: mcs and mono), nunit-console and
#                             libnunit-cil-dev (make test-csharp). Not root: a missing build
#                             package is an error, a missing test tool a
#                             warning (the tests that need it skip, saying so)
#   scripts/deps.sh --bench   only PyTorch (python3-torch), the contender of
#                             make bench
set -eu
PKGS="make gcc clang libclang-rt-14-dev lua5.4 libcriterion-dev libopenblas-dev libjansson-dev pkg-config valgrind groff-base xxd chromium python3-numpy libprotobuf-c-dev protobuf-c-compiler libonnx-dev mono-devel"
TOOLS="python3-onnx python3-torch python3-pytest python3-dask python3-distributed python3-setuptools python3-pip libonnx-testdata nunit-console libnunit-cil-dev"
if [ "${1:-}" = "--bench" ]; then
	PKGS="python3-torch"
	TOOLS=""
fi
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "ok installed"; }
missing=""
for p in $PKGS; do
	installed "$p" || missing="$missing $p"
done
tools=""
for p in $TOOLS; do
	installed "$p" || tools="$tools $p"
done
# node and npm by command, not by package: a node from elsewhere (NodeSource's
# nodejs carries its own npm) does as well as Debian's nodejs and npm.
if [ "${1:-}" != "--bench" ]; then
	command -v node >/dev/null 2>&1 || tools="$tools nodejs"
	command -v npm >/dev/null 2>&1 || tools="$tools npm"
fi
[ -z "$missing$tools" ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
	[ -n "$tools" ] && echo "deps: the ONNX, PyTorch, Dask and pip tests (and ONNX's own backend tests) will skip what needs them (make test-python needs python3-pytest, make test-csharp nunit-console and libnunit-cil-dev); run as root, or install:$tools" >&2
	[ -z "$missing" ] && exit 0
	echo "deps: run as root, or install:$missing" >&2
	exit 2
fi
echo "deps: installing$missing$tools" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends $missing $tools >/dev/null
