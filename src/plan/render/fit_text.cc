// Text rendering of the fit job's result (plan/fit_job.h): what `gpuplan fit` prints without
// --json: the memory table of one layout with its step time, price and inference sizing, or the
// ranked layouts of a training or inference search.
#include "plan/render/fit_text.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "core/error.h"
#include "plan/render/fit_job_json.h"
#include "read/time_text.h"
#include "format/money.h"
#include "format/numbers.h"
#include "format/table.h"
#include "format/times.h"
#include "format/text_lang.h"

namespace gpuplan {
namespace {

std::string Gib(Bytes b) { return fmt::format("{:.2f}", b.gib()); }

// 8030261248 -> "8,030,261,248 (8.03 B)"
std::string Count(int64_t n) { return fmt::format("{} ({:.2f} B)", GroupThousands(n), static_cast<double>(n) / 1e9); }

void PrintTable(std::ostream& os, const ModelSpec& m, const Workload& w, const Layout& l, const Gpu* gpu,
                const MemoryEstimate& e, const std::vector<Suggestion>& sug) {
  os << SayFormat("cli.fit.model", "model      {} ({}), {} layers, hidden {}",
                  {m.name, m.model_type, std::to_string(m.layers), std::to_string(m.hidden)})
     << "\n";
  os << SayFormat("cli.fit.params", "params     total {}   active/token {}", {Count(e.params_total), Count(e.params_active)});
  if (IsTraining(w.task)) {
    os << SayFormat("cli.fit.trainable", "   trainable {}", {Count(e.params_trainable)});
  }
  os << "\n";
  // The options' values as typed in English (they are what the flags take), named in Chinese.
  const auto named = [](const std::string& key, const std::string& value) {
    return TextLanguage() == Lang::kZh ? Say(key, value) : value;
  };
  os << SayFormat("cli.fit.task", "task       {}", {named("task." + std::string(ToString(w.task)), ToString(w.task))});
  if (IsTraining(w.task)) {
    const std::string precision =
        w.precision == Precision::kMixed && gpu != nullptr
            ? (TextLanguage() == Lang::kZh ? fmt::format("混合精度（{}）", HalfDtype(*gpu))
                                           : fmt::format("mixed ({})", HalfDtype(*gpu)))
            : named("precision." + std::string(ToString(w.precision)), ToString(w.precision));
    os << SayFormat("cli.fit.training", ", precision {}, optimizer {}, seq {}, micro-batch {}, recompute {}, flash-attn {}",
                    {precision, ToString(w.optimizer), std::to_string(w.seq), std::to_string(w.micro_batch),
                     named("fit.recompute." + std::string(ToString(w.recompute)), ToString(w.recompute)),
                     named(w.flash_attn ? "cli.on" : "cli.off", w.flash_attn ? "on" : "off")});
  } else {
    os << SayFormat("cli.fit.inference", ", weights {}, kv {}, context {}, concurrency {}",
                    {ToString(w.weight_dtype), ToString(w.kv_dtype), std::to_string(w.context),
                     std::to_string(w.concurrency)});
  }
  os << "\n";
  os << SayFormat("cli.fit.layout", "layout     {} x {}: tp={} pp={} dp={}{} zero={}{}{}",
                  {std::to_string(l.gpus), gpu ? gpu->name : Say("cli.fit.any_gpu", "(any GPU)"), std::to_string(l.tp),
                   std::to_string(l.pp), std::to_string(l.dp()), l.ep > 1 ? fmt::format(" ep={}", l.ep) : "",
                   std::to_string(l.zero), l.offload_optimizer ? " offload-optimizer" : "",
                   l.offload_params ? " offload-params" : ""})
     << "\n";
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
    os << "  " << SayFormat("cli.fit.cpu_offload", "(CPU RAM per GPU for offloaded states: {} GiB)", {Gib(e.cpu_offload)})
       << "\n";
  }
  if (!IsTraining(w.task)) {
    os << "  " << SayFormat("cli.fit.kv_per_sequence", "kv cache per sequence: {} GiB", {Gib(e.kv_per_sequence)});
    if (e.max_concurrency) {
      os << SayFormat("cli.fit.max_concurrency", "; max concurrency that fits: {}", {std::to_string(*e.max_concurrency)});
    }
    os << "\n";
    if (e.kv_cache_tokens && e.server_concurrency) {
      os << "  "
         << SayFormat("cli.fit.server_kv", "server KV cache: {} tokens; maximum concurrency for {} tokens per request: {}x",
                      {fmt::format("{}", *e.kv_cache_tokens), std::to_string(w.context),
                       fmt::format("{:.2f}", *e.server_concurrency)})
         << "\n";
    }
  }
  if (gpu != nullptr) {
    const Bytes cap(static_cast<double>(gpu->memory_bytes));
    const bool fits = Fits(e, *gpu);
    // Judged on what nvidia-smi would show (§8.4), with the margin left on the card.
    const Bytes shown = e.nvidia_smi.value > 0 ? e.nvidia_smi : p.Total();
    os << "\n"
       << SayFormat("fit.text.verdict_line", "{0}: {1} GiB of {2} GiB ({3}%) on {4}; margin (nvidia-smi view) {5} GiB",
                    {fits ? Say("fit.verdict.fits", "FITS") : Say("fit.verdict.nofit", "DOES NOT FIT"), Gib(shown),
                     Gib(cap), fmt::format("{:.0f}", 100.0 * shown.value / cap.value), gpu->name, Gib(cap - shown)})
       << "\n";
    if (!e.server_fits && e.kv_cache_tokens && e.server_concurrency) {
      // The card holds the server, but its KV space does not hold the sequences asked for: say
      // so, since the line above alone reads as a fit.
      os << SayFormat("fit.text.server_kv_short",
                      "the server's KV cache ({0} tokens) holds {1} sequences of {2} tokens, not the {3} asked: "
                      "the engine would queue or preempt the rest",
                      {fmt::format("{}", *e.kv_cache_tokens),
                       fmt::format("{:.0f}", std::floor(*e.server_concurrency)), std::to_string(w.context),
                       std::to_string(w.concurrency)})
         << "\n";
    }
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
  os << "\n"
     << (t.micro_batches == 1
             ? SayFormat("cli.fit.time_per_step_one",
                         "time per step ({} sequences = 1 micro-batch per data-parallel rank; network {}, {} Gb/s per node, {})",
                         {std::to_string(t.global_batch), net.name, fmt::format("{:g}", net.node_gbps),
                          SayMessage(net.basis)})
             : SayFormat("cli.fit.time_per_step",
                         "time per step ({} sequences = {} micro-batches per data-parallel rank; network {}, {} Gb/s per node, {})",
                         {std::to_string(t.global_batch), std::to_string(t.micro_batches), net.name,
                          fmt::format("{:g}", net.node_gbps), SayMessage(net.basis)}))
     << "\n";
  // A label padded by display columns, its seconds right-aligned in 10.
  const auto line = [&os](int indent, int width, const std::string& label, double seconds, const std::string& rest) {
    os << std::string(static_cast<std::size_t>(indent), ' ') << PadRight(label, width)
       << fmt::format(" {:>10.3f} s", seconds) << rest << "\n";
  };
  line(2, 28, Say("cli.fit.compute", "compute"), t.compute_seconds,
       "   " + SayFormat("cli.fit.compute_peak", "({}% of dense peak achieved by the step's kernels)",
                         {fmt::format("{:.0f}", 100 * t.efficiency)}));
  if (!t.attention_kernel.empty()) {  // per-operation costs (docs/time-model.md §3); not with --mfu
    line(4, 26, Say("cli.fit.kernel_gemm", "matmuls (GEMM)"), t.gemm_seconds,
         "   " + (t.gemm_by_shape
                      ? SayFormat("cli.fit.kernel_gemm_by_shape", "(rates by matrix shape: {})", {t.gemm_basis})
                      : SayFormat("cli.fit.kernel_gemm_rate", "(large shapes at {}% of peak: {})",
                                  {fmt::format("{:.1f}", 100 * t.gemm_fraction), t.gemm_basis})));
    line(4, 26, Say("cli.fit.kernel_attention", "attention core") + " (" + t.attention_kernel + ")",
         t.attention_seconds,
         t.attention_by_length ? "   " + SayFormat("cli.fit.kernel_attention_by_length", "(rates by sequence length: {})",
                                                   {t.attention_basis})
                               : "");
    line(4, 26, Say("cli.fit.kernel_elementwise", "norms, activations, loss") + " (" + t.elementwise_kernels + ")",
         t.elementwise_seconds,
         t.loss_kernels == "megatron_ops"
             ? "   " + Say("cli.fit.loss_megatron_ops", "(the loss as Megatron's separate ops over fp32 logits)")
         : t.loss_kernels == "te_fused"
             ? "   " + Say("cli.fit.loss_te_fused", "(the loss as Transformer Engine's fused cross-entropy)")
             : "");
    line(4, 26, Say("cli.fit.kernel_optimizer", "optimizer step"), t.optimizer_seconds, "");
  }
  line(2, 28, Say("cli.fit.communication", "communication (exposed)"), t.communication_seconds, "");
  line(4, 26, Say("cli.fit.tensor_parallel", "tensor parallel"), t.tp_seconds, "");
  line(4, 26, Say("cli.fit.pipeline_p2p", "pipeline p2p"), t.pp_seconds, "");
  line(4, 26, Say("cli.fit.expert_all_to_all", "expert all-to-all"), t.moe_seconds, "");
  const std::string dp_total = fmt::format("{:.3f}", t.dp_seconds);
  line(4, 26, Say("cli.fit.data_parallel", "data parallel, exposed"), t.dp_exposed_seconds,
       "   " + (t.dp_overlapped
                    ? SayFormat("cli.fit.data_parallel_hidden", "(of {} s, the rest hidden behind compute)", {dp_total})
                    : SayFormat("cli.fit.data_parallel_not_overlapped",
                                "(of {} s, none hidden: reduced after the backward pass, --dp-overlap off)",
                                {dp_total})));
  if (t.dp_node_link_bytes > 0) {
    os << "    " << PadRight(Say("cli.fit.across_nodes", "data parallel across nodes"), 26)
       << SayFormat("cli.fit.across_nodes_gb", " {} GB per step each way over each node's network link",
                    {fmt::format("{:>10.2f}", t.dp_node_link_bytes / 1e9)})
       << "\n";
  }
  line(2, 28, Say("cli.fit.bubble", "pipeline bubble"), t.bubble_seconds, "");
  line(2, 28, Say("cli.fit.step", "step"), t.step_seconds, "");
  os << SayFormat("cli.fit.throughput", "throughput {} tokens/s, MFU {}%, bottleneck: {}",
                  {fmt::format("{:.0f}", t.tokens_per_second), fmt::format("{:.1f}", 100 * t.mfu), SayMessage(t.bottleneck)})
     << "\n";
  if (t.bottleneck == "communication") {
    os << "  "
       << Say("cli.fit.communication_limits",
              "communication, not compute, limits this layout: a faster network (--network) or less data parallelism "
              "across nodes would help")
       << "\n";
  }
  if (t.total_hours) {
    os << SayFormat("cli.fit.job_hours", "job: {} hours wall clock, {} GPU-hours",
                    {fmt::format("{:.1f}", *t.total_hours), fmt::format("{:.0f}", *t.gpu_hours)})
       << "\n";
  }
}

void PrintInference(std::ostream& os, const InferencePlan& p, const InferenceTime& t, int64_t shown_concurrency,
                    const Workload& w, double qps, double latency_ms) {
  if (!p.fits) {
    return;
  }
  std::string at = std::to_string(shown_concurrency);
  if (shown_concurrency < w.concurrency) {
    // Fewer than asked: what the server keeps in flight (its scheduler's cap, its KV cache under
    // its overflow policy, or what fits in memory at all).
    const std::string why = p.scheduler_cap > 0 && shown_concurrency == p.scheduler_cap
                                ? Say("cli.fit.cap_scheduler", "its scheduler's max_num_seqs")
                            : !p.kv_overflow.empty() ? Say("cli.fit.cap_kv", "what its KV cache keeps in flight")
                                                     : Say("cli.fit.cap_memory", "the most that fit in memory");
    at += SayFormat("cli.fit.concurrency_capped", " ({0} asked; the server runs {1}: {2})",
                    {std::to_string(w.concurrency), std::to_string(shown_concurrency), why});
  }
  os << "\n"
     << SayFormat("cli.fit.inference_time",
                  "inference at concurrency {}: time to first token {} s, per-token latency {} ms ({}), {} output "
                  "tokens/s per replica, {} per GPU",
                  {at, fmt::format("{:.3f}", t.prefill_seconds),
                   fmt::format("{:.1f}", 1000 * t.decode_step_seconds),
                   t.memory_bound ? Say("cli.fit.memory_bound", "memory-bandwidth bound")
                                  : Say("cli.fit.compute_bound", "compute bound"),
                   fmt::format("{:.0f}", t.decode_tokens_per_second),
                   fmt::format("{:.0f}", t.decode_tokens_per_second_per_gpu)})
     << "\n";
  // §5.2 how the engine runs what its KV pool does not hold at full length.
  // Said where it decides something: more asked (or sized, with --qps) than hold full length.
  const int64_t in_flight = qps > 0 ? p.workload.concurrency : w.concurrency;
  if (p.kv_overflow == "preempt" && in_flight > p.kv_full_length) {
    os << SayFormat("cli.fit.kv_preempt",
                    "{0} admits on the tokens a sequence holds and preempts the newest when its KV cache runs short: "
                    "with requests at every stage of their output about {1} stay in flight ({2} at full length); a "
                    "batch started all at once is preempted and recomputed beyond that",
                    {p.memory.framework, std::to_string(p.kv_in_flight), std::to_string(p.kv_full_length)})
       << "\n";
  } else if (p.kv_overflow == "reserve" && in_flight >= p.kv_in_flight) {
    os << SayFormat("cli.fit.kv_reserve",
                    "{0} admits a request only when its whole length fits in the KV cache: at most {1} in flight, "
                    "more wait in its queue",
                    {p.memory.framework, std::to_string(p.kv_in_flight)})
       << "\n";
  }
  if (qps > 0 || latency_ms > 0) {
    if (!p.meets_latency) {
      os << SayFormat("cli.fit.latency_not_met", "latency target {} ms per token is not met even at concurrency 1",
                      {fmt::format("{:.0f}", latency_ms)})
         << "\n";
      return;
    }
    if (qps > 0 && p.time.mixed) {
      os << SayFormat("cli.fit.request_cost_mixed",
                      "{0} runs prompts inside its decode steps: each step decodes {1} sequences and prefills {2} prompt "
                      "tokens in {3} ms ({4}% of it prompt matmuls): {5} requests/s per replica",
                      {p.memory.framework, std::to_string(p.workload.concurrency),
                       fmt::format("{:.0f}", p.time.mixed_prefill_tokens),
                       fmt::format("{:.1f}", 1000 * p.time.mixed_step_seconds),
                       fmt::format("{:.0f}", 100 * p.prefill_share), fmt::format("{:.2f}", p.time.requests_per_second)})
         << "\n";
    } else if (qps > 0) {
      os << SayFormat("cli.fit.request_cost",
                      "each request costs a replica {} ms of prefill + {} ms of its share of decode steps ({}% "
                      "prefill): {} requests/s per replica",
                      {fmt::format("{:.1f}", 1000 * p.time.prefill_seconds),
                       fmt::format("{:.1f}", 1000 * (p.time.replica_seconds_per_request - p.time.prefill_seconds)),
                       fmt::format("{:.0f}", 100 * p.prefill_share), fmt::format("{:.2f}", p.time.requests_per_second)})
         << "\n";
    }
    os << SayFormat("cli.fit.replicas", "for {} requests/s: {} replica(s) at concurrency {} = {} GPUs, {} per hour ({}); bound: {}",
                    {fmt::format("{:g}", qps), std::to_string(p.replicas), std::to_string(p.workload.concurrency),
                     std::to_string(p.gpus_total), FormatMoney(p.cost_per_hour), SayMessage(p.cost_basis), SayMessage(p.bound)})
       << "\n";
    if (qps > 0) {
      // §5.4 what a request sees at that load: the replicas are sized for the most in flight,
      // the qps keeps fewer there.
      os << SayFormat("cli.fit.at_load_single",
                      "at {0} requests/s a replica: {1} in flight (Little's law, the mean), time to first token {2} s, "
                      "per-token latency {3} ms",
                      {FormatNumber(qps / static_cast<double>(p.replicas), 4), FormatNumber(p.load_in_flight, 3),
                       fmt::format("{:.3f}", p.at_load.prefill_seconds),
                       fmt::format("{:.1f}", 1000 * p.load_token_seconds)})
         << "\n";
    }
    if (p.scheduler_cap > 0 && p.workload.concurrency == p.scheduler_cap) {
      os << SayFormat("cli.fit.scheduler_cap",
                      "the server runs at most {} sequences at once (max_num_seqs), though its KV space holds {}",
                      {std::to_string(p.scheduler_cap), fmt::format("{:.0f}", std::floor(p.memory.server_concurrency.value_or(0)))})
         << "\n";
    }
  }
}

// The kind of runs a note counts, in the reader's language ("training", "MoE training", "inference").
std::string AccuracyKindWords(const AccuracyNote& a) {
  return a.moe        ? Say("fit.accuracy_training_moe", "MoE training")
         : a.training ? Say("fit.accuracy_training", "training")
                      : Say("fit.accuracy_inference", "inference");
}

// A setup's precision class and framework family in the reader's language.
std::string SetupPrecisionWords(const SetupErrors& s) {
  return s.precision == "fp8" ? Say("fit.accuracy_fp8", "fp8") : Say("fit.accuracy_16bit", "16-bit");
}
std::string SetupFrameworkWords(const SetupErrors& s) {
  return s.framework == "any" ? Say("fit.accuracy_any_framework", "any framework")
                              : SayFormat("fit.accuracy_family", "{0}'s family", {s.framework});
}

}  // namespace

// Where the worst checked run was off by half the modelled time or more (AccuracyNote::
// worst_run_time_ratio): how long it took against the model, and what the time is then good for.
std::string WorstRunWords(double ratio) {
  const std::string r = fmt::format("{:.1f}", ratio);
  return ratio >= 1 ? SayFormat("fit.accuracy_worst_slower",
                                "a checked run took {0} times as long as modelled: this time is for comparing "
                                "layouts, not for booking a reservation",
                                {r})
                    : SayFormat("fit.accuracy_worst_faster",
                                "a checked run took {0} of the modelled time: this time is for comparing layouts, "
                                "not for booking a reservation",
                                {r});
}

void PrintSearchAccuracy(std::ostream& os, const std::vector<AccuracyNote>& notes) {
  if (notes.empty()) {
    return;
  }
  const auto pct = [](double x) { return fmt::format("{:.1f}", 100 * x); };
  const auto signed_pct = [](double x) { return fmt::format("{:+.1f}", 100 * x); };
  std::string cards, unchecked;
  for (const auto& a : notes) {
    if (a.card) {
      // One run has no median: its error alone.
      cards += (cards.empty() ? "" : Say("fit.accuracy_sep", "; ")) +
               (a.card->rows == 1
                    ? SayFormat("fit.accuracy_search_card_one", "{0} 1 run, {1}%", {a.gpu, signed_pct(a.card->worst_error)})
                    : SayFormat("fit.accuracy_search_card", "{0} {1} runs, median {2}%, worst {3}%",
                                {a.gpu, std::to_string(a.card->rows), pct(a.card->median_abs_error),
                                 signed_pct(a.card->worst_error)}));
      if (a.setup) {
        const SetupErrors& s = *a.setup;
        cards += SayFormat("fit.accuracy_search_setup", " ({0} with {1}: {2} runs, from {3}% to {4}%, median {5}%)",
                           {SetupPrecisionWords(s), SetupFrameworkWords(s), std::to_string(s.errors.rows),
                            signed_pct(s.lowest_error), signed_pct(s.highest_error), signed_pct(s.median_error)});
      }
    } else {
      unchecked += (unchecked.empty() ? "" : Say("sep.list", ", ")) + a.gpu;
    }
  }
  if (!unchecked.empty()) {
    cards += (cards.empty() ? "" : Say("fit.accuracy_sep", "; ")) +
             SayFormat("fit.accuracy_search_none",
                       "none checked on {0} (datasheet peaks and assumed kernel fractions alone)", {unchecked});
  }
  const AccuracyNote& a = notes.front();
  os << SayFormat("fit.accuracy_search", "time accuracy against published {0} runs (+: faster than the run; {1}): {2}",
                  {AccuracyKindWords(a), a.source, cards})
     << "\n";
  // A card whose runs (or, for one without, every run) were off by half the time or more: once each.
  bool unchecked_said = false;
  for (const auto& n : notes) {
    if (!n.worst_run_time_ratio || (!n.card && unchecked_said)) {
      continue;
    }
    unchecked_said = unchecked_said || !n.card;
    os << Say("fit.accuracy_warning", "warning: ")
       << SayFormat("fit.accuracy_worst_card", "{0}: {1}",
                    {n.card ? n.gpu : Say("fit.accuracy_worst_unchecked", "cards without checked runs"),
                     WorstRunWords(*n.worst_run_time_ratio)})
       << "\n";
  }
}

namespace {

void PrintInferenceSearch(std::ostream& os, const FitJobResult& res) {
  const FitSearch& s = *res.search;
  const SearchOptions& so = s.options;
  const InferenceSearch& r = *s.inference;
  const std::string& currency = s.currency;
  os << SayFormat("cli.fit.evaluated", "{} layouts evaluated; ranked by {}{}",
                  {std::to_string(r.evaluated), Say(std::string("objective.") + ToString(so.objective), ToString(so.objective)),
                   so.pinned.Any() ? SayFormat("cli.fit.kept", "; kept as given: {}", {so.pinned.Describe()}) : ""})
     << "\n";
  const Align rt = Align::kRight;
  const Table table({{"#", 3, rt},
                     {"GPU", 24},
                     {Say("cli.fit.col.gpus", "GPUs"), 5, rt},
                     {"tp", 4, rt},
                     {Say("cli.fit.col.replicas", "replicas"), 8, rt},
                     {Say("cli.fit.col.concurrency", "concurrency"), 11, rt},
                     {Say("cli.fit.col.ttft", "TTFT s"), 10, rt},
                     {"ms/token", 12, rt},
                     {currency + "/h", 10, rt},
                     {Say("cli.fit.col.bound", "bound"), 0, Align::kLeft, "  "}});
  auto header = [&] { table.PrintHeader(os); };
  // With a QPS the times are those a request sees at that load (§5.4: in flight a replica, of
  // the most it is sized for); without, at the concurrency asked.
  const bool at_load = res.qps > 0;
  auto row = [&](std::size_t i, const InferencePlan& p) {
    const InferenceTime& t = at_load ? p.at_load : p.time;
    table.PrintRow(
        os, {fmt::format("{}", i + 1), p.gpu->name, fmt::format("{}", p.gpus_total), fmt::format("{}", p.layout.tp),
             fmt::format("{}", p.replicas),
             at_load ? fmt::format("{}/{}", FormatNumber(p.load_in_flight, 2), p.workload.concurrency)
                     : fmt::format("{}", p.workload.concurrency),
             fmt::format("{:.3f}", t.prefill_seconds),
             fmt::format("{:.1f}", 1000 * (at_load ? p.load_token_seconds : t.decode_step_seconds)),
             FormatNumber(p.cost_per_hour.amount, 3), SayMessage(p.bound)});
  };
  header();
  for (std::size_t i = 0; i < r.ranked.size() && i < so.top; ++i) {
    row(i, r.ranked[i]);
  }
  if (so.gpus.size() > 1 && s.cards_named && !r.best_per_gpu.empty()) {
    os << Say("cli.fit.best_of_each_card", "best of each card:") << "\n";
    header();
    for (std::size_t i = 0; i < r.best_per_gpu.size(); ++i) {
      row(i, r.best_per_gpu[i]);
    }
  }
  if (r.ranked.empty()) {
    os << SayFormat("cli.fit.none_meets", "no GPU type meets the request; closest: {}", {SayMessage(r.closest)}) << "\n";
  } else if (at_load) {
    os << SayFormat("cli.fit.at_load",
                    "at {} requests/s: concurrency = sequences in flight a replica / the most it is sized for "
                    "(Little's law, the mean); TTFT and ms/token at that load",
                    {FormatNumber(res.qps, 4)})
       << "\n";
  }
  PrintSearchAccuracy(os, s.accuracy);
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
  os << SayFormat("cli.fit.evaluated_training", "{} layouts evaluated, {} fit with a {}% margin; ranked by {}{}{}",
                  {std::to_string(r.evaluated), std::to_string(r.fitting), fmt::format("{:.0f}", 100 * so.margin),
                   Say(std::string("objective.") + ToString(so.objective), ToString(so.objective)),
                   res.tokens > 0 ? SayFormat("cli.fit.for_tokens", " for {} tokens", {fmt::format("{:.3g}", res.tokens)})
                                  : Say("cli.fit.per_million", " per million tokens"),
                   so.pinned.Any() ? SayFormat("cli.fit.kept", "; kept as given: {}", {so.pinned.Describe()}) : ""})
     << "\n";
  const Align rt = Align::kRight;
  const Table table({{"#", 3, rt},
                     {"GPU", 22},
                     {Say("cli.fit.col.gpus", "GPUs"), 5, rt},
                     {"tp", 3, rt},
                     {"pp", 3, rt},
                     {"vpp", 3, rt},
                     {"cp", 3, rt},
                     {"dp", 4, rt},
                     {"zero", 4, rt},
                     {Say("cli.fit.col.recompute", "recompute"), 10, rt},
                     {"mb", 3, rt},
                     {Say("cli.fit.col.memory", "mem GiB"), 8, rt},
                     {Say("cli.fit.col.step", "step s"), 8, rt},
                     {Say("cli.fit.col.compute", "comp s"), 7, rt},
                     {Say("cli.fit.col.communication", "comm s"), 7, rt},
                     {Say("cli.fit.col.bubble", "bubble"), 7, rt},
                     {"tokens/s", 10, rt},
                     {"MFU", 6, rt},
                     {res.tokens > 0 ? Say("cli.fit.col.hours", "hours") : Say("cli.fit.col.hours_per_mtok", "h/Mtok"), 10, rt},
                     {currency, 12, rt}});
  if (!r.ranked.empty()) {
    table.PrintHeader(os);
  }
  auto row = [&](std::size_t i, const Candidate& c) {
    const double hours = c.time.total_hours ? *c.time.total_hours : 1e6 / c.time.tokens_per_second / 3600.0;
    table.PrintRow(
        os,
        {fmt::format("{}", i + 1), c.gpu->name, fmt::format("{}", c.layout.gpus), fmt::format("{}", c.layout.tp),
         fmt::format("{}", c.layout.pp), fmt::format("{}", c.layout.vpp), fmt::format("{}", c.layout.cp), fmt::format("{}", c.layout.dp()),
         fmt::format("{}", c.layout.zero),
         std::string(ToString(c.workload.recompute)), fmt::format("{}", c.workload.micro_batch),
         fmt::format("{:.1f}", c.memory.per_gpu.Total().gib()), fmt::format("{:.2f}", c.time.step_seconds),
         fmt::format("{:.2f}", c.time.compute_seconds), fmt::format("{:.2f}", c.time.communication_seconds),
         fmt::format("{:.2f}", c.time.bubble_seconds), fmt::format("{:.0f}", c.time.tokens_per_second),
         // Three significant figures (a LoRA on eight B200s is 0.00105 h and 0.95 CNY a million tokens,
         // not "0.00" and "1"), whole numbers from 1,000 on.
         fmt::format("{:.1f}%", 100 * c.time.mfu), FormatNumber(hours, 3), FormatNumber(c.cost.amount, 3)});
  };
  for (std::size_t i = 0; i < r.ranked.size() && i < so.top; ++i) {
    row(i, r.ranked[i]);
  }
  if (!r.ranked.empty()) {
    const auto& b = r.ranked.front();
    os << SayFormat("cli.fit.best", "best: compute {} s + communication {} s + bubble {} s per step; bottleneck {}",
                    {fmt::format("{:.2f}", b.time.compute_seconds), fmt::format("{:.2f}", b.time.communication_seconds),
                     fmt::format("{:.2f}", b.time.bubble_seconds), SayMessage(b.time.bottleneck)})
       << "\n";
    for (std::size_t i = so.top; i < r.ranked.size(); ++i) {
      const auto& c = r.ranked[i];
      os << "  "
         << SayFormat("cli.fit.lost", "#{} {} x {} tp={} pp={} cp={} zero={} lost: {}",
                      {std::to_string(i + 1), std::to_string(c.layout.gpus), c.gpu->name, std::to_string(c.layout.tp),
                       std::to_string(c.layout.pp), std::to_string(c.layout.cp), std::to_string(c.layout.zero),
                       SayMessage(WhyLost(c, b, so.objective))})
         << "\n";
    }
    if (!offers && so.gpus.size() > 1 && s.cards_named) {
      os << Say("cli.fit.best_layout_of_each_card", "best layout of each card:") << "\n";
      for (std::size_t i = 0; i < r.best_per_gpu.size(); ++i) {
        row(i, r.best_per_gpu[i]);
      }
      for (const Gpu* gpu : so.gpus) {
        if (std::none_of(r.best_per_gpu.begin(), r.best_per_gpu.end(),
                         [&](const Candidate& c) { return c.gpu == gpu; })) {
          os << "    " << SayFormat("cli.fit.no_layout_fits_card", "{}: no layout fits", {gpu->name}) << "\n";
        }
      }
    }
    os << SayFormat("cli.fit.network", "network between nodes: {} ({})",
                    {NetworkFor(so.time, *b.gpu).name, SayMessage(NetworkFor(so.time, *b.gpu).basis)})
       << "\n";
    os << (offers ? SayFormat("cli.fit.costs", "costs: {}", {SayMessage(b.cost_basis)})
                  : Say("cli.fit.illustrative", "CNY figures use the catalog's illustrative per-card-hour prices, not offers."))
       << "\n";
    PrintSearchAccuracy(os, s.accuracy);
  } else if (!r.unserved.empty()) {
    os << SayFormat("cli.fit.unserved", "layouts fit, but no offer can run the job: {}", {SayMessage(r.unserved)})
       << "\n";
  } else {
    os << SayFormat("cli.fit.no_layout_fits", "no layout fits; closest: {}", {SayMessage(r.closest)}) << "\n";
  }
  for (const auto& n : r.notes) {
    os << Say("cli.note", "note: ") << SayMessage(n) << "\n";
  }
}

// A span of seconds: whole seconds below two minutes, then minutes below two hours, then hours
// ("45 s", "45 min", "2.5 h"), in the text's language ("45 秒", "45 分钟", "2.5 小时").
std::string Span(double seconds) {
  if (TextLanguage() == Lang::kZh) {
    return seconds < 10      ? fmt::format("{:.1f} 秒", seconds)
           : seconds < 120   ? fmt::format("{:.0f} 秒", seconds)
           : seconds < 7200  ? fmt::format("{:.0f} 分钟", seconds / 60.0)
                             : fmt::format("{:.1f} 小时", seconds / 3600.0);
  }
  return seconds < 10 ? fmt::format("{:.1f} s", seconds) : seconds < 120 ? fmt::format("{:.0f} s", seconds) : FormatMinutes(seconds / 60.0);
}
std::string Gb(double bytes) { return FormatNumber(bytes / 1e9, 3) + " GB"; }

void PrintCheckpoint(std::ostream& os, const CheckpointPlan& p, const std::string& framework) {
  os << "\n";
  if (!p.training) {
    os << SayFormat("cli.fit.ckpt.weights", "weights to load {} ({} per GPU); on another node in {}",
                    {Gb(p.bytes), Gb(p.bytes_per_rank), Span(p.restore_seconds)})
       << "\n";
    return;
  }
  const std::string who = p.save_mode == "rank0"    ? Say("cli.fit.ckpt.rank0", "one rank writes it all")
                          : p.save_mode == "sharded" ? Say("cli.fit.ckpt.sharded", "every rank writes its shard")
                                                     : Say("cli.fit.ckpt.replica0", "the first replica writes the weights, every rank its optimizer shard");
  os << SayFormat("cli.fit.ckpt.size", "checkpoint {} ({} bytes per trained parameter; {}: {}, {} per rank, {} per node)",
                  {Gb(p.bytes), FormatNumber(p.bytes_per_param, 3), framework, who, Gb(p.bytes_per_rank), Gb(p.node_bytes)})
     << "\n";
  const std::string storage = FormatNumber(p.storage_gbps, 3) + " Gbit/s" + Say("cli.fit.ckpt.per_node", " per node") +
                              (p.storage_assumed ? Say("cli.fit.ckpt.assumed", ", assumed: give --storage-gbps") : "");
  if (p.async) {
    os << "  " << SayFormat("cli.fit.ckpt.save_async", "save     {} copy to host memory, training waits; the write ({}) runs behind it at {}",
                            {Span(p.save_seconds), Span(p.write_seconds), storage})
       << "\n";
  } else {
    os << "  " << SayFormat("cli.fit.ckpt.save", "save     {} per checkpoint, training waits (storage {})",
                            {Span(p.save_seconds), storage})
       << "\n";
  }
  if (p.sync_seconds) {
    const std::string link = p.sync_link ? p.sync_link->name + (p.sync_link_source.empty() || p.sync_link_source == "given"
                                                                     ? std::string()
                                                                     : " (" + SayMessage(p.sync_link_source) + ")")
                                         : std::string("-");
    os << "  " << SayFormat("cli.fit.ckpt.sync", "sync     {0} per checkpoint off each node over {1}", {Span(*p.sync_seconds), link})
       << "\n";
  }
  if (p.node_wait_seconds > 0) {
    os << "  "
       << SayFormat("cli.fit.ckpt.resume", "resume   {0} on another node: {1} until it runs ({2}), {3} to restore",
                    {Span(p.resume_seconds), Span(p.node_wait_seconds), SayMessage(p.node_wait_source),
                     Span(p.restore_seconds)});
  } else {
    os << "  " << SayFormat("cli.fit.ckpt.restore_spare", "restore  {} to resume on a spare node (no wait for one: --node-wait-minutes)",
                            {Span(p.restore_seconds)});
  }
  os << (p.resume_seconds <= 600 ? Say("cli.fit.ckpt.within10", " (within the 10 minutes providers promise)")
         : p.restore_seconds > 600
             ? Say("cli.fit.ckpt.over10", " (over the 10 minutes providers promise: a faster sync link or storage)")
             : Say("cli.fit.ckpt.over10_wait", " (over the 10 minutes providers promise: ask for a spare node)"))
     << "\n";
  if (p.interval_seconds) {
    os << "  " << SayFormat("cli.fit.ckpt.interval", "interval {} between checkpoints (Young; {} failures per hour: {})",
                            {Span(*p.interval_seconds), FormatNumber(p.failures_per_hour, 3), SayMessage(p.failure_basis)})
       << "\n";
    os << "  " << SayFormat("cli.fit.ckpt.lost", "lost     {}% of the wall time to saves, rework and restarts{}",
                            {FormatNumber(100.0 * p.lost_fraction, 3),
                             p.lost_hours ? SayFormat("cli.fit.ckpt.lost_hours", ": {} of the job", {Span(*p.lost_hours * 3600.0)}) : std::string()})
       << "\n";
  }
  for (const auto& n : p.notes) {
    os << "  " << Say("cli.note", "note: ") << SayMessage(n) << "\n";
  }
}

void PrintUpload(std::ostream& os, const DataPlan& d) {
  if (d.upload_seconds) {
    os << SayFormat("cli.fit.upload", "upload   {0} for the dataset's {1} over {2} before the job can start",
                    {Span(*d.upload_seconds), Gb(d.dataset_bytes), d.uplink->name})
       << "\n";
  }
}

// How far to trust the time: the published runs on this card, or that there were none
// (data/accuracy.yaml, docs/validation.md).
void PrintAccuracy(std::ostream& os, const AccuracyNote& a) {
  const std::string kind = AccuracyKindWords(a);
  const auto pct = [](double x) { return fmt::format("{:.1f}", 100 * x); };
  const auto signed_pct = [](double x) { return fmt::format("{:+.1f}", 100 * x); };
  if (a.setup) {
    // Which way the model leans on runs like this one, where every such run fell on one side.
    const SetupErrors& s = *a.setup;
    // {0}-{4} the setup, card, runs and kind; {5}-{7} the figures, as magnitudes where all runs
    // fall on one side, else the median |error| and the signed range.
    std::vector<std::string> args = {SetupPrecisionWords(s), SetupFrameworkWords(s), a.gpu,
                                     std::to_string(s.errors.rows), kind};
    if (s.highest_error < 0 || s.lowest_error > 0) {
      args.insert(args.end(), {pct(std::abs(s.highest_error)), pct(std::abs(s.lowest_error)),
                               pct(std::abs(s.median_error))});
    } else {
      args.insert(args.end(),
                  {pct(s.errors.median_abs_error), signed_pct(s.lowest_error), signed_pct(s.highest_error)});
    }
    if (s.highest_error < 0) {
      os << SayFormat("fit.accuracy_setup_below",
                      "time accuracy for {0} with {1} on {2}: on {3} published {4} runs the modelled throughput was "
                      "below every run's, by {5}% to {6}% (median {7}%): runs like this one ran faster than modelled",
                      args)
         << "\n";
    } else if (s.lowest_error > 0) {
      os << SayFormat("fit.accuracy_setup_above",
                      "time accuracy for {0} with {1} on {2}: on {3} published {4} runs the modelled throughput was "
                      "above every run's, by {6}% to {5}% (median {7}%): runs like this one ran slower than modelled",
                      args)
         << "\n";
    } else {
      os << SayFormat("fit.accuracy_setup_mixed",
                      "time accuracy for {0} with {1} on {2}: on {3} published {4} runs the modelled throughput was "
                      "off by {5}% (median), from {6}% to {7}% (+: faster than the run)",
                      args)
         << "\n";
    }
  }
  const auto worst_run = [&] {
    if (a.worst_run_time_ratio) {
      os << Say("fit.accuracy_warning", "warning: ") << WorstRunWords(*a.worst_run_time_ratio) << "\n";
    }
  };
  if (a.card && a.card->rows == 1) {
    // One run on the card has no median: its error alone.
    os << SayFormat("fit.accuracy_card_one",
                    "time accuracy: on the one published {0} run on {1} that was checked the modelled throughput was "
                    "off by {2}%; on all {3} runs checked by {4}% (median), at worst {5}% (+: faster than the run; {6})",
                    {kind, a.gpu, signed_pct(a.card->worst_error), std::to_string(a.all.rows),
                     pct(a.all.median_abs_error), signed_pct(a.all.worst_error), a.source})
       << "\n";
    worst_run();
    return;
  }
  if (a.card) {
    os << SayFormat("fit.accuracy_card",
                    "time accuracy: on {0} published {1} runs on {2} the modelled throughput was off by {3}% (median), "
                    "at worst {4}%; on all {5} runs checked by {6}%, at worst {7}% (+: faster than the run; {8})",
                    {std::to_string(a.card->rows), kind, a.gpu, pct(a.card->median_abs_error),
                     signed_pct(a.card->worst_error), std::to_string(a.all.rows), pct(a.all.median_abs_error),
                     signed_pct(a.all.worst_error), a.source})
       << "\n";
    worst_run();
    return;
  }
  std::string cards;
  for (const auto& c : a.cards) {
    cards += (cards.empty() ? "" : ", ") + c;
  }
  os << SayFormat("fit.accuracy_none",
                  "time accuracy: no published {0} run on {1} was checked: this time rests on the card's datasheet peaks "
                  "and assumed kernel fractions; on the {2} runs checked ({3}) the modelled throughput was off by "
                  "{4}% (median), at worst {5}% (+: faster than the run; {6})",
                  {kind, a.gpu, std::to_string(a.all.rows), cards, pct(a.all.median_abs_error),
                   signed_pct(a.all.worst_error), a.source})
     << "\n";
  worst_run();
}

void PrintSingle(std::ostream& os, const FitJobResult& res) {
  const FitSingle& s = *res.single;
  const auto& ckpt = res.model.checkpoint;
  if (ckpt) {
    os << SayFormat("cli.fit.checkpoint", "checkpoint {} safetensors file(s): {} parameters, {} GiB",
                    {std::to_string(ckpt->files), Count(ckpt->params),
                     fmt::format("{:.2f}", Bytes(static_cast<double>(ckpt->bytes)).gib())})
       << "\n";
  }
  PrintTable(os, res.model.spec, s.workload, s.layout, s.gpu, s.memory, s.suggestions);
  if (s.training) {
    PrintTrainingTime(os, *s.training, s.network);
    if (s.unstated) {
      const UnstatedSettings& u = *s.unstated;
      // Each setting as the flag that would pin it ("--vpp 7"), so the line can be pasted back.
      std::string chosen, slowest;
      for (const auto& c : u.choices) {
        chosen += (chosen.empty() ? "" : ", ") + DefaultOptionFlag(c.name) + " " + c.chosen;
        slowest += (slowest.empty() ? "" : ", ") + DefaultOptionFlag(c.name) + " " + c.slowest;
      }
      os << SayFormat("cli.fit.unstated",
                      "not given, chosen for speed within memory: {0} (the slowest that fits, {1}: {2} tokens/s, "
                      "{3} s a step)",
                      {chosen, slowest, fmt::format("{:.0f}", u.worst_tokens_per_second),
                       fmt::format("{:.3f}", u.worst_step_seconds)})
         << "\n";
    }
    if (s.accuracy) {
      PrintAccuracy(os, *s.accuracy);
    }
  }
  PrintCheckpoint(os, s.checkpoint, s.memory.framework);
  PrintUpload(os, res.data);
  if (res.job && !res.job->plan.feasible) {
    os << SayFormat("cli.fit.unpriced", "cost: none, no offer can run the job: {}", {SayMessage(res.job->unserved)})
       << "\n";
  } else if (res.job) {
    const JobPrice& job = *res.job;
    os << SayFormat("cli.fit.cost", "cost: {} ({}, starting {})",
                    {FormatMoney(job.total), SayMessage(res.JobBasis()), FormatLocalMinute(job.start_minute)})
       << "\n";
    if (job.plan.cost.egress > 0.005) {
      os << "  "
         << SayFormat("cli.fit.egress", "egress {} GB at {} per GB: {} (in the cost)",
                      {FormatNumber(res.egress_gb, 4), FormatNumber(job.plan.egress_price_per_gb, 4),
                       FormatMoney(job.plan.cost.egress, job.total.currency)})
         << "\n";
    }
    if (res.lost_cost) {
      os << "  "
         << SayFormat("cli.fit.lost_cost", "checkpoint saves, rework and restarts: {} of the job's price ({} h)",
                      {FormatMoney(*res.lost_cost, job.total.currency), FormatNumber(*s.checkpoint.lost_hours, 3)})
         << "\n";
    }
    for (const auto& sc : res.spot_checkpoints) {
      os << "  "
         << SayFormat("cli.fit.spot_ckpt",
                      "on spot ({}, {} interruptions per hour): a checkpoint every {}, {}% of the work redone or saving",
                      {sc.offer, FormatNumber(sc.interruptions_per_hour, 3), Span(sc.interval_seconds),
                       FormatNumber(100.0 * sc.rework_fraction, 3)})
         << "\n";
    }
    for (const auto& u : res.link_upgrades) {
      os << "  "
         << SayFormat("cli.fit.upgrade",
                      "link {} -> {} Gbit/s ({}, {} instance(s)): costs {} over the job, sync {} a checkpoint, saves {} h of lost time worth {}: {}",
                      {FormatNumber(u.from_gbps, 4), FormatNumber(u.gbps, 4), u.offer, std::to_string(u.instances),
                       FormatMoney(u.cost, job.total.currency), Span(u.sync_seconds), FormatNumber(u.lost_hours_saved, 3),
                       FormatMoney(u.value, job.total.currency),
                       u.worth_it ? Say("cli.fit.upgrade_yes", "worth it") : Say("cli.fit.upgrade_no", "not worth it")})
         << "\n";
    }
    if (job.night_total) {
      os << "  "
         << SayFormat("cli.fit.night", "starting at the night window ({}) would cost {}, saving {}",
                      {FormatLocalMinute(*job.night_start_minute), FormatMoney(*job.night_total),
                       FormatMoney(job.total.amount - job.night_total->amount, job.total.currency)})
         << "\n";
    }
  }
  if (!res.price_note.empty()) {
    os << Say("cli.note", "note: ") << SayMessage(res.price_note) << "\n";
  }
  if (s.plan) {
    PrintInference(os, *s.plan, s.shown, s.shown_concurrency, s.workload, res.qps, res.latency_ms);
    if (s.accuracy) {
      PrintAccuracy(os, *s.accuracy);
    }
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
    if (!res.candidate_checkpoints.empty()) {  // the best layout's (--json: every candidate's)
      PrintCheckpoint(os, res.candidate_checkpoints.front(), res.search->training->ranked.front().memory.framework);
    }
    PrintUpload(os, res.data);
  }
}

}  // namespace gpuplan
