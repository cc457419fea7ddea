// Per-operation kernel costs of a transformer step (docs/time-model.md §3): GEMMs by their shape,
// fused attention by its FLOPs at the flash kernel's rate, elementwise and norm kernels by the
// bytes they move at the achievable HBM bandwidth. Every rate and its source: docs/time-model.md §3.
#pragma once

#include <string>
#include <vector>

#include "catalog/gpu_catalog.h"
#include "catalog/model.h"
#include "fit/framework.h"
#include "fit/gemm_table.h"
#include "fit/workload.h"

namespace gpuplan {

// The fused attention kernel a framework runs (data/frameworks.yaml `attention`): FlashAttention-2
// (PyTorch SDPA, flash-attn 2; the generic default) or a Hopper-tuned kernel (FlashAttention-3,
// cuDNN's fused attention through Transformer Engine, which Megatron-LM uses).
enum class AttentionKernel { kFa2, kFa3 };
const char* ToString(AttentionKernel k);
AttentionKernel ParseAttentionKernel(const std::string& s);  // "fa2" | "fa3"; InputError names --attention

struct KernelRates {
  double gemm_peak = 0;         // FLOP/s: dense tensor peak of the GEMM datatype
  double gemm_fraction = 0;     // achievable fraction of gemm_peak on large shapes
  std::string gemm_basis;       // where gemm_fraction comes from
  double gemm_operand_bytes = 2;  // bytes of one GEMM input element (1 for fp8)
  double attention_flops = 0;   // FLOP/s of the fused attention kernel (bf16), forward and backward
  std::string attention_basis;
  // §3.2 the kernel's published rates by sequence length (data/attention/), when the card's
  // architecture has a table and the kernel is the one it times; attention_flops stands otherwise.
  const AttentionTable* attention_table = nullptr;
  double attention_scale = 1;   // the card's bf16 peak / the table's
  double hbm = 0;               // bytes/s an elementwise kernel streams
  const GemmTable* table = nullptr;  // measured rates by shape for this card (data/gemm/), if any
  double table_scale = 1;            // the card's peak / the table's (a table of its architecture)
  bool fp8 = false;                  // GEMMs in fp8 (the table's fp8 rows)
  // With fp8: the same card's bf16 GEMM rates, for GEMMs a framework keeps in bf16 (the output head).
  double bf16_gemm_peak = 0, bf16_gemm_fraction = 0, bf16_table_scale = 1;
  const GemmTable* bf16_table = nullptr;
};

// §3.5 The share of the kernel-level rates a whole training step keeps (launch gaps and
// synchronisation between kernels, clocks sustained under the power limit, small unfused kernels
// the per-operation sum leaves out). FITTED, not measured: the median of measured / predicted
// over four single-node rows of tests/validation/time_cases.yaml (docs/time-model.md §3.5).
inline constexpr double kTrainingStepEfficiency = 0.77;
// §3.3 / §5 Achievable fraction of HBM bandwidth for streaming kernels and decode reads.
inline constexpr double kHbmEfficiency = 0.85;

// The rates of one card for a training or inference step. `fp8`: GEMMs in fp8 (Hopper and later;
// throws InputError naming --fp8 when the card has no fp8 figure). `p` picks bf16/fp16 or fp32.
// `tables`: data/gemm's measured tables (LoadGemmTables); the card's own, when it has one, sets
// the GEMM rate shape by shape.
KernelRates RatesFor(const Gpu& gpu, Precision p, bool fp8, AttentionKernel attention,
                     const GemmTables* tables = nullptr);
// The same, remembered per thread for the last card and settings asked (the search and the
// validation ask for one card's rates for every layout; the card's names were normalised each
// time). Keyed by the card's address and every field RatesFor reads, and by the tables' address
// and generation (a set built by hand, generation 0, is not remembered). The reference holds
// until the next call on this thread.
const KernelRates& RatesForCached(const Gpu& gpu, Precision p, bool fp8, AttentionKernel attention,
                                  const GemmTables* tables);
// Achievable fraction of the dense GEMM peak on large shapes, with its source.
double GemmFraction(const Gpu& gpu, bool fp8, std::string* basis = nullptr);

// Seconds of one GEMM C[m x n] = A[m x k] B[k x n]: at the card's measured rate for this shape when
// its table covers it, else the larger of its FLOPs at the achievable rate and the bytes of A, B
// and C (bf16 output) at the HBM rate (the roofline, Williams et al. 2009). `forward`: a layer's
// forward product, which fp8 runs with fast accumulation (Transformer Engine's recipes: fprop
// use_split_accumulator=False, dgrad and wgrad True; torchao's float8 output GEMM use_fast_accum;
// vLLM's sm90 fp8 kernels FP8FastAccum): the table's fp8_fast_accum rows where it has them.
double GemmSeconds(const KernelRates& r, double m, double n, double k, bool forward = false);
// The same GEMM in bf16 on this card (the bf16_* rates of an fp8 KernelRates; GemmSeconds without fp8).
double Bf16GemmSeconds(const KernelRates& r, double m, double n, double k);

// The kernels of one transformer layer (or of the output head) for one micro-batch on one GPU,
// seconds. `gemm` holds every dense and expert matmul, `attention` the score/value core, `elementwise`
// the norms, activations, residual adds, rotary embeddings, dropout and loss kernels.
struct OpTimes {
  double gemm = 0;
  double attention = 0;
  double elementwise = 0;
  double Total() const { return gemm + attention + elementwise; }
  OpTimes& operator+=(const OpTimes& o) {
    gemm += o.gemm;
    attention += o.attention;
    elementwise += o.elementwise;
    return *this;
  }
  OpTimes Scaled(double f) const { return {gemm * f, attention * f, elementwise * f}; }
};

struct LayerPasses {
  OpTimes forward;
  OpTimes backward;   // input and weight gradients (frozen weights: input gradients only)
  OpTimes recompute;  // what activation recomputation runs again in the backward pass
};

struct OpShape {
  double tokens = 0;       // micro-batch x sequence length on this GPU
  double seq = 0;          // sequence length (attention span)
  double cp = 1;           // context parallelism: each rank's attention kernels run on seq / cp queries
  double tp = 1;
  bool sp = false;         // sequence parallelism: norms and dropout see tokens / tp
  bool flash = true;
  bool lora = false;       // frozen base weights: no weight gradients
  double lora_rank = 0;
  std::vector<std::string> lora_targets;  // adapted modules; empty = every linear layer
  double ep = 1;
  Recompute recompute = Recompute::kNone;
  bool training = true;    // false: forward only (inference prefill)
  bool eager = false;      // eager PyTorch elementwise ops (no torch.compile / fused kernels), §3.3
  // The framework's loss (data/frameworks.yaml `loss`): kTeFused is Transformer Engine's fused
  // cross-entropy (2 + 4 bytes a logit); kFp32Once is Megatron's vocab-parallel
  // cross-entropy, one PyTorch op at a time over the fp32 logits (§3.3); every other kind runs
  // PyTorch's cross_entropy (one log-softmax kernel after the upcast), whole or by chunks.
  LossKind loss = LossKind::kFull;
  bool head_bf16 = false;  // fp8 GEMMs, but the output head's in bf16 (the framework's fp8_head: bf16)
};

// One layer (average over the model's layers: MoE and sliding-window layers weighted by their count).
LayerPasses LayerOpTimes(const ModelSpec& m, const OpShape& s, const KernelRates& r);
// The output head: the vocabulary projection and the cross-entropy (training) for one micro-batch.
LayerPasses HeadOpTimes(const ModelSpec& m, const OpShape& s, const KernelRates& r);

}  // namespace gpuplan
