// Prices fit's candidates with real offers: the cheapest way to rent each one for the job
// (docs/cost-model.md §8).
#pragma once

#include <map>

#include "cost/offer.h"
#include "fit/search.h"

namespace gpuplan {

// Cheapest plausible price per card-hour of each card in the offers (per GPU: the lowest of
// the on-demand / spot average hourly price and the reserved monthly price spread over the
// month); used to steer the search before exact pricing.
std::map<const Gpu*, double> CardHourPrices(const OfferSet& offers);

// Re-prices every candidate with the rental optimiser for a job of gpus x total hours, drops
// candidates on cards without offers, and re-ranks when the objective is cost.
void PriceCandidatesWithOffers(SearchResult& r, const OfferSet& offers, Objective objective, double tokens,
                               std::size_t keep);

}  // namespace gpuplan
