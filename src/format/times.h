// Times as text, written once: the ISO 8601 UTC "now" of reports and watch results, an instant
// as the local hour or minute it falls in, and a span of minutes.
#pragma once

#include <cstdint>
#include <string>

namespace gpuplan {

// Now in UTC to the second: "2026-12-03T21:15:00Z".
std::string UtcNowIso();

// The local hour an instant (milliseconds since the epoch) falls in, in the zone `zone`
// (minutes east of UTC; a zone's part below the hour is dropped from the hour, as the meter
// keeps whole-hour zones), with the zone: "2026-12-03T21:00+08:00".
std::string LocalHourText(int64_t ms, int zone);
// The local minute an instant falls in, with the zone: "2026-12-03T21:15+08:00".
std::string LocalMinuteText(int64_t ms, int zone);

// A span of minutes: whole minutes below two hours ("45 min"), then hours to one decimal
// ("2.5 h").
std::string FormatMinutes(double minutes);

}  // namespace gpuplan
