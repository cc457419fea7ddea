// Fuzz the fused-attention table YAML reader (data/attention/<arch>.yaml) and the interpolation
// over what it read.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.h"
#include "fit/attention_table.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const auto t = gpuplan::AttentionTable::Parse(text, "fuzz.yaml");
    for (const auto& row : t.causal) {
      (void)t.Tflops(row[0]);
      (void)t.Tflops(row[0] * 1.5);
      (void)t.Tflops(row[0] - 1);
    }
    (void)t.Tflops(0);
    (void)t.Tflops(8192);
  } catch (const gpuplan::InputError&) {
  }
  return 0;
}
