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
  using gpuplan::Zone;
  const std::string text(reinterpret_cast<const char*>(data), size);
  // A fixed offset (its name is the offset, "+08:00"; a named zone's is its IANA name).
  if (const auto zone = gpuplan::ParseZone(text); zone && (zone->Name()[0] == '+' || zone->Name()[0] == '-')) {
    const auto m = zone->OffsetAt(gpuplan::UtcMillis{}).count();
    Require(m % 60 == 0 && m >= -14 * 60 && m <= 14 * 60);
    const auto again = gpuplan::ParseZone(gpuplan::FormatUtcOffset(std::chrono::minutes{m}));
    Require(again && *again == *zone);
  }
  if (const auto month = gpuplan::ParseYearMonth(text)) {
    Require(gpuplan::ParseYearMonth(gpuplan::FormatLocalHour(*month).substr(0, 7)) == month);
  }
  for (const Zone& zone : {Zone::FixedOffset(std::chrono::minutes{0}), gpuplan::ChinaStandardTime(),
                           Zone::FixedOffset(std::chrono::hours{-5})}) {
    if (const auto hour = gpuplan::ParseIsoHour(text, zone)) {
      const std::string formatted = gpuplan::FormatLocalHour(*hour);
      Require(!FourDigitYear(formatted) || gpuplan::ParseIsoHour(formatted, zone) == hour);
    }
  }
  if (const auto tod = gpuplan::ParseTimeOfDay(text)) {
    Require(tod->count() >= 0 && tod->count() <= 24 * 60);
  }
  try {
    const gpuplan::UtcSeconds now{std::chrono::seconds{1772359200}};  // 2026-03-01T10:00Z
    const gpuplan::LocalMinute start = gpuplan::ParseJobStart(text, gpuplan::ChinaStandardTime(), now);
    const std::string formatted = gpuplan::FormatLocalMinute(start);
    Require(!FourDigitYear(formatted) ||
            gpuplan::ParseJobStart(formatted, gpuplan::ChinaStandardTime(), now) == start);
  } catch (const gpuplan::InputError&) {
  }
  return 0;
}
