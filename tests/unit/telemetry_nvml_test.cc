// NVML layer of `gpuplan check`: NvmlSource over a missing library and over the fake
// libnvidia-ml.so.1 (tests/fake_nvml) serving a recording hand-written from a real H100 capture
// (tests/fixtures/nvml/SOURCES.md); snapshot JSON; RecordedSource and RecordingWriter.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "telemetry/nvml_source.h"
#include "telemetry/recorded_source.h"
#include "telemetry/snapshot_json.h"

namespace gpuplan {
namespace {

const std::string kFixtures = std::string(GPUPLAN_TEST_FIXTURES) + "/nvml";

std::string TempPath(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("gpuplan_nvml_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

TEST(NvmlSourceTest, MissingLibraryIsEnvironmentErrorOnOneLine) {
  try {
    NvmlSource::Open("/nonexistent/libnvidia-ml.so.1");
    FAIL() << "no exception";
  } catch (const EnvironmentError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("/nonexistent/libnvidia-ml.so.1"), std::string::npos) << what;
    EXPECT_NE(what.find("no NVIDIA driver"), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
}

TEST(NvmlSourceTest, CpuListFromMask) {
  EXPECT_EQ(CpuListFromMask({0xFFFFFUL}), "0-19");
  EXPECT_EQ(CpuListFromMask({0x5UL, 0x1UL}), "0,2,64");
  EXPECT_EQ(CpuListFromMask({0UL}), "");
}

class FakeNvmlTest : public ::testing::Test {
 protected:
  void SetUp() override { setenv("GPUPLAN_FAKE_NVML", (kFixtures + "/h100-590.recording.json").c_str(), 1); }
  void TearDown() override { unsetenv("GPUPLAN_FAKE_NVML"); }
};

// Expected values are read by hand from linux-x86_64__nvidia-h100-80gb-hbm3__590.48.01.txt.
TEST_F(FakeNvmlTest, NvmlSourceReadsTheH100Capture) {
  auto src = NvmlSource::Open(GPUPLAN_FAKE_NVML_LIB);
  const SystemSnapshot s = src->Snapshot();
  EXPECT_EQ(s.driver_version, "590.48.01");    // Driver Version : 590.48.01
  EXPECT_EQ(s.cuda_driver_version, "13.1");    // CUDA Version : 13.1
  ASSERT_EQ(s.gpus.size(), 1u);                // Attached GPUs : 1
  const GpuSnapshot& g = s.gpus[0];
  EXPECT_EQ(g.name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(g.vbios, "96.00.A5.00.01");
  EXPECT_EQ(g.board_part_number, "692-2G520-0200-000");
  EXPECT_EQ(g.pci_bus_id, "00000000:00:09.0");
  EXPECT_EQ(g.pci_device_id, 0x233010DEu);
  EXPECT_EQ(g.pci_subsystem_id, 0x16C110DEu);
  EXPECT_EQ(g.memory_total, uint64_t{81559} * 1024 * 1024);  // Total : 81559 MiB
  EXPECT_EQ(g.memory_reserved, uint64_t{479} * 1024 * 1024);  // Reserved : 479 MiB
  EXPECT_EQ(g.memory_used, uint64_t{0});
  EXPECT_EQ(g.pcie_gen_current, 5);
  EXPECT_EQ(g.pcie_gen_max, 5);
  EXPECT_EQ(g.pcie_width_current, 16);  // 16x
  EXPECT_EQ(g.pcie_width_max, 16);
  EXPECT_EQ(g.pcie_replays, uint64_t{9});  // Replays Since Reset : 9
  EXPECT_EQ(g.nvlink_links, 18);
  EXPECT_EQ(g.nvlink_up, 18);
  EXPECT_EQ(g.persistence_mode, true);
  EXPECT_EQ(g.mig_enabled, false);
  ASSERT_TRUE(g.power_limit);
  EXPECT_DOUBLE_EQ(*g.power_limit, 700.0);  // Current Power Limit : 700.00 W
  ASSERT_TRUE(g.power_draw);
  EXPECT_NEAR(*g.power_draw, 69.62, 0.0005);  // Instantaneous Power Draw : 69.62 W (mW in NVML)
  EXPECT_EQ(g.ecc_enabled, true);
  EXPECT_EQ(g.ecc_volatile_uncorrected, uint64_t{0});
  EXPECT_EQ(g.remapped_rows_pending, false);
  EXPECT_EQ(g.temperature_c, 41);
  EXPECT_EQ(g.sm_clock_mhz, 345);
  EXPECT_EQ(g.sm_clock_max_mhz, 1980);
  EXPECT_EQ(g.mem_clock_mhz, 2619);
  EXPECT_EQ(g.clock_event_reasons, kClockEventGpuIdle);  // only "Idle : Active"
  EXPECT_EQ(g.cpu_affinity, "0-19");                      // topo -m CPU Affinity
  EXPECT_EQ(g.numa_node, 0);
  EXPECT_EQ(g.compute_capability, std::nullopt);  // not in the capture

  // Retired pages are N/A in the capture: absent, with the NVML reason.
  EXPECT_FALSE(g.retired_pages_sbe);
  ASSERT_TRUE(g.not_measured.count("retired_pages_sbe"));
  EXPECT_NE(g.not_measured.at("retired_pages_sbe").find("NOT_SUPPORTED"), std::string::npos);
  EXPECT_NE(g.not_measured.at("retired_pages_sbe").find("nvmlDeviceGetRetiredPages"), std::string::npos);
  EXPECT_FALSE(s.nvml_version);
  EXPECT_NE(s.not_measured.at("nvml_version").find("NOT_SUPPORTED"), std::string::npos);
  // A field present is never also listed as not measured.
  EXPECT_EQ(g.not_measured.count("name"), 0u);

  const auto events = src->Events(10);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].gpu, 0);
  EXPECT_EQ(events[0].type, 0x8u);  // nvmlEventTypeXidCriticalError
  EXPECT_EQ(events[0].data, 79u);
  EXPECT_TRUE(src->Events(0).empty());
  EXPECT_NE(src->Describe().find("driver 590.48.01"), std::string::npos);
}

SystemSnapshot FullSnapshot() {
  SystemSnapshot s;
  s.at_seconds = 1.25;
  s.driver_version = "550.54.15";
  s.cuda_driver_version = "12.4";
  s.nvml_version = "12.550.54.15";
  s.hostname = "node-7";
  s.not_measured["x"] = "why";
  GpuSnapshot g;
  g.index = 3;
  g.name = "A"; g.uuid = "GPU-1"; g.serial = "S"; g.board_part_number = "P"; g.vbios = "V";
  g.pci_bus_id = "00000000:18:00.0"; g.pci_device_id = 0x233010DEu; g.pci_subsystem_id = 0x16C110DEu;
  g.compute_capability = "9.0";
  g.memory_total = 85520809984ULL; g.memory_reserved = 1; g.memory_used = 2;
  g.pcie_gen_current = 4; g.pcie_gen_max = 5; g.pcie_gen_gpu_max = 5; g.pcie_gen_host_max = 4;
  g.pcie_width_current = 8; g.pcie_width_max = 16; g.pcie_replays = 12;
  g.nvlink_links = 18; g.nvlink_up = 17;
  g.mig_enabled = true; g.mig_pending = false; g.persistence_mode = true;
  g.power_draw = 69.62; g.power_limit = 700; g.power_default_limit = 650.5; g.power_max_limit = 700;
  g.energy_mj = 123456789012ULL;
  g.ecc_enabled = true; g.ecc_pending = false;
  g.ecc_volatile_corrected = 1; g.ecc_volatile_uncorrected = 2; g.ecc_aggregate_corrected = 3;
  g.ecc_aggregate_uncorrected = 4;
  g.retired_pages_sbe = 5; g.retired_pages_dbe = 6; g.retired_pages_pending = true;
  g.remapped_rows_correctable = 7; g.remapped_rows_uncorrectable = 8; g.remapped_rows_pending = true;
  g.remapped_rows_failure = false;
  g.temperature_c = -5; g.temperature_slowdown_c = 87;
  g.sm_clock_mhz = 345; g.sm_clock_max_mhz = 1980; g.mem_clock_mhz = 2619;
  g.clock_event_reasons = 0x1FFULL; g.utilization_gpu = 99; g.utilization_memory = 42;
  g.numa_node = 1; g.cpu_affinity = "0-27,56-83";
  g.not_measured["k"] = "v";
  s.gpus.push_back(g);
  s.gpus.push_back(GpuSnapshot{});
  return s;
}

TEST(SnapshotJsonTest, RoundTripKeepsEveryField) {
  const SystemSnapshot s = FullSnapshot();
  const nlohmann::json j = ToJson(s);
  EXPECT_EQ(j["gpus"][0]["memory_total"], 85520809984ULL);
  EXPECT_EQ(j["gpus"][0]["cpu_affinity"], "0-27,56-83");
  EXPECT_FALSE(j["gpus"][1].contains("name"));  // absent optional -> no key
  // 1 index + 52 optional fields + not_measured: every field is written.
  EXPECT_EQ(j["gpus"][0].size(), 54u);
  const SystemSnapshot back = SnapshotFromJson(nlohmann::json::parse(j.dump()), "mem.json");
  EXPECT_TRUE(back == s);
  EXPECT_EQ(back.gpus[0].power_draw, 69.62);
  EXPECT_EQ(back.gpus[0].temperature_c, -5);
  EXPECT_EQ(back.gpus[0].not_measured.at("k"), "v");
  const GpuEvent e{2, 8, 79, 3.5};
  EXPECT_TRUE(EventFromJson(ToJson(e), "mem.json") == e);
}

TEST(SnapshotJsonTest, BadFieldNamesThePath) {
  nlohmann::json j = ToJson(FullSnapshot());
  j["gpus"].push_back(nlohmann::json{{"index", 2}, {"memory_total", "lots"}});
  try {
    SnapshotFromJson(j, "bad.json");
    FAIL() << "no exception";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "bad.json");
    EXPECT_EQ(e.field(), "gpus[2].memory_total");
  }
  j["gpus"][2]["memory_total"] = -1;
  EXPECT_THROW(SnapshotFromJson(j, "bad.json"), InputError);
  j["gpus"][2].erase("memory_total");
  j["gpus"][2]["mig_enabled"] = 1;
  try {
    SnapshotFromJson(j, "bad.json");
    FAIL() << "no exception";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "gpus[2].mig_enabled");
  }
}

Recording ThreeSnapshots() {
  Recording r;
  r.source = "NVML test";
  for (int i = 0; i < 3; ++i) {
    SystemSnapshot s;
    s.at_seconds = i * 10.0;
    GpuSnapshot g;
    g.temperature_c = 40 + i;
    s.gpus.push_back(g);
    r.snapshots.push_back(s);
  }
  r.events.push_back(GpuEvent{0, 8, 13, 5.0});
  r.events.push_back(GpuEvent{0, 8, 79, 20.0});
  return r;
}

TEST(RecordedSourceTest, ReplaysInOrderAndRepeatsTheLast) {
  const std::string path = TempPath("replay.json");
  WriteRecording(ThreeSnapshots(), path);
  auto src = RecordedSource::Open(path);
  EXPECT_EQ(src->Describe(), "recording " + path + " (NVML test)");
  EXPECT_EQ(src->Snapshot().gpus[0].temperature_c, 40);
  EXPECT_TRUE(src->Events(0).empty());  // at t=0 no event yet
  EXPECT_EQ(src->Snapshot().gpus[0].temperature_c, 41);
  auto ev = src->Events(0);
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].data, 13u);
  EXPECT_TRUE(src->Events(0).empty());
  EXPECT_EQ(src->Snapshot().gpus[0].temperature_c, 42);
  ev = src->Events(0);
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].data, 79u);
  EXPECT_EQ(src->Snapshot().gpus[0].temperature_c, 42);  // the last, again
  EXPECT_EQ(src->Snapshot().at_seconds, 20.0);
}

TEST(RecordedSourceTest, RejectsWrongFormat) {
  const std::string path = TempPath("wrong.json");
  std::ofstream(path) << R"({"format": "other", "version": 1})";
  try {
    RecordedSource::Open(path);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "format");
    EXPECT_EQ(e.file(), path);
  }
}

TEST(RecordingWriterTest, WritesWhatRecordedSourceReadsBack) {
  const std::string in = TempPath("in.json");
  const std::string out = TempPath("out.json");
  const Recording original = ThreeSnapshots();
  WriteRecording(original, in);
  auto inner = RecordedSource::Open(in);
  RecordingWriter writer(*inner, out);
  for (size_t i = 0; i < original.snapshots.size(); ++i) {
    writer.Snapshot();
    writer.Events(0);
    // Complete after each Snapshot(): parses, has i+1 snapshots.
    const Recording now = ReadRecording(out);
    EXPECT_EQ(now.snapshots.size(), i + 1);
  }
  writer.Snapshot();  // one more: flushes the events of the last Events() call too
  const Recording back = ReadRecording(out);
  ASSERT_EQ(back.snapshots.size(), 4u);
  for (size_t i = 0; i < 3; ++i) EXPECT_TRUE(back.snapshots[i] == original.snapshots[i]) << i;
  EXPECT_TRUE(back.snapshots[3] == original.snapshots[2]);
  ASSERT_EQ(back.events.size(), 2u);
  EXPECT_TRUE(back.events[0] == original.events[0]);
  EXPECT_TRUE(back.events[1] == original.events[1]);
  EXPECT_EQ(back.source, inner->Describe());
  // Replaying the written file gives the same snapshots.
  auto replay = RecordedSource::Open(out);
  for (size_t i = 0; i < 3; ++i) EXPECT_TRUE(replay->Snapshot() == original.snapshots[i]);
}

TEST(RecordingWriterTest, UnwritablePathIsEnvironmentError) {
  const std::string in = TempPath("in2.json");
  WriteRecording(ThreeSnapshots(), in);
  auto inner = RecordedSource::Open(in);
  RecordingWriter writer(*inner, "/nonexistent-dir/out.json");
  try {
    writer.Snapshot();
    FAIL();
  } catch (const EnvironmentError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent-dir/out.json"), std::string::npos);
  }
}

}  // namespace
}  // namespace gpuplan
