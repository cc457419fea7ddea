// Fuzz the offers YAML reader (against the shipped GPU catalog).
#include <cstddef>
#include <cstdint>
#include <string>

#include "catalog/gpu_catalog.h"
#include "core/error.h"
#include "cost/billing.h"
#include "catalog/offer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const gpuplan::GpuCatalog cat = gpuplan::GpuCatalog::Load(GPUPLAN_DATA_DIR "/gpus.yaml");
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const auto set = gpuplan::ParseOffers(text, "fuzz.yaml", cat);
    const gpuplan::LocalHour feb = gpuplan::CivilHour(2027, 2, 1);  // the shortest month
    for (const auto& o : set.offers) {
      (void)gpuplan::MonthlyCostPerGpu(o, 100, feb);
    }
    (void)gpuplan::Breakeven(set, feb);
  } catch (const gpuplan::InputError&) {
  }
  return 0;
}
