#!/usr/bin/env bash
# README command 1: install what is missing, build Release, and run the sample network on the best
# Vulkan device (a discrete GPU if present, else lavapipe). Prints the device, the result and time.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
"$here/scripts/setup.sh"
"$here/scripts/build.sh" "$here/build/release" Release -DVKC_BUILD_TESTS=OFF
exec "$here/build/release/samples/vkc-sample-convnet" "$@"
