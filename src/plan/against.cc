#include "plan/against.h"

#include <fmt/format.h>

#include <cmath>
#include <set>

#include "cost/job_pricing.h"
#include "format/money.h"
#include "format/numbers.h"
#include "read/time_text.h"

namespace gpuplan {
namespace {

std::string MonthText(LocalDay d) { return FormatLocalHour(LocalHour{d}).substr(0, 7); }

// "2 x a-monthly, 1 x b-monthly", or "none".
std::string ReservedMix(const Plan& p) {
  std::string s;
  for (const auto& [id, n] : p.reserved) {
    if (n > 0) {
      s += (s.empty() ? "" : ", ") + fmt::format("{} x {}", n, id);
    }
  }
  return s.empty() ? "none" : s;
}

}  // namespace

PlanComparison ComparePlanWithMeasured(const PlanResult& plan, const UsageTrace& measured, const OfferSet& offers,
                                       double share) {
  PlanComparison c;
  c.share = share;
  std::set<const Gpu*> cards;
  for (const PlanMonth& m : plan.months) {
    for (const PlanCardMonth& x : m.cards) {
      cards.insert(x.gpu);
    }
  }
  const LocalHour m_from = measured.start_hour, m_to = measured.EndHour();
  for (const PlanMonth& m : plan.months) {
    const LocalHour start{m.month};
    const date::year_month_day ymd{m.month};
    const LocalHour end{m.month + date::days{DaysInMonth(static_cast<int>(ymd.year()), static_cast<unsigned>(ymd.month()))}};
    const LocalHour from = std::max(start, m_from), to = std::min(end, m_to);
    if (from >= to) {
      continue;  // nothing measured in this month
    }
    PlanMonthAgainst a;
    a.month = m.month;
    a.hours = (to - from).count();
    a.whole = from == start && to == end;
    a.planned_total = m.total;
    for (const PlanCardMonth& x : m.cards) {
      for (std::size_t i = 0; i < x.usage.hours.size(); ++i) {
        const LocalHour h = x.usage.HourAt(i);
        if (h >= from && h < to) {
          a.planned_gpu_hours += x.usage.hours[i].GpuHours();
        }
      }
    }
    UsageTrace month_use;
    month_use.start_hour = from;
    month_use.zone = offers.zone;
    for (LocalHour h = from; h < to; h += std::chrono::hours{1}) {
      const auto i = static_cast<std::size_t>((h - m_from).count());
      a.measured_gpu_hours += measured.hours[i].GpuHours();
      month_use.hours.push_back(measured.hours[i]);
    }
    if (a.planned_gpu_hours > 0) {
      a.off = (a.measured_gpu_hours - a.planned_gpu_hours) / a.planned_gpu_hours;
      a.off_too_much = std::fabs(*a.off) > share;
    } else {
      a.off_too_much = a.measured_gpu_hours > 0;
    }
    if (a.off_too_much) {
      c.reasons.push_back(
          a.off ? fmt::format("{}: {} GPU-hours busy against {} planned ({:+.0f}%, more than {:.0f}% off)",
                              MonthText(m.month), FormatNumber(a.measured_gpu_hours, 4),
                              FormatNumber(a.planned_gpu_hours, 4), 100 * *a.off, 100 * share)
                : fmt::format("{}: {} GPU-hours busy where the plan has none", MonthText(m.month),
                              FormatNumber(a.measured_gpu_hours, 4)));
    }
    if (a.whole && cards.size() == 1 && m.cards.size() == 1) {
      const Plan best = OptimizeRental(OffersFor(offers, *cards.begin()), month_use);
      if (best.feasible) {
        a.measured_optimum = best.cost.Total();
        a.mix = ReservedMix(best);
        a.planned_mix = ReservedMix(m.cards[0].rental);
        a.other_mix = a.mix != a.planned_mix;
        if (a.other_mix) {
          c.reasons.push_back(fmt::format(
              "{}: the use measured is served cheapest by reserving {} (the plan: {}), {} for that month",
              MonthText(m.month), a.mix, a.planned_mix, FormatMoney(*a.measured_optimum, plan.currency)));
        }
      }
    }
    c.months.push_back(std::move(a));
  }
  if (c.months.empty()) {
    c.note = "the meter database has no measurement within the plan's months";
  } else if (cards.size() > 1) {
    c.note = "the plan rents several cards: the measured use (all GPUs together) is compared in GPU-hours only";
  }
  c.replan = !c.reasons.empty();
  return c;
}

}  // namespace gpuplan
