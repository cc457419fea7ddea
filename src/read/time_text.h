// Times as text, read and written once: ISO 8601 times, months, days, times of day and zones of
// the inputs (usage CSV, offers YAML, flags, query strings) and of every output. Parsing is
// date::parse's (Howard Hinnant's date library, the model of C++20's std::chrono::parse); the
// values are core/time.h's typed times.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "core/time.h"

namespace gpuplan {

// "+08:00" for an offset.
std::string FormatUtcOffset(std::chrono::minutes offset);
// The zone's offset in force at a wall-clock hour, as "+08:00" (the earlier of a repeated hour).
std::string FormatUtcOffsetAt(const Zone& zone, LocalHour h);
// A zone: "+08:00", "-05:00", "Z", "UTC", an IANA name of the tz database ("Asia/Shanghai",
// "Europe/Berlin", with its daylight saving), or "CST"/"China" (+08:00). Nullopt for anything
// else, for an offset that is not whole hours and for a zone whose offset now is not (gpuplan
// bills whole local hours: docs/cost-model.md §0).
std::optional<Zone> ParseZone(const std::string& s);

// "2026-03-01T09:00" for a local hour, "2026-03-01T09:30" for a local minute.
std::string FormatLocalHour(LocalHour h);
std::string FormatLocalMinute(LocalMinute m);
// An instant on the zone's clock with the offset in force: "2026-03-01T09:30+08:00"; the hour
// holding it: "2026-03-01T09:00+08:00".
std::string FormatZonedMinute(const Zone& zone, UtcMillis t);
std::string FormatZonedHour(const Zone& zone, UtcMillis t);
// "2026-12-03T21:15:00Z".
std::string FormatUtcIso(UtcSeconds t);
// "2026-12-03T21:15:00.250Z"; whole seconds as FormatUtcIso.
std::string FormatUtcIso(UtcMillis t);
// Now in UTC to the second, as FormatUtcIso writes it.
inline std::string UtcNowIso() { return FormatUtcIso(UtcNow()); }

// The one ISO 8601 reader: "2026-01-05T09:00" or with a space, optional seconds, and an optional
// "Z" or "+08:00" suffix (the wall clock and the offset it was written with).
struct IsoTime {
  date::local_time<std::chrono::seconds> wall;
  std::optional<std::chrono::minutes> offset;
};
std::optional<IsoTime> ParseIsoTime(const std::string& s);

// The wall-clock hour in `zone` of a timestamp on the hour: one with an offset is that instant
// on the zone's clock, one without is taken as written. Nullopt when it is not such a timestamp.
std::optional<LocalHour> ParseIsoHour(const std::string& s, const Zone& zone);
// "2026-03" -> 2026-03-01T00:00 (years 1970-2200).
std::optional<LocalHour> ParseYearMonth(const std::string& s);
// "2026-03-01" -> that day.
std::optional<LocalDay> ParseIsoDay(const std::string& s);
// A time since midnight as "HH:MM".
std::string FormatTimeOfDay(std::chrono::minutes m);
// "HH:MM" (00:00 .. 24:00) -> the time since midnight.
std::optional<std::chrono::minutes> ParseTimeOfDay(const std::string& s);

// --start: "HH:MM" (today, in the zone), "YYYY-MM-DDTHH:MM", "now", or empty for the convention
// below. Throws InputError::Option with key `start` (each front end spells it: --start, start).
LocalMinute ParseJobStart(const std::string& s, const Zone& zone, UtcSeconds now);

// The start of a job given no --start: 09:00 on the first Monday of the calendar month after
// `now` in the zone (a working morning, the same answer all month: docs/cost-model.md §8).
LocalMinute DefaultJobStart(const Zone& zone, UtcSeconds now);
// What DefaultJobStart means, for the answer's basis line.
inline constexpr const char* kDefaultJobStartText = "no --start: 09:00 on the first Monday of next month";

}  // namespace gpuplan
