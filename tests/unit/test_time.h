// Times for tests written as the hand-worked cases state them: civil dates, hours since the
// epoch of a zone's wall clock, minutes, UTC seconds. Built on core/time.h's types.
#pragma once

#include <cstdint>

#include "core/time.h"

namespace gpuplan::test {

// Days since 1970-01-01 of a civil date.
inline int64_t Days(int y, unsigned m, unsigned d) { return CivilDay(y, m, d).time_since_epoch().count(); }
// A wall-clock hour / minute from its count since 1970-01-01T00:00.
inline LocalHour Hour(int64_t h) { return LocalHour{std::chrono::hours{h}}; }
inline LocalMinute Minute(int64_t m) { return LocalMinute{std::chrono::minutes{m}}; }
inline int64_t Count(LocalHour h) { return h.time_since_epoch().count(); }
inline int64_t Count(LocalMinute m) { return m.time_since_epoch().count(); }
inline UtcSeconds Seconds(int64_t s) { return UtcSeconds{std::chrono::seconds{s}}; }
inline Zone Offset(int minutes) { return Zone::FixedOffset(std::chrono::minutes{minutes}); }

}  // namespace gpuplan::test
