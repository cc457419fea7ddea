// Readers of `nvidia-smi -q -x` and `nvidia-smi -q` captures (src/telemetry/nvidia_smi.h).
// Every expected value below was read by hand from the fixture file named in the test
// (tests/fixtures/nvidia-smi/, provenance in SOURCES.md; the edited ones in edited/README.md),
// with the line in a comment, never copied from the program's output.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "telemetry/nvidia_smi.h"
#include "telemetry/snapshot.h"

namespace gpuplan {
namespace {

constexpr uint64_t kMiB = 1048576ULL;

std::string Fixture(const std::string& name) {
  return std::string(GPUPLAN_TEST_FIXTURES) + "/nvidia-smi/" + name;
}

std::string ReadAll(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

const GpuSnapshot& OnlyGpu(const SystemSnapshot& s) {
  EXPECT_EQ(s.gpus.size(), 1u);
  return s.gpus.at(0);
}

// ---- real captures, XML ----

TEST(NvidiaSmiXml, A100Sxm4Mig) {
  const SystemSnapshot s = LoadNvidiaSmiCapture(Fixture("a100-sxm4-mig.xml"));
  EXPECT_EQ(s.driver_version, "510.47.03");  // line 5
  EXPECT_EQ(s.cuda_driver_version, "11.6");  // line 6
  const GpuSnapshot& g = OnlyGpu(s);
  EXPECT_EQ(g.index, 0);
  EXPECT_EQ(g.name, "NVIDIA A100-SXM4-40GB");
  EXPECT_EQ(g.uuid, "GPU-27b94a00-ed54-5c24-b1fd-1054085de32a");
  EXPECT_EQ(g.serial, "1324321002473");
  EXPECT_EQ(g.vbios, "92.00.45.00.03");
  // No <board_part_number> in driver 510: the <gpu_part_number> stands in.
  EXPECT_EQ(g.board_part_number, "692-2G506-0200-003");
  EXPECT_EQ(g.pci_bus_id, "00000000:00:04.0");
  EXPECT_EQ(g.pci_device_id, 0x20B010DEu);
  EXPECT_EQ(g.pci_subsystem_id, 0x134F10DEu);
  // The GPU's own <fb_memory_usage> (line 155), not the MIG devices' (19968 MiB).
  EXPECT_EQ(g.memory_total, 40960 * kMiB);
  EXPECT_EQ(g.memory_reserved, 605 * kMiB);
  EXPECT_EQ(g.memory_used, 38 * kMiB);
  EXPECT_EQ(g.pcie_gen_current, 4);
  EXPECT_EQ(g.pcie_gen_max, 4);
  // Driver 510 has no device/host max link gen elements.
  EXPECT_FALSE(g.pcie_gen_gpu_max.has_value());
  EXPECT_EQ(g.not_measured.at("pcie_gen_gpu_max"), "not in the capture");
  EXPECT_FALSE(g.pcie_gen_host_max.has_value());
  EXPECT_EQ(g.not_measured.at("pcie_gen_host_max"), "not in the capture");
  EXPECT_EQ(g.pcie_width_current, 16);
  EXPECT_EQ(g.pcie_width_max, 16);
  EXPECT_EQ(g.pcie_replays, 0u);
  EXPECT_EQ(g.mig_enabled, true);
  EXPECT_EQ(g.mig_pending, true);
  EXPECT_EQ(g.persistence_mode, false);
  EXPECT_DOUBLE_EQ(*g.power_draw, 66.92);
  EXPECT_DOUBLE_EQ(*g.power_limit, 400.0);
  EXPECT_DOUBLE_EQ(*g.power_default_limit, 400.0);
  EXPECT_DOUBLE_EQ(*g.power_max_limit, 400.0);
  EXPECT_EQ(g.ecc_enabled, true);
  EXPECT_EQ(g.ecc_pending, true);
  // Volatile counters are all N/A (MIG on), aggregate all 0.
  EXPECT_FALSE(g.ecc_volatile_corrected.has_value());
  EXPECT_EQ(g.not_measured.at("ecc_volatile_corrected"),
            "nvidia-smi -q -x: ecc_errors/volatile/sram_correctable = N/A");
  EXPECT_FALSE(g.ecc_volatile_uncorrected.has_value());
  EXPECT_EQ(g.ecc_aggregate_corrected, 0u);
  EXPECT_EQ(g.ecc_aggregate_uncorrected, 0u);
  EXPECT_FALSE(g.retired_pages_sbe.has_value());
  EXPECT_EQ(g.not_measured.at("retired_pages_sbe"),
            "nvidia-smi -q -x: retired_pages/multiple_single_bit_retirement/retired_count = N/A");
  // <remapped_rows>N/A</remapped_rows> (line 213): every remapped-row field says so.
  EXPECT_FALSE(g.remapped_rows_uncorrectable.has_value());
  EXPECT_EQ(g.not_measured.at("remapped_rows_uncorrectable"),
            "nvidia-smi -q -x: remapped_rows = N/A");
  EXPECT_EQ(g.not_measured.at("remapped_rows_pending"), "nvidia-smi -q -x: remapped_rows = N/A");
  EXPECT_EQ(g.temperature_c, 36);
  EXPECT_EQ(g.temperature_slowdown_c, 89);
  EXPECT_EQ(g.sm_clock_mhz, 1410);
  EXPECT_EQ(g.mem_clock_mhz, 1215);
  EXPECT_EQ(g.sm_clock_max_mhz, 1410);
  // Old <clocks_throttle_reasons>: all "Not Active" (one value wraps onto the next line).
  EXPECT_EQ(g.clock_event_reasons, 0u);
  EXPECT_FALSE(g.utilization_gpu.has_value());
  EXPECT_EQ(g.not_measured.at("utilization_gpu"), "nvidia-smi -q -x: utilization/gpu_util = N/A");
  EXPECT_FALSE(g.compute_capability.has_value());
  EXPECT_EQ(g.not_measured.at("compute_capability"), "not in the capture");
}

TEST(NvidiaSmiXml, Rtx4090Driver535) {
  const SystemSnapshot s = LoadNvidiaSmiCapture(Fixture("rtx-4090-driver-535.xml"));
  EXPECT_EQ(s.driver_version, "535.86.05");
  EXPECT_EQ(s.cuda_driver_version, "12.2");
  const GpuSnapshot& g = OnlyGpu(s);
  EXPECT_EQ(g.name, "NVIDIA GeForce RTX 4090");
  EXPECT_FALSE(g.serial.has_value());  // <serial>N/A</serial>, line 29
  EXPECT_EQ(g.not_measured.at("serial"), "nvidia-smi -q -x: serial = N/A");
  // <board_part_number>N/A</board_part_number> (line 35): not the chip's gpu_part_number.
  EXPECT_FALSE(g.board_part_number.has_value());
  EXPECT_EQ(g.not_measured.at("board_part_number"), "nvidia-smi -q -x: board_part_number = N/A");
  EXPECT_EQ(g.pci_device_id, 0x268410DEu);  // line 65
  EXPECT_EQ(g.pci_subsystem_id, 0x40BF1458u);
  EXPECT_EQ(g.pci_bus_id, "00000000:84:00.0");
  EXPECT_EQ(g.memory_total, 24564 * kMiB);  // line 107
  EXPECT_EQ(g.memory_reserved, 346 * kMiB);
  // Lines 70-74: driver 535 names max_device_link_gen / max_host_link_gen.
  EXPECT_EQ(g.pcie_gen_max, 3);
  EXPECT_EQ(g.pcie_gen_current, 1);
  EXPECT_EQ(g.pcie_gen_gpu_max, 4);
  EXPECT_EQ(g.pcie_gen_host_max, 3);
  EXPECT_EQ(g.pcie_width_current, 16);
  EXPECT_EQ(g.pcie_width_max, 16);
  EXPECT_EQ(g.mig_enabled, std::nullopt);
  EXPECT_EQ(g.not_measured.at("mig_enabled"), "nvidia-smi -q -x: mig_mode/current_mig = N/A");
  EXPECT_EQ(g.persistence_mode, true);
  // <gpu_power_readings> (lines 198-206), current_power_limit.
  EXPECT_DOUBLE_EQ(*g.power_draw, 26.84);
  EXPECT_DOUBLE_EQ(*g.power_limit, 450.0);
  EXPECT_DOUBLE_EQ(*g.power_default_limit, 450.0);
  EXPECT_DOUBLE_EQ(*g.power_max_limit, 600.0);
  EXPECT_EQ(g.ecc_enabled, false);
  EXPECT_FALSE(g.ecc_aggregate_uncorrected.has_value());
  EXPECT_EQ(g.not_measured.at("ecc_aggregate_uncorrected"),
            "nvidia-smi -q -x: ecc_errors/aggregate/sram_uncorrectable = N/A");
  EXPECT_EQ(g.remapped_rows_correctable, 0u);  // lines 172-175
  EXPECT_EQ(g.remapped_rows_uncorrectable, 0u);
  EXPECT_EQ(g.remapped_rows_pending, false);
  EXPECT_EQ(g.remapped_rows_failure, false);
  EXPECT_EQ(g.temperature_c, 40);
  // Only the relative *_tlimit_threshold elements in 535: no absolute slowdown threshold.
  EXPECT_FALSE(g.temperature_slowdown_c.has_value());
  EXPECT_EQ(g.not_measured.at("temperature_slowdown_c"), "not in the capture");
  // New <clocks_event_reasons>: only gpu_idle is Active (line 95).
  EXPECT_EQ(g.clock_event_reasons, kClockEventGpuIdle);
  EXPECT_EQ(g.sm_clock_mhz, 210);
  EXPECT_EQ(g.mem_clock_mhz, 405);
  EXPECT_EQ(g.sm_clock_max_mhz, 3120);
  EXPECT_EQ(g.utilization_gpu, 0);
  EXPECT_EQ(g.utilization_memory, 0);
}

TEST(NvidiaSmiXml, Rtx3060Laptop) {
  const SystemSnapshot s = LoadNvidiaSmiCapture(Fixture("rtx-3060.xml"));
  EXPECT_EQ(s.driver_version, "515.65.01");
  EXPECT_EQ(s.cuda_driver_version, "11.7");
  const GpuSnapshot& g = OnlyGpu(s);
  EXPECT_EQ(g.name, "NVIDIA GeForce RTX 3060 Laptop GPU");
  EXPECT_EQ(g.pci_device_id, 0x252010DEu);
  EXPECT_EQ(g.memory_total, 6144 * kMiB);
  EXPECT_EQ(g.pcie_gen_max, 4);
  EXPECT_EQ(g.pcie_gen_current, 1);
  EXPECT_EQ(g.pcie_width_max, 16);
  EXPECT_EQ(g.pcie_width_current, 8);  // line 68
  EXPECT_FALSE(g.ecc_enabled.has_value());
  EXPECT_EQ(g.not_measured.at("ecc_enabled"), "nvidia-smi -q -x: ecc_mode/current_ecc = N/A");
  EXPECT_DOUBLE_EQ(*g.power_draw, 8.70);
  EXPECT_FALSE(g.power_limit.has_value());  // lines 169-173 all N/A
  EXPECT_EQ(g.not_measured.at("power_limit"),
            "nvidia-smi -q -x: power_readings/enforced_power_limit = N/A");
  EXPECT_FALSE(g.power_default_limit.has_value());
  EXPECT_EQ(g.temperature_c, 45);
  EXPECT_EQ(g.temperature_slowdown_c, 102);
  EXPECT_EQ(g.clock_event_reasons, kClockEventGpuIdle);  // line 83
}

TEST(NvidiaSmiXml, TeslaP100OldEccLayout) {
  const SystemSnapshot s = LoadNvidiaSmiCapture(Fixture("tesla-p100.xml"));
  EXPECT_EQ(s.driver_version, "510.47.03");
  const GpuSnapshot& g = OnlyGpu(s);
  EXPECT_EQ(g.name, "Tesla P100-PCIE-16GB");
  EXPECT_EQ(g.pci_device_id, 0x15F810DEu);
  EXPECT_EQ(g.memory_total, 16384 * kMiB);
  EXPECT_EQ(g.pcie_gen_max, 3);
  EXPECT_EQ(g.pcie_gen_current, 3);
  EXPECT_EQ(g.pcie_width_current, 16);
  EXPECT_DOUBLE_EQ(*g.power_limit, 250.0);
  EXPECT_DOUBLE_EQ(*g.power_max_limit, 250.0);
  EXPECT_EQ(g.ecc_enabled, true);
  // single_bit/total and double_bit/total (lines 135, 145, 157, 167).
  EXPECT_EQ(g.ecc_volatile_corrected, 0u);
  EXPECT_EQ(g.ecc_volatile_uncorrected, 0u);
  EXPECT_EQ(g.ecc_aggregate_corrected, 3u);
  EXPECT_EQ(g.ecc_aggregate_uncorrected, 0u);
  EXPECT_EQ(g.retired_pages_sbe, 0u);
  EXPECT_EQ(g.retired_pages_dbe, 0u);
  EXPECT_EQ(g.retired_pages_pending, false);
  EXPECT_FALSE(g.remapped_rows_correctable.has_value());
  EXPECT_EQ(g.temperature_c, 38);
  EXPECT_EQ(g.temperature_slowdown_c, 82);
  EXPECT_EQ(g.mig_enabled, std::nullopt);
  EXPECT_EQ(g.clock_event_reasons, kClockEventGpuIdle);
}

// ---- edited captures (edited/README.md) ----

TEST(NvidiaSmiEdited, Rtx4090DSoldAs4090) {
  const GpuSnapshot g = OnlyGpu(LoadNvidiaSmiCapture(Fixture("edited/rtx4090d-sold-as-4090.xml")));
  EXPECT_EQ(g.name, "NVIDIA GeForce RTX 4090 D");
  EXPECT_EQ(g.pci_device_id, 0x268510DEu);
}

TEST(NvidiaSmiEdited, A100PcieIdInSxm) {
  const GpuSnapshot g = OnlyGpu(LoadNvidiaSmiCapture(Fixture("edited/a100-pcie-id-in-sxm.xml")));
  EXPECT_EQ(g.name, "NVIDIA A100-SXM4-40GB");
  EXPECT_EQ(g.pci_device_id, 0x20F110DEu);
  EXPECT_EQ(g.mig_enabled, false);
  EXPECT_EQ(g.mig_pending, false);
}

TEST(NvidiaSmiEdited, A100X8Link) {
  const GpuSnapshot g = OnlyGpu(LoadNvidiaSmiCapture(Fixture("edited/a100-x8-link.xml")));
  EXPECT_EQ(g.pcie_width_current, 8);
  EXPECT_EQ(g.pcie_width_max, 8);
  EXPECT_EQ(g.pcie_gen_current, 4);
}

TEST(NvidiaSmiEdited, A100HostGen3) {
  const GpuSnapshot g = OnlyGpu(LoadNvidiaSmiCapture(Fixture("edited/a100-host-gen3.xml")));
  EXPECT_EQ(g.pcie_gen_max, 3);
  EXPECT_EQ(g.pcie_gen_gpu_max, 4);
  EXPECT_EQ(g.pcie_gen_host_max, 3);
  EXPECT_EQ(g.pcie_gen_current, 4);  // left as in the original
}

TEST(NvidiaSmiEdited, A100MigOn) {
  const GpuSnapshot g = OnlyGpu(LoadNvidiaSmiCapture(Fixture("edited/a100-mig-on.xml")));
  EXPECT_EQ(g.mig_enabled, true);
  EXPECT_EQ(g.mig_pending, true);
}

TEST(NvidiaSmiEdited, A100EccUncorrected) {
  const GpuSnapshot g = OnlyGpu(LoadNvidiaSmiCapture(Fixture("edited/a100-ecc-uncorrected.xml")));
  // volatile: sram_uncorrectable N/A + dram_uncorrectable 2; aggregate: 0 + 2.
  EXPECT_EQ(g.ecc_volatile_uncorrected, 2u);
  EXPECT_EQ(g.ecc_aggregate_uncorrected, 2u);
  EXPECT_FALSE(g.ecc_volatile_corrected.has_value());
  EXPECT_EQ(g.ecc_aggregate_corrected, 0u);
  EXPECT_EQ(g.remapped_rows_correctable, 0u);
  EXPECT_EQ(g.remapped_rows_uncorrectable, 1u);
  EXPECT_EQ(g.remapped_rows_pending, true);
  EXPECT_EQ(g.remapped_rows_failure, false);
}

TEST(NvidiaSmiEdited, A100PowerCapped) {
  const GpuSnapshot g = OnlyGpu(LoadNvidiaSmiCapture(Fixture("edited/a100-power-capped.xml")));
  EXPECT_DOUBLE_EQ(*g.power_limit, 250.0);
  EXPECT_DOUBLE_EQ(*g.power_default_limit, 400.0);
  EXPECT_DOUBLE_EQ(*g.power_max_limit, 400.0);
}

TEST(NvidiaSmiEdited, A100CutDownMemory) {
  const GpuSnapshot g = OnlyGpu(LoadNvidiaSmiCapture(Fixture("edited/a100-cut-down-memory.xml")));
  EXPECT_EQ(g.memory_total, 20480 * kMiB);
}

TEST(NvidiaSmiEdited, A100OldDriver) {
  const SystemSnapshot s = LoadNvidiaSmiCapture(Fixture("edited/a100-old-driver.xml"));
  EXPECT_EQ(s.driver_version, "470.57.02");
  EXPECT_EQ(s.cuda_driver_version, "11.4");
}

TEST(NvidiaSmiEdited, H100TextHostGen3) {
  // h100-590-q.txt line 79 "Host Max : N/A" -> "Host Max : 3" (edited/README.md).
  const SystemSnapshot s = LoadNvidiaSmiCapture(Fixture("edited/h100-590-q-host-gen3.txt"));
  const GpuSnapshot& g = OnlyGpu(s);
  EXPECT_EQ(g.pcie_gen_host_max, 3);
  EXPECT_EQ(g.pcie_gen_gpu_max, 5);
}

// ---- errors ----

TEST(NvidiaSmiErrors, MalformedXmlNamesFileAndLine) {
  const std::string path = Fixture("edited/a100-malformed.xml");
  try {
    LoadNvidiaSmiCapture(path);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), path);
    EXPECT_EQ(e.line(), 156);  // "<total>40960 MiB</totl>"
    EXPECT_FALSE(e.field().empty());
  }
}

TEST(NvidiaSmiErrors, BadNumberNamesElementAndLine) {
  const std::string path = Fixture("edited/a100-bad-number.xml");
  try {
    LoadNvidiaSmiCapture(path);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), path);
    EXPECT_EQ(e.line(), 215);  // "<gpu_temp>3x6 C</gpu_temp>"
    EXPECT_EQ(e.field(), "temperature/gpu_temp");
  }
}

TEST(NvidiaSmiErrors, BadNumberInTextNamesLine) {
  std::string text = ReadAll(Fixture("h100-590-q.txt"));
  const std::string from = "Total                                          : 81559 MiB";
  const size_t at = text.find(from);
  ASSERT_NE(at, std::string::npos);
  text.replace(at, from.size(), "Total                                          : 81x559 MiB");
  try {
    ParseNvidiaSmiQueryText(text, "h100.txt");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "h100.txt");
    EXPECT_EQ(e.line(), 112);  // FB Memory Usage / Total
    EXPECT_EQ(e.field(), "FB Memory Usage/Total");
  }
}

TEST(NvidiaSmiErrors, MissingFile) {
  try {
    LoadNvidiaSmiCapture(Fixture("no-such-capture.xml"));
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), Fixture("no-such-capture.xml"));
  }
}

// ---- text ----

TEST(NvidiaSmiText, H100Driver590) {
  const SystemSnapshot s = LoadNvidiaSmiCapture(Fixture("h100-590-q.txt"));
  EXPECT_EQ(s.driver_version, "590.48.01");  // line 5
  EXPECT_EQ(s.cuda_driver_version, "13.1");
  const GpuSnapshot& g = OnlyGpu(s);
  EXPECT_EQ(g.name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(g.serial, "0000000000000");
  EXPECT_EQ(g.board_part_number, "692-2G520-0200-000");
  EXPECT_EQ(g.vbios, "96.00.A5.00.01");
  EXPECT_EQ(g.pci_bus_id, "00000000:00:09.0");
  EXPECT_EQ(g.pci_device_id, 0x233010DEu);     // line 70
  EXPECT_EQ(g.pci_subsystem_id, 0x16C110DEu);  // line 72
  EXPECT_EQ(g.memory_total, 81559 * kMiB);     // line 112
  EXPECT_EQ(g.memory_reserved, 479 * kMiB);
  EXPECT_EQ(g.memory_used, 0u);
  EXPECT_EQ(g.pcie_gen_max, 5);
  EXPECT_EQ(g.pcie_gen_current, 5);
  EXPECT_EQ(g.pcie_gen_gpu_max, 5);
  EXPECT_FALSE(g.pcie_gen_host_max.has_value());  // line 79 "Host Max : N/A"
  EXPECT_EQ(g.not_measured.at("pcie_gen_host_max"),
            "nvidia-smi -q: PCI/GPU Link Info/PCIe Generation/Host Max = N/A");
  EXPECT_EQ(g.pcie_width_max, 16);
  EXPECT_EQ(g.pcie_width_current, 16);
  EXPECT_EQ(g.pcie_replays, 9u);  // line 86
  EXPECT_EQ(g.mig_enabled, false);
  EXPECT_EQ(g.persistence_mode, true);
  EXPECT_DOUBLE_EQ(*g.power_draw, 69.62);  // Instantaneous Power Draw, line 195
  EXPECT_DOUBLE_EQ(*g.power_limit, 700.0);
  EXPECT_DOUBLE_EQ(*g.power_default_limit, 700.0);
  EXPECT_DOUBLE_EQ(*g.power_max_limit, 700.0);
  EXPECT_EQ(g.ecc_enabled, true);
  EXPECT_EQ(g.ecc_volatile_corrected, 0u);
  EXPECT_EQ(g.ecc_volatile_uncorrected, 0u);
  EXPECT_EQ(g.ecc_aggregate_uncorrected, 0u);
  EXPECT_FALSE(g.retired_pages_sbe.has_value());
  EXPECT_EQ(g.not_measured.at("retired_pages_sbe"),
            "nvidia-smi -q: Retired Pages/Single Bit ECC = N/A");
  EXPECT_EQ(g.remapped_rows_uncorrectable, 0u);
  EXPECT_EQ(g.remapped_rows_pending, false);
  EXPECT_EQ(g.temperature_c, 41);  // line 185
  EXPECT_EQ(g.sm_clock_mhz, 345);
  EXPECT_EQ(g.mem_clock_mhz, 2619);
  EXPECT_EQ(g.sm_clock_max_mhz, 1980);
  EXPECT_EQ(g.clock_event_reasons, kClockEventGpuIdle);  // line 95
  EXPECT_EQ(g.utilization_gpu, 0);
}

TEST(NvidiaSmiText, WholeExporterCaptureReadsItsIdleQuerySection) {
  // The full nvidia_gpu_exporter capture: the reader takes the first NVSMI LOG (the idle -q
  // section, lines 1480-1735) and stops at the next "####" rule. Values as in h100-590-q.txt,
  // now at the capture's own line numbers (Device Id: line 1548 = 1478 + 70).
  const SystemSnapshot s =
      LoadNvidiaSmiCapture(Fixture("linux-x86_64__nvidia-h100-80gb-hbm3__590.48.01.txt"));
  EXPECT_EQ(s.driver_version, "590.48.01");
  const GpuSnapshot& g = OnlyGpu(s);
  EXPECT_EQ(g.name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(g.pci_device_id, 0x233010DEu);
  EXPECT_EQ(g.memory_total, 81559 * kMiB);
  EXPECT_EQ(g.temperature_c, 41);
  EXPECT_EQ(g.clock_event_reasons, kClockEventGpuIdle);
}

TEST(NvidiaSmiText, H200Driver590) {
  const SystemSnapshot s = LoadNvidiaSmiCapture(Fixture("h200-590-q.txt"));
  EXPECT_EQ(s.driver_version, "590.48.01");
  const GpuSnapshot& g = OnlyGpu(s);
  EXPECT_EQ(g.name, "NVIDIA H200");
  EXPECT_EQ(g.pci_device_id, 0x233510DEu);  // line 70
  EXPECT_EQ(g.memory_total, 143771 * kMiB);  // line 112
  EXPECT_EQ(g.pcie_gen_max, 5);
  EXPECT_FALSE(g.pcie_gen_host_max.has_value());
  EXPECT_DOUBLE_EQ(*g.power_limit, 700.0);  // line 196
  EXPECT_EQ(g.ecc_enabled, true);
  EXPECT_EQ(g.mig_enabled, false);
  EXPECT_EQ(g.temperature_c, 28);  // line 185
  EXPECT_EQ(g.clock_event_reasons, kClockEventGpuIdle);
}

TEST(NvidiaSmiText, GpudH100ThrottlingEightGpus) {
  const SystemSnapshot s =
      LoadNvidiaSmiCapture(Fixture("nvidia-smi-query.535.161.08.out.0.valid.txt"));
  EXPECT_EQ(s.driver_version, "535.161.08");
  EXPECT_EQ(s.cuda_driver_version, "12.2");
  ASSERT_EQ(s.gpus.size(), 8u);  // "Attached GPUs : 8"
  const GpuSnapshot& g = s.gpus[0];
  EXPECT_EQ(g.pci_bus_id, "00000000:19:00.0");
  EXPECT_EQ(g.name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(g.pci_device_id, 0x233010DEu);  // line 59
  EXPECT_EQ(g.pcie_gen_host_max, 5);        // line 68
  EXPECT_EQ(g.pcie_gen_gpu_max, 5);
  EXPECT_EQ(g.memory_total, 81559 * kMiB);  // line 95
  // Lines 84-92: HW Slowdown and its child HW Power Brake Slowdown are Active.
  EXPECT_EQ(g.clock_event_reasons, kClockEventHwSlowdown | kClockEventHwPowerBrake);
  EXPECT_DOUBLE_EQ(*g.power_draw, 67.74);   // line 171
  EXPECT_DOUBLE_EQ(*g.power_limit, 700.0);  // line 172
  EXPECT_EQ(g.temperature_c, 29);           // line 162
  EXPECT_EQ(s.gpus[1].pci_bus_id, "00000000:3B:00.0");  // line 214
  EXPECT_EQ(s.gpus[1].index, 1);
}

}  // namespace
}  // namespace gpuplan

// ---- hostile input: depth, size and bounds (issue 24) ----
// Each capture below is written out here, so the expected values are read off the text.

namespace gpuplan {
namespace {

// A one-line-per-element capture: line 1 the declaration, 2 <nvidia_smi_log>, 3 driver, 4
// attached_gpus, then each GPU: <gpu>, product_name, fb_memory_usage, total, </fb_memory_usage>,
// pci, pci_gpu_link_info, pcie_gen, current_link_gen, </pcie_gen>, link_widths,
// current_link_width, </link_widths>, </pci_gpu_link_info>, </pci>, </gpu> (16 lines).
std::string XmlGpu(const std::string& memory = "81920 MiB", const std::string& gen = "4",
                   const std::string& width = "16x") {
  return "<gpu id=\"00000000:00:04.0\">\n<product_name>NVIDIA A100-SXM4-80GB</product_name>\n"
         "<fb_memory_usage>\n<total>" + memory + "</total>\n</fb_memory_usage>\n"
         "<pci>\n<pci_gpu_link_info>\n<pcie_gen>\n<current_link_gen>" + gen +
         "</current_link_gen>\n</pcie_gen>\n<link_widths>\n<current_link_width>" + width +
         "</current_link_width>\n</link_widths>\n</pci_gpu_link_info>\n</pci>\n</gpu>\n";
}

std::string XmlCapture(const std::string& attached, const std::string& gpus) {
  return "<?xml version=\"1.0\" ?>\n<nvidia_smi_log>\n<driver_version>550.54.15</driver_version>\n"
         "<attached_gpus>" + attached + "</attached_gpus>\n" + gpus + "</nvidia_smi_log>\n";
}

// Runs `parse`, expects an InputError and returns it.
template <class F>
InputError ExpectInputError(F&& parse) {
  try {
    parse();
  } catch (const InputError& e) {
    return e;
  }
  ADD_FAILURE() << "expected InputError";
  return InputError("none");
}

TEST(NvidiaSmiHostile, FiftyThousandNestedElementsParseWithoutRecursion) {
  // 50,000 nested <x> inside the GPU (about 400 kB): the tree is copied and freed without
  // recursion, so this reads like any capture with an unknown element.
  constexpr int kDepth = 50000;
  std::string deep;
  deep.reserve(kDepth * 8);
  for (int i = 0; i < kDepth; ++i) deep += "<x>";
  for (int i = 0; i < kDepth; ++i) deep += "</x>";
  std::string gpu = XmlGpu();
  gpu.insert(gpu.find("<product_name>"), deep + "\n");
  const SystemSnapshot s = ParseNvidiaSmiXml(XmlCapture("1", gpu), "deep.xml");
  ASSERT_EQ(s.gpus.size(), 1u);
  EXPECT_EQ(s.gpus[0].name, "NVIDIA A100-SXM4-80GB");
  EXPECT_EQ(s.gpus[0].memory_total, 81920 * kMiB);
  EXPECT_EQ(s.gpus[0].pcie_gen_current, 4);
}

TEST(NvidiaSmiHostile, FiftyThousandUnclosedElementsAreAnError) {
  std::string deep = "<?xml version=\"1.0\" ?>\n<nvidia_smi_log>\n";
  for (int i = 0; i < 50000; ++i) deep += "<x>";
  const InputError e = ExpectInputError([&] { ParseNvidiaSmiXml(deep, "open.xml"); });
  EXPECT_EQ(e.file(), "open.xml");
  EXPECT_NE(e.message().find("malformed XML"), std::string::npos) << e.message();
}

TEST(NvidiaSmiHostile, DeeplyIndentedTextParses) {
  // 3,000 levels of indentation (4.5 MB): one node per level, freed without recursion.
  std::string text = "==============NVSMI LOG==============\n\nAttached GPUs : 1\nGPU 00000000:00:04.0\n"
                     "    Product Name : NVIDIA H100 80GB HBM3\n";
  for (int i = 0; i < 3000; ++i) text += std::string(static_cast<size_t>(i) + 5, ' ') + "Deeper\n";
  const SystemSnapshot s = ParseNvidiaSmiQueryText(text, "deep.txt");
  ASSERT_EQ(s.gpus.size(), 1u);
  EXPECT_EQ(s.gpus[0].name, "NVIDIA H100 80GB HBM3");
}

TEST(NvidiaSmiHostile, LineNumbersAfterALongCommentStayRight) {
  // A 1,000-line comment after line 4, then a GPU whose total (its 4th line) is bad: the comment
  // is lines 5-1004, the GPU starts at 1005, so <total> is line 1008.
  std::string comment = "<!--";
  for (int i = 0; i < 999; ++i) comment += " padding padding padding\n";
  comment += "-->\n";
  const std::string text = XmlCapture("1", comment + XmlGpu("81x920 MiB"));
  const InputError e = ExpectInputError([&] { ParseNvidiaSmiXml(text, "c.xml"); });
  EXPECT_EQ(e.line(), 1008);
  EXPECT_EQ(e.field(), "fb_memory_usage/total");
}

TEST(NvidiaSmiBounds, MemorySizeThatWouldWrapIsAnError) {
  // 17592186085376 MiB = 2^44 MiB + 40960 MiB: in bytes 2^64 + 40 GiB, which wrapped to 40 GiB.
  const std::string text = XmlCapture("1", XmlGpu("17592186085376 MiB"));
  const InputError e = ExpectInputError([&] { ParseNvidiaSmiXml(text, "wrap.xml"); });
  EXPECT_EQ(e.file(), "wrap.xml");
  EXPECT_EQ(e.line(), 8);  // <total>: line 4 + 4
  EXPECT_EQ(e.field(), "fb_memory_usage/total");
  EXPECT_NE(e.message().find("16 TiB"), std::string::npos) << e.message();
}

TEST(NvidiaSmiBounds, SixteenTiBIsTheLargestMemorySize) {
  // 16 TiB = 16 x 1024 x 1024 MiB = 16777216 MiB = 2^44 bytes = 17592186044416 bytes.
  const SystemSnapshot s = ParseNvidiaSmiXml(XmlCapture("1", XmlGpu("16777216 MiB")), "max.xml");
  EXPECT_EQ(s.gpus.at(0).memory_total, 17592186044416ULL);
  const InputError e =
      ExpectInputError([&] { ParseNvidiaSmiXml(XmlCapture("1", XmlGpu("16777217 MiB")), "over.xml"); });
  EXPECT_EQ(e.field(), "fb_memory_usage/total");
  // In GiB too: 16385 GiB is one GiB over.
  const InputError g =
      ExpectInputError([&] { ParseNvidiaSmiXml(XmlCapture("1", XmlGpu("16385 GiB")), "gib.xml"); });
  EXPECT_EQ(g.field(), "fb_memory_usage/total");
}

TEST(NvidiaSmiBounds, PcieGenerationOutside1To6IsAnError) {
  for (const std::string gen : {"-1", "0", "7", "99"}) {
    const InputError e =
        ExpectInputError([&] { ParseNvidiaSmiXml(XmlCapture("1", XmlGpu("81920 MiB", gen)), "gen.xml"); });
    EXPECT_EQ(e.line(), 13) << gen;  // <current_link_gen>: line 4 + 9
    EXPECT_EQ(e.field(), "pci/pci_gpu_link_info/pcie_gen/current_link_gen") << gen;
    EXPECT_NE(e.message().find("PCIe generation from 1 to 6"), std::string::npos) << e.message();
  }
  for (const std::string gen : {"1", "6"}) {
    const SystemSnapshot s = ParseNvidiaSmiXml(XmlCapture("1", XmlGpu("81920 MiB", gen)), "ok.xml");
    EXPECT_EQ(s.gpus.at(0).pcie_gen_current, std::stoi(gen));
  }
}

TEST(NvidiaSmiBounds, PcieWidthOutsideX1ToX32IsAnError) {
  for (const std::string width : {"0x", "64x", "-16x"}) {
    const InputError e = ExpectInputError(
        [&] { ParseNvidiaSmiXml(XmlCapture("1", XmlGpu("81920 MiB", "4", width)), "w.xml"); });
    EXPECT_EQ(e.line(), 16) << width;  // <current_link_width>: line 4 + 12
    EXPECT_EQ(e.field(), "pci/pci_gpu_link_info/link_widths/current_link_width") << width;
    EXPECT_NE(e.message().find("PCIe link width from 1 to 32"), std::string::npos) << e.message();
  }
}

TEST(NvidiaSmiBounds, ZeroGpusWhenOneIsAttachedIsAnError) {
  const InputError e = ExpectInputError([&] { ParseNvidiaSmiXml(XmlCapture("1", ""), "empty.xml"); });
  EXPECT_EQ(e.file(), "empty.xml");
  EXPECT_EQ(e.line(), 4);
  EXPECT_EQ(e.field(), "attached_gpus");
  EXPECT_NE(e.message().find("1 GPU(s) are attached but lists none"), std::string::npos) << e.message();

  const std::string text = "==============NVSMI LOG==============\n\nDriver Version : 550.54.15\n"
                           "Attached GPUs : 8\n";
  const InputError t = ExpectInputError([&] { ParseNvidiaSmiQueryText(text, "empty.txt"); });
  EXPECT_EQ(t.line(), 4);
  EXPECT_EQ(t.field(), "Attached GPUs");
  EXPECT_NE(t.message().find("8 GPU(s) are attached but lists none"), std::string::npos) << t.message();
}

TEST(NvidiaSmiBounds, MoreGpusListedThanAttachedIsAnErrorFewerIsNot) {
  const InputError e =
      ExpectInputError([&] { ParseNvidiaSmiXml(XmlCapture("1", XmlGpu() + XmlGpu()), "two.xml"); });
  EXPECT_EQ(e.field(), "attached_gpus");
  EXPECT_NE(e.message().find("lists 2 GPUs but says 1 are attached"), std::string::npos) << e.message();
  // `nvidia-smi -q -x -i 0` on an 8-GPU machine: one GPU listed, 8 attached.
  EXPECT_EQ(ParseNvidiaSmiXml(XmlCapture("8", XmlGpu()), "one-of-8.xml").gpus.size(), 1u);
}

TEST(NvidiaSmiBounds, NegativeAttachedCountIsAnError) {
  const InputError e = ExpectInputError([&] { ParseNvidiaSmiXml(XmlCapture("-1", XmlGpu()), "neg.xml"); });
  EXPECT_EQ(e.field(), "attached_gpus");
  EXPECT_EQ(e.line(), 4);
}

// fuzz_nvidia_smi_xml and fuzz_nvidia_smi_text (docs/fuzzing.md, "Found and fixed"): a byte that
// is not UTF-8 in a capture reached the check report, whose JSON writer threw (an internal error).
TEST(NvidiaSmiHostile, NonUtf8CaptureIsAnErrorNamingTheLine) {
  // a100-sxm4-mig.xml line 9: <product_name>NVIDIA A100-SXM4-40GB</product_name>; a lone 0xBC
  // (a continuation byte with no lead) put before "A100".
  std::string xml = ReadAll(Fixture("a100-sxm4-mig.xml"));
  const auto at = xml.find("NVIDIA A100-SXM4-40GB");
  ASSERT_NE(at, std::string::npos);
  xml.insert(at + 7, "\xBC");
  const InputError e = ExpectInputError([&] { ParseNvidiaSmiXml(xml, "bad.xml"); });
  EXPECT_EQ(e.file(), "bad.xml");
  EXPECT_EQ(e.line(), 9);
  EXPECT_EQ(e.field(), "nvidia_smi_log");
  EXPECT_NE(e.message().find("not UTF-8"), std::string::npos) << e.message();
  EXPECT_NE(e.message().find("0xBC"), std::string::npos) << e.message();
  // h100-590-q.txt line 10: "    Product Name    ...  : NVIDIA H100 80GB HBM3"; 0x86 after "NVIDIA".
  std::string text = ReadAll(Fixture("h100-590-q.txt"));
  const auto name = text.find("NVIDIA H100 80GB HBM3");
  ASSERT_NE(name, std::string::npos);
  text.insert(name + 6, "\x86");
  const InputError t = ExpectInputError([&] { ParseNvidiaSmiQueryText(text, "bad.txt"); });
  EXPECT_EQ(t.line(), 10);
  EXPECT_NE(t.message().find("0x86"), std::string::npos) << t.message();
}

TEST(NvidiaSmiHostile, Utf8NamesStillRead) {
  // An en dash (U+2013, bytes E2 80 93) in the product name of line 9 is UTF-8: read as it is.
  std::string xml = ReadAll(Fixture("a100-sxm4-mig.xml"));
  const auto at = xml.find("NVIDIA A100-SXM4-40GB");
  ASSERT_NE(at, std::string::npos);
  xml.replace(at + 11, 1, "\xE2\x80\x93");
  EXPECT_EQ(OnlyGpu(ParseNvidiaSmiXml(xml, "dash.xml")).name, "NVIDIA A100\xE2\x80\x93SXM4-40GB");
}

// ---- one GPU, one field, one unit: what real nvidia-smi never writes ----

// h100-590-q.txt with lines 1-8 (banner to "Attached GPUs : 1", which becomes N) and then the
// GPU section, lines 9-257 (249 lines), once per entry of `sections` (each a transform of it).
std::string TextWithSections(const std::vector<std::string>& sections) {
  const std::string all = ReadAll(Fixture("h100-590-q.txt"));
  const size_t gpu = all.find("\nGPU 00000000:00:09.0") + 1;
  std::string head = all.substr(0, gpu);
  const std::string one = "Attached GPUs                                          : 1";
  head.replace(head.find(one), one.size(), "Attached GPUs : " + std::to_string(sections.size()));
  std::string out = head;
  for (const std::string& sec : sections) out += sec;
  return out;
}

std::string H100Section() {
  const std::string all = ReadAll(Fixture("h100-590-q.txt"));
  return all.substr(all.find("\nGPU 00000000:00:09.0") + 1);
}

std::string Replaced(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

TEST(NvidiaSmiDuplicates, OneGpuSectionPastedTwiceIsAnErrorAtTheSecondBusId) {
  // The section is lines 9-257; pasted again it is lines 258-506, and its "Bus Id" (line 71 of
  // the fixture, 62 lines into the section) is line 258 + 62 = 320.
  const std::string sec = H100Section();
  const InputError e = ExpectInputError([&] { ParseNvidiaSmiQueryText(TextWithSections({sec, sec}), "dup.txt"); });
  EXPECT_EQ(e.file(), "dup.txt");
  EXPECT_EQ(e.line(), 320);
  EXPECT_EQ(e.field(), "PCI/Bus Id");
  EXPECT_NE(e.message().find("PCI bus id 00000000:00:09.0 is listed twice (first at line 71)"), std::string::npos)
      << e.message();
  // Eight copies (the audit's dup8.txt) fail the same way, at the second copy.
  const std::vector<std::string> eight(8, sec);
  EXPECT_EQ(ExpectInputError([&] { ParseNvidiaSmiQueryText(TextWithSections(eight), "dup8.txt"); }).line(), 320);
}

TEST(NvidiaSmiDuplicates, SameUuidUnderAnotherBusIdIsAnError) {
  // The second copy's bus id edited to :0A.0: the UUID (fixture line 27, 18 lines into the
  // section) repeats at line 258 + 18 = 276.
  const std::string sec = H100Section();
  const std::string other = Replaced(sec, "Bus Id                                         : 00000000:00:09.0",
                                     "Bus Id                                         : 00000000:00:0A.0");
  const InputError e =
      ExpectInputError([&] { ParseNvidiaSmiQueryText(TextWithSections({sec, other}), "uuid.txt"); });
  EXPECT_EQ(e.line(), 276);
  EXPECT_EQ(e.field(), "GPU UUID");
  EXPECT_NE(e.message().find("UUID GPU-00000000-0000-0000-0000-000000000000 is listed twice"), std::string::npos)
      << e.message();
}

TEST(NvidiaSmiDuplicates, XmlBusIdAndUuidTwiceAreErrors) {
  // Lines: 1 declaration, 2 <nvidia_smi_log>, 3 driver, 4 attached_gpus, then 6 lines per GPU:
  // <gpu>, <uuid>, <pci>, <pci_bus_id>, </pci>, </gpu>. The second GPU's uuid is line 12, its
  // bus id line 14.
  const auto gpu = [](const std::string& uuid, const std::string& bus) {
    return "<gpu id=\"" + bus + "\">\n<uuid>" + uuid + "</uuid>\n<pci>\n<pci_bus_id>" + bus +
           "</pci_bus_id>\n</pci>\n</gpu>\n";
  };
  const InputError bus = ExpectInputError([&] {
    ParseNvidiaSmiXml(XmlCapture("2", gpu("GPU-a", "00000000:18:00.0") + gpu("GPU-b", "00000000:18:00.0")), "b.xml");
  });
  EXPECT_EQ(bus.line(), 14);
  EXPECT_EQ(bus.field(), "pci/pci_bus_id");
  // Hex digits in either case are the same bus.
  EXPECT_EQ(ExpectInputError([&] {
              ParseNvidiaSmiXml(XmlCapture("2", gpu("GPU-a", "00000000:3B:00.0") + gpu("GPU-b", "00000000:3b:00.0")),
                                "c.xml");
            }).line(),
            14);
  const InputError uuid = ExpectInputError([&] {
    ParseNvidiaSmiXml(XmlCapture("2", gpu("GPU-a", "00000000:18:00.0") + gpu("GPU-a", "00000000:19:00.0")), "u.xml");
  });
  EXPECT_EQ(uuid.line(), 12);
  EXPECT_EQ(uuid.field(), "uuid");
  // Two GPUs that differ in both are read.
  EXPECT_EQ(ParseNvidiaSmiXml(XmlCapture("2", gpu("GPU-a", "00000000:18:00.0") + gpu("GPU-b", "00000000:19:00.0")),
                              "ok.xml")
                .gpus.size(),
            2u);
}

TEST(NvidiaSmiDuplicates, FieldTwiceInOneSectionIsAnErrorAtTheSecond) {
  // Text: fixture line 112 "Total : 81559 MiB" (under FB Memory Usage) given again as line 113
  // with another value; before, the first was read and the second dropped.
  const std::string sec = H100Section();
  const std::string total = "        Total                                          : 81559 MiB\n";
  const std::string twice = Replaced(sec, total, total + "        Total : 20480 MiB\n");
  const InputError t = ExpectInputError([&] { ParseNvidiaSmiQueryText(TextWithSections({twice}), "t.txt"); });
  EXPECT_EQ(t.line(), 113);
  EXPECT_EQ(t.field(), "FB Memory Usage/Total");
  EXPECT_NE(t.message().find("'Total' is given twice in one section (first at line 112)"), std::string::npos)
      << t.message();
  // A section given twice: "FB Memory Usage" (line 111) again after line 112, at 113.
  const std::string section = Replaced(sec, total, total + "    FB Memory Usage\n        Total : 20480 MiB\n");
  const InputError s2 = ExpectInputError([&] { ParseNvidiaSmiQueryText(TextWithSections({section}), "s.txt"); });
  EXPECT_EQ(s2.line(), 113);
  EXPECT_EQ(s2.field(), "FB Memory Usage");
  // XML: <total> on line 8 (4 + 4), then another on line 9.
  const InputError x =
      ExpectInputError([&] { ParseNvidiaSmiXml(XmlCapture("1", XmlGpu("81920 MiB</total>\n<total>20480 MiB")), "t.xml"); });
  EXPECT_EQ(x.line(), 9);
  EXPECT_EQ(x.field(), "fb_memory_usage/total");
}

TEST(NvidiaSmiUnits, EachFieldTakesOnlyItsOwnUnit) {
  const std::string sec = H100Section();
  struct Case {
    std::string from, to;
    int line;  // the fixture's line
    std::string field, unit;
  };
  const Case cases[] = {
      {"Total                                          : 81559 MiB", "Total : 81559 W", 112,
       "FB Memory Usage/Total", "unit: MiB, GiB, KiB"},
      {"Current Power Limit                            : 700.00 W", "Current Power Limit : 700 GiB", 196,
       "GPU Power Readings/Current Power Limit", "unit: W"},
      {"Max                                    : 16x", "Max : 16 MiB", 81, "PCI/GPU Link Info/Link Width/Max",
       "unit: x"},
      {"Max                                    : 5", "Max : 5 MHz", 75, "PCI/GPU Link Info/PCIe Generation/Max",
       "unit: no unit"},
  };
  for (const Case& c : cases) {
    const std::string text = TextWithSections({Replaced(sec, c.from, c.to)});
    const InputError e = ExpectInputError([&] { ParseNvidiaSmiQueryText(text, "u.txt"); });
    EXPECT_EQ(e.line(), c.line) << c.to;
    EXPECT_EQ(e.field(), c.field) << c.to;
    EXPECT_NE(e.message().find(c.unit), std::string::npos) << e.message();
  }
  // XML: a memory total in W, a width in MiB.
  EXPECT_EQ(ExpectInputError([&] { ParseNvidiaSmiXml(XmlCapture("1", XmlGpu("81920 W")), "w.xml"); }).field(),
            "fb_memory_usage/total");
  EXPECT_EQ(ExpectInputError([&] {
              ParseNvidiaSmiXml(XmlCapture("1", XmlGpu("81920 MiB", "4", "16 MiB")), "x.xml");
            }).field(),
            "pci/pci_gpu_link_info/link_widths/current_link_width");
}

TEST(NvidiaSmiBounds, NoGpuListedIsAnError) {
  // "0 attached, none listed" (line 4) and a banner with neither a count nor a GPU.
  const InputError e = ExpectInputError([&] { ParseNvidiaSmiXml(XmlCapture("0", ""), "none.xml"); });
  EXPECT_EQ(e.line(), 4);
  EXPECT_EQ(e.field(), "attached_gpus");
  EXPECT_NE(e.message().find("lists no GPU"), std::string::npos) << e.message();
  const InputError t = ExpectInputError(
      [&] { ParseNvidiaSmiQueryText("==============NVSMI LOG==============\nDriver Version : 550.54.15\n", "n.txt"); });
  EXPECT_EQ(t.field(), "Attached GPUs");
  EXPECT_NE(t.message().find("lists no GPU"), std::string::npos) << t.message();
}

TEST(NvidiaSmiBounds, MoreThan65536GpusIsAnErrorAtThe65537th) {
  // Line 1 the banner, then one "GPU ..." line per GPU: the 65,537th is line 65,538.
  std::string text = "==============NVSMI LOG==============\n";
  for (int i = 0; i < 65537; ++i) text += "GPU 00000000:00:00.0\n";
  const InputError e = ExpectInputError([&] { ParseNvidiaSmiQueryText(text, "many.txt"); });
  EXPECT_EQ(e.line(), 65538);
  EXPECT_NE(e.message().find("more than 65536 GPUs"), std::string::npos) << e.message();
}

TEST(NvidiaSmiBounds, MoreThan65536XmlGpusIsAnErrorAtThe65537th) {
  // Lines 1-2 the declaration and <nvidia_smi_log>, then one <gpu> per line: the 65,537th is line
  // 65,539. Refused as the root's children are copied, before any GPU's elements are.
  std::string text = "<?xml version=\"1.0\" ?>\n<nvidia_smi_log>\n";
  for (int i = 0; i < 70000; ++i) text += "<gpu><uuid>GPU-x</uuid></gpu>\n";
  text += "</nvidia_smi_log>\n";
  const InputError e = ExpectInputError([&] { ParseNvidiaSmiXml(text, "many.xml"); });
  EXPECT_EQ(e.file(), "many.xml");
  EXPECT_EQ(e.line(), 65539);
  EXPECT_EQ(e.field(), "gpu");
  EXPECT_NE(e.message().find("more than 65536 GPUs"), std::string::npos) << e.message();
}

// A capture is read up to a limit (256 MiB unless given): a file over it is refused from its size
// before reading, naming the file and its size; a device that never ends (/dev/zero) after
// reading the limit and one byte more. A file of exactly the limit is read.
TEST(NvidiaSmiLimits, CaptureLargerThanTheLimitIsAnErrorNamingTheFile) {
  EXPECT_EQ(kMaxNvidiaSmiCaptureBytes, 268435456u);
  const std::string path = Fixture("a100-sxm4-mig.xml");
  const uint64_t size = ReadAll(path).size();
  ASSERT_GT(size, 1000u);
  EXPECT_EQ(LoadNvidiaSmiCapture(path, size).gpus.size(), 1u);
  const InputError e = ExpectInputError([&] { LoadNvidiaSmiCapture(path, size - 1); });
  EXPECT_EQ(e.file(), path);
  EXPECT_EQ(e.line(), 0);
  EXPECT_NE(e.message().find("is " + std::to_string(size) + " bytes, more than the " + std::to_string(size - 1) + " bytes"),
            std::string::npos)
      << e.message();
  const InputError z = ExpectInputError([&] { LoadNvidiaSmiCapture("/dev/zero", 3 * kMiB); });
  EXPECT_EQ(z.file(), "/dev/zero");
  EXPECT_NE(z.message().find("more than the 3145728 bytes (3 MiB)"), std::string::npos) << z.message();
}

}  // namespace
}  // namespace gpuplan
