// Fuzz the usage CSV reader.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.h"
#include "cost/usage.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const auto u = gpuplan::ParseUsageCsv(text, "fuzz.csv");
    (void)u.TotalGpuHours();
    (void)u.Peak();
  } catch (const gpuplan::InputError&) {
  }
  return 0;
}
