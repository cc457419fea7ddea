// Text form of `gpuplan frameworks` (fit/framework.h): the profiles `fit --framework` takes and
// the GGUF types of `--gguf-type` (the JSON form is FrameworksToJson, catalog_json.h).
#pragma once

#include <ostream>

#include "fit/framework.h"

namespace gpuplan {

void FrameworksToText(std::ostream& os, const FrameworkCatalog& catalog);

}  // namespace gpuplan
