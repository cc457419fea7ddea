// A replay never loses what the store holds (issue 24 req. 1): a replay that reaches no step
// leaves the file as it was, a stopped replay continues with --resume, and a replay run again
// from its start, or stopped and resumed any number of times, leaves the same tables as one
// uninterrupted run. The expected tables come from that uninterrupted run of the same trace,
// never from the run under test; the trace crosses the 48 h raw cut so retention takes part.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "meter/agent.h"
#include "meter/alerts.h"
#include "meter/store.h"
#include "meter/trace.h"

namespace gpuplan {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kStart = 1772409600000;  // 2026-03-02T00:00:00Z
constexpr int kSteps = 3 * 8640;           // 3 days every 10 s: past the 48 h raw retention

class Folder {
 public:
  Folder() {
    char pattern[] = "/tmp/gpuplan-resume-XXXXXX";
    path_ = mkdtemp(pattern);
  }
  ~Folder() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// One GPU every 10 s; a job on it for the first 40 minutes of every hour (busy, 300 W, energy
// rising with it), idle otherwise.
std::string WriteDays(const Folder& dir, const std::string& name, int steps) {
  Trace t;
  t.header.host = "resume";
  t.header.interval_seconds = 10;
  t.header.gpus.push_back(TraceGpu{0, "NVIDIA A100-SXM4-80GB", "GPU-0", 85899345920ull});
  uint64_t energy = 5000000;
  for (int k = 0; k < steps; ++k) {
    TraceStep s;
    s.time = FromUnixMillis(kStart + int64_t{k} * 10000);
    const bool job = (k % 360) < 240;
    GpuSample g;
    g.time = s.time;
    g.gpu = 0;
    g.uuid = "GPU-0";
    g.memory_total = 85899345920ull;
    g.utilization_gpu = job ? 95 : 0;
    g.power = job ? 300.0 : 60.0;
    energy += job ? 3000000 : 600000;  // W x 10 s, in mJ
    g.energy_mj = energy;
    s.gpus.push_back(g);
    if (job) {
      ProcessSample p;
      p.time = s.time;
      p.gpu = 0;
      p.pid = 1000 + k / 360;  // a new process every hour
      p.user = "alice";
      p.command = "python train.py";
      p.gpu_memory = 30ull << 30;
      s.processes.push_back(p);
    }
    t.steps.push_back(s);
  }
  const std::string path = dir.File(name);
  std::ofstream out(path);
  WriteTrace(out, t);
  return path;
}

// Every row of every table and every meta value, in key order: two equal dumps are two files
// that hold the same data.
std::string Dump(const std::string& db) {
  sqlite3* h = nullptr;
  EXPECT_EQ(sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  std::string out;
  for (const char* sql :
       {"SELECT key, value FROM meta ORDER BY key",
        "SELECT * FROM gpu_sample ORDER BY time_ms, gpu", "SELECT * FROM process_sample ORDER BY time_ms, gpu, process_id",
        "SELECT * FROM gpu_minute ORDER BY bucket_ms, gpu", "SELECT * FROM gpu_hour ORDER BY bucket_ms, gpu",
        "SELECT * FROM process_minute ORDER BY bucket_ms, gpu, process_id",
        "SELECT * FROM process_hour ORDER BY bucket_ms, gpu, process_id",
        "SELECT pid, user, command FROM process ORDER BY id"}) {
    sqlite3_stmt* st = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(h, sql, -1, &st, nullptr), SQLITE_OK) << sql;
    int64_t rows = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
      ++rows;
      for (int c = 0; c < sqlite3_column_count(st); ++c) {
        const unsigned char* v = sqlite3_column_text(st, c);
        out += v != nullptr ? reinterpret_cast<const char*>(v) : "NULL";
        out += c + 1 < sqlite3_column_count(st) ? "|" : "\n";
      }
    }
    sqlite3_finalize(st);
    out += std::string("-- ") + sql + ": " + std::to_string(rows) + " rows\n";
  }
  sqlite3_close(h);
  return out;
}

MeterRunSummary Replay(const std::string& db, const std::string& trace, bool resume = false) {
  MeterAgentRequest r;
  r.db = db;
  r.replay = trace;
  r.speed = 1e12;
  r.resume = resume;
  ManualMeterClock clock(1e9);
  return RunMeter(r, clock);
}

// Stops the replay after `tick` ticks (as SIGTERM does: RequestMeterStop).
struct StopAt : MeterObserver {
  explicit StopAt(int64_t t) : tick(t) {}
  void OnTick(const TraceStep&, int64_t n) override {
    if (n == tick) {
      RequestMeterStop();
    }
  }
  int64_t tick;
};

class MeterResume : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new Folder();
    trace_ = WriteDays(*dir_, "days.jsonl", kSteps);
    Replay(dir_->File("whole.db"), trace_);
    whole_ = Dump(dir_->File("whole.db"));
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  static Folder* dir_;
  static std::string trace_;
  static std::string whole_;  // the uninterrupted replay's tables
};
Folder* MeterResume::dir_ = nullptr;
std::string MeterResume::trace_;
std::string MeterResume::whole_;

TEST_F(MeterResume, TheUninterruptedReplayKeptWhatRetentionPromises) {
  // By hand: 25,920 steps of 10 s end at kStart + 3 d - 10 s; the raw cut is 48 h before it,
  // rounded down to its minute: kStart + 1 d - 1 min. Raw rows from there on, to the last at
  // kStart + 3 d - 10 s: (2 d + 50 s) / 10 s + 1 = 17,286 GPU samples; every minute of the 3 days
  // is rolled up (4,320) and every hour (72).
  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open_v2(dir_->File("whole.db").c_str(), &h, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  auto count = [&](const char* sql) {
    sqlite3_stmt* st = nullptr;
    sqlite3_prepare_v2(h, sql, -1, &st, nullptr);
    int64_t v = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
    sqlite3_finalize(st);
    return v;
  };
  EXPECT_EQ(count("SELECT count(*) FROM gpu_sample"), 17286);
  EXPECT_EQ(count("SELECT min(time_ms) FROM gpu_sample"), kStart + 86400000 - 60000);
  EXPECT_EQ(count("SELECT count(*) FROM gpu_minute"), 4320);
  EXPECT_EQ(count("SELECT count(*) FROM gpu_hour"), 72);
  sqlite3_close(h);
}

TEST_F(MeterResume, AReplayThatReachesNoStepLeavesTheStoreAsItWas) {
  const std::string db = dir_->File("no-step.db");
  fs::copy_file(dir_->File("whole.db"), db);
  // A header-only trace: no step, exit 0, nothing written, nothing deleted, no mark moved.
  std::ifstream in(trace_);
  std::string header;
  std::getline(in, header);
  const std::string empty = dir_->File("header-only.jsonl");
  std::ofstream(empty) << header << "\n";
  const MeterRunSummary s = Replay(db, empty);
  EXPECT_EQ(s.ticks, 0);
  EXPECT_EQ(Dump(db), whole_);
  // A trace whose first step is bad: the line is reported (InputError), the store untouched.
  const std::string bad = dir_->File("bad-first.jsonl");
  std::ofstream(bad) << header << "\n" << R"({"t": "not a time"})" << "\n";
  EXPECT_THROW(Replay(db, bad), InputError);
  EXPECT_EQ(Dump(db), whole_);
}

TEST_F(MeterResume, AStoppedReplayResumesAfterItsLastStoredStep) {
  const std::string db = dir_->File("stopped.db");
  {
    StopAt stop(10000);
    MeterAgentRequest r;
    r.db = db;
    r.replay = trace_;
    r.speed = 1e12;
    ManualMeterClock clock(1e9);
    const MeterRunSummary s = RunMeter(r, clock, &stop);
    ResetMeterStop();
    ASSERT_TRUE(s.stopped);
    ASSERT_EQ(s.ticks, 10000);
  }
  StoreOptions read_only;
  read_only.read_only = true;
  const StoreExtent e = MeterStore::Open(db, read_only).Extent();
  // A stop drains the buffer: every step through the 10,000th (k = 9,999) is committed.
  EXPECT_EQ(e.samples_complete, FromUnixMillis(kStart + 9999 * int64_t{10000}));
  const MeterRunSummary s = Replay(db, trace_, /*resume=*/true);
  EXPECT_EQ(s.resumed_after_steps, 10000);
  EXPECT_EQ(s.ticks, kSteps - 10000);
  EXPECT_EQ(Dump(db), whole_);
}

TEST_F(MeterResume, ReplayingAgainFromTheStartChangesNothing) {
  const std::string db = dir_->File("again.db");
  fs::copy_file(dir_->File("whole.db"), db);
  const MeterRunSummary s = Replay(db, trace_);
  EXPECT_EQ(s.ticks, kSteps);
  EXPECT_EQ(Dump(db), whole_);
  // With --resume there is nothing left to replay.
  const MeterRunSummary r = Replay(db, trace_, /*resume=*/true);
  EXPECT_EQ(r.ticks, 0);
  EXPECT_EQ(r.resumed_after_steps, kSteps);
  EXPECT_EQ(Dump(db), whole_);
}

TEST_F(MeterResume, ManyStopsAndResumesGiveTheUninterruptedTables) {
  // Stopped at 12 uneven points (every 2,000-odd steps, some in the middle of a minute), each
  // time resumed: the same tables as the uninterrupted run.
  const std::string db = dir_->File("many.db");
  int64_t done = 0;
  for (int64_t stop_after : {7, 1999, 2003, 1, 4444, 333, 2500, 1234, 3001, 17, 2222, 5000}) {
    StopAt stop(stop_after);
    MeterAgentRequest r;
    r.db = db;
    r.replay = trace_;
    r.speed = 1e12;
    r.resume = true;
    ManualMeterClock clock(1e9);
    const MeterRunSummary s = RunMeter(r, clock, &stop);
    ResetMeterStop();
    ASSERT_EQ(s.resumed_after_steps, done);
    done += s.ticks;
  }
  ASSERT_LT(done, kSteps);
  Replay(db, trace_, /*resume=*/true);
  EXPECT_EQ(Dump(db), whole_);
}

TEST(MeterTraceWriter, ACommandLineThatIsNotUtf8IsWrittenNotThrown) {
  // /proc/PID/cmdline is any bytes; the trace is JSON, which is UTF-8: the byte 0xFF is written
  // as U+FFFD (EF BF BD) and the step read back.
  Folder dir;
  Trace t;
  t.header.host = "h";
  t.header.gpus.push_back(TraceGpu{0, "NVIDIA A100-SXM4-80GB", "GPU-0", 85899345920ull});
  TraceStep s;
  s.time = FromUnixMillis(kStart);
  GpuSample g;
  g.time = FromUnixMillis(kStart);
  s.gpus.push_back(g);
  ProcessSample p;
  p.time = FromUnixMillis(kStart);
  p.pid = 42;
  p.command = "python tr\xff.py";
  s.processes.push_back(p);
  t.steps.push_back(s);
  const std::string path = dir.File("bytes.jsonl");
  {
    std::ofstream out(path);
    ASSERT_NO_THROW(WriteTrace(out, t));
  }
  const Trace back = ReadTrace(path);
  ASSERT_EQ(back.steps.size(), 1u);
  ASSERT_EQ(back.steps[0].processes.size(), 1u);
  EXPECT_EQ(back.steps[0].processes[0].command, "python tr\xEF\xBF\xBD.py");
}

TEST(MeterAlertsFile, AKeyThatIsAMappingIsAnInputErrorNotAnAbort) {
  // fuzz_alerts' find (10-minute run, 2026-12-03): YAML's complex key `? gpu_hour_price: 16d`
  // makes the rule's name a mapping; reading it as text threw yaml-cpp's bad conversion, which
  // ended the process. Now an InputError naming the file, line 2 and the section.
  try {
    AlertRulesFromYaml("rules:\n ? gpu_hour_price: 16d\n", "a.yaml");
    FAIL() << "accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.line(), 2);
    EXPECT_EQ(e.field(), "rules");
  }
}

}  // namespace
}  // namespace gpuplan
