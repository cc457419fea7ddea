// Text form of the fit job's result (plan/fit_job.h): the tables `gpuplan fit` prints without
// --json (the JSON form is fit_job_json.h).
#pragma once

#include <ostream>

#include "plan/fit_job.h"

namespace gpuplan {

// One layout (memory, step time, price, inference sizing), or a search's ranked layouts.
void FitJobToText(std::ostream& os, const FitJobResult& res);

}  // namespace gpuplan
