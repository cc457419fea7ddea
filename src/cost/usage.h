// GPU demand over time: an hourly trace by class (docs/offers.md, "Usage").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gpuplan {

enum class DemandClass { kSteady, kBurst, kInterruptible, kDeferrable };
const char* ToString(DemandClass c);

struct UsageHour {
  int hour_of_day = 0;        // 0-23
  double firm = 0;            // steady + burst GPUs: must run this hour
  double interruptible = 0;   // may run on spot
  double deferrable = 0;      // may move later, within deadline_hours
  int deadline_hours = 0;     // for the deferrable part (the smallest deadline given this hour)
  double Total() const { return firm + interruptible + deferrable; }
};

struct UsageTrace {
  std::vector<UsageHour> hours;  // consecutive hours from the first timestamp
  std::string start;             // first timestamp as given
  std::string source;
  double TotalGpuHours() const;
  double Peak() const;
};

// CSV: header `timestamp,gpus` with optional `class` and `deadline_hours` columns; ISO 8601
// hours ("2026-01-05T09:00", seconds and a Z or +08:00 suffix accepted). Several rows may
// share a timestamp (one per class); missing hours have no demand.
UsageTrace ParseUsageCsv(const std::string& text, const std::string& file);
UsageTrace LoadUsageCsv(const std::string& path);

// A month (730 hours) in which `gpus` GPUs are busy `hours_per_month` hours each, in working
// days from 09:00 (the shape of a lab's daytime use).
UsageTrace UsageFromHoursPerMonth(double hours_per_month, double gpus = 1);

// A job of gpus x hours GPU-hours (e.g. from `gpuplan fit --json`: layout.gpus, time.total_hours).
UsageTrace UsageFromJob(double gpus, double hours);

}  // namespace gpuplan
