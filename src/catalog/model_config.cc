// HuggingFace config.json -> ModelSpec, one reader per model family.
//
// Each reader lists the model's parameter tensors exactly as the family's modeling code in
// HuggingFace transformers creates them (module names as in the checkpoints), so counts are
// exact to the parameter. References per family are in docs/model-families.md.
#include <algorithm>
#include <functional>
#include <limits>
#include <map>

#include "catalog/model.h"
#include "core/error.h"
#include "core/names.h"
#include "read/file_text.h"
#include "read/json_fields.h"

namespace gpuplan {
namespace {

// Upper bounds that keep every product inside int64 and reject garbage early.
constexpr int64_t kMaxDim = int64_t{1} << 20;         // hidden, head dims, ranks
constexpr int64_t kMaxWidth = int64_t{1} << 22;       // FFN widths
constexpr int64_t kMaxVocab = int64_t{1} << 24;
constexpr int64_t kMaxLayers = 10000;
constexpr int64_t kMaxHeads = 65536;
constexpr int64_t kMaxExperts = 65536;
constexpr int64_t kMaxPositions = int64_t{1} << 32;
constexpr int64_t kMaxParams = int64_t{1} << 50;      // ~1.1e15 parameters

class Builder {
 public:
  explicit Builder(ModelSpec& m, const std::string& file) : m_(m), file_(file) {}

  // A linear weight out x in, `count` copies; adds its bias when `bias`.
  void Linear(const std::string& name, const std::string& module, TensorRole role, int64_t out, int64_t in,
              int64_t count, bool bias = false, bool per_layer = true, bool tp_split = true) {
    Add({name + ".weight", module, role, out, in, count, per_layer, true, tp_split});
    if (bias) {
      Add({name + ".bias", module, TensorRole::kBias, out, 1, count, per_layer, false, tp_split});
    }
  }
  void Vector(const std::string& name, TensorRole role, int64_t n, int64_t count, bool per_layer = true,
              bool tp_split = false) {
    Add({name, "", role, n, 1, count, per_layer, false, tp_split});
  }
  // A norm: weight, plus bias for LayerNorm.
  void Norm(const std::string& name, int64_t n, int64_t count, bool per_layer = true) {
    Vector(name + ".weight", TensorRole::kNorm, n, count, per_layer);
    if (m_.norm == NormKind::kLayerNorm) {
      Vector(name + ".bias", TensorRole::kNorm, n, count, per_layer);
    }
  }
  void Add(TensorGroup t) {
    if (t.count <= 0 || t.rows <= 0 || t.cols <= 0) {
      return;  // e.g. zero MoE layers
    }
    int64_t p = 0;
    if (__builtin_mul_overflow(t.rows, t.cols, &p) || __builtin_mul_overflow(p, t.count, &p) ||
        __builtin_add_overflow(total_, p, &total_) || total_ > kMaxParams) {
      throw InputError("model is implausibly large (parameter count overflows)", file_);
    }
    m_.tensors.push_back(std::move(t));
  }

 private:
  ModelSpec& m_;
  const std::string& file_;
  int64_t total_ = 0;
};

struct Common {
  int64_t h = 0, L = 0, nh = 0, nkv = 0, hd = 0, V = 0, I = 0;
  bool hd_given = false;  // config.json states head_dim (TGI's launcher reads only that)
};

// The shape every family reports, copied onto the spec (values head dim = key head dim unless
// the family says otherwise afterwards).
void ApplyCommon(const Common& c, ModelSpec& m) {
  m.hidden = c.h;
  m.layers = c.L;
  m.heads = c.nh;
  m.kv_heads = c.nkv;
  m.head_dim = c.hd;
  m.v_head_dim = c.hd;
  m.head_dim_in_config = c.hd_given;
  m.vocab = c.V;
  m.intermediate = c.I;
}

Common ReadCommon(const JsonFields& f, ModelSpec& m) {
  Common c;
  c.h = f.Int({"hidden_size", "n_embd", "d_model"}, kMaxDim);
  c.L = f.Int({"num_hidden_layers", "n_layer", "num_layers"}, kMaxLayers);
  c.nh = f.Int({"num_attention_heads", "n_head"}, kMaxHeads);
  c.nkv = f.IntOr({"num_key_value_heads", "num_kv_heads"}, c.nh, kMaxHeads);
  if (f.Has({"head_dim"})) {
    c.hd = f.Int({"head_dim"}, kMaxDim);
    c.hd_given = true;
  } else {
    if (c.h % c.nh != 0) {
      f.Fail("num_attention_heads", "hidden_size " + std::to_string(c.h) + " is not divisible by " +
                                        std::to_string(c.nh) + " heads and no head_dim is given");
    }
    c.hd = c.h / c.nh;
  }
  if (c.nh % c.nkv != 0) {
    f.Fail("num_key_value_heads", std::to_string(c.nh) + " attention heads are not divisible into " +
                                      std::to_string(c.nkv) + " key/value heads");
  }
  c.V = f.Int({"vocab_size", "padded_vocab_size"}, kMaxVocab);
  c.I = f.IntOr({"intermediate_size", "ffn_hidden_size", "n_inner"}, 4 * c.h, kMaxWidth);
  ApplyCommon(c, m);
  m.max_positions = f.IntOr({"max_position_embeddings", "n_positions", "seq_length"}, 0, kMaxPositions, 0);
  m.attention_dropout = f.NumberOr({"attention_dropout", "attn_pdrop"}, 0.0);
  m.hidden_dropout = f.NumberOr({"hidden_dropout", "resid_pdrop"}, 0.0);
  m.torch_dtype = f.StringOr({"torch_dtype", "dtype"}, "");
  return c;
}

// Token embedding (vocab x hidden, split over tensor-parallel ranks by vocabulary).
void AddTokenEmbedding(Builder& b, const Common& c, const std::string& name) {
  b.Add({name, "embed_tokens", TensorRole::kEmbedding, c.V, c.h, 1, false, false, true});
}

// The output head, unless it shares the embedding's weight.
void AddOutputHead(Builder& b, const ModelSpec& m, const Common& c, const std::string& name) {
  if (!m.tied_embeddings) {
    b.Add({name, "lm_head", TensorRole::kLmHead, c.V, c.h, 1, false, true, true});
  }
}

// Embedding and output head shared by every decoder.
void AddEmbeddings(Builder& b, ModelSpec& m, const Common& c, const std::string& embed_name,
                   const std::string& head_name) {
  AddTokenEmbedding(b, c, embed_name + ".weight");
  AddOutputHead(b, m, c, head_name + ".weight");
}

// Options for the llama-like family (separate or fused q/k/v, gated MLP, RMSNorm).
struct LlamaStyle {
  bool q_bias = false, k_bias = false, v_bias = false, o_bias = false;
  bool mlp_bias = false;
  bool qk_norm = false;            // qwen3: per-head RMSNorm on q and k
  std::string fused_qkv;           // non-empty: one fused projection with this module name
  std::string fused_gate_up;       // non-empty: fused gate+up projection
  std::string attn_prefix = "model.layers.*.self_attn";
  std::string mlp_prefix = "model.layers.*.mlp";
  std::string o_name = "o_proj";
  std::string gate_name = "gate_proj", up_name = "up_proj", down_name = "down_proj";
  std::vector<std::string> norm_names = {"model.layers.*.input_layernorm", "model.layers.*.post_attention_layernorm"};
  std::string embed = "model.embed_tokens";
  std::string final_norm = "model.norm";
  std::string head = "lm_head";

  // transformers' `attention_bias`: one switch for q, k, v and o.
  void SetAttentionBias(bool bias) { q_bias = k_bias = v_bias = o_bias = bias; }
};

void AddLlamaAttention(Builder& b, const Common& c, const LlamaStyle& s, int64_t layers) {
  const int64_t q = c.nh * c.hd;
  const int64_t kv = c.nkv * c.hd;
  if (!s.fused_qkv.empty()) {
    b.Linear(s.attn_prefix + "." + s.fused_qkv, s.fused_qkv, TensorRole::kAttention, q + 2 * kv, c.h, layers,
             s.q_bias);
  } else {
    b.Linear(s.attn_prefix + ".q_proj", "q_proj", TensorRole::kAttention, q, c.h, layers, s.q_bias);
    b.Linear(s.attn_prefix + ".k_proj", "k_proj", TensorRole::kAttention, kv, c.h, layers, s.k_bias);
    b.Linear(s.attn_prefix + ".v_proj", "v_proj", TensorRole::kAttention, kv, c.h, layers, s.v_bias);
  }
  b.Linear(s.attn_prefix + "." + s.o_name, s.o_name, TensorRole::kAttention, c.h, q, layers, s.o_bias);
  if (s.qk_norm) {
    b.Vector(s.attn_prefix + ".q_norm.weight", TensorRole::kNorm, c.hd, layers);
    b.Vector(s.attn_prefix + ".k_norm.weight", TensorRole::kNorm, c.hd, layers);
  }
}

// A gated MLP (gate, up, down) of width `width`, `count` copies.
void AddGatedMlp(Builder& b, const std::string& prefix, const LlamaStyle& s, TensorRole role, int64_t h,
                 int64_t width, int64_t count, bool bias) {
  if (!s.fused_gate_up.empty() && role == TensorRole::kMlp) {
    b.Linear(prefix + "." + s.fused_gate_up, s.fused_gate_up, role, 2 * width, h, count, bias);
  } else {
    b.Linear(prefix + "." + s.gate_name, s.gate_name, role, width, h, count, bias);
    b.Linear(prefix + "." + s.up_name, s.up_name, role, width, h, count, bias);
  }
  b.Linear(prefix + "." + s.down_name, s.down_name, role, h, width, count, bias);
}

void AddLlamaNorms(Builder& b, const Common& c, const LlamaStyle& s) {
  for (const auto& n : s.norm_names) {
    b.Norm(n, c.h, c.L);
  }
  b.Norm(s.final_norm, c.h, 1, false);
}

// Dense llama-like decoder: every layer has attention + gated MLP.
void BuildLlamaDense(Builder& b, ModelSpec& m, const Common& c, const LlamaStyle& s) {
  AddEmbeddings(b, m, c, s.embed, s.head);
  AddLlamaAttention(b, c, s, c.L);
  AddGatedMlp(b, s.mlp_prefix, s, TensorRole::kMlp, c.h, c.I, c.L, s.mlp_bias);
  AddLlamaNorms(b, c, s);
}

void ReadSlidingWindow(const JsonFields& f, ModelSpec& m, bool enabled_by_default) {
  if (!f.BoolOr({"use_sliding_window"}, enabled_by_default)) {
    return;
  }
  const int64_t w = f.IntOr({"sliding_window"}, 0, kMaxPositions, 0);
  if (w > 0 && (m.max_positions == 0 || w < m.max_positions)) {
    m.sliding_window = w;
    const int64_t full_layers = f.Has({"use_sliding_window"}) ? f.IntOr({"max_window_layers"}, 0, kMaxLayers, 0) : 0;
    m.sliding_window_layers = std::max<int64_t>(0, m.layers - full_layers);
  }
}

// The sliding-window rule of a family: none, or read with `use_sliding_window` defaulting on/off.
enum class Window { kNone, kOffByDefault, kOnByDefault };

// A dense llama-like decoder read the common way: the shape, whether the head is tied (default
// per family), every layer attention + gated MLP in style `s`, then the family's window rule.
void BuildDenseFamily(const JsonFields& f, ModelSpec& m, Builder& b, const LlamaStyle& s, bool tied_default,
                      Window window) {
  const Common c = ReadCommon(f, m);
  m.tied_embeddings = f.BoolOr({"tie_word_embeddings"}, tied_default);
  BuildLlamaDense(b, m, c, s);
  if (window != Window::kNone) {
    ReadSlidingWindow(f, m, window == Window::kOnByDefault);
  }
}

void BuildLlama(const JsonFields& f, ModelSpec& m, Builder& b) {
  LlamaStyle s;
  s.SetAttentionBias(f.BoolOr({"attention_bias"}, false));
  s.mlp_bias = f.BoolOr({"mlp_bias"}, false);
  BuildDenseFamily(f, m, b, s, false, Window::kOnByDefault);
}

void BuildQwen2(const JsonFields& f, ModelSpec& m, Builder& b) {
  LlamaStyle s;
  s.q_bias = s.k_bias = s.v_bias = true;  // Qwen2Attention: bias=True on q/k/v, False on o_proj
  BuildDenseFamily(f, m, b, s, false, Window::kOffByDefault);
}

void BuildQwen3(const JsonFields& f, ModelSpec& m, Builder& b) {
  LlamaStyle s;
  s.SetAttentionBias(f.BoolOr({"attention_bias"}, false));
  s.qk_norm = true;
  BuildDenseFamily(f, m, b, s, false, Window::kOffByDefault);
}

// Which layers carry an MoE block (qwen2_moe / qwen3_moe rule: (i+1) % decoder_sparse_step == 0
// and i not in mlp_only_layers).
int64_t CountQwenMoeLayers(const JsonFields& f, int64_t layers) {
  const int64_t step = f.IntOr({"decoder_sparse_step"}, 1, kMaxLayers);
  std::vector<int64_t> dense_only;
  std::string key;
  if (const auto* v = f.Find({"mlp_only_layers"}, &key)) {
    if (!v->is_array()) {
      f.Fail(key, "expected a list of layer indices");
    }
    for (const auto& e : *v) {
      if (!e.is_number_integer()) {
        f.Fail(key, "expected integer layer indices");
      }
      dense_only.push_back(e.get<int64_t>());
    }
  }
  int64_t n = 0;
  for (int64_t i = 0; i < layers; ++i) {
    const bool only_mlp = std::find(dense_only.begin(), dense_only.end(), i) != dense_only.end();
    if (!only_mlp && (i + 1) % step == 0) {
      ++n;
    }
  }
  return n;
}

void BuildQwenMoe(const JsonFields& f, ModelSpec& m, Builder& b, bool qwen3) {
  const Common c = ReadCommon(f, m);
  m.tied_embeddings = f.BoolOr({"tie_word_embeddings"}, false);
  LlamaStyle s;
  if (qwen3) {
    s.SetAttentionBias(f.BoolOr({"attention_bias"}, false));
    s.qk_norm = true;
  } else {
    s.q_bias = s.k_bias = s.v_bias = true;
  }
  MoeDims moe;
  moe.experts = f.Int({"num_experts"}, kMaxExperts);
  moe.experts_per_token = f.Int({"num_experts_per_tok"}, kMaxExperts);
  if (moe.experts_per_token > moe.experts) {
    f.Fail("num_experts_per_tok", "is larger than num_experts");
  }
  moe.expert_intermediate = f.Int({"moe_intermediate_size"}, kMaxWidth);
  moe.shared_intermediate = qwen3 ? 0 : f.IntOr({"shared_expert_intermediate_size"}, 0, kMaxWidth, 0);
  moe.moe_layers = CountQwenMoeLayers(f, c.L);
  const int64_t dense_layers = c.L - moe.moe_layers;

  AddEmbeddings(b, m, c, s.embed, s.head);
  AddLlamaAttention(b, c, s, c.L);
  AddGatedMlp(b, "model.layers.*.mlp", s, TensorRole::kMlp, c.h, c.I, dense_layers, false);
  b.Linear("model.layers.*.mlp.gate", "gate", TensorRole::kRouter, moe.experts, c.h, moe.moe_layers, false, true,
           false);
  AddGatedMlp(b, "model.layers.*.mlp.experts.*", s, TensorRole::kExpert, c.h, moe.expert_intermediate,
              moe.moe_layers * moe.experts, false);
  if (moe.shared_intermediate > 0) {
    AddGatedMlp(b, "model.layers.*.mlp.shared_expert", s, TensorRole::kSharedExpert, c.h, moe.shared_intermediate,
                moe.moe_layers, false);
    b.Linear("model.layers.*.mlp.shared_expert_gate", "shared_expert_gate", TensorRole::kRouter, 1, c.h,
             moe.moe_layers, false, true, false);
  }
  AddLlamaNorms(b, c, s);
  m.moe = moe;
  ReadSlidingWindow(f, m, false);
}

void BuildMixtral(const JsonFields& f, ModelSpec& m, Builder& b) {
  const Common c = ReadCommon(f, m);
  m.tied_embeddings = f.BoolOr({"tie_word_embeddings"}, false);
  LlamaStyle s;
  s.gate_name = "w1";
  s.down_name = "w2";
  s.up_name = "w3";
  MoeDims moe;
  moe.experts = f.Int({"num_local_experts"}, kMaxExperts);
  moe.experts_per_token = f.Int({"num_experts_per_tok"}, kMaxExperts);
  if (moe.experts_per_token > moe.experts) {
    f.Fail("num_experts_per_tok", "is larger than num_local_experts");
  }
  moe.expert_intermediate = c.I;
  moe.moe_layers = c.L;
  AddEmbeddings(b, m, c, s.embed, s.head);
  AddLlamaAttention(b, c, s, c.L);
  b.Linear("model.layers.*.block_sparse_moe.gate", "gate", TensorRole::kRouter, moe.experts, c.h, c.L, false, true,
           false);
  AddGatedMlp(b, "model.layers.*.block_sparse_moe.experts.*", s, TensorRole::kExpert, c.h, c.I, c.L * moe.experts,
              false);
  AddLlamaNorms(b, c, s);
  m.moe = moe;
  ReadSlidingWindow(f, m, true);
}

// DeepSeek-V2 / V3: multi-head latent attention (arXiv:2405.04434) and DeepSeekMoE with shared
// experts (arXiv:2401.06066). Layer i is MoE when i >= first_k_dense_replace and
// i % moe_layer_freq == 0.
void BuildDeepseek(const JsonFields& f, ModelSpec& m, Builder& b, bool v3) {
  Common c;
  c.h = f.Int({"hidden_size"}, kMaxDim);
  c.L = f.Int({"num_hidden_layers"}, kMaxLayers);
  c.nh = f.Int({"num_attention_heads"}, kMaxHeads);
  c.V = f.Int({"vocab_size"}, kMaxVocab);
  c.I = f.Int({"intermediate_size"}, kMaxWidth);
  MlaDims mla;
  mla.q_lora_rank = f.IntOr({"q_lora_rank"}, 0, kMaxDim, 0);
  mla.kv_lora_rank = f.Int({"kv_lora_rank"}, kMaxDim);
  mla.qk_nope_head_dim = f.Int({"qk_nope_head_dim"}, kMaxDim);
  mla.qk_rope_head_dim = f.Int({"qk_rope_head_dim"}, kMaxDim);
  mla.v_head_dim = f.Int({"v_head_dim"}, kMaxDim);
  const int64_t qk_hd = mla.qk_nope_head_dim + mla.qk_rope_head_dim;
  c.hd = qk_hd;
  c.nkv = c.nh;
  ApplyCommon(c, m);
  m.v_head_dim = mla.v_head_dim;
  m.max_positions = f.IntOr({"max_position_embeddings"}, 0, kMaxPositions, 0);
  m.attention_dropout = f.NumberOr({"attention_dropout"}, 0.0);
  m.torch_dtype = f.StringOr({"torch_dtype"}, "");
  m.tied_embeddings = f.BoolOr({"tie_word_embeddings"}, false);
  const bool attn_bias = f.BoolOr({"attention_bias"}, false);

  MoeDims moe;
  moe.experts = f.IntOr({"n_routed_experts"}, 0, kMaxExperts, 0);
  const int64_t first_dense = f.IntOr({"first_k_dense_replace"}, 0, kMaxLayers, 0);
  const int64_t freq = f.IntOr({"moe_layer_freq"}, 1, kMaxLayers);
  if (moe.experts > 0) {
    moe.experts_per_token = f.Int({"num_experts_per_tok"}, kMaxExperts);
    if (moe.experts_per_token > moe.experts) {
      f.Fail("num_experts_per_tok", "is larger than n_routed_experts");
    }
    moe.expert_intermediate = f.Int({"moe_intermediate_size"}, kMaxWidth);
    moe.shared_intermediate = f.IntOr({"n_shared_experts"}, 0, kMaxExperts, 0) * moe.expert_intermediate;
    for (int64_t i = 0; i < c.L; ++i) {
      if (i >= first_dense && i % freq == 0) {
        ++moe.moe_layers;
      }
    }
  }
  const int64_t dense_layers = c.L - moe.moe_layers;
  const std::string attn = "model.layers.*.self_attn";
  AddEmbeddings(b, m, c, "model.embed_tokens", "lm_head");
  if (mla.q_lora_rank > 0) {
    b.Linear(attn + ".q_a_proj", "q_a_proj", TensorRole::kAttention, mla.q_lora_rank, c.h, c.L, attn_bias, true,
             false);
    b.Norm(attn + ".q_a_layernorm", mla.q_lora_rank, c.L);
    b.Linear(attn + ".q_b_proj", "q_b_proj", TensorRole::kAttention, c.nh * qk_hd, mla.q_lora_rank, c.L);
  } else {
    b.Linear(attn + ".q_proj", "q_proj", TensorRole::kAttention, c.nh * qk_hd, c.h, c.L);
  }
  b.Linear(attn + ".kv_a_proj_with_mqa", "kv_a_proj_with_mqa", TensorRole::kAttention,
           mla.kv_lora_rank + mla.qk_rope_head_dim, c.h, c.L, attn_bias, true, false);
  b.Norm(attn + ".kv_a_layernorm", mla.kv_lora_rank, c.L);
  b.Linear(attn + ".kv_b_proj", "kv_b_proj", TensorRole::kAttention,
           c.nh * (mla.qk_nope_head_dim + mla.v_head_dim), mla.kv_lora_rank, c.L);
  b.Linear(attn + ".o_proj", "o_proj", TensorRole::kAttention, c.h, c.nh * mla.v_head_dim, c.L, attn_bias);

  LlamaStyle s;
  AddGatedMlp(b, "model.layers.*.mlp", s, TensorRole::kMlp, c.h, c.I, dense_layers, false);
  if (moe.moe_layers > 0) {
    b.Linear("model.layers.*.mlp.gate", "gate", TensorRole::kRouter, moe.experts, c.h, moe.moe_layers, false, true,
             false);
    // DeepSeek-V3's aux-loss-free balancing keeps a learned per-expert bias (topk_method noaux_tc).
    if (v3 && f.StringOr({"topk_method"}, "noaux_tc") == "noaux_tc") {
      b.Vector("model.layers.*.mlp.gate.e_score_correction_bias", TensorRole::kRouter, moe.experts, moe.moe_layers);
    }
    AddGatedMlp(b, "model.layers.*.mlp.experts.*", s, TensorRole::kExpert, c.h, moe.expert_intermediate,
                moe.moe_layers * moe.experts, false);
    if (moe.shared_intermediate > 0) {
      AddGatedMlp(b, "model.layers.*.mlp.shared_experts", s, TensorRole::kSharedExpert, c.h,
                  moe.shared_intermediate, moe.moe_layers, false);
    }
    m.moe = moe;
  }
  AddLlamaNorms(b, c, s);
  m.mla = mla;
}

void BuildGemma(const JsonFields& f, ModelSpec& m, Builder& b, bool gemma2) {
  LlamaStyle s;
  s.SetAttentionBias(f.BoolOr({"attention_bias"}, false));
  if (gemma2) {
    s.norm_names = {"model.layers.*.input_layernorm", "model.layers.*.post_attention_layernorm",
                    "model.layers.*.pre_feedforward_layernorm", "model.layers.*.post_feedforward_layernorm"};
    m.norms_per_layer = 4;
  }
  BuildDenseFamily(f, m, b, s, true, Window::kNone);  // Gemma always ties
  if (gemma2) {
    // Gemma 2 alternates local sliding-window and global attention layers.
    const int64_t w = f.IntOr({"sliding_window"}, 0, kMaxPositions, 0);
    if (w > 0) {
      m.sliding_window = w;
      m.sliding_window_layers = (m.layers + 1) / 2;
    }
  }
}

void BuildPhi3(const JsonFields& f, ModelSpec& m, Builder& b) {
  LlamaStyle s;
  s.fused_qkv = "qkv_proj";
  s.fused_gate_up = "gate_up_proj";
  BuildDenseFamily(f, m, b, s, false, Window::kOnByDefault);
}

void BuildInternLm2(const JsonFields& f, ModelSpec& m, Builder& b) {
  LlamaStyle s;
  const bool bias = f.BoolOr({"bias"}, false);
  s.q_bias = s.o_bias = s.mlp_bias = bias;
  s.fused_qkv = "wqkv";
  s.attn_prefix = "model.layers.*.attention";
  s.o_name = "wo";
  s.mlp_prefix = "model.layers.*.feed_forward";
  s.gate_name = "w1";
  s.up_name = "w3";
  s.down_name = "w2";
  s.norm_names = {"model.layers.*.attention_norm", "model.layers.*.ffn_norm"};
  s.embed = "model.tok_embeddings";
  s.head = "output";
  BuildDenseFamily(f, m, b, s, false, Window::kNone);
}

void BuildBaichuan(const JsonFields& f, ModelSpec& m, Builder& b) {
  LlamaStyle s;
  s.fused_qkv = "W_pack";
  BuildDenseFamily(f, m, b, s, false, Window::kNone);
}

// GLM-4 in transformers (model_type "glm"): q/k/v carry biases, fused gate_up_proj.
void BuildGlm(const JsonFields& f, ModelSpec& m, Builder& b) {
  LlamaStyle s;
  s.q_bias = s.k_bias = s.v_bias = f.BoolOr({"attention_bias"}, true);
  s.fused_gate_up = "gate_up_proj";
  BuildDenseFamily(f, m, b, s, false, Window::kNone);
}

// ChatGLM2/3 and GLM-4 remote code (model_type "chatglm", THUDM modeling_chatglm.py).
void BuildChatGlm(const JsonFields& f, ModelSpec& m, Builder& b) {
  Common c;
  c.h = f.Int({"hidden_size"}, kMaxDim);
  c.L = f.Int({"num_layers", "num_hidden_layers"}, kMaxLayers);
  c.nh = f.Int({"num_attention_heads"}, kMaxHeads);
  c.hd = f.IntOr({"kv_channels"}, c.h / c.nh, kMaxDim);
  c.nkv = f.BoolOr({"multi_query_attention"}, false) ? f.Int({"multi_query_group_num"}, kMaxHeads) : c.nh;
  if (c.nh % c.nkv != 0) {
    f.Fail("multi_query_group_num", "attention heads are not divisible into the query groups");
  }
  c.V = f.Int({"padded_vocab_size", "vocab_size"}, kMaxVocab);
  c.I = f.Int({"ffn_hidden_size"}, kMaxWidth);
  ApplyCommon(c, m);
  m.max_positions = f.IntOr({"seq_length", "max_position_embeddings"}, 0, kMaxPositions, 0);
  m.attention_dropout = f.NumberOr({"attention_dropout"}, 0.0);
  m.hidden_dropout = f.NumberOr({"hidden_dropout"}, 0.0);
  m.torch_dtype = f.StringOr({"torch_dtype"}, "");
  m.norm = f.BoolOr({"rmsnorm"}, true) ? NormKind::kRms : NormKind::kLayerNorm;
  m.tied_embeddings = f.BoolOr({"tie_word_embeddings"}, false);
  const bool linear_bias = f.BoolOr({"add_bias_linear"}, false);
  const bool qkv_bias = f.BoolOr({"add_qkv_bias"}, false) || linear_bias;
  AddTokenEmbedding(b, c, "transformer.embedding.word_embeddings.weight");
  const std::string layer = "transformer.encoder.layers.*";
  b.Norm(layer + ".input_layernorm", c.h, c.L);
  b.Linear(layer + ".self_attention.query_key_value", "query_key_value", TensorRole::kAttention,
           (c.nh + 2 * c.nkv) * c.hd, c.h, c.L, qkv_bias);
  b.Linear(layer + ".self_attention.dense", "dense", TensorRole::kAttention, c.h, c.nh * c.hd, c.L, linear_bias);
  b.Norm(layer + ".post_attention_layernorm", c.h, c.L);
  b.Linear(layer + ".mlp.dense_h_to_4h", "dense_h_to_4h", TensorRole::kMlp, 2 * c.I, c.h, c.L, linear_bias);
  b.Linear(layer + ".mlp.dense_4h_to_h", "dense_4h_to_h", TensorRole::kMlp, c.h, c.I, c.L, linear_bias);
  if (f.BoolOr({"post_layer_norm"}, true)) {
    b.Norm("transformer.encoder.final_layernorm", c.h, 1, false);
  }
  AddOutputHead(b, m, c, "transformer.output_layer.weight");
}

// GPT-2 (Radford et al. 2019): learned positions, LayerNorm with bias, Conv1D with bias, tied head.
void BuildGpt2(const JsonFields& f, ModelSpec& m, Builder& b) {
  m.norm = NormKind::kLayerNorm;
  m.gated_mlp = false;
  const Common c = ReadCommon(f, m);
  m.tied_embeddings = f.BoolOr({"tie_word_embeddings"}, true);
  m.hidden_dropout = f.NumberOr({"resid_pdrop"}, 0.1);
  m.attention_dropout = f.NumberOr({"attn_pdrop"}, 0.1);
  const int64_t positions = f.IntOr({"n_positions", "max_position_embeddings"}, 1024, kMaxPositions);
  m.max_positions = positions;
  AddTokenEmbedding(b, c, "transformer.wte.weight");
  b.Add({"transformer.wpe.weight", "", TensorRole::kPositionEmbedding, positions, c.h, 1, false, false, false});
  const std::string layer = "transformer.h.*";
  b.Norm(layer + ".ln_1", c.h, c.L);
  b.Linear(layer + ".attn.c_attn", "c_attn", TensorRole::kAttention, 3 * c.h, c.h, c.L, true);
  b.Linear(layer + ".attn.c_proj", "c_proj", TensorRole::kAttention, c.h, c.h, c.L, true);
  b.Norm(layer + ".ln_2", c.h, c.L);
  b.Linear(layer + ".mlp.c_fc", "c_fc", TensorRole::kMlp, c.I, c.h, c.L, true);
  b.Linear(layer + ".mlp.c_proj", "c_proj", TensorRole::kMlp, c.h, c.I, c.L, true);
  b.Norm("transformer.ln_f", c.h, 1, false);
  AddOutputHead(b, m, c, "lm_head.weight");
}

// GPT-NeoX / Pythia (Black et al. 2022): fused qkv with bias, LayerNorm with bias, GELU MLP.
void BuildGptNeox(const JsonFields& f, ModelSpec& m, Builder& b) {
  m.norm = NormKind::kLayerNorm;
  m.gated_mlp = false;
  const Common c = ReadCommon(f, m);
  m.tied_embeddings = f.BoolOr({"tie_word_embeddings"}, false);
  const bool bias = f.BoolOr({"attention_bias"}, true);
  AddTokenEmbedding(b, c, "gpt_neox.embed_in.weight");
  const std::string layer = "gpt_neox.layers.*";
  b.Norm(layer + ".input_layernorm", c.h, c.L);
  b.Norm(layer + ".post_attention_layernorm", c.h, c.L);
  b.Linear(layer + ".attention.query_key_value", "query_key_value", TensorRole::kAttention, 3 * c.h, c.h, c.L, bias);
  b.Linear(layer + ".attention.dense", "dense", TensorRole::kAttention, c.h, c.h, c.L, bias);
  b.Linear(layer + ".mlp.dense_h_to_4h", "dense_h_to_4h", TensorRole::kMlp, c.I, c.h, c.L, true);
  b.Linear(layer + ".mlp.dense_4h_to_h", "dense_4h_to_h", TensorRole::kMlp, c.h, c.I, c.L, true);
  b.Norm("gpt_neox.final_layer_norm", c.h, 1, false);
  AddOutputHead(b, m, c, "embed_out.weight");
}

// Falcon (Almazrouei et al. 2023, modeling_falcon.py): multi-query or grouped KV, parallel attn.
void BuildFalcon(const JsonFields& f, ModelSpec& m, Builder& b) {
  m.norm = NormKind::kLayerNorm;
  m.gated_mlp = false;
  Common c;
  c.h = f.Int({"hidden_size", "n_embd"}, kMaxDim);
  c.L = f.Int({"num_hidden_layers", "n_layer"}, kMaxLayers);
  c.nh = f.Int({"num_attention_heads", "n_head"}, kMaxHeads);
  if (c.h % c.nh != 0) {
    f.Fail("num_attention_heads", "hidden_size is not divisible by the number of heads");
  }
  c.hd = c.h / c.nh;
  const bool new_arch = f.BoolOr({"new_decoder_architecture"}, false);
  if (new_arch) {
    c.nkv = f.Int({"num_kv_heads", "n_head_kv"}, kMaxHeads);
  } else if (f.BoolOr({"multi_query"}, true)) {
    c.nkv = 1;
  } else {
    c.nkv = c.nh;
  }
  c.V = f.Int({"vocab_size"}, kMaxVocab);
  c.I = f.IntOr({"ffn_hidden_size"}, 4 * c.h, kMaxWidth);
  ApplyCommon(c, m);
  m.max_positions = f.IntOr({"max_position_embeddings"}, 2048, kMaxPositions, 0);
  m.attention_dropout = f.NumberOr({"attention_dropout"}, 0.0);
  m.hidden_dropout = f.NumberOr({"hidden_dropout"}, 0.0);
  m.torch_dtype = f.StringOr({"torch_dtype"}, "");
  m.tied_embeddings = f.BoolOr({"tie_word_embeddings"}, true);
  const bool bias = f.BoolOr({"bias"}, false);
  const bool parallel = f.BoolOr({"parallel_attn"}, true);
  AddTokenEmbedding(b, c, "transformer.word_embeddings.weight");
  const std::string layer = "transformer.h.*";
  if (new_arch) {
    const int64_t n_ln = f.IntOr({"num_ln_in_parallel_attn"}, 2, 2);
    if (n_ln == 2) {
      b.Norm(layer + ".ln_attn", c.h, c.L);
      b.Norm(layer + ".ln_mlp", c.h, c.L);
    } else {
      b.Norm(layer + ".input_layernorm", c.h, c.L);
    }
    m.norms_per_layer = static_cast<int>(n_ln);
  } else {
    b.Norm(layer + ".input_layernorm", c.h, c.L);
    if (!parallel) {
      b.Norm(layer + ".post_attention_layernorm", c.h, c.L);
    }
    m.norms_per_layer = parallel ? 1 : 2;
  }
  b.Linear(layer + ".self_attention.query_key_value", "query_key_value", TensorRole::kAttention,
           (c.nh + 2 * c.nkv) * c.hd, c.h, c.L, bias);
  b.Linear(layer + ".self_attention.dense", "dense", TensorRole::kAttention, c.h, c.h, c.L, bias);
  b.Linear(layer + ".mlp.dense_h_to_4h", "dense_h_to_4h", TensorRole::kMlp, c.I, c.h, c.L, bias);
  b.Linear(layer + ".mlp.dense_4h_to_h", "dense_4h_to_h", TensorRole::kMlp, c.h, c.I, c.L, bias);
  b.Norm("transformer.ln_f", c.h, 1, false);
  AddOutputHead(b, m, c, "lm_head.weight");
}

using Reader = std::function<void(const JsonFields&, ModelSpec&, Builder&)>;

const std::map<std::string, Reader>& Readers() {
  static const std::map<std::string, Reader> readers = {
      {"llama", BuildLlama},
      {"mistral", BuildLlama},
      {"mixtral", BuildMixtral},
      {"qwen2", BuildQwen2},
      {"qwen2_moe", [](const JsonFields& f, ModelSpec& m, Builder& b) { BuildQwenMoe(f, m, b, false); }},
      {"qwen3", BuildQwen3},
      {"qwen3_moe", [](const JsonFields& f, ModelSpec& m, Builder& b) { BuildQwenMoe(f, m, b, true); }},
      {"deepseek_v2", [](const JsonFields& f, ModelSpec& m, Builder& b) { BuildDeepseek(f, m, b, false); }},
      {"deepseek_v3", [](const JsonFields& f, ModelSpec& m, Builder& b) { BuildDeepseek(f, m, b, true); }},
      {"gemma", [](const JsonFields& f, ModelSpec& m, Builder& b) { BuildGemma(f, m, b, false); }},
      {"gemma2", [](const JsonFields& f, ModelSpec& m, Builder& b) { BuildGemma(f, m, b, true); }},
      {"phi3", BuildPhi3},
      {"gpt2", BuildGpt2},
      {"gpt_neox", BuildGptNeox},
      {"falcon", BuildFalcon},
      {"RefinedWeb", BuildFalcon},
      {"RefinedWebModel", BuildFalcon},
      {"glm", BuildGlm},
      {"chatglm", BuildChatGlm},
      {"internlm2", BuildInternLm2},
      {"baichuan", BuildBaichuan},
  };
  return readers;
}

}  // namespace

const std::vector<std::string>& SupportedModelTypes() {
  static const std::vector<std::string> types = [] {
    std::vector<std::string> t;
    for (const auto& [k, v] : Readers()) {
      t.push_back(k);
    }
    return t;
  }();
  return types;
}

ModelSpec ParseHfConfig(const std::string& text, const std::string& file) {
  const nlohmann::json j = ParseJsonText(text, file);
  const JsonFields f(j, text, file);
  ModelSpec m;
  m.source = file;
  if (const auto* n = f.Find({"_name_or_path"}); n != nullptr && n->is_string()) {
    m.name_or_path = n->get<std::string>();
  }
  m.model_type = f.StringOr({"model_type"}, "");
  if (m.model_type.empty()) {
    f.Fail("model_type", "required field is missing; supported: " + JoinOr(SupportedModelTypes()));
  }
  if (const auto* a = f.Find({"architectures"}); a != nullptr && a->is_array() && !a->empty() && (*a)[0].is_string()) {
    m.architecture = (*a)[0].get<std::string>();
  }
  const auto& readers = Readers();
  auto it = readers.find(m.model_type);
  if (it == readers.end()) {
    f.Fail("model_type", "unsupported model_type '" + m.model_type + "'; supported: " + JoinOr(SupportedModelTypes()));
  }
  Builder b(m, file);
  it->second(f, m, b);
  if (m.architecture.empty()) {
    m.architecture = m.model_type;
  }
  return m;
}

ModelSpec LoadHfConfig(const std::string& path) { return ParseHfConfig(ReadFileText(path), path); }

}  // namespace gpuplan
