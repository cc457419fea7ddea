// JSON form of cost results (cost/requests.h): the one mapping used by the CLI (--json) and the
// server. Keys are those of `gpuplan cost ... --json` (docs/cli.md); amounts are in `currency`.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "cost/optimizer.h"
#include "cost/requests.h"
#include "cost/usage.h"

namespace gpuplan {

nlohmann::json CostItemsToJson(const CostItems& c, const std::string& currency);
nlohmann::json PlanToJson(const Plan& p, const std::string& currency);
nlohmann::json UsageToJson(const UsageTrace& u);

nlohmann::json BreakevenToJson(const BreakevenResult& b);
nlohmann::json CompareToJson(const CompareResult& c);
nlohmann::json OptimizeToJson(const OptimizeResult& o);
nlohmann::json TcoToJson(const TcoJobResult& t);

}  // namespace gpuplan
