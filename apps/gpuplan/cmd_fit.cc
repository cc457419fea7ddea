// gpuplan fit: memory per GPU for a model, task and layout; FITS / DOES NOT FIT and what to change.
#include <fmt/format.h>

#include <unistd.h>

#include <ctime>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "catalog/gpu_catalog.h"
#include "catalog/model_loader.h"
#include "commands.h"
#include "core/error.h"
#include "fit/advisor.h"
#include "fit/memory_model.h"
#include "cost/job_pricing.h"
#include "cost/calendar.h"
#include "cost/offer.h"
#include "cost/usage.h"
#include "fit/search.h"
#include "fit/time_model.h"
#include "io/fit_json.h"
#include "read/time_text.h"

namespace gpuplan::cli {
namespace {

struct FitOptions {
  std::string model;
  std::string task = "full";
  std::string gpu;
  int64_t gpus = 1;
  int64_t seq = 2048;
  int64_t micro_batch = 1;
  int64_t global_batch = 0;
  std::string precision = "mixed";
  std::string optimizer = "adamw";
  int zero = 0;
  int64_t tp = 1, pp = 1, ep = 1, vpp = 1;
  bool sp = false;
  std::string recompute = "none";
  std::string flash_attn = "on";
  int64_t lora_rank = 16;
  double lora_dropout = 0;
  std::string lora_targets = "all-linear";
  std::string weight_dtype = "bf16";
  std::string kv_dtype = "bf16";
  int64_t context = 4096;
  int64_t concurrency = 1;
  int64_t batched_tokens = 8192;
  bool offload_optimizer = false;
  bool offload_params = false;
  double cuda_context_mib = 500;
  double nccl_mib = 256;
  double fragmentation = 0.05;
  // time (issue 3)
  std::optional<double> mfu;
  std::string network;  // empty: the card's server class decides (DefaultNetwork)
  double tokens = 0;
  double epochs = 0;
  double dataset_tokens = 0;
  int64_t prompt_tokens = 1024;
  int64_t output_tokens = 256;
  double qps = 0;
  double latency_ms = 0;
  int64_t max_gpus = 64;
  double margin = 0.05;
  std::string objective = "time";
  int64_t top = 5;
  std::string offers;
  std::string start;  // --start for jobs priced with --offers
  // Filled from the command line before running: the layout options given explicitly, which
  // constrain a search (docs/time-model.md §6).
  SearchPins pinned;
  bool max_gpus_given = false;
};

std::vector<std::string> SplitList(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (!item.empty()) {
      out.push_back(item);
    }
  }
  return out;
}

bool ParseOnOff(const std::string& s, const char* field) {
  if (s == "on" || s == "true" || s == "1" || s == "yes") {
    return true;
  }
  if (s == "off" || s == "false" || s == "0" || s == "no") {
    return false;
  }
  throw InputError("expected on or off, got '" + s + "'", "", 0, field);
}

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


nlohmann::json CheckpointToJson(const CheckpointSummary& c) {
  return {{"files", c.files}, {"params", c.params}, {"bytes", c.bytes}, {"params_by_dtype", c.params_by_dtype}};
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

// `t` holds the figures at the concurrency shown (w.concurrency); the sizing block uses the
// plan's own concurrency and time.
void InferenceToJson(nlohmann::json& j, const InferencePlan& p, const InferenceTime& t, const Workload& w, double qps,
                     double latency_ms) {
  if (!p.fits) {
    j["serving"] = nullptr;  // not even one sequence of the context fits next to the weights
    return;
  }
  j["prefill_seconds"] = t.prefill_seconds;
  j["time_to_first_token_seconds"] = t.prefill_seconds;
  j["per_token_latency_seconds"] = t.decode_step_seconds;
  j["decode_tokens_per_second"] = t.decode_tokens_per_second;
  j["decode_tokens_per_second_per_gpu"] = t.decode_tokens_per_second_per_gpu;
  j["decode_memory_bound"] = t.memory_bound;
  j["requests_per_second_per_replica"] = t.requests_per_second;
  j["replica_seconds_per_request"] = t.replica_seconds_per_request;
  j["concurrency"] = w.concurrency;
  if (qps > 0 || latency_ms > 0) {
    j["sizing"] = {{"qps", qps},
                   {"latency_ms", latency_ms},
                   {"meets_latency", p.meets_latency},
                   {"concurrency_per_replica", p.workload.concurrency},
                   {"max_concurrency", p.max_concurrency},
                   {"requests_per_second_per_replica", p.time.requests_per_second},
                   {"prefill_seconds_per_request", p.time.prefill_seconds},
                   {"decode_seconds_per_request",
                    p.time.replica_seconds_per_request - p.time.prefill_seconds},
                   {"prefill_share", p.prefill_share},
                   {"bound", p.bound},
                   {"replicas", p.replicas},
                   {"gpus_needed", p.gpus_total},
                   {"cost_per_hour",
                    {{"amount", p.cost_per_hour.amount}, {"currency", p.cost_per_hour.currency}, {"basis", p.cost_basis}}}};
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

nlohmann::json PinnedToJson(const SearchPins& p) {
  nlohmann::json j = nlohmann::json::object();
  if (p.gpus) j["gpus"] = *p.gpus;
  if (p.tp) j["tp"] = *p.tp;
  if (p.pp) j["pp"] = *p.pp;
  if (p.ep) j["ep"] = *p.ep;
  if (p.vpp) j["vpp"] = *p.vpp;
  if (p.zero) j["zero"] = *p.zero;
  if (p.micro_batch) j["micro_batch"] = *p.micro_batch;
  if (p.recompute) j["recompute"] = ToString(*p.recompute);
  if (p.sp) j["sp"] = *p.sp;
  if (p.offload_optimizer) j["offload_optimizer"] = *p.offload_optimizer;
  if (p.offload_params) j["offload_params"] = *p.offload_params;
  return j;
}

int RunSearch(const FitOptions& o, const GlobalOptions& g, const LoadedModel& lm, const Workload& w,
              const GpuCatalog& cat, const TimeConfig& tc, const OverheadConfig& oc, double tokens) {
  SearchOptions so;
  if (o.gpu.empty()) {
    for (const auto& gpu : cat.gpus()) {
      so.gpus.push_back(&gpu);
    }
  } else {
    for (const auto& name : SplitList(o.gpu)) {
      so.gpus.push_back(&cat.Find(name));
    }
  }
  so.pinned = o.pinned;
  so.each_card = !o.gpu.empty();  // a list of cards: the best layout of each is ranked too
  so.max_gpus = o.max_gpus;
  so.margin = o.margin;
  so.objective = ParseObjective(o.objective);
  so.top = static_cast<std::size_t>(std::max<int64_t>(1, o.top));
  so.tokens = tokens;
  so.time = tc;
  so.overhead = oc;
  so.progress = ProgressBar;
  std::optional<OfferSet> offers;
  if (!o.offers.empty()) {
    offers = LoadOffers(o.offers, cat);
    so.price_per_card_hour = CardHourPrices(*offers);
    std::vector<const Gpu*> with_offers;
    for (const Gpu* gpu : so.gpus) {
      if (so.price_per_card_hour.count(gpu) != 0) {
        with_offers.push_back(gpu);
      }
    }
    if (with_offers.empty()) {
      throw InputError("no offer is for any of the GPUs searched", o.offers, 0, "--offers");
    }
    so.gpus = with_offers;
    so.keep_extra = 3 * so.top;
  }
  const std::string currency = offers ? offers->currency : std::string("CNY");
  if (!IsTraining(w.task)) {
    InferenceSearch r = SearchInference(lm.spec, w, so, o.prompt_tokens, o.output_tokens, o.qps, o.latency_ms);
    if (offers) {  // a service on the file's cards, priced for next month around the clock
      const int64_t month = NextMonthStart(static_cast<int64_t>(std::time(nullptr)), offers->utc_offset_minutes);
      PricePlansWithOffers(r.ranked, *offers, so.objective, month);
      PricePlansWithOffers(r.best_per_gpu, *offers, so.objective, month);
    }
    if (g.json) {
      nlohmann::json j;
      j["model"] = {{"name", lm.spec.name}, {"architecture", lm.spec.architecture},
                    {"params_total", lm.spec.ParamsTotal()}, {"params_active", lm.spec.ParamsActive()},
                    {"params_trainable", 0}};
      j["search"] = {{"evaluated", r.evaluated}, {"objective", ToString(so.objective)},
                     {"pinned", PinnedToJson(so.pinned)}};
      j["fits"] = !r.ranked.empty();
      j["candidates"] = nlohmann::json::array();
      for (const auto& p : r.ranked) {
        nlohmann::json c = {{"gpu", p.gpu->name}, {"gpus", p.gpus_total}, {"tp", p.layout.tp}, {"pp", p.layout.pp},
                            {"replicas", p.replicas}, {"memory_per_gpu_total", static_cast<int64_t>(p.memory.per_gpu.Total().value)}};
        InferenceToJson(c["inference"], p, p.time, p.workload, o.qps, o.latency_ms);
        c["cost"] = {{"amount", p.cost_per_hour.amount}, {"currency", p.cost_per_hour.currency}, {"per", "hour"}, {"basis", p.cost_basis}};
        j["candidates"].push_back(c);
      }
      j["best_per_gpu"] = nlohmann::json::array();
      for (const auto& p : r.best_per_gpu) {
        j["best_per_gpu"].push_back({{"gpu", p.gpu->name}, {"gpus", p.gpus_total}, {"tp", p.layout.tp},
                                     {"pp", p.layout.pp}, {"replicas", p.replicas},
                                     {"concurrency", p.workload.concurrency}, {"bound", p.bound},
                                     {"cost", {{"amount", p.cost_per_hour.amount}, {"currency", p.cost_per_hour.currency}, {"per", "hour"}, {"basis", p.cost_basis}}}});
      }
      if (r.ranked.empty()) {
        j["closest"] = r.closest;
      }
      j["search"]["notes"] = r.notes;
      if (lm.checkpoint) {
        j["checkpoint"] = CheckpointToJson(*lm.checkpoint);
      }
      std::cout << j.dump(2) << "\n";
    } else {
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
      if (so.gpus.size() > 1 && !o.gpu.empty() && !r.best_per_gpu.empty()) {
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
    return r.ranked.empty() ? kExitNegative : kExitOk;
  }
  SearchResult r = SearchTraining(lm.spec, w, so);
  if (offers) {
    PriceCandidatesWithOffers(r, *offers, so.objective, tokens, so.top + 3,
                              ParseJobStart(o.start, offers->utc_offset_minutes, static_cast<int64_t>(std::time(nullptr))));
  }
  if (g.json) {
    nlohmann::json j;
    if (!r.ranked.empty()) {
      const Candidate& b = r.ranked.front();
      j = FitToJson(lm.spec, b.workload, b.layout, b.gpu, b.memory, {});
      j["time"] = TrainingTimeToJson(b.time);
    } else {
      j["model"] = {{"name", lm.spec.name}, {"architecture", lm.spec.architecture},
                    {"params_total", lm.spec.ParamsTotal()}, {"params_active", lm.spec.ParamsActive()}};
      j["fits"] = false;
      j["closest"] = r.closest;
    }
    j["search"] = {{"evaluated", r.evaluated}, {"fitting", r.fitting}, {"objective", ToString(so.objective)},
                   {"margin", so.margin}, {"max_gpus", so.max_gpus}, {"pinned", PinnedToJson(so.pinned)},
                   {"notes", r.notes}};
    if (lm.checkpoint) {
      j["checkpoint"] = CheckpointToJson(*lm.checkpoint);
    }
    j["candidates"] = nlohmann::json::array();
    for (const auto& c : r.ranked) {
      j["candidates"].push_back(CandidateToJson(c));
    }
    if (!offers) {  // (with --offers only the re-priced candidates carry a rental cost)
      j["best_per_gpu"] = nlohmann::json::array();
      for (const auto& c : r.best_per_gpu) {
        j["best_per_gpu"].push_back(CandidateToJson(c));
      }
    }
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << fmt::format("{} layouts evaluated, {} fit with a {:.0f}% margin; ranked by {}{}{}\n", r.evaluated,
                             r.fitting, 100 * so.margin, ToString(so.objective),
                             tokens > 0 ? fmt::format(" for {:.3g} tokens", tokens) : " per million tokens",
                             so.pinned.Any() ? "; kept as given: " + so.pinned.Describe() : "");
    std::cout << fmt::format(
        "{:>3} {:<22} {:>5} {:>3} {:>3} {:>4} {:>4} {:>10} {:>3} {:>8} {:>8} {:>7} {:>7} {:>7} {:>10} {:>6} {:>10} {:>12}\n",
        "#", "GPU", "GPUs", "tp", "pp", "dp", "zero", "recompute", "mb", "mem GiB", "step s", "comp s", "comm s",
        "bubble", "tokens/s", "MFU", tokens > 0 ? "hours" : "h/Mtok", currency);
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
      if (!offers && so.gpus.size() > 1 && !o.gpu.empty()) {
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
  return r.ranked.empty() ? kExitNegative : kExitOk;
}

}  // namespace

Runner RegisterFit(CLI::App& app, GlobalOptions& g) {
  auto o = std::make_shared<FitOptions>();
  CLI::App* c = app.add_subcommand("fit", "memory, step time and the best layout for a model and task; does it fit?");
  c->add_option("--model", o->model, "preset name, config.json path, or checkpoint folder")->required();
  c->add_option("--task", o->task, "pretrain | full | lora | qlora | infer")->capture_default_str();
  c->add_option("--gpu", o->gpu, "GPU name from the catalog (gpuplan gpus)");
  c->add_option("--gpus", o->gpus, "number of GPUs")->capture_default_str();
  c->add_option("--seq", o->seq, "training sequence length")->capture_default_str();
  c->add_option("--micro-batch", o->micro_batch, "sequences per GPU per micro-step")->capture_default_str();
  c->add_option("--global-batch", o->global_batch, "sequences per optimizer step (0: fill the pipeline)");
  c->add_option("--precision", o->precision, "fp32 | mixed | bf16")->capture_default_str();
  c->add_option("--optimizer", o->optimizer, "adamw | adamw8bit | sgd | adafactor")->capture_default_str();
  c->add_option("--zero", o->zero, "ZeRO stage 0-3")->capture_default_str();
  c->add_option("--tp", o->tp, "tensor-parallel size")->capture_default_str();
  c->add_option("--pp", o->pp, "pipeline-parallel size")->capture_default_str();
  c->add_option("--ep", o->ep, "expert-parallel size (MoE)")->capture_default_str();
  c->add_option("--vpp", o->vpp, "interleaved virtual pipeline stages per GPU")->capture_default_str();
  c->add_flag("--sp", o->sp, "sequence parallelism (with tp > 1)");
  c->add_option("--recompute", o->recompute, "none | selective | full")->capture_default_str();
  c->add_option("--flash-attn", o->flash_attn, "on | off")->capture_default_str();
  c->add_option("--lora-rank", o->lora_rank, "LoRA rank")->capture_default_str();
  c->add_option("--lora-dropout", o->lora_dropout, "LoRA dropout probability")->capture_default_str();
  c->add_option("--lora-targets", o->lora_targets, "all-linear or module names, comma separated")
      ->capture_default_str();
  c->add_option("--weight-dtype", o->weight_dtype,
                 "inference weights: bf16 | fp16 | fp8 | int8 | int4 | fp32 (bf16 becomes fp16 on cards without bf16)")
      ->capture_default_str();
  c->add_option("--kv-dtype", o->kv_dtype, "KV cache: bf16 | fp16 | fp8")->capture_default_str();
  c->add_option("--context", o->context, "inference: tokens per sequence (prompt + output)")->capture_default_str();
  c->add_option("--concurrency", o->concurrency, "inference: sequences in flight per replica")->capture_default_str();
  c->add_option("--batched-tokens", o->batched_tokens, "inference: tokens per forward pass")->capture_default_str();
  c->add_flag("--offload-optimizer", o->offload_optimizer, "ZeRO-Offload optimizer states to CPU RAM");
  c->add_flag("--offload-params", o->offload_params, "ZeRO-Infinity parameter offload (zero 3)");
  c->add_option("--cuda-context-mib", o->cuda_context_mib, "CUDA context and library workspaces, MiB")
      ->capture_default_str();
  c->add_option("--nccl-mib", o->nccl_mib, "NCCL buffers per communicator, MiB")->capture_default_str();
  c->add_option("--fragmentation", o->fragmentation, "allocator slack as a fraction of dynamic tensors")
      ->capture_default_str();
  c->add_option("--mfu", o->mfu, "achievable fraction of dense peak (default per GPU generation)");
  c->add_option("--network", o->network,
                 "node network: ib-400g, ib-200g, roce-100g, 100gbe, 25gbe, 10gbe, 1gbe or Gb/s per node "
                 "(default: by the card's server class)");
  c->add_option("--tokens", o->tokens, "training job size in tokens (for total and GPU-hours)");
  c->add_option("--epochs", o->epochs, "epochs over --dataset-tokens (instead of --tokens)");
  c->add_option("--dataset-tokens", o->dataset_tokens, "tokens in one epoch");
  c->add_option("--prompt-tokens", o->prompt_tokens, "inference: prompt length")->capture_default_str();
  c->add_option("--output-tokens", o->output_tokens, "inference: generated tokens per request")->capture_default_str();
  c->add_option("--qps", o->qps, "inference: requests per second to serve");
  c->add_option("--latency-ms", o->latency_ms, "inference: per-output-token latency target, ms");
  c->add_option("--max-gpus", o->max_gpus, "search: largest GPU count (whole nodes of 8 beyond one node)")
      ->capture_default_str();
  c->add_option("--margin", o->margin, "search: memory safety margin (fraction of the card)")->capture_default_str();
  c->add_option("--objective", o->objective, "search: time | gpu-hours | cost")->capture_default_str();
  c->add_option("--top", o->top, "search: candidates to show")->capture_default_str();
  c->add_option("--offers", o->offers,
                "price with this offers file (docs/offers.md): a search ranks only its cards by the cheapest rental; one "
                "card prices the job (with --tokens) or the serving plan (with --qps)");
  c->add_option("--start", o->start,
                "with --offers: when the job starts, HH:MM today or YYYY-MM-DDTHH:MM in the offers' time zone "
                "(default now)");
  c->add_flag("--json", g.json, "print JSON");

  return [o, c, &g]() -> int {
    auto given = [c](const char* name) { return c->count(name) > 0; };
    o->pinned = {};
    if (given("--gpus")) o->pinned.gpus = o->gpus;
    if (given("--tp")) o->pinned.tp = o->tp;
    if (given("--pp")) o->pinned.pp = o->pp;
    if (given("--ep")) o->pinned.ep = o->ep;
    if (given("--vpp")) o->pinned.vpp = o->vpp;
    if (given("--zero")) o->pinned.zero = o->zero;
    if (given("--micro-batch")) o->pinned.micro_batch = o->micro_batch;
    if (given("--recompute")) o->pinned.recompute = ParseRecompute(o->recompute);
    if (given("--sp")) o->pinned.sp = o->sp;
    if (given("--offload-optimizer")) o->pinned.offload_optimizer = o->offload_optimizer;
    if (given("--offload-params")) o->pinned.offload_params = o->offload_params;
    o->max_gpus_given = given("--max-gpus");
    const std::string data = DataDir(g);
    LoadedModel lm = LoadModel(o->model, data);
    Workload w;
    w.task = ParseTask(o->task);
    w.precision = ParsePrecision(o->precision);
    w.optimizer = ParseOptimizer(o->optimizer);
    w.seq = o->seq;
    w.micro_batch = o->micro_batch;
    w.global_batch = o->global_batch;
    w.recompute = ParseRecompute(o->recompute);
    w.flash_attn = ParseOnOff(o->flash_attn, "--flash-attn");
    w.lora_rank = o->lora_rank;
    w.lora_dropout = o->lora_dropout;
    if (o->lora_targets != "all-linear" && o->lora_targets != "all") {
      w.lora_targets = SplitList(o->lora_targets);
    }
    w.paged_optimizer = w.task == Task::kQlora;
    w.weight_dtype = ParseWeightDtype(o->weight_dtype);
    w.kv_dtype = ParseKvDtype(o->kv_dtype);
    w.context = o->context;
    if (w.task == Task::kInfer && o->qps > 0 && !given("--context")) {
      // Sizing for a request rate: each sequence holds the KV cache of its own request
      // (paged KV cache, Kwon et al. 2023), not a --context window.
      w.context = o->prompt_tokens + o->output_tokens;
    }
    w.concurrency = o->concurrency;
    w.batched_tokens = o->batched_tokens;
    if (o->lora_dropout < 0 || o->lora_dropout >= 1) {
      throw InputError("must be in [0, 1)", "", 0, "--lora-dropout");
    }
    if (o->cuda_context_mib < 0 || o->nccl_mib < 0 || o->fragmentation < 0 || o->fragmentation > 1) {
      throw InputError("overhead constants must be zero or positive (fragmentation at most 1)", "", 0, "--fragmentation");
    }
    Layout l;
    l.gpus = o->gpus;
    l.tp = o->tp;
    l.pp = o->pp;
    l.ep = o->ep;
    l.vpp = o->vpp;
    l.zero = o->zero;
    l.sp = o->sp;
    l.offload_optimizer = o->offload_optimizer;
    l.offload_params = o->offload_params;
    OverheadConfig oc;
    oc.cuda_context = MiB(o->cuda_context_mib);
    oc.nccl_per_group = MiB(o->nccl_mib);
    oc.fragmentation = o->fragmentation;

    const GpuCatalog cat = GpuCatalog::Load((std::filesystem::path(data) / "gpus.yaml").string());
    TimeConfig tc;
    tc.mfu = o->mfu;
    if (!o->network.empty()) {
      tc.network = ParseNetwork(o->network);
    }
    double tokens = o->tokens;
    if (o->epochs > 0 || o->dataset_tokens > 0) {
      if (o->epochs <= 0 || o->dataset_tokens <= 0) {
        throw InputError("--epochs and --dataset-tokens go together", "", 0, "--epochs");
      }
      tokens = o->epochs * o->dataset_tokens;
    }
    if (tokens < 0) {
      throw InputError("must be positive", "", 0, "--tokens");
    }
    for (const auto& [v, field] : {std::pair{l.gpus, "--gpus"}, std::pair{l.tp, "--tp"}, std::pair{l.pp, "--pp"},
                                   std::pair{l.ep, "--ep"}, std::pair{l.vpp, "--vpp"}}) {
      if (v <= 0) {
        throw InputError("must be a positive number, got " + std::to_string(v), "", 0, field);
      }
    }
    // A search without a card, over a list of cards, or over counts of one card (--max-gpus).
    const bool list = o->gpu.empty() || o->gpu.find(',') != std::string::npos || o->max_gpus_given;
    if (list) {
      return RunSearch(*o, g, lm, w, cat, tc, oc, tokens);
    }
    const Gpu* gpu = &cat.Find(o->gpu);
    std::vector<std::string> dtype_notes;
    w = ForCard(w, *gpu, &dtype_notes);  // bf16 -> fp16 on cards without bf16 (T4, V100)
    MemoryEstimate e = EstimateMemory(lm.spec, w, l, oc, std::optional<int64_t>(gpu->memory_bytes));
    e.notes.insert(e.notes.end(), dtype_notes.begin(), dtype_notes.end());
    if (lm.checkpoint && lm.checkpoint->params != e.params_total) {
      e.notes.push_back(fmt::format(
          "the checkpoint holds {} parameters but config.json describes {} (difference {}): extra modules "
          "(e.g. DeepSeek's multi-token-prediction layers) or a config that does not match the weights",
          lm.checkpoint->params, e.params_total, lm.checkpoint->params - e.params_total));
    }
    std::vector<Suggestion> sug;
    bool fits = Fits(e, *gpu);
    if (!fits) {
      sug = SuggestFixes(lm.spec, w, l, *gpu, cat, oc);
    }
    std::optional<TrainingTime> tt;
    std::optional<InferencePlan> plan;
    InferenceTime shown;  // at the concurrency asked for (the plan may size at another)
    if (IsTraining(w.task)) {
      tt = EstimateTrainingTime(lm.spec, w, l, *gpu, tc, tokens);
    } else {
      plan = PlanInference(lm.spec, w, l, *gpu, tc, oc, o->prompt_tokens, o->output_tokens, o->qps, o->latency_ms);
      if (plan->fits) {
        shown = EstimateInferenceTime(lm.spec, w, l, *gpu, tc, o->prompt_tokens, o->output_tokens);
      }
      if (o->latency_ms > 0 && !plan->meets_latency) {
        fits = false;
      }
    }
    // With an offers file: the job (training with --tokens) or the serving plan, priced by the
    // rental optimiser on the file's offers for this card.
    std::optional<JobPrice> job;
    std::string price_note;
    if (!o->offers.empty()) {
      const OfferSet all = LoadOffers(o->offers, cat);
      const OfferSet mine = OffersFor(all, gpu);
      if (mine.offers.empty()) {
        throw InputError("no offer in " + o->offers + " is for " + gpu->name, o->offers, 0, "--offers");
      }
      const auto now = static_cast<int64_t>(std::time(nullptr));
      if (tt && tt->total_hours) {
        job = PriceJob(mine, static_cast<double>(l.gpus), *tt->total_hours,
                       ParseJobStart(o->start, mine.utc_offset_minutes, now));
      } else if (plan && plan->fits) {
        std::vector<InferencePlan> one{*plan};
        PricePlansWithOffers(one, mine, Objective::kTime, NextMonthStart(now, mine.utc_offset_minutes));
        if (!one.empty()) {
          plan = one.front();
        }
      } else if (tt) {
        price_note = "give --tokens (or --epochs with --dataset-tokens) to price the job with " + o->offers;
      }
    }
    auto job_json = [&]() -> nlohmann::json {
      nlohmann::json price = {{"amount", job->total.amount},
                          {"currency", job->total.currency},
                          {"start", FormatLocalHour(job->start_minute / 60).substr(0, 11) +
                                        fmt::format("{:02d}:{:02d}", (job->start_minute / 60) % 24, job->start_minute % 60)},
                          {"basis", "cheapest rental from " + o->offers + " for " + std::to_string(l.gpus) + " GPUs"},
                          {"feasible", job->plan.feasible}};
      if (job->night_total) {
        const int64_t m = *job->night_start_minute;
        price["night_start"] = FormatLocalHour(m / 60).substr(0, 11) + fmt::format("{:02d}:{:02d}", (m / 60) % 24, m % 60);
        price["night_amount"] = job->night_total->amount;
      }
      return price;
    };
    if (g.json) {
      nlohmann::json j = FitToJson(lm.spec, w, l, gpu, e, sug);
      if (tt) {
        j["time"] = TrainingTimeToJson(*tt);
      }
      if (job) {
        j["cost"] = job_json();
      }
      if (!price_note.empty()) {
        j["notes"].push_back(price_note);
      }
      if (plan) {
        InferenceToJson(j["inference"], *plan, shown, w, o->qps, o->latency_ms);
      }
      if (lm.checkpoint) {
        j["checkpoint"] = CheckpointToJson(*lm.checkpoint);
      }
      std::cout << j.dump(2) << "\n";
    } else {
      if (lm.checkpoint) {
        std::cout << fmt::format("checkpoint {} safetensors file(s): {} parameters, {:.2f} GiB\n", lm.checkpoint->files,
                                 Count(lm.checkpoint->params), Bytes(static_cast<double>(lm.checkpoint->bytes)).gib());
      }
      PrintTable(lm.spec, w, l, gpu, e, sug);
      if (tt) {
        PrintTrainingTime(*tt, NetworkFor(tc, *gpu));
      }
      if (job) {
        const nlohmann::json price = job_json();
        std::cout << fmt::format("cost: {} ({}, starting {})\n", job->total.Format(), price["basis"].get<std::string>(),
                                 price["start"].get<std::string>());
        if (job->night_total) {
          std::cout << fmt::format("  starting at the night window ({}) would cost {}, saving {}\n",
                                   price["night_start"].get<std::string>(), job->night_total->Format(),
                                   Money{job->total.amount - job->night_total->amount, job->total.currency}.Format());
        }
      }
      if (!price_note.empty()) {
        std::cout << "note: " << price_note << "\n";
      }
      if (plan) {
        PrintInference(*plan, shown, w, o->qps, o->latency_ms);
      }
    }
    return fits ? kExitOk : kExitNegative;
  };
}

}  // namespace gpuplan::cli
