// Billing terms on the civil calendar: calendar days, months and years of a zone's wall clock
// (docs/cost-model.md §0). Times are core/time.h's LocalHour; their text is read/time_text.h.
#pragma once

#include <cstdint>

#include "core/time.h"

namespace gpuplan {

// China Standard Time, the articles' default zone: the fixed offset +08:00 (ChinaStandardTime,
// core/time.h; Asia/Shanghai has kept it without daylight saving since 1991), so no tz database
// is needed.
inline Zone DefaultZone() { return ChinaStandardTime(); }

// `months` calendar months after a local hour: the same day of month (clamped to the month's
// length: Jan 31 + 1 month = Feb 28/29) and the same hour.
LocalHour AddMonths(LocalHour h, int64_t months);
// 00:00 on the 1st of the month holding `h`.
LocalHour MonthStartOf(LocalHour h);

enum class TermUnit { kHour, kDay, kWeek, kMonth, kYear };

// The start of term `k` of a grid of `unit` anchored at `anchor` (k = 0 is the anchor). Months
// and years are counted from the anchor, not chained, so Jan 31 -> Feb 28 -> Mar 31.
LocalHour TermStart(TermUnit unit, LocalHour anchor, int64_t k);
// Index of the term holding `hour` (hour >= anchor).
int64_t TermIndex(TermUnit unit, LocalHour anchor, LocalHour hour);

}  // namespace gpuplan
