// gpuplan check end to end in the library (RunCheck): the no-driver path on this machine, judged
// captures of several nodes, the fake NVML library serving a real H100's data, replay and
// record, the report file complete after every test, the JSON model read back, and check
// merge / compare with hand-computed statistics and prices.
#include <unistd.h>

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "check/check_request.h"
#include "check/compare.h"
#include "core/error.h"
#include "check/render/check_files.h"
#include "check/render/check_html.h"
#include "check/render/check_json.h"
#include "check/render/check_markdown.h"
#include "check/render/check_text.h"
#include "telemetry/recorded_source.h"
#include "telemetry/snapshot_json.h"
#include "test_paths.h"

namespace gpuplan {
namespace {

namespace fs = std::filesystem;

class CheckRun : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::current_path() / ("check-run-" + std::to_string(::getpid()) + "-" +
                                 ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_ / "data");
  }
  void TearDown() override {
    unsetenv("GPUPLAN_FAKE_NVML");
    fs::remove_all(dir_);
  }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  CheckRequest Quick() const {
    CheckRequest q;
    q.quick = true;
    q.nvml_library = "/nonexistent/libnvidia-ml.so.1";
    // Keep the host and storage tests short in unit tests.
    q.thresholds = Path("fast.yaml");
    std::ofstream(q.thresholds) << "storage_seconds_quick: 0.3\ncpu_seconds_quick: 0.2\n";
    return q;
  }
  fs::path dir_;
};

const CheckResult* Find(const CheckReport& r, const std::string& name, int gpu = -1, const std::string& node = "") {
  for (const auto& t : r.tests) {
    if (t.name == name && t.gpu == gpu && (node.empty() || t.node == node)) {
      return &t;
    }
  }
  return nullptr;
}

nlohmann::json ReadJson(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

TEST_F(CheckRun, NoDriverStillRunsHostAndStorageAndExits3) {
  CheckRequest q = Quick();
  q.data = Path("data");
  q.json = Path("report.json");
  CheckReportFiles files(q.json, "", "", std::cout);
  const CheckReport r = RunCheck(q, test::Catalog(), &files);
  EXPECT_TRUE(r.environment_problem);
  EXPECT_EQ(r.ExitCode(), 3);
  EXPECT_EQ(r.verdict, CheckStatus::kError);
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_EQ(r.notes[0].find('\n'), std::string::npos);  // one line
  ASSERT_NE(Find(r, "gpu_driver"), nullptr);
  EXPECT_EQ(Find(r, "gpu_driver")->status, CheckStatus::kError);
  EXPECT_EQ(Find(r, "inventory"), nullptr);
  ASSERT_NE(Find(r, "cpu_steal"), nullptr);
  ASSERT_NE(Find(r, "storage_seq_read"), nullptr);
  EXPECT_EQ(Find(r, "storage_seq_read")->status, CheckStatus::kPass);
  EXPECT_TRUE(fs::is_empty(dir_ / "data"));  // the storage test file is gone
  // The report file: the keys the issue names.
  const nlohmann::json j = ReadJson(q.json);
  EXPECT_EQ(j["verdict"], "ERROR");
  EXPECT_EQ(j["exit_code"], 3);
  EXPECT_TRUE(j["complete"].get<bool>());
  EXPECT_TRUE(j["gpus"].is_array());
  EXPECT_TRUE(j["gpus"].empty());
  EXPECT_TRUE(j["host"]["cpu_threads"].is_number());
  for (const auto& t : j["tests"]) {
    for (const char* k : {"name", "gpu", "status", "measured", "expected", "unit", "evidence"}) {
      EXPECT_TRUE(t.contains(k)) << k << " missing in " << t.dump();
    }
  }
}

TEST_F(CheckRun, CapturesOfTwoNodesAreOneReport) {
  CheckRequest q = Quick();
  q.expect = "A100 40GB SXM";
  q.allow_mig = true;
  q.from_nvidia_smi = {test::Fixture("nvidia-smi/a100-sxm4-mig.xml"), test::Fixture("nvidia-smi/edited/a100-x8-link.xml")};
  const CheckReport r = RunCheck(q, test::Catalog());
  EXPECT_FALSE(r.environment_problem);
  ASSERT_EQ(r.nodes.size(), 2u);
  EXPECT_EQ(r.verdict, CheckStatus::kFail);
  EXPECT_EQ(r.ExitCode(), 1);
  EXPECT_EQ(r.expected_card, "A100 40GB SXM");
  // Neither node is this machine: no host or storage tests.
  EXPECT_EQ(Find(r, "cpu_steal"), nullptr);
  EXPECT_EQ(Find(r, "storage_seq_read"), nullptr);
  int width_fail = 0;
  int width_pass = 0;
  for (const auto& t : r.tests) {
    if (t.name == "pcie_link_width") {
      EXPECT_FALSE(t.node.empty());
      width_fail += t.status == CheckStatus::kFail;
      width_pass += t.status == CheckStatus::kPass;
    }
  }
  EXPECT_EQ(width_fail, 1);  // the x8 node
  EXPECT_EQ(width_pass, 1);
}

TEST_F(CheckRun, BadInputBeforeAnythingRuns) {
  CheckRequest q = Quick();
  q.expect = "H100 SXN";
  try {
    RunCheck(q, test::Catalog());
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "--expect");
  }
  q = Quick();
  q.data = Path("no-such-folder");
  try {
    RunCheck(q, test::Catalog());
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "--data");
  }
  q = Quick();
  std::ofstream(q.thresholds) << "steal_warn_fraction: 0.02\nsteal_fial_fraction: 0.1\n";
  try {
    RunCheck(q, test::Catalog());
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), q.thresholds);
    EXPECT_EQ(e.line(), 2);
    EXPECT_EQ(e.field(), "steal_fial_fraction");
  }
}

// The fake libnvidia-ml.so.1 serves the recorded H100 (tests/fake_nvml): the real dlopen path.
TEST_F(CheckRun, FakeNvmlH100AgainstTheOrder) {
  setenv("GPUPLAN_FAKE_NVML", test::Fixture("nvml/h100-590.recording.json").c_str(), 1);
  CheckRequest q = Quick();
  q.nvml_library = GPUPLAN_FAKE_NVML_LIB;
  q.expect = "8x H100 SXM";
  q.cuda = "12.4";
  q.record = Path("rec.json");
  const CheckReport r = RunCheck(q, test::Catalog());
  EXPECT_FALSE(r.environment_problem);
  ASSERT_EQ(r.nodes.size(), 1u);
  ASSERT_EQ(r.nodes[0].gpus.size(), 1u);
  // One H100 where eight were ordered.
  ASSERT_NE(Find(r, "gpu_count"), nullptr);
  EXPECT_EQ(Find(r, "gpu_count")->status, CheckStatus::kFail);
  // Driver 590.48.01 supports CUDA 13.1 >= 12.4.
  ASSERT_NE(Find(r, "driver_cuda"), nullptr);
  EXPECT_EQ(Find(r, "driver_cuda")->status, CheckStatus::kPass);
  ASSERT_NE(Find(r, "gpu_identity", 0), nullptr);
  EXPECT_EQ(Find(r, "gpu_identity", 0)->status, CheckStatus::kPass);
  // The recording carries one (synthetic) XID 79 event, delivered when the first test has run:
  // a FAIL tied to that test, and again in the whole run's health delta at the end.
  std::vector<const CheckResult*> deltas;
  for (const auto& t : r.tests) {
    if (t.name == "health_delta") {
      deltas.push_back(&t);
    }
  }
  ASSERT_EQ(deltas.size(), 2u);
  EXPECT_EQ(deltas[0]->status, CheckStatus::kFail);
  EXPECT_NE(deltas[0]->evidence.find("during the inventory test"), std::string::npos) << deltas[0]->evidence;
  EXPECT_NE(deltas[0]->evidence.find("XID 79"), std::string::npos);
  EXPECT_EQ(deltas[1]->status, CheckStatus::kFail);
  EXPECT_NE(deltas[1]->evidence.find("during the whole check"), std::string::npos) << deltas[1]->evidence;
  ASSERT_EQ(r.events.size(), 1u);
  EXPECT_EQ(r.events[0].data, 79u);
  EXPECT_EQ(r.ExitCode(), 1);
  // --record wrote what a replay reads back.
  const Recording rec = ReadRecording(q.record);
  ASSERT_GE(rec.snapshots.size(), 2u);  // at the start, after each test
  EXPECT_EQ(rec.snapshots.front().gpus.at(0).pci_device_id, 0x233010DEu);
  CheckRequest replay = Quick();
  replay.replay = q.record;
  replay.expect = "8x H100 SXM";
  const CheckReport again = RunCheck(replay, test::Catalog());
  EXPECT_EQ(Find(again, "gpu_count")->status, CheckStatus::kFail);
  EXPECT_EQ(again.nodes.at(0).gpus.at(0).uuid, r.nodes.at(0).gpus.at(0).uuid);
}

// The report file is complete JSON after every test ("complete": false until the end).
TEST_F(CheckRun, ReportFileIsCompleteAfterEveryTest) {
  struct Peek : CheckObserver {
    std::string path;
    std::vector<nlohmann::json> seen;
    void OnTestDone(const CheckReport&, const std::string&) override { seen.push_back(ReadJson(path)); }
  };
  CheckRequest q = Quick();
  q.data = Path("data");
  q.json = Path("live.json");
  CheckReportFiles files(q.json, "", "", std::cout);
  Peek peek;
  peek.path = q.json;
  CheckObservers both({&files, &peek});
  const CheckReport r = RunCheck(q, test::Catalog(), &both);
  ASSERT_GE(peek.seen.size(), 2u);
  std::size_t before = 0;
  for (const auto& j : peek.seen) {
    EXPECT_FALSE(j["complete"].get<bool>());
    EXPECT_GT(j["tests"].size(), before);  // grows test by test
    before = j["tests"].size();
  }
  EXPECT_TRUE(ReadJson(q.json)["complete"].get<bool>());
  EXPECT_FALSE(fs::exists(q.json + ".tmp." + std::to_string(::getpid())));
  // The file as a kill would leave it (after the first test) reads back as a report that did
  // not finish, with the results it had; the final file is complete.
  const NamedReport killed{"live.json", ReportFromJson(peek.seen.front(), "live.json")};
  EXPECT_TRUE(killed.report.finished.empty());
  EXPECT_EQ(killed.report.tests.size(), peek.seen.front()["tests"].size());
  const auto inc = IncompleteOf(killed, "node-x");
  ASSERT_TRUE(inc.has_value());
  EXPECT_EQ(inc->file, "live.json");
  EXPECT_EQ(inc->label, "node-x");
  EXPECT_FALSE(IncompleteOf(NamedReport{"final.json", ReportFromJson(ReadJson(q.json), "final.json")}, "x").has_value());
}

// The live view: a progress bar redrawn with \r on a terminal, plain lines otherwise.
TEST(CheckLiveView, ProgressOnlyOnATerminal) {
  CheckReport r;
  CheckResult t;
  t.name = "storage_seq_read";
  t.status = CheckStatus::kPass;
  t.measured = 1.5;
  t.unit = "GB/s";
  r.Add(t);
  for (const bool tty : {true, false}) {
    std::ostringstream out;
    CheckLiveView view(out, tty);
    view.OnTestStart("storage", 0, 2);
    view.OnProgress("storage", 0.5);
    view.OnTestDone(r, "storage");
    const std::string s = out.str();
    EXPECT_NE(s.find("[1/2] storage\n"), std::string::npos) << s;
    EXPECT_NE(s.find("PASS  storage_seq_read"), std::string::npos) << s;
    EXPECT_NE(s.find("1.5 GB/s"), std::string::npos) << s;
    EXPECT_EQ(s.find("] 50%") != std::string::npos, tty) << s;
    EXPECT_EQ(s.find('\r') != std::string::npos, tty) << s;
  }
}

TEST(CheckJson, RoundTripAndTampering) {
  CheckReport r;
  r.mode = "quick";
  r.started = "2026-12-01T10:00:00Z";
  r.finished = "2026-12-01T10:01:00Z";
  r.expect = "8x H100 SXM";
  r.host.hostname = "gpu-07";
  r.host.cpu_threads = 224;
  SystemSnapshot s;
  s.hostname = "gpu-07";
  s.driver_version = "550.54.15";
  GpuSnapshot g;
  g.index = 0;
  g.name = "NVIDIA H100 80GB HBM3";
  g.pcie_width_current = 16;
  s.gpus.push_back(g);
  r.nodes.push_back(s);
  CheckResult t;
  t.name = "pcie_link_width";
  t.gpu = 0;
  t.status = CheckStatus::kFail;
  t.measured = 8;
  t.expected = 16;
  t.unit = "lanes";
  t.evidence = "x8 of x16";
  r.Add(t);
  const nlohmann::json j = CheckReportToJson(r);
  EXPECT_EQ(j["verdict"], "FAIL");
  EXPECT_EQ(j["gpus"][0]["node"], "gpu-07");
  EXPECT_EQ(j["gpus"][0]["driver_version"], "550.54.15");
  const CheckReport back = ReportFromJson(j, "r.json");
  EXPECT_EQ(back.verdict, CheckStatus::kFail);
  EXPECT_EQ(back.tests.at(0).measured, 8);
  EXPECT_EQ(back.nodes, r.nodes);
  EXPECT_EQ(back.host.cpu_threads, 224);
  nlohmann::json bad = j;
  bad["verdict"] = "PASS";
  try {
    ReportFromJson(bad, "r.json");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "verdict");
  }
  bad = j;
  bad["tests"][0]["status"] = "OK";
  try {
    ReportFromJson(bad, "r.json");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "tests[0].status");
    EXPECT_EQ(e.file(), "r.json");
  }
  EXPECT_THROW(ReportFromJson(nlohmann::json{{"schema", "other"}}, "x.json"), InputError);
  // "complete" must agree with "finished": true exactly when the report has a finished time.
  for (const bool finished : {true, false}) {
    bad = j;
    if (!finished) {
      bad["finished"] = nullptr;
    }
    bad["complete"] = !finished;
    try {
      ReportFromJson(bad, "r.json");
      FAIL() << "complete " << !finished << " with finished " << finished;
    } catch (const InputError& e) {
      EXPECT_EQ(e.field(), "complete");
      EXPECT_EQ(e.file(), "r.json");
    }
  }
}

// A report of one node with one numeric result per GPU.
NamedReport NodeReport(const std::string& host, const std::string& test, const std::vector<double>& values,
                       const std::string& unit = "TFLOP/s") {
  NamedReport n;
  n.file = host + ".json";
  SystemSnapshot s;
  s.hostname = host;
  for (std::size_t i = 0; i < values.size(); ++i) {
    GpuSnapshot g;
    g.index = static_cast<int>(i);
    s.gpus.push_back(g);
    CheckResult t;
    t.name = test;
    t.gpu = static_cast<int>(i);
    t.status = CheckStatus::kPass;
    t.measured = values[i];
    t.unit = unit;
    n.report.Add(t);
  }
  n.report.nodes.push_back(s);
  n.report.finished = "2026-12-01T10:05:00Z";  // a check that ran to its end
  return n;
}

TEST(CheckMerge, TheSlowGpuIsFlagged) {
  // 8 GPUs on 2 nodes: 700 702 698 701 | 699 700 640 703 TFLOP/s. Median 700; absolute
  // deviations 0 2 2 1 1 0 60 3, whose median (the MAD) is 1.5; GPU 2 of node b:
  // z = 0.6745 x (640 - 700) / 1.5 = -26.98; the next largest, 703: 0.6745 x 3 / 1.5 = 1.35.
  const auto m = MergeReports({NodeReport("a", "gemm_bf16", {700, 702, 698, 701}),
                               NodeReport("b", "gemm_bf16", {699, 700, 640, 703})},
                              MergeReportsRequest{});
  ASSERT_EQ(m.outliers.size(), 1u);
  EXPECT_EQ(m.outliers[0].node, "b");
  EXPECT_EQ(m.outliers[0].gpu, 2);
  EXPECT_DOUBLE_EQ(m.outliers[0].median, 700);
  EXPECT_DOUBLE_EQ(m.outliers[0].spread, 1.5);
  EXPECT_NEAR(m.outliers[0].z, 0.6745 * -60 / 1.5, 1e-9);
  EXPECT_EQ(m.merged.verdict, CheckStatus::kWarn);
  EXPECT_EQ(m.merged.nodes.size(), 2u);
  EXPECT_EQ(m.merged.tests.size(), 9u);  // 8 results and one outlier
  EXPECT_EQ(m.merged.tests.back().node, "b");
}

TEST(CheckMerge, StreamedJsonIsTheTreeJson) {
  // The merge file is written result by result (WriteMergeJson); it must be byte for byte what
  // the tree gives, and parse back to the same report (the 9 results of the case above).
  const auto m = MergeReports({NodeReport("a", "gemm_bf16", {700, 702, 698, 701}),
                               NodeReport("b", "gemm_bf16", {699, 700, 640, 703})},
                              MergeReportsRequest{});
  std::ostringstream streamed;
  WriteMergeJson(m, streamed);
  EXPECT_EQ(streamed.str(), MergeToJson(m).dump(2) + "\n");
  const auto back = ReportFromJson(nlohmann::json::parse(streamed.str()), "merged.json");
  EXPECT_EQ(back.tests.size(), 9u);
  EXPECT_EQ(back.verdict, CheckStatus::kWarn);
  // A merge with no results at all: still the tree's bytes. (MergeReports never gives one: an
  // empty node report adds its node_report FAIL.)
  MergeResult empty;
  empty.nodes = 1;
  empty.outlier_z = 3.5;
  empty.merged.nodes.push_back(NodeReport("a", "x", {}).report.nodes.front());
  empty.merged.finished = "2026-12-01T10:05:00Z";
  std::ostringstream none;
  WriteMergeJson(empty, none);
  EXPECT_EQ(none.str(), MergeToJson(empty).dump(2) + "\n");
}

TEST(CheckMerge, ZeroMadFallsBackToMeanDeviation) {
  // 5 5 5 5 9: MAD 0; mean absolute deviation 4/5 = 0.8; z(9) = 4 / (1.253314 x 0.8) = 3.99 > 3.5.
  const auto m = MergeReports({NodeReport("a", "storage_seq_read", {5, 5, 5, 5, 9}, "GB/s")}, MergeReportsRequest{});
  ASSERT_EQ(m.outliers.size(), 1u);
  EXPECT_NEAR(m.outliers[0].z, 4 / (1.253314 * 0.8), 1e-9);
  // With a threshold of 4 it is not flagged.
  MergeReportsRequest q;
  q.outlier_z = 4;
  EXPECT_TRUE(MergeReports({NodeReport("a", "storage_seq_read", {5, 5, 5, 5, 9}, "GB/s")}, q).outliers.empty());
  // Two values are too few to judge.
  EXPECT_TRUE(MergeReports({NodeReport("a", "x", {1, 100})}, MergeReportsRequest{}).outliers.empty());
}

// Merge of a complete PASS node with a node whose check was killed, one whose report holds no
// result, and one killed without a driver. By the rule (docs/check.md §7): each incomplete node
// adds a node_report result naming it, FAIL (ERROR for the environment problem); the merge is
// incomplete (no finished time, "complete": false); exit 1, or 3 with the environment problem.
TEST(CheckMerge, IncompleteOrEmptyNodeMakesTheMergeIncompleteAndNamed) {
  const NamedReport a = NodeReport("a", "gemm_bf16", {700, 702});  // PASS, complete
  ASSERT_EQ(a.report.verdict, CheckStatus::kPass);
  NamedReport killed = NodeReport("b", "gemm_bf16", {699});
  killed.report.finished.clear();
  const NamedReport empty = NodeReport("c", "gemm_bf16", {});
  NamedReport nodriver = NodeReport("d", "cpu_steal", {0.01});
  nodriver.report.finished.clear();
  nodriver.report.environment_problem = true;

  // Both complete: nothing incomplete, exit 0 (the rule does not fire on its own).
  const MergeResult clean = MergeReports({a, NodeReport("e", "gemm_bf16", {701})}, MergeReportsRequest{});
  EXPECT_TRUE(clean.incomplete.empty());
  EXPECT_EQ(clean.merged.ExitCode(), kExitOk);
  EXPECT_TRUE(MergeToJson(clean)["complete"].get<bool>());

  for (const NamedReport* other : std::initializer_list<const NamedReport*>{&killed, &empty}) {
    const MergeResult m = MergeReports({a, *other}, MergeReportsRequest{});
    const std::string node = other == &killed ? "b" : "c";
    SCOPED_TRACE(node);
    ASSERT_EQ(m.incomplete.size(), 1u);
    EXPECT_EQ(m.incomplete[0].label, node);
    EXPECT_EQ(m.incomplete[0].file, node + ".json");
    EXPECT_FALSE(m.incomplete[0].environment_problem);
    EXPECT_EQ(m.merged.verdict, CheckStatus::kFail);
    EXPECT_EQ(m.merged.ExitCode(), kExitNegative);
    EXPECT_TRUE(m.merged.finished.empty());
    // a's 2 results, b's 1 (c has none), and the node_report.
    EXPECT_EQ(m.merged.tests.size(), other == &killed ? 4u : 3u);
    const CheckResult& t = m.merged.tests.back();
    EXPECT_EQ(t.name, "node_report");
    EXPECT_EQ(t.node, node);
    EXPECT_EQ(t.status, CheckStatus::kFail);
    EXPECT_EQ(t.measured_text, other == &killed ? "incomplete" : "no results");

    // Every output names the node and its file.
    const nlohmann::json j = MergeToJson(m);
    EXPECT_FALSE(j["complete"].get<bool>());
    EXPECT_EQ(j["exit_code"], 1);
    EXPECT_EQ(j["verdict"], "FAIL");
    ASSERT_EQ(j["merge"]["incomplete"].size(), 1u);
    EXPECT_EQ(j["merge"]["incomplete"][0]["node"], node);
    EXPECT_EQ(j["merge"]["incomplete"][0]["file"], node + ".json");
    // The merged file reads back as an incomplete report.
    EXPECT_TRUE(ReportFromJson(j, "merged.json").finished.empty());
    std::ostringstream text, md, html;
    MergeToText(m, text);
    MergeToMarkdown(m, md);
    MergeToHtml(m, html);
    const std::string named = node + " (" + node + ".json)";
    EXPECT_NE(text.str().find("incomplete node report: " + named), std::string::npos) << text.str();
    EXPECT_NE(md.str().find("## Incomplete node reports\n\nThe merge is incomplete"), std::string::npos);
    EXPECT_NE(md.str().find("- " + named + ": "), std::string::npos) << md.str();
    EXPECT_NE(md.str().find("- **FAIL** node_report (" + node + " host)"), std::string::npos) << md.str();
    EXPECT_NE(html.str().find("<ul id=\"incomplete\">\n<li>" + named + ": "), std::string::npos);
  }
  EXPECT_NE(MergeReports({a, killed}, MergeReportsRequest{}).incomplete[0].reason.find("did not finish"),
            std::string::npos);
  EXPECT_NE(MergeReports({a, empty}, MergeReportsRequest{}).incomplete[0].reason.find("no result"), std::string::npos);

  // Killed on a node without a driver: ERROR, exit 3; with the killed node too, still 3.
  const MergeResult env = MergeReports({a, killed, nodriver}, MergeReportsRequest{});
  ASSERT_EQ(env.incomplete.size(), 2u);
  EXPECT_EQ(env.incomplete[1].label, "d");
  EXPECT_TRUE(env.incomplete[1].environment_problem);
  EXPECT_EQ(env.merged.tests.back().status, CheckStatus::kError);
  EXPECT_EQ(env.merged.tests.back().node, "d");
  EXPECT_EQ(env.merged.ExitCode(), kExitEnvironment);
  EXPECT_EQ(IncompleteExitCode(env.incomplete), kExitEnvironment);
  EXPECT_EQ(IncompleteExitCode({env.incomplete[0]}), kExitNegative);
  EXPECT_EQ(IncompleteExitCode({}), kExitOk);
}

// Issue 26 req. 3: compare judges each figure in its direction. An error count's weakest GPU is
// the one with the most errors, and a FAIL's figure is the one shown (before: health_delta took
// the minimum and showed "0 · FAIL" for a machine whose GPU 1 raised a new XID).
TEST(CheckCompare, EachFigureIsJudgedInItsDirection) {
  NamedReport a = NodeReport("node-a", "health_delta", {0.0, 1.0}, "new errors");
  a.report.tests[1].status = CheckStatus::kFail;
  const NamedReport b = NodeReport("node-b", "health_delta", {0.0, 0.0}, "new errors");
  const NamedReport fast = NodeReport("node-c", "gemm_bf16", {700.0, 640.0});
  const NamedReport slow = NodeReport("node-d", "gemm_bf16", {690.0, 695.0});
  const ComparisonResult c = CompareReports({a, b}, CompareReportsRequest{}, test::Catalog());
  ASSERT_EQ(c.rows.size(), 1u);
  ASSERT_TRUE(c.rows[0].cells[0].has_value());
  EXPECT_EQ(c.rows[0].cells[0]->measured, 1.0);  // the GPU with the new error
  EXPECT_EQ(c.rows[0].cells[0]->status, CheckStatus::kFail);
  EXPECT_EQ(c.rows[0].cells[1]->measured, 0.0);
  // Throughput: the weakest GPU is the slowest (640, not 700).
  const ComparisonResult g = CompareReports({fast, slow}, CompareReportsRequest{}, test::Catalog());
  EXPECT_EQ(g.rows[0].cells[0]->measured, 640.0);
  EXPECT_EQ(g.rows[0].cells[1]->measured, 690.0);
  // A WARN beside a PASS with a lower figure: the WARN's figure is the weakest.
  NamedReport w = NodeReport("node-e", "gemm_bf16", {600.0, 650.0});
  w.report.tests[1].status = CheckStatus::kWarn;
  const ComparisonResult ww = CompareReports({w, slow}, CompareReportsRequest{}, test::Catalog());
  EXPECT_EQ(ww.rows[0].cells[0]->measured, 650.0);
  EXPECT_EQ(ww.rows[0].cells[0]->status, CheckStatus::kWarn);
}

// Compare: an incomplete or empty report is named, its machine's verdict is FAIL (ERROR with an
// environment problem) and it is not ranked; the comparison exits 1 (3).
TEST(CheckCompare, IncompleteOrEmptyReportIsNamedAndNotClean) {
  const NamedReport a = NodeReport("node-a", "storage_seq_read", {2.0}, "GB/s");
  const NamedReport b = NodeReport("node-b", "storage_seq_read", {1.0}, "GB/s");
  NamedReport killed = b;
  killed.report.finished.clear();
  NamedReport empty = NodeReport("node-c", "storage_seq_read", {}, "GB/s");

  const ComparisonResult clean = CompareReports({a, b}, CompareReportsRequest{}, test::Catalog());
  EXPECT_TRUE(clean.incomplete.empty());
  EXPECT_EQ(clean.ExitCode(), kExitOk);
  EXPECT_EQ(clean.machines[1].verdict, CheckStatus::kPass);

  for (const NamedReport* other : std::initializer_list<const NamedReport*>{&killed, &empty}) {
    const std::string label = other == &killed ? "node-b" : "node-c";
    SCOPED_TRACE(label);
    const ComparisonResult c = CompareReports({a, *other}, CompareReportsRequest{}, test::Catalog());
    ASSERT_EQ(c.incomplete.size(), 1u);
    EXPECT_EQ(c.incomplete[0].label, label);
    EXPECT_EQ(c.ExitCode(), kExitNegative);
    EXPECT_TRUE(c.machines[0].incomplete.empty());
    EXPECT_EQ(c.machines[0].verdict, CheckStatus::kPass);
    EXPECT_FALSE(c.machines[1].incomplete.empty());
    EXPECT_EQ(c.machines[1].verdict, CheckStatus::kFail);
    const nlohmann::json j = ComparisonToJson(c);
    EXPECT_EQ(j["exit_code"], 1);
    EXPECT_EQ(j["incomplete"][0]["label"], label);
    EXPECT_EQ(j["incomplete"][0]["file"], label + ".json");
    EXPECT_TRUE(j["machines"][0]["complete"].get<bool>());
    EXPECT_FALSE(j["machines"][1]["complete"].get<bool>());
    std::ostringstream text, md, html;
    ComparisonToText(c, text);
    ComparisonToMarkdown(c, md);
    ComparisonToHtml(c, html);
    const std::string note = label + " (" + label + ".json): not a complete report";
    EXPECT_NE(text.str().find(note), std::string::npos) << text.str();
    EXPECT_NE(md.str().find("- " + note), std::string::npos) << md.str();
    EXPECT_NE(md.str().find("| complete | yes | no: "), std::string::npos) << md.str();
    EXPECT_NE(html.str().find(note), std::string::npos);
  }
  killed.report.environment_problem = true;
  const ComparisonResult env = CompareReports({a, killed}, CompareReportsRequest{}, test::Catalog());
  EXPECT_EQ(env.ExitCode(), kExitEnvironment);
  EXPECT_EQ(env.machines[1].verdict, CheckStatus::kError);
}

TEST(CheckMerge, Median) {
  EXPECT_DOUBLE_EQ(Median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(Median({4, 1, 3, 2}), 2.5);
  EXPECT_TRUE(std::isnan(Median({})));
}

TEST_F(CheckRun, CompareRanksByMoneyPerMeasuredUnit) {
  const std::string offers = Path("offers.yaml");
  std::ofstream(offers) << R"(currency: CNY
offers:
  - id: fast-od
    provider: a
    gpu: H100 SXM
    mode: on_demand
    price: 10
    terms: {sla_response_minutes: 30, private_network: true}
  - id: slow-monthly
    provider: b
    gpu: H100 SXM
    mode: monthly
    price: 4380
)";
  NamedReport a = NodeReport("node-a", "storage_seq_read", {2.0}, "GB/s");
  a.report.offer_id = "fast-od";
  NamedReport b = NodeReport("node-b", "storage_seq_read", {1.0}, "GB/s");
  CompareReportsRequest q;
  q.offers = offers;
  q.offer_of = {"node-b.json=slow-monthly"};
  const ComparisonResult c = CompareReports({a, b}, q, test::Catalog());
  ASSERT_EQ(c.machines.size(), 2u);
  // a: 10 CNY/h for 2.0 GB/s = 0.002 TB/s -> 5,000 CNY per TB/s-hour.
  // b: 4,380 CNY / 730 h = 6 CNY/h for 0.001 TB/s -> 6,000.
  EXPECT_DOUBLE_EQ(*c.machines[0].price_per_hour, 10);
  EXPECT_DOUBLE_EQ(*c.machines[1].price_per_hour, 6);
  EXPECT_DOUBLE_EQ(*c.machines[0].per_storage_tb_s_hour, 5000);
  EXPECT_DOUBLE_EQ(*c.machines[1].per_storage_tb_s_hour, 6000);
  EXPECT_EQ(c.machines[0].rank, 1);
  EXPECT_EQ(c.machines[1].rank, 2);
  EXPECT_EQ(c.rank_basis, "price per measured storage TB/s-hour");
  EXPECT_EQ(c.machines[0].offer->terms.sla_response_minutes, 30);
  EXPECT_FALSE(c.machines[1].offer->terms.sla_response_minutes.has_value());
  ASSERT_EQ(c.rows.size(), 1u);
  EXPECT_EQ(c.rows[0].cells[1]->measured, 1.0);
  // An offer id the file does not have names the flag and suggests.
  q.offer_of = {"node-b.json=slow-monthy"};
  try {
    CompareReports({a, b}, q, test::Catalog());
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "--offer-of");
    ASSERT_FALSE(e.suggestions().empty());
    EXPECT_EQ(e.suggestions()[0], "slow-monthly");
  }
}

}  // namespace
}  // namespace gpuplan
