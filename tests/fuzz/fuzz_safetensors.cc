// Fuzz the safetensors header parser with whole files (length prefix, JSON header, data).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "catalog/safetensors.h"
#include "core/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const auto h = gpuplan::ParseSafetensorsHeader(std::string_view(reinterpret_cast<const char*>(data), size), size,
                                                   "fuzz.safetensors");
    for (const auto& t : h.tensors) {
      (void)t.Elements();
    }
  } catch (const gpuplan::InputError&) {
  }
  return 0;
}
