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
