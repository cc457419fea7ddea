// Fuzz the time model's accuracy file reader (data/accuracy.yaml, `--data-dir`) and the note fit
// picks from what it read: each card's figures and its setups by precision class and family.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.h"
#include "fit/accuracy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const gpuplan::TimeAccuracy a = gpuplan::ParseTimeAccuracy(text, "fuzz.yaml");
    for (const gpuplan::KindErrors* k : {&a.training, &a.training_moe, &a.inference}) {
      for (const auto& c : k->by_gpu) {
        gpuplan::Gpu g;
        g.name = c.gpu;
        for (const bool fp8 : {false, true}) {
          for (const char* family : {"", "generic", "megatron", "torchtitan"}) {
            const gpuplan::AccuracySetup s{fp8, family};
            for (const bool training : {false, true}) {
              const auto n = gpuplan::AccuracyFor(&a, training, g, k == &a.training_moe, &s);
              // A setup is only ever one of the card's own entries, of the request's precision.
              if (n && n->setup && n->setup->precision != gpuplan::PrecisionClass(fp8)) {
                __builtin_trap();
              }
            }
          }
        }
      }
    }
  } catch (const gpuplan::InputError&) {
  }
  return 0;
}
