#!/bin/sh
# Installs the Debian packages nnnkit's build and tests need, when any is
# missing. Needs root (apt-get); does nothing when all are present.
#   scripts/deps.sh --bench   only PyTorch (python3-torch), the contender of
#                             make bench: optional, large, never needed to build
#                             or test (CI does not install it)
set -eu
PKGS="make gcc clang libclang-rt-14-dev lua5.4 libcriterion-dev libopenblas-dev libjansson-dev pkg-config valgrind groff-base xxd chromium python3-numpy libprotobuf-c-dev protobuf-c-compiler libonnx-dev"
if [ "${1:-}" = "--bench" ]; then
	PKGS="python3-torch"
fi
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "deps: installing$missing" >&2
if [ "$(id -u)" -ne 0 ]; then
	echo "deps: run as root, or install:$missing" >&2
	exit 2
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends $missing >/dev/null
