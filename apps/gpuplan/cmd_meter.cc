// gpuplan meter report | export (| run | record): flags into the requests of meter/report.h
// and meter/agent.h, the library runs them, and io/meter_json.h or io/meter_text.h renders.
#include <signal.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>

#include "catalog/gpu_catalog.h"
#include "cli_options.h"
#include "commands.h"
#include "io/meter_agent_text.h"
#include "io/meter_json.h"
#include "io/meter_text.h"
#include "meter/meter_options.h"
#include "meter/report.h"

namespace gpuplan::cli {

namespace {

void OnStopSignal(int /*signal*/) { RequestMeterStop(); }

// SIGINT and SIGTERM end the agent after its current tick, flushing what it holds.
void InstallStopHandlers() {
  struct sigaction sa {};
  sa.sa_handler = OnStopSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

std::string NvmlLibrary(const std::string& fallback) {
  const char* lib = std::getenv("GPUPLAN_NVML_LIBRARY");  // tests point it at tests/fake_nvml
  return lib != nullptr && *lib != '\0' ? std::string(lib) : fallback;
}

}  // namespace

Runner RegisterMeter(CLI::App& app, GlobalOptions& g) {
  struct Requests {
    MeterReportRequest report;
    MeterExportRequest export_;
    MeterAgentRequest run;
    MeterRecordRequest record;
  };
  auto r = std::make_shared<Requests>();
  CLI::App* meter = app.add_subcommand("meter", "what the GPUs really did and cost: record, report, export");
  meter->require_subcommand(1);
  CLI::App* rep = meter->add_subcommand("report", "busy, idle and billed card-hours, energy and money over a period");
  AddOptions(rep, MeterReportOptionTable(), r->report);
  rep->add_flag("--json", g.json, "print JSON");
  CLI::App* exp = meter->add_subcommand("export", "the measured use as the hourly usage CSV gpuplan cost reads");
  AddOptions(exp, MeterExportOptionTable(), r->export_);
  CLI::App* run = meter->add_subcommand("run", "the agent: sample every GPU (or replay a trace) into the store");
  AddOptions(run, MeterRunOptionTable(), r->run);
  CLI::App* rec = meter->add_subcommand("record", "sample the GPUs into a trace file for replay elsewhere");
  AddOptions(rec, MeterRecordOptionTable(), r->record);

  return [r, &g, rep, exp, run, rec]() -> int {
    if (rec->parsed()) {
      CheckGivenFlags(rec, MeterRecordOptionTable(), r->record);
      r->record.nvml_library = NvmlLibrary(r->record.nvml_library);
      InstallStopHandlers();
      MeterAgentText text(std::cout, std::cerr, r->record.verbose);
      SystemMeterClock clock;
      RecordMeterTrace(r->record, clock, &text);
      return kExitOk;
    }
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
    if (run->parsed()) {
      CheckGivenFlags(run, MeterRunOptionTable(), r->run);
      r->run.nvml_library = NvmlLibrary(r->run.nvml_library);
      InstallStopHandlers();
      MeterAgentText text(std::cout, std::cerr, r->run.verbose);
      SystemMeterClock clock;
      const MeterRunSummary s = RunMeter(r->run, clock, &text, &cat);
      return s.buffered_at_exit > 0 ? kExitEnvironment : kExitOk;
    }
    CheckGivenFlags(exp, MeterExportOptionTable(), r->export_);
    std::cout << RunMeterExport(r->export_, cat).csv;
    return kExitOk;
  };
}

}  // namespace gpuplan::cli
