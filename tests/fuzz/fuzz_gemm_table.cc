// Fuzz the GEMM table YAML reader (data/gemm/<card>.yaml) and the interpolation over what it read.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.h"
#include "fit/gemm_table.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const auto t = gpuplan::GemmTable::Parse(text, "fuzz.yaml");
    for (const bool fp8 : {false, true}) {
      for (const auto& row : fp8 ? t.fp8 : t.bf16) {
        (void)t.Tflops(fp8, row[0], row[1], row[2]);
        (void)t.Tflops(fp8, row[0] * 1.5, row[1] * 0.75, row[2] + 1);
      }
      (void)t.Tflops(fp8, 4096, 4096, 4096);
    }
  } catch (const gpuplan::InputError&) {
  }
  return 0;
}
