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
    // Each datatype's rows (fp8 with fast accumulation: rows of their own, or the fp8 rows times
    // fp8_fast_accum_scale), read at and between the measured shapes.
    for (const int rows : {gpuplan::GemmTable::kBf16, gpuplan::GemmTable::kFp8, gpuplan::GemmTable::kFp8FastAccum}) {
      for (const auto& row : t.RowsOf(t.RowsFor(rows))) {
        (void)t.Tflops(rows, row[0], row[1], row[2]);
        (void)t.Tflops(rows, row[0] * 1.5, row[1] * 0.75, row[2] + 1);
      }
      (void)t.Tflops(rows, 4096, 4096, 4096);
    }
  } catch (const gpuplan::InputError&) {
  }
  return 0;
}
