// MeterStore's inside, shared by the files that implement it: store.cc (open, options, retention),
// store_schema.cc (schema, migrations), store_write.cc (buffer, Flush, inserts),
// store_rollup.cc (the roll-up pass), store_query.cc (read paths). Internal: not for callers.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "meter/rollup.h"
#include "meter/sqlite.h"
#include "meter/store.h"

namespace gpuplan {

// Names of the schema, defined beside the tables in store_schema.cc.
extern const char* const kGpuSampleSelect;      // gpu_sample's columns, in GpuRow's order
extern const char* const kGpuRollupSelect;      // gpu_minute's and gpu_hour's columns
extern const int kGpuRollupColumnCount;
extern const char* const kProcessRollupSelect;  // process_minute's and process_hour's columns
// meta keys: every minute (hour) before this is rolled up; raw samples before this were deleted;
// every sample handed to the store at or before this is committed (or dropped as too old).
extern const char* const kMetaMinutesDone;
extern const char* const kMetaHoursDone;
extern const char* const kMetaRawCut;
extern const char* const kMetaSamplesComplete;

// The store's edge: a column's (or meta value's) integer milliseconds as a typed time. Every
// time below is typed; the statements bind and read the columns' integer UTC ms (UnixMillis,
// FromUnixMillis) where they are prepared.
inline std::optional<UtcMillis> OptFromUnixMillis(std::optional<int64_t> ms) {
  return ms ? std::optional<UtcMillis>(FromUnixMillis(*ms)) : std::nullopt;
}

// "<time> >= ?1 AND <time> < ?2 AND (?3 IS NULL OR <gpu> = ?3)": the range and GPU filter of a
// read, bound by Impl::ForEachInRange.
std::string InRange(const std::string& time_column, const std::string& gpu_column);

struct MeterStore::Impl {
  std::string path;
  StoreOptions options;
  sqlite::Database db;
  // The process table's pod_uid column (schema 2); "NULL" when reading a version-1 file
  // read-only (a writer migrates it on open).
  std::string pod_uid_column = "pod_uid";
  std::string PodUid(const char* alias) const {
    return pod_uid_column == "pod_uid" ? std::string(alias) + ".pod_uid" : pod_uid_column;
  }

  std::deque<GpuSample> gpu_buffer;
  std::deque<ProcessSample> process_buffer;

  // Ids of device and process rows, committed and written by the open transaction.
  std::map<std::string, int64_t> device_ids;
  std::map<ProcessIdentity, int64_t> process_ids;
  std::map<std::string, int64_t> pending_device_ids;
  std::map<ProcessIdentity, int64_t> pending_process_ids;

  // Committed meta values.
  std::optional<UtcMillis> minutes_done;
  std::optional<UtcMillis> hours_done;
  std::optional<UtcMillis> raw_cut;
  std::optional<UtcMillis> samples_complete;

  StoreCounters counters;
  std::optional<UtcMillis> last_flush;
  FlushState last_state = FlushState::kOk;

  sqlite::Use Q(const std::string& sql) { return db.Query(sql); }
  rollup::IntervalRules Rules() const;
  std::chrono::milliseconds MaxGap() const { return Rules().max_gap; }

  // --- store.cc: meta values, extents, retention ----------------------------------------------
  // The meta values are times (the watermarks; stored as integer UTC ms), and so are the
  // columns MinOf / MaxOf read (time_ms, bucket_ms).
  std::optional<UtcMillis> Meta(const char* key);
  void SetMeta(const char* key, UtcMillis value);
  void LoadMeta();
  std::optional<UtcMillis> MinOf(const std::string& table, const std::string& column);
  std::optional<UtcMillis> MaxOf(const std::string& table, const std::string& column);
  // The newest sample the file holds (GPU or process); roll-ups and retention never run ahead
  // of it, whatever clock they are given (docs/meter-store.md: the store's own time).
  std::optional<UtcMillis> NewestSample();
  // The store's own time (retention): the newest sample held or waiting in memory (a full file
  // keeps new samples buffered; retention must still make room for them), else the end of the
  // newest roll-up.
  std::optional<UtcMillis> NewestData();
  // Deletes rows with `column` < cut, at most about retention_batch_rows per statement (each its
  // own transaction, so the write lock is held briefly). Returns the rows deleted.
  int64_t DeleteOlder(const std::string& table, const std::string& column, UtcMillis cut);

  // --- store_schema.cc ---------------------------------------------------------------------------
  // What Open does with the file it found: create the schema, migrate it, or use it as it is.
  enum class SchemaAction { kCreate, kMigrate, kNone };
  // Checks application_id and user_version (InputError naming the file when it is not ours, is
  // damaged or newer) and says what to do; a version-1 file read read-only reads pod_uid as NULL.
  SchemaAction CheckSchema();
  void CreateSchema();
  // Runs the migration steps from the file's version up to kMeterSchemaVersion, in one
  // write transaction (so a file migrated meanwhile by another process is left as it is).
  void Migrate();

  // --- store_write.cc ----------------------------------------------------------------------------
  // Drops the oldest buffered rows beyond max_buffered_samples.
  void Trim();
  // Samples before this are dropped as too old: the raw cut plus the longest gap, in minutes.
  std::optional<UtcMillis> AcceptFrom() const;
  // The oldest sample still in memory beyond the first `skip_gpu` / `skip_process` rows (those
  // being written now): minutes from its minute on are not complete yet.
  std::optional<UtcMillis> OldestWaiting(std::size_t skip_gpu, std::size_t skip_process) const;
  int64_t DeviceId(const std::string& uuid);
  int64_t ProcessId(const ProcessIdentity& p);
  void CommitIds();
  void DiscardIds();
  void InsertGpu(const GpuSample& s);
  void InsertProcess(const ProcessSample& s);
  void WriteGpuRollup(const std::string& table, const rollup::GpuAcc& a);
  void WriteProcessRollup(const std::string& table, const rollup::ProcessAcc& a);
  void DeleteBuckets(const std::string& table, UtcMillis from, UtcMillis to);

  // --- store_rollup.cc ---------------------------------------------------------------------------
  enum class Parts { kAll, kGpus, kProcesses };
  // Roll-up rows of the raw samples in [from, to), one bucket per `width` (or
  // rollup::kPerSample, rollup::kWholeRange). Each sample's interval, energy and busy time are
  // measured from the previous sample of its GPU (docs/meter-store.md: roll-ups), which may lie
  // before `from`.
  rollup::Computed ComputeFromRaw(UtcMillis from, UtcMillis to, std::chrono::milliseconds width,
                                  std::optional<int> only_gpu, Parts parts = Parts::kAll);
  struct MetaUpdate {
    std::optional<UtcMillis> minutes_done;
    std::optional<UtcMillis> hours_done;
  };
  // Inside a write transaction: rolls up the minutes and hours completed by `now` (see
  // store_rollup.cc); `update` gets the new watermarks to apply after the commit.
  RollUpResult RollUpInTransaction(UtcMillis now, std::optional<UtcMillis> late_from, std::size_t skip_gpu,
                                   std::size_t skip_process, MetaUpdate& update);

  // --- store_query.cc ----------------------------------------------------------------------------
  // Prepares `sql` (whose WHERE has InRange's ?1, ?2, ?3), binds the range and GPU filter and
  // calls row(stmt) for each row.
  template <typename Row>
  void ForEachInRange(const std::string& sql, UtcMillis from, UtcMillis to, std::optional<int> gpu, const Row& row) {
    auto q = Q(sql);
    q->BindAll(UnixMillis(from), UnixMillis(to), gpu);
    while (q->Step()) {
      row(*q);
    }
  }
  // Runs `read` in one read transaction; an SQLite failure becomes the store's error naming
  // the file.
  template <typename Read>
  auto InReadTransaction(const Read& read) -> decltype(read()) {
    try {
      sqlite::ReadTransaction tx(db);
      return read();
    } catch (const sqlite::SqliteFailure& f) {
      sqlite::Translate(f, path);
    }
  }
  std::map<int64_t, std::string> DeviceNames();
  ProcessIdentity IdentityOf(int64_t process_id);
  // Processes seen in the range, computed from the raw samples: one row per sample
  // (kPerSample) or per process and GPU (kWholeRange). Inside a read transaction.
  std::vector<ProcessUse> ProcessUseFromRaw(const TimeRange& range, std::optional<int> gpu,
                                            std::chrono::milliseconds width);
  static void ReadIdentity(sqlite::Stmt& s, int first, ProcessIdentity& p);
  static rollup::GpuRow ReadGpuRow(sqlite::Stmt& s);
  static rollup::GpuAcc ReadGpuRollup(sqlite::Stmt& s, std::chrono::milliseconds width);
  static rollup::ProcessAcc ReadProcessRollup(sqlite::Stmt& s, std::chrono::milliseconds width);
};

}  // namespace gpuplan
