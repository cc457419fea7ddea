// gpuplan cost breakeven | compare | optimize | tco: flags into the requests of cost/requests.h,
// the library runs them, and this file renders the results (JSON through io/cost_json.h).
#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <map>
#include <memory>

#include "catalog/gpu_catalog.h"
#include "commands.h"
#include "core/money.h"
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

// The usage and optimiser options of compare, optimize and tco.
void AddRental(CLI::App* c, RentalRequest& r) {
  c->add_option("--usage", r.usage, "hourly usage CSV, or a gpuplan fit --json result");
  c->add_option_function<double>(
      "--hours-per-month", [&r](const double& h) { r.hours_per_month = h; },
      "hours each GPU is used per month (instead of --usage)");
  c->add_option("--gpus", r.gpus, "GPUs used, with --hours-per-month")->capture_default_str();
  c->add_flag("--spot-for-all", r.spot_for_all, "allow spot for every class of work, not only interruptible");
  c->add_flag("--release-idle", r.release_idle,
              "release every idle on-demand instance (default: keep or release per idle gap, whichever costs less)");
  c->add_option("--extrapolate", r.extrapolate,
                "month | year: the usage is a sample (say one or two measured weeks); repeat its weekly shape to "
                "the whole period");
}

// The options every cost subcommand shares, bound to the request's fields (their defaults);
// a rental job's options (`rental`) come between --gpu and --month.
void AddCommon(CLI::App* c, CostRequest& r, GlobalOptions& g, RentalRequest* rental = nullptr) {
  c->add_option("--offers", r.offers, "offers file (YAML, docs/offers.md)")->required();
  c->add_option("--gpu", r.gpu, "only offers for this GPU");
  if (rental != nullptr) {
    AddRental(c, *rental);
  }
  c->add_option("--month", r.month,
                "calendar month YYYY-MM for --hours-per-month and break-even (default: next month in the offers' "
                "time zone)");
  c->add_flag("--json", g.json, "print JSON");
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

  CLI::App* be = cost->add_subcommand("breakeven", "hours per month at which two billing modes cost the same");
  AddCommon(be, r->be, g);
  be->add_option("--usage", r->be.usage, "a measured usage CSV: says on which side of each break-even it falls");
  be->add_option("--extrapolate", r->be.extrapolate, "month | year: repeat the measured sample's weekly shape");
  CLI::App* cmp = cost->add_subcommand("compare", "the cost of every pure strategy for the usage, fees itemised");
  AddCommon(cmp, r->cmp, g, &r->cmp);
  CLI::App* opt = cost->add_subcommand("optimize", "the cheapest mix of reserved, on-demand and spot (MILP, GLPK)");
  AddCommon(opt, r->opt, g, &r->opt);

  CLI::App* tco = cost->add_subcommand("tco", "buy versus rent over a horizon, against the optimised rental plan");
  AddCommon(tco, r->tco, g, &r->tco);
  OwnershipCosts& own = r->tco.own;
  tco->add_option("--horizon-months", r->tco.horizon_months, "months to compare")->capture_default_str();
  tco->add_option("--buy-gpus", own.gpus, "cards to buy (default: the usage's peak)");
  tco->add_option("--card-price", own.card_price, "per card")->capture_default_str();
  tco->add_option("--server-per-gpu", own.server_per_gpu, "server share per GPU")->capture_default_str();
  tco->add_option("--network-per-gpu", own.network_per_gpu, "network share per GPU")->capture_default_str();
  tco->add_option("--room-per-gpu-month", own.room_per_gpu_month, "rack space and cooling per GPU-month")
      ->capture_default_str();
  tco->add_option("--power-price", own.power_price_kwh, "per kWh")->capture_default_str();
  tco->add_option("--pue", own.pue, "power usage effectiveness")->capture_default_str();
  tco->add_option("--ops-per-month", own.ops_per_month, "operations staff per month")->capture_default_str();
  tco->add_option("--failure-rate", own.failure_rate_per_year, "share of cards replaced per year")
      ->capture_default_str();
  tco->add_option("--depreciation-years", own.depreciation_years, "years to the resale value")->capture_default_str();
  tco->add_option("--resale", own.resale_fraction, "value left after depreciation (fraction)")->capture_default_str();

  return [r, &g, be, cmp, tco]() -> int {
    // Offers point into the catalog: it outlives every result below.
    const GpuCatalog cat = GpuCatalog::Load((std::filesystem::path(DataDir(g)) / "gpus.yaml").string());
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
