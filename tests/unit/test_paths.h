#pragma once
#include <string>

#include "catalog/gpu_catalog.h"
#include "catalog/model.h"
#include "core/error.h"

namespace gpuplan::test {
inline std::string Fixture(const std::string& rel) { return std::string(GPUPLAN_TEST_FIXTURES) + "/" + rel; }
inline std::string DataDir() { return GPUPLAN_DATA_DIR; }
inline std::string Preset(const std::string& name) { return DataDir() + "/models/" + name + ".json"; }
// The shipped GPU catalog, loaded once.
inline const GpuCatalog& Catalog() {
  static const GpuCatalog c = GpuCatalog::Load(DataDir() + "/gpus.yaml");
  return c;
}
// Llama-3.1-8B's preset config, loaded once (the tests' common 8B model).
inline const ModelSpec& Llama8b() {
  static const ModelSpec m = LoadHfConfig(Preset("Llama-3.1-8B"));
  return m;
}
// A library error as the command line reports it: the library names an option by its key
// (InputError::Option), the CLI spells it as its flag (--gpus; apps/gpuplan/cli_options.h).
inline InputError AsCli(const InputError& e) { return SpellOptions(e, DefaultOptionFlag); }
}  // namespace gpuplan::test
