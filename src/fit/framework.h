// Framework profiles (data/frameworks.yaml): the conventions of a training or inference
// framework that change the memory the fit job estimates: gradient dtype, the cross-entropy's
// fp32 copies, communication buckets, the load-time peak, the inference server's KV space rule,
// llama.cpp's GGUF bits per weight, and the CUDA context per GPU generation. How each is applied
// and its source: docs/memory-model.md §8. The default profile, "generic", is the documented
// generic convention of §1-7 and changes nothing.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "fit/batching.h"

namespace gpuplan {

// full: bf16 logits + two fp32 copies (upcast, log-softmax); chunked; fused; fp32_once: one fp32
// copy made in place and kept for backward (Megatron's vocab-parallel cross-entropy).
// chunked_linear: the output layer and loss per chunk, each chunk's fp32 log-softmax kept until
// the one backward (torchtune's LinearCrossEntropyLoss); chunked_backward: each chunk runs its
// own backward, one chunk's logits at a time (torchtitan's ChunkedLossWrapper).
enum class LossKind { kFull, kChunked, kFused, kFp32Once, kChunkedLinear, kChunkedBackward, kTeFused };
enum class LoadPeak { kNone, kBf16BeforeQuant, kUnshardedWeights };
enum class KvRule { kNone, kVllm, kSglang, kLmdeploy };

// vLLM's defaults on a large card (vllm/engine/arg_utils.py): at least min_memory_gib of device
// memory and a name containing none of `except` raise max_num_seqs and max_num_batched_tokens.
struct LargeCardRule {
  double min_memory_gib = 0;
  std::vector<std::string> except;  // case-insensitive substrings of the card's name ("A100")
  int64_t max_num_seqs = 0;
  int64_t batched_tokens = 0;
};

struct FrameworkProfile {
  std::string name = "generic";
  std::string version;            // the framework release the values were read from ("0.21", "v3.3.7")
  bool is_default = true;         // the first listed version of its name (`--framework NAME`)
  std::string kind = "training";  // training | inference
  std::string description;
  bool fp32_grads = false;           // grad_dtype: fp32
  // param_gather: after_step: ZeRO-1/2's all-gather of the updated parameters runs inside the
  // optimizer step, before the next forward (DeepSpeed); next_forward: bucket by bucket beside
  // the next step's first forward (Megatron-Core --overlap-param-gather).
  bool param_gather_after_step = false;
  std::string default_precision;     // the training precision without --precision ("": mixed)
  std::string default_recompute;     // one card's recomputation without --recompute ("": none)
  int default_zero = 0;              // the ZeRO stage one pretraining or full fine-tuning layout
                                     // takes without --zero
                                     // (Megatron-Bridge's recipes: the distributed optimizer, ZeRO-1)
  LossKind loss = LossKind::kFull;
  int64_t loss_chunks = 1;
  bool ddp_bucket_copy = false;      // DDP buckets hold a second copy of the gradients
  double reduce_bucket_elements = 0;    // DeepSpeed ZeRO communication buffers
  double allgather_bucket_elements = 0;
  double prefetch_bucket_elements = 0;
  std::string overlap_comm = "never";  // DeepSpeed overlap_comm: never | always | zero3 (its default)
  LoadPeak load_peak = LoadPeak::kNone;
  std::vector<std::string> recompute;
  KvRule kv_rule = KvRule::kNone;
  double kv_fraction = 0;            // default utilisation / fraction of the KV rule
  double kv_fraction_scale = 1;      // the fraction in effect = kv_fraction x this (TGI's wiggle room)
  // fixed | sglang (v0.5.3-0.5.6: mem_fraction_static from the card's memory, server_args.py) |
  // sglang_prefill_graph (the same plus the prefill CUDA graph's reserve, main 2026-07)
  std::string kv_fraction_rule = "fixed";
  int64_t kv_block_tokens = 1;
  std::string kv_block_rule = "fixed";  // fixed | tgi_attention (flashinfer 1, flashdecoding 256, paged 16)
  int64_t max_num_seqs = 1;          // sequences of the profiling run's sampler (vLLM)
  // max_num_seqs is also the most sequences the scheduler runs at once (vLLM's
  // SchedulerConfig.max_num_seqs): a serving plan never counts more in flight (docs/time-model.md §5).
  bool max_num_seqs_runs = false;
  // What the engine does when its KV pool runs short (docs/time-model.md §5.2): preempt and
  // recompute the newest sequences (vLLM, TurboMind, SGLang) or admit only whole requests (TGI).
  KvOverflow kv_overflow = KvOverflow::kUnlimited;
  // The scheduler puts prompt tokens into the decode steps, up to batched_tokens a step (vLLM V1's
  // token budget; docs/time-model.md §5.3), rather than running prefills as passes of their own.
  bool mixed_batches = false;
  int64_t batched_tokens = 0;        // the server's max_num_batched_tokens (0: the request's)
  // fixed | tgi_compute_optimal (TGI's launcher: the card's fp16 FLOPs over the model's FLOPs per
  // token, capped by max_position_embeddings and its VRAM estimate; batched_tokens when unknown)
  std::string batched_tokens_rule = "fixed";
  std::map<std::string, double> card_f16_tflops;  // TGI's table, by nvidia-smi name as the launcher spells it
  std::optional<LargeCardRule> large_card;
  double cuda_graph_mib = 0;         // CUDA-graph memory taken from the KV space (vLLM >= 0.21)
  bool context_outside_fraction = false;  // vLLM: the CUDA context is not inside fraction x total
  bool gguf = false;                 // llama.cpp: weights at a GGUF type's bits per weight
  std::string attention = "fa2";     // fused attention kernel for the time model: fa2 | fa3
  bool eager_elementwise = false;    // elementwise: eager (each PyTorch op its own kernel) | fused
  // What a training checkpoint holds and who writes it (docs/data-movement.md §1):
  // checkpoint_weights: true = a half-precision copy of the weights is saved beside the fp32
  // master (DeepSpeed, Megatron: 2 + 12 bytes per parameter with Adam); false = the training
  // parameters themselves are saved (fp32 under autocast, bf16 when pure; HF Trainer, FSDP2).
  bool checkpoint_half_weights = true;
  std::string checkpoint_save = "replica0";  // rank0 | replica0 | sharded
  bool checkpoint_async = false;             // the framework can stage in host memory and write behind
  // Settings a training fit chooses for speed when the request leaves them unstated
  // (docs/time-model.md §10): an interleaved pipeline schedule (vpp > 1) and tensor-parallel
  // collectives overlapped with the GEMMs.
  bool interleaved_pipeline = true;  // the generic convention (Megatron-style pipelines)
  // pipeline_split: even (Megatron-LM: with virtual stages the layers must split evenly over the
  // pp stages and each stage's layers over its vpp chunks; megatron/training/arguments.py) | any.
  bool even_pipeline_split = false;
  bool tp_comm_overlap = false;
  // tp_gather: fp8 (torchao's Float8ColwiseParallel / Float8RowwiseParallel / PrepareFloat8ModuleInput,
  // which torchtitan applies to fp8 runs): with fp8 linears and sequence parallelism the forward
  // activation and backward output-gradient all-gathers move fp8, the reduce-scatters bf16 |
  // bf16: every tensor-parallel collective in the activation dtype (docs/time-model.md §4).
  bool fp8_tp_gather = false;
  // fp8_head: fp8 (the generic convention: every linear layer, the output head too, runs its
  // GEMMs in fp8 with --fp8) | bf16: the output head stays bf16 (Megatron-Core's output_layer is a
  // tensor_parallel.ColumnParallelLinear, not a Transformer Engine module, so fp8_autocast leaves
  // it in bf16; docs/time-model.md §3.1).
  bool fp8_head = true;
  // glu: fused (Megatron-Core's bias_swiglu_impl: one autograd function keeps only its input,
  // the FC1 output, for backward and recomputes the activation there) | eager (the generic
  // convention: PyTorch's silu and mul keep gate, act(gate) and up). docs/memory-model.md §4.
  bool fused_glu = false;
  // fp8_saved_input: fp8 (Transformer Engine: with --fp8 each linear layer keeps its input's fp8
  // cast for backward, one byte an element) | training (the input in the training dtype, the
  // generic convention). docs/memory-model.md §4.
  bool fp8_saved_input = false;
  std::vector<std::string> sources;  // keys of the file's `sources`
  int line = 0;                      // where the entry starts in its file
  // The name at the root of its `extends` chain (megatron-bridge: megatron, whose Megatron-Core
  // and Transformer Engine it runs); its own name without `extends`. The published runs a fit's
  // time is quoted against are grouped by it (src/fit/accuracy.h).
  std::string family;

  bool IsGeneric() const { return name == "generic"; }
  // "vllm@0.21" (the --framework spelling that selects exactly this profile); "generic".
  std::string Id() const { return version.empty() ? name : name + "@" + version; }
  // "vllm 0.21" for messages.
  std::string Label() const { return version.empty() ? name : name + " " + version; }
};

struct FrameworkCatalog {
  std::string file;
  std::vector<FrameworkProfile> profiles;
  std::map<std::string, double> cuda_context_mib;  // by GPU architecture
  double reserve_fraction = 0.05;
  std::map<std::string, double> gguf_bits;         // GGUF type -> bits per weight
  std::map<std::string, std::string> sources;

  // The profile by NAME (its default version: the first listed) or NAME@VERSION ("0.20" also
  // selects 0.20.x); unknown names or versions throw InputError (field --framework).
  const FrameworkProfile& Find(const std::string& name) const;
  // Bits per weight of a GGUF type (case-insensitive); unknown throws InputError (--gguf-type).
  double GgufBits(const std::string& type) const;
  std::vector<std::string> Names() const;  // one per framework (its default version)

  static FrameworkCatalog Parse(const std::string& text, const std::string& file);
  static FrameworkCatalog Load(const std::string& path);
};

struct Gpu;
struct ModelSpec;

// The profile's values on one card, as the framework computes them when it starts there:
// vLLM's max_num_seqs and max_num_batched_tokens (large cards), SGLang's mem_fraction_static
// (from the card's memory, tp and pp), TGI's KV block (from the attention the launcher picks
// for the model and card). `note` says how each was found; empty when nothing depends on the card.
struct CardFramework {
  FrameworkProfile profile;  // kv_fraction, max_num_seqs, batched_tokens, kv_block_tokens resolved
  std::string note;
};
CardFramework FrameworkOnCard(const FrameworkProfile& f, const Gpu& gpu, const ModelSpec& m, int64_t tp, int64_t pp);

// The data folder's frameworks.yaml: what `fit --framework` reads and `gpuplan frameworks` lists.
FrameworkCatalog LoadFrameworkCatalog(const std::string& data_dir);

// The virtual-stage counts a training fit tries when --vpp is not given (docs/time-model.md §10):
// {1} where the framework runs no interleaved schedule or pp is 1; else 1, 2, 4, 8 and each other
// v <= 8 that divides a stage's layers, while every chunk keeps a layer, or, where the framework
// splits the layers evenly, each v <= 8 that divides a stage's layers (none beyond 1 when pp does
// not divide the layers).
std::vector<int64_t> VppCandidates(const FrameworkProfile& f, int64_t layers, int64_t pp);
// Why the framework would refuse a given vpp for this many layers over pp stages ("" when it runs).
std::string VppRefusal(const FrameworkProfile& f, int64_t layers, int64_t pp, int64_t vpp);
// "none", "vllm", "sglang", "lmdeploy" (the file's kv_rule values).
const char* ToString(KvRule rule);

// DeepSpeed's overlap_comm as the data-parallel overlap says, for a profile with ZeRO reduce
// buckets (reduce_bucket_elements > 0): on, "always" (a second reduce bucket at ZeRO-1/2,
// stage_1_and_2.py setup_buckets); off, DeepSpeed's own default "zero3" (on at stage 3 only, where
// it adds a stream, not a buffer). Other profiles are left as they are.
void DeepSpeedOverlapComm(bool overlap, FrameworkProfile& f);

}  // namespace gpuplan
