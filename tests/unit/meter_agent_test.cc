// The meter agent (meter/agent.h), its trace format (meter/trace.h), process identity from /proc
// (meter/processes.h) and NVML's process list (telemetry). Expected values come from the
// fixtures' contents and the example trace's schedule (data/traces/README.md), not from runs.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <chrono>
#include <functional>
#include <thread>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/error.h"
#include "meter/render/meter_prometheus.h"
#include "meter/agent.h"
#include "meter/monitor.h"
#include "meter/processes.h"
#include "meter/trace.h"
#include "telemetry/nvml_api.h"
#include "telemetry/nvml_source.h"
#include "test_paths.h"

namespace gpuplan {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kMonday = 1772409600000;  // 2026-03-02T00:00:00Z

class TempDir {
 public:
  TempDir() {
    char pattern[] = "/tmp/gpuplan-agent-XXXXXX";
    path_ = mkdtemp(pattern);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

StoreOptions ReadOnly() {
  StoreOptions o;
  o.read_only = true;
  return o;
}

void WriteText(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

std::string Header(int gpus = 2, double interval = 1) {
  nlohmann::json h{{"format", "gpuplan-meter-trace"}, {"version", 1}, {"host", "t"}, {"interval_seconds", interval}};
  for (int i = 0; i < gpus; ++i) {
    h["gpus"].push_back({{"index", i}, {"name", "NVIDIA A100-SXM4-80GB"}, {"uuid", "GPU-" + std::to_string(i)},
                         {"memory_total", 85899345920ull}});
  }
  return h.dump() + "\n";
}

// A small trace: `steps` steps of 2 GPUs, one interval apart, GPU 0 busy with a process.
Trace SmallTrace(int steps, double interval = 1) {
  Trace t;
  t.header.host = "t";
  t.header.interval_seconds = interval;
  for (int i = 0; i < 2; ++i) {
    t.header.gpus.push_back(TraceGpu{i, "NVIDIA A100-SXM4-80GB", "GPU-" + std::to_string(i), 85899345920ull});
  }
  for (int k = 0; k < steps; ++k) {
    TraceStep s;
    s.time = FromUnixMillis(kMonday + static_cast<int64_t>(k * interval * 1000));
    for (int i = 0; i < 2; ++i) {
      GpuSample g;
      g.time = s.time;
      g.gpu = i;
      g.uuid = "GPU-" + std::to_string(i);
      g.memory_total = 85899345920ull;
      g.utilization_gpu = i == 0 ? 90 + (k % 3) : 0;
      g.memory_used = i == 0 ? 40ull << 30 : 4ull << 20;
      g.power = i == 0 ? 350.5 : 61.25;
      g.energy_mj = 1000000u + static_cast<uint64_t>(k) * 1000u;
      g.temperature = 40;
      g.sm_clock = 1410;
      g.clock_event_reasons = i == 0 ? 0 : kClockEventGpuIdle;
      s.gpus.push_back(g);
    }
    ProcessSample p;
    p.time = s.time;
    p.gpu = 0;
    p.pid = 4242;
    p.user = "alice";
    p.command = "python train.py";
    p.slurm_job_id = "77";
    p.gpu_memory = 39ull << 30;
    s.processes.push_back(p);
    t.steps.push_back(s);
  }
  return t;
}

// --- trace ------------------------------------------------------------------------------------

TEST(MeterTrace, RoundTripsThroughAFile) {
  TempDir dir;
  const Trace t = SmallTrace(5);
  {
    std::ofstream out(dir.File("t.jsonl"));
    WriteTrace(out, t);
  }
  const Trace back = ReadTrace(dir.File("t.jsonl"));
  EXPECT_EQ(back.header, t.header);
  ASSERT_EQ(back.steps.size(), 5u);
  EXPECT_EQ(back.steps, t.steps);
}

TEST(MeterTrace, SteadyStepsBecomeOneRepeatLine) {
  // Idle GPUs: every step equal to the previous one plus an interval, energy advancing by
  // power x interval (62 W x 10 s = 620,000 mJ).
  Trace t;
  t.header.interval_seconds = 10;
  t.header.gpus.push_back(TraceGpu{0, "g", "GPU-0", 1000});
  for (int k = 0; k < 100; ++k) {
    TraceStep s;
    s.time = FromUnixMillis(kMonday + k * 10000);
    GpuSample g;
    g.time = s.time;
    g.gpu = 0;
    g.uuid = "GPU-0";
    g.memory_total = 1000;
    g.utilization_gpu = 0;
    g.power = 62;
    g.energy_mj = 5000000u + static_cast<uint64_t>(k) * 620000u;
    s.gpus.push_back(g);
    t.steps.push_back(s);
  }
  std::ostringstream out;
  TraceWriter w(out, t.header);
  for (const auto& s : t.steps) {
    w.Write(s);
  }
  w.Finish();
  EXPECT_EQ(w.lines(), 3);  // header, the first step, {"repeat": 99}
  EXPECT_NE(out.str().find("{\"repeat\":99}"), std::string::npos);
  TempDir dir;
  WriteText(dir.File("r.jsonl"), out.str());
  EXPECT_EQ(ReadTrace(dir.File("r.jsonl")).steps, t.steps);
}

struct BadTrace {
  std::string name;
  std::string lines;  // after the header
  int line;
  std::string field;
  std::string says;
};

TEST(MeterTrace, BadInputNamesFileLineAndField) {
  const std::string ok = R"({"time_ms":1772409600000,"gpus":[{"gpu":0,"utilization_gpu":5}]})";
  const std::vector<BadTrace> cases = {
      {"power not a number", ok + "\n" + R"({"time_ms":1772409601000,"gpus":[{"gpu":0,"power":"high"}]})", 3,
       "gpus[0].power", "expected a number"},
      {"utilisation over 100", R"({"time_ms":1772409600000,"gpus":[{"gpu":1,"utilization_gpu":101}]})", 2,
       "gpus[0].utilization_gpu", "0 to 100"},
      {"unknown GPU", R"({"time_ms":1772409600000,"gpus":[{"gpu":7}]})", 2, "gpus[0].gpu", "not in the header"},
      {"time goes back", ok + "\n" + R"({"time_ms":1772409599000,"gpus":[]})", 3, "time_ms", "not after"},
      {"repeat first", R"({"repeat":3})", 2, "repeat", "needs a step before it"},
      {"process without pid",
       R"({"time_ms":1772409600000,"gpus":[{"gpu":0,"processes":[{"user":"x"}]}]})", 2, "gpus[0].processes[0].pid",
       "missing"},
      {"not JSON", "{time_ms: 1}", 2, "", "not a JSON object"},
  };
  TempDir dir;
  for (const BadTrace& c : cases) {
    const std::string path = dir.File("bad.jsonl");
    WriteText(path, Header() + c.lines + "\n");
    try {
      ReadTrace(path);
      ADD_FAILURE() << c.name << ": no error";
    } catch (const InputError& e) {
      EXPECT_EQ(e.file(), path) << c.name;
      EXPECT_EQ(e.line(), c.line) << c.name;
      EXPECT_EQ(e.field(), c.field) << c.name;
      EXPECT_NE(e.message().find(c.says), std::string::npos) << c.name << ": " << e.message();
    }
  }
}

TEST(MeterTrace, HeaderErrors) {
  TempDir dir;
  const std::string path = dir.File("h.jsonl");
  WriteText(path, R"({"time_ms":1772409600000,"gpus":[]})" "\n");
  try {
    TraceReader::Open(path);
    ADD_FAILURE() << "a trace without a header was read";
  } catch (const InputError& e) {
    EXPECT_EQ(e.line(), 1);
    EXPECT_EQ(e.field(), "format");
  }
  WriteText(path, R"({"format":"gpuplan-meter-trace","version":9,"interval_seconds":1,"gpus":[{"index":0}]})" "\n");
  try {
    TraceReader::Open(path);
    ADD_FAILURE() << "a newer version was read";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "version");
  }
}

// Issue 24: every number of a trace has bounds, and a literal 0 (stored unsigned by the JSON
// parser) meets the lower bound like any other value. The ranges are those of docs/meter-trace.md.
TEST(MeterTrace, BoundsNameTheField) {
  const std::string ok = R"({"time_ms":1772409600000,"gpus":[{"gpu":0,"utilization_gpu":5}]})";
  const std::vector<BadTrace> cases = {
      {"time_ms 0", R"({"time_ms":0,"gpus":[]})", 2, "time_ms", "expected 946684800000 to 7258118400000, got 0"},
      {"time_ms after 2200", R"({"time_ms":7258118400001,"gpus":[]})", 2, "time_ms", "got 7258118400001"},
      {"pid 0", R"({"time_ms":1772409600000,"gpus":[{"gpu":0,"processes":[{"pid":0}]}]})", 2,
       "gpus[0].processes[0].pid", "expected 1 to 2147483647, got 0"},
      {"pid -5", R"({"time_ms":1772409600000,"gpus":[{"gpu":0,"processes":[{"pid":-5}]}]})", 2,
       "gpus[0].processes[0].pid", "got -5"},
      {"repeat 0", ok + "\n" + R"({"repeat":0})", 3, "repeat", "expected 1 to 100000, got 0"},
      {"repeat 2^31-1", ok + "\n" + R"({"repeat":2147483647})", 3, "repeat", "expected 1 to 100000, got 2147483647"},
      {"repeat 100001", ok + "\n" + R"({"repeat":100001})", 3, "repeat", "got 100001"},
      {"repeat null", ok + "\n" + R"({"repeat":null})", 3, "repeat", "got null"},
      // 16 TiB = 2^44 = 17592186044416 bytes is the most; one byte more is refused.
      {"memory_used over 16 TiB",
       R"({"time_ms":1772409600000,"gpus":[{"gpu":0,"memory_used":17592186044417}]})", 2,
       "gpus[0].memory_used", "expected 0 to 17592186044416"},
      {"gpu -1", R"({"time_ms":1772409600000,"gpus":[{"gpu":-1}]})", 2, "gpus[0].gpu", "expected 0 to 1023"},
  };
  TempDir dir;
  for (const BadTrace& c : cases) {
    const std::string path = dir.File("bad.jsonl");
    WriteText(path, Header() + c.lines + "\n");
    try {
      ReadTrace(path);
      ADD_FAILURE() << c.name << ": no error";
    } catch (const InputError& e) {
      EXPECT_EQ(e.file(), path) << c.name;
      EXPECT_EQ(e.line(), c.line) << c.name;
      EXPECT_EQ(e.field(), c.field) << c.name;
      EXPECT_NE(e.message().find(c.says), std::string::npos) << c.name << ": " << e.message();
    }
  }
}

TEST(MeterTrace, HeaderBounds) {
  TempDir dir;
  const std::string path = dir.File("h.jsonl");
  struct Case {
    std::string header;
    std::string field;
    std::string says;
  };
  const std::vector<Case> cases = {
      {R"({"format":"gpuplan-meter-trace","version":0,"interval_seconds":1,"gpus":[{"index":0}]})", "version",
       "expected 1 to 2147483647, got 0"},
      {R"({"format":"gpuplan-meter-trace","version":-1,"interval_seconds":1,"gpus":[{"index":0}]})", "version",
       "got -1"},
      {R"({"format":"gpuplan-meter-trace","version":1,"interval_seconds":1,"gpus":[{"index":-1}]})",
       "gpus[0].index", "expected 0 to 1023, got -1"},
      {R"({"format":"gpuplan-meter-trace","version":1,"interval_seconds":1,"gpus":[{"index":0,"memory_total":17592186044417}]})",
       "gpus[0].memory_total", "expected 0 to 17592186044416, got 17592186044417"},
      {R"({"format":"gpuplan-meter-trace","version":1,"interval_seconds":0,"gpus":[{"index":0}]})",
       "interval_seconds", "got 0"},
  };
  for (const Case& c : cases) {
    WriteText(path, c.header + "\n");
    try {
      TraceReader::Open(path);
      ADD_FAILURE() << c.header << ": no error";
    } catch (const InputError& e) {
      EXPECT_EQ(e.line(), 1) << c.header;
      EXPECT_EQ(e.field(), c.field) << c.header;
      EXPECT_NE(e.message().find(c.says), std::string::npos) << c.header << ": " << e.message();
    }
  }
}

TEST(MeterTrace, RepeatCapIsReadAndTheWriterSplitsLongerRuns) {
  // {"repeat": 100000} (the cap) after one step: 1 + 100,000 steps, the last 100,000 s later.
  TempDir dir;
  const std::string path = dir.File("cap.jsonl");
  WriteText(path, Header(1) + R"({"time_ms":1772409600000,"gpus":[{"gpu":0}]})" "\n" R"({"repeat":100000})" "\n");
  auto r = TraceReader::Open(path);
  TraceStep s;
  int64_t steps = 0;
  int64_t last = 0;
  while (r->Next(s)) {
    ++steps;
    last = UnixMillis(s.time);
  }
  EXPECT_EQ(steps, 100001);
  EXPECT_EQ(last, 1772409600000 + 100000 * 1000);

  // 250,001 equal idle steps (1 s apart): the first written out, then 250,000 repeats as
  // 100,000 + 100,000 + 50,000.
  Trace t;
  t.header.interval_seconds = 1;
  t.header.gpus.push_back(TraceGpu{0, "g", "GPU-0", 1000});
  std::ostringstream out;
  TraceWriter w(out, t.header);
  TraceStep step;
  step.time = FromUnixMillis(kMonday);
  GpuSample g;
  g.time = FromUnixMillis(kMonday);
  g.gpu = 0;
  g.uuid = "GPU-0";
  g.memory_total = 1000;
  g.utilization_gpu = 0;
  step.gpus.push_back(g);
  for (int k = 0; k <= 250000; ++k) {
    w.Write(step);
    step = RepeatStep(step, 1);
  }
  w.Finish();
  EXPECT_EQ(w.lines(), 5);  // header, step, three repeat lines
  const std::string text = out.str();
  EXPECT_NE(text.find("{\"repeat\":100000}\n{\"repeat\":100000}\n{\"repeat\":50000}\n"), std::string::npos);
}

TEST(MeterTrace, RepeatPastTheYear2200IsAnError) {
  // 7258118400000 is 2200-01-01; a step 1 s before it with an hour-long interval: the first
  // repeated step is past it.
  TempDir dir;
  const std::string path = dir.File("late.jsonl");
  WriteText(path, Header(1, 3600) + R"({"time_ms":7258118399000,"gpus":[{"gpu":0}]})" "\n" R"({"repeat":2})" "\n");
  try {
    ReadTrace(path);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.line(), 3);
    EXPECT_EQ(e.field(), "repeat");
    EXPECT_NE(e.message().find("2200"), std::string::npos) << e.message();
  }
}

TEST(MeterTrace, DeeplyNestedLineIsAnError) {
  TempDir dir;
  const std::string path = dir.File("deep.jsonl");
  const std::string deep = R"({"time_ms":1772409600000,"gpus":[{"gpu":0,"x":)" + std::string(100000, '[') +
                           std::string(100000, ']') + "}]}";
  WriteText(path, Header() + deep + "\n");
  try {
    ReadTrace(path);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.line(), 2);
    EXPECT_EQ(e.field(), "(nesting)");
    EXPECT_NE(e.message().find("deeper than 128"), std::string::npos) << e.message();
  }
}

// The example trace against its schedule (data/traces/README.md): 7 x 24 x 360 = 60,480 steps;
// GPU 3 has a process for 2 h = 720 steps; GPU 0 for 84 h = 30,240 steps; GPU 1 always.
TEST(MeterTrace, ExampleWeekMatchesItsSchedule) {
  auto r = TraceReader::Open(test::DataDir() + "/traces/lab-4xa100-week.jsonl");
  EXPECT_EQ(r->header().gpus.size(), 4u);
  EXPECT_EQ(r->header().interval_seconds, 10);
  int64_t steps = 0;
  std::array<int64_t, 4> with_process{};
  int64_t first = 0;
  int64_t last = 0;
  TraceStep s;
  while (r->Next(s)) {
    if (steps == 0) {
      first = UnixMillis(s.time);
    }
    last = UnixMillis(s.time);
    ++steps;
    for (const ProcessSample& p : s.processes) {
      ++with_process[static_cast<std::size_t>(p.gpu)];
    }
  }
  EXPECT_EQ(steps, 60480);
  EXPECT_EQ(first, kMonday);
  EXPECT_EQ(last, kMonday + 7 * 24 * 3600000LL - 10000);
  EXPECT_EQ(with_process[0], 84 * 360);
  EXPECT_EQ(with_process[1], 168 * 360);
  EXPECT_EQ(with_process[2], 20 * 360);
  EXPECT_EQ(with_process[3], 2 * 360);
}

// --- processes --------------------------------------------------------------------------------

TEST(MeterProcesses, CgroupForms) {
  const std::string id = "9a8b7c6d5e4f30211f2e3d4c5b6a79880a9b8c7d6e5f40312a3b4c5d6e7f8091";
  struct Case {
    std::string text;
    CgroupIdentity want;
  };
  const std::vector<Case> cases = {
      {"12:memory:/docker/" + id + "\n0::/\n", {id, {}, {}}},
      {"0::/system.slice/docker-" + id + ".scope\n", {id, {}, {}}},
      {"0::/machine.slice/libpod-" + id + ".scope/container\n", {id, {}, {}}},
      {"0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod0a1b2c3d_4e5f_6a7b_8c9d_0e1f2a3b4c5d.slice/"
       "crio-" + id + ".scope\n",
       {id, "0a1b2c3d-4e5f-6a7b-8c9d-0e1f2a3b4c5d", {}}},
      {"11:memory:/kubepods/burstable/pod0a1b2c3d-4e5f-6a7b-8c9d-0e1f2a3b4c5d/" + id + "\n",
       {id, "0a1b2c3d-4e5f-6a7b-8c9d-0e1f2a3b4c5d", {}}},
      {"0::/system.slice/containerd.service/kubepods-pod0a1b2c3d_4e5f_6a7b_8c9d_0e1f2a3b4c5d.slice:cri-containerd:" +
           id + "\n",
       {id, "0a1b2c3d-4e5f-6a7b-8c9d-0e1f2a3b4c5d", {}}},
      {"4:memory:/slurm/uid_1000/job_81234/step_0/task_0\n", {{}, {}, "81234"}},
      {"0::/system.slice/slurmstepd.scope/job_99/step_batch/user/task_0\n", {{}, {}, "99"}},
      {"0::/user.slice/user-1000.slice/session-3.scope\n", {}},
      {"0::/job_abc/x\n", {}},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(ParseCgroup(c.text), c.want) << c.text;
  }
}

TEST(MeterProcesses, FixtureTrees) {
  const std::string root = test::Fixture("proc");
  {
    const ProcessIdentity p = ReadProcessIdentity(61877, root);  // docker
    EXPECT_EQ(p.pid, 61877);
    EXPECT_EQ(p.user, "root");
    EXPECT_EQ(p.command, "/opt/conda/bin/python -m ipykernel_launcher -f kernel-1.json");
    EXPECT_EQ(p.container_id, "9a8b7c6d5e4f30211f2e3d4c5b6a79880a9b8c7d6e5f40312a3b4c5d6e7f8091");
    EXPECT_FALSE(p.pod_uid);
    EXPECT_FALSE(p.slurm_job_id);
  }
  {
    const ProcessIdentity p = ReadProcessIdentity(52001, root);  // kubepods burstable, cgroup v2
    EXPECT_EQ(p.user, "4000000");  // no such user: the number
    EXPECT_EQ(p.command, "python -m vllm.entrypoints.openai.api_server --model qwen2.5-7b");
    EXPECT_EQ(p.container_id, "3f4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f6071829");
    EXPECT_EQ(p.pod_uid, "8e0b7a2c-1d3f-4e5a-9b6c-7d8e9f0a1b2c");
    EXPECT_FALSE(p.slurm_job_id);
  }
  {
    const ProcessIdentity p = ReadProcessIdentity(41230, root);  // slurm cgroup
    EXPECT_EQ(p.slurm_job_id, "4711");
    EXPECT_EQ(p.command, "python train.py --config llama8b-lora.yaml");
    EXPECT_FALSE(p.container_id);
  }
  EXPECT_EQ(ReadProcessIdentity(41231, root).slurm_job_id, "4712");  // environ only
  {
    const ProcessIdentity p = ReadProcessIdentity(70315, root);  // plain
    EXPECT_EQ(p.user, "root");
    EXPECT_EQ(p.command, "python eval.py --ckpt runs/7/last.pt");
    EXPECT_FALSE(p.container_id);
    EXPECT_FALSE(p.pod_uid);
    EXPECT_FALSE(p.slurm_job_id);
  }
  EXPECT_EQ(ReadProcessIdentity(70316, root).command, "[nvidia-persiste]");  // empty cmdline: comm
  {
    const ProcessIdentity p = ReadProcessIdentity(99999, root);  // gone
    EXPECT_EQ(p.pid, 99999);
    EXPECT_FALSE(p.user);
    EXPECT_FALSE(p.command);
  }
}

TEST(MeterProcesses, CacheReadsAProcessOnce) {
  ProcessIdentityCache cache(test::Fixture("proc"));
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(cache.Lookup(41230).slurm_job_id, "4711");
    cache.Sweep();
  }
  EXPECT_EQ(cache.reads(), 1u);
  cache.Sweep();  // not looked up since: dropped
  cache.Sweep();
  EXPECT_EQ(cache.size(), 0u);
}

TEST(MeterProcesses, OwnProcessFromTheRealProc) {
  const ProcessIdentity p = ReadProcessIdentity(static_cast<int>(getpid()));
  ASSERT_TRUE(p.command);
  EXPECT_NE(p.command->find("gpuplan_unit_tests"), std::string::npos);
  EXPECT_TRUE(p.user);
}

// --- NVML processes ----------------------------------------------------------------------------

TEST(NvmlProcesses, BothEntrySizes) {
  // Two entries written by hand at 24 and at 32 bytes apart.
  for (const std::size_t stride : {kNvmlProcessInfoBytes, kNvmlProcessInfoCcBytes}) {
    std::vector<unsigned char> buf(2 * kNvmlProcessInfoCcBytes, 0);
    const auto put = [&](std::size_t i, unsigned pid, unsigned long long mem) {
      nvml::nvmlProcessInfo_t e{};
      e.pid = pid;
      e.usedGpuMemory = mem;
      e.gpuInstanceId = 0xFFFFFFFFu;
      e.computeInstanceId = 0xFFFFFFFFu;
      std::memcpy(buf.data() + i * stride, &e, sizeof e);
    };
    put(0, 1111, 5ull << 30);
    put(1, 2222, 7ull << 30);
    const auto got = ProcessesFromNvmlBuffer(buf.data(), buf.size(), 2);
    ASSERT_EQ(got.size(), 2u) << stride;
    EXPECT_EQ(got[0].pid, 1111);
    EXPECT_EQ(got[0].used_memory_bytes, 5ull << 30);
    EXPECT_EQ(got[1].pid, 2222) << stride;
    EXPECT_EQ(got[1].used_memory_bytes, 7ull << 30) << stride;
  }
}

// A recording like the H100 fixture with processes on GPU 0: ours (so /proc has it) and pid 1.
std::string RecordingWithProcesses(const TempDir& dir) {
  std::ifstream in(test::Fixture("nvml/h100-590.recording.json"));
  nlohmann::json j = nlohmann::json::parse(in);
  j["snapshots"][0]["gpus"][0]["processes"] = nlohmann::json::array(
      {{{"pid", static_cast<int>(getpid())}, {"used_memory", 3ull << 30}}, {{"pid", 1}, {"used_memory", 1ull << 30}}});
  const std::string path = dir.File("rec.json");
  WriteText(path, j.dump());
  return path;
}

class FakeNvmlProcesses : public ::testing::TestWithParam<const char*> {};

TEST_P(FakeNvmlProcesses, NvmlSourceReadsTheProcessList) {
  TempDir dir;
  setenv("GPUPLAN_FAKE_NVML", RecordingWithProcesses(dir).c_str(), 1);
  setenv("GPUPLAN_FAKE_NVML_PROCESS_STRIDE", GetParam(), 1);
  auto src = NvmlSource::Open(GPUPLAN_FAKE_NVML_LIB);
  const SystemSnapshot s = src->Snapshot();
  unsetenv("GPUPLAN_FAKE_NVML_PROCESS_STRIDE");
  unsetenv("GPUPLAN_FAKE_NVML");
  ASSERT_EQ(s.gpus.size(), 1u);
  ASSERT_TRUE(s.gpus[0].processes);
  ASSERT_EQ(s.gpus[0].processes->size(), 2u);
  EXPECT_EQ((*s.gpus[0].processes)[0].pid, static_cast<int>(getpid()));
  EXPECT_EQ((*s.gpus[0].processes)[0].used_memory_bytes, 3ull << 30);
  EXPECT_EQ((*s.gpus[0].processes)[1].pid, 1);
  EXPECT_EQ((*s.gpus[0].processes)[1].used_memory_bytes, 1ull << 30);
}
INSTANTIATE_TEST_SUITE_P(Strides, FakeNvmlProcesses, ::testing::Values("24", "32"));

TEST(FakeNvmlProcessesAbsent, NotSupportedIsNotMeasured) {
  setenv("GPUPLAN_FAKE_NVML", test::Fixture("nvml/h100-590.recording.json").c_str(), 1);
  auto src = NvmlSource::Open(GPUPLAN_FAKE_NVML_LIB);
  const SystemSnapshot s = src->Snapshot();
  unsetenv("GPUPLAN_FAKE_NVML");
  ASSERT_EQ(s.gpus.size(), 1u);
  EXPECT_FALSE(s.gpus[0].processes);
  ASSERT_TRUE(s.gpus[0].not_measured.count("processes"));
  EXPECT_NE(s.gpus[0].not_measured.at("processes").find("NOT_SUPPORTED"), std::string::npos);
}

// --- schema 2: process.pod_uid ----------------------------------------------------------------

TEST(MeterStoreSchema, VersionOneFileIsReadAndMigrated) {
  TempDir dir;
  const std::string db = dir.File("v1.db");
  const auto sample = [](const std::optional<std::string>& pod_uid) {
    ProcessSample p;
    p.time = FromUnixMillis(kMonday);
    p.pid = 7;
    p.pod_uid = pod_uid;
    return std::vector<ProcessSample>{p};
  };
  {
    MeterStore s = MeterStore::Open(db);
    s.Append(sample(std::nullopt));
    s.Flush(FromUnixMillis(kMonday + 1000));
  }
  // Make it a version-1 file: no pod_uid column.
  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &h), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(h, "ALTER TABLE process DROP COLUMN pod_uid; PRAGMA user_version = 1", nullptr, nullptr,
                         nullptr),
            SQLITE_OK);
  sqlite3_close(h);
  {
    const MeterStore r = MeterStore::Open(db, ReadOnly());  // read as it is
    const auto got = r.ProcessSamples({FromUnixMillis(kMonday), FromUnixMillis(kMonday + 1000)});
    ASSERT_EQ(got.size(), 1u);
    EXPECT_FALSE(got[0].pod_uid);
  }
  {
    MeterStore w = MeterStore::Open(db);  // migrated
    std::vector<ProcessSample> p = sample("8e0b7a2c-1d3f-4e5a-9b6c-7d8e9f0a1b2c");
    p[0].time = FromUnixMillis(kMonday + 1000);
    w.Append(p);
    w.Flush(FromUnixMillis(kMonday + 2000));
  }
  ASSERT_EQ(sqlite3_open(db.c_str(), &h), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(h, "PRAGMA user_version", -1, &st, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(st, 0), 2);
  sqlite3_finalize(st);
  sqlite3_close(h);
  const auto got = MeterStore::Open(db, ReadOnly()).ProcessSamples({FromUnixMillis(kMonday), FromUnixMillis(kMonday + 2000)});
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[1].pod_uid, "8e0b7a2c-1d3f-4e5a-9b6c-7d8e9f0a1b2c");
}

// --- the agent ---------------------------------------------------------------------------------

struct Recorder : MeterObserver {
  int starts = 0;
  int ticks = 0;
  int behind = 0;
  int caught_up = 0;
  int stops = 0;
  std::vector<std::string> messages;
  std::function<void(int64_t)> on_tick;
  std::function<void()> on_behind;
  void OnStart(const std::string&, const TraceHeader&) override { ++starts; }
  void OnTick(const TraceStep&, int64_t tick) override {
    ++ticks;
    if (on_tick) {
      on_tick(tick);
    }
  }
  void OnStoreBehind(const FlushStatus& s) override {
    ++behind;
    messages.push_back(s.reason);
    if (on_behind) {
      on_behind();
    }
  }
  void OnStoreCaughtUp(const FlushStatus&) override { ++caught_up; }
  void OnMessage(const std::string& line) override { messages.push_back(line); }
  void OnStop(const MeterRunSummary&) override { ++stops; }
};

std::string WriteSmallTrace(const TempDir& dir, int steps) {
  const std::string path = dir.File("small.jsonl");
  std::ofstream out(path);
  WriteTrace(out, SmallTrace(steps));
  return path;
}

TEST(MeterAgent, ReplayStoresEveryTick) {
  TempDir dir;
  MeterAgentRequest r;
  r.db = dir.File("m.db");
  r.replay = WriteSmallTrace(dir, 30);
  ManualMeterClock clock(1e9);
  Recorder rec;
  MeterLatest latest;
  r.latest = &latest;
  const MeterRunSummary s = RunMeter(r, clock, &rec);
  EXPECT_EQ(s.ticks, 30);
  EXPECT_EQ(rec.ticks, 30);
  EXPECT_EQ(rec.starts, 1);
  EXPECT_EQ(rec.stops, 1);
  EXPECT_EQ(rec.behind, 0);
  EXPECT_EQ(s.buffered_at_exit, 0u);
  EXPECT_EQ(clock.MonotonicSeconds(), 29);  // speed 1: the last step 29 s after the first
  const MeterStore store = MeterStore::Open(r.db, ReadOnly());
  const TimeRange all{FromUnixMillis(kMonday), FromUnixMillis(kMonday + 3600000)};
  EXPECT_EQ(store.GpuSamples(all).size(), 60u);  // 30 ticks x 2 GPUs
  const auto procs = store.ProcessSamples(all);
  ASSERT_EQ(procs.size(), 30u);
  EXPECT_EQ(procs[0].slurm_job_id, "77");
  EXPECT_EQ(latest.Get().ticks, 30);
  ASSERT_TRUE(latest.Get().step);
  EXPECT_EQ(UnixMillis(latest.Get().step->time), kMonday + 29000);
}

TEST(MeterAgent, SpeedAndDurationAndInterval) {
  TempDir dir;
  MeterAgentRequest r;
  r.db = dir.File("m.db");
  r.replay = WriteSmallTrace(dir, 30);
  r.speed = 10;
  r.duration_seconds = 20;  // trace seconds: steps 0..19
  r.interval_seconds = 2;   // every other step
  ManualMeterClock clock(1e9);
  const MeterRunSummary s = RunMeter(r, clock);
  EXPECT_EQ(s.ticks, 10);                        // 0, 2, ..., 18
  EXPECT_DOUBLE_EQ(clock.MonotonicSeconds(), 1.8);  // 18 trace seconds at 10x
}

TEST(MeterAgent, LockedStoreKeepsSamplingSaysSoOnceAndCatchesUp) {
  TempDir dir;
  MeterAgentRequest r;
  r.db = dir.File("m.db");
  r.replay = WriteSmallTrace(dir, 60);
  r.flush_seconds = 5;
  {
    MeterStore::Open(r.db);  // create the schema first
  }
  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open(r.db.c_str(), &other), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(other, "BEGIN EXCLUSIVE", nullptr, nullptr, nullptr), SQLITE_OK);
  std::thread release;
  Recorder rec;
  rec.on_behind = [&] {
    // The agent said the store is behind (its first flush found the lock): release the lock a
    // little later, so the writer retries against it (each try waits the 100 ms busy timeout)
    // while the sampler goes on.
    release = std::thread([other] {
      std::this_thread::sleep_for(std::chrono::milliseconds(350));
      sqlite3_exec(other, "COMMIT", nullptr, nullptr, nullptr);
    });
  };
  ManualMeterClock clock(1e9);
  const MeterRunSummary s = RunMeter(r, clock, &rec);
  ASSERT_TRUE(release.joinable());
  release.join();
  sqlite3_close(other);
  EXPECT_EQ(s.ticks, 60);         // sampling went on
  EXPECT_EQ(rec.behind, 1);       // said once, though several flushes failed
  EXPECT_EQ(rec.caught_up, 1);
  ASSERT_FALSE(rec.messages.empty());
  EXPECT_NE(rec.messages[0].find("locked"), std::string::npos) << rec.messages[0];
  EXPECT_EQ(s.buffered_at_exit, 0u);
  EXPECT_GE(s.store.flushes_behind, 1u) << "flushes that found the lock";
  const MeterStore store = MeterStore::Open(r.db, ReadOnly());
  EXPECT_EQ(store.GpuSamples({FromUnixMillis(kMonday), FromUnixMillis(kMonday + 3600000)}).size(), 120u);  // nothing lost
  EXPECT_EQ(store.ProcessSamples({FromUnixMillis(kMonday), FromUnixMillis(kMonday + 3600000)}).size(), 60u);
}

TEST(MeterAgent, FullSpeedReplayCannotOutrunTheStore) {
  // 3,000 steps of 2 GPUs and a process (9,000 rows) through a store that holds at most 2,000
  // rows in memory: the replay waits for the writer instead of overflowing its buffer.
  TempDir dir;
  MeterAgentRequest r;
  r.db = dir.File("m.db");
  r.replay = WriteSmallTrace(dir, 3000);
  r.speed = 1e9;
  r.store.max_buffered_samples = 2000;
  r.store.max_samples_per_flush = 500;
  ManualMeterClock clock(1e9);
  const MeterRunSummary s = RunMeter(r, clock);
  EXPECT_EQ(s.ticks, 3000);
  EXPECT_EQ(s.store.dropped_overflow, 0u);
  EXPECT_EQ(s.store.written, 9000u);
  const MeterStore store = MeterStore::Open(r.db, ReadOnly());
  EXPECT_EQ(store.GpuSamples({FromUnixMillis(kMonday), FromUnixMillis(kMonday + 3600000)}).size(), 6000u);
}

TEST(MeterAgent, LiveThroughFakeNvmlNamesOurProcess) {
  TempDir dir;
  setenv("GPUPLAN_FAKE_NVML", RecordingWithProcesses(dir).c_str(), 1);
  MeterAgentRequest r;
  r.db = dir.File("live.db");
  r.nvml_library = GPUPLAN_FAKE_NVML_LIB;
  r.duration_seconds = 3;
  ManualMeterClock clock(1772409600.0);
  const MeterRunSummary s = RunMeter(r, clock);
  unsetenv("GPUPLAN_FAKE_NVML");
  EXPECT_EQ(s.ticks, 3);
  const MeterStore store = MeterStore::Open(r.db, ReadOnly());
  const TimeRange all{FromUnixMillis(kMonday), FromUnixMillis(kMonday + 3600000)};
  EXPECT_EQ(store.GpuSamples(all).size(), 3u);
  const auto procs = store.ProcessSamples(all);
  ASSERT_EQ(procs.size(), 6u);  // 2 processes x 3 ticks
  bool ours = false;
  for (const auto& p : procs) {
    if (p.pid == static_cast<int>(getpid())) {
      ours = true;
      ASSERT_TRUE(p.command);
      EXPECT_NE(p.command->find("gpuplan_unit_tests"), std::string::npos);
      EXPECT_EQ(p.gpu_memory, 3ull << 30);
    }
  }
  EXPECT_TRUE(ours);
}

TEST(MeterAgent, NoDriverIsAnEnvironmentErrorAndCreatesNoFile) {
  TempDir dir;
  MeterAgentRequest r;
  r.db = dir.File("none.db");
  r.nvml_library = "/nonexistent/libnvidia-ml.so.1";
  ManualMeterClock clock(1e9);
  EXPECT_THROW(RunMeter(r, clock), EnvironmentError);
  EXPECT_FALSE(fs::exists(r.db));
}

TEST(MeterAgent, RequestErrorsNameTheFlag) {
  MeterAgentRequest r;
  r.db = "x.db";
  r.flush_seconds = 30;
  try {
    ValidateMeterAgentRequest(r);
    ADD_FAILURE();
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "--flush-seconds");
  }
  r.flush_seconds = 5;
  r.speed = 100;  // without --replay
  try {
    ValidateMeterAgentRequest(r);
    ADD_FAILURE();
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "--speed");
  }
}

TEST(MeterAgent, StopRequestEndsTheLoop) {
  TempDir dir;
  MeterAgentRequest r;
  r.db = dir.File("m.db");
  r.replay = WriteSmallTrace(dir, 30);
  Recorder rec;
  rec.on_tick = [](int64_t tick) {
    if (tick == 7) {
      RequestMeterStop();
    }
  };
  ManualMeterClock clock(1e9);
  const MeterRunSummary s = RunMeter(r, clock, &rec);
  EXPECT_TRUE(s.stopped);
  EXPECT_EQ(s.ticks, 7);
  const MeterStore store = MeterStore::Open(r.db, ReadOnly());
  EXPECT_EQ(store.GpuSamples({FromUnixMillis(kMonday), FromUnixMillis(kMonday + 3600000)}).size(), 14u);  // flushed at stop
  ResetMeterStop();
}

// --- one store per server; steps from the future; steps too old -------------------------------

// The same trace as another server's: its GPUs have other UUIDs.
Trace OtherServer(Trace t) {
  t.header.host = "other";
  for (TraceGpu& g : t.header.gpus) {
    g.uuid = "GPU-other-" + std::to_string(g.index);
  }
  for (TraceStep& s : t.steps) {
    for (GpuSample& g : s.gpus) {
      g.uuid = "GPU-other-" + std::to_string(g.gpu);
    }
  }
  return t;
}

std::string WriteTraceFile(const TempDir& dir, const std::string& name, const Trace& t) {
  const std::string path = dir.File(name);
  std::ofstream out(path);
  WriteTrace(out, t);
  return path;
}

// Server A's trace, then server B's at the same times into the same file: B's first flush meets
// A's GPU 0 at A's first step (2026-03-02T00:00:00Z) and the replay ends with an InputError
// naming the database and both UUIDs; A's 60 samples stay A's, none of B's is written. A's
// trace replayed again is still fine (the same device replaces its own rows).
TEST(MeterAgent, AnotherServersTraceAtTheSameTimesIsRefusedAndLosesNothing) {
  TempDir dir;
  MeterAgentRequest a;
  a.db = dir.File("ab.db");
  a.replay = WriteTraceFile(dir, "a.jsonl", SmallTrace(30));
  a.speed = 1e9;
  ManualMeterClock clock_a(1e9);
  EXPECT_EQ(RunMeter(a, clock_a).store.written, 90u);  // 30 steps x (2 GPUs + 1 process)
  MeterAgentRequest b = a;
  b.replay = WriteTraceFile(dir, "b.jsonl", OtherServer(SmallTrace(30)));
  ManualMeterClock clock_b(1e9);
  try {
    RunMeter(b, clock_b);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), a.db);
    EXPECT_NE(e.message().find("already holds GPU 0 at 2026-03-02T00:00:00Z"), std::string::npos) << e.what();
    EXPECT_NE(e.message().find("from GPU-0; this sample is from GPU-other-0"), std::string::npos) << e.what();
  }
  auto check_a = [&] {
    const MeterStore store = MeterStore::Open(a.db, ReadOnly());
    const TimeRange all{FromUnixMillis(kMonday), FromUnixMillis(kMonday + 3600000)};
    const auto samples = store.GpuSamples(all);
    ASSERT_EQ(samples.size(), 60u);
    for (const GpuSample& g : samples) {
      EXPECT_EQ(g.uuid, "GPU-" + std::to_string(g.gpu));
      EXPECT_EQ(g.utilization_gpu, g.gpu == 0 ? 90 + (UnixMillis(g.time) - kMonday) / 1000 % 3 : 0);
    }
    EXPECT_EQ(store.ProcessSamples(all).size(), 30u);
  };
  check_a();
  ManualMeterClock clock_again(1e9);
  EXPECT_NO_THROW(RunMeter(a, clock_again));
  check_a();
}

// --resume continues the trace the store was written from: another server's trace (other UUIDs)
// is an InputError naming its header's first GPU UUID, not "30 steps already in the store".
TEST(MeterAgent, ResumingAnotherServersTraceIsAnErrorNamingItsHeader) {
  TempDir dir;
  MeterAgentRequest a;
  a.db = dir.File("ab.db");
  a.replay = WriteTraceFile(dir, "a.jsonl", SmallTrace(30));
  a.speed = 1e9;
  ManualMeterClock clock_a(1e9);
  RunMeter(a, clock_a);
  MeterAgentRequest b = a;
  b.resume = true;
  b.replay = WriteTraceFile(dir, "b.jsonl", OtherServer(SmallTrace(30)));
  ManualMeterClock clock_b(1e9);
  try {
    RunMeter(b, clock_b);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), b.replay);
    EXPECT_EQ(e.line(), 1);
    EXPECT_EQ(e.field(), "gpus[0].uuid");
    EXPECT_NE(e.message().find("its GPU 0 is GPU-0"), std::string::npos) << e.what();
    EXPECT_NE(e.message().find("this trace's is GPU-other-0"), std::string::npos) << e.what();
  }
  // Its own trace resumes: all 30 steps are stored, none replayed.
  a.resume = true;
  ManualMeterClock clock_c(1e9);
  const MeterRunSummary s = RunMeter(a, clock_c);
  EXPECT_EQ(s.resumed_after_steps, 30);
  EXPECT_EQ(s.ticks, 0);
}

// A step dated 400 days after this machine's clock: an InputError naming the trace, its line
// (header 1, the 120 steps 2-121, the future step 122) and time_ms. The 120 steps before it are
// kept and rolled up (minutes 0 and 1 of 2 GPUs: 4 rows); nothing is deleted.
TEST(MeterAgent, AStepDatedAfterTheMachinesClockIsAnErrorAndDeletesNothing) {
  TempDir dir;
  Trace t = SmallTrace(120);
  TraceStep future = t.steps.back();
  const int64_t now_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
  future.time = FromUnixMillis(now_ms + 400LL * 86400000);
  for (GpuSample& g : future.gpus) {
    g.time = future.time;
  }
  for (ProcessSample& p : future.processes) {
    p.time = future.time;
  }
  t.steps.push_back(future);
  MeterAgentRequest r;
  r.db = dir.File("m.db");
  r.replay = WriteTraceFile(dir, "future.jsonl", t);
  r.speed = 1e9;
  ManualMeterClock clock(1e9);
  try {
    RunMeter(r, clock);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), r.replay);
    EXPECT_EQ(e.line(), 122);
    EXPECT_EQ(e.field(), "time_ms");
    EXPECT_NE(e.message().find("after this machine's clock"), std::string::npos) << e.what();
  }
  const MeterStore store = MeterStore::Open(r.db, ReadOnly());
  const TimeRange all{FromUnixMillis(kMonday), FromUnixMillis(now_ms + 500LL * 86400000)};
  EXPECT_EQ(store.GpuSamples(all).size(), 240u);
  EXPECT_EQ(store.GpuRollups(Resolution::kMinute, all).size(), 4u);
  EXPECT_EQ(store.Extent().samples_complete, FromUnixMillis(kMonday + 119000));
}

// Steps older than the raw cut are dropped, and said. Raw samples kept 3 minutes: a 10-minute
// replay (0:00-9:59) rolls up through 10:00 and cuts raw samples before floor(9:59 - 3:00) =
// 6:00; steps are then accepted from 6:00 + the 10 s gap rounded up to a minute = 7:00. The
// first minute replayed again (60 steps x (2 GPUs + 1 process) = 180 rows) is all too old.
TEST(MeterAgent, StepsOlderThanTheRawCutAreDroppedAndSaid) {
  TempDir dir;
  MeterAgentRequest r;
  r.db = dir.File("m.db");
  r.replay = WriteTraceFile(dir, "ten.jsonl", SmallTrace(600));
  r.speed = 1e9;
  r.store.raw_retention_hours = 0.05;
  ManualMeterClock clock(1e9);
  RunMeter(r, clock);
  r.replay = WriteTraceFile(dir, "one.jsonl", SmallTrace(60));
  ManualMeterClock clock2(1e9);
  Recorder rec;
  const MeterRunSummary s = RunMeter(r, clock2, &rec);
  EXPECT_EQ(s.store.written, 0u);
  EXPECT_EQ(s.store.dropped_too_old, 180u);
  const std::string said = "meter database " + r.db +
                           ": dropped 180 samples older than 2026-03-02T00:07:00Z: retention deleted the raw "
                           "samples before 2026-03-02T00:06:00Z and rolled up their minutes, so these cannot be "
                           "counted";
  EXPECT_EQ(std::count(rec.messages.begin(), rec.messages.end(), said), 1) << ::testing::PrintToString(rec.messages);
}

TEST(MeterAgent, RecordWritesAReplayableTrace) {
  TempDir dir;
  setenv("GPUPLAN_FAKE_NVML", RecordingWithProcesses(dir).c_str(), 1);
  MeterRecordRequest r;
  r.out = dir.File("rec.jsonl");
  r.nvml_library = GPUPLAN_FAKE_NVML_LIB;
  r.duration_seconds = 4;
  ManualMeterClock clock(1772409600.0);
  const MeterRunSummary s = RecordMeterTrace(r, clock);
  unsetenv("GPUPLAN_FAKE_NVML");
  EXPECT_EQ(s.ticks, 4);
  const Trace t = ReadTrace(r.out);
  ASSERT_EQ(t.steps.size(), 4u);
  EXPECT_EQ(t.header.gpus.size(), 1u);
  EXPECT_EQ(t.header.gpus[0].name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(UnixMillis(t.steps[3].time), kMonday + 3000);
  ASSERT_EQ(t.steps[0].processes.size(), 2u);
  EXPECT_EQ(t.steps[0].processes[0].pid, static_cast<int>(getpid()));
  // Health: the recording's volatile uncorrected ECC count (0) at every step, and its one event, XID 79
  // on GPU 0, at the first step only (the inventory read before it takes no event).
  const std::vector<GpuHealthSample> first{{0, 0, {79}}}, later{{0, 0, {}}};
  EXPECT_EQ(t.steps[0].health, first);
  EXPECT_EQ(t.steps[1].health, later);
  EXPECT_EQ(t.steps[3].health, later);
}

TEST(MeterTrace, HealthRoundTripsAndAnXidIsNotRepeated) {
  TempDir dir;
  Trace t = SmallTrace(1);
  t.steps[0].health = {{0, 3, {}}};
  t.steps.push_back(RepeatStep(t.steps[0], 1));
  t.steps.push_back(RepeatStep(t.steps[1], 1));
  t.steps[2].health = {{0, 3, {48, 79}}, {1, std::nullopt, {13}}};
  t.steps.push_back(RepeatStep(t.steps[2], 1));
  const std::vector<GpuHealthSample> counts_only{{0, 3, {}}};
  EXPECT_EQ(t.steps[3].health, counts_only);  // the count kept, the events not repeated
  std::ostringstream out;
  WriteTrace(out, t);
  const std::string text = out.str();
  // Step 1 repeats step 0; step 2 has events, so it is written out; step 3 repeats it without them.
  // Lines: header, step 0, {"repeat":1}, step 2, {"repeat":1}.
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 5);
  EXPECT_NE(text.find(R"("ecc_uncorrected":3)"), std::string::npos);
  EXPECT_NE(text.find(R"("xids":[48,79])"), std::string::npos);
  WriteText(dir.File("h.jsonl"), out.str());
  const Trace back = ReadTrace(dir.File("h.jsonl"));
  ASSERT_EQ(back.steps.size(), 4u);
  EXPECT_EQ(back.steps[2].health, t.steps[2].health);
  EXPECT_EQ(back.steps[3].health, t.steps[3].health);
  // A bad XID names the field.
  WriteText(dir.File("bad.jsonl"), Header() + R"({"time_ms":1772409600000,"gpus":[{"gpu":0,"xids":["79"]}]})" "\n");
  try {
    ReadTrace(dir.File("bad.jsonl"));
    ADD_FAILURE();
  } catch (const InputError& e) {
    EXPECT_EQ(e.line(), 2);
    EXPECT_EQ(e.field(), "gpus[0].xids[0]");
  }
}

TEST(MeterAgent, EccRiseAndXidOfAReplayAlertAndReachMetrics) {
  // GPU 1's uncorrected ECC count is 0 for two steps and 2 from the third; GPU 0 reports XID 79 at the
  // fourth. Expected: one ECC alert (0 -> 2) and one XID alert, both critical; /metrics shows XID 79 on
  // GPU 0, 0 on GPU 1, and GPU 1's count 2.
  TempDir dir;
  Trace t = SmallTrace(6);
  for (std::size_t k = 0; k < t.steps.size(); ++k) {
    t.steps[k].health = {{1, k < 2 ? 0u : 2u, {}}};
  }
  t.steps[3].health.insert(t.steps[3].health.begin(), GpuHealthSample{0, std::nullopt, {79}});
  std::ofstream(dir.File("ecc.jsonl")) << [&] {
    std::ostringstream o;
    WriteTrace(o, t);
    return o.str();
  }();
  MeterAgentRequest r;
  r.db = dir.File("m.db");
  r.replay = dir.File("ecc.jsonl");
  MeterMonitorOptions o;
  MeterMonitor monitor(o, nullptr, nullptr);
  ManualMeterClock clock(1e9);
  RunMeter(r, clock, &monitor);
  std::vector<Alert> health;
  for (const Alert& a : monitor.alerts()) {
    if (a.kind == AlertKind::kEcc || a.kind == AlertKind::kXid) health.push_back(a);
  }
  ASSERT_EQ(health.size(), 2u);
  EXPECT_EQ(health[0].kind, AlertKind::kEcc);
  EXPECT_EQ(health[0].gpu, 1);
  EXPECT_EQ(UnixMillis(health[0].at), kMonday + 2000);
  EXPECT_NE(health[0].summary.find("from 0 to 2"), std::string::npos);
  EXPECT_EQ(health[1].kind, AlertKind::kXid);
  EXPECT_EQ(health[1].gpu, 0);
  EXPECT_EQ(UnixMillis(health[1].at), kMonday + 3000);
  EXPECT_EQ(health[1].severity, "critical");
  const std::string text = RenderPrometheusText(monitor.metrics().Snapshot());
  EXPECT_NE(text.find(R"(DCGM_FI_DEV_XID_ERRORS{gpu="0",)"), std::string::npos);
  const auto line_of = [&](const std::string& start) {
    const auto at = text.find(start);
    return at == std::string::npos ? std::string() : text.substr(at, text.find('\n', at) - at);
  };
  EXPECT_TRUE(line_of(R"(DCGM_FI_DEV_XID_ERRORS{gpu="0",)").ends_with(" 79"));
  EXPECT_TRUE(line_of(R"(DCGM_FI_DEV_XID_ERRORS{gpu="1",)").ends_with(" 0"));
  EXPECT_EQ(line_of(R"(gpuplan_gpu_ecc_uncorrected_errors_total{gpu="1",)"),
            R"(gpuplan_gpu_ecc_uncorrected_errors_total{gpu="1",uuid="GPU-1"} 2)");
}

TEST(MeterAgent, LiveXidThroughFakeNvmlAlerts) {
  // The fake NVML delivers the recording's one event (XID 79 on GPU 0) once: the live agent raises one
  // XID alert at its first tick and no ECC alert (the count stays 0).
  TempDir dir;
  setenv("GPUPLAN_FAKE_NVML", RecordingWithProcesses(dir).c_str(), 1);
  MeterAgentRequest r;
  r.db = dir.File("live.db");
  r.nvml_library = GPUPLAN_FAKE_NVML_LIB;
  r.duration_seconds = 3;
  MeterMonitorOptions o;
  MeterMonitor monitor(o, nullptr, nullptr);
  ManualMeterClock clock(1772409600.0);
  RunMeter(r, clock, &monitor);
  unsetenv("GPUPLAN_FAKE_NVML");
  int xid = 0, ecc = 0;
  for (const Alert& a : monitor.alerts()) {
    xid += a.kind == AlertKind::kXid ? 1 : 0;
    ecc += a.kind == AlertKind::kEcc ? 1 : 0;
    if (a.kind == AlertKind::kXid) {
      EXPECT_EQ(a.summary, "GPU 0: XID 79 reported by the driver");
      EXPECT_EQ(UnixMillis(a.at), kMonday);
    }
  }
  EXPECT_EQ(xid, 1);
  EXPECT_EQ(ecc, 0);
}

}  // namespace
}  // namespace gpuplan
