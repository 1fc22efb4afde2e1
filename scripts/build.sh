#!/usr/bin/env bash
# Configures and builds vkc. Usage: scripts/build.sh BUILD_DIR BUILD_TYPE [extra cmake args...]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:?build dir}; type=${2:?build type}; shift 2
# ccache keys on paths relative to this checkout, so a fresh clone elsewhere (CI) reuses the
# objects an earlier build of the same sources left in the cache.
export CCACHE_BASEDIR="$here" CCACHE_NOHASHDIR=1
cmake -S "$here" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE="$type" "$@" >/dev/null
ninja -C "$dir" -j"$(nproc)"
