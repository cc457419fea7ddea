// Validation against published MEASURED memory (tests/validation/memory_cases.yaml, sources in
// docs/validation-memory-sources.md). Recomputes every prediction, checks that the table in
// docs/validation-memory.md is current (GPUPLAN_UPDATE_DOCS=1 rewrites it), and bounds the
// median error so a regression in the model shows up here.
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
  std::string id, model, task, layout, component, source;
  double measured = 0, predicted = 0;
  double Error() const { return (predicted - measured) / measured; }
};

Row Predict(const YAML::Node& c, const GpuCatalog& cat) {
  Row r;
  r.id = Str(c["id"]);
  r.model = Str(c["model"]);
  r.task = Str(c["task"]);
  r.component = Str(c["measured_component"]);
  r.measured = c["measured_gib"].as<double>();
  r.source = Str(c["source"]);
  const ModelSpec m = LoadHfConfig(ConfigFor(r.model));
  Workload w;
  w.task = ParseTask(r.task);
  if (IsTraining(w.task)) {
    w.precision = ParsePrecision(Str(c["precision"], "mixed"));
    const std::string opt = Str(c["optimizer"], "adamw");
    w.optimizer = opt.find("8bit") != std::string::npos ? Optimizer::kAdamW8bit : Optimizer::kAdamW;
    w.seq = Int(c["seq"], 2048);
    w.micro_batch = Int(c["micro_batch"], 1);
    w.recompute = ParseRecompute(Str(c["recompute"], "none"));
    w.flash_attn = true;
    w.lora_rank = Int(c["lora_rank"], 16);
    const std::string targets = Str(c["lora_targets"], "all-linear");
    if (targets != "all-linear") {
      std::stringstream ss(targets);
      std::string t;
      while (std::getline(ss, t, ',')) {
        w.lora_targets.push_back(t);
      }
    }
  } else {
    w.weight_dtype = ParseWeightDtype(Str(c["weight_dtype"], "bf16"));
    w.kv_dtype = ParseKvDtype(Str(c["kv_dtype"], "bf16"));
    w.context = Int(c["context"], 4096);
    w.concurrency = 1;
    w.batched_tokens = Int(c["batched_tokens"], 8192);
  }
  Layout l;
  l.gpus = Int(c["gpus"], 1);
  l.tp = Int(c["tp"], 1);
  l.pp = Int(c["pp"], 1);
  l.zero = static_cast<int>(Int(c["zero"], 0));
  r.layout = fmt::format("{} GPU{} tp={} zero={}", l.gpus, l.gpus > 1 ? "s" : "", l.tp, l.zero);
  const MemoryEstimate e = EstimateMemory(m, w, l);
  if (r.component == "weights") {
    r.predicted = e.per_gpu.weights.gib();
  } else if (r.component == "total_peak") {
    r.predicted = e.per_gpu.Total().gib();
  } else if (r.component == "kv_cache") {
    // vLLM: KV capacity = utilization x visible memory - (weights + activation peak + non-torch).
    double visible = c["visible_gib"] && !c["visible_gib"].IsNull() ? c["visible_gib"].as<double>() : 0;
    if (visible == 0) {
      visible = Bytes(static_cast<double>(cat.Find(Str(c["gpu"])).memory_bytes)).gib();
    }
    const double util = c["memory_utilization"].as<double>();
    const MemoryBreakdown& p = e.per_gpu;
    r.predicted = util * visible - (p.weights + p.activations + p.overhead).gib();
  } else {
    ADD_FAILURE() << "unknown component " << r.component;
  }
  return r;
}

std::string Table(const std::vector<Row>& rows) {
  std::string t =
      "| case | model | task | layout | measured | measured GiB | predicted GiB | error |\n"
      "|---|---|---|---|---|---:|---:|---:|\n";
  for (const auto& r : rows) {
    t += fmt::format("| {} | {} | {} | {} | {} | {:.2f} | {:.2f} | {:+.1f}% |\n", r.id, r.model, r.task, r.layout,
                     r.component, r.measured, r.predicted, 100 * r.Error());
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

constexpr const char* kBegin = "<!-- BEGIN GENERATED TABLE (tests/unit/validation_test.cc) -->\n";
constexpr const char* kEnd = "<!-- END GENERATED TABLE -->";

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
  std::cout << table;

  // Weights are the part the model must get right to within a few percent.
  for (const auto& r : rows) {
    if (r.component == "weights") {
      EXPECT_LT(std::fabs(r.Error()), 0.05) << r.id;
    }
  }
  std::vector<double> errs;
  for (const auto& r : rows) {
    errs.push_back(std::fabs(r.Error()));
  }
  std::nth_element(errs.begin(), errs.begin() + static_cast<std::ptrdiff_t>(errs.size() / 2), errs.end());
  EXPECT_LT(errs[errs.size() / 2], 0.25) << "median absolute error";
}

}  // namespace
}  // namespace gpuplan
