#!/usr/bin/env bash
# samples/README.md's lavapipe vk-run profile lists the dispatches by name; those names are what a
# reader greps for, so they must be the ones vk-run prints today (kernels get renamed).
set -uo pipefail
run=$1; model=$2; readme=$3
documented=$(awk '/vk-run mobilenet_like.onnx .*# lavapipe/ {on = 1; next} on && /^```/ {exit}
                  on && /^  d[0-9]+_/ {print $1}' "$readme")
log=$(mktemp)
"$run" "$model" --random-inputs 1 --profile >"$log" 2>&1 || {
  echo "FAIL: vk-run: $(tail -1 "$log")"; rm -f "$log"; exit 1; }
actual=$(awk '/^  d[0-9]+_/ {print $1}' "$log")
rm -f "$log"
if [ -z "$documented" ] || [ "$documented" != "$actual" ]; then
  echo "FAIL: samples/README.md's dispatch names differ from vk-run's:"
  diff <(echo "$documented") <(echo "$actual")
  exit 1
fi
echo "ok: $(echo "$actual" | wc -l) dispatch names match"
