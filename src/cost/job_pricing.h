// Prices fit's answers with real offers (docs/cost-model.md §8): a training job of N GPUs for H
// hours from a start time, or a service running N GPUs around the clock.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "core/money.h"
#include "catalog/offer.h"
#include "cost/optimizer.h"
#include "fit/search.h"

namespace gpuplan {

// Cheapest plausible price per card-hour of each card in the offers (per GPU: the lowest of
// the on-demand / spot average hourly price and the reserved price per average month / 730);
// only steers the search before exact pricing.
std::map<const Gpu*, double> CardHourPrices(const OfferSet& offers);

// The offers of one card (empty when the file has none).
OfferSet OffersFor(const OfferSet& offers, const Gpu* gpu);

struct JobPrice {
  Money total;
  Plan plan;                  // the cheapest rental for the job (whole instances, calendar terms)
  LocalMinute start_minute{};  // the offers' wall clock
  // When an offer has a night window: the same job started at the window's next opening.
  std::optional<LocalMinute> night_start_minute;
  std::optional<Money> night_total;
  bool interruptible = false;
  std::string unserved;       // why no offer can run the job (plan infeasible)
};

// A job of `gpus` GPUs for `hours` hours from `start_minute` on `card_offers` (offers of one
// card), billed by the rules of cost/billing.h through the rental optimiser. `interruptible`: the
// job checkpoints, so spot may run it (with its rework, docs/cost-model.md §3). When no offer may
// serve the job, plan.feasible is false and `unserved` says why; total is then not a price.
// `egress_gb`: data the job sends out of the data centre (its trained model taken home), priced
// at the plan's offers' egress price (CostItems::egress).
JobPrice PriceJob(const OfferSet& card_offers, double gpus, double hours, LocalMinute start_minute,
                  bool interruptible = false, double egress_gb = 0);

// Why `card_offers` cannot serve a job (PriceJob's plan infeasible), in one sentence.
std::string WhyUnserved(const OfferSet& card_offers, bool interruptible);

// A service holding `gpus` GPUs around the clock for the calendar month starting at
// `month_start` (local hour): the cheapest rental for that month, and per hour of the month.
struct ServicePrice {
  Money per_month;
  Money per_hour;
  Plan plan;
};
ServicePrice PriceService(const OfferSet& card_offers, double gpus, LocalHour month_start);

// The lowest price per GPU-hour any of `card_offers` can deliver (a reserved term's price over its
// longest length in hours, an hourly offer's cheapest hour, add-ons included, per GPU of the
// instance): a job of G GPUs for H hours costs at least G x H x this, whatever the plan.
double LowestRatePerGpuHour(const OfferSet& card_offers);

// Re-prices every training candidate with PriceJob for its GPUs and hours to finish `tokens`
// from `start_minute` (nullopt: now, in the offers' zone), drops candidates on cards without
// offers, and re-ranks when the objective is cost. Ranked by cost, the fastest layout of every
// card and count (SearchResult::fastest_per_count) is priced too, in the order of the lower bound
// above, until that bound exceeds the `keep`-th exact price: the ranking is exact.
// A candidate no offer may serve (spot only, the job not interruptible) is dropped; when none is
// left, r.closest says why.
// `checkpoint_minutes` (optional): a candidate's own checkpoint save time, which replaces the spot
// offers' typed minutes in its rework (docs/data-movement.md §3) when the job is interruptible.
void PriceCandidatesWithOffers(SearchResult& r, const OfferSet& offers, Objective objective, double tokens,
                               std::size_t keep, std::optional<LocalMinute> start_minute = std::nullopt,
                               bool interruptible = false,
                               const std::function<double(const Candidate&)>& checkpoint_minutes = {});

// Re-prices serving plans as services on the offers file's cards (PriceService for the plan's
// GPUs in the calendar month starting at `month_start`), drops plans on cards without offers,
// and re-ranks by cost when the objective is cost.
void PricePlansWithOffers(std::vector<InferencePlan>& plans, const OfferSet& offers, Objective objective,
                          LocalHour month_start);

}  // namespace gpuplan
