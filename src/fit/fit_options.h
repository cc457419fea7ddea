// The options of the fit job, one table (read/options.h): flag, JSON key, help, unit,
// validation and the FitRequest field each sets. The CLI registers its flags from it, the JSON
// API applies a request object with ApplyJson, and docs/cli.md's fit table is generated from it
// (tests/unit/options_table_test.cc). Defaults are FitRequest's own.
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <string>

#include "fit/fit_request.h"
#include "read/options.h"

namespace gpuplan {

const OptionTable<FitRequest>& FitOptionTable();

// Records which options were given (`given(key)`, by JSON key): the layout pins of a search,
// max_gpus_given and context_given (fit_request.h).
void MarkGivenFitOptions(FitRequest& r, const std::function<bool(const std::string& key)>& given);

// Applies a JSON request object to `r` (ApplyJsonOptions, then MarkGivenFitOptions). An unknown
// key or a bad value throws InputError naming the JSON key.
void ApplyJson(const nlohmann::json& j, FitRequest& r);

}  // namespace gpuplan
