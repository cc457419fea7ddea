#!/usr/bin/env bash
# Build the libFuzzer targets with Debian's clang (ASan + UBSan) and run each for a given time.
# usage: scripts/fuzz.sh [seconds-per-target=600] [target ...]; scripts/fuzz.sh --configure only configures
# Seeds come from tests/fuzz/seeds/<target>; corpora grow in fuzz-corpus/<target> (git-ignored);
# a crash, leak or sanitizer report stops the run with a non-zero exit and leaves its input
# as crash-*/leak-* in fuzz-corpus/. FUZZ_JOBS=N limits the build to N parallel jobs.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-600}
shift || true
targets=("$@")
# Every target of tests/fuzz/CMakeLists.txt, lowest layer first (docs/fuzzing.md lists them).
[ ${#targets[@]} -gt 0 ] || targets=(fuzz_time_text fuzz_nvidia_smi_xml fuzz_nvidia_smi_text fuzz_recording
  fuzz_safetensors fuzz_gpu_catalog fuzz_config_json fuzz_frameworks fuzz_gemm_table fuzz_attention_table fuzz_accuracy fuzz_offers fuzz_usage_csv
  fuzz_worker_line fuzz_thresholds fuzz_expect fuzz_alerts fuzz_trace fuzz_check_report fuzz_workload fuzz_serve_api)
dir=${FUZZ_BUILD_DIR:-build-fuzz}
# The sanitizer build (scripts/test.sh builds the library's tests in it too). No benchmarks, no
# CUDA worker; -O1 -g1 keeps compile time down and stacks readable.
CC=clang CXX=clang++ cmake -S . -B "$dir" -G Ninja -DGPUPLAN_FUZZ=ON -DGPUPLAN_BENCH=OFF -DCMAKE_BUILD_TYPE=None \
  -DCMAKE_CXX_FLAGS="-O1 -g1 -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined" >/dev/null
if [ "$seconds" = "--configure" ]; then
  exit 0
fi
ninja -C "$dir" ${FUZZ_JOBS:+-j"$FUZZ_JOBS"} "${targets[@]}"
for t in "${targets[@]}"; do
  mkdir -p "fuzz-corpus/$t"
  echo "== $t for ${seconds}s"
  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ASAN_OPTIONS=detect_leaks=1 \
    "$dir/tests/fuzz/$t" "fuzz-corpus/$t" "tests/fuzz/seeds/$t" -max_total_time="$seconds" -max_len=65536 \
    -rss_limit_mb=2048 -timeout=10 -artifact_prefix="fuzz-corpus/$t-" -print_final_stats=1 2>&1 | tail -n 15
done
