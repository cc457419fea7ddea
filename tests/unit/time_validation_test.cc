// Validation of the time model against published MEASURED training throughput and inference
// decode throughput (tests/validation/time_cases.yaml; sources in
// docs/validation-time-sources.md). Recomputes every row, checks that docs/validation.md is
// current (GPUPLAN_UPDATE_DOCS=1 rewrites it) and bounds the median error.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fmt/format.h>
#include <fstream>
#include <sstream>

#include "catalog/gpu_catalog.h"
#include "catalog/model.h"
#include "fit/time_model.h"
#include "doc_table.h"
#include "test_paths.h"

namespace gpuplan {
namespace {

std::string S(const YAML::Node& n, const std::string& f = "") { return n && !n.IsNull() ? n.as<std::string>() : f; }
double D(const YAML::Node& n, double f = 0) { return n && !n.IsNull() ? n.as<double>() : f; }
int64_t I(const YAML::Node& n, int64_t f = 0) { return n && !n.IsNull() ? n.as<int64_t>() : f; }

// A config.json for the case's architecture: Llama-style for gated MLPs, GPT-style otherwise.
ModelSpec ModelOf(const YAML::Node& a, int64_t seq) {
  const int64_t h = I(a["hidden"]);
  const int64_t heads = I(a["heads"]);
  const int64_t kv = I(a["kv_heads"], heads);
  std::string cfg;
  if (a["gated_mlp"].as<bool>()) {
    cfg = fmt::format(R"({{"model_type":"llama","hidden_size":{},"num_hidden_layers":{},"num_attention_heads":{},)"
                      R"("num_key_value_heads":{},"intermediate_size":{},"vocab_size":{}}})",
                      h, I(a["layers"]), heads, kv, I(a["ffn"]), I(a["vocab"]));
  } else {
    cfg = fmt::format(R"({{"model_type":"gpt2","n_embd":{},"n_layer":{},"n_head":{},"n_inner":{},"vocab_size":{},)"
                      R"("n_positions":{},"attn_pdrop":0,"resid_pdrop":0}})",
                      h, I(a["layers"]), heads, I(a["ffn"], 4 * h), I(a["vocab"]), std::max<int64_t>(seq, 1));
  }
  return ParseHfConfig(cfg, S(a["name"]));
}

const Gpu& GpuOf(const GpuCatalog& cat, const std::string& text) {
  auto has = [&](const char* s) { return text.find(s) != std::string::npos; };
  if (has("H200")) return cat.Find("H200");
  if (has("H100")) return cat.Find("H100 SXM");
  if (has("A100") && has("40GB")) return cat.Find("A100 40GB SXM");
  if (has("A100")) return cat.Find("A100 80GB SXM");
  return cat.Find(text);
}

struct Row {
  std::string id, kind, layout, basis, skipped;
  double measured = 0, predicted = 0;
  double Error() const { return (predicted - measured) / measured; }
};

Row Evaluate(const YAML::Node& c, const GpuCatalog& cat) {
  Row r;
  r.id = S(c["id"]);
  r.kind = S(c["kind"]);
  const std::string precision = S(c["precision"], "bf16");
  const bool fp8 = precision == "fp8";
  const std::string attention = S(c["attention"], "fa2");
  // The catalog card, with the memory bandwidth the source states where its card differs (the
  // torchtitan rows: HBM2e H100s at 2.4 TB/s).
  Gpu gpu = GpuOf(cat, S(c["gpu"]));
  if (D(c["memory_bandwidth_gb_s"]) > 0) {
    gpu.memory_bandwidth_gb_s = D(c["memory_bandwidth_gb_s"]);
  }
  Layout l;
  l.gpus = I(c["gpus"], 1);
  l.tp = I(c["tp"], 1);
  l.pp = I(c["pp"], 1);
  l.cp = I(c["cp"], 1);
  l.vpp = I(c["vpp"], 1);
  l.zero = static_cast<int>(I(c["zero"], 0));
  l.sp = l.tp > 1;
  TimeConfig tc;
  tc.attention = attention == "fa3" ? AttentionKernel::kFa3 : AttentionKernel::kFa2;
  tc.tp_overlap = c["tp_comm_overlap"] && c["tp_comm_overlap"].as<bool>();
  tc.eager_elementwise = c["compile"] && !c["compile"].IsNull() && !c["compile"].as<bool>();
  const std::string net = S(c["network"]);
  // 8 x 200 Gb/s a node ("200 Gb/s" per GPU, or "1600 Gbps" node to node), else 8 x 400 Gb/s.
  const bool node_1600 = net.find("200 Gb") != std::string::npos || net.find("1600 Gbps") != std::string::npos;
  tc.network = ParseNetwork(node_1600 ? "ib-200g" : "ib-400g");
  const YAML::Node& m = c["measured"];
  r.layout = fmt::format("{} x {}{} tp={} pp={}{}{}", l.gpus, gpu.name,
                         D(c["memory_bandwidth_gb_s"]) > 0 ? fmt::format(" at {:g} GB/s", gpu.memory_bandwidth_gb_s) : "",
                         l.tp, l.pp,
                         l.cp > 1 ? fmt::format(" cp={}", l.cp) : "", l.vpp > 1 ? fmt::format(" vpp={}", l.vpp) : "");
  if (r.kind == "infer") {
    const ModelSpec model = ModelOf(c["model"], 0);
    Workload w;
    w.task = Task::kInfer;
    w.concurrency = I(m["concurrency"], I(m["batch"], 1));
    if (I(m["concurrency"], -1) < 0 && I(m["batch"], -1) < 0) {
      r.skipped = "the engine chose the batch (maximum-throughput run, concurrency not stated)";
      return r;
    }
    if (fp8) {
      w.weight_dtype = WeightDtype::kFp8;
      w.kv_dtype = KvDtype::kFp8;
    }
    const int64_t in = I(m["input_tokens"]);
    const int64_t out = I(m["output_tokens"]);
    w.context = in + out;
    const InferenceTime t = EstimateInferenceTime(model, w, l, gpu, tc, in, out);
    if (D(m["output_tokens_per_second"]) == 0 && D(m["time_to_first_token_ms"]) > 0) {
      r.basis = "time to first token, ms";
      r.measured = D(m["time_to_first_token_ms"]);
      r.predicted = 1000 * t.prefill_seconds;
      return r;
    }
    r.basis = "output tokens/s per GPU";
    r.measured = D(m["output_tokens_per_second_per_gpu"], D(m["output_tokens_per_second"]) / static_cast<double>(l.gpus));
    // Measured throughput includes the prefill: O tokens per (prefill + O steps) per sequence.
    const double seq_seconds = t.prefill_seconds + static_cast<double>(out) * t.decode_step_seconds;
    r.predicted = static_cast<double>(w.concurrency * out) / seq_seconds / static_cast<double>(l.tp * l.pp);
    return r;
  }
  if (c["dp"].IsNull() || c["global_batch"].IsNull()) {
    r.skipped = "layout or batch not stated";
    return r;
  }
  const int64_t seq = I(c["seq"], 2048);
  const ModelSpec model = ModelOf(c["model"], seq);
  Workload w;
  w.task = Task::kPretrain;
  w.seq = seq;
  w.global_batch = I(c["global_batch"]);
  w.micro_batch = I(c["micro_batch"], 1);
  w.recompute = ParseRecompute(S(c["recompute"], "none"));
  w.precision = Precision::kMixed;
  w.fp8 = fp8;
  w.flash_attn = attention != "none";
  if (w.global_batch % (w.micro_batch * l.dp()) != 0) {
    w.micro_batch = 1;
    const int64_t dp = l.dp();
    w.global_batch = (w.global_batch + dp - 1) / dp * dp;  // the smallest batch the layout can run
  }
  const TrainingTime t = EstimateTrainingTime(model, w, l, gpu, tc, 0);
  r.basis = "tokens/s per GPU";
  r.predicted = t.tokens_per_second / static_cast<double>(l.gpus);
  const double gpus = static_cast<double>(l.gpus);
  if (m["tokens_per_second_per_gpu"] && !m["tokens_per_second_per_gpu"].IsNull()) {
    r.measured = D(m["tokens_per_second_per_gpu"]);
  } else if (m["tokens_per_second"] && !m["tokens_per_second"].IsNull()) {
    r.measured = D(m["tokens_per_second"]) / gpus;
  } else if (m["step_seconds"] && !m["step_seconds"].IsNull()) {
    r.measured = static_cast<double>(w.global_batch * seq) / D(m["step_seconds"]) / gpus;
  } else {
    // Achieved TFLOP/s per GPU divided by FLOPs per token as the source counts them: with the
    // recomputation pass (Megatron 2021 eq. 3, BLOOM) or without (PaLM-style model FLOPs).
    const std::string def = S(c["flops_definition"]);
    const bool with_recompute = def.find("includes recompute") != std::string::npos ||
                                def.find("counts an extra forward") != std::string::npos ||
                                def.find("recompute factor 4") != std::string::npos;
    Workload full = w;
    full.recompute = Recompute::kFull;
    const double per_token = with_recompute ? EstimateTrainingTime(model, full, l, gpu, tc, 0).hw_flops_per_token
                                            : t.flops_per_token;
    r.measured = D(m["tflops_per_gpu"]) * 1e12 / per_token;
  }
  return r;
}

// The rows kTrainingStepEfficiency (src/fit/op_model.h, docs/time-model.md §3.5) was fitted to:
// single-node runs, so that communication barely enters. Every other row is out-of-sample.
const std::vector<std::string>& FitRows() {
  static const std::vector<std::string> rows = {"mpt-7b-h100-8gpu-bf16", "mpt-7b-a100-80gb-8gpu-bf16",
                                                "mpt-13b-a100-40gb-8gpu-bf16", "nemo2407-llama2-7b-h100-8gpu-fp8"};
  return rows;
}
bool IsFitRow(const std::string& id) {
  return std::find(FitRows().begin(), FitRows().end(), id) != FitRows().end();
}

constexpr const char* kBegin = "<!-- BEGIN GENERATED TABLE (tests/unit/time_validation_test.cc) -->\n";
constexpr const char* kEnd = "<!-- END GENERATED TABLE -->";

TEST(Validation, TimeAgainstPublishedMeasurements) {
  const GpuCatalog cat = GpuCatalog::Load(test::DataDir() + "/gpus.yaml");
  const YAML::Node root = YAML::LoadFile(std::string(GPUPLAN_TEST_VALIDATION) + "/time_cases.yaml");
  std::vector<Row> rows;
  for (const auto& c : root["cases"]) {
    rows.push_back(Evaluate(c, cat));
  }
  std::string table =
      "| case | kind | layout | compared | measured | predicted | error |\n|---|---|---|---|---:|---:|---:|\n";
  std::vector<double> train_errs, infer_errs, all, fitted, out_of_sample;
  std::string skipped;
  for (const auto& r : rows) {
    if (!r.skipped.empty()) {
      skipped += "- " + r.id + ": " + r.skipped + "\n";
      continue;
    }
    const bool fit = IsFitRow(r.id);
    table += fmt::format("| {}{} | {} | {} | {} | {:.0f} | {:.0f} | {:+.1f}% |\n", r.id, fit ? " (fit)" : "", r.kind,
                         r.layout, r.basis, r.measured, r.predicted, 100 * r.Error());
    if (r.kind == "train") {
      (fit ? fitted : out_of_sample).push_back(std::fabs(r.Error()));
    }
    (r.kind == "train" ? train_errs : infer_errs).push_back(std::fabs(r.Error()));
    all.push_back(std::fabs(r.Error()));
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
  };
  auto worst = [](const std::vector<double>& v) { return v.empty() ? 0.0 : *std::max_element(v.begin(), v.end()); };
  table += fmt::format(
      "\nRows compared: {} (training {}, inference {}). Median absolute error: all {:.1f}%, training {:.1f}% "
      "(worst {:.1f}%), inference {:.1f}%.\nTraining rows the step efficiency was fitted to (marked fit): {}, median "
      "{:.1f}%; out-of-sample training rows: {}, median {:.1f}% (worst {:.1f}%).\n\nNot compared:\n{}",
      all.size(), train_errs.size(), infer_errs.size(), 100 * median(all), 100 * median(train_errs),
      100 * worst(train_errs), 100 * median(infer_errs), fitted.size(), 100 * median(fitted), out_of_sample.size(),
      100 * median(out_of_sample), 100 * worst(out_of_sample), skipped);
  std::cout << table;

  test::CheckGeneratedBlock(test::DataDir() + "/../docs/validation.md", kBegin, kEnd, table);
  ASSERT_GE(train_errs.size(), 10u);
  ASSERT_GE(infer_errs.size(), 3u);
  ASSERT_EQ(fitted.size(), FitRows().size());  // every fit row is still compared
  // Bounds a regression must not cross (docs/validation.md states the issue's goals: median <= 7%,
  // worst <= 20%; today's figures are in the table).
  EXPECT_LT(median(train_errs), 0.10);
  EXPECT_LT(median(out_of_sample), 0.15);
  EXPECT_LT(median(infer_errs), 0.35);
}

}  // namespace
}  // namespace gpuplan
