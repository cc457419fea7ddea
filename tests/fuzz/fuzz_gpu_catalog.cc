// Fuzz the GPU catalog YAML reader.
#include <cstddef>
#include <cstdint>
#include <string>

#include "catalog/gpu_catalog.h"
#include "core/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const auto cat = gpuplan::GpuCatalog::Parse(text, "fuzz.yaml");
    for (const auto& g : cat.gpus()) {
      (void)cat.TryFind(g.name);
    }
    (void)cat.FindByPciId("0x20B2");
  } catch (const gpuplan::InputError&) {
  }
  return 0;
}
