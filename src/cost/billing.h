// The billing rules, one function each (docs/cost-model.md §1). Every cost path -- break-even,
// compare, optimise, TCO, job pricing and meter -- prices through these, so they cannot disagree.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cost/offer.h"
#include "cost/usage.h"

namespace gpuplan {

// Term rule: one reserved instance for the calendar term [term_start, term_end) (local hours):
// the term price with add-on fees, and the fixed fees (storage, bandwidth, priced per month) for
// the months the term spans (a year 12, a month 1, a week 7 / days of its month, a day 1 / days).
double ReservedTermPrice(const Offer& o);
double ReservedTermFixedFees(const Offer& o, int64_t term_start, int64_t term_end);
inline double ReservedTermCost(const Offer& o, int64_t term_start, int64_t term_end) {
  return ReservedTermPrice(o) + ReservedTermFixedFees(o, term_start, term_end);
}
// A reserved offer's cost per calendar month when held continuously (a yearly term / 12, a
// weekly term x the month's hours / 168): what break-even compares.
double ReservedCostPerMonth(const Offer& o, int64_t month_start);

// Granularity rule: instance-hours billed for `minutes` of use inside one hour (second: exact;
// minute: whole minutes; hour: the whole hour; day: the caller bills whole days).
double BilledInstanceHours(const Offer& o, double minutes);
// Fixed fees of an hourly instance while it exists (storage, bandwidth: monthly fees prorated
// over the 730-hour average month, as providers prorate GB-months by the hour).
double HourlyFixedFee(const Offer& o);

// Spot rule (docs/cost-model.md §3): expected rework = interruption rate x (checkpoint interval
// / 2 + restart time) + checkpoint writing C / interval, with the Young/Daly interval
// sqrt(2 C / rate).
double SpotReworkFraction(const SpotTerms& s);
double YoungDalyIntervalHours(const SpotTerms& s);

// Retention rule: what an hourly offer's instances cost between uses. `instances[t]` is the
// number running in hour t of a trace. Each instance (stacked by level: the k-th instance runs
// while at least k do) either stays stopped through an idle gap, paying stopped_fee_ratio of
// the price per hour, or is released and later created again, paying recreate_minutes of set-up
// at the full price; gpuplan takes the cheaper per gap. An offer that cannot be released keeps
// every instance from its first use to the end of the trace; `force_release` (--release-idle)
// releases every gap. Nothing is billed outside tasks when billing starts at the task.
struct IdleCosts {
  double retention = 0;             // stopped-instance fees
  double recreate = 0;              // set-up time billed when instances are created again
  double kept_instance_hours = 0;   // idle instance-hours kept stopped
  int64_t releases = 0;             // idle gaps over which an instance was released
};
double RecreateCost(const Offer& o);   // one re-creation
double RetentionPerHour(const Offer& o);  // one stopped instance for an hour (0 for task billing)
IdleCosts IdleInstanceCosts(const Offer& o, const std::vector<int64_t>& instances, bool force_release);

// One offer alone, per GPU, for a calendar month in which each GPU is used `hours` hours:
// reserved modes their cost per month (above); hourly modes the used hours rounded to the
// billing unit (one block a month), the night discount on the share of hours in the window
// (uniform use over the day), spot rework, fixed fees while the instance exists, and retention
// to the month's end when the offer cannot be released.
double MonthlyCostPerGpu(const Offer& o, double hours, int64_t month_start);

struct BreakevenPair {
  std::string gpu;
  const Offer* from = nullptr;   // the hourly (or cheaper-when-idle) offer
  const Offer* to = nullptr;     // the reserved one
  std::optional<double> hours_per_month;  // null: the two never cost the same
  std::string note;
};

// Every pair of offers of the same GPU in different billing modes, for the calendar month
// starting at `month_start`.
std::vector<BreakevenPair> Breakeven(const OfferSet& offers, int64_t month_start);

// The hours per calendar month the k-th GPU of a trace is busy (k = 1 .. ceil(peak)): the
// load-duration curve, which break-even compares with each pair's hours. A trace that is not
// one calendar month is scaled to the 730-hour average month.
std::vector<double> LevelHoursPerMonth(const UsageTrace& u, bool* scaled);

}  // namespace gpuplan
