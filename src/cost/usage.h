// GPU demand over time: an hourly trace by class, placed on the calendar (docs/offers.md, "Usage").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "catalog/calendar.h"

namespace gpuplan {

enum class DemandClass { kSteady, kBurst, kInterruptible, kDeferrable };
const char* ToString(DemandClass c);

struct UsageHour {
  int hour_of_day = 0;        // 0-23, local time of the trace's zone
  double firm = 0;            // steady + burst GPUs: must run this hour
  double interruptible = 0;   // may run on spot
  double deferrable = 0;      // may move later, within deadline_hours
  int deadline_hours = 0;     // for the deferrable part (the smallest deadline given this hour)
  double minutes = 60;        // the part of the hour the demand lasts (a job starting at 09:30: 30)
  double Total() const { return firm + interruptible + deferrable; }
  double GpuHours() const { return Total() * minutes / 60.0; }
};

struct UsageTrace {
  std::vector<UsageHour> hours;  // consecutive hours from start_hour
  LocalHour start_hour{};        // the wall-clock hour of hours[0], in `zone`
  Zone zone = DefaultZone();     // the zone of start_hour and hour_of_day
  std::string start;             // first timestamp as given
  std::string source;
  std::string note;              // how the trace was made (extrapolated, synthetic month, ...)
  bool from_job = false;         // one job (UsageFromJob): its hours are the usage, not a sample
  // A fit --json job's own checkpoint save time (cost.spot_checkpoint_minutes): replaces the spot
  // offers' typed checkpoint minutes, so cost prices the rework fit priced (WithJobCheckpoint).
  std::optional<double> spot_checkpoint_minutes;
  // GB that leave the data centre over the trace (a fit job's export, or --egress-gb-per-month
  // over the trace's months), priced at the offers' egress price (CostItems::egress).
  double egress_gb = 0;
  LocalHour EndHour() const { return start_hour + std::chrono::hours{static_cast<int64_t>(hours.size())}; }
  // The local hour of hours[i].
  LocalHour HourAt(std::size_t i) const { return start_hour + std::chrono::hours{static_cast<int64_t>(i)}; }
  double TotalGpuHours() const;
  double Peak() const;
};

// CSV: header `timestamp,gpus` with optional `class` and `deadline_hours` columns; ISO 8601
// hours ("2026-01-05T09:00", seconds and a Z or +08:00 suffix accepted). Timestamps with an
// offset are converted to `zone` (the offers' zone); timestamps without one are
// taken to be in it. Several rows may share a timestamp (one per class); missing hours have no
// demand.
UsageTrace ParseUsageCsv(const std::string& text, const std::string& file, const Zone& zone = DefaultZone());
UsageTrace LoadUsageCsv(const std::string& path, const Zone& zone = DefaultZone());

// The calendar month starting at `month_start` (local hour of the 1st, 00:00) in which `gpus`
// GPUs are busy `hours_per_month` hours each, filled from 09:00 each day (a lab's daytime use).
// hours_per_month may be up to the month's length (744 in a 31-day month).
UsageTrace UsageFromHoursPerMonth(double hours_per_month, double gpus, LocalHour month_start,
                                  const Zone& zone = DefaultZone());
// The calendar month after the one holding `now`, in the given zone (the default month of
// --hours-per-month).
LocalHour NextMonthStart(UtcSeconds now, const Zone& zone);

// A job of `gpus` GPUs running `hours` hours from `start` (the zone's wall clock): every hour
// it touches holds all the GPUs, for the minutes it overlaps. `interruptible`
// (the job checkpoints and may be restarted): its demand may run on spot.
UsageTrace UsageFromJob(double gpus, double hours, LocalMinute start = LocalMinute{},
                        const Zone& zone = DefaultZone(), bool interruptible = false);

// Scales a measured sample (say one or two weeks) to a whole calendar period from the day the
// sample starts (TermUnit::kMonth or kYear) by repeating its whole weeks (the weekday shape is
// kept: Mondays map to Mondays); a sample shorter than a week is repeated as it is. The result's
// note says what was done.
UsageTrace Extrapolate(const UsageTrace& sample, TermUnit period);
// The same, from the sample's first day to `end`; `what` names the period in the note ("a {what}").
UsageTrace ExtrapolateTo(const UsageTrace& sample, LocalHour end, const std::string& what);

// The trace repeated from its start to fill `months` calendar months (for TCO horizons): a trace
// of one month or less starts again at each month's first hour (its same day of the month), a
// longer one repeats as a whole.
UsageTrace RepeatMonths(const UsageTrace& u, int64_t months);

// The trace run on to one calendar month from its start with idle hours (a trace already a month
// or longer: as it is). One job is a month's use: the rest of the month nothing runs.
UsageTrace PadToMonth(const UsageTrace& u);

}  // namespace gpuplan
