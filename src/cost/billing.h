// Billing rules applied to usage: break-even hours between billing modes (docs/cost-model.md).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cost/offer.h"

namespace gpuplan {

// Expected rework on spot (docs/cost-model.md §3): interruption rate x (checkpoint interval / 2
// + restart time) + checkpoint writing C / interval, with the Young/Daly interval sqrt(2 C / rate).
double SpotReworkFraction(const SpotTerms& s);
double YoungDalyIntervalHours(const SpotTerms& s);

// Cost per GPU of one month in which each GPU is used `hours` hours, under one offer alone:
// reserved modes pay the term (pro rata per month, fees included), hourly modes pay the used
// hours rounded to the billing granularity (one block per month), the night discount on the
// share of hours inside the window (uniform use over the day), stopped-instance retention for
// the idle rest, spot rework, and fixed storage / bandwidth fees.
double MonthlyCostPerGpu(const Offer& o, double hours);

struct BreakevenPair {
  std::string gpu;
  const Offer* from = nullptr;   // the hourly (or cheaper-when-idle) offer
  const Offer* to = nullptr;     // the reserved one
  std::optional<double> hours_per_month;  // null: the two never cost the same
  std::string note;
};

// Every pair of offers of the same GPU in different billing modes.
std::vector<BreakevenPair> Breakeven(const OfferSet& offers);

}  // namespace gpuplan
