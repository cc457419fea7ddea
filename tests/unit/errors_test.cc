// Bad input: each gives an InputError with file, line and field, never a crash.
#include <gtest/gtest.h>

#include "catalog/model.h"
#include "catalog/model_loader.h"
#include "core/error.h"
#include "fit/memory_model.h"
#include "test_paths.h"

namespace gpuplan {
namespace {

InputError Catch(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e;
  }
  ADD_FAILURE() << "expected an InputError";
  return InputError("none");
}

TEST(Errors, MalformedJsonNamesTheLine) {
  const auto e = Catch([] { ParseHfConfig("{\n  \"model_type\": \"llama\",\n  \"hidden_size\": 4096,,\n}", "c.json"); });
  EXPECT_EQ(e.file(), "c.json");
  EXPECT_EQ(e.line(), 3);
}

TEST(Errors, TruncatedJson) {
  const auto e = Catch([] { ParseHfConfig("{\n  \"model_type\": \"llama\",\n  \"hidden_size\": 40", "t.json"); });
  EXPECT_EQ(e.line(), 3);
  EXPECT_NE(std::string(e.what()).find("malformed JSON"), std::string::npos);
}

TEST(Errors, UnknownModelTypeListsSupported) {
  const auto e = Catch([] { ParseHfConfig("{\"model_type\": \"t5\"}", "u.json"); });
  EXPECT_EQ(e.field(), "model_type");
  EXPECT_EQ(e.line(), 1);
  for (const char* t : {"llama", "qwen3_moe", "deepseek_v3", "chatglm", "gpt_neox"}) {
    EXPECT_NE(std::string(e.what()).find(t), std::string::npos) << t;
  }
}

TEST(Errors, ZeroNegativeAndWrongTypeFields) {
  const std::string base = "{\n\"model_type\": \"llama\",\n\"num_hidden_layers\": 2,\n\"num_attention_heads\": 4,\n"
                           "\"vocab_size\": 100,\n";
  auto e = Catch([&] { ParseHfConfig(base + "\"hidden_size\": 0\n}", "z.json"); });
  EXPECT_EQ(e.field(), "hidden_size");
  EXPECT_EQ(e.line(), 6);
  e = Catch([&] { ParseHfConfig(base + "\"hidden_size\": -64\n}", "n.json"); });
  EXPECT_EQ(e.field(), "hidden_size");
  e = Catch([&] { ParseHfConfig(base + "\"hidden_size\": \"big\"\n}", "s.json"); });
  EXPECT_EQ(e.field(), "hidden_size");
  e = Catch([&] { ParseHfConfig(base + "\"hidden_size\": 64, \"num_key_value_heads\": 3\n}", "g.json"); });
  EXPECT_EQ(e.field(), "num_key_value_heads");
  e = Catch([&] { ParseHfConfig("{\"model_type\": \"llama\"}", "m.json"); });
  EXPECT_EQ(e.field(), "hidden_size");
  EXPECT_NE(std::string(e.what()).find("missing"), std::string::npos);
}

TEST(Errors, ImplausiblyLargeModelDoesNotOverflow) {
  const auto e = Catch([] {
    ParseHfConfig(R"({"model_type":"mixtral","hidden_size":1048576,"num_hidden_layers":10000,"num_attention_heads":1,)"
                  R"("vocab_size":16777216,"intermediate_size":4194304,"num_local_experts":65536,"num_experts_per_tok":1})",
                  "huge.json");
  });
  EXPECT_NE(std::string(e.what()).find("implausibly large"), std::string::npos);
}

TEST(Errors, UnknownPresetSuggestsClosest) {
  const auto e = Catch([] { LoadModel("llama-3.1-7b", test::DataDir()); });
  EXPECT_EQ(e.field(), "--model");
  EXPECT_NE(std::string(e.what()).find("Llama-3.1-8B"), std::string::npos) << e.what();
}

TEST(Errors, InvalidLayouts) {
  const ModelSpec m = LoadHfConfig(test::Preset("Llama-3.1-8B"));
  Workload w;
  Layout l;
  l.gpus = 3;
  l.tp = 2;
  EXPECT_EQ(Catch([&] { EstimateMemory(m, w, l); }).field(), "--gpus");
  l = Layout{};
  l.tp = 3;
  l.gpus = 3;
  EXPECT_EQ(Catch([&] { EstimateMemory(m, w, l); }).field(), "--tp");
  l = Layout{};
  w.micro_batch = 0;
  EXPECT_EQ(Catch([&] { EstimateMemory(m, w, l); }).field(), "--micro-batch");
  w = Workload{};
  w.task = Task::kLora;
  w.lora_targets = {"nonexistent"};
  EXPECT_EQ(Catch([&] { EstimateMemory(m, w, l); }).field(), "--lora-targets");
}

}  // namespace
}  // namespace gpuplan
