// The architecture of a transformer model, as gpuplan needs it: every parameter tensor
// (so counts are exact and each can be sharded, quantised or adapted on its own) and the
// dimensions that drive activations and the KV cache.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpuplan {

// What a tensor is, which decides how parallelism, quantisation and LoRA treat it.
enum class TensorRole {
  kEmbedding,          // token embedding (vocab x hidden)
  kPositionEmbedding,  // learned absolute positions (gpt2)
  kAttention,          // attention projections (q/k/v/o and MLA down/up projections)
  kMlp,                // dense feed-forward projections
  kExpert,             // routed MoE expert projections
  kSharedExpert,       // always-active MoE expert projections (qwen2_moe, deepseek)
  kRouter,             // MoE gate / router weights and biases
  kNorm,               // LayerNorm / RMSNorm weights and biases
  kBias,               // biases of linear layers
  kLmHead,             // output projection (absent when tied to the embedding)
};

const char* ToString(TensorRole role);

// A group of identical tensors: `count` copies of a rows x cols tensor (cols = 1 for vectors).
// Linear weights are stored as out_features (rows) x in_features (cols), as in PyTorch.
struct TensorGroup {
  std::string name;    // HF-style name with '*' for the layer / expert index
  std::string module;  // the nn.Linear's attribute name ("q_proj"), used for LoRA targets
  TensorRole role = TensorRole::kAttention;
  int64_t rows = 0;
  int64_t cols = 1;
  int64_t count = 1;           // copies in the whole model (layers x experts)
  bool per_layer = false;      // lives in the transformer blocks (split by pipeline stages)
  bool linear = false;         // a 2-D matmul weight (quantisable, LoRA-targetable)
  bool tp_split = false;       // split across tensor-parallel ranks (Megatron column/row parallel)

  int64_t Params() const { return rows * cols * count; }
};

enum class NormKind { kRms, kLayerNorm };

// Multi-head latent attention (DeepSeek-V2/V3), arXiv:2405.04434 section 2.1.
struct MlaDims {
  int64_t q_lora_rank = 0;  // 0: no query compression (V2-Lite)
  int64_t kv_lora_rank = 0;
  int64_t qk_nope_head_dim = 0;
  int64_t qk_rope_head_dim = 0;
  int64_t v_head_dim = 0;
};

struct MoeDims {
  int64_t experts = 0;               // routed experts per MoE layer
  int64_t experts_per_token = 0;     // top-k
  int64_t expert_intermediate = 0;   // FFN width of one routed expert
  int64_t shared_intermediate = 0;   // total FFN width of the shared expert(s), 0 if none
  int64_t moe_layers = 0;            // layers whose MLP is MoE; the rest are dense
};

struct ModelSpec {
  std::string name;          // preset name or path
  std::string model_type;    // HF model_type
  std::string architecture;  // HF architectures[0] when given
  std::string source;        // file it came from
  std::string name_or_path;  // the config's `_name_or_path` when given ("meta-llama/Llama-2-70b-chat-hf")

  int64_t vocab = 0;
  int64_t hidden = 0;
  int64_t layers = 0;
  int64_t heads = 0;
  int64_t kv_heads = 0;
  int64_t head_dim = 0;         // query/key head dim (MLA: nope + rope)
  bool head_dim_in_config = false;  // config.json states head_dim (else hidden / heads)
  int64_t v_head_dim = 0;       // value head dim
  int64_t intermediate = 0;     // dense FFN width
  bool gated_mlp = true;        // SwiGLU / GeGLU (3 matrices) vs GELU MLP (2)
  NormKind norm = NormKind::kRms;
  int norms_per_layer = 2;      // gemma2: 4
  bool tied_embeddings = false;
  int64_t max_positions = 0;
  int64_t sliding_window = 0;       // 0: none
  int64_t sliding_window_layers = 0;  // how many layers use it
  double attention_dropout = 0;
  double hidden_dropout = 0;
  std::optional<MlaDims> mla;
  std::optional<MoeDims> moe;
  std::string torch_dtype;      // dtype the checkpoint is stored in

  std::vector<TensorGroup> tensors;

  int64_t ParamsTotal() const;
  // Parameters touched per token: routed experts counted at top-k / experts.
  int64_t ParamsActive() const;
  int64_t ParamsOfRole(TensorRole role) const;
  // Bytes per token per layer of K and V cache at one byte per element (MLA: latent cache).
  int64_t KvElementsPerTokenPerLayer() const;
  // Tokens a query attends to (and the KV cache holds) per layer, averaged over the layers, at
  // context `ctx`: sliding-window layers see at most the window.
  double MeanAttendedTokens(double ctx) const;
};

// Reads a HuggingFace config.json (text given; `file` only names it in errors).
ModelSpec ParseHfConfig(const std::string& text, const std::string& file);
ModelSpec LoadHfConfig(const std::string& path);

// The model_type values ParseHfConfig understands.
const std::vector<std::string>& SupportedModelTypes();

}  // namespace gpuplan
