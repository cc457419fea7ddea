// What the user wants to run (Workload) and how it is spread over GPUs (Layout).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpuplan {

enum class Task { kPretrain, kFull, kLora, kQlora, kInfer };
// Training numerics: fp32; mixed = bf16/fp16 autocast with fp32 master weights (the ZeRO
// paper's "mixed precision"); bf16 = pure bf16 weights, grads and optimizer states.
enum class Precision { kFp32, kMixed, kBf16 };
enum class Optimizer { kAdamW, kAdamW8bit, kSgd, kAdafactor };
// Activation recomputation: none; selective (Korthikanti et al. 2022: the attention core);
// op (op-level selective, torchtitan's "op" policy: every second matmul of a block recomputed);
// full (each block rerun from its input). docs/memory-model.md §4.3.
enum class Recompute { kNone, kSelective, kOp, kFull };
// Inference weight storage, widest first (the advisor suggests only narrower ones). bf16 and
// fp16 take the same 2 bytes; which one a card runs is decided by ForCard (fit/advisor.h).
enum class WeightDtype { kFp32, kBf16, kFp16, kFp8, kInt8, kInt4 };
enum class KvDtype { kBf16, kFp16, kFp8 };

// Bytes of one element, defined once (IEEE 754 binary32 / binary16, bfloat16, OCP FP8).
inline constexpr double kFp32Bytes = 4.0;
inline constexpr double kHalfBytes = 2.0;  // fp16 and bf16
inline constexpr double kFp8Bytes = 1.0;
// The working (weight, gradient, activation) element of a training precision: mixed and bf16
// compute in 16 bits, fp32 in 32.
constexpr double ElementBytes(Precision p) { return p == Precision::kFp32 ? kFp32Bytes : kHalfBytes; }
constexpr double ElementBytes(KvDtype d) { return d == KvDtype::kFp8 ? kFp8Bytes : kHalfBytes; }

struct Workload {
  Task task = Task::kFull;
  Precision precision = Precision::kMixed;
  Optimizer optimizer = Optimizer::kAdamW;
  int64_t seq = 2048;          // training sequence length (tokens)
  int64_t micro_batch = 1;     // sequences per GPU per micro-step
  int64_t global_batch = 0;    // sequences per optimizer step; 0 = enough to fill the pipeline
  Recompute recompute = Recompute::kNone;
  bool flash_attn = true;
  bool fp8 = false;            // GEMMs in fp8 (Transformer Engine / torchao float8; Hopper and later)
  int64_t lora_rank = 16;
  double lora_dropout = 0.0;
  std::vector<std::string> lora_targets;  // module names; empty = all linear layers but lm_head
  bool paged_optimizer = false;           // QLoRA's paged optimizer (states may page to CPU)
  // Inference
  WeightDtype weight_dtype = WeightDtype::kBf16;
  KvDtype kv_dtype = KvDtype::kBf16;
  int64_t context = 4096;        // tokens per sequence held in the KV cache (prompt + output)
  int64_t concurrency = 1;       // sequences decoded at once per model replica
  int64_t batched_tokens = 8192;  // tokens in one forward pass (vLLM max_num_batched_tokens)
  bool batched_tokens_given = false;  // --batched-tokens given: a server profile's own default yields
};

// Sequences at least this long also try context parallelism, cp = 2, 4, ... kMaxCp, in the
// layout search and the advisor's changes (a bound on what is tried, not a claim about when it
// pays: the time and memory models decide among the layouts tried). docs/time-model.md §6.
inline constexpr int64_t kCpFromSeq = 16384;
inline constexpr int64_t kMaxCp = 32;

struct Layout {
  int64_t gpus = 1;
  int64_t tp = 1;
  int64_t pp = 1;
  int64_t ep = 1;     // expert parallel (MoE): experts split over ep ranks of the dp group
  int64_t vpp = 1;    // interleaved virtual stages per GPU
  int64_t cp = 1;     // context parallel: each sequence split over cp ranks (ring attention; training)
  int zero = 0;       // ZeRO stage 0-3 over the data-parallel group
  bool sp = false;    // Megatron sequence parallelism (needs tp > 1)
  bool offload_optimizer = false;  // ZeRO-Offload: optimizer states + master weights in CPU RAM
  bool offload_params = false;     // ZeRO-Infinity: parameters in CPU RAM (needs zero 3)
  int64_t dp() const { return gpus / (tp * pp * cp); }
  // The group ZeRO shards over and gradients are reduced across: data x context parallel ranks
  // (Megatron-Core's distributed optimizer and FSDP both shard over dp x cp).
  int64_t dp_cp() const { return gpus / (tp * pp); }
};

bool IsTraining(Task t);
const char* ToString(Task t);
const char* ToString(Precision p);
const char* ToString(Optimizer o);
const char* ToString(Recompute r);
const char* ToString(WeightDtype d);
const char* ToString(KvDtype d);

// Parse user spellings; throw InputError naming `field` and listing the accepted values.
Task ParseTask(const std::string& s);
Precision ParsePrecision(const std::string& s);
Optimizer ParseOptimizer(const std::string& s);
Recompute ParseRecompute(const std::string& s);
// The variant a name spells, or nullopt (framework profiles list variants gpuplan does not model).
std::optional<Recompute> FindRecompute(const std::string& s);
WeightDtype ParseWeightDtype(const std::string& s);
KvDtype ParseKvDtype(const std::string& s);

// Checks a workload + layout against a model's shape; throws InputError naming the option.
struct ModelSpec;
void ValidateLayout(const ModelSpec& model, const Workload& w, const Layout& l);

}  // namespace gpuplan
