// The meter's store: GPU and process samples in one SQLite file (WAL mode), written in batches,
// rolled up into 1-minute and 1-hour tables and trimmed by retention (docs/meter-store.md has
// the schema, the roll-up definitions and the crash-safety argument).
//
// The agent appends every sample and calls Flush when FlushDue says so (every flush_seconds,
// 5 s by default): one transaction writes the buffered samples and rolls up the minutes and
// hours that have completed. When the database is locked, full or failing, Flush keeps the
// samples in memory (bounded by max_buffered_samples, oldest dropped and counted beyond it),
// says why in its status and catches up on a later call; it never waits on a lock for longer
// than busy_timeout_ms. Reports open the same file (read_only) and query samples, roll-ups and
// processes by time range.
//
// Not thread-safe: one MeterStore per thread. Samples still buffered when the store is destroyed
// are lost; call Flush before.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "meter/sample.h"

namespace gpuplan {

// The schema this build writes and reads (PRAGMA user_version); a newer file is refused.
inline constexpr int kMeterSchemaVersion = 2;  // 2: process.pod_uid
// PRAGMA application_id of a meter database: "GPM1", so a foreign SQLite file is told apart.
inline constexpr int32_t kMeterApplicationId = 0x47504D31;

struct StoreOptions {
  // Open an existing database for reading only (reports): nothing is created or written, and a
  // missing file is an InputError.
  bool read_only = false;
  // How often the agent should flush (FlushDue). A SIGKILL loses the samples of at most about
  // this long, plus the sampling interval (docs/meter-store.md: crash safety).
  double flush_seconds = 5;
  // Rows (GPU + process samples) held in memory while the database cannot be written; beyond
  // this the oldest are dropped and counted. 200,000 rows: 7 h of 8 GPUs at 1 Hz (3.5 h with a
  // process on each), about 45 MB (80 MB with the processes' command lines).
  std::size_t max_buffered_samples = 200000;
  // Rows written by one Flush; a larger backlog is written over the following flushes
  // (FlushState::kCatchingUp), so catching up never holds the write lock for long.
  std::size_t max_samples_per_flush = 50000;
  // How long one statement waits on another connection's lock before Flush gives up and
  // reports kLocked.
  int busy_timeout_ms = 100;
  // A Flush that took longer than this is reported as kSlow (written, nothing lost).
  double slow_flush_seconds = 1;
  // Sampling: the nominal interval, and the longest gap between two samples of one GPU (or one
  // process on one GPU) that still counts as observed time (docs/meter-store.md: roll-ups).
  double sample_interval_seconds = 1;
  double max_sample_gap_seconds = 10;
  // Retention (ApplyRetention): raw samples, 1-minute roll-ups, 1-hour roll-ups (none: kept
  // forever). Rows are deleted in transactions of at most retention_batch_rows rows.
  double raw_retention_hours = 48;
  double minute_retention_days = 30;
  std::optional<double> hour_retention_days;
  int retention_batch_rows = 10000;
  // A bound on the database file (PRAGMA max_page_count): beyond it Flush reports kFull and
  // keeps the samples in memory until retention makes room. None: only the disk bounds it.
  std::optional<uint64_t> max_database_bytes;
};

// Throws InputError naming the option (field) when a value is out of range.
void ValidateStoreOptions(const StoreOptions& options);

enum class Resolution { kRaw, kMinute, kHour };

// "raw", "minute", "hour".
std::string_view ToString(Resolution r);
// Case-insensitive; InputError naming `field` on an unknown name.
Resolution ParseResolution(const std::string& text, const std::string& field = "resolution");
// The width of a roll-up bucket: a minute and an hour; 0 for raw (one sample is one row).
std::chrono::milliseconds BucketWidth(Resolution r);

// [from, to). A roll-up row is in the range when its bucket starts in it.
struct TimeRange {
  UtcMillis from{};
  UtcMillis to{};
};

// One GPU over one bucket (a minute, an hour, or one raw sample), as stored in gpu_minute and
// gpu_hour (docs/meter-store.md: roll-ups). Sums and counts rather than means, so buckets
// merge exactly (MergeRollup); a field no sample had has n = 0 and no min/max.
struct GpuRollup {
  UtcMillis bucket{};                 // start of the bucket; for raw rows the sample's time
  std::chrono::milliseconds width{};  // a minute, an hour, 0 (raw)
  int gpu = 0;
  std::optional<std::string> uuid;  // of the bucket's last sample that had one
  int64_t samples = 0;
  // Time: each sample stands for the interval since the previous sample of its GPU (that
  // interval when at most max_sample_gap_seconds, else sample_interval_seconds).
  std::chrono::milliseconds observed{};
  std::chrono::milliseconds busy{};    // of observed: utilisation > 0 or a process on the GPU
  std::chrono::milliseconds active{};  // of observed: utilisation > 0
  int64_t utilization_gpu_n = 0;
  int64_t utilization_gpu_sum = 0;  // %
  std::optional<int> utilization_gpu_min;
  std::optional<int> utilization_gpu_max;
  int64_t utilization_memory_n = 0;
  int64_t utilization_memory_sum = 0;  // %
  int64_t memory_used_n = 0;
  int64_t memory_used_sum = 0;  // bytes (fits int64 for a GPU-year of 200 GB cards at 1 Hz)
  std::optional<uint64_t> memory_used_max;  // bytes
  std::optional<uint64_t> memory_total;     // bytes, the largest seen
  int64_t power_n = 0;
  int64_t power_sum_mw = 0;
  std::optional<int64_t> power_max_mw;
  // Energy the counter advanced over the bucket's observed intervals, mJ; a counter that went
  // down (driver reload) counts its new value. Absent when no sample had the counter.
  std::optional<uint64_t> energy_mj;
  std::optional<int> temperature_max;  // C
  uint64_t clock_event_reasons = 0;    // OR of the samples' masks

  std::optional<double> UtilizationGpuMean() const;     // %
  std::optional<double> UtilizationMemoryMean() const;  // %
  std::optional<double> MemoryUsedMean() const;         // bytes
  std::optional<double> PowerMean() const;              // W
  std::chrono::milliseconds IdleHeld() const { return busy - active; }  // a process, utilisation 0
  std::chrono::milliseconds Idle() const { return observed - busy; }    // nothing on the GPU
  bool operator==(const GpuRollup&) const = default;
};

// Adds `more` (same GPU, later or equal bucket) into `into`: counts and sums add, min/max and
// the clock-event mask combine, uuid and memory_total take the later value when present. The
// bucket start and width stay those of `into`.
void MergeRollup(GpuRollup& into, const GpuRollup& more);

// One process on one GPU over a bucket or a whole range.
struct ProcessUse : ProcessIdentity {
  int gpu = 0;
  // Raw: the first and last sample's time. Roll-ups: the start of the first bucket and the end
  // of the last.
  UtcMillis from{};
  UtcMillis to{};
  int64_t samples = 0;
  std::chrono::milliseconds observed{};  // as for GPUs: the interval since its previous sample on this GPU
  int64_t gpu_memory_n = 0;
  int64_t gpu_memory_sum = 0;  // bytes
  std::optional<uint64_t> gpu_memory_max;  // bytes

  std::optional<double> GpuMemoryMean() const;
  bool operator==(const ProcessUse&) const = default;
};

// What one Flush found. kOk and kSlow: everything buffered was written. The others: samples are
// still buffered (nothing lost unless `dropped` grew), and a later Flush catches up.
enum class FlushState {
  kOk,
  kSlow,        // written, but the flush took longer than slow_flush_seconds
  kLocked,      // another connection holds the write lock (SQLITE_BUSY / SQLITE_LOCKED)
  kFull,        // the disk or max_database_bytes is full (SQLITE_FULL)
  kIoError,     // the file system failed (SQLITE_IOERR)
  kCatchingUp,  // a backlog larger than max_samples_per_flush: part written, the rest next time
};

// "ok", "slow", "locked", "full", "io_error", "catching_up".
std::string_view ToString(FlushState s);
// kLocked, kFull, kIoError, kCatchingUp: samples wait in memory.
bool IsBehind(FlushState s);

// What a roll-up pass wrote.
struct RollUpResult {
  int64_t minute_rows = 0;  // gpu_minute rows written
  int64_t hour_rows = 0;    // gpu_hour rows written
  int64_t process_minute_rows = 0;
  int64_t process_hour_rows = 0;
  std::optional<UtcMillis> minutes_done;  // every minute before this is rolled up
  std::optional<UtcMillis> hours_done;
};

struct FlushStatus {
  FlushState state = FlushState::kOk;
  // One line for the log: what happened and what it means ("database is locked by another
  // connection (SQLITE_BUSY): 1,200 samples wait in memory"); empty when kOk.
  std::string reason;
  // The state differs from the previous Flush's: the agent logs `reason` when this is true,
  // so a long outage is said once and its end once.
  bool changed = false;
  std::size_t written = 0;   // rows written by this Flush
  std::size_t buffered = 0;  // rows still in memory
  uint64_t dropped = 0;      // rows dropped since Open (buffer overflow, or older than the raw cut)
  // Rows of this flush dropped as older than the raw cut (their minute is rolled up and its raw
  // samples deleted), and when there were any, one line saying so for the log: never silent.
  uint64_t dropped_too_old = 0;
  std::string notice;
  double seconds = 0;        // how long the Flush took
  RollUpResult rollup;
};

struct RetentionResult {
  // False when another connection held the lock (reason says so); what was deleted stays
  // deleted and the next call continues.
  bool done = true;
  std::string reason;
  std::optional<UtcMillis> raw_cut;  // rows before these were deleted
  std::optional<UtcMillis> minute_cut;
  std::optional<UtcMillis> hour_cut;
  int64_t gpu_samples = 0;  // rows deleted per table
  int64_t process_samples = 0;
  int64_t gpu_minutes = 0;
  int64_t process_minutes = 0;
  int64_t gpu_hours = 0;
  int64_t process_hours = 0;
};

// What the database holds: first and last raw sample, first roll-up bucket of each table, and
// how far the roll-ups have got.
struct StoreExtent {
  std::optional<UtcMillis> raw_from;
  std::optional<UtcMillis> raw_to;  // the last sample's time
  std::optional<UtcMillis> minute_from;
  std::optional<UtcMillis> hour_from;
  std::optional<UtcMillis> minutes_done;
  std::optional<UtcMillis> hours_done;
  // Every sample handed to the store at or before this time is committed (or was dropped as
  // older than the raw cut): `meter run --replay --resume` continues after it.
  std::optional<UtcMillis> samples_complete;

  // The finest resolution whose data reaches back to range.from: raw, else minute, else
  // hour.
  Resolution FinestCovering(const TimeRange& range) const;
};

// Counters since Open, for the agent's log and /metrics.
struct StoreCounters {
  uint64_t appended = 0;          // rows given to Append
  uint64_t written = 0;           // rows committed
  uint64_t dropped_overflow = 0;  // oldest rows dropped beyond max_buffered_samples
  uint64_t dropped_too_old = 0;   // rows older than the raw retention cut (already trimmed)
  uint64_t flushes = 0;
  uint64_t flushes_behind = 0;    // flushes that ended in a behind state
};

class MeterStore {
 public:
  // Opens or creates the database at `path` (WAL, synchronous=NORMAL, busy timeout). Throws
  // EnvironmentError naming the path when it cannot be opened, created or written (no such
  // folder, read-only file, WAL unavailable); InputError naming the file when it is not a
  // meter database (not SQLite, corrupt, another application's, or a newer schema), or, with
  // read_only, when it does not exist; InputError naming the option on bad options.
  static MeterStore Open(const std::string& path, const StoreOptions& options = {});

  MeterStore(MeterStore&&) noexcept;
  MeterStore& operator=(MeterStore&&) noexcept;
  ~MeterStore();

  const std::string& path() const;
  const StoreOptions& options() const;

  // Buffers samples in memory (no I/O). Beyond max_buffered_samples the oldest rows are dropped
  // and counted.
  void Append(const std::vector<GpuSample>& samples);
  void Append(const std::vector<ProcessSample>& samples);
  std::size_t Buffered() const;

  // True when flush_seconds have passed since the last Flush, or the last one was catching up.
  bool FlushDue(UtcMillis now) const;
  // Writes the buffer (at most max_samples_per_flush rows) and rolls up what completed by
  // `now`, in one transaction. Locked, full or I/O errors are a status, not an exception;
  // a read-only file is an EnvironmentError and corruption an InputError, naming the file.
  FlushStatus Flush(UtcMillis now);
  // Rolls up the minutes and hours completed by `now` (Flush does this too) and re-rolls
  // those that received late samples. Idempotent. Throws EnvironmentError when locked.
  RollUpResult RollUp(UtcMillis now);
  // Deletes raw samples older than now - raw_retention_hours, minute roll-ups older than
  // now - minute_retention_days and hour roll-ups older than hour_retention_days (when set), in
  // batches; never rows that are not rolled up yet.
  RetentionResult ApplyRetention(UtcMillis now);

  // Queries over what was flushed, ordered by time then GPU. `gpu` limits to one GPU.
  std::vector<GpuSample> GpuSamples(const TimeRange& range, std::optional<int> gpu = {}) const;
  std::vector<ProcessSample> ProcessSamples(const TimeRange& range, std::optional<int> gpu = {}) const;
  // Rows at a resolution: minute and hour from their tables, raw as one row per sample computed
  // by the roll-up rules (so a report reads every resolution the same way).
  std::vector<GpuRollup> GpuRollups(Resolution resolution, const TimeRange& range,
                                    std::optional<int> gpu = {}) const;
  // One row per process, GPU and bucket.
  std::vector<ProcessUse> ProcessRollups(Resolution resolution, const TimeRange& range,
                                         std::optional<int> gpu = {}) const;
  // One row per process and GPU seen in the range (its buckets merged), ordered by GPU, then
  // first seen.
  std::vector<ProcessUse> ProcessesSeen(Resolution resolution, const TimeRange& range,
                                        std::optional<int> gpu = {}) const;
  StoreExtent Extent() const;
  StoreCounters Counters() const;
  // From any thread: makes the statement running on this store's connection (a flush stuck on a
  // slow disk) fail with SQLITE_INTERRUPT, which Flush reports as a behind state (the samples
  // stay buffered). The agent calls it when a stop request outlasts its drain time.
  void Interrupt();

 private:
  struct Impl;
  explicit MeterStore(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpuplan
