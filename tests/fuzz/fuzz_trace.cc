// Fuzz the meter trace reader (JSON Lines, {"repeat": N} expanded) through the file it reads, and
// the writer on what was read (meter record writes what meter run --replay reads).
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "core/error.h"
#include "fuzz_input_file.h"
#include "meter/trace.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = gpuplan::fuzz::InputFile(data, size, "trace.jsonl");
  try {
    const auto reader = gpuplan::TraceReader::Open(path);
    std::ostringstream out;
    gpuplan::TraceWriter writer(out, reader->header());
    gpuplan::TraceStep step;
    // A repeat line stands for up to 100,000 steps; a few thousand cover the reader's paths.
    for (int n = 0; n < 5000 && reader->Next(step); ++n) {
      writer.Write(step);
    }
    writer.Finish();
  } catch (const gpuplan::InputError&) {
  } catch (const gpuplan::EnvironmentError&) {
  }
  return 0;
}
