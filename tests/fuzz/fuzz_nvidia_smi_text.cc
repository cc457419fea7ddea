// Fuzz the `nvidia-smi -q` text capture reader, and the snapshot's JSON (what check --json and
// recordings write of what was read).
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.h"
#include "telemetry/nvidia_smi.h"
#include "telemetry/snapshot_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const gpuplan::SystemSnapshot s = gpuplan::ParseNvidiaSmiQueryText(text, "fuzz.txt");
    (void)gpuplan::ToJson(s).dump();
  } catch (const gpuplan::InputError&) {
  }
  return 0;
}
