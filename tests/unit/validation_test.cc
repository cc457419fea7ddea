// Validation against published MEASURED memory (tests/validation/memory_cases.yaml, sources in
// docs/validation-memory-sources.md). Recomputes every prediction, checks that the table in
// docs/validation-memory.md and the summary in README.md are current (GPUPLAN_UPDATE_DOCS=1
// rewrites them), holds every row to its own `bound` (a row without one is an error) and bounds
// the median error, so a regression in the model shows up here.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fmt/format.h>
#include <fstream>
#include <map>
#include <sstream>

#include "catalog/gpu_catalog.h"
#include "catalog/model.h"
#include "fit/fit_request.h"
#include "fit/memory_model.h"
#include "doc_table.h"
#include "test_paths.h"

namespace gpuplan {
namespace {

// Model names used by the sources -> config with the same tensor shapes.
std::string ConfigFor(const std::string& model) {
  static const std::map<std::string, std::string> map = {
      {"Llama-3-8B", test::Preset("Llama-3.1-8B")},
      {"Llama-3.1-8B", test::Preset("Llama-3.1-8B")},
      {"Llama-3.1-70B", test::Preset("Llama-3.1-70B")},
      {"Llama-3.2-3B", test::Preset("Llama-3.2-3B")},
      {"Llama-2-70b", test::Preset("Llama-2-70b-chat-hf")},
      {"Llama-2-7b", test::Fixture("configs/llama-2-7b.json")},
      {"Mistral-7B", test::Fixture("configs/mistral-7b-v0.1.json")},
  };
  auto it = map.find(model);
  if (it == map.end()) {
    ADD_FAILURE() << "no config for " << model;
    return {};
  }
  return it->second;
}

std::string Str(const YAML::Node& n, const std::string& fallback = "") {
  return n && !n.IsNull() ? n.as<std::string>() : fallback;
}
int64_t Int(const YAML::Node& n, int64_t fallback) { return n && !n.IsNull() ? n.as<int64_t>() : fallback; }

struct Row {
  std::string id, model, task, layout, framework, statistic, source;
  double measured = 0, predicted = 0;
  double bound = -1;  // the row's own bound on |predicted / measured - 1|; -1 = none in the YAML
  double Error() const { return (predicted - measured) / measured; }
};

// Each row is predicted through gpuplan fit's own request path (PrepareFit, then FitOnCard on
// the row's catalog card), with the framework profile the run used and the options a user
// would give for that run; then the statistic the source printed is read off the estimate.
Row Predict(const YAML::Node& c, const GpuCatalog& cat) {
  Row r;
  r.id = Str(c["id"]);
  r.model = Str(c["model"]);
  r.task = Str(c["task"]);
  r.framework = Str(c["framework"], "generic");
  r.statistic = Str(c["statistic"]);
  r.measured = c["measured_gib"].as<double>();
  r.source = Str(c["source"]);
  if (c["bound"] && !c["bound"].IsNull()) {
    r.bound = c["bound"].as<double>();
  }
  FitRequest q;
  q.model = ConfigFor(r.model);
  q.task = r.task;
  q.framework = r.framework;
  q.gpu = Str(c["card"]);
  q.gpus = Int(c["gpus"], 1);
  q.tp = Int(c["tp"], 1);
  q.pp = Int(c["pp"], 1);
  q.zero = static_cast<int>(Int(c["zero"], 0));
  q.loss = Str(c["loss"]);
  if (IsTraining(ParseTask(r.task))) {
    q.precision = Str(c["precision"], "mixed");
    q.optimizer = Str(c["optimizer"], "adamw").find("8bit") != std::string::npos ? "adamw8bit" : "adamw";
    q.seq = Int(c["seq"], 2048);
    q.micro_batch = Int(c["micro_batch"], 1);
    q.recompute = Str(c["recompute"], "none");
    q.lora_rank = Int(c["lora_rank"], 16);
    q.lora_targets = Str(c["lora_targets"], "all-linear");
  } else {
    q.weight_dtype = Str(c["weight_dtype"], "bf16");
    q.kv_dtype = Str(c["kv_dtype"], "bf16");
    q.context = Int(c["context"], 4096);
    q.batched_tokens = Int(c["batched_tokens"], 8192);
    if (c["memory_utilization"] && !c["memory_utilization"].IsNull()) {
      q.gpu_memory_utilization = c["memory_utilization"].as<double>();
    }
  }
  const FitInputs in = PrepareFit(q, test::DataDir());
  Gpu card = cat.Find(q.gpu);
  if (c["visible_gib"] && !c["visible_gib"].IsNull()) {
    // The memory the runtime saw (vLLM's total_gpu_memory), not the datasheet's.
    card.memory_bytes = static_cast<int64_t>(std::llround(c["visible_gib"].as<double>() * kGiB));
  }
  const FitSingle f = FitOnCard(q, in, card, cat);
  const MemoryEstimate& e = f.memory;
  r.layout = fmt::format("{} GPU{} tp={} zero={}", q.gpus, q.gpus > 1 ? "s" : "", q.tp, q.zero);
  if (r.statistic == "weights") {
    r.predicted = e.per_gpu.weights.gib();
  } else if (r.statistic == "kv_cache") {
    // The server's KV space: its tokens x one token's KV bytes on this GPU (all layers).
    const double per_token = e.kv_per_sequence.value / static_cast<double>(q.context);
    r.predicted = Bytes(static_cast<double>(e.kv_cache_tokens.value_or(0)) * per_token).gib();
  } else if (r.statistic == "peak_active") {
    r.predicted = e.peak_allocated.gib();
  } else if (r.statistic == "max_allocated") {
    r.predicted = std::max(e.peak_allocated, e.load_allocated).gib();
  } else if (r.statistic == "max_reserved") {
    r.predicted = std::max(e.peak_reserved, e.load_allocated).gib();
  } else {
    ADD_FAILURE() << r.id << ": unknown statistic " << r.statistic;
  }
  return r;
}

std::string Table(const std::vector<Row>& rows) {
  std::string t =
      "| case | model | task | layout | framework | statistic | measured GiB | predicted GiB | error | bound |\n"
      "|---|---|---|---|---|---|---:|---:|---:|---:|\n";
  for (const auto& r : rows) {
    t += fmt::format("| {} | {} | {} | {} | {} | {} | {:.2f} | {:.2f} | {:+.1f}% | {} |\n", r.id, r.model, r.task,
                     r.layout, r.framework, r.statistic, r.measured, r.predicted, 100 * r.Error(),
                     r.bound > 0 ? fmt::format("{:g}%", 100 * r.bound) : "none");
  }
  std::vector<double> errs;
  for (const auto& r : rows) {
    errs.push_back(std::fabs(r.Error()));
  }
  std::sort(errs.begin(), errs.end());
  const double median = errs.size() % 2 == 1 ? errs[errs.size() / 2]
                                             : (errs[errs.size() / 2 - 1] + errs[errs.size() / 2]) / 2;
  t += fmt::format("\nRows: {}. Median absolute error: {:.1f}%. Largest: {:.1f}%.\n", rows.size(), 100 * median,
                   100 * errs.back());
  return t;
}

// The row count and the errors README.md quotes.
std::string Summary(const std::vector<Row>& rows) {
  std::vector<double> errs;
  double weights_worst = 0;
  int weights = 0;
  for (const auto& r : rows) {
    errs.push_back(std::fabs(r.Error()));
    if (r.statistic == "weights") {
      ++weights;
      weights_worst = std::max(weights_worst, std::fabs(r.Error()));
    }
  }
  std::sort(errs.begin(), errs.end());
  const double median = errs.size() % 2 == 1 ? errs[errs.size() / 2]
                                             : (errs[errs.size() / 2 - 1] + errs[errs.size() / 2]) / 2;
  return fmt::format(
      "  - memory, {} published rows (docs/validation-memory.md): weights within {:.1f}% ({} rows), median "
      "absolute error {:.1f}%, largest {:.1f}%.\n",
      rows.size(), 100 * weights_worst, weights, 100 * median, 100 * errs.back());
}

constexpr const char* kBegin = "<!-- BEGIN GENERATED TABLE (tests/unit/validation_test.cc) -->\n";
constexpr const char* kEnd = "<!-- END GENERATED TABLE -->";
constexpr const char* kReadmeBegin = "  <!-- BEGIN GENERATED SUMMARY (tests/unit/validation_test.cc) -->\n";
constexpr const char* kReadmeEnd = "  <!-- END GENERATED SUMMARY (memory) -->";

TEST(Validation, MemoryAgainstPublishedMeasurements) {
  const GpuCatalog cat = GpuCatalog::Load(test::DataDir() + "/gpus.yaml");
  const YAML::Node root = YAML::LoadFile(std::string(GPUPLAN_TEST_VALIDATION) + "/memory_cases.yaml");
  std::vector<Row> rows;
  for (const auto& c : root["cases"]) {
    rows.push_back(Predict(c, cat));
  }
  ASSERT_GE(rows.size(), 10u);
  const std::string table = Table(rows);

  test::CheckGeneratedBlock(test::DataDir() + "/../docs/validation-memory.md", kBegin, kEnd, table);
  test::CheckGeneratedBlock(test::DataDir() + "/../README.md", kReadmeBegin, kReadmeEnd, Summary(rows));
  std::cout << table;

  // Every row within its own bound (memory_cases.yaml: the row's documented error plus a margin,
  // the reason in a comment beside it); a row without a bound is an error, so a new row cannot
  // come in unbounded.
  for (const auto& r : rows) {
    if (r.bound <= 0) {
      ADD_FAILURE() << r.id << ": no `bound` in memory_cases.yaml";
      continue;
    }
    EXPECT_LE(std::fabs(r.Error()), r.bound)
        << r.id << ": predicted " << r.predicted << " GiB vs measured " << r.measured << " GiB is "
        << fmt::format("{:+.1f}%", 100 * r.Error()) << ", outside its bound of " << 100 * r.bound << "%";
  }
  // Weights are the part the model must get right to within a few percent.
  for (const auto& r : rows) {
    if (r.statistic == "weights") {
      EXPECT_LT(std::fabs(r.Error()), 0.05) << r.id;
    }
  }
  std::vector<double> errs;
  for (const auto& r : rows) {
    errs.push_back(std::fabs(r.Error()));
  }
  std::nth_element(errs.begin(), errs.begin() + static_cast<std::ptrdiff_t>(errs.size() / 2), errs.end());
  // Issue 13's goal for the published rows, each under the profile of the framework that ran it.
  EXPECT_LE(errs[errs.size() / 2], 0.10) << "median absolute error";
}

}  // namespace
}  // namespace gpuplan
