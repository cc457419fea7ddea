// The check suite: a registry of tests, each with a name, the mode it starts in, what it needs,
// and a run() that returns results. RunCheck (check/check_request.h) runs the registered tests in
// order and knows nothing of any of them: part 2's GPU tests (memory, bandwidth, GEMM, PCIe,
// NCCL, burn-in) are added to SuiteTests() in suite.cc without touching the orchestration.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "catalog/gpu_catalog.h"
#include "check/check_request.h"
#include "check/expect.h"
#include "check/host.h"
#include "check/report.h"
#include "check/storage.h"
#include "check/thresholds.h"
#include "telemetry/snapshot.h"

namespace gpuplan {

// What a test may use. The orchestration fills it before the first test.
struct CheckContext {
  CheckContext(const CheckRequest& r, const GpuCatalog& c) : request(r), catalog(c) {}
  const CheckRequest& request;
  const GpuCatalog& catalog;
  CheckThresholds thresholds;
  Expectation expect;
  CheckMode mode = CheckMode::kDefault;
  GpuSource* gpus = nullptr;             // live or recorded GPUs; nullptr: none (no driver, or captures)
  std::string gpu_origin;                // "NVML", "recording r.json", "nvidia-smi -q -x capture a.xml"
  bool captures = false;                 // the GPUs are a provider's captures, not this machine
  std::vector<std::string> capture_files;  // one per node, with captures
  std::vector<SystemSnapshot> start;     // one per node
  CpuTimes cpu_start;                    // /proc/stat when the run began (steal over the run)
  std::optional<StorageNeed> storage_need;
  std::optional<uint64_t> checkpoint_bytes;
  std::vector<GpuEvent> events;          // collected during the run
  // Events a test read from the source while it ran (the GPU tests poll NVML every second); the
  // orchestration adds them to the test's health delta as if it had read them itself.
  std::vector<GpuEvent> test_events;
  std::vector<GpuCurve> curves;          // NVML samples of the GPU tests, for the report
  std::optional<NetLink> net;            // the link test's figures, for the report
  std::function<void(double)> progress;  // the running test's progress, 0..1
};

enum class CheckNeeds {
  kNothing,    // runs always
  kGpus,       // needs GPU data (live, recorded or captured)
  kLiveGpus,   // needs this machine's GPUs (NVML or a recording of this machine)
  kThisHost,   // measures this machine (not run when judging captures)
  kNetPeer,    // the link test: runs only with --net HOST, and then alone
};

struct CheckTest {
  std::string name;
  CheckMode mode = CheckMode::kQuick;  // the lightest mode that runs it
  CheckNeeds needs = CheckNeeds::kNothing;
  std::string description;             // for --help and docs/check.md
  std::function<std::vector<CheckResult>(CheckContext&)> run;
};

// The registered tests in the order they run.
const std::vector<CheckTest>& SuiteTests();

// Whether `test` runs in `mode` (a test of mode kDefault runs in default and full).
bool RunsIn(const CheckTest& test, CheckMode mode);

}  // namespace gpuplan
