// Memory components against values worked out by hand from the papers' formulas:
// ZeRO (Rajbhandari et al. 2020) model states, Korthikanti et al. 2022 activations, the KV
// cache formula, QLoRA's NF4 + double quantisation, 1F1B pipeline in-flight micro-batches.
#include <gtest/gtest.h>

#include <algorithm>

#include "catalog/gpu_catalog.h"
#include "catalog/model.h"
#include "fit/advisor.h"
#include "fit/memory_model.h"
#include "test_paths.h"

namespace gpuplan {
namespace {

const ModelSpec& Llama8b() {
  static const ModelSpec m = LoadHfConfig(test::Preset("Llama-3.1-8B"));
  return m;
}
constexpr double kP = 8'030'261'248.0;     // Llama-3.1-8B parameters
constexpr double kV = 128256, kH = 4096;  // vocab, hidden
constexpr double kNormParams = (2 * 32 + 1) * 4096.0;

Workload Full(Precision p = Precision::kMixed, Optimizer o = Optimizer::kAdamW) {
  Workload w;
  w.task = Task::kFull;
  w.precision = p;
  w.optimizer = o;
  return w;
}

TEST(MemoryModel, MixedPrecisionAdamIs16BytesPerParameter) {
  const MemoryEstimate e = EstimateMemory(Llama8b(), Full(), Layout{});
  EXPECT_DOUBLE_EQ(e.per_gpu.weights.value, 2 * kP);
  EXPECT_DOUBLE_EQ(e.per_gpu.gradients.value, 2 * kP);
  EXPECT_DOUBLE_EQ(e.per_gpu.optimizer.value, 12 * kP);
  EXPECT_EQ(e.params_trainable, static_cast<int64_t>(kP));
}

TEST(MemoryModel, Fp32AndPureBf16States) {
  const MemoryEstimate fp32 = EstimateMemory(Llama8b(), Full(Precision::kFp32), Layout{});
  EXPECT_DOUBLE_EQ((fp32.per_gpu.weights + fp32.per_gpu.gradients + fp32.per_gpu.optimizer).value, 16 * kP);
  const MemoryEstimate bf16 = EstimateMemory(Llama8b(), Full(Precision::kBf16), Layout{});
  EXPECT_DOUBLE_EQ((bf16.per_gpu.weights + bf16.per_gpu.gradients + bf16.per_gpu.optimizer).value, 8 * kP);
}

TEST(MemoryModel, OtherOptimizers) {
  // bitsandbytes 8-bit AdamW: 2 one-byte states + fp32 absmax per 2048-block each; + fp32 master.
  const MemoryEstimate a8 = EstimateMemory(Llama8b(), Full(Precision::kMixed, Optimizer::kAdamW8bit), Layout{});
  EXPECT_DOUBLE_EQ(a8.per_gpu.optimizer.value, kP * (2 + 8.0 / 2048) + 4 * kP);
  // SGD with momentum in mixed precision: fp32 momentum + fp32 master.
  const MemoryEstimate sgd = EstimateMemory(Llama8b(), Full(Precision::kMixed, Optimizer::kSgd), Layout{});
  EXPECT_DOUBLE_EQ(sgd.per_gpu.optimizer.value, 8 * kP);
  // Adafactor (pure bf16, so no master): (rows + cols) fp32 values per matrix, n per vector.
  // Llama-3.1-8B matrices per layer: q 4096x4096, k,v 1024x4096, o 4096x4096, gate/up
  // 14336x4096, down 4096x14336; embedding and head 128256x4096; 65 norm vectors of 4096.
  const double per_layer = (8192 + 5120 + 5120 + 8192 + 3 * 18432);
  const double expected = 4 * (32 * per_layer + 2 * (kV + kH) + kNormParams);
  const MemoryEstimate af = EstimateMemory(Llama8b(), Full(Precision::kBf16, Optimizer::kAdafactor), Layout{});
  EXPECT_DOUBLE_EQ(af.per_gpu.optimizer.value, expected);
}

TEST(MemoryModel, ZeroStagesDivideByDataParallelSize) {
  Layout l;
  l.gpus = 8;
  l.zero = 1;
  MemoryEstimate e = EstimateMemory(Llama8b(), Full(), l);
  EXPECT_DOUBLE_EQ(e.per_gpu.optimizer.value, 12 * kP / 8);
  EXPECT_DOUBLE_EQ(e.per_gpu.gradients.value, 2 * kP);
  l.zero = 2;
  e = EstimateMemory(Llama8b(), Full(), l);
  EXPECT_DOUBLE_EQ(e.per_gpu.gradients.value, 2 * kP / 8);
  EXPECT_DOUBLE_EQ(e.per_gpu.weights.value, 2 * kP);
  l.zero = 3;
  e = EstimateMemory(Llama8b(), Full(), l);
  // + the gathered working set: the largest unit (the 128256 x 4096 embedding), current and prefetched.
  EXPECT_DOUBLE_EQ(e.per_gpu.weights.value, 2 * kP / 8 + 2 * 2 * kV * kH);
  l.offload_optimizer = true;
  e = EstimateMemory(Llama8b(), Full(), l);
  EXPECT_DOUBLE_EQ(e.per_gpu.optimizer.value, 0);
  EXPECT_DOUBLE_EQ(e.cpu_offload.value, 12 * kP / 8);
}

TEST(MemoryModel, TensorParallelSplitsAllButNorms) {
  Layout l;
  l.gpus = 2;
  l.tp = 2;
  const MemoryEstimate e = EstimateMemory(Llama8b(), Full(), l);
  EXPECT_DOUBLE_EQ(e.per_gpu.weights.value, 2 * ((kP - kNormParams) / 2 + kNormParams));
}

ModelSpec GptLike(int layers) {
  // GPT-style block as in Korthikanti et al.: LayerNorm, MHA, 4h GELU MLP, dropout 0.1.
  const std::string cfg = R"({"model_type":"gpt2","n_embd":1024,"n_head":16,"n_layer":)" + std::to_string(layers) +
                          R"(,"n_positions":2048,"vocab_size":50304,"attn_pdrop":0.1,"resid_pdrop":0.1})";
  return ParseHfConfig(cfg, "inline");
}

double PerLayerActivations(const Workload& w, const Layout& l) {
  return EstimateMemory(GptLike(2), w, l).per_gpu.activations.value -
         EstimateMemory(GptLike(1), w, l).per_gpu.activations.value;
}

TEST(MemoryModel, KorthikantiActivationsPerLayer) {
  Workload w = Full();
  w.seq = 2048;
  w.micro_batch = 2;
  w.flash_attn = false;
  const double s = 2048, b = 2, h = 1024, a = 16;
  // Korthikanti et al. 2022, eq. (1): sbh(34 + 5as/h) bytes per layer.
  EXPECT_DOUBLE_EQ(PerLayerActivations(w, Layout{}), s * b * h * (34 + 5 * a * s / h));
  // Tensor parallel t=4 without sequence parallelism, eq. (2): sbh(10 + 24/t + 5as/(ht)).
  Layout tp;
  tp.gpus = 4;
  tp.tp = 4;
  EXPECT_DOUBLE_EQ(PerLayerActivations(w, tp), s * b * h * (10 + 24.0 / 4 + 5 * a * s / (h * 4)));
  // With sequence parallelism, eq. (4): sbh/t (34 + 5as/h).
  tp.sp = true;
  EXPECT_DOUBLE_EQ(PerLayerActivations(w, tp), s * b * h / 4 * (34 + 5 * a * s / h));
  // Selective recomputation, eq. (6) with t=1: 34 sbh.
  w.recompute = Recompute::kSelective;
  EXPECT_DOUBLE_EQ(PerLayerActivations(w, Layout{}), 34 * s * b * h);
  // Full recomputation: only the layer input, 2sbh.
  w.recompute = Recompute::kFull;
  EXPECT_DOUBLE_EQ(PerLayerActivations(w, Layout{}), 2 * s * b * h);
}

TEST(MemoryModel, OpLevelRecomputationKeepsEveryOtherMatmulOutput) {
  // torchtitan's op policy on Llama-3.1-8B (docs/memory-model.md §4.3), flash attention, one
  // sequence of 4,096 tokens. Per token and layer a block keeps its input (4,096), q (4,096),
  // v (1,024), gate (14,336), down (4,096) and the attention output (4,096) in bf16, plus the
  // fp32 log-sum-exp of 32 heads: 2 x 31,744 + 128 = 63,616 bytes. Full recomputation keeps the
  // input alone (8,192 bytes); both rebuild one layer at a time, so only the kept bytes differ.
  Workload w = Full();
  w.seq = 4096;
  w.micro_batch = 1;
  const double sb = 4096;
  auto act = [&](Recompute rc, const Layout& l) {
    Workload x = w;
    x.recompute = rc;
    return EstimateMemory(Llama8b(), x, l).per_gpu.activations.value;
  };
  const Layout one;
  EXPECT_NEAR(act(Recompute::kOp, one) - act(Recompute::kFull, one), 32 * sb * (63'616.0 - 8'192.0), 1.0);
  // Without recomputation a layer holds 2 x (4 x 4,096 norm and block inputs + 4,096 q + 2 x 1,024
  // k, v + 4,096 attention output + 4 x 14,336 MLP) + 128 = 168,064 bytes a token, and no layer
  // is rebuilt.
  EXPECT_NEAR(act(Recompute::kNone, one) - act(Recompute::kOp, one), sb * (32 * (168'064.0 - 63'616.0) - 168'064.0),
              1.0);
  // Tensor parallel 2 without sequence parallelism: q, v, gate and the attention output split
  // (column-parallel), down does not (row-parallel partial sums), the input is whole:
  // 2 x (4,096 + 2,048 + 512 + 7,168 + 4,096 + 2,048) + 64 = 40,000 bytes against the input's 8,192.
  Layout tp;
  tp.gpus = 2;
  tp.tp = 2;
  EXPECT_NEAR(act(Recompute::kOp, tp) - act(Recompute::kFull, tp), 32 * sb * (40'000.0 - 8'192.0), 1.0);
}

TEST(MemoryModel, PipelineFirstStageHoldsPpMicroBatches) {
  Workload w = Full();
  w.seq = 1024;
  w.flash_attn = false;
  Layout one;
  const double per_layer = PerLayerActivations(w, one);
  // 8 layers over pp=4: the first stage has 2 layers and (1F1B) 4 micro-batches in flight.
  ModelSpec m = GptLike(8);
  Layout pp;
  pp.gpus = 4;
  pp.pp = 4;
  w.global_batch = 16;
  const MemoryEstimate e = EstimateMemory(m, w, pp);
  EXPECT_EQ(e.peak_stage, "first");
  EXPECT_DOUBLE_EQ(e.per_gpu.activations.value, per_layer * 2 * 4);
  // With only 2 micro-batches per step, at most 2 are in flight on the first stage (4 layer
  // activations), so the last stage peaks: 2 layers + final-norm and head inputs (2 x 2sbh)
  // + logits in bf16 and two fp32 copies for the loss (2 + 8 bytes x s x vocab).
  w.global_batch = 2;
  const MemoryEstimate e2 = EstimateMemory(m, w, pp);
  EXPECT_EQ(e2.peak_stage, "last");
  const double s = 1024, h = 1024, vocab = 50304;
  EXPECT_DOUBLE_EQ(e2.per_gpu.activations.value, per_layer * 2 + 4 * s * h + 10 * s * vocab);
}

TEST(MemoryModel, QloraWeightsAreNf4WithDoubleQuantisation) {
  Workload w;
  w.task = Task::kQlora;
  w.lora_rank = 16;
  const MemoryEstimate e = EstimateMemory(Llama8b(), w, Layout{});
  const double non_linear = 2 * kV * kH + kNormParams;  // embedding, head, norms stay bf16
  const double nf4 = (4 + 8.0 / 64 + 32.0 / (64 * 256)) / 8;  // QLoRA paper section 3
  const double adapters = static_cast<double>(LoraParams(Llama8b(), 16, {}));
  EXPECT_DOUBLE_EQ(e.per_gpu.weights.value, (kP - non_linear) * nf4 + non_linear * 2 + adapters * 2);
  EXPECT_DOUBLE_EQ(e.per_gpu.gradients.value, adapters * 2);
  EXPECT_DOUBLE_EQ(e.per_gpu.optimizer.value, adapters * 12);
}

Workload Infer(int64_t context, int64_t concurrency) {
  Workload w;
  w.task = Task::kInfer;
  w.context = context;
  w.concurrency = concurrency;
  return w;
}

TEST(MemoryModel, KvCacheIsTwoLayersHeadsDimBytesTokens) {
  const Workload w = Infer(8192, 4);
  // 2 (K and V) x 32 layers x 8 KV heads x 128 x 2 bytes x 8192 tokens x 4 sequences.
  const double kv = 2.0 * 32 * 8 * 128 * 2 * 8192 * 4;
  EXPECT_DOUBLE_EQ(EstimateMemory(Llama8b(), w, Layout{}).per_gpu.kv_cache.value, kv);
  Workload fp8 = w;
  fp8.kv_dtype = KvDtype::kFp8;
  EXPECT_DOUBLE_EQ(EstimateMemory(Llama8b(), fp8, Layout{}).per_gpu.kv_cache.value, kv / 2);
  Layout tp;
  tp.gpus = 2;
  tp.tp = 2;
  EXPECT_DOUBLE_EQ(EstimateMemory(Llama8b(), w, tp).per_gpu.kv_cache.value, kv / 2);
  tp.gpus = 16;
  tp.tp = 16;  // more ranks than KV heads: each rank keeps one (replicated) head
  EXPECT_DOUBLE_EQ(EstimateMemory(Llama8b(), w, tp).per_gpu.kv_cache.value, kv / 8);
}

TEST(MemoryModel, KvCacheMlaAndSlidingWindow) {
  const ModelSpec ds = LoadHfConfig(test::Preset("DeepSeek-V3"));
  // MLA latent: (512 + 64) x 61 layers x 2 bytes per token.
  EXPECT_DOUBLE_EQ(EstimateMemory(ds, Infer(1000, 1), Layout{}).per_gpu.kv_cache.value, 576.0 * 61 * 2 * 1000);
  // Mistral-7B-v0.1: a 4096-token sliding window on every layer caps the cache.
  const ModelSpec mistral = LoadHfConfig(test::Fixture("configs/mistral-7b-v0.1.json"));
  EXPECT_DOUBLE_EQ(EstimateMemory(mistral, Infer(16384, 1), Layout{}).per_gpu.kv_cache.value,
                   2.0 * 32 * 8 * 128 * 2 * 4096);
}

TEST(MemoryModel, InferenceWeightDtypes) {
  Workload w = Infer(1024, 1);
  const double non_linear = 2 * kV * kH + kNormParams;
  w.weight_dtype = WeightDtype::kInt4;  // + fp16 scale and zero per group of 128
  EXPECT_DOUBLE_EQ(EstimateMemory(Llama8b(), w, Layout{}).per_gpu.weights.value,
                   (kP - non_linear) * (0.5 + 4.0 / 128) + non_linear * 2);
  w.weight_dtype = WeightDtype::kBf16;
  EXPECT_DOUBLE_EQ(EstimateMemory(Llama8b(), w, Layout{}).per_gpu.weights.value, 2 * kP);
}

TEST(MemoryModel, MaxConcurrencyIsTheLargestThatFits) {
  const GpuCatalog cat = GpuCatalog::Load(test::DataDir() + "/gpus.yaml");
  const Gpu& l40s = cat.Find("L40S");
  const MemoryEstimate e = EstimateMemory(Llama8b(), Infer(8192, 1), Layout{}, {}, l40s.memory_bytes);
  ASSERT_TRUE(e.max_concurrency.has_value());
  const int64_t c = *e.max_concurrency;
  ASSERT_GT(c, 0);
  EXPECT_TRUE(Fits(EstimateMemory(Llama8b(), Infer(8192, c), Layout{}), l40s));
  EXPECT_FALSE(Fits(EstimateMemory(Llama8b(), Infer(8192, c + 1), Layout{}), l40s));
}

TEST(Advisor, EverySuggestionFitsWhenRecomputed) {
  const GpuCatalog cat = GpuCatalog::Load(test::DataDir() + "/gpus.yaml");
  const Gpu& a100 = cat.Find("A100 80GB SXM");
  Workload w = Full();
  w.seq = 4096;
  const MemoryEstimate e = EstimateMemory(Llama8b(), w, Layout{}, {}, a100.memory_bytes);
  ASSERT_FALSE(Fits(e, a100));  // 16 bytes x 8B params = 120 GiB before activations
  const auto sug = SuggestFixes(Llama8b(), w, Layout{}, a100, cat, {});
  ASSERT_FALSE(sug.empty());
  for (const auto& s : sug) {
    EXPECT_TRUE(Fits(EstimateMemory(Llama8b(), s.workload, s.layout, {}, s.gpu->memory_bytes), *s.gpu)) << s.change;
  }
}

// Issue 7 requirement 8: advice the card can run. The catalog's datatypes (PTX ISA tables, catalog
// source S28): T4 (Turing) has fp16 but neither bf16 nor fp8; A100 (Ampere) bf16 but no fp8;
// H100 (Hopper) fp8.
TEST(Advisor, LongSequencesAreOfferedContextParallelism) {
  // Llama-3.1-8B at 131,072 tokens on 8 H100 SXM, tp 1, ZeRO-3: the loss alone needs
  // 131,072 x 128,256 x 10 bytes = 168 GB a GPU (docs/memory-model.md §4.5), so recomputation,
  // a smaller micro-batch or more ZeRO cannot help; splitting the sequence over cp ranks divides
  // it. The first suggestion with --cp divides its GPUs evenly and fits.
  const GpuCatalog cat = GpuCatalog::Load(test::DataDir() + "/gpus.yaml");
  const Gpu& h100 = cat.Find("H100 SXM");
  Workload w = Full();
  w.task = Task::kPretrain;
  w.seq = 131072;
  Layout l;
  l.gpus = 8;
  l.zero = 3;
  const auto sug = SuggestFixes(Llama8b(), w, l, h100, cat, {});
  const auto cp = std::find_if(sug.begin(), sug.end(), [](const Suggestion& s) { return s.layout.cp > 1; });
  ASSERT_NE(cp, sug.end());
  EXPECT_NE(cp->change.find("--cp"), std::string::npos);
  EXPECT_EQ(cp->layout.gpus % (cp->layout.cp * cp->layout.tp * cp->layout.pp), 0);
  EXPECT_TRUE(Fits(EstimateMemory(Llama8b(), cp->workload, cp->layout, {}, cp->gpu->memory_bytes), *cp->gpu));
}

TEST(Advisor, T4GetsNoFp8OrBf16AndIsLabelledFp16) {
  const GpuCatalog cat = GpuCatalog::Load(test::DataDir() + "/gpus.yaml");
  const Gpu& t4 = cat.Find("T4");
  std::vector<std::string> notes;
  const Workload w = ForCard(Infer(2048, 1), t4, &notes);  // bf16 by default
  EXPECT_EQ(w.weight_dtype, WeightDtype::kFp16);
  EXPECT_EQ(w.kv_dtype, KvDtype::kFp16);
  ASSERT_FALSE(notes.empty());
  EXPECT_NE(notes[0].find("fp16"), std::string::npos);
  EXPECT_STREQ(HalfDtype(t4), "fp16");
  EXPECT_NE(DescribeLayout(w, Layout{}, t4).find("weights fp16, kv fp16"), std::string::npos);
  // 2 x 8.03e9 bytes of fp16 weights > the T4's 15 GiB: quantisation is what the T4 needs.
  const MemoryEstimate e = EstimateMemory(Llama8b(), w, Layout{}, {}, t4.memory_bytes);
  ASSERT_FALSE(Fits(e, t4));
  const auto sug = SuggestFixes(Llama8b(), w, Layout{}, t4, cat, {}, 50);
  ASSERT_FALSE(sug.empty());
  bool int8 = false;
  for (const auto& s : sug) {
    EXPECT_EQ(s.change.find("fp8"), std::string::npos) << s.change;
    EXPECT_EQ(s.change.find("bf16"), std::string::npos) << s.change;
    if (s.gpu == &t4) {
      EXPECT_EQ(s.result.find("bf16"), std::string::npos) << s.result;
      EXPECT_EQ(s.result.find("fp8"), std::string::npos) << s.result;
    }
    int8 = int8 || s.change == "--weight-dtype int8";
  }
  EXPECT_TRUE(int8);  // 8.03e9 x 1 byte + scales fits in 15 GiB
  // Training on a T4: mixed precision is fp16 autocast; pure bf16 does not run.
  EXPECT_TRUE(CardRuns(t4, Precision::kMixed));
  EXPECT_FALSE(CardRuns(t4, Precision::kBf16));
  EXPECT_FALSE(CardRuns(t4, WeightDtype::kFp8));
  EXPECT_TRUE(CardRuns(t4, WeightDtype::kInt4));
}

TEST(Advisor, Fp8OnlyOnCardsWithFp8) {
  const GpuCatalog cat = GpuCatalog::Load(test::DataDir() + "/gpus.yaml");
  const ModelSpec m70 = LoadHfConfig(test::Preset("Llama-3.1-70B"));
  // 70.55e9 parameters x 2 bytes = 141 GB: does not fit one 80 GB card; in fp8 (70.6 GB) it does.
  auto changes = [&](const Gpu& g) {
    std::vector<std::string> out;
    const Workload w = ForCard(Infer(1024, 1), g);
    for (const auto& s : SuggestFixes(m70, w, Layout{}, g, cat, {}, 50)) {
      out.push_back(s.change);
    }
    return out;
  };
  auto has = [](const std::vector<std::string>& v, const std::string& x) {
    return std::find(v.begin(), v.end(), x) != v.end();
  };
  const auto h100 = changes(cat.Find("H100"));
  EXPECT_TRUE(has(h100, "--weight-dtype fp8"));
  const auto a100 = changes(cat.Find("A100"));
  EXPECT_FALSE(has(a100, "--weight-dtype fp8"));
  EXPECT_FALSE(has(a100, "--kv-dtype fp8"));
  EXPECT_TRUE(has(a100, "--weight-dtype int8"));
}

// A suggestion is the flags to add to the user's command, where dp = gpus / (tp x pp x cp).
// Llama-3.1-70B inference in bf16 (70.55e9 x 2 bytes = 141 GB of weights) on A100 80GB: tp 2
// halves them to 70.6 GB a GPU. On one GPU that needs a second (the text says --gpus 2; before,
// "--tp 2" alone, which the CLI refuses: 1 GPU cannot be split into tp=2); on four replicas the
// same four GPUs hold two replicas of tp 2, no card added.
TEST(Advisor, LayoutChangesSayTheGpuCountTheyNeed) {
  const GpuCatalog cat = GpuCatalog::Load(test::DataDir() + "/gpus.yaml");
  const ModelSpec m70 = LoadHfConfig(test::Preset("Llama-3.1-70B"));
  const Gpu& a100 = cat.Find("A100");
  const Workload w = ForCard(Infer(1024, 1), a100);
  auto find = [](const std::vector<Suggestion>& v, int64_t tp, int64_t gpus) -> const Suggestion* {
    for (const auto& s : v) {
      if (s.layout.tp == tp && s.layout.pp == 1 && s.layout.gpus == gpus && s.gpu->name == "A100 80GB SXM") {
        return &s;
      }
    }
    return nullptr;
  };
  const auto one = SuggestFixes(m70, w, Layout{}, a100, cat, {}, 50);
  const Suggestion* s1 = find(one, 2, 2);
  ASSERT_NE(s1, nullptr);
  EXPECT_EQ(s1->change, "--tp 2 + --gpus 2");
  Layout four;
  four.gpus = 4;
  const auto fours = SuggestFixes(m70, w, four, a100, cat, {}, 50);
  const Suggestion* s4 = find(fours, 2, 4);
  ASSERT_NE(s4, nullptr);
  EXPECT_EQ(s4->change, "--tp 2");
  EXPECT_EQ(s4->layout.dp(), 2);
  // ZeRO-3 over more ranks with tp 2 given: 8 data-parallel ranks are 16 GPUs.
  Workload train = Full();
  Layout tp2;
  tp2.gpus = 2;
  tp2.tp = 2;
  const auto z = SuggestFixes(m70, train, tp2, a100, cat, {}, 50);
  int sharded = 0;
  for (const auto& s : z) {
    if (s.change.rfind("--zero 3 (sharded over", 0) == 0) {
      ++sharded;
      EXPECT_EQ(s.layout.gpus, s.layout.dp() * 2) << s.change;
      EXPECT_NE(s.change.find("+ --gpus " + std::to_string(s.layout.gpus)), std::string::npos) << s.change;
    }
  }
  EXPECT_GT(sharded, 0);
  // A global batch the user gave must divide into micro-batch x dp after the change.
  train.global_batch = 12;
  Layout dp4;
  dp4.gpus = 4;
  const auto batch = SuggestFixes(m70, train, dp4, a100, cat, {}, 50);
  EXPECT_FALSE(batch.empty());
  for (const auto& s : batch) {
    EXPECT_EQ(12 % (s.workload.micro_batch * s.layout.dp()), 0) << s.change;
  }
}

}  // namespace
}  // namespace gpuplan
