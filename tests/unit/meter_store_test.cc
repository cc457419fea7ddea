// The meter store (src/meter/store.h) on real SQLite files in a temporary folder under the
// current directory: round trips, roll-ups against numbers worked out by hand, retention cuts,
// a second connection holding the write lock, a SIGKILL during writes, and files that are not
// (or no longer) ours. Every expected value is derived in the comment beside it.
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "core/error.h"
#include "meter/sample.h"
#include "meter/store.h"

namespace gpuplan {
namespace {

namespace fs = std::filesystem;

// 2024-01-01T00:00:00Z: a whole hour, so minute and hour buckets start here.
constexpr UtcMillis kT0{std::chrono::milliseconds{1704067200000}};
constexpr std::chrono::milliseconds kSecond{1000};
constexpr std::chrono::milliseconds kMinute = 60 * kSecond;
constexpr std::chrono::milliseconds kHour = 60 * kMinute;
constexpr std::chrono::milliseconds kDay = 24 * kHour;
constexpr uint64_t kGiB = 1ull << 30;
constexpr uint64_t kMiB = 1ull << 20;

// A plain SQLite connection of the test's own, to look at the file behind the store's back.
class Db {
 public:
  explicit Db(const std::string& path) {
    if (sqlite3_open(path.c_str(), &db_) != SQLITE_OK) {
      throw std::runtime_error("cannot open " + path);
    }
    sqlite3_busy_timeout(db_, 2000);
  }
  ~Db() { sqlite3_close(db_); }
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;
  void Exec(const std::string& sql) {
    char* err = nullptr;
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
      std::string m = err != nullptr ? err : "?";
      sqlite3_free(err);
      throw std::runtime_error(sql + ": " + m);
    }
  }
  int64_t Int(const std::string& sql) {
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &s, nullptr) != SQLITE_OK) {
      throw std::runtime_error(sql + ": " + sqlite3_errmsg(db_));
    }
    int64_t v = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int64(s, 0) : -1;
    sqlite3_finalize(s);
    return v;
  }
  std::string Text(const std::string& sql) {
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &s, nullptr) != SQLITE_OK) {
      throw std::runtime_error(sql + ": " + sqlite3_errmsg(db_));
    }
    std::string v;
    if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_text(s, 0) != nullptr) {
      v = reinterpret_cast<const char*>(sqlite3_column_text(s, 0));
    }
    sqlite3_finalize(s);
    return v;
  }

 private:
  sqlite3* db_ = nullptr;
};

class MeterStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::current_path() / ("meter_store_test." + std::to_string(getpid()) + "." + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string File(const std::string& name) const { return (dir_ / name).string(); }

  fs::path dir_;
};

// --- the sample model ------------------------------------------------------------------------

TEST(MeterSample, FromSnapshotCopiesEveryMeteredField) {
  SystemSnapshot snap;
  GpuSnapshot a;
  a.index = 0;
  a.uuid = "GPU-aaaa";
  a.utilization_gpu = 97;
  a.utilization_memory = 41;
  a.memory_used = 70 * kGiB;
  a.memory_total = 80 * kGiB;
  a.power_draw = 612.5;
  a.energy_mj = 123456789;
  a.temperature_c = 66;
  a.sm_clock_mhz = 1980;
  a.clock_event_reasons = kClockEventSwPowerCap;
  GpuSnapshot b;
  b.index = 3;  // nothing measured
  snap.gpus = {a, b};
  // 1704067200.4567 s -> 1704067200457 ms (rounded to the nearest millisecond).
  const auto samples = GpuSamplesFromSnapshot(snap, 1704067200.4567);
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(UnixMillis(samples[0].time), 1704067200457);
  EXPECT_EQ(samples[0].gpu, 0);
  EXPECT_EQ(samples[0].uuid, "GPU-aaaa");
  EXPECT_EQ(samples[0].utilization_gpu, 97);
  EXPECT_EQ(samples[0].utilization_memory, 41);
  EXPECT_EQ(samples[0].memory_used, 70 * kGiB);
  EXPECT_EQ(samples[0].memory_total, 80 * kGiB);
  EXPECT_EQ(samples[0].power, 612.5);
  EXPECT_EQ(samples[0].energy_mj, 123456789u);
  EXPECT_EQ(samples[0].temperature, 66);
  EXPECT_EQ(samples[0].sm_clock, 1980);
  EXPECT_EQ(samples[0].clock_event_reasons, kClockEventSwPowerCap);
  GpuSample empty;
  empty.time = FromUnixMillis(1704067200457);
  empty.gpu = 3;
  EXPECT_EQ(samples[1], empty);  // absent stays absent, never 0
}

// --- round trip --------------------------------------------------------------------------------

TEST_F(MeterStoreTest, RoundTripsGpuAndProcessSamples) {
  auto store = MeterStore::Open(File("m.db"));
  GpuSample full;
  full.time = kT0;
  full.gpu = 0;
  full.uuid = "GPU-5a6c9a3e-0000-4d1e-9e7a-111111111111";
  full.utilization_gpu = 87;
  full.utilization_memory = 35;
  full.memory_used = 61 * kGiB + 12345;
  full.memory_total = 80 * kGiB;
  full.power = 250.123;  // stored as 250123 mW, read back as 250123 / 1000.0
  full.energy_mj = 9'000'000'000'123ull;
  full.temperature = 71;
  full.sm_clock = 1755;
  full.clock_event_reasons = 0x8000000000000004ull;  // the top bit survives SQLite's signed integers
  GpuSample sparse;
  sparse.time = kT0;
  sparse.gpu = 1;
  sparse.utilization_gpu = 0;  // 0 measured is not "absent"
  GpuSample later = full;
  later.time = kT0 + kSecond;
  later.uuid = "GPU-5a6c9a3e-0000-4d1e-9e7a-111111111111";  // same device row
  GpuSample at_end = full;
  at_end.time = kT0 + 2 * kSecond;  // == range end: excluded
  store.Append({full, sparse, later, at_end});

  ProcessSample p;
  p.time = kT0;
  p.gpu = 0;
  p.pid = 4242;
  p.user = "alice";
  p.command = "python train.py --epochs 3";
  p.container_id = "3f2a9c0d1e";
  p.pod_namespace = "research";
  p.pod_name = "llama-ft-0";
  p.slurm_job_id = "81234";
  p.gpu_memory = 40 * kGiB;
  ProcessSample q;  // only a pid
  q.time = kT0 + kSecond;
  q.gpu = 1;
  q.pid = 7;
  store.Append(std::vector<ProcessSample>{p, q});
  EXPECT_EQ(store.Buffered(), 6u);

  const FlushStatus st = store.Flush(kT0 + 2 * kSecond);
  EXPECT_FALSE(IsBehind(st.state)) << st.reason;
  EXPECT_EQ(st.written, 6u);
  EXPECT_EQ(st.buffered, 0u);

  const auto all = store.GpuSamples({kT0, kT0 + 2 * kSecond});
  ASSERT_EQ(all.size(), 3u);  // at_end is outside [from, to)
  EXPECT_EQ(all[0], full);
  EXPECT_EQ(all[1], sparse);
  EXPECT_EQ(all[2], later);
  const auto gpu1 = store.GpuSamples({kT0, kT0 + 3 * kSecond}, 1);
  ASSERT_EQ(gpu1.size(), 1u);
  EXPECT_EQ(gpu1[0], sparse);

  const auto procs = store.ProcessSamples({kT0, kT0 + 3 * kSecond});
  ASSERT_EQ(procs.size(), 2u);
  EXPECT_EQ(procs[0], p);
  EXPECT_EQ(procs[1], q);
  EXPECT_EQ(store.ProcessSamples({kT0 + kSecond, kT0 + 3 * kSecond}, 0).size(), 0u);

  // The uuid is stored once, in the device table.
  Db db(File("m.db"));
  EXPECT_EQ(db.Int("SELECT count(*) FROM device"), 1);
  EXPECT_EQ(db.Int("SELECT count(*) FROM process"), 2);
  EXPECT_EQ(db.Text("PRAGMA journal_mode"), "wal");
  EXPECT_EQ(db.Int("PRAGMA user_version"), kMeterSchemaVersion);
  EXPECT_EQ(db.Int("PRAGMA application_id"), kMeterApplicationId);
}

// --- roll-ups ----------------------------------------------------------------------------------

// Two minutes of two GPUs at 1 Hz from kT0 (samples i = 0..119, t = kT0 + i s).
// GPU 0: utilisation (i % 4) * 25; memory utilisation 10; memory used i GiB of 160 GiB; power
// 100 W on even i, 300 W on odd i; temperature 40 + i / 10; clock events SW power cap at i = 30,
// HW slowdown at i = 100; energy 1,000,000 + 300,000 i mJ until the driver reloads at i = 90,
// then 5,000 + 300,000 (i - 90). A process (pid 4242) holds (i + 1) x 100 MiB at i = 0..9.
// GPU 1: utilisation 100, nothing else.
GpuSample Gpu0(int i) {
  GpuSample s;
  s.time = kT0 + i * kSecond;
  s.gpu = 0;
  s.uuid = "GPU-0";
  s.utilization_gpu = (i % 4) * 25;
  s.utilization_memory = 10;
  s.memory_used = static_cast<uint64_t>(i) * kGiB;
  s.memory_total = 160 * kGiB;
  s.power = i % 2 == 0 ? 100.0 : 300.0;
  s.energy_mj = i < 90 ? 1'000'000 + 300'000ull * i : 5'000 + 300'000ull * (i - 90);
  s.temperature = 40 + i / 10;
  s.clock_event_reasons = i == 30 ? kClockEventSwPowerCap : i == 100 ? kClockEventHwSlowdown : 0;
  return s;
}
GpuSample Gpu1(int i) {
  GpuSample s;
  s.time = kT0 + i * kSecond;
  s.gpu = 1;
  s.uuid = "GPU-1";
  s.utilization_gpu = 100;
  return s;
}
ProcessSample Trainer(int i) {
  ProcessSample p;
  p.time = kT0 + i * kSecond;
  p.gpu = 0;
  p.pid = 4242;
  p.user = "alice";
  p.command = "python train.py";
  p.gpu_memory = static_cast<uint64_t>(i + 1) * 100 * kMiB;
  return p;
}

MeterStore StoreWithTwoMinutes(const std::string& path) {
  auto store = MeterStore::Open(path);
  std::vector<GpuSample> gpus;
  std::vector<ProcessSample> procs;
  for (int i = 0; i < 120; ++i) {
    gpus.push_back(Gpu0(i));
    gpus.push_back(Gpu1(i));
    if (i < 10) {
      procs.push_back(Trainer(i));
    }
  }
  store.Append(gpus);
  store.Append(procs);
  return store;
}

TEST_F(MeterStoreTest, MinuteAndHourRollUpsMatchHandComputedValues) {
  auto store = StoreWithTwoMinutes(File("m.db"));
  // Flushing at kT0 + 120 s completes both minutes; the hour is not complete.
  const FlushStatus st = store.Flush(kT0 + 120 * kSecond);
  ASSERT_FALSE(IsBehind(st.state)) << st.reason;
  EXPECT_EQ(st.written, 250u);           // 240 GPU samples + 10 process samples
  EXPECT_EQ(st.rollup.minute_rows, 4);   // 2 minutes x 2 GPUs
  EXPECT_EQ(st.rollup.hour_rows, 0);
  EXPECT_EQ(st.rollup.minutes_done, kT0 + 2 * kMinute);

  const auto m = store.GpuRollups(Resolution::kMinute, {kT0, kT0 + kHour});
  ASSERT_EQ(m.size(), 4u);  // ordered by bucket, then GPU
  const GpuRollup& m0 = m[0];
  EXPECT_EQ(m0.bucket, kT0);
  EXPECT_EQ(m0.width, kMinute);
  EXPECT_EQ(m0.gpu, 0);
  EXPECT_EQ(m0.uuid, "GPU-0");
  EXPECT_EQ(m0.samples, 60);
  // Each sample stands for 1 s: the first has no predecessor and counts the nominal 1 s.
  EXPECT_EQ(m0.observed, 60 * kSecond);
  // Active: utilisation > 0 at i % 4 != 0, 45 of 60. Busy adds the samples with utilisation 0
  // and the process present (i = 0, 4, 8): 48 s.
  EXPECT_EQ(m0.active, 45 * kSecond);
  EXPECT_EQ(m0.busy, 48 * kSecond);
  EXPECT_EQ(m0.IdleHeld(), 3 * kSecond);
  EXPECT_EQ(m0.Idle(), 12 * kSecond);
  // Utilisation: 15 x (0 + 25 + 50 + 75) = 2250 over 60 samples = 37.5 %.
  EXPECT_EQ(m0.utilization_gpu_n, 60);
  EXPECT_EQ(m0.utilization_gpu_sum, 2250);
  EXPECT_DOUBLE_EQ(*m0.UtilizationGpuMean(), 37.5);
  EXPECT_EQ(m0.utilization_gpu_min, 0);
  EXPECT_EQ(m0.utilization_gpu_max, 75);
  EXPECT_DOUBLE_EQ(*m0.UtilizationMemoryMean(), 10.0);
  // Memory: (0 + ... + 59) GiB = 1770 GiB over 60 = 29.5 GiB; max 59 GiB.
  EXPECT_EQ(m0.memory_used_sum, static_cast<int64_t>(1770 * kGiB));
  EXPECT_DOUBLE_EQ(*m0.MemoryUsedMean(), 29.5 * static_cast<double>(kGiB));
  EXPECT_EQ(m0.memory_used_max, 59 * kGiB);
  EXPECT_EQ(m0.memory_total, 160 * kGiB);
  // Power: 30 x 100 W + 30 x 300 W = 12,000 W = 12,000,000 mW; mean 200 W; max 300 W.
  EXPECT_EQ(m0.power_sum_mw, 12'000'000);
  EXPECT_DOUBLE_EQ(*m0.PowerMean(), 200.0);
  EXPECT_EQ(m0.power_max_mw, 300'000);
  // Energy: sample 0 has no predecessor (0), samples 1..59 add 300,000 mJ each: 17,700,000 mJ.
  EXPECT_EQ(m0.energy_mj, 17'700'000u);
  EXPECT_EQ(m0.temperature_max, 45);  // 40 + 59 / 10
  EXPECT_EQ(m0.clock_event_reasons, kClockEventSwPowerCap);

  const GpuRollup& m1 = m[1];  // GPU 1, minute 0: always 100 %, no counter, no power
  EXPECT_EQ(m1.gpu, 1);
  EXPECT_EQ(m1.busy, 60 * kSecond);
  EXPECT_EQ(m1.active, 60 * kSecond);
  EXPECT_FALSE(m1.energy_mj.has_value());  // no sample had the counter: unknown, not 0
  EXPECT_FALSE(m1.PowerMean().has_value());
  EXPECT_EQ(m1.power_n, 0);

  const GpuRollup& m2 = m[2];  // GPU 0, minute 1 (i = 60..119)
  EXPECT_EQ(m2.bucket, kT0 + kMinute);
  EXPECT_EQ(m2.gpu, 0);
  // Sample 60 measures from sample 59 (in the previous minute): 1 s, 300,000 mJ.
  EXPECT_EQ(m2.observed, 60 * kSecond);
  EXPECT_EQ(m2.busy, 45 * kSecond);  // no process this minute
  // Energy: i = 60..89 add 30 x 300,000; i = 90 went down from 28,000,000 to 5,000, a reset:
  // counts 5,000; i = 91..119 add 29 x 300,000. 9,000,000 + 5,000 + 8,700,000 = 17,705,000.
  EXPECT_EQ(m2.energy_mj, 17'705'000u);
  EXPECT_EQ(m2.memory_used_sum, static_cast<int64_t>(5370 * kGiB));  // 60 + ... + 119
  EXPECT_EQ(m2.memory_used_max, 119 * kGiB);
  EXPECT_EQ(m2.temperature_max, 51);
  EXPECT_EQ(m2.clock_event_reasons, kClockEventHwSlowdown);

  // The hour completes when the data reaches kT0 + 1 h (the store never marks done a minute no
  // sample has reached): GPU 1's next sample, at kT0 + 1 h, in the next hour.
  store.Append({Gpu1(3600)});
  const RollUpResult r = store.Flush(kT0 + kHour).rollup;
  EXPECT_EQ(r.minute_rows, 0);  // no samples in the minutes 2..59
  EXPECT_EQ(r.hour_rows, 2);
  const auto h = store.GpuRollups(Resolution::kHour, {kT0, kT0 + kDay});
  ASSERT_EQ(h.size(), 2u);
  const GpuRollup& h0 = h[0];
  EXPECT_EQ(h0.bucket, kT0);
  EXPECT_EQ(h0.width, kHour);
  EXPECT_EQ(h0.samples, 120);
  EXPECT_EQ(h0.observed, 120 * kSecond);
  EXPECT_EQ(h0.busy, 93 * kSecond);    // 48 + 45
  EXPECT_EQ(h0.active, 90 * kSecond);  // 45 + 45
  EXPECT_DOUBLE_EQ(*h0.UtilizationGpuMean(), 37.5);  // 4500 / 120
  EXPECT_EQ(h0.energy_mj, 35'405'000u);              // 17,700,000 + 17,705,000
  EXPECT_EQ(h0.memory_used_max, 119 * kGiB);
  EXPECT_EQ(h0.temperature_max, 51);
  EXPECT_EQ(h0.clock_event_reasons, kClockEventSwPowerCap | kClockEventHwSlowdown);
  EXPECT_EQ(h0.uuid, "GPU-0");
  EXPECT_EQ(h[1].samples, 120);
  EXPECT_EQ(h[1].busy, 120 * kSecond);

  // Idempotent: rolling up again writes nothing new and changes nothing.
  const RollUpResult again = store.RollUp(kT0 + kHour);
  EXPECT_EQ(again.minute_rows, 0);
  EXPECT_EQ(again.hour_rows, 0);
  EXPECT_EQ(store.GpuRollups(Resolution::kMinute, {kT0, kT0 + kHour}), m);
  EXPECT_EQ(store.GpuRollups(Resolution::kHour, {kT0, kT0 + kDay}), h);

  // Process roll-ups: 10 samples of 1 s (the first nominal), memory max 1000 MiB, sum 5500 MiB.
  const auto seen = store.ProcessesSeen(Resolution::kHour, {kT0, kT0 + kDay});
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].pid, 4242);
  EXPECT_EQ(seen[0].user, "alice");
  EXPECT_EQ(seen[0].gpu, 0);
  EXPECT_EQ(seen[0].samples, 10);
  EXPECT_EQ(seen[0].observed, 10 * kSecond);
  EXPECT_EQ(seen[0].gpu_memory_max, 1000 * kMiB);
  EXPECT_EQ(seen[0].gpu_memory_sum, static_cast<int64_t>(5500 * kMiB));
  EXPECT_EQ(seen[0].from, kT0);
  EXPECT_EQ(seen[0].to, kT0 + kHour);  // the end of its last bucket
  const auto seen_raw = store.ProcessesSeen(Resolution::kRaw, {kT0, kT0 + kDay});
  ASSERT_EQ(seen_raw.size(), 1u);
  EXPECT_EQ(seen_raw[0].from, kT0);
  EXPECT_EQ(seen_raw[0].to, kT0 + 9 * kSecond);  // first and last sample
  EXPECT_EQ(seen_raw[0].observed, 10 * kSecond);
  EXPECT_EQ(store.ProcessRollups(Resolution::kMinute, {kT0, kT0 + kDay}).size(), 1u);

  // Raw resolution uses the same rules per sample: sample 90 (the reset) measures from sample
  // 89, which lies before the range, and counts 5,000 mJ over 1 s.
  const auto raw = store.GpuRollups(Resolution::kRaw, {kT0 + 90 * kSecond, kT0 + 91 * kSecond}, 0);
  ASSERT_EQ(raw.size(), 1u);
  EXPECT_EQ(raw[0].energy_mj, 5'000u);
  EXPECT_EQ(raw[0].observed, kSecond);
  EXPECT_EQ(raw[0].samples, 1);
}

TEST_F(MeterStoreTest, ALateSampleReRollsItsMinuteAndHour) {
  auto store = StoreWithTwoMinutes(File("m.db"));
  store.Append({Gpu1(3600)});  // the data reaches kT0 + 1 h: the hour is complete
  ASSERT_FALSE(IsBehind(store.Flush(kT0 + kHour).state));
  // A sample of GPU 0 arrives late, at 30.5 s, at 100 % and half-way on the energy counter.
  GpuSample late = Gpu0(30);
  late.time = kT0 + 30 * kSecond + std::chrono::milliseconds{500};
  late.utilization_gpu = 100;
  late.energy_mj = *Gpu0(30).energy_mj + 150'000;
  late.clock_event_reasons = 0;
  store.Append({late});
  const FlushStatus st = store.Flush(kT0 + kHour);
  ASSERT_FALSE(IsBehind(st.state)) << st.reason;
  const auto m = store.GpuRollups(Resolution::kMinute, {kT0, kT0 + kMinute}, 0);
  ASSERT_EQ(m.size(), 1u);
  // 61 samples; the late one and sample 31 now stand for 0.5 s each, so observed time, busy
  // time (both active) and the energy (150,000 + 150,000 instead of 300,000) are unchanged.
  EXPECT_EQ(m[0].samples, 61);
  EXPECT_EQ(m[0].observed, 60 * kSecond);
  EXPECT_EQ(m[0].busy, 48 * kSecond);
  EXPECT_EQ(m[0].active, 45 * kSecond);
  EXPECT_EQ(m[0].utilization_gpu_sum, 2350);  // 2250 + 100
  EXPECT_EQ(m[0].utilization_gpu_max, 100);
  EXPECT_EQ(m[0].energy_mj, 17'700'000u);
  const auto h = store.GpuRollups(Resolution::kHour, {kT0, kT0 + kHour}, 0);
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0].samples, 121);
  EXPECT_EQ(h[0].utilization_gpu_sum, 4600);  // 2350 + 2250
  EXPECT_EQ(h[0].energy_mj, 35'405'000u);
}

TEST_F(MeterStoreTest, AGapLongerThanTheLimitIsNotObservedTime) {
  StoreOptions o;
  o.max_sample_gap_seconds = 10;
  auto store = MeterStore::Open(File("m.db"), o);
  // Samples at 0, 1, 2 s, then at 30 s (a 28 s gap: the agent was stopped) and 31 s; the
  // counter advances 100,000 mJ per second throughout.
  std::vector<GpuSample> v;
  for (int s : {0, 1, 2, 30, 31}) {
    GpuSample g;
    g.time = kT0 + s * kSecond;
    g.utilization_gpu = 50;
    g.energy_mj = 100'000ull * static_cast<uint64_t>(s);
    v.push_back(g);
  }
  store.Append(v);
  ASSERT_FALSE(IsBehind(store.Flush(kT0 + kMinute).state));
  const auto m = store.GpuRollups(Resolution::kMinute, {kT0, kT0 + kMinute});
  ASSERT_EQ(m.size(), 1u);
  // Observed: 1 (nominal) + 1 + 1 + 1 (nominal, the gap is not observed) + 1 = 5 s.
  EXPECT_EQ(m[0].observed, 5 * kSecond);
  // Energy: 100,000 + 100,000 (0->1, 1->2) + 0 (across the gap) + 100,000 (30->31).
  EXPECT_EQ(m[0].energy_mj, 300'000u);
}

// --- retention ---------------------------------------------------------------------------------

TEST_F(MeterStoreTest, RetentionDeletesExactlyTheRowsOlderThanTheCut) {
  StoreOptions o;
  o.raw_retention_hours = 48;
  o.minute_retention_days = 30;
  o.hour_retention_days = 35;
  o.retention_batch_rows = 100;  // many batches
  auto store = MeterStore::Open(File("m.db"), o);
  // 40 days of one GPU and one process, a sample every 10 minutes: k = 0..5760 at kT0 + 10k min
  // (the last at kT0 + 40 d, in a minute not complete at `now`: the cuts are measured back from
  // the newest sample, which is `now`).
  std::vector<GpuSample> g;
  std::vector<ProcessSample> p;
  for (int k = 0; k <= 40 * 144; ++k) {
    GpuSample s;
    s.time = kT0 + k * 10 * kMinute;
    s.utilization_gpu = 50;
    g.push_back(s);
    ProcessSample ps = Trainer(0);
    ps.time = s.time;
    p.push_back(ps);
  }
  store.Append(g);
  store.Append(p);
  const UtcMillis now = kT0 + 40 * kDay;
  ASSERT_FALSE(IsBehind(store.Flush(now).state));
  Db db(File("m.db"));
  ASSERT_EQ(db.Int("SELECT count(*) FROM gpu_minute"), 5760);  // one sample per minute row
  ASSERT_EQ(db.Int("SELECT count(*) FROM gpu_hour"), 960);     // 40 x 24

  const RetentionResult r = store.ApplyRetention(now);
  EXPECT_TRUE(r.done) << r.reason;
  // Raw cut: now - 48 h = kT0 + 38 d; samples k < 38 x 144 = 5472 go, 289 stay (5472..5760).
  EXPECT_EQ(r.raw_cut, kT0 + 38 * kDay);
  EXPECT_EQ(r.gpu_samples, 5472);
  EXPECT_EQ(r.process_samples, 5472);
  EXPECT_EQ(db.Int("SELECT count(*) FROM gpu_sample"), 289);
  EXPECT_EQ(db.Int("SELECT min(time_ms) FROM gpu_sample"), UnixMillis(kT0 + 38 * kDay));  // the row at the cut stays
  EXPECT_EQ(db.Int("SELECT count(*) FROM process_sample"), 289);
  // Minute cut: now - 30 d = kT0 + 10 d: 10 x 144 = 1440 minute rows go, 4320 stay.
  EXPECT_EQ(r.minute_cut, kT0 + 10 * kDay);
  EXPECT_EQ(r.gpu_minutes, 1440);
  EXPECT_EQ(r.process_minutes, 1440);
  EXPECT_EQ(db.Int("SELECT count(*) FROM gpu_minute"), 4320);
  EXPECT_EQ(db.Int("SELECT min(bucket_ms) FROM gpu_minute"), UnixMillis(kT0 + 10 * kDay));
  // Hour cut: now - 35 d = kT0 + 5 d: 5 x 24 = 120 hour rows go, 840 stay.
  EXPECT_EQ(r.hour_cut, kT0 + 5 * kDay);
  EXPECT_EQ(r.gpu_hours, 120);
  EXPECT_EQ(r.process_hours, 120);
  EXPECT_EQ(db.Int("SELECT count(*) FROM gpu_hour"), 840);
  EXPECT_EQ(db.Int("SELECT min(bucket_ms) FROM gpu_hour"), UnixMillis(kT0 + 5 * kDay));

  // Again: nothing more to delete.
  const RetentionResult again = store.ApplyRetention(now);
  EXPECT_EQ(again.gpu_samples + again.gpu_minutes + again.gpu_hours, 0);

  const StoreExtent e = store.Extent();
  EXPECT_EQ(e.raw_from, kT0 + 38 * kDay);
  EXPECT_EQ(e.minute_from, kT0 + 10 * kDay);
  EXPECT_EQ(e.hour_from, kT0 + 5 * kDay);
  EXPECT_EQ(e.FinestCovering({kT0 + 39 * kDay, now}), Resolution::kRaw);
  EXPECT_EQ(e.FinestCovering({kT0 + 20 * kDay, now}), Resolution::kMinute);
  EXPECT_EQ(e.FinestCovering({kT0, now}), Resolution::kHour);

  // A sample from before the raw cut arriving now is dropped and counted, not rolled up alone
  // over a minute whose other samples are gone.
  GpuSample stale;
  stale.time = kT0 + 20 * kDay + 5 * kSecond;
  stale.utilization_gpu = 50;
  store.Append({stale});
  const FlushStatus st = store.Flush(now);
  EXPECT_EQ(st.written, 0u);
  EXPECT_EQ(store.Counters().dropped_too_old, 1u);
  EXPECT_EQ(db.Int("SELECT samples FROM gpu_minute WHERE bucket_ms = " + std::to_string(UnixMillis(kT0 + 20 * kDay))), 1);
}

TEST_F(MeterStoreTest, AClockAheadOfTheDataDeletesAndMarksNothing) {
  // 10 minutes at 1 Hz, rolled up through their end.
  auto store = MeterStore::Open(File("m.db"));
  std::vector<GpuSample> g;
  for (int s = 0; s < 600; ++s) {
    GpuSample x;
    x.time = kT0 + s * kSecond;
    x.utilization_gpu = 50;
    g.push_back(x);
  }
  store.Append(g);
  ASSERT_FALSE(IsBehind(store.Flush(kT0 + 10 * kMinute).state));
  Db db(File("m.db"));
  ASSERT_EQ(db.Int("SELECT count(*) FROM gpu_minute"), 10);
  ASSERT_EQ(db.Int("SELECT value FROM meta WHERE key = 'minutes_done_ms'"), UnixMillis(kT0 + 10 * kMinute));

  // A flush and retention 100 days later with nothing new (a replay that wrote no step, a wall
  // clock ahead of the data): the newest sample is at kT0 + 599 s, so nothing is 48 h old and
  // no mark moves.
  const FlushStatus st = store.Flush(kT0 + 100 * kDay);
  EXPECT_EQ(st.written, 0u);
  const RetentionResult r = store.ApplyRetention(kT0 + 100 * kDay);
  EXPECT_TRUE(r.done);
  EXPECT_EQ(r.gpu_samples + r.gpu_minutes + r.gpu_hours, 0);
  EXPECT_EQ(db.Int("SELECT count(*) FROM gpu_sample"), 600);
  EXPECT_EQ(db.Int("SELECT count(*) FROM gpu_minute"), 10);
  EXPECT_EQ(db.Int("SELECT value FROM meta WHERE key = 'minutes_done_ms'"), UnixMillis(kT0 + 10 * kMinute));
  EXPECT_EQ(db.Int("SELECT count(*) FROM meta WHERE key = 'raw_cut_ms'"), 0);

  // The next 10 minutes arrive and are all written (none "too old").
  std::vector<GpuSample> more;
  for (int s = 600; s < 1200; ++s) {
    GpuSample x;
    x.time = kT0 + s * kSecond;
    more.push_back(x);
  }
  store.Append(more);
  const FlushStatus next = store.Flush(kT0 + 20 * kMinute);
  EXPECT_EQ(next.written, 600u);
  EXPECT_EQ(store.Counters().dropped_too_old, 0u);
  EXPECT_EQ(db.Int("SELECT count(*) FROM gpu_minute"), 20);
}

TEST_F(MeterStoreTest, TheRawCutIsAWholeMinuteMeasuredFromTheNewestSample) {
  // 3 days, one sample a minute at kT0 + k min (k = 0..4319) plus one at kT0 + 4319 min + 30 s:
  // the newest sample is kT0 + 3 d - 30 s.
  auto store = MeterStore::Open(File("m.db"));
  std::vector<GpuSample> g;
  for (int k = 0; k < 3 * 1440; ++k) {
    GpuSample x;
    x.time = kT0 + k * kMinute;
    g.push_back(x);
  }
  GpuSample last;
  last.time = kT0 + 3 * kDay - 30 * kSecond;
  g.push_back(last);
  store.Append(g);
  ASSERT_FALSE(IsBehind(store.Flush(kT0 + 3 * kDay).state));
  // Any clock later than the data: the cut is newest - 48 h = kT0 + 1 d - 30 s, rounded down to
  // its minute, kT0 + 1 d - 1 min: the samples k < 1439 go, and the minute at the cut keeps its
  // sample.
  const RetentionResult r = store.ApplyRetention(kT0 + 365 * kDay);
  EXPECT_EQ(r.raw_cut, kT0 + kDay - kMinute);
  EXPECT_EQ(r.gpu_samples, 1439);
  // Minutes: newest - 30 d is before the data: nothing goes.
  EXPECT_EQ(r.gpu_minutes, 0);
}

TEST_F(MeterStoreTest, ReplayingAgainAfterRetentionReRollsEveryMinuteFromAllItsSamples) {
  // One GPU every 10 s for 3 days, its energy counter 5 J up each sample (5,000 mJ). The issue's
  // case: the minute that straddles the 48 h cut was re-rolled from 4 of its 6 samples when the
  // replay ran again, and a minute re-rolled without the sample before it lost its energy.
  StoreOptions o;
  o.sample_interval_seconds = 10;
  o.max_sample_gap_seconds = 25;
  const int n = 3 * 8640;
  std::vector<GpuSample> g;
  for (int k = 0; k < n; ++k) {
    GpuSample x;
    x.time = kT0 + k * 10 * kSecond + 7 * kSecond;  // 7 s into each 10 s: cuts fall mid-minute
    x.utilization_gpu = 80;
    x.energy_mj = 1000000 + 5000 * static_cast<uint64_t>(k);
    g.push_back(x);
  }
  auto minutes = [](Db& db) {
    std::vector<std::tuple<int64_t, int64_t, int64_t, int64_t>> rows;
    // Read through the test's own connection: bucket, samples, observed ms, energy mJ.
    for (int64_t m = 0; m < 3 * 1440; ++m) {
      const std::string where = " FROM gpu_minute WHERE bucket_ms = " + std::to_string(UnixMillis(kT0 + m * kMinute));
      rows.emplace_back(UnixMillis(kT0 + m * kMinute), db.Int("SELECT samples" + where), db.Int("SELECT observed_ms" + where),
                        db.Int("SELECT energy_mj" + where));
    }
    return rows;
  };
  const UtcMillis end = kT0 + 3 * kDay;
  {
    auto store = MeterStore::Open(File("m.db"), o);
    store.Append(g);
    for (int i = 0; i < 10 && store.Buffered() > 0; ++i) {
      store.Flush(end);
    }
    ASSERT_TRUE(store.ApplyRetention(end).done);
  }
  Db db(File("m.db"));
  const auto before = minutes(db);
  // By hand: every minute has 6 samples (at :07, :17, ..., :57), 60 s observed and 6 x 5,000 mJ,
  // except the first, whose first sample has no sample before it (nominal 10 s, energy 0).
  EXPECT_EQ(before[0], std::make_tuple(UnixMillis(kT0), int64_t{6}, int64_t{60000}, int64_t{25000}));
  for (std::size_t m = 1; m < before.size(); ++m) {
    ASSERT_EQ(before[m], std::make_tuple(UnixMillis(kT0 + static_cast<int64_t>(m) * kMinute), int64_t{6}, int64_t{60000},
                                         int64_t{30000}))
        << "minute " << m;
  }
  {
    auto store = MeterStore::Open(File("m.db"), o);
    store.Append(g);  // the same replay again, from its first step
    for (int i = 0; i < 10 && store.Buffered() > 0; ++i) {
      store.Flush(end);
    }
    ASSERT_TRUE(store.ApplyRetention(end).done);
  }
  EXPECT_EQ(minutes(db), before);
}

// --- a locked database ---------------------------------------------------------------------------

std::vector<GpuSample> Ticks(int from, int count) {
  std::vector<GpuSample> v;
  for (int i = from; i < from + count; ++i) {
    GpuSample s;
    s.time = kT0 + i * kSecond;
    s.utilization_gpu = 90;
    v.push_back(s);
  }
  return v;
}

TEST_F(MeterStoreTest, ALockedDatabaseLeavesSamplesBufferedUntilItIsFree) {
  StoreOptions o;
  o.busy_timeout_ms = 50;
  auto store = MeterStore::Open(File("m.db"), o);
  Db other(File("m.db"));
  other.Exec("BEGIN IMMEDIATE");  // another writer holds the lock

  store.Append(Ticks(0, 10));
  store.Append(std::vector<ProcessSample>{Trainer(0), Trainer(1)});
  const FlushStatus a = store.Flush(kT0 + 10 * kSecond);
  EXPECT_EQ(a.state, FlushState::kLocked);
  EXPECT_TRUE(IsBehind(a.state));
  EXPECT_TRUE(a.changed);  // say it once...
  EXPECT_EQ(a.written, 0u);
  EXPECT_EQ(a.buffered, 12u);
  EXPECT_EQ(a.dropped, 0u);
  EXPECT_NE(a.reason.find("locked"), std::string::npos) << a.reason;
  EXPECT_NE(a.reason.find(File("m.db")), std::string::npos) << a.reason;
  EXPECT_LT(a.seconds, 1.0);  // waited about busy_timeout_ms, not more
  EXPECT_EQ(other.Int("SELECT count(*) FROM gpu_sample"), 0);

  store.Append(Ticks(10, 5));
  const FlushStatus b = store.Flush(kT0 + 15 * kSecond);
  EXPECT_EQ(b.state, FlushState::kLocked);
  EXPECT_FALSE(b.changed);  // ...not at every flush
  EXPECT_EQ(b.buffered, 17u);

  other.Exec("COMMIT");
  const FlushStatus c = store.Flush(kT0 + 16 * kSecond);
  EXPECT_FALSE(IsBehind(c.state)) << c.reason;
  EXPECT_TRUE(c.changed);
  EXPECT_NE(c.reason.find("caught up"), std::string::npos) << c.reason;
  EXPECT_EQ(c.written, 17u);
  EXPECT_EQ(c.buffered, 0u);
  EXPECT_EQ(other.Int("SELECT count(*) FROM gpu_sample"), 15);
  EXPECT_EQ(other.Int("SELECT count(*) FROM process_sample"), 2);
  EXPECT_EQ(other.Int("SELECT min(time_ms) FROM gpu_sample"), UnixMillis(kT0));
  EXPECT_EQ(other.Int("SELECT max(time_ms) FROM gpu_sample"), UnixMillis(kT0 + 14 * kSecond));
  const StoreCounters n = store.Counters();
  EXPECT_EQ(n.appended, 17u);
  EXPECT_EQ(n.written, 17u);
  EXPECT_EQ(n.flushes_behind, 2u);
}

TEST_F(MeterStoreTest, ABufferBeyondItsBoundDropsTheOldestAndCountsThem) {
  StoreOptions o;
  o.busy_timeout_ms = 20;
  o.max_buffered_samples = 20;
  auto store = MeterStore::Open(File("m.db"), o);
  Db other(File("m.db"));
  other.Exec("BEGIN IMMEDIATE");
  store.Append(Ticks(0, 27));  // 27 > 20: ticks 0..6 are dropped
  const FlushStatus a = store.Flush(kT0 + 27 * kSecond);
  EXPECT_EQ(a.state, FlushState::kLocked);
  EXPECT_EQ(a.buffered, 20u);
  EXPECT_EQ(a.dropped, 7u);
  EXPECT_NE(a.reason.find("7 dropped"), std::string::npos) << a.reason;
  other.Exec("ROLLBACK");
  ASSERT_FALSE(IsBehind(store.Flush(kT0 + 28 * kSecond).state));
  EXPECT_EQ(other.Int("SELECT count(*) FROM gpu_sample"), 20);
  EXPECT_EQ(other.Int("SELECT min(time_ms) FROM gpu_sample"), UnixMillis(kT0 + 7 * kSecond));
  EXPECT_EQ(store.Counters().dropped_overflow, 7u);
}

TEST_F(MeterStoreTest, AStepWithMoreProcessesThanTheBoundKeepsItsGpuSamples) {
  // The case: one tick with more processes than the buffer holds dropped that tick's GPU
  // samples and kept process rows. Bound 100; one tick of 8 GPUs and 200 processes at one time:
  // 208 rows, 108 over the bound, and the 108 dropped must be process rows: 8 GPU samples and
  // 200 - 108 = 92 process rows are written.
  StoreOptions o;
  o.max_buffered_samples = 100;
  auto store = MeterStore::Open(File("m.db"), o);
  std::vector<GpuSample> g;
  for (int i = 0; i < 8; ++i) {
    GpuSample s;
    s.time = kT0;
    s.gpu = i;
    s.utilization_gpu = 100;
    g.push_back(s);
  }
  std::vector<ProcessSample> p;
  for (int k = 0; k < 200; ++k) {
    ProcessSample ps = Trainer(0);
    ps.pid = 10000 + k;
    ps.gpu = k % 8;
    p.push_back(ps);
  }
  store.Append(g);
  store.Append(p);
  EXPECT_EQ(store.Counters().dropped_overflow, 108u);  // 208 rows, bound 100
  ASSERT_FALSE(IsBehind(store.Flush(kT0 + kMinute).state));
  Db db(File("m.db"));
  EXPECT_EQ(db.Int("SELECT count(*) FROM gpu_sample"), 8);
  EXPECT_EQ(db.Int("SELECT count(*) FROM process_sample"), 92);
}

TEST_F(MeterStoreTest, ABacklogIsWrittenInBoundedFlushes) {
  StoreOptions o;
  o.max_samples_per_flush = 8;
  auto store = MeterStore::Open(File("m.db"), o);
  store.Append(Ticks(0, 20));
  const FlushStatus a = store.Flush(kT0 + 20 * kSecond);
  EXPECT_EQ(a.state, FlushState::kCatchingUp);
  EXPECT_EQ(a.written, 8u);
  EXPECT_EQ(a.buffered, 12u);
  EXPECT_TRUE(store.FlushDue(kT0 + 20 * kSecond));  // at once, not flush_seconds later
  EXPECT_EQ(store.Flush(kT0 + 20 * kSecond).written, 8u);
  const FlushStatus c = store.Flush(kT0 + 20 * kSecond);
  EXPECT_FALSE(IsBehind(c.state));
  EXPECT_EQ(c.written, 4u);
  EXPECT_FALSE(store.FlushDue(kT0 + 21 * kSecond));  // next in flush_seconds (5 s)
  EXPECT_TRUE(store.FlushDue(kT0 + 25 * kSecond));
  EXPECT_EQ(store.GpuSamples({kT0, kT0 + kMinute}).size(), 20u);
}

TEST_F(MeterStoreTest, AFullDatabaseKeepsSamplesUntilRetentionMakesRoom) {
  StoreOptions o;
  o.max_database_bytes = 256 << 10;  // 64 pages of 4 KiB
  auto store = MeterStore::Open(File("m.db"), o);
  // Ten minutes of one GPU at 1 Hz per round until the file is full.
  int round = 0;
  FlushStatus st;
  for (; round < 100; ++round) {
    store.Append(Ticks(round * 600, 600));
    st = store.Flush(kT0 + (round + 1) * 600 * kSecond);
    if (IsBehind(st.state)) {  // a slow flush (ASan, a loaded CI box) still wrote everything
      break;
    }
  }
  ASSERT_EQ(st.state, FlushState::kFull) << st.reason;
  ASSERT_GT(round, 0);                   // some rounds fitted
  EXPECT_EQ(st.written, 0u);             // the round that did not fit...
  EXPECT_EQ(st.buffered, 600u);          // ...waits in memory
  EXPECT_EQ(st.dropped, 0u);
  EXPECT_NE(st.reason.find("full"), std::string::npos) << st.reason;
  const UtcMillis full_at = kT0 + (round + 1) * 600 * kSecond;
  Db db(File("m.db"));
  EXPECT_EQ(db.Int("SELECT count(*) FROM gpu_sample"), round * 600);

  // Retention measures back from the newest sample the store holds or waits to write, not from
  // its clock: while nothing newer than full_at has been sampled, retention 49 h later frees
  // nothing...
  EXPECT_EQ(store.ApplyRetention(full_at + 49 * kHour).gpu_samples, 0);
  // ...and once the agent, still sampling, holds a sample 49 h later (buffered: the file is
  // full), every raw sample that is rolled up goes (cut min(full_at + 1 h, minutes done)),
  // freeing pages the next flush reuses for the 601 samples that waited.
  store.Append(Ticks(round * 600 + 600 + 49 * 3600, 1));
  const RetentionResult r = store.ApplyRetention(full_at + 49 * kHour);
  EXPECT_TRUE(r.done) << r.reason;
  EXPECT_EQ(r.gpu_samples, round * 600);
  const FlushStatus after = store.Flush(full_at + 49 * kHour);
  EXPECT_FALSE(IsBehind(after.state)) << after.reason;
  EXPECT_TRUE(after.changed);
  EXPECT_EQ(after.written, 601u);
  EXPECT_EQ(db.Int("SELECT count(*) FROM gpu_sample"), 601);
  EXPECT_EQ(db.Int("SELECT min(time_ms) FROM gpu_sample"), UnixMillis(kT0 + round * 600 * kSecond));
}

// --- SIGKILL during writes -------------------------------------------------------------------------

int64_t WallMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The child: two GPUs and one process sampled every 50 ms, flushed every 0.2 s; after each
// successful flush it writes the time of the last sample it flushed to the pipe. The first
// value written is the time of its first tick.
[[noreturn]] void CrashChild(const std::string& path, int fd) {
  try {
    StoreOptions o;
    o.flush_seconds = 0.2;
    auto store = MeterStore::Open(path, o);
    const int64_t start = WallMs();
    if (write(fd, &start, sizeof start) != sizeof start) {
      _exit(2);
    }
    for (int64_t k = 0; k < 30 * 20; ++k) {  // stop by itself after 30 s if never killed
      const int64_t t = start + k * 50;
      std::this_thread::sleep_until(std::chrono::system_clock::time_point(std::chrono::milliseconds(t)));
      GpuSample a;
      a.time = FromUnixMillis(t);
      a.gpu = 0;
      a.utilization_gpu = 100;
      a.energy_mj = static_cast<uint64_t>(k) * 25'000;
      GpuSample b = a;
      b.gpu = 1;
      store.Append({a, b});
      ProcessSample p = Trainer(0);
      p.time = FromUnixMillis(t);
      store.Append(std::vector<ProcessSample>{p});
      if (store.FlushDue(FromUnixMillis(t))) {
        const FlushStatus st = store.Flush(FromUnixMillis(t));
        if (st.state == FlushState::kOk || st.state == FlushState::kSlow) {
          if (write(fd, &t, sizeof t) != sizeof t) {
            _exit(2);
          }
        }
      }
    }
  } catch (...) {
    _exit(3);
  }
  _exit(0);
}

TEST_F(MeterStoreTest, SigkillDuringWritesLosesOnlyTheLastFlushInterval) {
  const std::string path = File("crash.db");
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(fds[0]);
    CrashChild(path, fds[1]);
  }
  close(fds[1]);
  std::this_thread::sleep_for(std::chrono::milliseconds(2000));
  const int64_t killed_at = WallMs();
  ASSERT_EQ(kill(child, SIGKILL), 0);
  int wstatus = 0;
  ASSERT_EQ(waitpid(child, &wstatus, 0), child);
  ASSERT_TRUE(WIFSIGNALED(wstatus) && WTERMSIG(wstatus) == SIGKILL) << "the child ended by itself: " << wstatus;
  std::vector<int64_t> reported;
  int64_t v = 0;
  while (read(fds[0], &v, sizeof v) == sizeof v) {
    reported.push_back(v);
  }
  close(fds[0]);
  ASSERT_GE(reported.size(), 6u) << "start time and at least 5 flushes in 2 s";
  const int64_t start = reported.front();
  const int64_t last_flushed = reported.back();

  Db db(path);
  EXPECT_EQ(db.Text("PRAGMA integrity_check"), "ok");
  // Every tick up to the last reported flush is there, for both GPUs and the process: the
  // ticks are start + 50 k ms, k = 0 .. (last - start) / 50.
  const int64_t ticks = (last_flushed - start) / 50 + 1;
  EXPECT_EQ(db.Int("SELECT count(*) FROM gpu_sample WHERE time_ms <= " + std::to_string(last_flushed)), 2 * ticks);
  EXPECT_EQ(db.Int("SELECT count(*) FROM process_sample WHERE time_ms <= " + std::to_string(last_flushed)), ticks);
  // What is lost is what was sampled after the last commit: at most one flush interval (0.2 s)
  // plus a tick and scheduling slack, far under the 10 s the issue allows.
  const int64_t newest = db.Int("SELECT max(time_ms) FROM gpu_sample");
  EXPECT_GE(newest, last_flushed);
  EXPECT_LE(killed_at - newest, 1000) << "lost " << killed_at - newest << " ms";

  // The store opens it again and carries on.
  auto store = MeterStore::Open(path);
  EXPECT_EQ(static_cast<int64_t>(store.GpuSamples({FromUnixMillis(start), FromUnixMillis(newest + 1)}).size()),
            db.Int("SELECT count(*) FROM gpu_sample"));
  store.Append(Ticks(0, 1));
  EXPECT_FALSE(IsBehind(store.Flush(FromUnixMillis(newest) + kMinute).state));
}

// --- files that are not ours ------------------------------------------------------------------------

TEST_F(MeterStoreTest, ANewerSchemaIsRefusedNamingTheFile) {
  const std::string path = File("newer.db");
  { auto store = MeterStore::Open(path); }
  {
    Db db(path);
    db.Exec("PRAGMA user_version = " + std::to_string(kMeterSchemaVersion + 1));
  }
  try {
    MeterStore::Open(path);
    FAIL() << "opened a database of a newer schema";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), path);
    EXPECT_EQ(e.field(), "user_version");
    EXPECT_NE(e.message().find("newer"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos);
  }
  StoreOptions ro;
  ro.read_only = true;
  EXPECT_THROW(MeterStore::Open(path, ro), InputError);
}

TEST_F(MeterStoreTest, ForeignAndDamagedFilesAreInputErrorsNamingTheFile) {
  const std::string foreign = File("foreign.db");
  {
    Db db(foreign);
    db.Exec("CREATE TABLE t(x)");
  }
  try {
    MeterStore::Open(foreign);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), foreign);
    EXPECT_NE(e.message().find("not a gpuplan meter database"), std::string::npos) << e.what();
  }
  const std::string text = File("notes.txt");
  std::ofstream(text) << "this is not a database, but it is long enough to look like a header. "
                         "this is not a database, but it is long enough to look like a header.\n";
  try {
    MeterStore::Open(text);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), text);
  }
  StoreOptions ro;
  ro.read_only = true;
  try {
    MeterStore::Open(File("missing.db"), ro);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), File("missing.db"));
  }
}

TEST_F(MeterStoreTest, APathThatCannotBeOpenedIsAnEnvironmentErrorNamingIt) {
  const std::string file = File("plain-file");
  std::ofstream(file) << "x";
  const std::string path = file + "/m.db";  // a folder that is a file
  try {
    MeterStore::Open(path);
    FAIL();
  } catch (const EnvironmentError& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
}

TEST_F(MeterStoreTest, BadOptionsNameTheOption) {
  StoreOptions o;
  o.flush_seconds = 0;
  try {
    MeterStore::Open(File("m.db"), o);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "flush_seconds");
  }
  EXPECT_FALSE(fs::exists(File("m.db")));  // nothing created
}

TEST_F(MeterStoreTest, AReadOnlyStoreQueriesWhatTheWriterFlushed) {
  auto writer = StoreWithTwoMinutes(File("m.db"));
  writer.Append({Gpu1(3600)});  // the data reaches kT0 + 1 h: the hour is complete
  ASSERT_FALSE(IsBehind(writer.Flush(kT0 + kHour).state));
  StoreOptions ro;
  ro.read_only = true;
  const auto reader = MeterStore::Open(File("m.db"), ro);
  EXPECT_EQ(reader.GpuSamples({kT0, kT0 + kHour}).size(), 240u);
  EXPECT_EQ(reader.GpuRollups(Resolution::kHour, {kT0, kT0 + kHour}),
            writer.GpuRollups(Resolution::kHour, {kT0, kT0 + kHour}));
  EXPECT_EQ(reader.Extent().hours_done, kT0 + kHour);
}

// --- one store, one server's GPUs ------------------------------------------------------------

GpuSample Device(const std::string& uuid, int i, int util) {
  GpuSample s;
  s.time = kT0 + i * kSecond;
  s.gpu = 0;
  s.uuid = uuid;
  s.utilization_gpu = util;
  return s;
}

// Another device's sample at a (time, GPU) the file holds is another server's: the flush throws
// an InputError naming the file and both UUIDs, and writes nothing of its batch (the new
// device row and the process rows included); what was stored stays as it was.
TEST_F(MeterStoreTest, AnotherDevicesSampleAtAHeldTimeIsRefusedAndNothingOfTheFlushIsWritten) {
  const std::string path = File("m.db");
  {
    auto store = MeterStore::Open(path);
    store.Append({Device("GPU-aaaa", 0, 50), Device("GPU-aaaa", 1, 50)});
    EXPECT_EQ(store.Flush(kT0 + 2 * kSecond).written, 2u);
    // The same device's samples again (a replay written twice): replaced, no error.
    store.Append({Device("GPU-aaaa", 1, 60)});
    EXPECT_EQ(store.Flush(kT0 + 2 * kSecond).written, 1u);

    ProcessSample p;
    p.time = kT0 + 2 * kSecond;
    p.gpu = 0;
    p.pid = 99;
    store.Append({Device("GPU-bbbb", 2, 100), Device("GPU-bbbb", 1, 100)});  // t = 2 s is new, 1 s is held
    store.Append(std::vector<ProcessSample>{p});
    try {
      store.Flush(kT0 + 3 * kSecond);
      FAIL() << "expected an InputError";
    } catch (const InputError& e) {
      EXPECT_EQ(e.file(), path);
      EXPECT_EQ(e.field(), "uuid");
      const std::string m = e.message();
      // kT0 + 1 s = 2024-01-01T00:00:01Z.
      EXPECT_NE(m.find("already holds GPU 0 at 2024-01-01T00:00:01Z"), std::string::npos) << m;
      EXPECT_NE(m.find("from GPU-aaaa; this sample is from GPU-bbbb"), std::string::npos) << m;
      EXPECT_NE(m.find("one store keeps one server's GPUs"), std::string::npos) << m;
    }
    EXPECT_EQ(store.Buffered(), 3u);  // kept in memory, not half-written
  }
  Db db(path);
  EXPECT_EQ(db.Int("SELECT count(*) FROM gpu_sample"), 2);  // t = 0 and 1 s of GPU-aaaa only
  EXPECT_EQ(db.Int("SELECT util_gpu FROM gpu_sample WHERE time_ms = 1704067201000"), 60);
  EXPECT_EQ(db.Int("SELECT count(*) FROM device"), 1);  // GPU-bbbb's row was rolled back
  EXPECT_EQ(db.Text("SELECT uuid FROM device"), "GPU-aaaa");
  EXPECT_EQ(db.Int("SELECT count(*) FROM process"), 0);
  EXPECT_EQ(db.Int("SELECT count(*) FROM process_sample"), 0);
  // A later writer can use the file: GPU-bbbb's id is made afresh, not the rolled-back one.
  auto again = MeterStore::Open(path);
  again.Append({Device("GPU-bbbb", 5, 100)});
  EXPECT_EQ(again.Flush(kT0 + 6 * kSecond).written, 1u);
  const auto five = again.GpuSamples({kT0 + 5 * kSecond, kT0 + 6 * kSecond});
  ASSERT_EQ(five.size(), 1u);
  EXPECT_EQ(five[0].uuid, "GPU-bbbb");
}

// A card replaced at the same index later in time (new UUID, later times) is the same server:
// both devices' samples are kept, each with its own UUID.
TEST_F(MeterStoreTest, ACardReplacedAtTheSameIndexLaterIsAccepted) {
  auto store = MeterStore::Open(File("m.db"));
  std::vector<GpuSample> before;
  std::vector<GpuSample> after;
  for (int i = 0; i < 10; ++i) {
    before.push_back(Device("GPU-old", i, 10));
    after.push_back(Device("GPU-new", 10 + i, 20));
  }
  store.Append(before);
  EXPECT_EQ(store.Flush(kT0 + 10 * kSecond).written, 10u);
  store.Append(after);
  EXPECT_EQ(store.Flush(kT0 + 20 * kSecond).written, 10u);
  const auto all = store.GpuSamples({kT0, kT0 + 20 * kSecond});
  ASSERT_EQ(all.size(), 20u);
  EXPECT_EQ(all[9].uuid, "GPU-old");
  EXPECT_EQ(all[10].uuid, "GPU-new");
}

// A late sample older than the raw cut plus the gap is dropped, and the flush says so: a count
// and why (FlushStatus.notice), never silently.
TEST_F(MeterStoreTest, DroppingTooOldSamplesIsSaidWithACountAndWhy) {
  StoreOptions o;
  o.raw_retention_hours = 0.05;  // 3 minutes
  auto store = MeterStore::Open(File("m.db"), o);
  std::vector<GpuSample> ten_minutes;
  for (int i = 0; i < 60; ++i) {
    GpuSample s = Device("GPU-aaaa", 0, 10);
    s.time = kT0 + i * 10 * kSecond;  // every 10 s, 0:00 to 9:50
    ten_minutes.push_back(s);
  }
  store.Append(ten_minutes);
  EXPECT_EQ(store.Flush(kT0 + 10 * kMinute).dropped_too_old, 0u);
  // Newest 9:50; cut = floor(9:50 - 3:00 = 6:50 to its minute) = 6:00.
  const RetentionResult r = store.ApplyRetention(kT0 + 10 * kMinute);
  ASSERT_TRUE(r.raw_cut);
  EXPECT_EQ(*r.raw_cut, kT0 + 6 * kMinute);
  // Accepted from 6:00 + the 10 s gap rounded up to a minute = 7:00. A sample at 1:05 is
  // dropped, one at 7:05 (a time not held yet) is re-rolled.
  GpuSample old = Device("GPU-aaaa", 0, 10);
  old.time = kT0 + kMinute + 5 * kSecond;
  GpuSample late = Device("GPU-aaaa", 0, 10);
  late.time = kT0 + 7 * kMinute + 5 * kSecond;
  store.Append({old, late});
  const FlushStatus st = store.Flush(kT0 + 10 * kMinute);
  EXPECT_EQ(st.written, 1u);
  EXPECT_EQ(st.dropped_too_old, 1u);
  EXPECT_EQ(st.notice, "meter database " + File("m.db") +
                           ": dropped 1 samples older than 2024-01-01T00:07:00Z: retention deleted the raw "
                           "samples before 2024-01-01T00:06:00Z and rolled up their minutes, so these cannot be "
                           "counted");
  EXPECT_EQ(store.Counters().dropped_too_old, 1u);
}

// Energy sums saturate at 2^63 - 1 in the file: a counter alternating 2^62 and 0 each second
// adds 2^62 at every rise (0 at each fall, a reset to 0). In minute 0 (samples at 0..4 s): 0, 0,
// 2^62, 0, 2^62 = 2^63, one past the largest; the column holds 9,223,372,036,854,775,807,
// never a negative number, and so does the hour.
TEST_F(MeterStoreTest, EnergySumsSaturateInTheFileInsteadOfWrapping) {
  auto store = MeterStore::Open(File("m.db"));
  std::vector<GpuSample> v;
  for (int i = 0; i < 5; ++i) {
    GpuSample s = Device("GPU-aaaa", i, 10);
    s.energy_mj = i % 2 == 0 ? 4611686018427387904ull : 0;
    v.push_back(s);
  }
  // A sample at 1:00 (no counter): the minutes are done up to the one after the newest sample,
  // so hour 0 is complete and rolled up.
  GpuSample next = Device("GPU-aaaa", 0, 10);
  next.time = kT0 + kHour;
  v.push_back(next);
  store.Append(v);
  store.Flush(kT0 + kHour + kMinute);
  Db db(File("m.db"));
  EXPECT_EQ(db.Int("SELECT energy_mj FROM gpu_minute WHERE bucket_ms = 1704067200000"), 9223372036854775807);
  EXPECT_EQ(db.Int("SELECT energy_mj FROM gpu_hour WHERE bucket_ms = 1704067200000"), 9223372036854775807);
  const auto hours = store.GpuRollups(Resolution::kHour, {kT0, kT0 + kHour});
  ASSERT_EQ(hours.size(), 1u);
  EXPECT_EQ(hours[0].energy_mj, 9223372036854775807ull);
}

TEST(MeterResolution, NamesParseAndPrint) {
  EXPECT_EQ(ParseResolution("Hour"), Resolution::kHour);
  EXPECT_EQ(ToString(Resolution::kMinute), "minute");
  EXPECT_EQ(BucketWidth(Resolution::kHour).count(), 3'600'000);
  EXPECT_THROW(ParseResolution("daily"), InputError);
}

}  // namespace
}  // namespace gpuplan
