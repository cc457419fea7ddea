#include "plan/render/fit_job_json.h"

#include <fmt/format.h>

#include "fit/render/fit_json.h"
#include "format/numbers.h"
#include "read/time_text.h"

namespace gpuplan {
namespace {

nlohmann::json ModelHeader(const ModelSpec& m) {
  return {{"name", m.name},
          {"architecture", m.architecture},
          {"params_total", m.ParamsTotal()},
          {"params_active", m.ParamsActive()}};
}

nlohmann::json HourlyCost(const InferencePlan& p) {
  return {{"amount", p.cost_per_hour.amount}, {"currency", p.cost_per_hour.currency}, {"per", "hour"},
          {"basis", p.cost_basis}};
}

nlohmann::json ErrorFiguresToJson(const ErrorFigures& f) {
  return {{"rows", f.rows}, {"median_abs_error", f.median_abs_error}, {"worst_error", f.worst_error}};
}

// The card's runs of the request's precision class and framework family (null: fewer than
// kSetupMinRows were checked): signed figures, so a reader sees which way the model leans.
nlohmann::json SetupToJson(const std::optional<SetupErrors>& s) {
  if (!s) {
    return nullptr;
  }
  nlohmann::json j = ErrorFiguresToJson(s->errors);
  j["precision"] = s->precision;
  j["framework"] = s->framework;
  j["median_error"] = s->median_error;
  j["lowest_error"] = s->lowest_error;
  j["highest_error"] = s->highest_error;
  return j;
}

}  // namespace

nlohmann::json SearchAccuracyToJson(const std::vector<AccuracyNote>& notes) {
  if (notes.empty()) {
    return nullptr;
  }
  nlohmann::json gpus = nlohmann::json::array();
  for (const auto& a : notes) {
    gpus.push_back({{"gpu", a.gpu},
                    {"on_gpu", a.card ? ErrorFiguresToJson(*a.card) : nlohmann::json(nullptr)},
                    {"setup", SetupToJson(a.setup)},
                    {"worst_run_time_ratio", OptionalToJson(a.worst_run_time_ratio)}});
  }
  const AccuracyNote& a = notes.front();
  return {{"kind", AccuracyKind(a)},
          {"all", ErrorFiguresToJson(a.all)},
          {"gpus", gpus},
          {"gpus_checked", a.cards},
          {"source", a.source}};
}

namespace {

nlohmann::json SingleToJson(const FitJobResult& r) {
  const FitSingle& s = *r.single;
  nlohmann::json j = FitToJson(r.model.spec, s.workload, s.layout, s.gpu, s.memory, s.suggestions);
  if (s.training) {
    j["time"] = TrainingTimeToJson(*s.training);
  }
  // The settings not given, chosen for speed within memory, and the range over them
  // (docs/time-model.md §10); null when nothing was left to choose.
  j["unstated"] = nullptr;
  if (s.unstated) {
    const UnstatedSettings& u = *s.unstated;
    nlohmann::json choices = nlohmann::json::array();
    for (const auto& c : u.choices) {
      choices.push_back({{"name", c.name}, {"chosen", c.chosen}, {"slowest", c.slowest}, {"tried", c.tried}});
    }
    j["unstated"] = {{"choices", choices},
                     {"combinations", u.combinations},
                     {"fitting", u.fitting},
                     {"worst", u.worst},
                     {"step_seconds", {{"best", u.best_step_seconds}, {"worst", u.worst_step_seconds}}},
                     {"tokens_per_second", {{"best", u.best_tokens_per_second}, {"worst", u.worst_tokens_per_second}}},
                     {"mfu", {{"best", u.best_mfu}, {"worst", u.worst_mfu}}},
                     {"total_hours", {{"best", OptionalToJson(u.best_total_hours)}, {"worst", OptionalToJson(u.worst_total_hours)}}}};
  }
  // How far the time model came from published runs (data/accuracy.yaml): on this card, when
  // runs on it were checked, and over every checked run of the kind. Null with --mfu.
  j["accuracy"] = nullptr;
  if (s.accuracy) {
    const AccuracyNote& a = *s.accuracy;
    j["accuracy"] = {{"kind", AccuracyKind(a)},
                     {"gpu", a.gpu},
                     {"on_gpu", a.card ? ErrorFiguresToJson(*a.card) : nlohmann::json(nullptr)},
                     {"setup", SetupToJson(a.setup)},
                     {"all", ErrorFiguresToJson(a.all)},
                     {"gpus_checked", a.cards},
                     {"source", a.source},
                     {"worst_run_time_ratio", OptionalToJson(a.worst_run_time_ratio)}};
  }
  if (r.job) {
    j["cost"] = JobPriceToJson(r);
  }
  if (!r.price_note.empty()) {
    j["notes"].push_back(r.price_note);
  }
  j["checkpoint"] = CheckpointPlanToJson(s.checkpoint);
  if (r.lost_cost) {
    j["checkpoint"]["lost_cost"] = *r.lost_cost;  // in cost.currency
  }
  if (!r.spot_checkpoints.empty()) {
    j["checkpoint"]["spot"] = nlohmann::json::array();
    for (const auto& sc : r.spot_checkpoints) {
      j["checkpoint"]["spot"].push_back({{"offer", sc.offer},
                                         {"interruptions_per_hour", sc.interruptions_per_hour},
                                         {"interval_seconds", sc.interval_seconds},
                                         {"rework_fraction", sc.rework_fraction}});
    }
  }
  j["data"] = DataPlanToJson(r.data);
  if (s.plan) {
    // (beside the KV cache figures FitToJson puts there)
    j["inference"].update(InferenceToJson(*s.plan, s.shown, s.shown_concurrency, r.qps, r.latency_ms));
    j["inference"]["concurrency_asked"] = s.workload.concurrency;
  }
  if (r.model.checkpoint) {
    j["model_files"] = ModelFilesToJson(*r.model.checkpoint);
  }
  return j;
}

nlohmann::json InferenceSearchToJson(const FitJobResult& r) {
  const FitSearch& s = *r.search;
  const InferenceSearch& x = *s.inference;
  nlohmann::json j;
  j["model"] = ModelHeader(r.model.spec);
  j["model"]["params_trainable"] = 0;
  j["search"] = {{"evaluated", x.evaluated}, {"objective", ToString(s.options.objective)},
                 {"pinned", PinnedToJson(s.options.pinned)}};
  j["fits"] = !x.ranked.empty();
  j["candidates"] = nlohmann::json::array();
  for (const auto& p : x.ranked) {
    nlohmann::json c = {{"gpu", p.gpu->name},       {"gpus", p.gpus_total},
                        {"tp", p.layout.tp},        {"pp", p.layout.pp},
                        {"replicas", p.replicas},   {"memory_per_gpu_total", static_cast<int64_t>(p.memory.per_gpu.Total().value)}};
    c["inference"] = InferenceToJson(p, p.time, p.workload.concurrency, r.qps, r.latency_ms);
    c["cost"] = HourlyCost(p);
    j["candidates"].push_back(c);
  }
  j["best_per_gpu"] = nlohmann::json::array();
  for (const auto& p : x.best_per_gpu) {
    j["best_per_gpu"].push_back({{"gpu", p.gpu->name},
                                 {"gpus", p.gpus_total},
                                 {"tp", p.layout.tp},
                                 {"pp", p.layout.pp},
                                 {"replicas", p.replicas},
                                 {"concurrency", p.workload.concurrency},
                                 {"bound", p.bound},
                                 {"cost", HourlyCost(p)}});
  }
  if (x.ranked.empty()) {
    j["closest"] = x.closest;
  }
  j["search"]["notes"] = x.notes;
  j["accuracy"] = SearchAccuracyToJson(s.accuracy);
  j["data"] = DataPlanToJson(r.data);
  if (r.model.checkpoint) {
    j["model_files"] = ModelFilesToJson(*r.model.checkpoint);
  }
  return j;
}

nlohmann::json TrainingSearchToJson(const FitJobResult& r) {
  const FitSearch& s = *r.search;
  const SearchResult& x = *s.training;
  nlohmann::json j;
  if (!x.ranked.empty()) {
    const Candidate& b = x.ranked.front();
    j = FitToJson(r.model.spec, b.workload, b.layout, b.gpu, b.memory, {});
    j["time"] = TrainingTimeToJson(b.time);
    if (r.search_start_minute) {  // priced on offers: what `cost optimize --usage` needs to price the same job
      j["cost"] = {{"amount", b.cost.amount},
                   {"currency", b.cost.currency},
                   {"start", FormatLocalMinute(*r.search_start_minute)},
                   {"start_default", r.start_default},
                   {"interruptible", r.interruptible},
                   {"basis", b.cost_basis},
                   {"feasible", true}};
    }
  } else {
    j["model"] = ModelHeader(r.model.spec);
    j["fits"] = false;
    j["closest"] = x.closest;
    if (!x.unserved.empty()) {
      j["unserved"] = x.unserved;
    }
  }
  j["search"] = {{"evaluated", x.evaluated},
                 {"fitting", x.fitting},
                 {"objective", ToString(s.options.objective)},
                 {"margin", s.options.margin},
                 {"max_gpus", s.options.max_gpus},
                 {"pinned", PinnedToJson(s.options.pinned)},
                 {"notes", x.notes}};
  j["data"] = DataPlanToJson(r.data);
  if (r.model.checkpoint) {
    j["model_files"] = ModelFilesToJson(*r.model.checkpoint);
  }
  j["candidates"] = nlohmann::json::array();
  for (std::size_t i = 0; i < x.ranked.size(); ++i) {
    nlohmann::json c = CandidateToJson(x.ranked[i]);
    if (i < r.candidate_checkpoints.size()) {
      c["checkpoint"] = CheckpointPlanToJson(r.candidate_checkpoints[i]);
    }
    j["candidates"].push_back(std::move(c));
  }
  if (!r.candidate_checkpoints.empty()) {  // the best layout's, as a single fit has it
    j["checkpoint"] = CheckpointPlanToJson(r.candidate_checkpoints.front());
  }
  if (r.offers.empty()) {  // (with offers only the re-priced candidates carry a rental cost)
    j["best_per_gpu"] = nlohmann::json::array();
    for (const auto& c : x.best_per_gpu) {
      j["best_per_gpu"].push_back(CandidateToJson(c));
    }
  }
  j["accuracy"] = SearchAccuracyToJson(s.accuracy);
  return j;
}

}  // namespace


nlohmann::json ModelFilesToJson(const CheckpointSummary& c) {
  return {{"files", c.files}, {"params", c.params}, {"bytes", c.bytes}, {"params_by_dtype", c.params_by_dtype}};
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

nlohmann::json InferenceToJson(const InferencePlan& p, const InferenceTime& t, int64_t concurrency, double qps,
                               double latency_ms) {
  nlohmann::json j;
  if (!p.fits) {
    j["serving"] = nullptr;  // not even one sequence of the context fits next to the weights
    return j;
  }
  j["prefill_seconds"] = t.prefill_seconds;
  j["time_to_first_token_seconds"] = t.prefill_seconds;
  j["per_token_latency_seconds"] = t.decode_step_seconds;
  j["decode_tokens_per_second"] = t.decode_tokens_per_second;
  j["decode_tokens_per_second_per_gpu"] = t.decode_tokens_per_second_per_gpu;
  j["decode_memory_bound"] = t.memory_bound;
  j["requests_per_second_per_replica"] = t.requests_per_second;
  j["replica_seconds_per_request"] = t.replica_seconds_per_request;
  j["concurrency"] = concurrency;
  // §5.2 the engine's policy when its KV pool runs short, and what it keeps in flight under it.
  j["kv_overflow"] = p.kv_overflow.empty() ? nlohmann::json() : nlohmann::json(p.kv_overflow);
  j["kv_in_flight"] = p.kv_in_flight > 0 ? nlohmann::json(p.kv_in_flight) : nlohmann::json();
  if (qps > 0 || latency_ms > 0) {
    // §5.3 where the engine runs prompts inside the decode steps, a request's prefill is its share
    // of those steps' prompt matmuls
    const double prefill = p.time.mixed ? p.prefill_share * p.time.replica_seconds_per_request : p.time.prefill_seconds;
    j["sizing"] = {{"qps", qps},
                   {"latency_ms", latency_ms},
                   {"meets_latency", p.meets_latency},
                   {"concurrency_per_replica", p.workload.concurrency},
                   {"max_concurrency", p.max_concurrency},
                   {"scheduler_cap", p.scheduler_cap > 0 ? nlohmann::json(p.scheduler_cap) : nlohmann::json()},
                   {"requests_per_second_per_replica", p.time.requests_per_second},
                   {"prefill_seconds_per_request", prefill},
                   {"decode_seconds_per_request", p.time.replica_seconds_per_request - prefill},
                   {"mixed_steps", p.time.mixed},
                   {"prefill_tokens_per_step", p.time.mixed ? nlohmann::json(p.time.mixed_prefill_tokens) : nlohmann::json()},
                   {"step_seconds", p.time.mixed ? nlohmann::json(p.time.mixed_step_seconds) : nlohmann::json()},
                   {"prefill_share", p.prefill_share},
                   {"bound", p.bound},
                   {"replicas", p.replicas},
                   {"gpus_needed", p.gpus_total},
                   {"cost_per_hour",
                    {{"amount", p.cost_per_hour.amount}, {"currency", p.cost_per_hour.currency}, {"basis", p.cost_basis}}}};
    if (qps > 0) {
      // §5.4 the qps spread over the replicas: what a request sees (Little's law, the mean).
      j["sizing"]["at_load"] = {{"requests_per_second_per_replica", qps / static_cast<double>(p.replicas)},
                                {"in_flight", p.load_in_flight},
                                {"time_to_first_token_seconds", p.at_load.prefill_seconds},
                                {"per_token_latency_seconds", p.load_token_seconds}};
    }
  }
  return j;
}

nlohmann::json JobPriceToJson(const FitJobResult& r) {
  const JobPrice& job = *r.job;
  nlohmann::json price = {{"amount", job.plan.feasible ? nlohmann::json(job.total.amount) : nlohmann::json()},
                          {"currency", job.total.currency},
                          {"start", FormatLocalMinute(job.start_minute)},
                          {"start_default", r.start_default},
                          {"interruptible", job.interruptible},
                          {"basis", r.JobBasis()},
                          {"feasible", job.plan.feasible}};
  if (!job.plan.feasible) {
    price["unserved"] = job.unserved;
  }
  if (r.spot_checkpoint_minutes) {  // the job's own save time, used for the spot offers' rework
    price["spot_checkpoint_minutes"] = *r.spot_checkpoint_minutes;
  }
  price["egress_gb"] = r.egress_gb;  // what `cost optimize --usage fit.json` prices again
  price["egress_amount"] = job.plan.cost.egress;
  price["egress_price_per_gb"] = job.plan.egress_price_per_gb;
  price["link_upgrades"] = nlohmann::json::array();
  for (const auto& u : r.link_upgrades) {
    price["link_upgrades"].push_back({{"offer", u.offer},
                                      {"from_gbps", u.from_gbps},
                                      {"gbps", u.gbps},
                                      {"price_per_month", u.price_per_month},
                                      {"instances", u.instances},
                                      {"cost", u.cost},
                                      {"sync_seconds", u.sync_seconds},
                                      {"lost_hours_saved", u.lost_hours_saved},
                                      {"value", u.value},
                                      {"worth_it", u.worth_it}});
  }
  if (job.night_total) {
    price["night_start"] = FormatLocalMinute(*job.night_start_minute);
    price["night_amount"] = job.night_total->amount;
  }
  return price;
}

nlohmann::json FitJobToJson(const FitJobResult& r) {
  if (r.single) {
    return SingleToJson(r);
  }
  return r.search->inference ? InferenceSearchToJson(r) : TrainingSearchToJson(r);
}

}  // namespace gpuplan
