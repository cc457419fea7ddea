#include "io/catalog_json.h"

#include "io/fit_json.h"

namespace gpuplan {

nlohmann::json GpusToJson(const GpuCatalog& catalog) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& gpu : catalog.gpus()) {
    j.push_back(GpuToJson(gpu));
  }
  return j;
}

nlohmann::json ModelListingToJson(const ModelListing& l) {
  const ModelSpec& m = l.spec;
  return {{"name", l.name},
          {"model_type", m.model_type},
          {"architecture", m.architecture},
          {"params_total", m.ParamsTotal()},
          {"params_active", m.ParamsActive()},
          {"layers", m.layers},
          {"hidden", m.hidden},
          {"vocab", m.vocab},
          {"path", l.path}};
}

nlohmann::json ModelsToJson(const std::vector<ModelListing>& models) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& m : models) {
    j.push_back(ModelListingToJson(m));
  }
  return j;
}

}  // namespace gpuplan
