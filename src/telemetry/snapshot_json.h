// JSON form of the telemetry model (snapshot.h): keys are the struct field names exactly, an absent
// optional is an absent key, `not_measured` is an object. Used by recordings (recorded_source.h)
// and the check report. Lossless: SnapshotFromJson(ToJson(s)) == s.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "telemetry/snapshot.h"

namespace gpuplan {

nlohmann::json ToJson(const SystemSnapshot& s);
nlohmann::json ToJson(const GpuSnapshot& g);
nlohmann::json ToJson(const GpuEvent& e);
// Bad input -> InputError naming `file` and the field path ("gpus[2].memory_total"); `where` is
// the path prefix of `j` inside the file ("snapshots[0]").
SystemSnapshot SnapshotFromJson(const nlohmann::json& j, const std::string& file,
                                const std::string& where = "");
GpuSnapshot GpuSnapshotFromJson(const nlohmann::json& j, const std::string& file,
                                const std::string& where = "");
GpuEvent EventFromJson(const nlohmann::json& j, const std::string& file, const std::string& where = "");

bool operator==(const GpuSnapshot& a, const GpuSnapshot& b);
bool operator==(const GpuEvent& a, const GpuEvent& b);
bool operator==(const SystemSnapshot& a, const SystemSnapshot& b);

}  // namespace gpuplan
