// Recordings of GPU reads (docs/recording-format.md): replay one as a GpuSource (RecordedSource),
// or record another source while using it (RecordingWriter).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "telemetry/snapshot.h"

namespace gpuplan {

inline constexpr const char* kRecordingFormat = "gpuplan-recording";
inline constexpr int kRecordingVersion = 1;

struct Recording {
  std::string source;  // Describe() of the source that was recorded
  std::vector<SystemSnapshot> snapshots;
  std::vector<GpuEvent> events;
};

nlohmann::json RecordingToJson(const Recording& r);
Recording RecordingFromJson(const nlohmann::json& j, const std::string& file);
// Reads and validates a recording file; InputError on bad content, EnvironmentError if unreadable.
Recording ReadRecording(const std::string& path);
// Writes atomically (temp file in the same folder, fsync, rename); EnvironmentError naming the path.
void WriteRecording(const Recording& r, const std::string& path);

class RecordedSource : public GpuSource {
 public:
  static std::unique_ptr<RecordedSource> Open(const std::string& path);
  RecordedSource(Recording r, std::string path);
  std::string Describe() const override;
  // The snapshots in order; the last one again after the end (throws EnvironmentError if none).
  SystemSnapshot Snapshot() override;
  // Events at or before the current snapshot's time not yet returned (timeout is ignored).
  std::vector<GpuEvent> Events(unsigned timeout_ms) override;

 private:
  Recording rec_;
  std::string path_;
  size_t next_ = 0;
  double now_ = 0;
  std::vector<bool> returned_;
};

class RecordingWriter : public GpuSource {
 public:
  RecordingWriter(GpuSource& inner, std::string path);
  std::string Describe() const override;
  SystemSnapshot Snapshot() override;  // forwards, appends, rewrites the file
  std::vector<GpuEvent> Events(unsigned timeout_ms) override;  // forwards, appends
  const Recording& recording() const { return rec_; }

 private:
  GpuSource& inner_;
  std::string path_;
  Recording rec_;
};

}  // namespace gpuplan
