# The CLI suites' shared checks (sourced; $work must be set): pass / fail count results, and
# expect_error runs a command that must fail as a user error: exit code 1 and exactly one line on
# stderr (the guide's rule for bad input).
fails=0; passes=0
pass() { passes=$((passes + 1)); }
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
expect_error() {
  local what=$1; shift
  "$@" >/dev/null 2>"$work/err"; local rc=$?
  local lines; lines=$(wc -l <"$work/err")
  if [ $rc -eq 1 ] && [ "$lines" -eq 1 ]; then pass
  else fail "$what: exit $rc, $lines stderr lines: $(head -3 "$work/err")"; fi
}
