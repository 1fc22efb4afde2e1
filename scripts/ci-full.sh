#!/usr/bin/env bash
# Proposed body of .ci/run: the README test command, then the sanitizer build, then short fuzz runs.
# Prints how long each part took. VKC_FUZZ_SECONDS (default 60 per target here) sizes the fuzz
# part; see docs/reliability.md for the timings on a 2-core machine.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
export VKC_FUZZ_SECONDS="${VKC_FUZZ_SECONDS:-60}"
timings=()
step() {
  local name=$1; shift
  local start=$SECONDS
  echo "=== ci-full: $name"
  "$@"
  timings+=("$name: $((SECONDS - start)) s")
}
report() { printf 'ci-full timing: %s\n' "${timings[@]}"; }
trap report EXIT
step test.sh "$here/scripts/test.sh"
step test-sanitizers.sh "$here/scripts/test-sanitizers.sh"
step fuzz.sh "$here/scripts/fuzz.sh"
