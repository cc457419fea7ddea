// Billing terms on the civil calendar: calendar days, months and years in one fixed UTC offset
// (docs/cost-model.md §0; the date arithmetic is core/civil.h, times as text read/time_text.h). Times are "local hours": whole hours since 1970-01-01T00:00
// in that offset.
#pragma once

#include <cstdint>

#include "read/time_text.h"

namespace gpuplan {

// Asia/Shanghai (China Standard Time, no daylight saving): the articles' default zone.
inline constexpr int kDefaultUtcOffsetMinutes = kChinaStandardTimeMinutes;

// `months` calendar months after a local hour: the same day of month (clamped to the month's
// length: Jan 31 + 1 month = Feb 28/29) and the same hour.
int64_t AddMonths(int64_t local_hour, int64_t months);

enum class TermUnit { kHour, kDay, kWeek, kMonth, kYear };

// The start of term `k` of a grid of `unit` anchored at `anchor` (k = 0 is the anchor). Months
// and years are counted from the anchor, not chained, so Jan 31 -> Feb 28 -> Mar 31.
int64_t TermStart(TermUnit unit, int64_t anchor, int64_t k);
// Index of the term holding `hour` (hour >= anchor).
int64_t TermIndex(TermUnit unit, int64_t anchor, int64_t hour);

}  // namespace gpuplan
