// gpuplan cost breakeven | compare | optimize: billing modes applied to real usage.
#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "catalog/gpu_catalog.h"
#include "catalog/json_source.h"
#include "commands.h"
#include "core/error.h"
#include "cost/billing.h"
#include "cost/optimizer.h"
#include "cost/tco.h"

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
  OwnershipCosts own;
};

std::string Money(double v, const std::string& currency) {
  const auto n = static_cast<int64_t>(std::llround(v));
  std::string digits = std::to_string(n < 0 ? -n : n);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) {
      out += ',';
    }
    out += digits[i];
  }
  return (n < 0 ? "-" : "") + out + " " + currency;
}

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

UsageTrace LoadUsage(const CostOptions& o) {
  if (!o.usage.empty() && o.hours_per_month >= 0) {
    throw InputError("give either --usage or --hours-per-month", "", 0, "--usage");
  }
  if (o.hours_per_month >= 0) {
    return UsageFromHoursPerMonth(o.hours_per_month, o.gpus);
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
    UsageTrace t = UsageFromJob(gpus->get<double>(), hours->get<double>());
    t.source = o.usage;
    return t;
  }
  return ParseUsageCsv(text, o.usage);
}

nlohmann::json ItemsJson(const CostItems& c, const std::string& currency) {
  return {{"reserved", c.reserved},   {"on_demand", c.on_demand},       {"spot", c.spot},
          {"stopped_instances", c.stopped}, {"storage_and_bandwidth", c.fixed_fees}, {"total", c.Total()},
          {"currency", currency}};
}

nlohmann::json PlanJson(const Plan& p, const std::string& currency) {
  nlohmann::json reserved = nlohmann::json::array();
  for (const auto& [id, n] : p.reserved) {
    reserved.push_back({{"offer", id}, {"instances", n}});
  }
  double od = 0, sp = 0;
  for (const auto& [id, h] : p.on_demand_gpu_hours) od += h;
  for (const auto& [id, h] : p.spot_gpu_hours) sp += h;
  return {{"feasible", p.feasible},
          {"total_cost", p.cost.Total()},
          {"currency", currency},
          {"reserved", reserved},
          {"on_demand_gpu_hours", od},
          {"on_demand_by_offer", p.on_demand_gpu_hours},
          {"spot_gpu_hours", sp},
          {"spot_by_offer", p.spot_gpu_hours},
          {"deferred_gpu_hours", p.deferred_gpu_hours},
          {"cost", ItemsJson(p.cost, currency)},
          {"solver", {{"name", "GLPK glp_intopt"}, {"status", p.solver_status}, {"variables", p.variables},
                      {"integer_variables", p.integer_variables}, {"constraints", p.constraints}}}};
}

void PrintItems(const CostItems& c, const std::string& cur) {
  std::cout << fmt::format("    reserved terms {:>16}   on-demand {:>16}   spot {:>14}\n", Money(c.reserved, cur),
                           Money(c.on_demand, cur), Money(c.spot, cur));
  std::cout << fmt::format("    stopped fees   {:>16}   storage+bw {:>15}   total {:>13}\n", Money(c.stopped, cur),
                           Money(c.fixed_fees, cur), Money(c.Total(), cur));
}

void PrintUsage(const UsageTrace& u) {
  std::cout << fmt::format("usage: {} hours ({:.1f} months) from {}, {:.0f} GPU-hours, peak {:g} GPUs\n",
                           u.hours.size(), static_cast<double>(u.hours.size()) / kHoursPerMonth,
                           u.source, u.TotalGpuHours(), u.Peak());
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
      c->add_flag("--release-idle", o->release_idle, "release on-demand instances when idle (no retention fee)");
    }
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

  return [o, &g, be, cmp, opt, tco]() -> int {
    const GpuCatalog cat = GpuCatalog::Load((std::filesystem::path(DataDir(g)) / "gpus.yaml").string());
    const OfferSet set = LoadSelected(*o, cat);
    const std::string& cur = set.currency;
    if (be->parsed()) {
      const auto pairs = Breakeven(set);
      nlohmann::json j = {{"currency", cur}, {"pairs", nlohmann::json::array()}, {"series", nlohmann::json::array()}};
      for (const auto& p : pairs) {
        j["pairs"].push_back({{"gpu", p.gpu},
                              {"from_mode", ToString(p.from->mode)},
                              {"to_mode", ToString(p.to->mode)},
                              {"from_offer", p.from->id},
                              {"to_offer", p.to->id},
                              {"hours_per_month", p.hours_per_month ? nlohmann::json(*p.hours_per_month) : nlohmann::json(nullptr)},
                              {"note", p.note}});
      }
      for (const auto& off : set.offers) {
        nlohmann::json pts = nlohmann::json::array();
        for (int h = 0; h <= 730; h += 10) {
          pts.push_back({{"hours", h}, {"cost_per_gpu", MonthlyCostPerGpu(off, h)}});
        }
        j["series"].push_back({{"offer", off.id}, {"mode", ToString(off.mode)}, {"gpu", off.gpu->name}, {"points", pts}});
      }
      if (g.json) {
        std::cout << j.dump(2) << "\n";
      } else {
        std::cout << fmt::format("{:<22} {:<26} {:<26} {:>16}\n", "GPU", "from (pay per use)", "to (pay per term)",
                                 "break-even h/mo");
        for (const auto& p : pairs) {
          std::cout << fmt::format("{:<22} {:<26} {:<26} {:>16}\n", p.gpu,
                                   fmt::format("{} ({})", p.from->id, ToString(p.from->mode)),
                                   fmt::format("{} ({})", p.to->id, ToString(p.to->mode)),
                                   p.hours_per_month ? fmt::format("{:.1f}", *p.hours_per_month) : p.note);
        }
        std::cout << "per GPU, fees, granularity and retention included; above the break-even the second one is cheaper\n";
      }
      return kExitOk;
    }
    const UsageTrace usage = LoadUsage(*o);
    OptimizeOptions oo;
    oo.spot_for_all = o->spot_for_all;
    oo.retain_idle = !o->release_idle;
    const auto pure = PureStrategies(set, usage, oo);
    if (cmp->parsed()) {
      nlohmann::json j = {{"currency", cur},
                          {"usage", {{"hours", usage.hours.size()}, {"gpu_hours", usage.TotalGpuHours()}, {"peak_gpus", usage.Peak()}}},
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
            PrintItems(p.cost, cur);
          }
        }
      }
      return kExitOk;
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
    j["pure_strategies"] = nlohmann::json::object();
    j["savings"] = nlohmann::json::object();
    for (const auto& [mode, p] : pure) {
      if (p.feasible) {
        j["pure_strategies"][mode] = p.cost.Total();
        j["savings"][mode] = best.feasible ? 1.0 - best.cost.Total() / p.cost.Total() : 0.0;
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
        std::cout << "no plan: " << best.solver_status << "\n";
        return kExitNegative;
      }
      std::cout << "cheapest plan (GLPK MILP, " << best.variables << " variables, " << best.integer_variables
                << " integer):\n";
      for (const auto& [id, n] : best.reserved) {
        std::cout << fmt::format("  reserve {} x {}\n", n, id);
      }
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
      for (const auto& [mode, p] : pure) {
        if (p.feasible) {
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
