#include "cost/calendar.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>

namespace gpuplan {

int64_t DaysFromCivil(int64_t y, int m, int d) {
  y -= m <= 2 ? 1 : 0;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

CivilDate CivilFromDays(int64_t z) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  const int d = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  const int m = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  return {yoe + era * 400 + (m <= 2 ? 1 : 0), m, d};
}

int DaysInMonth(int64_t y, int m) {
  static const int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return m == 2 && leap ? 29 : kDays[m - 1];
}

namespace {
int64_t FloorDiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
}  // namespace

int Weekday(int64_t days) {
  // 1970-01-01 was a Thursday (3 with Monday = 0).
  return static_cast<int>(((days % 7) + 7 + 3) % 7);
}

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

std::string FormatLocalHour(int64_t local_hour) {
  const int64_t days = FloorDiv(local_hour, 24);
  const CivilDate c = CivilFromDays(days);
  return fmt::format("{:04d}-{:02d}-{:02d}T{:02d}:00", c.year, c.month, c.day, local_hour - days * 24);
}

std::string FormatUtcOffset(int minutes) {
  const int a = minutes < 0 ? -minutes : minutes;
  return fmt::format("{}{:02d}:{:02d}", minutes < 0 ? '-' : '+', a / 60, a % 60);
}

bool ParseUtcOffset(const std::string& s, int* minutes) {
  if (s == "Z" || s == "UTC" || s == "utc") {
    *minutes = 0;
    return true;
  }
  if (s == "Asia/Shanghai" || s == "CST" || s == "China") {
    *minutes = kDefaultUtcOffsetMinutes;
    return true;
  }
  int h = 0, m = 0, n = 0;
  char sign = 0;
  if (std::sscanf(s.c_str(), "%c%2d:%2d%n", &sign, &h, &m, &n) != 3 || static_cast<std::size_t>(n) != s.size() ||
      (sign != '+' && sign != '-') || h > 14 || m != 0) {
    return false;
  }
  *minutes = (sign == '-' ? -1 : 1) * h * 60;
  return true;
}

bool ParseYearMonth(const std::string& s, int64_t* local_hour) {
  int y = 0, m = 0, n = 0;
  if (std::sscanf(s.c_str(), "%4d-%2d%n", &y, &m, &n) != 2 || static_cast<std::size_t>(n) != s.size() || m < 1 ||
      m > 12 || y < 1970 || y > 2200) {
    return false;
  }
  *local_hour = DaysFromCivil(y, m, 1) * 24;
  return true;
}

}  // namespace gpuplan
