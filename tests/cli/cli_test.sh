#!/usr/bin/env bash
# CLI contract: every examples/*.vkir compiles for every target profile, every emitted .spv passes
# spirv-val for its target environment, vk-run reproduces the reference (--check), and user errors
# exit 1 with exactly one line on stderr and no signal.
set -uo pipefail
compile=$1; run=$2; spirv_val=$3; src=$4; work=$5
rm -rf "$work"; mkdir -p "$work"
source "$(dirname "$0")/checks.sh"

# The profiles vk-compile knows, which must be every file in targets/ (each one loads).
mapfile -t targets < <("$compile" --list-targets)
profiles=("$src"/targets/*.json)
if [ "${#targets[@]}" -gt 0 ] && [ "${#targets[@]}" -eq "${#profiles[@]}" ]; then pass
else fail "vk-compile --list-targets printed ${#targets[@]} names for ${#profiles[@]} files in targets/"; fi
for f in "$src"/examples/*.vkir; do
  name=$(basename "$f" .vkir)
  for t in "${targets[@]}"; do
    out="$work/$name.$t"
    if ! "$compile" "$f" -o "$out" --target "$t" >"$out.log" 2>&1; then
      # An op without a GPU kernel yet is a one-line error, reported but not hidden.
      fail "vk-compile $name --target $t: $(tail -1 "$out.log")"; continue
    fi
    env=$(grep -o '"vulkan_version": "[0-9.]*"' "$out/manifest.json" | grep -o '[0-9]\.[0-9]')
    [ "$env" = "1.1" ] && env=1.2   # vkc's 1.1 modules also validate for vulkan1.2
    for spv in "$out"/*.spv; do
      if "$spirv_val" --target-env "vulkan$env" "$spv" >/dev/null 2>"$out.val"; then pass
      else fail "spirv-val vulkan$env $spv: $(head -1 "$out.val")"; fi
    done
  done
  if "$run" "$work/$name.lavapipe" --random-inputs 1 --check --output-dir "$work/$name.out" >"$work/$name.run" 2>&1; then pass
  else fail "vk-run --check $name: $(tail -1 "$work/$name.run")"; fi
done

# User errors (expect_error, checks.sh): exit code 1, exactly one line on stderr.
printf 'graph @g(%%x: tensor<2xf32>) {\n  %%y = frobnicate (%%x) : tensor<2xf32>\n  return %%y as "y"\n}\n' >"$work/badop.vkir"
printf 'graph @g(%%x: tensor<2xf32>) {\n  %%y = relu (%%x) : tensor<2xf32>\n' >"$work/truncated.vkir"
printf 'not a numpy file' >"$work/bad.npy"
first=$(ls "$src"/examples/*.vkir | head -1)
expect_error "missing input file" "$compile" "$work/nope.vkir" -o "$work/x" --target lavapipe
expect_error "unknown target" "$compile" "$first" -o "$work/x" --target nosuchgpu
expect_error "unknown op" "$compile" "$work/badop.vkir" -o "$work/x" --target lavapipe
expect_error "truncated IR" "$compile" "$work/truncated.vkir" -o "$work/x" --target lavapipe
expect_error "unknown flag" "$compile" "$first" -o "$work/x" --frobnicate
expect_error "no output dir" "$compile" "$first"
expect_error "missing module" "$run" "$work/no-such-module"
mod=$(ls -d "$work"/*.lavapipe 2>/dev/null | head -1)
if [ -n "$mod" ]; then
  in=$(grep -o '"inputs": \[[^]]*' "$mod/manifest.json" | grep -o '"[^"]*"' | sed -n 2p | tr -d '"')
  expect_error "bad npy" "$run" "$mod" --input "$in=$work/bad.npy"
  expect_error "unknown input name" "$run" "$mod" --input "nosuch=$work/bad.npy"
  expect_error "missing inputs" "$run" "$mod"
  grep -q '"unknown target' "$work/err" 2>/dev/null || true
fi
# Flags: numbers parsed whole and range-checked (4294967296 must not wrap to 0 runs), and
# combinations where one flag would be silently ignored are refused.
expect_error "unknown --print-ir-after pass" "$compile" "$first" -o "$work/x" --target lavapipe --print-ir-after=nosuchpass
expect_error "--device with a named target" "$compile" "$first" -o "$work/x" --target lavapipe --device 0
expect_error "--list-targets with other flags" "$compile" --list-targets --target lavapipe
expect_error "--list-devices with other flags" "$run" --list-devices --benchmark 3
if [ -n "$mod" ]; then
  for bad in "--benchmark 4294967296" "--benchmark -1" "--benchmark 3x" "--benchmark 99999999999999999999" \
             "--random-inputs 4294967296" "--random-inputs -1"; do
    expect_error "vk-run $bad" "$run" "$mod" --random-inputs 1 $bad
  done
  for bad in "-1" "nan" "inf" "1e999" " 1e-3" "0x10" ""; do
    expect_error "vk-run --tolerance '$bad'" "$run" "$mod" --random-inputs 1 --check --tolerance "$bad"
  done
  expect_error "--input given twice" "$run" "$mod" --input "$in=$work/bad.npy" --input "$in=$work/bad.npy"
  expect_error "-o and --output" "$compile" "$first" -o "$work/x" --output "$work/y" --target lavapipe
  expect_error "--tolerance without --check" "$run" "$mod" --random-inputs 1 --tolerance 1e-3
  expect_error "--input-shape with a compiled module" "$run" "$mod" --random-inputs 1 --input-shape x=1,2
  expect_error "--recompile with a model file" "$run" "$first" --random-inputs 1 --recompile
  expect_error "--device-io without --benchmark" "$run" "$mod" --random-inputs 1 --device-io
  # The refusals above must not have hidden the good spellings: both still run.
  "$run" "$mod" --random-inputs 4294967295 --check --tolerance 1e-3 --benchmark 2 >"$work/ok.run" 2>&1 &&
    grep -q "benchmark: 2 runs" "$work/ok.run" && pass || fail "vk-run with valid flags: $(tail -1 "$work/ok.run")"
  "$run" "$mod" --random-inputs 1 --benchmark 2 --device-io >"$work/io.run" 2>&1 &&
    grep -q "benchmark (device-resident inputs and outputs): 2 runs" "$work/io.run" && pass ||
    fail "vk-run --device-io: $(tail -1 "$work/io.run")"
  # An unusable --output-dir (here below a regular file) fails before any GPU work: no device line.
  "$run" "$mod" --random-inputs 1 --output-dir "$work/bad.npy/out" >"$work/od.out" 2>"$work/od.err"; rc=$?
  if [ $rc -eq 1 ] && [ "$(wc -l <"$work/od.err")" -eq 1 ] && grep -q -- "--output-dir" "$work/od.err" &&
     ! grep -q "internal" "$work/od.err" && ! grep -q "^device:" "$work/od.out"; then pass
  else fail "unwritable --output-dir: exit $rc: $(cat "$work/od.err") $(head -1 "$work/od.out")"; fi
fi
# Outputs whose names sanitize to the same file ('a/b' and 'a_b') get distinct files and a note.
printf 'graph @g(%%x: tensor<2xf32>) {\n  %%y = relu (%%x) : tensor<2xf32>\n  %%z = neg (%%x) : tensor<2xf32>\n  return %%y as "a/b", %%z as "a_b"\n}\n' >"$work/collide.vkir"
if "$run" "$work/collide.vkir" --random-inputs 1 --output-dir "$work/collide" >"$work/collide.run" 2>&1 &&
   [ -f "$work/collide/a_b.npy" ] && [ -f "$work/collide/a_b_2.npy" ] &&
   ! cmp -s "$work/collide/a_b.npy" "$work/collide/a_b_2.npy" &&
   grep -q "note: outputs 'a/b' and 'a_b' both map to a_b.npy; 'a_b' is written to a_b_2.npy" "$work/collide.run"; then pass
else fail "colliding output file names: $(ls "$work/collide" 2>&1 | tr '\n' ' ') $(tail -2 "$work/collide.run")"; fi
# A seed with every input given would generate nothing: refused (the message shows it is not the .npy).
expect_error "--random-inputs with every input given" "$run" "$work/collide.vkir" --input "x=$work/collide/a_b.npy" --random-inputs 1
grep -q -- "--random-inputs is unused" "$work/err" && pass || fail "--random-inputs with every input given: $(cat "$work/err")"

# --list-devices says which tensor cores vkc uses on each device (none on lavapipe).
devices=$("$run" --list-devices 2>&1)
case "$devices" in *"llvmpipe"*"tensor cores: none"*) pass ;; *) fail "--list-devices lacks the tensor cores line: $devices" ;; esac

unknown=$("$compile" "$first" -o "$work/x" --target nosuchgpu 2>&1)
case "$unknown" in *"known: lavapipe"*) pass ;; *) fail "unknown target message lists no targets: $unknown" ;; esac

# --print-ir-after-all prints the IR after each pass on stderr; --report prints the budget table.
"$compile" "$first" -o "$work/x" --target vulkan-min --print-ir-after-all --report >"$work/report" 2>"$work/ir"
grep -q "IR after dce" "$work/ir" && grep -q "graph @" "$work/ir" && pass || fail "--print-ir-after-all printed no IR"
grep -q "wg memory/limit" "$work/report" && grep -q "/16384" "$work/report" && pass || fail "--report lacks the budget column"
grep -q "arena peak" "$work/report" && grep -q "tiles:" "$work/report" && pass || fail "--report lacks tiles or the arena peak"
# Which ops a dispatch holds and why a fusion was refused: quantize does not fit vulkan-min's 4
# storage buffers next to conv + bias + relu (issue 5's budget-aware split).
"$compile" "$src/tests/fusion/conv_bias_relu_quantize.vkir" -o "$work/q" --target vulkan-min --report >"$work/qreport"
grep -q "conv 'conv' .* + relu 'relu'" "$work/qreport" && grep -q "not fused: the fused dispatch would bind" "$work/qreport" &&
  pass || fail "--report does not name the fused ops or the refused fusion"

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
