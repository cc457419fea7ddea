// JSON form of the fit job's result (plan/fit_job.h): the one mapping of `gpuplan fit --json`
// for a single fit, a training search and an inference search, used by the CLI and the server.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "catalog/safetensors.h"
#include "plan/fit_job.h"
#include "fit/search.h"

namespace gpuplan {

// The model folder's safetensors files as read (`model_files`: files, params, bytes, by dtype).
nlohmann::json ModelFilesToJson(const CheckpointSummary& c);
// The layout dimensions a search kept as given.
nlohmann::json PinnedToJson(const SearchPins& p);
// A serving plan: `shown` holds the figures at `concurrency` (the one asked for); with a rate or
// latency target (qps or latency_ms > 0) a "sizing" block has the plan's own. {"serving": null}
// when not one sequence fits.
nlohmann::json InferenceToJson(const InferencePlan& p, const InferenceTime& shown, int64_t concurrency, double qps,
                               double latency_ms);
// The single job's price (r.job set): amount, currency, start, basis, feasible, night start.
nlohmann::json JobPriceToJson(const FitJobResult& r);
nlohmann::json FitJobToJson(const FitJobResult& r);
// Several cards' time accuracy (one kind of run: a search's cards, a plan's rented ones): {kind,
// all, gpus: [{gpu, on_gpu}], gpus_checked, source}, each card's on_gpu null when none was
// checked; null when empty.
nlohmann::json SearchAccuracyToJson(const std::vector<AccuracyNote>& notes);

}  // namespace gpuplan
