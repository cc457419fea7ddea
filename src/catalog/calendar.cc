#include "catalog/calendar.h"

#include <algorithm>

namespace gpuplan {

LocalHour AddMonths(LocalHour h, int64_t months) {
  const LocalDay day = date::floor<date::days>(h);
  const date::year_month_day ymd{day};
  const date::year_month ym = date::year_month{ymd.year(), ymd.month()} + date::months{months};
  const date::day last = (ym / date::last).day();
  return LocalHour{LocalDay{ym / std::min(ymd.day(), last)}} + (h - LocalHour{day});
}

LocalHour MonthStartOf(LocalHour h) {
  const date::year_month_day ymd{date::floor<date::days>(h)};
  return LocalHour{LocalDay{ymd.year() / ymd.month() / date::day{1}}};
}

LocalHour TermStart(TermUnit unit, LocalHour anchor, int64_t k) {
  switch (unit) {
    case TermUnit::kHour: return anchor + std::chrono::hours{k};
    case TermUnit::kDay: return anchor + std::chrono::hours{24 * k};
    case TermUnit::kWeek: return anchor + std::chrono::hours{168 * k};
    case TermUnit::kMonth: return AddMonths(anchor, k);
    case TermUnit::kYear: return AddMonths(anchor, 12 * k);
  }
  return anchor;
}

int64_t TermIndex(TermUnit unit, LocalHour anchor, LocalHour hour) {
  const int64_t d = HoursBetween(anchor, hour);
  switch (unit) {
    case TermUnit::kHour: return d;
    case TermUnit::kDay: return FloorDiv(d, 24);
    case TermUnit::kWeek: return FloorDiv(d, 168);
    case TermUnit::kMonth:
    case TermUnit::kYear: {
      const int64_t per = unit == TermUnit::kMonth ? 1 : 12;
      // Estimate from the shortest month (672 h), then step to the exact term.
      int64_t k = std::max<int64_t>(0, FloorDiv(d, 672 * per) - 1);
      while (k > 0 && TermStart(unit, anchor, k) > hour) --k;
      while (TermStart(unit, anchor, k + 1) <= hour) ++k;
      return k;
    }
  }
  return 0;
}

}  // namespace gpuplan
