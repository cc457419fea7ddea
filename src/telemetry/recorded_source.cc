#include "telemetry/recorded_source.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "core/atomic_file.h"
#include "core/error.h"
#include "read/file_text.h"
#include "read/json_depth.h"
#include "read/json_fields.h"
#include "telemetry/snapshot_json.h"

namespace gpuplan {

using nlohmann::json;

json RecordingToJson(const Recording& r) {
  json j = {{"format", kRecordingFormat}, {"version", kRecordingVersion}, {"source", r.source}};
  j["snapshots"] = json::array();
  for (const auto& s : r.snapshots) j["snapshots"].push_back(ToJson(s));
  j["events"] = json::array();
  for (const auto& e : r.events) j["events"].push_back(ToJson(e));
  return j;
}

Recording RecordingFromJson(const json& j, const std::string& file) {
  if (!j.is_object()) throw InputError("a recording is a JSON object", file, 0, "");
  const auto fmt = j.find("format");
  if (fmt == j.end() || !fmt->is_string() || fmt->get<std::string>() != kRecordingFormat) {
    throw InputError(std::string("not a recording: format must be \"") + kRecordingFormat + "\"", file, 0,
                     "format");
  }
  const auto ver = j.find("version");
  if (ver == j.end() || !ver->is_number_integer() || ver->get<int64_t>() != kRecordingVersion) {
    throw InputError("unsupported recording version (this gpuplan reads version 1)", file, 0, "version");
  }
  Recording r;
  if (const auto it = j.find("source"); it != j.end()) {
    if (!it->is_string()) throw InputError("expected a string", file, 0, "source");
    r.source = it->get<std::string>();
  }
  for (const char* key : {"snapshots", "events"}) {
    const auto it = j.find(key);
    if (it == j.end()) continue;
    if (!it->is_array()) throw InputError("expected an array", file, 0, key);
    for (size_t i = 0; i < it->size(); ++i) {
      const std::string where = std::string(key) + "[" + std::to_string(i) + "]";
      if (std::string(key) == "snapshots") {
        r.snapshots.push_back(SnapshotFromJson((*it)[i], file, where));
      } else {
        r.events.push_back(EventFromJson((*it)[i], file, where));
      }
    }
  }
  return r;
}

Recording ReadRecording(const std::string& path) {
  const std::optional<std::string> text = TryReadFileText(path);
  if (!text) throw EnvironmentError("cannot read recording " + path + ": " + std::strerror(errno));
  // ParseJsonText: the depth check, and every nlohmann exception (a syntax error, a number too
  // large for a double: out_of_range.406, found by fuzz_recording) as an InputError with its line.
  const json j = ParseJsonText(*text, path);
  return RecordingFromJson(j, path);
}

void WriteRecording(const Recording& r, const std::string& path) {
  WriteFileAtomically(path, RecordingToJson(r).dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n", "recording");
}

std::unique_ptr<RecordedSource> RecordedSource::Open(const std::string& path) {
  return std::make_unique<RecordedSource>(ReadRecording(path), path);
}

RecordedSource::RecordedSource(Recording r, std::string path)
    : rec_(std::move(r)), path_(std::move(path)), returned_(rec_.events.size(), false) {}

std::string RecordedSource::Describe() const { return "recording " + path_ + " (" + rec_.source + ")"; }

SystemSnapshot RecordedSource::Snapshot() {
  if (rec_.snapshots.empty()) throw EnvironmentError("recording " + path_ + " has no snapshots");
  const size_t i = next_ < rec_.snapshots.size() ? next_ : rec_.snapshots.size() - 1;
  if (next_ < rec_.snapshots.size()) ++next_;
  now_ = rec_.snapshots[i].at_seconds;
  return rec_.snapshots[i];
}

std::vector<GpuEvent> RecordedSource::Events(unsigned /*timeout_ms*/) {
  std::vector<GpuEvent> out;
  for (size_t i = 0; i < rec_.events.size(); ++i) {
    if (!returned_[i] && rec_.events[i].at_seconds <= now_) {
      returned_[i] = true;
      out.push_back(rec_.events[i]);
    }
  }
  return out;
}

RecordingWriter::RecordingWriter(GpuSource& inner, std::string path)
    : inner_(inner), path_(std::move(path)) {
  rec_.source = inner_.Describe();
}

std::string RecordingWriter::Describe() const { return inner_.Describe(); }

SystemSnapshot RecordingWriter::Snapshot() {
  SystemSnapshot s = inner_.Snapshot();
  rec_.snapshots.push_back(s);
  WriteRecording(rec_, path_);
  return s;
}

std::vector<GpuEvent> RecordingWriter::Events(unsigned timeout_ms) {
  auto ev = inner_.Events(timeout_ms);
  rec_.events.insert(rec_.events.end(), ev.begin(), ev.end());
  return ev;
}

}  // namespace gpuplan
