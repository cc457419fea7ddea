#include "cost/tco.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace gpuplan {
namespace {

struct BuyParts {
  double capital, resale, power, room, ops, failures;
  double Total() const { return capital - resale + power + room + ops + failures; }
};

BuyParts BuyCost(const OwnershipCosts& o, const Gpu& gpu, double gpus, double months, double busy_share) {
  BuyParts b{};
  b.capital = gpus * (o.card_price + o.server_per_gpu + o.network_per_gpu);
  // Straight-line depreciation to the resale value over the depreciation period.
  const double age = std::min(1.0, months / (12.0 * o.depreciation_years));
  b.resale = b.capital * (1.0 - age * (1.0 - o.resale_fraction));
  const double watts = gpu.tdp_watts * (busy_share + (1.0 - busy_share) * o.idle_power_ratio) +
                       o.server_overhead_watts_per_gpu;
  b.power = gpus * watts / 1000.0 * o.pue * kHoursPerMonth * months * o.power_price_kwh;
  b.room = gpus * o.room_per_gpu_month * months;
  b.ops = o.ops_per_month * months;
  b.failures = gpus * o.failure_rate_per_year / 12.0 * months * o.card_price;
  return b;
}

}  // namespace

TcoResult BuyVersusRent(const OfferSet& offers, const UsageTrace& usage, const OwnershipCosts& own,
                        double horizon_months, const OptimizeOptions& opt) {
  if (!(horizon_months >= 1 && horizon_months <= 120)) {
    throw InputError("must be between 1 and 120 months", "", 0, "--horizon-months");
  }
  if (usage.hours.empty()) {
    throw InputError("no usage", "", 0, "--usage");
  }
  if (offers.offers.empty()) {
    throw InputError("no offers", offers.file, 0, "offers");
  }
  const Gpu& gpu = *offers.offers.front().gpu;
  TcoResult r;
  r.horizon_months = horizon_months;
  const double gpus = own.gpus > 0 ? own.gpus : std::ceil(usage.Peak() - 1e-9);
  if (gpus < usage.Peak() - 1e-9) {
    throw InputError("buying fewer GPUs than the usage's peak leaves demand unserved", "", 0, "--buy-gpus");
  }
  const auto whole_months = static_cast<int64_t>(std::ceil(horizon_months - 1e-9));
  const UsageTrace horizon = RepeatMonths(usage, whole_months);
  r.rent_plan = OptimizeRental(offers, horizon, opt);
  if (!r.rent_plan.feasible) {
    throw NegativeAnswer("cannot price renting: " + r.rent_plan.solver_status);
  }
  r.rent_total = r.rent_plan.cost.Total();
  const double busy = usage.TotalGpuHours() / (static_cast<double>(usage.hours.size()) * gpus);
  const BuyParts b = BuyCost(own, gpu, gpus, horizon_months, busy);
  r.capital = b.capital;
  r.resale_at_horizon = b.resale;
  r.power = b.power;
  r.room = b.room;
  r.operations = b.ops;
  r.failures = b.failures;
  r.buy_total = b.Total();
  // Month by month, renting at the plan's average monthly cost.
  const double rent_per_month = r.rent_total / horizon_months;
  for (int m = 1; m <= static_cast<int>(std::ceil(horizon_months)); ++m) {
    // Cash view: the capital is spent up front; the resale value comes back only at the horizon.
    const BuyParts part = BuyCost(own, gpu, gpus, m, busy);
    const double buy = part.Total() + part.resale - (m >= static_cast<int>(std::ceil(horizon_months)) ? b.resale : 0.0);
    r.months.push_back({m, buy, rent_per_month * m});
    if (!r.buy_wins_from_month && buy < rent_per_month * m) {
      r.buy_wins_from_month = m;
    }
  }
  // Utilisation at which buying and renting cost the same over the horizon (the same GPUs,
  // busy that share of every hour), by bisection on the busy share.
  auto diff = [&](double share) {
    const int64_t month = usage.start_hour;
    const auto month_hours = static_cast<double>(AddMonths(month, 1) - month);
    const UsageTrace u = RepeatMonths(UsageFromHoursPerMonth(share * month_hours, gpus, month, usage.utc_offset_minutes),
                                      whole_months);
    const Plan p = OptimizeRental(offers, u, opt);
    return BuyCost(own, gpu, gpus, horizon_months, share).Total() - p.cost.Total();
  };
  double lo = 0.01, hi = 1.0;
  const double d_lo = diff(lo), d_hi = diff(hi);
  if (d_lo > 0 && d_hi < 0) {
    for (int i = 0; i < 12; ++i) {
      const double mid = (lo + hi) / 2;
      (diff(mid) > 0 ? lo : hi) = mid;
    }
    r.breakeven_utilisation = hi;
  }
  return r;
}

}  // namespace gpuplan
