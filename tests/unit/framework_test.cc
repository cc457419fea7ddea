// Framework profiles (data/frameworks.yaml, docs/memory-model.md §8): the file's loader and its
// errors, and each profile's convention held by hand on a small model against the generic one.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "catalog/gpu_catalog.h"
#include "catalog/model.h"
#include "core/error.h"
#include "fit/advisor.h"
#include "fit/fit_options.h"
#include "fit/fit_request.h"
#include "fit/framework.h"
#include "fit/memory_model.h"
#include "test_paths.h"

namespace gpuplan {
namespace {

// A JSON request read into `r` as the serve API reads it: ReadJson, then the checks RunFit
// makes first (CheckFitRequest).
void ReadChecked(const nlohmann::json& j, FitRequest& r) {
  ReadJson(j, r);
  CheckFitRequest(r, test::DataDir());
}

const FrameworkCatalog& Shipped() {
  static const FrameworkCatalog c = FrameworkCatalog::Load(test::DataDir() + "/frameworks.yaml");
  return c;
}

OverheadConfig With(const std::string& name) {
  OverheadConfig o;
  o.framework = Shipped().Find(name);
  return o;
}

const ModelSpec& Qwen06b() {
  static const ModelSpec m = LoadHfConfig(test::Preset("Qwen3-0.6B"));
  return m;
}

constexpr double kP8b = 8'030'261'248.0;  // Llama-3.1-8B parameters
constexpr double kContext = 500.0 * 1048576;  // OverheadConfig's CUDA context, 500 MiB
constexpr double kNccl = 256.0 * 1048576;     // one NCCL communicator

Workload Train(Task t, int64_t seq) {
  Workload w;
  w.task = t;
  w.seq = seq;
  return w;
}

Workload Infer(int64_t context) {
  Workload w;
  w.task = Task::kInfer;
  w.context = context;
  return w;
}

InputError ParseError(const std::string& text) {
  try {
    FrameworkCatalog::Parse(text, "f.yaml");
  } catch (const InputError& e) {
    return e;
  }
  ADD_FAILURE() << "no error for:\n" << text;
  return InputError("");
}

const char* kMinimal =
    "frameworks:\n"
    "  - name: generic\n"
    "    sources: [A]\n"
    "sources:\n"
    "  A: a source\n";

TEST(FrameworkFile, ShipsEveryProfileOfTheIssueWithSources) {
  for (const char* name : {"generic", "hf-trainer", "peft", "deepspeed", "fsdp", "megatron", "torchtune", "torchtitan",
                           "litgpt", "llama-factory", "vllm", "sglang", "lmdeploy", "tgi", "llama.cpp"}) {
    const FrameworkProfile& p = Shipped().Find(name);
    EXPECT_EQ(p.name, name);
    EXPECT_FALSE(p.sources.empty()) << name;
  }
  // Each profile names its version (issue 31); the first listed is the default.
  for (const FrameworkProfile& p : Shipped().profiles) {
    EXPECT_TRUE(p.IsGeneric() || !p.version.empty()) << p.name;
  }
  EXPECT_EQ(Shipped().Find("vllm").version, "0.21");
  EXPECT_EQ(Shipped().Find("vllm").kv_fraction, 0.92);  // vllm/config/cache.py L80 since 96a85c57
  EXPECT_EQ(Shipped().Find("vllm@0.20").kv_fraction, 0.9);
  EXPECT_EQ(Shipped().Find("torchtune").loss_chunks, 8);
  EXPECT_EQ(Shipped().Find("deepspeed").reduce_bucket_elements, 5e8);
  EXPECT_EQ(Shipped().cuda_context_mib.at("hopper"), 550);
}

// Megatron-LM splits the layers evenly (core_v0.19.0 megatron/training/arguments.py L934-940):
// with virtual stages pp divides the layers and vpp each stage's layers. Worked by hand: 80 layers
// over pp 8 are 10 a stage, divided by 1, 2, 5 (and 10, beyond the 8 tried); 92 over pp 4 are 23, a
// prime, so nothing interleaves; 100 over pp 8 is not even. The generic rule takes 1, 2, 4, 8 and
// every other v <= 8 that divides a stage's layers, while pp x v <= layers: 80 over pp 8 (10 a
// stage) 1, 2, 4, 5, 8; 24 over pp 8 (3 a stage) 1, 2, 3 (4 would leave a chunk without a layer);
// 70 over pp 12 (6 a stage, the last 4) 1, 2, 3, 4 (pp x 6 = 72 > 70).
TEST(FrameworkFile, VirtualStagesFollowTheFrameworksSplit) {
  const FrameworkProfile& megatron = Shipped().Find("megatron");
  const FrameworkProfile& generic = Shipped().Find("generic");
  EXPECT_TRUE(megatron.even_pipeline_split);
  EXPECT_FALSE(generic.even_pipeline_split);
  EXPECT_EQ(VppCandidates(megatron, 80, 8), (std::vector<int64_t>{1, 2, 5}));
  EXPECT_EQ(VppCandidates(megatron, 92, 4), (std::vector<int64_t>{1}));
  EXPECT_EQ(VppCandidates(megatron, 100, 8), (std::vector<int64_t>{1}));
  EXPECT_EQ(VppCandidates(megatron, 84, 2), (std::vector<int64_t>{1, 2, 3, 6, 7}));
  EXPECT_EQ(VppCandidates(megatron, 80, 1), (std::vector<int64_t>{1}));
  EXPECT_EQ(VppCandidates(generic, 80, 8), (std::vector<int64_t>{1, 2, 4, 5, 8}));
  EXPECT_EQ(VppCandidates(generic, 24, 8), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(VppCandidates(generic, 70, 12), (std::vector<int64_t>{1, 2, 3, 4}));
  EXPECT_EQ(VppCandidates(Shipped().Find("hf-trainer"), 80, 8), (std::vector<int64_t>{1}));
  EXPECT_EQ(VppRefusal(megatron, 80, 8, 5), "");
  EXPECT_EQ(VppRefusal(megatron, 80, 8, 1), "");
  EXPECT_NE(VppRefusal(megatron, 80, 8, 4).find("10 layers a stage do not divide by vpp 4"), std::string::npos);
  EXPECT_NE(VppRefusal(megatron, 100, 8, 2).find("100 layers do not divide by pp 8"), std::string::npos);
  EXPECT_EQ(VppRefusal(generic, 80, 8, 4), "");
}

TEST(FrameworkFile, GgufBitsPerWeightFromTheBlockLayouts) {
  // ggml-common.h: block_q8_0 = fp16 scale + 32 int8 = 34 bytes per 32 weights; block_q4_0 = 2 +
  // 16 bytes per 32; block_q6_K = 128 + 64 + 16 + 2 = 210 bytes per 256. K-quant mixes: the
  // quantize README's Llama-3.1-8B table since 7f975995 (Q4_K_M 4.8944, Q5_K_M 5.7036; the Llama 2
  // 7B table before it said 4.84 and 5.68).
  EXPECT_DOUBLE_EQ(Shipped().GgufBits("Q8_0"), 34.0 * 8 / 32);
  EXPECT_DOUBLE_EQ(Shipped().GgufBits("q4_0"), 18.0 * 8 / 32);
  EXPECT_DOUBLE_EQ(Shipped().GgufBits("Q6_K"), 210.0 * 8 / 256);
  EXPECT_DOUBLE_EQ(Shipped().GgufBits("Q4_K_M"), 4.8944);
  EXPECT_DOUBLE_EQ(Shipped().GgufBits("Q5_K_M"), 5.7036);
  EXPECT_DOUBLE_EQ(Shipped().GgufBits("F16"), 16);
  try {
    (void)Shipped().GgufBits("Q4_K_X");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(test::AsCli(e).field(), "--gguf-type");
    ASSERT_FALSE(e.suggestions().empty());
  }
}

TEST(FrameworkFile, UnknownNameSuggestsTheClosest) {
  try {
    (void)Shipped().Find("deepspeeed");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(test::AsCli(e).field(), "--framework");
    ASSERT_FALSE(e.suggestions().empty());
    EXPECT_EQ(e.suggestions()[0], "deepspeed");
  }
  EXPECT_EQ(Shipped().Find("LLAMA.CPP").name, "llama.cpp");  // case and punctuation do not matter
}

TEST(FrameworkFile, ErrorsNameFileLineAndKey) {
  EXPECT_NO_THROW(FrameworkCatalog::Parse(kMinimal, "f.yaml"));
  InputError e = ParseError(
      "frameworks:\n"
      "  - name: generic\n"
      "    sources: [A]\n"
      "  - name: x\n"
      "    version: \"1\"\n"
      "    los: full\n"
      "    sources: [A]\n"
      "sources:\n"
      "  A: a source\n");
  EXPECT_EQ(e.file(), "f.yaml");
  EXPECT_EQ(e.line(), 6);
  EXPECT_EQ(e.field(), "frameworks[x@1].los");
  ASSERT_FALSE(e.suggestions().empty());
  EXPECT_EQ(e.suggestions()[0], "loss");
  e = ParseError(
      "frameworks:\n"
      "  - name: generic\n"
      "    sources: [A]\n"
      "  - name: x\n"
      "    version: \"1\"\n"
      "    sources: [A]\n"
      "    loss: chunky\n"
      "sources:\n"
      "  A: a source\n");
  EXPECT_EQ(e.line(), 7);
  EXPECT_EQ(e.field(), "frameworks[x@1].loss");
  e = ParseError(
      "frameworks:\n"
      "  - name: generic\n"
      "    sources: [A]\n"
      "  - name: x\n"
      "    version: \"1\"\n"
      "    sources: [A]\n"
      "    fp8_head: fp16\n"
      "sources:\n"
      "  A: a source\n");
  EXPECT_EQ(e.line(), 7);
  EXPECT_EQ(e.field(), "frameworks[x@1].fp8_head");  // fp8 or bf16
  // The memory conventions' keys: a value out of the list, a ZeRO stage out of 0-3, a fraction.
  for (const auto& [key, bad] : std::vector<std::pair<std::string, std::string>>{
           {"glu", "fast"}, {"fp8_saved_input", "bf16"}, {"default_zero", "4"}, {"default_zero", "-1"},
           {"default_zero", "1.5"}}) {
    e = ParseError("frameworks:\n  - name: generic\n    sources: [A]\n  - name: x\n    version: \"1\"\n    sources: [A]\n    " +
                   key + ": " + bad + "\nsources:\n  A: a source\n");
    EXPECT_EQ(e.line(), 7) << key << ": " << bad;
    EXPECT_EQ(e.field(), "frameworks[x@1]." + key) << key << ": " << bad;
  }
  e = ParseError(
      "frameworks:\n"
      "  - name: generic\n"
      "    sources: [B]\n"
      "sources:\n"
      "  A: a source\n");
  EXPECT_EQ(e.field(), "frameworks[generic].sources");
  e = ParseError(
      "frameworks:\n"
      "  - name: x\n"
      "    version: \"1\"\n"
      "    sources: [A]\n"
      "sources:\n"
      "  A: a source\n");
  EXPECT_EQ(e.field(), "frameworks");  // the default profile must be there
  e = ParseError(
      "frameworks:\n"
      "  - name: generic\n"
      "    sources: [A]\n"
      "  - name: v\n"
      "    version: \"1\"\n"
      "    kv_rule: vllm\n"
      "    kv_fraction: 0.9\n"
      "    sources: [A]\n"
      "sources:\n"
      "  A: a source\n");
  EXPECT_EQ(e.field(), "frameworks[v@1].kind");  // an inference rule on a training profile
  // A profile without its version; the same version twice; extends of a profile not above.
  const std::string head = "frameworks:\n  - name: generic\n    sources: [A]\n";
  const std::string tail = "sources:\n  A: a source\n";
  e = ParseError(head + "  - name: v\n    sources: [A]\n" + tail);
  EXPECT_EQ(e.field(), "frameworks[1].version");
  EXPECT_EQ(e.line(), 4);
  e = ParseError(head + "  - name: v\n    version: \"1\"\n    sources: [A]\n  - name: v\n    version: \"1\"\n    sources: [A]\n" +
                 tail);
  EXPECT_EQ(e.field(), "frameworks[v@1].version");
  EXPECT_NE(std::string(e.what()).find("duplicate"), std::string::npos);
  e = ParseError(head + "  - name: v\n    version: \"2\"\n    extends: v@1\n    sources: [A]\n" + tail);
  EXPECT_EQ(e.field(), "frameworks[v@2].extends");
}

TEST(Frameworks, GenericChangesNothingAndSplitsTheThreeNumbers) {
  const Workload w = Train(Task::kFull, 1024);
  const MemoryEstimate base = EstimateMemory(Qwen06b(), w, Layout{});
  const MemoryEstimate gen = EstimateMemory(Qwen06b(), w, Layout{}, With("generic"));
  EXPECT_DOUBLE_EQ(gen.per_gpu.Total().value, base.per_gpu.Total().value);
  EXPECT_DOUBLE_EQ(base.nvidia_smi.value, base.per_gpu.Total().value);
  EXPECT_DOUBLE_EQ(base.load_peak.value, base.nvidia_smi.value);
  // Allocated = total - CUDA context (500 MiB, outside the allocator) - 5 % reserve on the
  // dynamic tensors (activations + gradients).
  const double dynamic = base.per_gpu.activations.value + base.per_gpu.gradients.value;
  EXPECT_DOUBLE_EQ(base.peak_allocated.value, base.per_gpu.Total().value - kContext - 0.05 * dynamic);
  EXPECT_DOUBLE_EQ(base.comm_buffers.value, 0);
}

TEST(Frameworks, TorchtuneChunkedLossSavesFourSVTimesOneMinusOneOverChunks) {
  // Qwen3-0.6B, vocab 151936, seq 2048, micro-batch 1: the full loss keeps an fp32 upcast and an
  // fp32 log-softmax of S x V; 8 chunks make the upcast one chunk at a time:
  // saved = 4 x 2048 x 151936 x (1 - 1/8) = 7168 x 151936 = 1,089,077,248 bytes.
  const Workload w = Train(Task::kFull, 2048);
  const MemoryEstimate full = EstimateMemory(Qwen06b(), w, Layout{});
  const MemoryEstimate tt = EstimateMemory(Qwen06b(), w, Layout{}, With("torchtune"));
  EXPECT_DOUBLE_EQ(full.per_gpu.activations.value - tt.per_gpu.activations.value, 1'089'077'248.0);
  EXPECT_DOUBLE_EQ(4.0 * 2048 * 151936 * (1 - 1.0 / 8), 1'089'077'248.0);
  EXPECT_LT(tt.nvidia_smi.value, full.nvidia_smi.value);
}

TEST(Frameworks, FusedLossKeepsOneChunkOfSTimesHidden) {
  // Fused linear + cross-entropy: bf16 + fp32 of S x h instead of (2 + 8) x S x V.
  OverheadConfig o;
  o.framework.loss = LossKind::kFused;
  const Workload w = Train(Task::kFull, 2048);
  const MemoryEstimate full = EstimateMemory(Qwen06b(), w, Layout{});
  const MemoryEstimate fused = EstimateMemory(Qwen06b(), w, Layout{}, o);
  EXPECT_DOUBLE_EQ(full.per_gpu.activations.value - fused.per_gpu.activations.value,
                   10.0 * 2048 * 151936 - 6.0 * 2048 * 1024);
}

TEST(Frameworks, DeepSpeedBucketBuffers) {
  Layout l;
  l.gpus = 8;
  l.zero = 2;
  const Workload w = Train(Task::kFull, 1024);
  // ZeRO-2 (DeepSpeed v0.19.5 stage_1_and_2.py setup_buckets): one IPG buffer of
  // reduce_bucket_size 5e8 elements x 2 bytes (bf16); overlap_comm is off below stage 3 and the
  // all-gather writes in place, so no all-gather bucket. Before issue 31: 2e9 (a phantom 1 GB).
  MemoryEstimate e = EstimateMemory(test::Llama8b(), w, l, With("deepspeed"));
  EXPECT_DOUBLE_EQ(e.comm_buffers.value, 1e9);
  const MemoryEstimate gen = EstimateMemory(test::Llama8b(), w, l);
  EXPECT_DOUBLE_EQ(e.nvidia_smi.value - gen.nvidia_smi.value, 1e9);
  EXPECT_DOUBLE_EQ(e.peak_allocated.value - gen.peak_allocated.value, 1e9);  // torch tensors
  // overlap_comm set at stage 2: a second buffer.
  OverheadConfig overlap = With("deepspeed");
  overlap.framework.overlap_comm = "always";
  EXPECT_DOUBLE_EQ(EstimateMemory(test::Llama8b(), w, l, overlap).comm_buffers.value, 2e9);
  // ZeRO-3 (stage3.py L699-704): one IPG buffer, no fixed prefetch buffer. Before: 1.1e9.
  l.zero = 3;
  e = EstimateMemory(test::Llama8b(), w, l, With("deepspeed"));
  EXPECT_DOUBLE_EQ(e.comm_buffers.value, 1e9);
  // A model smaller than the bucket: capped at its parameters (Qwen3-0.6B, 596,049,920, 2 bytes each).
  l.zero = 2;
  OverheadConfig big = With("deepspeed");
  big.framework.reduce_bucket_elements = 1e9;
  e = EstimateMemory(Qwen06b(), w, l, big);
  EXPECT_DOUBLE_EQ(e.comm_buffers.value, 2.0 * static_cast<double>(e.params_total));
  // One GPU: no communication, no buckets.
  e = EstimateMemory(test::Llama8b(), w, Layout{}, With("deepspeed"));
  EXPECT_DOUBLE_EQ(e.comm_buffers.value, 0);
}

TEST(Frameworks, HfTrainerDdpBucketsCopyTheGradients) {
  // DDP with gradient_as_bucket_view=False: a second copy of the 2-byte gradients, 2 x P.
  Layout l;
  l.gpus = 4;
  const Workload w = Train(Task::kFull, 512);
  const MemoryEstimate e = EstimateMemory(Qwen06b(), w, l, With("hf-trainer"));
  EXPECT_DOUBLE_EQ(e.comm_buffers.value, 2.0 * static_cast<double>(e.params_total));
  EXPECT_DOUBLE_EQ(e.comm_buffers.value, e.per_gpu.gradients.value);
  l.zero = 1;  // a ZeRO optimizer replaces DDP's buckets
  EXPECT_DOUBLE_EQ(EstimateMemory(Qwen06b(), w, l, With("hf-trainer")).comm_buffers.value, 0);
}

TEST(Frameworks, MegatronKeepsFp32MainGrads) {
  const Workload w = Train(Task::kFull, 1024);
  const MemoryEstimate e = EstimateMemory(test::Llama8b(), w, Layout{}, With("megatron"));
  EXPECT_DOUBLE_EQ(e.per_gpu.gradients.value, 4 * kP8b);  // 2 + 4 + 12 = 18 bytes per parameter
  EXPECT_DOUBLE_EQ((e.per_gpu.weights + e.per_gpu.gradients + e.per_gpu.optimizer).value, 18 * kP8b);
}

TEST(Frameworks, LitgptQloraPeaksOnTheBf16WeightsBeforeNf4) {
  // Llama-3.1-8B QLoRA, seq 256, the LitGPT of April 2024 (58c5b18, the measured rows): at load
  // every base weight is bf16 on the GPU: 2 x 8,030,261,248 bytes + the 500 MiB CUDA context =
  // 16,584,810,496 bytes.
  const Workload w = Train(Task::kQlora, 256);
  const MemoryEstimate lit = EstimateMemory(test::Llama8b(), w, Layout{}, With("litgpt@58c5b18"));
  EXPECT_DOUBLE_EQ(lit.load_peak.value, 2 * kP8b + kContext);
  EXPECT_DOUBLE_EQ(lit.load_peak.value, 16'584'810'496.0);
  EXPECT_GT(lit.load_peak.value, lit.nvidia_smi.value);
  // PEFT + bitsandbytes quantises as it loads: no load peak above the steady state.
  const MemoryEstimate peft = EstimateMemory(test::Llama8b(), w, Layout{}, With("peft"));
  EXPECT_DOUBLE_EQ(peft.load_peak.value, peft.nvidia_smi.value);
  // LitGPT 0.5.13 quantises each Linear as its weight loads (Lightning's pre-hook): no such peak.
  const MemoryEstimate now = EstimateMemory(test::Llama8b(), w, Layout{}, With("litgpt"));
  EXPECT_DOUBLE_EQ(now.load_peak.value, now.nvidia_smi.value);
  // LitGPT's rule is about quantisation: a bf16 LoRA has no such peak.
  const MemoryEstimate lora = EstimateMemory(test::Llama8b(), Train(Task::kLora, 256), Layout{}, With("litgpt@58c5b18"));
  EXPECT_DOUBLE_EQ(lora.load_peak.value, lora.nvidia_smi.value);
}

TEST(Frameworks, FsdpMaterialisesTheUnshardedModelAtStart) {
  // ZeRO-3 / FSDP over 64 GPUs, Llama-3.1-8B, seq 256: the steady state holds 1/64 of the states,
  // but the model built on the GPU before fully_shard holds 2 x P bytes, + context + one NCCL group.
  Layout l;
  l.gpus = 64;
  l.zero = 3;
  const MemoryEstimate e = EstimateMemory(test::Llama8b(), Train(Task::kFull, 256), l, With("fsdp"));
  EXPECT_DOUBLE_EQ(e.load_peak.value, 2 * kP8b + kContext + kNccl);
  EXPECT_GT(e.load_peak.value, e.nvidia_smi.value);
}

TEST(Frameworks, VllmKvTokensByHand) {
  // Llama-3.1-8B bf16 on an H100 SXM 80GB (85,520,809,984 bytes), vLLM 0.20 (utilisation 0.9;
  // since v0.9.1 the CUDA context sits outside utilisation x total, issue 31):
  //   utilisation 0.9 x 85,520,809,984           = 76,968,728,985.6
  //   - weights 2 x 8,030,261,248                = 16,060,522,496
  //   - profiling run: 8192 batched tokens x 2 bytes x (2h + q + kv + o + 3 x ffn)
  //       = 8192 x 2 x (8192 + 4096 + 2048 + 4096 + 43008) = 1,006,632,960
  //     + sampler fp32 logits and probabilities of 256 sequences: 256 x 8 x 128256 = 262,668,288
  //   = 59,638,905,241.6 bytes of KV space; one token = 32 layers x 8 heads x 256 x 2 bytes = 131,072
  //   -> 455,008.8 tokens, in whole 16-token blocks: 455,008 tokens; 455,008 / 8192 = 55.54 sequences.
  //   (With the context inside, as before: 451,008.)
  const Gpu& h100 = test::Catalog().Find("H100 SXM 80GB");
  ASSERT_EQ(h100.memory_bytes, 85'520'809'984);
  const MemoryEstimate e = EstimateMemory(test::Llama8b(), Infer(8192), Layout{}, With("vllm@0.20"), h100.memory_bytes);
  ASSERT_TRUE(e.kv_cache_tokens.has_value());
  EXPECT_EQ(*e.kv_cache_tokens, 455'008);
  EXPECT_DOUBLE_EQ(*e.server_concurrency, 455'008.0 / 8192);
  EXPECT_EQ(*e.max_concurrency, 55);
  EXPECT_TRUE(Fits(e, h100));
  // nvidia-smi = 0.9 x total + the context outside it, less the unfilled part of a block.
  EXPECT_NEAR(e.nvidia_smi.value, 0.9 * 85'520'809'984.0 + kContext, 131072.0 * 16);
  // --gpu-memory-utilization 0.5: 42,760,404,992 - 17,329,823,744 = 25,430,581,248 bytes = 194,019.9
  // tokens -> 194,016 in whole blocks.
  OverheadConfig half = With("vllm@0.20");
  half.kv_fraction = 0.5;
  EXPECT_EQ(*EstimateMemory(test::Llama8b(), Infer(8192), Layout{}, half, h100.memory_bytes).kv_cache_tokens, 194'016);
  // 60 sequences of 8192 tokens (491,520) do not fit in 455,008 tokens.
  Workload many = Infer(8192);
  many.concurrency = 60;
  EXPECT_FALSE(Fits(EstimateMemory(test::Llama8b(), many, Layout{}, With("vllm@0.20"), h100.memory_bytes), h100));
}

TEST(Frameworks, SglangAndLmdeployKvRules) {
  const Gpu& h100 = test::Catalog().Find("H100 SXM 80GB");
  // SGLang 0.5.6 on an H100 (81,559 MiB): reserved = 512 + 8192 x 1.5 + 256 x 2 + 1/8 x 1024 = 13,440 MiB;
  // mem_fraction_static = round((81,559 - 13,440) / 81,559, 3) = 0.835. KV = free after the weights -
  // free before them x (1 - 0.835) = 0.835 x (85,520,809,984 - 524,288,000) - 16,060,522,496
  // = 54,911,573,360.6 bytes / 131,072 = 418,942.06 -> 418,942 tokens (token-granular pool).
  OverheadConfig sgl = With("sglang@0.5.6");
  sgl.framework = FrameworkOnCard(sgl.framework, h100, test::Llama8b(), 1, 1).profile;
  EXPECT_DOUBLE_EQ(sgl.framework.kv_fraction, 0.835);
  MemoryEstimate e = EstimateMemory(test::Llama8b(), Infer(4096), Layout{}, sgl, h100.memory_bytes);
  EXPECT_EQ(*e.kv_cache_tokens, 418'942);
  // lmdeploy: 0.8 x (85,520,809,984 - 16,060,522,496 - 524,288,000) = 55,148,799,590.4 bytes
  //   / 131,072 = 420,751.9 -> 420,736 tokens in 64-token blocks.
  e = EstimateMemory(test::Llama8b(), Infer(4096), Layout{}, With("lmdeploy"), h100.memory_bytes);
  EXPECT_EQ(*e.kv_cache_tokens, 420'736);
}

TEST(Frameworks, LlamaCppGgufWeightsAreParamsTimesBitsOverEight) {
  OverheadConfig o = With("llama.cpp");
  o.gguf_bits = Shipped().GgufBits("Q4_K_M");
  const MemoryEstimate e = EstimateMemory(test::Llama8b(), Infer(4096), Layout{}, o);
  EXPECT_DOUBLE_EQ(e.per_gpu.weights.value, kP8b * 4.8944 / 8);
  o.gguf_bits = Shipped().GgufBits("Q8_0");
  EXPECT_DOUBLE_EQ(EstimateMemory(test::Llama8b(), Infer(4096), Layout{}, o).per_gpu.weights.value, kP8b * 8.5 / 8);
}

template <typename F>
std::string FieldOfError(F f) {
  try {
    f();
  } catch (const InputError& e) {
    return test::AsCli(e).field();
  }
  return "(no error)";
}

TEST(FrameworkRequest, LossOverridesTheProfilesCrossEntropy) {
  // Qwen3-0.6B, seq 2048, micro-batch 1 on one H100: torchtune's chunked loss (8 chunks) against
  // --loss full keeps 4 x 2048 x 151936 x (1 - 1/8) = 1,089,077,248 bytes fewer activations;
  // generic with --loss chunked saves the same against generic.
  const auto activations = [](const std::string& framework, const std::string& loss) {
    FitRequest r;
    r.model = "Qwen3-0.6B";
    r.task = "full";
    r.seq = 2048;
    r.framework = framework;
    r.loss = loss;
    const FitInputs in = PrepareFit(r, test::DataDir());
    return FitOnCard(r, in, test::Catalog().Find("H100 SXM 80GB"), test::Catalog()).memory.per_gpu.activations.value;
  };
  EXPECT_DOUBLE_EQ(activations("torchtune", "full") - activations("torchtune", ""), 1'089'077'248.0);
  EXPECT_DOUBLE_EQ(activations("generic", "") - activations("generic", "chunked"), 1'089'077'248.0);
  EXPECT_DOUBLE_EQ(activations("torchtune", "chunked"), activations("torchtune", ""));
  // Inference computes no loss.
  FitRequest r;
  r.model = "Qwen3-0.6B";
  r.task = "infer";
  r.loss = "chunked";
  EXPECT_EQ(FieldOfError([&] { PrepareFit(r, test::DataDir()); }), "--loss");
}

TEST(FrameworkRequest, PrepareFitAppliesTheProfileAndChecksIt) {
  FitRequest r;
  r.model = "Llama-3.1-8B";
  r.task = "infer";
  r.context = 8192;
  ReadChecked(nlohmann::json{{"model", "Llama-3.1-8B"}, {"task", "infer"}, {"context", 8192}, {"framework", "vllm"}}, r);
  FitInputs in = PrepareFit(r, test::DataDir());
  EXPECT_EQ(in.overhead.framework.name, "vllm");
  EXPECT_EQ(in.overhead.framework.version, "0.21");
  EXPECT_EQ(in.cuda_context_mib.at("hopper"), 550);
  // One H100 with vLLM 0.21 (the CLI test and tests/scenarios/fit/vllm-kv-tokens-h100.yaml hold
  // the same case): 80 GiB and not an A100, so max_num_seqs 1024 and 8192 batched tokens; the
  // profiling peak 8192 x 122,880 + 1024 x 1,026,048 = 2,057,306,112; CUDA graphs 536,870,912;
  // the Hopper context (550 MiB) outside:
  // (0.92 x 85,520,809,984 - 16,060,522,496 - 2,057,306,112 - 536,870,912) / 131,072
  // = 457,950.2 -> 457,936 tokens in 16-token blocks.
  const FitSingle one = FitOnCard(r, in, test::Catalog().Find("H100 SXM 80GB"), test::Catalog());
  EXPECT_EQ(one.memory.kv_cache_tokens.value_or(0), 457'936);
  EXPECT_EQ(one.memory.server_max_num_seqs.value_or(0), 1024);
  EXPECT_TRUE(one.fits);
  // --cuda-context-mib given keeps its value for every card.
  ReadChecked(nlohmann::json{{"model", "Llama-3.1-8B"}, {"task", "infer"}, {"framework", "vllm"}, {"cuda_context_mib", 500}}, r);
  EXPECT_TRUE(PrepareFit(r, test::DataDir()).cuda_context_mib.empty());
  // The wrong kind of profile, an unknown one, a fraction out of range or on a training profile,
  // an unknown GGUF type: each names its flag.
  r = FitRequest{};
  r.model = "Llama-3.1-8B";
  r.task = "infer";
  r.framework = "torchtune";
  EXPECT_EQ(FieldOfError([&] { PrepareFit(r, test::DataDir()); }), "--framework");
  r.framework = "vlm";
  EXPECT_EQ(FieldOfError([&] { PrepareFit(r, test::DataDir()); }), "--framework");
  r.framework = "vllm";
  r.gpu_memory_utilization = 1.5;
  EXPECT_EQ(FieldOfError([&] { PrepareFit(r, test::DataDir()); }), "--gpu-memory-utilization");
  r.framework = "llama.cpp";
  r.gpu_memory_utilization.reset();
  r.gguf_type = "Q9_K";
  EXPECT_EQ(FieldOfError([&] { PrepareFit(r, test::DataDir()); }), "--gguf-type");
  r.task = "full";
  r.framework = "vllm";
  EXPECT_EQ(FieldOfError([&] { PrepareFit(r, test::DataDir()); }), "--framework");
  r.framework = "hf-trainer";
  r.gpu_memory_utilization = 0.5;
  EXPECT_EQ(FieldOfError([&] { PrepareFit(r, test::DataDir()); }), "--gpu-memory-utilization");
}

// Issue 31: the values each framework computes on the card it starts on, and the versions.
FitInputs Prepared(const std::string& model, const std::string& task, const std::string& framework, int64_t context,
                   FitRequest& r) {
  r = FitRequest{};
  nlohmann::json j{{"model", model}, {"task", task}, {"framework", framework}};
  if (context > 0) {
    j["context"] = context;
  }
  ReadChecked(j, r);
  return PrepareFit(r, test::DataDir());
}

MemoryEstimate OnCard(const std::string& model, const std::string& task, const std::string& framework, int64_t context,
                      const std::string& gpu) {
  FitRequest r;
  const FitInputs in = Prepared(model, task, framework, context, r);
  return FitOnCard(r, in, test::Catalog().Find(gpu), test::Catalog()).memory;
}

TEST(FrameworkVersions, NameSelectsTheDefaultAndNameAtVersionAnother) {
  EXPECT_EQ(Shipped().Find("vllm").Id(), "vllm@0.21");
  EXPECT_EQ(Shipped().Find("vllm@0.20").Id(), "vllm@0.20");
  EXPECT_EQ(Shipped().Find("hf-trainer@4").Id(), "hf-trainer@4.57");  // "4" selects 4.57
  EXPECT_EQ(Shipped().Find("hf-trainer@5").Id(), "hf-trainer@5.0");
  EXPECT_EQ(Shipped().Find("sglang@0.5.6").kv_fraction_rule, "sglang");
  // "vllm@" names no version: an error, not the default.
  EXPECT_THROW((void)Shipped().Find("vllm@"), InputError);
  try {
    (void)Shipped().Find("vllm@0.19");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(test::AsCli(e).field(), "--framework");
    EXPECT_NE(std::string(e.what()).find("vllm@0.21"), std::string::npos) << e.what();
  }
  // An extended profile keeps what it does not change.
  EXPECT_EQ(Shipped().Find("vllm@0.20").max_num_seqs, Shipped().Find("vllm@0.21").max_num_seqs);
  EXPECT_TRUE(Shipped().Find("vllm@0.20").large_card.has_value());
}

TEST(FrameworkVersions, VllmProfilingBatchByCard) {
  // vllm/engine/arg_utils.py (91121552, v0.9.0+): `vllm serve` on >= 70 GiB and not an A100 ->
  // max_num_seqs 1024, max_num_batched_tokens 8192; else 256 and 2048.
  struct Row {
    const char* gpu;
    int64_t seqs;
    int64_t tokens;
  };
  for (const Row& row : {Row{"H200 SXM 141GB", 1024, 8192}, Row{"H100 SXM 80GB", 1024, 8192},
                         Row{"A100 80GB SXM", 256, 2048}, Row{"L40S", 256, 2048}}) {
    const MemoryEstimate e = OnCard("Llama-3.1-8B", "infer", "vllm", 4096, row.gpu);
    EXPECT_EQ(e.server_max_num_seqs.value_or(0), row.seqs) << row.gpu;
    EXPECT_EQ(e.server_batched_tokens.value_or(0), row.tokens) << row.gpu;
  }
  // H200 (150,754,820,096 bytes), vLLM 0.21: profiling peak 8192 x 122,880 + 1024 x 1,026,048 =
  // 2,057,306,112 (before: 256 sequences, 1,269,301,248); 0.92 x total - 16,060,522,496 weights -
  // 2,057,306,112 - 536,870,912 CUDA graphs = 120,039,734,968.3 / 131,072 = 915,830.3 -> 915,824 tokens.
  EXPECT_EQ(OnCard("Llama-3.1-8B", "infer", "vllm", 4096, "H200 SXM 141GB").kv_cache_tokens.value_or(0), 915'824);
  // A100 80GB (85,899,345,920): 2048 x 122,880 + 256 x 1,026,048 = 514,326,528; 0.92 x total -
  // 16,060,522,496 - 514,326,528 - 536,870,912 = 61,915,678,310.4 / 131,072 = 472,379.1 -> 472,368.
  EXPECT_EQ(OnCard("Llama-3.1-8B", "infer", "vllm", 4096, "A100 80GB SXM").kv_cache_tokens.value_or(0), 472'368);
  // --batched-tokens given wins over the card's default.
  FitRequest r;
  ReadChecked(nlohmann::json{{"model", "Llama-3.1-8B"}, {"task", "infer"}, {"framework", "vllm"}, {"batched_tokens", 4096}},
            r);
  const FitInputs in = PrepareFit(r, test::DataDir());
  EXPECT_EQ(FitOnCard(r, in, test::Catalog().Find("H200 SXM 141GB"), test::Catalog()).memory.server_batched_tokens.value_or(0),
            4096);
}

TEST(FrameworkVersions, SglangFractionFromTheCardsMemory) {
  // server_args.py: reserved MiB = 512 + max(chunked_prefill, 2048) x 1.5 + graph_max_bs x 2 +
  // tp x pp / 8 x 1024 (+ 58 prefill-graph sizes x 8 on main); H100 81,559 MiB and H200 143,771 MiB
  // both take chunked_prefill 8192 and max_bs 256: 13,440 MiB (main 13,904).
  //   0.5.6: round((81,559 - 13,440) / 81,559, 3) = 0.835; round((143,771 - 13,440) / 143,771, 3) = 0.907
  //   main:  round((81,559 - 13,904) / 81,559, 3) = 0.830; round((143,771 - 13,904) / 143,771, 3) = 0.903
  // (before issue 31: a fixed 0.88 on every card).
  EXPECT_DOUBLE_EQ(OnCard("Llama-3.1-8B", "infer", "sglang@0.5.6", 4096, "H100 SXM 80GB").server_kv_fraction.value_or(0), 0.835);
  EXPECT_DOUBLE_EQ(OnCard("Llama-3.1-8B", "infer", "sglang@0.5.6", 4096, "H200 SXM 141GB").server_kv_fraction.value_or(0), 0.907);
  EXPECT_DOUBLE_EQ(OnCard("Llama-3.1-8B", "infer", "sglang", 4096, "H100 SXM 80GB").server_kv_fraction.value_or(0), 0.830);
  EXPECT_DOUBLE_EQ(OnCard("Llama-3.1-8B", "infer", "sglang", 4096, "H200 SXM 141GB").server_kv_fraction.value_or(0), 0.903);
}

TEST(FrameworkVersions, TgiKvTokensOnAnH200ByHand) {
  // TGI v3.3.7, Llama-3.1-8B on an H200 (150,754,820,096 bytes), by the launcher and server source:
  // - the warm-up prefill (launcher max_batch_prefill_tokens): Config::flop per token = 32 layers x
  //   (3 x 2 x 32 x 128 x 4096 + 2 x 2 x 8 x 128 x 4096 + 2 x 3 x 4096 x 14336) = 15,032,385,536;
  //   989e12 / 15,032,385,536 = 65,791.4 -> 65,791 tokens (under max_position_embeddings 131,072
  //   and the launcher's VRAM estimate, 495,075 tokens);
  // - its activations: 65,791 x 122,880 + one sequence's logits 1,026,048 = 8,085,424,128;
  // - KV = free - (1 - 1.0 x TGI_WIGGLE_ROOM 0.90) x total = 0.9 x total - 16,060,522,496 weights -
  //   8,085,424,128 - the 550 MiB Hopper context 576,716,800 = 110,956,674,662.4 bytes / 131,072 =
  //   846,532.4 -> 846,532 tokens (flashinfer: the head dim hidden / heads = 128, 1-token blocks).
  // Before issue 31 (fraction 1.0, a 4096-token warm-up, 16-token blocks): 1,019,376 tokens.
  const MemoryEstimate e = OnCard("Llama-3.1-8B", "infer", "tgi", 4096, "H200 SXM 141GB");
  EXPECT_EQ(e.server_batched_tokens.value_or(0), 65'791);
  EXPECT_EQ(e.kv_cache_tokens.value_or(0), 846'532);
  EXPECT_DOUBLE_EQ(e.server_kv_fraction.value_or(0), 0.9);
  EXPECT_EQ(e.server_block_tokens.value_or(0), 1);
  // An H100 80GB HBM3: 900e12 / 15,032,385,536 = 59,870.7 -> 59,870; an RTX 4090 is not in the
  // launcher's table ("nvidia-geforce-rtx-4090" is not "nvidia-4090"): 4096.
  EXPECT_EQ(OnCard("Llama-3.1-8B", "infer", "tgi", 4096, "H100 SXM 80GB").server_batched_tokens.value_or(0), 59'870);
  EXPECT_EQ(OnCard("Llama-3.1-8B", "infer", "tgi", 4096, "RTX 4090").server_batched_tokens.value_or(0), 4096);
  // Phi-3-mini's head dim is 3072 / 32 = 96: flashdecoding (256-token blocks) on compute
  // capability 8+, paged (16) on a V100 (7.0).
  EXPECT_EQ(OnCard("Phi-3-mini-128k-instruct", "infer", "tgi", 4096, "H200 SXM 141GB").server_block_tokens.value_or(0), 256);
  EXPECT_EQ(OnCard("Phi-3-mini-128k-instruct", "infer", "tgi", 2048, "V100 SXM2 32GB").server_block_tokens.value_or(0), 16);
}

TEST(FrameworkVersions, MegatronCrossEntropyKeepsOneFp32Copy) {
  // cross_entropy.py (core_v0.19.0): logits.float() once, exp and softmax in place, kept for
  // backward: p + 4 bytes per logit where the generic rule counts p + 8. Llama-3.1-8B, one
  // 4096-token sequence: 4 x 4096 x 128,256 = 2,101,346,304 bytes fewer activations.
  // And the fused SwiGLU (fused_bias_swiglu.py SwiGLUFunction keeps only its input, gate and up)
  // keeps one ffn-wide tensor fewer than PyTorch's silu and mul (gate, silu(gate), up):
  // 2 x 4096 x 14,336 x 32 layers = 3,758,096,384 bytes fewer.
  const Workload w = Train(Task::kFull, 4096);
  const double generic = EstimateMemory(test::Llama8b(), w, Layout{}).per_gpu.activations.value;
  const double megatron = EstimateMemory(test::Llama8b(), w, Layout{}, With("megatron")).per_gpu.activations.value;
  EXPECT_DOUBLE_EQ(generic - megatron, 2'101'346'304.0 + 3'758'096'384.0);
}

TEST(FrameworkVersions, TransformerEngineKeepsFp8LinearInputs) {
  // Transformer Engine (v2.9 module/linear.py, layernorm_linear.py) keeps each linear layer's
  // input for backward as its fp8 cast under fp8: the QKV and FC1 inputs (the norms' outputs, h
  // wide) and the down projection's input (ffn wide) drop from 2 bytes to 1; the out-projection
  // keeps a 1-byte cast of the attention output, which the attention kernel keeps in bf16 anyway.
  // Llama-3.1-8B, one 4096-token sequence, 32 layers: per layer and token 2 x 4,096 saved (the
  // QKV and FC1 inputs) - 4,096 added (the out-projection's cast) + 14,336 saved (the down
  // projection's input) = 18,432 bytes: 18,432 x 4,096 x 32 = 2,415,919,104 bytes fewer. The
  // generic and torchtitan profiles keep the inputs in bf16: fp8 changes nothing there.
  Workload bf16 = Train(Task::kFull, 4096);
  Workload fp8 = bf16;
  fp8.fp8 = true;
  const auto act = [](const Workload& w, const OverheadConfig& o) {
    return EstimateMemory(test::Llama8b(), w, Layout{}, o).per_gpu.activations.value;
  };
  EXPECT_DOUBLE_EQ(act(bf16, With("megatron")) - act(fp8, With("megatron")), 2'415'919'104.0);
  EXPECT_DOUBLE_EQ(act(bf16, With("megatron-bridge")) - act(fp8, With("megatron-bridge")), 2'415'919'104.0);
  EXPECT_DOUBLE_EQ(act(bf16, OverheadConfig{}), act(fp8, OverheadConfig{}));
  EXPECT_DOUBLE_EQ(act(bf16, With("torchtitan")), act(fp8, With("torchtitan")));
}

TEST(FrameworkRequest, MegatronBridgesOwn70BRecipeFitsAnH100) {
  // NVIDIA runs Llama 3 70B pretraining on 64 H100 at tp 4, pp 8, vp 5, micro-batch 1, seq 8192,
  // global batch 128, FP8 current scaling, no recomputation (Megatron-Bridge @00b7660
  // scripts/performance/configs/llama/llama3_workload_base_configs.py
  // LLAMA3_70B_PRETRAIN_CONFIG_H100_FP8_CS_BASE_CONFIG; 1,602 tokens/s/GPU in its performance
  // summary), with the distributed optimizer (recipes/llama/llama3.py L559): it fits 80 GB.
  // By hand, first stage: 10 layers x 8 micro-batches x (1 + 7/40) in flight = 94 layer copies;
  // per layer and token on a rank (h 8,192, ffn 28,672, 8 KV heads of 128, 64 heads, t 4, SP):
  //   norm inputs 2 x 2h + their outputs in fp8 2 x 1h              = 6h
  //   Q, K, V 2 x (h + 2 x 1,024) + attention output 2h + its fp8 cast h + lse 4 x 64
  //                                                                  = 5h + 4,096 + 256
  //   FC1 output (gate, up) 2 x 2 ffn + the down projection's fp8 input ffn = 5 ffn
  //   = 11 x 8,192 + 4,352 + 5 x 28,672 = 237,824 bytes, x 8,192 / 4 tokens = 487,063,552.
  // Read as the serve API reads a request; micro-batch and recomputation stated by the recipe,
  // so nothing is left for the fit to choose.
  FitRequest r;
  ReadChecked(nlohmann::json{{"model", "Llama-3.1-70B"}, {"task", "pretrain"}, {"gpus", 64}, {"tp", 4}, {"pp", 8},
                             {"vpp", 5}, {"sp", true}, {"seq", 8192}, {"global_batch", 128}, {"micro_batch", 1},
                             {"recompute", "none"}, {"framework", "megatron-bridge"}, {"fp8", "on"},
                             {"attention", "fa3"}, {"tp_overlap", "on"}},
              r);
  const FitInputs in = PrepareFit(r, test::DataDir());
  EXPECT_EQ(in.layout.zero, 1);  // the recipe's distributed optimizer, --zero not given
  const FitSingle one = FitOnCard(r, in, test::Catalog().Find("H100 SXM 80GB"), test::Catalog());
  EXPECT_NEAR(one.memory.per_gpu.activations.value, 94.0 * 487'063'552.0, 1.0);
  EXPECT_TRUE(one.fits);
  // --zero 0 given: the optimizer states whole on each rank (2 x 13.4 GiB) no longer fit.
  r.zero = 0;
  r.pinned.zero = 0;
  const FitInputs unsharded = PrepareFit(r, test::DataDir());
  EXPECT_EQ(unsharded.layout.zero, 0);
  EXPECT_FALSE(FitOnCard(r, unsharded, test::Catalog().Find("H100 SXM 80GB"), test::Catalog()).fits);
  // Full fine-tuning takes the distributed optimizer too (optimizer_utils.py L62, config.py
  // L1528-1540); LoRA does not (the PEFT recipes turn it off, llama3.py L643); megatron
  // (Megatron-LM: only with --use-distributed-optimizer) never by default.
  r.pinned.zero.reset();
  r.zero = 0;
  r.task = "full";
  EXPECT_EQ(PrepareFit(r, test::DataDir()).layout.zero, 1);
  r.task = "lora";
  EXPECT_EQ(PrepareFit(r, test::DataDir()).layout.zero, 0);
  r.task = "pretrain";
  r.framework = "megatron";
  EXPECT_EQ(PrepareFit(r, test::DataDir()).layout.zero, 0);
}

TEST(FrameworkVersions, MegatronBridgeKeepsTheLogitsInBf16Only) {
  // Megatron-Bridge 25.11 (cross-entropy fusion in Transformer Engine's Triton kernel): an online
  // softmax over the bf16 logits, the gradient written over them, no fp32 copy: p bytes per logit
  // against megatron's p + 4. Llama-3.1-8B, one 4096-token sequence: 4 x 4096 x 128,256 =
  // 2,101,346,304 bytes fewer; everything else megatron's (extends megatron@core_v0.19.0).
  const Workload w = Train(Task::kFull, 4096);
  const MemoryEstimate megatron = EstimateMemory(test::Llama8b(), w, Layout{}, With("megatron"));
  const MemoryEstimate bridge = EstimateMemory(test::Llama8b(), w, Layout{}, With("megatron-bridge"));
  EXPECT_DOUBLE_EQ(megatron.per_gpu.activations.value - bridge.per_gpu.activations.value, 2'101'346'304.0);
  EXPECT_DOUBLE_EQ(bridge.per_gpu.gradients.value, megatron.per_gpu.gradients.value);  // fp32 main_grad kept
}

TEST(FrameworkVersions, TorchtitanChunksTheOutputLayerOnMain) {
  // torchtitan main (ChunkedLossWrapper, 8 chunks, a backward per chunk) against v0.2.2 (the whole
  // logits): Qwen3-0.6B (h 1024, V 151,936), seq 2048, bf16: full keeps (2 + 8) x S x V; chunked
  // keeps (2 + 8) x S x V / 8 + an fp32 gradient of the hidden states 4 x S x h:
  // 10 x 2048 x 151,936 x 7/8 - 4 x 2048 x 1024 = 2,714,501,120 bytes fewer.
  const Workload w = Train(Task::kFull, 2048);
  const double v022 = EstimateMemory(Qwen06b(), w, Layout{}, With("torchtitan@0.2.2")).per_gpu.activations.value;
  const double main = EstimateMemory(Qwen06b(), w, Layout{}, With("torchtitan")).per_gpu.activations.value;
  EXPECT_DOUBLE_EQ(v022 - main, 10.0 * 2048 * 151936 * 7 / 8 - 4.0 * 2048 * 1024);
}

TEST(FrameworkVersions, TorchtuneMainNeverMakesTheWholeLogits) {
  // torchtune v0.6.1 (CEWithChunkedOutputLoss): bf16 logits whole + fp32 per chunk + every
  // chunk's fp32 log-softmax = (2 + 4 + 4/8) x S x V; main (LinearCrossEntropyLoss): no whole
  // logits, every chunk's fp32 log-softmax + the last chunk's bf16 and fp32 = (4 + 6/8) x S x V.
  // Qwen3-0.6B, seq 2048: 1.75 x 2048 x 151,936 = 544,538,624 bytes fewer.
  const Workload w = Train(Task::kFull, 2048);
  const double v061 = EstimateMemory(Qwen06b(), w, Layout{}, With("torchtune")).per_gpu.activations.value;
  const double main = EstimateMemory(Qwen06b(), w, Layout{}, With("torchtune@main")).per_gpu.activations.value;
  EXPECT_DOUBLE_EQ(v061 - main, 544'538'624.0);
}

TEST(FrameworkVersions, LlamaFactoryCheckpointsByDefault) {
  // LLaMA-Factory v0.9.5 model_args.py: disable_gradient_checkpointing = False, so one card's
  // layout recomputes every layer unless --recompute says otherwise; the Trainer does not.
  FitRequest r;
  EXPECT_EQ(Prepared("Llama-3.1-8B", "lora", "llama-factory", 0, r).workload.recompute, Recompute::kFull);
  EXPECT_EQ(Prepared("Llama-3.1-8B", "lora", "hf-trainer", 0, r).workload.recompute, Recompute::kNone);
  ReadChecked(nlohmann::json{{"model", "Llama-3.1-8B"}, {"task", "lora"}, {"framework", "llama-factory"}, {"recompute", "none"}}, r);
  EXPECT_EQ(PrepareFit(r, test::DataDir()).workload.recompute, Recompute::kNone);
}

TEST(FrameworkVersions, TransformersV5TrainsInPureBf16) {
  // transformers v5 loads a bf16 checkpoint in bf16 and AdamW makes its states like the
  // parameters: 2 + 2 + 4 bytes per parameter; v4 (fp32 load, autocast): 2 + 2 + 12 in gpuplan's
  // mixed convention. Llama-3.1-8B on one H200: the optimizer 4 x P against 12 x P.
  FitRequest r;
  FitInputs in = Prepared("Llama-3.1-8B", "full", "hf-trainer", 0, r);
  EXPECT_EQ(in.workload.precision, Precision::kBf16);
  const double v5 = FitOnCard(r, in, test::Catalog().Find("H200 SXM 141GB"), test::Catalog()).memory.per_gpu.optimizer.value;
  in = Prepared("Llama-3.1-8B", "full", "hf-trainer@4", 0, r);
  EXPECT_EQ(in.workload.precision, Precision::kMixed);
  const double v4 = FitOnCard(r, in, test::Catalog().Find("H200 SXM 141GB"), test::Catalog()).memory.per_gpu.optimizer.value;
  EXPECT_DOUBLE_EQ(v5, 4 * kP8b);
  EXPECT_DOUBLE_EQ(v4, 12 * kP8b);
  // --precision given wins.
  ReadChecked(nlohmann::json{{"model", "Llama-3.1-8B"}, {"task", "full"}, {"framework", "hf-trainer"}, {"precision", "mixed"}}, r);
  EXPECT_EQ(PrepareFit(r, test::DataDir()).workload.precision, Precision::kMixed);
}

}  // namespace
}  // namespace gpuplan
