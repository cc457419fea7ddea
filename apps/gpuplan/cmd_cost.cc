// gpuplan cost breakeven | compare | optimize: billing modes applied to real usage.
#include <fmt/format.h>

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <map>
#include <optional>
#include <iostream>
#include <nlohmann/json.hpp>

#include "catalog/gpu_catalog.h"
#include "commands.h"
#include "core/error.h"
#include "core/money.h"
#include "cost/billing.h"
#include "cost/calendar.h"
#include "cost/optimizer.h"
#include "cost/tco.h"
#include "read/file_text.h"
#include "read/json_fields.h"
#include "read/time_text.h"

namespace gpuplan::cli {
namespace {

struct CostOptions {
  std::string offers;
  std::string usage;
  double hours_per_month = -1;
  double gpus = 1;
  std::string gpu;
  bool spot_for_all = false;
  bool release_idle = false;
  double horizon_months = 36;
  std::string month;        // --month YYYY-MM for --hours-per-month and breakeven
  std::string extrapolate;  // month | year
  OwnershipCosts own;
};

std::string Money(double v, const std::string& currency) { return gpuplan::Money{v, currency}.Format(); }

// The calendar month --month names, else the next one in the offers' zone.
int64_t MonthStart(const CostOptions& o, int zone) {
  if (o.month.empty()) {
    return NextMonthStart(static_cast<int64_t>(std::time(nullptr)), zone);
  }
  int64_t h = 0;
  if (!ParseYearMonth(o.month, &h)) {
    throw InputError("expected a calendar month YYYY-MM, got '" + o.month + "'", "", 0, "--month");
  }
  return h;
}

std::string MonthName(int64_t month_start) { return FormatLocalHour(month_start).substr(0, 7); }

// Offers point into `cat`, which must outlive them.
OfferSet LoadSelected(const CostOptions& o, const GpuCatalog& cat) {
  if (o.offers.empty()) {
    throw InputError("an offers file is required", "", 0, "--offers");
  }
  OfferSet s = LoadOffers(o.offers, cat);
  if (!o.gpu.empty()) {
    const std::string want = cat.Find(o.gpu).name;
    std::vector<Offer> keep;
    for (auto& off : s.offers) {
      if (off.gpu->name == want) {
        keep.push_back(off);
      }
    }
    if (keep.empty()) {
      throw InputError("no offer in " + o.offers + " is for " + want, "", 0, "--gpu");
    }
    s.offers = std::move(keep);
  }
  return s;
}

UsageTrace LoadUsageAsGiven(const CostOptions& o, int zone) {
  if (!o.usage.empty() && o.hours_per_month >= 0) {
    throw InputError("give either --usage or --hours-per-month", "", 0, "--usage");
  }
  if (o.hours_per_month >= 0) {
    return UsageFromHoursPerMonth(o.hours_per_month, o.gpus, MonthStart(o, zone), zone);
  }
  if (o.usage.empty()) {
    throw InputError("usage is required: --usage FILE (CSV or gpuplan fit --json) or --hours-per-month H", "", 0,
                     "--usage");
  }
  const std::string text = ReadFileText(o.usage);
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && text[first] == '{') {
    const nlohmann::json j = ParseJsonText(text, o.usage);
    const auto* gpus = j.contains("layout") && j["layout"].contains("gpus") ? &j["layout"]["gpus"] : nullptr;
    const auto* hours = j.contains("time") && j["time"].contains("total_hours") ? &j["time"]["total_hours"] : nullptr;
    if (gpus == nullptr || !gpus->is_number() || hours == nullptr || !hours->is_number()) {
      throw InputError("a gpuplan fit --json result with layout.gpus and time.total_hours (run fit with --tokens)",
                       o.usage, 0, "time.total_hours");
    }
    // A job starting at the first hour of the --month (or next month).
    UsageTrace t = UsageFromJob(gpus->get<double>(), hours->get<double>(), MonthStart(o, zone) * 60, zone);
    t.source = o.usage;
    return t;
  }
  return ParseUsageCsv(text, o.usage, zone);
}

UsageTrace LoadUsage(const CostOptions& o, int zone) {
  UsageTrace u = LoadUsageAsGiven(o, zone);
  if (o.extrapolate.empty()) {
    return u;
  }
  if (o.extrapolate != "month" && o.extrapolate != "year") {
    throw InputError("expected month or year, got '" + o.extrapolate + "'", "", 0, "--extrapolate");
  }
  return Extrapolate(u, o.extrapolate == "year" ? TermUnit::kYear : TermUnit::kMonth);
}

nlohmann::json ItemsJson(const CostItems& c, const std::string& currency) {
  return {{"reserved", c.reserved},
          {"on_demand", c.on_demand},
          {"spot", c.spot},
          {"stopped_instances", c.stopped},
          {"recreate", c.recreate},
          {"storage_and_bandwidth", c.fixed_fees},
          {"total", c.Total()},
          {"currency", currency}};
}

nlohmann::json PlanJson(const Plan& p, const std::string& currency) {
  nlohmann::json reserved = nlohmann::json::array();
  for (const auto& [id, n] : p.reserved) {
    reserved.push_back({{"offer", id}, {"instances", n}});
  }
  nlohmann::json terms = nlohmann::json::array();
  for (const auto& t : p.reserved_terms) {
    terms.push_back({{"offer", t.offer},
                     {"start", FormatLocalHour(t.start)},
                     {"end", FormatLocalHour(t.end)},
                     {"instances", t.instances},
                     {"after_trace", t.after_trace}});
  }
  double od = 0, sp = 0;
  for (const auto& [id, h] : p.on_demand_gpu_hours) od += h;
  for (const auto& [id, h] : p.spot_gpu_hours) sp += h;
  return {{"feasible", p.feasible},
          {"total_cost", p.cost.Total()},
          {"currency", currency},
          {"reserved", reserved},
          {"reserved_terms", terms},
          {"on_demand_gpu_hours", od},
          {"on_demand_by_offer", p.on_demand_gpu_hours},
          {"spot_gpu_hours", sp},
          {"spot_by_offer", p.spot_gpu_hours},
          {"deferred_gpu_hours", p.deferred_gpu_hours},
          {"kept_idle_instance_hours", p.kept_idle_instance_hours},
          {"releases", p.releases},
          {"note", p.note},
          {"cost", ItemsJson(p.cost, currency)},
          {"solver", {{"name", "GLPK glp_intopt"}, {"status", p.solver_status}, {"variables", p.variables},
                      {"integer_variables", p.integer_variables}, {"constraints", p.constraints}}}};
}

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

nlohmann::json UsageJson(const UsageTrace& u) {
  return {{"start", FormatLocalHour(u.start_hour)},
          {"end", FormatLocalHour(u.EndHour())},
          {"utc_offset", FormatUtcOffset(u.utc_offset_minutes)},
          {"hours", u.hours.size()},
          {"gpu_hours", u.TotalGpuHours()},
          {"peak_gpus", u.Peak()},
          {"note", u.note}};
}

}  // namespace

Runner RegisterCost(CLI::App& app, GlobalOptions& g) {
  auto o = std::make_shared<CostOptions>();
  CLI::App* cost = app.add_subcommand("cost", "billing modes, break-even and the cheapest rental mix");
  cost->require_subcommand(1);
  auto common = [&](CLI::App* c, bool usage) {
    c->add_option("--offers", o->offers, "offers file (YAML, docs/offers.md)")->required();
    c->add_option("--gpu", o->gpu, "only offers for this GPU");
    if (usage) {
      c->add_option("--usage", o->usage, "hourly usage CSV, or a gpuplan fit --json result");
      c->add_option("--hours-per-month", o->hours_per_month, "hours each GPU is used per month (instead of --usage)");
      c->add_option("--gpus", o->gpus, "GPUs used, with --hours-per-month")->capture_default_str();
      c->add_flag("--spot-for-all", o->spot_for_all, "allow spot for every class of work, not only interruptible");
      c->add_flag("--release-idle", o->release_idle,
                  "release every idle on-demand instance (default: keep or release per idle gap, whichever costs less)");
      c->add_option("--extrapolate", o->extrapolate,
                    "month | year: the usage is a sample (say one or two measured weeks); repeat its weekly shape to "
                    "the whole period");
    }
    c->add_option("--month", o->month,
                  "calendar month YYYY-MM for --hours-per-month and break-even (default: next month in the offers' "
                  "time zone)");
    c->add_flag("--json", g.json, "print JSON");
  };
  CLI::App* be = cost->add_subcommand("breakeven", "hours per month at which two billing modes cost the same");
  common(be, false);
  CLI::App* cmp = cost->add_subcommand("compare", "the cost of every pure strategy for the usage, fees itemised");
  common(cmp, true);
  CLI::App* opt = cost->add_subcommand("optimize", "the cheapest mix of reserved, on-demand and spot (MILP, GLPK)");
  common(opt, true);

  CLI::App* tco = cost->add_subcommand("tco", "buy versus rent over a horizon, against the optimised rental plan");
  common(tco, true);
  tco->add_option("--horizon-months", o->horizon_months, "months to compare")->capture_default_str();
  tco->add_option("--buy-gpus", o->own.gpus, "cards to buy (default: the usage's peak)");
  tco->add_option("--card-price", o->own.card_price, "per card")->capture_default_str();
  tco->add_option("--server-per-gpu", o->own.server_per_gpu, "server share per GPU")->capture_default_str();
  tco->add_option("--network-per-gpu", o->own.network_per_gpu, "network share per GPU")->capture_default_str();
  tco->add_option("--room-per-gpu-month", o->own.room_per_gpu_month, "rack space and cooling per GPU-month")
      ->capture_default_str();
  tco->add_option("--power-price", o->own.power_price_kwh, "per kWh")->capture_default_str();
  tco->add_option("--pue", o->own.pue, "power usage effectiveness")->capture_default_str();
  tco->add_option("--ops-per-month", o->own.ops_per_month, "operations staff per month")->capture_default_str();
  tco->add_option("--failure-rate", o->own.failure_rate_per_year, "share of cards replaced per year")
      ->capture_default_str();
  tco->add_option("--depreciation-years", o->own.depreciation_years, "years to the resale value")->capture_default_str();
  tco->add_option("--resale", o->own.resale_fraction, "value left after depreciation (fraction)")->capture_default_str();

  be->add_option("--usage", o->usage, "a measured usage CSV: says on which side of each break-even it falls");
  be->add_option("--extrapolate", o->extrapolate, "month | year: repeat the measured sample's weekly shape");

  return [o, &g, be, cmp, opt, tco]() -> int {
    const GpuCatalog cat = GpuCatalog::Load((std::filesystem::path(DataDir(g)) / "gpus.yaml").string());
    const OfferSet set = LoadSelected(*o, cat);
    const std::string& cur = set.currency;
    const int zone = set.utc_offset_minutes;
    if (be->parsed()) {
      const int64_t month = MonthStart(*o, zone);
      const auto pairs = Breakeven(set, month);
      std::vector<double> levels;
      bool scaled = false;
      std::optional<UsageTrace> measured;
      if (!o->usage.empty()) {
        measured = LoadUsage(*o, zone);
        levels = LevelHoursPerMonth(*measured, &scaled);
      }
      nlohmann::json j = {{"currency", cur},
                          {"month", MonthName(month)},
                          {"month_hours", AddMonths(month, 1) - month},
                          {"pairs", nlohmann::json::array()},
                          {"series", nlohmann::json::array()}};
      // Which side of a break-even the k-th GPU of the measured trace is on.
      auto side = [&](const BreakevenPair& p, double h) -> std::string {
        if (!p.hours_per_month) {
          return p.note.substr(0, p.note.find(' '));
        }
        return h >= *p.hours_per_month ? p.to->id : p.from->id;
      };
      for (const auto& p : pairs) {
        nlohmann::json measured_side = nlohmann::json::array();
        for (std::size_t k = 0; k < levels.size(); ++k) {
          measured_side.push_back({{"gpu", k + 1}, {"hours_per_month", levels[k]}, {"cheaper", side(p, levels[k])}});
        }
        j["pairs"].push_back({{"measured", measured_side},
                              {"gpu", p.gpu},
                              {"from_mode", ToString(p.from->mode)},
                              {"to_mode", ToString(p.to->mode)},
                              {"from_offer", p.from->id},
                              {"to_offer", p.to->id},
                              {"hours_per_month", p.hours_per_month ? nlohmann::json(*p.hours_per_month) : nlohmann::json(nullptr)},
                              {"note", p.note}});
      }
      for (const auto& off : set.offers) {
        nlohmann::json pts = nlohmann::json::array();
        const int64_t month_hours = AddMonths(month, 1) - month;
        for (int64_t h = 0; h <= month_hours; h += (h + 10 > month_hours && h < month_hours ? month_hours - h : 10)) {
          pts.push_back({{"hours", h}, {"cost_per_gpu", MonthlyCostPerGpu(off, static_cast<double>(h), month)}});
          if (h == month_hours) break;
        }
        j["series"].push_back({{"offer", off.id}, {"mode", ToString(off.mode)}, {"gpu", off.gpu->name}, {"points", pts}});
      }
      if (measured) {
        j["usage"] = {{"start", FormatLocalHour(measured->start_hour)},
                      {"hours", measured->hours.size()},
                      {"note", measured->note},
                      {"scaled_to_average_month", scaled}};
      }
      if (g.json) {
        std::cout << j.dump(2) << "\n";
      } else {
        std::cout << fmt::format("month {} ({} h, {})\n", MonthName(month), AddMonths(month, 1) - month,
                                 FormatUtcOffset(zone));
        std::cout << fmt::format("{:<16} {:<32} {:<32} {:>16}\n", "GPU", "from (pay per use)", "to (pay per term)",
                                 "break-even h/mo");
        for (const auto& p : pairs) {
          std::cout << fmt::format("{:<16} {:<32} {:<32} {:>16}\n", p.gpu,
                                   fmt::format("{} ({})", p.from->id, ToString(p.from->mode)),
                                   fmt::format("{} ({})", p.to->id, ToString(p.to->mode)),
                                   p.hours_per_month ? fmt::format("{:.1f}", *p.hours_per_month) : p.note);
        }
        for (const auto& p : pairs) {
          if (p.hours_per_month && !p.note.empty()) {
            std::cout << fmt::format("  {} vs {}: {}\n", p.from->id, p.to->id, p.note);
          }
        }
        std::cout << "per GPU, fees, granularity and retention included; above the break-even the second one is cheaper\n";
        if (measured) {
          PrintUsage(*measured);
          for (std::size_t k = 0; k < levels.size(); ++k) {
            if (k == 16 && levels.size() > 17) {  // the JSON has every level
              std::cout << fmt::format("  ... GPUs 17-{} (--json lists each)\n", levels.size());
              break;
            }
            std::cout << fmt::format("  GPU {}: busy {:.0f} h/month{}", k + 1, levels[k], scaled ? " (scaled to 730 h)" : "");
            for (const auto& p : pairs) {
              if (p.hours_per_month) {  // (pairs that never cross are the same at every level)
                std::cout << fmt::format("; {} vs {}: {}", p.from->id, p.to->id, side(p, levels[k]));
              }
            }
            std::cout << "\n";
          }
        }
      }
      return kExitOk;
    }
    const UsageTrace usage = LoadUsage(*o, zone);
    OptimizeOptions oo;
    oo.spot_for_all = o->spot_for_all;
    oo.retain_idle = !o->release_idle;
    const auto pure = PureStrategies(set, usage, oo);
    if (cmp->parsed()) {
      nlohmann::json j = {{"currency", cur},
                          {"usage", UsageJson(usage)},
                          {"strategies", nlohmann::json::object()}};
      for (const auto& [mode, p] : pure) {
        j["strategies"][mode] = PlanJson(p, cur);
      }
      if (g.json) {
        std::cout << j.dump(2) << "\n";
      } else {
        PrintUsage(usage);
        for (const auto& [mode, p] : pure) {
          std::cout << fmt::format("all {}:{}\n", mode, p.feasible ? "" : " not possible (" + p.solver_status + ")");
            if (p.feasible) {
            PrintReservedTerms(p);
            PrintItems(p.cost, cur);
          }
        }
      }
      // Negative only when no strategy can serve the usage; the ones that cannot say so above.
      const bool any = std::any_of(pure.begin(), pure.end(), [](const auto& kv) { return kv.second.feasible; });
      if (!any && !g.json) {
        std::cout << "no strategy can serve the usage\n";
      }
      return any ? kExitOk : kExitNegative;
    }
    if (tco->parsed()) {
      for (const auto& [v, field] : {std::pair{o->own.card_price, "--card-price"}, std::pair{o->own.pue, "--pue"},
                                     std::pair{o->own.depreciation_years, "--depreciation-years"}}) {
        if (!(v > 0)) {
          throw InputError("must be positive", "", 0, field);
        }
      }
      if (o->own.resale_fraction < 0 || o->own.resale_fraction > 1) {
        throw InputError("must be between 0 and 1", "", 0, "--resale");
      }
      const TcoResult t = BuyVersusRent(set, usage, o->own, o->horizon_months, oo);
      nlohmann::json months = nlohmann::json::array();
      for (const auto& m : t.months) {
        months.push_back({{"month", m.month}, {"buy", m.buy_cumulative}, {"rent", m.rent_cumulative}});
      }
      nlohmann::json jt = {
          {"currency", cur},
          {"horizon_months", t.horizon_months},
          {"buy",
           {{"total", t.buy_total}, {"capital", t.capital}, {"resale_at_horizon", t.resale_at_horizon},
            {"power", t.power}, {"room_and_cooling", t.room}, {"operations", t.operations}, {"failures", t.failures}}},
          {"rent", PlanJson(t.rent_plan, cur)},
          {"cheaper", t.buy_total < t.rent_total ? "buy" : "rent"},
          {"buy_wins_from_month", t.buy_wins_from_month ? nlohmann::json(*t.buy_wins_from_month) : nlohmann::json(nullptr)},
          {"breakeven_utilisation",
           t.breakeven_utilisation ? nlohmann::json(*t.breakeven_utilisation) : nlohmann::json(nullptr)},
          {"months", months}};
      if (g.json) {
        std::cout << jt.dump(2) << "\n";
      } else {
        PrintUsage(usage);
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
          std::cout << fmt::format("buying wins above {:.0f}% utilisation of the bought GPUs\n",
                                   100 * *t.breakeven_utilisation);
        }
      }
      return kExitOk;
    }
    const Plan best = OptimizeRental(set, usage, oo);
    nlohmann::json j = PlanJson(best, cur);
    j["usage"] = UsageJson(usage);
    j["pure_strategies"] = nlohmann::json::object();
    j["savings"] = nlohmann::json::object();
    for (const auto& [mode, p] : pure) {
      if (p.feasible) {
        j["pure_strategies"][mode] = p.cost.Total();
        j["savings"][mode] = best.feasible && p.cost.Total() > 0 ? nlohmann::json(1.0 - best.cost.Total() / p.cost.Total())
                                                                 : nlohmann::json(nullptr);
      }
    }
    j["sensitivity"] = nlohmann::json::object();
    for (double f : {0.8, 1.2}) {
      const Plan s = OptimizeRental(set, ScaleUsage(usage, f), oo);
      nlohmann::json r = nlohmann::json::array();
      for (const auto& [id, n] : s.reserved) {
        r.push_back({{"offer", id}, {"instances", n}});
      }
      j["sensitivity"][f < 1 ? "usage_minus_20pct" : "usage_plus_20pct"] = {{"total_cost", s.cost.Total()},
                                                                            {"reserved", r}};
    }
    if (g.json) {
      std::cout << j.dump(2) << "\n";
    } else {
      PrintUsage(usage);
      if (!best.feasible) {
        std::cout << best.solver_status << "\n";
        return kExitNegative;
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
      for (const auto& [mode, p] : pure) {
        if (p.feasible && p.cost.Total() > 0) {
          std::cout << fmt::format("  vs all {:<10} {:>16}: saves {:.1f}%{}\n", mode, Money(p.cost.Total(), cur),
                                   100.0 * (1.0 - best.cost.Total() / p.cost.Total()),
                                   mode == "spot" && !o->spot_for_all
                                       ? " (all-spot also puts steady work on spot; --spot-for-all lets the plan do that)"
                                       : "");
        }
      }
      std::cout << fmt::format("  usage -20%: {}   usage +20%: {}\n",
                               Money(j["sensitivity"]["usage_minus_20pct"]["total_cost"].get<double>(), cur),
                               Money(j["sensitivity"]["usage_plus_20pct"]["total_cost"].get<double>(), cur));
    }
    return best.feasible ? kExitOk : kExitNegative;
  };
}

}  // namespace gpuplan::cli
