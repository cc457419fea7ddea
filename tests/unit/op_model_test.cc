// The per-operation time model (docs/time-model.md §3) against values worked out by hand from the
// datasheet (H100 SXM: 989.4 bf16 / 1978.9 fp8 dense TFLOPS, 3,350 GB/s), the published large-GEMM
// fractions (ml-engineering MAMF table) and the kernels' byte counts.
#include <gtest/gtest.h>

#include <array>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>

#include <fmt/format.h>

#include "catalog/gpu_catalog.h"
#include "catalog/model.h"
#include "core/error.h"
#include "core/names.h"
#include "fit/framework.h"
#include "fit/gemm_table.h"
#include "fit/op_model.h"
#include "fit/time_model.h"
#include "test_paths.h"

namespace gpuplan {
namespace {

const Gpu& H100() { return test::Catalog().Find("H100 SXM"); }

TEST(OpModel, LargeGemmRunsAtThePublishedFraction) {
  const KernelRates r = RatesFor(H100(), Precision::kMixed, false, AttentionKernel::kFa2);
  // MAMF H100 SXM bf16 792.1 of 989 TFLOPS = 80.09%; on the catalog's 989.4 that is 792.42 TFLOPS.
  EXPECT_NEAR(r.gemm_fraction, 0.80091, 1e-5);
  // 8192^3: 2 x 8192^3 = 1.0995e12 FLOPs / 792.42e12 = 1.3875 ms (bytes: 3 x 134 MB / 2.85 TB/s = 0.14 ms).
  EXPECT_NEAR(GemmSeconds(r, 8192, 8192, 8192), 1.09951e12 / 792.42e12, 2e-6);
}

TEST(OpModel, SkinnyGemmIsBoundByTheBytes) {
  const KernelRates r = RatesFor(H100(), Precision::kMixed, false, AttentionKernel::kFa2);
  // One token through an 8192 x 8192 layer (decode): reads 8192 + 67,108,864 elements and writes
  // 8192, 2 bytes each = 134,250,496 bytes at 3,350 GB/s x 0.85 = 47.15 us; its 134 MFLOP would take 0.17 us.
  EXPECT_NEAR(GemmSeconds(r, 1, 8192, 8192), 134'250'496.0 / (3350e9 * 0.85), 1e-9);
}

TEST(OpModel, Fp8GemmsUseTheFp8PeakAndOneByteOperands) {
  const KernelRates r = RatesFor(H100(), Precision::kMixed, true, AttentionKernel::kFa2);
  EXPECT_DOUBLE_EQ(r.gemm_peak, 1978.9e12);
  EXPECT_NEAR(r.gemm_fraction, 1453.4 / 1979, 1e-9);  // MAMF H200 fp8
  EXPECT_DOUBLE_EQ(r.gemm_operand_bytes, 1.0);
  // Attention stays bf16: FlashAttention-2 at 35% of the bf16 peak.
  EXPECT_NEAR(r.attention_flops, 0.35 * 989.4e12, 1e3);
  // A card without fp8 tensor cores names the flag.
  try {
    RatesFor(test::Catalog().Find("A100 80GB SXM"), Precision::kMixed, true, AttentionKernel::kFa2);
    FAIL() << "A100 has no fp8";
  } catch (const InputError& e) {
    EXPECT_EQ(test::AsCli(e).field(), "--fp8");
  }
}

TEST(OpModel, RememberedRatesFollowTheCardTheyWereAskedFor) {
  // RatesForCached answers from its memo only for the same card and settings: a card changed in
  // place (the validation harness sets a row's HBM bandwidth on a copy) or another one must get
  // its own rates. H100 SXM: 3,350 GB/s x 0.85 of HBM, then 2,400 GB/s x 0.85 (the HBM2e H100s of
  // the torchtitan rows); an A100 SXM's bf16 peak 312 TFLOP/s.
  Gpu card = H100();
  const double hbm = RatesForCached(card, Precision::kMixed, false, AttentionKernel::kFa2, nullptr).hbm;
  EXPECT_DOUBLE_EQ(hbm, 3350e9 * 0.85);
  card.memory_bandwidth_gb_s = 2400;
  EXPECT_DOUBLE_EQ(RatesForCached(card, Precision::kMixed, false, AttentionKernel::kFa2, nullptr).hbm, 2400e9 * 0.85);
  card = test::Catalog().Find("A100 80GB SXM");  // another card at the same address
  EXPECT_DOUBLE_EQ(RatesForCached(card, Precision::kMixed, false, AttentionKernel::kFa2, nullptr).gemm_peak, 312e12);
  // Other settings of the same card: fp8 GEMMs are refused on an A100, as RatesFor refuses them.
  EXPECT_THROW(RatesForCached(card, Precision::kMixed, true, AttentionKernel::kFa2, nullptr), InputError);
  EXPECT_DOUBLE_EQ(RatesForCached(card, Precision::kMixed, false, AttentionKernel::kFa2, nullptr).gemm_peak, 312e12);
}

TEST(OpModel, LlamaLayerElementwiseBytesAndFlashAttention) {
  // Llama-3.1-8B, one sequence of 4,096 tokens, tp 1, flash attention, H100 SXM.
  const ModelSpec& m = test::Llama8b();
  const KernelRates r = RatesFor(H100(), Precision::kMixed, false, AttentionKernel::kFa2);
  OpShape s;
  s.tokens = 4096;
  s.seq = 4096;
  const LayerPasses p = LayerOpTimes(m, s, r);
  // Bytes per token, forward (h 4,096, ffn 14,336, 32 + 8 heads of 128, bf16):
  //   2 RMSNorms x (read + write) 2 x 4,096 x 2 = 32,768; 2 residual adds x 3 x 4,096 x 2 = 49,152;
  //   rotary on q and k 2 x 40 x 128 x 2 = 20,480; SwiGLU reads 2 x 14,336, writes 14,336, x 2 = 86,016.
  //   Total 188,416 bytes; backward twice that.
  const double hbm = 3350e9 * 0.85;
  EXPECT_NEAR(p.forward.elementwise, 4096 * 188'416.0 / hbm, 1e-9);
  EXPECT_NEAR(p.backward.elementwise, 2 * 4096 * 188'416.0 / hbm, 1e-9);
  // Causal attention: each query sees (4,096 + 1) / 2 keys on average; forward FLOPs 2 x 4,096 x
  // 2,048.5 x 32 heads x (128 + 128) = 137.45 GFLOP at 35% of 989.4 TFLOPS; backward 2.5x (Dao 2023).
  const double attn_flops = 2.0 * 4096 * 2048.5 * 32 * 256;
  EXPECT_NEAR(p.forward.attention, attn_flops / (0.35 * 989.4e12), 1e-12);
  EXPECT_NEAR(p.backward.attention, 2.5 * attn_flops / (0.35 * 989.4e12), 1e-12);
  // No recomputation asked: nothing runs twice. Full recomputation repeats the forward.
  EXPECT_EQ(p.recompute.Total(), 0.0);
  s.recompute = Recompute::kFull;
  EXPECT_NEAR(LayerOpTimes(m, s, r).recompute.Total(), p.forward.Total(), 1e-15);
  // The GEMMs: q 4096x4096, k and v 1024x4096, o 4096x4096, gate and up 14336x4096, down 4096x14336,
  // all compute bound here: 2 x 4,096 tokens x 218,103,808 weights / 792.42 TFLOPS = 2.2548 ms forward.
  EXPECT_NEAR(p.forward.gemm, 2.0 * 4096 * 218'103'808.0 / 792.42e12, 1e-7);
  // Backward: input and weight gradients, twice the forward.
  EXPECT_NEAR(p.backward.gemm, 2 * p.forward.gemm, 1e-7);
}

TEST(OpModel, OpLevelRecomputationRerunsEverySecondMatmulAndTheElementwiseKernels) {
  // torchtitan's op policy on a Llama block (q, k, v, o, gate, up, down): k, o and up are rerun.
  const ModelSpec& m = test::Llama8b();
  const KernelRates r = RatesFor(H100(), Precision::kMixed, false, AttentionKernel::kFa2);
  OpShape s;
  s.tokens = 4096;
  s.seq = 4096;
  s.recompute = Recompute::kOp;
  const LayerPasses p = LayerOpTimes(m, s, r);
  // k 1024x4096 + o 4096x4096 + up 14336x4096 = 4,194,304 + 16,777,216 + 58,720,256 = 79,691,776
  // weights; 2 x 4,096 tokens x that at 792.42 TFLOPS (all three are compute bound at 4,096 rows).
  EXPECT_NEAR(p.recompute.gemm, 2.0 * 4096 * 79'691'776.0 / 792.42e12, 1e-8);
  // Every elementwise kernel of the forward (188,416 bytes a token, see above) runs again; the
  // flash attention op is kept.
  EXPECT_NEAR(p.recompute.elementwise, 4096 * 188'416.0 / (3350e9 * 0.85), 1e-9);
  EXPECT_EQ(p.recompute.attention, 0.0);
  // Hardware FLOPs per token: + 2 x 32 layers x 79,691,776 over no recomputation (flash on both).
  Workload w;
  w.task = Task::kPretrain;
  w.seq = 4096;
  w.global_batch = 8;
  Layout l;
  l.gpus = 8;
  TimeConfig c;
  const double none = EstimateTrainingTime(m, w, l, H100(), c, 0).hw_flops_per_token;
  w.recompute = Recompute::kOp;
  EXPECT_NEAR(EstimateTrainingTime(m, w, l, H100(), c, 0).hw_flops_per_token - none, 2.0 * 32 * 79'691'776.0, 1.0);
}

TEST(OpModel, EagerElementwiseOpsMoveTheirOwnBytes) {
  // Llama-3.1-8B without torch.compile (docs/time-model.md §3.3), per token and layer, forward:
  //   2 RMSNorms x 4,096 x 36 = 294,912; residual adds 49,152 (as fused); rotary on 40 heads of
  //   128 x 20 = 102,400; repeat_kv writes 2 x 32 x 128 x 2 and reads 2 x 8 x 128 x 2 = 20,480;
  //   the attention output copy 4,096 x 4 = 16,384; SwiGLU 14,336 x 10 = 143,360. Total 626,688.
  // Backward: norms 2 x 4,096 x 68 = 557,056; adds 98,304; rotary 102,400; repeat_kv 20,480;
  //   copy 16,384; SwiGLU 14,336 x 18 = 258,048. Total 1,052,672.
  const ModelSpec& m = test::Llama8b();
  const KernelRates r = RatesFor(H100(), Precision::kMixed, false, AttentionKernel::kFa2);
  OpShape s;
  s.tokens = 4096;
  s.seq = 4096;
  s.eager = true;
  const LayerPasses p = LayerOpTimes(m, s, r);
  const double hbm = 3350e9 * 0.85;
  EXPECT_NEAR(p.forward.elementwise, 4096 * 626'688.0 / hbm, 1e-9);
  EXPECT_NEAR(p.backward.elementwise, 4096 * 1'052'672.0 / hbm, 1e-9);
  // The GEMMs and the attention core do not change.
  s.eager = false;
  EXPECT_DOUBLE_EQ(p.forward.gemm, LayerOpTimes(m, s, r).forward.gemm);
  // The final RMSNorm of the head: 4,096 x (36 - 4) more bytes a token forward.
  OpShape e = s;
  e.eager = true;
  EXPECT_NEAR(HeadOpTimes(m, e, r).forward.elementwise - HeadOpTimes(m, s, r).forward.elementwise,
              4096 * 4096 * 32.0 / hbm, 1e-9);
}

TEST(OpModel, MegatronCrossEntropyRunsEachStepOverTheWholeLogits) {
  // Megatron's vocab-parallel cross-entropy (megatron/core/tensor_parallel/cross_entropy.py; the
  // caller's logits.float()) runs each step as its own PyTorch op over the fp32 logits. Per logit,
  // forward: upcast (read 2, write 4) 6, max (read 4) 4, subtract the max in place (read 4, write 4)
  // 8, exp in place 8, sum (read 4) 4, divide in place 8 = 38 bytes, against PyTorch's
  // cross_entropy's 14 (upcast 6 + one log-softmax kernel, read 4, write 4). Backward is 14 either
  // way: the gradient times the loss gradient in place (8) and the cast back to bf16 (read 4,
  // write 2). Megatron-Core 1.7B (h = 2,048, V = 131,072), one 4,096-token sequence on an H100
  // (3,350 GB/s x 0.85): 24 x 4,096 x 131,072 bytes more = 12.885 GB = 4.525 ms more forward.
  ModelSpec m = test::Llama8b();
  m.hidden = 2048;
  m.vocab = 131072;
  const KernelRates r = RatesFor(H100(), Precision::kMixed, false, AttentionKernel::kFa3);
  OpShape s;
  s.tokens = 4096;
  s.seq = 4096;
  OpShape meg = s;
  meg.loss = LossKind::kFp32Once;
  const LayerPasses generic = HeadOpTimes(m, s, r);
  const LayerPasses megatron = HeadOpTimes(m, meg, r);
  EXPECT_NEAR(megatron.forward.elementwise - generic.forward.elementwise, 4.525e-3, 0.001e-3);
  EXPECT_DOUBLE_EQ(megatron.backward.elementwise, generic.backward.elementwise);
  EXPECT_DOUBLE_EQ(megatron.forward.gemm, generic.forward.gemm);
  // Chunking the loss (torchtune, torchtitan main) changes what is kept, not the bytes moved.
  OpShape chunked = s;
  chunked.loss = LossKind::kChunkedBackward;
  EXPECT_DOUBLE_EQ(HeadOpTimes(m, chunked, r).forward.elementwise, generic.forward.elementwise);
  // With tp = 4 each rank holds V / 4 logits a token: a quarter of the difference.
  meg.tp = 4;
  s.tp = 4;
  EXPECT_NEAR(HeadOpTimes(m, meg, r).forward.elementwise - HeadOpTimes(m, s, r).forward.elementwise,
              4.525e-3 / 4, 0.001e-3);
  // Transformer Engine's fused cross-entropy (te_fused, Megatron-Bridge): 2 bytes a logit forward
  // (one read for the online softmax) and 4 backward (a read and the gradient written over it),
  // against the generic 14 and 14: 12 x 4,096 x 131,072 bytes fewer forward = 2.2625 ms, and 10 x
  // that = 1.885 ms fewer backward.
  s.tp = 1;
  OpShape te = s;
  te.loss = LossKind::kTeFused;
  const LayerPasses fused = HeadOpTimes(m, te, r);
  EXPECT_NEAR(generic.forward.elementwise - fused.forward.elementwise, 2.2625e-3, 0.001e-3);
  EXPECT_NEAR(generic.backward.elementwise - fused.backward.elementwise, 1.8854e-3, 0.001e-3);
}

TEST(OpModel, Fp8RunsKeepTheOutputHeadInBf16WhereTheFrameworkDoes) {
  // Megatron-Core's output_layer is a ColumnParallelLinear, not a Transformer Engine module, and
  // torchtitan's float8 converter skips "output": with --fp8 the layers' GEMMs run fp8, the head's
  // bf16 (the profile key fp8_head). Llama 3 8B's head, one 8,192-token micro-batch on a B200
  // (no table: the flat fractions): forward 2 x 8,192 x 128,256 x 4,096 = 8.607 TFLOP at 1,745
  // TFLOP/s (MAMF B200 bf16) = 4.932 ms, against 2.507 ms at 3,432.5 (MAMF B200 fp8); backward
  // twice the FLOPs at the same rates.
  const ModelSpec m = test::Llama8b();
  const KernelRates r = RatesFor(test::Catalog().Find("B200"), Precision::kMixed, true, AttentionKernel::kFa3);
  OpShape s;
  s.tokens = 8192;
  s.seq = 8192;
  OpShape bf16_head = s;
  bf16_head.head_bf16 = true;
  const double flops = 2.0 * 8192 * 128256 * 4096;
  EXPECT_NEAR(HeadOpTimes(m, s, r).forward.gemm, flops / 3432.5e12, 1e-9);
  EXPECT_NEAR(HeadOpTimes(m, bf16_head, r).forward.gemm, flops / 1745e12, 1e-9);
  EXPECT_NEAR(HeadOpTimes(m, bf16_head, r).backward.gemm, 2 * flops / 1745e12, 1e-9);
  // The layers are not touched by it.
  EXPECT_DOUBLE_EQ(LayerOpTimes(m, bf16_head, r).forward.gemm, LayerOpTimes(m, s, r).forward.gemm);
  // Profiles: megatron and torchtitan keep the head bf16, the generic convention does not.
  const FrameworkCatalog frameworks = LoadFrameworkCatalog(test::DataDir());
  EXPECT_FALSE(frameworks.Find("megatron").fp8_head);
  EXPECT_FALSE(frameworks.Find("torchtitan").fp8_head);
  EXPECT_FALSE(frameworks.Find("torchtitan@0.2.2").fp8_head);
  EXPECT_TRUE(frameworks.Find("generic").fp8_head);
}

TEST(OpModel, MaterialisedScoresCostTheirBytes) {
  // GPT-style 1.7B layer (Megatron 2021): 24 heads of 96, s = 2,048, no flash attention, no dropout.
  const ModelSpec m = ParseHfConfig(
      R"({"model_type":"gpt2","n_embd":2304,"n_layer":24,"n_head":24,"n_inner":9216,"vocab_size":51200,)"
      R"("n_positions":2048,"attn_pdrop":0,"resid_pdrop":0})",
      "gpt-1.7b");
  const KernelRates r = RatesFor(test::Catalog().Find("A100 80GB SXM"), Precision::kMixed, false, AttentionKernel::kFa2);
  OpShape s;
  s.tokens = 2048;
  s.seq = 2048;
  s.flash = false;
  const LayerPasses p = LayerOpTimes(m, s, r);
  // Megatron's upper-triangular softmax reads the causal part of each row (row i: i + 1 scores,
  // 2,048 x 2,049 / 2 = 2,098,176 a head) and writes all 2,048^2 = 4,194,304: forward
  // 2 x 2,098,176 + 2 x 4,194,304 = 12,584,960 bytes a head, x 24 heads = 302,039,040; backward it
  // reads probabilities and gradients over the causal part and writes every gradient:
  // 4 x 2,098,176 + 2 x 4,194,304 = 16,781,312 a head, x 24 = 402,751,488. At 2,039 GB/s x 0.85;
  // plus the layer's own elementwise bytes per token:
  // 2 LayerNorms 2 x 2 x 2,304 x 2 + 2 residual adds 2 x 3 x 2,304 x 2 + GELU 2 x 9,216 x 2 = 82,944 bytes.
  const double hbm = 2039e9 * 0.85;
  EXPECT_NEAR(p.forward.elementwise, (302'039'040.0 + 2048 * 82'944.0) / hbm, 1e-9);
  EXPECT_NEAR(p.backward.elementwise, (402'751'488.0 + 2 * 2048 * 82'944.0) / hbm, 1e-9);
  // The score GEMM Q K^T of one head (2,048 x 2,048 x 96) writes 8 MB: memory bound on A100.
  const double qk = GemmSeconds(r, 2048, 2048, 96);
  EXPECT_NEAR(qk, ((2048.0 * 96 * 2) * 2 + 2048.0 * 2048 * 2) / hbm, 1e-12);
}

TEST(OpModel, MegatronProfileRunsTheHopperAttentionKernel) {
  const FrameworkCatalog cat = LoadFrameworkCatalog(test::DataDir());
  EXPECT_EQ(cat.Find("megatron").attention, "fa3");
  EXPECT_EQ(cat.Find("torchtitan").attention, "fa2");
  const KernelRates fa3 = RatesFor(H100(), Precision::kMixed, false, ParseAttentionKernel("fa3"));
  EXPECT_NEAR(fa3.attention_flops, 0.60 * 989.4e12, 1e3);
  // Off Hopper the kernel choice changes nothing (FlashAttention-3 is Hopper-only).
  const Gpu& a100 = test::Catalog().Find("A100 80GB SXM");
  EXPECT_EQ(RatesFor(a100, Precision::kMixed, false, AttentionKernel::kFa3).attention_flops,
            RatesFor(a100, Precision::kMixed, false, AttentionKernel::kFa2).attention_flops);
}

TEST(OpModel, StepTimeIsTheKernelsOverTheStepEfficiency) {
  // One H100, Llama-3.1-8B, one sequence of 4,096 tokens: the step's kernel time is the 32 layers'
  // forward + backward plus the head, divided by the fitted step efficiency (§3.5).
  const ModelSpec& m = test::Llama8b();
  Workload w;
  w.task = Task::kPretrain;
  w.seq = 4096;
  w.global_batch = 1;
  const Gpu& h100 = H100();
  const TrainingTime t = EstimateTrainingTime(m, w, Layout{}, h100, TimeConfig{}, 0);
  const KernelRates r = RatesFor(h100, Precision::kMixed, false, AttentionKernel::kFa2);
  OpShape s;
  s.tokens = 4096;
  s.seq = 4096;
  const LayerPasses layer = LayerOpTimes(m, s, r);
  const LayerPasses head = HeadOpTimes(m, s, r);
  const double kernels = 32 * (layer.forward.Total() + layer.backward.Total()) + head.forward.Total() +
                         head.backward.Total();
  EXPECT_NEAR(t.matmul_seconds, kernels / kTrainingStepEfficiency, 1e-12);
  EXPECT_NEAR(t.gemm_seconds + t.attention_seconds + t.elementwise_seconds, t.matmul_seconds, 1e-12);
  // The head: 4,096 x 128,256 x 4,096 projection; the loss moves 14 bytes per logit each way.
  EXPECT_NEAR(head.forward.elementwise, (4096.0 * 128256 * 14 + 4096.0 * 4 * 4096) / (3350e9 * 0.85), 1e-9);
}

}  // namespace
}  // namespace gpuplan

namespace gpuplan {
namespace {

TEST(ContextParallel, RingTransfersHideBehindAttentionOnNvlink) {
  // Llama-3.1-8B, one sequence of 8,192 tokens split over cp = 2 H100 SXM in one node.
  const ModelSpec& m = test::Llama8b();
  Workload w;
  w.task = Task::kPretrain;
  w.seq = 8192;
  w.global_batch = 1;
  Layout l;
  l.gpus = 2;
  l.cp = 2;
  const TrainingTime t = EstimateTrainingTime(m, w, l, H100(), TimeConfig{}, 0);
  // Each ring step passes a chunk of 4,096 tokens x K and V (2 x 8 heads x 128) x 2 bytes =
  // 16,777,216 bytes over NVLink (900 / 2 GB/s x 0.8 = 360 GB/s) + 5 us: 51.603 us. One step
  // forward, twice the bytes backward, 32 layers: 32 x 3 x 51.603 us = 4.954 ms.
  const double step = 16'777'216.0 / 360e9 + 5e-6;
  EXPECT_NEAR(t.cp_seconds_total, 32 * 3 * step, 1e-9);
  // The attention core of a rank's 4,096 queries over 8,192 keys takes 0.8 ms a layer: all hidden.
  EXPECT_EQ(t.cp_seconds, 0.0);
  // Each rank holds half the tokens: half the activations of one GPU running the whole sequence.
  Layout one;
  const MemoryEstimate a = EstimateMemory(m, w, one);
  const MemoryEstimate b = EstimateMemory(m, w, l);
  EXPECT_NEAR(b.per_gpu.activations.value, a.per_gpu.activations.value / 2, 1.0);
  // Across nodes on 1 GbE (tp x cp = 16 > 8 GPUs a node) the transfers are exposed.
  Layout wide;
  wide.gpus = 16;
  wide.cp = 16;
  TimeConfig slow;
  slow.network = ParseNetwork("1gbe");
  EXPECT_GT(EstimateTrainingTime(m, w, wide, H100(), slow, 0).cp_seconds, 0.0);
}

TEST(ContextParallel, LayoutChecksNameTheFlag) {
  const ModelSpec& m = test::Llama8b();
  Workload w;
  w.task = Task::kPretrain;
  w.seq = 8190;  // not a multiple of 2 x cp
  Layout l;
  l.gpus = 2;
  l.cp = 2;
  try {
    ValidateLayout(m, w, l);
    FAIL() << "seq 8190 over cp 2";
  } catch (const InputError& e) {
    EXPECT_EQ(test::AsCli(e).field(), "--cp");
  }
  w.seq = 8192;
  w.flash_attn = false;
  EXPECT_THROW(ValidateLayout(m, w, l), InputError);
}

}  // namespace
}  // namespace gpuplan

namespace gpuplan {
namespace {

TEST(TensorParallelOverlap, HidesCollectivesBehindTheGemms) {
  // Llama-3.1-8B on 8 H100, tp 8, 4,096 tokens: with --tp-overlap the exposed collective time is
  // what 80% of the GEMM time does not cover (docs/time-model.md §4).
  Workload w;
  w.task = Task::kPretrain;
  w.seq = 4096;
  w.global_batch = 1;
  Layout l;
  l.gpus = 8;
  l.tp = 8;
  l.sp = true;
  TimeConfig off;
  const TrainingTime a = EstimateTrainingTime(test::Llama8b(), w, l, H100(), off, 0);
  EXPECT_DOUBLE_EQ(a.tp_seconds, a.tp_seconds_total);
  TimeConfig on;
  on.tp_overlap = true;
  const TrainingTime b = EstimateTrainingTime(test::Llama8b(), w, l, H100(), on, 0);
  EXPECT_DOUBLE_EQ(b.tp_seconds_total, a.tp_seconds_total);
  EXPECT_NEAR(b.tp_seconds, std::max(0.0, a.tp_seconds_total - 0.8 * a.gemm_seconds), 1e-15);
  EXPECT_LT(b.step_seconds, a.step_seconds);
}

TEST(TensorParallelFp8Gather, GathersMoveFp8AndReduceScattersBf16) {
  // Llama-3.1-8B (32 layers, hidden 4,096) on 8 H100 SXM, tp 8 with sequence parallelism, one
  // sequence of 4,096 tokens, no recomputation: 4 all-reduces' worth a layer (2 forward, 2
  // backward), each an all-gather plus a reduce-scatter of 4,096 x 4,096 x 2 = 33,554,432 bytes.
  // NVLink 900 GB/s both ways -> 450 one way x 0.8 = 360e9 B/s; 5 us a ring step (§4).
  // bf16: 2 x 7/8 x 33,554,432 / 360e9 + 14 x 5 us = 233.1 us a pair, x 128 = 29.84 ms.
  // fp8 gathers (torchao's float8 tensor-parallel styles): the gather moves 16,777,216 bytes,
  // 7/8 x (16,777,216 + 33,554,432) / 360e9 + 14 x 5 us = 192.3 us a pair, x 128 = 24.62 ms.
  Workload w;
  w.task = Task::kPretrain;
  w.seq = 4096;
  w.global_batch = 1;
  w.fp8 = true;
  Layout l;
  l.gpus = 8;
  l.tp = 8;
  l.sp = true;
  const double pair_bf16 = 2.0 * 7.0 / 8.0 * 33554432.0 / 360e9 + 14 * 5e-6;
  const double pair_fp8 = 7.0 / 8.0 * (16777216.0 + 33554432.0) / 360e9 + 14 * 5e-6;
  TimeConfig bf16;
  const TrainingTime a = EstimateTrainingTime(test::Llama8b(), w, l, H100(), bf16, 0);
  EXPECT_NEAR(a.tp_seconds_total, 128 * pair_bf16, 1e-9);
  TimeConfig gather;
  gather.fp8_tp_gather = true;
  const TrainingTime b = EstimateTrainingTime(test::Llama8b(), w, l, H100(), gather, 0);
  EXPECT_NEAR(b.tp_seconds_total, 128 * pair_fp8, 1e-9);
  EXPECT_NEAR(b.tp_seconds_total, 0.02462, 1e-5);
  EXPECT_LT(b.step_seconds, a.step_seconds);
  // A bf16 run gathers in bf16 whatever the framework would do with fp8 linears.
  w.fp8 = false;
  EXPECT_NEAR(EstimateTrainingTime(test::Llama8b(), w, l, H100(), gather, 0).tp_seconds_total, 128 * pair_bf16, 1e-9);
}

}  // namespace
}  // namespace gpuplan

namespace gpuplan {
namespace {

TEST(GemmTable, InterpolatesInLogSpaceAndHoldsTheRangesEnds) {
  const std::string file = test::Fixture("gemm/synthetic-h200.yaml");
  const GemmTable t = GemmTable::Load(file);
  // Grid points exactly.
  EXPECT_DOUBLE_EQ(*t.Tflops(false, 4096, 1024, 4096), 310.0);
  // m = 2048 is halfway between 1024 and 4096 in log2, n = 2048 too, k at 4096:
  // 100 + 200 x 0.5 + 40 x 0.5 + 10 = 230.
  EXPECT_NEAR(*t.Tflops(false, 2048, 2048, 4096), 230.0, 1e-9);
  // Below the measured m range m is held at 1024 (n and k halfway): 100 + 40 x 0.5 + 10 x 0.5 = 125;
  // above it at 4096. No fp8 rows: nothing (the flat fraction and the roofline decide).
  EXPECT_NEAR(*t.Tflops(false, 512, 2048, 2048), 125.0, 1e-9);
  EXPECT_NEAR(*t.Tflops(false, 65536, 2048, 2048), 325.0, 1e-9);
  EXPECT_FALSE(t.Tflops(true, 2048, 2048, 2048).has_value());
  // The table belongs to the card whose alias is its device name, and sets the GEMM time.
  GemmTables tables;
  tables.by_name.emplace(NormalizeName(t.gpu), t);  // as LoadGemmTables keys it
  const Gpu& h200 = test::Catalog().Find("H200 SXM 141GB");
  ASSERT_EQ(tables.For(h200), &tables.by_name.begin()->second);
  EXPECT_EQ(tables.For(H100()), nullptr);
  const KernelRates r = RatesFor(h200, Precision::kMixed, false, AttentionKernel::kFa2, &tables);
  EXPECT_NEAR(GemmSeconds(r, 2048, 2048, 4096), 2.0 * 2048 * 2048 * 4096 / 230e12, 1e-15);
  // Beyond it: the largest measured corner's rate, 350 TFLOP/s (the memory time, 402.7 MB at
  // 4.8 TB/s x 0.85 = 98.7 us, is below the 3.14 ms of compute).
  EXPECT_NEAR(GemmSeconds(r, 8192, 8192, 8192), 2.0 * 8192.0 * 8192 * 8192 / 350e12, 1e-12);
  // A decode-sized GEMM (m = 8 tokens) is bounded by memory, not by the held rate: reading the
  // 4096 x 4096 weights (33.6 MB) at 4,080 GB/s takes 8.2 us; 2 x 8 x 4096^2 at 150 TFLOP/s (the
  // [1024, 4096, 4096] corner) 1.8 us.
  const double bytes = (8.0 * 4096 + 4096.0 * 4096) * 2 + 8.0 * 4096 * 2;
  EXPECT_NEAR(GemmSeconds(r, 8, 4096, 4096), bytes / (h200.memory_bandwidth_gb_s * 1e9 * 0.85), 1e-12);
}

// fp8 with fast accumulation: the forward product reads the `fp8_fast_accum` rows, the two
// gradient GEMMs the exact `fp8` rows (Transformer Engine's recipes: fprop use_split_accumulator
// False, dgrad and wgrad True); a table without fast rows answers the forward from its fp8 rows.
TEST(GemmTable, ForwardFp8ReadsTheFastAccumulationRows) {
  const std::string both =
      "gpu: \"NVIDIA H200\"\npeak_tflops_fp8: 1979\n"
      "fp8:\n  - [4096, 4096, 4096, 1200]\n  - [8192, 4096, 4096, 1250]\n"
      "fp8_fast_accum:\n  - [4096, 4096, 4096, 1500]\n  - [8192, 4096, 4096, 1600]\n";
  const GemmTable t = GemmTable::Parse(both, "fast.yaml");
  EXPECT_DOUBLE_EQ(*t.Tflops(GemmTable::kFp8, 4096, 4096, 4096), 1200.0);
  EXPECT_DOUBLE_EQ(*t.Tflops(GemmTable::kFp8FastAccum, 4096, 4096, 4096), 1500.0);
  EXPECT_FALSE(t.Tflops(GemmTable::kBf16, 4096, 4096, 4096).has_value());
  // The memo keeps the two modes apart: the same shape again in each mode.
  EXPECT_DOUBLE_EQ(*t.Tflops(GemmTable::kFp8, 4096, 4096, 4096), 1200.0);
  EXPECT_DOUBLE_EQ(*t.Tflops(GemmTable::kFp8FastAccum, 4096, 4096, 4096), 1500.0);

  GemmTables tables;
  tables.by_name.emplace(NormalizeName(t.gpu), t);
  const Gpu& h200 = test::Catalog().Find("H200 SXM 141GB");
  const KernelRates r = RatesFor(h200, Precision::kMixed, true, AttentionKernel::kFa2, &tables);
  const double flops = 2.0 * 4096 * 4096 * 4096;  // 137.4 GFLOP: 91.6 us at 1,500 TFLOP/s, 114.5 at 1,200
  EXPECT_NEAR(GemmSeconds(r, 4096, 4096, 4096, /*forward=*/true), flops / 1500e12, 1e-12);
  EXPECT_NEAR(GemmSeconds(r, 4096, 4096, 4096), flops / 1200e12, 1e-12);

  // Without fast rows the forward GEMM takes the exact rows' rate, never one not measured.
  const GemmTable exact = GemmTable::Parse("gpu: x\nfp8:\n  - [4096, 4096, 4096, 1200]\n", "exact.yaml");
  EXPECT_DOUBLE_EQ(*exact.Tflops(GemmTable::kFp8FastAccum, 4096, 4096, 4096), 1200.0);
  // Fast rows alone would leave the gradient GEMMs nothing: refused; above the fp8 peak: refused.
  try {
    GemmTable::Parse("gpu: x\nbf16:\n  - [1, 1, 1, 1]\nfp8_fast_accum:\n  - [4096, 4096, 4096, 1500]\n", "f.yaml");
    FAIL() << "fast rows without fp8 rows";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "fp8_fast_accum");
  }
  try {
    GemmTable::Parse("gpu: x\npeak_tflops_fp8: 1979\nfp8:\n  - [1, 1, 1, 1]\nfp8_fast_accum:\n  - [4096, 4096, 4096, 2000]\n",
                     "f.yaml");
    FAIL() << "a fast row above the fp8 peak";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "fp8_fast_accum[0]");
    EXPECT_EQ(e.line(), 6);
    EXPECT_NE(std::string(e.what()).find("peak_tflops_fp8"), std::string::npos) << e.what();
  }
}

// A published sweep of the exact mode alone gives the fast mode as one scale of its fp8 rows
// (`fp8_fast_accum_scale`, scripts/gemm/te_fast_accum.py): the reader derives the rows, each
// capped at the fp8 peak. By hand: 800 x 1.1882 = 950.56 TFLOP/s; with peak_tflops_fp8 900, 900.
TEST(GemmTable, FastAccumulationScaleOfTheFp8Rows) {
  const std::string rows = "fp8:\n  - [4096, 4096, 4096, 800]\n  - [8192, 4096, 4096, 800]\n";
  const GemmTable t = GemmTable::Parse("gpu: x\n" + rows + "fp8_fast_accum_scale: 1.1882\n", "s.yaml");
  EXPECT_DOUBLE_EQ(t.fp8_fast_scale, 1.1882);
  EXPECT_NEAR(*t.Tflops(GemmTable::kFp8FastAccum, 4096, 4096, 4096), 950.56, 1e-9);
  EXPECT_NEAR(*t.Tflops(GemmTable::kFp8FastAccum, 6000, 4096, 4096), 950.56, 1e-9);
  EXPECT_DOUBLE_EQ(*t.Tflops(GemmTable::kFp8, 4096, 4096, 4096), 800.0);  // the gradient GEMMs' rows kept
  const GemmTable capped =
      GemmTable::Parse("gpu: x\npeak_tflops_fp8: 900\n" + rows + "fp8_fast_accum_scale: 1.1882\n", "s.yaml");
  EXPECT_DOUBLE_EQ(*capped.Tflops(GemmTable::kFp8FastAccum, 8192, 4096, 4096), 900.0);
  // The repository's H100 table: fp8 at 8192^3 is 1,140.8 TFLOP/s (mamf-finder), the fast mode
  // 1,140.8 x 1.1212 = 1,279.07 (the rows the script wrote before the key, rounded: 1,279.1).
  const GemmTable h100 = GemmTable::Load(test::DataDir() + "/gemm/h100-sxm.yaml");
  EXPECT_DOUBLE_EQ(h100.fp8_fast_scale, 1.1212);
  EXPECT_NEAR(*h100.Tflops(GemmTable::kFp8FastAccum, 8192, 8192, 8192), 1279.07, 0.01);
  EXPECT_EQ(h100.fp8_fast.size(), h100.fp8.size());

  // Refused, each at the key: rows and a scale both; a scale without fp8 rows; below 1 (fast
  // accumulation skips work: never slower) or above 2.
  const std::pair<std::string, std::string> bad[] = {
      {"gpu: x\n" + rows + "fp8_fast_accum:\n  - [4096, 4096, 4096, 900]\nfp8_fast_accum_scale: 1.1\n", "give one"},
      {"gpu: x\nbf16:\n  - [1, 1, 1, 1]\nfp8_fast_accum_scale: 1.1\n", "no fp8 rows"},
      {"gpu: x\n" + rows + "fp8_fast_accum_scale: 0.9\n", "between 1 and 2"},
      {"gpu: x\n" + rows + "fp8_fast_accum_scale: 2.5\n", "between 1 and 2"},
      {"gpu: x\n" + rows + "fp8_fast_accum_scale: fast\n", "expected a number"},
  };
  for (const auto& [text, message] : bad) {
    try {
      GemmTable::Parse(text, "s.yaml");
      ADD_FAILURE() << "accepted: " << text;
    } catch (const InputError& e) {
      EXPECT_EQ(e.field(), "fp8_fast_accum_scale") << text;
      EXPECT_EQ(e.file(), "s.yaml");
      EXPECT_GT(e.line(), 0) << text;
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  }
}

TEST(GemmTable, RememberedRatesAreTheLookupsOwn) {
  // The per-thread memo (1,024 slots) is a speed-up only: a few thousand shapes, many sharing a
  // slot, each asked twice of one table, once of an identical one loaded afresh (another id:
  // nothing remembered) and once more, in reverse order, of a third, give the same rate every
  // time (a memo keyed on less than the whole shape would answer differently by order).
  const std::string file = test::Fixture("gemm/synthetic-h200.yaml");
  const GemmTable a = GemmTable::Load(file);
  std::vector<std::array<double, 3>> shapes;
  for (double m = 256; m <= 65536; m *= 1.25) {
    for (double n = 512; n <= 16384; n *= 1.4) {
      for (double k = 512; k <= 16384; k *= 1.5) {
        shapes.push_back({m, n, k});
      }
    }
  }
  ASSERT_GT(shapes.size(), 1024u);
  std::vector<double> first;
  for (const auto& sh : shapes) {
    first.push_back(*a.Tflops(false, sh[0], sh[1], sh[2]));
  }
  const GemmTable b = GemmTable::Load(file);
  ASSERT_NE(a.id, b.id);
  for (size_t i = 0; i < shapes.size(); ++i) {
    EXPECT_EQ(*a.Tflops(false, shapes[i][0], shapes[i][1], shapes[i][2]), first[i]) << i;
    EXPECT_EQ(*b.Tflops(false, shapes[i][0], shapes[i][1], shapes[i][2]), first[i]) << i;
  }
  // Asked in the reverse order of a third copy, where other shapes were in the slots before.
  const GemmTable c = GemmTable::Load(file);
  for (size_t i = shapes.size(); i-- > 0;) {
    EXPECT_EQ(*c.Tflops(false, shapes[i][0], shapes[i][1], shapes[i][2]), first[i]) << i;
  }
  EXPECT_DOUBLE_EQ(*a.Tflops(false, 4096, 1024, 4096), 310.0);
  EXPECT_DOUBLE_EQ(*b.Tflops(false, 4096, 1024, 4096), 310.0);
}

TEST(GemmTable, BadRowsNameFileLineAndField) {
  try {
    GemmTable::Parse("gpu: x\nbf16:\n  - [1, 2, 3]\n", "t.yaml");
    FAIL() << "a row of three";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "t.yaml");
    EXPECT_EQ(e.line(), 3);
    EXPECT_EQ(e.field(), "bf16[0]");
  }
  EXPECT_THROW(GemmTable::Parse("gpu: x\n", "t.yaml"), InputError);                      // no rows
  EXPECT_THROW(GemmTable::Parse("gpu: x\nbf16:\n  - [1, 2, 3, -4]\n", "t.yaml"), InputError);  // not positive
  EXPECT_THROW(GemmTable::Parse("gpu: x\nbf16:\n  - [1, 2, 3, 1e308]\n", "t.yaml"), InputError);  // over 100,000 TFLOP/s
  EXPECT_THROW(GemmTable::Parse("gpu: x\nbf16:\n  - [1e12, 2, 3, 4]\n", "t.yaml"), InputError);  // a side over 10^7
  // Above the file's own peak (OpenXLA's sm_90 fp8 row at 4096^3: 2,423.8 TFLOP/s on a card of
  // 1,978.9): refused on the rate's line; at the peak itself, taken.
  try {
    GemmTable::Parse("gpu: x\npeak_tflops_bf16: 989.4\npeak_tflops_fp8: 1978.9\nfp8:\n  - [4096, 4096, 4096, 1291.7]\n"
                     "  - [4096, 4096, 8192, 2423.8]\n",
                     "peak.yaml");
    FAIL() << "a rate above the peak";
  } catch (const InputError& e) {
    EXPECT_EQ(e.line(), 6);
    EXPECT_EQ(e.field(), "fp8[1]");
    EXPECT_NE(std::string(e.what()).find("above the card's dense peak (1978.9"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(GemmTable::Parse("gpu: x\npeak_tflops_bf16: 989.4\nbf16:\n  - [4096, 4096, 4096, 989.4]\n", "t.yaml"));
  // 160 rows with every size distinct make a dense grid of 160^3 = 4,096,000 shapes: refused
  // (the bound is 4,000,000), 158 rows (3,944,312) are not.
  auto scattered = [](int rows) {
    std::string text = "gpu: x\nbf16:\n";
    for (int i = 1; i <= rows; ++i) {
      text += fmt::format("  - [{}, {}, {}, 100]\n", i, i + 1000, i + 2000);
    }
    return text;
  };
  try {
    GemmTable::Parse(scattered(160), "big.yaml");
    FAIL() << "a grid of 160^3";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "bf16");
    EXPECT_NE(std::string(e.what()).find("160 m x 160 n x 160 k sizes is more than 4000000 shapes"), std::string::npos)
        << e.what();
  }
  EXPECT_NO_THROW(GemmTable::Parse(scattered(158), "ok.yaml"));
}

// The committed H100 table is the published sweep it says it is: spot values against the logs'
// own lines (github.com/shisa-ai/mamf-finder@88e2ae6, gpu3/gpu0-2025-01-05-06-20-34.txt, the
// median column: 1024x1024x1024 134.9, 1024x4096x4096 657.7 on GPU 0; the table holds the
// median over 8 GPUs, so within a few percent of GPU 0's), and our own sweep of a card replaces it.
TEST(GemmTable, PublishedH100TableStandsForHopperAndOurOwnSweepReplacesIt) {
  const GemmTables tables = LoadGemmTables(test::DataDir());
  const GemmTable* t = tables.For(H100());
  ASSERT_NE(t, nullptr);
  EXPECT_FALSE(t->source.empty());
  EXPECT_EQ(t->basis, "published sweep, data/gemm/h100-sxm.yaml");
  EXPECT_NEAR(*t->Tflops(false, 1024, 1024, 1024), 134.9, 134.9 * 0.03);
  EXPECT_NEAR(*t->Tflops(false, 1024, 4096, 4096), 657.7, 657.7 * 0.03);
  EXPECT_EQ(t->bf16.size(), 15u * 15 * 15);
  EXPECT_EQ(t->fp8.size(), 15u * 15 * 15);

  // The table stands for every Hopper card without its own, at the same fraction of that card's
  // peak: H800 SXM (the same 989.4 TFLOP/s) takes it as it is, H100 PCIe (756) x 756 / 989.4,
  // in fp8 H20 (296) x 296 / 1978.9; A100 (Ampere) takes none.
  bool own = true;
  EXPECT_EQ(tables.For(test::Catalog().Find("H800 SXM"), &own), t);
  EXPECT_FALSE(own);
  EXPECT_EQ(tables.For(H100(), &own), t);
  EXPECT_TRUE(own);
  EXPECT_EQ(tables.For(test::Catalog().Find("A100 80GB SXM")), nullptr);
  const double flops = 2.0 * 4096 * 4096 * 4096;
  const double at_4096 = *t->Tflops(false, 4096, 4096, 4096);
  const double at_4096_fp8 = *t->Tflops(true, 4096, 4096, 4096);
  const auto seconds = [&](const char* card, bool fp8) {
    const KernelRates r = RatesFor(test::Catalog().Find(card), Precision::kMixed, fp8, AttentionKernel::kFa2, &tables);
    return GemmSeconds(r, 4096, 4096, 4096);
  };
  EXPECT_NEAR(seconds("H800 SXM", false), flops / (at_4096 * 1e12), 1e-12);
  EXPECT_NEAR(seconds("H100 PCIe 80GB", false), flops / (at_4096 * 756.0 / 989.4 * 1e12), 1e-12);
  EXPECT_NEAR(seconds("H20", true), flops / (at_4096_fp8 * 296.0 / 1978.9 * 1e12), 1e-12);

  // For remembers its last answer per thread; a copy answers from its own tables, also where it
  // lives at the address of a copy that is gone.
  for (int i = 0; i < 3; ++i) {
    auto copy = std::make_unique<GemmTables>(tables);
    const GemmTable* found = copy->For(H100());
    ASSERT_NE(found, nullptr);
    EXPECT_EQ(found, &copy->by_name.begin()->second);
  }

  // A data folder with the published table and one of our own for the same card: ours is used,
  // whichever file sorts first; two published tables of one card are an error.
  char pattern[] = "/tmp/gpuplan-gemm-XXXXXX";
  ASSERT_NE(mkdtemp(pattern), nullptr);
  const std::string dir = pattern;
  std::filesystem::create_directories(dir + "/gemm");
  auto write = [](const std::string& path, const std::string& text) { std::ofstream(path) << text; };
  const std::string published = "gpu: \"NVIDIA H100 80GB HBM3\"\nsource: \"somewhere\"\nbf16:\n  - [1024, 1024, 1024, 100]\n";
  const std::string ours = "gpu: \"NVIDIA H100 80GB HBM3\"\nbf16:\n  - [1024, 1024, 1024, 200]\n";
  write(dir + "/gemm/a-published.yaml", published);
  write(dir + "/gemm/b-ours.yaml", ours);
  EXPECT_DOUBLE_EQ(*LoadGemmTables(dir).For(H100())->Tflops(false, 1024, 1024, 1024), 200.0);
  std::filesystem::remove(dir + "/gemm/b-ours.yaml");
  write(dir + "/gemm/0-ours.yaml", ours);
  EXPECT_DOUBLE_EQ(*LoadGemmTables(dir).For(H100())->Tflops(false, 1024, 1024, 1024), 200.0);
  write(dir + "/gemm/c-published.yaml", published);
  std::filesystem::remove(dir + "/gemm/0-ours.yaml");
  EXPECT_THROW(LoadGemmTables(dir), InputError);
  EXPECT_THROW(SharedGemmTables(dir), InputError);

  // Read once per folder and shared; read again when a table is added, removed or changed.
  std::filesystem::remove(dir + "/gemm/c-published.yaml");
  const auto first = SharedGemmTables(dir);
  EXPECT_EQ(SharedGemmTables(dir), first);
  EXPECT_DOUBLE_EQ(*first->For(H100())->Tflops(false, 1024, 1024, 1024), 100.0);
  write(dir + "/gemm/b-ours.yaml", ours);
  const auto second = SharedGemmTables(dir);
  EXPECT_NE(second, first);
  EXPECT_DOUBLE_EQ(*second->For(H100())->Tflops(false, 1024, 1024, 1024), 200.0);
  EXPECT_DOUBLE_EQ(*first->For(H100())->Tflops(false, 1024, 1024, 1024), 100.0);  // a holder keeps its set
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace gpuplan

namespace gpuplan {
namespace {

TEST(PipelineInterleaving, SendsVTimesAndOverlapsThem) {
  // Llama-3.1-8B on 4 H100, pp 4, 8 micro-batches: interleaving (vpp 2) doubles the sends and
  // hides them behind 80% of the compute (docs/time-model.md §4); 1F1B waits for each.
  Workload w;
  w.task = Task::kPretrain;
  w.seq = 4096;
  w.global_batch = 8;
  Layout l;
  l.gpus = 4;
  l.pp = 4;
  const TrainingTime plain = EstimateTrainingTime(test::Llama8b(), w, l, H100(), TimeConfig{}, 0);
  EXPECT_DOUBLE_EQ(plain.pp_seconds, plain.pp_seconds_total);
  // Each send: 4,096 tokens x 4,096 x 2 bytes = 33.5 MB over NVLink at 360 GB/s + 5 us; 8
  // micro-batches x 2 directions.
  EXPECT_NEAR(plain.pp_seconds_total, 8 * 2 * (4096.0 * 4096 * 2 / 360e9 + 5e-6), 1e-9);
  l.vpp = 2;
  const TrainingTime inter = EstimateTrainingTime(test::Llama8b(), w, l, H100(), TimeConfig{}, 0);
  EXPECT_NEAR(inter.pp_seconds_total, 2 * plain.pp_seconds_total, 1e-12);
  EXPECT_NEAR(inter.pp_seconds, std::max(0.0, inter.pp_seconds_total - 0.8 * inter.matmul_seconds), 1e-15);
  EXPECT_NEAR(inter.bubble_seconds, plain.bubble_seconds / 2, plain.bubble_seconds * 1e-9 + 1e-9);
}

TEST(PipelineInterleaving, StagesAcrossNodesShareTheNodesNicsAndMayWaitForEachSend) {
  // Llama-3.1-8B on 32 H100 (4 nodes of 8), tp 8 with sequence parallelism, pp 4: each stage is a
  // node, and its 8 GPUs each send their 1/8 of a micro-batch's activations at once through the
  // node's 8 x 400 Gb/s (as cp and ep sends do, docs/time-model.md §4). By hand: 4,096 x 4,096 x 2
  // / 8 = 4.19 MB a GPU at 8 x 400 Gb/s = 400 GB/s x 0.96 (InfiniBand, nccl#1576) / 8 = 48 GB/s +
  // 15 us (102 us, not the 24.6 us of one GPU owning the node's link); 8 micro-batches x 2 ways.
  Workload w;
  w.task = Task::kPretrain;
  w.seq = 4096;
  w.global_batch = 8;
  Layout l;
  l.gpus = 32;
  l.tp = 8;
  l.sp = true;
  l.pp = 4;
  TimeConfig c;
  c.network = ParseNetwork("ib-400g");
  const TrainingTime plain = EstimateTrainingTime(test::Llama8b(), w, l, H100(), c, 0);
  const double send = 4096.0 * 4096 * 2 / 8 / (8 * 400e9 / 8 * 0.96 / 8) + 15e-6;
  EXPECT_NEAR(plain.pp_seconds_total, 8 * 2 * send, 1e-9);
  EXPECT_DOUBLE_EQ(plain.pp_seconds, plain.pp_seconds_total);
  // Interleaved: twice the sends, hidden behind 80% of the compute (Megatron-Core's
  // overlap_p2p_comm), or each one waited for (pp_overlap false: Megatron-LM's 2021 schedules).
  l.vpp = 2;
  const TrainingTime hidden = EstimateTrainingTime(test::Llama8b(), w, l, H100(), c, 0);
  EXPECT_NEAR(hidden.pp_seconds_total, 8 * 2 * 2 * send, 1e-9);
  EXPECT_NEAR(hidden.pp_seconds, std::max(0.0, hidden.pp_seconds_total - 0.8 * hidden.matmul_seconds), 1e-15);
  c.pp_overlap = false;
  const TrainingTime waited = EstimateTrainingTime(test::Llama8b(), w, l, H100(), c, 0);
  EXPECT_DOUBLE_EQ(waited.pp_seconds, waited.pp_seconds_total);
  EXPECT_NEAR(waited.step_seconds - hidden.step_seconds, waited.pp_seconds - hidden.pp_seconds, 1e-12);
}

}  // namespace
}  // namespace gpuplan
