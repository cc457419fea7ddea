// Text form of cost results (cost/requests.h): the tables and lines `gpuplan cost ...` prints
// without --json (the JSON form is cost_json.h). Amounts are in the result's currency.
#pragma once

#include <ostream>

#include "cost/requests.h"

namespace gpuplan {

void BreakevenToText(std::ostream& os, const BreakevenResult& b);
void CompareToText(std::ostream& os, const CompareResult& c);
// `spot_for_all`: the request let the plan put steady work on spot (--spot-for-all).
void OptimizeToText(std::ostream& os, const OptimizeResult& o, bool spot_for_all);
// One rental plan's lines (reserved terms, on-demand and spot hours, the money items, idle
// instances kept or released, the note), as `cost optimize` prints its cheapest plan.
void RentalToText(std::ostream& os, const Plan& best, const std::string& cur);
void TcoToText(std::ostream& os, const TcoJobResult& r);

}  // namespace gpuplan
