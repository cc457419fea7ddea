// Fuzz the recording reader (ReadRecording, through the file it reads) and its replay.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.h"
#include "fuzz_input_file.h"
#include "telemetry/recorded_source.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = gpuplan::fuzz::InputFile(data, size, "recording.json");
  try {
    const auto source = gpuplan::RecordedSource::Open(path);
    (void)source->Describe();
    for (int i = 0; i < 4; ++i) {
      (void)source->Snapshot();
      (void)source->Events(0);
    }
  } catch (const gpuplan::InputError&) {
  } catch (const gpuplan::EnvironmentError&) {
  }
  return 0;
}
