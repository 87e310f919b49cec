# Shared by the CLI test scripts: `expect NAME RC PATTERN -- command...` passes when the
# command exits with RC ("nonzero" for any failure) and its stdout+stderr matches PATTERN.
failures=0; passed=0
expect() {
  local name=$1 want_rc=$2 pattern=$3; shift 4
  local out rc rc_ok
  out=$("$@" 2>&1); rc=$?
  if [ "$want_rc" = "nonzero" ]; then [ $rc -ne 0 ] && rc_ok=1 || rc_ok=0; else [ $rc -eq "$want_rc" ] && rc_ok=1 || rc_ok=0; fi
  if [ $rc_ok -eq 1 ] && grep -qE -- "$pattern" <<<"$out"; then
    passed=$((passed + 1))
  else
    failures=$((failures + 1))
    echo "FAIL: $name (rc=$rc, wanted $want_rc and /$pattern/)"; echo "$out" | head -30
  fi
}
# check NAME CONDITION...: passes when the test command succeeds.
check() {
  local name=$1; shift
  if "$@"; then passed=$((passed + 1)); else failures=$((failures + 1)); echo "FAIL: $name ($*)"; fi
}
finish() {
  echo "$passed passed, $failures failed"
  [ $failures -eq 0 ]
}
