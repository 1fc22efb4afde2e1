#!/usr/bin/env bash
# Configures and builds vkc. Usage: scripts/build.sh BUILD_DIR BUILD_TYPE [extra cmake args...]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:?build dir}; type=${2:?build type}; shift 2
cmake -S "$here" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE="$type" "$@" >/dev/null
ninja -C "$dir" -j"$(nproc)"
