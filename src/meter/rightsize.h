// Right-sizing (docs/meter.md, "Right-sizing"): jobs whose measured peak GPU memory and
// utilisation would fit a MIG slice of their card or a smaller catalog card, with the money
// saved under the offers file. "Measured" is the job's largest GPU memory in any minute and the
// GPU's largest minute-mean utilisation while the job was on it (so a job that shares its GPU is
// judged on the GPU's load, which only overstates what it needs).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "catalog/gpu_catalog.h"
#include "catalog/offer.h"
#include "meter/store.h"

namespace gpuplan {

struct RightSizingRules {
  double min_hours = 1;           // jobs observed for less are not worth moving
  double memory_margin = 1.10;    // the target must hold peak memory x this (fragmentation, context)
  double compute_margin = 1.0;    // the target's share of the card x 100 >= peak utilisation x this
};

struct RightSizingOption {
  std::string kind;    // "mig" or "card"
  std::string target;  // "MIG 1g.10gb of H100 SXM" or "L4"
  double memory_bytes = 0;
  double compute_share = 0;  // of the current card: MIG g/7, or the lower of the dense bf16 peak and
                             // memory bandwidth ratios
  std::optional<double> gpu_hour_price;  // of the target, in the offers' currency
  std::optional<std::string> offer_id;   // the target's offer (cards)
  std::optional<double> money_saved;     // over the job's hours, against the current GPU-hour price
};

struct RightSizing {
  std::string job;  // MeterGroupKey(kJob)
  int gpu = 0;
  std::string card;           // the current card (the offer's)
  double hours = 0;           // observed
  uint64_t peak_memory = 0;   // bytes
  double peak_utilisation = 0;  // % (largest minute mean of the GPU while the job was on it)
  double mean_utilisation = 0;  // %
  std::optional<double> gpu_hour_price;  // current, in the offers' currency
  std::vector<RightSizingOption> options;  // smallest MIG slice first, then cards by money saved
  std::string line;  // "slurm:81234 on GPU 2 (A100 SXM): peak 7.9 GB, 12% -> MIG 1g.10gb, saves 1,234 CNY"
};

// `offers`/`offer` give the current card and its price; without them there is no current card
// and the result is empty (the caller notes why).
std::vector<RightSizing> FindRightSizing(const MeterStore& store, const TimeRange& range, const OfferSet* offers, const Offer* offer,
                                         const RightSizingRules& rules = RightSizingRules{});

// One GPU-hour of an offer at `local_hour` (hours since the epoch in the offers' time zone): on
// demand and spot Offer::HourlyPrice of that hour of the day (add-on fees, the night window),
// reserved modes their month's price spread over its hours (ReservedCostPerHour), per GPU.
double OfferGpuHourPrice(const Offer& o, LocalHour local_hour);
// The mean of OfferGpuHourPrice over the hours of `range` (UTC milliseconds) in `zone`
// from UTC: what an hour of a job spread over the range costs, night hours at their price.
double OfferMeanGpuHourPrice(const Offer& o, const TimeRange& range, const Zone& zone);

// "1g.10gb" -> {1, 10e9 bytes}: the slice's compute sevenths and its memory (the profile's
// nominal GB, which is below what NVIDIA gives: the check errs towards not fitting).
struct MigProfile {
  int sevenths = 0;
  double memory_bytes = 0;
};
std::optional<MigProfile> ParseMigProfile(const std::string& name);

}  // namespace gpuplan
