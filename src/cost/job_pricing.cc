#include "cost/job_pricing.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>

#include "catalog/calendar.h"
#include "format/money.h"
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
  mine.zone = offers.zone;
  mine.subsidies = offers.subsidies;
  for (const auto& o : offers.offers) {
    if (o.gpu == gpu) {
      mine.offers.push_back(o);
    }
  }
  return mine;
}

std::string WhyUnserved(const OfferSet& card_offers, bool interruptible) {
  const bool spot_only = std::all_of(card_offers.offers.begin(), card_offers.offers.end(),
                                     [](const Offer& o) { return o.mode == BillingMode::kSpot; });
  const std::string card = card_offers.offers.empty() || card_offers.offers[0].gpu == nullptr
                               ? std::string("this card")
                               : card_offers.offers[0].gpu->name;
  if (spot_only && !interruptible) {
    return "only spot offers rent " + card + " in " + card_offers.file +
           ", and spot may run only work that can be interrupted: give --interruptible if the job checkpoints "
           "and can restart";
  }
  return "no offer in " + card_offers.file + " can serve the job on " + card;
}

JobPrice PriceJob(const OfferSet& card_offers, double gpus, double hours, LocalMinute start_minute,
                  bool interruptible, double egress_gb) {
  JobPrice r;
  r.start_minute = start_minute;
  r.interruptible = interruptible;
  const Zone& zone = card_offers.zone;
  const auto job = [&](LocalMinute at) {
    UsageTrace u = UsageFromJob(gpus, hours, at, zone, interruptible);
    u.egress_gb = egress_gb;
    return u;
  };
  r.plan = OptimizeRental(card_offers, job(start_minute));
  r.total = {r.plan.feasible ? r.plan.cost.Total() : 0.0, card_offers.currency};
  if (!r.plan.feasible) {
    r.unserved = WhyUnserved(card_offers, interruptible);
  }
  // The night window's next opening at or after the start.
  std::optional<std::chrono::minutes> opens;
  for (const auto& o : card_offers.offers) {
    if (o.night && (!opens || o.night->from_minute < *opens)) {
      opens = o.night->from_minute;
    }
  }
  if (opens && r.plan.feasible) {
    LocalMinute at = LocalMinute{date::floor<date::days>(start_minute)} + *opens;
    if (at < start_minute) {
      at += date::days{1};
    }
    if (at != start_minute) {
      const Plan night = OptimizeRental(card_offers, job(at));
      if (night.feasible && night.cost.Total() < r.plan.cost.Total() - 0.005) {
        r.night_start_minute = at;
        r.night_total = Money{night.cost.Total(), card_offers.currency};
      }
    }
  }
  return r;
}

ServicePrice PriceService(const OfferSet& card_offers, double gpus, LocalHour month_start) {
  ServicePrice s;
  const auto hours = static_cast<double>(HoursBetween(month_start, AddMonths(month_start, 1)));
  UsageTrace u = UsageFromJob(gpus, hours, LocalMinute{month_start}, card_offers.zone);
  s.plan = OptimizeRental(card_offers, u);
  const double month = s.plan.feasible ? s.plan.cost.Total() : 0.0;
  s.per_month = {month, card_offers.currency};
  s.per_hour = {month / hours, card_offers.currency};
  return s;
}

double LowestRatePerGpuHour(const OfferSet& card_offers) {
  double best = 1e300;
  for (const auto& o : card_offers.offers) {
    double per_instance_hour = 0;
    switch (o.mode) {
      // A term delivers at most its longest length in hours (a leap year, a 31-day month).
      case BillingMode::kYearly: per_instance_hour = o.price * (1 + o.addon_fee_ratio) / 8784.0; break;
      case BillingMode::kMonthly: per_instance_hour = o.price * (1 + o.addon_fee_ratio) / 744.0; break;
      case BillingMode::kWeekly: per_instance_hour = o.price * (1 + o.addon_fee_ratio) / 168.0; break;
      case BillingMode::kDaily: per_instance_hour = o.price * (1 + o.addon_fee_ratio) / 24.0; break;
      case BillingMode::kOnDemand:
      case BillingMode::kSpot:
        per_instance_hour = 1e300;
        for (int h = 0; h < 24; ++h) {
          per_instance_hour = std::min(per_instance_hour, o.HourlyPrice(h));
        }
        break;
    }
    best = std::min(best, per_instance_hour / o.gpus_per_instance);
  }
  return best;
}

void PriceCandidatesWithOffers(SearchResult& r, const OfferSet& offers, Objective objective, double tokens,
                               std::size_t keep, std::optional<LocalMinute> start, bool interruptible,
                               const std::function<double(const Candidate&)>& checkpoint_minutes) {
  const LocalMinute start_minute = start ? *start : DefaultJobStart(offers.zone, UtcNow());
  const double t = tokens > 0 ? tokens : 1e6;
  // Ranked by cost, every card and count is priced through its fastest layout as well (the
  // cheapest of that card and count: SearchResult::fastest_per_count), so the search's per-card-
  // hour steering cannot hide the cheapest rental. Each is priced in the order of a proven lower
  // bound (its GPU-hours at the card's lowest rate per GPU-hour of any offer), and pricing stops
  // once that bound exceeds the `keep`-th exact price found.
  struct Entry {
    Candidate c;
    double hours = 0;
    double bound = 0;
  };
  std::vector<Entry> pool;
  std::map<const Gpu*, OfferSet> by_card;
  auto add = [&](Candidate&& c) {
    if (std::any_of(pool.begin(), pool.end(), [&](const Entry& e) { return SameLayout(e.c, c); })) {
      return;
    }
    auto it = by_card.find(c.gpu);
    if (it == by_card.end()) {
      it = by_card.emplace(c.gpu, OffersFor(offers, c.gpu)).first;
    }
    if (it->second.offers.empty()) {
      return;
    }
    Entry e;
    e.hours = t / c.time.tokens_per_second / 3600.0;
    e.bound = e.hours * static_cast<double>(c.layout.gpus) * LowestRatePerGpuHour(it->second);
    e.c = std::move(c);
    pool.push_back(std::move(e));
  };
  for (auto& c : r.ranked) {
    add(std::move(c));
  }
  if (objective == Objective::kCost) {
    for (auto& c : r.fastest_per_count) {
      add(std::move(c));
    }
    std::stable_sort(pool.begin(), pool.end(), [](const Entry& a, const Entry& b) { return a.bound < b.bound; });
  }
  r.fastest_per_count.clear();
  std::vector<Candidate> priced;
  std::vector<double> costs;  // exact prices found, sorted
  std::string unserved;       // why the first candidate no offer could serve was dropped
  for (auto& e : pool) {
    if (objective == Objective::kCost && costs.size() >= keep && e.bound > costs[keep - 1]) {
      break;  // this and every later one costs more than `keep` layouts already priced
    }
    Candidate& c = e.c;
    const OfferSet& card = by_card.at(c.gpu);
    std::optional<OfferSet> own;  // the card's offers with this layout's checkpoint minutes
    if (interruptible && checkpoint_minutes) {
      own = card;
      const double minutes = checkpoint_minutes(c);
      for (Offer& o : own->offers) {
        if (o.spot) {
          o.spot->checkpoint_minutes = minutes;
        }
      }
    }
    const JobPrice p =
        PriceJob(own ? *own : card, static_cast<double>(c.layout.gpus), e.hours, start_minute, interruptible);
    if (!p.plan.feasible) {
      if (unserved.empty()) {
        unserved = p.unserved;
      }
      continue;
    }
    c.cost = p.total;
    costs.insert(std::upper_bound(costs.begin(), costs.end(), p.total.amount), p.total.amount);
    c.cost_basis = "cheapest rental from " + offers.file + " (" + offers.currency + "), starting " +
                   FormatLocalMinute(start_minute);
    if (p.night_total) {
      c.cost_basis += "; starting at the night window would cost " + FormatMoney(*p.night_total);
    }
    if (objective == Objective::kCost) {
      c.score = c.cost.amount;
    }
    priced.push_back(std::move(c));
  }
  // Equal prices (a job within one billing unit; per-second billing of the same GPU-hours): the
  // faster first, then the fewer GPUs. Compared in millionths of the currency, not as doubles,
  // so the order does not hang on rounding in the last bits of a price.
  const auto micros = [](double v) { return std::llround(v * 1e6); };
  std::stable_sort(priced.begin(), priced.end(), [&micros](const Candidate& a, const Candidate& b) {
    if (micros(a.score) != micros(b.score)) {
      return micros(a.score) < micros(b.score);
    }
    if (a.time.tokens_per_second != b.time.tokens_per_second) {
      return a.time.tokens_per_second > b.time.tokens_per_second;
    }
    return a.layout.gpus < b.layout.gpus;
  });
  // One row per card, count and shape (tp, pp, cp) first; their ZeRO stage, micro-batch and
  // recomputation variants only fill rows the shapes leave empty.
  std::vector<Candidate> rows;
  std::vector<bool> used(priced.size(), false);
  for (std::size_t i = 0; i < priced.size() && rows.size() < keep; ++i) {
    const Candidate& c = priced[i];
    if (std::none_of(rows.begin(), rows.end(), [&](const Candidate& x) {
          return x.gpu == c.gpu && x.layout.gpus == c.layout.gpus && x.layout.tp == c.layout.tp &&
                 x.layout.pp == c.layout.pp && x.layout.cp == c.layout.cp;
        })) {
      rows.push_back(c);
      used[i] = true;
    }
  }
  for (std::size_t i = 0; i < priced.size() && rows.size() < keep; ++i) {
    if (!used[i]) {
      rows.push_back(priced[i]);
    }
  }
  std::stable_sort(rows.begin(), rows.end(),
                   [&micros](const Candidate& a, const Candidate& b) { return micros(a.score) < micros(b.score); });
  if (rows.empty() && !unserved.empty()) {
    r.unserved = unserved;  // layouts fit, but no offer may run them: that, not memory, is the reason
  }
  r.ranked = std::move(rows);
}

}  // namespace gpuplan

namespace gpuplan {

void PricePlansWithOffers(std::vector<InferencePlan>& plans, const OfferSet& offers, Objective objective,
                          LocalHour month_start) {
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
                   FormatMoney(s.per_month) + " a month";
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
