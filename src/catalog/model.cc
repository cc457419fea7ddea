#include "catalog/model.h"

namespace gpuplan {

const char* ToString(TensorRole role) {
  switch (role) {
    case TensorRole::kEmbedding:
      return "embedding";
    case TensorRole::kPositionEmbedding:
      return "position_embedding";
    case TensorRole::kAttention:
      return "attention";
    case TensorRole::kMlp:
      return "mlp";
    case TensorRole::kExpert:
      return "expert";
    case TensorRole::kSharedExpert:
      return "shared_expert";
    case TensorRole::kRouter:
      return "router";
    case TensorRole::kNorm:
      return "norm";
    case TensorRole::kBias:
      return "bias";
    case TensorRole::kLmHead:
      return "lm_head";
  }
  return "unknown";
}

int64_t ModelSpec::ParamsTotal() const {
  int64_t n = 0;
  for (const auto& t : tensors) {
    n += t.Params();
  }
  return n;
}

int64_t ModelSpec::ParamsOfRole(TensorRole role) const {
  int64_t n = 0;
  for (const auto& t : tensors) {
    if (t.role == role) {
      n += t.Params();
    }
  }
  return n;
}

int64_t ModelSpec::ParamsActive() const {
  // Routed experts: each token uses top-k of E experts in every MoE layer. Expert biases
  // (none in the supported families) would follow the same rule.
  int64_t n = ParamsTotal();
  if (moe && moe->experts > 0) {
    const int64_t expert = ParamsOfRole(TensorRole::kExpert);
    n -= expert;
    n += expert / moe->experts * moe->experts_per_token;
  }
  return n;
}

int64_t ModelSpec::KvElementsPerTokenPerLayer() const {
  if (mla) {
    // MLA caches the compressed latent c_KV and the shared RoPE key (arXiv:2405.04434 eq. 9-10).
    return mla->kv_lora_rank + mla->qk_rope_head_dim;
  }
  return kv_heads * (head_dim + v_head_dim);
}

double ModelSpec::MeanAttendedTokens(double ctx) const {
  if (sliding_window <= 0 || sliding_window_layers <= 0 || layers <= 0) {
    return ctx;
  }
  const double frac = static_cast<double>(sliding_window_layers) / static_cast<double>(layers);
  return frac * std::min(ctx, static_cast<double>(sliding_window)) + (1.0 - frac) * ctx;
}

}  // namespace gpuplan
