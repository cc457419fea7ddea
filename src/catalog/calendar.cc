#include "catalog/calendar.h"

#include <algorithm>

#include "core/civil.h"

namespace gpuplan {

int64_t AddMonths(int64_t local_hour, int64_t months) {
  const int64_t days = FloorDiv(local_hour, 24);
  const int64_t hour = local_hour - days * 24;
  const CivilDate c = CivilFromDays(days);
  const int64_t m0 = c.year * 12 + (c.month - 1) + months;
  const int64_t y = FloorDiv(m0, 12);
  const int m = static_cast<int>(m0 - y * 12 + 1);
  const int d = std::min(c.day, DaysInMonth(y, m));
  return DaysFromCivil(y, m, d) * 24 + hour;
}

int64_t TermStart(TermUnit unit, int64_t anchor, int64_t k) {
  switch (unit) {
    case TermUnit::kHour: return anchor + k;
    case TermUnit::kDay: return anchor + 24 * k;
    case TermUnit::kWeek: return anchor + 168 * k;
    case TermUnit::kMonth: return AddMonths(anchor, k);
    case TermUnit::kYear: return AddMonths(anchor, 12 * k);
  }
  return anchor;
}

int64_t TermIndex(TermUnit unit, int64_t anchor, int64_t hour) {
  switch (unit) {
    case TermUnit::kHour: return hour - anchor;
    case TermUnit::kDay: return FloorDiv(hour - anchor, 24);
    case TermUnit::kWeek: return FloorDiv(hour - anchor, 168);
    case TermUnit::kMonth:
    case TermUnit::kYear: {
      const int64_t per = unit == TermUnit::kMonth ? 1 : 12;
      // Estimate from the shortest month (672 h), then step to the exact term.
      int64_t k = std::max<int64_t>(0, FloorDiv(hour - anchor, 672 * per) - 1);
      while (k > 0 && TermStart(unit, anchor, k) > hour) --k;
      while (TermStart(unit, anchor, k + 1) <= hour) ++k;
      return k;
    }
  }
  return 0;
}

}  // namespace gpuplan
