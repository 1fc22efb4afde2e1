#!/usr/bin/env bash
# README command 1: install what is missing, build Release, and run the digits sample on the best
# Vulkan device (a discrete GPU if present, else lavapipe): a CNN trained in numpy, imported from
# ONNX, classifies 360 held-out handwritten digits in one execution. Prints the device, accuracy,
# agreement with the numpy model and time; exits 1 if accuracy < 95% or any prediction differs.
# Arguments go to the sample (a data directory; default samples/digits).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
"$here/scripts/setup.sh"
"$here/scripts/build.sh" "$here/build/release" Release -DVKC_BUILD_TESTS=OFF
exec "$here/build/release/samples/vkc-sample-digits" "$@"
