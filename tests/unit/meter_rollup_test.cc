// The meter store's roll-up arithmetic (src/meter/rollup.h) without SQLite: samples handed to the
// builders directly, every expected value worked out by hand in the comment beside it.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <optional>

#include "meter/rollup.h"
#include "meter/sample.h"
#include "meter/store.h"

namespace gpuplan {
namespace {

using rollup::Bucketing;
using rollup::Computed;
using rollup::GpuAcc;
using rollup::GpuKey;
using rollup::GpuPrevious;
using rollup::GpuRollupBuilder;
using rollup::GpuRow;
using rollup::IntervalRules;
using rollup::ProcessAcc;
using rollup::ProcessKey;
using rollup::ProcessPresence;
using rollup::ProcessRollupBuilder;

// 2024-01-01T00:00:00Z: a whole hour, so minute and hour buckets start here.
constexpr int64_t kT0 = 1704067200000;
constexpr int64_t kSecond = 1000;
constexpr int64_t kMinute = 60 * kSecond;
constexpr int64_t kHour = 60 * kMinute;
constexpr uint64_t kGiB = 1ull << 30;

// The tests write instants as UTC ms since the epoch and spans in ms: these make them typed.
UtcMillis At(int64_t ms) { return FromUnixMillis(ms); }
constexpr std::chrono::milliseconds Ms(int64_t ms) { return std::chrono::milliseconds{ms}; }

// The store's defaults: a gap up to 10 s is observed time, a sample otherwise stands for 1 s.
constexpr IntervalRules kRules{Ms(10 * kSecond), Ms(1 * kSecond)};

GpuRow Row(int64_t t, std::optional<int> util) {
  GpuRow r;
  r.time = At(t);
  r.gpu = 0;
  r.util_gpu = util;
  return r;
}

TEST(MeterRollup, FloorToRoundsTowardsMinusInfinity) {
  // 119,999 ms is in the minute that starts at 60,000; 120,000 starts its own.
  EXPECT_EQ(FloorTo(119999, kMinute), 60000);
  EXPECT_EQ(FloorTo(120000, kMinute), 120000);
  // -1 ms lies in the minute [-60,000, 0), not in [0, 60,000).
  EXPECT_EQ(FloorTo(-1, kMinute), -60000);
  // Width 0 (one row per sample): the time itself.
  EXPECT_EQ(FloorTo(12345, 0), 12345);
}

TEST(MeterRollup, IntervalIsTheGapUpToTheLongestElseNominal) {
  // Previous sample 4 s before: 4,000 ms.
  EXPECT_EQ(rollup::Interval(At(kT0), At(kT0 + 4000), kRules).count(), 4000);
  // Exactly the longest gap (10 s) still counts: 10,000 ms.
  EXPECT_EQ(rollup::Interval(At(kT0), At(kT0 + 10000), kRules).count(), 10000);
  // 10.001 s is longer than the gap: the nominal 1,000 ms.
  EXPECT_EQ(rollup::Interval(At(kT0), At(kT0 + 10001), kRules).count(), 1000);
  // No previous sample: the nominal 1,000 ms.
  EXPECT_EQ(rollup::Interval(std::nullopt, At(kT0), kRules).count(), 1000);
}

// Two samples of one GPU in one minute: 30 % and then 90 %.
TEST(MeterRollup, TwoSamplesAverageAndObservedTime) {
  ProcessPresence nobody;
  Computed c;
  GpuRollupBuilder b(Bucketing{At(kT0), At(kT0 + kMinute), Ms(kMinute)}, kRules, nobody, c);
  ASSERT_TRUE(b.NeedsPrevious(0));
  b.SetPrevious(0, std::nullopt);  // nothing within 10 s before the minute
  EXPECT_FALSE(b.NeedsPrevious(0));
  b.Add(Row(kT0 + 1000, 30));  // no previous sample: stands for the nominal 1 s
  b.Add(Row(kT0 + 3000, 90));  // 2 s after the first: stands for 2 s
  ASSERT_EQ(c.gpus.size(), 1u);
  const GpuRollup& r = c.gpus.at(GpuKey{At(kT0), 0}).r;
  EXPECT_EQ(UnixMillis(r.bucket), kT0);
  EXPECT_EQ(r.width.count(), kMinute);
  EXPECT_EQ(r.samples, 2);
  // Observed 1 s + 2 s = 3,000 ms; both samples above 0 % so all of it active and busy.
  EXPECT_EQ(r.observed.count(), 3000);
  EXPECT_EQ(r.active.count(), 3000);
  EXPECT_EQ(r.busy.count(), 3000);
  EXPECT_EQ(r.Idle().count(), 0);
  // Utilisation: n 2, sum 30 + 90 = 120, mean per sample 120 / 2 = 60 %, min 30, max 90.
  EXPECT_EQ(r.utilization_gpu_n, 2);
  EXPECT_EQ(r.utilization_gpu_sum, 120);
  ASSERT_TRUE(r.UtilizationGpuMean());
  EXPECT_DOUBLE_EQ(*r.UtilizationGpuMean(), 60.0);
  EXPECT_EQ(r.utilization_gpu_min, 30);
  EXPECT_EQ(r.utilization_gpu_max, 90);
  // No memory, power or energy measured: no means, no energy.
  EXPECT_FALSE(r.UtilizationMemoryMean());
  EXPECT_FALSE(r.PowerMean());
  EXPECT_FALSE(r.energy_mj);
}

// A gap longer than 10 s is not observed: the sample after it stands for the nominal 1 s.
TEST(MeterRollup, GapIsNotObservedTime) {
  ProcessPresence nobody;
  Computed c;
  GpuRollupBuilder b(Bucketing{At(kT0), At(kT0 + kMinute), Ms(kMinute)}, kRules, nobody, c);
  b.SetPrevious(0, GpuPrevious{At(kT0 - 2000), std::nullopt});  // 2 s before the minute
  b.Add(Row(kT0, 50));           // 2 s since the previous: 2,000
  b.Add(Row(kT0 + 4000, 50));    // 4 s: 4,000
  b.Add(Row(kT0 + 60000 - 1, 50));  // 55.999 s > 10 s: nominal 1,000
  // Observed 2,000 + 4,000 + 1,000 = 7,000 ms.
  EXPECT_EQ(c.gpus.at(GpuKey{At(kT0), 0}).r.observed.count(), 7000);
}

// An hour of one GPU at 0 % sampled every 5 s; a process sits on it for 10 of the 60 minutes.
TEST(MeterRollup, IdleHourWithAProcessForTenMinutes) {
  ProcessPresence present;
  // The process is sampled at the GPU's ticks in [00:10, 00:20): 10 min / 5 s = 120 ticks.
  for (int64_t t = kT0 + 10 * kMinute; t < kT0 + 20 * kMinute; t += 5 * kSecond) {
    present.Add(0, At(t));
  }
  Computed c;
  GpuRollupBuilder b(Bucketing{At(kT0), At(kT0 + kHour), Ms(kHour)}, kRules, present, c);
  b.SetPrevious(0, GpuPrevious{At(kT0 - 5 * kSecond), std::nullopt});  // the tick before the hour
  for (int64_t t = kT0; t < kT0 + kHour; t += 5 * kSecond) {
    b.Add(Row(t, 0));
  }
  const GpuRollup& r = c.gpus.at(GpuKey{At(kT0), 0}).r;
  // 3,600 s / 5 s = 720 samples, each standing for 5,000 ms: 3,600,000 ms observed (1 h).
  EXPECT_EQ(r.samples, 720);
  EXPECT_EQ(r.observed.count(), kHour);
  // Utilisation 0 throughout: nothing active.
  EXPECT_EQ(r.active.count(), 0);
  // Busy where a process sample lies in the tick's interval (t - 5 s, t]: the 120 ticks of
  // [00:10, 00:20), 120 x 5,000 = 600,000 ms (10 min), all of it held idle.
  EXPECT_EQ(r.busy.count(), 10 * kMinute);
  EXPECT_EQ(r.IdleHeld().count(), 10 * kMinute);
  // Idle with nothing on it: 3,600,000 - 600,000 = 3,000,000 ms = 50 min = 0.8333 h.
  EXPECT_EQ(r.Idle().count(), 50 * kMinute);
  EXPECT_NEAR(static_cast<double>(r.Idle().count()) / static_cast<double>(kHour), 0.8333, 1e-4);
  // Mean utilisation 0 / 720 = 0 %, min = max = 0.
  EXPECT_DOUBLE_EQ(*r.UtilizationGpuMean(), 0.0);
  EXPECT_EQ(r.utilization_gpu_min, 0);
  EXPECT_EQ(r.utilization_gpu_max, 0);
}

// A process sample between two GPU samples makes the later one busy: its interval holds it.
TEST(MeterRollup, ProcessInsideTheIntervalMakesItBusy) {
  ProcessPresence present;
  present.Add(0, At(kT0 + 3000));
  // The interval is (after, upto]: a sample at `after` is outside, one at `upto` inside.
  EXPECT_FALSE(present.Any(0, At(kT0 + 3000), At(kT0 + 8000)));
  EXPECT_TRUE(present.Any(0, At(kT0 - 2000), At(kT0 + 3000)));
  EXPECT_FALSE(present.Any(1, At(kT0), At(kT0 + 5000)));  // another GPU
  Computed c;
  GpuRollupBuilder b(Bucketing{At(kT0), At(kT0 + kMinute), rollup::kPerSample}, kRules, present, c);
  b.SetPrevious(0, std::nullopt);
  b.Add(Row(kT0, 0));         // interval (T0 - 1 s, T0]: no process, idle
  b.Add(Row(kT0 + 5000, 0));  // interval (T0, T0 + 5 s] holds T0 + 3 s: busy 5,000
  ASSERT_EQ(c.gpu_rows.size(), 2u);  // one row per sample
  EXPECT_EQ(UnixMillis(c.gpu_rows[0].r.bucket), kT0);
  EXPECT_EQ(c.gpu_rows[0].r.width.count(), 0);
  EXPECT_EQ(c.gpu_rows[0].r.observed.count(), 1000);
  EXPECT_EQ(c.gpu_rows[0].r.busy.count(), 0);
  EXPECT_EQ(UnixMillis(c.gpu_rows[1].r.bucket), kT0 + 5000);
  EXPECT_EQ(c.gpu_rows[1].r.observed.count(), 5000);
  EXPECT_EQ(c.gpu_rows[1].r.busy.count(), 5000);
  EXPECT_EQ(c.gpu_rows[1].r.active.count(), 0);
}

// The energy counter: differences between samples; a counter that went down was reset.
TEST(MeterRollup, EnergyAcrossACounterReset) {
  ProcessPresence nobody;
  Computed c;
  GpuRollupBuilder b(Bucketing{At(kT0), At(kT0 + kMinute), Ms(kMinute)}, kRules, nobody, c);
  b.SetPrevious(0, std::nullopt);
  auto with_energy = [](int64_t t, uint64_t mj) {
    GpuRow r = Row(t, 10);
    r.energy_mj = mj;
    return r;
  };
  b.Add(with_energy(kT0, 1000000));         // no previous: 0 mJ
  b.Add(with_energy(kT0 + 1000, 1500000));  // +500,000
  b.Add(with_energy(kT0 + 2000, 200000));   // went down (reset): its own 200,000
  b.Add(with_energy(kT0 + 3000, 450000));   // +250,000
  b.Add(with_energy(kT0 + 30000, 900000));  // 27 s after: beyond the gap, 0
  // 0 + 500,000 + 200,000 + 250,000 + 0 = 950,000 mJ (950 J).
  EXPECT_EQ(c.gpus.at(GpuKey{At(kT0), 0}).r.energy_mj, 950000u);

  // StepOf alone: previous without a counter -> 0 mJ over the 1 s interval.
  const rollup::GpuStep step = rollup::StepOf(GpuPrevious{At(kT0), std::nullopt}, with_energy(kT0 + 1000, 5), kRules);
  EXPECT_EQ(step.dt.count(), 1000);
  EXPECT_EQ(step.energy_mj, 0u);
  // A sample without a counter adds no energy at all (absent, not 0).
  EXPECT_FALSE(rollup::StepOf(GpuPrevious{At(kT0), 7}, Row(kT0 + 1000, 10), kRules).energy_mj);
}

// Power is stored in whole milliwatts; the mean is in watts.
TEST(MeterRollup, PowerStoredInMilliwattsAndAveragedInWatts) {
  GpuSample s;
  s.time = FromUnixMillis(kT0);
  s.power = 123.4567;  // 123,456.7 mW, rounded to 123,457
  EXPECT_EQ(rollup::RowOf(s, std::nullopt).power_mw, 123457);
  EXPECT_DOUBLE_EQ(*rollup::SampleOf(rollup::RowOf(s, std::nullopt), std::nullopt).power, 123.457);

  ProcessPresence nobody;
  Computed c;
  GpuRollupBuilder b(Bucketing{At(kT0), At(kT0 + kMinute), Ms(kMinute)}, kRules, nobody, c);
  b.SetPrevious(0, std::nullopt);
  GpuSample a;
  a.time = FromUnixMillis(kT0);
  a.power = 250.5;  // 250,500 mW
  GpuSample z;
  z.time = FromUnixMillis(kT0 + 1000);
  z.power = 300;  // 300,000 mW
  b.Add(rollup::RowOf(a, 4));
  b.Add(rollup::RowOf(z, std::nullopt));
  const GpuAcc& acc = c.gpus.at(GpuKey{At(kT0), 0});
  // Sum 550,500 mW over 2 samples: 275,250 mW = 275.25 W; max 300,000 mW.
  EXPECT_EQ(acc.r.power_sum_mw, 550500);
  EXPECT_DOUBLE_EQ(*acc.r.PowerMean(), 275.25);
  EXPECT_EQ(acc.r.power_max_mw, 300000);
  // The device id of the last sample that had one.
  EXPECT_EQ(acc.device_id, 4);
}

// Minutes merge into their hour: counts and sums add, min / max combine.
TEST(MeterRollup, MinutesMergeIntoTheirHour) {
  auto minute = [](int64_t bucket, int64_t observed, int64_t busy, int util_min, int util_max, int64_t util_sum,
                   std::optional<uint64_t> energy) {
    GpuAcc a;
    a.r.bucket = At(bucket);
    a.r.width = Ms(kMinute);
    a.r.gpu = 0;
    a.r.samples = 60;
    a.r.observed = Ms(observed);
    a.r.busy = Ms(busy);
    a.r.utilization_gpu_n = 60;
    a.r.utilization_gpu_sum = util_sum;
    a.r.utilization_gpu_min = util_min;
    a.r.utilization_gpu_max = util_max;
    a.r.energy_mj = energy;
    return a;
  };
  std::map<GpuKey, GpuAcc> hours;
  rollup::AddMinuteToHour(hours, minute(kT0 + 5 * kMinute, 60000, 60000, 20, 40, 1800, 1000));
  rollup::AddMinuteToHour(hours, minute(kT0 + 6 * kMinute, 60000, 30000, 10, 80, 2400, std::nullopt));
  rollup::AddMinuteToHour(hours, minute(kT0 + kHour, 50000, 0, 0, 0, 0, 7));  // the next hour
  ASSERT_EQ(hours.size(), 2u);
  const GpuRollup& h = hours.at(GpuKey{At(kT0), 0}).r;
  // The hour starts at T0 (00:05 and 00:06 floored to the hour) and is an hour wide.
  EXPECT_EQ(UnixMillis(h.bucket), kT0);
  EXPECT_EQ(h.width.count(), kHour);
  // 60 + 60 samples; 120,000 ms observed; busy 60,000 + 30,000 = 90,000; idle 30,000.
  EXPECT_EQ(h.samples, 120);
  EXPECT_EQ(h.observed.count(), 120000);
  EXPECT_EQ(h.busy.count(), 90000);
  EXPECT_EQ(h.Idle().count(), 30000);
  // Utilisation: sum 1,800 + 2,400 = 4,200 over 120 samples = 35 %; min(20, 10) = 10; max 80.
  EXPECT_DOUBLE_EQ(*h.UtilizationGpuMean(), 35.0);
  EXPECT_EQ(h.utilization_gpu_min, 10);
  EXPECT_EQ(h.utilization_gpu_max, 80);
  // Energy 1,000 mJ + none = 1,000 mJ.
  EXPECT_EQ(h.energy_mj, 1000u);
  const GpuRollup& next = hours.at(GpuKey{At(kT0 + kHour), 0}).r;
  EXPECT_EQ(next.observed.count(), 50000);
  EXPECT_EQ(next.energy_mj, 7u);
}

TEST(MeterRollup, MergeRollupCombinesOptionalFields) {
  GpuRollup a;
  a.memory_used_n = 1;
  a.memory_used_sum = static_cast<int64_t>(2 * kGiB);
  a.memory_used_max = 2 * kGiB;
  a.memory_total = 80 * kGiB;
  a.temperature_max = 60;
  a.clock_event_reasons = 0x1;
  a.uuid = "GPU-a";
  GpuRollup b;
  b.memory_used_n = 1;
  b.memory_used_sum = static_cast<int64_t>(6 * kGiB);
  b.memory_used_max = 6 * kGiB;
  b.temperature_max = 55;
  b.clock_event_reasons = 0x4;
  MergeRollup(a, b);
  // Memory: (2 + 6) GiB / 2 = 4 GiB mean; max 6 GiB; total kept (b has none).
  EXPECT_DOUBLE_EQ(*a.MemoryUsedMean(), static_cast<double>(4 * kGiB));
  EXPECT_EQ(a.memory_used_max, 6 * kGiB);
  EXPECT_EQ(a.memory_total, 80 * kGiB);
  // Temperature max(60, 55) = 60; masks 0x1 | 0x4 = 0x5; uuid kept (b has none).
  EXPECT_EQ(a.temperature_max, 60);
  EXPECT_EQ(a.clock_event_reasons, 0x5u);
  EXPECT_EQ(a.uuid, "GPU-a");
  // No energy on either side: still absent.
  EXPECT_FALSE(a.energy_mj);
}

// A process sampled every 2 s for 10 samples, holding 1 GiB and 3 GiB in turn.
TEST(MeterRollup, ProcessObservedTimeAndMemory) {
  Computed c;
  ProcessRollupBuilder b(Bucketing{At(kT0), At(kT0 + kMinute), rollup::kWholeRange}, kRules, c);
  ASSERT_TRUE(b.NeedsPrevious(0, 7));
  b.SetPrevious(0, 7, std::nullopt);
  for (int i = 0; i < 10; ++i) {
    b.Add(At(kT0 + 10000 + i * 2000), 0, 7, (i % 2 == 0 ? 1 : 3) * kGiB);
  }
  ASSERT_EQ(c.processes.size(), 1u);
  const ProcessAcc& a = c.processes.at(ProcessKey{At(kT0), 0, 7});  // whole range: bucket = its start
  // First sample: nominal 1,000 ms; the other 9: 2,000 ms each. 1,000 + 18,000 = 19,000 ms.
  EXPECT_EQ(a.samples, 10);
  EXPECT_EQ(a.observed.count(), 19000);
  // Seen from T0 + 10 s to the last sample at T0 + 10 s + 9 x 2 s = T0 + 28 s.
  EXPECT_EQ(UnixMillis(a.first), kT0 + 10000);
  EXPECT_EQ(UnixMillis(a.last), kT0 + 28000);
  // Memory: 5 x 1 GiB + 5 x 3 GiB = 20 GiB over 10 samples = 2 GiB mean; max 3 GiB.
  ProcessIdentity who;
  who.pid = 4242;
  who.user = "ana";
  const ProcessUse u = rollup::UseOf(a, who);
  EXPECT_EQ(u.pid, 4242);
  EXPECT_EQ(u.user, "ana");
  EXPECT_EQ(UnixMillis(u.from), kT0 + 10000);
  EXPECT_EQ(UnixMillis(u.to), kT0 + 28000);
  EXPECT_DOUBLE_EQ(*u.GpuMemoryMean(), static_cast<double>(2 * kGiB));
  EXPECT_EQ(u.gpu_memory_max, 3 * kGiB);

  // Merged with a later row of the same process: from stays, to widens, sums add.
  ProcessUse later = u;
  later.from = FromUnixMillis(kT0 + kHour);
  later.to = FromUnixMillis(kT0 + 2 * kHour);
  later.observed = std::chrono::milliseconds{1000};
  later.gpu_memory_n = 1;
  later.gpu_memory_sum = static_cast<int64_t>(8 * kGiB);
  later.gpu_memory_max = 8 * kGiB;
  ProcessUse merged = u;
  rollup::MergeUse(merged, later);
  EXPECT_EQ(UnixMillis(merged.from), kT0 + 10000);
  EXPECT_EQ(UnixMillis(merged.to), kT0 + 2 * kHour);
  EXPECT_EQ(merged.samples, 20);
  EXPECT_EQ(merged.observed.count(), 20000);  // 19,000 + 1,000
  // (20 + 8) GiB over 11 samples.
  EXPECT_DOUBLE_EQ(*merged.GpuMemoryMean(), static_cast<double>(28 * kGiB) / 11);
  EXPECT_EQ(merged.gpu_memory_max, 8 * kGiB);
}

// A range rolled into one row per GPU: the bucket is the range's start, its width the range's.
TEST(MeterRollup, WholeRangeRowSpansTheRange) {
  ProcessPresence nobody;
  Computed c;
  GpuRollupBuilder b(Bucketing{At(kT0 + 90 * kSecond), At(kT0 + 3 * kHour), rollup::kWholeRange}, kRules, nobody, c);
  b.SetPrevious(0, std::nullopt);
  b.Add(Row(kT0 + 2 * kHour, 5));
  const GpuRollup& r = c.gpus.at(GpuKey{At(kT0 + 90 * kSecond), 0}).r;
  EXPECT_EQ(UnixMillis(r.bucket), kT0 + 90 * kSecond);
  // 3 h - 90 s = 10,800,000 - 90,000 = 10,710,000 ms.
  EXPECT_EQ(r.width.count(), 10710000);
}

TEST(MeterRollup, MeansOfNothingAreAbsent) {
  EXPECT_FALSE(rollup::MeanOf(0, 0));
  EXPECT_DOUBLE_EQ(*rollup::MeanOf(7, 2), 3.5);
  EXPECT_DOUBLE_EQ(*rollup::MeanOf(1500, 1, 1000), 1.5);  // 1,500 mW = 1.5 W
  EXPECT_EQ(rollup::Later(std::nullopt, At(5)), At(5));
  EXPECT_EQ(rollup::Later(At(3), At(5)), At(5));
  EXPECT_EQ(rollup::Earlier(At(3), At(5)), At(3));
  EXPECT_EQ(rollup::Earlier(At(3), std::nullopt), At(3));
}


// Sums saturate at 2^63 - 1 (the SQLite column's largest value) instead of wrapping. Edges by
// hand: 2^63 - 1 = 9,223,372,036,854,775,807; 2^62 = 4,611,686,018,427,387,904; 2^44 bytes
// = 16 TiB = 17,592,186,044,416.
TEST(MeterRollup, SumsSaturateAtTheColumnsLargestValue) {
  constexpr int64_t kMax = 9223372036854775807;
  constexpr uint64_t k2to62 = 4611686018427387904ull;
  constexpr uint64_t k16TiB = 17592186044416ull;
  EXPECT_EQ(rollup::kMaxSum, kMax);

  // Energy: a counter alternating 2^62 and 0 (each fall a reset, each rise +2^62) within one
  // minute. Deltas: 0 (first), 0 (reset to 0), 2^62, 0, 2^62: 2^63, one past the largest.
  ProcessPresence nobody;
  Computed c;
  GpuRollupBuilder b(Bucketing{At(kT0), At(kT0 + kMinute), Ms(kMinute)}, kRules, nobody, c);
  b.SetPrevious(0, std::nullopt);
  for (int i = 0; i < 5; ++i) {
    GpuRow r = Row(kT0 + i * kSecond, 10);
    r.energy_mj = i % 2 == 0 ? k2to62 : 0;
    b.Add(r);
  }
  EXPECT_EQ(c.gpus.at(GpuKey{At(kT0), 0}).r.energy_mj, static_cast<uint64_t>(kMax));
  // Three samples (deltas 0, 0, 2^62) stay exact.
  Computed exact;
  GpuRollupBuilder e(Bucketing{At(kT0), At(kT0 + kMinute), Ms(kMinute)}, kRules, nobody, exact);
  e.SetPrevious(0, std::nullopt);
  for (int i = 0; i < 3; ++i) {
    GpuRow r = Row(kT0 + i * kSecond, 10);
    r.energy_mj = i % 2 == 0 ? k2to62 : 0;
    e.Add(r);
  }
  EXPECT_EQ(exact.gpus.at(GpuKey{At(kT0), 0}).r.energy_mj, k2to62);

  // Memory: a sum 2^44 short of the largest takes one more 16 TiB sample exactly, then stays.
  GpuAcc a;
  a.r.memory_used_n = 1;
  a.r.memory_used_sum = kMax - static_cast<int64_t>(k16TiB);
  GpuRow m = Row(kT0, 100);
  m.mem_used = k16TiB;
  rollup::AddSample(a, m, Ms(kSecond), std::nullopt, true);
  EXPECT_EQ(a.r.memory_used_sum, kMax);
  rollup::AddSample(a, m, Ms(kSecond), std::nullopt, true);
  EXPECT_EQ(a.r.memory_used_sum, kMax);
  EXPECT_EQ(a.r.memory_used_n, 3);

  // Merging rows (hours into a report's days): 2^62 + 2^62 of energy and of memory saturate,
  // never negative; 2^62 + (2^62 - 1) is exactly the largest.
  GpuRollup x;
  x.energy_mj = k2to62;
  x.memory_used_sum = static_cast<int64_t>(k2to62);
  x.power_sum_mw = static_cast<int64_t>(k2to62);
  GpuRollup y = x;
  MergeRollup(x, y);
  EXPECT_EQ(x.energy_mj, static_cast<uint64_t>(kMax));
  EXPECT_EQ(x.memory_used_sum, kMax);
  EXPECT_EQ(x.power_sum_mw, kMax);
  GpuRollup z;
  z.energy_mj = k2to62;
  GpuRollup w;
  w.energy_mj = k2to62 - 1;
  MergeRollup(z, w);
  EXPECT_EQ(z.energy_mj, static_cast<uint64_t>(kMax));

  // A process's GPU memory likewise.
  ProcessUse u;
  u.gpu_memory_sum = kMax - 5;
  ProcessUse v;
  v.gpu_memory_sum = 6;
  rollup::MergeUse(u, v);
  EXPECT_EQ(u.gpu_memory_sum, kMax);
}

}  // namespace
}  // namespace gpuplan
