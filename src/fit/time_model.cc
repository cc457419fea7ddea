// Time model. Formulas, constants and their sources: docs/time-model.md (§ in comments).
#include "fit/time_model.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "core/names.h"

namespace gpuplan {
namespace {

// §4 Achievable fraction of a link's peak for large collectives (nccl-tests bus bandwidth on
// NVLink and InfiniBand reaches ~80% of the line rate).
constexpr double kLinkEfficiency = 0.8;
// §5 Achievable fraction of HBM bandwidth for streaming weights and KV cache in decode.
constexpr double kHbmEfficiency = 0.85;
// §4 Per-hop latency of a collective step inside a node and across nodes.
constexpr double kIntraNodeHopSeconds = 5e-6;
constexpr double kInterNodeHopSeconds = 15e-6;
// §4 PCIe payload bandwidth per direction for x16, GB/s, by generation (PCI-SIG: 8, 16, 32,
// 64 GT/s with 128b/130b encoding; gen 6 FLIT mode).
double PcieX16GBs(int gen) {
  switch (gen) {
    case 3: return 15.75;
    case 4: return 31.5;
    case 5: return 63.0;
    case 6: return 126.0;
    default: return gen > 6 ? 126.0 : 8.0;
  }
}

struct Link {
  double bytes_per_second = 0;
  double hop_seconds = 0;
};

Link IntraNodeLink(const Gpu& g) {
  if (g.interconnect.bandwidth_gb_s > 0 && g.interconnect.kind != "none") {
    // Catalog figures are total bidirectional GB/s per GPU; one direction is half.
    return {g.interconnect.bandwidth_gb_s / 2.0 * 1e9 * kLinkEfficiency, kIntraNodeHopSeconds};
  }
  const double lanes = g.pcie_lanes > 0 ? g.pcie_lanes : 16;
  return {PcieX16GBs(g.pcie_gen) * lanes / 16.0 * 1e9 * kLinkEfficiency, kIntraNodeHopSeconds};
}

Link NodeLink(const Network& n) { return {n.node_gbps / 8.0 * 1e9 * kLinkEfficiency, kInterNodeHopSeconds}; }

// §4 Ring all-reduce of `bytes` over n ranks (Patarasuk & Yuan 2009): 2(n-1)/n x bytes on the
// slowest link, 2(n-1) latency steps.
double AllReduce(double n, double bytes, const Link& link) {
  if (n <= 1) {
    return 0;
  }
  return 2.0 * (n - 1) / n * bytes / link.bytes_per_second + 2.0 * (n - 1) * link.hop_seconds;
}

// §1 Attention score and value FLOPs of one forward pass per token at sequence length s
// (PaLM, Chowdhery et al. 2022, appendix B: 12 L H Q T for training = 3 x this).
double AttentionForwardFlopsPerToken(const ModelSpec& m, double s) {
  double s_eff = s;
  if (m.sliding_window > 0 && m.sliding_window_layers > 0) {
    const double frac = static_cast<double>(m.sliding_window_layers) / static_cast<double>(m.layers);
    s_eff = frac * std::min(s, static_cast<double>(m.sliding_window)) + (1 - frac) * s;
  }
  const double width = static_cast<double>(m.heads) * static_cast<double>(m.head_dim + m.v_head_dim);
  return 2.0 * static_cast<double>(m.layers) * s_eff * width;
}

double ActivationBytes(Precision p) { return p == Precision::kFp32 ? 4.0 : 2.0; }

}  // namespace

Network ParseNetwork(const std::string& s) {
  const std::string n = NormalizeName(s);
  struct Preset {
    const char* name;
    double gbps;
  };
  static const Preset presets[] = {{"ib-400g", 8 * 400.0}, {"ib-200g", 8 * 200.0}, {"ib-100g", 8 * 100.0},
                                   {"roce-400g", 8 * 400.0}, {"roce-100g", 2 * 100.0}, {"100gbe", 100.0},
                                   {"25gbe", 25.0},       {"10gbe", 10.0},         {"1gbe", 1.0}};
  for (const auto& p : presets) {
    if (NormalizeName(p.name) == n) {
      return {p.name, p.gbps};
    }
  }
  std::string digits = n;
  for (const char* suffix : {"gbps", "gbs", "gb", "g"}) {
    const std::string suf = suffix;
    if (digits.size() > suf.size() && digits.compare(digits.size() - suf.size(), suf.size(), suf) == 0) {
      digits = digits.substr(0, digits.size() - suf.size());
      break;
    }
  }
  if (!digits.empty() && std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
      digits.size() < 8) {
    const double v = std::stod(digits);
    if (v > 0) {
      return {s, v};
    }
  }
  std::vector<std::string> names;
  for (const auto& p : presets) {
    names.emplace_back(p.name);
  }
  throw InputError("unknown network '" + s + "'; use " + JoinOr(names) + " or Gb/s per node (e.g. 40)", "", 0,
                   "--network");
}

double DefaultEfficiency(const Gpu& gpu) {
  const std::string a = NormalizeName(gpu.architecture);
  if (a == "ampere") return 0.55;
  if (a == "hopper") return 0.50;
  if (a == "blackwell") return 0.40;
  if (a == "ada") return 0.45;
  if (a == "volta") return 0.40;
  if (a == "turing") return 0.35;
  return 0.35;
}

double PeakFlops(const Gpu& gpu, Precision p) {
  std::optional<double> tf;
  if (p == Precision::kFp32) {
    tf = gpu.tflops.fp32;
  } else {
    tf = gpu.tflops.bf16 ? gpu.tflops.bf16 : gpu.tflops.fp16;
  }
  if (!tf || *tf <= 0) {
    throw InputError("the catalog has no " + std::string(p == Precision::kFp32 ? "fp32" : "bf16/fp16") +
                         " TFLOPS figure for " + gpu.name,
                     "", 0, "--gpu");
  }
  return *tf * 1e12;
}

TrainingTime EstimateTrainingTime(const ModelSpec& m, const Workload& w, const Layout& l, const Gpu& gpu,
                                  const TimeConfig& c, double tokens) {
  const ModelSummary sum = Summarize(m, w.lora_targets);
  const MemoryEstimate mem = EstimateMemory(sum, w, l, {}, std::nullopt);
  return EstimateTrainingTime(sum, mem, w, l, gpu, c, tokens);
}

TrainingTime EstimateTrainingTime(const ModelSummary& sum, const MemoryEstimate& mem, const Workload& w,
                                  const Layout& l, const Gpu& gpu, const TimeConfig& c, double tokens) {
  const ModelSpec& m = sum.model;
  TrainingTime t;
  const double gpus = static_cast<double>(l.gpus);
  const double dp = static_cast<double>(l.dp());
  const double s = static_cast<double>(w.seq);
  const double p = ActivationBytes(w.precision);
  const double h = static_cast<double>(m.hidden);
  const double layers_per_stage = std::ceil(static_cast<double>(m.layers) / static_cast<double>(l.pp));
  t.efficiency = c.mfu.value_or(DefaultEfficiency(gpu));
  if (t.efficiency <= 0 || t.efficiency > 1) {
    throw InputError("must be in (0, 1]", "", 0, "--mfu");
  }

  // §2 batch: the global batch defaults to one micro-batch per pipeline stage per dp rank.
  const int64_t gb = w.global_batch > 0 ? w.global_batch : w.micro_batch * l.dp() * std::max<int64_t>(l.pp, 1);
  t.global_batch = gb;
  t.micro_batches = gb / (w.micro_batch * l.dp());
  const double m_micro = static_cast<double>(t.micro_batches);

  // §1 FLOPs per token.
  const double n = sum.matmul_params;
  const double attn = AttentionForwardFlopsPerToken(m, s);
  const bool lora = w.task == Task::kLora || w.task == Task::kQlora;
  const double n_lora = lora ? static_cast<double>(sum.lora_params_per_rank * w.lora_rank) : 0;
  double model = 0;
  if (lora) {
    // Frozen weights: forward 2N and input gradients 2N, no weight gradients (Hu et al. 2021).
    model = 4.0 * n + 6.0 * n_lora + 3.0 * attn;
  } else {
    model = 6.0 * n + 3.0 * attn;
  }
  double hw = model;
  if (w.recompute == Recompute::kFull) {
    hw += 2.0 * n + attn + (lora ? 2.0 * n_lora : 0);
  } else if (w.recompute == Recompute::kSelective || w.flash_attn) {
    hw += attn;  // the attention core is recomputed in backward (selective, or flash attention's backward)
  }
  t.flops_per_token = model;
  t.hw_flops_per_token = hw;

  // §3 compute.
  const double peak = PeakFlops(gpu, w.precision);
  const double step_tokens = static_cast<double>(gb) * s;
  const double matmul_seconds = hw * step_tokens / gpus / (peak * t.efficiency);
  const double hbm = gpu.memory_bandwidth_gb_s * 1e9 * kHbmEfficiency;
  // The optimizer step streams gradients and states once in and out.
  const double optimizer_seconds = 2.0 * (mem.per_gpu.gradients + mem.per_gpu.optimizer).value / hbm;
  double dequant_seconds = 0;
  if (w.task == Task::kQlora) {
    // Every NF4 weight is read and written as bf16 in each forward and backward pass.
    const double passes = 2.0 + (w.recompute == Recompute::kFull ? 1.0 : 0.0);
    dequant_seconds = m_micro * passes * static_cast<double>(mem.params_on_gpu) * (0.516 + 2.0) / hbm;
  }
  t.compute_seconds = matmul_seconds + optimizer_seconds + dequant_seconds;
  t.matmul_seconds = matmul_seconds;
  t.optimizer_seconds = optimizer_seconds;

  // §4 communication. Rank order as Megatron-LM: tp innermost, then dp, then pp.
  const double per_node = static_cast<double>(c.gpus_per_node);
  const Link intra = IntraNodeLink(gpu);
  const Link inter = NodeLink(c.network);
  const Link tp_link = static_cast<double>(l.tp) <= per_node ? intra : inter;
  const double tp_bytes = static_cast<double>(w.micro_batch) * s * h * p;
  const double tp_collectives = 4.0 + (w.recompute == Recompute::kFull ? 2.0 : 0.0);
  t.tp_seconds = m_micro * layers_per_stage * tp_collectives * AllReduce(static_cast<double>(l.tp), tp_bytes, tp_link);

  // Pipeline: activations forward and gradients back across each stage boundary.
  if (l.pp > 1) {
    const bool stages_cross_nodes = static_cast<double>(l.tp * l.dp()) >= per_node;
    const Link& pl = stages_cross_nodes ? inter : intra;
    const double bytes = tp_bytes / (l.sp ? static_cast<double>(l.tp) : 1.0);
    t.pp_seconds = m_micro * 2.0 * (bytes / pl.bytes_per_second + pl.hop_seconds);
  }
  // MoE all-to-all: dispatch and combine, forward and backward, per MoE layer.
  if (m.moe && l.ep > 1) {
    const double moe_layers_per_stage =
        std::ceil(static_cast<double>(m.moe->moe_layers) / static_cast<double>(l.pp));
    const bool ep_in_node = static_cast<double>(l.tp * l.ep) <= per_node;
    const Link& el = ep_in_node ? intra : inter;
    const double ep = static_cast<double>(l.ep);
    double link_bw = el.bytes_per_second;
    if (!ep_in_node) {
      link_bw /= per_node;  // every GPU of the node sends through the shared NICs
    }
    const double bytes = static_cast<double>(w.micro_batch) * s * static_cast<double>(m.moe->experts_per_token) * h * p *
                         (ep - 1) / ep / static_cast<double>(l.tp);
    const double passes = 4.0 + (w.recompute == Recompute::kFull ? 2.0 : 0.0);
    t.moe_seconds = m_micro * moe_layers_per_stage * passes * (bytes / link_bw + (ep - 1) * el.hop_seconds);
  }
  // Data parallel: gradient all-reduce (ZeRO-1/2: reduce-scatter + all-gather, same volume;
  // ZeRO-3 adds a second parameter all-gather: 1.5x), hierarchical over NVLink then the network.
  if (l.dp() > 1) {
    const double trainable_on_gpu =
        lora ? n_lora / static_cast<double>(l.tp * l.pp)
             : static_cast<double>(mem.params_on_gpu);
    const double grad_bytes = trainable_on_gpu * (w.precision == Precision::kFp32 ? 4.0 : 2.0);
    const double dp_local = std::min(dp, std::max(1.0, per_node / static_cast<double>(l.tp)));
    const double dp_nodes = std::ceil(dp / dp_local);
    double dp_time = AllReduce(dp_local, grad_bytes, intra);
    if (dp_nodes > 1) {
      // Each node's NICs carry the gradients of all its GPUs' model partitions.
      const double node_bytes = grad_bytes * std::min(per_node, static_cast<double>(l.tp) * dp_local);
      dp_time += 2.0 * (dp_nodes - 1) / dp_nodes * node_bytes / inter.bytes_per_second +
                 2.0 * (dp_nodes - 1) * inter.hop_seconds;
    }
    if (l.zero == 3) {
      dp_time *= 1.5;
    }
    t.dp_seconds = dp_time;
    const double backward = matmul_seconds * 2.0 / 3.0;
    t.dp_exposed_seconds = std::max(0.0, dp_time - c.dp_overlap * backward);
  }
  t.communication_seconds = t.tp_seconds + t.pp_seconds + t.moe_seconds + t.dp_exposed_seconds;

  // §2 pipeline bubble (1F1B: (pp-1) micro-batch slots; interleaved: (pp-1)/vpp).
  if (l.pp > 1) {
    const double per_micro = (matmul_seconds + t.tp_seconds + t.moe_seconds) / m_micro;
    t.bubble_seconds = per_micro * static_cast<double>(l.pp - 1) / static_cast<double>(l.vpp);
  }
  t.step_seconds = t.compute_seconds + t.communication_seconds + t.bubble_seconds;
  t.tokens_per_second = step_tokens / t.step_seconds;
  t.mfu = model * t.tokens_per_second / (gpus * peak);
  if (t.communication_seconds > t.compute_seconds) {
    t.bottleneck = "communication";
  } else if (t.bubble_seconds > t.compute_seconds) {
    t.bottleneck = "pipeline bubble";
  } else {
    t.bottleneck = "compute";
  }
  if (tokens > 0) {
    t.total_hours = tokens / t.tokens_per_second / 3600.0;
    t.gpu_hours = *t.total_hours * gpus;
  }
  return t;
}

InferenceTime EstimateInferenceTime(const ModelSpec& m, const Workload& w, const Layout& l, const Gpu& gpu,
                                    const TimeConfig& c, int64_t prompt_tokens, int64_t output_tokens) {
  ValidateLayout(m, w, l);
  if (prompt_tokens <= 0 || output_tokens <= 0) {
    throw InputError("prompt and output tokens must be positive", "", 0,
                     prompt_tokens <= 0 ? "--prompt-tokens" : "--output-tokens");
  }
  InferenceTime r;
  r.efficiency = c.mfu.value_or(DefaultEfficiency(gpu));
  const double peak = PeakFlops(gpu, Precision::kBf16);
  const double tp = static_cast<double>(l.tp);
  const double pp = static_cast<double>(l.pp);
  const ModelSummary sum = Summarize(m, {});
  const double n = sum.matmul_params;
  const double h = static_cast<double>(m.hidden);
  const double layers = static_cast<double>(m.layers);
  const Link link = tp <= static_cast<double>(c.gpus_per_node) ? IntraNodeLink(gpu) : NodeLink(c.network);
  const double P = static_cast<double>(prompt_tokens);
  const double O = static_cast<double>(output_tokens);
  // §5 prefill: compute-bound, causal attention over the prompt.
  const double prefill_flops = 2.0 * n * P + AttentionForwardFlopsPerToken(m, P) * P / 2.0;
  r.prefill_seconds = prefill_flops / (tp * peak * r.efficiency) + layers * 2.0 * AllReduce(tp, P * h * 2.0, link);
  // §5 decode: each step reads the GPU's weights and the KV cache of every sequence in flight.
  Workload wd = w;
  wd.context = prompt_tokens + output_tokens / 2;  // average context during decoding
  const MemoryEstimate mem = EstimateMemory(m, wd, l);
  const double c_seq = static_cast<double>(w.concurrency);
  const double hbm = gpu.memory_bandwidth_gb_s * 1e9 * kHbmEfficiency;
  // Pipeline stages run one after another for a given token.
  const double bytes = (mem.per_gpu.weights + mem.per_gpu.kv_cache).value * pp;
  const double mem_seconds = bytes / hbm;
  const double decode_flops =
      c_seq * (2.0 * n + AttentionForwardFlopsPerToken(m, static_cast<double>(wd.context)));
  const double compute_seconds = decode_flops / (tp * peak * r.efficiency);
  r.memory_bound = mem_seconds >= compute_seconds;
  r.decode_step_seconds =
      std::max(mem_seconds, compute_seconds) + layers * 2.0 * AllReduce(tp, c_seq * h * 2.0, link);
  r.decode_tokens_per_second = c_seq / r.decode_step_seconds;
  r.decode_tokens_per_second_per_gpu = r.decode_tokens_per_second / (tp * pp);
  r.requests_per_second = c_seq / (O * r.decode_step_seconds + r.prefill_seconds);
  return r;
}

}  // namespace gpuplan
