#include "cost/billing.h"

#include <cmath>

namespace gpuplan {

double YoungDalyIntervalHours(const SpotTerms& s) {
  // Young 1974 / Daly 2006 first-order optimum: tau = sqrt(2 C M), M = 1 / rate.
  if (s.interruptions_per_hour <= 0) {
    return 0;
  }
  return std::sqrt(2.0 * (s.checkpoint_minutes / 60.0) / s.interruptions_per_hour);
}

double SpotReworkFraction(const SpotTerms& s) {
  if (s.interruptions_per_hour <= 0) {
    return 0;
  }
  const double tau = YoungDalyIntervalHours(s);
  const double lost = s.interruptions_per_hour * (tau / 2.0 + s.restart_minutes / 60.0);
  const double checkpoints = tau > 0 ? (s.checkpoint_minutes / 60.0) / tau : 0;
  return lost + checkpoints;
}

double MonthlyCostPerGpu(const Offer& o, double hours) {
  const double g = o.gpus_per_instance;
  const double fixed = o.MonthlyFixedFees();
  if (IsReserved(o.mode)) {
    return (o.ReservedMonthly() + fixed) / g;
  }
  double billed = hours;
  const double unit = GranularityHours(o.granularity);
  if (unit >= 1 && hours > 0) {
    billed = std::ceil(hours / unit - 1e-9) * unit;
  }
  billed = std::min(billed, kHoursPerMonth);
  double price = o.price * (1.0 + o.addon_fee_ratio);
  if (o.night) {
    const double share = o.night->HoursPerDay() / 24.0;
    price *= 1.0 - share * (1.0 - o.night->factor);
  }
  if (o.mode == BillingMode::kSpot && o.spot) {
    billed *= 1.0 + SpotReworkFraction(*o.spot);
  }
  // Retention of the stopped instance while idle, unless billing runs only during tasks.
  const double idle = o.billing_starts == BillingStart::kTask ? 0.0 : std::max(0.0, kHoursPerMonth - billed);
  return (price * billed + o.price * o.stopped_fee_ratio * idle + fixed) / g;
}

std::vector<BreakevenPair> Breakeven(const OfferSet& set) {
  std::vector<BreakevenPair> out;
  for (std::size_t i = 0; i < set.offers.size(); ++i) {
    for (std::size_t j = 0; j < set.offers.size(); ++j) {
      const Offer& a = set.offers[i];
      const Offer& b = set.offers[j];
      if (a.gpu != b.gpu || a.mode == b.mode || j <= i) {
        continue;
      }
      BreakevenPair p;
      p.gpu = a.gpu->name;
      const bool a_res = IsReserved(a.mode);
      const bool b_res = IsReserved(b.mode);
      p.from = a_res && !b_res ? &b : &a;
      p.to = a_res && !b_res ? &a : &b;
      const double lo = MonthlyCostPerGpu(*p.from, 0) - MonthlyCostPerGpu(*p.to, 0);
      const double hi = MonthlyCostPerGpu(*p.from, kHoursPerMonth) - MonthlyCostPerGpu(*p.to, kHoursPerMonth);
      if (lo * hi > 0 || (lo == 0 && hi == 0)) {
        const bool from_cheaper = hi < 0;
        p.note = std::string(from_cheaper ? p.from->id : p.to->id) + " is cheaper at every usage level";
        out.push_back(p);
        continue;
      }
      // Cost difference is non-decreasing in hours (hourly costs grow, reserved are flat):
      // bisect on hours, then step to the first whole hour where the hourly side costs more.
      double l = 0, h = kHoursPerMonth;
      for (int it = 0; it < 60; ++it) {
        const double mid = (l + h) / 2;
        const double d = MonthlyCostPerGpu(*p.from, mid) - MonthlyCostPerGpu(*p.to, mid);
        (d < 0 ? l : h) = mid;
      }
      p.hours_per_month = h;
      out.push_back(p);
    }
  }
  return out;
}

}  // namespace gpuplan
