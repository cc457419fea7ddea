#!/usr/bin/env bash
# A short device check for a lent GPU machine: capture nvidia-smi views (scripts/device-probe.sh),
# build gpu-worker with nvcc and run its bf16 GEMM and STREAM tests (each verified; raw JSON lines,
# docs/check.md §11.1). Results go to ${OUT:-./device-out}. The full acceptance run with gpuplan
# check and PyTorch is scripts/device/h200-check.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-./device-out}
mkdir -p "$out"
OUT="$out" bash scripts/device-probe.sh >/dev/null
cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d '.')
nvcc -O3 -std=c++17 -arch="sm_${cap}" apps/gpu-worker/*.cu -lcublasLt -o "$out/gpu-worker"
"$out/gpu-worker" --test gemm --device 0 --precisions bf16 | tee "$out/gpu-worker-gemm.jsonl"
"$out/gpu-worker" --test bandwidth --device 0 | tee "$out/gpu-worker-bandwidth.jsonl"
