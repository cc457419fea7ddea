// `gpuplan meter watch` (docs/meter-watch.md): the diagnosis rules on hand-made summaries, the
// /proc readers on a fixture tree, the sparkline, the JSON round trip, and real commands run and
// sampled on this machine: one that waits on data by construction, one that keeps two CPUs busy.
// Without a GPU the GPU part is SKIP with the reason.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "core/error.h"
#include "meter/render/meter_watch.h"
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
  // The machine in iowait (another job writing) while the command sleeps: not the command's wait. With a
  // process of the command seen in state D once, the machine's iowait counts.
  WatchSummary busy_disk = Host(0.05, 0.1);
  busy_disk.system_iowait_mean = 0.3;
  EXPECT_EQ(DiagnoseWatch(busy_disk, 0, 10, "x").bound, WatchBound::kWaiting);
  busy_disk.waiting_io_share = 0.1;
  EXPECT_EQ(DiagnoseWatch(busy_disk, 0, 10, "x").bound, WatchBound::kIo);
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

TEST(MeterWatch, PcieLinkRates) {
  // One direction: GT/s x lanes x coding / 8 bits. Gen4 x16: 16 x 16 x 128/130 / 8 = 31.51 GB/s;
  // Gen3 x16 15.75 GB/s; Gen1 x1 2.5 x 8/10 / 8 = 0.25 GB/s; Gen5 x16 63.02 GB/s.
  EXPECT_NEAR(*PcieLinkBytesPerSecond(4, 16), 31.5077e9, 1e5);
  EXPECT_NEAR(*PcieLinkBytesPerSecond(3, 16), 15.7538e9, 1e5);
  EXPECT_DOUBLE_EQ(*PcieLinkBytesPerSecond(1, 1), 0.25e9);
  EXPECT_NEAR(*PcieLinkBytesPerSecond(5, 16), 63.0154e9, 1e5);
  EXPECT_FALSE(PcieLinkBytesPerSecond(7, 16));
  EXPECT_FALSE(PcieLinkBytesPerSecond(4, 0));
}

TEST(MeterWatch, PcieTrafficDecidesBetweenCommunicationAndWaiting) {
  const double gen4x16 = *PcieLinkBytesPerSecond(4, 16);
  auto with_pcie = [&](double gb_s, int nvlinks, std::optional<double> link) {
    WatchSummary s = Gpu(30, 10, 0.3, 0);
    s.pcie_bytes_per_s_mean = gb_s * 1e9;
    s.pcie_link_bytes_per_s = link;
    s.nvlinks_up = nvlinks;
    return s;
  };
  // 4 GPUs moving 10 GB/s each over Gen4 x16: 10 / 31.51 = 32 % >= 20 %.
  auto d = DiagnoseWatch(with_pcie(10, 0, gen4x16), 4, 10, "");
  EXPECT_EQ(d.bound, WatchBound::kCommunication);
  EXPECT_EQ(d.evidence.back(),
            "4 GPUs, low utilisation and no host-side wait; PCIe traffic 10.00 GB/s per GPU on average (both "
            "directions), 32% of one direction of its link (31.5 GB/s): the GPUs wait on data moving between them");
  // 1 GB/s (3 %), no NVLink: the GPUs are not waiting on each other.
  EXPECT_EQ(DiagnoseWatch(with_pcie(1, 0, gen4x16), 4, 10, "").bound, WatchBound::kWaiting);
  // 1 GB/s but 24 NVLinks up, whose traffic is not read: still communication, and said so.
  d = DiagnoseWatch(with_pcie(1, 24, gen4x16), 4, 10, "");
  EXPECT_EQ(d.bound, WatchBound::kCommunication);
  EXPECT_NE(d.evidence.back().find("24 NVLinks are up and their traffic is not measured"), std::string::npos);
  // 6.2 GB/s is 19.7 % of the link: not busy; 6.4 GB/s (20.3 %) is.
  EXPECT_EQ(DiagnoseWatch(with_pcie(6.2, 0, gen4x16), 4, 10, "").bound, WatchBound::kWaiting);
  EXPECT_EQ(DiagnoseWatch(with_pcie(6.4, 0, gen4x16), 4, 10, "").bound, WatchBound::kCommunication);
  // Link unknown: 4 GB/s is the line.
  EXPECT_EQ(DiagnoseWatch(with_pcie(3.9, 0, std::nullopt), 4, 10, "").bound, WatchBound::kWaiting);
  EXPECT_EQ(DiagnoseWatch(with_pcie(4.1, 0, std::nullopt), 4, 10, "").bound, WatchBound::kCommunication);
  // One GPU, idle, its link busy: it waits on host-GPU copies.
  EXPECT_EQ(DiagnoseWatch(with_pcie(10, 0, gen4x16), 1, 10, "").bound, WatchBound::kDataLoading);
  EXPECT_EQ(DiagnoseWatch(with_pcie(1, 0, gen4x16), 1, 10, "").bound, WatchBound::kWaiting);
}

// `meter watch` of `sleep 0.5`, sampled every 0.1 s, on the fake NVML serving the H100 recording with
// `gpu0`'s keys set on its GPU 0.
WatchResult WatchSleepOnFakeNvml(const std::string& name, const nlohmann::json& gpu0) {
  const std::string dir = ::testing::TempDir() + "/" + name;
  std::filesystem::create_directories(dir);
  std::ifstream in(test::Fixture("nvml/h100-590.recording.json"));
  nlohmann::json j = nlohmann::json::parse(in);
  j["snapshots"][0]["gpus"][0].update(gpu0);
  std::ofstream(dir + "/rec.json") << j.dump();
  setenv("GPUPLAN_FAKE_NVML", (dir + "/rec.json").c_str(), 1);
  WatchRequest q;
  q.nvml_library = GPUPLAN_FAKE_NVML_LIB;
  q.command = {"sleep", "0.5"};
  q.interval_seconds = 0.1;
  WatchResult r = RunWatch(q);
  unsetenv("GPUPLAN_FAKE_NVML");
  return r;
}

TEST(MeterWatch, NvLinkTrafficIsWeighedAgainstItsLinks) {
  // 8 GPUs with 18 NVLinks up each (144): one direction of a GPU's links is 18 x 25 = 450 GB/s. PCIe quiet.
  auto with_links = [](std::optional<double> nvlink_gb_s) {
    WatchSummary s = Gpu(30, 10, 0.3, 0);
    s.pcie_bytes_per_s_mean = 1e9;
    s.pcie_link_bytes_per_s = *PcieLinkBytesPerSecond(5, 16);
    s.nvlinks_up = 144;
    if (nvlink_gb_s) s.nvlink_bytes_per_s_mean = *nvlink_gb_s * 1e9;
    return s;
  };
  // 200 GB/s per GPU: 44 % of 450 -> the GPUs wait on each other, over NVLink.
  auto d = DiagnoseWatch(with_links(200), 8, 10, "");
  EXPECT_EQ(d.bound, WatchBound::kCommunication);
  EXPECT_EQ(d.evidence.back(),
            "8 GPUs, low utilisation and no host-side wait; NVLink traffic 200.00 GB/s per GPU on average (both "
            "directions), 44% of one direction of its 18 links (450 GB/s): the GPUs wait on data moving between them");
  // 50 GB/s (11 %) and PCIe quiet: measured, and not waiting on each other.
  d = DiagnoseWatch(with_links(50), 8, 10, "");
  EXPECT_EQ(d.bound, WatchBound::kWaiting);
  EXPECT_NE(d.evidence[2].find("NVLink traffic 50.00 GB/s"), std::string::npos) << d.evidence[2];
  // Links up but their counters not read: communication, said to be unmeasured.
  EXPECT_EQ(DiagnoseWatch(with_links(std::nullopt), 8, 10, "").bound, WatchBound::kCommunication);
}

TEST(MeterWatch, NvLinkCountersAreReadThroughNvml) {
  // The driver's NVLink data counters growing at 10,000,000 KiB/s each way: 2 x 10^7 x 1,024 =
  // 20.48e9 bytes/s per GPU, read as the difference of two readings over the time between them.
  const WatchResult r =
      WatchSleepOnFakeNvml("watch-nvlink", {{"nvlink_tx_kib_per_s", 10000000}, {"nvlink_rx_kib_per_s", 10000000}});
  ASSERT_GE(r.series.size(), 2u);
  for (const WatchSample& x : r.series) {
    ASSERT_TRUE(x.nvlink_bytes_per_s);
    EXPECT_NEAR(*x.nvlink_bytes_per_s, 20.48e9, 0.02 * 20.48e9);
  }
  ASSERT_TRUE(r.summary.nvlink_bytes_per_s_mean);
  EXPECT_NEAR(*r.summary.nvlink_bytes_per_s_mean, 20.48e9, 0.02 * 20.48e9);
  EXPECT_FALSE(r.series[0].pcie_bytes_per_s.has_value());  // this recording gives no PCIe counters
  const WatchResult back = WatchResultFromJson(WatchResultToJson(r), "w.json");
  EXPECT_EQ(back.summary.nvlink_bytes_per_s_mean, r.summary.nvlink_bytes_per_s_mean);
  EXPECT_EQ(back.series[1].nvlink_bytes_per_s, r.series[1].nvlink_bytes_per_s);
}

TEST(MeterWatch, PcieThroughputIsReadThroughNvml) {
  // The H100 recording (PCIe Gen5 x16, 18 NVLinks up, utilisation 0) with the driver's PCIe counters
  // set: TX 20,000,000 KB/s and RX 10,000,000 KB/s = 30,000,000 x 1,024 = 30.72e9 B/s per GPU; one
  // direction of Gen5 x16 is 63.02e9 B/s, so 48.7 %: one idle GPU whose link is busy waits on copies.
  const WatchResult r = WatchSleepOnFakeNvml(
      "watch-pcie", {{"pcie_tx_kb_per_s", 20000000}, {"pcie_rx_kb_per_s", 10000000}, {"utilization_gpu", 0}});
  ASSERT_GE(r.series.size(), 2u);
  for (const WatchSample& x : r.series) {
    ASSERT_TRUE(x.pcie_bytes_per_s);
    EXPECT_DOUBLE_EQ(*x.pcie_bytes_per_s, 30.72e9);
  }
  EXPECT_NEAR(*r.summary.pcie_link_bytes_per_s, 63.0154e9, 1e5);
  EXPECT_EQ(r.summary.nvlinks_up, 18);
  // The host side is this machine's, which other tests may load (iowait): either way the live finding
  // is data-loading-bound; with the host side quiet it rests on the PCIe figure alone.
  EXPECT_EQ(r.diagnosis.bound, WatchBound::kDataLoading);
  WatchSummary quiet_host = r.summary;
  quiet_host.cpu_cores_mean = quiet_host.cpu_cores_peak = 0;
  quiet_host.read_bytes_per_s_mean = 0;
  quiet_host.waiting_io_share = quiet_host.running_share = 0;
  quiet_host.system_iowait_mean = 0;
  const WatchDiagnosis d = DiagnoseWatch(quiet_host, r.gpus, r.series.size(), "");
  EXPECT_EQ(d.bound, WatchBound::kDataLoading);
  EXPECT_EQ(d.evidence.back(),
            "PCIe traffic 30.72 GB/s per GPU on average (both directions), 49% of one direction of its link "
            "(63.0 GB/s): the GPU waits on copies between host and GPU memory");
  const WatchResult back = WatchResultFromJson(WatchResultToJson(r), "w.json");
  EXPECT_EQ(back.summary.pcie_bytes_per_s_mean, r.summary.pcie_bytes_per_s_mean);
  EXPECT_EQ(back.summary.nvlinks_up, 18);
  EXPECT_EQ(back.series[0].pcie_bytes_per_s, r.series[0].pcie_bytes_per_s);
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
  // R) in most samples: all but the first ones (the interpreters start, reading files) and the
  // last (one loop has ended, the shell waits). Under ASan with another test beside it, 11 of 14
  // samples were R (CI, 2026-12-02); a command that sleeps or waits on I/O has almost none.
  WatchRequest q;
  q.interval_seconds = 0.25;
  q.nvml_library = "/nonexistent/libnvidia-ml.so.1";
  const std::string loop = "python3 -c 'import time\nt = time.process_time()\nwhile time.process_time() - t < 2: pass'";
  q.command = {"sh", "-c", loop + " & " + loop + "; wait; exit 3"};
  const WatchResult r = RunWatch(q);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.diagnosis.bound, WatchBound::kCpu) << WatchResultToJson(r).dump(2);
  EXPECT_GE(r.summary.running_share, 0.6);
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
