// The options of the fit job, one table (read/options.h): flag, JSON key, help, unit,
// validation and the FitRequest field each sets. The CLI registers its flags from it, the JSON
// API reads a request object with ReadJson and checks it with CheckFitRequest, and docs/cli.md's
// fit table is generated from it (tests/unit/options_table_test.cc). Defaults are FitRequest's own.
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

// Reads a JSON request object into `r` (ReadJsonOptions, then MarkGivenFitOptions): an unknown
// key or a value of the wrong type throws InputError naming the JSON key; values are checked by
// RunFit (CheckFitRequest), as for the command line.
void ReadJson(const nlohmann::json& j, FitRequest& r);

// The request's checks, in the one order every front end reports them (RunFit calls it first):
// an error PrepareFit finds (the model first, fit_request.h) before the options table's checks
// of the options given (r.given). Throws InputError naming the option by its key.
void CheckFitRequest(const FitRequest& r, const std::string& data_dir);

}  // namespace gpuplan
