// GPU memory per GPU for training and inference, component by component.
// Every formula and constant is derived in docs/memory-model.md, with its source.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "catalog/model.h"
#include "core/units.h"
#include "fit/workload.h"

namespace gpuplan {

// Memory the framework needs beyond tensors. Defaults documented in docs/memory-model.md.
struct OverheadConfig {
  Bytes cuda_context = MiB(500);           // CUDA context + cuBLAS/cuDNN handles and workspaces
  Bytes nccl_per_group = MiB(256);         // NCCL buffers per communicator with > 1 rank
  double fragmentation = 0.05;             // caching-allocator slack on dynamically allocated tensors
};

struct MemoryBreakdown {
  Bytes weights;
  Bytes gradients;
  Bytes optimizer;
  Bytes activations;
  Bytes kv_cache;
  Bytes overhead;
  Bytes Total() const { return weights + gradients + optimizer + activations + kv_cache + overhead; }
};

struct MemoryEstimate {
  MemoryBreakdown per_gpu;       // the most loaded GPU
  int64_t params_total = 0;
  int64_t params_active = 0;
  int64_t params_trainable = 0;  // whole model (LoRA: adapter parameters)
  int64_t params_on_gpu = 0;     // base parameters held by the most loaded GPU
  std::string peak_stage;        // "first", "last" or "only" pipeline stage
  Bytes cpu_offload;             // bytes moved to CPU RAM per GPU by offload options
  // Inference: KV cache bytes per sequence on one GPU and the concurrency that fits.
  Bytes kv_per_sequence;
  std::optional<int64_t> max_concurrency;
  std::vector<std::string> notes;  // assumptions the user should know
};

// Trainable LoRA parameters for the given rank and targets: r x (in + out) per adapted matrix
// (Hu et al. 2021, section 4). Targets are module names; empty = every linear but the head.
int64_t LoraParams(const ModelSpec& m, int64_t rank, const std::vector<std::string>& targets);

// gpu_memory: the card's bytes, used for max concurrency (inference); nullopt when unknown.
MemoryEstimate EstimateMemory(const ModelSpec& m, const Workload& w, const Layout& l,
                              const OverheadConfig& o = {}, std::optional<int64_t> gpu_memory = std::nullopt);

}  // namespace gpuplan
