#include "plan/render/plan_markdown.h"

#include <fmt/format.h>

#include <sstream>

#include "format/money.h"
#include "format/numbers.h"
#include "plan/render/fit_text.h"
#include "read/time_text.h"

namespace gpuplan {
namespace {

std::string MonthText(LocalDay d) { return FormatLocalHour(LocalHour{d}).substr(0, 7); }

// A table cell: a | would end it.
std::string Cell(std::string s) {
  std::string out;
  for (char c : s) {
    out += c == '|' ? std::string("\\|") : std::string(1, c);
  }
  return out;
}

}  // namespace

std::string PlanResultToMarkdown(const PlanResult& r) {
  const std::string& cur = r.currency;
  std::string md = fmt::format("# GPU rental plan: {}\n\n", Cell(r.workload_file));
  if (!r.feasible) {
    md += "No plan: " + Cell(r.unserved) + "\n";
    return md;
  }
  md += fmt::format("Total **{}** over {} months", FormatMoney(r.total, cur), r.months.size());
  if (r.budget_per_month) {
    md += fmt::format(" (budget {} a month)", FormatMoney(*r.budget_per_month, cur));
  }
  md += ".\n\n";
  for (const PlanMonth& m : r.months) {
    md += fmt::format("## {}: {}{}\n\n", MonthText(m.month), FormatMoney(m.total, cur),
                      m.within_budget && !*m.within_budget ? " (over budget)" : "");
    md += "| job | card | GPUs | layout | hours | start | share |\n|---|---|---|---|---|---|---|\n";
    for (const PlanRun& x : m.runs) {
      const PlanSizing& s = x.sizing;
      const std::string layout = fmt::format("tp {}, pp {}{}", s.layout.tp, s.layout.pp,
                                             s.layout.zero > 0 ? fmt::format(", ZeRO {}", s.layout.zero) : "");
      if (x.serving) {
        int64_t lo = s.gpus_by_hour[0], hi = s.gpus_by_hour[0];
        for (int64_t g : s.gpus_by_hour) {
          lo = std::min(lo, g);
          hi = std::max(hi, g);
        }
        md += fmt::format("| {} (service) | {} | {} | {} | all day | | {} |\n", Cell(x.id), Cell(s.gpu->name),
                          lo == hi ? std::to_string(lo) : fmt::format("{}-{}", lo, hi), layout, FormatMoney(x.share, cur));
      } else {
        md += fmt::format("| {}{} | {} | {} | {} | {} | {} | {} |\n", Cell(x.id), x.interruptible ? " (spot allowed)" : "",
                          Cell(s.gpu->name), s.gpus, layout, FormatNumber(s.hours, 3), FormatLocalHour(x.start),
                          FormatMoney(x.share, cur));
      }
    }
    const CostItems& c = m.cost;
    md += "\n| item | money |\n|---|---|\n";
    const auto row = [&](const char* name, double v) {
      if (v != 0) {
        md += fmt::format("| {} | {} |\n", name, FormatMoney(v, cur));
      }
    };
    row("reserved terms", c.reserved);
    row("on-demand", c.on_demand);
    row("spot", c.spot);
    row("stopped instances", c.stopped);
    row("re-creation", c.recreate);
    row("storage and bandwidth", c.fixed_fees);
    row("egress", c.egress);
    row("of which add-on fees", c.addons_included);
    row("of which link upgrades", c.link_upgrades_included);
    row("subsidies (paid back)", -c.subsidies);
    md += fmt::format("| **total** | **{}** |\n\n", FormatMoney(m.total, cur));
  }
  if (!r.alternatives.empty()) {
    md += "## Alternatives\n\n| alternative | total | gives up |\n|---|---|---|\n";
    for (const PlanAlternative& a : r.alternatives) {
      md += fmt::format("| {}{} | {} | {} |\n", a.name, a.provider.empty() ? "" : " (" + Cell(a.provider) + ")",
                        a.feasible ? FormatMoney(a.total, cur) : "-", Cell(a.gives_up));
    }
    md += "\n";
  }
  // The time model's accuracy on the cards rented, as the text form prints it (a paragraph a kind).
  if (!r.training_accuracy.empty() || !r.training_moe_accuracy.empty() || !r.serving_accuracy.empty()) {
    std::ostringstream acc;
    PrintSearchAccuracy(acc, r.training_accuracy);
    PrintSearchAccuracy(acc, r.training_moe_accuracy);
    PrintSearchAccuracy(acc, r.serving_accuracy);
    std::istringstream lines(acc.str());
    for (std::string line; std::getline(lines, line);) {
      md += Cell(line) + "\n\n";
    }
  }
  if (!r.checks.empty()) {
    md += "## On delivery\n\n";
    for (const PlanCheck& c : r.checks) {
      md += fmt::format("- {}: `{}`\n", Cell(c.gpu), c.command);
    }
    md += "\n";
  }
  if (r.against) {
    const PlanComparison& c = *r.against;
    md += fmt::format("## Against {} (busy GPU-hours, re-plan beyond {}%)\n\n", Cell(c.db), FormatNumber(100 * c.share, 3));
    md += "| month | hours measured | busy GPU-hours | planned | off |\n|---|---|---|---|---|\n";
    for (const PlanMonthAgainst& a : c.months) {
      md += fmt::format("| {} | {} | {} | {} | {} |\n", MonthText(a.month), a.hours, FormatNumber(a.measured_gpu_hours, 4),
                        FormatNumber(a.planned_gpu_hours, 4), a.off ? fmt::format("{:+.0f}%", 100 * *a.off) : "-");
    }
    md += "\n";
    for (const auto& why : c.reasons) {
      md += "- re-plan: " + Cell(why) + "\n";
    }
    if (!c.note.empty()) {
      md += "- " + Cell(c.note) + "\n";
    }
    md += "\n";
  }
  for (const auto& n : r.notes) {
    md += "- note: " + Cell(n) + "\n";
  }
  return md;
}

}  // namespace gpuplan
