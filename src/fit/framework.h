// Framework profiles (data/frameworks.yaml): the conventions of a training or inference
// framework that change the memory the fit job estimates: gradient dtype, the cross-entropy's
// fp32 copies, communication buckets, the load-time peak, the inference server's KV space rule,
// llama.cpp's GGUF bits per weight, and the CUDA context per GPU generation. How each is applied
// and its source: docs/memory-model.md §8. The default profile, "generic", is the documented
// generic convention of §1-7 and changes nothing.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace gpuplan {

enum class LossKind { kFull, kChunked, kFused };
enum class LoadPeak { kNone, kBf16BeforeQuant, kUnshardedWeights };
enum class KvRule { kNone, kVllm, kSglang, kLmdeploy };

struct FrameworkProfile {
  std::string name = "generic";
  std::string kind = "training";  // training | inference
  std::string description;
  bool fp32_grads = false;           // grad_dtype: fp32
  LossKind loss = LossKind::kFull;
  int64_t loss_chunks = 1;
  bool ddp_bucket_copy = false;      // DDP buckets hold a second copy of the gradients
  double reduce_bucket_elements = 0;    // DeepSpeed ZeRO communication buffers
  double allgather_bucket_elements = 0;
  double prefetch_bucket_elements = 0;
  LoadPeak load_peak = LoadPeak::kNone;
  std::vector<std::string> recompute;
  KvRule kv_rule = KvRule::kNone;
  double kv_fraction = 0;            // default utilisation / fraction of the KV rule
  int64_t kv_block_tokens = 1;
  int64_t max_num_seqs = 1;          // sequences of the profiling run's sampler (vLLM)
  bool gguf = false;                 // llama.cpp: weights at a GGUF type's bits per weight
  std::string attention = "fa2";     // fused attention kernel for the time model: fa2 | fa3
  bool eager_elementwise = false;    // elementwise: eager (each PyTorch op its own kernel) | fused
  std::vector<std::string> sources;  // keys of the file's `sources`
  int line = 0;                      // where the entry starts in its file

  bool IsGeneric() const { return name == "generic"; }
};

struct FrameworkCatalog {
  std::string file;
  std::vector<FrameworkProfile> profiles;
  std::map<std::string, double> cuda_context_mib;  // by GPU architecture
  double reserve_fraction = 0.05;
  std::map<std::string, double> gguf_bits;         // GGUF type -> bits per weight
  std::map<std::string, std::string> sources;

  // The profile by name; unknown names throw InputError (field --framework) with the closest.
  const FrameworkProfile& Find(const std::string& name) const;
  // Bits per weight of a GGUF type (case-insensitive); unknown throws InputError (--gguf-type).
  double GgufBits(const std::string& type) const;
  std::vector<std::string> Names() const;

  static FrameworkCatalog Parse(const std::string& text, const std::string& file);
  static FrameworkCatalog Load(const std::string& path);
};

// The data folder's frameworks.yaml: what `fit --framework` reads and `gpuplan frameworks` lists.
FrameworkCatalog LoadFrameworkCatalog(const std::string& data_dir);
// "none", "vllm", "sglang", "lmdeploy" (the file's kv_rule values).
const char* ToString(KvRule rule);

}  // namespace gpuplan
