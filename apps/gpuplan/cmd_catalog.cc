// gpuplan gpus / models / frameworks: the library lists the catalogs (catalog/listings.h,
// fit/framework.h), this file renders them (fit/render/catalog_json.h, fit/render/catalog_text.h).
#include <iostream>

#include "catalog/gpu_catalog.h"
#include "catalog/listings.h"
#include "commands.h"
#include "fit/render/catalog_json.h"
#include "fit/render/catalog_text.h"
#include "fit/render/frameworks_text.h"

namespace gpuplan::cli {

Runner RegisterGpus(CLI::App& app, GlobalOptions& g) {
  CLI::App* c = app.add_subcommand("gpus", "list the GPU catalog (data/gpus.yaml)");
  c->add_flag("--json", g.json, "print JSON");
  return [&g]() -> int {
    const GpuCatalog cat = LoadGpuCatalog(DataDir(g));
    if (g.json) {
      std::cout << GpusToJson(cat).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
      return kExitOk;
    }
    GpusToText(std::cout, cat);
    return kExitOk;
  };
}

Runner RegisterModels(CLI::App& app, GlobalOptions& g) {
  CLI::App* c = app.add_subcommand("models", "list the model presets (data/models/*.json)");
  c->add_flag("--json", g.json, "print JSON");
  return [&g]() -> int {
    const std::vector<ModelListing> models = ListModels(DataDir(g));
    if (g.json) {
      std::cout << ModelsToJson(models).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
      return kExitOk;
    }
    ModelsToText(std::cout, models);
    return kExitOk;
  };
}

Runner RegisterFrameworks(CLI::App& app, GlobalOptions& g) {
  CLI::App* c = app.add_subcommand("frameworks", "list the framework profiles of fit --framework (data/frameworks.yaml)");
  c->add_flag("--json", g.json, "print JSON");
  return [&g]() -> int {
    const FrameworkCatalog frameworks = LoadFrameworkCatalog(DataDir(g));
    if (g.json) {
      std::cout << FrameworksToJson(frameworks).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
      return kExitOk;
    }
    FrameworksToText(std::cout, frameworks);
    return kExitOk;
  };
}

}  // namespace gpuplan::cli
