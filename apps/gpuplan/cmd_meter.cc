// gpuplan meter report | export (| run | record): flags into the requests of meter/report.h
// and meter/agent.h, the library runs them, and io/meter_json.h or io/meter_text.h renders.
#include <filesystem>
#include <iostream>
#include <memory>

#include "catalog/gpu_catalog.h"
#include "cli_options.h"
#include "commands.h"
#include "io/meter_json.h"
#include "io/meter_text.h"
#include "meter/meter_options.h"
#include "meter/report.h"

namespace gpuplan::cli {

Runner RegisterMeter(CLI::App& app, GlobalOptions& g) {
  struct Requests {
    MeterReportRequest report;
    MeterExportRequest export_;
  };
  auto r = std::make_shared<Requests>();
  CLI::App* meter = app.add_subcommand("meter", "what the GPUs really did and cost: record, report, export");
  meter->require_subcommand(1);
  CLI::App* rep = meter->add_subcommand("report", "busy, idle and billed card-hours, energy and money over a period");
  AddOptions(rep, MeterReportOptionTable(), r->report);
  rep->add_flag("--json", g.json, "print JSON");
  CLI::App* exp = meter->add_subcommand("export", "the measured use as the hourly usage CSV gpuplan cost reads");
  AddOptions(exp, MeterExportOptionTable(), r->export_);

  return [r, &g, rep, exp]() -> int {
    const GpuCatalog cat = GpuCatalog::Load((std::filesystem::path(DataDir(g)) / "gpus.yaml").string());
    if (rep->parsed()) {
      CheckGivenFlags(rep, MeterReportOptionTable(), r->report);
      const MeterReport m = RunMeterReport(r->report, cat);
      if (g.json) {
        std::cout << MeterReportToJson(m).dump(2) << "\n";
      } else {
        MeterReportToText(std::cout, m);
      }
      return kExitOk;
    }
    CheckGivenFlags(exp, MeterExportOptionTable(), r->export_);
    std::cout << RunMeterExport(r->export_, cat).csv;
    return kExitOk;
  };
}

}  // namespace gpuplan::cli
