// Fuzz the time texts of usage CSV, offers YAML and flags (read/time_text.h): each reader on the
// input, with the ranges its header promises checked and what it read formatted and read back.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.h"
#include "read/time_text.h"

namespace {

void Require(bool ok) {
  if (!ok) {
    __builtin_trap();
  }
}

// Formatted times read back only in years 0000-9999 (the readers take four-digit years).
bool FourDigitYear(const std::string& formatted) { return formatted.size() == 16 && formatted[0] != '-'; }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  int minutes = 0;
  if (gpuplan::ParseUtcOffset(text, &minutes)) {
    Require(minutes % 60 == 0 && minutes >= -14 * 60 && minutes <= 14 * 60);
    int again = 1;
    Require(gpuplan::ParseUtcOffset(gpuplan::FormatUtcOffset(minutes), &again) && again == minutes);
  }
  int64_t hour = 0;
  if (gpuplan::ParseYearMonth(text, &hour)) {
    int64_t again = -1;
    Require(gpuplan::ParseYearMonth(gpuplan::FormatLocalHour(hour).substr(0, 7), &again) && again == hour);
  }
  for (const int zone : {0, gpuplan::kChinaStandardTimeMinutes, -5 * 60}) {
    int hour_of_day = -1;
    if (gpuplan::ParseIsoHour(text, zone, &hour, &hour_of_day)) {
      Require(hour_of_day >= 0 && hour_of_day < 24 && ((hour % 24) + 24) % 24 == hour_of_day);
      int64_t again = -1;
      int again_of_day = -1;
      const std::string formatted = gpuplan::FormatLocalHour(hour);
      Require(!FourDigitYear(formatted) ||
              (gpuplan::ParseIsoHour(formatted, zone, &again, &again_of_day) && again == hour));
    }
  }
  int minute_of_day = -1;
  if (gpuplan::ParseTimeOfDay(text, &minute_of_day)) {
    Require(minute_of_day >= 0 && minute_of_day <= 24 * 60);
  }
  try {
    const int64_t now = 1772359200;  // 2026-03-01T10:00Z
    const int64_t start = gpuplan::ParseJobStart(text, gpuplan::kChinaStandardTimeMinutes, now);
    const std::string formatted = gpuplan::FormatLocalMinute(start);
    Require(!FourDigitYear(formatted) ||
            gpuplan::ParseJobStart(formatted, gpuplan::kChinaStandardTimeMinutes, now) == start);
  } catch (const gpuplan::InputError&) {
  }
  return 0;
}
