#include "cost/billing.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>


namespace gpuplan {

double ReservedTermPrice(const Offer& o) { return o.price * (1.0 + o.addon_fee_ratio); }

double ReservedTermFixedFees(const Offer& o, LocalHour term_start, LocalHour term_end) {
  const double monthly = o.MonthlyFixedFees();
  if (monthly == 0) {
    return 0;
  }
  switch (o.mode) {
    case BillingMode::kYearly: return 12.0 * monthly;
    case BillingMode::kMonthly: return monthly;
    default: {
      const date::year_month_day c = DateOf(term_start);
      const double days = static_cast<double>(HoursBetween(term_start, term_end)) / 24.0;
      return monthly * days / DaysInMonth(static_cast<int>(c.year()), static_cast<unsigned>(c.month()));
    }
  }
}

double ReservedCostPerMonth(const Offer& o, LocalHour month_start) {
  const LocalHour month_end = AddMonths(month_start, 1);
  const double hours = static_cast<double>(HoursBetween(month_start, month_end));
  switch (o.mode) {
    case BillingMode::kYearly: return ReservedTermCost(o, month_start, AddMonths(month_start, 12)) / 12.0;
    case BillingMode::kMonthly: return ReservedTermCost(o, month_start, month_end);
    case BillingMode::kWeekly: return ReservedTermCost(o, month_start, month_start + std::chrono::hours{168}) * hours / 168.0;
    case BillingMode::kDaily: return ReservedTermCost(o, month_start, month_start + std::chrono::hours{24}) * hours / 24.0;
    default: return 0;
  }
}

double ReservedCostPerHour(const Offer& o, LocalHour local_hour) {
  const LocalHour month_start = MonthStartOf(local_hour);
  const auto month_hours = static_cast<double>(HoursBetween(month_start, AddMonths(month_start, 1)));
  return ReservedCostPerMonth(o, month_start) / month_hours;
}

double BilledInstanceHours(const Offer& o, double minutes) {
  if (minutes <= 0) {
    return 0;
  }
  switch (o.granularity) {
    case Granularity::kSecond: return std::min(60.0, minutes) / 60.0;
    case Granularity::kMinute: return std::min(60.0, std::ceil(minutes - 1e-9)) / 60.0;
    case Granularity::kHour: return 1.0;
    case Granularity::kDay: return std::min(60.0, minutes) / 60.0;
  }
  return 1.0;
}

double HourlyFixedFee(const Offer& o) { return o.MonthlyFixedFees() / kHoursPerMonth; }

double LinkUpgradeShare(const Offer& o) {
  const double all = o.MonthlyFixedFees();
  return o.link_upgrade_bought && all > 0 ? o.link_upgrade_bought->price_per_month / all : 0.0;
}

InstanceHourCharge ChargeInstanceHour(const Offer& o, int hour_of_day, double minutes, double work) {
  InstanceHourCharge c;
  c.billed_hours = BilledInstanceHours(o, minutes);
  c.price = o.HourlyPrice(hour_of_day);
  c.work = work;
  c.fixed_fee = HourlyFixedFee(o);
  return c;
}

double InstanceDayCharge(const Offer& o, double work) {
  return 24.0 * (o.price * (1.0 + o.addon_fee_ratio) * work + HourlyFixedFee(o));
}

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

double RecreateCost(const Offer& o) {
  return o.recreate_minutes / 60.0 * o.price * (1.0 + o.addon_fee_ratio);
}

double RetentionPerHour(const Offer& o) {
  if (o.billing_starts == BillingStart::kTask) {
    return 0;  // nothing is billed outside tasks
  }
  return o.price * o.stopped_fee_ratio + HourlyFixedFee(o);
}

IdleCosts IdleInstanceCosts(const Offer& o, const std::vector<int64_t>& instances, bool force_release) {
  IdleCosts c;
  if (instances.empty()) {
    return c;
  }
  const int64_t peak = *std::max_element(instances.begin(), instances.end());
  const double keep_per_hour = RetentionPerHour(o);
  const double recreate = RecreateCost(o);
  const bool can_release = o.releasable;
  for (int64_t level = 1; level <= peak; ++level) {
    int64_t last_busy = -1;
    for (std::size_t t = 0; t < instances.size(); ++t) {
      if (instances[t] < level) {
        continue;
      }
      const auto now = static_cast<int64_t>(t);
      if (last_busy >= 0 && now - last_busy > 1) {
        const auto gap = static_cast<double>(now - last_busy - 1);
        const double keep = gap * keep_per_hour;
        if (!can_release || (!force_release && keep <= recreate)) {
          c.retention += keep;
          c.kept_instance_hours += gap;
        } else if (recreate > 0) {  // releasing for free needs no mention
          c.recreate += recreate;
          c.releases += 1;
        }
      }
      last_busy = now;
    }
    if (!can_release && last_busy >= 0) {  // held, stopped, to the end of the trace
      const auto tail = static_cast<double>(static_cast<int64_t>(instances.size()) - 1 - last_busy);
      c.retention += tail * keep_per_hour;
      c.kept_instance_hours += tail;
    }
  }
  return c;
}

InstanceBill BillInstanceHours(const Offer& o, LocalHour start_hour, const std::vector<double>& minutes, double work,
                               bool force_release) {
  InstanceBill b;
  const std::size_t n = minutes.size();
  b.hour_cost.assign(n, 0.0);
  b.hour_billed.assign(n, 0.0);
  if (o.granularity == Granularity::kDay) {
    // Every calendar day with any use is one block of 24 hours; a day cut by the span is billed
    // for its hours inside it (1/24 of the block each), so adjacent spans add up to the whole.
    const double day = InstanceDayCharge(o, work);
    const double day_fixed = 24.0 * HourlyFixedFee(o);
    for (std::size_t t = 0; t < n;) {
      auto day_of = [&](std::size_t k) {
        return date::floor<date::days>(start_hour + std::chrono::hours{static_cast<int64_t>(k)});
      };
      const LocalDay d = day_of(t);
      std::size_t end = t;
      bool used = false;
      while (end < n && day_of(end) == d) {
        used |= minutes[end] > 0;
        ++end;
      }
      if (used) {
        for (std::size_t k = t; k < end; ++k) {
          b.hour_cost[k] = day / 24.0;
          b.hour_billed[k] = 1.0;
          b.compute += (day - day_fixed) / 24.0;
          b.fixed_fees += day_fixed / 24.0;
          b.billed_hours += 1.0;
        }
      }
      t = end;
    }
    return b;  // day blocks: no keep-or-release between uses (as in the optimiser)
  }
  std::vector<int64_t> running(n, 0);
  for (std::size_t t = 0; t < n; ++t) {
    if (minutes[t] <= 0) {
      continue;
    }
    const int hod = HourOfDay(start_hour + std::chrono::hours{static_cast<int64_t>(t)});
    const InstanceHourCharge c = ChargeInstanceHour(o, hod, minutes[t], work);
    b.hour_cost[t] = c.Total();
    b.hour_billed[t] = c.billed_hours;
    b.compute += c.Compute();
    b.fixed_fees += c.FixedFees();
    b.billed_hours += c.billed_hours;
    running[t] = 1;
  }
  b.idle = IdleInstanceCosts(o, running, force_release);
  return b;
}

double MonthlyCostPerGpu(const Offer& o, double hours, LocalHour month_start) {
  const double g = o.gpus_per_instance;
  if (IsReserved(o.mode)) {
    return ReservedCostPerMonth(o, month_start) / g;
  }
  const auto month_hours = static_cast<double>(HoursBetween(month_start, AddMonths(month_start, 1)));
  double billed = hours;
  const double unit = o.granularity == Granularity::kDay ? 24.0 : o.granularity == Granularity::kHour ? 1.0 : 0.0;
  if (unit > 0 && hours > 0) {
    billed = std::ceil(hours / unit - 1e-9) * unit;
  }
  billed = std::min(billed, month_hours);
  double price = o.price * (1.0 + o.addon_fee_ratio);
  if (o.night) {
    const double share = o.night->HoursPerDay() / 24.0;
    price *= 1.0 - share * (1.0 - o.night->factor);
  }
  double work = billed;
  if (o.mode == BillingMode::kSpot && o.spot) {
    work *= 1.0 + SpotReworkFraction(*o.spot);
  }
  // A released instance costs nothing while idle; one that cannot be released is kept stopped
  // for the rest of the month.
  const double idle = o.releasable ? 0.0 : std::max(0.0, month_hours - billed);
  return (price * work + HourlyFixedFee(o) * billed + RetentionPerHour(o) * idle) / g;
}

double MonthlySubsidyPerGpu(const OfferSet& set, const Offer& o, double hours, LocalHour month_start) {
  double back = 0;
  const LocalHour month_end = AddMonths(month_start, 1);
  const auto month_hours = static_cast<double>(HoursBetween(month_start, month_end));
  for (const auto& s : set.subsidies) {
    // The part of the month the subsidy's dates cover: the month's use is spread evenly over it
    // (as the break-even takes it), so that share of the spend is eligible. Judged by the month's
    // first hour alone, one day of March in a subsidy's dates took it for all of March, and a
    // subsidy from March 2nd dropped it for all of March.
    const LocalHour from = s.from_hour ? std::max(*s.from_hour, month_start) : month_start;
    const LocalHour to = s.to_hour ? std::min(*s.to_hour, month_end) : month_end;
    const double covered = to > from ? static_cast<double>(HoursBetween(from, to)) / month_hours : 0.0;
    if (!s.Applies(o) || covered <= 0) {
      continue;
    }
    double eligible = covered * MonthlyCostPerGpu(o, hours, month_start);
    if (!s.covers_all) {  // the price alone: no add-ons, storage, bandwidth or stopped fees
      Offer compute = o;
      compute.addon_fee_ratio = 0;
      compute.storage_gb = 0;
      compute.bandwidth_price_per_month = 0;
      compute.stopped_fee_ratio = 0;
      eligible = covered * MonthlyCostPerGpu(compute, hours, month_start);
    }
    double b = s.share * eligible;
    if (s.cap && s.per == CapPeriod::kMonth) {
      b = std::min(b, *s.cap);  // a monthly cap, taken per GPU here
    }
    back += b;
  }
  return back;
}

std::vector<BreakevenPair> Breakeven(const OfferSet& set, LocalHour month_start) {
  std::vector<BreakevenPair> out;
  const auto month_hours = static_cast<double>(HoursBetween(month_start, AddMonths(month_start, 1)));
  auto cost = [&](const Offer& o, double h) {
    return MonthlyCostPerGpu(o, h, month_start) - MonthlySubsidyPerGpu(set, o, h, month_start);
  };
  for (std::size_t i = 0; i < set.offers.size(); ++i) {
    for (std::size_t j = i + 1; j < set.offers.size(); ++j) {
      const Offer& a = set.offers[i];
      const Offer& b = set.offers[j];
      if (a.gpu != b.gpu) {
        continue;
      }
      BreakevenPair p;
      p.gpu = a.gpu->name;
      const bool a_res = IsReserved(a.mode);
      const bool b_res = IsReserved(b.mode);
      p.from = a_res && !b_res ? &b : &a;
      p.to = a_res && !b_res ? &a : &b;
      if (a.mode == b.mode || a_res == b_res) {
        // Offers of one kind (two providers' on-demand, say): from = the one cheaper unused, so
        // when fees make them cross, the other is cheaper above the break-even.
        if (cost(b, 0) < cost(a, 0)) {
          std::swap(p.from, p.to);
        }
      }
      const double lo = cost(*p.from, 0) - cost(*p.to, 0);
      const double hi = cost(*p.from, month_hours) - cost(*p.to, month_hours);
      if (lo * hi > 0 || lo == 0 || hi == 0) {
        // Never strictly crossing (two hourly offers both cost nothing unused: the one cheaper
        // when used wins everywhere).
        const bool from_cheaper = hi < 0 || (hi == 0 && lo < 0);
        p.note = std::string(from_cheaper ? p.from->id : p.to->id) + " is cheaper at every usage level";
        const Offer& winner = from_cheaper ? *p.from : *p.to;
        if (winner.mode == BillingMode::kSpot) {
          p.note += " (for work that can be interrupted)";
        } else if (winner.mode == BillingMode::kYearly || winner.min_terms > 1) {
          p.note += " when used for its whole commitment";
        }
        out.push_back(p);
        continue;
      }
      // The cost difference is non-decreasing in hours (hourly costs grow, reserved are flat).
      auto cross = [&](const Offer& from, const Offer& to) {
        double l = 0, h = month_hours;
        for (int it = 0; it < 60; ++it) {
          const double mid = (l + h) / 2;
          (cost(from, mid) - cost(to, mid) < 0 ? l : h) = mid;
        }
        return h;
      };
      p.hours_per_month = cross(*p.from, *p.to);
      if (p.to->min_terms > 1 || p.to->mode == BillingMode::kYearly) {
        const int months = p.to->mode == BillingMode::kYearly ? 12 * p.to->min_terms : p.to->min_terms;
        p.note = "holds when the use lasts the whole commitment (" + std::to_string(months) + " months)";
      }
      if (p.from->night && !IsReserved(p.from->mode) && !p.to->night) {
        // The break-even above prices every used hour at the day's average rate (the night window
        // averaged in); use only by day never reaches the discount.
        Offer day = *p.from;
        day.night.reset();
        const double d = cost(day, month_hours) - cost(*p.to, month_hours);
        p.daytime_hours_per_month = d > 0 ? std::optional<double>(cross(day, *p.to)) : std::nullopt;
        if (p.daytime_hours_per_month) {
          p.note += std::string(p.note.empty() ? "" : "; ") +
                    fmt::format("{} averages its night rate over the day ({:g} of 24 hours at x{:g}); for daytime "
                                "use only the break-even is {:.1f} h",
                                p.from->id, p.from->night->HoursPerDay(), p.from->night->factor,
                                *p.daytime_hours_per_month);
        }
      }
      out.push_back(p);
    }
  }
  return out;
}

std::vector<double> LevelHoursPerMonth(const UsageTrace& u, int64_t month_hours, bool* scaled) {
  const auto levels = static_cast<std::size_t>(std::max(0.0, std::ceil(u.Peak() - 1e-9)));
  // The k-th GPU is busy for the part of each hour's demand above k - 1: whole levels below
  // floor(d) and the fraction of the next. Counting by floor(d), then a suffix sum: O(hours + levels).
  std::vector<double> whole(levels + 2, 0.0), out(levels, 0.0);
  for (const auto& h : u.hours) {
    const double d = h.Total();
    const double w = h.minutes / 60.0;
    const auto f = static_cast<std::size_t>(std::floor(d + 1e-9));
    whole[std::min(f, levels)] += w;
    const double frac = d - static_cast<double>(f);
    if (frac > 1e-9 && f < levels) {
      out[f] += frac * w;
    }
  }
  double above = 0;  // weight of hours with floor(d) >= k
  for (std::size_t k = levels; k >= 1; --k) {
    above += whole[k];
    out[k - 1] += above;
  }
  // A trace longer than a calendar month is averaged to the month the break-evens are for (its
  // hours x M / the trace's hours): scaling to the 730-hour average month instead put 445 h in
  // each of July and August (744 h each) at 437 h, below a July break-even of 438 h. A trace of
  // one month or less (a calendar month, a fit job) is that month's use as it is: the rest of
  // the month is idle (stretching a 2.4-hour job to the month made it 594 h).
  *scaled = u.EndHour() > AddMonths(u.start_hour, 1);
  if (*scaled && !u.hours.empty()) {
    for (double& x : out) {
      x *= static_cast<double>(month_hours) / static_cast<double>(u.hours.size());
    }
  }
  return out;
}

}  // namespace gpuplan
