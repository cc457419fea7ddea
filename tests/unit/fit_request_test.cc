// The fit job as request -> result (issue 8 requirement 1): the request's defaults, the
// search-or-single decision, the job size, the single fit's result and its JSON, with values
// derived by hand.
#include <gtest/gtest.h>

#include "core/error.h"
#include "plan/fit_job.h"
#include "fit/fit_request.h"
#include "plan/render/fit_job_json.h"
#include "test_paths.h"

namespace gpuplan {
namespace {

const GpuCatalog& Cat() { return test::Catalog(); }
constexpr int64_t kQwen7bParams = 7'615'616'512;  // Qwen2.5-7B (fit/full-7b-adam-a100.yaml)

TEST(FitRequest, DefaultsAreDefinedOnceInTheRequest) {
  const FitRequest r;
  EXPECT_EQ(r.task, "full");
  EXPECT_EQ(r.gpus, 1);
  EXPECT_EQ(r.seq, 2048);
  EXPECT_EQ(r.micro_batch, 1);
  EXPECT_EQ(r.global_batch, 0);
  EXPECT_EQ(r.precision, "mixed");
  EXPECT_EQ(r.optimizer, "adamw");
  EXPECT_EQ(r.zero, 0);
  EXPECT_EQ(r.tp * r.pp * r.ep * r.vpp, 1);
  EXPECT_EQ(r.recompute, "none");
  EXPECT_EQ(r.flash_attn, "on");
  EXPECT_EQ(r.lora_rank, 16);
  EXPECT_EQ(r.weight_dtype, "bf16");
  EXPECT_EQ(r.kv_dtype, "bf16");
  EXPECT_EQ(r.context, 4096);
  EXPECT_EQ(r.concurrency, 1);
  EXPECT_EQ(r.batched_tokens, 8192);
  EXPECT_DOUBLE_EQ(r.cuda_context_mib, 500);
  EXPECT_DOUBLE_EQ(r.nccl_mib, 256);
  EXPECT_DOUBLE_EQ(r.fragmentation, 0.05);
  EXPECT_EQ(r.prompt_tokens, 1024);
  EXPECT_EQ(r.output_tokens, 256);
  EXPECT_EQ(r.max_gpus, 64);
  EXPECT_DOUBLE_EQ(r.margin, 0.05);
  EXPECT_EQ(r.objective, "time");
  EXPECT_EQ(r.top, 5);
  EXPECT_FALSE(r.pinned.Any());
  EXPECT_FALSE(r.now.has_value());
}

TEST(FitRequest, SearchWithoutACardOverAListOrOverCountsOfOneCard) {
  FitRequest r;
  EXPECT_TRUE(r.IsSearch());  // no card: every card of the catalog
  r.gpu = "A100";
  EXPECT_FALSE(r.IsSearch());
  r.gpu = "A100,H100";
  EXPECT_TRUE(r.IsSearch());
  r.gpu = "A100";
  r.max_gpus_given = true;
  EXPECT_TRUE(r.IsSearch());
}

TEST(FitRequest, JobTokensAreEpochsTimesDatasetTokens) {
  FitRequest r;
  EXPECT_DOUBLE_EQ(r.JobTokens(), 0);
  r.tokens = 5e7;
  EXPECT_DOUBLE_EQ(r.JobTokens(), 5e7);
  r.epochs = 2;
  r.dataset_tokens = 1e9;
  EXPECT_DOUBLE_EQ(r.JobTokens(), 2e9);  // 2 x 1e9, instead of --tokens
  r.dataset_tokens = 0;
  EXPECT_THROW(r.JobTokens(), InputError);  // --epochs without --dataset-tokens
  FitRequest negative;
  negative.tokens = -1;
  EXPECT_THROW(negative.JobTokens(), InputError);
}

TEST(FitRequest, SizingForARateHoldsEachRequestsOwnContext) {
  // --qps without --context: a sequence holds prompt + output = 1024 + 256 = 1280 tokens.
  FitRequest r;
  r.model = "Qwen2.5-7B";
  r.task = "infer";
  r.qps = 20;
  EXPECT_EQ(PrepareFit(r, test::DataDir()).workload.context, 1280);
  r.context_given = true;  // --context given: the window stays (default 4096)
  EXPECT_EQ(PrepareFit(r, test::DataDir()).workload.context, 4096);
}

TEST(FitRequest, BadLayoutNamesTheFlag) {
  FitRequest r;
  r.model = "Qwen2.5-7B";
  r.gpus = 0;
  try {
    PrepareFit(r, test::DataDir());
    FAIL() << "--gpus 0 accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(test::AsCli(e).what()).find("--gpus"), std::string::npos) << e.what();
  }
}

TEST(FitJob, SingleInferenceOnT4UsesFp16Weights) {
  // T4 (Turing) has no bf16: the default bf16 weights become fp16, 2 bytes x 7,615,616,512 =
  // 15,231,233,024 B, which with the KV cache and overheads exceeds the T4's 15,360 MiB.
  FitRequest r;
  r.model = "Qwen2.5-7B";
  r.task = "infer";
  r.gpu = "T4";
  const FitJobResult res = RunFit(r, Cat(), test::DataDir());
  ASSERT_TRUE(res.single.has_value());
  EXPECT_FALSE(res.search.has_value());
  const FitSingle& s = *res.single;
  EXPECT_EQ(s.gpu->name, "T4");
  EXPECT_EQ(s.workload.weight_dtype, WeightDtype::kFp16);
  EXPECT_DOUBLE_EQ(s.memory.per_gpu.weights.value, 2.0 * kQwen7bParams);
  EXPECT_EQ(s.memory.params_total, kQwen7bParams);
  EXPECT_FALSE(s.training.has_value());
  ASSERT_TRUE(s.plan.has_value());
  EXPECT_EQ(res.Positive(), s.fits);

  const nlohmann::json j = FitJobToJson(res);
  EXPECT_EQ(j["memory_per_gpu"]["weights"].get<int64_t>(), 15'231'233'024);
  // KV cache per sequence: 28 layers x 2 (K, V) x 4 KV heads x 128 x 2 bytes (fp16) = 57,344 B
  // per token x 4,096 tokens = 234,881,024 B; the serving figures sit beside it.
  EXPECT_EQ(j["inference"]["kv_cache_per_sequence"].get<int64_t>(), 234'881'024);
}

// Bytes past 2^53 stay numbers in --json, never a wrapped integer: 10 million tokens a sequence
// and 100,000 sequences a micro-batch (each within its option's bounds) on Llama 3.1 405B is at
// least 10^12 tokens x 16,384 hidden x 2 bytes x 126 layers / 8 GPUs = 5.2 x 10^17 bytes of
// activations per GPU on the layer inputs alone; llround of such a value wrapped to
// -9223372036854775808 in memory_per_gpu.total and nvidia_smi.
TEST(FitJob, MemoryBeyondExactIntegersIsANumberNotAWrappedOne) {
  FitRequest r;
  r.model = "Llama-3.1-405B";
  r.gpu = "B200";
  r.gpus = 8;
  r.seq = 10'000'000;
  r.micro_batch = 100'000;
  const FitJobResult res = RunFit(r, Cat(), test::DataDir());
  const nlohmann::json j = FitJobToJson(res);
  for (const char* key : {"total", "activations", "nvidia_smi"}) {
    SCOPED_TRACE(key);
    ASSERT_TRUE(j["memory_per_gpu"][key].is_number());
    EXPECT_GT(j["memory_per_gpu"][key].get<double>(), 5.2e17);
  }
  EXPECT_TRUE(j["memory_per_gpu"]["weights"].is_number_integer());  // 405.9e9 x 2 / 8 or so: exact
  EXPECT_FALSE(res.Positive());
}

TEST(FitJob, PinsAreKeptBySearch) {
  // --gpus 1 --zero 0 without --gpu: every candidate is one card without ZeRO (search_test.cc).
  FitRequest r;
  r.model = "Llama-3.1-8B";
  r.tokens = 1e9;
  r.pinned.gpus = 1;
  r.pinned.zero = 0;
  const FitJobResult res = RunFit(r, Cat(), test::DataDir());
  ASSERT_TRUE(res.search.has_value());
  ASSERT_TRUE(res.search->training.has_value());
  EXPECT_FALSE(res.search->cards_named);
  for (const auto& c : res.search->training->ranked) {
    EXPECT_EQ(c.layout.gpus, 1);
    EXPECT_EQ(c.layout.zero, 0);
  }
  const nlohmann::json j = FitJobToJson(res);
  EXPECT_EQ(j["search"]["pinned"], (nlohmann::json{{"gpus", 1}, {"zero", 0}}));
}

}  // namespace
}  // namespace gpuplan
