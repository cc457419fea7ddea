#include "plan/render/plan_json.h"

#include "cost/render/cost_json.h"
#include "format/numbers.h"
#include "plan/render/fit_job_json.h"
#include "read/time_text.h"

namespace gpuplan {
namespace {

std::string MonthText(LocalDay d) { return FormatLocalHour(LocalHour{d}).substr(0, 7); }

nlohmann::json RunToJson(const PlanRun& r) {
  const PlanSizing& s = r.sizing;
  nlohmann::json j = {{"id", r.id},
                      {"kind", r.serving ? "serving" : "training"},
                      {"gpu", s.gpu->name},
                      {"gpus", s.gpus},
                      {"layout",
                       {{"tp", s.layout.tp},
                        {"pp", s.layout.pp},
                        {"cp", s.layout.cp},
                        {"ep", s.layout.ep},
                        {"vpp", s.layout.vpp},
                        {"zero", s.layout.zero},
                        {"micro_batch", s.workload.micro_batch},
                        {"recompute", ToString(s.workload.recompute)}}},
                      {"gpu_hours", r.gpu_hours},
                      {"share", r.share},
                      {"billed_by", r.billed_by}};
  if (r.serving) {
    j["requests_per_second_per_replica"] = s.requests_per_second;
    j["gpus_by_hour"] = s.gpus_by_hour;
  } else {
    j["hours"] = s.hours;
    j["tokens_per_second"] = s.tokens_per_second;
    j["start"] = FormatLocalHour(r.start);
    j["end"] = FormatLocalHour(r.end);
    j["interruptible"] = r.interruptible;
    j["continued"] = r.continued;
  }
  return j;
}

nlohmann::json AgainstToJson(const std::optional<PlanComparison>& c) {
  if (!c) {
    return nullptr;
  }
  nlohmann::json months = nlohmann::json::array();
  for (const PlanMonthAgainst& a : c->months) {
    nlohmann::json modes = nlohmann::json::array();
    for (const auto& x : a.modes) {
      modes.push_back({{"mode", x.mode},
                       {"planned_gpu_hours", x.planned_gpu_hours},
                       {"measured_gpu_hours", x.measured_gpu_hours},
                       {"off", OptionalToJson(x.off)},
                       {"off_too_much", x.off_too_much}});
    }
    months.push_back({{"month", MonthText(a.month)},
                      {"modes", modes},
                      {"hours", a.hours},
                      {"whole", a.whole},
                      {"planned_gpu_hours", a.planned_gpu_hours},
                      {"measured_gpu_hours", a.measured_gpu_hours},
                      {"off", OptionalToJson(a.off)},
                      {"off_too_much", a.off_too_much},
                      {"planned_total", a.planned_total},
                      {"measured_optimum", OptionalToJson(a.measured_optimum)},
                      {"planned_mix", a.planned_mix.empty() ? nlohmann::json(nullptr) : nlohmann::json(a.planned_mix)},
                      {"measured_mix", a.mix.empty() ? nlohmann::json(nullptr) : nlohmann::json(a.mix)},
                      {"other_mix", a.other_mix}});
  }
  return {{"db", c->db},
          {"basis", "busy"},
          {"share", c->share},
          {"replan", c->replan},
          {"reasons", c->reasons},
          {"note", c->note.empty() ? nlohmann::json(nullptr) : nlohmann::json(c->note)},
          {"months", months}};
}

}  // namespace

nlohmann::json PlanResultToJson(const PlanResult& r) {
  nlohmann::json months = nlohmann::json::array();
  for (const PlanMonth& m : r.months) {
    nlohmann::json runs = nlohmann::json::array();
    for (const PlanRun& x : m.runs) {
      runs.push_back(RunToJson(x));
    }
    nlohmann::json rentals = nlohmann::json::array();
    for (const PlanCardMonth& c : m.cards) {
      nlohmann::json p = PlanToJson(c.rental, r.currency);
      p["gpu"] = c.gpu->name;
      p["gpu_hours"] = c.usage.TotalGpuHours();
      rentals.push_back(std::move(p));
    }
    months.push_back({{"month", MonthText(m.month)},
                      {"total", m.total},
                      {"cost", CostItemsToJson(m.cost, r.currency)},
                      {"within_budget", OptionalToJson(m.within_budget)},
                      {"peak_gpus", m.peak_gpus},
                      {"runs", runs},
                      {"rentals", rentals}});
  }
  nlohmann::json alternatives = nlohmann::json::array();
  for (const PlanAlternative& a : r.alternatives) {
    alternatives.push_back({{"name", a.name},
                            {"provider", a.provider.empty() ? nlohmann::json(nullptr) : nlohmann::json(a.provider)},
                            {"feasible", a.feasible},
                            {"total", a.feasible ? nlohmann::json(a.total) : nlohmann::json(nullptr)},
                            {"training_hours", a.feasible ? nlohmann::json(a.hours_to_finish) : nlohmann::json(nullptr)},
                            {"gives_up", a.gives_up}});
  }
  nlohmann::json checks = nlohmann::json::array();
  for (const PlanCheck& c : r.checks) {
    checks.push_back({{"gpu", c.gpu},
                      {"gpus_per_instance", c.gpus_per_instance},
                      {"samples_per_second", c.samples_per_second > 0 ? nlohmann::json(c.samples_per_second) : nlohmann::json(nullptr)},
                      {"bytes_per_sample", c.bytes_per_sample > 0 ? nlohmann::json(c.bytes_per_sample) : nlohmann::json(nullptr)},
                      {"command", c.command}});
  }
  return {{"workload", r.workload_file},
          {"offers", r.offers_files},
          {"currency", r.currency},
          {"feasible", r.feasible},
          {"unserved", r.unserved.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.unserved)},
          {"total", r.feasible ? nlohmann::json(r.total) : nlohmann::json(nullptr)},
          {"training_hours", r.hours_to_finish},
          {"budget_per_month", OptionalToJson(r.budget_per_month)},
          {"assignment", r.assignment},
          {"months", months},
          {"alternatives", alternatives},
          {"checks", checks},
          {"accuracy", {{"training", SearchAccuracyToJson(r.training_accuracy)},
                        {"training_moe", SearchAccuracyToJson(r.training_moe_accuracy)},
                        {"serving", SearchAccuracyToJson(r.serving_accuracy)}}},
          {"alerts", r.feasible ? nlohmann::json(PlanAlertsYaml(r)) : nlohmann::json(nullptr)},
          {"against", AgainstToJson(r.against)},
          {"notes", r.notes},
          {"rentals_solved", r.rentals_solved}};
}

}  // namespace gpuplan
