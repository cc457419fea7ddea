// Fuzz the usage CSV reader.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.h"
#include "cost/billing.h"
#include "cost/usage.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const auto u = gpuplan::ParseUsageCsv(text, "fuzz.csv");
    (void)u.TotalGpuHours();
    (void)u.Peak();
    bool scaled = false;
    (void)gpuplan::LevelHoursPerMonth(u, 744, &scaled);
    if (u.hours.size() <= 24 * 31) {  // a sample: scale it to the month (as --extrapolate does)
      (void)gpuplan::Extrapolate(u, gpuplan::TermUnit::kMonth).TotalGpuHours();
    }
  } catch (const gpuplan::InputError&) {
  }
  return 0;
}
