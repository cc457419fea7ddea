#pragma once
#include <string>

#include "catalog/gpu_catalog.h"
#include "catalog/model.h"
#include "check/check_options.h"
#include "core/error.h"
#include "cost/cost_options.h"
#include "fit/fit_options.h"
#include "meter/meter_options.h"
#include "read/options.h"
#include "serve/serve_options.h"

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
// (InputError::Option), the CLI spells it as its flag (--gpus) with SpellFlags (read/options.h)
// over the flags of the tables it registers (apps/gpuplan's AddOptions calls: these tables).
inline InputError AsCli(const InputError& e) {
  static const bool registered = [] {
    RegisterFlags(FitOptionTable());
    RegisterFlags(BreakevenOptionTable());
    RegisterFlags(CompareOptionTable());
    RegisterFlags(OptimizeOptionTable());
    RegisterFlags(TcoOptionTable());
    RegisterFlags(CheckOptionTable());
    RegisterFlags(CompareReportsOptionTable());
    RegisterFlags(MergeReportsOptionTable());
    RegisterFlags(MeterReportOptionTable());
    RegisterFlags(MeterExportOptionTable());
    RegisterFlags(MeterTimelineOptionTable());
    RegisterFlags(MeterAlertsOptionTable());
    RegisterFlags(MeterRunOptionTable());
    RegisterFlags(MeterRecordOptionTable());
    RegisterFlags(MeterWatchOptionTable());
    RegisterFlags(ServeOptionTable());
    return true;
  }();
  (void)registered;
  return SpellFlags(e);
}
}  // namespace gpuplan::test
