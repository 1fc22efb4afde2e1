#!/usr/bin/env bash
# The model-runner sample as a test: vk-run must exit 0 (which with --check also means it matched
# the reference interpreter) and print the five top-class lines of the classifier output.
#   check_top5.sh VK_RUN MODEL.onnx [vk-run flags...]
set -uo pipefail
out=$("$@" 2>&1)
rc=$?
printf '%s\n' "$out"
if [ "$rc" -ne 0 ]; then echo "FAIL: vk-run exited with $rc"; exit 1; fi
if ! grep -q '^top-5 classes of ' <<<"$out"; then echo "FAIL: no top-5 header"; exit 1; fi
lines=$(grep -cE '^  #[1-5] class [0-9]+: ' <<<"$out")
if [ "$lines" -ne 5 ]; then echo "FAIL: $lines top-5 lines, expected 5"; exit 1; fi
echo "PASS"
