#!/usr/bin/env bash
# Runs every test: unit + integration (ctest), the same again under AddressSanitizer and
# UndefinedBehaviorSanitizer, and a short smoke run of each fuzz target.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
jobs=$(nproc)
stage() { echo "== $1 (at ${SECONDS}s)"; }   # each stage's start, to see where CI time goes

stage "build and test (Release, as scripts/setup.sh builds it)"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
ninja -C build
scripts/build-web.sh   # the page, for the browser tests (web_e2e)
stage "ctest (Release)"
ctest --test-dir build --output-on-failure -j "$jobs"

stage "build and test with ASan + UBSan"
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DGPUPLAN_SANITIZE=ON -DGPUPLAN_BENCH=OFF >/dev/null
ninja -C build-asan
stage "ctest (ASan + UBSan)"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  ctest --test-dir build-asan --output-on-failure -j "$jobs"

stage "fuzz smoke (10 s per target; the 10-minute runs are documented in docs/fuzzing.md)"
scripts/fuzz.sh 10
stage "done"
