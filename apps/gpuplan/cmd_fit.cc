// gpuplan fit: flags into a FitRequest (fit/fit_request.h), the library runs it (RunFit,
// cost/fit_job.h), and this file renders the result: JSON through io/fit_job_json.h, tables here.
#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <iostream>

#include "catalog/gpu_catalog.h"
#include "catalog/listings.h"
#include "cli_options.h"
#include "commands.h"
#include "cost/fit_job.h"
#include "fit/fit_options.h"
#include "fit/fit_request.h"
#include "io/fit_job_json.h"

namespace gpuplan::cli {
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

void PrintTable(const ModelSpec& m, const Workload& w, const Layout& l, const Gpu* gpu, const MemoryEstimate& e,
                const std::vector<Suggestion>& sug) {
  std::cout << fmt::format("model      {} ({}), {} layers, hidden {}\n", m.name, m.model_type, m.layers, m.hidden);
  std::cout << fmt::format("params     total {}   active/token {}", Count(e.params_total), Count(e.params_active));
  if (IsTraining(w.task)) {
    std::cout << fmt::format("   trainable {}", Count(e.params_trainable));
  }
  std::cout << "\n";
  std::cout << fmt::format("task       {}", ToString(w.task));
  if (IsTraining(w.task)) {
    const std::string precision = w.precision == Precision::kMixed && gpu != nullptr
                                      ? fmt::format("mixed ({})", HalfDtype(*gpu))
                                      : std::string(ToString(w.precision));
    std::cout << fmt::format(", precision {}, optimizer {}, seq {}, micro-batch {}, recompute {}, flash-attn {}",
                             precision, ToString(w.optimizer), w.seq, w.micro_batch,
                             ToString(w.recompute), w.flash_attn ? "on" : "off");
  } else {
    std::cout << fmt::format(", weights {}, kv {}, context {}, concurrency {}", ToString(w.weight_dtype),
                             ToString(w.kv_dtype), w.context, w.concurrency);
  }
  std::cout << "\n";
  std::cout << fmt::format("layout     {} x {}: tp={} pp={} dp={}{} zero={}{}{}\n", l.gpus, gpu ? gpu->name : "(any GPU)",
                           l.tp, l.pp, l.dp(), l.ep > 1 ? fmt::format(" ep={}", l.ep) : "", l.zero,
                           l.offload_optimizer ? " offload-optimizer" : "", l.offload_params ? " offload-params" : "");
  std::cout << "\nmemory per GPU (GiB)" << (l.pp > 1 ? fmt::format(", {} pipeline stage", e.peak_stage) : "") << "\n";
  const auto& p = e.per_gpu;
  const std::pair<const char*, Bytes> rows[] = {{"weights", p.weights},         {"gradients", p.gradients},
                                                {"optimizer", p.optimizer},     {"activations", p.activations},
                                                {"kv_cache", p.kv_cache},       {"overhead", p.overhead}};
  for (const auto& [name, b] : rows) {
    std::cout << fmt::format("  {:<12} {:>10}\n", name, Gib(b));
  }
  std::cout << fmt::format("  {:<12} {:>10}\n", "total", Gib(p.Total()));
  if (e.cpu_offload.value > 0) {
    std::cout << fmt::format("  (CPU RAM per GPU for offloaded states: {} GiB)\n", Gib(e.cpu_offload));
  }
  if (!IsTraining(w.task)) {
    std::cout << fmt::format("  kv cache per sequence: {} GiB", Gib(e.kv_per_sequence));
    if (e.max_concurrency) {
      std::cout << fmt::format("; max concurrency that fits: {}", *e.max_concurrency);
    }
    std::cout << "\n";
  }
  if (gpu != nullptr) {
    const Bytes cap(static_cast<double>(gpu->memory_bytes));
    const bool fits = Fits(e, *gpu);
    std::cout << fmt::format("\n{}: {} GiB of {} GiB ({:.0f}%) on {}\n", fits ? "FITS" : "DOES NOT FIT", Gib(p.Total()),
                             Gib(cap), 100.0 * p.Total().value / cap.value, gpu->name);
    if (!fits) {
      if (sug.empty()) {
        std::cout << "no single or paired change found that fits; try a larger cluster\n";
      } else {
        std::cout << "smallest changes that fit (each checked by the model):\n";
        for (const auto& s : sug) {
          std::cout << fmt::format("  - {}: {} of {} GiB per GPU\n      -> {}\n", s.change,
                                   Gib(s.estimate.per_gpu.Total()), Gib(Bytes(static_cast<double>(s.gpu->memory_bytes))),
                                   s.result);
        }
      }
    }
  }
  for (const auto& n : e.notes) {
    std::cout << "note: " << n << "\n";
  }
}


void PrintTrainingTime(const TrainingTime& t, const Network& net) {
  std::cout << fmt::format("\ntime per step ({} sequences = {} micro-batches per data-parallel rank; network {}, "
                           "{:g} Gb/s per node, {})\n",
                           t.global_batch, t.micro_batches, net.name, net.node_gbps, net.basis);
  std::cout << fmt::format("  {:<28} {:>10.3f} s   ({:.0f}% of dense peak assumed achievable)\n", "compute",
                           t.compute_seconds, 100 * t.efficiency);
  std::cout << fmt::format("  {:<28} {:>10.3f} s\n", "communication (exposed)", t.communication_seconds);
  std::cout << fmt::format("    {:<26} {:>10.3f} s\n", "tensor parallel", t.tp_seconds);
  std::cout << fmt::format("    {:<26} {:>10.3f} s\n", "pipeline p2p", t.pp_seconds);
  std::cout << fmt::format("    {:<26} {:>10.3f} s\n", "expert all-to-all", t.moe_seconds);
  std::cout << fmt::format("    {:<26} {:>10.3f} s   (of {:.3f} s, the rest hidden behind compute)\n",
                           "data parallel, exposed", t.dp_exposed_seconds, t.dp_seconds);
  if (t.dp_node_link_bytes > 0) {
    std::cout << fmt::format("    {:<26} {:>10.2f} GB per step each way over each node's network link\n",
                             "data parallel across nodes", t.dp_node_link_bytes / 1e9);
  }
  std::cout << fmt::format("  {:<28} {:>10.3f} s\n", "pipeline bubble", t.bubble_seconds);
  std::cout << fmt::format("  {:<28} {:>10.3f} s\n", "step", t.step_seconds);
  std::cout << fmt::format("throughput {:.0f} tokens/s, MFU {:.1f}%, bottleneck: {}\n", t.tokens_per_second,
                           100 * t.mfu, t.bottleneck);
  if (t.bottleneck == "communication") {
    std::cout << "  communication, not compute, limits this layout: a faster network (--network) or less "
                 "data parallelism across nodes would help\n";
  }
  if (t.total_hours) {
    std::cout << fmt::format("job: {:.1f} hours wall clock, {:.0f} GPU-hours\n", *t.total_hours, *t.gpu_hours);
  }
}

void PrintInference(const InferencePlan& p, const InferenceTime& t, const Workload& w, double qps, double latency_ms) {
  if (!p.fits) {
    return;
  }
  std::cout << fmt::format("\ninference at concurrency {}: time to first token {:.3f} s, per-token latency {:.1f} ms "
                           "({}), {:.0f} output tokens/s per replica, {:.0f} per GPU\n",
                           w.concurrency, t.prefill_seconds, 1000 * t.decode_step_seconds,
                           t.memory_bound ? "memory-bandwidth bound" : "compute bound",
                           t.decode_tokens_per_second, t.decode_tokens_per_second_per_gpu);
  if (qps > 0 || latency_ms > 0) {
    if (!p.meets_latency) {
      std::cout << fmt::format("latency target {:.0f} ms per token is not met even at concurrency 1\n", latency_ms);
      return;
    }
    if (qps > 0) {
      std::cout << fmt::format(
          "each request costs a replica {:.1f} ms of prefill + {:.1f} ms of its share of decode steps "
          "({:.0f}% prefill): {:.2f} requests/s per replica\n",
          1000 * p.time.prefill_seconds, 1000 * (p.time.replica_seconds_per_request - p.time.prefill_seconds),
          100 * p.prefill_share, p.time.requests_per_second);
    }
    std::cout << fmt::format("for {:g} requests/s: {} replica(s) at concurrency {} = {} GPUs, {} per hour "
                             "({}); bound: {}\n",
                             qps, p.replicas, p.workload.concurrency, p.gpus_total, p.cost_per_hour.Format(),
                             p.cost_basis, p.bound);
  }
}

void ProgressBar(double fraction) {
  static const bool tty = isatty(STDERR_FILENO) != 0;
  if (!tty) {
    return;
  }
  const int width = 40;
  const int filled = static_cast<int>(fraction * width);
  std::cerr << "\r[" << std::string(static_cast<std::size_t>(filled), '#')
            << std::string(static_cast<std::size_t>(width - filled), ' ') << "] " << static_cast<int>(100 * fraction)
            << "%" << (fraction >= 1.0 ? "\r\33[K" : "") << std::flush;
}

void PrintInferenceSearch(const FitJobResult& res) {
  const FitSearch& s = *res.search;
  const SearchOptions& so = s.options;
  const InferenceSearch& r = *s.inference;
  const std::string& currency = s.currency;
  std::cout << fmt::format("{} layouts evaluated; ranked by {}{}\n", r.evaluated, ToString(so.objective),
                           so.pinned.Any() ? "; kept as given: " + so.pinned.Describe() : "");
  auto header = [&currency] {
    std::cout << fmt::format("{:>3} {:<24} {:>5} {:>4} {:>8} {:>11} {:>10} {:>12} {:>10}  {}\n", "#", "GPU", "GPUs",
                             "tp", "replicas", "concurrency", "TTFT s", "ms/token", currency + "/h", "bound");
  };
  auto row = [](std::size_t i, const InferencePlan& p) {
    std::cout << fmt::format("{:>3} {:<24} {:>5} {:>4} {:>8} {:>11} {:>10.3f} {:>12.1f} {:>10.0f}  {}\n", i + 1,
                             p.gpu->name, p.gpus_total, p.layout.tp, p.replicas, p.workload.concurrency,
                             p.time.prefill_seconds, 1000 * p.time.decode_step_seconds, p.cost_per_hour.amount, p.bound);
  };
  header();
  for (std::size_t i = 0; i < r.ranked.size() && i < so.top; ++i) {
    row(i, r.ranked[i]);
  }
  if (so.gpus.size() > 1 && s.cards_named && !r.best_per_gpu.empty()) {
    std::cout << "best of each card:\n";
    header();
    for (std::size_t i = 0; i < r.best_per_gpu.size(); ++i) {
      row(i, r.best_per_gpu[i]);
    }
  }
  if (r.ranked.empty()) {
    std::cout << "no GPU type meets the request; closest: " << r.closest << "\n";
  }
  for (const auto& n : r.notes) {
    std::cout << "note: " << n << "\n";
  }
}

void PrintTrainingSearch(const FitJobResult& res) {
  const FitSearch& s = *res.search;
  const SearchOptions& so = s.options;
  const SearchResult& r = *s.training;
  const bool offers = !res.offers.empty();
  const std::string& currency = s.currency;
  std::cout << fmt::format("{} layouts evaluated, {} fit with a {:.0f}% margin; ranked by {}{}{}\n", r.evaluated,
                           r.fitting, 100 * so.margin, ToString(so.objective),
                           res.tokens > 0 ? fmt::format(" for {:.3g} tokens", res.tokens) : " per million tokens",
                           so.pinned.Any() ? "; kept as given: " + so.pinned.Describe() : "");
  std::cout << fmt::format(
      "{:>3} {:<22} {:>5} {:>3} {:>3} {:>4} {:>4} {:>10} {:>3} {:>8} {:>8} {:>7} {:>7} {:>7} {:>10} {:>6} {:>10} {:>12}\n",
      "#", "GPU", "GPUs", "tp", "pp", "dp", "zero", "recompute", "mb", "mem GiB", "step s", "comp s", "comm s",
      "bubble", "tokens/s", "MFU", res.tokens > 0 ? "hours" : "h/Mtok", currency);
  auto row = [](std::size_t i, const Candidate& c) {
    const double hours = c.time.total_hours ? *c.time.total_hours : 1e6 / c.time.tokens_per_second / 3600.0;
    std::cout << fmt::format(
        "{:>3} {:<22} {:>5} {:>3} {:>3} {:>4} {:>4} {:>10} {:>3} {:>8.1f} {:>8.2f} {:>7.2f} {:>7.2f} {:>7.2f} {:>10.0f} "
        "{:>5.1f}% {:>10.2f} {:>12.0f}\n",
        i + 1, c.gpu->name, c.layout.gpus, c.layout.tp, c.layout.pp, c.layout.dp(), c.layout.zero,
        ToString(c.workload.recompute), c.workload.micro_batch, c.memory.per_gpu.Total().gib(), c.time.step_seconds,
        c.time.compute_seconds, c.time.communication_seconds, c.time.bubble_seconds, c.time.tokens_per_second,
        100 * c.time.mfu, hours, c.cost.amount);
  };
  for (std::size_t i = 0; i < r.ranked.size() && i < so.top; ++i) {
    row(i, r.ranked[i]);
  }
  if (!r.ranked.empty()) {
    const auto& b = r.ranked.front();
    std::cout << fmt::format("best: compute {:.2f} s + communication {:.2f} s + bubble {:.2f} s per step; bottleneck {}\n",
                             b.time.compute_seconds, b.time.communication_seconds, b.time.bubble_seconds,
                             b.time.bottleneck);
    for (std::size_t i = so.top; i < r.ranked.size(); ++i) {
      const auto& c = r.ranked[i];
      std::cout << fmt::format("  #{} {} x {} tp={} pp={} zero={} lost: {}\n", i + 1, c.layout.gpus, c.gpu->name,
                               c.layout.tp, c.layout.pp, c.layout.zero, WhyLost(c, b, so.objective));
    }
    if (!offers && so.gpus.size() > 1 && s.cards_named) {
      std::cout << "best layout of each card:\n";
      for (std::size_t i = 0; i < r.best_per_gpu.size(); ++i) {
        row(i, r.best_per_gpu[i]);
      }
      for (const Gpu* gpu : so.gpus) {
        if (std::none_of(r.best_per_gpu.begin(), r.best_per_gpu.end(),
                         [&](const Candidate& c) { return c.gpu == gpu; })) {
          std::cout << fmt::format("    {}: no layout fits\n", gpu->name);
        }
      }
    }
    std::cout << "network between nodes: " << NetworkFor(so.time, *b.gpu).name << " (" << NetworkFor(so.time, *b.gpu).basis
              << ")\n";
    std::cout << (offers ? "costs: " + b.cost_basis + "\n"
                       : std::string("CNY figures use the catalog's illustrative per-card-hour prices, not offers.\n"));
  } else {
    std::cout << "no layout fits; closest: " << r.closest << "\n";
  }
  for (const auto& n : r.notes) {
    std::cout << "note: " << n << "\n";
  }
}

void PrintSingle(const FitJobResult& res) {
  const FitSingle& s = *res.single;
  const auto& ckpt = res.model.checkpoint;
  if (ckpt) {
    std::cout << fmt::format("checkpoint {} safetensors file(s): {} parameters, {:.2f} GiB\n", ckpt->files,
                             Count(ckpt->params), Bytes(static_cast<double>(ckpt->bytes)).gib());
  }
  PrintTable(res.model.spec, s.workload, s.layout, s.gpu, s.memory, s.suggestions);
  if (s.training) {
    PrintTrainingTime(*s.training, s.network);
  }
  if (res.job) {
    const JobPrice& job = *res.job;
    std::cout << fmt::format("cost: {} ({}, starting {})\n", job.total.Format(), res.JobBasis(),
                             JobMinuteText(job.start_minute));
    if (job.night_total) {
      std::cout << fmt::format("  starting at the night window ({}) would cost {}, saving {}\n",
                               JobMinuteText(*job.night_start_minute), job.night_total->Format(),
                               Money{job.total.amount - job.night_total->amount, job.total.currency}.Format());
    }
  }
  if (!res.price_note.empty()) {
    std::cout << "note: " << res.price_note << "\n";
  }
  if (s.plan) {
    PrintInference(*s.plan, s.shown, s.workload, res.qps, res.latency_ms);
  }
}

}  // namespace

Runner RegisterFit(CLI::App& app, GlobalOptions& g) {
  auto o = std::make_shared<FitRequest>();
  CLI::App* c = app.add_subcommand("fit", "memory, step time and the best layout for a model and task; does it fit?");
  AddOptions(c, FitOptionTable(), *o);
  c->add_flag("--json", g.json, "print JSON");

  return [o, c, &g]() -> int {
    MarkGivenFitOptions(*o, GivenByKey(c, FitOptionTable()));
    o->progress = ProgressBar;
    const std::string data = DataDir(g);
    try {
      CheckGivenFlags(c, FitOptionTable(), *o);
    } catch (const InputError&) {
      // Report errors in the order fit always has (the model first, fit_request.h): an error
      // PrepareFit finds comes before the table's.
      PrepareFit(*o, data);
      throw;
    }
    // The result points into the catalog: it outlives the result.
    const GpuCatalog cat = LoadGpuCatalog(data);
    const FitJobResult res = RunFit(*o, cat, data);
    if (g.json) {
      std::cout << FitJobToJson(res).dump(2) << "\n";
    } else if (res.single) {
      PrintSingle(res);
    } else if (res.search->inference) {
      PrintInferenceSearch(res);
    } else {
      PrintTrainingSearch(res);
    }
    return res.Positive() ? kExitOk : kExitNegative;
  };
}

}  // namespace gpuplan::cli
