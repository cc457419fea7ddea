// The billing rules, one function each (docs/cost-model.md §1). Every cost path -- break-even,
// compare, optimise, TCO, job pricing and meter -- prices through these, so they cannot disagree.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "catalog/offer.h"
#include "cost/usage.h"

namespace gpuplan {

// Term rule: one reserved instance for the calendar term [term_start, term_end) (local hours):
// the term price with add-on fees, and the fixed fees (storage, bandwidth, priced per month) for
// the months the term spans (a year 12, a month 1, a week 7 / days of its month, a day 1 / days).
double ReservedTermPrice(const Offer& o);
double ReservedTermFixedFees(const Offer& o, LocalHour term_start, LocalHour term_end);
inline double ReservedTermCost(const Offer& o, LocalHour term_start, LocalHour term_end) {
  return ReservedTermPrice(o) + ReservedTermFixedFees(o, term_start, term_end);
}
// A reserved offer's cost per calendar month when held continuously (a yearly term / 12, a
// weekly term x the month's hours / 168): what break-even compares.
double ReservedCostPerMonth(const Offer& o, LocalHour month_start);
// The same spread over the month's hours: what one reserved instance costs for the local hour
// `local_hour` (ReservedCostPerMonth of the calendar month holding it / that month's hours). The
// meter prorates a reserved offer to a report range with it: the term is paid whether used or
// not, so every hour of the range costs its share.
double ReservedCostPerHour(const Offer& o, LocalHour local_hour);

// Granularity rule: instance-hours billed for `minutes` of use inside one hour (second: exact;
// minute: whole minutes; hour: the whole hour; day: the caller bills whole days).
double BilledInstanceHours(const Offer& o, double minutes);
// Fixed fees of an hourly instance while it exists (storage, bandwidth: monthly fees prorated
// over the 730-hour average month, as providers prorate GB-months by the hour).
double HourlyFixedFee(const Offer& o);
// The share of an offer's fixed fees that is the link upgrade bought (Offer::link_upgrade_bought):
// 0 without one, 1 when the upgrade is its only fixed fee.
double LinkUpgradeShare(const Offer& o);

// Hour rule of an on-demand or spot offer: what one instance bills for `minutes` of use within
// one local hour at `hour_of_day`: BilledInstanceHours (granularity) at the hour's price
// (Offer::HourlyPrice: add-on fees, night window) times `work`, plus the fixed fees per billed
// hour. `work` is 1 + spot rework when the minutes are work still to do (the optimiser), 1 when
// they are capacity already used (the meter: interruptions are in what was observed). The
// optimiser's objective and its plan's cost items, and the meter's bill of observed use
// (BillInstanceHours), all price an hour through this. Day-granular offers: InstanceDayCharge.
struct InstanceHourCharge {
  double billed_hours = 0;  // instance-hours billed: BilledInstanceHours(o, minutes)
  double price = 0;         // per instance-hour: o.HourlyPrice(hour_of_day)
  double work = 1;          // multiplies the price: 1 + spot rework, or 1
  double fixed_fee = 0;     // per billed instance-hour: HourlyFixedFee(o)
  double Rate() const { return price * work + fixed_fee; }  // per billed instance-hour
  double Compute() const { return billed_hours * price * work; }
  double FixedFees() const { return billed_hours * fixed_fee; }
  double Total() const { return billed_hours * Rate(); }
};
InstanceHourCharge ChargeInstanceHour(const Offer& o, int hour_of_day, double minutes, double work = 1.0);
// Day rule (granularity: day): one instance used at any time of a calendar day pays 24 hours at
// the full price (no night window: the block is the day) times `work`, plus 24 hours of fixed
// fees.
double InstanceDayCharge(const Offer& o, double work = 1.0);

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

// One instance of an hourly offer (on-demand or spot) over consecutive local hours from
// `start_hour`, using `minutes[t]` billed minutes in hour t (0: not running): each hour priced by
// ChargeInstanceHour (granularity day: InstanceDayCharge for every calendar day with any use,
// spread evenly over the day's hours inside the span), and the idle gaps between uses by
// IdleInstanceCosts (kept stopped or released, whichever costs less; nothing for
// `billing_starts: task`; an offer that cannot be released pays retention to the span's end).
// Which minutes are "use" (instance up, or task running) is the caller's: the meter passes up
// minutes for billing_starts create / start and task minutes for task.
struct InstanceBill {
  std::vector<double> hour_cost;    // per hour: compute + fixed fees billed for that hour
  std::vector<double> hour_billed;  // per hour: instance-hours billed
  double compute = 0;               // the hours' compute price (add-on fees, night window)
  double fixed_fees = 0;            // storage and bandwidth per billed hour
  double billed_hours = 0;          // instance-hours billed
  IdleCosts idle;                   // gaps between uses (retention, re-creation)
  double Total() const { return compute + fixed_fees + idle.retention + idle.recreate; }
};
InstanceBill BillInstanceHours(const Offer& o, LocalHour start_hour, const std::vector<double>& minutes,
                               double work = 1.0, bool force_release = false);

// One offer alone, per GPU, for a calendar month in which each GPU is used `hours` hours:
// reserved modes their cost per month (above); hourly modes the used hours rounded to the
// billing unit (one block a month), the night discount on the share of hours in the window
// (uniform use over the day), spot rework, fixed fees while the instance exists, and retention
// to the month's end when the offer cannot be released.
double MonthlyCostPerGpu(const Offer& o, double hours, LocalHour month_start);

// What the offers file's subsidies pay back on one GPU of `o` used `hours` in the calendar month
// from `month_start` (break-even's view: each subsidy's share of the eligible cost, a monthly cap
// taken per GPU, yearly and total caps not applied).
double MonthlySubsidyPerGpu(const OfferSet& set, const Offer& o, double hours, LocalHour month_start);

struct BreakevenPair {
  std::string gpu;
  const Offer* from = nullptr;   // the hourly (or cheaper-when-idle) offer
  const Offer* to = nullptr;     // the reserved one
  std::optional<double> hours_per_month;  // null: the two never cost the same
  // With a night window on the hourly offer: hours_per_month averages the night rate over the
  // day; this is the break-even for use in daytime hours only (the night discount not reached).
  std::optional<double> daytime_hours_per_month;
  std::string note;
};

// Every pair of offers of the same GPU in different billing modes, for the calendar month
// starting at `month_start`.
std::vector<BreakevenPair> Breakeven(const OfferSet& offers, LocalHour month_start);

// The hours per calendar month the k-th GPU of a trace is busy (k = 1 .. ceil(peak)): the
// load-duration curve, which break-even compares with each pair's hours. A trace longer than one
// calendar month is averaged to a month of `month_hours` (the break-even month's); one of a month
// or less is taken as it is (`scaled` false).
std::vector<double> LevelHoursPerMonth(const UsageTrace& u, int64_t month_hours, bool* scaled);

}  // namespace gpuplan
