// `gpuplan plan --markdown FILE`: the plan as GitHub-flavoured Markdown (a table per month of what
// runs and one of what it costs, the alternatives, the checks on delivery), English.
#pragma once

#include <string>

#include "plan/plan.h"

namespace gpuplan {

std::string PlanResultToMarkdown(const PlanResult& r);

}  // namespace gpuplan
