# Shared by the CLI integration tests (sourced): a scratch folder removed on exit, pass/fail
# counters, and expect_exit, which runs a command with its stdout and stderr in $tmp/out and
# $tmp/err and checks its exit code. The caller prints the summary with `finish`.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
expect_exit() {  # expect_exit CODE DESCRIPTION -- command...
  local want=$1 what=$2
  shift 3
  "$@" >"$tmp/out" 2>"$tmp/err"
  local got=$?
  if [ "$got" = "$want" ]; then ok; else bad "$what: exit $got, want $want; stderr: $(cat "$tmp/err")"; fi
}
# A dependency scripts/install-deps.sh installs is missing, so part of a test cannot run
# (docs/testing: "A skip is a failure in CI"). Under GPUPLAN_CI=1 (.ci/run) that is a failure;
# otherwise a "SKIP: REASON" line, and `finish` ends the test with 77, which ctest counts as a
# skip and scripts/test.sh lists with the reason.
skipped=()
missing_dep() {  # missing_dep REASON
  if [ "${GPUPLAN_CI:-}" = 1 ]; then
    bad "$1 (GPUPLAN_CI=1: scripts/install-deps.sh installs it, so its skip is a failure)"
  else
    echo "SKIP: $1"
    skipped+=("$1")
  fi
}
finish() {  # finish NAME: the counts; exit 1 on a failure, 77 when a part was skipped, else 0
  echo "$1: $pass passed, $fail failed, ${#skipped[@]} skipped"
  if [ "$fail" -ne 0 ]; then exit 1; fi
  if [ ${#skipped[@]} -ne 0 ]; then exit 77; fi
  exit 0
}
