#include "cost/job_pricing.h"

#include <algorithm>

#include "cost/optimizer.h"

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

void PriceCandidatesWithOffers(SearchResult& r, const OfferSet& offers, Objective objective, double tokens,
                               std::size_t keep) {
  std::vector<Candidate> priced;
  for (auto& c : r.ranked) {
    OfferSet mine;
    mine.currency = offers.currency;
    mine.file = offers.file;
    for (const auto& o : offers.offers) {
      if (o.gpu == c.gpu) {
        mine.offers.push_back(o);
      }
    }
    if (mine.offers.empty()) {
      continue;
    }
    const double t = tokens > 0 ? tokens : 1e6;
    const double hours = t / c.time.tokens_per_second / 3600.0;
    const Plan p = OptimizeRental(mine, UsageFromJob(static_cast<double>(c.layout.gpus), hours));
    if (!p.feasible) {
      continue;
    }
    c.cost_cny = p.cost.Total();
    c.cost_basis = "cheapest rental from " + offers.file + " (" + offers.currency + ")";
    if (objective == Objective::kCost) {
      c.score = c.cost_cny;
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
