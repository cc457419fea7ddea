#include "cost/job_pricing.h"

#include <algorithm>
#include <cstdio>
#include <ctime>

#include "cost/calendar.h"
#include "read/time_text.h"

namespace gpuplan {

std::map<const Gpu*, double> CardHourPrices(const OfferSet& offers) {
  std::map<const Gpu*, double> out;
  for (const auto& o : offers.offers) {
    double per_hour = 0;
    if (IsReserved(o.mode)) {
      per_hour = o.ReservedMonthly() / kHoursPerMonth;
    } else {
      double sum = 0;
      for (int h = 0; h < 24; ++h) {
        sum += o.HourlyPrice(h);
      }
      per_hour = sum / 24.0;
    }
    per_hour /= o.gpus_per_instance;
    auto it = out.find(o.gpu);
    if (it == out.end() || per_hour < it->second) {
      out[o.gpu] = per_hour;
    }
  }
  return out;
}

OfferSet OffersFor(const OfferSet& offers, const Gpu* gpu) {
  OfferSet mine;
  mine.currency = offers.currency;
  mine.file = offers.file;
  mine.utc_offset_minutes = offers.utc_offset_minutes;
  for (const auto& o : offers.offers) {
    if (o.gpu == gpu) {
      mine.offers.push_back(o);
    }
  }
  return mine;
}

JobPrice PriceJob(const OfferSet& card_offers, double gpus, double hours, int64_t start_minute) {
  JobPrice r;
  r.start_minute = start_minute;
  const int zone = card_offers.utc_offset_minutes;
  r.plan = OptimizeRental(card_offers, UsageFromJob(gpus, hours, start_minute, zone));
  r.total = {r.plan.feasible ? r.plan.cost.Total() : 0.0, card_offers.currency};
  // The night window's next opening at or after the start.
  std::optional<int> opens;
  for (const auto& o : card_offers.offers) {
    if (o.night && (!opens || o.night->from_minute < *opens)) {
      opens = o.night->from_minute;
    }
  }
  if (opens && r.plan.feasible) {
    const int64_t day = (start_minute >= 0 ? start_minute : start_minute - 1439) / 1440;
    int64_t at = day * 1440 + *opens;
    if (at < start_minute) {
      at += 1440;
    }
    if (at != start_minute) {
      const Plan night = OptimizeRental(card_offers, UsageFromJob(gpus, hours, at, zone));
      if (night.feasible && night.cost.Total() < r.plan.cost.Total() - 0.005) {
        r.night_start_minute = at;
        r.night_total = Money{night.cost.Total(), card_offers.currency};
      }
    }
  }
  return r;
}

ServicePrice PriceService(const OfferSet& card_offers, double gpus, int64_t month_start) {
  ServicePrice s;
  const int64_t end = AddMonths(month_start, 1);
  UsageTrace u = UsageFromJob(gpus, static_cast<double>(end - month_start), month_start * 60,
                              card_offers.utc_offset_minutes);
  s.plan = OptimizeRental(card_offers, u);
  const double month = s.plan.feasible ? s.plan.cost.Total() : 0.0;
  s.per_month = {month, card_offers.currency};
  s.per_hour = {month / static_cast<double>(end - month_start), card_offers.currency};
  return s;
}

void PriceCandidatesWithOffers(SearchResult& r, const OfferSet& offers, Objective objective, double tokens,
                               std::size_t keep, std::optional<int64_t> start) {
  const int64_t start_minute =
      start ? *start : ParseJobStart("", offers.utc_offset_minutes, static_cast<int64_t>(std::time(nullptr)));
  std::vector<Candidate> priced;
  for (auto& c : r.ranked) {
    const OfferSet mine = OffersFor(offers, c.gpu);
    if (mine.offers.empty()) {
      continue;
    }
    const double t = tokens > 0 ? tokens : 1e6;
    const double hours = t / c.time.tokens_per_second / 3600.0;
    const JobPrice p = PriceJob(mine, static_cast<double>(c.layout.gpus), hours, start_minute);
    if (!p.plan.feasible) {
      continue;
    }
    c.cost = p.total;
    c.cost_basis = "cheapest rental from " + offers.file + " (" + offers.currency + "), starting " +
                   FormatLocalHour(start_minute / 60).substr(0, 11) +
                   [&] {
                     char buf[8];
                     std::snprintf(buf, sizeof buf, "%02d:%02d", static_cast<int>((start_minute / 60) % 24),
                                   static_cast<int>(start_minute % 60));
                     return std::string(buf);
                   }();
    if (p.night_total) {
      c.cost_basis += "; starting at the night window would cost " + p.night_total->Format();
    }
    if (objective == Objective::kCost) {
      c.score = c.cost.amount;
    }
    priced.push_back(std::move(c));
  }
  std::stable_sort(priced.begin(), priced.end(), [](const Candidate& a, const Candidate& b) { return a.score < b.score; });
  if (priced.size() > keep) {
    priced.resize(keep);
  }
  r.ranked = std::move(priced);
}

}  // namespace gpuplan

namespace gpuplan {

void PricePlansWithOffers(std::vector<InferencePlan>& plans, const OfferSet& offers, Objective objective,
                          int64_t month_start) {
  std::vector<InferencePlan> priced;
  for (auto& p : plans) {
    const OfferSet mine = OffersFor(offers, p.gpu);
    if (mine.offers.empty()) {
      continue;
    }
    const ServicePrice s = PriceService(mine, static_cast<double>(p.gpus_total), month_start);
    if (!s.plan.feasible) {
      continue;
    }
    p.cost_per_hour = s.per_hour;
    p.cost_basis = "cheapest rental from " + offers.file + " for " + std::to_string(p.gpus_total) +
                   " GPUs around the clock in " + FormatLocalHour(month_start).substr(0, 7) + ": " +
                   s.per_month.Format() + " a month";
    priced.push_back(std::move(p));
  }
  if (objective == Objective::kCost) {
    std::stable_sort(priced.begin(), priced.end(), [](const InferencePlan& a, const InferencePlan& b) {
      return a.cost_per_hour.amount < b.cost_per_hour.amount;
    });
  }
  plans = std::move(priced);
}

}  // namespace gpuplan
