#include "read/time_text.h"

#include <fmt/format.h>

#include <cstdio>

#include "core/civil.h"
#include "core/error.h"

namespace gpuplan {

std::string FormatLocalHour(int64_t local_hour) {
  const int64_t days = FloorDiv(local_hour, 24);
  const CivilDate c = CivilFromDays(days);
  return fmt::format("{:04d}-{:02d}-{:02d}T{:02d}:00", c.year, c.month, c.day, local_hour - days * 24);
}

std::string FormatLocalMinute(int64_t local_minute) {
  const int64_t hour = FloorDiv(local_minute, 60);
  std::string s = FormatLocalHour(hour);
  return s.substr(0, s.size() - 2) + fmt::format("{:02d}", local_minute - hour * 60);
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
    *minutes = kChinaStandardTimeMinutes;
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

bool ParseIsoHour(const std::string& s, int zone, int64_t* hour, int* hour_of_day) {
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, sec = 0;
  char sep = 0;
  int consumed = 0;
  if (std::sscanf(s.c_str(), "%4d-%2d-%2d%c%2d:%2d%n", &y, &mo, &d, &sep, &h, &mi, &consumed) < 6) {
    return false;
  }
  std::string rest = s.substr(static_cast<std::size_t>(consumed));
  if (!rest.empty() && rest[0] == ':') {
    int more = 0;
    if (std::sscanf(rest.c_str(), ":%2d%n", &sec, &more) != 1) {
      return false;
    }
    rest = rest.substr(static_cast<std::size_t>(more));
  }
  int offset = zone;
  if (!rest.empty() && !ParseUtcOffset(rest, &offset)) {
    return false;
  }
  if ((sep != 'T' && sep != ' ') || mo < 1 || mo > 12 || d < 1 || d > DaysInMonth(y, mo) || h > 23 || mi != 0 ||
      sec != 0) {
    return false;
  }
  *hour = DaysFromCivil(y, mo, d) * 24 + h + (zone - offset) / 60;
  *hour_of_day = static_cast<int>(((*hour % 24) + 24) % 24);
  return true;
}

bool ParseTimeOfDay(const std::string& s, int* minute_of_day) {
  int h = -1, m = -1;
  char colon = 0;
  if (std::sscanf(s.c_str(), "%d%c%d", &h, &colon, &m) == 3 && colon == ':' && h >= 0 && h <= 24 && m >= 0 &&
      m < 60 && !(h == 24 && m > 0)) {
    *minute_of_day = h * 60 + m;
    return true;
  }
  return false;
}

int64_t DefaultJobStart(int zone, int64_t now_utc_seconds) {
  const int64_t local_seconds = now_utc_seconds + zone * 60LL;
  const CivilDate today = CivilFromDays(FloorDiv(local_seconds, 86400));
  int64_t y = today.year;
  int m = today.month;
  if (++m > 12) {
    m = 1;
    ++y;
  }
  const int64_t first = DaysFromCivil(y, m, 1);
  // 1970-01-01 was a Thursday: (days + 3) mod 7 is 0 on Mondays.
  const int64_t weekday = ((first + 3) % 7 + 7) % 7;
  const int64_t monday = first + (7 - weekday) % 7;
  return (monday * 24 + 9) * 60;
}

int64_t ParseJobStart(const std::string& s, int zone, int64_t now_utc_seconds) {
  const int64_t now_local_minute = (now_utc_seconds + zone * 60LL) / 60;
  if (s.empty()) {
    return DefaultJobStart(zone, now_utc_seconds);
  }
  if (s == "now") {
    return now_local_minute;
  }
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, n = 0;
  if (std::sscanf(s.c_str(), "%4d-%2d-%2dT%2d:%2d%n", &y, &mo, &d, &h, &mi, &n) == 5 &&
      static_cast<std::size_t>(n) == s.size() && mo >= 1 && mo <= 12 && d >= 1 && d <= DaysInMonth(y, mo) && h < 24 &&
      mi < 60) {
    return (DaysFromCivil(y, mo, d) * 24 + h) * 60 + mi;
  }
  if (std::sscanf(s.c_str(), "%2d:%2d%n", &h, &mi, &n) == 2 && static_cast<std::size_t>(n) == s.size() && h >= 0 &&
      h < 24 && mi >= 0 && mi < 60) {
    const int64_t today = now_local_minute / 1440;
    return today * 1440 + h * 60 + mi;
  }
  throw InputError::Option("start", "expected HH:MM, YYYY-MM-DDTHH:MM or now, got '" + s + "'");
}

}  // namespace gpuplan
