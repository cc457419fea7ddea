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

const GpuCatalog& Cat() { return test::Catalog(); }
const ModelSpec& Llama8b() { return test::Llama8b(); }
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
  // Chunks of unequal size (a profile that splits unevenly, as torchtitan may): the 8 layers of a
  // stage in 3 chunks are 3 + 3 + 2, and each slot of the warm-up and drain lasts as long as the
  // largest chunk, 3 of the 8 layers: 3/8 of the 1F1B bubble, not 1/3.
  l.vpp = 3;
  const TrainingTime u = EstimateTrainingTime(Llama8b(), Pretrain(2048, 8), l, Cat().Find("H100"), c, 0);
  EXPECT_NEAR(u.bubble_seconds, t.bubble_seconds * 3.0 / 8.0, 1e-12);
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
  // Inter-node part at 1 Gb/s: 2(n-1)/n x one copy of the 16 GB of gradients per node / 0.1 GB/s.
  EXPECT_GT(s.dp_seconds, 100.0);
}

const ModelSpec& Qwen7b() {
  static const ModelSpec m = LoadHfConfig(test::Preset("Qwen2.5-7B"));
  return m;
}
// Qwen2.5-7B: 28 layers x 233,057,792 + 2 x 152,064 x 3,584 (untied embedding and head) + 3,584
// (final norm) = 7,615,616,512 parameters; bf16 gradients are 2 bytes each.
constexpr double kQwenParams = 7'615'616'512.0;

TEST(TimeModel, HierarchicalDataParallelCountsOneCopyPerNodeLink) {
  // 16 x A100 80GB SXM = 2 nodes of 8, plain data parallel, 1 GbE between the nodes.
  Layout l;
  l.gpus = 16;
  TimeConfig c;
  c.network = ParseNetwork("1gbe");
  c.dp_overlap = 0;  // everything exposed
  Workload w;
  w.task = Task::kFull;
  w.seq = 2048;
  w.global_batch = 16;  // one micro-batch per GPU
  const TrainingTime t = EstimateTrainingTime(Qwen7b(), w, l, Cat().Find("A100"), c, 0);
  // Gradients per GPU B = 2 x 7,615,616,512 = 15,231,233,024 bytes.
  // Intra-node reduce-scatter + all-gather over 8 GPUs on NVLink (300 GB/s per direction x 0.8):
  //   2 x 7/8 x B / 240e9 = 0.111060 s, + 2 x 7 hops x 5 us = 0.000070 s.
  // Inter-node all-reduce between 2 nodes of the node's one copy (tp = 1): each way the link
  //   carries 2 x (2-1)/2 x B = B = 15.23 GB per step (not 8 x B), at 1 Gb/s x 0.8 = 0.1 GB/s:
  //   152.312 s, + 2 x 1 hop x 15 us.
  const double b = 2.0 * kQwenParams;
  EXPECT_NEAR(t.dp_node_link_bytes, b, 1.0);
  const double intra = 2.0 * 7.0 / 8.0 * b / 240e9 + 14 * 5e-6;
  const double inter = b / 0.1e9 + 2 * 15e-6;
  EXPECT_NEAR(t.dp_seconds, intra + inter, 1e-6);
  EXPECT_NEAR(t.dp_seconds, 152.42, 0.01);
  EXPECT_EQ(t.bottleneck, "communication");
}

TEST(TimeModel, Zero3GathersParametersEveryMicroBatch) {
  Layout l;
  l.gpus = 16;
  l.zero = 3;
  TimeConfig c;
  c.network = ParseNetwork("1gbe");
  c.dp_overlap = 0;
  Workload w;
  w.task = Task::kFull;
  w.seq = 2048;
  w.global_batch = 32;  // 2 micro-batches of 1 sequence per GPU
  const TrainingTime t = EstimateTrainingTime(Qwen7b(), w, l, Cat().Find("A100"), c, 0);
  ASSERT_EQ(t.micro_batches, 2);
  // Per micro-batch: all-gather the bf16 parameters for forward, again for backward, and
  // reduce-scatter the bf16 gradients: 3 halves of an all-reduce of B = 15,231,233,024 bytes.
  // Node link per half (2 nodes): (2-1)/2 x B = 7,615,616,512 bytes; 3 halves x 2 micro-batches
  // = 6 x 7,615,616,512 = 45,693,699,072 bytes per step (3 x B), against B for ZeRO-0.
  const double b = 2.0 * kQwenParams;
  EXPECT_NEAR(t.dp_node_link_bytes, 3.0 * b, 1.0);
  // Time: 6 halves x [7/8 x B / 240e9 + 7 x 5 us (NVLink) + (B/2) / 0.1e9 + 15 us (1 GbE)].
  const double half = 7.0 / 8.0 * b / 240e9 + 7 * 5e-6 + b / 2.0 / 0.1e9 + 15e-6;
  EXPECT_NEAR(t.dp_seconds, 6.0 * half, 1e-6);
}

// 16 x A100 80GB SXM (2 nodes of 8) on 2 x 100 Gb/s RoCE, Qwen2.5-7B, 16 micro-batches of
// one sequence a GPU, the flat --mfu rule (so that a micro-batch's backward is 2/3 of its share).
// One half of a collective (reduce-scatter or all-gather) of B bytes a GPU, by hand: 7/8 x B over
// NVLink (300 GB/s a direction x 0.8) + 7 hops x 5 us, then the node's one copy across the two
// nodes, B/2 at 2 x 100 Gb/s x 0.8 (Ethernet keeps the generic 80%) + one 15 us hop.
double HalfOnTwoA100Nodes(double b) { return 7.0 / 8.0 * b / 240e9 + 7 * 5e-6 + b / 2.0 / 20e9 + 15e-6; }

TrainingTime SixteenMicroBatchesOnTwoNodes(int zero, bool fp32_grads, bool overlap = true, bool gather_after_step = false) {
  Layout l;
  l.gpus = 16;
  l.zero = zero;
  TimeConfig c;
  c.mfu = 0.5;
  c.network = ParseNetwork("roce-100g");
  c.fp32_grad_reduce = fp32_grads;
  c.dp_grad_overlap = overlap;
  c.param_gather_after_step = gather_after_step;
  Workload w;
  w.task = Task::kFull;
  w.seq = 2048;
  w.global_batch = 256;
  return EstimateTrainingTime(Qwen7b(), w, l, Cat().Find("A100"), c, 0);
}

TEST(TimeModel, GradientsAreReducedInTheLastMicroBatchsBackwardOnly) {
  // PyTorch DDP and Megatron-Core accumulate the first m - 1 micro-batches' gradients without
  // communication (no_sync) and reduce in buckets during the last one's backward, so 80% of ONE
  // micro-batch's backward hides the all-reduce, not 80% of the step's backward (which would hide
  // all of it here: 0.8 x 2/3 x the step's matmuls is about 5 s against 0.87 s).
  const TrainingTime t = SixteenMicroBatchesOnTwoNodes(0, false);
  ASSERT_EQ(t.micro_batches, 16);
  const double b = 2.0 * kQwenParams;  // bf16 gradients
  EXPECT_NEAR(t.dp_seconds, 2.0 * HalfOnTwoA100Nodes(b), 1e-9);
  EXPECT_NEAR(t.dp_node_link_bytes, b, 1.0);  // each way the link carries (2-1)/2 x B
  const double backward_one = 2.0 / 3.0 * t.matmul_seconds / 16.0;
  ASSERT_GT(t.dp_seconds, 0.8 * backward_one);  // the window is shorter than the all-reduce
  EXPECT_NEAR(t.dp_exposed_seconds, 2.0 * HalfOnTwoA100Nodes(b) - 0.8 * backward_one, 1e-9);
}

TEST(TimeModel, DistributedOptimizerGathersInTheNextForwardAndZero2ReducesEveryMicroBatch) {
  const double p = kQwenParams;
  const TrainingTime one = SixteenMicroBatchesOnTwoNodes(1, false);
  const double backward_one = 2.0 / 3.0 * one.matmul_seconds / 16.0;
  const double forward_one = 1.0 / 3.0 * one.matmul_seconds / 16.0;
  const double half = HalfOnTwoA100Nodes(2.0 * p);
  // ZeRO-1 (Megatron-Core's distributed optimizer): the gradients' reduce-scatter in the last
  // backward, the parameters' all-gather in the next step's first forward (--overlap-param-gather).
  EXPECT_NEAR(one.dp_seconds, 2.0 * half, 1e-9);
  EXPECT_NEAR(one.dp_exposed_seconds,
              std::max(0.0, half - 0.8 * backward_one) + std::max(0.0, half - 0.8 * forward_one), 1e-9);
  // ZeRO-2 keeps only its partition of the gradients, so it reduce-scatters after every
  // micro-batch's backward (DeepSpeed #2252): 16 reduce-scatters and one all-gather.
  const TrainingTime two = SixteenMicroBatchesOnTwoNodes(2, false);
  EXPECT_NEAR(two.dp_seconds, 17.0 * half, 1e-9);
  EXPECT_NEAR(two.dp_node_link_bytes, 17.0 * p, 16.0);  // 17 halves of (2-1)/2 x 2 bytes x P
  EXPECT_NEAR(two.dp_exposed_seconds,
              16.0 * std::max(0.0, half - 0.8 * backward_one) + std::max(0.0, half - 0.8 * forward_one), 1e-9);
  // Megatron reduces bf16 runs' gradients in fp32 (main_grad; frameworks.yaml MEG-GRAD): the
  // reduce-scatter moves 4 bytes a parameter, the gathered parameters stay 2.
  const TrainingTime fp32 = SixteenMicroBatchesOnTwoNodes(1, true);
  EXPECT_NEAR(fp32.dp_seconds, HalfOnTwoA100Nodes(4.0 * p) + half, 1e-9);
  EXPECT_NEAR(fp32.dp_exposed_seconds,
              std::max(0.0, HalfOnTwoA100Nodes(4.0 * p) - 0.8 * backward_one) + std::max(0.0, half - 0.8 * forward_one),
              1e-9);
  // Without overlap (Megatron-LM 2021's --DDP-impl local): all of it after the backward pass.
  const TrainingTime local = SixteenMicroBatchesOnTwoNodes(0, false, false);
  EXPECT_NEAR(local.dp_exposed_seconds, 2.0 * half, 1e-9);
  // DeepSpeed all-gathers the updated parameters at the end of its optimizer step
  // (stage_1_and_2.py step(), all_gather_dp_groups; frameworks.yaml DS-STEP): the reduce-scatters
  // still hide behind the backward passes with overlap_comm, the gather never does.
  const TrainingTime ds = SixteenMicroBatchesOnTwoNodes(2, false, true, true);
  EXPECT_NEAR(ds.dp_seconds, 17.0 * half, 1e-9);
  EXPECT_NEAR(ds.dp_exposed_seconds, 16.0 * std::max(0.0, half - 0.8 * backward_one) + half, 1e-9);
  EXPECT_GT(ds.dp_exposed_seconds, two.dp_exposed_seconds);
}

TEST(TimeModel, DefaultNetworkFollowsTheCardsServerClass) {
  // docs/time-model.md §4: NVLink baseboards with one NIC per GPU; PCIe servers with Ethernet.
  EXPECT_DOUBLE_EQ(DefaultNetwork(Cat().Find("H100")).node_gbps, 8 * 400.0);   // DGX H100: 8 x NDR 400
  EXPECT_DOUBLE_EQ(DefaultNetwork(Cat().Find("B200")).node_gbps, 8 * 400.0);   // DGX B200: 8 x 400
  EXPECT_DOUBLE_EQ(DefaultNetwork(Cat().Find("A100")).node_gbps, 8 * 200.0);   // DGX A100: 8 x HDR 200
  EXPECT_DOUBLE_EQ(DefaultNetwork(Cat().Find("V100 SXM2 32GB")).node_gbps, 4 * 100.0);  // DGX-1: 4 x EDR
  EXPECT_DOUBLE_EQ(DefaultNetwork(Cat().Find("A100 80GB PCIe")).node_gbps, 100.0);  // HBM PCIe card
  EXPECT_DOUBLE_EQ(DefaultNetwork(Cat().Find("A30")).node_gbps, 100.0);
  EXPECT_DOUBLE_EQ(DefaultNetwork(Cat().Find("L40S")).node_gbps, 25.0);   // GDDR PCIe card
  EXPECT_DOUBLE_EQ(DefaultNetwork(Cat().Find("T4")).node_gbps, 25.0);
  EXPECT_DOUBLE_EQ(DefaultNetwork(Cat().Find("RTX 4090")).node_gbps, 10.0);  // consumer card
  EXPECT_EQ(ServerClassOf(Cat().Find("RTX 4090")), ServerClass::kConsumer);
  // The estimate uses the card's default unless --network is given.
  Layout l;
  l.gpus = 16;
  const TrainingTime by_card = EstimateTrainingTime(Llama8b(), Pretrain(2048, 16), l, Cat().Find("L40S"), {}, 0);
  EXPECT_EQ(by_card.network, "25gbe");
  EXPECT_DOUBLE_EQ(by_card.network_gbps, 25.0);
  TimeConfig ib;
  ib.network = ParseNetwork("ib-400g");
  const TrainingTime given = EstimateTrainingTime(Llama8b(), Pretrain(2048, 16), l, Cat().Find("L40S"), ib, 0);
  EXPECT_EQ(given.network, "ib-400g");
  EXPECT_LT(given.dp_seconds, by_card.dp_seconds);
}

TEST(TimeModel, NvlinkBridgeJoinsOnlyPairs) {
  // A100 80GB PCIe: a bridge joins 2 cards (600 GB/s total, 300 per direction); 8 cards in a
  // server all-reduce over PCIe gen 4 x16 (31.5 GB/s per direction), both at 80%.
  TimeConfig c;
  c.dp_overlap = 0;
  const Gpu& pcie = Cat().Find("A100 80GB PCIe");
  Layout two;
  two.gpus = 2;
  Layout eight;
  eight.gpus = 8;
  const double b = 2.0 * 8'030'261'248.0;  // Llama-3.1-8B bf16 gradients
  const TrainingTime t2 = EstimateTrainingTime(Llama8b(), Pretrain(2048, 2), two, pcie, c, 0);
  const TrainingTime t8 = EstimateTrainingTime(Llama8b(), Pretrain(2048, 8), eight, pcie, c, 0);
  EXPECT_NEAR(t2.dp_seconds, 2.0 * 1 / 2 * b / 240e9 + 2 * 5e-6, 1e-9);
  EXPECT_NEAR(t8.dp_seconds, 2.0 * 7 / 8 * b / 25.2e9 + 14 * 5e-6, 1e-9);
}

TEST(TimeModel, NetworkNames) {
  EXPECT_DOUBLE_EQ(ParseNetwork("ib-400g").node_gbps, 3200);
  EXPECT_DOUBLE_EQ(ParseNetwork("10GbE").node_gbps, 10);
  EXPECT_DOUBLE_EQ(ParseNetwork("40").node_gbps, 40);
  EXPECT_DOUBLE_EQ(ParseNetwork("25gbps").node_gbps, 25);
  EXPECT_DOUBLE_EQ(ParseNetwork("roce-200g").node_gbps, 1600);
  EXPECT_THROW(ParseNetwork("carrier-pigeon"), InputError);
  // A rate is the number written, not the digits left after dropping the rest.
  EXPECT_DOUBLE_EQ(ParseNetwork("40 Gbps").node_gbps, 40);
  EXPECT_THROW(ParseNetwork("-5"), InputError);
  EXPECT_THROW(ParseNetwork("[1]"), InputError);
  EXPECT_THROW(ParseNetwork("1.5"), InputError);
  EXPECT_THROW(ParseNetwork("4-0"), InputError);
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

TEST(TimeModel, AnEngineWithoutAGqaDecodeKernelReadsTheKvOncePerQueryHead) {
  // Llama-3.1-8B has 32 query heads and 8 K/V heads: an engine whose decode attention loads each
  // K/V head once for every query head sharing it (TensorRT-LLM before its XQA kernel) reads the
  // KV cache 32 / 8 = 4 times; the weights are read once either way. Llama-2-7B (32 heads, 32 K/V
  // heads) shares nothing, so nothing changes.
  Workload w;
  w.task = Task::kInfer;
  w.concurrency = 64;
  w.context = 1024 + 128;
  const Gpu& h100 = Cat().Find("H100");
  TimeConfig per_head;
  per_head.decode_kv_per_query_head = true;
  const InferenceTime shared = EstimateInferenceTime(Llama8b(), w, Layout{}, h100, {}, 1024, 128);
  const InferenceTime unshared = EstimateInferenceTime(Llama8b(), w, Layout{}, h100, per_head, 1024, 128);
  ASSERT_GT(shared.decode_kv_seconds, 0);
  EXPECT_NEAR(unshared.decode_kv_seconds, 4.0 * shared.decode_kv_seconds, 1e-12);
  EXPECT_DOUBLE_EQ(unshared.decode_weight_seconds, shared.decode_weight_seconds);
  const ModelSpec mha = LoadHfConfig(test::Preset("Llama-2-7b-hf"));
  ASSERT_EQ(mha.heads, mha.kv_heads);
  EXPECT_DOUBLE_EQ(EstimateInferenceTime(mha, w, Layout{}, h100, per_head, 1024, 128).decode_kv_seconds,
                   EstimateInferenceTime(mha, w, Layout{}, h100, {}, 1024, 128).decode_kv_seconds);
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
  EXPECT_EQ(strict.bound, "latency");
}

// §5.4 a request sees the replica at the offered load, not at the concurrency it is sized for.
// Llama-3.1-8B on one L40S, 1 request/s of 1,024 + 256 tokens: the replica is sized for the most
// in flight (57 sequences of 4,096 tokens), but at 1 request/s Little's law keeps
// L = 1 x (prefill + 256 x t) in flight, t the step at ceil(L) over the share of the replica's
// time not spent on prefills (1 - 1 x prefill): a few sequences, and a shorter step than at the
// sized concurrency. At 1,000 requests/s each of the many replicas is nearly full, and the
// prefills take about 30% of its time: t is the step over 0.7.
TEST(Search, QpsTimesAtTheOfferedLoad) {
  Workload w;
  w.task = Task::kInfer;
  const Gpu& l40s = Cat().Find("L40S");
  const InferencePlan one = PlanInference(Llama8b(), w, Layout{}, l40s, {}, {}, 1024, 256, 1.0, 0);
  ASSERT_TRUE(one.fits);
  ASSERT_EQ(one.replicas, 1);
  const double L = one.load_in_flight;
  EXPECT_GE(L, 1.0);
  EXPECT_LT(L, 0.25 * static_cast<double>(one.workload.concurrency));  // about 6 of the 57 sized for
  Workload at = w;
  at.concurrency = static_cast<int64_t>(std::ceil(L - 1e-9));
  const InferenceTime step = EstimateInferenceTime(Llama8b(), at, Layout{}, l40s, {}, 1024, 256);
  EXPECT_DOUBLE_EQ(one.at_load.decode_step_seconds, step.decode_step_seconds);
  EXPECT_DOUBLE_EQ(one.load_token_seconds, step.decode_step_seconds / (1 - 1.0 * step.prefill_seconds));
  // The fixed point, to the iteration's 1e-3.
  EXPECT_NEAR(L, 1.0 * (step.prefill_seconds + 256 * one.load_token_seconds), 2e-3);
  EXPECT_LT(one.load_token_seconds, one.time.decode_step_seconds);
  const InferencePlan many = PlanInference(Llama8b(), w, Layout{}, l40s, {}, {}, 1024, 256, 1000.0, 0);
  const double lambda = 1000.0 / static_cast<double>(many.replicas);
  EXPECT_GT(many.load_in_flight, 0.5 * static_cast<double>(many.workload.concurrency));
  EXPECT_LE(many.load_in_flight, static_cast<double>(many.workload.concurrency));
  EXPECT_GT(lambda * many.at_load.prefill_seconds, 0.25);  // about 30% of a replica's time on prefills
  EXPECT_DOUBLE_EQ(many.load_token_seconds,
                   many.at_load.decode_step_seconds / (1 - lambda * many.at_load.prefill_seconds));
}

TEST(Search, QpsSizingCountsPrefillAsGpuTime) {
  // Qwen2.5-7B, 20 requests/s of 1,024 prompt + 256 output tokens, on A100 80GB SXM, bf16.
  // N (parameters that multiply activations) = 7,615,616,512 - 544,997,376 (embedding lookup)
  //   = 7,070,619,136.
  // Prefill FLOPs per request = 2 N P + causal attention 28 layers x P^2 x 28 heads x 256
  //   = 14,480,627,990,528 + 210,453,397,504 = 14,691,081,388,032.
  // A100 bf16 peak 312 TFLOPS x 0.55 achievable = 171.6 TFLOPS: prefill 85.61 ms of the
  //   replica per request; 20 requests/s need 20 x 0.08561 = 1.71 GPU-seconds per second of
  //   prefill alone, i.e. already 2 GPUs.
  // Decode: 20 x 256 = 5,120 tokens/s. Per token 2N + attention at the average context 1,152
  //   (2 x 28 x 1,152 x 28 x 256 = 462,422,016) = 14,603,660,288 FLOPs -> 21.79 ms of the
  //   replica per request (256 tokens) when decode is compute bound, which it is above
  //   c* = 187 sequences: weight reads 15.23 GB / (2,039 GB/s x 0.85) = 8.79 ms per step against
  //   per sequence 85.1 us of compute and 38.1 us of KV reads (1,152 x 57,344 bytes).
  // Per request 85.61 + 21.79 = 107.40 ms -> 9.311 requests/s per replica -> 20 / 9.311 = 2.15
  //   -> 3 replicas of 1 GPU. Counting prefill only as latency (c / (O x step + prefill)) gave
  //   one replica.
  Workload w;
  w.task = Task::kInfer;
  w.context = 1024 + 256;
  const Gpu& a100 = Cat().Find("A100");
  TimeConfig flat;
  flat.mfu = 0.55;  // the flat rate keeps the arithmetic above by hand (the per-operation rates: §3)
  const InferencePlan p = PlanInference(Qwen7b(), w, Layout{}, a100, flat, {}, 1024, 256, 20.0, 0);
  ASSERT_TRUE(p.fits);
  // The concurrency that fits: at most (80 GiB - 15.23 GB weights - 0.5 GiB context) / (1,280 x
  // 57,344 bytes) = 955 sequences, and above c* = 187.
  EXPECT_LE(p.workload.concurrency, 955);
  EXPECT_GT(p.workload.concurrency, 187);
  EXPECT_FALSE(p.time.memory_bound);
  EXPECT_NEAR(p.time.prefill_flops, 14'691'081'388'032.0, 1e3);
  EXPECT_NEAR(p.time.prefill_seconds, 0.085612, 1e-6);
  EXPECT_NEAR(p.time.replica_seconds_per_request, 0.107399, 1e-5);
  EXPECT_NEAR(p.time.requests_per_second, 9.311, 1e-3);
  EXPECT_EQ(p.replicas, 3);
  EXPECT_EQ(p.gpus_total, 3);
  EXPECT_EQ(p.bound, "compute");
  EXPECT_NEAR(p.prefill_share, 85.61 / 107.40, 1e-3);
}

TEST(TimeModel, MixedStepsShareTheWeightReadsWithPrompts) {
  // docs/time-model.md §5.3, the hand figures of QpsSizingCountsPrefillAsGpuTime (Qwen2.5-7B on an
  // A100 80GB, 1,024 + 256 tokens, flat 171.6 TFLOPS): a 1,024-token prefill 85.61 ms; per
  // sequence 85.1 us of decode matmuls and 38.1 us of KV reads; 8.79 ms of weight reads a step.
  // At 16 sequences in flight, 16 / 256 requests finish a step, so 16 x 1,024 / 256 = 64 prompt
  // tokens join each step: 64 / 1,024 of a prefill = 5.35 ms of matmuls (same context, same
  // per-token work), plus 16 x 85.1 us = 1.36 ms of decode: 6.71 ms, under the 8.79 + 16 x 38.1
  // us = 9.40 ms of reads. The step stays memory-bound at 9.40 ms, the prompts ride along: a
  // request costs 256 x 9.40 / 16 = 150.4 ms of the replica, against 85.61 + 150.4 = 236.0 ms
  // with the prefill as a pass of its own.
  Workload w;
  w.task = Task::kInfer;
  w.context = 1024 + 256;
  w.concurrency = 16;
  const Gpu& a100 = Cat().Find("A100");
  TimeConfig flat;
  flat.mfu = 0.55;
  const InferenceTime alone = EstimateInferenceTime(Qwen7b(), w, Layout{}, a100, flat, 1024, 256);
  EXPECT_FALSE(alone.mixed);
  EXPECT_NEAR(alone.replica_seconds_per_request, 0.08561 + 0.1504, 0.0005);
  flat.mixed_step_tokens = 2048;  // vLLM's max_num_batched_tokens on an A100
  const InferenceTime mixed = EstimateInferenceTime(Qwen7b(), w, Layout{}, a100, flat, 1024, 256);
  ASSERT_TRUE(mixed.mixed);
  EXPECT_DOUBLE_EQ(mixed.mixed_prefill_tokens, 64);
  EXPECT_NEAR(mixed.mixed_prefill_seconds, 0.08561 * 64 / 1024, 0.00002);
  EXPECT_NEAR(mixed.mixed_step_seconds, 0.00940, 0.00002);
  EXPECT_NEAR(mixed.replica_seconds_per_request, 0.1504, 0.0005);
  // At 256 in flight the step is compute-bound (21.79 ms of decode + 85.61 ms of the 1,024 prompt
  // tokens, 107.40 ms): mixing saves nothing, as when the prefill ran alone.
  w.concurrency = 256;
  const InferenceTime full = EstimateInferenceTime(Qwen7b(), w, Layout{}, a100, flat, 1024, 256);
  ASSERT_TRUE(full.mixed);
  EXPECT_NEAR(full.mixed_step_seconds, 0.10740, 0.00005);
  EXPECT_NEAR(full.replica_seconds_per_request, 0.10740, 0.00005);
  // A step budget that cannot take 256 decodes and 1,024 prompt tokens: prefills run alone.
  flat.mixed_step_tokens = 1024;
  EXPECT_FALSE(EstimateInferenceTime(Qwen7b(), w, Layout{}, a100, flat, 1024, 256).mixed);
}

TEST(Search, QpsBoundIsKvCapacityWhenWeightReadsDominate) {
  // Llama-3.1-70B in bf16 on 2 x H100 (tp=2), 4,096-token context, 128 prompt + 1,024 output
  // tokens. Each GPU holds half of 70,553,706,496 parameters = 70.55 GB of weights, leaving
  // about 85.90 - 70.55 - 0.52 (CUDA context) - 0.27 (NCCL) = 14.55 GB for KV cache of
  // 4,096 x 327,680 / 2 = 671 MB per sequence: at most 21 sequences. A decode step reads the
  // 70.55 GB of weights (24.8 ms at 3,350 GB/s x 0.85) against at most 21 x 640 x 163,840 =
  // 2.2 GB of KV and 21 x 2 x 70e9 / (2 x 494.7e12) = 3 ms of matmuls; the prefill is
  // 2 x 70e9 x 128 / (2 x 494.7 TFLOPS) = 18 ms against 1,024 x 24.8 ms / 21 = 1.2 s of decode per
  // request. The weight reads would amortise over more sequences, but no more fit: KV capacity.
  Workload w;
  w.task = Task::kInfer;
  w.context = 4096;
  Layout l;
  l.gpus = 2;
  l.tp = 2;
  const InferencePlan p = PlanInference(LoadHfConfig(test::Preset("Llama-3.1-70B")), w, l, Cat().Find("H100"), {},
                                        {}, 128, 1024, 5.0, 0);
  ASSERT_TRUE(p.fits);
  EXPECT_LE(p.workload.concurrency, 21);
  EXPECT_GE(p.workload.concurrency, 15);
  EXPECT_TRUE(p.time.memory_bound);
  EXPECT_EQ(p.bound, "KV capacity");
  EXPECT_LT(p.prefill_share, 0.05);
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
  EXPECT_LT(GemmFraction(h200, false), best_gemm * 1e12 / PeakFlops(h200, Precision::kBf16));
  // A whole step cannot beat the matmuls of a real layer shape.
  ASSERT_GT(layer_gemm, 0);
  EXPECT_LT(GemmFraction(h200, false), layer_gemm * 1e12 / PeakFlops(h200, Precision::kBf16));
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
