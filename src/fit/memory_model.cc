// Memory model. Formulas and their sources: docs/memory-model.md (section numbers in comments).
#include "fit/memory_model.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace gpuplan {
namespace {

// §3.3 QLoRA NF4 with double quantisation (Dettmers et al. 2023, section 3): 4-bit weights,
// one 8-bit absmax per 64 weights, one fp32 second-level constant per 256 absmax values.
// §5.1 int4 weight-only (GPTQ/AWQ): fp16 scale + fp16 zero point per group of 128 weights.
constexpr double kInt4GroupSize = 128.0;
constexpr double kInt4GroupBytes = 4.0;
// §3.2 8-bit Adam (Dettmers et al. 2022): two 1-byte states + an fp32 absmax per block of 2048.
constexpr double kAdam8bitBlock = 2048.0;
// §4.5 logits: training-dtype logits + fp32 upcast + fp32 log-softmax kept for backward.
constexpr double kLogitsFp32Copies = 2.0;
// §4.2 flash attention keeps one fp32 log-sum-exp per head and query position.
constexpr double kFlashLseBytes = 4.0;

double CeilDiv(int64_t a, int64_t b) { return static_cast<double>((a + b - 1) / b); }


// Trained parameters of one tensor class held by the GPU, and their ZeRO shard size.
struct Trainable {
  double params = 0;
  double factored = 0;  // Adafactor state elements for these parameters
  double shard = 1;     // ZeRO data-parallel shard size
};

struct StageTotals {
  MemoryBreakdown mem;
  double params_on_gpu = 0;
  Bytes cpu;
  Bytes kv_per_seq;
  Bytes act_per_seq;   // inference: activation bytes that grow with concurrency
  Bytes fixed_for_kv;  // inference: everything but the KV cache and per-sequence activations
  // §8 framework conventions
  double trainable_params = 0;  // trained parameters this GPU holds (before ZeRO sharding)
  Bytes non_torch;              // CUDA context + NCCL buffers: outside PyTorch's allocator
  Bytes reserve;                // caching-allocator slack (reserved - allocated)
  Bytes comm;                   // framework communication buffers (§8.2)
  Bytes kv_per_token;           // inference: KV bytes of one token on this GPU, every layer
  Bytes profile_act;            // inference: activation peak of a server's profiling run (§8.5)
};

class Estimator {
 public:
  Estimator(const ModelSummary& sum, const Workload& w, const Layout& l, const OverheadConfig& o)
      : sum_(sum), m_(sum.model), w_(w), l_(l), o_(o) {}

  StageTotals Stage(bool first, bool last) const {
    StageTotals s;
    const bool train = IsTraining(w_.task);
    const double dp = static_cast<double>(l_.dp_cp());  // ZeRO shards over dp x cp
    std::vector<Trainable> trainables;
    trainables.reserve(sum_.classes.size());
    for (const auto& c : sum_.classes) {
      const double share = Share(c, first, last);
      if (share == 0) {
        continue;
      }
      const double params = c.params * share;
      const double shard = ShardOf(c, dp);
      s.params_on_gpu += params;
      double w = WeightBytes(c) * share;
      if (train && l_.zero == 3) {
        w /= shard;
      }
      if (l_.offload_params) {
        s.cpu += Bytes(w);
        w = 0;
      }
      s.mem.weights += Bytes(w);
      if (!train) {
        continue;
      }
      if (w_.task == Task::kFull || w_.task == Task::kPretrain) {
        trainables.push_back({params, c.factored * share, shard});
      } else if (c.lora_target) {
        // lora_A: r x in, lora_B: out x r (PEFT LoraLayer); Adafactor factors each of them.
        const double r = static_cast<double>(w_.lora_rank);
        const double factored = r > 1 ? c.rows_plus_cols + 2.0 * r * c.copies : c.rows_plus_cols;
        trainables.push_back({r * c.rows_plus_cols * share, factored * share, shard});
      }
    }
    if (train) {
      AddTrainingStates(trainables, s);
      s.mem.weights += ZeroLiveParams();
      s.mem.activations = TrainingActivations(first, last);
    } else {
      AddInference(first, last, s);
    }
    AddOverhead(s, train);
    return s;
  }

 private:
  // §2 Fraction of tensor group t one GPU of the given pipeline stage holds.
  double Share(const TensorClass& t, bool first, bool last) const {
    double share = 1;
    if (t.per_layer) {
      share = CeilDiv(m_.layers, l_.pp) / static_cast<double>(m_.layers);
    } else if (t.role == TensorRole::kEmbedding || t.role == TensorRole::kPositionEmbedding) {
      // Tied embeddings with pp > 1: the last stage keeps its own copy as the output layer
      // (Megatron-LM, shared embedding synchronised by an all-reduce).
      const bool head_copy = last && m_.tied_embeddings && t.role == TensorRole::kEmbedding && l_.pp > 1;
      share = (first || head_copy) ? 1 : 0;
    } else {
      share = last ? 1 : 0;  // final norm and lm_head live on the last stage
    }
    if (t.tp_split) {
      share /= static_cast<double>(l_.tp);
    }
    if (t.role == TensorRole::kExpert) {
      share /= static_cast<double>(l_.ep);
    }
    return share;
  }

  // ZeRO shards expert states over the expert-data-parallel group (dp / ep).
  double ShardOf(const TensorClass& t, double dp) const {
    return t.role == TensorRole::kExpert ? dp / static_cast<double>(l_.ep) : dp;
  }

  // §3.1 / §3.3 / §5.1 bytes of the stored (base) weights of a whole tensor class.
  double WeightBytes(const TensorClass& t) const {
    const bool quantisable = t.linear && t.role != TensorRole::kLmHead && t.role != TensorRole::kEmbedding &&
                             t.role != TensorRole::kRouter;
    if (IsTraining(w_.task)) {
      if (w_.task == Task::kQlora && quantisable) {
        return t.params * kNf4BytesPerParam;
      }
      return t.params * ElementBytes(w_.precision);
    }
    if (o_.gguf_bits > 0) {
      // §8.6 llama.cpp: the GGUF type's bits per weight are whole-file averages, every tensor.
      return t.params * o_.gguf_bits / 8.0;
    }
    if (w_.weight_dtype == WeightDtype::kFp32) {
      return kFp32Bytes * t.params;
    }
    if (!quantisable) {
      return kHalfBytes * t.params;
    }
    switch (w_.weight_dtype) {
      case WeightDtype::kFp8:
        return kFp8Bytes * t.params + kFp32Bytes * t.copies;  // one fp32 scale per tensor
      case WeightDtype::kInt8:
        return t.params + kHalfBytes * t.rows_total;  // fp16 scale per output channel
      case WeightDtype::kInt4:
        return t.params * (0.5 + kInt4GroupBytes / kInt4GroupSize);
      default:
        return kHalfBytes * t.params;
    }
  }

  // §3.1-3.2 gradients and optimizer states of the trained matrices (ZeRO paper, Rajbhandari
  // et al. 2020, section 3: 2 + 2 + 12 bytes per parameter for mixed-precision Adam).
  void AddTrainingStates(const std::vector<Trainable>& ts, StageTotals& s) const {
    const bool lora = w_.task == Task::kLora || w_.task == Task::kQlora;
    const double weight_bytes = ElementBytes(w_.precision);
    // §8.1 Megatron keeps fp32 main_grad buffers whatever the training dtype.
    const double grad_bytes = o_.framework.fp32_grads ? kFp32Bytes : weight_bytes;
    const double master = w_.precision == Precision::kMixed ? kFp32Bytes : 0.0;
    double grads = 0;
    double opt = 0;
    double adapters = 0;
    for (const auto& t : ts) {
      const double n = t.params;
      s.trainable_params += n;
      if (lora) {
        adapters += n * weight_bytes / (l_.zero == 3 ? t.shard : 1.0);
      }
      grads += n * grad_bytes / (l_.zero >= 2 ? t.shard : 1.0);
      double states = OptimizerStateBytes(w_.optimizer, w_.precision, n, t.factored);
      states += n * master;
      opt += states / (l_.zero >= 1 ? t.shard : 1.0);
    }
    s.mem.weights += Bytes(adapters);
    s.mem.gradients += Bytes(grads);
    if (l_.offload_optimizer) {
      s.cpu += Bytes(opt);
    } else {
      s.mem.optimizer += Bytes(opt);
    }
  }

  // §3.4 ZeRO-3 gathers each layer's full parameters before use and prefetches the next.
  Bytes ZeroLiveParams() const {
    if (l_.zero != 3 || l_.dp_cp() == 1) {
      return Bytes(0);
    }
    const double per_layer = sum_.per_layer_params / static_cast<double>(m_.layers);
    const double largest_other = sum_.largest_non_layer_tensor;
    const double bytes = ElementBytes(w_.precision);
    return Bytes(2.0 * std::max(per_layer, largest_other) * bytes / static_cast<double>(l_.tp));
  }

  double ActBytes() const { return ElementBytes(w_.precision); }
  // Tokens of one micro-batch a GPU holds: context parallelism splits each sequence over cp ranks.
  double LocalTokens() const {
    return static_cast<double>(w_.seq * w_.micro_batch) / static_cast<double>(l_.cp);
  }

  // §4 Activations of one transformer layer for one micro-batch on one GPU (Korthikanti et
  // al. 2022, section 4, generalised to GQA, gated MLPs, MoE and MLA). `moe` selects the MoE
  // layer form.
  double LayerActivations(bool moe) const {
    const double p = ActBytes();
    const double s = static_cast<double>(w_.seq) / static_cast<double>(l_.cp);  // context parallel: s / cp per rank
    const double b = static_cast<double>(w_.micro_batch);
    const double h = static_cast<double>(m_.hidden);
    const double t = static_cast<double>(l_.tp);
    const double sb = s * b;
    const double nh = static_cast<double>(m_.heads);
    // What a linear layer keeps of its input for backward: its fp8 cast under Transformer
    // Engine with fp8 GEMMs (fp8_saved_input), else the input itself.
    const bool fp8_input = w_.fp8 && o_.framework.fp8_saved_input;
    const double in = fp8_input ? 1.0 : p;
    // Inputs of the norms, of the QKV projection and of the MLP, and dropout masks.
    const double norms = static_cast<double>(m_.norms_per_layer);
    double replicated = (norms * p + std::min(2.0, norms) * in) * sb * h;
    if (m_.hidden_dropout > 0) {
      replicated += 2.0 * sb * h;  // two 1-byte dropout masks
    }
    if (l_.sp) {
      replicated /= t;
    }
    double hq = nh * static_cast<double>(m_.head_dim);
    double hk = static_cast<double>(m_.kv_heads * m_.head_dim);
    double hv = static_cast<double>(m_.kv_heads * m_.v_head_dim);
    double low_rank = 0;
    if (m_.mla) {
      const auto& a = *m_.mla;
      hk = hq;
      hv = nh * static_cast<double>(a.v_head_dim);
      // q_a output and its norm, kv_a output and its norm (not split by tensor parallelism).
      low_rank = p * sb *
                 (2.0 * static_cast<double>(a.q_lora_rank) + 2.0 * static_cast<double>(a.kv_lora_rank) +
                  static_cast<double>(a.qk_rope_head_dim));
    }
    const double out_in = nh * static_cast<double>(m_.v_head_dim);
    double core = 0;
    if (w_.flash_attn) {
      core = kFlashLseBytes * nh * sb;
    } else if (w_.recompute != Recompute::kSelective) {
      core = p * nh * s * s * b;  // softmax output
      if (m_.attention_dropout > 0) {
        core += (1.0 + p) * nh * s * s * b;  // dropout mask and dropout output
      }
    }
    // The attention output is the out-projection's input; with fp8_saved_input the attention
    // kernel keeps it and the projection its fp8 cast besides.
    const double attention = (p * sb * (hq + hk + hv + out_in) + (fp8_input ? sb * out_in : 0.0) + core) / t;
    // Bytes per element of the MLP's intermediate width: what the activation keeps (GELU its
    // input; a gated unit run eagerly gate, act(gate) and up; fused, only the FC1 output, gate
    // and up) plus the down projection's input.
    const double act_kept = m_.gated_mlp ? (o_.framework.fused_glu ? 2.0 : 3.0) * p : p;
    const double per_intermediate = act_kept + in;
    double mlp = 0;
    if (moe && m_.moe) {
      const auto& e = *m_.moe;
      const double k = static_cast<double>(e.experts_per_token);
      mlp = 4.0 * sb * static_cast<double>(e.experts);  // fp32 router logits
      mlp += k * sb * (in * h + per_intermediate * static_cast<double>(e.expert_intermediate)) / t;
      mlp += per_intermediate * sb * static_cast<double>(e.shared_intermediate) / t;
    } else {
      mlp = per_intermediate * sb * static_cast<double>(m_.intermediate) / t;
    }
    return replicated + low_rank + attention + mlp + LoraActivations();
  }

  // §4.4 LoRA adds each adapted module's A output (and dropout copy of its input).
  double LoraActivations() const {
    if (w_.task != Task::kLora && w_.task != Task::kQlora) {
      return 0;
    }
    const double p = ActBytes();
    const double sb = LocalTokens();
    double bytes = p * sb * static_cast<double>(w_.lora_rank) * sum_.lora_modules_per_layer;
    if (w_.lora_dropout > 0) {
      bytes += (p + 1.0) * sb * sum_.lora_input_width_per_layer;
    }
    return bytes;
  }

  // A block's input, kept by every checkpointing variant (split by sequence parallelism).
  double LayerInput() const {
    return ActBytes() * LocalTokens() * static_cast<double>(m_.hidden) / (l_.sp ? static_cast<double>(l_.tp) : 1.0);
  }

  // §4.3 op-level selective recomputation: what one layer keeps for backward, averaged over the
  // layers: its input, the outputs of the matmuls not recomputed, and the fused attention op's
  // output and log-sum-exp (saved, not rerun). Without a fused attention kernel the attention
  // core is recomputed from its kept inputs and stores nothing.
  double OpKeptActivations() const {
    const double p = ActBytes();
    const double sb = LocalTokens();
    const double t = static_cast<double>(l_.tp);
    double bytes = LayerInput() + p * sb * (sum_.op_kept_split_width / t + sum_.op_kept_whole_width);
    if (w_.flash_attn) {
      const double nh = static_cast<double>(m_.heads);
      bytes += (p * sb * nh * static_cast<double>(m_.v_head_dim) + kFlashLseBytes * nh * sb) / t;
    }
    return bytes + LoraActivations();
  }

  // Average activation bytes of one layer of this model.
  double AverageLayerActivations() const {
    if (!m_.moe || m_.moe->moe_layers == 0) {
      return LayerActivations(false);
    }
    const auto moe_layers = static_cast<double>(m_.moe->moe_layers);
    const auto layers = static_cast<double>(m_.layers);
    return (LayerActivations(true) * moe_layers + LayerActivations(false) * (layers - moe_layers)) / layers;
  }

  // §4.5 logits and loss on the last stage.
  double LogitsActivations() const {
    const double p = ActBytes();
    const double sb = LocalTokens();
    const double t = static_cast<double>(l_.tp);
    const double h = static_cast<double>(m_.hidden);
    const double v = static_cast<double>(m_.vocab);
    switch (o_.framework.loss) {
      case LossKind::kChunked: {
        // §8.3 the fp32 upcast exists one chunk at a time; the fp32 log-softmax of every chunk
        // stays for backward: saves 4 x S x V x (1 - 1/chunks) bytes against the full loss.
        const double chunks = static_cast<double>(o_.framework.loss_chunks);
        return 2.0 * p * sb * h + (p + 4.0 + 4.0 / chunks) * sb * v / t;
      }
      case LossKind::kFused:
        // §8.3 fused linear + cross-entropy: one chunk of about S x h logits in p and fp32.
        return 2.0 * p * sb * h + (p + 4.0) * sb * h;
      case LossKind::kChunkedLinear: {
        // §8.3 torchtune's LinearCrossEntropyLoss: no full logits; each chunk's fp32 log-softmax
        // stays for the one backward, the last chunk's bf16 and fp32 logits on top.
        const double chunks = static_cast<double>(o_.framework.loss_chunks);
        return 2.0 * p * sb * h + (4.0 + (p + 4.0) / chunks) * sb * v / t;
      }
      case LossKind::kChunkedBackward: {
        // §8.3 torchtitan's ChunkedLossWrapper: lm_head + loss + backward per chunk, so one
        // chunk's logits (bf16, fp32, fp32 gradient) at a time, and an fp32 gradient of the hidden states.
        const double chunks = static_cast<double>(o_.framework.loss_chunks);
        return 2.0 * p * sb * h + 4.0 * sb * h + (p + 8.0) * sb * v / (t * chunks);
      }
      case LossKind::kFp32Once:
        // §8.3 Megatron's vocab-parallel cross-entropy: one fp32 copy of the logits, the max
        // subtracted, exponentiated and normalised in place and kept for backward.
        return 2.0 * p * sb * h + (p + 4.0) * sb * v / t;
      case LossKind::kTeFused:
        // §8.3 Transformer Engine's cross-entropy: an online softmax over the logits in the
        // training dtype, the gradient written over them; no fp32 copy.
        return 2.0 * p * sb * h + p * sb * v / t;
      case LossKind::kFull:
        break;
    }
    return 2.0 * p * sb * h + (p + 4.0 * kLogitsFp32Copies) * sb * v / t;
  }

  // §4.3 / §4.6 activations held by a GPU of a pipeline stage under 1F1B.
  Bytes TrainingActivations(bool first, bool last) const {
    const double layers = CeilDiv(m_.layers, l_.pp);
    const double per_layer = AverageLayerActivations();
    double stored_per_layer = per_layer;
    double recompute_buffer = 0;
    if (w_.recompute == Recompute::kFull) {
      // Only each layer's input is kept; one layer's activations are rebuilt at a time.
      stored_per_layer = LayerInput();
      recompute_buffer = per_layer;
    } else if (w_.recompute == Recompute::kOp) {
      stored_per_layer = OpKeptActivations();
      recompute_buffer = per_layer;
    }
    double in_flight = 1;
    if (first && l_.pp > 1) {
      const int64_t dp = l_.dp();
      const double micro_batches = w_.global_batch > 0
                                       ? static_cast<double>(w_.global_batch / (w_.micro_batch * dp))
                                       : static_cast<double>(l_.pp);
      in_flight = std::min(static_cast<double>(l_.pp), micro_batches);
      if (l_.vpp > 1) {
        in_flight *= 1.0 + static_cast<double>(l_.pp - 1) / static_cast<double>(l_.pp * l_.vpp);
      }
    }
    double bytes = stored_per_layer * layers * in_flight + recompute_buffer;
    if (last) {
      bytes += LogitsActivations();
    }
    return Bytes(bytes);
  }

  // §5 inference: weights are done; KV cache and working buffers.
  void AddInference(bool first, bool last, StageTotals& s) const {
    const double layers = CeilDiv(m_.layers, l_.pp);
    const double ctx = static_cast<double>(w_.context);
    const double kv_bytes = ElementBytes(w_.kv_dtype);
    double elements = static_cast<double>(m_.KvElementsPerTokenPerLayer());
    if (!m_.mla) {
      // KV heads are split over tp ranks; with tp > kv_heads they are replicated.
      const double heads_per_gpu = CeilDiv(m_.kv_heads, l_.tp);
      elements = heads_per_gpu * static_cast<double>(m_.head_dim + m_.v_head_dim);
    }
    const double tokens_per_layer = m_.MeanAttendedTokens(ctx);
    s.kv_per_seq = Bytes(layers * tokens_per_layer * elements * kv_bytes);
    s.kv_per_token = Bytes(layers * elements * kv_bytes);
    s.mem.kv_cache = s.kv_per_seq * static_cast<double>(w_.concurrency);

    // Working buffers of one forward pass over N tokens; freed layer by layer (§5.3).
    const double p = kHalfBytes;
    const double n_profile = static_cast<double>(w_.batched_tokens);
    const double n = static_cast<double>(std::min<int64_t>(w_.batched_tokens, w_.concurrency * w_.context));
    const double h = static_cast<double>(m_.hidden);
    const double t = static_cast<double>(l_.tp);
    const double nh = static_cast<double>(m_.heads);
    const double hq = nh * static_cast<double>(m_.head_dim);
    const double hkv = m_.mla ? hq + nh * static_cast<double>(m_.v_head_dim)
                              : static_cast<double>(m_.kv_heads * (m_.head_dim + m_.v_head_dim));
    double ffn = (m_.gated_mlp ? 3.0 : 2.0) * static_cast<double>(m_.intermediate);
    if (m_.moe) {
      const auto& e = *m_.moe;
      const double moe_ffn = static_cast<double>(e.experts_per_token) *
                                 (h + 3.0 * static_cast<double>(e.expert_intermediate)) +
                             3.0 * static_cast<double>(e.shared_intermediate);
      ffn = std::max(ffn, moe_ffn);
    }
    const double per_token_working = p * (2.0 * h + (hq + hkv + nh * static_cast<double>(m_.v_head_dim) + ffn) / t);
    const double working = per_token_working * n;
    // Sampler: fp32 logits and probabilities of the last position of each sequence.
    const double per_seq_logits = last ? 2.0 * kFp32Bytes * static_cast<double>(m_.vocab) / t : 0.0;
    s.act_per_seq = Bytes(per_seq_logits);
    s.mem.activations = Bytes(working + per_seq_logits * static_cast<double>(w_.concurrency));
    // §8.5 the profiling run: one forward of batched_tokens tokens, the sampler over max_num_seqs.
    const double sampled = static_cast<double>(std::min<int64_t>(o_.framework.max_num_seqs, w_.batched_tokens));
    s.profile_act = Bytes(per_token_working * n_profile + per_seq_logits * sampled);
    (void)first;
  }

  // §6 CUDA context, NCCL communicators and allocator fragmentation.
  void AddOverhead(StageTotals& s, bool train) const {
    int groups = 0;
    groups += l_.tp > 1 ? 1 : 0;
    groups += l_.pp > 1 ? 1 : 0;
    groups += (train && l_.dp() > 1) ? 1 : 0;
    groups += l_.cp > 1 ? 1 : 0;
    groups += l_.ep > 1 ? 1 : 0;
    const Bytes dynamic = train ? s.mem.activations + s.mem.gradients : s.mem.activations;
    s.non_torch = o_.cuda_context + o_.nccl_per_group * static_cast<double>(groups);
    s.reserve = dynamic * o_.fragmentation;
    s.comm = train ? CommBuffers(s) : Bytes(0);
    s.mem.overhead = s.non_torch + s.reserve + s.comm;
    s.fixed_for_kv = s.mem.weights + s.mem.overhead + s.mem.activations -
                     s.act_per_seq * static_cast<double>(w_.concurrency) * (1.0 + o_.fragmentation);
  }

  // §8.2 communication buffers of the framework (none in the generic convention).
  Bytes CommBuffers(const StageTotals& s) const {
    const FrameworkProfile& f = o_.framework;
    if (l_.dp_cp() == 1) {
      return Bytes(0);
    }
    if (l_.zero == 0) {
      // DDP with gradient_as_bucket_view=False: the flat buckets are a second gradient copy.
      return f.ddp_bucket_copy ? s.mem.gradients : Bytes(0);
    }
    // ZeRO-1/2: one reduce (IPG) buffer, a second with overlap_comm (stage_1_and_2.py
    // setup_buckets); ZeRO-3: one, overlap_comm only adds a stream (stage3.py).
    const bool overlap = f.overlap_comm == "always";
    const double buckets = l_.zero == 3 ? f.reduce_bucket_elements + f.prefetch_bucket_elements
                                        : f.reduce_bucket_elements * (overlap ? 2.0 : 1.0) + f.allgather_bucket_elements;
    // A bucket never holds more than the parameters the GPU trains.
    return Bytes(std::min(buckets, s.trainable_params) * ElementBytes(w_.precision));
  }

  const ModelSummary& sum_;
  const ModelSpec& m_;
  const Workload& w_;
  const Layout& l_;
  const OverheadConfig& o_;
};

// §8.5 the inference server's own KV space rule; the server allocates it all at start.
void ApplyServerRule(const FrameworkProfile& f, const OverheadConfig& o, const Workload& w, double total,
                     const StageTotals& peak, MemoryEstimate& e) {
  // TGI: --cuda-memory-fraction x TGI_WIGGLE_ROOM (kv_fraction_scale).
  const double fraction = (o.kv_fraction > 0 ? o.kv_fraction : f.kv_fraction) * f.kv_fraction_scale;
  const double weights = peak.mem.weights.value;
  const double non_torch = peak.non_torch.value;
  double act = peak.mem.activations.value;
  double graphs = 0;
  double space = 0;
  switch (f.kv_rule) {
    case KvRule::kVllm: {
      // vLLM >= 0.9.1 takes its memory snapshot after the CUDA context (and NCCL) exist: they sit
      // outside fraction x total. >= 0.21 also charges the CUDA graphs it will capture.
      act = peak.profile_act.value;
      graphs = f.cuda_graph_mib * 1024.0 * 1024.0;
      const double inside = f.context_outside_fraction ? 0.0 : non_torch;
      space = fraction * total - weights - act - inside - graphs;
      e.server_max_num_seqs = f.max_num_seqs;
      e.server_batched_tokens = w.batched_tokens;
      break;
    }
    case KvRule::kSglang:
      // SGLang: free after the weights - free before them x (1 - fraction); the context and
      // NCCL are already in use before (model_runner.py profile_max_num_token).
      space = fraction * (total - non_torch) - weights;
      break;
    case KvRule::kLmdeploy:
      space = fraction * (total - weights - non_torch);
      break;
    case KvRule::kNone:
      return;
  }
  const double block = static_cast<double>(f.kv_block_tokens);
  const double per_token = peak.kv_per_token.value;
  const double tokens = space <= 0 || per_token <= 0 ? 0 : std::floor(space / per_token / block) * block;
  const double kv = tokens * per_token;
  e.kv_cache_tokens = static_cast<int64_t>(tokens);
  e.server_concurrency = tokens / static_cast<double>(w.context);
  e.max_concurrency = static_cast<int64_t>(std::floor(*e.server_concurrency));
  e.server_fits = tokens >= static_cast<double>(w.context * w.concurrency);
  e.server_kv_fraction = fraction;
  e.server_block_tokens = f.kv_block_tokens;
  e.server_cuda_graphs = Bytes(graphs);
  e.nvidia_smi = Bytes(non_torch + weights + act + kv + graphs);
  e.peak_allocated = Bytes(weights + act + kv);
  e.peak_reserved = e.peak_allocated;
  e.load_peak = e.nvidia_smi;
  e.load_allocated = Bytes(0);
  e.notes.push_back(f.Label() + ": the KV cache is allocated at start, " + std::to_string(e.kv_cache_tokens.value_or(0)) +
                    " tokens; nvidia-smi shows it whatever the load");
}

}  // namespace

bool IsLoraTarget(const TensorGroup& t, const std::vector<std::string>& targets) {
  if (!t.linear || t.role == TensorRole::kLmHead || t.role == TensorRole::kEmbedding ||
      t.role == TensorRole::kRouter || t.role == TensorRole::kPositionEmbedding) {
    return false;
  }
  if (targets.empty()) {
    return true;  // "all-linear" as in QLoRA (Dettmers et al. 2023, section 4)
  }
  return std::find(targets.begin(), targets.end(), t.module) != targets.end();
}

int64_t LoraParams(const ModelSpec& m, int64_t rank, const std::vector<std::string>& targets) {
  int64_t n = 0;
  for (const auto& t : m.tensors) {
    if (IsLoraTarget(t, targets)) {
      n += rank * (t.rows + t.cols) * t.count;
    }
  }
  return n;
}

bool RowParallel(const ModelSpec& m, const TensorGroup& t) {
  return t.tp_split && t.rows == m.hidden && t.cols != m.hidden;
}

LinearOnRank OnRank(const ModelSpec& m, const TensorGroup& t, double tp) {
  LinearOnRank l{static_cast<double>(t.rows), static_cast<double>(t.cols)};
  if (t.tp_split && tp > 1) {
    (RowParallel(m, t) ? l.k : l.n) /= tp;
  }
  return l;
}

std::vector<double> OpRecomputeShares(const ModelSpec& m) {
  std::vector<double> shares(m.tensors.size(), 0.0);
  bool recompute_next = false;  // torchtitan counts a block's matmuls from 1 and recomputes the even ones
  for (size_t i = 0; i < m.tensors.size(); ++i) {
    const TensorGroup& t = m.tensors[i];
    if (!t.linear || !t.per_layer) {
      continue;
    }
    if (t.role == TensorRole::kExpert) {
      shares[i] = 0.5;
      continue;
    }
    shares[i] = recompute_next ? 1.0 : 0.0;
    recompute_next = !recompute_next;
  }
  return shares;
}

double OptimizerStateBytes(Optimizer o, Precision p, double params, double factored) {
  switch (o) {
    case Optimizer::kAdamW:
      return params * (p == Precision::kBf16 ? 4.0 : 8.0);
    case Optimizer::kAdamW8bit:
      return params * (2.0 + 2.0 * 4.0 / kAdam8bitBlock);
    case Optimizer::kSgd:
      return params * (p == Precision::kBf16 ? 2.0 : 4.0);
    case Optimizer::kAdafactor:
      // Shazeer & Stern 2018: factored second moment, row + column fp32 accumulators for
      // matrices, full for vectors; no first moment (beta1 = None, the HF default).
      return factored * 4.0;
  }
  return 0;
}

ModelSummary Summarize(const ModelSpec& m, const std::vector<std::string>& lora_targets) {
  ModelSummary s{m, lora_targets, {}, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  s.classes.reserve(m.tensors.size());  // at most one class a tensor group: one allocation
  const std::vector<double> op_shares = OpRecomputeShares(m);
  for (size_t i = 0; i < m.tensors.size(); ++i) {
    const TensorGroup& t = m.tensors[i];
    if (!t.linear || !t.per_layer || m.layers <= 0) {
      continue;
    }
    // Outputs per token and layer: routed experts see k of every E tokens.
    double per_token = static_cast<double>(t.count) / static_cast<double>(m.layers);
    if (t.role == TensorRole::kExpert && m.moe && m.moe->experts > 0) {
      per_token *= static_cast<double>(m.moe->experts_per_token) / static_cast<double>(m.moe->experts);
    }
    const bool column_parallel = t.tp_split && !RowParallel(m, t);
    const double kept = (1.0 - op_shares[i]) * per_token * static_cast<double>(t.rows);
    (column_parallel ? s.op_kept_split_width : s.op_kept_whole_width) += kept;
    s.op_recomputed_params += op_shares[i] * per_token * static_cast<double>(m.layers) * static_cast<double>(t.rows * t.cols);
  }
  // Every active parameter but the embedding lookup; a tied head still costs a V x h matmul.
  s.matmul_params = static_cast<double>(m.ParamsActive() - m.ParamsOfRole(TensorRole::kEmbedding) -
                                        m.ParamsOfRole(TensorRole::kPositionEmbedding));
  if (m.tied_embeddings) {
    s.matmul_params += static_cast<double>(m.vocab * m.hidden);
  }
  for (const auto& t : m.tensors) {
    const bool target = IsLoraTarget(t, lora_targets);
    auto it = std::find_if(s.classes.begin(), s.classes.end(), [&](const TensorClass& c) {
      return c.role == t.role && c.per_layer == t.per_layer && c.tp_split == t.tp_split && c.linear == t.linear &&
             c.lora_target == target;
    });
    if (it == s.classes.end()) {
      s.classes.push_back({t.role, t.per_layer, t.tp_split, t.linear, target, 0, 0, 0, 0, 0});
      it = s.classes.end() - 1;
    }
    const auto rows = static_cast<double>(t.rows);
    const auto cols = static_cast<double>(t.cols);
    const auto count = static_cast<double>(t.count);
    it->params += static_cast<double>(t.Params());
    it->copies += count;
    it->rows_total += rows * count;
    it->rows_plus_cols += (rows + cols) * count;
    it->factored += ((t.rows > 1 && t.cols > 1) ? rows + cols : rows * cols) * count;
    if (t.per_layer) {
      s.per_layer_params += static_cast<double>(t.Params());
    } else {
      s.largest_non_layer_tensor = std::max(s.largest_non_layer_tensor, static_cast<double>(t.Params()));
    }
    if (target) {
      s.lora_params_per_rank += (t.rows + t.cols) * t.count;
      if (t.per_layer) {
        double per_layer_copies = count / static_cast<double>(m.layers);
        if (t.role == TensorRole::kExpert && m.moe) {
          // each token visits k of the E experts
          per_layer_copies *= static_cast<double>(m.moe->experts_per_token) / static_cast<double>(m.moe->experts);
        }
        s.lora_modules_per_layer += per_layer_copies;
        s.lora_input_width_per_layer += per_layer_copies * cols;
      }
    }
  }
  return s;
}

MemoryEstimate EstimateMemory(const ModelSpec& m, const Workload& w, const Layout& l, const OverheadConfig& o,
                              std::optional<int64_t> gpu_memory) {
  return EstimateMemory(Summarize(m, w.lora_targets), w, l, o, gpu_memory);
}

MemoryEstimate EstimateMemory(const ModelSummary& sum, const Workload& w, const Layout& l, const OverheadConfig& o,
                              std::optional<int64_t> gpu_memory) {
  const ModelSpec& m = sum.model;
  ValidateLayout(m, w, l);
  const bool lora = w.task == Task::kLora || w.task == Task::kQlora;
  if (lora && !w.lora_targets.empty() && sum.lora_params_per_rank == 0) {
    std::string modules;
    for (const auto& t : m.tensors) {
      if (IsLoraTarget(t, {}) && modules.find(t.module) == std::string::npos) {
        modules += (modules.empty() ? "" : ", ") + t.module;
      }
    }
    throw InputError::Option("lora_targets", "none of the LoRA target modules exist in " + m.name + "; its linear modules are " + modules);
  }
  const Estimator est(sum, w, l, o);
  MemoryEstimate e;
  e.params_total = m.ParamsTotal();
  e.params_active = m.ParamsActive();
  e.params_trainable = lora ? sum.lora_params_per_rank * w.lora_rank : IsTraining(w.task) ? e.params_total : 0;
  StageTotals peak;
  if (l.pp == 1) {
    peak = est.Stage(true, true);
    e.peak_stage = "only";
  } else {
    const StageTotals first = est.Stage(true, false);
    const StageTotals last = est.Stage(false, true);
    const bool first_wins = last.mem.Total() <= first.mem.Total();
    peak = first_wins ? first : last;
    e.peak_stage = first_wins ? "first" : "last";
  }
  e.per_gpu = peak.mem;
  e.params_on_gpu = static_cast<int64_t>(std::llround(peak.params_on_gpu));
  e.cpu_offload = peak.cpu;
  // §8.4 the three numbers.
  e.comm_buffers = peak.comm;
  e.nvidia_smi = e.per_gpu.Total();
  e.peak_allocated = e.nvidia_smi - peak.non_torch - peak.reserve;
  const FrameworkProfile& f = o.framework;
  double load = 0;
  if (f.load_peak == LoadPeak::kBf16BeforeQuant && w.task == Task::kQlora) {
    load = kHalfBytes * peak.params_on_gpu;  // litgpt@58c5b18: the measured QLoRA peak (about the model in bf16), a stand-in: its code quantises per layer
  } else if (f.load_peak == LoadPeak::kUnshardedWeights && IsTraining(w.task)) {
    load = ElementBytes(w.precision) * peak.params_on_gpu;  // the whole stage before sharding
  }
  e.load_peak = Bytes(std::max(e.nvidia_smi.value, peak.non_torch.value + load));
  e.peak_reserved = e.peak_allocated + peak.reserve;
  e.load_allocated = Bytes(load);
  if (!IsTraining(w.task)) {
    e.kv_per_sequence = peak.kv_per_seq;
    if (gpu_memory) {
      const double free = static_cast<double>(*gpu_memory) - peak.fixed_for_kv.value;
      const double per_seq = peak.kv_per_seq.value + peak.act_per_seq.value * (1.0 + o.fragmentation);
      e.max_concurrency = free <= 0 ? 0 : static_cast<int64_t>(std::floor(free / per_seq));
      if (f.kv_rule != KvRule::kNone) {
        ApplyServerRule(f, o, w, static_cast<double>(*gpu_memory), peak, e);
      }
    }
  }
  e.framework = f.Id();
  if (!f.IsGeneric()) {
    e.notes.push_back("framework " + f.Label() + ": " + f.description + " (docs/memory-model.md §8)");
  }
  if (o.gguf_bits > 0 && !IsTraining(w.task)) {
    e.notes.push_back("GGUF weights at " + std::to_string(o.gguf_bits).substr(0, 6) +
                      " bits per weight; --weight-dtype does not apply");
  }
  if (w.task == Task::kQlora && w.paged_optimizer) {
    e.notes.emplace_back("paged optimizer: states can page to CPU RAM under memory pressure");
  }
  if (m.moe && IsTraining(w.task)) {
    e.notes.emplace_back("MoE activations assume balanced routing (each expert gets its top-k share)");
  }
  return e;
}

}  // namespace gpuplan
