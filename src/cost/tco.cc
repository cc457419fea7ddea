#include "cost/tco.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

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

void CheckHorizonMonths(double horizon_months) {
  if (!(horizon_months >= 1 && horizon_months <= 120)) {
    throw InputError::Option("horizon_months", "must be between 1 and 120 months");
  }
  if (horizon_months != std::floor(horizon_months)) {
    // Renting is priced over whole calendar months of use (a term is a calendar month); 6.5 was
    // 7 months of rent against 6.5 of owning.
    throw InputError::Option("horizon_months", fmt::format("must be a whole number of months, got {:g}", horizon_months));
  }
}

TcoResult BuyVersusRent(const OfferSet& offers, const UsageTrace& usage, const OwnershipCosts& own,
                        double horizon_months, const OptimizeOptions& opt) {
  CheckHorizonMonths(horizon_months);
  if (usage.hours.empty()) {
    throw InputError::Option("usage", "no usage");
  }
  if (offers.offers.empty()) {
    throw InputError("no offers", offers.file, 0, "offers");
  }
  const Gpu& gpu = own.buy_gpu != nullptr ? *own.buy_gpu : *offers.offers.front().gpu;
  if (!(own.speed_ratio > 0 && own.speed_ratio <= 100)) {
    throw InputError::Option("speed_ratio", "must be above 0 and at most 100 (the bought card's work per hour over the rented card's)");
  }
  TcoResult r;
  r.horizon_months = horizon_months;
  r.buy_gpu = gpu.name;
  r.speed_ratio = own.speed_ratio;
  // Demand is in rented cards; a bought card does speed_ratio of one.
  const double gpus = own.gpus > 0 ? own.gpus : std::ceil(usage.Peak() / own.speed_ratio - 1e-9);
  r.gpus_bought = gpus;
  const double capacity = gpus * own.speed_ratio;  // in rented cards
  const auto whole_months = static_cast<int64_t>(std::ceil(horizon_months - 1e-9));
  const UsageTrace horizon = RepeatMonths(usage, whole_months);
  r.rent_plan = OptimizeRental(offers, horizon, opt);
  if (!r.rent_plan.feasible) {
    throw NegativeAnswer("cannot price renting: " + r.rent_plan.solver_status);
  }
  r.rent_total = r.rent_plan.cost.Total();
  // Owning a base load: what the bought cards cannot do, hour by hour, is rented (the peaks).
  UsageTrace above = horizon;
  double owned_work = 0;  // rented-card hours the bought cards do, in the sample
  for (auto& h : above.hours) {
    const double d = h.Total();
    const double excess = std::max(0.0, d - capacity);
    const double keep = d > 0 ? excess / d : 0.0;
    h.firm *= keep;
    h.interruptible *= keep;
    h.deferrable *= keep;
  }
  for (const auto& h : usage.hours) {
    owned_work += std::min(h.Total(), capacity) * h.minutes / 60.0;
  }
  if (above.TotalGpuHours() > 1e-9) {
    r.peak_plan = OptimizeRental(offers, above, opt);
    if (!r.peak_plan.feasible) {
      throw NegativeAnswer("cannot price renting the peaks above the bought cards: " + r.peak_plan.solver_status);
    }
    r.peak_rent = r.peak_plan.cost.Total();
  }
  // Busy share of the bought cards: the work they do, in their own hours (1 / speed_ratio each).
  const double busy = std::min(
      1.0, owned_work / own.speed_ratio / (static_cast<double>(usage.hours.size()) * gpus));
  const BuyParts b = BuyCost(own, gpu, gpus, horizon_months, busy);
  r.capital = b.capital;
  r.resale_at_horizon = b.resale;
  r.power = b.power;
  r.room = b.room;
  r.operations = b.ops;
  r.failures = b.failures;
  r.buy_total = b.Total() + r.peak_rent;
  // Month by month, renting at the plan's average monthly cost.
  const double rent_per_month = r.rent_total / horizon_months;
  for (int m = 1; m <= static_cast<int>(std::ceil(horizon_months)); ++m) {
    // Cash view: the capital is spent up front; the resale value comes back only at the horizon.
    const BuyParts part = BuyCost(own, gpu, gpus, m, busy);
    const double buy = part.Total() + part.resale - (m >= static_cast<int>(std::ceil(horizon_months)) ? b.resale : 0.0) +
                       r.peak_rent / horizon_months * m;
    r.months.push_back({m, buy, rent_per_month * m});
    if (!r.buy_wins_from_month && buy < rent_per_month * m) {
      r.buy_wins_from_month = m;
    }
  }
  // Utilisation at which buying and renting cost the same over the horizon (the same GPUs,
  // busy that share of every hour), by bisection on the busy share.
  auto diff = [&](double share) {
    const LocalHour month = usage.start_hour;
    const auto month_hours = static_cast<double>(HoursBetween(month, AddMonths(month, 1)));
    // The bought cards busy `share` of every hour do the work of gpus x speed_ratio rented cards
    // busy as long.
    const UsageTrace u = RepeatMonths(
        UsageFromHoursPerMonth(share * month_hours, capacity, month, usage.zone), whole_months);
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
