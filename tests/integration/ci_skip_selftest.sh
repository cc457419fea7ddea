#!/usr/bin/env bash
# The skip helper of the tests (harness.sh missing_dep, finish) on a dependency that is never
# there: outside CI the test ends with 77 (ctest: skipped); under GPUPLAN_CI=1 with 1 (failed).
# ctest runs it both ways (tests/CMakeLists.txt, ci_skip_policy_*); docs/testing.md.
set -uo pipefail
source "$(dirname "$0")/harness.sh"
ok
if command -v gpuplan-never-installed-dependency >/dev/null; then
  ok
else
  missing_dep "gpuplan-never-installed-dependency is not installed (the policy's self-test)"
fi
finish ci_skip_selftest
