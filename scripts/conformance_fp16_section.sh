#!/usr/bin/env bash
# The "fp16" section of docs/conformance.md, from `vk-conformance --precision fp16` output (one
# tab-separated line per test: result, name, ops, detail) of the bar's tests.
#   conformance_fp16_section.sh RESULTS.tsv
set -euo pipefail
results=$1
echo "## fp16 (\`--precision fp16\`)"
echo
echo "The bar's tests (\`tests/conformance/bar_filter.txt\`: node and pytorch-converted) compiled with"
echo "\`vk-conformance --precision fp16\` (CTest \`onnx.conformance_bar_fp16\`): a float output passes"
echo "when max abs error / max abs output <= 5e-3 against the stored outputs, the bound docs/api.md"
echo "states for fp16; integers and bools exactly. A one-op model whose input and output casts fuse"
echo "into its single kernel reads and writes f32 and stores nothing as f16 (its weights are inputs"
echo "too), so the count of tests that store f16 tensors is given as well."
echo
awk -F'\t' '{
    n[$1]++
    if (match($4, /[0-9]+ of [0-9]+ tensors stored as f16/)) { split(substr($4, RSTART), w, " "); if (w[1] > 0) f16++ }
    if (match($4, /max abs output [0-9.e+-]+/)) { r = substr($4, RSTART + 15, RLENGTH - 15) + 0; if (r > worst) { worst = r; at = $2 } }
  } END {
    printf "fp16: %d tests, %d pass, %d fail, %d unsupported; %d store f16 tensors. Largest max abs error / max abs output: %.3g (%s).\n\n", NR, n["pass"], n["fail"], n["unsupported"], f16, worst, at
  }' "$results"
awk -F'\t' '$1 != "pass" { printf "- %s: %s: %s\n", $2, $1, $4; any = 1 } END { if (any) print "" }' "$results"
