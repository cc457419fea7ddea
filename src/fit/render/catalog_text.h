// Text form of the catalog listings: the tables `gpuplan gpus` and `gpuplan models` print
// without --json (the JSON form is catalog_json.h).
#pragma once

#include <ostream>
#include <vector>

#include "catalog/gpu_catalog.h"
#include "catalog/listings.h"

namespace gpuplan {

void GpusToText(std::ostream& os, const GpuCatalog& cat);
void ModelsToText(std::ostream& os, const std::vector<ModelListing>& models);

}  // namespace gpuplan
