// Bad input: each gives an InputError with file, line and field, never a crash.
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>

#include "catalog/model.h"
#include "catalog/model_loader.h"
#include "core/error.h"
#include "core/names.h"
#include "fit/memory_model.h"
#include "format/error_json.h"
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
  EXPECT_EQ(test::AsCli(e).field(), "--model");
  EXPECT_NE(std::string(e.what()).find("Llama-3.1-8B"), std::string::npos) << e.what();
}

TEST(Errors, InvalidLayouts) {
  const ModelSpec m = LoadHfConfig(test::Preset("Llama-3.1-8B"));
  Workload w;
  Layout l;
  l.gpus = 3;
  l.tp = 2;
  EXPECT_EQ(test::AsCli(Catch([&] { EstimateMemory(m, w, l); })).field(), "--gpus");
  l = Layout{};
  l.tp = 3;
  l.gpus = 3;
  EXPECT_EQ(test::AsCli(Catch([&] { EstimateMemory(m, w, l); })).field(), "--tp");
  l = Layout{};
  w.micro_batch = 0;
  EXPECT_EQ(test::AsCli(Catch([&] { EstimateMemory(m, w, l); })).field(), "--micro-batch");
  w = Workload{};
  w.task = Task::kLora;
  w.lora_targets = {"nonexistent"};
  EXPECT_EQ(test::AsCli(Catch([&] { EstimateMemory(m, w, l); })).field(), "--lora-targets");
}

// The exit codes of docs/cli.md, one meaning everywhere.
TEST(ErrorReports, ExitCodeOfEachKind) {
  EXPECT_EQ(ExitCode(ErrorKind::kNegative), 1);
  EXPECT_EQ(ExitCode(ErrorKind::kInput), 2);
  EXPECT_EQ(ExitCode(ErrorKind::kUsage), 2);
  EXPECT_EQ(ExitCode(ErrorKind::kEnvironment), 3);
  EXPECT_EQ(ExitCode(ErrorKind::kInternal), 4);
}

TEST(ErrorReports, InputErrorToJsonKeepsWhereAndSuggestions) {
  const InputError e("must be positive", "o.yaml", 5, "offers[x].price", {"a", "b"});
  const ErrorReport r = DescribeError(e);
  EXPECT_EQ(r.kind, ErrorKind::kInput);
  EXPECT_EQ(ErrorToJson(r), nlohmann::json::parse(R"({"error": {"kind": "input", "message": "must be positive",
      "file": "o.yaml", "line": 5, "field": "offers[x].price", "suggestions": ["a", "b"]}})"));
  EXPECT_EQ(r.Line(), "error: o.yaml:5: field 'offers[x].price': must be positive");
}

TEST(ErrorReports, UnknownPartsAreNull) {
  const ErrorReport r = DescribeError(EnvironmentError("no NVIDIA driver"));
  EXPECT_EQ(ErrorToJson(r), nlohmann::json::parse(R"({"error": {"kind": "environment", "message": "no NVIDIA driver",
      "file": null, "line": null, "field": null, "suggestions": []}})"));
  // A file without a line: the line is null, the file is not.
  const auto j = ErrorToJson(DescribeError(InputError("cannot open file", "x.csv")));
  EXPECT_EQ(j["error"]["file"], "x.csv");
  EXPECT_TRUE(j["error"]["line"].is_null());
  EXPECT_TRUE(j["error"]["field"].is_null());
}

TEST(ErrorReports, KindsOfOtherErrors) {
  EXPECT_EQ(DescribeError(NegativeAnswer("no feasible plan")).kind, ErrorKind::kNegative);
  EXPECT_EQ(ErrorToJson(DescribeError(NegativeAnswer("no feasible plan")))["error"]["kind"], "negative");
  EXPECT_EQ(ErrorToJson(UsageError("--model is required"))["error"]["kind"], "usage");
  // Anything else is a bug: the message keeps what() and asks for a report.
  const ErrorReport r = DescribeError(std::logic_error("index out of range"));
  EXPECT_EQ(r.kind, ErrorKind::kInternal);
  EXPECT_EQ(r.message.rfind("index out of range", 0), 0u) << r.message;
  EXPECT_NE(r.message.find("please report"), std::string::npos) << r.message;
  EXPECT_EQ(ErrorToJson(r)["error"]["kind"], "internal");
}

// The names a "did you mean" offers travel separately, for the JSON error's suggestions.
TEST(ErrorReports, UnknownGpuCarriesSuggestions) {
  const auto e = Catch([] { test::Catalog().Find("H10"); });
  ASSERT_FALSE(e.suggestions().empty());
  EXPECT_EQ(e.suggestions().front(), "H100 SXM 80GB");
  for (const auto& s : e.suggestions()) {
    EXPECT_NE(test::Catalog().TryFind(s), nullptr) << s;  // each a real catalog name
    EXPECT_NE(e.message().find(s), std::string::npos) << s;  // and named in the message
  }
}

TEST(ErrorReports, UnknownModelCarriesSuggestions) {
  const auto e = Catch([] { LoadModel("llama-3.1-7b", test::DataDir()); });
  EXPECT_LE(e.suggestions().size(), 3u);
  EXPECT_NE(std::find(e.suggestions().begin(), e.suggestions().end(), "Llama-3.1-8B"), e.suggestions().end());
  for (const auto& s : e.suggestions()) {
    EXPECT_NE(e.message().find(s), std::string::npos) << s;
  }
}

// Text from the input that an error echoes is bounded (a 100 KB flag value gave a 100 KB error
// line) and its control characters are written out (an escape sequence reached the terminal).
TEST(ErrorReports, EchoedInputIsBoundedAndPrintable) {
  // 3,000 ASCII characters into 1,000: 960 kept (1,000 less the 40 the marker may take), two
  // thirds from the start (640) and the rest from the end (320); 3,000 - 960 = 2,040 left out.
  const std::string bounded = BoundedErrorText(std::string(3000, 'x'), 1000);
  EXPECT_EQ(bounded, std::string(640, 'x') + "...(2040 characters left out)..." + std::string(320, 'x'));
  EXPECT_LE(bounded.size(), 1000u);
  EXPECT_EQ(BoundedErrorText(bounded, 1000), bounded);  // bounding again (a rethrow) changes nothing
  // 1,000 three-byte characters (3,000 bytes): the cuts move to character boundaries, 639 bytes
  // (213 characters) kept at the start, 318 (106) at the end: 681 characters left out.
  std::string han;
  for (int i = 0; i < 1000; ++i) {
    han += "\u4e2d";
  }
  const std::string h = BoundedErrorText(han, 1000);
  EXPECT_EQ(h, han.substr(0, 639) + "...(681 characters left out)..." + han.substr(2682));
  // Control characters as \xNN; short text otherwise unchanged.
  EXPECT_EQ(BoundedErrorText("a\x1b[31mb\nc\x7f", 1000), "a\\x1b[31mb\\x0ac\\x7f");
  EXPECT_EQ(BoundedErrorText("unknown model 'Qwen'", 1000), "unknown model 'Qwen'");
  // What an InputError keeps: message and file within 1,000, field within 200, in what() too.
  const InputError e(std::string(100000, 'm'), std::string(5000, 'f'), 3, std::string(100000, 'k'));
  EXPECT_LE(e.message().size(), kErrorMessageMaxChars);
  EXPECT_LE(e.file().size(), kErrorMessageMaxChars);
  EXPECT_LE(e.field().size(), kErrorFieldMaxChars);
  EXPECT_LE(std::string(e.what()).size(), 2 * kErrorMessageMaxChars + kErrorFieldMaxChars + 20);
  EXPECT_NE(e.message().find("(99040 characters left out)"), std::string::npos) << e.message();
}

// "Did you mean" for a name up to 256 bytes; none for a longer one (its edit distance to each
// candidate costs its length times theirs: 15 MB took 49 s of a server's CPU).
TEST(Names, NoSuggestionsForANameLongerThanAnyName) {
  const std::vector<std::string> gpus = {"A100 80GB SXM", "H100 SXM 80GB", "RTX 4090"};
  ASSERT_FALSE(ClosestNames("A100 80GB SMX", gpus).empty());
  EXPECT_EQ(ClosestNames("A100 80GB SMX", gpus).front(), "A100 80GB SXM");
  EXPECT_FALSE(ClosestNames(std::string(kMaxSuggestedQuery, 'a'), gpus).empty());
  EXPECT_TRUE(ClosestNames(std::string(kMaxSuggestedQuery + 1, 'a'), gpus).empty());
  EXPECT_TRUE(ClosestNames(std::string(15'000'000, 'a'), gpus).empty());
}

}  // namespace
}  // namespace gpuplan
