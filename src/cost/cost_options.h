// The options of the cost jobs (breakeven, compare, optimize, tco), one table per job
// (read/options.h): flag, JSON key, help, unit, validation and the request field each sets.
// The CLI registers each subcommand's flags from its table, the JSON API reads a request object
// by its keys (ReadJsonOptions; the values are checked by Run*), and docs/cli.md's cost tables are
// generated from them (tests/unit/options_table_test.cc). Defaults are the requests' own
// (cost/requests.h).
#pragma once

#include <nlohmann/json.hpp>

#include "cost/requests.h"
#include "read/options.h"

namespace gpuplan {

const OptionTable<BreakevenRequest>& BreakevenOptionTable();
const OptionTable<CompareRequest>& CompareOptionTable();
const OptionTable<OptimizeRequest>& OptimizeOptionTable();
const OptionTable<TcoRequest>& TcoOptionTable();

// Apply a JSON request object (ApplyJsonOptions; the keys set go to r.given): an unknown key or
// a bad value throws InputError naming the JSON key. (The serve API reads the object with
// ReadJsonOptions and leaves the values' checks to Run*, as the command line does.)
void ApplyJson(const nlohmann::json& j, BreakevenRequest& r);
void ApplyJson(const nlohmann::json& j, CompareRequest& r);
void ApplyJson(const nlohmann::json& j, OptimizeRequest& r);
void ApplyJson(const nlohmann::json& j, TcoRequest& r);

}  // namespace gpuplan
