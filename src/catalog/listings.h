// The catalog listings as request -> result: `gpuplan gpus` and `gpuplan models` (and the serve
// API) call these and render the result (fit/render/catalog_json.h for JSON). The data directory is
// the whole request.
#pragma once

#include <string>
#include <vector>

#include "catalog/gpu_catalog.h"
#include "catalog/model.h"

namespace gpuplan {

// data_dir/gpus.yaml. Throws InputError naming file, line and field.
GpuCatalog LoadGpuCatalog(const std::string& data_dir);

// One model preset of data_dir/models, read.
struct ModelListing {
  std::string name;  // file stem, e.g. "Llama-3.1-8B"
  std::string path;
  ModelSpec spec;
};
// Every preset, in ListPresets order. Throws InputError for the first preset that cannot be read.
std::vector<ModelListing> ListModels(const std::string& data_dir);

}  // namespace gpuplan
