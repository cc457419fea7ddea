#include "plan/against.h"

#include <fmt/format.h>

#include <cmath>
#include <map>
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

// The GPU-hours a rental buys in each billing mode within [from, to): a reserved term's instances x
// their GPUs x its hours inside the range; on-demand and spot their GPU-hours.
std::map<std::string, double> HoursPerMode(const Plan& p, const OfferSet& card_offers, LocalHour from, LocalHour to) {
  std::map<std::string, double> out;
  const auto offer = [&](const std::string& id) -> const Offer* {
    for (const Offer& o : card_offers.offers) {
      if (o.id == id) {
        return &o;
      }
    }
    return nullptr;
  };
  for (const ReservedTerm& t : p.reserved_terms) {
    if (const Offer* o = offer(t.offer)) {
      const LocalHour a = std::max(t.start, from), b = std::min(t.end, to);
      if (a < b) {
        out[ToString(o->mode)] += static_cast<double>(t.instances * o->gpus_per_instance) * static_cast<double>((b - a).count());
      }
    }
  }
  for (const auto& [id, h] : p.on_demand_gpu_hours) {
    if (const Offer* o = offer(id)) {
      out[ToString(o->mode)] += h;
    }
  }
  for (const auto& [id, h] : p.spot_gpu_hours) {
    if (const Offer* o = offer(id)) {
      out[ToString(o->mode)] += h;
    }
  }
  return out;
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
        const OfferSet card = OffersFor(offers, *cards.begin());
        const auto planned = HoursPerMode(m.cards[0].rental, card, from, to);
        const auto needed = HoursPerMode(best, card, from, to);
        std::set<std::string> modes;
        for (const auto& [k, v] : planned) modes.insert(k);
        for (const auto& [k, v] : needed) modes.insert(k);
        for (const std::string& mode : modes) {
          PlanMonthAgainst::Mode x;
          x.mode = mode;
          x.planned_gpu_hours = planned.count(mode) ? planned.at(mode) : 0;
          x.measured_gpu_hours = needed.count(mode) ? needed.at(mode) : 0;
          if (x.planned_gpu_hours > 0) {
            x.off = (x.measured_gpu_hours - x.planned_gpu_hours) / x.planned_gpu_hours;
            x.off_too_much = std::fabs(*x.off) > share;
          } else {
            x.off_too_much = x.measured_gpu_hours > 0;
          }
          if (x.off_too_much) {
            c.reasons.push_back(fmt::format("{}: {} {} GPU-hours for the use measured against {} planned{}",
                                            MonthText(m.month), mode, FormatNumber(x.measured_gpu_hours, 4),
                                            FormatNumber(x.planned_gpu_hours, 4),
                                            x.off ? fmt::format(" ({:+.0f}%)", 100 * *x.off) : std::string()));
          }
          a.modes.push_back(std::move(x));
        }
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
