// The meter store's roll-up arithmetic, without SQLite: the interval each sample stands for,
// busy / active / idle time, energy across counter resets, sums, counts, min / max, and the
// merging of buckets (minutes into hours, a range's rows into one per process). Times are typed
// (UtcMillis instants, std::chrono::milliseconds spans); the SQLite columns' integer ms are
// converted where the store binds and reads them (store_*.cc).
#pragma once

#include <chrono>
#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "meter/sample.h"
#include "meter/store.h"

namespace gpuplan::rollup {

inline constexpr int64_t kMilliwattsPerWatt = 1000;

inline int64_t AsInt64(uint64_t v) { return static_cast<int64_t>(v); }  // bit-preserving
inline uint64_t AsUint64(int64_t v) { return static_cast<uint64_t>(v); }

// Sums and energies saturate at the largest value of the SQLite columns that hold them (int64,
// 2^63 - 1) instead of wrapping: a stored sum is never negative and never smaller than what
// was added, and a saturated one reads as "at least this" (docs/meter-store.md section 4).
inline constexpr int64_t kMaxSum = std::numeric_limits<int64_t>::max();
inline int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t out = 0;
  if (__builtin_add_overflow(a, b, &out)) {
    return b > 0 ? kMaxSum : std::numeric_limits<int64_t>::min();
  }
  return out;
}
// Unsigned counts (energy, mJ): at most kMaxSum, so the column's bit-for-bit int64 stays >= 0.
inline uint64_t SaturatingAdd(uint64_t a, uint64_t b) {
  constexpr auto kMax = static_cast<uint64_t>(kMaxSum);
  a = std::min(a, kMax);
  b = std::min(b, kMax);
  return a > kMax - b ? kMax : a + b;
}
// A memory value (bytes, uint64) into a signed sum.
inline int64_t SaturatingAddBytes(int64_t sum, uint64_t bytes) {
  return SaturatingAdd(sum, static_cast<int64_t>(std::min(bytes, static_cast<uint64_t>(kMaxSum))));
}

template <typename T>
void KeepMin(std::optional<T>& into, const std::optional<T>& v) {
  if (v && (!into || *v < *into)) {
    into = v;
  }
}
template <typename T>
void KeepMax(std::optional<T>& into, const std::optional<T>& v) {
  if (v && (!into || *v > *into)) {
    into = v;
  }
}
// The later / earlier of two optional times (either when the other is absent).
std::optional<UtcMillis> Later(std::optional<UtcMillis> a, std::optional<UtcMillis> b);
std::optional<UtcMillis> Earlier(std::optional<UtcMillis> a, std::optional<UtcMillis> b);

// sum / n / scale; none when n <= 0.
std::optional<double> MeanOf(int64_t sum, int64_t n, double scale = 1);

// One raw GPU sample as stored (power in mW, the device by its row id; the time as UtcMillis,
// the column's integer ms converted).
struct GpuRow {
  UtcMillis time{};
  int gpu = 0;
  std::optional<int64_t> device_id;
  std::optional<int> util_gpu;
  std::optional<int> util_mem;
  std::optional<uint64_t> mem_used;
  std::optional<uint64_t> mem_total;
  std::optional<int64_t> power_mw;
  std::optional<uint64_t> energy_mj;
  std::optional<int> temp_c;
  std::optional<int> sm_clock_mhz;
  std::optional<uint64_t> clock_events;
};

// A sample as stored (power rounded to whole mW; the uuid is stored as `device_id`) and back
// (`uuid`: the device's uuid, when known).
GpuRow RowOf(const GpuSample& s, std::optional<int64_t> device_id);
GpuSample SampleOf(const GpuRow& r, std::optional<std::string> uuid);

// A GPU roll-up row with its device id (the public GpuRollup carries the uuid).
struct GpuAcc {
  GpuRollup r;
  std::optional<int64_t> device_id;
};

// One process (by its row id) on one GPU over a bucket.
struct ProcessAcc {
  UtcMillis bucket{};
  int gpu = 0;
  int64_t process_id = 0;
  UtcMillis first{};
  UtcMillis last{};
  int64_t samples = 0;
  std::chrono::milliseconds observed{};
  int64_t mem_n = 0;
  int64_t mem_sum = 0;
  std::optional<uint64_t> mem_max;
};

// How long a sample stands for: the time since the previous sample of its GPU (or of its
// process on that GPU) when that is at most max_gap, else nominal (the sampling interval): a
// gap longer than max_gap is not observed time.
struct IntervalRules {
  std::chrono::milliseconds max_gap{10000};
  std::chrono::milliseconds nominal{1000};
};
std::chrono::milliseconds Interval(std::optional<UtcMillis> previous, UtcMillis time, const IntervalRules& rules);

// The previous sample of a GPU, as far as the interval and the energy counter need it.
struct GpuPrevious {
  UtcMillis time{};
  std::optional<uint64_t> energy_mj;
};
// What one GPU sample adds: its interval, and the energy its counter advanced over it (mJ; 0
// when the sample has a counter but the previous one is too far or has none; a counter that
// went down was reset, e.g. by a driver reload, and counted from 0 since: its new value).
struct GpuStep {
  std::chrono::milliseconds dt{0};
  std::optional<uint64_t> energy_mj;
};
GpuStep StepOf(const std::optional<GpuPrevious>& previous, const GpuRow& s, const IntervalRules& rules);

// Adds one sample over `dt` into a bucket: observed time; busy time when `busy`; active time
// when utilisation > 0; the counts, sums, min / max of each field the sample has; the energy;
// the OR of the clock-event masks; the device id of the latest sample that had one.
void AddSample(GpuAcc& a, const GpuRow& s, std::chrono::milliseconds dt, std::optional<uint64_t> energy_delta,
               bool busy);
void MergeAcc(GpuAcc& into, const GpuAcc& more);
// Adds `more` (same process and GPU) into `into`: first / last widen, counts and sums add.
void MergeProcess(ProcessAcc& into, const ProcessAcc& more);
// Likewise for a process's rows with their identity (ProcessesSeen).
void MergeUse(ProcessUse& into, const ProcessUse& more);
// The public row of a process bucket.
ProcessUse UseOf(const ProcessAcc& a, const ProcessIdentity& who);

using GpuKey = std::pair<UtcMillis, int>;                // bucket, gpu
using ProcessKey = std::tuple<UtcMillis, int, int64_t>;  // bucket, gpu, process id

// Bucket widths besides the roll-ups' minute and hour.
inline constexpr std::chrono::milliseconds kPerSample{0};    // one row per sample, in the order added
inline constexpr std::chrono::milliseconds kWholeRange{-1};  // one row per GPU (per process and GPU) over the range

// The buckets of the samples in [from, to): one per `width`, or kPerSample, kWholeRange.
struct Bucketing {
  UtcMillis from{};
  UtcMillis to{};
  std::chrono::milliseconds width = kPerSample;
  UtcMillis BucketOf(UtcMillis t) const { return width == kWholeRange ? from : FloorTo(t, width); }
  // The width a row records: the range's length for kWholeRange.
  std::chrono::milliseconds RowWidth() const { return width == kWholeRange ? to - from : width; }
};

// The times at which a process was on each GPU, added in time order.
class ProcessPresence {
 public:
  void Add(int gpu, UtcMillis time);
  // A process sample on `gpu` in (after, upto].
  bool Any(int gpu, UtcMillis after, UtcMillis upto) const;

 private:
  std::map<int, std::vector<UtcMillis>> times_;
};

// Rows rolled up from raw samples: bucketed (`gpus`, `processes`) or, for kPerSample, one per
// sample in the order added (`gpu_rows`, `process_rows`).
struct Computed {
  std::map<GpuKey, GpuAcc> gpus;
  std::vector<GpuAcc> gpu_rows;
  std::map<ProcessKey, ProcessAcc> processes;
  std::vector<ProcessAcc> process_rows;
};

// Rolls up GPU samples given in time order (then GPU). Before a GPU's first sample, say what
// preceded the range (SetPrevious; none when nothing lies within max_gap before it). A sample
// is busy when its utilisation is > 0 or a process was on its GPU during its interval.
class GpuRollupBuilder {
 public:
  GpuRollupBuilder(const Bucketing& bucketing, const IntervalRules& rules, const ProcessPresence& presence,
                   Computed& out)
      : bucketing_(bucketing), rules_(rules), presence_(presence), out_(out) {}
  bool NeedsPrevious(int gpu) const { return previous_.find(gpu) == previous_.end(); }
  void SetPrevious(int gpu, std::optional<GpuPrevious> previous) { previous_[gpu] = previous; }
  void Add(const GpuRow& s);

 private:
  Bucketing bucketing_;
  IntervalRules rules_;
  const ProcessPresence& presence_;
  Computed& out_;
  std::map<int, std::optional<GpuPrevious>> previous_;
};

// Likewise for process samples (time, GPU, process row id, GPU memory), in time order.
class ProcessRollupBuilder {
 public:
  ProcessRollupBuilder(const Bucketing& bucketing, const IntervalRules& rules, Computed& out)
      : bucketing_(bucketing), rules_(rules), out_(out) {}
  bool NeedsPrevious(int gpu, int64_t process_id) const {
    return previous_.find({gpu, process_id}) == previous_.end();
  }
  void SetPrevious(int gpu, int64_t process_id, std::optional<UtcMillis> previous) {
    previous_[{gpu, process_id}] = previous;
  }
  void Add(UtcMillis time, int gpu, int64_t process_id, std::optional<uint64_t> gpu_memory);

 private:
  Bucketing bucketing_;
  IntervalRules rules_;
  Computed& out_;
  std::map<std::pair<int, int64_t>, std::optional<UtcMillis>> previous_;
};

// Adds a minute row into the hour that holds it (a new hour starts as the minute, its bucket
// moved to the hour's start).
void AddMinuteToHour(std::map<GpuKey, GpuAcc>& hours, const GpuAcc& minute);
void AddMinuteToHour(std::map<ProcessKey, ProcessAcc>& hours, const ProcessAcc& minute);

}  // namespace gpuplan::rollup
