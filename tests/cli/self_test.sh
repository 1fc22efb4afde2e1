#!/usr/bin/env bash
# vk-run --self-test (issue 22 item 6) on lavapipe: the report names the device and driver, says
# the gate is not offered (no cooperative matrix there), runs the conformance subset against the
# reference interpreter with every check passing, prints timings, and exits 0; misuse is a
# one-line error. Also --list-devices' gate line, and the gate's cache left untouched on lavapipe.
#   self_test.sh VK_RUN WORK
set -uo pipefail
run=$1; work=$2
rm -rf "$work"; mkdir -p "$work"
export VKC_CACHE_DIR="$work/cache"
source "$(dirname "$0")/checks.sh"
has() { grep -qE -- "$1" "$work/report" && pass || fail "the report lacks /$1/"; }

"$run" --self-test >"$work/report" 2>"$work/err"; rc=$?
[ $rc -eq 0 ] && pass || fail "--self-test exit $rc: $(tail -3 "$work/err")"
[ -s "$work/err" ] && fail "--self-test wrote to stderr: $(head -3 "$work/err")" || pass
has '^vkc self-test '
has '^vkc: [0-9]+\.[0-9]+\.[0-9]+$'
has '^device: llvmpipe.* \(cpu, vendor 0x[0-9a-f]{4,}, device 0x[0-9a-f]{4,}, Vulkan 1\.[0-9]+\.[0-9]+\)$'
has '^driver: .+'
has '^subgroup size: [0-9]+ '
has '^tensor cores: none$'
has '^gate: not offered \(no cooperative matrix\)$'
has '^check matmul 67x45x33 f32: pass '
has '^check conv\+relu\+conv 1x16x19x19 k3 --precision fp16: pass \(max error / max \|ref\| [0-9.e+-]+, bound 5\.00e-03'
n=$(grep -c '^check .*: pass ' "$work/report")
[ "$n" -ge 7 ] && pass || fail "$n checks passed, expected 7"
grep -q '^check .*FAIL' "$work/report" && fail "a check failed: $(grep FAIL "$work/report")" || pass
has '^conformance subset: 7/7 passed$'
has '^time matmul 512x512x512 f32: [0-9]+\.[0-9]{3} ms, [0-9.]+ GFLOP/s \(matmul_'
has '^time conv 1x32x64x64 k3 f32: [0-9]+\.[0-9]{3} ms'
has '^self-test: PASS$'
# No gate verdict is cached on a device without cooperative matrices.
[ -d "$work/cache/gate" ] && fail "a gate verdict was cached on lavapipe: $(ls "$work/cache/gate")" || pass

# --device picks the device; misuse is a one-line usage error.
"$run" --self-test --device llvmpipe >"$work/report2" 2>&1 && grep -q '^device: llvmpipe' "$work/report2" && pass ||
  fail "--self-test --device llvmpipe: $(tail -2 "$work/report2")"
"$run" --self-test --benchmark 3 >/dev/null 2>"$work/err"; rc=$?
[ $rc -eq 1 ] && [ "$(wc -l <"$work/err")" -eq 1 ] && grep -q -- "--self-test takes no other argument" "$work/err" && pass ||
  fail "--self-test --benchmark 3: exit $rc, $(cat "$work/err")"

echo "$passes passed, $fails failed"
[ $fails -eq 0 ]
