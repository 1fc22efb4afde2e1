#!/usr/bin/env bash
# A LLaMA-style decoder layer (make_llama_layer.py) imports, matches the float64 reference on the
# device (vk-run --check), and compiles for the nvidia profile with its rotary embeddings and
# grouped-query heads inside the attention kernel's loads and its RMSNorms as one kernel each: one
# attention dispatch, two rms_norm dispatches, no concat, broadcast, slice, transpose or reduce
# dispatch left, q, k and v as one product (26 dispatches before session 23, 12 after it, 8 since
# session 24 joined the projections rotary reads and fused the head splits it reads twice).
# Usage: llama_layer_test.sh VK_COMPILE VK_RUN PYTHON SOURCE_DIR WORK_DIR
set -u
vkc=$1 vkr=$2 py=$3 src=$4 work=$5
. "$src/tests/cli/checks.sh"
rm -rf "$work" && mkdir -p "$work"
"$py" "$src/tests/cli/make_llama_layer.py" "$work/layer.onnx" || { echo "FAIL: make_llama_layer.py"; exit 1; }
if "$vkr" "$work/layer.onnx" --random-inputs 1 --check >"$work/run.txt" 2>&1 && grep -q "^check y: .* ok$" "$work/run.txt"; then pass
else fail "vk-run --check: $(tail -3 "$work/run.txt")"; fi
"$vkc" "$work/layer.onnx" -o "$work/out" --target nvidia --report >"$work/report.txt" 2>&1 || fail "vk-compile: $(tail -2 "$work/report.txt")"
kernels=$(grep -E '^d[0-9]+_' "$work/report.txt" | awk '{print $1}' | sed 's/^d[0-9]*_//')
[ "$(grep -c '^attention$' <<<"$kernels")" -eq 1 ] && pass || fail "attention dispatches: $kernels"
[ "$(grep -c '^rms_norm$' <<<"$kernels")" -eq 2 ] && pass || fail "rms_norm dispatches: $kernels"
for k in concat broadcast slice transpose reduce; do
  grep -q "^$k$" <<<"$kernels" && fail "a $k dispatch is left: $kernels" || pass
done
[ "$(grep -c "matmul 'matmul+matmul+matmul'" "$work/report.txt")" -eq 1 ] && pass || fail "q, k and v not joined: $kernels"
n=$(grep -cE '^d[0-9]+_' "$work/report.txt")
[ "$n" -le 8 ] && pass || fail "$n dispatches (8 expected)"
echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
