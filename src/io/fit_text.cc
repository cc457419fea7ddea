// Text rendering of the fit job's result (cost/fit_job.h): what `gpuplan fit` prints without
// --json: the memory table of one layout with its step time, price and inference sizing, or the
// ranked layouts of a training or inference search.
#include "io/fit_text.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "core/money.h"
#include "io/fit_job_json.h"  // JobMinuteText
#include "io/table.h"
#include "io/text_lang.h"

namespace gpuplan {
namespace {

std::string Gib(Bytes b) { return fmt::format("{:.2f}", b.gib()); }

std::string Count(int64_t n) {
  // 8030261248 -> "8,030,261,248 (8.03 B)"
  std::string digits = std::to_string(n);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) {
      out += ',';
    }
    out += digits[i];
  }
  return fmt::format("{} ({:.2f} B)", out, static_cast<double>(n) / 1e9);
}

void PrintTable(std::ostream& os, const ModelSpec& m, const Workload& w, const Layout& l, const Gpu* gpu,
                const MemoryEstimate& e, const std::vector<Suggestion>& sug) {
  os << fmt::format("model      {} ({}), {} layers, hidden {}\n", m.name, m.model_type, m.layers, m.hidden);
  os << fmt::format("params     total {}   active/token {}", Count(e.params_total), Count(e.params_active));
  if (IsTraining(w.task)) {
    os << fmt::format("   trainable {}", Count(e.params_trainable));
  }
  os << "\n";
  os << fmt::format("task       {}", ToString(w.task));
  if (IsTraining(w.task)) {
    const std::string precision = w.precision == Precision::kMixed && gpu != nullptr
                                      ? fmt::format("mixed ({})", HalfDtype(*gpu))
                                      : std::string(ToString(w.precision));
    os << fmt::format(", precision {}, optimizer {}, seq {}, micro-batch {}, recompute {}, flash-attn {}", precision,
                      ToString(w.optimizer), w.seq, w.micro_batch, ToString(w.recompute), w.flash_attn ? "on" : "off");
  } else {
    os << fmt::format(", weights {}, kv {}, context {}, concurrency {}", ToString(w.weight_dtype), ToString(w.kv_dtype),
                      w.context, w.concurrency);
  }
  os << "\n";
  os << fmt::format("layout     {} x {}: tp={} pp={} dp={}{} zero={}{}{}\n", l.gpus, gpu ? gpu->name : "(any GPU)",
                    l.tp, l.pp, l.dp(), l.ep > 1 ? fmt::format(" ep={}", l.ep) : "", l.zero,
                    l.offload_optimizer ? " offload-optimizer" : "", l.offload_params ? " offload-params" : "");
  os << "\n" << Say("fit.text.memory_per_gpu", "memory per GPU (GiB)")
     << (l.pp > 1 ? fmt::format(", {} pipeline stage", e.peak_stage) : "") << "\n";
  const auto& p = e.per_gpu;
  const std::pair<const char*, Bytes> rows[] = {{"weights", p.weights},     {"gradients", p.gradients},
                                                {"optimizer", p.optimizer}, {"activations", p.activations},
                                                {"kv_cache", p.kv_cache},   {"overhead", p.overhead}};
  // Padded by display columns: a CJK character is two columns wide, fmt counts it as one.
  const auto label = [](const std::string& key, const std::string& english) {
    const std::string text = Say(key, english);
    return text + std::string(static_cast<std::size_t>(std::max<int64_t>(0, 12 - DisplayWidth(text))), ' ');
  };
  for (const auto& [name, b] : rows) {
    os << fmt::format("  {} {:>10}\n", label(std::string("mem.") + name, name), Gib(b));
  }
  os << fmt::format("  {} {:>10}\n", label("mem.total", "total"), Gib(p.Total()));
  // docs/memory-model.md §8.4: the three numbers.
  os << fmt::format("  {} {:>10}\n", Say("fit.text.peak_allocated", "peak allocated (torch.cuda.max_memory_allocated)"),
                    Gib(e.peak_allocated));
  os << fmt::format("  {} {:>10}\n", Say("fit.text.nvidia_smi", "nvidia-smi (peak reserved + CUDA context + NCCL)"),
                    Gib(e.nvidia_smi));
  if (e.load_peak > e.nvidia_smi) {
    os << fmt::format("  {} {:>10}\n", Say("fit.text.load_peak", "load-time peak (higher than the steady state)"),
                      Gib(e.load_peak));
  }
  if (e.cpu_offload.value > 0) {
    os << fmt::format("  (CPU RAM per GPU for offloaded states: {} GiB)\n", Gib(e.cpu_offload));
  }
  if (!IsTraining(w.task)) {
    os << fmt::format("  kv cache per sequence: {} GiB", Gib(e.kv_per_sequence));
    if (e.max_concurrency) {
      os << fmt::format("; max concurrency that fits: {}", *e.max_concurrency);
    }
    os << "\n";
    if (e.kv_cache_tokens && e.server_concurrency) {
      os << fmt::format("  server KV cache: {} tokens; maximum concurrency for {} tokens per request: {:.2f}x\n",
                        *e.kv_cache_tokens, w.context, *e.server_concurrency);
    }
  }
  if (gpu != nullptr) {
    const Bytes cap(static_cast<double>(gpu->memory_bytes));
    const bool fits = Fits(e, *gpu);
    // Judged on what nvidia-smi would show (§8.4), with the margin left on the card.
    const Bytes shown = e.nvidia_smi.value > 0 ? e.nvidia_smi : p.Total();
    os << fmt::format("\n{}: {} GiB {} {} GiB ({:.0f}%) {} {}; {} {} GiB\n",
                      fits ? Say("fit.verdict.fits", "FITS") : Say("fit.verdict.nofit", "DOES NOT FIT"), Gib(shown),
                      Say("fit.text.of", "of"), Gib(cap), 100.0 * shown.value / cap.value, Say("fit.text.on", "on"),
                      gpu->name, Say("fit.text.margin", "margin (nvidia-smi view)"), Gib(cap - shown));
    if (!fits) {
      if (sug.empty()) {
        os << Say("fit.text.no_change", "no single or paired change found that fits; try a larger cluster") << "\n";
      } else {
        os << Say("fit.text.changes", "smallest changes that fit (each checked by the model):") << "\n";
        for (const auto& s : sug) {
          os << "  - "
             << SayFormat("cli.fit.suggestion", "{}: {} of {} GiB per GPU",
                          {SayMessage(s.change), Gib(s.estimate.per_gpu.Total()),
                           Gib(Bytes(static_cast<double>(s.gpu->memory_bytes)))})
             << "\n      -> " << s.result << "\n";
        }
      }
    }
  }
  for (const auto& n : e.notes) {
    os << Say("cli.note", "note: ") << SayMessage(n) << "\n";
  }
}

void PrintTrainingTime(std::ostream& os, const TrainingTime& t, const Network& net) {
  os << fmt::format(
      "\ntime per step ({} sequences = {} micro-batches per data-parallel rank; network {}, "
      "{:g} Gb/s per node, {})\n",
      t.global_batch, t.micro_batches, net.name, net.node_gbps, net.basis);
  os << fmt::format("  {:<28} {:>10.3f} s   ({:.0f}% of dense peak assumed achievable)\n", "compute", t.compute_seconds,
                    100 * t.efficiency);
  os << fmt::format("  {:<28} {:>10.3f} s\n", "communication (exposed)", t.communication_seconds);
  os << fmt::format("    {:<26} {:>10.3f} s\n", "tensor parallel", t.tp_seconds);
  os << fmt::format("    {:<26} {:>10.3f} s\n", "pipeline p2p", t.pp_seconds);
  os << fmt::format("    {:<26} {:>10.3f} s\n", "expert all-to-all", t.moe_seconds);
  os << fmt::format("    {:<26} {:>10.3f} s   (of {:.3f} s, the rest hidden behind compute)\n",
                    "data parallel, exposed", t.dp_exposed_seconds, t.dp_seconds);
  if (t.dp_node_link_bytes > 0) {
    os << fmt::format("    {:<26} {:>10.2f} GB per step each way over each node's network link\n",
                      "data parallel across nodes", t.dp_node_link_bytes / 1e9);
  }
  os << fmt::format("  {:<28} {:>10.3f} s\n", "pipeline bubble", t.bubble_seconds);
  os << fmt::format("  {:<28} {:>10.3f} s\n", "step", t.step_seconds);
  os << fmt::format("throughput {:.0f} tokens/s, MFU {:.1f}%, bottleneck: {}\n", t.tokens_per_second, 100 * t.mfu,
                    t.bottleneck);
  if (t.bottleneck == "communication") {
    os << "  communication, not compute, limits this layout: a faster network (--network) or less "
          "data parallelism across nodes would help\n";
  }
  if (t.total_hours) {
    os << fmt::format("job: {:.1f} hours wall clock, {:.0f} GPU-hours\n", *t.total_hours, *t.gpu_hours);
  }
}

void PrintInference(std::ostream& os, const InferencePlan& p, const InferenceTime& t, const Workload& w, double qps,
                    double latency_ms) {
  if (!p.fits) {
    return;
  }
  os << fmt::format(
      "\ninference at concurrency {}: time to first token {:.3f} s, per-token latency {:.1f} ms "
      "({}), {:.0f} output tokens/s per replica, {:.0f} per GPU\n",
      w.concurrency, t.prefill_seconds, 1000 * t.decode_step_seconds,
      t.memory_bound ? "memory-bandwidth bound" : "compute bound", t.decode_tokens_per_second,
      t.decode_tokens_per_second_per_gpu);
  if (qps > 0 || latency_ms > 0) {
    if (!p.meets_latency) {
      os << fmt::format("latency target {:.0f} ms per token is not met even at concurrency 1\n", latency_ms);
      return;
    }
    if (qps > 0) {
      os << fmt::format(
          "each request costs a replica {:.1f} ms of prefill + {:.1f} ms of its share of decode steps "
          "({:.0f}% prefill): {:.2f} requests/s per replica\n",
          1000 * p.time.prefill_seconds, 1000 * (p.time.replica_seconds_per_request - p.time.prefill_seconds),
          100 * p.prefill_share, p.time.requests_per_second);
    }
    os << fmt::format(
        "for {:g} requests/s: {} replica(s) at concurrency {} = {} GPUs, {} per hour "
        "({}); bound: {}\n",
        qps, p.replicas, p.workload.concurrency, p.gpus_total, p.cost_per_hour.Format(), p.cost_basis, p.bound);
  }
}

void PrintInferenceSearch(std::ostream& os, const FitJobResult& res) {
  const FitSearch& s = *res.search;
  const SearchOptions& so = s.options;
  const InferenceSearch& r = *s.inference;
  const std::string& currency = s.currency;
  os << fmt::format("{} layouts evaluated; ranked by {}{}\n", r.evaluated, ToString(so.objective),
                    so.pinned.Any() ? "; kept as given: " + so.pinned.Describe() : "");
  const Align rt = Align::kRight;
  const Table table({{"#", 3, rt},
                     {"GPU", 24},
                     {"GPUs", 5, rt},
                     {"tp", 4, rt},
                     {"replicas", 8, rt},
                     {"concurrency", 11, rt},
                     {"TTFT s", 10, rt},
                     {"ms/token", 12, rt},
                     {currency + "/h", 10, rt},
                     {"bound", 0, Align::kLeft, "  "}});
  auto header = [&] { table.PrintHeader(os); };
  auto row = [&](std::size_t i, const InferencePlan& p) {
    table.PrintRow(
        os, {fmt::format("{}", i + 1), p.gpu->name, fmt::format("{}", p.gpus_total), fmt::format("{}", p.layout.tp),
             fmt::format("{}", p.replicas), fmt::format("{}", p.workload.concurrency),
             fmt::format("{:.3f}", p.time.prefill_seconds), fmt::format("{:.1f}", 1000 * p.time.decode_step_seconds),
             fmt::format("{:.0f}", p.cost_per_hour.amount), p.bound});
  };
  header();
  for (std::size_t i = 0; i < r.ranked.size() && i < so.top; ++i) {
    row(i, r.ranked[i]);
  }
  if (so.gpus.size() > 1 && s.cards_named && !r.best_per_gpu.empty()) {
    os << "best of each card:\n";
    header();
    for (std::size_t i = 0; i < r.best_per_gpu.size(); ++i) {
      row(i, r.best_per_gpu[i]);
    }
  }
  if (r.ranked.empty()) {
    os << "no GPU type meets the request; closest: " << r.closest << "\n";
  }
  for (const auto& n : r.notes) {
    os << Say("cli.note", "note: ") << SayMessage(n) << "\n";
  }
}

void PrintTrainingSearch(std::ostream& os, const FitJobResult& res) {
  const FitSearch& s = *res.search;
  const SearchOptions& so = s.options;
  const SearchResult& r = *s.training;
  const bool offers = !res.offers.empty();
  const std::string& currency = s.currency;
  os << fmt::format("{} layouts evaluated, {} fit with a {:.0f}% margin; ranked by {}{}{}\n", r.evaluated, r.fitting,
                    100 * so.margin, ToString(so.objective),
                    res.tokens > 0 ? fmt::format(" for {:.3g} tokens", res.tokens) : " per million tokens",
                    so.pinned.Any() ? "; kept as given: " + so.pinned.Describe() : "");
  const Align rt = Align::kRight;
  const Table table({{"#", 3, rt},
                     {"GPU", 22},
                     {"GPUs", 5, rt},
                     {"tp", 3, rt},
                     {"pp", 3, rt},
                     {"dp", 4, rt},
                     {"zero", 4, rt},
                     {"recompute", 10, rt},
                     {"mb", 3, rt},
                     {"mem GiB", 8, rt},
                     {"step s", 8, rt},
                     {"comp s", 7, rt},
                     {"comm s", 7, rt},
                     {"bubble", 7, rt},
                     {"tokens/s", 10, rt},
                     {"MFU", 6, rt},
                     {res.tokens > 0 ? "hours" : "h/Mtok", 10, rt},
                     {currency, 12, rt}});
  table.PrintHeader(os);
  auto row = [&](std::size_t i, const Candidate& c) {
    const double hours = c.time.total_hours ? *c.time.total_hours : 1e6 / c.time.tokens_per_second / 3600.0;
    table.PrintRow(
        os,
        {fmt::format("{}", i + 1), c.gpu->name, fmt::format("{}", c.layout.gpus), fmt::format("{}", c.layout.tp),
         fmt::format("{}", c.layout.pp), fmt::format("{}", c.layout.dp()), fmt::format("{}", c.layout.zero),
         std::string(ToString(c.workload.recompute)), fmt::format("{}", c.workload.micro_batch),
         fmt::format("{:.1f}", c.memory.per_gpu.Total().gib()), fmt::format("{:.2f}", c.time.step_seconds),
         fmt::format("{:.2f}", c.time.compute_seconds), fmt::format("{:.2f}", c.time.communication_seconds),
         fmt::format("{:.2f}", c.time.bubble_seconds), fmt::format("{:.0f}", c.time.tokens_per_second),
         fmt::format("{:.1f}%", 100 * c.time.mfu), fmt::format("{:.2f}", hours), fmt::format("{:.0f}", c.cost.amount)});
  };
  for (std::size_t i = 0; i < r.ranked.size() && i < so.top; ++i) {
    row(i, r.ranked[i]);
  }
  if (!r.ranked.empty()) {
    const auto& b = r.ranked.front();
    os << fmt::format("best: compute {:.2f} s + communication {:.2f} s + bubble {:.2f} s per step; bottleneck {}\n",
                      b.time.compute_seconds, b.time.communication_seconds, b.time.bubble_seconds, b.time.bottleneck);
    for (std::size_t i = so.top; i < r.ranked.size(); ++i) {
      const auto& c = r.ranked[i];
      os << fmt::format("  #{} {} x {} tp={} pp={} zero={} lost: {}\n", i + 1, c.layout.gpus, c.gpu->name, c.layout.tp,
                        c.layout.pp, c.layout.zero, WhyLost(c, b, so.objective));
    }
    if (!offers && so.gpus.size() > 1 && s.cards_named) {
      os << "best layout of each card:\n";
      for (std::size_t i = 0; i < r.best_per_gpu.size(); ++i) {
        row(i, r.best_per_gpu[i]);
      }
      for (const Gpu* gpu : so.gpus) {
        if (std::none_of(r.best_per_gpu.begin(), r.best_per_gpu.end(),
                         [&](const Candidate& c) { return c.gpu == gpu; })) {
          os << fmt::format("    {}: no layout fits\n", gpu->name);
        }
      }
    }
    os << "network between nodes: " << NetworkFor(so.time, *b.gpu).name << " (" << NetworkFor(so.time, *b.gpu).basis
       << ")\n";
    os << (offers ? "costs: " + b.cost_basis + "\n"
                  : std::string("CNY figures use the catalog's illustrative per-card-hour prices, not offers.\n"));
  } else {
    os << "no layout fits; closest: " << r.closest << "\n";
  }
  for (const auto& n : r.notes) {
    os << Say("cli.note", "note: ") << SayMessage(n) << "\n";
  }
}

void PrintSingle(std::ostream& os, const FitJobResult& res) {
  const FitSingle& s = *res.single;
  const auto& ckpt = res.model.checkpoint;
  if (ckpt) {
    os << fmt::format("checkpoint {} safetensors file(s): {} parameters, {:.2f} GiB\n", ckpt->files,
                      Count(ckpt->params), Bytes(static_cast<double>(ckpt->bytes)).gib());
  }
  PrintTable(os, res.model.spec, s.workload, s.layout, s.gpu, s.memory, s.suggestions);
  if (s.training) {
    PrintTrainingTime(os, *s.training, s.network);
  }
  if (res.job) {
    const JobPrice& job = *res.job;
    os << fmt::format("cost: {} ({}, starting {})\n", job.total.Format(), res.JobBasis(),
                      JobMinuteText(job.start_minute));
    if (job.night_total) {
      os << fmt::format("  starting at the night window ({}) would cost {}, saving {}\n",
                        JobMinuteText(*job.night_start_minute), job.night_total->Format(),
                        Money{job.total.amount - job.night_total->amount, job.total.currency}.Format());
    }
  }
  if (!res.price_note.empty()) {
    os << Say("cli.note", "note: ") << SayMessage(res.price_note) << "\n";
  }
  if (s.plan) {
    PrintInference(os, *s.plan, s.shown, s.workload, res.qps, res.latency_ms);
  }
}

}  // namespace

void FitJobToText(std::ostream& os, const FitJobResult& res) {
  if (res.single) {
    PrintSingle(os, res);
  } else if (res.search->inference) {
    PrintInferenceSearch(os, res);
  } else {
    PrintTrainingSearch(os, res);
  }
}

}  // namespace gpuplan
