#include "plan/render/plan_text.h"

#include <fmt/format.h>

#include "cost/render/cost_text.h"
#include "format/money.h"
#include "format/numbers.h"
#include "format/text_lang.h"
#include "plan/render/fit_text.h"
#include "read/time_text.h"

namespace gpuplan {
namespace {

std::string MonthText(LocalDay d) { return FormatLocalHour(LocalHour{d}).substr(0, 7); }

std::string LayoutText(const PlanSizing& s) {
  std::string t = fmt::format("tp {}, pp {}", s.layout.tp, s.layout.pp);
  if (s.layout.cp > 1) t += fmt::format(", cp {}", s.layout.cp);
  if (s.layout.zero > 0) t += fmt::format(", ZeRO {}", s.layout.zero);
  return t;
}

// "monthly + on_demand", in the text's language.
std::string Modes(const std::vector<std::string>& modes) {
  std::string out;
  for (const auto& m : modes) {
    out += (out.empty() ? "" : " + ") + Say("mode." + m, m);
  }
  return out;
}

// " (billed: monthly + on_demand)": the modes of the run's card pool that month.
std::string Billed(const PlanRun& x) {
  return x.billed_by.empty() ? std::string()
                             : (TextLanguage() == Lang::kZh ? "" : " ") + SayFormat("cli.plan.billed", "(billed: {0})", {Modes(x.billed_by)});
}

}  // namespace

void PlanResultToText(std::ostream& os, const PlanResult& r) {
  const std::string& cur = r.currency;
  if (!r.feasible) {
    os << SayFormat("cli.plan.none", "no plan: {0}", {SayMessage(r.unserved)}) << "\n";
    for (const auto& n : r.notes) {
      os << "  " << SayMessage(n) << "\n";
    }
    return;
  }
  for (const PlanMonth& m : r.months) {
    os << SayFormat("cli.plan.month", "{0}: {1}", {MonthText(m.month), FormatMoney(m.total, cur)});
    if (m.within_budget && !*m.within_budget) {
      os << "  " << SayFormat("cli.plan.over_budget", "over the budget of {0}", {FormatMoney(*r.budget_per_month, cur)});
    }
    os << "\n";
    for (const PlanRun& x : m.runs) {
      const PlanSizing& s = x.sizing;
      if (x.serving) {
        int64_t lo = s.gpus_by_hour[0], hi = s.gpus_by_hour[0];
        for (int64_t g : s.gpus_by_hour) {
          lo = std::min(lo, g);
          hi = std::max(hi, g);
        }
        os << "  "
           << (lo == hi ? SayFormat("cli.plan.service_flat", "{0}: {1} x {2} all day ({3} per replica, {4}), about {5}",
                                    {x.id, std::to_string(lo), s.gpu->name, std::to_string(s.gpus), LayoutText(s),
                                     FormatMoney(x.share, cur)})
                        : SayFormat("cli.plan.service",
                                    "{0}: {1} to {2} x {3} over the day ({4} per replica, {5}), about {6}",
                                    {x.id, std::to_string(lo), std::to_string(hi), s.gpu->name, std::to_string(s.gpus),
                                     LayoutText(s), FormatMoney(x.share, cur)}))
           << Billed(x) << "\n";
      } else {
        os << "  "
           << SayFormat("cli.plan.job", "{0}: {1} x {2} ({3}), {4} h from {5}{6}, about {7}",
                        {x.id, std::to_string(s.gpus), s.gpu->name, LayoutText(s), FormatNumber(s.hours, 3),
                         FormatLocalHour(x.start),
                         x.interruptible ? Say("cli.plan.interruptible", ", may run on spot") : std::string(),
                         FormatMoney(x.share, cur)})
           << Billed(x) << "\n";
      }
    }
    for (const PlanCardMonth& c : m.cards) {
      os << "  " << SayFormat("cli.plan.rent", "rent {0}:", {c.gpu->name}) << "\n";
      RentalToText(os, c.rental, cur);
    }
  }
  os << SayFormat("cli.plan.total", "total {0} over {1} months", {FormatMoney(r.total, cur), std::to_string(r.months.size())})
     << "\n";
  for (const PlanAlternative& a : r.alternatives) {
    if (a.name == "fastest") {
      os << "  "
         << (a.feasible ? SayFormat("cli.plan.alt_fastest", "fastest to finish: {0} ({1})",
                                    {FormatMoney(a.total, cur), SayMessage(a.gives_up)})
                        : SayFormat("cli.plan.alt_fastest_none", "fastest to finish: none ({0})", {SayMessage(a.gives_up)}))
         << "\n";
    } else {
      os << "  "
         << (a.feasible ? SayFormat("cli.plan.alt_provider", "one provider, {0}: {1} ({2})",
                                    {a.provider, FormatMoney(a.total, cur), SayMessage(a.gives_up)})
                        : SayFormat("cli.plan.alt_provider_none", "one provider: none ({0})", {SayMessage(a.gives_up)}))
         << "\n";
    }
  }
  // The hours and sizes rest on the time model: how far it came from published runs on these cards.
  PrintSearchAccuracy(os, r.training_accuracy);
  PrintSearchAccuracy(os, r.training_moe_accuracy);
  PrintSearchAccuracy(os, r.serving_accuracy);
  for (const PlanCheck& c : r.checks) {
    os << SayFormat("cli.plan.check", "on delivery of {0}: {1}", {c.gpu, c.command}) << "\n";
  }
  if (r.against) {
    const PlanComparison& c = *r.against;
    os << SayFormat("cli.plan.against", "against {0} (busy GPU-hours; re-plan beyond {1}% either way):",
                    {c.db, FormatNumber(100 * c.share, 3)})
       << "\n";
    for (const PlanMonthAgainst& a : c.months) {
      os << "  "
         << SayFormat("cli.plan.against_month", "{0}, {1} h measured: {2} GPU-hours busy, {3} planned ({4})",
                      {MonthText(a.month), std::to_string(a.hours), FormatNumber(a.measured_gpu_hours, 4),
                       FormatNumber(a.planned_gpu_hours, 4),
                       a.off ? fmt::format("{:+.0f}%", 100 * *a.off) : std::string("-")})
         << "\n";
      for (const auto& x : a.modes) {
        os << "    "
           << SayFormat("cli.plan.against_mode", "{0}: {1} GPU-hours for the use measured, {2} planned",
                        {Say("mode." + x.mode, x.mode), FormatNumber(x.measured_gpu_hours, 4),
                         FormatNumber(x.planned_gpu_hours, 4)})
           << "\n";
      }
    }
    if (!c.note.empty()) {
      os << "  " << SayMessage(c.note) << "\n";
    }
    if (c.replan) {
      for (const auto& why : c.reasons) {
        os << SayFormat("cli.plan.replan", "re-plan: {0}", {SayMessage(why)}) << "\n";
      }
    } else if (!c.months.empty()) {
      os << Say("cli.plan.no_replan", "the measured use is as planned: no need to re-plan") << "\n";
    }
  }
  for (const auto& n : r.notes) {
    os << SayFormat("cli.plan.note", "note: {0}", {SayMessage(n)}) << "\n";
  }
}

}  // namespace gpuplan
