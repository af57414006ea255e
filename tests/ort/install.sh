#!/bin/sh
# install.sh DIR: ONNX Runtime for the tests (make's $(O)/ort/.stamp). Copies
# package.json and package-lock.json (onnxruntime-node pinned, every package
# locked with its integrity) into DIR and runs `npm ci --ignore-scripts` there:
# the package carries the CPU runtime for linux-x64, and its install script
# only fetches GPU files from a host these machines do not reach.
#
# Never fails the build: when node or npm is missing, or npm cannot install
# (no network), it says so in one line and writes the reason to DIR/missing,
# which the tests read to skip saying "ONNX Runtime not installed: <why>"
# (tests/lib/onnxtools.c). `make ort` tries again.
set -u
src=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$1" || exit 1
dir=$(cd "$1" && pwd) # absolute: node's require() takes a bare relative path for a package name
rm -f "$dir/missing"
cp "$src/package.json" "$src/package-lock.json" "$dir/" || exit 1

miss() {
	echo "$1" > "$dir/missing"
	echo "  ORT    not installed: $1"
	exit 0
}

command -v node > /dev/null 2>&1 || miss "node not found (scripts/deps.sh installs nodejs)"
command -v npm > /dev/null 2>&1 || miss "npm not found (scripts/deps.sh installs npm)"
t0=$(date +%s)
# Two tries per package, not npm's default wait of minutes: a machine without
# the registry learns it in seconds.
if ! (cd "$dir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error --fetch-retries=1 \
	--fetch-retry-mintimeout=2000 --fetch-retry-maxtimeout=5000) > "$dir/npm.log" 2>&1; then
	# "code ENOTFOUND: request to https://registry.npmjs.org/... failed, reason: ..."
	code=$(sed -n 's/^npm \(ERR!\|error\) code //p' "$dir/npm.log" | head -n 1)
	what=$(grep -E '^npm (ERR!|error) ' "$dir/npm.log" | grep -v -E '^npm [^ ]+ (code|errno|syscall) ' | head -n 1 |
		sed 's/^npm [^ ]* \(network \)\{0,1\}//')
	why="${code:+code $code: }$what"
	miss "npm ci failed in $dir: ${why:-see $dir/npm.log} (log: $dir/npm.log; make ort tries again)"
fi
# The package carries every platform's runtime (about 290 MB): keep this one's.
bin=$dir/node_modules/onnxruntime-node/bin
plat=$(node -p 'process.platform + "/" + process.arch')
if [ -d "$bin" ] && ls -d "$bin"/napi-v*/"$plat" > /dev/null 2>&1; then
	for d in "$bin"/napi-v*/*/*; do
		case $d in */"$plat") ;; *) rm -rf "$d" ;; esac
	done
	find "$bin" -depth -type d -empty -delete
fi
if ! node -e 'require(process.argv[1])' "$dir/node_modules/onnxruntime-node" > "$dir/load.log" 2>&1; then
	miss "onnxruntime-node installed in $dir but does not load on $plat: $(grep -m1 -i error "$dir/load.log")"
fi
ver=$(node -p 'require(process.argv[1]).env.versions.node' "$dir/node_modules/onnxruntime-node")
echo "  ORT    $dir: onnxruntime-node $ver ($(du -sh "$dir/node_modules" | cut -f1), $(($(date +%s) - t0)) s)"
