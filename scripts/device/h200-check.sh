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
cd "$(dirname "$0")/../.."
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
worker="$work/gpu-worker"
cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d '.')
nccl_inc=""; nccl_lib=""
for d in /usr/local/cuda/include /usr/include $(python3 -c 'import nvidia.nccl, os; print(os.path.dirname(nvidia.nccl.__file__) + "/include")' 2>/dev/null); do
  [ -f "$d/nccl.h" ] && nccl_inc=$d && break
done
for d in /usr/local/cuda/lib64 /usr/lib/x86_64-linux-gnu $(python3 -c 'import nvidia.nccl, os; print(os.path.dirname(nvidia.nccl.__file__) + "/lib")' 2>/dev/null); do
  ls "$d"/libnccl.so* >/dev/null 2>&1 && nccl_lib=$d && break
done
nccl_flags=()
if [ -n "$nccl_inc" ] && [ -n "$nccl_lib" ]; then
  nccl_flags=(-DGPUPLAN_WORKER_NCCL=1 -I"$nccl_inc" -L"$nccl_lib" -l:"$(basename "$(ls "$nccl_lib"/libnccl.so* | head -1)")")
  export LD_LIBRARY_PATH="$nccl_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
echo "NCCL: include ${nccl_inc:-none}, lib ${nccl_lib:-none}"
# One nvcc per file, in parallel, then one link.
build_worker() {
  local pids=() objs=() ok=0
  for f in apps/gpu-worker/*.cu; do
    local o="$work/$(basename "$f").o"
    objs+=("$o")
    nvcc -O3 -std=c++17 -arch="sm_${cap:-90}" -Xcompiler=-Wall "${nccl_flags[@]:0:2}" -c "$f" -o "$o" &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || ok=1; done
  [ "$ok" = 0 ] && nvcc -arch="sm_${cap:-90}" "${objs[@]}" "${nccl_flags[@]:2}" -lcublasLt -o "$worker"
}
if build_worker; then
  echo "built $worker"
elif [ -x "$bundle/gpu-worker" ]; then
  echo "nvcc failed: using the bundled gpu-worker"
  worker="$PWD/$bundle/gpu-worker"
else
  echo "no gpu-worker: the GPU tests will be SKIP"
fi
"$worker" --test gemm --device 0 --precisions bf16 >"$out/gpu-worker-gemm.jsonl" 2>&1; echo "worker gemm exit $?"

common=(--expect "1x H200 SXM" --worker "$worker")
step "gpuplan check --quick (with --record)"
"$gpuplan" check --quick "${common[@]}" --record "$out/h200-quick.recording.json" --json "$out/h200-check-quick.json"
echo "exit $?"

step "gpuplan check (default mode, --duration 120)"
"$gpuplan" check --duration 120 "${common[@]}" --json "$out/h200-check-default.json"
echo "exit $?"

step "PyTorch reference"
PYTHONUNBUFFERED=1 timeout 150 python3 scripts/device/torch_reference.py --out "$out/torch-reference.json"
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
