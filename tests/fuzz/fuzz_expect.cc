// Fuzz the --expect text ("8x H100 SXM") against the shipped GPU catalog, and the CUDA version
// texts compared with it (--cuda).
#include <cstddef>
#include <cstdint>
#include <string>

#include "catalog/gpu_catalog.h"
#include "check/expect.h"
#include "core/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const gpuplan::GpuCatalog cat = gpuplan::GpuCatalog::Load(GPUPLAN_DATA_DIR "/gpus.yaml");
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    (void)gpuplan::ParseExpect(text, cat);
  } catch (const gpuplan::InputError&) {
  }
  (void)gpuplan::MinimumDriverForCuda(text);
  const int c = gpuplan::CompareVersions(text, "12.4");
  if (c != -gpuplan::CompareVersions("12.4", text)) {
    __builtin_trap();  // the order must be antisymmetric
  }
  return 0;
}
