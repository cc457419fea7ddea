// Text rendering of the cost jobs' results (cost/requests.h): what `gpuplan cost ...` prints
// without --json.
#include "cost/render/cost_text.h"

#include <fmt/format.h>

#include <map>
#include <string>
#include <vector>

#include "format/money.h"
#include "format/table.h"
#include "format/text_lang.h"
#include "read/time_text.h"

namespace gpuplan {
namespace {

void PrintItems(std::ostream& os, const CostItems& c, const std::string& cur) {
  os << "    "
     << SayMessage(fmt::format("reserved terms {:>16}   on-demand {:>16}   spot {:>14}", FormatMoney(c.reserved, cur),
                               FormatMoney(c.on_demand, cur), FormatMoney(c.spot, cur)))
     << "\n";
  os << "    "
     << SayMessage(fmt::format("stopped fees   {:>16}   re-creation {:>14}   storage+bw {:>15}   total {:>13}",
                               FormatMoney(c.stopped, cur), FormatMoney(c.recreate, cur), FormatMoney(c.fixed_fees, cur),
                               FormatMoney(c.Total(), cur)))
     << "\n";
  if (c.subsidies > 0.005) {
    os << "    " << SayMessage(fmt::format("subsidies and vouchers -{} (already taken off the total)", FormatMoney(c.subsidies, cur)))
       << "\n";
  }
  if (c.egress > 0.005) {
    os << "    " << SayMessage(fmt::format("egress {} (in the total)", FormatMoney(c.egress, cur))) << "\n";
  }
  if (c.link_upgrades_included > 0.005) {
    os << "    "
       << SayMessage(fmt::format("link upgrades {} (in the total)", FormatMoney(c.link_upgrades_included, cur)))
       << "\n";
  }
}

// What a required link speed (--link-gbps) bought and left out.
void PrintLink(std::ostream& os, const std::optional<LinkRequirement>& link, const std::string& cur) {
  if (!link) {
    return;
  }
  for (const auto& b : link->bought) {
    os << SayMessage(fmt::format("link of at least {:g} Gbit/s: {} is upgraded from {:g} to {:g} Gbit/s at {} per "
                                 "instance and month",
                                 link->gbps, b.offer, b.from_gbps, b.gbps, FormatMoney(b.price_per_month, cur)))
       << "\n";
  }
  for (const auto& l : link->left_out) {
    os << SayMessage(fmt::format("link of at least {:g} Gbit/s: {} is left out: {}", link->gbps, l.offer,
                                 SayMessage(l.why)))
       << "\n";
  }
}

void PrintUsage(std::ostream& os, const UsageTrace& u) {
  os << fmt::format("{}: {} .. {} ({}), {} {}, {:.0f} {}, {} {}, {} {}\n", Say("cost.text.usage", "usage"),
                    FormatLocalHour(u.start_hour), FormatLocalHour(u.EndHour()), u.zone.Name(),
                    u.hours.size(), Say("cost.text.hours", "hours"), u.TotalGpuHours(),
                    Say("cost.text.gpu_hours", "GPU-hours"), Say("cost.text.peak", "peak"),
                    SayMessage(fmt::format("{:g} GPUs", u.Peak())), Say("cost.text.from", "from"),
                    SayMessage(u.source));
  if (!u.note.empty()) {
    os << "  " << SayMessage(u.note) << "\n";
  }
}

// "1 x nj-monthly 2027-01-01 .. 2027-05-01 (4 terms)": runs of consecutive terms with the same count.
void PrintReservedTerms(std::ostream& os, const Plan& p) {
  std::map<std::string, std::vector<const ReservedTerm*>> by_offer;
  for (const auto& t : p.reserved_terms) {
    by_offer[t.offer].push_back(&t);
  }
  for (const auto& [id, terms] : by_offer) {
    for (std::size_t i = 0; i < terms.size();) {
      std::size_t j = i;
      while (j + 1 < terms.size() && terms[j + 1]->start == terms[j]->end &&
             terms[j + 1]->instances == terms[i]->instances && terms[j + 1]->after_trace == terms[i]->after_trace) {
        ++j;
      }
      os << "  "
         << SayMessage(fmt::format("reserve {} x {} from {} to {} ({} term{}){}", terms[i]->instances, id,
                                   FormatLocalHour(terms[i]->start).substr(0, 10),
                                   FormatLocalHour(terms[j]->end).substr(0, 10), j - i + 1, j > i ? "s" : "",
                                   terms[i]->after_trace ? ", after the trace: the minimum term" : ""))
         << "\n";
      i = j + 1;
    }
  }
}

}  // namespace

void BreakevenToText(std::ostream& os, const BreakevenResult& b) {
  os << SayMessage(fmt::format("month {} ({} h, {})", b.month, b.month_hours,
                               b.offers.zone.Name()))
     << "\n";
  const Table table({{"GPU", 16},
                     {SayMessage("from (cheaper little used)"), 32},
                     {SayMessage("to (cheaper above it)"), 32},
                     {SayMessage("break-even h/mo"), 16, Align::kRight}});
  table.PrintHeader(os);
  for (const auto& p : b.pairs) {
    table.PrintRow(os, {p.gpu, fmt::format("{} ({})", p.from->id, Say(std::string("mode.") + ToString(p.from->mode), ToString(p.from->mode))),
                        fmt::format("{} ({})", p.to->id, Say(std::string("mode.") + ToString(p.to->mode), ToString(p.to->mode))),
                        p.hours_per_month ? fmt::format("{:.1f}", *p.hours_per_month) : SayMessage(p.note)});
  }
  for (const auto& p : b.pairs) {
    if (p.hours_per_month && !p.note.empty()) {
      os << "  " << SayMessage(fmt::format("{} vs {}: {}", p.from->id, p.to->id, p.note)) << "\n";
    }
  }
  os << SayMessage("per GPU, fees, granularity and retention included; above the break-even the second one is cheaper")
     << "\n";
  for (const auto& n : b.notes) {
    os << Say("cli.note", "note: ") << SayMessage(n) << "\n";
  }
  if (!b.measured) {
    return;
  }
  const MeasuredBreakeven& m = *b.measured;
  PrintUsage(os, m.usage);
  for (std::size_t k = 0; k < m.levels.size(); ++k) {
    if (k == 16 && m.levels.size() > 17) {  // the JSON has every level
      os << "  " << SayMessage(fmt::format("... GPUs 17-{} (--json lists each)", m.levels.size())) << "\n";
      break;
    }
    os << "  "
       << (m.scaled ? SayMessage(fmt::format("GPU {}: busy {:.0f} h/month (the trace's average over a {}-hour month)",
                                             k + 1, m.levels[k], b.month_hours))
                    : SayMessage(fmt::format("GPU {}: busy {:.0f} h/month", k + 1, m.levels[k])));
    for (std::size_t i = 0; i < b.pairs.size(); ++i) {
      const auto& p = b.pairs[i];
      if (p.hours_per_month) {  // (pairs that never cross are the same at every level)
        os << SayMessage("; ") << SayMessage(fmt::format("{} vs {}: cheaper {}", p.from->id, p.to->id, m.cheaper[i][k]));
      }
    }
    os << "\n";
  }
}

void CompareToText(std::ostream& os, const CompareResult& c) {
  PrintUsage(os, c.usage);
  PrintLink(os, c.link, c.currency);
  if (!c.by.empty()) {
    // Each group's best plan, cheapest first, every fee on its own line.
    int rank = 0;
    for (const auto& g : c.groups) {
      const Plan& p = g.plan;
      if (!p.feasible) {
        os << "-  " << g.key << ": " << Say("cost.text.not_possible", "not possible") << " ("
           << SayMessage(p.solver_status) << ")\n";
        continue;
      }
      os << fmt::format("{}. {}: {}\n", ++rank, g.key, FormatMoney(p.cost.Total(), c.currency));
      PrintReservedTerms(os, p);
      const std::pair<const char*, double> lines[] = {{"reserved terms", p.cost.reserved},
                                                      {"on-demand", p.cost.on_demand},
                                                      {"spot (rework included)", p.cost.spot},
                                                      {"of these, image and add-on fees", p.cost.addons_included},
                                                      {"stopped instances", p.cost.stopped},
                                                      {"re-creation", p.cost.recreate},
                                                      {"storage and bandwidth", p.cost.fixed_fees},
                                                      {"of these, link upgrades", p.cost.link_upgrades_included},
                                                      {"egress", p.cost.egress},
                                                      {"subsidies and vouchers (taken off)", p.cost.subsidies}};
      for (const auto& [what, amount] : lines) {
        if (amount > 0.005) {
          os << fmt::format("     {:<34} {:>16}\n", SayMessage(what), FormatMoney(amount, c.currency));
        }
      }
    }
    if (!c.AnyFeasible()) {
      os << Say("cost.text.none_serves", "no strategy can serve the usage") << "\n";
    }
    return;
  }
  for (const auto& [mode, p] : c.strategies) {
    os << fmt::format("{} {}:{}\n", Say("cost.text.all", "all"), Say("mode." + mode, mode),
                      p.feasible ? "" : " " + Say("cost.text.not_possible", "not possible") + " (" + SayMessage(p.solver_status) + ")");
    if (p.feasible) {
      PrintReservedTerms(os, p);
      PrintItems(os, p.cost, c.currency);
    }
  }
  if (!c.AnyFeasible()) {
    os << Say("cost.text.none_serves", "no strategy can serve the usage") << "\n";
  }
}

void RentalToText(std::ostream& os, const Plan& best, const std::string& cur) {
  PrintReservedTerms(os, best);
  // "1 GPU-hour", "2 GPU-hours": the count as printed decides.
  const auto hours = [](double h) { return fmt::format("{:.0f}", h) == "1" ? "GPU-hour" : "GPU-hours"; };
  for (const auto& [id, h] : best.on_demand_gpu_hours) {
    os << "  " << SayMessage(fmt::format("on-demand {:.0f} {} on {}", h, hours(h), id)) << "\n";
  }
  for (const auto& [id, h] : best.spot_gpu_hours) {
    os << "  " << SayMessage(fmt::format("spot {:.0f} {} of work on {}", h, hours(h), id)) << "\n";
  }
  if (best.deferred_gpu_hours > 0) {
    std::string line = fmt::format("{:.0f} {} of deferrable work moved later (night discounts)",
                                   best.deferred_gpu_hours, hours(best.deferred_gpu_hours));
    if (best.max_gpus) {
      line += fmt::format(", never more than {:g} GPUs at once", *best.max_gpus);
    }
    os << "  " << SayMessage(line) << "\n";
  }
  PrintItems(os, best.cost, cur);
  // Idle instances kept stopped matter only when stopping is billed (billing from creation or start).
  for (const auto& [id, h] : best.kept_idle_instance_hours) {
    if (best.cost.stopped > 0) {
      os << "  " << SayMessage(fmt::format("{:.0f} idle instance-hours of {} kept stopped (cheaper than re-creating)", h, id))
         << "\n";
    }
  }
  for (const auto& [id, n] : best.releases) {
    os << "  " << SayMessage(fmt::format("{} idle gaps of {} released and re-created", n, id)) << "\n";
  }
  if (!best.note.empty()) {
    os << "  " << SayMessage(best.note) << "\n";
  }
}

void OptimizeToText(std::ostream& os, const OptimizeResult& o, bool spot_for_all) {
  const Plan& best = o.plan;
  const std::string& cur = o.currency;
  PrintUsage(os, o.usage);
  PrintLink(os, o.link, o.currency);
  if (!best.feasible) {
    os << SayMessage(best.solver_status) << "\n";
    return;
  }
  os << Say("cost.text.cheapest", "cheapest plan") << " "
     << SayMessage(fmt::format("(GLPK MILP, {} variables, {} integer):", best.variables, best.integer_variables)) << "\n";
  RentalToText(os, best, cur);
  for (const auto& [mode, saving] : o.savings) {
    if (saving) {
      os << "  "
         << SayMessage(fmt::format("vs all {:<10} {:>16}: saves {:.1f}%{}", Say("mode." + mode, mode),
                                   FormatMoney(o.pure.at(mode).cost.Total(), cur), 100.0 * *saving,
                                   mode == "spot" && !spot_for_all
                                       ? " (all-spot also puts steady work on spot; --spot-for-all lets the plan do that)"
                                       : ""))
         << "\n";
    }
  }
  os << "  "
     << SayMessage(fmt::format("usage -20%: {}   usage +20%: {}", FormatMoney(o.usage_minus.cost.Total(), cur),
                               FormatMoney(o.usage_plus.cost.Total(), cur)))
     << "\n";
}

void TcoToText(std::ostream& os, const TcoJobResult& r) {
  const TcoResult& t = r.tco;
  const std::string& cur = r.currency;
  PrintUsage(os, r.usage);
  PrintLink(os, r.link, r.currency);
  os << SayMessage(fmt::format("buy {:g} x {}{}", t.gpus_bought, t.buy_gpu,
                               t.speed_ratio != 1.0
                                   ? fmt::format(", each doing {:.3g} of a rented card's work per hour", t.speed_ratio)
                                   : std::string()))
     << "\n";
  if (!r.speed_basis.empty() && r.speed_basis != "--speed-ratio") {
    os << "  " << SayMessage(r.speed_basis) << "\n";
  }
  if (t.peak_rent > 0) {
    os << SayMessage(fmt::format("the demand above what they do is rented: {} over the horizon",
                                 FormatMoney(t.peak_rent, cur)))
       << "\n";
  }
  os << SayMessage(fmt::format("over {:g} months: buy {} (capital {} - resale {} + power {} + room {} + operations {} "
                               "+ failures {}{})",
                               t.horizon_months, FormatMoney(t.buy_total, cur), FormatMoney(t.capital, cur),
                               FormatMoney(t.resale_at_horizon, cur), FormatMoney(t.power, cur), FormatMoney(t.room, cur),
                               FormatMoney(t.operations, cur), FormatMoney(t.failures, cur),
                               t.peak_rent > 0 ? " + rented peaks " + FormatMoney(t.peak_rent, cur) : std::string()))
     << "\n";
  os << "               "
     << SayMessage(fmt::format("rent {} (the optimised plan for this usage)", FormatMoney(t.rent_plan.cost.Total(), cur)))
     << "\n";
  os << SayMessage(t.buy_wins_from_month ? fmt::format("buying has cost less from month {}", *t.buy_wins_from_month)
                                         : std::string("buying never catches up within the horizon"))
     << "\n";
  if (t.breakeven_utilisation) {
    os << SayMessage(fmt::format("buying wins above {:.0f}% utilisation of the bought GPUs", 100 * *t.breakeven_utilisation))
       << "\n";
  }
}

}  // namespace gpuplan
