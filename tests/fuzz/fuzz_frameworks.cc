// Fuzz the frameworks YAML reader (data/frameworks.yaml: the profiles of fit --framework).
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.h"
#include "fit/framework.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const auto cat = gpuplan::FrameworkCatalog::Parse(text, "fuzz.yaml");
    for (const auto& name : cat.Names()) {
      (void)cat.Find(name);
    }
    (void)cat.GgufBits("Q4_K_M");
  } catch (const gpuplan::InputError&) {
  }
  return 0;
}
