// Step time and throughput for training, latency and throughput for inference.
// Formulas and their sources: docs/time-model.md (section numbers in comments).
#pragma once

#include <optional>
#include <string>

#include "catalog/gpu_catalog.h"
#include "catalog/model.h"
#include "fit/memory_model.h"
#include "fit/workload.h"

namespace gpuplan {

// The network between nodes. Named presets or a number of Gb/s per node.
struct Network {
  std::string name = "ib-400g";
  double node_gbps = 8 * 400.0;  // total NIC bandwidth of one node, Gb/s
};
// "ib-400g" (8 x 400 Gb/s per node, the HGX H100 reference), "ib-200g" (8 x 200, HGX A100),
// "roce-100g" (2 x 100), "25gbe", "10gbe", "1gbe", or a bare number of Gb/s per node ("40",
// "40gbps"). Throws InputError naming --network.
Network ParseNetwork(const std::string& s);

struct TimeConfig {
  std::optional<double> mfu;     // achievable fraction of dense peak; default per GPU generation
  Network network;
  int64_t gpus_per_node = 8;
  double dp_overlap = 0.8;       // share of the backward pass that can hide gradient communication
};

// Default achievable fraction of dense peak for large matmul-bound steps (docs/time-model.md §3).
double DefaultEfficiency(const Gpu& gpu);
// Dense peak FLOP/s for the training precision (bf16/fp16 tensor cores, or fp32).
double PeakFlops(const Gpu& gpu, Precision p);

struct TrainingTime {
  double flops_per_token = 0;        // model FLOPs (6N + attention), the MFU numerator
  double hw_flops_per_token = 0;     // with recomputation and frozen-weight savings
  int64_t micro_batches = 0;         // per optimizer step per data-parallel rank
  int64_t global_batch = 0;          // sequences per optimizer step
  double compute_seconds = 0;        // matmul work + optimizer step + QLoRA dequantisation
  double matmul_seconds = 0;         // of which: FLOPs at the achievable fraction of peak
  double optimizer_seconds = 0;      // of which: optimizer step streaming states through HBM
  double tp_seconds = 0;             // tensor-parallel collectives (on the critical path)
  double pp_seconds = 0;             // pipeline point-to-point transfers
  double moe_seconds = 0;            // expert-parallel all-to-all
  double dp_seconds = 0;             // data-parallel gradient sync, total
  double dp_exposed_seconds = 0;     // the part not hidden behind the backward pass
  double communication_seconds = 0;  // tp + pp + moe + exposed dp
  double bubble_seconds = 0;         // pipeline fill and drain
  double step_seconds = 0;
  double tokens_per_second = 0;      // whole job
  double mfu = 0;                    // model FLOPs / (step time x GPUs x peak)
  double efficiency = 0;             // the achievable fraction used
  std::string bottleneck;            // "compute", "communication" or "pipeline bubble"
  std::optional<double> total_hours; // for a token budget
  std::optional<double> gpu_hours;
};

// tokens: job size in tokens (0: no budget).
TrainingTime EstimateTrainingTime(const ModelSpec& m, const Workload& w, const Layout& l, const Gpu& gpu,
                                  const TimeConfig& c, double tokens = 0);
// With the model summary and the layout's memory estimate already computed (layout search).
TrainingTime EstimateTrainingTime(const ModelSummary& sum, const MemoryEstimate& mem, const Workload& w,
                                  const Layout& l, const Gpu& gpu, const TimeConfig& c, double tokens);

struct InferenceTime {
  double prefill_seconds = 0;           // one prompt of prompt_tokens (time to first token)
  double decode_step_seconds = 0;       // one decode step at the given concurrency (per-token latency)
  double decode_tokens_per_second = 0;  // per replica at the given concurrency
  double decode_tokens_per_second_per_gpu = 0;
  double requests_per_second = 0;       // per replica
  bool memory_bound = true;             // decode limited by HBM bandwidth (else by compute)
  double efficiency = 0;
};

InferenceTime EstimateInferenceTime(const ModelSpec& m, const Workload& w, const Layout& l, const Gpu& gpu,
                                    const TimeConfig& c, int64_t prompt_tokens, int64_t output_tokens);

}  // namespace gpuplan
