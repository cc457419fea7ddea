// Text form of the fit job's result (plan/fit_job.h): the tables `gpuplan fit` prints without
// --json (the JSON form is fit_job_json.h).
#pragma once

#include <ostream>
#include <vector>

#include "fit/accuracy.h"

#include "plan/fit_job.h"

namespace gpuplan {

// One layout (memory, step time, price, inference sizing), or a search's ranked layouts.
void FitJobToText(std::ostream& os, const FitJobResult& res);
// The time-accuracy line of several cards (one kind of run: a search's cards, a plan's rented
// ones), each with its published runs or none (data/accuracy.yaml); nothing when empty.
void PrintSearchAccuracy(std::ostream& os, const std::vector<AccuracyNote>& notes);

}  // namespace gpuplan
