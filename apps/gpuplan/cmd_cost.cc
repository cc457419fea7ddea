// gpuplan cost breakeven | compare | optimize | tco: flags into the requests of cost/requests.h,
// the library runs them, and this file renders the results (JSON through io/cost_json.h).
#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <map>
#include <memory>

#include "catalog/gpu_catalog.h"
#include "cli_options.h"
#include "commands.h"
#include "core/money.h"
#include "cost/cost_options.h"
#include "cost/requests.h"
#include "io/cost_json.h"
#include "read/time_text.h"

namespace gpuplan::cli {
namespace {

std::string Money(double v, const std::string& currency) { return gpuplan::Money{v, currency}.Format(); }

void PrintItems(const CostItems& c, const std::string& cur) {
  std::cout << fmt::format("    reserved terms {:>16}   on-demand {:>16}   spot {:>14}\n", Money(c.reserved, cur),
                           Money(c.on_demand, cur), Money(c.spot, cur));
  std::cout << fmt::format("    stopped fees   {:>16}   re-creation {:>14}   storage+bw {:>15}   total {:>13}\n",
                           Money(c.stopped, cur), Money(c.recreate, cur), Money(c.fixed_fees, cur),
                           Money(c.Total(), cur));
}

void PrintUsage(const UsageTrace& u) {
  std::cout << fmt::format("usage: {} .. {} ({}), {} hours, {:.0f} GPU-hours, peak {:g} GPUs, from {}\n",
                           FormatLocalHour(u.start_hour), FormatLocalHour(u.EndHour()),
                           FormatUtcOffset(u.utc_offset_minutes), u.hours.size(), u.TotalGpuHours(), u.Peak(),
                           u.source);
  if (!u.note.empty()) {
    std::cout << "  " << u.note << "\n";
  }
}

// "1 x nj-monthly 2027-01-01 .. 2027-05-01 (4 terms)": runs of consecutive terms with the same count.
void PrintReservedTerms(const Plan& p) {
  std::map<std::string, std::vector<const ReservedTerm*>> by_offer;
  for (const auto& t : p.reserved_terms) {
    by_offer[t.offer].push_back(&t);
  }
  for (const auto& [id, terms] : by_offer) {
    for (std::size_t i = 0; i < terms.size();) {
      std::size_t j = i;
      while (j + 1 < terms.size() && terms[j + 1]->start == terms[j]->end && terms[j + 1]->instances == terms[i]->instances &&
             terms[j + 1]->after_trace == terms[i]->after_trace) {
        ++j;
      }
      std::cout << fmt::format("  reserve {} x {} from {} to {} ({} term{}){}\n", terms[i]->instances, id,
                               FormatLocalHour(terms[i]->start).substr(0, 10), FormatLocalHour(terms[j]->end).substr(0, 10),
                               j - i + 1, j > i ? "s" : "",
                               terms[i]->after_trace ? ", after the trace: the minimum term" : "");
      i = j + 1;
    }
  }
}

void PrintBreakeven(const BreakevenResult& b) {
  std::cout << fmt::format("month {} ({} h, {})\n", b.month, b.month_hours, FormatUtcOffset(b.offers.utc_offset_minutes));
  std::cout << fmt::format("{:<16} {:<32} {:<32} {:>16}\n", "GPU", "from (pay per use)", "to (pay per term)",
                           "break-even h/mo");
  for (const auto& p : b.pairs) {
    std::cout << fmt::format("{:<16} {:<32} {:<32} {:>16}\n", p.gpu, fmt::format("{} ({})", p.from->id, ToString(p.from->mode)),
                             fmt::format("{} ({})", p.to->id, ToString(p.to->mode)),
                             p.hours_per_month ? fmt::format("{:.1f}", *p.hours_per_month) : p.note);
  }
  for (const auto& p : b.pairs) {
    if (p.hours_per_month && !p.note.empty()) {
      std::cout << fmt::format("  {} vs {}: {}\n", p.from->id, p.to->id, p.note);
    }
  }
  std::cout << "per GPU, fees, granularity and retention included; above the break-even the second one is cheaper\n";
  if (!b.measured) {
    return;
  }
  const MeasuredBreakeven& m = *b.measured;
  PrintUsage(m.usage);
  for (std::size_t k = 0; k < m.levels.size(); ++k) {
    if (k == 16 && m.levels.size() > 17) {  // the JSON has every level
      std::cout << fmt::format("  ... GPUs 17-{} (--json lists each)\n", m.levels.size());
      break;
    }
    std::cout << fmt::format("  GPU {}: busy {:.0f} h/month{}", k + 1, m.levels[k], m.scaled ? " (scaled to 730 h)" : "");
    for (std::size_t i = 0; i < b.pairs.size(); ++i) {
      const auto& p = b.pairs[i];
      if (p.hours_per_month) {  // (pairs that never cross are the same at every level)
        std::cout << fmt::format("; {} vs {}: {}", p.from->id, p.to->id, m.cheaper[i][k]);
      }
    }
    std::cout << "\n";
  }
}

void PrintCompare(const CompareResult& c) {
  PrintUsage(c.usage);
  for (const auto& [mode, p] : c.strategies) {
    std::cout << fmt::format("all {}:{}\n", mode, p.feasible ? "" : " not possible (" + p.solver_status + ")");
    if (p.feasible) {
      PrintReservedTerms(p);
      PrintItems(p.cost, c.currency);
    }
  }
  if (!c.AnyFeasible()) {
    std::cout << "no strategy can serve the usage\n";
  }
}

void PrintOptimize(const OptimizeResult& o, bool spot_for_all) {
  const Plan& best = o.plan;
  const std::string& cur = o.currency;
  PrintUsage(o.usage);
  if (!best.feasible) {
    std::cout << best.solver_status << "\n";
    return;
  }
  std::cout << "cheapest plan (GLPK MILP, " << best.variables << " variables, " << best.integer_variables
            << " integer):\n";
  PrintReservedTerms(best);
  for (const auto& [id, h] : best.on_demand_gpu_hours) {
    std::cout << fmt::format("  on-demand {:.0f} GPU-hours on {}\n", h, id);
  }
  for (const auto& [id, h] : best.spot_gpu_hours) {
    std::cout << fmt::format("  spot {:.0f} GPU-hours of work on {}\n", h, id);
  }
  if (best.deferred_gpu_hours > 0) {
    std::cout << fmt::format("  {:.0f} GPU-hours of deferrable work moved later (night discounts)\n",
                             best.deferred_gpu_hours);
  }
  PrintItems(best.cost, cur);
  for (const auto& [id, h] : best.kept_idle_instance_hours) {
    std::cout << fmt::format("  {:.0f} idle instance-hours of {} kept stopped (cheaper than re-creating)\n", h, id);
  }
  for (const auto& [id, n] : best.releases) {
    std::cout << fmt::format("  {} idle gaps of {} released and re-created\n", n, id);
  }
  if (!best.note.empty()) {
    std::cout << "  " << best.note << "\n";
  }
  for (const auto& [mode, saving] : o.savings) {
    if (saving) {
      std::cout << fmt::format("  vs all {:<10} {:>16}: saves {:.1f}%{}\n", mode, Money(o.pure.at(mode).cost.Total(), cur),
                               100.0 * *saving,
                               mode == "spot" && !spot_for_all
                                   ? " (all-spot also puts steady work on spot; --spot-for-all lets the plan do that)"
                                   : "");
    }
  }
  std::cout << fmt::format("  usage -20%: {}   usage +20%: {}\n", Money(o.usage_minus.cost.Total(), cur),
                           Money(o.usage_plus.cost.Total(), cur));
}

void PrintTco(const TcoJobResult& r) {
  const TcoResult& t = r.tco;
  const std::string& cur = r.currency;
  PrintUsage(r.usage);
  std::cout << fmt::format("over {:g} months: buy {} (capital {} - resale {} + power {} + room {} + operations {} "
                           "+ failures {})\n",
                           t.horizon_months, Money(t.buy_total, cur), Money(t.capital, cur),
                           Money(t.resale_at_horizon, cur), Money(t.power, cur), Money(t.room, cur),
                           Money(t.operations, cur), Money(t.failures, cur));
  std::cout << fmt::format("               rent {} (the optimised plan for this usage)\n",
                           Money(t.rent_plan.cost.Total(), cur));
  std::cout << (t.buy_wins_from_month ? fmt::format("buying has cost less from month {}\n", *t.buy_wins_from_month)
                                      : std::string("buying never catches up within the horizon\n"));
  if (t.breakeven_utilisation) {
    std::cout << fmt::format("buying wins above {:.0f}% utilisation of the bought GPUs\n", 100 * *t.breakeven_utilisation);
  }
}

// Prints `result` as JSON or through `text`.
template <typename Result, typename Text>
void Render(const GlobalOptions& g, const Result& result, nlohmann::json (*to_json)(const Result&), Text text) {
  if (g.json) {
    std::cout << to_json(result).dump(2) << "\n";
  } else {
    text(result);
  }
}

}  // namespace

Runner RegisterCost(CLI::App& app, GlobalOptions& g) {
  struct Requests {
    BreakevenRequest be;
    CompareRequest cmp;
    OptimizeRequest opt;
    TcoRequest tco;
  };
  auto r = std::make_shared<Requests>();
  CLI::App* cost = app.add_subcommand("cost", "billing modes, break-even and the cheapest rental mix");
  cost->require_subcommand(1);

  // Each subcommand's flags from its options table (cost/cost_options.h), then --json.
  auto add = [&g, cost](const char* name, const char* help, const auto& table, auto& request) {
    CLI::App* sub = cost->add_subcommand(name, help);
    AddOptions(sub, table, request);
    sub->add_flag("--json", g.json, "print JSON");
    return sub;
  };
  CLI::App* be = add("breakeven", "hours per month at which two billing modes cost the same", BreakevenOptionTable(), r->be);
  CLI::App* cmp = add("compare", "the cost of every pure strategy for the usage, fees itemised", CompareOptionTable(), r->cmp);
  CLI::App* opt = add("optimize", "the cheapest mix of reserved, on-demand and spot (MILP, GLPK)", OptimizeOptionTable(), r->opt);
  CLI::App* tco = add("tco", "buy versus rent over a horizon, against the optimised rental plan", TcoOptionTable(), r->tco);

  return [r, &g, be, cmp, opt, tco]() -> int {
    // Offers point into the catalog: it outlives every result below.
    const GpuCatalog cat = GpuCatalog::Load((std::filesystem::path(DataDir(g)) / "gpus.yaml").string());
    // The table's checks; an error in the offers file is reported first, as it always was.
    auto check = [&cat](const CLI::App* sub, const auto& table, const auto& request) {
      try {
        CheckGivenFlags(sub, table, request);
      } catch (const InputError&) {
        SelectOffers(request, cat);
        throw;
      }
    };
    check(be, BreakevenOptionTable(), r->be);
    check(cmp, CompareOptionTable(), r->cmp);
    check(opt, OptimizeOptionTable(), r->opt);
    check(tco, TcoOptionTable(), r->tco);
    if (be->parsed()) {
      Render(g, RunBreakeven(r->be, cat), &BreakevenToJson, PrintBreakeven);
      return kExitOk;
    }
    if (cmp->parsed()) {
      const CompareResult c = RunCompare(r->cmp, cat);
      Render(g, c, &CompareToJson, PrintCompare);
      // Negative only when no strategy can serve the usage; the ones that cannot say so.
      return c.AnyFeasible() ? kExitOk : kExitNegative;
    }
    if (tco->parsed()) {
      Render(g, RunTco(r->tco, cat), &TcoToJson, PrintTco);
      return kExitOk;
    }
    const OptimizeResult o = RunOptimize(r->opt, cat);
    Render(g, o, &OptimizeToJson, [&](const OptimizeResult& x) { PrintOptimize(x, r->opt.spot_for_all); });
    return o.plan.feasible ? kExitOk : kExitNegative;
  };
}

}  // namespace gpuplan::cli
