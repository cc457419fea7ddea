// gpuplan check | check compare | check merge: flags into the requests of check/check_request.h
// and check/compare.h, the library runs them (RunCheck, CompareReports, MergeReports), and check/render
// renders: the live view (check/render/check_text.h) and the report files (check/render/check_files.h).
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <thread>

#include "catalog/gpu_catalog.h"
#include "check/check_options.h"
#include "check/check_request.h"
#include "check/compare.h"
#include "check/net_listen.h"
#include "cli_options.h"
#include "commands.h"
#include "check/render/check_files.h"
#include "check/render/check_json.h"
#include "check/render/check_text.h"

namespace gpuplan::cli {
namespace {

// A stream still writing when asked to stop ends within one paced chunk; past this the process
// ends anyway (it holds nothing to save), inside the 5 s a stop allows.
constexpr double kListenStopGraceSeconds = 3;

// `check --net-listen`: the link test's listener until SIGINT or SIGTERM (exit 0).
int RunListener(const CheckRequest& q) {
  NetListener listener(NetListenOptionsOf(q.net_listen, q.net_rate_mbps, q.net_token));
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  const int port = listener.Start();
  NetEndpoint at = ParseNetEndpoint(q.net_listen, "net_listen", /*listen=*/true);
  at.port = port;
  std::cout << "gpuplan check: link-test listener on " << at.Text()
            << (q.net_rate_mbps ? " (paced to " + std::to_string(static_cast<long long>(*q.net_rate_mbps)) + " Mbit/s)" : "")
            << "; stop with Ctrl-C" << std::endl;
  std::atomic<bool> stopped{false};
  std::atomic<bool> signalled{false};
  std::thread waiter([&] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    signalled = true;
    listener.Stop();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(kListenStopGraceSeconds);
    while (!stopped && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (!stopped) {
      std::_Exit(kExitOk);
    }
  });
  listener.Run();
  stopped = true;
  if (!signalled) {
    kill(getpid(), SIGTERM);  // wake the waiter (the signal is blocked everywhere but its sigwait)
  }
  waiter.join();
  return kExitOk;
}

}  // namespace

Runner RegisterCheck(CLI::App& app, GlobalOptions& g) {
  struct Requests {
    CheckRequest check;
    CompareReportsRequest compare;
    MergeReportsRequest merge;
  };
  auto r = std::make_shared<Requests>();
  CLI::App* check = app.add_subcommand("check", "is the rented server what was promised: GPUs, health, host, storage");
  AddOptions(check, CheckOptionTable(), r->check);
  CLI::App* cmp = check->add_subcommand("compare", "check reports side by side; with --offers, money per measured unit");
  AddOptions(cmp, CompareReportsOptionTable(), r->compare);
  cmp->add_option("reports", r->compare.reports, "check reports (JSON), two or more")->required();
  CLI::App* mrg = check->add_subcommand("merge", "the reports of a cluster's nodes as one, outlier nodes and GPUs flagged");
  AddOptions(mrg, MergeReportsOptionTable(), r->merge);
  mrg->add_option("reports", r->merge.reports, "check reports (JSON), one per node")->required();

  return [r, &g, check, cmp, mrg]() -> int {
    const GpuCatalog cat = GpuCatalog::Load((std::filesystem::path(DataDir(g)) / "gpus.yaml").string());
    auto load = [](const std::vector<std::string>& files) {
      std::vector<NamedReport> reports;
      for (const auto& f : files) {
        reports.push_back(LoadReport(f));
      }
      return reports;
    };
    if (cmp->parsed()) {
      const CompareReportsRequest& q = r->compare;
      g.json = q.json == "-";
      CheckGivenFlags(cmp, CompareReportsOptionTable(), q);
      const ComparisonResult c = CompareReports(load(q.reports), q, cat);
      if (q.json != "-" && q.markdown != "-" && q.html != "-") {
        ComparisonToText(c, std::cout);
      }
      WriteComparisonOutputs(c, q.json, q.markdown, q.html, std::cout);
      return c.ExitCode();  // 0, unless a report is incomplete or empty (docs/check.md §7)
    }
    if (mrg->parsed()) {
      const MergeReportsRequest& q = r->merge;
      g.json = q.json == "-";
      CheckGivenFlags(mrg, MergeReportsOptionTable(), q);
      const MergeResult m = MergeReports(load(q.reports), q);
      if (q.json != "-" && q.markdown != "-" && q.html != "-") {
        MergeToText(m, std::cout);
      }
      WriteMergeOutputs(m, q.json, q.markdown, q.html, std::cout);
      return m.merged.ExitCode();
    }
    CheckRequest& q = r->check;
    g.json = q.json == "-";
    CheckGivenFlags(check, CheckOptionTable(), q);
    q.tool_version = GPUPLAN_VERSION;
    if (q.net_token.empty()) {
      if (const char* t = std::getenv("GPUPLAN_TOKEN"); t != nullptr) {
        q.net_token = t;
      }
    }
    if (!q.net_listen.empty()) {
      if (!q.net.empty()) {
        throw InputError::Option("net_listen", "one end per process: " + OptionRef("net") + " or " + OptionRef("net_listen"));
      }
      if (q.net_tool == "iperf3") {
        throw InputError::Option("net_tool", "the listener is gpuplan's; for an iperf3 link test run `iperf3 -s` on that "
                                             "machine instead");
      }
      return RunListener(q);
    }
    if (const char* lib = std::getenv("GPUPLAN_NVML_LIBRARY"); lib != nullptr && *lib != '\0') {
      q.nvml_library = lib;  // tests point it at tests/fake_nvml (docs/cli.md)
    }
    // A report on standard output moves the live view to standard error.
    const bool report_on_stdout = q.json == "-" || q.markdown == "-" || q.html == "-";
    std::ostream& live = report_on_stdout ? std::cerr : std::cout;
    CheckLiveView view(live, isatty(report_on_stdout ? STDERR_FILENO : STDOUT_FILENO) != 0);
    CheckReportFiles files(q.json, q.markdown, q.html, std::cout);
    CheckObservers all({&view, &files});
    return RunCheck(q, cat, &all).ExitCode();
  };
}

}  // namespace gpuplan::cli
