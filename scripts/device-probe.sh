#!/usr/bin/env bash
# Runs on a GPU machine (no build needed): captures what the driver reports, so the GPU catalog
# (memory as reported, PCI device id, power limit, NVLink) can be checked against a real card
# and the captures reused as fixtures. Writes into ${OUT:-./device-probe}.
set -u
out=${OUT:-./device-probe}
mkdir -p "$out"
nvidia-smi -q >"$out/nvidia-smi-q.txt" 2>&1
nvidia-smi --query-gpu=name,pci.device_id,memory.total,power.limit,power.max_limit,pcie.link.gen.max,pcie.link.width.max,driver_version,compute_cap \
  --format=csv >"$out/query.csv" 2>&1
nvidia-smi topo -m >"$out/topo.txt" 2>&1
nvidia-smi nvlink --status >"$out/nvlink-status.txt" 2>&1
nvidia-smi -q -d MEMORY,ECC,CLOCK,POWER,PERFORMANCE >"$out/nvidia-smi-q-details.txt" 2>&1
(command -v nvcc && nvcc --version) >"$out/nvcc.txt" 2>&1
nproc >"$out/host.txt"; free -g >>"$out/host.txt"; uname -a >>"$out/host.txt"
cat "$out/query.csv"
