// GPU memory per GPU for training and inference, component by component.
// Every formula and constant is derived in docs/memory-model.md, with its source.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "catalog/model.h"
#include "core/units.h"
#include "fit/framework.h"
#include "fit/workload.h"

namespace gpuplan {

// Memory the framework needs beyond tensors. Defaults documented in docs/memory-model.md.
struct OverheadConfig {
  Bytes cuda_context = MiB(500);           // CUDA context + cuBLAS/cuDNN handles and workspaces
  Bytes nccl_per_group = MiB(256);         // NCCL buffers per communicator with > 1 rank
  double fragmentation = 0.05;             // caching-allocator slack on dynamically allocated tensors
  // The framework's conventions (docs/memory-model.md §8); the default "generic" changes nothing.
  FrameworkProfile framework;
  double gguf_bits = 0;     // llama.cpp: bits per weight of the GGUF type (0: not GGUF)
  double kv_fraction = 0;   // inference server's KV fraction (0: the profile's default)
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

  // The three numbers of docs/memory-model.md §8.4, per GPU (the most loaded one):
  // peak_allocated: tensors at the steady-state peak (torch.cuda.max_memory_allocated);
  // nvidia_smi: peak reserved + CUDA context + NCCL buffers (what nvidia-smi shows; FITS is
  // judged on it); load_peak: the peak while the weights load, when higher, else nvidia_smi.
  Bytes peak_allocated;
  Bytes nvidia_smi;
  Bytes load_peak;
  // The same split finer, for comparing with what a framework prints: peak_reserved is
  // torch.cuda.max_memory_reserved at the steady state (peak_allocated + the allocator's reserve);
  // load_allocated the tensors on the GPU at the load-time peak (0 without one), so that
  // max(peak_allocated, load_allocated) is torch.cuda.max_memory_allocated over the whole run.
  Bytes peak_reserved;
  Bytes load_allocated;
  Bytes comm_buffers;  // framework communication buffers, part of per_gpu.overhead
  // Inference with a server profile (vLLM, SGLang, lmdeploy): the KV cache the server allocates,
  // in tokens, and the sequences of `context` tokens it holds (vLLM's "maximum concurrency").
  std::optional<int64_t> kv_cache_tokens;
  std::optional<double> server_concurrency;
  bool server_fits = true;  // the server's KV space holds the requested concurrency
  // The server profile's values on this card, as the KV space was computed with them: the
  // fraction in effect (TGI: cuda_memory_fraction x wiggle room), vLLM's max_num_seqs of the
  // profiling run, the forward pass's tokens, the KV block, and the CUDA-graph memory charged.
  std::optional<double> server_kv_fraction;
  std::optional<int64_t> server_max_num_seqs;
  std::optional<int64_t> server_batched_tokens;
  std::optional<int64_t> server_block_tokens;
  Bytes server_cuda_graphs;
  std::string framework = "generic";  // the profile's NAME@VERSION
};

// The model's tensors folded into the few classes the memory model distinguishes (role,
// pipeline placement, tensor-parallel split, linear, LoRA target), so an estimate costs the
// same for a 30-tensor and a 3000-tensor model. Build once per model and LoRA target list.
struct TensorClass {
  TensorRole role = TensorRole::kAttention;
  bool per_layer = false;
  bool tp_split = false;
  bool linear = false;
  bool lora_target = false;
  double params = 0;          // sum of rows x cols x count
  double copies = 0;          // sum of count
  double rows_total = 0;      // sum of rows x count (per-output-channel scales)
  double rows_plus_cols = 0;  // sum of (rows + cols) x count (LoRA parameters per unit rank)
  double factored = 0;        // Adafactor state elements: rows + cols per matrix, n per vector
};

struct ModelSummary {
  const ModelSpec& model;
  std::vector<std::string> lora_targets;
  std::vector<TensorClass> classes;
  double per_layer_params = 0;
  double largest_non_layer_tensor = 0;
  double lora_modules_per_layer = 0;      // adapted modules a token passes per layer
  double lora_input_width_per_layer = 0;  // sum of their input widths
  int64_t lora_params_per_rank = 0;       // LoRA parameters at rank 1
  double matmul_params = 0;               // active parameters that multiply activations (6N's N)
  // §4.3 op-level selective recomputation: per token and layer (averaged over the layers), the
  // output features of the matmuls whose outputs are kept, split by tensor parallelism
  // (column-parallel) or not (row-parallel and unsplit), and the active parameters of those
  // recomputed (their forward FLOPs are 2x that per token).
  double op_kept_split_width = 0;
  double op_kept_whole_width = 0;
  double op_recomputed_params = 0;
};

// A per-layer linear layer's GEMM on one tensor-parallel rank: column-parallel layers split their
// output features, row-parallel ones (output = hidden, input wider) their input features.
struct LinearOnRank {
  double n = 0;  // output features on this rank
  double k = 0;  // input features on this rank
};
LinearOnRank OnRank(const ModelSpec& m, const TensorGroup& t, double tp);
// Whether a tensor-parallel linear layer is row-parallel (output = hidden, input wider).
bool RowParallel(const ModelSpec& m, const TensorGroup& t);

// §4.3 op-level selective recomputation (torchtitan's "op" policy): within a transformer block
// the output of every second matmul, in forward order, is recomputed in the backward pass; the
// others, the fused attention op's output and the block's input are kept. Per entry of
// m.tensors, the share of its matmul outputs recomputed: 1 and 0 alternately over a layer's
// linear layers (the first kept), 0.5 for routed experts (calls alternate over the experts), 0
// for tensors outside the blocks and non-matmul tensors.
std::vector<double> OpRecomputeShares(const ModelSpec& m);

// §3.2 optimizer state bytes of `params` trained parameters, without the fp32 master copy (AdamW:
// two moments; 8-bit AdamW: two 1-byte moments and block scales; SGD: momentum; Adafactor: its
// `factored` accumulator elements in fp32, Shazeer & Stern 2018).
double OptimizerStateBytes(Optimizer o, Precision p, double params, double factored);
ModelSummary Summarize(const ModelSpec& m, const std::vector<std::string>& lora_targets);
// Whether LoRA adapts this tensor: a linear layer weight (not the head, embeddings or router) named
// in `targets`, or any of them when `targets` is empty ("all-linear", QLoRA section 4).
bool IsLoraTarget(const TensorGroup& t, const std::vector<std::string>& targets);

// Trainable LoRA parameters for the given rank and targets: r x (in + out) per adapted matrix
// (Hu et al. 2021, section 4). Targets are module names; empty = every linear but the head.
int64_t LoraParams(const ModelSpec& m, int64_t rank, const std::vector<std::string>& targets);

// gpu_memory: the card's bytes, used for max concurrency (inference); nullopt when unknown.
MemoryEstimate EstimateMemory(const ModelSpec& m, const Workload& w, const Layout& l,
                              const OverheadConfig& o = {}, std::optional<int64_t> gpu_memory = std::nullopt);
// The same with a prebuilt summary (its lora_targets must be w.lora_targets): for searches.
MemoryEstimate EstimateMemory(const ModelSummary& s, const Workload& w, const Layout& l, const OverheadConfig& o,
                              std::optional<int64_t> gpu_memory);

}  // namespace gpuplan
