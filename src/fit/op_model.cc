// Per-operation kernel costs. Rates, byte counts and their sources: docs/time-model.md §3.
#include "fit/op_model.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/names.h"
#include "fit/memory_model.h"
#include "fit/time_model.h"

namespace gpuplan {
namespace {

// §3.2 FlashAttention-2 backward: five matmuls against the forward's two (Dao 2023, §3.1.2).
constexpr double kFlashBackwardFlops = 2.5;
// Bytes of a bf16/fp16 activation element and of a dropout mask element.
constexpr double kAct = 2.0;
constexpr double kMask = 1.0;

bool Has(const std::string& haystack, const char* needle) { return haystack.find(needle) != std::string::npos; }

// Tokens a causal query attends to on average at sequence length s, per layer averaged over the
// model's full and sliding-window layers (the flash kernels skip masked blocks).
double CausalAttended(const ModelSpec& m, double s) {
  const double full = (s + 1.0) / 2.0;
  if (m.sliding_window <= 0 || m.sliding_window_layers <= 0 || m.layers <= 0) {
    return full;
  }
  const double w = static_cast<double>(m.sliding_window);
  const double windowed = w >= s ? full : w - (w * w - w) / (2.0 * s);
  const double frac = static_cast<double>(m.sliding_window_layers) / static_cast<double>(m.layers);
  return frac * windowed + (1.0 - frac) * full;
}

}  // namespace

const char* ToString(AttentionKernel k) { return k == AttentionKernel::kFa3 ? "fa3" : "fa2"; }

AttentionKernel ParseAttentionKernel(const std::string& s) {
  const std::string n = NormalizeName(s);
  if (n == "fa2" || n == "flash-attention-2" || n == "sdpa") return AttentionKernel::kFa2;
  if (n == "fa3" || n == "flash-attention-3" || n == "cudnn") return AttentionKernel::kFa3;
  throw InputError::Option("attention", "unknown attention kernel '" + s + "'; use fa2 or fa3");
}

double GemmFraction(const Gpu& gpu, bool fp8, std::string* basis) {
  const std::string name = NormalizeName(gpu.name);
  const std::string arch = NormalizeName(gpu.architecture);
  auto say = [&](double f, const char* why) {
    if (basis) *basis = why;
    return f;
  };
  if (fp8) {
    if (Has(name, "b200")) return say(3432.5 / 4500, "MAMF B200 fp8 (ml-engineering)");
    if (arch == "hopper") return say(1453.4 / 1979, "MAMF H200 fp8 (ml-engineering), for every Hopper card");
    return say(0.70, "no published fp8 figure: assumed below Hopper's 73.4%");
  }
  if (Has(name, "h200") && Has(name, "sxm") && gpu.tflops.bf16 && *gpu.tflops.bf16 > 0) {
    return say(820.0 / *gpu.tflops.bf16, "measured: H200 bf16 GEMM 16384^3, 820 TFLOP/s (tests/fixtures/device/h200-gpu-probe.jsonl)");
  }
  if (arch == "hopper") return say(792.1 / 989.0, "MAMF H100 SXM bf16 (ml-engineering), for every Hopper card");
  if ((Has(name, "a100") || Has(name, "a800")) && Has(name, "sxm")) {
    return say(267.9 / 312.0, "MAMF A100 SXM bf16 (ml-engineering)");
  }
  if (arch == "ampere") return say(256.4 / 312.0, "MAMF A100 PCIe bf16 (ml-engineering), for other Ampere cards");
  if (Has(name, "b200")) return say(1745.0 / 2250.0, "MAMF B200 bf16 (ml-engineering)");
  return say(0.75, "no published figure: assumed below the lowest published NVIDIA fraction (B200, 77.6%)");
}

KernelRates RatesFor(const Gpu& gpu, Precision p, bool fp8, AttentionKernel attention, const GemmTables* tables) {
  KernelRates r;
  r.fp8 = fp8;
  const std::string arch = NormalizeName(gpu.architecture);
  const double half_peak = PeakFlops(gpu, p);
  if (fp8) {
    if (!gpu.tflops.fp8 || *gpu.tflops.fp8 <= 0) {
      throw InputError::Option("fp8", gpu.name + " has no fp8 tensor cores (the catalog lists no fp8 TFLOPS)");
    }
    r.gemm_peak = *gpu.tflops.fp8 * 1e12;
    r.gemm_operand_bytes = 1.0;
  } else {
    r.gemm_peak = half_peak;
    r.gemm_operand_bytes = p == Precision::kFp32 ? 4.0 : 2.0;
  }
  r.gemm_fraction = p == Precision::kFp32 && !fp8 ? 0.75 : GemmFraction(gpu, fp8, &r.gemm_basis);
  if (p == Precision::kFp32 && !fp8) {
    r.gemm_basis = "fp32 vector GEMMs: assumed 75% of the fp32 peak";
  }
  // §3.2 fused attention runs in bf16 whatever the GEMM datatype.
  double attn = 0.35;
  r.attention_basis = "no published figure for this card: FlashAttention-2's 35% on H100 (Shah et al. 2024)";
  if (arch == "ampere") {
    attn = 0.55;
    r.attention_basis = "FlashAttention-2 on A100: 50-73% forward, slower backward (Dao 2023)";
  } else if (arch == "hopper") {
    if (attention == AttentionKernel::kFa3) {
      attn = 0.60;
      r.attention_basis = "FlashAttention-3 / cuDNN on H100: 75% forward, backward 1.5-1.75x FA2 (Shah et al. 2024)";
    } else {
      r.attention_basis = "FlashAttention-2 on H100: 35% of peak (Shah et al. 2024)";
    }
  }
  r.attention_flops = half_peak * attn;
  if (tables && attention == AttentionKernel::kFa3 && half_peak > 0) {
    // §3.2 cuDNN's published rates by sequence length on this architecture, at the same fraction
    // of this card's peak (the fraction above stays for what the table does not hold).
    if (const AttentionTable* t = tables->AttentionFor(gpu)) {
      r.attention_table = t;
      r.attention_scale = half_peak / (t->peak_tflops_bf16 * 1e12);
      r.attention_basis = t->Basis();
    }
  }
  r.hbm = gpu.memory_bandwidth_gb_s * 1e9 * kHbmEfficiency;
  if (tables && p != Precision::kFp32) {
    bool own = false;
    r.table = tables->For(gpu, &own);
    const double table_peak = !r.table ? 0 : fp8 ? r.table->peak_tflops_fp8 : r.table->peak_tflops_bf16;
    if (r.table && !(fp8 ? r.table->fp8 : r.table->bf16).empty() && (own || table_peak > 0)) {
      r.gemm_basis = own ? r.table->basis : r.table->basis_scaled;
      if (!own) {
        // §3.1 a card of the table's architecture without a table of its own: the same fraction
        // of its own peak at each shape.
        r.table_scale = r.gemm_peak / (table_peak * 1e12);
      }
    } else {
      r.table = nullptr;
    }
  }
  if (fp8) {
    const KernelRates bf16 = RatesFor(gpu, p, false, attention, tables);
    r.bf16_gemm_peak = bf16.gemm_peak;
    r.bf16_gemm_fraction = bf16.gemm_fraction;
    r.bf16_table = bf16.table;
    r.bf16_table_scale = bf16.table_scale;
  }
  return r;
}

const KernelRates& RatesForCached(const Gpu& gpu, Precision p, bool fp8, AttentionKernel attention,
                                  const GemmTables* tables) {
  struct Memo {
    bool valid = false;
    const Gpu* gpu = nullptr;
    std::string name, architecture;
    std::vector<std::string> aliases;  // GemmTables::For matches a table's device by them
    std::optional<double> fp32, bf16, fp16, fp8;
    double bandwidth = 0;
    Precision p = Precision::kMixed;
    bool fp8_gemm = false;
    AttentionKernel attention = AttentionKernel::kFa2;
    const GemmTables* tables = nullptr;
    uint64_t generation = 0;
    KernelRates rates;
  };
  thread_local Memo memo;
  thread_local KernelRates uncached;
  if (tables && tables->generation == 0) {
    uncached = RatesFor(gpu, p, fp8, attention, tables);
    return uncached;
  }
  const uint64_t generation = tables ? tables->generation : 0;
  if (!(memo.valid && memo.gpu == &gpu && memo.p == p && memo.fp8_gemm == fp8 && memo.attention == attention &&
        memo.tables == tables && memo.generation == generation && memo.bandwidth == gpu.memory_bandwidth_gb_s &&
        memo.fp32 == gpu.tflops.fp32 && memo.bf16 == gpu.tflops.bf16 && memo.fp16 == gpu.tflops.fp16 &&
        memo.fp8 == gpu.tflops.fp8 && memo.name == gpu.name && memo.architecture == gpu.architecture &&
        memo.aliases == gpu.aliases)) {
    KernelRates rates = RatesFor(gpu, p, fp8, attention, tables);  // may throw: the memo stays as it was
    memo = Memo{true,           &gpu,           gpu.name,        gpu.architecture, gpu.aliases,
                gpu.tflops.fp32, gpu.tflops.bf16, gpu.tflops.fp16, gpu.tflops.fp8,  gpu.memory_bandwidth_gb_s,
                p,               fp8,            attention,       tables,           generation,
                std::move(rates)};
  }
  return memo.rates;
}

namespace {

// §3.1 one GEMM at the given rates: the table's rate at this shape where it has one, else the
// large-shape fraction of the peak; never faster than the bytes of A, B and C at the HBM rate.
double GemmSecondsAt(double peak, double fraction, double operand_bytes, const GemmTable* table, int rows,
                     double table_scale, double hbm, double m, double n, double k) {
  if (m <= 0 || n <= 0 || k <= 0) {
    return 0;
  }
  const double flops = 2.0 * m * n * k;
  const double bytes = (m * k + k * n) * operand_bytes + m * n * kAct;
  double rate = peak * fraction;
  if (table) {
    if (const std::optional<double> tflops = table->Tflops(rows, m, n, k)) {
      rate = *tflops * 1e12 * table_scale;  // the rate at this shape (held at the measured range's ends)
    }
  }
  return std::max(flops / rate, bytes / hbm);
}

}  // namespace

double GemmSeconds(const KernelRates& r, double m, double n, double k, bool forward) {
  const int rows = !r.fp8 ? GemmTable::kBf16 : forward ? GemmTable::kFp8FastAccum : GemmTable::kFp8;
  return GemmSecondsAt(r.gemm_peak, r.gemm_fraction, r.gemm_operand_bytes, r.table, rows, r.table_scale, r.hbm, m, n, k);
}

double Bf16GemmSeconds(const KernelRates& r, double m, double n, double k) {
  if (!r.fp8) {
    return GemmSeconds(r, m, n, k);
  }
  return GemmSecondsAt(r.bf16_gemm_peak, r.bf16_gemm_fraction, 2.0, r.bf16_table, GemmTable::kBf16, r.bf16_table_scale,
                       r.hbm, m, n, k);
}

LayerPasses LayerOpTimes(const ModelSpec& m, const OpShape& s, const KernelRates& r) {
  LayerPasses out;
  const double layers = static_cast<double>(std::max<int64_t>(m.layers, 1));
  const double t = s.tokens;
  const double tp = std::max(s.tp, 1.0);
  const double fp8_cast = r.gemm_operand_bytes < 2.0 ? 1.0 : 0.0;  // cast kernels of fp8 GEMM inputs

  // §3.1 GEMMs: every per-layer linear layer, averaged over the layers.
  const bool op_recompute = s.training && s.recompute == Recompute::kOp;
  const std::vector<double> op_shares = op_recompute ? OpRecomputeShares(m) : std::vector<double>{};
  for (size_t i = 0; i < m.tensors.size(); ++i) {
    const TensorGroup& g = m.tensors[i];
    if (!g.linear || !g.per_layer) {
      continue;
    }
    const LinearOnRank l = OnRank(m, g, tp);
    double rows = t;       // tokens through one copy of the layer
    double copies = static_cast<double>(g.count) / layers;  // copies per layer on this GPU
    if (g.role == TensorRole::kExpert && m.moe && m.moe->experts > 0) {
      const double experts = static_cast<double>(m.moe->experts);
      const double topk = static_cast<double>(m.moe->experts_per_token);
      const double ep = std::max(s.ep, 1.0);
      rows = t * topk * ep / experts;  // tokens each local expert receives (balanced routing)
      copies /= ep;
    }
    const double fwd = GemmSeconds(r, rows, l.n, l.k, /*forward=*/true);
    out.forward.gemm += copies * fwd;
    if (op_recompute) {
      out.recompute.gemm += op_shares[i] * copies * fwd;
    }
    double bwd = GemmSeconds(r, rows, l.k, l.n);  // input gradient
    const bool frozen = s.lora;
    if (!frozen) {
      bwd += GemmSeconds(r, l.n, l.k, rows);  // weight gradient
    }
    out.backward.gemm += copies * bwd;
    if (fp8_cast > 0) {
      // Inputs cast to fp8 (read 2 bytes, write 1) in forward; output gradients in backward.
      out.forward.elementwise += copies * rows * l.k * 3.0 / r.hbm;
      out.backward.elementwise += copies * rows * l.n * 3.0 / r.hbm;
    }
    if (s.lora && s.lora_rank > 0 && IsLoraTarget(g, s.lora_targets)) {
      // LoRA adapters on every linear layer (rank r): x A^T then (.) B^T, both trained.
      const double rk = s.lora_rank;
      out.forward.gemm += copies * (GemmSeconds(r, rows, rk, l.k) + GemmSeconds(r, rows, l.n, rk));
      out.backward.gemm += copies * (GemmSeconds(r, rows, l.k, rk) + GemmSeconds(r, rk, l.k, rows) +
                                     GemmSeconds(r, rows, rk, l.n) + GemmSeconds(r, l.n, rk, rows));
    }
  }

  // §3.2 attention core.
  const double heads = static_cast<double>(m.heads) / tp;
  const double width = static_cast<double>(m.head_dim + m.v_head_dim);
  const double seq = std::max(s.seq, 1.0);
  const double sequences = t / seq;
  if (s.flash) {
    const double flops = 2.0 * t * CausalAttended(m, seq) * heads * width;
    double forward_rate = r.attention_flops, backward_rate = r.attention_flops;
    if (r.attention_table) {
      // The kernel's length: a context-parallel rank runs its seq / cp queries (§3.2).
      const auto [fwd, bwd] = r.attention_table->Tflops(seq / std::max(s.cp, 1.0));
      forward_rate = fwd * 1e12 * r.attention_scale;
      backward_rate = bwd * 1e12 * r.attention_scale;
    }
    out.forward.attention = flops / forward_rate;
    out.backward.attention = kFlashBackwardFlops * flops / backward_rate;
  } else {
    // Scores and probabilities materialised (s x s per head; the causal mask applied to the full
    // matrix, as Megatron-LM's fused softmax does): two batched GEMMs forward, four backward, and
    // scale-mask-softmax (+ dropout) over every score.
    const double per_head = sequences * heads;
    const double sq = seq * seq;
    const double dk = static_cast<double>(m.head_dim);
    const double dv = static_cast<double>(m.v_head_dim);
    auto g = [&](double a, double b, double c) { return per_head * GemmSeconds(r, a, b, c); };
    out.forward.attention = g(seq, seq, dk) + g(seq, dv, seq);
    out.backward.attention = g(seq, dk, seq) + g(seq, dk, seq) + g(seq, seq, dv) + g(dv, seq, seq);
    const bool dropout = m.attention_dropout > 0;
    // Megatron-LM's scaled_upper_triang_masked_softmax kernel reads only the causal part of each
    // row (row i: i + 1 scores, (s + 1) / 2s of the matrix) and writes the whole row, zeros past
    // the diagonal; its backward reads probabilities and gradients over the causal part and
    // writes every gradient. Forward: 2 x causal + 2 bytes a score; backward: 4 x causal + 2.
    // Dropout (a separate op over the whole matrix) reads 2, writes 2 and a 1-byte mask forward,
    // and reads the gradient and mask and writes backward (5 each way).
    const double causal = (seq + 1.0) / (2.0 * seq);
    const double fwd_bytes = 2.0 * causal + 2.0 + (dropout ? 5.0 : 0.0);
    const double bwd_bytes = 4.0 * causal + 2.0 + (dropout ? 5.0 : 0.0);
    out.forward.elementwise += per_head * sq * fwd_bytes / r.hbm;
    out.backward.elementwise += per_head * sq * bwd_bytes / r.hbm;
  }

  // §3.3 elementwise and norm kernels, bytes per token (bf16 activations).
  const double h = static_cast<double>(m.hidden);
  const double sp = s.sp ? tp : 1.0;  // sequence parallelism splits the norm/residual region
  double ffn_width = static_cast<double>(m.intermediate);
  if (m.moe && m.moe->moe_layers > 0) {
    const double moe_frac = static_cast<double>(m.moe->moe_layers) / layers;
    const double moe_width = static_cast<double>(m.moe->experts_per_token * m.moe->expert_intermediate +
                                                 m.moe->shared_intermediate);
    ffn_width = moe_frac * moe_width + (1.0 - moe_frac) * ffn_width;
  }
  const bool rotary = m.norm == NormKind::kRms && m.model_type != "gpt2";
  double bytes = 0;
  bytes += static_cast<double>(m.norms_per_layer) * 2.0 * h * kAct / sp;      // norms: read, write
  bytes += 2.0 * 3.0 * h * kAct / sp;                                          // two residual adds
  if (m.hidden_dropout > 0) bytes += 2.0 * (2.0 * h * kAct + h * kMask) / sp;  // dropout before each add
  const double qk_width = static_cast<double>(m.heads + m.kv_heads) * static_cast<double>(m.head_dim) / tp;
  if (rotary) {
    bytes += 2.0 * qk_width * kAct;  // rotary q, k
  }
  bytes += (m.gated_mlp ? 3.0 : 2.0) * ffn_width * kAct / tp;  // activation (SwiGLU: read 2, write 1)
  // Eager PyTorch (no torch.compile): the ops the fused count above merges run one by one, each
  // reading and writing its whole tensor; bytes per element beyond the fused kernels' (forward /
  // backward): hand-written RMSNorm 36 / 68 against 4 / 8, rotary in fp32 20 / 20 against 4 / 8,
  // SwiGLU 10 / 18 against 6 / 12; plus GQA's repeat_kv copies of K and V and the attention
  // output's transpose copy, each way. docs/time-model.md §3.3.
  double eager_fwd = 0;
  double eager_bwd = 0;
  if (s.eager) {
    if (m.norm == NormKind::kRms) {
      const double norm_elements = static_cast<double>(m.norms_per_layer) * h / sp;
      eager_fwd += norm_elements * (36.0 - 4.0);
      eager_bwd += norm_elements * (68.0 - 8.0);
    }
    if (rotary) {
      eager_fwd += qk_width * (20.0 - 4.0);
      eager_bwd += qk_width * (20.0 - 8.0);
    }
    if (m.kv_heads > 0 && m.kv_heads < m.heads) {
      const double hd = static_cast<double>(m.head_dim);
      const double repeat = 2.0 * (static_cast<double>(m.heads) + static_cast<double>(m.kv_heads)) * hd * kAct / tp;
      eager_fwd += repeat;
      eager_bwd += repeat;
    }
    const double out_copy = 2.0 * static_cast<double>(m.heads * m.v_head_dim) * kAct / tp;
    eager_fwd += out_copy;
    eager_bwd += out_copy;
    if (m.gated_mlp) {
      eager_fwd += ffn_width / tp * (10.0 - 6.0);
      eager_bwd += ffn_width / tp * (18.0 - 12.0);
    }
  }
  out.forward.elementwise += t * (bytes + eager_fwd) / r.hbm;
  out.backward.elementwise += t * (2.0 * bytes + eager_bwd) / r.hbm;  // each reads its input and gradient, writes one

  if (!s.training) {
    out.backward = {};
    return out;
  }
  if (s.recompute == Recompute::kFull) {
    out.recompute = out.forward;
  } else if (s.recompute == Recompute::kOp) {
    // §3.4 the recomputed matmuls (above) and every elementwise kernel of the block are rerun;
    // a fused attention op is kept, a materialised one rerun.
    out.recompute.elementwise = out.forward.elementwise;
    if (!s.flash) {
      out.recompute.attention = out.forward.attention;
    }
  } else if (s.recompute == Recompute::kSelective && !s.flash) {
    out.recompute.attention = out.forward.attention;  // Korthikanti et al. 2022: the attention core only
    out.recompute.elementwise =
        sequences * heads * seq * seq * (4.0 + (m.attention_dropout > 0 ? 5.0 : 0.0)) / r.hbm;
  }
  return out;
}

LayerPasses HeadOpTimes(const ModelSpec& m, const OpShape& s, const KernelRates& r) {
  LayerPasses out;
  const double tp = std::max(s.tp, 1.0);
  const double v = static_cast<double>(m.vocab) / tp;
  const double h = static_cast<double>(m.hidden);
  const double t = s.training ? s.tokens : std::max(1.0, s.tokens / std::max(s.seq, 1.0));  // prefill: last tokens
  // The head's GEMMs: fp8 with the layers, or bf16 where the framework keeps the head out of fp8.
  const auto gemm = [&](double a, double b, double c, bool forward) {
    return s.head_bf16 ? Bf16GemmSeconds(r, a, b, c) : GemmSeconds(r, a, b, c, forward);
  };
  out.forward.gemm = gemm(t, v, h, true);
  out.forward.elementwise = t * 2.0 * h * kAct / r.hbm;  // final norm
  if (!s.training) {
    return out;
  }
  out.backward.gemm = gemm(t, h, v, false) + (s.lora ? 0.0 : gemm(v, h, t, false));
  // Cross-entropy over fp32 logits, bytes per logit (§3.3). PyTorch's cross_entropy: upcast (read
  // 2, write 4) and log-softmax (read 4, write 4) forward; gradient (read 4, write 4) and cast back
  // (read 4, write 2) backward. Megatron's vocab-parallel cross-entropy (MEG-CE) runs each step as
  // its own op over the whole tensor: upcast 6, max (read 4), subtract in place 8, exp in place 8,
  // sum (read 4), divide in place 8 = 38 forward; gradient times the loss's gradient in place 8
  // and the cast back to the logits' dtype 6 = 14 backward.
  // Transformer Engine's Triton cross-entropy (te_fused; TE-CE) reads each logit once forward
  // (an online max and sum of exponentials) and once backward, writing the gradient over it: 2
  // and 4 bytes a logit.
  const double loss_forward = s.loss == LossKind::kFp32Once ? 38.0 : s.loss == LossKind::kTeFused ? 2.0 : 14.0;
  const double loss_backward = s.loss == LossKind::kTeFused ? 4.0 : 14.0;
  out.forward.elementwise += t * v * loss_forward / r.hbm;
  out.backward.elementwise += t * v * loss_backward / r.hbm + t * 2.0 * h * kAct * 2.0 / r.hbm;
  if (s.eager && m.norm == NormKind::kRms) {
    // the final RMSNorm as eager ops (LayerOpTimes)
    out.forward.elementwise += t * h * (36.0 - 4.0) / r.hbm;
    out.backward.elementwise += t * h * (68.0 - 8.0) / r.hbm;
  }
  if (s.recompute == Recompute::kFull) {
    out.recompute.elementwise = t * 2.0 * h * kAct / r.hbm;
  }
  return out;
}

}  // namespace gpuplan
