// Times as text: ISO 8601 hours, UTC offsets, months and times of day read from inputs (usage
// CSV, offers YAML, flags) and written back. Times are "local hours" (or minutes): whole hours
// since 1970-01-01T00:00 in one fixed UTC offset (docs/cost-model.md §0).
#pragma once

#include <cstdint>
#include <string>

namespace gpuplan {

// China Standard Time (Asia/Shanghai, no daylight saving), the one named zone gpuplan knows.
inline constexpr int kChinaStandardTimeMinutes = 8 * 60;

// "2026-03-01T09:00" for a local hour; "+08:00" for an offset.
std::string FormatLocalHour(int64_t local_hour);
// "2026-03-01T09:30" for a local minute (minutes since 1970-01-01T00:00 in the zone).
std::string FormatLocalMinute(int64_t local_minute);
std::string FormatUtcOffset(int minutes);
// "+08:00", "-05:00", "Z", "UTC", "Asia/Shanghai" (the one named zone gpuplan knows, CST with no
// daylight saving); false for anything else or an offset that is not whole hours.
bool ParseUtcOffset(const std::string& s, int* minutes);
// "2026-03" -> local hour of 2026-03-01T00:00.
bool ParseYearMonth(const std::string& s, int64_t* local_hour);

// Local hour (and its hour of day) of an ISO 8601 timestamp on the hour, in the zone `zone`
// (minutes east of UTC): "2026-01-05T09:00" or with a space, seconds (":00") and a Z or
// "+08:00" suffix accepted; a timestamp with an offset is converted, one without is taken as is.
// False when it is not such a timestamp.
bool ParseIsoHour(const std::string& s, int zone, int64_t* hour, int* hour_of_day);

// "HH:MM" (00:00 .. 24:00) -> minutes since midnight; false for anything else.
bool ParseTimeOfDay(const std::string& s, int* minute_of_day);

// --start: "HH:MM" (today, in the offers' zone), "YYYY-MM-DDTHH:MM", "now", or empty for the
// convention below. Returns local minutes since the epoch. Throws InputError naming --start.
int64_t ParseJobStart(const std::string& s, int utc_offset_minutes, int64_t now_utc_seconds);

// The start of a job given no --start: 09:00 on the first Monday of the calendar month after
// `now` (a working morning, the same answer all month: docs/cost-model.md §8). Local minutes.
int64_t DefaultJobStart(int utc_offset_minutes, int64_t now_utc_seconds);
// What DefaultJobStart means, for the answer's basis line.
inline constexpr const char* kDefaultJobStartText = "no --start: 09:00 on the first Monday of next month";

}  // namespace gpuplan
