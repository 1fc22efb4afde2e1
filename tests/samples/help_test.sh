#!/usr/bin/env bash
# Every sample takes --help (usage on stdout, exit 0) and writes files only where it is told: run in
# an empty directory, neither --help nor a run without --output-dir may leave anything there.
set -uo pipefail
work=$1; shift   # then the sample binaries
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
for bin in "$@"; do
  name=$(basename "$bin")
  rm -rf "$work/$name"; mkdir -p "$work/$name"
  (cd "$work/$name" && "$bin" --help >stdout.txt 2>stderr.txt); rc=$?
  [ $rc -eq 0 ] || fail "$name --help: exit $rc: $(head -1 "$work/$name/stderr.txt")"
  grep -q "^usage: $name" "$work/$name/stdout.txt" || fail "$name --help printed no usage line"
  [ -s "$work/$name/stderr.txt" ] && fail "$name --help wrote to stderr: $(head -1 "$work/$name/stderr.txt")"
  rm "$work/$name/stdout.txt" "$work/$name/stderr.txt"
  [ -z "$(ls -A "$work/$name")" ] || fail "$name --help wrote files: $(ls -A "$work/$name")"
  # An unknown option is a one-line usage error, not ignored and not taken for a file name.
  (cd "$work/$name" && "$bin" --no-such-option >/dev/null 2>"$work/$name.err"); rc=$?
  [ $rc -eq 1 ] && [ "$(wc -l <"$work/$name.err")" -eq 1 ] || fail "$name --no-such-option: exit $rc: $(head -2 "$work/$name.err")"
done
# The image filter without --output-dir runs but writes no PNGs into the current directory.
for bin in "$@"; do
  case "$bin" in *image-filter) ;; *) continue ;; esac
  rm -rf "$work/run"; mkdir -p "$work/run"
  (cd "$work/run" && "$bin" --width 32 >"$work/run.log" 2>&1) || fail "image filter without --output-dir: $(tail -1 "$work/run.log")"
  [ -z "$(ls -A "$work/run")" ] || fail "image filter without --output-dir wrote: $(ls -A "$work/run")"
done
[ "$fails" -eq 0 ] && echo "ok"
[ "$fails" -eq 0 ]
