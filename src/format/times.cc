#include "format/times.h"

#include <fmt/format.h>

#include <chrono>
#include <ctime>

#include "core/civil.h"
#include "read/time_text.h"

namespace gpuplan {

namespace {
constexpr int64_t kMillisecondsPerMinute = 60 * 1000;
constexpr int64_t kMillisecondsPerHour = 60 * kMillisecondsPerMinute;
}  // namespace

std::string UtcNowIso() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string LocalHourText(int64_t ms, int zone) {
  return FormatLocalHour(FloorDiv(ms, kMillisecondsPerHour) + zone / 60) + FormatUtcOffset(zone);
}

std::string LocalMinuteText(int64_t ms, int zone) {
  return FormatLocalMinute(FloorDiv(ms, kMillisecondsPerMinute) + zone) + FormatUtcOffset(zone);
}

std::string FormatMinutes(double minutes) {
  return minutes < 120 ? fmt::format("{:.0f} min", minutes) : fmt::format("{:.1f} h", minutes / 60.0);
}

}  // namespace gpuplan
