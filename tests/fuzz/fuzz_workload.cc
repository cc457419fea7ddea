// Fuzz the workload YAML reader of gpuplan plan (ParseWorkload: the plan's own keys and each
// job's fit options through fit's options table) and the months it spans.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.h"
#include "plan/workload.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const gpuplan::PlanWorkload w = gpuplan::ParseWorkload(text, "fuzz.yaml");
    (void)w.Months();
    for (const auto& v : w.serving) {
      (void)v.PeakQps();
    }
  } catch (const gpuplan::InputError&) {
  }
  return 0;
}
