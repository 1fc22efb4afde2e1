#!/usr/bin/env bash
# --precision fp32|fp16|fp16x3 (issues 22, 23) through vk-compile and vk-run: the manifest records it, --report
# shows each dispatch's precision, the casts of inputs and outputs add no dispatch, vk-run --check
# holds an fp16 module to max abs error / max abs output <= 5e-3, and bad uses are one-line errors.
#   precision_test.sh VK_COMPILE VK_RUN SOURCE_DIR WORK
set -uo pipefail
compile=$1; run=$2; src=$3; work=$4
rm -rf "$work"; mkdir -p "$work"
export VKC_CACHE_DIR="$work/cache"
source "$(dirname "$0")/checks.sh"
net="$src/examples/small_convnet.vkir"

# Compiled both ways: same dispatch count, fp16 recorded, the report's precision column.
"$compile" "$net" -o "$work/f32" --target lavapipe --report >"$work/f32.report" 2>&1 || fail "vk-compile fp32"
"$compile" "$net" -o "$work/f16" --target lavapipe --report --precision fp16 >"$work/f16.report" 2>&1 ||
  fail "vk-compile --precision fp16: $(tail -1 "$work/f16.report")"
n32=$(grep -o '^[0-9]* dispatches' "$work/f32.report"); n16=$(grep -o '^[0-9]* dispatches' "$work/f16.report")
[ -n "$n16" ] && [ "$n32" = "$n16" ] && pass || fail "fp16 has '$n16', fp32 '$n32'"
grep -q '"precision": "fp16"' "$work/f16/manifest.json" && pass || fail "the fp16 manifest records no precision"
grep -q '"precision"' "$work/f32/manifest.json" && fail "an fp32 manifest carries a precision field" || pass
grep -q '^precision fp16$' "$work/f16.report" && pass || fail "--report does not say precision fp16"
grep -qE '^dispatch +strategy +precision ' "$work/f16.report" && pass || fail "--report has no precision column"
grep -qE '^d[0-9]+_\S+ +\S+ +fp16 ' "$work/f16.report" && pass || fail "no dispatch reported as fp16"
grep -qE '^d[0-9]+_\S+ +\S+ +(fp16|mixed) ' "$work/f32.report" && fail "an fp32 module reports f16 dispatches" || pass
# The compiled module keeps its precision: vk-run --check measures against the fp16 bound.
"$run" "$work/f16" --random-inputs 1 --check >"$work/f16.run" 2>&1 &&
  grep -q "max abs / max |ref| .* (fp16, expected <= 5.000e-03) ok" "$work/f16.run" && pass ||
  fail "vk-run --check of the fp16 module: $(tail -1 "$work/f16.run")"
# Every example, compiled in process, within the bound.
for f in "$src"/examples/*.vkir; do
  name=$(basename "$f" .vkir)
  if "$run" "$f" --random-inputs 2 --check --precision fp16 >"$work/$name.run" 2>&1 &&
     grep -q "(fp16, expected <= 5.000e-03) ok" "$work/$name.run"; then pass
  else fail "vk-run $name --precision fp16 --check: $(tail -1 "$work/$name.run")"; fi
done
# The module cache keys on the precision: an fp32 entry is not reused for fp16, nor the reverse.
rm -rf "$VKC_CACHE_DIR"
"$run" "$net" --random-inputs 1 --check >"$work/c1.run" 2>&1
"$run" "$net" --random-inputs 1 --check --precision fp16 >"$work/c2.run" 2>&1
"$run" "$net" --random-inputs 1 --check --precision fp16 >"$work/c3.run" 2>&1
if grep -q "module: compiled" "$work/c2.run" && grep -q "(fp16, expected" "$work/c2.run" &&
   grep -q "module: loaded from the module cache" "$work/c3.run" && grep -q "(fp16, expected" "$work/c3.run" &&
   ! grep -q "(fp16" "$work/c1.run"; then pass
else fail "module cache and precision: $(grep -h "^module:" "$work"/c[123].run | tr '\n' ' ')"; fi
# A tolerance the error cannot meet fails the check (the fp16 check is not vacuous).
"$run" "$net" --random-inputs 1 --check --precision fp16 --tolerance 1e-9 >"$work/tight.run" 2>&1 &&
  fail "--tolerance 1e-9 passed an fp16 module" || pass

# fp16x3: recorded in the manifest; ViT's projections take float16 pieces on NVIDIA's profile (the
# output projection split over K, its reduce dispatch named like it) and stay on the FMA loop on
# lavapipe's (no tensor cores), where vk-run --check holds the module to float32's 1e-4.
proj="$src/tests/plans/cases/vit_projections_b8.vkir"
"$compile" "$proj" -o "$work/x3" --target nvidia --report --precision fp16x3 >"$work/x3.report" 2>&1 ||
  fail "vk-compile --precision fp16x3: $(tail -1 "$work/x3.report")"
grep -q '"precision": "fp16x3"' "$work/x3/manifest.json" && pass || fail "the fp16x3 manifest records no precision"
[ "$(grep -c '^d[0-9]*_matmul_coopmat.*fp16x3 tensor cores' "$work/x3.report")" = 2 ] && pass ||
  fail "nvidia fp16x3: $(grep '^d' "$work/x3.report")"
"$compile" "$proj" -o "$work/x3l" --target lavapipe --report --precision fp16x3 >"$work/x3l.report" 2>&1 ||
  fail "vk-compile --precision fp16x3 for lavapipe: $(tail -1 "$work/x3l.report")"
grep -q 'tensor cores' "$work/x3l.report" && fail "lavapipe fp16x3 planned tensor cores" || pass
"$run" "$net" --random-inputs 1 --check --precision fp16x3 >"$work/x3.run" 2>&1 && grep -q " ok$" "$work/x3.run" && pass ||
  fail "vk-run --precision fp16x3 --check: $(tail -1 "$work/x3.run")"

expect_error "vk-compile --precision fp8" "$compile" "$net" -o "$work/x" --target lavapipe --precision fp8
grep -q "unknown precision 'fp8' (expected fp32, fp16 or fp16x3)" "$work/err" && pass || fail "fp8 message: $(cat "$work/err")"
expect_error "vk-run --precision fp8" "$run" "$net" --random-inputs 1 --precision fp8
expect_error "vk-run --precision with a compiled module" "$run" "$work/f16" --random-inputs 1 --precision fp32
expect_error "fp16 for a target without 16-bit storage" "$compile" "$net" -o "$work/x" --target vulkan-min --precision fp16
grep -q "precision fp16 needs a target with storageBuffer16BitAccess and shaderFloat16" "$work/err" && pass ||
  fail "vulkan-min fp16 message: $(cat "$work/err")"

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
