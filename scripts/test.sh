#!/usr/bin/env bash
# Runs every test: unit + integration (ctest), the same again under AddressSanitizer and
# UndefinedBehaviorSanitizer, and a short smoke run of each fuzz target.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
jobs=$(nproc)

echo "== build and test (RelWithDebInfo)"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
ninja -C build
scripts/build-web.sh   # the page, for the browser tests (web_e2e)
ctest --test-dir build --output-on-failure -j "$jobs"

echo "== build and test with ASan + UBSan"
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DGPUPLAN_SANITIZE=ON -DGPUPLAN_BENCH=OFF >/dev/null
ninja -C build-asan
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  ctest --test-dir build-asan --output-on-failure -j "$jobs"

echo "== fuzz smoke (10 s per target; the 10-minute runs are documented in docs/fuzzing.md)"
scripts/fuzz.sh 10
