#!/usr/bin/env bash
# The second device call (the first is h200-check.sh; one call may run 10 minutes at most), about
# 7 minutes on one H200 (at most 60 s + the build + 150 s + 240 s, with every timeout reached):
#   1. issue 11 req 8: `gpuplan meter record` for 60 s at 1 Hz while PyTorch keeps the GPU busy with
#      bf16 GEMMs for 40 s (then 20 s idle, so the trace has both), for a replay fixture;
#   2. the time model's GEMM-efficiency table: gpu-worker built here with nvcc (about 20 s; the
#      bundled one when nvcc fails), `gpu-worker --test gemm-sweep --min-ms 50`: 150 shapes x bf16,
#      fp8 and fp8 with fast accumulation (the forward GEMM's mode), about 60-100 s, cut at 150 s;
#   3. issue 13 req 3: scripts/device/fit_validation.py, the measured memory and step-time rows.
# Files written to ${OUT} (4 of the 8 that come back):
#   h200-measure.log          everything printed, with a timestamp per step
#   h200-gemm.meter.jsonl     the meter trace                  -> tests/fixtures/meter/h200-gemm-60s.jsonl
#   gemm-sweep-h200.jsonl     the worker's gemm-sweep lines    -> tests/fixtures/device/gemm-sweep-h200-sxm.jsonl
#                                                                 (then `gemm_table.py` on it here ->
#                                                                 data/gemm/h200-sxm.yaml)
#   measured_h200.jsonl       fit_validation.py's rows         -> tests/validation/ (then `fit_validation.py
#                                                                 --yaml measured_h200.jsonl` here)
# gpuplan comes from device-bundle/ (scripts/device/bundle.sh here; name it in the run's `carry`).
# Usage on the device machine, from the repository root:  OUT=/some/dir bash scripts/device/h200-measure.sh
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
out=${OUT:-./device-out}
mkdir -p "$out"
exec > >(tee -a "$out/h200-measure.log") 2>&1
t0=$(date +%s)
step() { echo "== $(date -u +%H:%M:%S) (+$(( $(date +%s) - t0 )) s) $*"; }

step "gpuplan"
source scripts/device/common.sh
use_bundled_gpuplan
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv || true

if [ -n "$gpuplan" ]; then
  step "meter record 60 s, bf16 GEMM load for the first 40 s"
  "$gpuplan" meter record --out "$out/h200-gemm.meter.jsonl" --duration 60 --interval 1 &
  recorder=$!
  sleep 2
  PYTHONUNBUFFERED=1 timeout 60 python3 - <<'PY'
import time, torch
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
end, n = time.time() + 38, 0
t = time.time()
while time.time() < end:
    for _ in range(20):
        c = a @ b
    torch.cuda.synchronize()
    n += 20
dt = time.time() - t
print(f"GEMM load: {n} bf16 8192^3 products in {dt:.1f} s, {2 * 8192**3 * n / dt / 1e12:.0f} TFLOP/s")
PY
  wait "$recorder"
  echo "meter record exit $?"
  "$gpuplan" meter run --replay "$out/h200-gemm.meter.jsonl" --db "$out/replay-check.db" --speed 1e9 \
    && "$gpuplan" meter report --db "$out/replay-check.db" --from 2000-01-01 --to 2100-01-01 | head -20
  rm -f "$out"/replay-check.db*
else
  echo "SKIP meter record: no usable device-bundle/gpuplan (run scripts/device/bundle.sh here and carry it)"
fi

step "gpu-worker (nvcc) and the GEMM-efficiency sweep (bf16, fp8, fp8-fast; about 60-100 s)"
# In a subshell: build_gpu_worker may put NCCL's directory on LD_LIBRARY_PATH, which PyTorch in the
# next step must not see.
(
  work=${TMPDIR:-/tmp}/gpuplan-device
  if build_gpu_worker "$work"; then
    # stdout only: the JSON lines; the worker's diagnostics stay in the log.
    # 50 ms batches: three precisions in the time two took at the default 100 ms.
    timeout 150 "$worker" --test gemm-sweep --device 0 --min-ms 50 >"$out/gemm-sweep-h200.jsonl"
    rc=$?
    echo "worker gemm-sweep exit $rc ($(grep -c '"type":"gemm_shape"' "$out/gemm-sweep-h200.jsonl") shapes measured)"
    grep -v '"type":"gemm_shape"' "$out/gemm-sweep-h200.jsonl" | head -20
    # A look at the table in the log (the table itself is made back on the build machine).
    python3 scripts/device/gemm_table.py "$out/gemm-sweep-h200.jsonl" --out "$work/gemm-table.yaml" \
      && grep -E '^(gpu|sm_count|cublaslt_version|bf16|fp8|fp8_fast_accum)|\[(2048|8192), (4096|8192), (4096|8192),' "$work/gemm-table.yaml"
  else
    echo "SKIP gemm-sweep: no gpu-worker"
  fi
)

step "fit validation set (issue 13 req 3)"
PYTHONUNBUFFERED=1 OUT="$out" timeout 240 python3 scripts/device/fit_validation.py
echo "exit $?"
step "done"
