#include "check/suite.h"

#include <fmt/format.h>

#include <algorithm>
#include <thread>

#include "check/gpu_tests.h"
#include "check/net.h"
#include "check/net_iperf.h"
#include "check/sold_as.h"
#include "check/verdict.h"
#include "core/error.h"

namespace gpuplan {
namespace {

double ModeSeconds(CheckMode m, double quick, double normal) { return m == CheckMode::kQuick ? quick : normal; }

std::vector<CheckResult> RunInventory(CheckContext& c) {
  std::vector<CheckResult> out;
  for (std::size_t n = 0; n < c.start.size(); ++n) {
    const std::string node = c.captures ? c.start[n].hostname.value_or(c.capture_files[n]) : std::string();
    const std::string origin = c.captures ? "nvidia-smi " + c.capture_files[n] : c.gpu_origin;
    // Before any load the GPUs are idle: the current PCIe generation is not judged here.
    auto r = JudgeInventory(c.start[n], c.expect, c.catalog, c.thresholds, origin, /*idle=*/true, node);
    out.insert(out.end(), r.begin(), r.end());
  }
  return out;
}

std::vector<CheckResult> RunStorage(CheckContext& c) {
  if (c.request.data.empty()) {
    CheckResult r = Make("storage_read", -1, {});
    Skip(r, "no dataset folder given (--data DIR)");
    return {r};
  }
  StorageRequest sr;
  sr.dir = c.request.data;
  sr.seconds = ModeSeconds(c.mode, c.thresholds.storage_seconds_quick, c.thresholds.storage_seconds_default);
  sr.threads = c.request.storage_threads;
  sr.random_block = RandomBlockFor(c.storage_need);
  sr.progress = c.progress;
  const StorageResult res = MeasureStorage(sr);
  return JudgeStorage(res, c.storage_need, c.checkpoint_bytes, c.thresholds);
}

std::vector<CheckResult> RunHost(CheckContext& c) {
  const HostInfo info = ReadHostInfo();
  int gpus = 0;
  uint64_t gpu_memory = 0;
  for (const auto& node : c.start) {
    for (const auto& g : node.gpus) {
      ++gpus;
      gpu_memory += g.memory_total.value_or(0);
    }
  }
  const int threads = info.cpu_threads.value_or(static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  const CpuThroughput tp =
      MeasureCpuThroughput(threads, ModeSeconds(c.mode, c.thresholds.cpu_seconds_quick, c.thresholds.cpu_seconds_default),
                           c.progress);
  // Steal over the run so far: the storage test and the CPU test (the moments we asked for CPU).
  const std::optional<double> steal = StealFraction(c.cpu_start, ReadCpuTimes());
  return JudgeHost(info, gpus, gpu_memory, c.expect.cpu_cores, steal, tp, c.thresholds);
}

std::vector<CheckResult> RunHealthDelta(CheckContext& c) {
  if (c.start.empty()) {
    return {};
  }
  const SystemSnapshot end = c.gpus->Snapshot();
  return JudgeHealthDelta(c.start.front(), end, c.events, "the whole check");
}

// The link test (docs/check.md §12). A listener that cannot be reached is an ERROR of this test
// with its reason, not an exception: the report is still written, and the exit code is 3.
std::vector<CheckResult> RunNet(CheckContext& c) {
  const CheckRequest& q = c.request;
  NetClientRequest nr;
  nr.peer = ParseNetEndpoint(q.net, "net", /*listen=*/false);
  nr.streams = q.net_streams;
  nr.seconds = q.net_seconds;
  nr.transfer_bytes = static_cast<uint64_t>(q.net_bytes);
  nr.token = q.net_token;
  nr.progress = c.progress;
  nr.tool = q.net_tool;
  nr.rate_mbps = q.net_rate_mbps;
  try {
    c.net = MeasureLink(nr);
  } catch (const EnvironmentError& e) {
    CheckResult r = Make("net_link", -1, {});
    const bool iperf3 = q.net_tool == "iperf3";
    const bool missing = iperf3 && !FindExecutable("iperf3");
    Error(r, e.what(),
          missing  ? "install iperf3 on this machine (apt-get install iperf3), or measure with --net-tool gpuplan"
          : iperf3 ? "start `iperf3 -s` on the other machine (-p PORT; 5201 by default) and open its port in the "
                     "firewall; an iperf3 server runs one test at a time"
                   : "start `gpuplan check --net-listen ADDR:PORT` on the other machine (with the same --net-token off "
                     "loopback) and open its port in the firewall");
    return {r};
  }
  return JudgeLink(*c.net, q.net_min_gbps, q.net_max_rtt_ms);
}

}  // namespace

bool RunsIn(const CheckTest& test, CheckMode mode) { return static_cast<int>(test.mode) <= static_cast<int>(mode); }

const std::vector<CheckTest>& SuiteTests() {
  static const std::vector<CheckTest> tests = [] {
  std::vector<CheckTest> t = {
      {"inventory", CheckMode::kQuick, CheckNeeds::kGpus,
       "each GPU against the card ordered: identity, memory, power limit, PCIe, NVLink, MIG, ECC, remapping, "
       "clock events, temperature, driver",
       RunInventory},
      {"storage", CheckMode::kQuick, CheckNeeds::kThisHost,
       "the dataset folder: sequential and random reads past the page cache, against what training needs",
       RunStorage},
      {"host", CheckMode::kQuick, CheckNeeds::kThisHost,
       "CPU cores and RAM per GPU, CPU steal over the run, CPU throughput against the cores present", RunHost},
  };
  // Part 2: the GPU worker tests, between the host test and the health delta.
  for (CheckTest& g : GpuSuiteTests()) {
    t.push_back(std::move(g));
  }
  t.push_back({"net", CheckMode::kQuick, CheckNeeds::kNetPeer,
               "the link to a gpuplan listener: round trip, throughput each way on several streams, a checkpoint-sized "
               "transfer",
               RunNet});
  t.push_back({"health_delta", CheckMode::kQuick, CheckNeeds::kLiveGpus,
               "ECC, remapped rows, retired pages and XIDs before and after the run", RunHealthDelta});
  return t;
  }();
  return tests;
}

}  // namespace gpuplan
