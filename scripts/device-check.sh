#!/usr/bin/env bash
# The device check for a lent GPU machine: capture nvidia-smi views (scripts/device-probe.sh),
# build the CUDA gpu-probe with nvcc and run it (cuBLASLt bf16 GEMM TFLOPS and HBM copy
# bandwidth, each verified). Results go to ${OUT:-./device-out}; record them in
# docs/device-checks.md.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-./device-out}
mkdir -p "$out"
OUT="$out" bash scripts/device-probe.sh >/dev/null
cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d '.')
nvcc -O2 -std=c++17 -arch="sm_${cap}" apps/gpu-worker/gpu_probe.cu -lcublasLt -o "$out/gpu-probe"
"$out/gpu-probe" | tee "$out/gpu-probe.jsonl"
