// Fuzz the check report reader (what check compare / merge and the serve API read back) and the
// writer on what was read.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.h"
#include "check/render/check_json.h"
#include "read/json_fields.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    // LoadReport's steps, on the text instead of a file.
    const gpuplan::CheckReport r = gpuplan::ReportFromJson(gpuplan::ParseJsonText(text, "fuzz.json"), "fuzz.json");
    (void)r.ExitCode();
    (void)gpuplan::CheckReportToJson(r).dump();
  } catch (const gpuplan::InputError&) {
  }
  return 0;
}
