// Fuzz the HF config.json reader and the memory model behind it: any input must either
// produce a model or an InputError, never a crash, leak or undefined behaviour.
#include <cstddef>
#include <cstdint>
#include <string>

#include "catalog/model.h"
#include "core/error.h"
#include "fit/memory_model.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const gpuplan::ModelSpec m = gpuplan::ParseHfConfig(text, "fuzz.json");
    (void)m.ParamsTotal();
    (void)m.ParamsActive();
    gpuplan::Workload w;
    w.task = static_cast<gpuplan::Task>(size % 5);
    (void)gpuplan::EstimateMemory(m, w, gpuplan::Layout{}, {}, int64_t{80} << 30);
  } catch (const gpuplan::InputError&) {
  }
  return 0;
}
