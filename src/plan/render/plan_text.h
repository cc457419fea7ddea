// `gpuplan plan` without --json: the plan month by month, the rentals with every fee, the total,
// the budget, the alternatives and the checks on delivery (zh or en, format/text_lang.h).
#pragma once

#include <ostream>

#include "plan/plan.h"

namespace gpuplan {

void PlanResultToText(std::ostream& os, const PlanResult& r);

}  // namespace gpuplan
