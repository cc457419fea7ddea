# Sourced by the device scripts (h200-check.sh, h200-measure.sh) from the repository root.

# Sets $gpuplan to device-bundle/gpuplan (scripts/device/bundle.sh made it on the build machine) when
# it runs here: with the device's own C++ runtime first, else the bundled one (built against glibc
# 2.36). Leaves $gpuplan empty otherwise.
use_bundled_gpuplan() {
  local bundle=device-bundle
  gpuplan=""
  [ -x "$bundle/gpuplan" ] || return 0
  export LD_LIBRARY_PATH="$PWD/$bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  if "$bundle/gpuplan" --help >/dev/null; then
    gpuplan="$PWD/$bundle/gpuplan"
    return 0
  fi
  export LD_LIBRARY_PATH="$PWD/$bundle/lib-cxx:$LD_LIBRARY_PATH"
  if "$bundle/gpuplan" --help >/dev/null; then gpuplan="$PWD/$bundle/gpuplan"; else ldd "$bundle/gpuplan"; fi
}
