// Validation of the time model against published MEASURED training throughput and inference
// decode throughput (tests/validation/time_cases.yaml; sources in
// docs/validation-time-sources.md). Recomputes every row, checks that docs/validation.md and the
// summary in README.md are current (GPUPLAN_UPDATE_DOCS=1 rewrites them), holds every compared
// row to its own `bound` (a row without one is an error) and bounds the median errors.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fmt/format.h>
#include <fstream>
#include <map>
#include <sstream>
#include <utility>

#include "catalog/gpu_catalog.h"
#include "catalog/model.h"
#include "fit/gemm_table.h"
#include "fit/accuracy.h"
#include "fit/advisor.h"
#include "fit/fit_request.h"
#include "fit/framework.h"
#include "fit/time_model.h"
#include "doc_table.h"
#include "test_paths.h"

namespace gpuplan {
namespace {

std::string S(const YAML::Node& n, const std::string& f = "") { return n && !n.IsNull() ? n.as<std::string>() : f; }
double D(const YAML::Node& n, double f = 0) { return n && !n.IsNull() ? n.as<double>() : f; }
int64_t I(const YAML::Node& n, int64_t f = 0) { return n && !n.IsNull() ? n.as<int64_t>() : f; }

// A config.json for the case's architecture: a preset of data/models by name (`preset`: the MoE
// rows, whose routing the shape fields below cannot say), else Llama-style for gated MLPs,
// GPT-style otherwise.
ModelSpec ModelOf(const YAML::Node& a, int64_t seq) {
  if (!S(a["preset"]).empty()) {
    return LoadHfConfig(test::Preset(S(a["preset"])));
  }
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
                      R"("n_positions":{},"attn_pdrop":{},"resid_pdrop":{}}})",
                      h, I(a["layers"]), heads, I(a["ffn"], 4 * h), I(a["vocab"]), std::max<int64_t>(seq, 1),
                      D(a["attention_dropout"]), D(a["hidden_dropout"]));
  }
  return ParseHfConfig(cfg, S(a["name"]));
}

const Gpu& GpuOf(const GpuCatalog& cat, const std::string& text) {
  auto has = [&](const char* s) { return text.find(s) != std::string::npos; };
  if (has("H200")) return cat.Find("H200");
  if (has("B200")) return cat.Find("B200");
  if (has("H100")) return cat.Find("H100 SXM");
  if (has("A100") && has("40GB")) return cat.Find("A100 40GB SXM");
  if (has("A100")) return cat.Find("A100 80GB SXM");
  return cat.Find(text);
}

struct Row {
  std::string id, kind, layout, basis, skipped;
  bool moe = false;  // a mixture-of-experts model: reported apart (docs/validation.md, "MoE training")
  std::string gpu;  // the catalog card's name
  bool fp8 = false;    // fp8 GEMMs (training) or weights (serving): data/accuracy.yaml's precision class
  std::string family;  // the named framework profile's family ("": the row names none)
  double measured = 0, predicted = 0;
  double bound = -1;  // the row's own bound on |predicted / measured - 1|; -1 = none in the YAML
  double Error() const { return (predicted - measured) / measured; }
};

// FLOPs per token as the row's source counts them (`flops_formula` in time_cases.yaml), written
// out here from each source, so that an achieved TFLOP/s figure is turned into tokens/s without
// gpuplan's own FLOP count (an error there would cancel out between the two sides). 0 with
// `why` set where the source states no formula.
double SourceFlopsPerToken(const YAML::Node& c, std::string* why) {
  const std::string formula = S(c["flops_formula"]);
  const YAML::Node& a = c["model"];
  const double l = D(a["layers"]);
  const double h = D(a["hidden"]);
  const double v = D(a["vocab"]);
  const double s = D(c["seq"], 2048);
  const double heads = D(a["heads"]);
  const double groups = D(a["kv_heads"], heads);
  const double ffn = D(a["ffn"], 4 * h);
  const bool gated = a["gated_mlp"].as<bool>();
  if (formula == "megatron2021_eq3") {
    // Narayanan et al. 2021 (arXiv:2104.04473) §5.1, Eq. 3: F = 96 B s l h^2 (1 + s/(6h) +
    // V/(16 l h)) per iteration of B sequences of s tokens (the 96 = 4 x 24 counts the forward
    // pass rerun by activation recomputation); the Megatron-LM README table uses the same.
    return 96 * l * h * h * (1 + s / (6 * h) + v / (16 * l * h));
  }
  if (formula == "megatron_core") {
    // Megatron-Core num_floating_point_operations (megatron/training/training.py at the commit
    // of the README table): 12 B s L h^2 ((1 + g/a + s/h) q/h + ffn/h x (3/2 with SwiGLU) +
    // V/(2 L h)), g = query groups, a = heads, q = query projection size (heads x kv_channels,
    // kv_channels = h/a by default), V = the padded vocab (these vocabs are already multiples of
    // 128 x tp). No recomputation counted.
    const double q = heads * (h / heads);
    return 12 * l * h * h *
           ((1 + groups / heads + s / h) * q / h + ffn / h * (gated ? 1.5 : 1.0) + v / (2 * l * h));
  }
  if (formula == "palm_appendix_b") {
    // Chowdhery et al. 2022 (PaLM, arXiv:2204.02311) Appendix B, which Llama 3 (arXiv:2407.21783
    // §3.3) names for its "BF16 MFU": 6N + 12 L H Q T FLOPs per token, N the parameters, L
    // layers, H heads, Q head dimension, T sequence length (no recomputation). N is counted
    // here from the architecture in the row (Llama: q, k, v, o, gate/up/down, two norms a layer;
    // untied embedding and output; final norm). Whether Llama 3 left the input embedding
    // (V x h, 0.5% of 405B) out of N is not stated; it moves the row by 0.5%.
    if (!gated) {
      ADD_FAILURE() << S(c["id"]) << ": palm_appendix_b is written out here for Llama-style models only";
      return 0;
    }
    const double d = h / heads;
    const double per_layer = h * heads * d + 2 * h * groups * d + heads * d * h + 3 * h * ffn + 2 * h;
    const double n = l * per_layer + 2 * v * h + h;
    return 6 * n + 12 * l * heads * d * s;
  }
  if (formula == "not_stated") {
    *why = "the source does not state how it counts FLOPs, so its TFLOP/s cannot be turned into tokens/s "
           "without gpuplan's own FLOP count";
    return 0;
  }
  ADD_FAILURE() << S(c["id"]) << ": the row gives TFLOP/s but flops_formula is '" << formula
                << "' (megatron2021_eq3, megatron_core, palm_appendix_b or not_stated)";
  *why = "no flops_formula";
  return 0;
}

const FrameworkCatalog& Frameworks() {
  static const FrameworkCatalog frameworks = LoadFrameworkCatalog(test::DataDir());
  return frameworks;
}

Row Evaluate(const YAML::Node& c, const GpuCatalog& cat) {
  Row r;
  r.id = S(c["id"]);
  r.kind = S(c["kind"]);
  r.bound = D(c["bound"], -1);
  const std::string precision = S(c["precision"], "bf16");
  const bool fp8 = precision == "fp8";
  r.fp8 = fp8;
  if (!S(c["framework"]).empty()) {
    r.family = Frameworks().Find(S(c["framework"])).family;
  }
  const std::string attention = S(c["attention"], "fa2");
  // The catalog card, with the memory bandwidth the source states where its card differs (the
  // torchtitan rows: HBM2e H100s at 2.4 TB/s).
  Gpu gpu = GpuOf(cat, S(c["gpu"]));
  r.gpu = gpu.name;
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
  l.ep = I(c["ep"], 1);
  l.sp = l.tp > 1;
  TimeConfig tc;
  // The GEMM tables by shape fit loads (data/gemm/: published or measured sweeps of a card;
  // docs/time-model.md §3.1), so a row on a card with one is predicted as fit predicts it.
  static const auto tables = std::make_shared<const GemmTables>(LoadGemmTables(test::DataDir()));
  tc.gemm_tables = tables;
  tc.attention = attention == "fa3" ? AttentionKernel::kFa3 : AttentionKernel::kFa2;
  tc.tp_overlap = c["tp_comm_overlap"] && c["tp_comm_overlap"].as<bool>();
  tc.pp_overlap = !c["pp_comm_overlap"] || c["pp_comm_overlap"].as<bool>();
  tc.dp_grad_overlap = !c["dp_comm_overlap"] || c["dp_comm_overlap"].as<bool>();
  tc.eager_elementwise = c["compile"] && !c["compile"].IsNull() && !c["compile"].as<bool>();
  tc.decode_kv_per_query_head = S(c["decode_attention"]) == "per_query_head";
  // A training row that names its framework's profile takes the profile's loss (how its
  // cross-entropy kernels run, docs/time-model.md §3.3), as fit does; the other settings are the row's.
  if (r.kind == "train" && !S(c["framework"]).empty()) {
    const FrameworkProfile& profile = Frameworks().Find(S(c["framework"]));
    if (c["zero"].IsNull()) {
      l.zero = profile.default_zero;  // as fit takes it when --zero is not given
    }
    tc.loss = profile.loss;
    tc.fp32_grad_reduce = profile.fp32_grads;
    tc.fp8_tp_gather = profile.fp8_tp_gather;
    tc.fp8_head = profile.fp8_head;
  }
  // A row whose run reduced its gradients in another dtype than its profile's says so.
  if (c["grad_reduce_fp32"]) {
    tc.fp32_grad_reduce = c["grad_reduce_fp32"].as<bool>();
  }
  // A row whose run gathered its tensor-parallel activations in fp8 (the profile key tp_gather).
  if (c["tp_gather"]) {
    const std::string gather = S(c["tp_gather"]);
    if (gather != "fp8" && gather != "bf16") {
      ADD_FAILURE() << S(c["id"]) << ": tp_gather must be fp8 or bf16, not '" << gather << "'";
    }
    tc.fp8_tp_gather = gather == "fp8";
  }
  // A row whose run kept the output head in bf16 under fp8 (the profile key fp8_head).
  if (c["fp8_head"]) {
    const std::string head = S(c["fp8_head"]);
    if (head != "fp8" && head != "bf16") {
      ADD_FAILURE() << S(c["id"]) << ": fp8_head must be fp8 or bf16, not '" << head << "'";
    }
    tc.fp8_head = head == "fp8";
  }
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
    // The sources' benchmarks run a static batch: every request arrives at once, each makes
    // exactly `out` tokens; measured throughput includes every prefill. Run step by step
    // (docs/time-model.md §5.2) under the engine's KV pool where the row names its engine's
    // profile (`framework`), else with no KV limit.
    KvPool pool;
    if (const std::string engine = S(c["framework"]); !engine.empty()) {
      const FrameworkCatalog& frameworks = Frameworks();
      OverheadConfig o;
      o.framework = frameworks.Find(engine);
      if (const auto it = frameworks.cuda_context_mib.find(gpu.architecture); it != frameworks.cuda_context_mib.end()) {
        o.cuda_context = MiB(it->second);
      }
      Workload wf = w;
      FrameworkForCard(gpu, model, l, wf, o);
      const MemoryEstimate mem = EstimateMemory(model, wf, l, o, gpu.memory_bytes);
      if (!mem.kv_cache_tokens) {
        ADD_FAILURE() << r.id << ": framework " << engine << " has no KV space rule";
        return r;
      }
      pool.tokens = static_cast<double>(*mem.kv_cache_tokens);
      pool.block_tokens = mem.server_block_tokens.value_or(1);
      pool.policy = o.framework.kv_overflow;
    }
    const StaticBatchRun run = EstimateStaticBatch(model, w, l, gpu, tc, in, out, pool);
    if (!run.simulated) {
      ADD_FAILURE() << r.id << ": the static batch was not run (KV pool too small or over the work bound)";
      return r;
    }
    if (pool.policy != KvOverflow::kUnlimited) {
      r.layout += fmt::format(" ({}: KV {:.0f} tokens, {} preempted)", S(c["framework"]), pool.tokens, run.preemptions);
    }
    r.predicted = run.output_tokens_per_second / static_cast<double>(l.tp * l.pp);
    return r;
  }
  if (c["dp"].IsNull() || c["global_batch"].IsNull()) {
    r.skipped = "layout or batch not stated";
    return r;
  }
  const int64_t seq = I(c["seq"], 2048);
  const ModelSpec model = ModelOf(c["model"], seq);
  r.moe = model.moe && model.moe->experts > 0;
  if (l.ep > 1) {
    r.layout += fmt::format(" ep={}", l.ep);
  }
  Workload w;
  w.task = Task::kPretrain;
  w.seq = seq;
  w.global_batch = I(c["global_batch"]);
  w.micro_batch = I(c["micro_batch"], 1);
  w.recompute = ParseRecompute(S(c["recompute"], "none"));
  w.precision = Precision::kMixed;
  w.fp8 = fp8;
  w.flash_attn = attention != "none";
  const int64_t stated_batch = w.global_batch;  // the source's batch, for the measured side
  if (w.global_batch % (w.micro_batch * l.dp()) != 0) {
    w.micro_batch = 1;
    const int64_t dp = l.dp();
    w.global_batch = (w.global_batch + dp - 1) / dp * dp;  // the smallest batch the layout can run
  }
  const double gpus = static_cast<double>(l.gpus);
  r.basis = "tokens/s per GPU";
  if (m["tokens_per_second_per_gpu"] && !m["tokens_per_second_per_gpu"].IsNull()) {
    r.measured = D(m["tokens_per_second_per_gpu"]);
  } else if (m["tokens_per_second"] && !m["tokens_per_second"].IsNull()) {
    r.measured = D(m["tokens_per_second"]) / gpus;
  } else if (m["step_seconds"] && !m["step_seconds"].IsNull()) {
    r.measured = static_cast<double>(stated_batch * seq) / D(m["step_seconds"]) / gpus;
  } else {
    // Achieved TFLOP/s per GPU divided by FLOPs per token as the source counts them.
    const double per_token = SourceFlopsPerToken(c, &r.skipped);
    if (per_token <= 0) {
      return r;
    }
    r.measured = D(m["tflops_per_gpu"]) * 1e12 / per_token;
  }
  // Settings the source does not state take what fit takes (docs/time-model.md §10, issue 28
  // requirement 2): under the row's framework profile (`framework`, else the generic one), the
  // fastest vpp (where the profile runs the interleaved schedule) and tensor-parallel overlap
  // (where it offers it) that fit the card.
  const GivenSettings given{.vpp = c["vpp"].IsDefined() || l.pp == 1,
                            .tp_overlap = c["tp_comm_overlap"].IsDefined() || l.tp == 1,
                            .micro_batch = !c["micro_batch"].IsNull()};
  if (!given.vpp || !given.tp_overlap || !given.micro_batch) {
    OverheadConfig oc;
    oc.framework = Frameworks().Find(S(c["framework"], "generic"));
    oc.framework.fp32_grads = tc.fp32_grad_reduce;  // the row's gradient dtype, where it states one
    const bool overlap_before = tc.tp_overlap;
    auto say = [&](const char* how) {
      if (!given.vpp && l.vpp > 1) {
        r.layout += fmt::format(" vpp={} (not stated: {})", l.vpp, how);
      }
      if (!given.micro_batch) {
        r.layout += fmt::format(" micro-batch {} (not stated: {})", w.micro_batch, how);
      }
      if (!given.tp_overlap && tc.tp_overlap != overlap_before) {
        r.layout += fmt::format(" tp overlap {} (not stated: {})", tc.tp_overlap ? "on" : "off", how);
      }
    };
    if (ChooseUnstatedSettings(given, model, w, l, gpu, oc, tc, 0)) {
      say("chosen");
    } else {
      // Nothing fits the card in the memory model, yet the source ran this layout (Llama 3 405B:
      // 88.8 GiB at vpp 1 against 79.6; Meta took a layer off the first and last stages and freed
      // stage inputs early, which the model does not count; docs/validation.md). The time is
      // compared at the fastest settings, the memory check left to docs/validation-memory.md.
      Gpu roomy = gpu;
      roomy.memory_bytes = gpu.memory_bytes * 4;
      if (ChooseUnstatedSettings(given, model, w, l, roomy, oc, tc, 0)) {
        say("the fastest; none fits the memory model");
      }
    }
  }
  const TrainingTime t = EstimateTrainingTime(model, w, l, gpu, tc, 0);
  r.predicted = t.tokens_per_second / gpus;
  if (std::getenv("GPUPLAN_VALIDATION_BREAKDOWN")) {
    // Where each training row's step goes (docs/validation.md "Reading a row"): seconds a step.
    fmt::print(stderr,
               "{:<56} step {:.3f} micro-batches {} | gemm {:.3f} attention {:.3f} elementwise {:.3f} optimizer {:.3f} | "
               "tp {:.3f}/{:.3f} pp {:.3f}/{:.3f} dp {:.3f}/{:.3f} cp {:.3f} bubble {:.3f} (exposed/total)\n",
               r.id, t.step_seconds, t.micro_batches, t.gemm_seconds, t.attention_seconds, t.elementwise_seconds,
               t.optimizer_seconds, t.tp_seconds, t.tp_seconds_total, t.pp_seconds, t.pp_seconds_total,
               t.dp_exposed_seconds, t.dp_seconds, t.cp_seconds, t.bubble_seconds);
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

// The median of v (0 for none).
double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}
// The median of |e| over errors e (0 for none).
double MedianAbs(std::vector<double> v) {
  for (double& x : v) {
    x = std::fabs(x);
  }
  return Median(std::move(v));
}
// The error of largest magnitude, with its sign (0 for none).
double WorstSigned(const std::vector<double>& v) {
  return v.empty() ? 0.0
                   : *std::max_element(v.begin(), v.end(), [](double a, double b) { return std::fabs(a) < std::fabs(b); });
}

// data/accuracy.yaml from the compared rows: per kind (training: out-of-sample rows only), the
// count, the median |error| and the error of largest magnitude, overall and by card.
std::string AccuracyYaml(const std::vector<Row>& rows) {
  auto figures = [&](const std::vector<double>& v, const std::string& indent) {
    return fmt::format("{0}rows: {1}\n{0}median_abs_error: {2:.4f}\n{0}worst_error: {3:.4f}\n", indent, v.size(),
                       MedianAbs(v), WorstSigned(v));
  };
  std::string out =
      "# Generated by tests/unit/time_validation_test.cc from the rows of docs/validation.md; do not edit\n"
      "# (GPUPLAN_UPDATE_DOCS=1 rewrites it, the test fails when it is stale). fit prints these beside a\n"
      "# time (src/fit/accuracy.h). error = predicted / measured throughput - 1 (+: the model faster than\n"
      "# the run); training counts only the rows no constant was fitted to. by_setup: a card's rows of one\n"
      "# precision class (fp8 or 16-bit) and framework family (or any), where 3 or more, with signed figures.\n"
      "source: docs/validation.md\n";
  // Dense training, mixture-of-experts training (its rows apart: a MoE step has kernels and
  // traffic a dense one has not, and its figures are of another size), inference.
  for (const std::string kind : {"training", "training_moe", "inference"}) {
    std::vector<double> all;
    std::map<std::string, std::vector<double>> by_gpu;
    // Per card: (precision class, framework family or "any") -> errors.
    std::map<std::string, std::map<std::pair<std::string, std::string>, std::vector<double>>> by_setup;
    for (const auto& r : rows) {
      const std::string of = r.kind == "infer" ? "inference" : r.moe ? "training_moe" : "training";
      if (!r.skipped.empty() || of != kind || IsFitRow(r.id)) {
        continue;
      }
      all.push_back(r.Error());
      by_gpu[r.gpu].push_back(r.Error());
      by_setup[r.gpu][{PrecisionClass(r.fp8), "any"}].push_back(r.Error());
      if (!r.family.empty()) {
        by_setup[r.gpu][{PrecisionClass(r.fp8), r.family}].push_back(r.Error());
      }
    }
    if (all.empty() && kind == "training_moe") {
      continue;
    }
    out += kind + ":\n";
    out += figures(all, "  ") + "  by_gpu:\n";
    for (const auto& [gpu, errors] : by_gpu) {
      out += fmt::format("    - gpu: \"{}\"\n", gpu) + figures(errors, "      ");
      // The setups of kSetupMinRows runs or more, with signed figures: which way the model leans.
      std::string setups;
      for (const auto& [key, e] : by_setup[gpu]) {
        if (static_cast<int64_t>(e.size()) < kSetupMinRows) {
          continue;
        }
        const auto [low, high] = std::minmax_element(e.begin(), e.end());
        const double lowest = *low;
        const double highest = *high;
        const double worst = std::fabs(lowest) >= std::fabs(highest) ? lowest : highest;
        setups += fmt::format(
            "        - precision: {}\n          framework: {}\n          rows: {}\n          median_abs_error: {:.4f}\n"
            "          median_error: {:.4f}\n          lowest_error: {:.4f}\n          highest_error: {:.4f}\n"
            "          worst_error: {:.4f}\n",
            key.first, key.second, e.size(), MedianAbs(e), Median(e), lowest, highest, worst);
      }
      if (!setups.empty()) {
        out += "      by_setup:\n" + setups;
      }
    }
  }
  return out;
}

constexpr const char* kBegin = "<!-- BEGIN GENERATED TABLE (tests/unit/time_validation_test.cc) -->\n";
constexpr const char* kEnd = "<!-- END GENERATED TABLE -->";
// The figures README.md quotes, written from the same rows.
constexpr const char* kReadmeBegin = "  <!-- BEGIN GENERATED SUMMARY (tests/unit/time_validation_test.cc) -->\n";
constexpr const char* kReadmeEnd = "  <!-- END GENERATED SUMMARY (time) -->";

TEST(Validation, TimeAgainstPublishedMeasurements) {
  const GpuCatalog cat = GpuCatalog::Load(test::DataDir() + "/gpus.yaml");
  const YAML::Node root = YAML::LoadFile(std::string(GPUPLAN_TEST_VALIDATION) + "/time_cases.yaml");
  std::vector<Row> rows;
  for (const auto& c : root["cases"]) {
    rows.push_back(Evaluate(c, cat));
  }
  std::string table =
      "| case | kind | layout | compared | measured | predicted | error | bound |\n"
      "|---|---|---|---|---:|---:|---:|---:|\n";
  std::vector<double> train_errs, infer_errs, all, fitted, out_of_sample;
  std::vector<double> moe_errs;  // signed: mixture-of-experts training rows, reported apart
  std::string skipped;
  for (const auto& r : rows) {
    if (!r.skipped.empty()) {
      skipped += "- " + r.id + ": " + r.skipped + "\n";
      continue;
    }
    const bool fit = IsFitRow(r.id);
    table += fmt::format("| {}{} | {} | {} | {} | {:.0f} | {:.0f} | {:+.1f}% | {} |\n", r.id, fit ? " (fit)" : "",
                         r.moe ? "train (MoE)" : r.kind, r.layout, r.basis, r.measured, r.predicted, 100 * r.Error(),
                         r.bound > 0 ? fmt::format("{:g}%", 100 * r.bound) : "none");
    all.push_back(std::fabs(r.Error()));
    if (r.moe) {
      moe_errs.push_back(r.Error());
      continue;
    }
    if (r.kind == "train") {
      (fit ? fitted : out_of_sample).push_back(std::fabs(r.Error()));
    }
    (r.kind == "train" ? train_errs : infer_errs).push_back(std::fabs(r.Error()));
  }
  // The vectors above hold |error| (moe_errs the signed errors): their median is MedianAbs's.
  const auto median = MedianAbs;
  auto worst = [](const std::vector<double>& v) { return v.empty() ? 0.0 : *std::max_element(v.begin(), v.end()); };
  table += fmt::format(
      "\nRows compared: {} (training of dense models {}, of mixture-of-experts models {}, inference {}). Median "
      "absolute error: all {:.1f}%, dense training {:.1f}% (worst {:.1f}%), MoE training {:.1f}% (worst {:+.1f}%), "
      "inference {:.1f}%.\nTraining rows the step efficiency was fitted to (marked fit): {}, median {:.1f}%; "
      "out-of-sample dense training rows: {}, median {:.1f}% (worst {:.1f}%).\n\nNot compared:\n{}",
      all.size(), train_errs.size(), moe_errs.size(), infer_errs.size(), 100 * median(all), 100 * median(train_errs),
      100 * worst(train_errs), 100 * MedianAbs(moe_errs), 100 * WorstSigned(moe_errs), 100 * median(infer_errs),
      fitted.size(), 100 * median(fitted), out_of_sample.size(), 100 * median(out_of_sample), 100 * worst(out_of_sample),
      skipped);
  std::cout << table;

  test::CheckGeneratedBlock(test::DataDir() + "/../docs/validation.md", kBegin, kEnd, table);
  const std::string summary = fmt::format(
      "  - throughput, {} published training and inference rows (docs/validation.md): median absolute error "
      "{:.1f}% (training of dense models {:.1f}% over {} rows, worst {:.1f}%; inference {:.1f}% over {} rows, worst "
      "{:.1f}%); mixture-of-experts training is not yet modelled to that level: {} rows, at worst {:+.0f}%.\n",
      all.size(), 100 * median(all), 100 * median(train_errs), train_errs.size(), 100 * worst(train_errs),
      100 * median(infer_errs), infer_errs.size(), 100 * worst(infer_errs), moe_errs.size(),
      100 * WorstSigned(moe_errs));
  test::CheckGeneratedBlock(test::DataDir() + "/../README.md", kReadmeBegin, kReadmeEnd, summary);
  // data/accuracy.yaml, what fit says beside a time (src/fit/accuracy.h): the out-of-sample
  // training rows and every inference row, by card, from the same rows.
  test::CheckGeneratedFile(test::DataDir() + "/accuracy.yaml", AccuracyYaml(rows));

  ASSERT_GE(train_errs.size(), 10u);
  ASSERT_GE(infer_errs.size(), 3u);
  ASSERT_EQ(fitted.size(), FitRows().size());  // every fit row is still compared
  // Every compared row within its own bound (time_cases.yaml: the row's documented error plus a
  // margin, the reason in a comment beside it); a compared row without a bound is an error, so a
  // new row cannot come in unbounded.
  for (const auto& r : rows) {
    if (!r.skipped.empty()) {
      continue;
    }
    if (r.bound <= 0) {
      ADD_FAILURE() << r.id << ": no `bound` in time_cases.yaml";
      continue;
    }
    EXPECT_LE(std::fabs(r.Error()), r.bound)
        << r.id << ": predicted " << r.predicted << " vs measured " << r.measured << " is "
        << fmt::format("{:+.1f}%", 100 * r.Error()) << ", outside its bound of " << 100 * r.bound << "%";
  }
  // Issue 28's goals, on rows never used to fit a constant (docs/validation.md "Where issue 28's
  // goals stand"): out-of-sample training median <= 5% and worst <= 15%, inference median <= 12%.
  // The three Megatron-Bridge 25.11 H100 rows and the output head kept in bf16 where Megatron and
  // torchtitan keep it (2026-12-07) put the training figures at 5.5% and 18.6%; cuDNN's published
  // attention rates by sequence length (data/attention, in place of a flat 60% on Hopper and 35% on
  // Blackwell) then at 5.1% and 19.2% (the worst row's attention at 8k runs 4% below the flat
  // rate); Megatron-Bridge's fused cross-entropy (its profile, loss te_fused) at 5.1% and 16.6%;
  // the two Megatron-Bridge 26.04.01 H100 rows (the same layouts at larger batches, newer
  // software, -18.7% and -18.0%) at 5.5% and 18.7% (2026-12-07): new rows, not a model change;
  // fp8 forward GEMMs at the fast-accumulation rate (Transformer Engine's published GEMM profile,
  // data/gemm/h100-sxm.yaml `fp8_fast_accum`) at 5.5% and 16.8% (2026-12-07).
  // The goals are not met, and what is guarded is the level reached, so a change that makes it
  // worse fails here, whatever the rows' own bounds allow.
  EXPECT_LT(median(train_errs), 0.10);
  EXPECT_LE(median(out_of_sample), 0.0552) << fmt::format("{:.4f}", median(out_of_sample));
  EXPECT_LE(worst(out_of_sample), 0.1685) << fmt::format("{:.4f}", worst(out_of_sample));
  EXPECT_LE(median(infer_errs), 0.12);
}

}  // namespace
}  // namespace gpuplan
