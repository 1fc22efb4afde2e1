#!/usr/bin/env bash
# `cmake --install` puts the vkc package where the interpreter it was built for finds it under the
# prefix; it imports from there (not from the build tree) and lists the devices.
# Usage: check_installed.sh BUILD_DIR PYTHON INSTALL_SUBDIR WORK_DIR
set -euo pipefail
build=$1; python=$2; subdir=$3; work=$4
rm -rf "$work"; mkdir -p "$work"
cmake --install "$build" --prefix "$work/prefix" >"$work/install.log"
cd "$work"
PYTHONPATH="$work/prefix/$subdir" "$python" -c '
import sys, vkc
assert vkc.__file__.startswith(sys.argv[1]), vkc.__file__
print("installed vkc imports from", vkc.__file__, "and sees", len(vkc.devices()), "device(s)")
' "$work/prefix/$subdir"
