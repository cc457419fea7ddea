// Issue 24, requirement 3: readers that cannot be crashed or slowed. Nesting limits of the shared
// JSON and YAML readers, and the bounds of worker lines, recordings and check reports. Every
// input is written out here; the expected errors are read off it.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "check/worker_protocol.h"
#include "core/error.h"
#include "check/render/check_json.h"
#include "read/file_text.h"
#include "read/json_depth.h"
#include "read/json_fields.h"
#include "read/yaml_fields.h"
#include "telemetry/recorded_source.h"

namespace gpuplan {
namespace {

template <class F>
InputError ExpectInputError(F&& parse) {
  try {
    parse();
  } catch (const InputError& e) {
    return e;
  }
  ADD_FAILURE() << "expected InputError";
  return InputError("none");
}

std::string Nested(int depth, char open, char close, const std::string& inner = "1") {
  return std::string(static_cast<size_t>(depth), open) + inner + std::string(static_cast<size_t>(depth), close);
}

// ---- JSON ----

TEST(JsonDepth, OneHundredTwentyEightLevelsAreRead) {
  // {"a": [[...128 arrays in all, counting the object as one... ]]}: the object is level 1, so
  // 127 arrays inside it make 128.
  const std::string text = R"({"a":)" + Nested(127, '[', ']') + "}";
  const nlohmann::json j = ParseJsonText(text, "ok.json");
  const nlohmann::json* v = &j["a"];
  int arrays = 0;
  while (v->is_array()) {
    v = &(*v)[0];
    ++arrays;
  }
  EXPECT_EQ(arrays, 127);
  EXPECT_EQ(*v, 1);
}

TEST(JsonDepth, OneLevelMoreIsAnError) {
  const std::string text = R"({"a":)" + Nested(128, '[', ']') + "}";
  const InputError e = ExpectInputError([&] { ParseJsonText(text, "deep.json"); });
  EXPECT_EQ(e.file(), "deep.json");
  EXPECT_EQ(e.field(), "(nesting)");
  EXPECT_NE(e.message().find("nested deeper than 128"), std::string::npos) << e.message();
}

TEST(JsonDepth, AMillionLevelsAreAnErrorNotACrash) {
  const std::string text = Nested(1000000, '[', ']');
  const InputError e = ExpectInputError([&] { ParseJsonText(text, "million.json"); });
  EXPECT_EQ(e.field(), "(nesting)");
}

TEST(JsonDepth, SyntaxErrorsStillNameTheirLine) {
  // Line 3 holds the stray comma.
  const InputError e = ExpectInputError([&] { ParseJsonText("{\n\"a\": 1\n,}\n", "bad.json"); });
  EXPECT_EQ(e.line(), 3);
  EXPECT_NE(e.message().find("malformed JSON"), std::string::npos) << e.message();
}

// RFC 8259 §4: names within an object SHOULD be unique, and where they are not readers differ
// (nlohmann keeps the last). gpuplan refuses: the second name's line, field the name.
TEST(JsonNames, ANameGivenTwiceInOneObjectIsAnError) {
  InputError e = ExpectInputError([] { ParseJsonText("{\n  \"gpus\": 8,\n  \"seq\": 4096,\n  \"gpus\": 1\n}\n", "r.json"); });
  EXPECT_EQ(e.file(), "r.json");
  EXPECT_EQ(e.line(), 4);
  EXPECT_EQ(e.field(), "gpus");
  EXPECT_NE(e.message().find("given twice"), std::string::npos) << e.message();
  // "a" as a value and in another object first: the duplicate is the fourth "a": on line 5.
  e = ExpectInputError([] {
    ParseJsonText("{\"x\": \"a\",\n \"o\": {\"a\": 1},\n \"l\": [{\"a\": 2}],\n \"a\": 3,\n \"a\": 4}\n", "r.json");
  });
  EXPECT_EQ(e.line(), 5);
  EXPECT_EQ(e.field(), "a");
  // Inside an object in an array inside an object.
  e = ExpectInputError([] { ParseJsonText(R"({"l": [1, {"b": 1, "c": [2], "b": 2}]})", "r.json"); });
  EXPECT_EQ(e.field(), "b");
  EXPECT_EQ(e.line(), 1);
  // Past the short list (40 names, the 40th again): still found.
  std::string many = "{";
  for (int i = 0; i < 40; ++i) {
    many += "\"k" + std::to_string(i) + "\": " + std::to_string(i) + ", ";
  }
  many += "\"k39\": 0}";
  EXPECT_EQ(ExpectInputError([&] { ParseJsonText(many, "r.json"); }).field(), "k39");
  // A trace line keeps its own line number.
  e = ExpectInputError([] { CheckJsonInput(R"({"t": 1, "t": 2})", "trace.jsonl", 17); });
  EXPECT_EQ(e.line(), 17);
}

TEST(JsonNames, TheSameNameInOtherObjectsIsRead) {
  const nlohmann::json j =
      ParseJsonText(R"({"a": {"a": 1}, "b": [{"a": 2}, {"a": 3}], "c": [[{"a": 4}], {"a": 5}], "a2": "a"})", "ok.json");
  EXPECT_EQ(j["b"][1]["a"], 3);
  EXPECT_EQ(j["c"][1]["a"], 5);
}

// ---- YAML ----

TEST(YamlDepth, OneHundredTwentyEightLevelsAreRead) {
  const YAML::Node n = ParseYamlText("a: " + Nested(127, '[', ']'), "ok.yaml");
  YAML::Node v = n["a"];
  int sequences = 0;
  while (v.IsSequence()) {
    v = v[0];
    ++sequences;
  }
  EXPECT_EQ(sequences, 127);
  EXPECT_EQ(v.as<int>(), 1);
}

TEST(YamlDepth, FlowNestingPastTheLimitIsAnError) {
  // Line 2 opens the 50,000 nested flow sequences.
  const std::string text = "name: x\nvalue: " + Nested(50000, '[', ']') + "\n";
  const InputError e = ExpectInputError([&] { ParseYamlText(text, "deep.yaml"); });
  EXPECT_EQ(e.file(), "deep.yaml");
  EXPECT_EQ(e.line(), 2);
  EXPECT_EQ(e.field(), "(nesting)");
  EXPECT_NE(e.message().find("nested deeper than 128"), std::string::npos) << e.message();
}

TEST(YamlText, BytesThatAreNotUtf8AreRefusedAtTheirLine) {
  // A Latin-1 "é" (0xE9 alone) on line 3, offset 10 + 10 + 11 = 31; before, yaml-cpp took it into the value, and a stray
  // byte at the start of a file read as "expected a mapping" further on.
  const InputError e = ExpectInputError([] { ParseYamlText("source: x\ntraining:\n  note: caf\xe9\n", "latin1.yaml"); });
  EXPECT_EQ(e.file(), "latin1.yaml");
  EXPECT_EQ(e.line(), 3);
  EXPECT_NE(e.message().find("not UTF-8 text (byte 0xE9 at offset 31)"), std::string::npos) << e.message();
  EXPECT_EQ(ExpectInputError([] { ParseYamlText("\xff\xfe\x00s: 1\n", "bom16.yaml"); }).line(), 1);
  // Multi-byte UTF-8 is text: "café" and a CJK key read as they are.
  EXPECT_EQ(ParseYamlText("note: caf\xc3\xa9\n\xe6\xa8\xa1\xe5\x9e\x8b: 1\n", "ok.yaml")["note"].as<std::string>(),
            "caf\xc3\xa9");
}

TEST(YamlDepth, BlockNestingPastTheLimitIsAnError) {
  // 200 nested mappings, one per line with two more spaces each: level 129 is on line 129.
  std::string text;
  for (int i = 0; i < 200; ++i) text += std::string(static_cast<size_t>(2 * i), ' ') + "k:\n";
  const InputError e = ExpectInputError([&] { ParseYamlText(text, "block.yaml"); });
  EXPECT_EQ(e.line(), 129);
  EXPECT_EQ(e.field(), "(nesting)");
}

TEST(YamlDepth, SyntaxErrorsStillNameTheirLine) {
  const InputError e = ExpectInputError([&] { ParseYamlText("a: 1\nb: [1, 2\n", "bad.yaml"); });
  EXPECT_EQ(e.file(), "bad.yaml");
  EXPECT_NE(e.message().find("YAML error"), std::string::npos) << e.message();
}

// fuzz_gpu_catalog's input (docs/fuzzing.md, "Found and fixed"): yaml-cpp 0.7 reports an empty
// document at a token no value can start with, without consuming it, at every call; reading the
// documents to the end never ended. The stray ',' is on line 1.
TEST(YamlProgress, AStrayCommaIsAnErrorNotAHang) {
  const InputError e = ExpectInputError(
      [] { ParseYamlText(",pus:\n300 nuse: XN4YAML15ParserExceptionEnt0]\n", "fuzz.yaml"); });
  EXPECT_EQ(e.file(), "fuzz.yaml");
  EXPECT_EQ(e.line(), 1);
  EXPECT_NE(e.message().find("YAML error"), std::string::npos) << e.message();
  // After a comment and an empty line, the comma is on line 3.
  EXPECT_EQ(ExpectInputError([] { ParseYamlText("# gpus\n\n, a: 1\n", "c.yaml"); }).line(), 3);
}

TEST(YamlProgress, SeveralDocumentsStillRead) {
  // An empty document (bytes 0-3) and one holding a: 1 (from byte 4): the first is the one read.
  EXPECT_TRUE(ParseYamlText("---\n---\na: 1\n", "docs.yaml").IsNull());
  EXPECT_EQ(ParseYamlText("a: 1\n---\nb: 2\n", "docs.yaml")["a"].as<int>(), 1);
}

// YAML 1.2 §3.2.1.1: the keys of a mapping are unique. yaml-cpp keeps both pairs and a lookup
// finds the first, so "price: 3" after "price: 1" would be dropped without a word: an error at
// the second key's line, naming the key and the first one's line.
TEST(YamlKeys, AKeyGivenTwiceInOneMappingIsAnError) {
  InputError e = ExpectInputError([] { ParseYamlText("price: 1\nfee: 2\nprice: 3\n", "o.yaml"); });
  EXPECT_EQ(e.file(), "o.yaml");
  EXPECT_EQ(e.line(), 3);
  EXPECT_EQ(e.field(), "price");
  EXPECT_NE(e.message().find("first at line 1"), std::string::npos) << e.message();
  // Inside the first item of a list; the second item's own "price" is no duplicate.
  e = ExpectInputError([] {
    ParseYamlText("offers:\n  - name: a\n    price: 1\n    price: 2\n  - name: b\n    price: 1\n", "o.yaml");
  });
  EXPECT_EQ(e.line(), 4);
  EXPECT_EQ(e.field(), "offers[0].price");
  // Deeper: the second item of a list under a mapping's key.
  e = ExpectInputError([] {
    ParseYamlText("a:\n  b:\n    - {x: 1}\n    - {x: 1, y: 2, y: 3}\n", "o.yaml");
  });
  EXPECT_EQ(e.line(), 4);
  EXPECT_EQ(e.field(), "a.b[1].y");
  // After a key whose value is a mapping (its keys are its own), at line 4.
  e = ExpectInputError([] { ParseYamlText("a:\n  x: 1\n  y: 2\na: 3\n", "o.yaml"); });
  EXPECT_EQ(e.line(), 4);
  EXPECT_EQ(e.field(), "a");
  // A flow mapping.
  e = ExpectInputError([] { ParseYamlText("{a: 1, b: {a: 1}, a: 2}\n", "o.yaml"); });
  EXPECT_EQ(e.line(), 1);
  EXPECT_EQ(e.field(), "a");
  e = ExpectInputError([] { ParseYamlText("{a: 1, b: {a: 1, a: 2}}\n", "o.yaml"); });
  EXPECT_EQ(e.field(), "b.a");
  // A 1,000-byte key (YAML allows 1,024 in an implicit key) is echoed within the bounds of every
  // error (core/error.h: field 200, message 1,000).
  const std::string long_key(1000, 'k');
  e = ExpectInputError([&] { ParseYamlText(long_key + ": 1\n" + long_key + ": 2\n", "o.yaml"); });
  EXPECT_EQ(e.line(), 2);
  EXPECT_LE(e.field().size(), kErrorFieldMaxChars);
  EXPECT_LE(e.message().size(), kErrorMessageMaxChars);
}

TEST(YamlKeys, TheSameKeyInOtherMappingsOrAsAValueIsRead) {
  const YAML::Node n = ParseYamlText(
      "a: a\nb: a\nitems:\n  - {a: 1, b: 2}\n  - {a: 3, b: 4}\nnested:\n  a:\n    a: 5\n", "ok.yaml");
  EXPECT_EQ(n["items"][1]["a"].as<int>(), 3);
  EXPECT_EQ(n["nested"]["a"]["a"].as<int>(), 5);
  // Documents are apart: the same key in the second document is not the first's again.
  EXPECT_EQ(ParseYamlText("a: 1\n---\na: 2\n", "docs.yaml")["a"].as<int>(), 1);
}

TEST(Utf8Check, OffsetOfTheFirstMalformedByte) {
  EXPECT_EQ(FirstNonUtf8(""), std::nullopt);
  EXPECT_EQ(FirstNonUtf8("NVIDIA H100"), std::nullopt);
  EXPECT_EQ(FirstNonUtf8("\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"), std::nullopt);  // U+00E9, U+20AC, U+1F600
  EXPECT_EQ(FirstNonUtf8("x\x80"), 1u);             // a continuation byte with no lead
  EXPECT_EQ(FirstNonUtf8("a\xC3"), 1u);             // a two-byte sequence cut short
  EXPECT_EQ(FirstNonUtf8("\xC0\x80"), 0u);          // overlong NUL
  EXPECT_EQ(FirstNonUtf8("\xE0\x9F\xBF"), 0u);      // overlong U+07FF
  EXPECT_EQ(FirstNonUtf8("ab\xED\xA0\x80"), 2u);    // U+D800, a surrogate
  EXPECT_EQ(FirstNonUtf8("\xF4\x90\x80\x80"), 0u);  // U+110000, past the last code point
  EXPECT_EQ(FirstNonUtf8("\xE2\x82x"), 0u);         // third byte not a continuation
  EXPECT_EQ(FirstNonUtf8("ok\xFF"), 2u);
}

// ---- worker lines ----

TEST(WorkerLineBounds, DeviceIndexIsMinusOneTo1023) {
  std::string why;
  EXPECT_TRUE(ParseWorkerLine(R"({"type":"done","test":"p2p","device":-1})", &why)) << why;
  EXPECT_TRUE(ParseWorkerLine(R"({"type":"done","test":"gemm","device":1023})", &why)) << why;
  for (const char* bad : {R"({"type":"done","test":"gemm","device":1024})",
                          R"({"type":"done","test":"gemm","device":-2})",
                          R"({"type":"done","test":"gemm","device":1e300})",
                          R"({"type":"done","test":"gemm","device":0.5})"}) {
    why.clear();
    EXPECT_FALSE(ParseWorkerLine(bad, &why)) << bad;
    EXPECT_NE(why.find("\"device\" is not a device index"), std::string::npos) << bad << ": " << why;
  }
}

TEST(WorkerLineBounds, CountsAndTimesAreFrom0To2Pow53) {
  std::string why;
  // 2^53 = 9007199254740992 is the largest; a negative count or one past it is refused.
  EXPECT_TRUE(ParseWorkerLine(
      R"({"type":"result","test":"gemm","device":0,"name":"gemm","verified":true,"m":9007199254740992})", &why))
      << why;
  for (const char* bad :
       {R"({"type":"result","test":"gemm","device":0,"name":"gemm","verified":true,"m":-8})",
        R"({"type":"result","test":"gemm","device":0,"name":"gemm","verified":true,"elements":1e19})"}) {
    why.clear();
    EXPECT_FALSE(ParseWorkerLine(bad, &why)) << bad;
    EXPECT_NE(why.find("from 0 to 2^53"), std::string::npos) << bad << ": " << why;
  }
}

TEST(WorkerLineBounds, DeepLineIsRefused) {
  std::string why;
  const std::string line = R"({"type":"done","test":"gemm","device":0,"x":)" + Nested(200000, '[', ']') + "}";
  EXPECT_FALSE(ParseWorkerLine(line, &why));
  EXPECT_NE(why.find("nested deeper than 128"), std::string::npos) << why;
}

// ---- recordings and the snapshots in check reports ----

class TempFile {
 public:
  explicit TempFile(const std::string& text) {
    char pattern[] = "/tmp/gpuplan-limits-XXXXXX";
    const int fd = mkstemp(pattern);
    close(fd);
    path_ = pattern;
    std::ofstream(path_, std::ios::binary) << text;
  }
  ~TempFile() { std::filesystem::remove(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string RecordingText(const std::string& gpu_fields) {
  return R"({"format":"gpuplan-recording","version":1,"source":"t","snapshots":[{"at_seconds":0,"gpus":[{"index":0,)" +
         gpu_fields + R"(}]}],"events":[]})";
}

TEST(RecordingBounds, NumbersOutOfRangeNameTheField) {
  struct Case {
    std::string fields;
    std::string field;
    std::string says;
  };
  const std::vector<Case> cases = {
      // 2^44 + 1 bytes: one more than 16 TiB.
      {R"("memory_total":17592186044417)", "snapshots[0].gpus[0].memory_total",
       "expected 0 to 17592186044416, got 17592186044417"},
      {R"("pcie_gen_current":0)", "snapshots[0].gpus[0].pcie_gen_current", "expected 1 to 6, got 0"},
      {R"("pcie_gen_max":99)", "snapshots[0].gpus[0].pcie_gen_max", "expected 1 to 6, got 99"},
      {R"("pcie_gen_current":-1)", "snapshots[0].gpus[0].pcie_gen_current", "expected 1 to 6, got -1"},
      {R"("pcie_width_current":64)", "snapshots[0].gpus[0].pcie_width_current", "expected 1 to 32, got 64"},
      {R"("utilization_gpu":101)", "snapshots[0].gpus[0].utilization_gpu", "expected 0 to 100, got 101"},
      {R"("processes":[{"pid":0}])", "snapshots[0].gpus[0].processes[0].pid", "at least 1, got 0"},
  };
  for (const Case& c : cases) {
    const TempFile f(RecordingText(c.fields));
    const InputError e = ExpectInputError([&] { ReadRecording(f.path()); });
    EXPECT_EQ(e.file(), f.path()) << c.fields;
    EXPECT_EQ(e.field(), c.field) << c.fields;
    EXPECT_NE(e.message().find(c.says), std::string::npos) << c.fields << ": " << e.message();
  }
  // Index -1 of a GPU.
  const TempFile neg(R"({"format":"gpuplan-recording","version":1,"snapshots":[{"gpus":[{"index":-1}]}]})");
  EXPECT_EQ(ExpectInputError([&] { ReadRecording(neg.path()); }).field(), "snapshots[0].gpus[0].index");
}

// fuzz_recording's find (2026-12-03): a number too large for a double ("1E111111111") made
// nlohmann throw out_of_range.406, which the reader did not catch: the process aborted. It is an
// InputError naming the file, like a syntax error.
TEST(RecordingBounds, NumberTooLargeForADoubleIsAnInputError) {
  const TempFile f(R"({"format":1111111111E111111111111111,"snapshots":[]})");
  const InputError e = ExpectInputError([&] { ReadRecording(f.path()); });
  EXPECT_EQ(e.file(), f.path());
  EXPECT_NE(e.message().find("malformed JSON"), std::string::npos) << e.message();
}

TEST(RecordingBounds, InRangeValuesAreRead) {
  const TempFile f(RecordingText(R"("memory_total":17592186044416,"pcie_gen_current":6,"pcie_width_current":32)"));
  const Recording r = ReadRecording(f.path());
  ASSERT_EQ(r.snapshots.size(), 1u);
  EXPECT_EQ(r.snapshots[0].gpus.at(0).memory_total, 17592186044416ULL);
  EXPECT_EQ(r.snapshots[0].gpus.at(0).pcie_gen_current, 6);
  EXPECT_EQ(r.snapshots[0].gpus.at(0).pcie_width_current, 32);
}

TEST(RecordingBounds, DeepRecordingIsAnError) {
  const TempFile f(R"({"format":"gpuplan-recording","version":1,"source":)" + Nested(100000, '[', ']') + "}");
  const InputError e = ExpectInputError([&] { ReadRecording(f.path()); });
  EXPECT_EQ(e.field(), "(nesting)");
}

TEST(CheckReportBounds, NumbersOutOfRangeNameTheField) {
  const nlohmann::json base = {{"schema", kCheckReportSchema}};
  struct Case {
    nlohmann::json patch;
    std::string field;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{{"tests", {{{"name", "t"}, {"status", "PASS"}, {"gpu", -3}}}}}, "tests[0].gpu", "expected 0 to 65535, got -3"},
      {{{"tests", {{{"name", "t"}, {"status", "PASS"}, {"gpu", 4294967296LL}}}}}, "tests[0].gpu",
       "got 4294967296"},
      {{{"tests", {{{"name", "t"}, {"status", "PASS"}, {"seconds", -1}}}}}, "tests[0].seconds", "got -1"},
      {{{"host", {{"cpu_cores", 0}}}}, "host.cpu_cores", "expected 1 to 65536, got 0"},
      {{{"host", {{"cpu_threads", 4294967297LL}}}}, "host.cpu_threads", "got 4294967297"},
      {{{"curves", {{{"test", "burn_in"}, {"gpu", 0}, {"clock_events", {-1}}}}}}, "curves[0].clock_events", "got -1"},
      {{{"curves", {{{"test", "burn_in"}, {"gpu", 0}, {"power_w", {1e9}}}}}}, "curves[0].power_w",
       "expected 0.0 to 100000.0"},
      {{{"curves", {{{"test", "burn_in"}, {"gpu", 0}, {"interval_s", 0}}}}}, "curves[0].interval_s", "got 0"},
      {{{"nodes", {{{"gpus", {{{"index", 0}, {"memory_total", 18446744073709551615ULL}}}}}}}},
       "nodes[0].gpus[0].memory_total", "expected 0 to 17592186044416"},
  };
  for (const Case& c : cases) {
    nlohmann::json j = base;
    j.update(c.patch);
    const InputError e = ExpectInputError([&] { ReportFromJson(j, "r.json"); });
    EXPECT_EQ(e.file(), "r.json") << c.patch.dump();
    EXPECT_EQ(e.field(), c.field) << c.patch.dump();
    EXPECT_NE(e.message().find(c.says), std::string::npos) << c.patch.dump() << ": " << e.message();
  }
}

}  // namespace
}  // namespace gpuplan
