// `gpuplan meter watch` and `meter compare` results (meter/watch.h) as JSON (--json FILE: the
// same keys are read back by compare; docs/meter-watch.md lists them) and as text: duration,
// exit code, the GPU and CPU curves as terminal sparklines, the diagnosis and its evidence; and
// several machines' results side by side.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "meter/watch.h"

namespace gpuplan {

inline constexpr const char* kWatchSchema = "gpuplan-meter-watch/1";

nlohmann::json WatchResultToJson(const WatchResult& r);
// InputError naming `file` and the key for a file that is not a watch result.
WatchResult WatchResultFromJson(const nlohmann::json& j, const std::string& file);
WatchResult LoadWatchResult(const std::string& path);

// "▁▂▃▅▇": one block per value, 0 to `full` in eight steps; absent values are spaces. At most
// `width` blocks: longer series are averaged into that many buckets.
std::string Sparkline(const std::vector<std::optional<double>>& values, double full, std::size_t width = 60);

void WatchResultToText(std::ostream& os, const WatchResult& r);
void WatchComparisonToText(std::ostream& os, const std::vector<std::pair<std::string, WatchResult>>& results);

}  // namespace gpuplan
