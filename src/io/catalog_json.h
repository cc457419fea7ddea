// JSON form of the catalog listings (catalog/listings.h): `gpuplan gpus --json` and
// `gpuplan models --json`, used by the CLI and the server.
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "catalog/gpu_catalog.h"
#include "catalog/listings.h"

namespace gpuplan {

nlohmann::json GpusToJson(const GpuCatalog& catalog);  // an array of GpuToJson (fit_json.h)
nlohmann::json ModelListingToJson(const ModelListing& m);
nlohmann::json ModelsToJson(const std::vector<ModelListing>& models);

}  // namespace gpuplan
