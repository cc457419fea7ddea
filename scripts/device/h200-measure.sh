#!/usr/bin/env bash
# The second device call (the first is h200-check.sh; one call may run 10 minutes at most), about
# 5 minutes on one H200:
#   1. issue 11 req 8: `gpuplan meter record` for 60 s at 1 Hz while PyTorch keeps the GPU busy with
#      bf16 GEMMs for 40 s (then 20 s idle, so the trace has both), for a replay fixture;
#   2. issue 13 req 3: scripts/device/fit_validation.py, the measured memory and step-time rows.
# Files written to ${OUT} (3 of the 8 that come back):
#   h200-measure.log          everything printed, with a timestamp per step
#   h200-gemm.meter.jsonl     the meter trace                  -> tests/fixtures/meter/h200-gemm-60s.jsonl
#   measured_h200.jsonl       fit_validation.py's rows         -> tests/validation/ (then `fit_validation.py
#                                                                 --yaml measured_h200.jsonl` here)
# gpuplan comes from device-bundle/ (scripts/device/bundle.sh here; name it in the run's `carry`).
# Usage on the device machine, from the repository root:  OUT=/some/dir bash scripts/device/h200-measure.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
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

step "fit validation set (issue 13 req 3)"
PYTHONUNBUFFERED=1 OUT="$out" timeout 240 python3 scripts/device/fit_validation.py
echo "exit $?"
step "done"
