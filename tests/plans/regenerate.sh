#!/usr/bin/env bash
# Rewrites tests/plans/expected/ from the current compiler, for every target profile:
#   tests/plans/regenerate.sh [BUILD_DIR]     (default build/test)
# Review the diff before committing it: each changed line is a changed plan.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$src/build/test}
for profile in "$src"/targets/*.json; do
  target=$(basename "$profile" .json)
  bash "$src/tests/plans/check_plans.sh" "$build/tools/vk-compile" "$src" "$target" \
    "$(mktemp -d)" --update >/dev/null
done
git -C "$src" status --short tests/plans/expected
