// `gpuplan meter watch` (docs/meter-watch.md): the diagnosis rules on hand-made summaries, the
// /proc readers on a fixture tree, the sparkline, the JSON round trip, and real commands run and
// sampled on this machine: one that waits on data by construction, one that keeps two CPUs busy.
// Without a GPU the GPU part is SKIP with the reason.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/error.h"
#include "io/meter_watch.h"
#include "meter/watch.h"
#include "test_paths.h"

namespace gpuplan {
namespace {

WatchSummary Host(double cores, double read_mb_s, double waiting = 0) {
  WatchSummary s;
  s.cpus = 16;
  s.cpu_cores_mean = cores;
  s.cpu_cores_peak = cores;
  s.read_bytes_per_s_mean = read_mb_s * 1e6;
  s.waiting_io_share = waiting;
  return s;
}

WatchSummary Gpu(double util, std::optional<double> mem_util, double cores, double read_mb_s) {
  WatchSummary s = Host(cores, read_mb_s);
  s.gpu_util_mean = util;
  s.gpu_memory_util_mean = mem_util;
  return s;
}

TEST(MeterWatch, DiagnosisRules) {
  // Host only (the reason the GPU part was skipped is carried into the result).
  auto d = DiagnoseWatch(Host(1.9, 0), 0, 10, "no NVML");
  EXPECT_EQ(d.bound, WatchBound::kCpu);
  EXPECT_EQ(d.gpu_part, "SKIP: not measured: no NVML");
  EXPECT_EQ(d.evidence[0], "the command's processes used 1.90 CPU cores on average (peak 1.90) of 16");
  // Always runnable but given half a core (a loaded or oversold host): still CPU-bound.
  WatchSummary starved = Host(0.5, 0);
  starved.running_share = 0.9;
  EXPECT_EQ(DiagnoseWatch(starved, 0, 10, "x").bound, WatchBound::kCpu);
  EXPECT_EQ(DiagnoseWatch(Host(0.1, 30), 0, 10, "x").bound, WatchBound::kIo);    // 30 MB/s at 0.1 core
  EXPECT_EQ(DiagnoseWatch(Host(0.1, 0, 0.5), 0, 10, "x").bound, WatchBound::kIo);  // half the samples in D
  EXPECT_EQ(DiagnoseWatch(Host(0.05, 0.1), 0, 10, "x").bound, WatchBound::kWaiting);  // sleep
  EXPECT_EQ(DiagnoseWatch(Host(0.79, 0), 0, 10, "x").bound, WatchBound::kWaiting);  // under 0.8 core
  EXPECT_EQ(DiagnoseWatch(Host(2, 0), 0, 1, "x").bound, WatchBound::kTooShort);
  // With a GPU.
  d = DiagnoseWatch(Gpu(95, 30, 1.2, 0), 1, 10, "");
  EXPECT_EQ(d.bound, WatchBound::kCompute);
  EXPECT_EQ(d.gpu_part, "measured on 1 GPU");
  EXPECT_EQ(DiagnoseWatch(Gpu(70, 75, 1, 0), 1, 10, "").bound, WatchBound::kMemory);
  EXPECT_EQ(DiagnoseWatch(Gpu(20, 5, 0.2, 40), 1, 10, "").bound, WatchBound::kDataLoading);  // GPU idle, reading
  EXPECT_EQ(DiagnoseWatch(Gpu(20, 5, 3.5, 0), 1, 10, "").bound, WatchBound::kDataLoading);   // GPU idle, CPUs busy
  EXPECT_EQ(DiagnoseWatch(Gpu(30, 10, 0.3, 0), 4, 10, "").bound, WatchBound::kCommunication);
  EXPECT_EQ(DiagnoseWatch(Gpu(30, 10, 0.3, 0), 1, 10, "").bound, WatchBound::kWaiting);
  EXPECT_EQ(DiagnoseWatch(Gpu(65, 20, 0.3, 0), 1, 10, "").bound, WatchBound::kCompute);
}

TEST(MeterWatch, ProcReadersOnAFixtureTree) {
  const std::string root = test::Fixture("watch-proc");
  const auto main = ReadProcCounters(root, 4242);
  ASSERT_TRUE(main.has_value());
  EXPECT_EQ(main->state, 'S');
  EXPECT_EQ(main->ppid, 1);
  EXPECT_EQ(main->cpu_ticks, 310u);  // 250 + 50 + 7 + 3
  EXPECT_EQ(main->rchar, 1048576000u);
  EXPECT_EQ(main->wchar, 2048u);
  EXPECT_TRUE(main->io_readable);
  const auto worker = ReadProcCounters(root, 4243);
  ASSERT_TRUE(worker.has_value());
  EXPECT_EQ(worker->state, 'D');
  EXPECT_EQ(worker->cpu_ticks, 50u);
  EXPECT_FALSE(worker->io_readable);
  EXPECT_FALSE(ReadProcCounters(root, 9999).has_value());
  auto tree = ProcessTree(root, 4242);
  std::sort(tree.begin(), tree.end());
  EXPECT_EQ(tree, (std::vector<int>{4242, 4243}));
}

TEST(MeterWatch, Sparkline) {
  // 0 -> the lowest block, 50% -> floor(0.5 x 8) = the fifth, 100% -> the full block; absent -> space.
  EXPECT_EQ(Sparkline({0.0, 50.0, 100.0, std::nullopt}, 100), "\u2581\u2585\u2588 ");
  // Eight values into four buckets: means 5, 25, 45, 95 -> 0.4, 2, 3.6, 7.6 -> blocks 0, 2, 3, 7.
  EXPECT_EQ(Sparkline({0.0, 10.0, 20.0, 30.0, 40.0, 50.0, 90.0, 100.0}, 100, 4), "\u2581\u2583\u2584\u2588");
}

std::string Python(const std::string& code) { return code; }

TEST(MeterWatch, ACommandThatWaitsOnDataIsIoBound) {
  // 48 MiB written to a file, then read back in 1 MiB chunks with a 40 ms sleep per chunk: about
  // 2 s of waiting on a slow feed at about 25 MB/s and almost no CPU.
  const std::filesystem::path file = std::filesystem::temp_directory_path() / ("watch-io-" + std::to_string(::getpid()));
  {
    std::ofstream out(file, std::ios::binary);
    const std::string mib(1 << 20, 'x');
    for (int i = 0; i < 48; ++i) {
      out << mib;
    }
  }
  WatchRequest q;
  q.interval_seconds = 0.25;
  q.nvml_library = "/nonexistent/libnvidia-ml.so.1";
  q.command = {"python3", "-c",
               Python("import sys, time\nf = open(sys.argv[1], 'rb')\nwhile f.read(1 << 20):\n    time.sleep(0.04)\n"),
               file.string()};
  const WatchResult r = RunWatch(q);
  std::filesystem::remove(file);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_GE(r.series.size(), 4u);
  EXPECT_EQ(r.diagnosis.bound, WatchBound::kIo) << WatchResultToJson(r).dump(2);
  EXPECT_EQ(r.diagnosis.gpu_part.rfind("SKIP: not measured: ", 0), 0u) << r.diagnosis.gpu_part;
  EXPECT_FALSE(r.summary.gpu_util_mean.has_value());
  // All 48 MiB were read by the tree (rchar), within the run.
  double bytes = 0;
  double last = 0;
  for (const auto& s : r.series) {
    bytes += s.read_bytes_per_s * (s.t - last);
    last = s.t;
  }
  EXPECT_GE(bytes, 0.9 * 48 * 1048576.0);
}

TEST(MeterWatch, TwoBusyProcessesAreCpuBoundAndTheExitCodeIsTheCommands) {
  // Two Python processes counting 2 s of CPU time each, started by a shell that then exits 3.
  // On a loaded machine they get less than a core between them, but they are runnable (state
  // R) in nearly every sample.
  WatchRequest q;
  q.interval_seconds = 0.25;
  q.nvml_library = "/nonexistent/libnvidia-ml.so.1";
  const std::string loop = "python3 -c 'import time\nt = time.process_time()\nwhile time.process_time() - t < 2: pass'";
  q.command = {"sh", "-c", loop + " & " + loop + "; wait; exit 3"};
  const WatchResult r = RunWatch(q);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.diagnosis.bound, WatchBound::kCpu) << WatchResultToJson(r).dump(2);
  EXPECT_GE(r.summary.running_share, 0.8);
}

TEST(MeterWatch, ACommandThatCannotStartIs127AndTheJsonRoundTrips) {
  WatchRequest q;
  q.nvml_library = "/nonexistent/libnvidia-ml.so.1";
  q.command = {"/nonexistent/train.py"};
  const WatchResult r = RunWatch(q);
  EXPECT_EQ(r.exit_code, 127);
  const WatchResult back = WatchResultFromJson(WatchResultToJson(r), "w.json");
  EXPECT_EQ(back.exit_code, 127);
  EXPECT_EQ(back.command, q.command);
  EXPECT_EQ(back.diagnosis.bound, r.diagnosis.bound);
  EXPECT_THROW(WatchResultFromJson(nlohmann::json{{"schema", "other"}}, "w.json"), InputError);
}

}  // namespace
}  // namespace gpuplan
