#!/usr/bin/env bash
# Golden plan tests: every tests/plans/cases/*.vkir compiled for one target profile with
# `vk-compile --report`, the report compared with tests/plans/expected/TARGET/CASE.txt. No GPU is
# needed, so CI sees every profile's tiles, strategies, workgroup memory and grids; a change of
# plan shows up as a diff in review (regenerate with tests/plans/regenerate.sh).
#   check_plans.sh VK_COMPILE SOURCE_DIR TARGET WORK [--update]
# A case the compiler refuses for the target is recorded too: its one-line error and exit code.
# CASE.flags, when present, holds more vk-compile options for that case (e.g. --precision fp16).
set -uo pipefail
compile=$1; src=$2; target=$3; work=$4; update=${5:-}
cases="$src/tests/plans/cases"; expected="$src/tests/plans/expected/$target"
rm -rf "$work"; mkdir -p "$work"
[ "$update" = --update ] && mkdir -p "$expected"
fails=0; passes=0
for f in "$cases"/*.vkir; do
  name=$(basename "$f" .vkir)
  # The module directory and the checkout's path are what differ from run to run.
  flags=(); [ -f "$cases/$name.flags" ] && read -r -a flags <"$cases/$name.flags"
  { "$compile" "$f" -o "$work/$name" --target "$target" --report "${flags[@]}" 2>&1; echo "exit $?"; } |
    sed -e "s|$work/$name|OUT|g" -e "s|$src/||g" >"$work/$name.txt"
  if [ "$update" = --update ]; then
    cp "$work/$name.txt" "$expected/$name.txt"
  elif [ ! -f "$expected/$name.txt" ]; then
    echo "FAIL: $target/$name: no expected plan (run tests/plans/regenerate.sh)"; fails=$((fails + 1))
  elif ! diff -u "$expected/$name.txt" "$work/$name.txt" >"$work/$name.diff"; then
    echo "FAIL: $target/$name: the plan changed:"; cat "$work/$name.diff"; fails=$((fails + 1))
  else
    passes=$((passes + 1))
  fi
  rm -rf "${work:?}/$name"
done
# An expected file whose case was removed would go stale unnoticed.
for e in "$expected"/*.txt; do
  [ -e "$e" ] || continue
  [ -f "$cases/$(basename "$e" .txt).vkir" ] || { echo "FAIL: $e has no case"; fails=$((fails + 1)); }
done
echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
