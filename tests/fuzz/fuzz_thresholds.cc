// Fuzz the check thresholds file (--thresholds FILE), through the file it reads.
#include <cstddef>
#include <cstdint>
#include <string>

#include "check/thresholds.h"
#include "core/error.h"
#include "fuzz_input_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = gpuplan::fuzz::InputFile(data, size, "thresholds.yaml");
  try {
    (void)gpuplan::LoadCheckThresholds(path);
  } catch (const gpuplan::InputError&) {
  } catch (const gpuplan::EnvironmentError&) {
  }
  return 0;
}
