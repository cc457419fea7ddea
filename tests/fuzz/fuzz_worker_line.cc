// Fuzz the parser of gpu-worker's stdout lines: each line of the input, as the runner reads them.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "check/worker_protocol.h"
#include "core/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  std::string line;
  try {
    while (std::getline(in, line)) {
      std::string why;
      const auto w = gpuplan::ParseWorkerLine(line, &why);
      if (w) {
        for (const char* key : {"device", "fraction", "bytes", "seconds", "tflops", "verified", "reason", "error"}) {
          (void)w->Number(key);
          (void)w->Text(key);
          (void)w->Flag(key);
        }
      } else if (why.empty()) {
        __builtin_trap();  // a refused line must say why (the runner reports it)
      }
    }
  } catch (const gpuplan::InputError&) {
  }
  return 0;
}
