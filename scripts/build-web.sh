#!/usr/bin/env bash
# Builds the page gpuplan serve serves (web/: TypeScript, Vite, ECharts) into build/web, next to
# the binary, where `gpuplan serve` finds it. npm ci installs exactly web/package-lock.json.
set -euo pipefail
cd "$(dirname "$0")/../web"
if ! command -v npm >/dev/null; then
  echo "build-web: npm not found (scripts/install-deps.sh installs nodejs and npm)" >&2
  exit 1
fi
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund --loglevel=error
fi
GPUPLAN_WEB_OUT="${GPUPLAN_WEB_OUT:-../build/web}" npm run --silent build
