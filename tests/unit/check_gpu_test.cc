// The GPU tests of `gpuplan check` without a GPU (docs/check.md §11): the arithmetic (busbw as
// nccl-tests defines it, STREAM bytes, PCIe theory, GEMM FLOP, clock-event seconds) by hand; the
// worker line parser; the runner and the verdicts on stand-in workers (tests/stand_in_worker)
// that print good lines, abort, hang, print garbage or print a CUDA error line. Every expected
// figure below is derived by hand from the stand-in's fixed values (stand_in_worker.cc).
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <string>

#include "check/benchmark_formulas.h"
#include "telemetry/pcie.h"
#include "core/error.h"
#include "check/gpu_tests.h"
#include "check/thresholds.h"
#include "check/worker_protocol.h"
#include "check/worker_runner.h"
#include "check/render/check_json.h"
#include "test_paths.h"

namespace gpuplan {
namespace {

std::string StandIn(const std::string& mode) { return std::string(GPUPLAN_STAND_IN_DIR) + "/stand_in_worker_" + mode; }

WorkerRun RunOne(const std::string& mode, const std::string& test, std::vector<std::string> env = {},
                 double timeout_s = 30, std::vector<std::string> extra = {}) {
  WorkerCommand cmd;
  cmd.argv = {StandIn(mode), "--test", test, "--device", "0", "--pci-bus-id", "00000000:00:09.0"};
  cmd.argv.insert(cmd.argv.end(), extra.begin(), extra.end());
  cmd.gpu = 0;
  cmd.env = std::move(env);
  WorkerRunOptions opt;
  opt.timeout_s = timeout_s;
  opt.tick_s = 0.2;
  return RunWorkers({cmd}, opt).front();
}

GpuTarget H100() {
  GpuTarget t;
  t.gpu = 0;
  t.card = test::Catalog().TryFind("H100 SXM");
  t.snapshot.index = 0;
  t.snapshot.pci_bus_id = "00000000:00:09.0";
  t.snapshot.pcie_gen_max = 5;
  t.snapshot.pcie_width_max = 16;
  t.snapshot.nvlink_up = 18;
  t.snapshot.temperature_slowdown_c = 90;
  t.snapshot.power_limit = 700;
  return t;
}

const CheckResult* Find(const std::vector<CheckResult>& rs, const std::string& name, int gpu = 0) {
  for (const auto& r : rs) {
    if (r.name == name && r.gpu == gpu) {
      return &r;
    }
  }
  return nullptr;
}

// ---- arithmetic, by hand ----------------------------------------------------------------------

TEST(GpuMetrics, BusBandwidthAsNcclTestsDefinesIt) {
  // all_reduce on 8 ranks: factor 2 x 7 / 8 = 1.75; 1 GiB in 10 ms: algbw 107.3741824 GB/s.
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(Collective::kAllReduce, 8), 1.75);
  EXPECT_DOUBLE_EQ(AlgorithmBandwidthGBs(1073741824.0, 0.01), 107.3741824);
  EXPECT_DOUBLE_EQ(BusBandwidthGBs(Collective::kAllReduce, 8, 1073741824.0, 0.01), 187.9048192);
  // all_gather on 4 ranks: factor 3/4; 1e9 bytes in 20 ms: algbw 50, busbw 37.5.
  EXPECT_DOUBLE_EQ(BusBandwidthGBs(Collective::kAllGather, 4, 1e9, 0.02), 37.5);
  // reduce_scatter on 2 ranks: factor 1/2.
  EXPECT_DOUBLE_EQ(BusBandwidthGBs(Collective::kReduceScatter, 2, 1e9, 0.01), 50.0);
  // all_reduce on 2 ranks: factor 1 (busbw = algbw); one rank moves nothing over a bus.
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(Collective::kAllReduce, 2), 1.0);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(Collective::kAllGather, 1), 0.0);
  EXPECT_EQ(ParseCollective("reduce_scatter"), Collective::kReduceScatter);
  EXPECT_FALSE(ParseCollective("alltoall"));
}

TEST(GpuMetrics, StreamBytesAreReadPlusWritten) {
  // copy and scale read one array and write one: 2 x 2^28 x 4 bytes.
  EXPECT_DOUBLE_EQ(StreamBytes(StreamKernel::kCopy, 268435456, 4), 2147483648.0);
  EXPECT_DOUBLE_EQ(StreamBytes(StreamKernel::kScale, 268435456, 4), 2147483648.0);
  // add and triad read two and write one: 3 x 1000 x 8.
  EXPECT_DOUBLE_EQ(StreamBytes(StreamKernel::kAdd, 1000, 8), 24000.0);
  EXPECT_DOUBLE_EQ(StreamBytes(StreamKernel::kTriad, 268435456, 4), 3221225472.0);
  EXPECT_FALSE(ParseStreamKernel("daxpy"));
}

TEST(GpuMetrics, PcieTheoryIsRateTimesCodeTimesLanes) {
  EXPECT_DOUBLE_EQ(*PcieTheoryGBs(5, 16), 32.0 * 128 / 130 * 16 / 8);  // 63.015 GB/s
  EXPECT_NEAR(*PcieTheoryGBs(5, 16), 63.0154, 1e-4);
  EXPECT_NEAR(*PcieTheoryGBs(4, 16), 31.5077, 1e-4);
  EXPECT_NEAR(*PcieTheoryGBs(3, 8), 7.8769, 1e-4);
  EXPECT_DOUBLE_EQ(*PcieTheoryGBs(1, 1), 0.25);        // 2.5 GT/s x 8/10 / 8
  EXPECT_DOUBLE_EQ(*PcieTheoryGBs(6, 16), 121.0);      // 64 x 242/256 x 16 / 8
  EXPECT_FALSE(PcieTheoryGBs(7, 16));
  EXPECT_FALSE(PcieTheoryGBs(4, 0));
}

TEST(GpuMetrics, GemmFlopIsTwoMnk) {
  // 2 x 8192^3 = 1.099511627776e12 FLOP in 1.5 ms.
  EXPECT_DOUBLE_EQ(GemmTflops(8192, 8192, 8192, 0.0015), 1.099511627776e12 / 0.0015 / 1e12);
  EXPECT_NEAR(GemmTflops(8192, 8192, 8192, 0.0015), 733.0078, 1e-4);
  EXPECT_EQ(GemmTflops(1, 1, 1, 0), 0);
}

TEST(GpuMetrics, ClockEventSecondsCountEachBitOnItsOwn) {
  // Samples at 0,1,2,3 s: power cap; power cap + HW thermal; nothing read; HW thermal.
  const std::vector<double> t = {0, 1, 2, 3};
  const std::vector<std::optional<uint64_t>> m = {0x4, 0x4 | 0x40, std::nullopt, 0x40};
  auto s = ClockEventSeconds(t, m, 1.0);
  EXPECT_DOUBLE_EQ(s["sw_power_cap"], 2.0);
  EXPECT_DOUBLE_EQ(s["hw_thermal_slowdown"], 2.0);  // 1 s at t=1, the last sample's 1 s interval
  EXPECT_EQ(s.size(), 2u);
  // After a 1.5 s warm-up only the last sample counts.
  s = ClockEventSeconds(t, m, 1.0, 1.5);
  EXPECT_DOUBLE_EQ(s["hw_thermal_slowdown"], 1.0);
  EXPECT_EQ(s.count("sw_power_cap"), 0u);
  // Uneven samples: each holds until the next one.
  s = ClockEventSeconds({0, 0.5, 2}, {0x8, 0x8, 0x8}, 1.0);
  EXPECT_DOUBLE_EQ(s["hw_slowdown"], 0.5 + 1.5 + 1.0);
}

// ---- the line schema ----------------------------------------------------------------------

TEST(WorkerProtocol, ParsesEveryTypeAndSaysWhyNot) {
  std::string why;
  auto r = ParseWorkerLine(R"({"type":"result","test":"gemm","device":1,"name":"gemm","verified":true,"m":8})", &why);
  ASSERT_TRUE(r) << why;
  EXPECT_EQ(r->type, WorkerLineType::kResult);
  EXPECT_EQ(r->device, 1);
  EXPECT_EQ(r->Number("m"), 8);
  EXPECT_FALSE(r->Text("m"));
  EXPECT_TRUE(ParseWorkerLine(R"({"type":"done","test":"gemm","device":0})", &why));
  EXPECT_TRUE(ParseWorkerLine(R"({"type":"hello","protocol":"gpuplan-worker/1"})", &why));

  EXPECT_FALSE(ParseWorkerLine("Segmentation fault", &why));
  EXPECT_NE(why.find("not JSON"), std::string::npos);
  EXPECT_FALSE(ParseWorkerLine("[1,2]", &why));
  EXPECT_FALSE(ParseWorkerLine(R"({"test":"gemm"})", &why));
  EXPECT_EQ(why, "no \"type\"");
  EXPECT_FALSE(ParseWorkerLine(R"({"type":"resutl"})", &why));
  EXPECT_EQ(why, "unknown type 'resutl'");
  EXPECT_FALSE(ParseWorkerLine(R"({"type":"result","name":"gemm"})", &why));  // not verified
  EXPECT_NE(why.find("verified"), std::string::npos);
  EXPECT_FALSE(ParseWorkerLine(R"({"type":"result","verified":true})", &why));  // no name
  EXPECT_FALSE(ParseWorkerLine(R"({"type":"hello","protocol":"gpuplan-worker/0"})", &why));
  EXPECT_FALSE(ParseWorkerLine(R"({"type":"done","device":1.5})", &why));
}

TEST(WorkerProtocol, PciBusIdsOfNvmlAndCudaMatch) {
  EXPECT_EQ(NormalizePciBusId("00000000:18:00.0"), NormalizePciBusId("0000:18:00.0"));
  EXPECT_EQ(NormalizePciBusId("00000000:AB:00.0"), "0:ab:00.0");
  EXPECT_NE(NormalizePciBusId("0000:18:00.0"), NormalizePciBusId("0000:19:00.0"));
}

// ---- the runner on stand-in workers ---------------------------------------------------------

TEST(WorkerRunner, GoodWorkerFinishesCleanly) {
  const WorkerRun run = RunOne("good", "memory");
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_FALSE(run.signal);
  EXPECT_FALSE(run.timed_out);
  EXPECT_TRUE(run.unreadable.empty());
  ASSERT_EQ(run.lines.size(), 4u);  // hello, device, result, done
  EXPECT_EQ(run.lines[1].type, WorkerLineType::kDevice);
  EXPECT_TRUE(run.Finished("memory"));
  EXPECT_FALSE(JudgeWorkerRun(run, "gpu_memory", "memory"));
}

TEST(WorkerRunner, AbortIsAFailWithTheSignalAndStderr) {
  const WorkerRun run = RunOne("abort", "gemm");
  ASSERT_TRUE(run.signal);
  EXPECT_EQ(*run.signal, SIGABRT);
  EXPECT_FALSE(run.exit_code);
  const auto r = JudgeWorkerRun(run, "gemm", "gemm");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, CheckStatus::kFail);
  EXPECT_EQ(r->gpu, 0);
  EXPECT_EQ(r->measured_text, "crash");
  EXPECT_NE(r->evidence.find("died of SIGABRT"), std::string::npos) << r->evidence;
  EXPECT_NE(r->evidence.find("aborting in the gemm test"), std::string::npos) << r->evidence;
}

TEST(WorkerRunner, HangIsKilledWithItsGroupAtTheTimeout) {
  const WorkerRun run = RunOne("hang", "burn", {}, /*timeout_s=*/1);
  EXPECT_TRUE(run.timed_out);
  ASSERT_TRUE(run.signal);
  EXPECT_EQ(*run.signal, SIGKILL);
  EXPECT_EQ(run.lines.size(), 2u);  // hello and device, then nothing
  const auto r = JudgeWorkerRun(run, "burn_in", "burn");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, CheckStatus::kFail);
  EXPECT_EQ(r->measured_text, "hang");
  EXPECT_NE(r->evidence.find("killed with its process group"), std::string::npos) << r->evidence;
}

TEST(WorkerRunner, GarbageIsAFailEvenWithExitZero) {
  const WorkerRun run = RunOne("garbage", "bandwidth");
  EXPECT_EQ(run.exit_code, 0);
  ASSERT_EQ(run.unreadable.size(), 1u);
  EXPECT_NE(run.unreadable[0].find("not JSON"), std::string::npos);
  EXPECT_TRUE(run.Finished("bandwidth"));
  const auto r = JudgeWorkerRun(run, "gpu_bandwidth", "bandwidth");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, CheckStatus::kFail);
  EXPECT_EQ(r->measured_text, "unreadable output");
  EXPECT_NE(r->evidence.find("1 unreadable line(s)"), std::string::npos) << r->evidence;
  // The good lines around the garbage are still judged.
  EXPECT_EQ(JudgeBandwidth(run, H100(), CheckThresholds{}).size(), 3u);
}

TEST(WorkerRunner, CudaErrorLineIsAFailNamingTheCall) {
  const WorkerRun run = RunOne("cuda_error", "memory");
  EXPECT_EQ(run.exit_code, 3);
  const auto r = JudgeWorkerRun(run, "gpu_memory", "memory");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, CheckStatus::kFail);
  EXPECT_EQ(r->measured_text, "exit 3");
  EXPECT_NE(r->evidence.find("cudaErrorECCUncorrectable"), std::string::npos) << r->evidence;
  EXPECT_NE(r->evidence.find("memory_test.cu:142"), std::string::npos) << r->evidence;
}

TEST(WorkerRunner, MissingWorkerIsAnErrorNotACrashOfTheRunner) {
  WorkerCommand cmd;
  cmd.argv = {"/nonexistent/gpu-worker", "--test", "memory"};
  cmd.gpu = 2;
  const WorkerRun run = RunWorkers({cmd}, WorkerRunOptions{}).front();
  EXPECT_FALSE(run.start_error.empty());
  const auto r = JudgeWorkerRun(run, "gpu_memory", "memory");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, CheckStatus::kError);
  EXPECT_EQ(r->gpu, 2);
}

TEST(WorkerRunner, XidDuringTheTestFailsThatGpu) {
  const WorkerRun run = RunOne("good", "gemm");
  GpuEvent xid;
  xid.gpu = 0;
  xid.type = 0x8;
  xid.data = 79;
  const auto r = JudgeWorkerRun(run, "gemm", "gemm", {xid});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, CheckStatus::kFail);
  EXPECT_EQ(r->measured_text, "XID 79");
}

TEST(WorkerRunner, SeveralWorkersAtOnceEachWithItsOwnFate) {
  WorkerCommand good;
  good.argv = {StandIn("good"), "--test", "pcie", "--device", "0"};
  good.gpu = 0;
  WorkerCommand hang;
  hang.argv = {StandIn("hang"), "--test", "pcie", "--device", "1"};
  hang.gpu = 1;
  int ticks = 0;
  WorkerRunOptions opt;
  opt.timeout_s = 1;
  opt.tick_s = 0.1;
  opt.tick = [&ticks](double) { ++ticks; };
  const auto runs = RunWorkers({good, hang}, opt);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_FALSE(JudgeWorkerRun(runs[0], "pcie", "pcie"));
  EXPECT_TRUE(runs[1].timed_out);
  EXPECT_GT(ticks, 0);  // the sampler ran while the workers did
}

TEST(WorkerRunner, EnvironmentReachesTheWorker) {
  const WorkerRun run = RunOne("abort", "memory", {"STAND_IN_FAULT_TEST=gemm"});
  EXPECT_EQ(run.exit_code, 0);  // the fault is limited to the gemm test
}

// ---- verdicts on the stand-in's values ---------------------------------------------------------

TEST(GpuVerdicts, MemoryUsableAndPatterns) {
  const CheckThresholds th;
  auto rs = JudgeMemory(RunOne("good", "memory"), H100(), th);
  const CheckResult* u = Find(rs, "gpu_memory_usable");
  ASSERT_TRUE(u);
  EXPECT_DOUBLE_EQ(*u->measured, 80000.0);        // 83,886,080,000 bytes / 2^20
  EXPECT_DOUBLE_EQ(*u->expected, 0.9 * 81559.0);  // 85,520,809,984 bytes = 81,559 MiB
  EXPECT_EQ(u->status, CheckStatus::kPass);
  const CheckResult* p = Find(rs, "memory_pattern_errors");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->status, CheckStatus::kPass);
  EXPECT_EQ(*p->measured, 0);

  rs = JudgeMemory(RunOne("good", "memory", {"STAND_IN_WRONG=1"}), H100(), th);
  p = Find(rs, "memory_pattern_errors");
  EXPECT_EQ(p->status, CheckStatus::kFail);
  EXPECT_EQ(*p->measured, 3);
  EXPECT_NE(p->evidence.find("block 2 word 17"), std::string::npos);

  // A card that should have far more memory (H200: 143,771 MiB x 0.9 = 129,394 MiB > 80,000).
  GpuTarget h200 = H100();
  h200.card = test::Catalog().TryFind("H200 SXM");
  rs = JudgeMemory(RunOne("good", "memory"), h200, th);
  EXPECT_EQ(Find(rs, "gpu_memory_usable")->status, CheckStatus::kFail);
}

TEST(GpuVerdicts, StreamBandwidthAgainstTheDatasheet) {
  const CheckThresholds th;
  auto rs = JudgeBandwidth(RunOne("good", "bandwidth"), H100(), th);
  ASSERT_EQ(rs.size(), 3u);
  // copy: 2,147,483,648 bytes in 0.7 ms = 3,067.83 GB/s = 0.916 of 3,350: PASS.
  const CheckResult* copy = Find(rs, "stream_copy");
  EXPECT_DOUBLE_EQ(*copy->measured, 2147483648.0 / 0.0007 / 1e9);
  EXPECT_DOUBLE_EQ(*copy->expected, 0.85 * 3350);
  EXPECT_EQ(copy->status, CheckStatus::kPass);
  // triad: 3,221,225,472 bytes in 1 ms = 3,221.2 GB/s: PASS.
  EXPECT_DOUBLE_EQ(*Find(rs, "stream_triad")->measured, 3221.225472);

  rs = JudgeBandwidth(RunOne("good", "bandwidth", {"STAND_IN_SLOW=1"}), H100(), th);
  // scale 0.8 ms: 2,684.35 GB/s = 0.801 of 3,350 (between 0.70 and 0.85): WARN.
  EXPECT_EQ(Find(rs, "stream_scale")->status, CheckStatus::kWarn);
  // triad 1.5 ms: 2,147.48 GB/s = 0.641: FAIL.
  EXPECT_EQ(Find(rs, "stream_triad")->status, CheckStatus::kFail);

  rs = JudgeBandwidth(RunOne("good", "bandwidth", {"STAND_IN_WRONG=1"}), H100(), th);
  EXPECT_EQ(Find(rs, "stream_copy")->status, CheckStatus::kFail);
}

TEST(GpuVerdicts, GemmAgainstTheDensePeakPerPrecision) {
  const CheckThresholds th;
  auto rs = JudgeGemm(RunOne("good", "gemm", {}, 30, {"--precisions", "fp32,tf32,bf16,fp16,int8,fp8"}), H100(), th);
  // bf16: 2 x 8192^3 in 1.5 ms = 733.008 TFLOPS = 0.741 of 989.4: PASS; expected 0.7 x 989.4.
  const CheckResult* bf16 = Find(rs, "gemm_bf16");
  ASSERT_TRUE(bf16);
  EXPECT_NEAR(*bf16->measured, 733.0078, 1e-4);
  EXPECT_DOUBLE_EQ(*bf16->expected, 0.7 * 989.4);
  EXPECT_EQ(bf16->status, CheckStatus::kPass);
  // The layer: 2 x 4096 x 8192 x 4096 = 274,877,906,944 FLOP in 0.38 ms = 723.36 TFLOPS.
  EXPECT_NEAR(*Find(rs, "gemm_bf16_layer")->measured, 274877906944.0 / 0.00038 / 1e12, 1e-9);
  // fp32: 1.0995e12 / 22 ms = 49.98 TFLOPS = 0.747 of 66.9: PASS. int8 in TOPS.
  EXPECT_NEAR(*Find(rs, "gemm_fp32")->measured, 49.9778, 1e-4);
  EXPECT_EQ(Find(rs, "gemm_int8")->unit, "TOPS");
  // fp8 skipped by the worker: SKIP with its reason, never PASS.
  const CheckResult* fp8 = Find(rs, "gemm_fp8");
  ASSERT_TRUE(fp8);
  EXPECT_EQ(fp8->status, CheckStatus::kSkip);
  EXPECT_NE(fp8->evidence.find("stand-in: no fp8"), std::string::npos);
  // With a stricter WARN bar of 0.75 x the dense peak the same 0.741 is a WARN.
  CheckThresholds strict;
  strict.gemm_warn_fraction = 0.75;
  EXPECT_EQ(Find(JudgeGemm(RunOne("good", "gemm"), H100(), strict), "gemm_bf16")->status, CheckStatus::kWarn);
  // Wrong entries: FAIL whatever the speed.
  EXPECT_EQ(Find(JudgeGemm(RunOne("good", "gemm", {"STAND_IN_WRONG=1"}), H100(), th), "gemm_bf16")->status,
            CheckStatus::kFail);
}

TEST(GpuVerdicts, PcieAgainstGenerationTimesWidth) {
  const CheckThresholds th;
  const WorkerRun alone = RunOne("good", "pcie");
  auto rs = JudgePcie(alone, nullptr, H100(), 5, 16, th);
  // h2d pinned: 268,435,456 bytes in 5 ms = 53.687 GB/s = 0.852 of gen5 x16 63.015: PASS.
  const CheckResult* h2d = Find(rs, "pcie_h2d_pinned");
  ASSERT_TRUE(h2d);
  EXPECT_DOUBLE_EQ(*h2d->measured, 53.6870912);
  EXPECT_DOUBLE_EQ(*h2d->expected, 0.7 * 32.0 * 128 / 130 * 16 / 8);
  EXPECT_EQ(h2d->status, CheckStatus::kPass);
  EXPECT_EQ(Find(rs, "pcie_h2d_pageable")->status, CheckStatus::kPass);  // shown, not judged
  EXPECT_EQ(Find(rs, "pcie_link_under_load")->status, CheckStatus::kPass);
  // The same copies on a link that reports gen5 x16 but trained to gen4 under load: FAIL.
  rs = JudgePcie(alone, nullptr, H100(), 4, 16, th);
  EXPECT_EQ(Find(rs, "pcie_link_under_load")->status, CheckStatus::kFail);
  // Against an x32-wide theory (a link twice as wide) 53.7 GB/s is 0.426: FAIL.
  GpuTarget wide = H100();
  wide.snapshot.pcie_width_max = 32;
  EXPECT_EQ(Find(JudgePcie(alone, nullptr, wide, std::nullopt, std::nullopt, th), "pcie_h2d_pinned")->status,
            CheckStatus::kFail);
  EXPECT_EQ(Find(JudgePcie(alone, nullptr, wide, std::nullopt, std::nullopt, th), "pcie_link_under_load")->status,
            CheckStatus::kSkip);
}

TEST(GpuVerdicts, NcclBusBandwidthAgainstNvlinkTheory) {
  WorkerRun run;
  run.command.gpu = -1;
  std::string why;
  // 8 GPUs, 1 GiB all_reduce in 10 ms: busbw 187.90 GB/s against NVLink4 450 GB/s per
  // direction = 0.418 (between 0.30 and 0.60): WARN. A 1 MiB message is not judged.
  for (const char* l :
       {R"({"type":"result","test":"nccl","name":"nccl","verified":true,"collective":"all_reduce","ranks":8,"bytes":1048576,"seconds":0.0001,"wrong":0})",
        R"({"type":"result","test":"nccl","name":"nccl","verified":true,"collective":"all_reduce","ranks":8,"bytes":1073741824,"seconds":0.01,"wrong":0})",
        R"({"type":"result","test":"nccl","name":"nccl","verified":true,"collective":"all_gather","ranks":8,"bytes":1073741824,"seconds":0.003,"wrong":2})"}) {
    run.lines.push_back(*ParseWorkerLine(l, &why));
  }
  std::vector<GpuTarget> gpus;
  for (int i = 0; i < 8; ++i) {
    GpuTarget t = H100();
    t.gpu = i;
    gpus.push_back(t);
  }
  const auto rs = JudgeNccl(run, gpus, CheckThresholds{});
  const CheckResult* ar = Find(rs, "nccl_all_reduce_busbw", -1);
  ASSERT_TRUE(ar);
  EXPECT_DOUBLE_EQ(*ar->measured, 187.9048192);
  EXPECT_DOUBLE_EQ(*ar->expected, 0.6 * 450);
  EXPECT_EQ(ar->status, CheckStatus::kWarn);
  // all_gather: 1 GiB in 3 ms x 7/8 = 313.2 GB/s = 0.696: would PASS, but 2 wrong elements: FAIL.
  const CheckResult* ag = Find(rs, "nccl_all_gather_busbw", -1);
  EXPECT_NEAR(*ag->measured, 1073741824.0 / 0.003 / 1e9 * 7 / 8, 1e-9);
  EXPECT_EQ(ag->status, CheckStatus::kFail);
  // With no NVLink up, the theory is the PCIe link: gen5 x16 63.0 GB/s.
  for (auto& g : gpus) {
    g.snapshot.nvlink_up = 0;
  }
  EXPECT_NEAR(GpuToGpuTheory(gpus[0])->first, 63.0154, 1e-4);
}

TEST(GpuVerdicts, P2pMatrixFromTheStandIn) {
  WorkerCommand cmd;
  cmd.argv = {StandIn("good"), "--test", "p2p", "--devices", "all"};
  cmd.env = {"STAND_IN_DEVICES=2"};
  const WorkerRun run = RunWorkers({cmd}, WorkerRunOptions{}).front();
  std::vector<GpuTarget> gpus = {H100(), H100()};
  gpus[1].gpu = 1;
  gpus[0].snapshot.pci_bus_id = "00000000:09:00.0";
  gpus[1].snapshot.pci_bus_id = "00000000:0A:00.0";
  const auto rs = JudgeP2p(run, gpus, CheckThresholds{});
  // 256 MiB in 0.8 ms = 335.54 GB/s = 0.746 of 450: PASS; latency 0.2 ms / 100 copies = 2 us.
  const CheckResult* bw = Find(rs, "p2p_bandwidth", 1);
  ASSERT_TRUE(bw);
  EXPECT_DOUBLE_EQ(*bw->measured, 268435456.0 / 0.0008 / 1e9);
  EXPECT_EQ(bw->status, CheckStatus::kPass);
  EXPECT_DOUBLE_EQ(*Find(rs, "p2p_latency", 0)->measured, 2.0);
  EXPECT_FALSE(JudgeWorkerRun(run, "p2p", "p2p"));
}

GpuCurve Curve(std::vector<std::optional<uint64_t>> masks, std::vector<std::optional<double>> temps) {
  GpuCurve c;
  c.test = "burn_in";
  c.gpu = 0;
  c.interval_s = 10;
  c.warmup_s = 20;
  c.t = {0, 10, 20, 30, 40, 50};
  c.clock_events = std::move(masks);
  c.temperature_c = std::move(temps);
  c.power_w = {100, 650, 690, 700, 700, 710};
  c.sm_clock_mhz = {345, 1980, 1755, 1755, 1700, 1800};
  c.clock_event_seconds = ClockEventSeconds(c.t, c.clock_events, c.interval_s, c.warmup_s);
  return c;
}

TEST(GpuVerdicts, BurnInErrorsThrottleTemperaturePower) {
  const CheckThresholds th;
  const WorkerRun run = RunOne("good", "burn", {}, 30, {"--seconds", "1.5"});
  // Power cap only after the warm-up: normal. 1,000 GEMMs of 8192^3 in 1.5 s: 733.0 TFLOPS.
  GpuCurve ok = Curve({0x1, 0x4, 0x4, 0x4, 0x4, 0x4}, {40, 60, 70, 75, 80, 83});
  auto rs = JudgeBurn(run, H100(), &ok, th);
  EXPECT_EQ(Find(rs, "burn_in_errors")->status, CheckStatus::kPass);
  EXPECT_NEAR(*Find(rs, "burn_in_tflops")->measured, 733.0078, 1e-4);
  EXPECT_EQ(Find(rs, "burn_in_throttle")->status, CheckStatus::kPass);
  EXPECT_EQ(Find(rs, "burn_in_temperature")->status, CheckStatus::kPass);
  EXPECT_EQ(*Find(rs, "burn_in_temperature")->measured, 83);
  // Power after the warm-up: 690, 700, 700, 710 W: mean 700, sd 8.165, cv 0.0117: PASS.
  EXPECT_DOUBLE_EQ(*Find(rs, "burn_in_power")->measured, 700);
  EXPECT_EQ(Find(rs, "burn_in_power")->status, CheckStatus::kPass);
  // SM clock median of 1755, 1755, 1700, 1800 (sorted 1700 1755 1755 1800, index 2).
  EXPECT_EQ(*Find(rs, "burn_in_clocks")->measured, 1755);

  // One HW slowdown sample after the warm-up (10 s, with the power cap at once): FAIL. A
  // slowdown during the warm-up alone is not counted.
  GpuCurve hot = Curve({0x8, 0x4, 0x4, 0x4 | 0x8, 0x4, 0x4}, {40, 60, 70, 86, 88, 91});
  rs = JudgeBurn(run, H100(), &hot, th);
  EXPECT_EQ(Find(rs, "burn_in_throttle")->status, CheckStatus::kFail);
  EXPECT_EQ(*Find(rs, "burn_in_throttle")->measured, 10);
  // 91 C at or above the card's 90 C slowdown threshold: FAIL; 86 C would be a WARN.
  EXPECT_EQ(Find(rs, "burn_in_temperature")->status, CheckStatus::kFail);
  GpuCurve warm = Curve({0x1, 0x4, 0x4, 0x20, 0x4, 0x4}, {40, 60, 70, 86, 80, 80});
  rs = JudgeBurn(run, H100(), &warm, th);
  EXPECT_EQ(Find(rs, "burn_in_temperature")->status, CheckStatus::kWarn);
  EXPECT_EQ(Find(rs, "burn_in_throttle")->status, CheckStatus::kWarn);  // software thermal

  // Mismatches between iterations: FAIL with the count.
  rs = JudgeBurn(RunOne("good", "burn", {"STAND_IN_WRONG=1"}, 30, {"--seconds", "0.1"}), H100(), &ok, th);
  EXPECT_EQ(Find(rs, "burn_in_errors")->status, CheckStatus::kFail);
  EXPECT_EQ(*Find(rs, "burn_in_errors")->measured, 7);
  // No samples: SKIP, not PASS.
  rs = JudgeBurn(run, H100(), nullptr, th);
  EXPECT_EQ(Find(rs, "burn_in_throttle")->status, CheckStatus::kSkip);
}

TEST(GpuVerdicts, CurvesSurviveTheJsonReport) {
  CheckReport rep;
  rep.curves.push_back(Curve({0x1, 0x4, std::nullopt, 0x4 | 0x8, 0x4, 0x4}, {40, 60, std::nullopt, 75, 80, 83}));
  const CheckReport back = ReportFromJson(CheckReportToJson(rep), "mem");
  ASSERT_EQ(back.curves.size(), 1u);
  const GpuCurve& c = back.curves[0];
  EXPECT_EQ(c.t, rep.curves[0].t);
  EXPECT_FALSE(c.temperature_c[2]);
  EXPECT_EQ(*c.clock_events[3], 0xCu);
  EXPECT_DOUBLE_EQ(c.clock_event_seconds.at("hw_slowdown"), 10);
  EXPECT_DOUBLE_EQ(c.clock_event_seconds.at("sw_power_cap"), 30);
}

TEST(GpuVerdicts, ThresholdsFileSetsTheGpuKeys) {
  const std::string path = ::testing::TempDir() + "/gpu-thresholds.yaml";
  {
    FILE* f = std::fopen(path.c_str(), "w");
    std::fputs("gemm_warn_fraction: 0.8\nburn_seconds_default: 60\n", f);
    std::fclose(f);
  }
  const CheckThresholds t = LoadCheckThresholds(path);
  EXPECT_DOUBLE_EQ(t.gemm_warn_fraction, 0.8);
  EXPECT_DOUBLE_EQ(t.burn_seconds_default, 60);
  {
    FILE* f = std::fopen(path.c_str(), "w");
    std::fputs("gemm_fail_fraction: 0.9\n", f);  // above the warn fraction
    std::fclose(f);
  }
  EXPECT_THROW(LoadCheckThresholds(path), InputError);
}

}  // namespace
}  // namespace gpuplan
