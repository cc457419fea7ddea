// Civil calendar arithmetic for billing terms: calendar days, months and years in one fixed UTC
// offset (docs/cost-model.md §0). Times are "local hours": whole hours since 1970-01-01T00:00
// in that offset.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gpuplan {

// Asia/Shanghai (China Standard Time, no daylight saving): the articles' default zone.
inline constexpr int kDefaultUtcOffsetMinutes = 8 * 60;

struct CivilDate {
  int64_t year = 1970;
  int month = 1;  // 1-12
  int day = 1;    // 1-31
};

// Days since 1970-01-01 (H. Hinnant's days_from_civil / civil_from_days algorithms).
int64_t DaysFromCivil(int64_t y, int m, int d);
CivilDate CivilFromDays(int64_t days);
int DaysInMonth(int64_t y, int m);
// 0 = Monday .. 6 = Sunday.
int Weekday(int64_t days);

// `months` calendar months after a local hour: the same day of month (clamped to the month's
// length: Jan 31 + 1 month = Feb 28/29) and the same hour.
int64_t AddMonths(int64_t local_hour, int64_t months);

enum class TermUnit { kHour, kDay, kWeek, kMonth, kYear };

// The start of term `k` of a grid of `unit` anchored at `anchor` (k = 0 is the anchor). Months
// and years are counted from the anchor, not chained, so Jan 31 -> Feb 28 -> Mar 31.
int64_t TermStart(TermUnit unit, int64_t anchor, int64_t k);
// Index of the term holding `hour` (hour >= anchor).
int64_t TermIndex(TermUnit unit, int64_t anchor, int64_t hour);

// "2026-03-01T09:00" for a local hour; "+08:00" for an offset.
std::string FormatLocalHour(int64_t local_hour);
std::string FormatUtcOffset(int minutes);
// "+08:00", "-05:00", "Z", "UTC", "Asia/Shanghai" (the one named zone gpuplan knows, CST with no
// daylight saving); false for anything else or an offset that is not whole hours.
bool ParseUtcOffset(const std::string& s, int* minutes);
// "2026-03" -> local hour of 2026-03-01T00:00.
bool ParseYearMonth(const std::string& s, int64_t* local_hour);

}  // namespace gpuplan
