// JSON form of an error, the one mapping used by the CLI (--json) and the server:
//   {"error": {"kind": "input", "message": "...", "file": "x.yaml" | null, "line": 3 | null,
//              "field": "gpu" | null, "suggestions": ["H100 SXM 80GB", ...]}}
// kind: negative, input, usage, environment or internal (core/error.h, ErrorKind); file, line
// and field are null when unknown; suggestions is always an array (empty when none apply).
#pragma once

#include <nlohmann/json.hpp>

#include "core/error.h"

namespace gpuplan {

nlohmann::json ErrorToJson(const ErrorReport& r);

}  // namespace gpuplan
