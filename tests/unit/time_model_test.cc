// Time model against values worked out by hand: PaLM/Megatron FLOP accounting, ring all-reduce
// volume, the 1F1B bubble, bandwidth-bound decode; and the layout search's contracts.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include <nlohmann/json.hpp>

#include "catalog/gpu_catalog.h"
#include "catalog/model.h"
#include "core/error.h"
#include "fit/search.h"
#include "fit/time_model.h"
#include "test_paths.h"

namespace gpuplan {
namespace {

const GpuCatalog& Cat() {
  static const GpuCatalog c = GpuCatalog::Load(test::DataDir() + "/gpus.yaml");
  return c;
}
const ModelSpec& Llama8b() {
  static const ModelSpec m = LoadHfConfig(test::Preset("Llama-3.1-8B"));
  return m;
}
constexpr double kN = 8'030'261'248.0 - 128256.0 * 4096;  // parameters minus the embedding lookup

Workload Pretrain(int64_t seq, int64_t gb) {
  Workload w;
  w.task = Task::kPretrain;
  w.seq = seq;
  w.global_batch = gb;
  return w;
}

TEST(TimeModel, FlopsPerTokenFollowPalmAccounting) {
  // PaLM appendix B: 6N + 12 L H Q T per token; Llama-3.1-8B: L=32, H x Q = 4096, T = 4096.
  const TrainingTime t = EstimateTrainingTime(Llama8b(), Pretrain(4096, 1), Layout{}, Cat().Find("H100"), {}, 0);
  const double attention = 12.0 * 32 * 4096 * 4096;
  EXPECT_DOUBLE_EQ(t.flops_per_token, 6 * kN + attention);
  // Flash attention recomputes the scores in backward: one more attention forward (4 L H Q T).
  EXPECT_DOUBLE_EQ(t.hw_flops_per_token, 6 * kN + attention + attention / 3);
  Workload full = Pretrain(4096, 1);
  full.recompute = Recompute::kFull;  // one more forward pass: 2N + 4LHQT
  const TrainingTime r = EstimateTrainingTime(Llama8b(), full, Layout{}, Cat().Find("H100"), {}, 0);
  EXPECT_DOUBLE_EQ(r.hw_flops_per_token, 8 * kN + attention * 4 / 3);
}

TEST(TimeModel, ComputeTimeIsFlopsOverAchievablePeak) {
  TimeConfig c;
  c.mfu = 0.5;
  const Gpu& h100 = Cat().Find("H100");
  const TrainingTime t = EstimateTrainingTime(Llama8b(), Pretrain(4096, 4), Layout{}, h100, c, 0);
  EXPECT_NEAR(t.matmul_seconds, t.hw_flops_per_token * 4 * 4096 / (989.4e12 * 0.5), 1e-9);
  EXPECT_DOUBLE_EQ(t.step_seconds, t.compute_seconds);  // one GPU: no communication, no bubble
  EXPECT_EQ(t.bottleneck, "compute");
  // MFU = model FLOPs x tokens/s / peak.
  EXPECT_NEAR(t.mfu, t.flops_per_token * t.tokens_per_second / 989.4e12, 1e-12);
  // A token budget: hours = tokens / tokens per second / 3600.
  const TrainingTime b = EstimateTrainingTime(Llama8b(), Pretrain(4096, 4), Layout{}, h100, c, 1e9);
  EXPECT_NEAR(*b.total_hours, 1e9 / b.tokens_per_second / 3600, 1e-9);
  EXPECT_NEAR(*b.gpu_hours, *b.total_hours, 1e-9);
}

TEST(TimeModel, PipelineBubbleIsPpMinusOneMicroBatchSlots) {
  TimeConfig c;
  c.mfu = 0.5;
  Layout l;
  l.gpus = 4;
  l.pp = 4;
  const TrainingTime t = EstimateTrainingTime(Llama8b(), Pretrain(2048, 8), l, Cat().Find("H100"), c, 0);
  EXPECT_EQ(t.micro_batches, 8);
  // 1F1B: (pp - 1) slots of one micro-batch each = (pp-1)/m of the busy time.
  EXPECT_NEAR(t.bubble_seconds, (t.matmul_seconds + t.tp_seconds) * 3.0 / 8.0, 1e-12);
  l.vpp = 2;  // interleaving divides the bubble by the virtual stages
  const TrainingTime v = EstimateTrainingTime(Llama8b(), Pretrain(2048, 8), l, Cat().Find("H100"), c, 0);
  EXPECT_NEAR(v.bubble_seconds, t.bubble_seconds / 2, 1e-12);
}

TEST(TimeModel, DataParallelRingAllReduce) {
  TimeConfig c;
  c.dp_overlap = 0;  // nothing hidden: the whole all-reduce is exposed
  Layout l;
  l.gpus = 2;
  const Gpu& a100 = Cat().Find("A100");
  const TrainingTime t = EstimateTrainingTime(Llama8b(), Pretrain(2048, 2), l, a100, c, 0);
  // Ring all-reduce over 2 ranks: 2(n-1)/n x bytes over one direction of NVLink (600/2 GB/s)
  // at 80% efficiency, + 2(n-1) x 5 us latency. Gradients: 2 bytes x 8.03e9 parameters.
  const double bytes = 2.0 * 8'030'261'248.0;
  const double expected = 2.0 * 1 / 2 * bytes / (300e9 * 0.8) + 2 * 5e-6;
  EXPECT_NEAR(t.dp_seconds, expected, 1e-9);
  EXPECT_NEAR(t.dp_exposed_seconds, expected, 1e-9);
}

TEST(TimeModel, SlowNetworkMakesCommunicationTheBottleneck) {
  Layout l;
  l.gpus = 16;  // two nodes of 8: the data-parallel all-reduce crosses the network
  TimeConfig fast;
  TimeConfig slow;
  slow.network = ParseNetwork("1gbe");
  const Gpu& a100 = Cat().Find("A100");
  const TrainingTime f = EstimateTrainingTime(Llama8b(), Pretrain(2048, 16), l, a100, fast, 0);
  const TrainingTime s = EstimateTrainingTime(Llama8b(), Pretrain(2048, 16), l, a100, slow, 0);
  EXPECT_EQ(f.bottleneck, "compute");
  EXPECT_EQ(s.bottleneck, "communication");
  // Inter-node part at 1 Gb/s: 2(n-1)/n x (8 GPUs x 16 GB of gradients) / 0.1 GB/s: minutes.
  EXPECT_GT(s.dp_seconds, 1000.0);
}

TEST(TimeModel, NetworkNames) {
  EXPECT_DOUBLE_EQ(ParseNetwork("ib-400g").node_gbps, 3200);
  EXPECT_DOUBLE_EQ(ParseNetwork("10GbE").node_gbps, 10);
  EXPECT_DOUBLE_EQ(ParseNetwork("40").node_gbps, 40);
  EXPECT_DOUBLE_EQ(ParseNetwork("25gbps").node_gbps, 25);
  EXPECT_THROW(ParseNetwork("carrier-pigeon"), InputError);
}

TEST(TimeModel, BatchOneDecodeReadsAllWeightsPerToken) {
  Workload w;
  w.task = Task::kInfer;
  w.concurrency = 1;
  w.context = 1024 + 128;
  const Gpu& h100 = Cat().Find("H100");
  const InferenceTime t = EstimateInferenceTime(Llama8b(), w, Layout{}, h100, {}, 1024, 128);
  EXPECT_TRUE(t.memory_bound);
  // Weights 2 bytes x 8.03e9 + KV of 1088 tokens x 131072 bytes, at 85% of 3.35 TB/s.
  const double bytes = 2.0 * 8'030'261'248.0 + 1088.0 * 131072;
  EXPECT_NEAR(t.decode_step_seconds, bytes / (3350e9 * 0.85), 1e-6);
  EXPECT_NEAR(t.decode_tokens_per_second, 1.0 / t.decode_step_seconds, 1e-9);
}

TEST(Search, RanksFittingLayoutsBestFirst) {
  SearchOptions o;
  o.gpus = {&Cat().Find("A100"), &Cat().Find("RTX 4090")};
  o.max_gpus = 16;
  o.tokens = 1e9;
  Workload w;
  w.task = Task::kFull;
  w.seq = 2048;
  w.global_batch = 32;
  const SearchResult r = SearchTraining(Llama8b(), w, o);
  ASSERT_FALSE(r.ranked.empty());
  EXPECT_GT(r.evaluated, r.fitting);
  for (std::size_t i = 0; i < r.ranked.size(); ++i) {
    const Candidate& c = r.ranked[i];
    EXPECT_LE(c.memory.per_gpu.Total().value, 0.95 * static_cast<double>(c.gpu->memory_bytes));
    EXPECT_LE(c.layout.gpus, 16);
    EXPECT_NEAR(c.score, *c.time.total_hours, 1e-9);
    if (i > 0) {
      EXPECT_LE(r.ranked[i - 1].score, c.score);
    }
  }
}

TEST(Search, NothingFitsSaysWhatIsClosest) {
  SearchOptions o;
  o.gpus = {&Cat().Find("T4")};
  o.max_gpus = 2;
  Workload w;
  w.task = Task::kFull;
  const SearchResult r = SearchTraining(LoadHfConfig(test::Preset("Llama-3.1-70B")), w, o);
  EXPECT_TRUE(r.ranked.empty());
  EXPECT_NE(r.closest.find("T4"), std::string::npos);
}

TEST(Search, QpsSizing) {
  Workload w;
  w.task = Task::kInfer;
  const Gpu& l40s = Cat().Find("L40S");
  const InferencePlan one = PlanInference(Llama8b(), w, Layout{}, l40s, {}, {}, 1024, 256, 1.0, 0);
  ASSERT_TRUE(one.fits);
  const InferencePlan many = PlanInference(Llama8b(), w, Layout{}, l40s, {}, {}, 1024, 256, 1000.0, 0);
  // replicas = ceil(QPS / requests per second of one replica)
  EXPECT_EQ(many.replicas, static_cast<int64_t>(std::ceil(1000.0 / many.time.requests_per_second)));
  EXPECT_EQ(many.gpus_total, many.replicas);
  // A per-token latency target below the batch-1 step cannot be met.
  const InferencePlan strict = PlanInference(Llama8b(), w, Layout{}, l40s, {}, {}, 1024, 256, 10.0, 1.0);
  EXPECT_FALSE(strict.meets_latency);
}

}  // namespace
}  // namespace gpuplan

namespace gpuplan {
namespace {

// Measured on a real H200 with apps/gpu-worker/gpu_probe.cu (docs/device-checks.md): the time
// model's assumptions must stay below what the hardware did.
TEST(TimeModel, AssumptionsStayBelowMeasuredH200) {
  std::ifstream in(test::Fixture("device/h200-gpu-probe.jsonl"));
  double best_gemm = 0;
  double layer_gemm = 0;
  double copy_gbs = 0;
  for (std::string line; std::getline(in, line);) {
    const auto j = nlohmann::json::parse(line);
    if (j.value("measurement", "") == "gemm_bf16") {
      ASSERT_TRUE(j["verified"].get<bool>());
      best_gemm = std::max(best_gemm, j["tflops"].get<double>());
    } else if (j.value("measurement", "") == "llama8b_layer_gemms") {
      ASSERT_TRUE(j["verified"].get<bool>());
      layer_gemm = j["tflops"].get<double>();
    } else if (j.value("measurement", "") == "d2d_copy") {
      ASSERT_TRUE(j["verified"].get<bool>());
      copy_gbs = j["gb_per_s"].get<double>();
    }
  }
  const Gpu& h200 = Cat().Find("H200");
  ASSERT_GT(best_gemm, 0);
  EXPECT_LT(best_gemm * 1e12, PeakFlops(h200, Precision::kBf16));      // the catalog peak is a ceiling
  EXPECT_LT(DefaultEfficiency(h200), best_gemm * 1e12 / PeakFlops(h200, Precision::kBf16));
  // A whole step cannot beat the matmuls of a real layer shape.
  ASSERT_GT(layer_gemm, 0);
  EXPECT_LT(DefaultEfficiency(h200), layer_gemm * 1e12 / PeakFlops(h200, Precision::kBf16));
  // Batch-1 decode of Llama-3.1-8B: the bandwidth the model uses must not beat a plain copy.
  Workload w;
  w.task = Task::kInfer;
  w.context = 1024 + 64;
  const InferenceTime t = EstimateInferenceTime(Llama8b(), w, Layout{}, h200, {}, 1024, 128);
  const double bytes = 2.0 * 8'030'261'248.0 + 1088.0 * 131072;
  EXPECT_LT(bytes / t.decode_step_seconds, copy_gbs * 1e9);
}

}  // namespace
}  // namespace gpuplan
