# shellcheck shell=bash disable=SC2034  # $gpuplan is read by the scripts that source this file
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

# Builds apps/gpu-worker with nvcc for this machine's GPU into $1/gpu-worker (one nvcc per file in
# parallel, then one link; with NCCL when its header and library are found, PyTorch's nvidia-nccl
# wheel included, whose library directory then goes on LD_LIBRARY_PATH) and sets $worker to it.
# When nvcc fails: $worker = device-bundle/gpu-worker (bundle.sh built it for sm_80/89/90) if there
# is one, else it stays the path that was not built and the function returns 1.
build_gpu_worker() {
  local work=$1 bundle=device-bundle cap d f o p ok=0
  local nccl_inc="" nccl_lib="" pids=() objs=() nccl_flags=()
  worker="$work/gpu-worker"
  mkdir -p "$work"
  cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d '.')
  for d in /usr/local/cuda/include /usr/include $(python3 -c 'import nvidia.nccl, os; print(os.path.dirname(nvidia.nccl.__file__) + "/include")' 2>/dev/null); do
    [ -f "$d/nccl.h" ] && nccl_inc=$d && break
  done
  for d in /usr/local/cuda/lib64 /usr/lib/x86_64-linux-gnu $(python3 -c 'import nvidia.nccl, os; print(os.path.dirname(nvidia.nccl.__file__) + "/lib")' 2>/dev/null); do
    ls "$d"/libnccl.so* >/dev/null 2>&1 && nccl_lib=$d && break
  done
  if [ -n "$nccl_inc" ] && [ -n "$nccl_lib" ]; then
    nccl_flags=(-DGPUPLAN_WORKER_NCCL=1 -I"$nccl_inc" -L"$nccl_lib" -l:"$(basename "$(ls "$nccl_lib"/libnccl.so* | head -1)")")
    export LD_LIBRARY_PATH="$nccl_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  fi
  echo "gpu-worker: sm_${cap:-90}, NCCL include ${nccl_inc:-none}, lib ${nccl_lib:-none}"
  for f in apps/gpu-worker/*.cu; do
    o="$work/$(basename "$f").o"
    objs+=("$o")
    nvcc -O3 -std=c++17 -arch="sm_${cap:-90}" -Xcompiler=-Wall "${nccl_flags[@]:0:2}" -c "$f" -o "$o" &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || ok=1; done
  if [ "$ok" = 0 ] && nvcc -arch="sm_${cap:-90}" "${objs[@]}" "${nccl_flags[@]:2}" -lcublasLt -o "$worker"; then
    echo "built $worker"
  elif [ -x "$bundle/gpu-worker" ]; then
    echo "nvcc failed: using the bundled gpu-worker"
    worker="$PWD/$bundle/gpu-worker"
  else
    echo "no gpu-worker: nvcc failed and there is no $bundle/gpu-worker"
    return 1
  fi
}
