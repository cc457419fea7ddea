#include "read/time_text.h"

#include <date/date.h>

#include <cstdio>
#include <sstream>

#include "core/error.h"

namespace gpuplan {

namespace {

using std::chrono::minutes;
using std::chrono::seconds;

// Reads all of `s` with date::parse's format `fmt` into `tp`; false unless every character was read.
template <class TimePoint>
bool ParseAll(const std::string& s, const char* fmt, TimePoint* tp, std::string* rest = nullptr) {
  std::istringstream in(s);
  in >> date::parse(fmt, *tp);
  if (in.fail()) {
    return false;
  }
  std::string tail;
  std::getline(in, tail, '\0');
  if (rest != nullptr) {
    *rest = tail;
    return true;
  }
  return tail.empty();
}

// "Z" or "+HH:MM"/"-HH:MM" (hours <= 14): the offset; nullopt for anything else.
std::optional<minutes> ParseOffsetSuffix(const std::string& s) {
  if (s == "Z") {
    return minutes{0};
  }
  if (s.size() != 6 || (s[0] != '+' && s[0] != '-') || s[3] != ':') {
    return std::nullopt;
  }
  for (std::size_t i : {1u, 2u, 4u, 5u}) {
    if (s[i] < '0' || s[i] > '9') {
      return std::nullopt;
    }
  }
  const int h = (s[1] - '0') * 10 + (s[2] - '0');
  const int m = (s[4] - '0') * 10 + (s[5] - '0');
  if (h > 14 || m > 59) {
    return std::nullopt;
  }
  return minutes{(s[0] == '-' ? -1 : 1) * (h * 60 + m)};
}

}  // namespace

std::string FormatUtcOffset(minutes offset) { return Zone::FixedOffset(offset).Name(); }

std::string FormatUtcOffsetAt(const Zone& zone, LocalHour h) {
  return FormatUtcOffset(zone.OffsetAt(zone.ToUtc(date::local_time<std::chrono::milliseconds>{h})));
}

std::optional<Zone> ParseZone(const std::string& s) {
  if (s == "Z" || s == "UTC" || s == "utc") {
    return Zone::FixedOffset(minutes{0});
  }
  if (s == "CST" || s == "China") {
    return ChinaStandardTime();
  }
  if (const auto off = ParseOffsetSuffix(s)) {
    if (off->count() % 60 != 0) {
      return std::nullopt;
    }
    return Zone::FixedOffset(*off);
  }
  if (s == "Asia/Shanghai") {
    // The default zone, read as China Standard Time (+08:00, no daylight saving since 1991), so
    // that it prints as +08:00, as it always did, and needs no tz database on the machine.
    return ChinaStandardTime();
  }
  auto z = Zone::Named(s);
  if (z && z->OffsetAt(UtcMillis{date::floor<std::chrono::milliseconds>(std::chrono::system_clock::now())})
                   .count() %
               60 !=
           0) {
    return std::nullopt;
  }
  return z;
}

std::string FormatLocalHour(LocalHour h) { return date::format("%Y-%m-%dT%H:00", h); }

std::string FormatLocalMinute(LocalMinute m) { return date::format("%Y-%m-%dT%H:%M", m); }

std::string FormatZonedMinute(const Zone& zone, UtcMillis t) {
  return FormatLocalMinute(zone.LocalMinuteOf(t)) + FormatUtcOffset(zone.OffsetAt(t));
}

std::string FormatZonedHour(const Zone& zone, UtcMillis t) {
  return FormatLocalHour(zone.LocalHourOf(t)) + FormatUtcOffset(zone.OffsetAt(t));
}

std::string FormatUtcIso(UtcSeconds t) { return date::format("%Y-%m-%dT%H:%M:%SZ", t); }

std::string FormatUtcIso(UtcMillis t) {
  const UtcSeconds whole = date::floor<seconds>(t);
  return whole == t ? FormatUtcIso(whole) : date::format("%Y-%m-%dT%H:%M:%SZ", t);
}

std::optional<IsoTime> ParseIsoTime(const std::string& text) {
  // The date and the time are separated by 'T' or a space; fields need not be zero-padded
  // (2027-3-1T9:00), as the readers have always taken them.
  const std::size_t sep = text.find_first_of("T ");
  if (text.size() > 64 || sep == std::string::npos || sep < 5) {
    return std::nullopt;
  }
  std::string s = text;
  s[sep] = 'T';
  IsoTime t;
  std::string rest;
  if (!ParseAll(s, "%Y-%m-%dT%H:%M", &t.wall, &rest)) {
    return std::nullopt;
  }
  if (!rest.empty() && rest[0] == ':') {
    // Seconds: exactly two digits.
    if (rest.size() < 3 || rest[1] < '0' || rest[1] > '5' || rest[2] < '0' || rest[2] > '9') {
      return std::nullopt;
    }
    t.wall += seconds{(rest[1] - '0') * 10 + (rest[2] - '0')};
    rest = rest.substr(3);
  }
  if (!rest.empty()) {
    t.offset = ParseOffsetSuffix(rest);
    if (!t.offset) {
      return std::nullopt;
    }
  }
  return t;
}

std::optional<LocalHour> ParseIsoHour(const std::string& s, const Zone& zone) {
  const auto t = ParseIsoTime(s);
  if (!t) {
    return std::nullopt;
  }
  if (date::floor<std::chrono::hours>(t->wall) != t->wall) {
    return std::nullopt;  // not on the hour
  }
  if (!t->offset) {
    return date::floor<std::chrono::hours>(t->wall);
  }
  const UtcMillis instant{t->wall.time_since_epoch() - *t->offset};
  const auto local = zone.ToLocal(instant);
  const LocalHour hour = date::floor<std::chrono::hours>(local);
  if (hour != local) {
    return std::nullopt;  // on the hour where it was written, not in the zone (a half-hour zone)
  }
  return hour;
}

std::optional<LocalHour> ParseYearMonth(const std::string& s) {
  date::year_month ym;
  std::istringstream in(s);
  in >> date::parse("%Y-%m", ym);
  if (in.fail() || in.peek() != std::char_traits<char>::eof()) {
    return std::nullopt;
  }
  if (ym.year() < date::year{1970} || ym.year() > date::year{2200}) {
    return std::nullopt;
  }
  return LocalHour{LocalDay{ym / date::day{1}}};
}

std::optional<LocalDay> ParseIsoDay(const std::string& s) {
  LocalDay d;
  if (s.size() > 10 || !ParseAll(s, "%Y-%m-%d", &d)) {
    return std::nullopt;
  }
  return d;
}

std::string FormatTimeOfDay(minutes m) {
  const auto h = static_cast<int>(m.count() / 60 % 100);  // at most 24:00
  const auto mm = static_cast<int>(m.count() % 60);
  char buf[8];
  std::snprintf(buf, sizeof buf, "%02d:%02d", h, mm);
  return buf;
}

std::optional<minutes> ParseTimeOfDay(const std::string& s) {
  if (s == "24:00") {
    return minutes{24 * 60};
  }
  // Read as a time of a day, so the hour (0-23) and the minute (0-59) are range-checked, which
  // date::parse does not do for a bare duration ("09:75" would be 10:15).
  LocalMinute t;
  if (s.empty() || s.size() > 5 || !ParseAll("2000-01-01T" + s, "%Y-%m-%dT%H:%M", &t)) {
    return std::nullopt;
  }
  return t - LocalMinute{LocalDay{date::year{2000} / 1 / 1}};
}

LocalMinute DefaultJobStart(const Zone& zone, UtcSeconds now) {
  const date::year_month_day today{date::floor<date::days>(zone.LocalHourOf(now))};
  const date::year_month next = date::year_month{today.year(), today.month()} + date::months{1};
  // 09:00 on the first Monday of that month.
  const LocalDay monday{next / date::Monday[1]};
  return LocalMinute{monday} + std::chrono::hours{9};
}

LocalMinute ParseJobStart(const std::string& s, const Zone& zone, UtcSeconds now) {
  if (s.empty()) {
    return DefaultJobStart(zone, now);
  }
  const LocalMinute now_local = zone.LocalMinuteOf(now);
  if (s == "now") {
    return now_local;
  }
  LocalMinute at;
  if (s.size() <= 16 && ParseAll(s, "%Y-%m-%dT%H:%M", &at)) {
    return at;
  }
  if (s.size() <= 5) {
    if (const auto tod = ParseTimeOfDay(s); tod && *tod < std::chrono::hours{24}) {
      return LocalMinute{date::floor<date::days>(now_local)} + *tod;
    }
  }
  throw InputError::Option("start", "expected HH:MM, YYYY-MM-DDTHH:MM or now, got '" + s + "'");
}

}  // namespace gpuplan
