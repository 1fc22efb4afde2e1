#!/usr/bin/env bash
# Second CI build: AddressSanitizer + UndefinedBehaviorSanitizer + LeakSanitizer
# (-DVKC_SANITIZE=ON) running the unit and differential suites on lavapipe with the validation
# layer on, in two passes: host suites (VKC_SANITIZER_HOST_LABELS) and device suites
# (VKC_SANITIZER_DEVICE_LABELS). The device test binaries keep every Vulkan driver and layer
# loaded to the end (tests/common/pin_drivers.cpp), so LeakSanitizer can name their allocations
# and tests/sanitizers/lsan.supp can suppress those; a leak with a vkc frame fails the test.
#
# soak and cli are left out by default: 10,000 executions under ASan take minutes, the soak's
# memory check is RSS-based (ASan's quarantine defeats it) and the CLI suite compiles every example
# for every target.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
host_labels=${VKC_SANITIZER_HOST_LABELS:-"^(support|ir|module|codegen)$"}
device_labels=${VKC_SANITIZER_DEVICE_LABELS:-"^(runtime|e2e|kernels|fusion|api|onnx|hostile)$"}
# Sweeps that repeat one code path many times run in the Release pass only: three of the four
# conv differential shards (shard 0 stays: 80 random configs through every strategy), the
# compile-for-every-target-profile tests (the same planner once per profile) and the sort size
# sweeps (every axis, row lengths and batches, long rows, a million keys; the sort tests of key
# types, ties, NaNs and payloads stay). They were 8, 5.5 and 6.5 of the device pass's 51 CPU
# minutes on 2026-11-26 (docs/reliability.md, CI sizing). Two more compile-for-every-profile
# sweeps whose names do not say so (float16 attention and convs on every target: 179 and 127 s
# under ASan, 2026-11-28) likewise. VKC_SANITIZER_DEVICE_EXCLUDE="" runs them all.
device_exclude=${VKC_SANITIZER_DEVICE_EXCLUDE-"ConvDifferentialShard.*/[123]$|EveryProfile|AllProfiles|EveryTarget|PerTarget|^Sort(Radix|Kernel)\.(AnyAxis|LongRows.*|RowLengthsAndBatches|MillionKeysInOneRow)$|^AttentionCoopPlan\.Fp16AttentionUsesTensorCoresWhereTheTargetHasThem$|^CoopMatrixPlan\.Fp16ConvsUseTensorCoresWhereTheyPayOrWhenForced$"}
"$here/scripts/setup.sh"
# RelWithDebInfo: symbolized reports at a usable speed. Warnings are not errors here: GCC's
# sanitizer instrumentation changes what its flow-based warnings see; scripts/test.sh is the
# warnings gate.
"$here/scripts/build.sh" "$here/build/asan" RelWithDebInfo -DVKC_SANITIZE=ON -DVKC_BUILD_TESTS=ON
cd "$here/build/asan"
export VKC_DEVICE="${VKC_DEVICE:-llvmpipe}"
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp}"
# vkc's caches (compiled modules, pipelines) for this run only: not the user's ~/.cache/vkc, and
# emptied first, since nothing evicts entries and every rebuild keys new ones.
if [ -z "${VKC_CACHE_DIR:-}" ]; then
  export VKC_CACHE_DIR="$PWD/test-cache"
  rm -rf "$VKC_CACHE_DIR"
fi
# allocator_may_return_null: the out-of-memory test asks lavapipe for 1 PiB, which must come back
# as VK_ERROR_OUT_OF_DEVICE_MEMORY rather than an ASan abort inside the driver.
asan="allocator_may_return_null=1:strict_string_checks=1"
export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$here/tests/sanitizers/lsan.supp:print_suppressions=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1:suppressions=$here/tests/sanitizers/ubsan.supp}"
status=0
ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:$asan}" \
  ctest --output-on-failure -j"$(nproc)" --timeout 900 -L "$host_labels" || status=1
ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:$asan}" \
  ctest --output-on-failure -j"$(nproc)" --timeout 900 -L "$device_labels" ${device_exclude:+-E "$device_exclude"} || status=1
exit $status
