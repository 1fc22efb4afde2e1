#!/usr/bin/env bash
# Modules judged by what they use, and the memory preflight (issue 24 items 1 and 4):
# - README's "Using it" commands run as written (a module compiled for --target nvidia runs on
#   lavapipe because its dispatches fit, whatever the profile's limits);
# - a module whose dispatch really uses more workgroup memory than lavapipe has is refused in one
#   line naming the dispatch, both numbers and vk-run --recompile, which then runs it;
# - --report prints the peak device memory and the largest allocation, and a module whose arena or
#   whose buffers together exceed lavapipe's memory is refused at load, naming the buffer, before
#   anything is allocated (vk-run runs under a 1.5 GB address-space limit there).
set -uo pipefail
compile=$1; run=$2; src=$3; work=$4
rm -rf "$work"; mkdir -p "$work"
source "$(dirname "$0")/checks.sh"
# expect_refusal WHAT SUBSTRING... -- COMMAND...: exit 1, one stderr line holding every substring.
expect_refusal() {
  local what=$1; shift
  local needles=()
  while [ "$1" != "--" ]; do needles+=("$1"); shift; done
  shift
  ( ulimit -v 1500000; "$@" ) >/dev/null 2>"$work/err"; local rc=$?
  local lines; lines=$(wc -l <"$work/err")
  if [ $rc -ne 1 ] || [ "$lines" -ne 1 ]; then fail "$what: exit $rc, $lines stderr lines: $(head -3 "$work/err")"; return; fi
  for n in "${needles[@]}"; do
    if ! grep -qF -- "$n" "$work/err"; then fail "$what: '$n' missing from: $(cat "$work/err")"; return; fi
  done
  pass
}

# 1. README's commands, taken from README itself, with the binaries and /tmp paths of this build.
mapfile -t readme < <(sed -n '/^## Using it/,/^- /p' "$src/README.md" | grep -E '^build/release/tools/vk-(compile|run) (examples|/tmp)')
if [ "${#readme[@]}" -eq 2 ]; then pass; else fail "expected README's vk-compile and vk-run example, found ${#readme[@]} lines"; fi
for line in "${readme[@]}"; do
  cmd=${line//build\/release\/tools\/vk-compile/$compile}
  cmd=${cmd//build\/release\/tools\/vk-run/$run}
  cmd=${cmd//\/tmp\//$work\/}
  if (cd "$src" && eval "$cmd") >"$work/readme.log" 2>&1; then pass
  else fail "README command failed: $line: $(tail -1 "$work/readme.log")"; fi
done
if grep -q "^check logits: .* ok$" "$work/readme.log"; then pass; else fail "README's vk-run printed no passing check"; fi

# 2. A dispatch that needs more workgroup memory than lavapipe's 32768 bytes: the nvidia profile
#    plans this 4096x4096x16 matmul with 256x128 tiles in 49152 bytes.
printf 'graph @mm(%%a: tensor<4096x16xf32>, %%b: tensor<16x4096xf32>) {\n  %%y = matmul "matmul" (%%a, %%b) : tensor<4096x4096xf32>\n  return %%y as "y"\n}\n' >"$work/mm.vkir"
if "$compile" "$work/mm.vkir" -o "$work/mm" --target nvidia >/dev/null 2>&1 &&
   grep -q '"workgroup_memory_bytes": 49152' "$work/mm/manifest.json"; then pass
else fail "the nvidia profile no longer plans 49152 bytes for the 4096x4096x16 matmul"; fi
expect_refusal "module using too much workgroup memory" \
  "dispatch 'd0_matmul_tiled' uses 49152 bytes of workgroup memory" "allows 32768" "maxComputeSharedMemorySize" \
  "vk-run --recompile" -- "$run" "$work/mm" --random-inputs 1
if "$run" "$work/mm" --random-inputs 1 --recompile >"$work/recompile.log" 2>&1 && grep -q "^ran 1 dispatches" "$work/recompile.log"; then pass
else fail "vk-run --recompile: $(tail -1 "$work/recompile.log")"; fi

# 3. Memory preflight. 24 softmax results of 128 MiB, all live until their sum: a 3 GiB arena,
#    above lavapipe's maxMemoryAllocationSize (2 GiB), so it would be held in two segments
#    (module/storage_segments.h); together with the input and output it exceeds the 2 GiB heap.
{
  echo 'graph @big_arena(%x: tensor<1024x32768xf32>) {'
  prev=%x
  for i in $(seq 1 24); do echo "  %a$i = softmax ($prev) {axis = -1} : tensor<1024x32768xf32>"; prev=%a$i; done
  acc=%a1
  for i in $(seq 2 24); do echo "  %s$i = add ($acc, %a$i) : tensor<1024x32768xf32>"; acc=%s$i; done
  echo "  return $acc as \"y\""; echo '}'
} >"$work/big_arena.vkir"
"$compile" "$work/big_arena.vkir" -o "$work/big_arena" --target lavapipe --report >"$work/big_arena.report" 2>&1
if grep -q "^device memory at load: 3.3 GiB (3489660932 bytes); largest allocation: arena, 3.0 GiB (3221225472 bytes)$" "$work/big_arena.report"; then pass
else fail "--report of the 3 GiB arena: $(grep 'device memory' "$work/big_arena.report")"; fi
expect_refusal "arena above the heap" \
  "module does not fit the memory of device" "its buffers need 3489660932 bytes of device memory" \
  "the device's memory heap has 2147483648 bytes" -- "$run" "$work/big_arena" --random-inputs 1
# 24 outputs of 100 MB: each fits, together (2.5 GB) they exceed lavapipe's 2 GiB heap.
{
  echo 'graph @many_outputs(%x: tensor<25000000xf32>) {'
  prev=%x; ret=""
  for i in $(seq 0 23); do echo "  %y$i = neg ($prev) : tensor<25000000xf32>"; prev=%y$i; ret="$ret${ret:+, }%y$i as \"y$i\""; done
  echo "  return $ret"; echo '}'
} >"$work/many_outputs.vkir"
"$compile" "$work/many_outputs.vkir" -o "$work/many_outputs" --target lavapipe --report >"$work/many_outputs.report" 2>&1
if grep -q "^device memory at load: 2.3 GiB (2500000008 bytes); largest allocation: input 'x', 95.4 MiB (100000000 bytes)$" "$work/many_outputs.report"; then pass
else fail "--report of 24 outputs: $(grep 'device memory' "$work/many_outputs.report")"; fi
expect_refusal "outputs above the heap" \
  "its buffers need 2500000008 bytes of device memory (largest: input 'x', 100000000 bytes)" \
  "the device's memory heap has 2147483648 bytes" -- "$run" "$work/many_outputs" --random-inputs 1

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
