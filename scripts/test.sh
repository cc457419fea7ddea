#!/usr/bin/env bash
# Runs every test: unit + integration (ctest) on the Release build, the library's tests again under
# AddressSanitizer and UndefinedBehaviorSanitizer, and a short smoke run of each fuzz target. After each ctest run the
# skipped tests are listed with their reasons; with GPUPLAN_CI=1 (set by .ci/run) a skip for a
# dependency scripts/install-deps.sh installs is a failure in the test itself, and any skip not
# on tests/skip-allowlist.txt fails the run (docs/testing.md).
set -euo pipefail
cd "$(dirname "$0")/.."
export GPUPLAN_CI=${GPUPLAN_CI:-0}
scripts/install-deps.sh
jobs=$(nproc)
stage() { echo "== $1 (at ${SECONDS}s)"; }   # each stage's start, to see where CI time goes
# ctest_run BUILD_DIR [ctest args]: ctest, then its skips and their reasons (tests/ctest_skips.py);
# fails when ctest failed or, under GPUPLAN_CI=1, when a skip is not on the allow-list.
ctest_run() {
  local dir=$1 status=0 skips=0
  shift
  ctest --test-dir "$dir" --output-on-failure --output-junit ctest-junit.xml "$@" || status=$?
  python3 tests/ctest_skips.py "$dir/ctest-junit.xml" tests/skip-allowlist.txt || skips=$?
  [ "$status" -eq 0 ] && [ "$skips" -eq 0 ]
}

stage "build and test (Release, as scripts/setup.sh builds it)"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
ninja -C build
scripts/build-web.sh   # the page, for the browser tests (web_e2e)
stage "ctest (Release)"
ctest_run build -j "$jobs"

# One sanitizer build (Debian's clang: ASan + UBSan, with libFuzzer's coverage hooks) serves both
# the library's tests and the fuzz targets, with exactly scripts/fuzz.sh's configuration, so the
# library is compiled twice in all (Release, sanitized), not three times. Under the sanitizers run
# the library's own tests (labels unit and serve: the unit tests and the HTTP API against a real
# server); the CLI scripts, scenarios and the browser test exercise the same library through the
# Release binary above.
stage "sanitizer build (clang ASan + UBSan): the library's tests and the fuzz targets"
export FUZZ_BUILD_DIR=build-san
scripts/fuzz.sh --configure
ninja -C build-san gpuplan_unit_tests gpuplan_serve_tests
stage "ctest (ASan + UBSan: labels unit and serve)"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  ctest_run build-san -j "$jobs" -L 'unit|serve'

stage "fuzz smoke (5 s per target; the 10-minute runs are documented in docs/fuzzing.md)"
scripts/fuzz.sh 5
stage "done"
