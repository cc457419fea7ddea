#!/usr/bin/env bash
# gpuplan check on every node of a Slurm allocation, then one merged report (docs/check.md §8).
# usage: sbatch --nodes=N --gres=gpu:8 --exclusive deploy/slurm-check.sh "8x H100 SXM" /shared/check
#SBATCH --job-name=gpuplan-check
#SBATCH --ntasks-per-node=1
#SBATCH --time=00:30:00
set -uo pipefail
expect=${1:?what was ordered, e.g. "8x H100 SXM"}
out=${2:?a folder every node can write}
mkdir -p "$out"
# One task per node; each writes its own report. A node's FAIL must not stop the others.
srun --ntasks-per-node=1 bash -c \
  'gpuplan check --expect "$0" --json "$1/$(hostname).json" --html "$1/$(hostname).html"' "$expect" "$out"
gpuplan check merge "$out"/*.json --json "$out/cluster.json" --html "$out/cluster.html"
