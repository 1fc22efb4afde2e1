#!/usr/bin/env bash
# Short libFuzzer runs of every fuzz target over its committed seed corpus (fuzz/corpus/<name>/).
# Builds build/fuzz with clang, ASan+UBSan and coverage, then runs each target for
# VKC_FUZZ_SECONDS (default 60) seconds. New corpus entries go to build/fuzz/work, never into the
# repository. Exits non-zero when any target finds a crash, a sanitizer report, a leak or a
# timeout; the reproducer is printed and kept in build/fuzz/work/artifacts/.
#
#   scripts/fuzz.sh                      # all targets, 60 s each
#   VKC_FUZZ_SECONDS=600 scripts/fuzz.sh ir_parser npy   # longer, chosen targets
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
seconds=${VKC_FUZZ_SECONDS:-60}
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(ir_parser npy manifest onnx budget_planner)

# libFuzzer ships with clang's runtime libraries (Debian: clang + libclang-rt-14-dev, installed by
# scripts/setup.sh).
"$here/scripts/setup.sh"

build="${VKC_FUZZ_BUILD_DIR:-$here/build/fuzz}"
export CCACHE_BASEDIR="$here" CCACHE_NOHASHDIR=1
CC=clang CXX=clang++ cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DVKC_BUILD_FUZZERS=ON -DVKC_SANITIZE=ON -DVKC_BUILD_TESTS=OFF >/dev/null
ninja -C "$build" -j"$(nproc)" $(printf 'fuzz_%s ' "${targets[@]}")

# Leaks inside the statically linked glslang/SPIRV-Tools process-wide pools are not ours; see
# tests/sanitizers/lsan.supp. allocator_may_return_null: hostile sizes must become vkc::Errors
# (std::bad_alloc would escape as a crash, which is what we want reported), not ASan aborts.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}"
export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$here/tests/sanitizers/lsan.supp:print_suppressions=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

work="$build/work"
mkdir -p "$work/artifacts"
failed=()
for t in "${targets[@]}"; do
  seeds="$here/fuzz/corpus/$t"
  corpus="$work/corpus-$t"
  mkdir -p "$corpus"
  log="$work/$t.log"
  echo "fuzz: $t for ${seconds}s (seeds: $(ls "$seeds" | wc -l))"
  # -timeout: one input may take at most 10 s (a compile takes well under 1 s); -rss_limit_mb
  # catches inputs that make the code allocate without bound.
  if "$build/fuzz/fuzz_$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2560 -max_len=16384 \
      -print_final_stats=1 -artifact_prefix="$work/artifacts/$t-" "$corpus" "$seeds" >"$log" 2>&1; then
    echo "fuzz: $t ok: $(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$') executions"
  else
    echo "fuzz: $t FAILED (log: $log)"
    grep -m1 -A30 -E "ERROR: |vkc fuzz property violated|deadly signal|uncaught exception" "$log" || tail -30 "$log"
    ls "$work/artifacts/$t-"* 2>/dev/null || true
    failed+=("$t")
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: failures in: ${failed[*]}"
  exit 1
fi
echo "fuzz: all ${#targets[@]} targets ran ${seconds}s without findings"
