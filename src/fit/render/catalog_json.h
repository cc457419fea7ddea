// JSON form of the catalog listings (catalog/listings.h, fit/framework.h): `gpuplan gpus --json`,
// `gpuplan models --json` and `gpuplan frameworks --json`, used by the CLI and the server.
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "catalog/gpu_catalog.h"
#include "catalog/listings.h"
#include "fit/framework.h"

namespace gpuplan {

nlohmann::json GpusToJson(const GpuCatalog& catalog);  // an array of GpuToJson (fit_json.h)
nlohmann::json ModelListingToJson(const ModelListing& m);
nlohmann::json ModelsToJson(const std::vector<ModelListing>& models);
// `gpuplan frameworks --json` (GET /api/frameworks): {"frameworks": [{name, kind, description,
// kv_rule, kv_fraction, kv_block_tokens, gguf, sources}], "gguf_types": [{type, bits}]}.
nlohmann::json FrameworksToJson(const FrameworkCatalog& catalog);

}  // namespace gpuplan
