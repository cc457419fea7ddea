// "Is this what I was sold": the inventory verdicts (src/check/sold_as.h) on real nvidia-smi
// captures edited to show one fault each (tests/fixtures/nvidia-smi/edited/README.md), on an
// NVML recording of a real H100 edited in the test, and the health delta. Each expectation is
// derived from the capture and the catalog by hand, as noted beside it.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "check/expect.h"
#include "core/error.h"
#include "check/sold_as.h"
#include "telemetry/nvidia_smi.h"
#include "telemetry/recorded_source.h"
#include "test_paths.h"

namespace gpuplan {
namespace {

std::vector<CheckResult> Judge(const std::string& capture, const std::string& expect, bool allow_mig = false,
                               const std::string& cuda = "") {
  const SystemSnapshot sys = LoadNvidiaSmiCapture(test::Fixture("nvidia-smi/" + capture));
  Expectation e = ParseExpect(expect, test::Catalog());
  e.mig_allowed = allow_mig;
  if (!cuda.empty()) {
    e.cuda = cuda;
    e.cuda_source = "--cuda " + cuda;
  }
  return JudgeInventory(sys, e, test::Catalog(), CheckThresholds{}, "capture " + capture, /*idle=*/true);
}

// A copy: callers pass temporaries (Find(Judge(...), ...)).
CheckResult Find(const std::vector<CheckResult>& v, const std::string& name, int gpu = 0) {
  for (const auto& r : v) {
    if (r.name == name && (r.gpu == gpu || r.gpu == -1)) {
      return r;
    }
  }
  throw std::runtime_error("no result " + name);
}

std::string Failing(const std::vector<CheckResult>& v) {
  std::string s;
  for (const auto& r : v) {
    if (r.status == CheckStatus::kFail || r.status == CheckStatus::kError) {
      s += r.name + ": " + r.evidence + "\n";
    }
  }
  return s;
}

// The unedited A100 SXM4 40GB capture with MIG allowed: 40960 MiB = the catalog's 40 GiB, power
// limit 400 W = the datasheet TDP, Gen4 x16 maxima, ECC on with no errors: nothing fails.
TEST(SoldAs, HealthyA100PassesWithMigAllowed) {
  const auto r = Judge("a100-sxm4-mig.xml", "1x A100 40GB SXM", /*allow_mig=*/true);
  EXPECT_EQ(Failing(r), "");
  EXPECT_EQ(Find(r, "gpu_identity").status, CheckStatus::kPass);
  EXPECT_EQ(Find(r, "gpu_count").status, CheckStatus::kPass);
  EXPECT_EQ(Find(r, "mig_mode").status, CheckStatus::kPass);
}

TEST(SoldAs, MigOnWhenTheWholeGpuWasSold) {
  EXPECT_EQ(Find(Judge("edited/a100-mig-on.xml", "A100 40GB SXM"), "mig_mode").status, CheckStatus::kFail);
}

TEST(SoldAs, PcieCardSoldAsSxm) {
  // Device id 0x20F1 is the A100 40GB PCIe's (data/gpus.yaml); the order was the SXM part (0x20B0).
  const auto& r = Find(Judge("edited/a100-pcie-id-in-sxm.xml", "A100 40GB SXM"), "gpu_identity");
  EXPECT_EQ(r.status, CheckStatus::kFail);
  EXPECT_NE(r.evidence.find("A100 40GB PCIe"), std::string::npos) << r.evidence;
}

TEST(SoldAs, Rtx4090DSoldAs4090) {
  const auto& r = Find(Judge("edited/rtx4090d-sold-as-4090.xml", "RTX 4090"), "gpu_identity");
  EXPECT_EQ(r.status, CheckStatus::kFail);
  EXPECT_NE(r.evidence.find("RTX 4090 D"), std::string::npos) << r.evidence;
}

TEST(SoldAs, FewerGpusThanOrdered) {
  const auto& r = Find(Judge("a100-sxm4-mig.xml", "8x A100 40GB SXM", true), "gpu_count", -1);
  EXPECT_EQ(r.status, CheckStatus::kFail);
  EXPECT_EQ(r.measured, 1);
  EXPECT_EQ(r.expected, 8);
}

TEST(SoldAs, X8Link) {
  const auto& r = Find(Judge("edited/a100-x8-link.xml", "A100 40GB SXM", true), "pcie_link_width");
  EXPECT_EQ(r.status, CheckStatus::kFail);
  EXPECT_EQ(r.measured, 8);
  EXPECT_EQ(r.expected, 16);  // the A100's x16 interface
}

TEST(SoldAs, Gen4CardInGen3Host) {
  const auto& r = Find(Judge("edited/a100-host-gen3.xml", "A100 40GB SXM", true), "pcie_link_gen");
  EXPECT_EQ(r.status, CheckStatus::kFail);
  EXPECT_EQ(r.measured, 3);
  EXPECT_EQ(r.expected, 4);
}

TEST(SoldAs, Gen5CardInGen3HostFromQueryText) {
  const auto r = Judge("edited/h100-590-q-host-gen3.txt", "H100 SXM");
  EXPECT_EQ(Find(r, "pcie_link_gen").status, CheckStatus::kFail);
  EXPECT_EQ(Find(r, "pcie_link_gen").expected, 5);
}

TEST(SoldAs, PowerCapped) {
  // 250 W enforced of a 400 W TDP: 62.5%, below the 90% FAIL line (docs/check.md §3).
  const auto& r = Find(Judge("edited/a100-power-capped.xml", "A100 40GB SXM", true), "gpu_power_limit");
  EXPECT_EQ(r.status, CheckStatus::kFail);
  EXPECT_EQ(r.measured, 250);
  EXPECT_EQ(r.expected, 400);
}

TEST(SoldAs, CutDownMemory) {
  // 20480 MiB of 40960 MiB: half, below 97%.
  const auto& r = Find(Judge("edited/a100-cut-down-memory.xml", "A100 40GB SXM", true), "gpu_memory_total");
  EXPECT_EQ(r.status, CheckStatus::kFail);
  // The threshold reads as the default share, 0.97 (docs/check.md), not rounded to "1".
  EXPECT_EQ(r.expected_text.rfind(">= 0.97 x ", 0), 0u) << r.expected_text;
}

TEST(SoldAs, UncorrectableEccAndPendingRemap) {
  const auto r = Judge("edited/a100-ecc-uncorrected.xml", "A100 40GB SXM", true);
  EXPECT_EQ(Find(r, "ecc_errors").status, CheckStatus::kFail);
  EXPECT_EQ(Find(r, "memory_remapping").status, CheckStatus::kFail);
}

TEST(SoldAs, DriverTooOldForCuda) {
  // Driver 470.57.02 (CUDA 11.4); CUDA 12.4 needs >= 550.54.14 (CUDA Toolkit Release Notes, table 3).
  const auto& r = Find(Judge("edited/a100-old-driver.xml", "A100 40GB SXM", true, "12.4"), "driver_cuda", -1);
  EXPECT_EQ(r.status, CheckStatus::kFail);
  EXPECT_NE(r.evidence.find("550.54.14"), std::string::npos) << r.evidence;
  // CUDA 11.4 itself needs >= 470.42.01: the same driver passes.
  EXPECT_EQ(Find(Judge("edited/a100-old-driver.xml", "A100 40GB SXM", true, "11.4"), "driver_cuda", -1).status,
            CheckStatus::kPass);
}

TEST(SoldAs, NoExpectationStillCatchesTheLink) {
  // Without --expect each card is held against the catalog entry of its own device id.
  EXPECT_EQ(Find(Judge("edited/a100-x8-link.xml", ""), "pcie_link_width").status, CheckStatus::kFail);
}

// The NVML recording of a real H100 SXM (tests/fixtures/nvml), one NVLink of 18 down.
TEST(SoldAs, NvlinkDownOnRecordedH100) {
  Recording rec = ReadRecording(test::Fixture("nvml/h100-590.recording.json"));
  SystemSnapshot sys = rec.snapshots.front();
  const Expectation e = ParseExpect("H100 SXM", test::Catalog());
  const auto ok = JudgeInventory(sys, e, test::Catalog(), CheckThresholds{}, "recording", true);
  EXPECT_EQ(Find(ok, "nvlink_links_up").status, CheckStatus::kPass);
  // One GPU of the board passed to a VM: a link down carries no traffic here (WARN).
  sys.gpus[0].nvlink_up = 17;
  EXPECT_EQ(Find(JudgeInventory(sys, e, test::Catalog(), CheckThresholds{}, "recording", true), "nvlink_links_up").status,
            CheckStatus::kWarn);
  // The same GPU as one of eight on the board: FAIL.
  for (int i = 1; i < 8; ++i) {
    GpuSnapshot g = rec.snapshots.front().gpus[0];
    g.index = i;
    sys.gpus.push_back(g);
  }
  const auto down = JudgeInventory(sys, e, test::Catalog(), CheckThresholds{}, "recording", true);
  EXPECT_EQ(Find(down, "nvlink_links_up").status, CheckStatus::kFail);
  EXPECT_EQ(Find(down, "nvlink_links_up").measured, 17);
  EXPECT_EQ(Find(down, "nvlink_links_up").expected, 18);  // H100 SXM: 18 NVLink 4 links (datasheet)
}

TEST(HealthDelta, EccXidAndCorrected) {
  Recording rec = ReadRecording(test::Fixture("nvml/h100-590.recording.json"));
  const SystemSnapshot before = rec.snapshots.front();
  SystemSnapshot after = before;
  EXPECT_EQ(JudgeHealthDelta(before, after, {}, "burn-in").at(0).status, CheckStatus::kPass);
  after.gpus[0].ecc_volatile_uncorrected = *before.gpus[0].ecc_volatile_uncorrected + 1;
  auto r = JudgeHealthDelta(before, after, {}, "burn-in");
  EXPECT_EQ(r.at(0).status, CheckStatus::kFail);
  EXPECT_NE(r.at(0).evidence.find("during burn-in"), std::string::npos);
  EXPECT_EQ(r.at(0).measured, 1);
  after = before;
  after.gpus[0].ecc_volatile_corrected = *before.gpus[0].ecc_volatile_corrected + 5;
  EXPECT_EQ(JudgeHealthDelta(before, after, {}, "burn-in").at(0).status, CheckStatus::kWarn);
  const GpuEvent xid{0, 0x8, 79, 12.0};  // XID 79: fallen off the bus
  r = JudgeHealthDelta(before, before, {xid}, "burn-in");
  EXPECT_EQ(r.at(0).status, CheckStatus::kFail);
  EXPECT_NE(r.at(0).evidence.find("XID 79"), std::string::npos);
}

// fuzz_expect (docs/fuzzing.md, "Found and fixed"): a count with more digits than an int holds
// escaped std::stoi as std::out_of_range (an internal error, exit 4) instead of an input error.
TEST(Expect, CountsOutside1To1024AreInputErrors) {
  const auto message = [](const std::string& text) -> std::string {
    try {
      ParseExpect(text, test::Catalog());
    } catch (const InputError& e) {
      EXPECT_EQ(e.field(), "--expect") << text;
      return e.message();
    }
    ADD_FAILURE() << "expected InputError for " << text;
    return "";
  };
  // The fuzzer's input: 15 eights and an X, the count-only form.
  EXPECT_EQ(message("888888888888888X"), "expected a GPU count between 1 and 1024, got 888888888888888");
  EXPECT_EQ(message("H100 SXM x 99999999999"), "expected a GPU count between 1 and 1024, got 99999999999");
  EXPECT_EQ(message("1025x H100 SXM"), "expected a GPU count between 1 and 1024, got 1025");
  EXPECT_EQ(message("0x H100 SXM"), "expected a GPU count between 1 and 1024, got 0");
  const Expectation e = ParseExpect("1024x H100 SXM", test::Catalog());
  EXPECT_EQ(e.count, 1024);
  EXPECT_NE(e.gpu, nullptr);
}

// fuzz_expect: a version part of 19 or more digits overflowed a long (UBSan: signed overflow) when
// a capture's driver version was compared with the one --cuda needs.
TEST(Expect, VersionsCompareAsNumbersOfAnyLength) {
  EXPECT_EQ(CompareVersions("12.10", "12.4"), 1);
  EXPECT_EQ(CompareVersions("550.54.14", "550.54.14"), 0);
  EXPECT_EQ(CompareVersions("12.04", "12.4"), 0);   // leading zeros
  EXPECT_EQ(CompareVersions("12", "12.0.0"), 0);    // missing parts are 0
  EXPECT_EQ(CompareVersions("535.x", "535.0"), 0);  // a part without digits is 0
  // The fuzzer's kind of part: 20 fives is more than 2^63 - 1 (19 digits) and more than 12.
  EXPECT_EQ(CompareVersions("55555555555555555555", "12.4"), 1);
  EXPECT_EQ(CompareVersions("12.4", "55555555555555555555"), -1);
  EXPECT_EQ(CompareVersions("99999999999999999999.1", "99999999999999999999.2"), -1);
  EXPECT_EQ(CompareVersions("100000000000000000000", "99999999999999999999"), 1);
}

// ---- identity without a device id, and the ECC share of GDDR memory ----

std::string FixtureText(const std::string& name) {
  std::ifstream f(test::Fixture("nvidia-smi/" + name), std::ios::binary);
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string Edited(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

std::vector<CheckResult> JudgeText(const std::string& text, const std::string& expect) {
  const SystemSnapshot sys = ParseNvidiaSmiQueryText(text, "edited.txt");
  return JudgeInventory(sys, ParseExpect(expect, test::Catalog()), test::Catalog(), CheckThresholds{}, "capture",
                        /*idle=*/true);
}

// The A10 capture without its line 58 "Device Id : 0x223610DE": only the name "NVIDIA A10" is
// left, and a name is a string, not the silicon (docs/check.md section 3).
TEST(SoldAs, NameWithoutDeviceIdNeverPasses) {
  const std::string text = Edited(FixtureText("nvidia-smi-query.535.129.03.out.0.valid.a10.txt"),
                                  "        Device Id                         : 0x223610DE\n", "");
  const CheckResult same = Find(JudgeText(text, "A10"), "gpu_identity");
  EXPECT_EQ(same.status, CheckStatus::kSkip);
  EXPECT_NE(same.evidence.find("pci_device_id not measured"), std::string::npos) << same.evidence;
  // The name says A10 and an H100 SXM was ordered: the board's own name refutes the order.
  EXPECT_EQ(Find(JudgeText(text, "H100 SXM"), "gpu_identity").status, CheckStatus::kFail);
  EXPECT_EQ(Find(JudgeText(text, ""), "gpu_identity").status, CheckStatus::kSkip);
}

// linux-x86_64__nvidia-l40s__595.80.txt: ECC on (line 1567), total 46068 MiB (line 1535), which is
// the catalog's L40S figure, read with ECC on (data/GPUS-SOURCES.md): not scaled by 15/16 again.
// Floor: 0.97 x 46068 = 44685.96 MiB, so 44686 passes and 44685 fails; 41900 (which passed against
// 0.97 x 46068 x 15/16 = 41893) fails.
TEST(SoldAs, L40sTotalIsAlreadyTheEccOnFigure) {
  const std::string text = FixtureText("linux-x86_64__nvidia-l40s__595.80.txt");
  const std::string total = "Total                                          : 46068 MiB";
  const auto status = [&](const std::string& mib) {
    return Find(JudgeText(Edited(text, total, "Total : " + mib + " MiB"), "L40S"), "gpu_memory_total").status;
  };
  EXPECT_EQ(status("46068"), CheckStatus::kPass);
  EXPECT_EQ(status("44686"), CheckStatus::kPass);
  EXPECT_EQ(status("44685"), CheckStatus::kFail);
  EXPECT_EQ(status("41900"), CheckStatus::kFail);
}

// An RTX A6000's catalog total, 49140 MiB, is with ECC off (S23); with ECC on it shows 15/16:
// 46068.75 MiB, floor 0.97 x 46068.75 = 44686.69 MiB, so 44687 passes and 44686 fails.
TEST(SoldAs, A6000WithEccOnIsHeldTo15Sixteenths) {
  const auto status = [](uint64_t mib) {
    SystemSnapshot sys;
    GpuSnapshot g;
    g.index = 0;
    g.name = "NVIDIA RTX A6000";
    g.pci_device_id = 0x223010DEu;  // pci.ids 10de:2230
    g.ecc_enabled = true;
    g.memory_total = mib * 1048576ULL;
    sys.gpus.push_back(g);
    const auto r = JudgeInventory(sys, ParseExpect("RTX A6000", test::Catalog()), test::Catalog(), CheckThresholds{},
                                  "test", true);
    return Find(r, "gpu_memory_total").status;
  };
  EXPECT_EQ(status(46068), CheckStatus::kPass);
  EXPECT_EQ(status(44687), CheckStatus::kPass);
  EXPECT_EQ(status(44686), CheckStatus::kFail);
}

}  // namespace
}  // namespace gpuplan
