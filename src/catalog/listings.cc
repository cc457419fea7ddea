#include "catalog/listings.h"

#include <filesystem>

#include "catalog/model_loader.h"

namespace gpuplan {

GpuCatalog LoadGpuCatalog(const std::string& data_dir) {
  return GpuCatalog::Load((std::filesystem::path(data_dir) / "gpus.yaml").string());
}

std::vector<ModelListing> ListModels(const std::string& data_dir) {
  std::vector<ModelListing> out;
  for (const auto& p : ListPresets(data_dir)) {
    out.push_back({p.name, p.path, LoadHfConfig(p.path)});
  }
  return out;
}

}  // namespace gpuplan
