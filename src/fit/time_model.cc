// Time model. Formulas, constants and their sources: docs/time-model.md (§ in comments).
#include "fit/time_model.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "core/error.h"
#include "core/names.h"

namespace gpuplan {
namespace {

// §4 Achievable fraction of a link's peak for large collectives (nccl-tests bus bandwidth on
// NVLink and InfiniBand reaches ~80% of the line rate).
constexpr double kLinkEfficiency = 0.8;
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

// §4 GPUs a PCIe NVLink bridge joins (A100/H100 PCIe, H100/H200 NVL, A30, RTX 3090): pairs.
constexpr double kBridgeGroup = 2;

// The link a collective inside one node runs on. `span` is how many consecutive GPUs the group
// covers (tp ranks are adjacent; a data-parallel group of a tp=2 layout spans 2 x dp GPUs): a
// bridge joins only pairs, so a wider group falls back to PCIe.
Link IntraNodeLink(const Gpu& g, double span) {
  const std::string& kind = g.interconnect.kind;
  const bool bridge = kind == "nvlink_bridge";
  if (g.interconnect.bandwidth_gb_s > 0 && kind != "none" && (!bridge || span <= kBridgeGroup)) {
    // Catalog figures are total bidirectional GB/s per GPU; one direction is half.
    return {g.interconnect.bandwidth_gb_s / 2.0 * 1e9 * kLinkEfficiency, kIntraNodeHopSeconds};
  }
  const double lanes = g.pcie_lanes > 0 ? g.pcie_lanes : 16;
  return {PcieX16GBs(g.pcie_gen) * lanes / 16.0 * 1e9 * kLinkEfficiency, kIntraNodeHopSeconds};
}

// §4 InfiniBand between nodes: NCCL's all-reduce bus bandwidth across DGX A100 nodes (8 x 200 Gb/s
// HDR a node) is 192 GB/s of the 200 line rate (NVIDIA/nccl#1576), 96%; Ethernet keeps the 80%.
constexpr double kInfinibandEfficiency = 0.96;

Link NodeLink(const Network& n) { return {n.node_gbps / 8.0 * 1e9 * n.efficiency, kInterNodeHopSeconds}; }

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
  const double s_eff = m.MeanAttendedTokens(s);
  const double width = static_cast<double>(m.heads) * static_cast<double>(m.head_dim + m.v_head_dim);
  return 2.0 * static_cast<double>(m.layers) * s_eff * width;
}



}  // namespace

Network ParseNetwork(const std::string& s) {
  const std::string n = NormalizeName(s);
  struct Preset {
    const char* name;
    double gbps;
    double efficiency;
  };
  constexpr double ib = kInfinibandEfficiency;
  constexpr double eth = kLinkEfficiency;
  static const Preset presets[] = {
      {"ib-400g", 8 * 400.0, ib},    {"ib-200g", 8 * 200.0, ib},    {"ib-100g", 8 * 100.0, ib},
      {"ib-100g-x4", 4 * 100.0, ib}, {"roce-400g", 8 * 400.0, eth}, {"roce-200g", 8 * 200.0, eth},
      {"roce-100g", 2 * 100.0, eth}, {"100gbe", 100.0, eth},        {"25gbe", 25.0, eth},
      {"10gbe", 10.0, eth},          {"1gbe", 1.0, eth}};
  for (const auto& p : presets) {
    if (NormalizeName(p.name) == n) {
      return {p.name, p.gbps, "--network", p.efficiency};
    }
  }
  // A bare rate is read from the text as given (case and spaces aside), not from the normalised
  // name, which drops every other character: "-5", "[1]" and "1.5" are not 5, 1 and 15 Gb/s.
  std::string digits;
  for (const char c : s) {
    if (c != ' ') {
      digits.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    }
  }
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
      return {s, v, "--network", kLinkEfficiency};  // a bare rate: Ethernet
    }
  }
  std::vector<std::string> names;
  for (const auto& p : presets) {
    names.emplace_back(p.name);
  }
  throw InputError::Option("network", "unknown network '" + s + "'; use " + JoinOr(names) + " or Gb/s per node (e.g. 40)");
}

ServerClass ServerClassOf(const Gpu& gpu) {
  const std::string ff = NormalizeName(gpu.form_factor);
  const std::string kind = gpu.interconnect.kind;
  if (ff == "sxm" || ff == "oam" || kind == "hccs" ||
      (kind.rfind("nvlink", 0) == 0 && kind != "nvlink_bridge")) {
    return ServerClass::kNvlinkBaseboard;
  }
  auto geforce = [](const std::string& n) { return NormalizeName(n).find("geforce") != std::string::npos; };
  if (geforce(gpu.name) || std::any_of(gpu.aliases.begin(), gpu.aliases.end(), geforce)) {
    return ServerClass::kConsumer;
  }
  return ServerClass::kPcieDatacentre;
}

const char* ToString(ServerClass c) {
  switch (c) {
    case ServerClass::kNvlinkBaseboard: return "NVLink baseboard server";
    case ServerClass::kPcieDatacentre: return "PCIe data-centre server";
    case ServerClass::kConsumer: return "PCIe server of consumer cards";
  }
  return "?";
}

namespace {

// §4 The node network by server class (docs/time-model.md §4 gives the source of each row).
Network ComputeDefaultNetwork(const Gpu& gpu) {
  const ServerClass sc = ServerClassOf(gpu);
  const std::string arch = NormalizeName(gpu.architecture);
  auto make = [&](const char* preset) {
    Network n = ParseNetwork(preset);
    n.basis = std::string("default for ") + gpu.name + " (" + ToString(sc) + ")";
    return n;
  };
  switch (sc) {
    case ServerClass::kNvlinkBaseboard:
      if (arch == "volta") return make("ib-100g-x4");   // DGX-1: 4 x 100 Gb/s EDR
      if (arch == "ampere") return make("ib-200g");     // DGX A100: 8 x 200 Gb/s HDR
      if (arch == "davinci") return make("roce-200g");  // Atlas 800T A2: 8 x 200 GE RoCE
      return make("ib-400g");                           // DGX H100/H200/B200: 8 x 400 Gb/s NDR
    case ServerClass::kPcieDatacentre:
      // HBM compute cards go into training servers with 100 GbE; GDDR inference and graphics
      // cards into general servers with 25 GbE.
      return make(gpu.memory_type.rfind("HBM", 0) == 0 ? "100gbe" : "25gbe");
    case ServerClass::kConsumer:
      return make("10gbe");
  }
  return make("ib-400g");
}

// The card's default network, remembered per thread for the last card asked (a search and the
// validation ask for one card's millions of times; normalising its names was a sixth of a
// step-time estimate). Keyed by the card's address and the fields the rule reads, so a changed
// or another card at the same address is worked out again.
const Network& DefaultNetworkOf(const Gpu& gpu) {
  struct Memo {
    const Gpu* gpu = nullptr;
    std::string name, architecture, form_factor, memory_type, kind;
    std::size_t aliases = 0;
    Network network;
  };
  thread_local Memo memo;
  if (memo.gpu != &gpu || memo.name != gpu.name || memo.architecture != gpu.architecture ||
      memo.form_factor != gpu.form_factor || memo.memory_type != gpu.memory_type ||
      memo.kind != gpu.interconnect.kind || memo.aliases != gpu.aliases.size()) {
    memo = Memo{&gpu,           gpu.name, gpu.architecture, gpu.form_factor, gpu.memory_type, gpu.interconnect.kind,
                gpu.aliases.size(), ComputeDefaultNetwork(gpu)};
  }
  return memo.network;
}

const Network& NetworkRef(const TimeConfig& c, const Gpu& gpu) { return c.network ? *c.network : DefaultNetworkOf(gpu); }

}  // namespace

Network DefaultNetwork(const Gpu& gpu) { return DefaultNetworkOf(gpu); }

Network NetworkFor(const TimeConfig& c, const Gpu& gpu) { return NetworkRef(c, gpu); }

bool HasPeakFlops(const Gpu& gpu, Precision p) {
  const std::optional<double>& tf =
      p == Precision::kFp32 ? gpu.tflops.fp32 : (gpu.tflops.bf16 ? gpu.tflops.bf16 : gpu.tflops.fp16);
  return tf && *tf > 0;
}

double PeakFlops(const Gpu& gpu, Precision p) {
  std::optional<double> tf;
  if (p == Precision::kFp32) {
    tf = gpu.tflops.fp32;
  } else {
    tf = gpu.tflops.bf16 ? gpu.tflops.bf16 : gpu.tflops.fp16;
  }
  if (!tf || *tf <= 0) {
    throw InputError::Option("gpu", "the catalog has no " + std::string(p == Precision::kFp32 ? "fp32" : "bf16/fp16") +
                         " TFLOPS figure for " + gpu.name);
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
  // Gradients are reduced (and ZeRO shards) over the data x context parallel ranks.
  const double dp = static_cast<double>(l.dp_cp());
  const double cp = static_cast<double>(l.cp);
  const double s = static_cast<double>(w.seq);
  const double p = ElementBytes(w.precision);
  const double h = static_cast<double>(m.hidden);
  const double layers_per_stage = std::ceil(static_cast<double>(m.layers) / static_cast<double>(l.pp));
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
  } else if (w.recompute == Recompute::kOp) {
    hw += 2.0 * sum.op_recomputed_params + attn;  // every second matmul (§4.3); attention in flash backward or rerun
  } else if (w.recompute == Recompute::kSelective || w.flash_attn) {
    hw += attn;  // the attention core is recomputed in backward (selective, or flash attention's backward)
  }
  t.flops_per_token = model;
  t.hw_flops_per_token = hw;

  // §3 compute: the forward, backward and recompute kernels of one micro-batch on one GPU (its
  // stage's layers, and the output head on the last stage), or with --mfu the flat fraction.
  const double peak = PeakFlops(gpu, w.precision);
  const double step_tokens = static_cast<double>(gb) * s;
  double matmul_seconds = 0;
  double backward_seconds = 0;
  double forward_seconds = 0;     // the forward passes (all micro-batches), for the parameter gather's window
  double attention_forward = 0;   // one layer's attention core for one micro-batch, step time (§4 CP overlap)
  double attention_backward = 0;
  if (c.mfu) {
    if (*c.mfu <= 0 || *c.mfu > 1) {
      throw InputError::Option("mfu", "must be in (0, 1]");
    }
    matmul_seconds = hw * step_tokens / gpus / (peak * *c.mfu);
    backward_seconds = matmul_seconds * 2.0 / 3.0;
    forward_seconds = matmul_seconds / 3.0;
    t.gemm_seconds = matmul_seconds;
    t.gemm_fraction = *c.mfu;
    t.gemm_basis = "--mfu";
  } else {
    const KernelRates& rates = RatesForCached(gpu, w.precision, w.fp8, c.attention, c.gemm_tables.get());
    OpShape shape;
    shape.tokens = static_cast<double>(w.micro_batch) * s / cp;  // a context-parallel rank's share
    shape.seq = s;
    shape.cp = cp;
    shape.tp = static_cast<double>(l.tp);
    shape.sp = l.sp;
    shape.flash = w.flash_attn;
    shape.lora = lora;
    shape.lora_rank = static_cast<double>(w.lora_rank);
    shape.lora_targets = w.lora_targets;
    shape.ep = static_cast<double>(l.ep);
    shape.recompute = w.recompute;
    shape.eager = c.eager_elementwise;
    shape.loss = c.loss;
    shape.head_bf16 = w.fp8 && !c.fp8_head;
    const LayerPasses layer = LayerOpTimes(m, shape, rates);
    const LayerPasses head = HeadOpTimes(m, shape, rates);
    OpTimes micro;
    micro += layer.forward;
    micro += layer.backward;
    micro += layer.recompute;
    micro = micro.Scaled(layers_per_stage);
    micro += head.forward;
    micro += head.backward;
    micro += head.recompute;
    // §3.5 a whole step keeps kTrainingStepEfficiency of the kernels' rates.
    const double k = m_micro / kTrainingStepEfficiency;
    attention_forward = layer.forward.attention / kTrainingStepEfficiency;
    attention_backward = layer.backward.attention / kTrainingStepEfficiency;
    matmul_seconds = k * micro.Total();
    backward_seconds = k * (layer.backward.Total() * layers_per_stage + head.backward.Total());
    forward_seconds = k * (layer.forward.Total() * layers_per_stage + head.forward.Total());
    t.gemm_seconds = k * micro.gemm;
    t.attention_seconds = k * micro.attention;
    t.elementwise_seconds = k * micro.elementwise;
    t.gemm_fraction = rates.gemm_fraction;
    t.gemm_basis = rates.gemm_basis;
    t.gemm_by_shape = rates.table != nullptr;
    t.attention_kernel = ToString(c.attention);
    t.attention_basis = rates.attention_basis;
    t.attention_by_length = rates.attention_table != nullptr;
    t.elementwise_kernels = c.eager_elementwise ? "eager" : "fused";
    t.loss_kernels = c.loss == LossKind::kFp32Once ? "megatron_ops" : c.loss == LossKind::kTeFused ? "te_fused" : "log_softmax";
  }
  t.efficiency = hw * step_tokens / gpus / (matmul_seconds * peak);
  const double hbm = gpu.memory_bandwidth_gb_s * 1e9 * kHbmEfficiency;
  // The optimizer step streams gradients and states once in and out.
  const double optimizer_seconds = 2.0 * (mem.per_gpu.gradients + mem.per_gpu.optimizer).value / hbm;
  double dequant_seconds = 0;
  if (w.task == Task::kQlora) {
    // Every NF4 weight is read and written as bf16 in each forward and backward pass.
    // (op-level recomputation reruns half the matmuls, so half the weights once more)
    const double passes = 2.0 + (w.recompute == Recompute::kFull ? 1.0 : w.recompute == Recompute::kOp ? 0.5 : 0.0);
    dequant_seconds = m_micro * passes * static_cast<double>(mem.params_on_gpu) * (kNf4BytesPerParam + kHalfBytes) / hbm;
  }
  t.compute_seconds = matmul_seconds + optimizer_seconds + dequant_seconds;
  t.matmul_seconds = matmul_seconds;
  t.optimizer_seconds = optimizer_seconds;

  // §4 communication. Rank order as Megatron-LM: tp innermost, then dp, then pp.
  const double per_node = static_cast<double>(c.gpus_per_node);
  const double tp = static_cast<double>(l.tp);
  const Network& net = NetworkRef(c, gpu);
  t.network = net.name;
  t.network_gbps = net.node_gbps;
  const Link inter = NodeLink(net);
  // A collective or send that leaves the node from every GPU at once (cp, ep, pp groups wider than
  // a node): the node's NICs are shared by its GPUs.
  const Link inter_each = {inter.bytes_per_second / per_node, inter.hop_seconds};
  const Link tp_link = tp <= per_node ? IntraNodeLink(gpu, tp) : inter;
  const double tp_bytes = static_cast<double>(w.micro_batch) * s / cp * h * p;
  // Recomputation reruns the forward collectives (two all-reduces a layer): all of them (full);
  // op-level reruns them too, except the reduce-scatters of sequence parallelism, which
  // torchtitan's save list keeps (then only the two gathers, one all-reduce's worth).
  double rerun = 0;
  if (w.recompute == Recompute::kFull) {
    rerun = 2.0;
  } else if (w.recompute == Recompute::kOp) {
    rerun = l.sp ? 1.0 : 2.0;
  }
  const double tp_collectives = 4.0 + rerun;
  // Each all-reduce's worth is an all-gather and a reduce-scatter under sequence parallelism; with
  // fp8 gathers (torchao's Float8ColwiseParallel, PrepareFloat8ModuleInput: the input cast to fp8
  // before the gather; Float8RowwiseParallel: the output gradient cast before its backward gather)
  // the gather moves half the bytes: (1 + 2) / (2 + 2) of the pair.
  const double gather_share = w.fp8 && l.sp && c.fp8_tp_gather ? 0.75 : 1.0;
  t.tp_seconds_total =
      m_micro * layers_per_stage * tp_collectives * AllReduce(tp, gather_share * tp_bytes, tp_link);
  t.tp_seconds = t.tp_seconds_total;
  if (c.tp_overlap) {
    // §4 the collectives run in chunks beside the GEMMs that produce and consume them; up to
    // dp_overlap of the GEMM time hides them (the same share as bucketed gradient traffic).
    t.tp_seconds = std::max(0.0, t.tp_seconds_total - c.dp_overlap * t.gemm_seconds);
  }

  // Context parallelism (ring attention: Liu et al. 2023; Megatron-Core's CP): in every layer each
  // rank passes its chunk of K and V around the ring, cp - 1 steps forward, and K, V and their
  // gradients backward (twice the bytes), overlapped with the attention core it computes
  // meanwhile; what the attention does not cover is exposed. Ranks: tp innermost, then cp.
  if (l.cp > 1) {
    const double kv_split = std::min(tp, static_cast<double>(std::max<int64_t>(m.kv_heads, 1)));
    const double kv_bytes = static_cast<double>(m.KvElementsPerTokenPerLayer()) / kv_split * p;
    const double chunk = static_cast<double>(w.micro_batch) * s / cp * kv_bytes;
    const Link cl = tp * cp <= per_node ? IntraNodeLink(gpu, tp * cp) : inter_each;
    const double step = chunk / cl.bytes_per_second + cl.hop_seconds;
    const double fwd = (cp - 1) * step;
    const double bwd = 2.0 * fwd;
    const double passes_fwd = w.recompute == Recompute::kFull ? 2.0 : 1.0;
    t.cp_seconds_total = m_micro * layers_per_stage * (passes_fwd * fwd + bwd);
    t.cp_seconds = m_micro * layers_per_stage *
                   (passes_fwd * std::max(0.0, fwd - attention_forward) + std::max(0.0, bwd - attention_backward));
  }
  // Pipeline: activations forward and gradients back across each stage boundary.
  if (l.pp > 1) {
    const bool stages_cross_nodes = tp * dp >= per_node;
    const Link pl = stages_cross_nodes ? inter_each : IntraNodeLink(gpu, 2.0 * tp * dp);
    const double bytes = tp_bytes / (l.sp ? tp : 1.0);
    // Interleaved 1F1B (vpp > 1): each micro-batch crosses a GPU's stages vpp times each way, and
    // Megatron-Core overlaps these sends with the other chunks' compute (overlap_p2p_comm, on with
    // interleaving); up to dp_overlap of the compute hides them. Plain 1F1B waits for each send.
    const double vpp = static_cast<double>(std::max<int64_t>(l.vpp, 1));
    t.pp_seconds_total = m_micro * 2.0 * vpp * (bytes / pl.bytes_per_second + pl.hop_seconds);
    t.pp_seconds = l.vpp > 1 && c.pp_overlap ? std::max(0.0, t.pp_seconds_total - c.dp_overlap * matmul_seconds)
                                             : t.pp_seconds_total;
  }
  // MoE all-to-all: dispatch and combine, forward and backward, per MoE layer.
  if (m.moe && l.ep > 1) {
    const double moe_layers_per_stage =
        std::ceil(static_cast<double>(m.moe->moe_layers) / static_cast<double>(l.pp));
    const bool ep_in_node = tp * static_cast<double>(l.ep) <= per_node;
    const Link el = ep_in_node ? IntraNodeLink(gpu, tp * static_cast<double>(l.ep)) : inter_each;
    const double ep = static_cast<double>(l.ep);
    const double bytes = static_cast<double>(w.micro_batch) * s / cp * static_cast<double>(m.moe->experts_per_token) * h * p *
                         (ep - 1) / ep / tp;
    const double passes = 4.0 + (w.recompute == Recompute::kFull || w.recompute == Recompute::kOp ? 2.0 : 0.0);
    t.moe_seconds = m_micro * moe_layers_per_stage * passes * (bytes / el.bytes_per_second + (ep - 1) * el.hop_seconds);
  }
  // Data parallel, hierarchical (NCCL's ring/tree over NVLink inside a node, one ring per NIC
  // across nodes): a reduce-scatter or all-gather of B bytes per GPU costs (n-1)/n x B on each
  // GPU's NVLink inside the node, and across nodes the node's NICs carry the node's distinct
  // partitions once: B x tp per node (the dp_local GPUs holding the same partition share one
  // copy). An all-reduce is a reduce-scatter + an all-gather.
  if (l.dp_cp() > 1) {
    const double dp_local = std::min(dp, std::max(1.0, per_node / tp));
    const double dp_nodes = std::ceil(dp / dp_local);
    const Link intra_dp = IntraNodeLink(gpu, tp * dp_local);
    const double node_share = std::min(per_node, tp * dp_local) / dp_local;  // = tp within a node
    // One half of an all-reduce (reduce-scatter or all-gather) of `bytes` per GPU; adds the
    // bytes the node link carries to `node_bytes`.
    auto half = [&](double bytes, double& node_bytes) {
      double sec = 0;
      if (dp_local > 1) {
        sec += (dp_local - 1) / dp_local * bytes / intra_dp.bytes_per_second + (dp_local - 1) * intra_dp.hop_seconds;
      }
      if (dp_nodes > 1) {
        const double on_link = (dp_nodes - 1) / dp_nodes * bytes * node_share;
        node_bytes += on_link;
        sec += on_link / inter.bytes_per_second + (dp_nodes - 1) * inter.hop_seconds;
      }
      return sec;
    };
    const double trainable_on_gpu =
        lora ? n_lora / (tp * static_cast<double>(l.pp)) : static_cast<double>(mem.params_on_gpu);
    const double grad_bytes = trainable_on_gpu * ElementBytes(c.fp32_grad_reduce ? Precision::kFp32 : w.precision);
    const double param_gather_bytes = trainable_on_gpu * ElementBytes(w.precision);
    double node_bytes = 0;
    double dp_time = 0;
    if (l.zero == 3) {
      // ZeRO-3 / FSDP (Rajbhandari et al. 2020, section 7.2.2): every micro-batch gathers the
      // parameters for its forward and again for its backward and reduce-scatters its gradients.
      // Frozen LoRA base weights are sharded and gathered too (in their stored dtype).
      const double weight_bytes_per_param = w.task == Task::kQlora ? kNf4BytesPerParam : ElementBytes(w.precision);
      const double param_bytes = static_cast<double>(mem.params_on_gpu) * weight_bytes_per_param;
      double per_micro_node_bytes = 0;
      const double per_micro = half(param_bytes, per_micro_node_bytes) +  // forward gather
                               half(param_bytes, per_micro_node_bytes) +  // backward gather
                               half(grad_bytes, per_micro_node_bytes);    // gradient reduce-scatter
      dp_time = m_micro * per_micro;
      node_bytes = m_micro * per_micro_node_bytes;
      // Prefetching overlaps the gathers with the forward and the backward pass.
      t.dp_exposed_seconds = std::max(0.0, dp_time - c.dp_overlap * matmul_seconds);
    } else {
      // The gradients accumulate over the micro-batches without communication and are reduced in
      // buckets during the backward pass of the LAST micro-batch only (PyTorch DDP's no_sync,
      // Megatron-Core's no_sync_func: schedules.py runs micro-batches 1..m-1 under it), so one
      // micro-batch's backward is the window that can hide them, not the step's. ZeRO 0: one
      // all-reduce (reduce-scatter + all-gather) in that window. ZeRO-1 (Megatron-Core's
      // distributed optimizer): the reduce-scatter there, and the updated parameters' all-gather
      // during the next step's first forward (--overlap-param-gather); DeepSpeed all-gathers them
      // at the end of its optimizer step, before the next forward can start (param_gather:
      // after_step), so that half is exposed even with overlap. ZeRO-2 partitions the
      // gradients, so it reduce-scatters after EVERY micro-batch's backward (DeepSpeed #2252),
      // each hidden by that micro-batch's backward. Without overlap (Megatron-LM 2021's
      // `--DDP-impl local`) all of it is exposed after the backward pass.
      const double backward_one = backward_seconds / m_micro;
      const double forward_one = forward_seconds / m_micro;
      double reduce_node_bytes = 0;
      double gather_node_bytes = 0;
      const double reduce = half(grad_bytes, reduce_node_bytes);
      // ZeRO 0 all-reduces the gradients (both halves in their dtype); ZeRO-1/2 gather the updated
      // parameters in the training dtype.
      const double gather = half(l.zero == 0 ? grad_bytes : param_gather_bytes, gather_node_bytes);
      const double reduces = l.zero == 2 ? m_micro : 1.0;
      dp_time = reduces * reduce + gather;
      node_bytes = reduces * reduce_node_bytes + gather_node_bytes;
      if (!c.dp_grad_overlap) {
        t.dp_overlapped = false;
        t.dp_exposed_seconds = dp_time;
      } else if (l.zero == 0) {
        t.dp_exposed_seconds = std::max(0.0, reduce + gather - c.dp_overlap * backward_one);
      } else {
        t.dp_exposed_seconds =
            reduces * std::max(0.0, reduce - c.dp_overlap * backward_one) +
            (c.param_gather_after_step ? gather : std::max(0.0, gather - c.dp_overlap * forward_one));
      }
    }
    t.dp_seconds = dp_time;
    t.dp_node_link_bytes = node_bytes;
  }
  t.communication_seconds = t.tp_seconds + t.cp_seconds + t.pp_seconds + t.moe_seconds + t.dp_exposed_seconds;

  // §2 pipeline bubble (1F1B: (pp-1) micro-batch slots; interleaved: (pp-1) slots of one model
  // chunk, each as long as the largest chunk, ceil(layers_per_stage / vpp) layers: (pp-1)/vpp of a
  // micro-batch when the chunks are equal).
  if (l.pp > 1) {
    const double per_micro = (matmul_seconds + t.tp_seconds + t.cp_seconds + t.moe_seconds) / m_micro;
    const double chunk_layers = std::ceil(layers_per_stage / static_cast<double>(std::max<int64_t>(l.vpp, 1)));
    t.bubble_seconds = per_micro * static_cast<double>(l.pp - 1) * chunk_layers / layers_per_stage;
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

namespace {

// §5 the costs of one inference engine step on a replica, built once for a request: the decode
// step's HBM reads and matmuls, the prefill's per-operation forward pass, the tensor-parallel
// all-reduces of both.
class EngineCosts {
 public:
  EngineCosts(const ModelSpec& m, const Workload& w, const Layout& l, const Gpu& gpu, const TimeConfig& c,
              int64_t prompt_tokens, int64_t output_tokens)
      : m_(m), w_(w), c_(c) {
    ValidateLayout(m, w, l);
    if (prompt_tokens <= 0 || output_tokens <= 0) {
      throw InputError::Option(prompt_tokens <= 0 ? "prompt_tokens" : "output_tokens",
                               "prompt and output tokens must be positive");
    }
    if (c.mfu && (*c.mfu <= 0 || *c.mfu > 1)) {
      throw InputError::Option("mfu", "must be in (0, 1]");
    }
    const double peak = PeakFlops(gpu, Precision::kBf16);
    // fp8 weights run fp8 GEMMs on cards with fp8 tensor cores (TensorRT-LLM, vLLM); elsewhere they
    // are dequantised to bf16 for the matmul.
    const bool fp8_gemm = w.weight_dtype == WeightDtype::kFp8 && gpu.tflops.fp8 && *gpu.tflops.fp8 > 0;
    rates_ = RatesFor(gpu, Precision::kBf16, fp8_gemm, c.attention, c.gemm_tables.get());
    efficiency_ = c.mfu.value_or(rates_.gemm_fraction);
    gemm_rate_ = c.mfu ? peak * *c.mfu : rates_.gemm_peak * rates_.gemm_fraction;
    tp_ = static_cast<double>(l.tp);
    pp_ = static_cast<double>(l.pp);
    n_ = Summarize(m, {}).matmul_params;
    h_ = static_cast<double>(m.hidden);
    layers_ = static_cast<double>(m.layers);
    link_ = tp_ <= static_cast<double>(c.gpus_per_node) ? IntraNodeLink(gpu, tp_) : NodeLink(NetworkRef(c, gpu));
    // §5 decode: each step reads the GPU's weights and the KV cache of every sequence in flight,
    // here per token of context (the KV of the asked concurrency at the average context).
    Workload wd = w;
    wd.context = prompt_tokens + output_tokens / 2;  // average context during decoding
    mean_context_ = static_cast<double>(wd.context);
    const MemoryEstimate mem = EstimateMemory(m, wd, l);
    const double hbm = gpu.memory_bandwidth_gb_s * 1e9 * kHbmEfficiency;
    // Pipeline stages run one after another for a given token.
    weight_seconds_ = mem.per_gpu.weights.value * pp_ / hbm;
    const double held = static_cast<double>(std::max<int64_t>(w.concurrency, 1)) * mean_context_;
    kv_seconds_per_token_ = mem.per_gpu.kv_cache.value * pp_ / hbm / held;
    if (c.decode_kv_per_query_head && m.kv_heads > 0 && m.heads > m.kv_heads) {
      // §5 an engine without a GQA decode kernel loads each K/V head once for every query head
      // that shares it (TensorRT-LLM before v0.8's XQA kernel).
      kv_seconds_per_token_ *= static_cast<double>(m.heads) / static_cast<double>(m.kv_heads);
    }
  }

  double efficiency() const { return efficiency_; }
  double mean_context() const { return mean_context_; }
  double weight_seconds() const { return weight_seconds_; }
  double KvSeconds(double context_tokens) const { return kv_seconds_per_token_ * context_tokens; }
  // Matmul time of a decode step: 2N per sequence and its attention over its own context.
  double DecodeCompute(double running, double context_tokens) const {
    const double per_seq_context = running > 0 ? context_tokens / running : 0;
    return running * (2.0 * n_ + AttentionForwardFlopsPerToken(m_, per_seq_context)) / (tp_ * gemm_rate_);
  }
  double DecodeAllReduce(double running) const { return AllReduceTokens(running); }
  double DecodeStep(double running, double context_tokens) const {
    const double mem = weight_seconds_ + KvSeconds(context_tokens);
    return std::max(mem, DecodeCompute(running, context_tokens)) + DecodeAllReduce(running);
  }
  // §5 prefill: compute-bound, causal attention over each prompt; `tokens` over `sequences`
  // prompts of equal length, in one forward pass.
  double Prefill(double tokens, double sequences) const {
    return PrefillCompute(tokens, sequences) + AllReduceTokens(tokens);
  }
  // Two tensor-parallel all-reduces a layer of `tokens` tokens' activations.
  double AllReduceTokens(double tokens) const { return layers_ * 2.0 * AllReduce(tp_, tokens * h_ * 2.0, link_); }
  // The prefill's kernels alone (no all-reduces).
  // `sequences` may be a fraction: a step's chunk of a steady stream of prompts (§5.3).
  double PrefillCompute(double tokens, double sequences) const {
    const double seq = sequences > 0 ? tokens / sequences : tokens;
    double s = 0;
    if (c_.mfu) {
      s = (2.0 * n_ * tokens + AttentionForwardFlopsPerToken(m_, seq) * tokens / 2.0) / (tp_ * gemm_rate_);
    } else {
      // §3 per-operation: one forward pass over the prompts; the head projects the last tokens only.
      OpShape shape;
      shape.tokens = tokens;
      shape.seq = seq;
      shape.tp = tp_;
      shape.flash = w_.flash_attn;
      shape.training = false;
      s = layers_ * LayerOpTimes(m_, shape, rates_).forward.Total() + HeadOpTimes(m_, shape, rates_).forward.Total();
    }
    return s;
  }
  double PrefillFlops(double tokens) const {
    return 2.0 * n_ * tokens + AttentionForwardFlopsPerToken(m_, tokens) * tokens / 2.0;
  }

 private:
  const ModelSpec& m_;
  const Workload& w_;
  const TimeConfig& c_;
  KernelRates rates_;
  double efficiency_ = 0;
  double gemm_rate_ = 0;
  double tp_ = 1;
  double pp_ = 1;
  double n_ = 0;
  double h_ = 0;
  double layers_ = 0;
  Link link_;
  double mean_context_ = 0;
  double weight_seconds_ = 0;
  double kv_seconds_per_token_ = 0;
};

}  // namespace

InferenceTime EstimateInferenceTime(const ModelSpec& m, const Workload& w, const Layout& l, const Gpu& gpu,
                                    const TimeConfig& c, int64_t prompt_tokens, int64_t output_tokens) {
  const EngineCosts e(m, w, l, gpu, c, prompt_tokens, output_tokens);
  InferenceTime r;
  r.efficiency = e.efficiency();
  const double P = static_cast<double>(prompt_tokens);
  const double O = static_cast<double>(output_tokens);
  r.prefill_flops = e.PrefillFlops(P);
  r.prefill_seconds = e.Prefill(P, 1);
  const double c_seq = static_cast<double>(w.concurrency);
  const double context = c_seq * e.mean_context();
  r.decode_weight_seconds = e.weight_seconds();
  r.decode_kv_seconds = e.KvSeconds(context);
  const double mem_seconds = r.decode_weight_seconds + r.decode_kv_seconds;
  r.decode_compute_seconds = e.DecodeCompute(c_seq, context);
  r.memory_bound = mem_seconds >= r.decode_compute_seconds;
  r.decode_step_seconds = e.DecodeStep(c_seq, context);
  r.decode_tokens_per_second = c_seq / r.decode_step_seconds;
  r.decode_tokens_per_second_per_gpu = r.decode_tokens_per_second / static_cast<double>(l.tp * l.pp);
  // §5 continuous batching: the replica's GPUs run every request's prefill and its 1/c share of
  // O decode steps; neither hides behind the other.
  r.replica_seconds_per_request = r.prefill_seconds + O * r.decode_step_seconds / c_seq;
  // §5.3 a scheduler that runs prompt tokens inside the decode steps (vLLM V1: running requests
  // take their token first, waiting ones the rest of the step's budget): at steady state each
  // step prefills the prompts of the c / O requests replacing those that finish, in the same
  // pass as the decode, so the weight reads are shared and only the matmuls add up.
  if (c.mixed_step_tokens > 0) {
    const double chunk = c_seq * P / O;
    if (c_seq + chunk <= static_cast<double>(c.mixed_step_tokens)) {
      r.mixed = true;
      r.mixed_prefill_tokens = chunk;
      r.mixed_prefill_seconds = e.PrefillCompute(chunk, c_seq / O);
      r.mixed_step_seconds = std::max(mem_seconds, r.decode_compute_seconds + r.mixed_prefill_seconds) +
                             e.AllReduceTokens(c_seq + chunk);
      r.replica_seconds_per_request = O * r.mixed_step_seconds / c_seq;
    }
  }
  r.requests_per_second = 1.0 / r.replica_seconds_per_request;
  return r;
}

StaticBatchRun EstimateStaticBatch(const ModelSpec& m, const Workload& w, const Layout& l, const Gpu& gpu,
                                   const TimeConfig& c, int64_t prompt_tokens, int64_t output_tokens,
                                   const KvPool& pool) {
  const auto e = std::make_shared<const EngineCosts>(m, w, l, gpu, c, prompt_tokens, output_tokens);
  StepCosts costs;
  costs.decode = [e](double running, double context) { return e->DecodeStep(running, context); };
  costs.prefill = [e](double tokens, double sequences) { return e->Prefill(tokens, sequences); };
  return RunStaticBatch(w.concurrency, prompt_tokens, output_tokens, pool, costs);
}

}  // namespace gpuplan
