#!/usr/bin/env bash
# The device check of docs/check.md §11.10, for a session lent one H200: builds what it must,
# runs `gpuplan check --quick` (recording the NVML snapshots) and the default mode with a 2-minute
# burn-in, and the same measurements with PyTorch, all in about 8 minutes (issue 11's recording and issue 13's validation set are the second
# call, scripts/device/h200-measure.sh: one call may run 10 minutes at most), logging everything to
# ${OUT}. Files written there (at most 8 come back from the device machine):
#   h200-check.log              everything printed, with a timestamp per step
#   h200-check-quick.json       gpuplan check --quick --record ... --json      -> tests/fixtures/device/
#   h200-check-default.json     gpuplan check --duration 120 --json            -> tests/fixtures/device/
#   h200-quick.recording.json   the NVML snapshots of the quick run            -> tests/fixtures/nvml/h200.recording.json
#   torch-reference.json        scripts/device/torch_reference.py
#   nvidia-smi-q.xml            nvidia-smi -q -x on the same machine (fields to compare with the recording)
#   gpu-worker-gemm.jsonl       the worker's raw lines for bf16 GEMM, for the record
#
# The device machine has nvcc, CMake, ninja and PyTorch but not gpuplan's C++ libraries
# (yaml-cpp, fmt, CLI11, GLPK, SQLite, pugixml), and nothing can be installed there. So gpuplan
# comes prebuilt from this repository's CI-like machine in device-bundle/ (scripts/device/bundle.sh
# makes it; name it in the run's `carry`), and gpu-worker is built there with nvcc (or taken from
# the bundle when nvcc fails). Usage on the device machine, from the repository root:
#   OUT=/some/dir bash scripts/device/h200-check.sh
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
out=${OUT:-./device-out}
mkdir -p "$out"
exec > >(tee -a "$out/h200-check.log") 2>&1
t0=$(date +%s)
step() { echo "== $(date -u +%H:%M:%S) (+$(( $(date +%s) - t0 )) s) $*"; }
bundle=device-bundle
work=${TMPDIR:-/tmp}/gpuplan-device
mkdir -p "$work"

step "machine"
nvidia-smi --query-gpu=name,pci.device_id,memory.total,power.limit,pcie.link.gen.max,pcie.link.width.max,driver_version,compute_cap --format=csv || true
nvidia-smi -q -x >"$out/nvidia-smi-q.xml" 2>&1 || true
nproc; uname -a; ldd --version | head -1

step "gpuplan"
source scripts/device/common.sh
use_bundled_gpuplan
if [ -z "$gpuplan" ]; then
  echo "no usable device-bundle/gpuplan: trying a full CMake build (needs gpuplan's C++ libraries)"
  if cmake -S . -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGPUPLAN_TESTS=OFF -DGPUPLAN_BENCH=OFF \
      && ninja -C "$work/build" -j16 gpuplan gpu-worker; then
    gpuplan="$work/build/gpuplan"
  else
    echo "FATAL: gpuplan could not be built here; run scripts/device/bundle.sh on the build machine and carry device-bundle"
    exit 1
  fi
fi

step "gpu-worker (nvcc, sm_90, with NCCL when found)"
build_gpu_worker "$work" || echo "the GPU tests will be SKIP"
"$worker" --test gemm --device 0 --precisions bf16 >"$out/gpu-worker-gemm.jsonl" 2>&1; echo "worker gemm exit $?"

common=(--expect "1x H200 SXM" --worker "$worker")
step "gpuplan check --quick (with --record)"
"$gpuplan" check --quick "${common[@]}" --record "$out/h200-quick.recording.json" --json "$out/h200-check-quick.json"
echo "exit $?"

step "gpuplan check (default mode, --duration 120)"
"$gpuplan" check --duration 120 "${common[@]}" --json "$out/h200-check-default.json"
echo "exit $?"

step "PyTorch reference"
PYTHONUNBUFFERED=1 timeout 180 python3 scripts/device/torch_reference.py --out "$out/torch-reference.json"
echo "exit $?"

step "summary"
for f in "$out"/h200-check-quick.json "$out"/h200-check-default.json; do
  python3 - "$f" <<'PY' || true
import json, sys
r = json.load(open(sys.argv[1]))
print(sys.argv[1], r["verdict"], "exit", r["exit_code"])
for t in r["tests"]:
    if t.get("gpu") is not None or t["name"].startswith(("gemm", "stream", "pcie", "burn", "gpu_memory", "memory", "nccl", "p2p")):
        print(f'  {t["status"]:5} {t["name"]:28} {t.get("measured")} {t.get("unit","")}  expected {t.get("expected_text") or t.get("expected")}')
PY
done
step "done"
