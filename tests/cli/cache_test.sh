#!/usr/bin/env bash
# vkc's on-disk caches through vk-run (docs/api.md "Caches"): a model compiled once is loaded from
# the module cache by the next process; another option, a damaged entry or --no-cache compiles
# again; the cache root follows $VKC_CACHE_DIR, then $XDG_CACHE_HOME; two processes filling the
# cache at once both succeed. Also the refusal of modules of another format version, and
# vk-run --recompile recompiling them from the source graph they carry.
#   cache_test.sh VK_COMPILE VK_RUN PYTHON SOURCE_DIR WORK_DIR
set -uo pipefail
compile=$1; run=$2; python=$3; src=$4; work=$5
rm -rf "$work"; mkdir -p "$work"
source "$(dirname "$0")/checks.sh"
export VKC_CACHE_DIR="$work/cache"
modules() { find "$1" -name '*.vkcm' 2>/dev/null | sort; }

# y = relu(x) with a dynamic batch dim, so --input-shape is an option that changes the module.
"$python" - "$work/dyn.onnx" <<'PY'
import sys
from onnx import TensorProto, helper, save
x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 3])
g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="act")], "dyn", [x], [y])
save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), sys.argv[1])
PY
vkrun() { "$run" "$work/dyn.onnx" --random-inputs 1 --check "$@" >"$work/out" 2>&1; }
expect() {  # expect WHAT PATTERN: the last vk-run exited 0 and printed PATTERN
  if [ $? -eq 0 ] && grep -q "$2" "$work/out"; then pass; else fail "$1: $(grep -v '^output' "$work/out" | tail -3)"; fi
}

vkrun --input-shape x=2,3; expect "first run compiles" "^module: compiled (kept in the module cache)"
first=$(modules "$VKC_CACHE_DIR/modules")
[ "$(echo "$first" | grep -c .)" -eq 1 ] && pass || fail "first run left $(echo "$first" | grep -c .) module entries"
[ "$(find "$VKC_CACHE_DIR/pipelines" -name '*.vkpc' | wc -l)" -eq 1 ] && pass || fail "no pipeline cache file in $VKC_CACHE_DIR/pipelines"
vkrun --input-shape x=2,3; expect "second run uses the cache" "^module: loaded from the module cache"
grep -q "check y: .* ok" "$work/out" && pass || fail "cached module's output does not match the reference"
vkrun --input-shape x=4,3; expect "another --input-shape misses" "^module: compiled (kept"
[ "$(modules "$VKC_CACHE_DIR/modules" | wc -l)" -eq 2 ] && pass || fail "another --input-shape did not add an entry"

# A damaged entry (a flipped byte, then a cut-off file) is ignored, compiled again and rewritten.
size=$(stat -c %s "$first")
printf '\xff' | dd of="$first" bs=1 seek=$((size / 2)) conv=notrunc status=none
vkrun --input-shape x=2,3; expect "corrupted entry recompiles" "^module: compiled (kept"
vkrun --input-shape x=2,3; expect "corrupted entry was rewritten" "^module: loaded from the module cache"
truncate -s $((size / 3)) "$first"
vkrun --input-shape x=2,3; expect "truncated entry recompiles" "^module: compiled (kept"
[ "$(stat -c %s "$first")" -eq "$size" ] && pass || fail "truncated entry not rewritten whole"

# --no-cache: no module cache read or written; --no-pipeline-cache keeps the module cache on.
before=$(modules "$VKC_CACHE_DIR/modules")
vkrun --input-shape x=5,3 --no-cache; expect "--no-cache compiles" "^module: compiled$"
[ "$(modules "$VKC_CACHE_DIR/modules")" = "$before" ] && pass || fail "--no-cache wrote a module entry"
vkrun --input-shape x=2,3 --no-pipeline-cache; expect "--no-pipeline-cache keeps the module cache" "^module: loaded from"
ls "$VKC_CACHE_DIR"/modules/*.tmp* >/dev/null 2>&1 && fail "temporary files left in the cache" || pass

# The root: $XDG_CACHE_HOME/vkc when VKC_CACHE_DIR is unset.
(unset VKC_CACHE_DIR; XDG_CACHE_HOME="$work/xdg" vkrun --input-shape x=2,3)
[ "$(modules "$work/xdg/vkc/modules" | wc -l)" -eq 1 ] && pass || fail "XDG_CACHE_HOME/vkc/modules holds no entry"

# Two processes filling an empty cache at once: both succeed, and the entry they leave loads.
export VKC_CACHE_DIR="$work/race"
"$run" "$work/dyn.onnx" --random-inputs 1 --input-shape x=3,3 >"$work/race1" 2>&1 & p1=$!
"$run" "$work/dyn.onnx" --random-inputs 1 --input-shape x=3,3 >"$work/race2" 2>&1 & p2=$!
wait $p1 && wait $p2 && pass || fail "concurrent runs: $(tail -1 "$work/race1") $(tail -1 "$work/race2")"
vkrun --input-shape x=3,3; expect "entry written by concurrent runs loads" "^module: loaded from the module cache"

# Modules of another format version: one line saying which and how to recompile, before any GPU
# work; --recompile compiles the source graph the module carries.
"$compile" "$src/examples/small_convnet.vkir" -o "$work/mod" --target lavapipe >/dev/null || fail "vk-compile"
cp -r "$work/mod" "$work/mod.orig"
ours=$(grep -o '"format_version": [0-9]*' "$work/mod/manifest.json" | grep -o '[0-9]*$')
# This vkc reads formats 1 to $ours (1: before dispatches recorded `requires`).
for case in "newer:$((ours + 1))" "older:0" "older:-1"; do
  which=${case%%:*}; v=${case#*:}
  rm -rf "$work/mod"; cp -r "$work/mod.orig" "$work/mod"
  sed -i "s/\"format_version\": $ours/\"format_version\": $v/" "$work/mod/manifest.json"
  "$run" "$work/mod" --random-inputs 1 >"$work/out" 2>"$work/err"; rc=$?
  if [ $rc -eq 1 ] && [ "$(wc -l <"$work/err")" -eq 1 ] && ! grep -q "^device:" "$work/out" &&
     grep -q "written by an\? $which vkc (format $v, this vkc reads 1 to $ours; vkc [0-9.]* wrote it, this is vkc" "$work/err" &&
     grep -q "vk-run $work/mod --recompile" "$work/err" && grep -q "vk-compile MODEL -o $work/mod" "$work/err"; then pass
  else fail "format $v: exit $rc: $(cat "$work/err")"; fi
  "$run" "$work/mod" --random-inputs 1 --check --recompile >"$work/out" 2>&1
  expect "format $v --recompile" "^module: recompiled from its source graph"
done
sed -i "/\"format_version\"/d" "$work/mod/manifest.json"
"$run" "$work/mod" --random-inputs 1 >/dev/null 2>"$work/err"
[ "$(wc -l <"$work/err")" -eq 1 ] && grep -q "has no format_version" "$work/err" && pass || fail "no format_version: $(cat "$work/err")"
rm "$work/mod/source.vkir"
"$run" "$work/mod" --random-inputs 1 --recompile >/dev/null 2>"$work/err"
[ "$(wc -l <"$work/err")" -eq 1 ] && grep -q "it carries no source graph, so only vk-compile can" "$work/err" && pass ||
  fail "--recompile without a source graph: $(cat "$work/err")"

# Shapes fixed at first use: without --input-shape, the symbolic dim takes the input file's shape;
# a new shape compiles (and says how long it took), a shape seen before loads from the cache.
"$python" - "$work" <<'PY'
import sys
import numpy as np
np.save(sys.argv[1] + "/x4.npy", np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3))
np.save(sys.argv[1] + "/x7.npy", np.linspace(-2, 2, 21, dtype=np.float32).reshape(7, 3))
PY
runfile() { "$run" "$work/dyn.onnx" --input "x=$work/$1.npy" --check >"$work/out" 2>&1; }
runfile x4; expect "a new shape is specialized" "^specialized for these shapes in [0-9.]* ms (compiled"
grep -q "^shapes: x f32\[4x3\]" "$work/out" && pass || fail "the shape line: $(grep shapes "$work/out")"
runfile x7; expect "another shape compiles" "^specialized for these shapes in [0-9.]* ms (compiled"
runfile x4; expect "a shape seen before loads" "^specialized for these shapes in [0-9.]* ms (loaded from the module cache"
"$run" "$work/dyn.onnx" --random-inputs 1 >"$work/out" 2>"$work/err"
[ $? -eq 1 ] && [ "$(wc -l <"$work/err")" -eq 1 ] && grep -q "input 'x' dim 0 ('N') is symbolic: give --input x=FILE.npy" "$work/err" &&
  pass || fail "random data for a symbolic dim: $(cat "$work/err")"

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
