#!/usr/bin/env bash
# Second CI build: AddressSanitizer + UndefinedBehaviorSanitizer (-DVKC_SANITIZE=ON) running the
# unit and differential suites on lavapipe with the validation layer on. Which suites run is a
# CTest label regex (VKC_SANITIZER_LABELS); the soak suite is left out by default: its 10,000
# executions take minutes under ASan and its leak check is RSS-based, which ASan's quarantine
# defeats (LeakSanitizer covers leaks here instead).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
labels=${VKC_SANITIZER_LABELS:-"^(support|ir|module|codegen|runtime|e2e|kernels|onnx|hostile)$"}
"$here/scripts/setup.sh"
# RelWithDebInfo: symbolized reports at a usable speed. Warnings are not errors here: GCC's
# sanitizer instrumentation changes what its flow-based warnings see; scripts/test.sh is the
# warnings gate.
"$here/scripts/build.sh" "$here/build/asan" RelWithDebInfo -DVKC_SANITIZE=ON -DVKC_BUILD_TESTS=ON
cd "$here/build/asan"
export VKC_DEVICE="${VKC_DEVICE:-llvmpipe}"
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp}"
# allocator_may_return_null: the out-of-memory test asks lavapipe for 1 PiB, which must come back
# as VK_ERROR_OUT_OF_DEVICE_MEMORY rather than an ASan abort inside the driver.
# fast_unwind_on_malloc=0: lavapipe, LLVM and the validation layer are built without frame
# pointers; full unwinding gives LeakSanitizer the stacks that tests/sanitizers/lsan.supp matches.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1:fast_unwind_on_malloc=0:strict_string_checks=1:detect_stack_use_after_return=0}"
export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$here/tests/sanitizers/lsan.supp:print_suppressions=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1:suppressions=$here/tests/sanitizers/ubsan.supp}"
ctest --output-on-failure -j"$(nproc)" --timeout 900 -L "$labels"
