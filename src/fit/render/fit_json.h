// JSON form of fit results: the one mapping used by the CLI (--json) and the server.
#pragma once

#include <nlohmann/json.hpp>

#include "catalog/gpu_catalog.h"
#include "catalog/model.h"
#include "fit/advisor.h"
#include "fit/data_movement.h"
#include "fit/memory_model.h"
#include "fit/search.h"
#include "fit/time_model.h"

namespace gpuplan {

nlohmann::json MemoryToJson(const MemoryBreakdown& m);
nlohmann::json LayoutToJson(const Layout& l, const Workload& w, const Gpu* gpu);
nlohmann::json FitToJson(const ModelSpec& m, const Workload& w, const Layout& l, const Gpu* gpu,
                         const MemoryEstimate& e, const std::vector<Suggestion>& suggestions);
nlohmann::json GpuToJson(const Gpu& g);
nlohmann::json TrainingTimeToJson(const TrainingTime& t);
nlohmann::json CandidateToJson(const Candidate& c);
// `checkpoint` (docs/data-movement.md §5): bytes, bytes_per_rank, save/sync/restore seconds, the
// interval and the lost fraction; `data`: the dataset's upload.
nlohmann::json CheckpointPlanToJson(const CheckpointPlan& p);
nlohmann::json DataPlanToJson(const DataPlan& d);

}  // namespace gpuplan
