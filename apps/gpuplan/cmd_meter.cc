// gpuplan meter report | export | timeline | alerts | run | record | watch | compare: flags into
// the requests of meter/report.h, meter/alert_replay.h, meter/agent.h and meter/watch.h, the library runs them (the agent as the
// service of meter/meter_service.h: alerts and /metrics), and meter/render renders.
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>

#include "catalog/gpu_catalog.h"
#include "cli_options.h"
#include "commands.h"
#include "meter/render/meter_agent_text.h"
#include "meter/render/meter_alerts_text.h"
#include "meter/render/meter_json.h"
#include "meter/render/meter_text.h"
#include "format/text_lang.h"
#include "meter/meter_options.h"
#include "meter/report.h"
#include "meter/render/meter_watch.h"
#include "meter/meter_service.h"
#include "core/atomic_file.h"
#include "core/error.h"

namespace gpuplan::cli {

namespace {

// The stop deadline's message, formatted (and translated) before the handlers are installed:
// the SIGALRM handler may only write() it.
std::string g_deadline_message;

void OnStopSignal(int /*signal*/) {
  if (!MeterStopRequested()) {
    alarm(kMeterStopDeadlineSeconds);  // async-signal-safe; the first request arms it once
  }
  RequestMeterStop();
}

// The stop deadline passed with the store still being written (a slow disk: one write or sync
// outlasts the drain and sqlite3_interrupt cannot cut a commit short). Ending here is what a
// SIGKILL would do, which the store survives (docs/meter-store.md §6: an uncommitted write is
// rolled back when the store is next opened); the samples not yet committed are lost, said.
void OnStopDeadline(int /*signal*/) {
  const ssize_t n = write(STDERR_FILENO, g_deadline_message.data(), g_deadline_message.size());
  (void)n;
  _exit(kExitEnvironment);
}

// SIGINT and SIGTERM end the agent after its current tick, flushing what it holds; whatever it
// is doing, the process is gone kMeterStopDeadlineSeconds after the first request
// (docs/meter.md §8).
void InstallStopHandlers() {
  g_deadline_message =
      SayFormat("cli.meter.stop_deadline",
                "meter: still writing the store {} s after the stop request (a slow disk?): stopped here; the "
                "samples not yet written are lost, the store itself is intact (the cut-off write is rolled back)",
                {std::to_string(kMeterStopDeadlineSeconds)}) +
      "\n";
  struct sigaction sa {};
  sa.sa_handler = OnStopSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  struct sigaction deadline {};
  deadline.sa_handler = OnStopDeadline;
  sigemptyset(&deadline.sa_mask);
  sigaction(SIGALRM, &deadline, nullptr);
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
    MeterTimelineRequest timeline;
    MeterAlertsRequest alerts;
    MeterAgentRequest run;
    MeterRecordRequest record;
    WatchRequest watch;
    std::vector<std::string> compare;
  };
  auto r = std::make_shared<Requests>();
  CLI::App* meter = app.add_subcommand("meter", "what the GPUs really did and cost: record, report, export");
  meter->require_subcommand(1);
  CLI::App* rep = meter->add_subcommand("report", "busy, idle and billed card-hours, energy and money over a period");
  AddOptions(rep, MeterReportOptionTable(), r->report);
  rep->add_flag("--json", g.json, "print JSON");
  CLI::App* exp = meter->add_subcommand("export", "the measured use as the hourly usage CSV gpuplan cost reads");
  AddOptions(exp, MeterExportOptionTable(), r->export_);
  CLI::App* tl = meter->add_subcommand("timeline", "busy and idle hours and money per hour or day of a period");
  AddOptions(tl, MeterTimelineOptionTable(), r->timeline);
  tl->add_flag("--json", g.json, "print JSON");
  CLI::App* al = meter->add_subcommand("alerts", "the alerts of a stored period: the database replayed through the alert rules");
  AddOptions(al, MeterAlertsOptionTable(), r->alerts);
  al->add_flag("--json", g.json, "print JSON");
  CLI::App* run = meter->add_subcommand("run", "the agent: sample every GPU (or replay a trace) into the store");
  AddOptions(run, MeterRunOptionTable(), r->run);
  CLI::App* rec = meter->add_subcommand("record", "sample the GPUs into a trace file for replay elsewhere");
  AddOptions(rec, MeterRecordOptionTable(), r->record);
  CLI::App* watch = meter->add_subcommand("watch", "run your command and say whether the GPU, the data or the CPU held it back");
  AddOptions(watch, MeterWatchOptionTable(), r->watch);
  watch->add_option("command", r->watch.command, "the command and its arguments, after --")->required();
  CLI::App* cmp = meter->add_subcommand("compare", "set the --json results of meter watch on several machines side by side");
  cmp->add_option("results", r->compare, "meter watch --json files")->required();
  cmp->add_flag("--json", g.json, "print JSON");

  return [r, &g, rep, exp, tl, al, run, rec, watch, cmp]() -> int {
    if (watch->parsed()) {
      CheckGivenFlags(watch, MeterWatchOptionTable(), r->watch);
      r->watch.nvml_library = NvmlLibrary(r->watch.nvml_library);
      if (!r->watch.json_file.empty()) {
        CheckFileWritable(r->watch.json_file, "watch result");  // before the command runs, not after
      }
      const WatchResult w = RunWatch(r->watch);
      WatchResultToText(std::cerr, w);  // standard output stays the command's own
      if (!r->watch.json_file.empty()) {
        try {
          WriteFileAtomically(r->watch.json_file, WatchResultToJson(w).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n", "watch result");
        } catch (const EnvironmentError& e) {  // the folder went away meanwhile: said, the status kept
          std::cerr << SayMessage(e.what()) << "\n";
        }
      }
      return w.exit_code;
    }
    if (cmp->parsed()) {
      std::vector<std::pair<std::string, WatchResult>> results;
      nlohmann::json all = nlohmann::json::array();
      for (const auto& f : r->compare) {
        results.emplace_back(std::filesystem::path(f).stem().string(), LoadWatchResult(f));
        all.push_back(WatchResultToJson(results.back().second));
      }
      if (g.json) {
        std::cout << all.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
      } else {
        WatchComparisonToText(std::cout, results);
      }
      return kExitOk;
    }
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
        std::cout << MeterReportToJson(m).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
      } else {
        MeterReportToText(std::cout, m);
      }
      return kExitOk;
    }
    if (tl->parsed()) {
      CheckGivenFlags(tl, MeterTimelineOptionTable(), r->timeline);
      const MeterTimeline t = RunMeterTimeline(r->timeline, cat);
      if (g.json) {
        std::cout << MeterTimelineToJson(t).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
      } else {
        MeterTimelineToText(std::cout, t);
      }
      return kExitOk;
    }
    if (al->parsed()) {
      CheckGivenFlags(al, MeterAlertsOptionTable(), r->alerts);
      const MeterAlerts a = RunMeterAlerts(r->alerts, cat);
      if (g.json) {
        std::cout << MeterAlertsToJson(a).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
      } else {
        MeterAlertsToText(std::cout, a);
      }
      return kExitOk;
    }
    if (run->parsed()) {
      CheckGivenFlags(run, MeterRunOptionTable(), r->run);
      r->run.nvml_library = NvmlLibrary(r->run.nvml_library);
      InstallStopHandlers();
      MeterAgentText text(std::cout, std::cerr, r->run.verbose);
      SystemMeterClock clock;
      MeterServiceHooks hooks;
      hooks.log = [](const std::string& line) { std::cerr << SayMessage(line) << "\n"; };
      hooks.on_listen = [](int port) {
        std::cerr << SayFormat("cli.meter.metrics_port", "metrics on port {} (/metrics)", {std::to_string(port)}) << "\n";
      };
      const MeterRunSummary s = RunMeterService(r->run, clock, &text, &cat, hooks);
      return s.buffered_at_exit > 0 ? kExitEnvironment : kExitOk;
    }
    CheckGivenFlags(exp, MeterExportOptionTable(), r->export_);
    std::cout << RunMeterExport(r->export_, cat).csv;
    return kExitOk;
  };
}

}  // namespace gpuplan::cli
