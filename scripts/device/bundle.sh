#!/usr/bin/env bash
# Makes device-bundle/ for scripts/device/h200-check.sh: the gpuplan binary built here, stripped,
# with the shared libraries it needs beyond glibc (yaml-cpp, fmt, GLPK and its solvers' libraries,
# SQLite, pugixml, libstdc++), and the gpu-worker built here (sm_80/89/90) as a fallback. The
# device machine cannot install packages; the bundle is carried there (device run `carry`:
# ["device-bundle"]; .gitignore keeps it out of git). Usage: bash scripts/device/bundle.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
ninja -C "$build" -j2 gpuplan gpu-worker
rm -rf device-bundle
mkdir -p device-bundle/lib device-bundle/lib-cxx
strip -o device-bundle/gpuplan "$build/gpuplan"
cp "$build/gpu-worker" device-bundle/gpu-worker
strip device-bundle/gpu-worker
ldd "$build/gpuplan" | awk '/=> \// {print $3}' | while read -r lib; do
  case "$(basename "$lib")" in
    libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|ld-linux*|libresolv.so*) ;;  # glibc: the device's own
    # The C++ runtime apart: the device's own is used when it is new enough (ours needs glibc 2.36).
    libstdc++.so*|libgcc_s.so*) cp -L "$lib" device-bundle/lib-cxx/ ;;
    *) cp -L "$lib" device-bundle/lib/ ;;
  esac
done
du -sh device-bundle
ls device-bundle device-bundle/lib device-bundle/lib-cxx
