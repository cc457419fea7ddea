// `gpuplan plan --json` and POST /api/plan: the plan as JSON (docs/plan.md §4 names every key).
#pragma once

#include <nlohmann/json.hpp>

#include "plan/plan.h"

namespace gpuplan {

nlohmann::json PlanResultToJson(const PlanResult& r);

}  // namespace gpuplan
