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
  EXPECT_EQ(Shipped().Find("vllm").kv_fraction, 0.9);
  EXPECT_EQ(Shipped().Find("torchtune").loss_chunks, 8);
  EXPECT_EQ(Shipped().Find("deepspeed").reduce_bucket_elements, 5e8);
  EXPECT_EQ(Shipped().cuda_context_mib.at("hopper"), 550);
}

TEST(FrameworkFile, GgufBitsPerWeightFromTheBlockLayouts) {
  // ggml-common.h: block_q8_0 = fp16 scale + 32 int8 = 34 bytes per 32 weights; block_q4_0 = 2 +
  // 16 bytes per 32; block_q6_K = 128 + 64 + 16 + 2 = 210 bytes per 256. K-quant mixes: the
  // quantize README's Llama 2 7B table (Q4_K_M 4.84, Q5_K_M 5.68).
  EXPECT_DOUBLE_EQ(Shipped().GgufBits("Q8_0"), 34.0 * 8 / 32);
  EXPECT_DOUBLE_EQ(Shipped().GgufBits("q4_0"), 18.0 * 8 / 32);
  EXPECT_DOUBLE_EQ(Shipped().GgufBits("Q6_K"), 210.0 * 8 / 256);
  EXPECT_DOUBLE_EQ(Shipped().GgufBits("Q4_K_M"), 4.84);
  EXPECT_DOUBLE_EQ(Shipped().GgufBits("Q5_K_M"), 5.68);
  EXPECT_DOUBLE_EQ(Shipped().GgufBits("F16"), 16);
  try {
    (void)Shipped().GgufBits("Q4_K_X");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "--gguf-type");
    ASSERT_FALSE(e.suggestions().empty());
  }
}

TEST(FrameworkFile, UnknownNameSuggestsTheClosest) {
  try {
    (void)Shipped().Find("deepspeeed");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "--framework");
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
      "    los: full\n"
      "    sources: [A]\n"
      "sources:\n"
      "  A: a source\n");
  EXPECT_EQ(e.file(), "f.yaml");
  EXPECT_EQ(e.line(), 5);
  EXPECT_EQ(e.field(), "frameworks[x].los");
  ASSERT_FALSE(e.suggestions().empty());
  EXPECT_EQ(e.suggestions()[0], "loss");
  e = ParseError(
      "frameworks:\n"
      "  - name: generic\n"
      "    sources: [A]\n"
      "  - name: x\n"
      "    sources: [A]\n"
      "    loss: chunky\n"
      "sources:\n"
      "  A: a source\n");
  EXPECT_EQ(e.line(), 6);
  EXPECT_EQ(e.field(), "frameworks[x].loss");
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
      "    sources: [A]\n"
      "sources:\n"
      "  A: a source\n");
  EXPECT_EQ(e.field(), "frameworks");  // the default profile must be there
  e = ParseError(
      "frameworks:\n"
      "  - name: generic\n"
      "    sources: [A]\n"
      "  - name: v\n"
      "    kv_rule: vllm\n"
      "    kv_fraction: 0.9\n"
      "    sources: [A]\n"
      "sources:\n"
      "  A: a source\n");
  EXPECT_EQ(e.field(), "frameworks[v].kind");  // an inference rule on a training profile
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
  // ZeRO-2: reduce_bucket_size + allgather_bucket_size = 5e8 + 5e8 elements x 2 bytes (bf16).
  MemoryEstimate e = EstimateMemory(test::Llama8b(), w, l, With("deepspeed"));
  EXPECT_DOUBLE_EQ(e.comm_buffers.value, 2e9);
  const MemoryEstimate gen = EstimateMemory(test::Llama8b(), w, l);
  EXPECT_DOUBLE_EQ(e.nvidia_smi.value - gen.nvidia_smi.value, 2e9);
  EXPECT_DOUBLE_EQ(e.peak_allocated.value - gen.peak_allocated.value, 2e9);  // torch tensors
  // ZeRO-3: reduce bucket + stage3_prefetch_bucket_size 5e7 = 5.5e8 elements x 2 bytes.
  l.zero = 3;
  e = EstimateMemory(test::Llama8b(), w, l, With("deepspeed"));
  EXPECT_DOUBLE_EQ(e.comm_buffers.value, 1.1e9);
  // A model smaller than the buckets: capped at its parameters (Qwen3-0.6B, 2 bytes each).
  l.zero = 2;
  e = EstimateMemory(Qwen06b(), w, l, With("deepspeed"));
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
  // Llama-3.1-8B QLoRA, seq 256: at load every base weight is bf16 on the GPU:
  // 2 x 8,030,261,248 bytes + the 500 MiB CUDA context = 16,584,810,496 bytes.
  const Workload w = Train(Task::kQlora, 256);
  const MemoryEstimate lit = EstimateMemory(test::Llama8b(), w, Layout{}, With("litgpt"));
  EXPECT_DOUBLE_EQ(lit.load_peak.value, 2 * kP8b + kContext);
  EXPECT_DOUBLE_EQ(lit.load_peak.value, 16'584'810'496.0);
  EXPECT_GT(lit.load_peak.value, lit.nvidia_smi.value);
  // PEFT + bitsandbytes quantises as it loads: no load peak above the steady state.
  const MemoryEstimate peft = EstimateMemory(test::Llama8b(), w, Layout{}, With("peft"));
  EXPECT_DOUBLE_EQ(peft.load_peak.value, peft.nvidia_smi.value);
  // LitGPT's rule is about quantisation: a bf16 LoRA has no such peak.
  const MemoryEstimate lora = EstimateMemory(test::Llama8b(), Train(Task::kLora, 256), Layout{}, With("litgpt"));
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
  // Llama-3.1-8B bf16 on an H100 SXM 80GB (85,520,809,984 bytes), vLLM defaults:
  //   utilisation 0.9 x 85,520,809,984           = 76,968,728,985.6
  //   - weights 2 x 8,030,261,248                = 16,060,522,496
  //   - profiling run: 8192 batched tokens x 2 bytes x (2h + q + kv + o + 3 x ffn)
  //       = 8192 x 2 x (8192 + 4096 + 2048 + 4096 + 43008) = 1,006,632,960
  //     + sampler fp32 logits and probabilities of 256 sequences: 256 x 8 x 128256 = 262,668,288
  //   - non-torch: the 500 MiB CUDA context      = 524,288,000
  //   = 59,114,617,241.6 bytes of KV space; one token = 32 layers x 8 heads x 256 x 2 bytes = 131,072
  //   -> 451,008.7 tokens, in whole 16-token blocks: 451,008 tokens; 451,008 / 8192 = 55.05 sequences.
  const Gpu& h100 = test::Catalog().Find("H100 SXM 80GB");
  ASSERT_EQ(h100.memory_bytes, 85'520'809'984);
  const MemoryEstimate e = EstimateMemory(test::Llama8b(), Infer(8192), Layout{}, With("vllm"), h100.memory_bytes);
  ASSERT_TRUE(e.kv_cache_tokens.has_value());
  EXPECT_EQ(*e.kv_cache_tokens, 451'008);
  EXPECT_NEAR(*e.server_concurrency, 55.0547, 1e-4);
  EXPECT_EQ(*e.max_concurrency, 55);
  EXPECT_TRUE(Fits(e, h100));
  // vLLM takes its whole budget at start: nvidia-smi = 0.9 x total less the unfilled part of a block.
  EXPECT_NEAR(e.nvidia_smi.value, 0.9 * 85'520'809'984.0, 131072.0 * 16);
  // --gpu-memory-utilization 0.5: 42,760,404,992 - 17,854,111,744 = 24,906,293,248 bytes = 190,020.5 tokens
  // -> 190,016 in whole blocks.
  OverheadConfig half = With("vllm");
  half.kv_fraction = 0.5;
  EXPECT_EQ(*EstimateMemory(test::Llama8b(), Infer(8192), Layout{}, half, h100.memory_bytes).kv_cache_tokens, 190'016);
  // 60 sequences of 8192 tokens do not fit in 451,008 tokens.
  Workload many = Infer(8192);
  many.concurrency = 60;
  EXPECT_FALSE(Fits(EstimateMemory(test::Llama8b(), many, Layout{}, With("vllm"), h100.memory_bytes), h100));
}

TEST(Frameworks, SglangAndLmdeployKvRules) {
  const Gpu& h100 = test::Catalog().Find("H100 SXM 80GB");
  // SGLang: 0.88 x 85,520,809,984 - 16,060,522,496 - 524,288,000 = 58,673,502,289.9 bytes
  //   / 131,072 = 447,643.6 -> 447,643 tokens (token-granular pool).
  MemoryEstimate e = EstimateMemory(test::Llama8b(), Infer(4096), Layout{}, With("sglang"), h100.memory_bytes);
  EXPECT_EQ(*e.kv_cache_tokens, 447'643);
  // lmdeploy: 0.8 x (85,520,809,984 - 16,060,522,496 - 524,288,000) = 55,148,799,590.4 bytes
  //   / 131,072 = 420,751.9 -> 420,736 tokens in 64-token blocks.
  e = EstimateMemory(test::Llama8b(), Infer(4096), Layout{}, With("lmdeploy"), h100.memory_bytes);
  EXPECT_EQ(*e.kv_cache_tokens, 420'736);
}

TEST(Frameworks, LlamaCppGgufWeightsAreParamsTimesBitsOverEight) {
  OverheadConfig o = With("llama.cpp");
  o.gguf_bits = Shipped().GgufBits("Q4_K_M");
  const MemoryEstimate e = EstimateMemory(test::Llama8b(), Infer(4096), Layout{}, o);
  EXPECT_DOUBLE_EQ(e.per_gpu.weights.value, kP8b * 4.84 / 8);
  o.gguf_bits = Shipped().GgufBits("Q8_0");
  EXPECT_DOUBLE_EQ(EstimateMemory(test::Llama8b(), Infer(4096), Layout{}, o).per_gpu.weights.value, kP8b * 8.5 / 8);
}

template <typename F>
std::string FieldOfError(F f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.field();
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
  ApplyJson(nlohmann::json{{"model", "Llama-3.1-8B"}, {"task", "infer"}, {"context", 8192}, {"framework", "vllm"}}, r);
  FitInputs in = PrepareFit(r, test::DataDir());
  EXPECT_EQ(in.overhead.framework.name, "vllm");
  EXPECT_EQ(in.cuda_context_mib.at("hopper"), 550);
  // One H100: the Hopper context, 550 MiB; the CLI test and tests/scenarios/fit/vllm-kv-tokens-h100.yaml
  // hold the same case: (0.9 x 85,520,809,984 - 16,060,522,496 - 1,269,301,248 - 576,716,800)
  // / 131,072 = 450,608.7 -> 450,608 tokens.
  const FitSingle one = FitOnCard(r, in, test::Catalog().Find("H100 SXM 80GB"), test::Catalog());
  EXPECT_EQ(one.memory.kv_cache_tokens.value_or(0), 450'608);
  EXPECT_TRUE(one.fits);
  // --cuda-context-mib given keeps its value for every card.
  ApplyJson(nlohmann::json{{"model", "Llama-3.1-8B"}, {"task", "infer"}, {"framework", "vllm"}, {"cuda_context_mib", 500}}, r);
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

}  // namespace
}  // namespace gpuplan
