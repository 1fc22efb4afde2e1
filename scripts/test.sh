#!/usr/bin/env bash
# README command 2 (and CI): install what is missing, build with warnings as errors, and run the
# whole suite with CTest; with CI=true also the sanitizer build and short fuzz runs. Device tests run on lavapipe with VK_LAYER_KHRONOS_validation on; any
# validation message fails the test.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
"$here/scripts/setup.sh"
"$here/scripts/build.sh" "$here/build/test" Release -DVKC_WERROR=ON -DVKC_BUILD_TESTS=ON
cd "$here/build/test"
# Discrete GPUs are not what CI has; pin tests to lavapipe unless the caller chose a device.
export VKC_DEVICE="${VKC_DEVICE:-llvmpipe}"
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp}"
# vkc's caches (compiled modules, pipelines) for this run only: not the user's ~/.cache/vkc, and
# emptied first, since nothing evicts entries and every rebuild keys new ones.
if [ -z "${VKC_CACHE_DIR:-}" ]; then
  export VKC_CACHE_DIR="$PWD/test-cache"
  rm -rf "$VKC_CACHE_DIR"
fi
ctest --output-on-failure -j"$(nproc)" --timeout 900
# CI (CI=true) also runs the AddressSanitizer + UndefinedBehaviorSanitizer build of the unit and
# differential suites and a short libFuzzer run of every fuzz target (docs/reliability.md).
if [ "${CI:-}" = "true" ]; then
  "$here/scripts/test-sanitizers.sh"
  VKC_FUZZ_SECONDS="${VKC_FUZZ_SECONDS:-45}" "$here/scripts/fuzz.sh"
fi
