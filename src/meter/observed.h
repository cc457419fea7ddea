// Observed use, hour by hour, and its money (docs/meter.md).
//
// ReadObservedUse turns the store's roll-ups over a range into one row per GPU and hour: the
// time observed, busy (a process on the GPU or utilisation > 0), active (utilisation > 0),
// allocated-but-idle (observed, not busy), energy, and the time spent in each utilisation
// bucket; plus the processes seen on each GPU in each hour. It reads the finest data that is
// complete for each part of the range: the hour tables up to the store's hours watermark, the
// minute tables up to its minutes watermark, the raw samples after it (so "so far" includes the
// minutes not yet rolled up).
//
// Up and down. The meter sees a machine only while its agent samples it: a sampled hour's
// observed time is time the machine was up, and time with no samples is down (stopped,
// released, or the agent not running: the meter cannot tell these apart). The machine's up time
// in an hour is the largest observed time of its GPUs (the agent samples all of them at once).
//
// BillObservedUse prices that use under one offer with the billing rules of src/cost/billing.h,
// the same functions the rental optimiser calls (docs/meter.md, "Billing"):
// - hourly offers (on-demand, spot): the machine's GPUs are the offer's instances in index order
//   (gpus_per_instance each); an instance is billed, hour by hour, for its up minutes
//   (billing_starts create or start: the meter cannot see the minutes between creation and
//   boot, so both bill the up time) or for its task minutes (billing_starts task: the time any
//   of its GPUs was busy), by BillInstanceHours: granularity, night window, fixed fees, and
//   between up periods the stopped-instance fee or re-creation, whichever costs less (the
//   optimiser's keep-or-release rule; nothing for task billing). Spot is billed without rework:
//   the observed time already holds the interruptions;
// - reserved offers (yearly, monthly, weekly, daily): the term price whether used or not,
//   prorated to the range hour by hour (ReservedCostPerHour), for ceil(GPUs / gpus_per_instance)
//   instances.
// A GPU's share of an hour's money is its instance's cost split over the instance's GPUs; the
// idle share is the part of the billed time in which the GPU was not busy.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cost/billing.h"
#include "catalog/offer.h"
#include "cost/usage.h"
#include "meter/sample.h"
#include "meter/store.h"

namespace gpuplan {

// The report's utilisation distribution: five buckets of a sample's (or a minute's) mean GPU
// utilisation: 0 (no kernel ran), 1-25 (0 < u <= 25), 26-50 (25 < u <= 50), 51-75 (50 < u <= 75),
// 76-100 (u > 75).
inline constexpr std::size_t kUtilisationBuckets = 5;
// "0", "1-25", "26-50", "51-75", "76-100".
std::string_view UtilisationBucketName(std::size_t bucket);
std::size_t UtilisationBucket(double mean_percent);

// One GPU over one hour.
struct GpuHourUse {
  std::chrono::milliseconds observed{};
  std::chrono::milliseconds busy{};    // a process on the GPU or utilisation > 0
  std::chrono::milliseconds active{};  // utilisation > 0
  uint64_t energy_mj = 0;
  bool energy_measured = false;  // some sample had the energy counter
  // Observed time by utilisation bucket (from raw samples and minute roll-ups; where only the
  // hour roll-up is left, the hour's mean), and observed time with no utilisation reading.
  std::array<std::chrono::milliseconds, kUtilisationBuckets> utilisation{};
  std::chrono::milliseconds utilisation_unmeasured{};
  int64_t rows = 0;  // store rows read into this hour (0: the GPU was not seen in it)
  bool utilisation_from_hour_mean = false;  // its distribution rests on the hour roll-up's mean alone
  std::chrono::milliseconds Idle() const { return observed - busy; }  // allocated but idle
};

// One process on one GPU in one hour: how long it was seen there.
struct ProcessHourUse {
  std::size_t hour = 0;  // index into the range's hours
  int gpu = 0;
  ProcessIdentity who;
  std::chrono::milliseconds observed{};
};

struct ObservedUse {
  UtcMillis from{};       // start of the first hour (a whole UTC hour)
  std::size_t hours = 0;  // consecutive hours from `from`
  std::vector<int> gpus;  // NVML indexes seen in the range, ascending
  std::vector<std::optional<std::string>> uuids;  // per gpus[i]
  std::vector<std::vector<GpuHourUse>> use;       // [i][hour], i indexes gpus
  std::vector<std::chrono::milliseconds> up;      // per hour: the machine's up time (largest observed)
  std::vector<ProcessHourUse> processes;          // by hour, then GPU, then identity
  // GPU-hours whose utilisation distribution comes from the hour roll-up's mean alone (the
  // minute roll-ups were trimmed by retention); 0 when every hour had finer data.
  int64_t utilisation_from_hour_means = 0;

  UtcMillis To() const { return from + std::chrono::hours{static_cast<int64_t>(hours)}; }
  // First and one-past-last hour with any observed time; nullopt when nothing was observed.
  std::optional<std::pair<std::size_t, std::size_t>> ObservedHours() const;
};

// The store's use over `range`, widened to whole hours. Reads hour, minute and raw tables as
// described above.
ObservedUse ReadObservedUse(const MeterStore& store, const TimeRange& range);

// The hours [first_hour, first_hour + hours) of `use`: what ReadObservedUse gives for that part
// of the range (each hour is read the same whatever the range around it: the tables a part
// comes from follow the store's watermarks, not the range), so one read serves many sub-ranges
// (the timeline of report.h, the budget replay of alert_replay.h). GPUs not seen in the part are
// left out, as a read of the part leaves them out; a GPU keeps the range's last UUID.
ObservedUse SliceObservedUse(const ObservedUse& use, std::size_t first_hour, std::size_t hours);

// One GPU's bill over the range.
struct GpuBill {
  int gpu = 0;
  double billed_hours = 0;       // card-hours billed
  double idle_billed_hours = 0;  // of them, with the GPU not busy (allocated but idle)
  double compute = 0;            // the hours' price (reserved: the prorated terms)
  double fixed_fees = 0;         // storage and bandwidth (hourly offers; in `compute` for reserved)
  double stopped = 0;            // stopped-instance fees between up periods
  double recreate = 0;           // re-creation after a release between up periods
  double idle_money = 0;         // the idle share of compute + fixed fees
  std::vector<double> hour_cost;        // per hour: compute + fixed fees
  std::vector<double> hour_billed;      // per hour: card-hours billed
  std::vector<double> hour_idle_share;  // per hour: share of the billed time the GPU was not busy
  double Money() const { return compute + fixed_fees + stopped + recreate; }
};

struct ObservedBill {
  const Offer* offer = nullptr;  // the offer billed (into the caller's OfferSet)
  std::string currency;
  Zone zone;  // the offers' zone, else UTC
  std::vector<GpuBill> gpus;  // parallel to ObservedUse::gpus
  std::vector<std::string> notes;
  double Money() const;
  double IdleMoney() const;
  double BilledHours() const;
  double IdleBilledHours() const;
};

// The money of `use` under `offer` in the offers' zone (local hours decide the night window and
// calendar months). Spot is billed as capacity (no rework); see the header comment.
ObservedBill BillObservedUse(const ObservedUse& use, const Offer& offer, const OfferSet& offers);

// The month holding the last hour of a report, and where it is heading: the money from the
// month's start (or the first observation, when later) to `to`, the rate per hour over that
// time, and that rate carried to the month's end.
struct MonthProjection {
  std::string month;          // YYYY-MM in the offers' zone
  UtcMillis from{};           // the month so far: [from, to)
  UtcMillis to{};
  UtcMillis month_end{};      // the next month's start
  double so_far = 0;          // money billed in [from, to)
  double per_hour = 0;        // so_far / its hours
  double remaining_hours = 0; // to .. month_end
  double projected = 0;       // so_far + per_hour x remaining_hours; a reserved offer: per_hour x the month
  // A reserved offer: its terms are paid whole, so the month projects to the contract's bill
  // (per_hour over every hour of the month, the hours before metering began included).
  bool whole_term = false;
};
// nullopt when nothing was observed in the month up to `to`.
std::optional<MonthProjection> ProjectMonth(const MeterStore& store, const Offer& offer, const OfferSet& offers,
                                            UtcMillis to);
// The same from use already read: `use` holds the hours from ProjectMonthFrom(...) to `to`
// (and may hold more around them); `first` is the store's first sample (ProjectMonthFrom).
std::optional<MonthProjection> ProjectMonthOf(const ObservedUse& use, std::optional<UtcMillis> first,
                                              const Offer& offer, const OfferSet& offers, UtcMillis to);
// The store's first sample in any table (the start of what ProjectMonth can bill), and the
// hour a projection to `to` starts at: the month's start or that first hour, the later.
std::optional<UtcMillis> StoreFirst(const MeterStore& store);
UtcMillis ProjectMonthFrom(std::optional<UtcMillis> first, const OfferSet& offers, UtcMillis to);

// What the exported usage counts per hour (docs/meter.md, "Export").
enum class UsageBasis {
  kBusy,       // GPU-hours busy: the work the GPUs did, the demand the optimiser should serve
  kAllocated,  // GPU-hours observed (up), busy or not: what was held
};
std::string_view ToString(UsageBasis b);
// "busy" or "allocated" (case-insensitive); InputError naming `field` otherwise.
UsageBasis ParseUsageBasis(const std::string& text, const std::string& field = "basis");

// The hourly trace cost reads (cost/usage.h) from observed use: one hour per hour of the range,
// `firm` = the GPU-hours busy (or observed) in that hour summed over the GPUs (so 2 GPUs busy
// for 30 minutes give 1), 60 minutes each, in `zone`.
UsageTrace UsageTraceFromObserved(const ObservedUse& use, const Zone& zone, UsageBasis basis);
UsageTrace UsageTraceFromStore(const MeterStore& store, const TimeRange& range, const Zone& zone,
                               UsageBasis basis = UsageBasis::kBusy);
// The CSV `gpuplan cost --usage` reads (ParseUsageCsv): header `timestamp,gpus`, one row per
// hour of the trace, zero rows included, timestamps with their offset ("2026-03-01T09:00+08:00").
std::string UsageTraceToCsv(const UsageTrace& trace);

}  // namespace gpuplan
