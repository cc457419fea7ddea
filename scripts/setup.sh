#!/usr/bin/env bash
# One command for a fresh Debian 12 machine: install dependencies, build, run the main job.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
ninja -C build
scripts/build-web.sh   # the page gpuplan serve serves: npm ci + vite build into build/web
echo
echo "== gpuplan fit: will a full fine-tune of Llama-3.1-8B fit on one A100 80GB, and if not, what would?"
build/gpuplan fit --model Llama-3.1-8B --task full --gpu A100 --seq 4096 || true
