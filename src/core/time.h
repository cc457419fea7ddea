// Typed time, the one vocabulary of every layer: instants in UTC and wall-clock times in a zone
// as std::chrono time points, the civil calendar and the IANA time zones of the system's tz
// database through Howard Hinnant's date library (Debian's libhowardhinnant-date-dev: g++ 12's
// <chrono> has neither the calendar nor the database). A time that crosses a layer is one of
// these types; raw counts appear only inside a loop or in SQLite's columns (UTC milliseconds).
// The one ISO 8601 reader and writer is read/time_text.h.
#pragma once

#include <date/date.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace date {
class time_zone;
}

namespace gpuplan {

// Instants.
using UtcSeconds = date::sys_seconds;
using UtcMillis = date::sys_time<std::chrono::milliseconds>;
// a / b rounded towards minus infinity (b > 0): the tick or bucket of a time count.
inline int64_t FloorDiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

// Milliseconds since the Unix epoch: how the meter's store and samples keep instants.
inline UtcMillis FromUnixMillis(int64_t ms) { return UtcMillis{std::chrono::milliseconds{ms}}; }
inline int64_t UnixMillis(UtcMillis t) { return t.time_since_epoch().count(); }

// Wall-clock times of a zone (what a bill, a night window or a calendar month is written in).
using LocalMinute = date::local_time<std::chrono::minutes>;
using LocalHour = date::local_time<std::chrono::hours>;
using LocalDay = date::local_days;

// Builders and parts of civil times (no zone).
inline LocalDay CivilDay(int year, unsigned month, unsigned day) {
  return LocalDay{date::year{year} / date::month{month} / date::day{day}};
}
inline LocalHour CivilHour(int year, unsigned month, unsigned day, int hour = 0) {
  return LocalHour{CivilDay(year, month, day)} + std::chrono::hours{hour};
}
inline date::year_month_day DateOf(LocalHour h) { return date::year_month_day{date::floor<date::days>(h)}; }
inline int HourOfDay(LocalHour h) { return static_cast<int>((h - date::floor<date::days>(h)).count()); }
// 0 = Monday .. 6 = Sunday.
inline int DayOfWeek(LocalHour h) {
  return static_cast<int>(date::weekday{date::floor<date::days>(h)}.iso_encoding()) - 1;
}
inline int DaysInMonth(int year, unsigned month) {
  return static_cast<int>(static_cast<unsigned>((date::year{year} / date::month{month} / date::last).day()));
}
// Whole hours from one local hour to another (b - a).
inline int64_t HoursBetween(LocalHour a, LocalHour b) { return (b - a).count(); }

// A time zone: an IANA zone of the tz database (with its daylight-saving rules) or a fixed
// offset from UTC. Default: UTC.
class Zone {
 public:
  Zone() = default;
  static Zone FixedOffset(std::chrono::minutes offset);
  // "Asia/Shanghai", "Europe/Berlin": nullopt when the database has no such zone (or is absent).
  static std::optional<Zone> Named(std::string_view name);

  // The wall clock at an instant.
  date::local_time<std::chrono::milliseconds> ToLocal(UtcMillis t) const;
  LocalHour LocalHourOf(UtcMillis t) const { return date::floor<std::chrono::hours>(ToLocal(t)); }
  LocalMinute LocalMinuteOf(UtcMillis t) const { return date::floor<std::chrono::minutes>(ToLocal(t)); }
  // The instant of a wall-clock time: the earlier of two (autumn's repeated hour), the end of the
  // gap for one that does not exist (spring's skipped hour).
  UtcMillis ToUtc(date::local_time<std::chrono::milliseconds> t) const;
  LocalDay LocalDayOf(UtcMillis t) const { return date::floor<date::days>(ToLocal(t)); }
  // The instant a wall-clock time begins (ToUtc of a coarser time).
  template <class D>
  UtcMillis StartOf(date::local_time<D> t) const {
    return ToUtc(date::local_time<std::chrono::milliseconds>{t});
  }
  // The instant the local hour after the one holding `t` begins.
  UtcMillis NextHourStart(UtcMillis t) const { return StartOf(LocalHourOf(t) + std::chrono::hours{1}); }
  // Minutes east of UTC at an instant.
  std::chrono::minutes OffsetAt(UtcMillis t) const;
  // The IANA name, or the offset as "+08:00".
  std::string Name() const;
  bool operator==(const Zone& o) const { return tz_ == o.tz_ && offset_ == o.offset_; }

 private:
  const date::time_zone* tz_ = nullptr;
  std::chrono::minutes offset_{0};
};

// China Standard Time (+08:00, no daylight saving since 1991): the articles' zone, gpuplan's
// default for offers and usage. A fixed offset, so the default needs no tz database.
inline Zone ChinaStandardTime() { return Zone::FixedOffset(std::chrono::hours{8}); }

// Now, to the second.
inline UtcSeconds UtcNow() { return date::floor<std::chrono::seconds>(std::chrono::system_clock::now()); }

}  // namespace gpuplan
